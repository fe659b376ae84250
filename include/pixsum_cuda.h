/*
 * pixsum_cuda.h - integral images of data that already lives on an NVIDIA GPU.
 *
 * Every view passed here describes DEVICE memory (cudaMalloc, or managed
 * memory); the layout rules are those of pixsum.h. The entry points:
 *   - enqueue their work on a caller-given CUDA stream (a cudaStream_t passed
 *     as `void *`; NULL means the context's PIXSUM_PARAM_CUDA_STREAM, which in
 *     turn defaults to the legacy default stream) and return at once: they
 *     never synchronise the device or the stream;
 *   - allocate nothing per call: scratch memory comes either from the context
 *     (reserved once with pixsum_cuda_reserve(), or grown on first use, which
 *     is the only time they may allocate) or from a workspace the caller sizes
 *     with pixsum_cuda_workspace_size();
 *   - turn every CUDA error into PIXSUM_ERR_CUDA with CUDA's own text in
 *     pixsum_last_error().
 * Errors that surface only when the stream runs (a fault inside a kernel) are
 * reported by the caller's own synchronisation, as usual in CUDA.
 *
 * Ordering rule: a context's scratch (or a workspace) serves one call at a
 * time on one stream; two calls sharing scratch must run on the same stream
 * or be ordered by the caller (events). Different contexts are independent.
 *
 * Methods: the context's PIXSUM_PARAM_METHOD chooses among the methods whose
 * backend is PIXSUM_BACKEND_CUDA ("auto" and non-CUDA methods select
 * "cuda.lookback", the single-pass decoupled look-back kernel).
 * `pixsum methods` lists them; all of them also serve the host-memory entry
 * points of pixsum.h (pinned staging, chunked copies overlapped with compute).
 *
 * This header needs no CUDA header: streams are passed as `void *`.
 */
#ifndef PIXSUM_CUDA_H
#define PIXSUM_CUDA_H

#include "pixsum.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of device workspace that pixsum_cuda_integral_ws() needs for this
 * request with method `method_id` (0 = auto), written to *bytes. `out` or
 * `out_sq` may be NULL (not asked). Shapes, types and the padded layout are
 * taken as pixsum_cuda_integral_ws() would take them, with ctx's settings
 * (tables shaped as a volume's or as a batch's are both accepted).
 * Returns PIXSUM_OK, or the validation errors of pixsum_cuda_integral(). */
PIXSUM_API int pixsum_cuda_workspace_size(const pixsum_ctx *ctx, const pixsum_view *in,
                                          const pixsum_view *out,
                                          const pixsum_view *out_sq, size_t *bytes);

/* Makes sure the context holds at least `bytes` of device scratch (on the
 * context's PIXSUM_PARAM_CUDA_DEVICE), so later calls allocate nothing. May
 * allocate (and so synchronise); call it outside timed or captured regions.
 * Returns PIXSUM_OK, PIXSUM_ERR_NULL, PIXSUM_ERR_UNAVAILABLE (no CUDA device)
 * or PIXSUM_ERR_CUDA. */
PIXSUM_API int pixsum_cuda_reserve(pixsum_ctx *ctx, size_t bytes);

/* Integral image (depth 1) or integral volume (depth > 1) of device data,
 * like pixsum_integral(): same shapes, type pairs, overflow rule, wrap and
 * padded settings. Runs on `stream` (NULL: the context's stream) with the
 * context's scratch. Returns PIXSUM_OK or the errors of pixsum_integral(),
 * plus PIXSUM_ERR_CUDA and PIXSUM_ERR_UNAVAILABLE. */
PIXSUM_API int pixsum_cuda_integral(pixsum_ctx *ctx, const pixsum_view *in,
                                    const pixsum_view *out, void *stream);

/* Squared integral into `out_sq` and, if `out` is not NULL, the plain one, of
 * device data, as pixsum_integral_sq(). Returns as pixsum_cuda_integral(). */
PIXSUM_API int pixsum_cuda_integral_sq(pixsum_ctx *ctx, const pixsum_view *in,
                                       const pixsum_view *out, const pixsum_view *out_sq,
                                       void *stream);

/* Batched 2-D integral images: the depth slices of `in` are `depth`
 * independent images (no sum across slices), computed in one launch into the
 * slices of `out`. Padded layout: each slice gets its own zero row/column.
 * Returns as pixsum_cuda_integral(). */
PIXSUM_API int pixsum_cuda_integral_batch(pixsum_ctx *ctx, const pixsum_view *in,
                                          const pixsum_view *out, void *stream);

/* The most general form: plain and/or squared tables (either may be NULL, not
 * both), `batch` = 1 treats depth as independent images, with a caller-given
 * device workspace of at least pixsum_cuda_workspace_size() bytes instead of
 * the context's scratch. The workspace must be zero-filled once before its
 * first use (cudaMemsetAsync); the library keeps it consistent afterwards
 * (its flags carry a launch epoch, so no clearing between calls). ctx may be
 * NULL (defaults). Returns as pixsum_cuda_integral(), plus
 * PIXSUM_ERR_INVALID_ARG when the workspace is too small. */
PIXSUM_API int pixsum_cuda_integral_ws(const pixsum_ctx *ctx, const pixsum_view *in,
                                       const pixsum_view *out, const pixsum_view *out_sq,
                                       int batch, void *workspace, size_t workspace_bytes,
                                       void *stream);

/* Launch parameters of the paper-004 methods, for reproducing its sweeps.
 * section_size: threads (= elements) per row section of the scan kernels
 * (64..1024, power of two); tile_dim: transpose tile side (16 or 32);
 * block_rows: rows each transpose thread block covers per step (a divisor of
 * tile_dim). Zero fields take the defaults 256, 32, 8. */
typedef struct pixsum_cuda_tuning {
    int section_size;
    int tile_dim;
    int block_rows;
} pixsum_cuda_tuning;

/* Sets the tuning used by this context's CUDA calls from now on (copied).
 * NULL restores the defaults. Returns PIXSUM_OK, PIXSUM_ERR_NULL (ctx) or
 * PIXSUM_ERR_INVALID_ARG. */
PIXSUM_API int pixsum_cuda_set_tuning(pixsum_ctx *ctx, const pixsum_cuda_tuning *tuning);

/* Times of the last host-memory call made through a CUDA method with this
 * context, in milliseconds: host-to-device copies, kernels, device-to-host
 * copies (measured with CUDA events; overlapped parts are counted in each)
 * and the whole call (wall clock). Returns PIXSUM_OK, PIXSUM_ERR_NULL or
 * PIXSUM_ERR_UNAVAILABLE (no such call yet). */
PIXSUM_API int pixsum_cuda_last_transfer_ms(const pixsum_ctx *ctx, double *h2d_ms,
                                            double *kernel_ms, double *d2h_ms,
                                            double *total_ms);

/* Number of CUDA devices usable by this process (0 when none). Without a
 * device the functions above return PIXSUM_ERR_UNAVAILABLE. These functions
 * exist only in a library built with CUDA (PIXSUM_HAVE_CUDA). */
PIXSUM_API int pixsum_cuda_device_count(void);

#ifdef __cplusplus
}
#endif

#endif /* PIXSUM_CUDA_H */

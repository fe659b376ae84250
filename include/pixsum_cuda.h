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
 *     pixsum_last_error();
 *   - refuse, with PIXSUM_ERR_INVALID_ARG and before launching anything, a
 *     view or workspace whose first or last byte the GPU cannot reach: plain
 *     host memory (unless the system lets the device read pageable memory),
 *     a freed buffer, memory of another device than the context's, or a view
 *     running past the mapped end of its allocation (the check is made with
 *     cudaPointerGetAttributes; a view that stays inside mapped device memory
 *     but past its own allocation cannot be told apart).
 * Errors that surface only when the stream runs (a fault inside a kernel) are
 * reported by the caller's own synchronisation, as usual in CUDA.
 *
 * On GPUs of compute capability 9.0 and newer, cuda.lookback is launched with
 * programmatic dependent launch: its launch overlaps the end of the stream's
 * previous kernel, and it reads and writes nothing before that kernel has
 * finished, so stream order is kept. How each kernel is shaped and tuned
 * follows compiled tables per architecture and type, chosen once per device:
 * no environment variable changes what these functions compute.
 *
 * Ordering rule: a context's scratch (or a workspace) serves one call at a
 * time on one stream; two calls sharing scratch must run on the same stream
 * or be ordered by the caller (events). Different contexts are independent.
 *
 * Methods: the context's PIXSUM_PARAM_METHOD chooses among the methods whose
 * backend is PIXSUM_BACKEND_CUDA ("auto" and non-CUDA methods select
 * "cuda.lookback", the single-pass decoupled look-back kernel).
 * `pixsum methods` lists them; all of them also serve the host-memory entry
 * points of pixsum.h (pinned staging filled and emptied by up to 8 of the
 * context's threads, chunked copies overlapped with compute).
 *
 * This header needs no CUDA header: streams are passed as `void *`.
 *
 * Its last section, seen only where PIXSUM_EXPERIMENTAL is defined before the
 * include, holds experimental entry points for measurements, paper
 * reproductions and tests: they are exported by every CUDA build but may
 * change or go in any release.
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

/* As pixsum_cuda_integral_batch() with squared tables: image i's squared
 * table into slice i of `out_sq` and, if `out` is not NULL, its plain table
 * into slice i of `out`, in one launch; the overflow rule counts one image.
 * Results equal pixsum_cuda_integral_sq() on each slice. Returns as
 * pixsum_cuda_integral(). */
PIXSUM_API int pixsum_cuda_integral_batch_sq(pixsum_ctx *ctx, const pixsum_view *in,
                                             const pixsum_view *out,
                                             const pixsum_view *out_sq, void *stream);

/* OpenCV's 45-degree tilted integral of a 2-D device image, as
 * pixsum_integral_tilted() (the (W+1) x (H+1) table, same type pairs as
 * pixsum_cuda_integral(), wrap setting; integer tables bit-identical with the
 * CPU, float tables summed in another order). Three kernels with sequential
 * walks along diagonals and columns: correct on any size, not tuned for
 * speed. Scratch of W x H x channels accumulators comes from the context
 * (allocated on first use and kept; ctx NULL: for this call only, and the
 * call then waits for its work). Returns as pixsum_cuda_integral(), plus
 * PIXSUM_ERR_BAD_SHAPE for a 3-D input. */
PIXSUM_API int pixsum_cuda_integral_tilted(pixsum_ctx *ctx, const pixsum_view *in,
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

/* ---- Histograms of device data ---------------------------------------------------- */

/* Largest bin count of the device histograms. */
#define PIXSUM_CUDA_HIST_MAX_BINS ((size_t)65536)

/* What a device histogram counted, per channel (fields as pixsum_hist_info),
 * written to DEVICE memory by the kernels: 17 u64, no padding. */
typedef struct pixsum_cuda_hist_totals {
    uint64_t pixels;       /* pixels the mask selects (all without a mask) */
    uint64_t in_range[4];  /* samples counted in bins */
    uint64_t below[4];     /* samples < lo (-inf included) */
    uint64_t above[4];     /* samples >= hi (+inf included) */
    uint64_t nan[4];       /* NaN samples */
} pixsum_cuda_hist_totals;

/* Histogram of a device image (2-D or 3-D, u8 u16 i16 i32 f32 f64, 1-4
 * interleaved channels, any row/slice stride that is a multiple of the sample
 * size) into the device array `counts` (u64, channel c's bin i at
 * counts[c * bins + i], overwritten), with the bins, range, mask and bin
 * formula of pixsum_histogram(): the counts equal the CPU's bit for bit.
 * spec->mask, if any, is a u8 view in device memory. Bins: 1 ..
 * PIXSUM_CUDA_HIST_MAX_BINS; the range may be left to its default for u8, u16
 * and i16; i32, f32 and f64 need spec->lo < spec->hi (their default reads the
 * data, which would need a synchronisation). `totals` (device memory, may be
 * NULL) receives the per-channel totals. Runs on `stream` (NULL: the
 * context's) without synchronising; scratch comes from the context (grown on
 * first use, or reserved with pixsum_cuda_hist_reserve()). ctx NULL: default
 * settings, scratch for this call only (the call then waits for its work).
 * Counts are 64-bit and never wrap, whatever the image size.
 * Returns PIXSUM_OK, the codes of pixsum_hist_resolve(), PIXSUM_ERR_NULL,
 * PIXSUM_ERR_BAD_SHAPE (counts_len below channels x bins), PIXSUM_ERR_ALIASING
 * (counts overlaps the image), PIXSUM_ERR_UNSUPPORTED (more than 65536 bins,
 * samples not aligned to their size, or a device with less than 128 KiB of
 * shared memory per block for u16/i16 or many bins), PIXSUM_ERR_INVALID_ARG (no range for a
 * type that needs one), PIXSUM_ERR_UNAVAILABLE (no device), PIXSUM_ERR_CUDA. */
PIXSUM_API int pixsum_cuda_histogram(pixsum_ctx *ctx, const pixsum_view *in,
                                     const pixsum_hist_spec *spec, uint64_t *counts,
                                     size_t counts_len, pixsum_cuda_hist_totals *totals,
                                     void *stream);

/* One histogram per image of a device batch, pixsum_histogram_batch() on the
 * GPU: `in` holds N = in->depth images of one shape and type (slice stride =
 * the image stride); image n's channel c, bin i goes to the device array
 * counts[(n * channels + c) * bins + i] (u64, overwritten; counts_len >= N x
 * channels x bins). The counts equal the CPU batch's, and so each image's
 * pixsum_histogram() with the batch's bins and range, bit for bit. Types,
 * bins, alignment and default ranges as pixsum_cuda_histogram(): u8, u16 and
 * i16 default to their type's range; i32, f32 and f64 need spec->lo <
 * spec->hi, with or without PIXSUM_HIST_RANGE_PER_IMAGE (their data-range
 * default, over the batch or per image, would read the data on the host),
 * so that flag is accepted and changes nothing here. spec->mask, if any: a
 * u8 device view of in's width and height with depth N (a mask per image) or
 * depth 1 (shared). `totals` (device, may be NULL): an array of N records,
 * image n's in totals[n]. u8 batches whose images are below 2^31 bytes are
 * counted in one launch and no memset, any bins and range, masks and
 * channels included (where several blocks share an image, they meet in a
 * small zero-kept table of the context's scratch, grown on first use); other
 * batches run the single-image kernels image by image on the same stream.
 * Runs on `stream` (NULL: the context's) without synchronising; scratch as
 * pixsum_cuda_histogram(). Returns the codes of
 * pixsum_cuda_histogram() (PIXSUM_ERR_BAD_SHAPE: counts_len below N x
 * channels x bins, or a mask of another shape or depth), PIXSUM_ERR_INVALID_ARG
 * (unknown flags), PIXSUM_ERR_TOO_LARGE (N x channels x bins counts overflow
 * the address space). */
PIXSUM_API int pixsum_cuda_histogram_batch(pixsum_ctx *ctx, const pixsum_view *in,
                                           const pixsum_hist_spec *spec, unsigned flags,
                                           uint64_t *counts, size_t counts_len,
                                           pixsum_cuda_hist_totals *totals, void *stream);

/* Makes sure ctx holds the device scratch a pixsum_cuda_histogram() of this
 * image and spec needs (no data is read), so later calls allocate nothing.
 * May allocate and synchronise. Returns PIXSUM_OK or the codes of
 * pixsum_cuda_histogram(). */
PIXSUM_API int pixsum_cuda_hist_reserve(pixsum_ctx *ctx, const pixsum_view *in,
                                        const pixsum_hist_spec *spec);

/* Cumulative histogram on the device: out[c * bins + k] = sum of
 * counts[c * bins + i] for i <= k, for each of `channels` (1-4) rows of `bins`
 * u64 (device arrays; out == counts allowed, but an out apart from counts
 * is faster for many bins: it is scanned by a block per 8192 bins, in place
 * by one block per channel). Returns PIXSUM_OK,
 * PIXSUM_ERR_NULL, PIXSUM_ERR_INVALID_ARG (channels not 1-4, bins 0 or above
 * PIXSUM_HIST_MAX_BINS), PIXSUM_ERR_UNAVAILABLE, PIXSUM_ERR_CUDA. */
PIXSUM_API int pixsum_cuda_hist_cumulative(const uint64_t *counts, size_t channels, size_t bins,
                                           uint64_t *out, void *stream);

/* Relative histogram on the device, as pixsum_hist_relative(): out (device
 * doubles) = h_i / n, or H_k / n with PIXSUM_HIST_CUMULATIVE; n = in_range[c]
 * of the device `totals` (NULL: the sum of the channel's bins), or
 * totals->pixels with PIXSUM_HIST_OF_ALL_SAMPLES (totals then required). A
 * channel with n = 0 gives zeros. Same values as the CPU function, bit for bit.
 * Returns PIXSUM_OK, PIXSUM_ERR_NULL, PIXSUM_ERR_INVALID_ARG (flags, channels,
 * bins), PIXSUM_ERR_UNAVAILABLE, PIXSUM_ERR_CUDA. */
PIXSUM_API int pixsum_cuda_hist_relative(const uint64_t *counts, size_t channels, size_t bins,
                                         const pixsum_cuda_hist_totals *totals, unsigned flags,
                                         double *out, void *stream);

/* Joint histogram of two 1-channel device images, as pixsum_histogram_joint()
 * (same defaults, masks, cell rule, bit-identical counts) into the device
 * array counts (bins_a x bins_b u64, overwritten). i32/f32/f64 images need a
 * given range. `pairs` (device, may be NULL) receives 2 u64: the pairs counted
 * and the pairs excluded. Bins per axis at most PIXSUM_CUDA_HIST_MAX_BINS,
 * cells at most 2^26. Runs on `stream` like pixsum_cuda_histogram().
 * Returns the codes of pixsum_histogram_joint() and pixsum_cuda_histogram(). */
PIXSUM_API int pixsum_cuda_histogram_joint(pixsum_ctx *ctx, const pixsum_view *a,
                                           const pixsum_view *b, const pixsum_hist_spec *spec_a,
                                           const pixsum_hist_spec *spec_b, uint64_t *counts,
                                           size_t counts_len, uint64_t *pairs, void *stream);

/* Histogram equalisation of a device image, as pixsum_equalize(): u8 or u16,
 * 2-D or 3-D, 1-4 channels each equalised on its own, the mask (a u8 device
 * view, or NULL) selecting the pixels whose histogram sets the mapping, every
 * pixel mapped. The output equals the CPU's bit for bit. out (device, same
 * type and shape) may be in itself (same memory and strides); other overlaps
 * are refused. Runs on `stream` (NULL: the context's) without
 * synchronising: the histogram and the mapping (u8), with the cumulative
 * sums and tables between them for u16. Scratch (levels x channels x 18
 * bytes, plus the histogram's) comes from the context and is grown on first
 * use; ctx NULL:
 * scratch for this call only (the call then waits for its work).
 * Returns PIXSUM_OK, the codes of pixsum_equalize() and
 * pixsum_cuda_histogram(), PIXSUM_ERR_INVALID_ARG (memory the GPU cannot
 * reach), PIXSUM_ERR_TOO_LARGE (2^46 pixels or more). */
PIXSUM_API int pixsum_cuda_equalize(pixsum_ctx *ctx, const pixsum_view *in,
                                    const pixsum_view *out, const pixsum_view *mask,
                                    void *stream);

/* --- Box filter --------------------------------------------------------- */

/* Box filter of a 2-D device image, pixsum_box_filter() on the GPU: the same
 * spec (window, statistic, border, constant value), shapes, input and output
 * types, overflow rules and validation (the CPU's own checks run first, with
 * its status codes), and the same results: integer outputs, u8/u16 means and
 * float sums and means of integer images are bit-identical to the CPU's;
 * variances of integer images come from the exact integer numerator with one
 * division (the CPU may round their last bit differently); float images are
 * summed in f64 of samples shifted by the first pixel of each channel, within
 * the CPU's stated bound. `in` and `out` describe device memory (1-4
 * channels, any row stride). Streamed: no
 * integral table and no scratch; the input is read once and the output
 * written once (plus a halo of kh - 1 rows per band and kw - 1 columns per
 * tile). One kernel on `stream` (NULL: the context's stream) on the
 * context's device, no synchronisation. ctx may be NULL (defaults).
 * Returns PIXSUM_OK, the codes of pixsum_box_filter(), or
 * PIXSUM_ERR_UNSUPPORTED (a window whose (kw - 1) x channels exceeds the
 * kernel's column sums: 2029 samples, 1997 for 3 channels, 2 more for 8-byte
 * input types; the detail text gives the limit),
 * PIXSUM_ERR_TOO_LARGE (rows of 2^31 samples or more), PIXSUM_ERR_INVALID_ARG
 * (memory the GPU cannot reach), PIXSUM_ERR_UNAVAILABLE (no device, or a
 * library built without CUDA: there this function validates, then returns
 * PIXSUM_ERR_UNAVAILABLE), PIXSUM_ERR_CUDA. */
PIXSUM_API int pixsum_cuda_box_filter(pixsum_ctx *ctx, const pixsum_view *in,
                                      const pixsum_box_filter_spec *spec,
                                      const pixsum_view *out, void *stream);

/* --- Local thresholds and normalisation ---------------------------------- */

/* pixsum_threshold_local() and pixsum_normalize_local() of a 2-D device
 * image on the GPU: the same specs, shapes, types and validation (the CPU's
 * own checks run first, with its status codes), the same rule (src/
 * local_rule.h) and the same error bound; integer inputs sum exactly in
 * 64-bit integers, so their means equal the CPU's and their standard
 * deviations differ by at most the last bits (the variance numerator is
 * converted to double with at most two roundings); float inputs are summed in
 * f64 of samples shifted by the first sample of each channel. The mask is
 * x > T of the f64 threshold, as on the CPU. Streamed: per block of 128
 * output columns and 64 output rows, running column sums in shared memory;
 * no table, no full-size intermediate, no scratch. One kernel on `stream`
 * (NULL: the context's stream) on the context's device, no synchronisation.
 * Returns PIXSUM_OK, the codes of the CPU functions, or
 * PIXSUM_ERR_UNSUPPORTED (kw above 1024; u32/i32 windows whose sums of
 * squares can exceed 64 bits, which the CPU computes; a batch of depth > 1,
 * which the CPU takes: call once per image), PIXSUM_ERR_TOO_LARGE
 * (more than 2^31 - 1 blocks of rows or columns), PIXSUM_ERR_INVALID_ARG (memory the GPU
 * cannot reach), PIXSUM_ERR_UNAVAILABLE (no device, or a library built
 * without CUDA: there these validate, then return PIXSUM_ERR_UNAVAILABLE),
 * PIXSUM_ERR_CUDA. */
PIXSUM_API int pixsum_cuda_threshold_local(pixsum_ctx *ctx, const pixsum_view *in,
                                           const pixsum_threshold_spec *spec,
                                           const pixsum_view *map, const pixsum_view *mask,
                                           void *stream);
PIXSUM_API int pixsum_cuda_normalize_local(pixsum_ctx *ctx, const pixsum_view *in,
                                           const pixsum_normalize_spec *spec,
                                           const pixsum_view *out, void *stream);

/* Number of CUDA devices usable by this process (0 when none). Without a
 * device the functions above return PIXSUM_ERR_UNAVAILABLE. These functions
 * exist only in a library built with CUDA (PIXSUM_HAVE_CUDA). */
PIXSUM_API int pixsum_cuda_device_count(void);

#ifdef __cplusplus
}
#endif

#endif /* PIXSUM_CUDA_H */

/* ---- Experimental: measurement, tuning and test entry points ----------------------
 * Seen where PIXSUM_EXPERIMENTAL is defined before this header is included
 * (as zstd's ZSTD_STATIC_LINKING_ONLY section). Not part of the stable API:
 * they may change or go in any release. */
#if defined(PIXSUM_EXPERIMENTAL) && !defined(PIXSUM_CUDA_H_EXPERIMENTAL)
#define PIXSUM_CUDA_H_EXPERIMENTAL

#ifdef __cplusplus
extern "C" {
#endif

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

/* Values of pixsum_cuda_force's lookback_kernel and hist_scheme. */
#define PIXSUM_CUDA_FORCE_REGISTER 1 /* cuda.lookback's register kernel */
#define PIXSUM_CUDA_FORCE_STAGED 2   /* cuda.lookback's staged kernel */
#define PIXSUM_CUDA_FORCE_NARROW 1   /* histograms: the narrow counting scheme */
#define PIXSUM_CUDA_FORCE_WIDE 2     /* histograms: the wide counting scheme */

/* Code paths forced on a context's CUDA calls, for tests that must reach
 * every path on one device and with small images; all zero: the automatic
 * choice. Each forced path is one the automatic choice takes for some image,
 * type pair or device, so every result stays correct: integer tables and
 * histogram counts are the same bits, float tables stay within the same
 * error bound (they may round differently). A value a request cannot take
 * is ignored for that request. */
typedef struct pixsum_cuda_force {
    int lookback_kernel;     /* cuda.lookback: 0 auto, PIXSUM_CUDA_FORCE_REGISTER, or
                                PIXSUM_CUDA_FORCE_STAGED (not for f64 -> f64) */
    int lookback_rows;       /* staged kernel, rows per warp: 0 auto; 16 or 8 for
                                8-bit input, 8 or 4 for 16-bit and f32 input */
    int lookback_tile_width; /* register kernel: 0 auto, 256, or 128 where the plane
                                is at most 32 x 32 such tiles */
    int lookback_chained;    /* register kernel: chained look-backs on small planes
                                too (else over aggregates only) */
    int hist_scheme;         /* histograms: 0 auto, PIXSUM_CUDA_FORCE_NARROW (u8 images
                                the flat scheme takes; other types whose table fits),
                                PIXSUM_CUDA_FORCE_WIDE (i32, f32, f64) */
    int no_pdl;              /* no programmatic dependent launch (as before sm_90) */
    int no_async_copy;       /* the staged kernel loads its tile through registers
                                instead of cp.async (as before sm_80) */
} pixsum_cuda_force;

/* Sets the paths forced on this context's CUDA calls from now on (copied;
 * NULL: none). pixsum_cuda_workspace_size() sizes for them. Returns
 * PIXSUM_OK, PIXSUM_ERR_NULL (ctx), PIXSUM_ERR_INVALID_ARG (a value outside
 * the lists above) or PIXSUM_ERR_NO_MEMORY. */
PIXSUM_API int pixsum_cuda_set_force(pixsum_ctx *ctx, const pixsum_cuda_force *force);

#ifdef __cplusplus
}
#endif

#endif /* PIXSUM_EXPERIMENTAL */

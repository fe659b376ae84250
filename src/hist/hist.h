/*
 * hist.h - what the histogram files (and any backend that registers a
 * PIXSUM_OP_HISTOGRAM method: CUDA, GL) share: the resolved parameters a
 * histogram job carries in psi_job.extra, the one bin formula every backend
 * must reproduce, and the CPU counting kernels.
 *
 * A histogram method receives a psi_job with op PIXSUM_OP_HISTOGRAM, job->in
 * the validated image (2-D or 3-D, 1-4 channels, u8 u16 i16 i32 u32 f32 f64;
 * u32 only reaches the CPU methods: the CUDA and GL methods' supports() refuse
 * it) and job->extra a psi_hist_params whose counts/below/above/nan the core has
 * zeroed. The method adds every selected sample to exactly one of them.
 */
#ifndef PIXSUM_HIST_H
#define PIXSUM_HIST_H

#include "../internal.h"
#include "hist_bins.h"

#include <math.h>

typedef struct psi_hist_params {
    psi_bins b;           /* the bins (b.bins >= 1), the range [b.lo, b.hi) and the
                           * bin rule (hist_bins.h): their one copy in a job */
    pixsum_view mask;     /* data == NULL: no mask; else u8, 1 channel, image shape */
    uint64_t *counts;     /* channels x bins, channel-major, zeroed by the core */
    uint64_t below[4];    /* per channel, zeroed by the core */
    uint64_t above[4];
    uint64_t nan[4];
} psi_hist_params;

/* Classes of psi_hist_classify(): a bin index, or one of these past the bins. */
enum { PSI_HIST_BELOW = 0, PSI_HIST_ABOVE = 1, PSI_HIST_NAN = 2, PSI_HIST_SKIP = 3,
       PSI_HIST_EXTRA = 4 /* extra slots after the bins in a counting table */ };

/* The bin of v under the edge rule of hist_bins.h, or bins + PSI_HIST_BELOW /
 * ABOVE / NAN. Every method must give the classes of this function. */
static inline size_t psi_hist_bin(const psi_hist_params *p, double v)
{
    return (size_t)psi_bins_class(&p->b, v);
}

/* True for the types whose every value can be counted in a table of raw
 * values (u8, u16, i16) and folded into bins afterwards. */
static inline bool psi_hist_small_type(pixsum_type t)
{
    return t == PIXSUM_U8 || t == PIXSUM_U16 || t == PIXSUM_I16;
}

/* Resolves and validates a spec for one image in host memory, as
 * psi_hist_prepare() (hist_classify.h) but also for u32 images, which only
 * the CPU counts (histogram.c). Used by pixsum_histogram(), its batch, joint
 * and edges forms, the integral histogram and pixsum_hist_resolve(); the
 * device entry points use psi_hist_prepare(), which refuses u32 with
 * PIXSUM_ERR_BAD_TYPE. */
int psi_hist_prepare_host(const pixsum_view *in, const pixsum_hist_spec *spec,
                          size_t default_bins_small, psi_hist_params *p);

/* The image and mask checks of psi_hist_prepare_host() alone, reading no
 * sample (mask may be NULL): for histograms whose bins are not resolved from
 * a spec (hist_edges.c). Returns PIXSUM_OK or the image and mask codes of
 * pixsum_hist_resolve(). */
int psi_hist_check_host(const pixsum_view *in, const pixsum_view *mask);

/* psi_hist_prepare_batch() (hist_classify.h) for a batch in host memory: also
 * u32 (pixsum_histogram_batch()); the device batch uses the former. */
int psi_hist_prepare_batch_host(const pixsum_view *in, const pixsum_hist_spec *spec,
                                psi_hist_params *p);

/* ---- kernels (hist_kernels.c) ----------------------------------------- */

/* Reference: every sample through psi_hist_bin(), one u64 table. */
int psi_hist_run_scalar(const psi_job *job);

/* Portable fast method: raw-value tables for 8/16-bit types (several
 * sub-tables, u32 counters flushed before they can wrap, folded into bins at
 * the end), a row classifier + sub-tables for the others. Rows [y0, y1) of
 * the flattened (depth x height) row range only, adding into p's outputs. */
int psi_hist_count_rows(const pixsum_view *in, const psi_hist_params *p, size_t r0,
                        size_t r1, uint64_t *counts, uint64_t *below, uint64_t *above,
                        uint64_t *nan);

/* The same with the SIMD paths of this CPU enabled when `simd` is true. */
int psi_hist_count_rows_isa(const pixsum_view *in, const psi_hist_params *p, size_t r0,
                            size_t r1, uint64_t *counts, uint64_t *below, uint64_t *above,
                            uint64_t *nan, bool simd);

/* Row r of the flattened row range (slice r / height, row r % height). */
static inline const void *psi_hist_row(const pixsum_view *v, size_t r)
{
    return psi_row(v, r % v->height, r / v->height);
}

/* ---- SIMD (hist_avx512.c; stubs return false where not built) --------- */

/* True when the AVX-512 histogram kernels can run on this CPU (AVX-512 F/BW
 * plus VPOPCNTDQ and GFNI for the bit-sliced u8 counter). */
bool psi_hist_avx512_available(void);

/* Counts n u8 values into raw[256] (adds) with the bit-sliced AVX-512 kernel.
 * Requires psi_hist_avx512_available(). */
void psi_hist_u8_bitsliced(const uint8_t *data, size_t n, uint64_t *raw);

/* Counts the u8 pixels of rows [r0, r1) of `in` (1-4 interleaved channels)
 * whose mask byte is non-zero (mask may be NULL; with one channel, it must
 * not be) into raw[256 c + v] (adds): the pixels are gathered per channel
 * (VPERMB, VPCOMPRESSB for masks), then counted by the bit-sliced kernel.
 * Returns false, having counted nothing, when its scratch cannot be
 * allocated. Requires psi_hist_avx512_available(). */
bool psi_hist_u8_rows_avx512(const pixsum_view *in, const pixsum_view *mask, size_t r0,
                             size_t r1, uint64_t *raw);

/* dst[i] = lut[src[i]] for n bytes (dst may be src) with VPERMI2B.
 * Requires psi_hist_avx512_available(). */
void psi_hist_map_u8_avx512(const uint8_t *src, uint8_t *dst, size_t n, const uint8_t lut[256]);

/* Classifies n i32, f32 or f64 samples (`type`) into table offsets:
 * out[i] = class of sample i (bin or bins + PSI_HIST_*), identical to
 * psi_hist_bin(). Requires psi_hist_avx512_available(). */
void psi_hist_classify_avx512(const void *data, pixsum_type type, size_t n,
                              const psi_hist_params *p, uint32_t *out);

#endif /* PIXSUM_HIST_H */

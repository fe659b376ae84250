/*
 * hist_classify.h - row classifier: samples of a row to bin indices (or the
 * out-of-range / NaN classes of hist.h), table-driven for 8/16-bit types.
 */
#ifndef PIXSUM_HIST_CLASSIFY_H
#define PIXSUM_HIST_CLASSIFY_H

#include "hist.h"

typedef struct psi_classifier {
    pixsum_type type;
    const psi_hist_params *p;
    uint32_t *lut; /* class of every raw value (u8/u16/i16), else NULL */
    bool simd;     /* i32/f32/f64 rows through psi_hist_classify_avx512() */
} psi_classifier;

/* Prepares a classifier for images of `type` under p (p must outlive it).
 * allow_simd: classify i32/f32/f64 rows with AVX-512 where this CPU has it (the
 * same classes as the formula; false for the scalar reference methods).
 * Allocates only for the 8/16-bit types. Returns PIXSUM_OK or
 * PIXSUM_ERR_NO_MEMORY. */
int psi_classifier_init(psi_classifier *k, pixsum_type type, const psi_hist_params *p,
                        bool allow_simd);

void psi_classifier_free(psi_classifier *k);

/* out[i] = class of sample i of the n samples at row (psi_hist_bin() result). */
void psi_classify_row(const psi_classifier *k, const void *row, size_t n, uint32_t *out);

/* Resolves and validates a spec for one image (histogram.c). */
int psi_hist_prepare(const pixsum_view *in, const pixsum_hist_spec *spec,
                     size_t default_bins_small, psi_hist_params *p);

/* The same for a batch (its depth = its images): the mask may also have depth
 * 1 (shared by every image), and a data-range default covers every image's
 * selected samples (pixsum_histogram()'s defaults otherwise). */
int psi_hist_prepare_batch(const pixsum_view *in, const pixsum_hist_spec *spec,
                           psi_hist_params *p);

/* The views of an equalisation (pixsum_equalize, pixsum_cuda_equalize; in
 * apply.c): both valid, in u8 or u16, out of the same type and shape, and out
 * either exactly in (same memory and strides) or not overlapping it. Returns
 * PIXSUM_OK, PIXSUM_ERR_NULL, PIXSUM_ERR_BAD_TYPE, PIXSUM_ERR_BAD_SHAPE, the
 * codes of pixsum_view_check() or PIXSUM_ERR_ALIASING. */
int psi_equalize_check(const pixsum_view *in, const pixsum_view *out);

/* The class of v under bins given by their edges e[0..bins] (hist_edges.c):
 * the bin i with e[i] <= v < e[i + 1] (v == e[bins] in the last bin when
 * closed_last), or bins + PSI_BIN_BELOW / ABOVE / NAN. */
uint32_t psi_edges_class(const double *e, uint32_t bins, bool closed_last, double v);

#endif /* PIXSUM_HIST_CLASSIFY_H */

/*
 * box_filter.h - the one validation of a box filter request, shared by the
 * CPU entry pixsum_box_filter() (src/box_filter.c) and the CUDA entry
 * pixsum_cuda_box_filter() (src/cuda/cuda_box.c, and its stub in
 * src/cuda_off.c), so both accept and refuse exactly the same requests and
 * resolve them into the same plan (accumulator, anchor, constant value).
 */
#ifndef PIXSUM_BOX_FILTER_H
#define PIXSUM_BOX_FILTER_H

#include "cpu/box_stream.h"

/* Checks a box filter request of one 2-D image (depth 1) as
 * pixsum_box_filter() documents (NULLs, the spec, both views, shapes, types,
 * overflow, border value, aliasing; in that order) and, on success, fills
 * *plan; pixsum_box_filter() checks a batch by its first image with it. Touches no pixel memory, so the views
 * may describe device memory. Returns PIXSUM_OK or the error codes of
 * pixsum_box_filter() (with the detail text set), leaving *plan untouched on
 * error. */
int psi_box_filter_prepare(const pixsum_view *in, const pixsum_box_filter_spec *spec,
                           const pixsum_view *out, psi_box_plan *plan);

/* The input half of psi_box_filter_prepare(): checks in and spec (NULLs,
 * spec, the input view, depth, type, VALID window, border value) and fills
 * *ow x *oh (the output size) and *plan (accumulator from spec->stat: set
 * PIXSUM_BOX_VAR for sums of squares; no output type is checked). Returns
 * PIXSUM_OK or the codes of pixsum_box_filter() with the detail text set.
 * The local operations (src/local_op.c) start from it. */
int psi_box_input_plan(const pixsum_view *in, const pixsum_box_filter_spec *spec,
                       size_t *ow, size_t *oh, psi_box_plan *plan);

/* Whether the memory of two (checked) views overlaps. */
bool psi_views_overlap(const pixsum_view *a, const pixsum_view *b);

#endif /* PIXSUM_BOX_FILTER_H */

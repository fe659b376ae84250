/*
 * box_batch.h - the validation of a box filter batch on the device: the
 * rule of pixsum_box_filter() for a view of depth N (N independent images,
 * out of depth N, slice 0 validating the request for every image, the
 * overlap checked on the whole views), shared by the CUDA entry
 * pixsum_cuda_box_filter() (src/cuda/cuda_box.c) and its stub in builds
 * without CUDA (src/cuda_off.c), so both accept and refuse the requests the
 * CPU operation does, with its status codes.
 */
#ifndef PIXSUM_BOX_BATCH_H
#define PIXSUM_BOX_BATCH_H

#include "box_filter.h"

/* Checks `in`, `spec` and `out` as pixsum_box_filter() does for a depth of
 * 1 or more and fills *plan (the plan of one image). Returns PIXSUM_OK or
 * the codes of pixsum_box_filter(), with the detail text set. */
static inline int psi_box_filter_prepare_batch(const pixsum_view *in,
                                               const pixsum_box_filter_spec *spec,
                                               const pixsum_view *out, psi_box_plan *plan)
{
    if (!in || !out || !spec)
        return psi_fail(PIXSUM_ERR_NULL, "in, spec or out is NULL");
    if (in->depth <= 1 && out->depth <= 1)
        return psi_box_filter_prepare(in, spec, out, plan);
    int st = pixsum_view_check(in);
    if (st != PIXSUM_OK)
        return psi_fail(st, "input: %s", pixsum_last_error());
    if ((st = pixsum_view_check(out)) != PIXSUM_OK)
        return psi_fail(st, "output: %s", pixsum_last_error());
    if (out->depth != in->depth)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "the input holds %zu images, the output %zu: "
                        "a batch writes one filtered image per input image", in->depth,
                        out->depth);
    pixsum_view in0, out0;
    pixsum_view_roi3d(in, 0, 0, 0, in->width, in->height, 1, &in0);
    pixsum_view_roi3d(out, 0, 0, 0, out->width, out->height, 1, &out0);
    if ((st = psi_box_filter_prepare(&in0, spec, &out0, plan)) != PIXSUM_OK)
        return st;
    if (psi_views_overlap(in, out))
        return psi_fail(PIXSUM_ERR_ALIASING, "the output overlaps the input");
    return PIXSUM_OK;
}

#endif /* PIXSUM_BOX_BATCH_H */

/*
 * cuda_off.c - the CUDA side of a build without CUDA: an empty method table,
 * pixsum_cuda_box_filter(), pixsum_cuda_threshold_local() and
 * pixsum_cuda_normalize_local() (pixsum_cuda.h), which validate their request
 * exactly as the CUDA build does, then reports that no device can run it.
 */
#include "internal.h"
#include "box_batch.h"
#include "box_filter.h"
#include "local_op.h"
#include "pixsum_cuda.h"

const psi_method psi_methods_cuda[] = {
    {NULL, 0, 0, NULL, 0, NULL, NULL, NULL},
};

int pixsum_cuda_box_filter(pixsum_ctx *ctx, const pixsum_view *in,
                           const pixsum_box_filter_spec *spec, const pixsum_view *out,
                           void *stream)
{
    (void)ctx;
    (void)stream;
    psi_clear_error();
    psi_box_plan plan;
    int st = psi_box_filter_prepare_batch(in, spec, out, &plan);
    if (st != PIXSUM_OK)
        return st;
    return psi_fail(PIXSUM_ERR_UNAVAILABLE, "pixsum was built without CUDA");
}

int pixsum_cuda_threshold_local(pixsum_ctx *ctx, const pixsum_view *in,
                                const pixsum_threshold_spec *spec, const pixsum_view *map,
                                const pixsum_view *mask, void *stream)
{
    (void)ctx;
    (void)stream;
    psi_clear_error();
    psi_box_plan box;
    psi_local_plan lp;
    int st = psi_threshold_prepare(in, spec, map, mask, &box, &lp);
    if (st != PIXSUM_OK)
        return st;
    return psi_fail(PIXSUM_ERR_UNAVAILABLE, "pixsum was built without CUDA");
}

int pixsum_cuda_normalize_local(pixsum_ctx *ctx, const pixsum_view *in,
                                const pixsum_normalize_spec *spec, const pixsum_view *out,
                                void *stream)
{
    (void)ctx;
    (void)stream;
    psi_clear_error();
    psi_box_plan box;
    psi_local_plan lp;
    int st = psi_normalize_prepare(in, spec, out, &box, &lp);
    if (st != PIXSUM_OK)
        return st;
    return psi_fail(PIXSUM_ERR_UNAVAILABLE, "pixsum was built without CUDA");
}

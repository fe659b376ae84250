/*
 * cuda_threshold.c - the host side of the local operations on the GPU
 * (pixsum_cuda_threshold_local(), pixsum_cuda_normalize_local() of
 * pixsum_cuda.h): the request is validated by the CPU operation's own
 * functions (psi_threshold_prepare(), psi_normalize_prepare(): the same
 * acceptance, accumulator and parameters), then the device and the memory
 * are checked and the kernel of threshold.cu is enqueued on the caller's
 * stream. It keeps no state and allocates nothing.
 */
#include "../local_op.h"
#include "pixsum_cuda.h"

#include "cuda_memcheck.h"
#include "cuda_status.h"
#include "cuda_threshold.h"

#include <cuda_runtime_api.h>
#include <string.h>

/* Checks the device and the memory, fills the kernel job and launches it. */
static int launch_local(pixsum_ctx *ctx, const pixsum_view *in, const psi_box_plan *box,
                        const psi_local_plan *lp, void *stream)
{
    const pixsum_view *o = lp->has_map ? &lp->map : &lp->mask;
    if (box->spec.kw > PSI_CU_LOCAL_MAX_KW)
        return psi_fail(PIXSUM_ERR_UNSUPPORTED, "the GPU local operations take windows up to "
                        "%d columns wide (here %zu)", PSI_CU_LOCAL_MAX_KW, box->spec.kw);
    /* u32/i32 windows whose sums of squares pass 2^64 take f64 sums on the CPU;
     * the device kernel's f64 path gave wrong deviations for them in testing
     * (not understood yet), so they stay on the CPU until it is fixed. */
    if (box->acc == PSI_BOX_ACC_F64 && (in->type == PIXSUM_U32 || in->type == PIXSUM_I32))
        return psi_fail(PIXSUM_ERR_UNSUPPORTED, "the GPU local operations do not take %s "
                        "windows whose sums of squares exceed 64 bits (%zux%zu); use the CPU",
                        pixsum_type_name(in->type), box->spec.kw, box->spec.kh);
    if ((o->width + 127) / 128 > (size_t)INT32_MAX || (o->height + 63) / 64 > 65535)
        return psi_fail(PIXSUM_ERR_TOO_LARGE, "a %zux%zu output needs too many GPU blocks",
                        o->width, o->height);
    psi_cu_local_job j;
    memset(&j, 0, sizeof j);
    int valid = box->spec.border == PIXSUM_BORDER_VALID;
    j.in = in->data;
    j.in_row = in->row_stride;
    if (lp->has_map) {
        j.map = lp->map.data;
        j.map_row = lp->map.row_stride;
        j.map_type = (int)lp->map.type;
    }
    if (lp->has_mask) {
        j.mask = lp->mask.data;
        j.mask_row = lp->mask.row_stride;
    }
    j.in_type = (int)in->type;
    j.flt = box->acc == PSI_BOX_ACC_F64;
    j.is_signed = box->is_signed;
    j.border = (int)box->spec.border;
    j.channels = (int)in->channels;
    j.kind = lp->kind;
    j.width = (long long)in->width;
    j.height = (long long)in->height;
    j.out_width = (long long)o->width;
    j.out_height = (long long)o->height;
    j.kw = (long long)box->spec.kw;
    j.kh = (long long)box->spec.kh;
    j.ax = valid ? 0 : (long long)box->ax;
    j.ay = valid ? 0 : (long long)box->ay;
    j.cx = valid ? (long long)box->ax : 0;
    j.cy = valid ? (long long)box->ay : 0;
    j.n = box->n;
    j.cval = box->cval_int;
    j.cval_f = box->spec.border == PIXSUM_BORDER_CONSTANT ? box->spec.border_value : 0.0;
    j.a = lp->a;
    j.r = lp->r;
    j.eps = lp->eps;
    j.fg = lp->fg;

    const pixsum_ctx *c = ctx ? ctx : &psi_default_ctx;
    int st = psi_cuda_need_device(c);
    if (st != PIXSUM_OK)
        return st;
    PSI_CUDA_TRY(cudaSetDevice(c->cuda_device), "cudaSetDevice");
    if ((st = psi_cuda_check_view(in, "input", c->cuda_device)) != PIXSUM_OK ||
        (lp->has_map && (st = psi_cuda_check_view(&lp->map, "map", c->cuda_device)) != PIXSUM_OK) ||
        (lp->has_mask &&
         (st = psi_cuda_check_view(&lp->mask, "mask", c->cuda_device)) != PIXSUM_OK))
        return st;
    void *s = stream ? stream : (void *)c->cuda_stream;
    cudaError_t e = (cudaError_t)psi_cu_local(&j, s);
    return e == cudaSuccess ? PIXSUM_OK : psi_cuda_fail(e, "local threshold / normalisation");
}

int pixsum_cuda_threshold_local(pixsum_ctx *ctx, const pixsum_view *in,
                                const pixsum_threshold_spec *spec, const pixsum_view *map,
                                const pixsum_view *mask, void *stream)
{
    psi_clear_error();
    psi_box_plan box;
    psi_local_plan lp;
    int st = psi_threshold_prepare(in, spec, map, mask, &box, &lp);
    if (st != PIXSUM_OK)
        return st;
    return launch_local(ctx, in, &box, &lp, stream);
}

int pixsum_cuda_normalize_local(pixsum_ctx *ctx, const pixsum_view *in,
                                const pixsum_normalize_spec *spec, const pixsum_view *out,
                                void *stream)
{
    psi_clear_error();
    psi_box_plan box;
    psi_local_plan lp;
    int st = psi_normalize_prepare(in, spec, out, &box, &lp);
    if (st != PIXSUM_OK)
        return st;
    return launch_local(ctx, in, &box, &lp, stream);
}

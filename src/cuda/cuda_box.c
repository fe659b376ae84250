/*
 * cuda_box.c - the host side of the device box filter
 * (pixsum_cuda_box_filter() of pixsum_cuda.h): the request is validated by
 * the CPU operation's own function (psi_box_filter_prepare(), so both accept
 * the same requests and resolve the same accumulator), then the device and
 * the memory are checked and the streamed kernel of box_filter.cu is
 * enqueued on the caller's stream. It keeps no state and allocates nothing.
 * A view of depth N is a batch of N images (src/box_batch.h validates it as
 * the CPU does): the kernel's grid gets N in z, each image with the tile
 * geometry of the single-image call, so every image equals that call.
 */
#include "../box_batch.h"
#include "../box_filter.h"
#include "pixsum_cuda.h"

#include "cuda_box.h"
#include "cuda_memcheck.h"
#include "cuda_status.h"

#include <cuda_runtime_api.h>
#include <string.h>

int pixsum_cuda_box_filter(pixsum_ctx *ctx, const pixsum_view *in,
                           const pixsum_box_filter_spec *spec, const pixsum_view *out,
                           void *stream)
{
    psi_clear_error();
    psi_box_plan plan;
    int st = psi_box_filter_prepare_batch(in, spec, out, &plan);
    if (st != PIXSUM_OK)
        return st;
    if (in->width * in->channels > (size_t)INT32_MAX)
        return psi_fail(PIXSUM_ERR_TOO_LARGE, "input rows of %zu samples are too long for the "
                        "GPU box filter (at most 2^31 - 1)", in->width * in->channels);
    psi_cu_box_job j;
    memset(&j, 0, sizeof j);
    int valid = spec->border == PIXSUM_BORDER_VALID;
    j.in = in->data;
    j.in_row = in->row_stride;
    j.out = out->data;
    j.out_row = out->row_stride;
    j.images = (long long)in->depth;
    j.in_slice = in->depth > 1 ? in->slice_stride : 0;
    j.out_slice = in->depth > 1 ? out->slice_stride : 0;
    j.in_type = (int)in->type;
    j.out_type = (int)out->type;
    j.acc = (int)plan.acc;
    j.stat = (int)spec->stat;
    j.border = (int)spec->border;
    j.channels = (int)in->channels;
    j.is_signed = plan.is_signed;
    j.squares = plan.squares;
    j.width = (long long)in->width;
    j.height = (long long)in->height;
    j.out_width = (long long)out->width;
    j.out_height = (long long)out->height;
    j.kw = (long long)spec->kw;
    j.kh = (long long)spec->kh;
    j.ax = valid ? 0 : (long long)plan.ax;
    j.ay = valid ? 0 : (long long)plan.ay;
    j.n = plan.n;
    j.in_size = (int)pixsum_type_size(in->type);
    {
        size_t vb = (size_t)j.in_size * (j.in_size == 8 ? 2 : 4);
        size_t rs = (size_t)(in->row_stride < 0 ? -in->row_stride : in->row_stride);
        size_t zs = (size_t)(in->slice_stride < 0 ? -in->slice_stride : in->slice_stride);
        j.vec_ok = (uintptr_t)in->data % vb == 0 && (in->height == 1 || rs % vb == 0) &&
                   (in->depth <= 1 || zs % vb == 0);
    }
    j.cval = plan.cval_int;
    j.cval_f = spec->border == PIXSUM_BORDER_CONSTANT ? spec->border_value : 0.0;
    if ((in->type == PIXSUM_U8 || in->type == PIXSUM_U16) && out->type == in->type) {
        /* 2 * sum + n and 2 * n within int32: the float-estimate rounding */
        unsigned long long worst = (unsigned long long)plan.n * psi_type_max_magnitude(in->type);
        j.mean_fast = plan.n < (1ull << 29) && worst < (1ull << 29);
        /* odd n: s * (1/n) + 1/2 truncated is exact (as the CPU's fast
         * path): in float for u8 window sums below 2^24 with n < 8192, in
         * double for sums below 2^32 */
        j.mean_odd = (plan.n & 1) &&
                     (in->type == PIXSUM_U8 ? worst < (1ull << 24) && plan.n < 8192
                                            : worst < (1ull << 32));
        j.inv_n_f = 1.0f / (float)plan.n;
        j.inv_n = 1.0 / (double)plan.n;
    }

    const pixsum_ctx *c = ctx ? ctx : &psi_default_ctx;
    if ((st = psi_cuda_need_device(c)) != PIXSUM_OK)
        return st;
    PSI_CUDA_TRY(cudaSetDevice(c->cuda_device), "cudaSetDevice");
    int sm = 0;
    PSI_CUDA_TRY(cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, c->cuda_device),
                 "cudaDeviceGetAttribute");
    psi_cu_box_geo geo;
    long long widest = 0;
    if (!psi_cu_box_geometry(&j, sm, &geo, &widest))
        return psi_fail(PIXSUM_ERR_UNSUPPORTED, "the GPU box filter takes windows whose "
                        "(kw - 1) x channels is at most %lld samples (here %lld)", widest,
                        (j.kw - 1) * j.channels);
    if ((st = psi_cuda_check_view(in, "input", c->cuda_device)) != PIXSUM_OK ||
        (st = psi_cuda_check_view(out, "output", c->cuda_device)) != PIXSUM_OK)
        return st;
    void *s = stream ? stream : (void *)c->cuda_stream;
    cudaError_t e = (cudaError_t)psi_cu_box_filter(&j, &geo, s);
    return e == cudaSuccess ? PIXSUM_OK : psi_cuda_fail(e, "box filter");
}

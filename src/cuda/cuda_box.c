/*
 * cuda_box.c - the host side of the device box filter
 * (pixsum_cuda_box_filter() of pixsum_cuda.h): validation of the table and
 * output views, then one launch of box_filter.cu on the caller's stream. It
 * keeps no state and allocates nothing.
 */
#include "../internal.h"
#include "pixsum_cuda.h"

#include "cuda_box.h"
#include "cuda_memcheck.h"
#include "cuda_status.h"

#include <cuda_runtime_api.h>

static int box_kind(pixsum_type t, psi_box_kind *k)
{
    switch (t) {
    case PIXSUM_U32: *k = PSI_BOX_U32; return 1;
    case PIXSUM_U64: *k = PSI_BOX_U64; return 1;
    case PIXSUM_I64: *k = PSI_BOX_I64; return 1;
    case PIXSUM_F32: *k = PSI_BOX_F32; return 1;
    case PIXSUM_F64: *k = PSI_BOX_F64; return 1;
    default: return 0;
    }
}

int pixsum_cuda_box_filter(const pixsum_view *table, size_t kh, size_t kw, unsigned flags,
                           const pixsum_view *out, void *stream)
{
    psi_clear_error();
    if (!table || !out)
        return psi_fail(PIXSUM_ERR_NULL, "table or output view is NULL");
    int st = pixsum_view_check(table);
    if (st != PIXSUM_OK)
        return psi_fail(st, "table: %s", pixsum_last_error());
    if ((st = pixsum_view_check(out)) != PIXSUM_OK)
        return psi_fail(st, "output: %s", pixsum_last_error());
    if (flags & ~(PIXSUM_BOX_VALID | PIXSUM_BOX_MEAN))
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "unknown flags 0x%x", flags);
    psi_box_job j = {0};
    if (!box_kind(table->type, &j.table_kind))
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "tables are u32, u64, i64, f32 or f64, not %s",
                        pixsum_type_name(table->type));
    if (!box_kind(out->type, &j.out_kind))
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "outputs are u32, u64, i64, f32 or f64, not %s",
                        pixsum_type_name(out->type));
    const int mean = (flags & PIXSUM_BOX_MEAN) != 0, valid = (flags & PIXSUM_BOX_VALID) != 0;
    if (mean && !(out->type == PIXSUM_F32 || out->type == PIXSUM_F64))
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "means are f32 or f64, not %s",
                        pixsum_type_name(out->type));
    if (table->depth != 1 || out->depth != 1)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "the box filter takes 2-D tables and outputs");
    if (table->width < 2 || table->height < 2)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "a %zux%zu table is not the padded table of an "
                        "image (one row and one column more than the image)", table->width,
                        table->height);
    const size_t w = table->width - 1, h = table->height - 1;
    if (kh == 0 || kw == 0)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "a %zux%zu window is empty", kh, kw);
    if (valid && (kh > h || kw > w))
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "a %zux%zu window does not fit a %zux%zu image "
                        "in 'valid' mode", kh, kw, h, w);
    const size_t ow = valid ? w - kw + 1 : w, oh = valid ? h - kh + 1 : h;
    if (out->width != ow || out->height != oh || out->channels != table->channels)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "output is %zux%zu x%zu, the %s filter of a "
                        "%zux%zu x%zu image needs %zux%zu x%zu", out->width, out->height,
                        out->channels, valid ? "'valid'" : "'same'", w, h, table->channels,
                        ow, oh, table->channels);
    if (ow * out->channels > (size_t)INT32_MAX)
        return psi_fail(PIXSUM_ERR_TOO_LARGE, "output rows of %zu values are too long",
                        ow * out->channels);
    uintptr_t tlo, thi, olo, ohi;
    psi_view_extent(table, &tlo, &thi);
    psi_view_extent(out, &olo, &ohi);
    if (tlo < ohi && olo < thi)
        return psi_fail(PIXSUM_ERR_ALIASING, "the output overlaps the table");
    if (pixsum_cuda_device_count() <= 0)
        return psi_fail(PIXSUM_ERR_UNAVAILABLE, "no CUDA device");
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess)
        return psi_cuda_fail(e, "cudaGetDevice");
    if ((st = psi_cuda_check_view(table, "table", device)) != PIXSUM_OK ||
        (st = psi_cuda_check_view(out, "output", device)) != PIXSUM_OK)
        return st;
    j.table = table->data;
    j.table_row = table->row_stride;
    j.out = out->data;
    j.out_row = out->row_stride;
    j.width = w;
    j.height = h;
    j.out_width = ow;
    j.out_height = oh;
    j.channels = table->channels;
    j.kh = kh;
    j.kw = kw;
    j.valid = valid;
    j.mean = mean;
    e = (cudaError_t)psi_cu_box_filter(&j, stream);
    return e == cudaSuccess ? PIXSUM_OK : psi_cuda_fail(e, "box filter");
}

/*
 * view.c - making, cropping and checking pixsum_view descriptions of memory.
 */
#include "internal.h"

static ptrdiff_t abs_diff(ptrdiff_t v)
{
    return v < 0 ? -v : v;
}

pixsum_view pixsum_view_2d(void *data, pixsum_type type, size_t width, size_t height,
                           size_t channels, ptrdiff_t row_stride)
{
    return pixsum_view_3d(data, type, width, height, 1, channels, row_stride, 0);
}

pixsum_view pixsum_view_3d(void *data, pixsum_type type, size_t width, size_t height,
                           size_t depth, size_t channels, ptrdiff_t row_stride,
                           ptrdiff_t slice_stride)
{
    pixsum_view v;
    v.data = data;
    v.type = type;
    v.width = width;
    v.height = height;
    v.depth = depth;
    v.channels = channels;
    v.row_stride = row_stride ? row_stride
                              : (ptrdiff_t)(width * channels * pixsum_type_size(type));
    v.slice_stride = slice_stride ? slice_stride : (ptrdiff_t)height * v.row_stride;
    return v;
}

int pixsum_view_roi3d(const pixsum_view *view, size_t x, size_t y, size_t z, size_t w,
                      size_t h, size_t d, pixsum_view *roi)
{
    psi_clear_error();
    if (!view || !roi)
        return psi_fail(PIXSUM_ERR_NULL, "view or roi is NULL");
    if (w == 0 || h == 0 || d == 0)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "region of size %zux%zux%zu is empty", w, h, d);
    if (x > view->width || w > view->width - x || y > view->height ||
        h > view->height - y || z > view->depth || d > view->depth - z)
        return psi_fail(PIXSUM_ERR_OUT_OF_RANGE,
                        "region at (%zu,%zu,%zu) of size %zux%zux%zu is outside the "
                        "%zux%zux%zu view",
                        x, y, z, w, h, d, view->width, view->height, view->depth);
    pixsum_view r = *view;
    r.data = (char *)psi_row(view, y, z) + x * view->channels * pixsum_type_size(view->type);
    r.width = w;
    r.height = h;
    r.depth = d;
    *roi = r;
    return PIXSUM_OK;
}

int pixsum_view_roi(const pixsum_view *view, size_t x, size_t y, size_t w, size_t h,
                    pixsum_view *roi)
{
    psi_clear_error();
    if (!view)
        return psi_fail(PIXSUM_ERR_NULL, "view is NULL");
    return pixsum_view_roi3d(view, x, y, 0, w, h, view->depth, roi);
}

size_t pixsum_packed_bytes(pixsum_type type, size_t width, size_t height, size_t depth,
                           size_t channels)
{
    size_t n = pixsum_type_size(type);
    size_t dims[4] = {width, height, depth, channels};
    for (int i = 0; i < 4; i++) {
        if (dims[i] != 0 && n > SIZE_MAX / dims[i])
            return 0;
        n *= dims[i];
    }
    return n;
}

int pixsum_view_check(const pixsum_view *v)
{
    psi_clear_error();
    if (!v)
        return psi_fail(PIXSUM_ERR_NULL, "view is NULL");
    if (!v->data)
        return psi_fail(PIXSUM_ERR_NULL, "view data pointer is NULL");
    size_t es = pixsum_type_size(v->type);
    if (es == 0)
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "unknown pixel type %d", (int)v->type);
    if (v->width == 0 || v->height == 0 || v->depth == 0)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "view of size %zux%zux%zu is empty",
                        v->width, v->height, v->depth);
    if (v->channels < 1 || v->channels > 4)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "channels must be 1..4, got %zu",
                        v->channels);
    if (pixsum_packed_bytes(v->type, v->width, v->height, v->depth, v->channels) == 0 ||
        v->width * v->channels * es > (size_t)PTRDIFF_MAX)
        return psi_fail(PIXSUM_ERR_TOO_LARGE, "view of %zux%zux%zu x%zu %s overflows size_t",
                        v->width, v->height, v->depth, v->channels,
                        pixsum_type_name(v->type));
    if ((uintptr_t)v->data % es != 0)
        return psi_fail(PIXSUM_ERR_BAD_STRIDE, "data pointer is not aligned to %zu bytes", es);
    size_t row_bytes = v->width * v->channels * es;
    size_t rs = (size_t)abs_diff(v->row_stride);
    if (v->height > 1 && rs < row_bytes)
        return psi_fail(PIXSUM_ERR_BAD_STRIDE, "row stride %td is smaller than a row (%zu bytes)",
                        v->row_stride, row_bytes);
    if (rs % es != 0)
        return psi_fail(PIXSUM_ERR_BAD_STRIDE,
                        "row stride %td is not a multiple of the %zu-byte element",
                        v->row_stride, es);
    if (v->height > 1 && rs > (size_t)PTRDIFF_MAX / v->height)
        return psi_fail(PIXSUM_ERR_TOO_LARGE, "rows span more than PTRDIFF_MAX bytes");
    if (v->depth > 1) {
        size_t slice_bytes = (v->height - 1) * rs + row_bytes;
        size_t ss = (size_t)abs_diff(v->slice_stride);
        if (ss < slice_bytes)
            return psi_fail(PIXSUM_ERR_BAD_STRIDE,
                            "slice stride %td is smaller than a slice (%zu bytes)",
                            v->slice_stride, slice_bytes);
        if (ss % es != 0)
            return psi_fail(PIXSUM_ERR_BAD_STRIDE,
                            "slice stride %td is not a multiple of the %zu-byte element",
                            v->slice_stride, es);
        if (ss > (size_t)PTRDIFF_MAX / v->depth)
            return psi_fail(PIXSUM_ERR_TOO_LARGE, "slices span more than PTRDIFF_MAX bytes");
    }
    return PIXSUM_OK;
}

void psi_view_extent(const pixsum_view *v, uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t base = (uintptr_t)v->data;
    uintptr_t first = base, last = base;
    ptrdiff_t ys = (ptrdiff_t)(v->height - 1) * v->row_stride;
    ptrdiff_t zs = v->depth > 1 ? (ptrdiff_t)(v->depth - 1) * v->slice_stride : 0;
    if (ys < 0) first -= (uintptr_t)(-ys); else last += (uintptr_t)ys;
    if (zs < 0) first -= (uintptr_t)(-zs); else last += (uintptr_t)zs;
    *lo = first;
    *hi = last + v->width * v->channels * pixsum_type_size(v->type);
}

/*
 * integral_nd.c - pixsum_integral_nd(): the integral of an array of any
 * number of axes (scikit-image's integral_image: a cumulative sum over every
 * axis, or every axis but one channel axis), for arrays beyond the 2-D images
 * and 3-D volumes of pixsum_integral().
 *
 * One thread, not tuned: the input is converted into the table, then each
 * summed axis is added along in turn (n + 1 passes over the table). Integer
 * tables are exact whatever the order of the sums; the overflow rule is
 * pixsum_integral_check()'s over the elements summed into one entry.
 */
#include "internal.h"

#include <stdint.h>
#include <string.h>

/* The walk over every element of an array pair, last axis fastest. */
typedef struct nd_walk {
    size_t n;                          /* axes */
    size_t shape[PIXSUM_ND_MAX_DIMS];
    ptrdiff_t in_step[PIXSUM_ND_MAX_DIMS], out_step[PIXSUM_ND_MAX_DIMS];
} nd_walk;

/* Byte offsets of the lowest and highest element of an array from data. */
static void byte_range(const pixsum_nd_array *a, ptrdiff_t *lo, ptrdiff_t *hi)
{
    ptrdiff_t l = 0, h = 0;
    for (size_t k = 0; k < a->ndim; k++) {
        ptrdiff_t reach = (ptrdiff_t)(a->shape[k] - 1) * a->strides[k];
        if (reach < 0)
            l += reach;
        else
            h += reach;
    }
    *lo = l;
    *hi = h + (ptrdiff_t)pixsum_type_size(a->type) - 1;
}

/* Checks one array: axes, sizes, alignment and strides. `distinct` asks that
 * no two elements share memory (the table is written). */
static int check_array(const pixsum_nd_array *a, const char *what, bool distinct,
                       size_t *count)
{
    if (!a->data || !a->shape || !a->strides)
        return psi_fail(PIXSUM_ERR_NULL, "%s: data, shape or strides is NULL", what);
    if (a->ndim < 1 || a->ndim > PIXSUM_ND_MAX_DIMS)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "%s has %zu axes; 1..%d are taken", what,
                        a->ndim, PIXSUM_ND_MAX_DIMS);
    size_t es = pixsum_type_size(a->type);
    if (es == 0)
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "%s: unknown element type %d", what,
                        (int)a->type);
    if ((uintptr_t)a->data % es != 0)
        return psi_fail(PIXSUM_ERR_BAD_STRIDE, "%s: data pointer is not aligned to %zu bytes",
                        what, es);
    size_t n = 1;
    for (size_t k = 0; k < a->ndim; k++) {
        if (a->shape[k] == 0)
            return psi_fail(PIXSUM_ERR_BAD_SHAPE, "%s: axis %zu is empty", what, k);
        if (n > SIZE_MAX / a->shape[k] || a->shape[k] > (size_t)PTRDIFF_MAX)
            return psi_fail(PIXSUM_ERR_TOO_LARGE, "%s: the element count overflows size_t",
                            what);
        n *= a->shape[k];
        ptrdiff_t s = a->strides[k];
        size_t step = s < 0 ? (size_t)0 - (size_t)s : (size_t)s;
        if (a->shape[k] > 1 && step % es != 0)
            return psi_fail(PIXSUM_ERR_BAD_STRIDE, "%s: stride %td of axis %zu is not a "
                            "multiple of the %zu-byte element", what, s, k, es);
        if (a->shape[k] > 1 && step > (size_t)PTRDIFF_MAX / a->shape[k])
            return psi_fail(PIXSUM_ERR_TOO_LARGE, "%s: axis %zu spans more than PTRDIFF_MAX "
                            "bytes", what, k);
    }
    if (distinct) {
        /* sorted by step, each axis must step over all the axes below it */
        size_t order[PIXSUM_ND_MAX_DIMS], m = 0;
        for (size_t k = 0; k < a->ndim; k++)
            if (a->shape[k] > 1)
                order[m++] = k;
        for (size_t i = 1; i < m; i++)
            for (size_t j = i; j > 0; j--) {
                ptrdiff_t x = a->strides[order[j]], y = a->strides[order[j - 1]];
                if ((x < 0 ? -x : x) >= (y < 0 ? -y : y))
                    break;
                size_t t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
        size_t span = es;
        for (size_t i = 0; i < m; i++) {
            ptrdiff_t s = a->strides[order[i]];
            size_t step = s < 0 ? (size_t)0 - (size_t)s : (size_t)s;
            if (step < span)
                return psi_fail(PIXSUM_ERR_BAD_STRIDE, "%s: axis %zu (stride %td) overlaps "
                                "the axes inside it; the table's elements must be distinct",
                                what, order[i], s);
            span = (a->shape[order[i]] - 1) * step + span;
        }
    }
    *count = n;
    return PIXSUM_OK;
}

/* Reads element p of type t as an integer (integer types) or a double. */
static int64_t load_int(const char *p, pixsum_type t)
{
    switch (t) {
    case PIXSUM_U8: return *(const uint8_t *)p;
    case PIXSUM_U16: return *(const uint16_t *)(const void *)p;
    case PIXSUM_I16: return *(const int16_t *)(const void *)p;
    case PIXSUM_I32: return *(const int32_t *)(const void *)p;
    case PIXSUM_U32: return *(const uint32_t *)(const void *)p;
    default: return 0;
    }
}

static double load_float(const char *p, pixsum_type t)
{
    return t == PIXSUM_F32 ? (double)*(const float *)(const void *)p
                           : *(const double *)(const void *)p;
}

/* out element q (type ot) = in element p (type it), exactly (the pairs of
 * pixsum_integral_check() are exact conversions). */
static void convert(char *q, pixsum_type ot, const char *p, pixsum_type it)
{
    bool fl = it == PIXSUM_F32 || it == PIXSUM_F64;
    int64_t i = fl ? 0 : load_int(p, it);
    double f = fl ? load_float(p, it) : (double)i;
    switch (ot) {
    case PIXSUM_U32: *(uint32_t *)(void *)q = (uint32_t)i; break;
    case PIXSUM_U64: *(uint64_t *)(void *)q = (uint64_t)i; break;
    case PIXSUM_I64: *(int64_t *)(void *)q = i; break;
    case PIXSUM_F32: *(float *)(void *)q = (float)f; break;
    default: *(double *)(void *)q = f; break;
    }
}

/* q += p for table elements of type t (integers modular: signed in unsigned
 * arithmetic, which equals the exact sum whenever it fits). */
static void add_into(char *q, const char *p, pixsum_type t)
{
    switch (t) {
    case PIXSUM_U32: *(uint32_t *)(void *)q += *(const uint32_t *)(const void *)p; break;
    case PIXSUM_U64: *(uint64_t *)(void *)q += *(const uint64_t *)(const void *)p; break;
    case PIXSUM_I64: {
        uint64_t a, b;
        memcpy(&a, q, 8);
        memcpy(&b, p, 8);
        a += b;
        memcpy(q, &a, 8);
        break;
    }
    case PIXSUM_F32: *(float *)(void *)q += *(const float *)(const void *)p; break;
    default: *(double *)(void *)q += *(const double *)(const void *)p; break;
    }
}

/* Visits every element in order (last axis fastest). axis < 0: converts in
 * into out; else adds, along `axis`, each element's predecessor into it. */
static void pass(const nd_walk *w, const pixsum_nd_array *in, const pixsum_nd_array *out,
                 int axis)
{
    size_t idx[PIXSUM_ND_MAX_DIMS] = {0};
    size_t n = w->n, last = n - 1;
    const char *ib = (const char *)in->data;
    char *ob = (char *)out->data;
    ptrdiff_t back = axis >= 0 ? w->out_step[axis] : 0;
    for (;;) {
        /* the line along the last axis at idx[0 .. n-2] */
        if (axis < 0) {
            for (size_t j = 0; j < w->shape[last]; j++)
                convert(ob + (ptrdiff_t)j * w->out_step[last], out->type,
                        ib + (ptrdiff_t)j * w->in_step[last], in->type);
        } else if ((size_t)axis == last) {
            for (size_t j = 1; j < w->shape[last]; j++)
                add_into(ob + (ptrdiff_t)j * w->out_step[last],
                         ob + (ptrdiff_t)(j - 1) * w->out_step[last], out->type);
        } else if (idx[axis] > 0) {
            for (size_t j = 0; j < w->shape[last]; j++)
                add_into(ob + (ptrdiff_t)j * w->out_step[last],
                         ob + (ptrdiff_t)j * w->out_step[last] - back, out->type);
        }
        /* next line */
        size_t k = last;
        for (;;) {
            if (k == 0)
                return;
            k--;
            if (++idx[k] < w->shape[k]) {
                ib += w->in_step[k];
                ob += w->out_step[k];
                break;
            }
            ib -= (ptrdiff_t)(w->shape[k] - 1) * w->in_step[k];
            ob -= (ptrdiff_t)(w->shape[k] - 1) * w->out_step[k];
            idx[k] = 0;
        }
    }
}

int pixsum_integral_nd(pixsum_ctx *ctx, const pixsum_nd_array *in,
                       const pixsum_nd_array *out, int channel_axis)
{
    psi_clear_error();
    if (!in || !out)
        return psi_fail(PIXSUM_ERR_NULL, "input or output array is NULL");
    pixsum_ctx local = psi_default_ctx;
    const pixsum_ctx *c = ctx ? ctx : &local;
    size_t count_in = 0, count_out = 0;
    int st = check_array(in, "input", false, &count_in);
    if (st == PIXSUM_OK)
        st = check_array(out, "output", true, &count_out);
    if (st != PIXSUM_OK)
        return st;
    if (in->ndim != out->ndim)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "the output has %zu axes, the input %zu",
                        out->ndim, in->ndim);
    for (size_t k = 0; k < in->ndim; k++)
        if (in->shape[k] != out->shape[k])
            return psi_fail(PIXSUM_ERR_BAD_SHAPE, "axis %zu: the output has %zu entries, the "
                            "input %zu", k, out->shape[k], in->shape[k]);
    if (channel_axis < -1 || channel_axis >= (int)in->ndim)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "channel_axis %d is neither -1 (none) nor an "
                        "axis of the %zu", channel_axis, in->ndim);
    if (c->padded)
        return psi_fail(PIXSUM_ERR_UNSUPPORTED, "n-dimensional tables are inclusive; the "
                        "context asks for padded ones");
    /* the overflow rule: the elements summed into one entry */
    size_t summed = channel_axis >= 0 ? count_in / in->shape[channel_axis] : count_in;
    st = pixsum_integral_check(in->type, out->type, c->wrap ? 1 : summed, 0);
    if (st != PIXSUM_OK)
        return psi_fail(st, "output: %s", pixsum_last_error());
    ptrdiff_t ilo, ihi, olo, ohi;
    byte_range(in, &ilo, &ihi);
    byte_range(out, &olo, &ohi);
    uintptr_t ia = (uintptr_t)in->data, oa = (uintptr_t)out->data;
    if (ia + (uintptr_t)ilo <= oa + (uintptr_t)ohi && oa + (uintptr_t)olo <= ia + (uintptr_t)ihi)
        return psi_fail(PIXSUM_ERR_ALIASING, "the input and output memory overlap");
    nd_walk w;
    w.n = in->ndim;
    for (size_t k = 0; k < w.n; k++) {
        w.shape[k] = in->shape[k];
        w.in_step[k] = in->strides[k];
        w.out_step[k] = out->strides[k];
    }
    pass(&w, in, out, -1);
    for (int k = 0; k < (int)w.n; k++)
        if (k != channel_axis && w.shape[k] > 1)
            pass(&w, in, out, k);
    return PIXSUM_OK;
}

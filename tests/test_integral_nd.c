/*
 * test_integral_nd.c - pixsum_integral_nd(): the integral of arrays of 1..5
 * axes against a reference that sums, for every entry, the input elements
 * the definition names (every j with j_k <= i_k on the summed axes, j_c = i_c
 * on the channel axis), bit for bit: random sizes (1 included, odd ones),
 * every type pair of pixsum_integral(), extreme values, input and output
 * laid out with gaps, permuted axes and negative strides, with and without a
 * channel axis; the 2-D and 3-D cases also equal pixsum_integral(). Then the
 * refusals, each leaving the output untouched: NULL, axis counts, empty and
 * mismatched shapes, channel axes, padded contexts, type pairs, overflow
 * (and wrap allowing it), aliasing, overlapping or unaligned outputs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "pixsum.h"
#include "testutil.h"

#define MAXD 5

static const struct { pixsum_type in, out; } PAIRS[] = {
    {PIXSUM_U8, PIXSUM_U32},  {PIXSUM_U8, PIXSUM_U64},  {PIXSUM_U8, PIXSUM_I64},
    {PIXSUM_U8, PIXSUM_F32},  {PIXSUM_U8, PIXSUM_F64},  {PIXSUM_U16, PIXSUM_U32},
    {PIXSUM_U16, PIXSUM_U64}, {PIXSUM_U16, PIXSUM_I64}, {PIXSUM_U16, PIXSUM_F64},
    {PIXSUM_I16, PIXSUM_I64}, {PIXSUM_I16, PIXSUM_F64}, {PIXSUM_I32, PIXSUM_I64},
    {PIXSUM_I32, PIXSUM_F64}, {PIXSUM_U32, PIXSUM_U64}, {PIXSUM_U32, PIXSUM_I64},
    {PIXSUM_U32, PIXSUM_F64}, {PIXSUM_F32, PIXSUM_F64}, {PIXSUM_F64, PIXSUM_F64},
};

/* An array in a buffer with a random layout. */
typedef struct nd {
    unsigned char *buf;
    pixsum_nd_array a;
    size_t shape[MAXD];
    ptrdiff_t strides[MAXD];
} nd;

/* Lays out an array of `shape`: axes in a random order, random gaps, some
 * axes reversed (negative stride, data pointing at the last element). */
static void nd_make(tu_rng *r, nd *x, pixsum_type t, size_t n, const size_t *shape)
{
    size_t es = pixsum_type_size(t), order[MAXD];
    for (size_t k = 0; k < n; k++) {
        x->shape[k] = shape[k];
        order[k] = k;
    }
    for (size_t k = n; k > 1; k--) { /* shuffle: order[0] is the innermost axis */
        size_t j = tu_below(r, k), tmp = order[k - 1];
        order[k - 1] = order[j];
        order[j] = tmp;
    }
    size_t step = es;
    for (size_t i = 0; i < n; i++) {
        size_t k = order[i];
        x->strides[k] = (ptrdiff_t)step;
        step = step * shape[k] + es * tu_below(r, 3);
    }
    x->buf = malloc(step + es);
    assert_non_null(x->buf);
    memset(x->buf, 0xA5, step + es);
    ptrdiff_t offset = 0;
    for (size_t k = 0; k < n; k++)
        if (tu_below(r, 3) == 0) {
            offset += (ptrdiff_t)(shape[k] - 1) * x->strides[k];
            x->strides[k] = -x->strides[k];
        }
    x->a.data = x->buf + offset;
    x->a.type = t;
    x->a.ndim = n;
    x->a.shape = x->shape;
    x->a.strides = x->strides;
}

static char *nd_at(const nd *x, const size_t *idx)
{
    char *p = x->a.data;
    for (size_t k = 0; k < x->a.ndim; k++)
        p += (ptrdiff_t)idx[k] * x->strides[k];
    return p;
}

static int is_float(pixsum_type t) { return t == PIXSUM_F32 || t == PIXSUM_F64; }

/* A random value of type t (small integers for floats: sums stay exact). */
static void put_random(tu_rng *r, char *p, pixsum_type t, int extreme)
{
    uint64_t v = tu_next(r);
    int hi = extreme && tu_below(r, 2);
    switch (t) {
    case PIXSUM_U8: *(uint8_t *)p = extreme ? (hi ? 255 : 0) : (uint8_t)v; break;
    case PIXSUM_U16: *(uint16_t *)(void *)p = extreme ? (hi ? 65535 : 0) : (uint16_t)v; break;
    case PIXSUM_I16: *(int16_t *)(void *)p = extreme ? (hi ? 32767 : -32768) : (int16_t)v; break;
    case PIXSUM_I32:
        *(int32_t *)(void *)p = extreme ? (hi ? INT32_MAX : INT32_MIN) : (int32_t)v;
        break;
    case PIXSUM_U32: *(uint32_t *)(void *)p = extreme ? (hi ? UINT32_MAX : 0) : (uint32_t)v; break;
    case PIXSUM_F32: *(float *)(void *)p = (float)((int)(v % 2001) - 1000); break;
    default: *(double *)(void *)p = (double)((int64_t)(v % 2000001) - 1000000); break;
    }
}

static int64_t get_int(const char *p, pixsum_type t)
{
    switch (t) {
    case PIXSUM_U8: return *(const uint8_t *)p;
    case PIXSUM_U16: return *(const uint16_t *)(const void *)p;
    case PIXSUM_I16: return *(const int16_t *)(const void *)p;
    case PIXSUM_I32: return *(const int32_t *)(const void *)p;
    case PIXSUM_U32: return *(const uint32_t *)(const void *)p;
    case PIXSUM_U64: return (int64_t)*(const uint64_t *)(const void *)p;
    case PIXSUM_I64: return *(const int64_t *)(const void *)p;
    default: return 0;
    }
}

static double get_float(const char *p, pixsum_type t)
{
    return t == PIXSUM_F32 ? *(const float *)(const void *)p : *(const double *)(const void *)p;
}

/* Advances idx over shape (last axis fastest); 0 after the last index. */
static int next_index(size_t *idx, const size_t *shape, size_t n)
{
    for (size_t k = n; k-- > 0;) {
        if (++idx[k] < shape[k])
            return 1;
        idx[k] = 0;
    }
    return 0;
}

/* Checks every entry of out against the sum its definition names. */
static void check_against_definition(const nd *in, const nd *out, int channel_axis)
{
    size_t n = in->a.ndim, i[MAXD] = {0};
    do {
        int64_t si = 0;
        double sf = 0;
        size_t j[MAXD] = {0}, lim[MAXD];
        for (size_t k = 0; k < n; k++)
            lim[k] = (int)k == channel_axis ? 1 : i[k] + 1;
        do {
            size_t at[MAXD];
            for (size_t k = 0; k < n; k++)
                at[k] = (int)k == channel_axis ? i[k] : j[k];
            const char *p = nd_at(in, at);
            if (is_float(in->a.type))
                sf += get_float(p, in->a.type);
            else
                si += get_int(p, in->a.type);
        } while (next_index(j, lim, n));
        const char *q = nd_at(out, i);
        if (is_float(out->a.type)) {
            double want = is_float(in->a.type) ? sf : (double)si;
            assert_true(get_float(q, out->a.type) == want);
        } else if (out->a.type == PIXSUM_U32) {
            assert_int_equal(*(const uint32_t *)(const void *)q, (uint32_t)si);
        } else {
            assert_int_equal(get_int(q, out->a.type), si);
        }
    } while (next_index(i, in->shape, n));
}

static void test_matches_definition(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    for (int it = 0; it < 400; it++) {
        size_t n = tu_between(r, 1, MAXD), shape[MAXD], count = 1;
        for (size_t k = 0; k < n; k++) {
            shape[k] = tu_between(r, 1, n <= 2 ? 9 : n == 3 ? 6 : 4);
            count *= shape[k];
        }
        size_t pi = tu_below(r, sizeof PAIRS / sizeof PAIRS[0]);
        int extreme = tu_below(r, 3) == 0;
        int channel_axis = tu_below(r, 3) == 0 ? (int)tu_below(r, n) : -1;
        nd in, out;
        nd_make(r, &in, PAIRS[pi].in, n, shape);
        nd_make(r, &out, PAIRS[pi].out, n, shape);
        size_t idx[MAXD] = {0};
        do
            put_random(r, nd_at(&in, idx), in.a.type, extreme);
        while (next_index(idx, shape, n));
        pixsum_ctx *ctx = pixsum_ctx_new();
        assert_non_null(ctx);
        if (PAIRS[pi].out == PIXSUM_U32 || PAIRS[pi].out == PIXSUM_F32)
            pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 1); /* narrow tables: modular / rounded */
        int st = pixsum_integral_nd(ctx, &in.a, &out.a, channel_axis);
        assert_int_equal(st, PIXSUM_OK);
        /* u8 -> f32 sums stay below 2^24 at these sizes: exact too */
        (void)count;
        check_against_definition(&in, &out, channel_axis);
        pixsum_ctx_free(ctx);
        free(in.buf);
        free(out.buf);
    }
}

/* 2-D and 3-D arrays: the same table as pixsum_integral(). */
static void test_matches_integral(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    for (int it = 0; it < 60; it++) {
        size_t d = tu_below(r, 2) ? tu_dim(r, 7) : 1, h = tu_dim(r, 40), w = tu_dim(r, 40);
        size_t count = d * h * w;
        uint16_t *img = malloc(count * 2);
        uint64_t *a = malloc(count * 8), *b = malloc(count * 8);
        assert_true(img && a && b);
        for (size_t i = 0; i < count; i++)
            img[i] = (uint16_t)tu_next(r);
        pixsum_view vi = pixsum_view_3d(img, PIXSUM_U16, w, h, d, 1, 0, 0);
        pixsum_view vo = pixsum_view_3d(a, PIXSUM_U64, w, h, d, 1, 0, 0);
        assert_int_equal(pixsum_integral(NULL, &vi, &vo), PIXSUM_OK);
        size_t shape[3] = {d, h, w};
        ptrdiff_t si[3] = {(ptrdiff_t)(h * w * 2), (ptrdiff_t)(w * 2), 2};
        ptrdiff_t so[3] = {(ptrdiff_t)(h * w * 8), (ptrdiff_t)(w * 8), 8};
        pixsum_nd_array ai = {img, PIXSUM_U16, 3, shape, si};
        pixsum_nd_array ao = {b, PIXSUM_U64, 3, shape, so};
        assert_int_equal(pixsum_integral_nd(NULL, &ai, &ao, -1), PIXSUM_OK);
        assert_memory_equal(a, b, count * 8);
        free(img);
        free(a);
        free(b);
    }
}

/* One refusal: status `want`, and the output untouched. */
static void refused(pixsum_ctx *ctx, const pixsum_nd_array *in, const pixsum_nd_array *out,
                    int channel_axis, int want, const void *outbuf, size_t bytes)
{
    unsigned char *before = malloc(bytes);
    assert_non_null(before);
    memcpy(before, outbuf, bytes);
    assert_int_equal(pixsum_integral_nd(ctx, in, out, channel_axis), want);
    assert_true(pixsum_last_error()[0] != '\0');
    assert_memory_equal(before, outbuf, bytes);
    free(before);
}

static void test_refusals(void **state)
{
    (void)state;
    static uint16_t img[300 * 300];
    static uint32_t tab[300 * 300 + 8];
    for (size_t i = 0; i < 300 * 300; i++)
        img[i] = 65535;
    memset(tab, 0x5A, sizeof tab);
    size_t shape[2] = {300, 300}, small[2] = {3, 4}, zero[2] = {3, 0};
    ptrdiff_t si[2] = {600, 2}, so[2] = {1200, 4};
    pixsum_nd_array in = {img, PIXSUM_U16, 2, shape, si};
    pixsum_nd_array out = {tab, PIXSUM_U32, 2, shape, so};
    size_t bytes = sizeof tab;
    refused(NULL, NULL, &out, -1, PIXSUM_ERR_NULL, tab, bytes);
    refused(NULL, &in, NULL, -1, PIXSUM_ERR_NULL, tab, bytes);
    /* 300 x 300 x 65535 does not fit 32 bits */
    refused(NULL, &in, &out, -1, PIXSUM_ERR_OVERFLOW, tab, bytes);
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_non_null(ctx);
    pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 1);
    assert_int_equal(pixsum_integral_nd(ctx, &in, &out, -1), PIXSUM_OK);
    assert_int_equal(tab[1], (uint32_t)(2u * 65535u));
    pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 0);
    memset(tab, 0x5A, sizeof tab);
    in.shape = out.shape = small;
    pixsum_nd_array bad = out;
    bad.ndim = 0;
    refused(ctx, &in, &bad, -1, PIXSUM_ERR_INVALID_ARG, tab, bytes);
    bad.ndim = PIXSUM_ND_MAX_DIMS + 1;
    refused(ctx, &in, &bad, -1, PIXSUM_ERR_INVALID_ARG, tab, bytes);
    refused(ctx, &in, &out, 2, PIXSUM_ERR_INVALID_ARG, tab, bytes);
    refused(ctx, &in, &out, -2, PIXSUM_ERR_INVALID_ARG, tab, bytes);
    bad = out;
    bad.shape = shape;
    refused(ctx, &in, &bad, -1, PIXSUM_ERR_BAD_SHAPE, tab, bytes);
    bad.shape = zero;
    refused(ctx, &in, &bad, -1, PIXSUM_ERR_BAD_SHAPE, tab, bytes);
    bad = out;
    bad.type = PIXSUM_U8; /* no u16 -> u8 tables */
    refused(ctx, &in, &bad, -1, PIXSUM_ERR_BAD_TYPE, tab, bytes);
    bad = out;
    ptrdiff_t overlapping[2] = {4, 4};
    bad.strides = overlapping;
    refused(ctx, &in, &bad, -1, PIXSUM_ERR_BAD_STRIDE, tab, bytes);
    ptrdiff_t odd[2] = {1200, 6};
    bad.strides = odd;
    refused(ctx, &in, &bad, -1, PIXSUM_ERR_BAD_STRIDE, tab, bytes);
    bad = out;
    bad.data = (char *)tab + 2;
    refused(ctx, &in, &bad, -1, PIXSUM_ERR_BAD_STRIDE, tab, bytes);
    pixsum_nd_array alias = {tab, PIXSUM_U32, 2, small, so};
    pixsum_nd_array alias_out = {tab, PIXSUM_U64, 2, small, (ptrdiff_t[]){2400, 8}};
    refused(ctx, &alias, &alias_out, -1, PIXSUM_ERR_ALIASING, tab, bytes);
    pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, 1);
    refused(ctx, &in, &out, -1, PIXSUM_ERR_UNSUPPORTED, tab, bytes);
    pixsum_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_definition),
        cmocka_unit_test(test_matches_integral),
        cmocka_unit_test(test_refusals),
    };
    tu_init("test_integral_nd");
    return cmocka_run_group_tests(tests, NULL, NULL);
}

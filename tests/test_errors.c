/*
 * test_errors.c - every status code the core can return, each provoked by a
 * bad call: NULL pointers, zero sizes, strides smaller than a row or not a
 * multiple of the element, misaligned data, mismatched types, shapes and
 * channels, input aliasing output (fully and partly), unknown methods, methods
 * that do not support an operation or are unavailable, invalid context
 * parameters, sizes that overflow, a failing allocation. Each failure must come
 * with a non-empty detail text that names the problem, and must leave the
 * output untouched (checked byte by byte on a guarded buffer). Also
 * pixsum_strerror() for every code and unknown ones, and the detail text being
 * cleared by a successful call.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "pixsum.h"
#include "testutil.h"

/* Under AddressSanitizer a huge allocation must fail with NULL (as malloc does)
 * instead of aborting, so the out-of-memory path can be tested. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

/* Asserts the status, and that the detail text is non-empty and contains
 * `needle` (case-sensitive; NULL = any text). */
#define EXPECT_FAIL(call, want, needle) expect_fail((call), (want), (needle), #call, __LINE__)

static void expect_fail(int status, int want, const char *needle, const char *call, int line)
{
    const char *d = pixsum_last_error();
    if (status != want)
        fail_msg("line %d: %s returned %d (%s), expected %d (%s); detail '%s'", line, call,
                 status, pixsum_strerror(status), want, pixsum_strerror(want), d);
    if (d[0] == '\0')
        fail_msg("line %d: %s failed with an empty detail text", line, call);
    if (needle && !strstr(d, needle))
        fail_msg("line %d: %s: detail '%s' does not mention '%s'", line, call, d, needle);
}

#define EXPECT_OK(call) expect_ok((call), #call, __LINE__)

static void expect_ok(int status, const char *call, int line)
{
    if (status != PIXSUM_OK)
        fail_msg("line %d: %s returned %d (%s): %s", line, call, status,
                 pixsum_strerror(status), pixsum_last_error());
    if (pixsum_last_error()[0] != '\0')
        fail_msg("line %d: %s succeeded but left the detail '%s'", line, call,
                 pixsum_last_error());
}

static void test_strerror_every_code(void **state)
{
    (void)state;
    const char *seen[PIXSUM_STATUS_COUNT];
    for (int s = 0; s < PIXSUM_STATUS_COUNT; s++) {
        const char *t = pixsum_strerror(s);
        assert_non_null(t);
        assert_true(t[0] != '\0');
        assert_string_not_equal(t, "unknown status");
        for (int k = 0; k < s; k++)
            if (strcmp(seen[k], t) == 0)
                fail_msg("codes %d and %d share the text '%s'", k, s, t);
        seen[s] = t;
    }
    assert_string_equal(pixsum_strerror(PIXSUM_OK), "success");
    assert_non_null(strstr(pixsum_strerror(PIXSUM_ERR_OVERFLOW), "overflow"));
    const int unknown[] = {-1, PIXSUM_STATUS_COUNT, 1000, INT32_MIN, INT32_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        assert_string_equal(pixsum_strerror(unknown[i]), "unknown status");
    /* The pinned values of the public header. */
    assert_int_equal(PIXSUM_ERR_NULL, 1);
    assert_int_equal(PIXSUM_ERR_OVERFLOW, 6);
    assert_int_equal(PIXSUM_ERR_ALIASING, 7);
    assert_int_equal(PIXSUM_ERR_INTERNAL, 18);
    assert_int_equal(PIXSUM_STATUS_COUNT, 19);
}

/* A u8 input and a u32 output (inclusive) of the same shape in guarded
 * buffers, the output snapshotted for the untouched check. */
typedef struct pair {
    tu_image in, out;
} pair;

static void make_pair(pair *p, size_t w, size_t h, size_t d, size_t ch)
{
    assert_int_equal(tu_image_alloc(&p->in, PIXSUM_U8, w, h, d, ch, NULL), 0);
    tu_fill_random(tu_global_rng(), &p->in.view, TU_FILL_MIXED);
    assert_int_equal(tu_image_alloc(&p->out, PIXSUM_U32, w, h, d, ch, NULL), 0);
    tu_image_snapshot(&p->out);
}

static void check_untouched(pair *p)
{
    assert_int_equal(tu_image_check_untouched(&p->out, 1, "output after a failed call"), 0);
}

static void free_pair(pair *p)
{
    tu_image_free(&p->in);
    tu_image_free(&p->out);
}

static void test_null_pointers(void **state)
{
    (void)state;
    pair p;
    make_pair(&p, 7, 5, 1, 1);
    pixsum_view in = p.in.view, out = p.out.view;
    EXPECT_FAIL(pixsum_integral(NULL, NULL, &out), PIXSUM_ERR_NULL, "NULL");
    EXPECT_FAIL(pixsum_integral(NULL, &in, NULL), PIXSUM_ERR_NULL, "NULL");
    pixsum_view nodata = in;
    nodata.data = NULL;
    EXPECT_FAIL(pixsum_integral(NULL, &nodata, &out), PIXSUM_ERR_NULL, "NULL");
    nodata = out;
    nodata.data = NULL;
    EXPECT_FAIL(pixsum_integral(NULL, &in, &nodata), PIXSUM_ERR_NULL, "NULL");
    EXPECT_FAIL(pixsum_integral_sq(NULL, &in, &out, NULL), PIXSUM_ERR_NULL, "NULL");
    EXPECT_FAIL(pixsum_integral_sq(NULL, NULL, NULL, &out), PIXSUM_ERR_NULL, "NULL");
    EXPECT_FAIL(pixsum_integral_tilted(NULL, NULL, &out), PIXSUM_ERR_NULL, "NULL");
    EXPECT_FAIL(pixsum_integral_tilted(NULL, &in, NULL), PIXSUM_ERR_NULL, "NULL");
    check_untouched(&p);

    intptr_t v;
    EXPECT_FAIL(pixsum_ctx_set(NULL, PIXSUM_PARAM_WRAP, 1), PIXSUM_ERR_NULL, "NULL");
    EXPECT_FAIL(pixsum_ctx_get(NULL, PIXSUM_PARAM_WRAP, &v), PIXSUM_ERR_NULL, "NULL");
    pixsum_ctx *ctx = pixsum_ctx_new();
    EXPECT_FAIL(pixsum_ctx_get(ctx, PIXSUM_PARAM_WRAP, NULL), PIXSUM_ERR_NULL, "NULL");
    EXPECT_FAIL(pixsum_ctx_set_method(ctx, NULL), PIXSUM_ERR_NULL, "NULL");
    EXPECT_FAIL(pixsum_ctx_set_method(NULL, "auto"), PIXSUM_ERR_NULL, "NULL");
    pixsum_ctx_free(ctx);
    pixsum_ctx_free(NULL); /* accepted */

    pixsum_view roi;
    EXPECT_FAIL(pixsum_view_roi(NULL, 0, 0, 1, 1, &roi), PIXSUM_ERR_NULL, "NULL");
    EXPECT_FAIL(pixsum_view_roi(&in, 0, 0, 1, 1, NULL), PIXSUM_ERR_NULL, "NULL");
    EXPECT_FAIL(pixsum_view_roi3d(NULL, 0, 0, 0, 1, 1, 1, &roi), PIXSUM_ERR_NULL, "NULL");
    EXPECT_FAIL(pixsum_view_check(NULL), PIXSUM_ERR_NULL, "NULL");
    assert_int_equal(pixsum_method_find(NULL), -1);
    assert_int_equal(pixsum_type_from_name(NULL), PIXSUM_TYPE_NONE);
    free_pair(&p);
}

static void test_bad_shapes(void **state)
{
    (void)state;
    pair p;
    make_pair(&p, 7, 5, 1, 2);
    pixsum_view in = p.in.view, out = p.out.view, v;

    v = in; v.width = 0;
    EXPECT_FAIL(pixsum_integral(NULL, &v, &out), PIXSUM_ERR_BAD_SHAPE, "empty");
    v = in; v.height = 0;
    EXPECT_FAIL(pixsum_integral(NULL, &v, &out), PIXSUM_ERR_BAD_SHAPE, "empty");
    v = in; v.depth = 0;
    EXPECT_FAIL(pixsum_integral(NULL, &v, &out), PIXSUM_ERR_BAD_SHAPE, "empty");
    v = out; v.width = 6;
    EXPECT_FAIL(pixsum_integral(NULL, &in, &v), PIXSUM_ERR_BAD_SHAPE, "expected 7x5x1");
    v = out; v.height = 4;
    EXPECT_FAIL(pixsum_integral(NULL, &in, &v), PIXSUM_ERR_BAD_SHAPE, "expected 7x5x1");
    v = out; v.height = 2; v.depth = 2; /* a 7x2x2 volume inside the output buffer */
    v.slice_stride = 2 * v.row_stride;
    EXPECT_FAIL(pixsum_integral(NULL, &in, &v), PIXSUM_ERR_BAD_SHAPE, "expected");
    v = out; v.channels = 1; v.width = 7;
    EXPECT_FAIL(pixsum_integral(NULL, &in, &v), PIXSUM_ERR_BAD_SHAPE, "channels");

    /* padded layout: the inclusive-sized output is refused, the padded one works */
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, 1), PIXSUM_OK);
    EXPECT_FAIL(pixsum_integral(ctx, &in, &out), PIXSUM_ERR_BAD_SHAPE, "expected 8x6x1");
    /* the squared table is checked too */
    tu_image sq;
    assert_int_equal(tu_image_alloc(&sq, PIXSUM_U64, 7, 5, 1, 2, NULL), 0);
    tu_image_snapshot(&sq);
    EXPECT_FAIL(pixsum_integral_sq(ctx, &in, NULL, &sq.view), PIXSUM_ERR_BAD_SHAPE, "squared");
    assert_int_equal(tu_image_check_untouched(&sq, 1, "squared"), 0);
    tu_image_free(&sq);
    pixsum_ctx_free(ctx);

    /* tilted: only 2-D, and always (W+1) x (H+1) */
    EXPECT_FAIL(pixsum_integral_tilted(NULL, &in, &out), PIXSUM_ERR_BAD_SHAPE, "expected 8x6x1");
    /* a 7x2x2 volume inside the 7x5 input buffer */
    pixsum_view vol = pixsum_view_3d(p.in.view.data, PIXSUM_U8, 7, 2, 2, 2, 0, 0);
    EXPECT_FAIL(pixsum_integral_tilted(NULL, &vol, &out), PIXSUM_ERR_BAD_SHAPE, "2-D");

    /* view helpers */
    pixsum_view roi;
    EXPECT_FAIL(pixsum_view_roi(&in, 0, 0, 0, 1, &roi), PIXSUM_ERR_BAD_SHAPE, "empty");
    EXPECT_FAIL(pixsum_view_roi3d(&in, 0, 0, 0, 1, 1, 0, &roi), PIXSUM_ERR_BAD_SHAPE, "empty");
    EXPECT_FAIL(pixsum_view_roi(&in, 6, 0, 2, 1, &roi), PIXSUM_ERR_OUT_OF_RANGE, "outside");
    EXPECT_FAIL(pixsum_view_roi(&in, 0, 5, 1, 1, &roi), PIXSUM_ERR_OUT_OF_RANGE, "outside");
    EXPECT_FAIL(pixsum_view_roi(&in, SIZE_MAX, 0, 2, 1, &roi), PIXSUM_ERR_OUT_OF_RANGE,
                "outside");
    EXPECT_FAIL(pixsum_view_roi3d(&in, 0, 0, 1, 1, 1, 1, &roi), PIXSUM_ERR_OUT_OF_RANGE,
                "outside");
    check_untouched(&p);
    free_pair(&p);
}

static void test_bad_channels_and_sizes(void **state)
{
    (void)state;
    pair p;
    make_pair(&p, 4, 3, 1, 1);
    pixsum_view in = p.in.view, out = p.out.view, v;
    v = in; v.channels = 0;
    EXPECT_FAIL(pixsum_integral(NULL, &v, &out), PIXSUM_ERR_INVALID_ARG, "channels");
    v = in; v.channels = 5;
    EXPECT_FAIL(pixsum_integral(NULL, &v, &out), PIXSUM_ERR_INVALID_ARG, "channels");
    v = out; v.channels = 5;
    EXPECT_FAIL(pixsum_integral(NULL, &in, &v), PIXSUM_ERR_INVALID_ARG, "channels");
    /* byte sizes that overflow size_t / ptrdiff_t */
    v = in; v.width = SIZE_MAX / 2 + 1; v.row_stride = 0; v.height = 1; /* row > PTRDIFF_MAX */
    EXPECT_FAIL(pixsum_view_check(&v), PIXSUM_ERR_TOO_LARGE, "overflows");
    v = in; v.type = PIXSUM_U16; v.width = SIZE_MAX / 2; v.height = 1; /* bytes > SIZE_MAX */
    EXPECT_FAIL(pixsum_view_check(&v), PIXSUM_ERR_TOO_LARGE, "overflows");
    v = in; v.width = 1 << 20; v.height = 1 << 20; v.depth = 1 << 20; v.channels = 4;
    v.type = PIXSUM_F64; v.row_stride = 0; /* 2^65 bytes */
    EXPECT_FAIL(pixsum_view_check(&v), PIXSUM_ERR_TOO_LARGE, "overflows");
    v = in; v.type = PIXSUM_U32; v.width = SIZE_MAX / 4 + 1; v.height = 1;
    EXPECT_FAIL(pixsum_integral(NULL, &v, &out), PIXSUM_ERR_TOO_LARGE, "overflows");
    v = in; v.width = 1; v.height = 4; v.row_stride = PTRDIFF_MAX / 2;
    EXPECT_FAIL(pixsum_view_check(&v), PIXSUM_ERR_TOO_LARGE, "PTRDIFF_MAX");
    assert_int_equal(pixsum_packed_bytes(PIXSUM_U32, SIZE_MAX / 2, 1, 1, 1), 0);
    assert_int_equal(pixsum_packed_bytes(PIXSUM_U16, 3, 5, 7, 2), 3 * 5 * 7 * 2 * 2);
    check_untouched(&p);
    free_pair(&p);
}

static void test_bad_strides(void **state)
{
    (void)state;
    tu_image in16, out;
    tu_layout lay = {4, 0, 0, 0};
    assert_int_equal(tu_image_alloc(&in16, PIXSUM_U16, 6, 4, 1, 1, &lay), 0);
    tu_fill_random(tu_global_rng(), &in16.view, TU_FILL_MIXED);
    assert_int_equal(tu_image_alloc(&out, PIXSUM_U64, 6, 4, 1, 1, &lay), 0);
    tu_image_snapshot(&out);
    pixsum_view in = in16.view, v;

    v = in; v.row_stride = 10; /* a row is 12 bytes */
    EXPECT_FAIL(pixsum_integral(NULL, &v, &out.view), PIXSUM_ERR_BAD_STRIDE, "smaller than a row");
    v = in; v.row_stride = -10;
    EXPECT_FAIL(pixsum_integral(NULL, &v, &out.view), PIXSUM_ERR_BAD_STRIDE, "smaller than a row");
    v = in; v.row_stride = 13; /* not a multiple of 2 bytes */
    EXPECT_FAIL(pixsum_integral(NULL, &v, &out.view), PIXSUM_ERR_BAD_STRIDE, "multiple");
    v = in; v.data = (char *)v.data + 1; /* misaligned u16 */
    EXPECT_FAIL(pixsum_integral(NULL, &v, &out.view), PIXSUM_ERR_BAD_STRIDE, "aligned");
    v = out.view; v.row_stride = 40; /* output row is 48 bytes */
    EXPECT_FAIL(pixsum_integral(NULL, &in, &v), PIXSUM_ERR_BAD_STRIDE, "smaller than a row");
    v = out.view; v.row_stride = 52; /* not a multiple of 8 */
    EXPECT_FAIL(pixsum_integral(NULL, &in, &v), PIXSUM_ERR_BAD_STRIDE, "multiple");
    v = out.view; v.data = (char *)v.data + 4;
    EXPECT_FAIL(pixsum_integral(NULL, &in, &v), PIXSUM_ERR_BAD_STRIDE, "aligned");
    assert_int_equal(tu_image_check_untouched(&out, 1, "output"), 0);
    tu_image_free(&out);
    tu_image_free(&in16);

    /* volumes: a slice stride smaller than a slice, or not a multiple */
    tu_image vin, vout;
    assert_int_equal(tu_image_alloc(&vin, PIXSUM_I16, 3, 4, 3, 1, NULL), 0);
    tu_fill_random(tu_global_rng(), &vin.view, TU_FILL_MIXED);
    assert_int_equal(tu_image_alloc(&vout, PIXSUM_I64, 3, 4, 3, 1, NULL), 0);
    tu_image_snapshot(&vout);
    v = vin.view; v.slice_stride = 3 * v.row_stride; /* 4 rows per slice */
    EXPECT_FAIL(pixsum_integral(NULL, &v, &vout.view), PIXSUM_ERR_BAD_STRIDE, "slice stride");
    v = vin.view; v.slice_stride += 1;
    EXPECT_FAIL(pixsum_integral(NULL, &v, &vout.view), PIXSUM_ERR_BAD_STRIDE, "multiple");
    v = vout.view; v.slice_stride = -3 * v.row_stride;
    EXPECT_FAIL(pixsum_integral(NULL, &vin.view, &v), PIXSUM_ERR_BAD_STRIDE, "slice stride");
    assert_int_equal(tu_image_check_untouched(&vout, 1, "volume output"), 0);
    tu_image_free(&vin);
    tu_image_free(&vout);

    /* a single row may have any stride, even 0 */
    uint8_t row[5] = {1, 2, 3, 4, 5};
    uint32_t sums[5];
    pixsum_view r1 = pixsum_view_2d(row, PIXSUM_U8, 5, 1, 1, 0);
    r1.row_stride = 0;
    pixsum_view o1 = pixsum_view_2d(sums, PIXSUM_U32, 5, 1, 1, 0);
    o1.row_stride = -7 * 4;
    EXPECT_OK(pixsum_integral(NULL, &r1, &o1));
    assert_true(sums[4] == 15);
}

static void test_bad_types(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    /* Every (input, output) combination not in the documented list is refused,
     * for plain and squared tables; every listed one is accepted. */
    pixsum_ctx *wrap = pixsum_ctx_new(); /* accepted pairs must not hit the overflow rule */
    assert_int_equal(pixsum_ctx_set(wrap, PIXSUM_PARAM_WRAP, 1), PIXSUM_OK);
    for (int squared = 0; squared < 2; squared++) {
        pixsum_type pin[32], pout[32];
        size_t n = tu_supported_pairs(squared, pin, pout, 32);
        for (int ti = 0; ti <= PIXSUM_TYPE_COUNT; ti++)
            for (int to = 0; to <= PIXSUM_TYPE_COUNT; to++) {
                int listed = 0;
                for (size_t k = 0; k < n; k++)
                    listed |= pin[k] == (pixsum_type)ti && pout[k] == (pixsum_type)to;
                /* Buffers of a real type; the view then claims the type under test
                 * (0 and PIXSUM_TYPE_COUNT are unknown types). */
                int ti_known = ti > 0 && ti < PIXSUM_TYPE_COUNT;
                int to_known = to > 0 && to < PIXSUM_TYPE_COUNT;
                tu_image in, out;
                assert_int_equal(tu_image_alloc(&in, ti_known ? (pixsum_type)ti : PIXSUM_U8, 3, 2,
                                                1, 1, NULL),
                                 0);
                tu_fill_random(r, &in.view, TU_FILL_SMALL);
                assert_int_equal(tu_image_alloc(&out, to_known ? (pixsum_type)to : PIXSUM_U8, 3,
                                                2, 1, 1, NULL),
                                 0);
                pixsum_view iv = in.view, ov = out.view;
                iv.type = (pixsum_type)ti;
                ov.type = (pixsum_type)to;
                tu_image_snapshot(&out);
                int st = squared ? pixsum_integral_sq(wrap, &iv, NULL, &ov)
                                 : pixsum_integral(wrap, &iv, &ov);
                if (listed) {
                    if (st != PIXSUM_OK)
                        fail_msg("%s -> %s (squared %d) refused: %s", pixsum_type_name(iv.type),
                                 pixsum_type_name(ov.type), squared, pixsum_last_error());
                } else {
                    if (st != PIXSUM_ERR_BAD_TYPE)
                        fail_msg("type %d -> %d (squared %d): status %d, expected BAD_TYPE", ti,
                                 to, squared, st);
                    assert_true(pixsum_last_error()[0] != '\0');
                    assert_int_equal(tu_image_check_untouched(&out, 1, "bad type"), 0);
                    assert_int_equal(pixsum_integral_check(iv.type, ov.type, 6, squared),
                                     PIXSUM_ERR_BAD_TYPE);
                }
                /* The registry answers the same (out NONE means "any output"). */
                pixsum_op op = squared ? PIXSUM_OP_INTEGRAL_SQ : PIXSUM_OP_INTEGRAL;
                if (to != PIXSUM_TYPE_NONE)
                    assert_int_equal(pixsum_method_supports(pixsum_method_find("serial.2wh"), op,
                                                            iv.type, ov.type),
                                     listed);
                tu_image_free(&in);
                tu_image_free(&out);
            }
    }
    pixsum_ctx_free(wrap);
    /* A readable text for one of them. */
    uint8_t px[4] = {0};
    uint8_t o[4];
    pixsum_view in = pixsum_view_2d(px, PIXSUM_U8, 2, 2, 1, 0);
    pixsum_view out = pixsum_view_2d(o, PIXSUM_U8, 2, 2, 1, 0);
    EXPECT_FAIL(pixsum_integral(NULL, &in, &out), PIXSUM_ERR_BAD_TYPE, "u8 -> u8");
    in.type = (pixsum_type)42;
    EXPECT_FAIL(pixsum_integral(NULL, &in, &out), PIXSUM_ERR_BAD_TYPE, "42");
    EXPECT_FAIL(pixsum_integral_check(PIXSUM_F64, PIXSUM_F32, 1, 0), PIXSUM_ERR_BAD_TYPE, "f64 -> f32");
}

static void test_aliasing(void **state)
{
    (void)state;
    /* One buffer holding an 8x6 u8 image followed by room for tables. */
    size_t bytes = 4096;
    unsigned char *buf = malloc(bytes);
    assert_non_null(buf);
    memset(buf, 7, bytes);
    pixsum_view in = pixsum_view_2d(buf, PIXSUM_U8, 8, 6, 1, 0); /* bytes [0, 48) */
    pixsum_view out = pixsum_view_2d(buf, PIXSUM_U32, 8, 6, 1, 0);
    EXPECT_FAIL(pixsum_integral(NULL, &in, &out), PIXSUM_ERR_ALIASING, "overlaps");
    out.data = buf + 44; /* partial: starts inside the last input row */
    EXPECT_FAIL(pixsum_integral(NULL, &in, &out), PIXSUM_ERR_ALIASING, "overlaps");
    /* partial: the input [188, 236) starts inside the output's tail [0, 192) */
    pixsum_view in_late = pixsum_view_2d(buf + 188, PIXSUM_U8, 8, 6, 1, 0);
    out.data = buf;
    EXPECT_FAIL(pixsum_integral(NULL, &in_late, &out), PIXSUM_ERR_ALIASING, "overlaps");
    /* one byte of overlap is enough */
    pixsum_view in_edge = pixsum_view_2d(buf + 191, PIXSUM_U8, 8, 6, 1, 0);
    EXPECT_FAIL(pixsum_integral(NULL, &in_edge, &out), PIXSUM_ERR_ALIASING, "overlaps");
    /* bottom-up input reaching down into the output */
    pixsum_view up = pixsum_view_2d(buf + 1000, PIXSUM_U8, 8, 6, 1, -200);
    pixsum_view below = pixsum_view_2d(buf, PIXSUM_U32, 8, 6, 1, 0); /* [0, 192) */
    EXPECT_FAIL(pixsum_integral(NULL, &up, &below), PIXSUM_ERR_ALIASING, "overlaps");
    /* tables overlapping each other */
    pixsum_view src = pixsum_view_2d(buf + 3000, PIXSUM_U8, 8, 6, 1, 0);
    pixsum_view t1 = pixsum_view_2d(buf, PIXSUM_U64, 8, 6, 1, 0);       /* [0, 384) */
    pixsum_view t2 = pixsum_view_2d(buf + 376, PIXSUM_U64, 8, 6, 1, 0); /* [376, ...) */
    EXPECT_FAIL(pixsum_integral_sq(NULL, &src, &t1, &t2), PIXSUM_ERR_ALIASING, "overlap");
    EXPECT_FAIL(pixsum_integral_sq(NULL, &src, &t1, &t1), PIXSUM_ERR_ALIASING, "overlap");
    /* tilted too */
    pixsum_view tt = pixsum_view_2d(buf + 2992, PIXSUM_U32, 9, 7, 1, 0);
    EXPECT_FAIL(pixsum_integral_tilted(NULL, &src, &tt), PIXSUM_ERR_ALIASING, "overlaps");
    /* Nothing was written by any of them: every byte still 7. */
    for (size_t i = 0; i < bytes; i++)
        if (buf[i] != 7)
            fail_msg("byte %zu written by a refused call", i);
    /* Adjacent but disjoint is fine: output right after the input. */
    pixsum_view next = pixsum_view_2d(buf + 48, PIXSUM_U32, 8, 6, 1, 0);
    EXPECT_OK(pixsum_integral(NULL, &in, &next));
    assert_true(((uint32_t *)(buf + 48))[47] == 7u * 48u);
    free(buf);
}

static void test_context_parameters(void **state)
{
    (void)state;
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_non_null(ctx);
    intptr_t v = -1;
    const pixsum_param params[] = {PIXSUM_PARAM_METHOD, PIXSUM_PARAM_THREADS, PIXSUM_PARAM_WRAP,
                                   PIXSUM_PARAM_PADDED, PIXSUM_PARAM_CUDA_STREAM,
                                   PIXSUM_PARAM_CUDA_DEVICE};
    for (size_t i = 0; i < 6; i++) { /* defaults are all 0 */
        EXPECT_OK(pixsum_ctx_get(ctx, params[i], &v));
        assert_int_equal(v, 0);
    }
    EXPECT_FAIL(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 2), PIXSUM_ERR_INVALID_ARG, "wrap");
    EXPECT_FAIL(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, -1), PIXSUM_ERR_INVALID_ARG, "padded");
    EXPECT_FAIL(pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, -1), PIXSUM_ERR_INVALID_ARG, "threads");
    EXPECT_FAIL(pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, 1 << 20), PIXSUM_ERR_INVALID_ARG,
                "threads");
    EXPECT_FAIL(pixsum_ctx_set(ctx, PIXSUM_PARAM_CUDA_DEVICE, -1), PIXSUM_ERR_INVALID_ARG, "CUDA");
    EXPECT_FAIL(pixsum_ctx_set(ctx, (pixsum_param)999, 0), PIXSUM_ERR_INVALID_ARG, "999");
    EXPECT_FAIL(pixsum_ctx_get(ctx, (pixsum_param)0, &v), PIXSUM_ERR_INVALID_ARG, "parameter");
    EXPECT_FAIL(pixsum_ctx_set(ctx, PIXSUM_PARAM_METHOD, -1), PIXSUM_ERR_UNKNOWN_METHOD, "-1");
    EXPECT_FAIL(pixsum_ctx_set(ctx, PIXSUM_PARAM_METHOD, 100000), PIXSUM_ERR_UNKNOWN_METHOD,
                "100000");
    EXPECT_FAIL(pixsum_ctx_set_method(ctx, "no.such.method"), PIXSUM_ERR_UNKNOWN_METHOD,
                "no.such.method");
    EXPECT_FAIL(pixsum_ctx_set_method(ctx, ""), PIXSUM_ERR_UNKNOWN_METHOD, NULL);
    /* Failed sets change nothing. */
    for (size_t i = 0; i < 6; i++) {
        EXPECT_OK(pixsum_ctx_get(ctx, params[i], &v));
        assert_int_equal(v, 0);
    }
    /* Good values read back. */
    EXPECT_OK(pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, 3));
    EXPECT_OK(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 1));
    EXPECT_OK(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, 1));
    EXPECT_OK(pixsum_ctx_set(ctx, PIXSUM_PARAM_CUDA_DEVICE, 2));
    EXPECT_OK(pixsum_ctx_set_method(ctx, "serial.dual"));
    EXPECT_OK(pixsum_ctx_get(ctx, PIXSUM_PARAM_METHOD, &v));
    assert_int_equal(v, pixsum_method_find("serial.dual"));
    EXPECT_OK(pixsum_ctx_get(ctx, PIXSUM_PARAM_THREADS, &v));
    assert_int_equal(v, 3);
    EXPECT_OK(pixsum_ctx_get(ctx, PIXSUM_PARAM_PADDED, &v));
    assert_int_equal(v, 1);
    EXPECT_OK(pixsum_ctx_set_method(ctx, "auto"));
    EXPECT_OK(pixsum_ctx_get(ctx, PIXSUM_PARAM_METHOD, &v));
    assert_int_equal(v, 0);
    pixsum_ctx_free(ctx);
}

/* Each method refuses (PIXSUM_ERR_UNSUPPORTED, naming itself) the operations it
 * does not register; a method that is not available answers UNAVAILABLE. */
static void test_unsupported_and_unavailable(void **state)
{
    (void)state;
    tu_image in, out, tilt, vin, vout;
    assert_int_equal(tu_image_alloc(&in, PIXSUM_U8, 5, 4, 1, 1, NULL), 0);
    tu_fill_random(tu_global_rng(), &in.view, TU_FILL_MIXED);
    assert_int_equal(tu_image_alloc(&out, PIXSUM_U32, 5, 4, 1, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&tilt, PIXSUM_U32, 6, 5, 1, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&vin, PIXSUM_U8, 3, 2, 2, 1, NULL), 0);
    tu_fill_random(tu_global_rng(), &vin.view, TU_FILL_MIXED);
    assert_int_equal(tu_image_alloc(&vout, PIXSUM_U32, 3, 2, 2, 1, NULL), 0);
    tu_image vsq;
    assert_int_equal(tu_image_alloc(&vsq, PIXSUM_U64, 3, 2, 2, 1, NULL), 0);
    size_t n = 0, refused = 0, unavailable = 0;
    const pixsum_method_info *m = pixsum_methods(&n);
    for (size_t i = 0; i < n; i++) {
        pixsum_ctx *ctx = pixsum_ctx_new();
        EXPECT_OK(pixsum_ctx_set(ctx, PIXSUM_PARAM_METHOD, m[i].id));
        for (int k = 0; k < 4; k++) {
            const unsigned need[4] = {PIXSUM_OP_INTEGRAL, PIXSUM_OP_TILTED, PIXSUM_OP_INTEGRAL_3D,
                                      PIXSUM_OP_INTEGRAL_SQ | PIXSUM_OP_INTEGRAL_3D};
            tu_image *o = k == 0 ? &out : k == 1 ? &tilt : k == 2 ? &vout : &vsq;
            tu_image_snapshot(o);
            int st = k == 0   ? pixsum_integral(ctx, &in.view, &out.view)
                     : k == 1 ? pixsum_integral_tilted(ctx, &in.view, &tilt.view)
                     : k == 2 ? pixsum_integral(ctx, &vin.view, &vout.view)
                              : pixsum_integral_sq(ctx, &vin.view, NULL, &vsq.view);
            int has = (m[i].ops & need[k]) == need[k];
            if (has && m[i].available)
                continue;
            char what[96];
            snprintf(what, sizeof what, "%s, call %d", m[i].name, k);
            if (!has) {
                if (st != PIXSUM_ERR_UNSUPPORTED)
                    fail_msg("%s: status %d, expected UNSUPPORTED", what, st);
                if (!strstr(pixsum_last_error(), m[i].name))
                    fail_msg("%s: detail '%s' does not name the method", what,
                             pixsum_last_error());
                refused++;
            } else {
                if (st != PIXSUM_ERR_UNAVAILABLE)
                    fail_msg("%s: status %d, expected UNAVAILABLE", what, st);
                unavailable++;
            }
            assert_int_equal(tu_image_check_untouched(o, 1, what), 0);
        }
        pixsum_ctx_free(ctx);
    }
    tu_image_free(&vsq);
    /* One with its text: serial.3wh has no tilted table. */
    pixsum_ctx *ctx = pixsum_ctx_new();
    EXPECT_OK(pixsum_ctx_set_method(ctx, "serial.3wh"));
    EXPECT_FAIL(pixsum_integral_tilted(ctx, &in.view, &tilt.view), PIXSUM_ERR_UNSUPPORTED,
                "serial.3wh");
    pixsum_ctx_free(ctx);
    print_message("%zu unsupported and %zu unavailable (method, operation) pairs refused%s\n",
                  refused, unavailable,
                  unavailable ? "" : " (no unavailable method registered in this build)");
    assert_true(refused > 0);
    tu_image_free(&in);
    tu_image_free(&out);
    tu_image_free(&tilt);
    tu_image_free(&vin);
    tu_image_free(&vout);
}

static void test_overflow_refusal_text(void **state)
{
    (void)state;
    /* 65792 u16 pixels of up to 65535 can exceed 2^32 - 1: refused, output intact. */
    tu_image in, out;
    assert_int_equal(tu_image_alloc(&in, PIXSUM_U16, 257, 256, 1, 1, NULL), 0);
    tu_fill_random(tu_global_rng(), &in.view, TU_FILL_SMALL);
    assert_int_equal(tu_image_alloc(&out, PIXSUM_U32, 257, 256, 1, 1, NULL), 0);
    tu_image_snapshot(&out);
    EXPECT_FAIL(pixsum_integral(NULL, &in.view, &out.view), PIXSUM_ERR_OVERFLOW, "u32");
    const char *d = pixsum_last_error();
    assert_non_null(strstr(d, "overflow"));
    assert_non_null(strstr(d, "wrap")); /* says what to do */
    assert_int_equal(tu_image_check_untouched(&out, 1, "overflow"), 0);
    tu_image_free(&in);
    tu_image_free(&out);
}

/* Bytes of address space this process maps now (/proc/self/statm), or 0. */
static size_t mapped_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%lu", &pages) != 1)
        pages = 0;
    fclose(f);
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* The allocation of the tilted integral's scratch rows fails for an absurdly
 * wide image; the memory of the views is only reserved (PROT_NONE), never
 * touched, because the call must fail before reading it. Whether a 10 TiB
 * allocation fails by itself depends on the machine's overcommit policy, so
 * the address space is capped (RLIMIT_AS) for the duration of the call. */
static void test_no_memory(void **state)
{
    (void)state;
    size_t width = (size_t)1 << 38; /* scratch: 5 * 2^38 * 8 bytes = 10 TiB */
    size_t in_bytes = width, out_bytes = (width + 1) * 2 * 8;
    void *in_mem = mmap(NULL, in_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                        -1, 0);
    void *out_mem = mmap(NULL, out_bytes, PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (in_mem == MAP_FAILED || out_mem == MAP_FAILED) {
        print_message("cannot reserve the address space for the test; skipped\n");
        if (in_mem != MAP_FAILED)
            munmap(in_mem, in_bytes);
        if (out_mem != MAP_FAILED)
            munmap(out_mem, out_bytes);
        skip();
    }
    pixsum_view in = pixsum_view_2d(in_mem, PIXSUM_U8, width, 1, 1, 0);
    pixsum_view out = pixsum_view_2d(out_mem, PIXSUM_U64, width + 1, 2, 1, 0);
    pixsum_ctx *ctx = pixsum_ctx_new();
    EXPECT_OK(pixsum_ctx_set_method(ctx, "serial.2wh"));
    struct rlimit old = {0, 0}, cap;
    size_t now = mapped_bytes();
    if (now == 0 || getrlimit(RLIMIT_AS, &old) != 0) {
        print_message("cannot read or cap the address space; skipped\n");
        pixsum_ctx_free(ctx);
        munmap(in_mem, in_bytes);
        munmap(out_mem, out_bytes);
        skip();
    }
    cap = old;
    cap.rlim_cur = (rlim_t)(now + ((size_t)1 << 30));
    if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < cap.rlim_cur)
        cap.rlim_cur = old.rlim_cur;
    assert_int_equal(setrlimit(RLIMIT_AS, &cap), 0);
    int st = pixsum_integral_tilted(ctx, &in, &out);
    assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);
    EXPECT_FAIL(st, PIXSUM_ERR_NO_MEMORY, "memory");
    pixsum_ctx_free(ctx);
    munmap(in_mem, in_bytes);
    munmap(out_mem, out_bytes);
}

/* The detail text: thread-local, replaced by each failure, and emptied by the
 * next successful call of every status-returning entry point. */
static void test_detail_text_lifecycle(void **state)
{
    (void)state;
    uint8_t px[6] = {1, 2, 3, 4, 5, 6};
    uint32_t t[6];
    pixsum_view in = pixsum_view_2d(px, PIXSUM_U8, 3, 2, 1, 0);
    pixsum_view out = pixsum_view_2d(t, PIXSUM_U32, 3, 2, 1, 0);
    pixsum_view roi;
    pixsum_box box = {0, 0, 0, 1, 1, 1};
    pixsum_ctx *ctx = pixsum_ctx_new();
    intptr_t v;
#define FAIL_THEN(call)                                                           \
    do {                                                                          \
        assert_int_equal(pixsum_ctx_set_method(ctx, "nope"), PIXSUM_ERR_UNKNOWN_METHOD); \
        assert_true(pixsum_last_error()[0] != '\0');                              \
        EXPECT_OK(call);                                                          \
    } while (0)
    FAIL_THEN(pixsum_integral(ctx, &in, &out));
    FAIL_THEN(pixsum_integral_sq(ctx, &in, NULL, &out));
    FAIL_THEN(pixsum_box_sum(ctx, &out, &box, t));
    FAIL_THEN(pixsum_box_stats(ctx, &out, &out, &box, 1, NULL, NULL));
    FAIL_THEN(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 0));
    FAIL_THEN(pixsum_ctx_get(ctx, PIXSUM_PARAM_WRAP, &v));
    FAIL_THEN(pixsum_ctx_set_method(ctx, "serial.2wh"));
    FAIL_THEN(pixsum_view_check(&in));
    FAIL_THEN(pixsum_view_roi(&in, 1, 0, 2, 2, &roi));
    FAIL_THEN(pixsum_view_roi3d(&in, 1, 0, 0, 2, 2, 1, &roi));
    FAIL_THEN(pixsum_integral_check(PIXSUM_U8, PIXSUM_U32, 100, 0));
#undef FAIL_THEN
    /* A second failure replaces the first text. */
    pixsum_ctx_set_method(ctx, "first-name");
    pixsum_ctx_set_method(ctx, "second-name");
    assert_null(strstr(pixsum_last_error(), "first-name"));
    assert_non_null(strstr(pixsum_last_error(), "second-name"));
    pixsum_ctx_free(ctx);
}


/* ---- random views: never a crash; refused exactly when invalid ----------- */

/* The documented validity rules of pixsum_view_check(), restated. */
static int view_valid(const pixsum_view *v)
{
    size_t es = pixsum_type_size(v->type);
    if (!v->data || es == 0 || !v->width || !v->height || !v->depth)
        return 0;
    if (v->channels < 1 || v->channels > 4)
        return 0;
    if ((uintptr_t)v->data % es)
        return 0;
    size_t row = v->width * v->channels * es;
    size_t rs = (size_t)(v->row_stride < 0 ? -v->row_stride : v->row_stride);
    if ((v->height > 1 && rs < row) || rs % es)
        return 0;
    /* sizes whose bytes overflow (PIXSUM_ERR_TOO_LARGE) */
    if (pixsum_packed_bytes(v->type, v->width, v->height, v->depth, v->channels) == 0 ||
        (tu_u128)v->width * v->channels * es > PTRDIFF_MAX ||
        (v->height > 1 && (tu_u128)rs * v->height > PTRDIFF_MAX))
        return 0;
    if (v->depth > 1) {
        size_t ss = (size_t)(v->slice_stride < 0 ? -v->slice_stride : v->slice_stride);
        if (ss < (v->height - 1) * rs + row || ss % es || (tu_u128)ss * v->depth > PTRDIFF_MAX)
            return 0;
    }
    return 1;
}

/* Byte range [lo, hi) a view spans, computed by the test (valid views only). */
static void view_span(const pixsum_view *v, tu_i128 *lo, tu_i128 *hi)
{
    tu_i128 base = (tu_i128)(intptr_t)v->data, first = base, last = base;
    /* view_valid() bounded both products by PTRDIFF_MAX */
    tu_i128 ys = (ptrdiff_t)(v->height - 1) * v->row_stride;
    tu_i128 zs = v->depth > 1 ? (ptrdiff_t)(v->depth - 1) * v->slice_stride : 0;
    first += ys < 0 ? ys : 0;
    last += ys > 0 ? ys : 0;
    first += zs < 0 ? zs : 0;
    last += zs > 0 ? zs : 0;
    *lo = first;
    *hi = last + (tu_i128)(v->width * v->channels * pixsum_type_size(v->type));
}

/* Mutates one field of a valid view into something random, often invalid. */
static void mutate(tu_rng *r, pixsum_view *v, unsigned char *buf, size_t bytes)
{
    size_t es = pixsum_type_size(v->type);
    switch (tu_below(r, 9)) {
    case 0: v->type = (pixsum_type)tu_below(r, PIXSUM_TYPE_COUNT + 2); break;
    case 1: v->width = tu_below(r, 3) ? tu_below(r, 40) : (size_t)tu_next(r); break;
    case 2: v->height = tu_below(r, 3) ? tu_below(r, 40) : (size_t)tu_next(r); break;
    case 3: v->depth = tu_below(r, 6); break;
    case 4: v->channels = tu_below(r, 7); break;
    case 5: v->row_stride += (ptrdiff_t)tu_below(r, 2 * es + 3) - (ptrdiff_t)es - 1; break;
    case 6: v->row_stride = -v->row_stride; break;
    case 7: v->slice_stride += (ptrdiff_t)tu_below(r, 2 * es + 3) - (ptrdiff_t)es - 1; break;
    default:
        v->data = tu_below(r, 8) ? buf + tu_below(r, bytes) : NULL;
        break;
    }
}

static void test_random_views(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    enum { IN_BYTES = 1 << 16, OUT_BYTES = 1 << 19 };
    unsigned char *in_buf = malloc(IN_BYTES), *out_buf = malloc(OUT_BYTES);
    unsigned char *out_copy = malloc(OUT_BYTES);
    assert_non_null(in_buf);
    assert_non_null(out_buf);
    assert_non_null(out_copy);
    for (size_t i = 0; i < IN_BYTES; i++)
        in_buf[i] = (unsigned char)tu_next(r);
    size_t accepted = 0, refused = 0, skipped = 0;
    for (int iter = 0; iter < 3000; iter++) {
        /* a valid u16 input and u64 output, one of them then mutated */
        size_t w = tu_between(r, 1, 12), h = tu_between(r, 1, 12), d = tu_between(r, 1, 3);
        size_t ch = tu_between(r, 1, 4);
        pixsum_view in = pixsum_view_3d(in_buf + 2 * tu_below(r, 64), PIXSUM_U16, w, h, d, ch,
                                        (ptrdiff_t)(2 * (w * ch + tu_below(r, 3))), 0);
        if (tu_below(r, 2)) { /* bottom-up */
            in.data = (char *)in.data + (h - 1) * (size_t)in.row_stride;
            in.row_stride = -in.row_stride;
            in.slice_stride = (ptrdiff_t)h * -in.row_stride;
        }
        pixsum_view out = pixsum_view_3d(out_buf + 8 * tu_below(r, 64), PIXSUM_U64, w, h, d, ch,
                                         0, 0);
        int which = (int)tu_below(r, 3); /* 0: mutate input, 1: output, 2: both */
        if (which != 1)
            mutate(r, &in, in_buf, IN_BYTES);
        if (which != 0)
            mutate(r, &out, out_buf, OUT_BYTES);
        int in_ok = view_valid(&in), out_ok = view_valid(&out);
        tu_i128 lo, hi;
        if (in_ok) {
            view_span(&in, &lo, &hi);
            if (lo < (intptr_t)in_buf || hi > (intptr_t)(in_buf + IN_BYTES)) {
                skipped++; /* valid, but beyond our buffer: the caller's error */
                continue;
            }
        }
        if (out_ok) {
            view_span(&out, &lo, &hi);
            if (lo < (intptr_t)out_buf || hi > (intptr_t)(out_buf + OUT_BYTES)) {
                skipped++;
                continue;
            }
        }
        memset(out_buf, 0xC3, OUT_BYTES);
        memcpy(out_copy, out_buf, OUT_BYTES);
        pixsum_ctx *ctx = pixsum_ctx_new();
        assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 1), PIXSUM_OK);
        int st = pixsum_integral(ctx, &in, &out);
        pixsum_ctx_free(ctx);
        assert_true(st >= 0 && st < PIXSUM_STATUS_COUNT);
        int compatible = in_ok && out_ok && in.type != PIXSUM_U64 && in.type != PIXSUM_I64 &&
                         in.width == out.width && in.height == out.height &&
                         in.depth == out.depth && in.channels == out.channels;
        if (compatible) {
            pixsum_type pin[32], pout[32];
            size_t np = tu_supported_pairs(0, pin, pout, 32);
            int pair_ok = 0;
            for (size_t k = 0; k < np; k++)
                pair_ok |= pin[k] == in.type && pout[k] == out.type;
            compatible = pair_ok;
        }
        if (compatible) {
            if (st != PIXSUM_OK)
                fail_msg("iteration %d: a valid request was refused: %s", iter,
                         pixsum_last_error());
            tu_ref ref;
            assert_int_equal(tu_ref_integral_fast(&ref, &in, 0), 0);
            char what[64];
            snprintf(what, sizeof what, "random view %d", iter);
            if (tu_check_table(&out, 0, &ref, 1, what) != 0)
                fail_msg("iteration %d: wrong table for a mutated view", iter);
            tu_ref_free(&ref);
            accepted++;
        } else {
            if (st == PIXSUM_OK)
                fail_msg("iteration %d: an invalid request was accepted (in %s %zux%zux%zu ch%zu "
                         "rs %td ss %td; out %s %zux%zux%zu ch%zu rs %td ss %td)",
                         iter, pixsum_type_name(in.type), in.width, in.height, in.depth,
                         in.channels, in.row_stride, in.slice_stride,
                         pixsum_type_name(out.type), out.width, out.height, out.depth,
                         out.channels, out.row_stride, out.slice_stride);
            if (pixsum_last_error()[0] == '\0')
                fail_msg("iteration %d: status %d without a detail text", iter, st);
            if (memcmp(out_buf, out_copy, OUT_BYTES) != 0)
                fail_msg("iteration %d: a refused call wrote to the output buffer", iter);
            refused++;
        }
    }
    print_message("random views: %zu accepted and checked, %zu refused, %zu not callable\n",
                  accepted, refused, skipped);
    assert_true(accepted > 100 && refused > 1000);
    free(in_buf);
    free(out_buf);
    free(out_copy);
}

int main(void)
{
    tu_init("test_errors");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strerror_every_code),
        cmocka_unit_test(test_null_pointers),
        cmocka_unit_test(test_bad_shapes),
        cmocka_unit_test(test_bad_channels_and_sizes),
        cmocka_unit_test(test_bad_strides),
        cmocka_unit_test(test_bad_types),
        cmocka_unit_test(test_aliasing),
        cmocka_unit_test(test_context_parameters),
        cmocka_unit_test(test_unsupported_and_unavailable),
        cmocka_unit_test(test_overflow_refusal_text),
        cmocka_unit_test(test_no_memory),
        cmocka_unit_test(test_detail_text_lifecycle),
        cmocka_unit_test(test_random_views),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

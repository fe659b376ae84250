/*
 * test_integral_carry.c - pixsum_integral_carry(): an image cut into random
 * bands, each band's table computed with the row above it as its carry, must
 * give the table of one whole-image call, for every method with
 * PIXSUM_OP_CARRY (and "auto"): bit for bit on integer tables (wrap mode, any
 * content), and on float tables too on one thread. Bands are written both
 * into one big table (the carry is then the table's own row above the band)
 * and into separate band buffers (the carry a copied row). Random type pairs,
 * widths (1xN, Nx1, odd), 1-4 channels, input layouts (padding, ROI,
 * bottom-up), plain, squared and both tables; PIXSUM_STREAM_BYTES is set low
 * so that the larger tables take the non-temporal path. Then the refusals:
 * missing or misshaped carries, padded contexts, 3-D inputs, methods without
 * PIXSUM_OP_CARRY, carries overlapping a table, and overflow counted from the
 * carry's own values, each leaving the table untouched.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pixsum.h"
#include "testutil.h"

/* Tables of one case: plain (out != NONE) and squared (out_sq != NONE). */
typedef struct ccase {
    pixsum_type in, out, out_sq;
    size_t w, h, ch;
    int method, threads;
    int same_buffer; /* bands written into one table, carry = its row above */
} ccase;

static pixsum_ctx *make_ctx(int method, int threads)
{
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_non_null(ctx);
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_METHOD, method), PIXSUM_OK);
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, threads), PIXSUM_OK);
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 1), PIXSUM_OK);
    return ctx;
}

static pixsum_view packed(void *data, pixsum_type t, size_t w, size_t h, size_t ch)
{
    return pixsum_view_2d(data, t, w, h, ch, 0);
}

/* One call over the whole image: the tables the bands must reproduce. */
static int whole_tables(const ccase *c, const pixsum_view *in, void *plain, void *sq)
{
    pixsum_ctx *ctx = make_ctx(c->method, c->threads);
    pixsum_view pv = packed(plain, c->out, c->w, c->h, c->ch);
    pixsum_view sv = packed(sq, c->out_sq, c->w, c->h, c->ch);
    int st = c->out_sq ? pixsum_integral_sq(ctx, in, c->out ? &pv : NULL, &sv)
                       : pixsum_integral(ctx, in, &pv);
    pixsum_ctx_free(ctx);
    return st;
}

/* The same tables band by band; returns the first failing status. */
static int banded_tables(const ccase *c, const pixsum_view *in, tu_rng *r, void *plain, void *sq)
{
    pixsum_ctx *ctx = make_ctx(c->method, c->threads);
    size_t ps = pixsum_type_size(c->out), ss = c->out_sq ? pixsum_type_size(c->out_sq) : 0;
    size_t n = c->w * c->ch;
    /* separate buffers: the band's tables, and the carries copied out of them */
    unsigned char *band_p = c->out ? malloc(n * c->h * ps) : NULL;
    unsigned char *band_s = c->out_sq ? malloc(n * c->h * ss) : NULL;
    unsigned char *carry_p = c->out ? malloc(n * ps) : NULL;
    unsigned char *carry_s = c->out_sq ? malloc(n * ss) : NULL;
    int st = PIXSUM_OK;
    for (size_t y0 = 0; y0 < c->h && st == PIXSUM_OK;) {
        size_t rows = tu_between(r, 1, c->h - y0 < 9 ? c->h - y0 : 9);
        if (tu_below(r, 4) == 0)
            rows = c->h - y0;
        pixsum_view band;
        assert_int_equal(pixsum_view_roi(in, 0, y0, c->w, rows, &band), PIXSUM_OK);
        pixsum_view pv, sv, pc, sc;
        if (c->same_buffer) {
            size_t above = y0 ? y0 - 1 : 0; /* y0 = 0: replaced below */
            pv = packed((unsigned char *)plain + y0 * n * ps, c->out, c->w, rows, c->ch);
            sv = packed((unsigned char *)sq + y0 * n * ss, c->out_sq, c->w, rows, c->ch);
            pc = packed((unsigned char *)plain + above * n * ps, c->out, c->w, 1, c->ch);
            sc = packed((unsigned char *)sq + above * n * ss, c->out_sq, c->w, 1, c->ch);
        } else {
            pv = packed(band_p, c->out, c->w, rows, c->ch);
            sv = packed(band_s, c->out_sq, c->w, rows, c->ch);
            pc = packed(carry_p, c->out, c->w, 1, c->ch);
            sc = packed(carry_s, c->out_sq, c->w, 1, c->ch);
        }
        if (y0 == 0 && tu_below(r, 2)) { /* the first band without carries */
            st = c->out_sq ? pixsum_integral_sq(ctx, &band, c->out ? &pv : NULL, &sv)
                           : pixsum_integral(ctx, &band, &pv);
        } else {
            if (y0 == 0) { /* or with zero carries */
                if (c->same_buffer) { /* no row above the table: separate zeros */
                    pc = packed(carry_p, c->out, c->w, 1, c->ch);
                    sc = packed(carry_s, c->out_sq, c->w, 1, c->ch);
                }
                if (carry_p)
                    memset(carry_p, 0, n * ps);
                if (carry_s)
                    memset(carry_s, 0, n * ss);
            }
            st = pixsum_integral_carry(ctx, &band, c->out ? &pv : NULL, c->out ? &pc : NULL,
                                       c->out_sq ? &sv : NULL, c->out_sq ? &sc : NULL);
        }
        if (!c->same_buffer && st == PIXSUM_OK) { /* keep the band, carry its last row */
            if (c->out) {
                memcpy((unsigned char *)plain + y0 * n * ps, band_p, rows * n * ps);
                memcpy(carry_p, band_p + (rows - 1) * n * ps, n * ps);
            }
            if (c->out_sq) {
                memcpy((unsigned char *)sq + y0 * n * ss, band_s, rows * n * ss);
                memcpy(carry_s, band_s + (rows - 1) * n * ss, n * ss);
            }
        }
        y0 += rows;
    }
    free(band_p);
    free(band_s);
    free(carry_p);
    free(carry_s);
    pixsum_ctx_free(ctx);
    return st;
}

static void run_case(const ccase *c, tu_rng *r)
{
    tu_layout lay = tu_random_layout(r);
    lay.slice_pad = 0;
    tu_image in;
    assert_int_equal(tu_image_alloc(&in, c->in, c->w, c->h, 1, c->ch, &lay), 0);
    tu_fill_random(r, &in.view, tu_below(r, 4) ? TU_FILL_MIXED : TU_FILL_MAX);
    size_t ps = pixsum_type_size(c->out), ss = c->out_sq ? pixsum_type_size(c->out_sq) : 0;
    size_t cells = c->w * c->h * c->ch;
    unsigned char *want_p = calloc(cells, ps ? ps : 1), *want_s = calloc(cells, ss ? ss : 1);
    unsigned char *got_p = calloc(cells, ps ? ps : 1), *got_s = calloc(cells, ss ? ss : 1);
    assert_true(want_p && want_s && got_p && got_s);
    char what[200];
    snprintf(what, sizeof what, "%s -> %s%s%s %zux%zu ch%zu method %s threads %d %s seed %llu",
             pixsum_type_name(c->in), c->out ? pixsum_type_name(c->out) : "-",
             c->out_sq ? " sq " : "", c->out_sq ? pixsum_type_name(c->out_sq) : "", c->w, c->h,
             c->ch, tu_method_name(c->method), c->threads,
             c->same_buffer ? "one buffer" : "band buffers", (unsigned long long)tu_seed());
    int st = whole_tables(c, &in.view, want_p, want_s);
    if (st == PIXSUM_ERR_UNSUPPORTED && !tu_method_must_support(c->method))
        goto done; /* outside the method's supports(), as without carries */
    if (st != PIXSUM_OK)
        fail_msg("%s: whole image: %s", what, pixsum_last_error());
    if ((st = banded_tables(c, &in.view, r, got_p, got_s)) != PIXSUM_OK)
        fail_msg("%s: bands: %s", what, pixsum_last_error());
    if (c->out && memcmp(want_p, got_p, cells * ps) != 0)
        fail_msg("%s: the banded table differs from the whole one", what);
    if (c->out_sq && memcmp(want_s, got_s, cells * ss) != 0)
        fail_msg("%s: the banded squared table differs from the whole one", what);
done:
    free(want_p);
    free(want_s);
    free(got_p);
    free(got_s);
    tu_image_free(&in);
}

static int is_int(pixsum_type t)
{
    return t == PIXSUM_U32 || t == PIXSUM_U64 || t == PIXSUM_I64;
}

static void test_bands_equal_whole(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    int ids[64];
    size_t nm = tu_methods_for(PIXSUM_OP_CARRY, ids, 64);
    assert_true(nm >= 4); /* auto, serial.2wh, serial.3wh, simd.2wh (+ omp.banded) */
    pixsum_type pin[64], pout[64], sin_[64], sout[64];
    size_t np = tu_supported_pairs(0, pin, pout, 64), ns = tu_supported_pairs(1, sin_, sout, 64);
    for (int i = 0; i < 400; i++) {
        ccase c;
        memset(&c, 0, sizeof c);
        int kind = (int)tu_below(r, 3); /* plain, squared only, both */
        if (kind == 0) {
            size_t k = tu_below(r, np);
            c.in = pin[k], c.out = pout[k];
        } else {
            size_t k = tu_below(r, ns);
            c.in = sin_[k], c.out_sq = sout[k];
            if (kind == 2) { /* a plain table of the same input */
                for (size_t j = 0; j < np && !c.out; j++)
                    if (pin[(j + k) % np] == c.in)
                        c.out = pout[(j + k) % np];
            }
        }
        switch (tu_below(r, 5)) {
        case 0: c.w = 1, c.h = tu_dim(r, 60); break;
        case 1: c.w = tu_dim(r, 300), c.h = 1 + tu_below(r, 2); break;
        default: c.w = tu_dim(r, 90), c.h = tu_dim(r, 50); break;
        }
        if (tu_below(r, 8) == 0) /* tables past PIXSUM_STREAM_BYTES, streamed */
            c.w = 500 + tu_below(r, 300), c.h = 20 + tu_below(r, 20);
        c.ch = 1 + tu_below(r, 4);
        c.method = ids[tu_below(r, nm)];
        /* floats are bit-exact on one thread; integers on any number */
        int floats = (c.out && !is_int(c.out)) || (c.out_sq && !is_int(c.out_sq));
        c.threads = floats ? 1 : 1 + (int)tu_below(r, 3);
        c.same_buffer = (int)tu_below(r, 2);
        run_case(&c, r);
    }
}

/* Expects `st` to be `want` and the table's block unchanged. */
static void expect_refusal(int st, int want, tu_image *table, const char *what)
{
    if (st != want)
        fail_msg("%s: status %d (%s), expected %d", what, st, pixsum_last_error(), want);
    assert_true(pixsum_last_error()[0] != '\0');
    assert_int_equal(tu_image_check_untouched(table, 1, what), 0);
}

static void test_refusals(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    const size_t w = 13, h = 7;
    tu_image in, out, carry, big;
    assert_int_equal(tu_image_alloc(&in, PIXSUM_U8, w, h, 1, 1, NULL), 0);
    tu_fill_random(r, &in.view, TU_FILL_MAX);
    assert_int_equal(tu_image_alloc(&out, PIXSUM_U32, w, h, 1, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&carry, PIXSUM_U32, w, 1, 1, 1, NULL), 0);
    for (size_t x = 0; x < w; x++)
        tu_set_i(&carry.view, x, 0, 0, 0, 1000);
    tu_image_snapshot(&out);
    pixsum_ctx *ctx = pixsum_ctx_new();

    expect_refusal(pixsum_integral_carry(ctx, &in.view, &out.view, NULL, NULL, NULL),
                   PIXSUM_ERR_NULL, &out, "table without carry");
    expect_refusal(pixsum_integral_carry(ctx, &in.view, NULL, NULL, NULL, NULL),
                   PIXSUM_ERR_NULL, &out, "no table");
    expect_refusal(pixsum_integral_carry(ctx, &in.view, NULL, &carry.view, NULL, NULL),
                   PIXSUM_ERR_NULL, &out, "carry without table");
    expect_refusal(pixsum_integral_carry(ctx, NULL, &out.view, &carry.view, NULL, NULL),
                   PIXSUM_ERR_NULL, &out, "no input");

    pixsum_view v = pixsum_view_2d(carry.view.data, PIXSUM_U64, w, 1, 1, 0);
    expect_refusal(pixsum_integral_carry(ctx, &in.view, &out.view, &v, NULL, NULL),
                   PIXSUM_ERR_BAD_TYPE, &out, "carry of another type");
    v = carry.view;
    v.width = w - 1;
    expect_refusal(pixsum_integral_carry(ctx, &in.view, &out.view, &v, NULL, NULL),
                   PIXSUM_ERR_BAD_SHAPE, &out, "narrow carry");
    v = pixsum_view_2d(out.view.data, PIXSUM_U32, w, 2, 1, 0);
    expect_refusal(pixsum_integral_carry(ctx, &in.view, &out.view, &v, NULL, NULL),
                   PIXSUM_ERR_BAD_SHAPE, &out, "carry of two rows");
    v = pixsum_view_2d(carry.view.data, PIXSUM_U32, w, 1, 2, 0);
    expect_refusal(pixsum_integral_carry(ctx, &in.view, &out.view, &v, NULL, NULL),
                   PIXSUM_ERR_BAD_SHAPE, &out, "carry with other channels");
    v = pixsum_view_2d(tu_elem(&out.view, 0, 3, 0, 0), PIXSUM_U32, w, 1, 1, 0);
    expect_refusal(pixsum_integral_carry(ctx, &in.view, &out.view, &v, NULL, NULL),
                   PIXSUM_ERR_ALIASING, &out, "carry inside the table");

    /* overflow from the carry's values: 255 x 13 x 7 = 23205 more than it */
    tu_set_i(&carry.view, w - 1, 0, 0, 0, (int64_t)(UINT32_MAX - 23204));
    expect_refusal(pixsum_integral_carry(ctx, &in.view, &out.view, &carry.view, NULL, NULL),
                   PIXSUM_ERR_OVERFLOW, &out, "carry near the maximum");
    assert_non_null(strstr(pixsum_last_error(), "carry row"));
    tu_set_i(&carry.view, w - 1, 0, 0, 0, (int64_t)(UINT32_MAX - 23205));
    assert_int_equal(
        pixsum_integral_carry(ctx, &in.view, &out.view, &carry.view, NULL, NULL), PIXSUM_OK);
    assert_int_equal(tu_get_i(&out.view, w - 1, h - 1, 0, 0), (int64_t)UINT32_MAX);
    tu_set_i(&carry.view, w - 1, 0, 0, 0, (int64_t)(UINT32_MAX - 23204));
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 1), PIXSUM_OK);
    assert_int_equal(
        pixsum_integral_carry(ctx, &in.view, &out.view, &carry.view, NULL, NULL), PIXSUM_OK);
    assert_int_equal(tu_get_i(&out.view, w - 1, h - 1, 0, 0), 0); /* wrapped once */
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 0), PIXSUM_OK);
    tu_set_i(&carry.view, w - 1, 0, 0, 0, 1000);
    tu_image_snapshot(&out);

    /* i64 tables: a negative carry counts by its magnitude */
    tu_image in32, out64, carry64;
    assert_int_equal(tu_image_alloc(&in32, PIXSUM_I32, 2, 1, 1, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&out64, PIXSUM_I64, 2, 1, 1, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&carry64, PIXSUM_I64, 2, 1, 1, 1, NULL), 0);
    tu_set_i(&in32.view, 0, 0, 0, 0, INT32_MIN);
    tu_set_i(&in32.view, 1, 0, 0, 0, INT32_MIN);
    tu_set_i(&carry64.view, 0, 0, 0, 0, INT64_MIN + 1);
    tu_set_i(&carry64.view, 1, 0, 0, 0, 0);
    tu_image_snapshot(&out64);
    expect_refusal(pixsum_integral_carry(ctx, &in32.view, &out64.view, &carry64.view, NULL,
                                         NULL),
                   PIXSUM_ERR_OVERFLOW, &out64, "negative i64 carry");
    tu_set_i(&carry64.view, 0, 0, 0, 0, -5);
    assert_int_equal(pixsum_integral_carry(ctx, &in32.view, &out64.view, &carry64.view, NULL,
                                           NULL),
                     PIXSUM_OK);
    assert_int_equal(tu_get_i(&out64.view, 0, 0, 0, 0), -5 + (int64_t)INT32_MIN);
    assert_int_equal(tu_get_i(&out64.view, 1, 0, 0, 0), 2 * (int64_t)INT32_MIN);
    tu_image_free(&in32);
    tu_image_free(&out64);
    tu_image_free(&carry64);

    /* padded contexts, 3-D inputs, methods without PIXSUM_OP_CARRY */
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, 1), PIXSUM_OK);
    expect_refusal(pixsum_integral_carry(ctx, &in.view, &out.view, &carry.view, NULL, NULL),
                   PIXSUM_ERR_UNSUPPORTED, &out, "padded");
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, 0), PIXSUM_OK);
    assert_int_equal(tu_image_alloc(&big, PIXSUM_U8, w, h, 2, 1, NULL), 0);
    expect_refusal(pixsum_integral_carry(ctx, &big.view, &out.view, &carry.view, NULL, NULL),
                   PIXSUM_ERR_BAD_SHAPE, &out, "3-D");
    tu_image_free(&big);
    size_t nm;
    const pixsum_method_info *m = pixsum_methods(&nm);
    int refusing = 0;
    for (size_t i = 0; i < nm; i++) {
        if (!(m[i].ops & PIXSUM_OP_INTEGRAL) || (m[i].ops & PIXSUM_OP_CARRY))
            continue;
        assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_METHOD, m[i].id), PIXSUM_OK);
        int st = pixsum_integral_carry(ctx, &in.view, &out.view, &carry.view, NULL, NULL);
        if (st != PIXSUM_ERR_UNAVAILABLE) {
            expect_refusal(st, PIXSUM_ERR_UNSUPPORTED, &out, m[i].name);
            refusing++;
        }
    }
    assert_true(refusing >= 1); /* serial.dual at least */
    const char *with[] = {"serial.2wh", "serial.3wh", "simd.2wh"};
    for (size_t i = 0; i < 3; i++)
        assert_true(pixsum_method_supports(pixsum_method_find(with[i]), PIXSUM_OP_CARRY,
                                           PIXSUM_U8, PIXSUM_U32));

    pixsum_ctx_free(ctx);
    tu_image_free(&in);
    tu_image_free(&out);
    tu_image_free(&carry);
}

int main(void)
{
    /* tables above 64 KB take the non-temporal path (read once, at the first call) */
    if (!getenv("PIXSUM_STREAM_BYTES"))
        setenv("PIXSUM_STREAM_BYTES", "65536", 1);
    tu_init("test_integral_carry");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bands_equal_whole),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

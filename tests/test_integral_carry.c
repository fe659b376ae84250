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
 * pixsum_integral_carry_tile(): an image cut into a random grid of tiles,
 * each tile's table computed with carries taken from the definition's table
 * (the sums above and left of it) into its place in one table, must equal the
 * definition's table (random pairs, shapes, channels, methods, NULL zero
 * carries, tiles of several row blocks); and its refusals.
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

/* ---- pixsum_integral_carry_tile(): tiles of a grid ---------------------- */

/* Stores an exact sum (reduced modulo the integer type's width, as wrap mode
 * does) or a long double into sample c of pixel (x, y) of a table view. */
static void store_sum(const pixsum_view *v, size_t x, size_t y, size_t c, tu_i128 iv,
                      long double fv, int exact)
{
    void *p = tu_elem(v, x, y, 0, c);
    switch (v->type) {
    case PIXSUM_U32: *(uint32_t *)p = (uint32_t)(tu_u128)iv; break;
    case PIXSUM_U64: *(uint64_t *)p = (uint64_t)(tu_u128)iv; break;
    case PIXSUM_I64: *(uint64_t *)p = (uint64_t)(tu_u128)iv; break;
    case PIXSUM_F32: *(float *)p = (float)(exact ? (long double)iv : fv); break;
    default: *(double *)p = (double)(exact ? (long double)iv : fv); break;
    }
}

/* Entry (x, y, c) of a 2-D reference table, 0 outside it (x or y = -1). */
static void ref_at(const tu_ref *ref, ptrdiff_t x, ptrdiff_t y, size_t c, tu_i128 *iv,
                   long double *fv)
{
    *iv = 0, *fv = 0;
    if (x < 0 || y < 0)
        return;
    size_t i = ((size_t)y * ref->width + (size_t)x) * ref->channels + c;
    *iv = ref->iv[i];
    *fv = ref->fv[i];
}

/* The carries of the tile at (x0, y0) of size tw x th from the reference
 * table of the whole image: row(x) = T(x0 + x, y0 - 1), the sums above the
 * tile; col(y) = T(x0 - 1, y0 + y) - T(x0 - 1, y0 + y - 1), the sum of row
 * y0 + y left of the tile. */
static void tile_carries(const tu_ref *ref, size_t x0, size_t y0, size_t tw, size_t th,
                         const pixsum_view *row, const pixsum_view *col)
{
    for (size_t c = 0; c < ref->channels; c++) {
        tu_i128 iv, iv2;
        long double fv, fv2;
        for (size_t x = 0; x < tw; x++) {
            ref_at(ref, (ptrdiff_t)(x0 + x), (ptrdiff_t)y0 - 1, c, &iv, &fv);
            store_sum(row, x, 0, c, iv, fv, ref->exact);
        }
        for (size_t y = 0; y < th; y++) {
            ref_at(ref, (ptrdiff_t)x0 - 1, (ptrdiff_t)(y0 + y), c, &iv, &fv);
            ref_at(ref, (ptrdiff_t)x0 - 1, (ptrdiff_t)(y0 + y) - 1, c, &iv2, &fv2);
            store_sum(col, 0, y, c, iv - iv2, fv - fv2, ref->exact);
        }
    }
}

/* Random cuts of n into pieces (1 to 4 of them, sometimes one piece). */
static size_t random_cuts(tu_rng *r, size_t n, size_t *cuts)
{
    size_t k = 1;
    cuts[0] = 0;
    size_t pieces = 1 + tu_below(r, 4);
    for (size_t i = 1; i < pieces; i++) {
        size_t at = tu_between(r, 1, n > 1 ? n - 1 : 1);
        if (n > 1 && at > cuts[k - 1])
            cuts[k++] = at;
    }
    /* sorted insertion above keeps only increasing cuts */
    cuts[k] = n;
    return k;
}

static void run_tile_case(const ccase *c, tu_rng *r, int big)
{
    tu_layout lay = tu_random_layout(r);
    lay.slice_pad = 0;
    tu_image in;
    assert_int_equal(tu_image_alloc(&in, c->in, c->w, c->h, 1, c->ch, &lay), 0);
    tu_fill_random(r, &in.view, tu_below(r, 4) ? TU_FILL_MIXED : TU_FILL_MAX);
    tu_ref ref_p, ref_s;
    memset(&ref_p, 0, sizeof ref_p);
    memset(&ref_s, 0, sizeof ref_s);
    if (c->out)
        assert_int_equal((big ? tu_ref_integral_fast : tu_ref_integral)(&ref_p, &in.view, 0),
                         0);
    if (c->out_sq)
        assert_int_equal((big ? tu_ref_integral_fast : tu_ref_integral)(&ref_s, &in.view, 1),
                         0);
    tu_image tp, ts;
    if (c->out)
        assert_int_equal(tu_image_alloc(&tp, c->out, c->w, c->h, 1, c->ch, NULL), 0);
    if (c->out_sq)
        assert_int_equal(tu_image_alloc(&ts, c->out_sq, c->w, c->h, 1, c->ch, NULL), 0);
    size_t ps = c->out ? pixsum_type_size(c->out) : 8, ss = c->out_sq ? pixsum_type_size(c->out_sq) : 8;
    size_t most = (c->w > c->h ? c->w : c->h) * c->ch;
    unsigned char *crow = malloc(most * ps), *ccol = malloc(most * ps);
    unsigned char *crow_s = malloc(most * ss), *ccol_s = malloc(most * ss);
    assert_true(crow && ccol && crow_s && ccol_s);
    size_t ycuts[8], xcuts[8];
    size_t ny = random_cuts(r, c->h, ycuts), nx = random_cuts(r, c->w, xcuts);
    pixsum_ctx *ctx = make_ctx(c->method, c->threads);
    char what[200];
    snprintf(what, sizeof what, "tiles %zux%zu of %s -> %s%s%s %zux%zu ch%zu method %s "
             "threads %d seed %llu", nx, ny, pixsum_type_name(c->in),
             c->out ? pixsum_type_name(c->out) : "-", c->out_sq ? " sq " : "",
             c->out_sq ? pixsum_type_name(c->out_sq) : "", c->w, c->h, c->ch,
             tu_method_name(c->method), c->threads, (unsigned long long)tu_seed());
    for (size_t i = 0; i < ny; i++)
        for (size_t j = 0; j < nx; j++) {
            size_t x0 = xcuts[j], y0 = ycuts[i];
            size_t tw = xcuts[j + 1] - x0, th = ycuts[i + 1] - y0;
            pixsum_view tile, op, os;
            assert_int_equal(pixsum_view_roi(&in.view, x0, y0, tw, th, &tile), PIXSUM_OK);
            pixsum_view rp = pixsum_view_2d(crow, c->out ? c->out : PIXSUM_U64, tw, 1, c->ch, 0);
            pixsum_view cp = pixsum_view_2d(ccol, c->out ? c->out : PIXSUM_U64, 1, th, c->ch, 0);
            pixsum_view rs = pixsum_view_2d(crow_s, c->out_sq ? c->out_sq : PIXSUM_U64, tw, 1,
                                            c->ch, 0);
            pixsum_view cs = pixsum_view_2d(ccol_s, c->out_sq ? c->out_sq : PIXSUM_U64, 1, th,
                                            c->ch, 0);
            if (c->out) {
                assert_int_equal(pixsum_view_roi(&tp.view, x0, y0, tw, th, &op), PIXSUM_OK);
                tile_carries(&ref_p, x0, y0, tw, th, &rp, &cp);
            }
            if (c->out_sq) {
                assert_int_equal(pixsum_view_roi(&ts.view, x0, y0, tw, th, &os), PIXSUM_OK);
                tile_carries(&ref_s, x0, y0, tw, th, &rs, &cs);
            }
            /* zero carries are given as NULL now and then */
            int null_row = y0 == 0 && tu_below(r, 2), null_col = x0 == 0 && tu_below(r, 2);
            int st = pixsum_integral_carry_tile(
                ctx, &tile, c->out ? &op : NULL, c->out && !null_row ? &rp : NULL,
                c->out && !null_col ? &cp : NULL, c->out_sq ? &os : NULL,
                c->out_sq && !null_row ? &rs : NULL, c->out_sq && !null_col ? &cs : NULL);
            if (st != PIXSUM_OK)
                fail_msg("%s: tile (%zu, %zu): %s", what, x0, y0, pixsum_last_error());
        }
    if (c->out && tu_check_table(&tp.view, 0, &ref_p, 1, what) != 0)
        fail_msg("%s: the tiled table differs from the definition", what);
    if (c->out_sq && tu_check_table(&ts.view, 0, &ref_s, 1, what) != 0)
        fail_msg("%s: the tiled squared table differs from the definition", what);
    pixsum_ctx_free(ctx);
    free(crow);
    free(ccol);
    free(crow_s);
    free(ccol_s);
    if (c->out) {
        tu_image_free(&tp);
        tu_ref_free(&ref_p);
    }
    if (c->out_sq) {
        tu_image_free(&ts);
        tu_ref_free(&ref_s);
    }
    tu_image_free(&in);
}

static void test_tiles_equal_definition(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    int ids[64];
    size_t nm = tu_methods_for(PIXSUM_OP_CARRY, ids, 64);
    pixsum_type pin[64], pout[64], sin_[64], sout[64];
    size_t np = tu_supported_pairs(0, pin, pout, 64), ns = tu_supported_pairs(1, sin_, sout, 64);
    for (int i = 0; i < 160; i++) {
        ccase c;
        memset(&c, 0, sizeof c);
        int kind = (int)tu_below(r, 3); /* plain, squared only, both */
        if (kind == 0) {
            size_t k = tu_below(r, np);
            c.in = pin[k], c.out = pout[k];
        } else {
            size_t k = tu_below(r, ns);
            c.in = sin_[k], c.out_sq = sout[k];
            if (kind == 2)
                for (size_t j = 0; j < np && !c.out; j++)
                    if (pin[(j + k) % np] == c.in)
                        c.out = pout[(j + k) % np];
        }
        int big = tu_below(r, 10) == 0;
        switch (tu_below(r, 5)) {
        case 0: c.w = 1, c.h = tu_dim(r, 40); break;
        case 1: c.w = tu_dim(r, 40), c.h = 1; break;
        default: c.w = tu_dim(r, 30), c.h = tu_dim(r, 30); break;
        }
        if (big) /* tiles of several blocks of rows (the column carries per block) */
            c.w = 300 + tu_below(r, 400), c.h = 60 + tu_below(r, 60);
        c.ch = 1 + tu_below(r, 4);
        c.method = ids[tu_below(r, nm)];
        c.threads = 1 + (int)tu_below(r, 3);
        if (!tu_method_must_support(c.method)) {
            /* a method may refuse some pairs; keep to the ones it takes */
            pixsum_type t = c.out ? c.out : c.out_sq;
            if (!pixsum_method_supports(c.method, PIXSUM_OP_CARRY, c.in, t))
                continue;
        }
        run_tile_case(&c, r, big);
    }
}

static void test_tile_refusals(void **state)
{
    (void)state;
    const size_t w = 9, h = 5;
    tu_image in, out, row, col, vol;
    assert_int_equal(tu_image_alloc(&in, PIXSUM_U8, w, h, 1, 1, NULL), 0);
    tu_fill_random(tu_global_rng(), &in.view, TU_FILL_MAX);
    assert_int_equal(tu_image_alloc(&out, PIXSUM_U32, w, h, 1, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&row, PIXSUM_U32, w, 1, 1, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&col, PIXSUM_U32, 1, h, 1, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&vol, PIXSUM_U8, w, h, 2, 1, NULL), 0);
    tu_image_snapshot(&out);
    pixsum_ctx *ctx = pixsum_ctx_new();
    for (size_t y = 0; y < h; y++)
        tu_set_i(&col.view, 0, y, 0, 0, 1000);
    for (size_t x = 0; x < w; x++)
        tu_set_i(&row.view, x, 0, 0, 0, 7);

    expect_refusal(pixsum_integral_carry_tile(ctx, NULL, &out.view, NULL, NULL, NULL, NULL,
                                              NULL), PIXSUM_ERR_NULL, &out, "no input");
    expect_refusal(pixsum_integral_carry_tile(ctx, &in.view, NULL, NULL, NULL, NULL, NULL,
                                              NULL), PIXSUM_ERR_NULL, &out, "no table");
    expect_refusal(pixsum_integral_carry_tile(ctx, &in.view, NULL, NULL, &col.view, &out.view,
                                              NULL, NULL),
                   PIXSUM_ERR_NULL, &out, "column carry without its table");
    pixsum_view v = col.view;
    v.height = h - 1;
    expect_refusal(pixsum_integral_carry_tile(ctx, &in.view, &out.view, NULL, &v, NULL, NULL,
                                              NULL), PIXSUM_ERR_BAD_SHAPE, &out, "short column");
    v = pixsum_view_2d(col.view.data, PIXSUM_U8, 1, h, 1, 0);
    expect_refusal(pixsum_integral_carry_tile(ctx, &in.view, &out.view, NULL, &v, NULL, NULL,
                                              NULL), PIXSUM_ERR_BAD_TYPE, &out, "column type");
    v = pixsum_view_2d(out.view.data, PIXSUM_U32, 1, h, 1, out.view.row_stride);
    expect_refusal(pixsum_integral_carry_tile(ctx, &in.view, &out.view, NULL, &v, NULL, NULL,
                                              NULL), PIXSUM_ERR_ALIASING, &out, "column in table");
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, 1), PIXSUM_OK);
    expect_refusal(pixsum_integral_carry_tile(ctx, &in.view, &out.view, NULL, &col.view, NULL,
                                              NULL, NULL), PIXSUM_ERR_UNSUPPORTED, &out, "padded");
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, 0), PIXSUM_OK);
    expect_refusal(pixsum_integral_carry_tile(ctx, &vol.view, &out.view, NULL, &col.view, NULL,
                                              NULL, NULL), PIXSUM_ERR_BAD_SHAPE, &out, "3-D input");
    /* overflow counted from the carries: the column adds up to 5000 + the row's
     * 7 below 2^32 - 45 * 255 (fits), then a column summing past the limit */
    assert_int_equal(pixsum_integral_carry_tile(ctx, &in.view, &out.view, &row.view, &col.view,
                                                NULL, NULL, NULL), PIXSUM_OK);
    tu_image_snapshot(&out);
    tu_set_i(&col.view, 0, 2, 0, 0, (int64_t)UINT32_MAX - 5000);
    expect_refusal(pixsum_integral_carry_tile(ctx, &in.view, &out.view, &row.view, &col.view,
                                              NULL, NULL, NULL),
                   PIXSUM_ERR_OVERFLOW, &out, "column carries past u32");
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 1), PIXSUM_OK);
    assert_int_equal(pixsum_integral_carry_tile(ctx, &in.view, &out.view, &row.view, &col.view,
                                                NULL, NULL, NULL), PIXSUM_OK);
    pixsum_ctx_free(ctx);
    tu_image_free(&in);
    tu_image_free(&out);
    tu_image_free(&row);
    tu_image_free(&col);
    tu_image_free(&vol);
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
        cmocka_unit_test(test_tiles_equal_definition),
        cmocka_unit_test(test_tile_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

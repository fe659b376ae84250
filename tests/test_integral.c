/*
 * test_integral.c - property tests of the integral-image entry points against
 * the naive reference of testutil.c: every documented type pair, random shapes
 * (1x1, 1xN, Nx1, odd and prime sizes), 1-4 channels, padded and inclusive
 * layouts, padded strides, ROIs of a larger image, bottom-up (negative stride)
 * images, 2-D and 3-D, plain, squared (with and without the plain table) and
 * tilted tables, wrap mode, and every registered method that is available
 * (so SIMD, threaded and GPU methods added later are checked the same way).
 *
 * Each case also checks that nothing outside the output tables is written and
 * that the input is not modified.
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

enum kind { K_PLAIN, K_SQ_ONLY, K_SQ_BOTH, K_TILTED };
static const char *const kind_name[] = {"integral", "squared", "squared+plain", "tilted"};

typedef struct tcase {
    enum kind kind;
    pixsum_type in, out, out_sq;
    size_t w, h, d, ch;
    tu_layout lin, lout;
    int padded, wrap;
    tu_fill fill;
    int fast_ref; /* reference by exact running sums (for larger images) */
} tcase;

typedef struct stats {
    size_t runs, refused, skipped;
} stats;

/* Largest magnitude of an input type, for the test's own overflow rule. */
static uint64_t max_magnitude(pixsum_type t)
{
    switch (t) {
    case PIXSUM_U8: return 255;
    case PIXSUM_U16: return 65535;
    case PIXSUM_I16: return 32768;
    case PIXSUM_I32: return UINT64_C(1) << 31;
    case PIXSUM_U32: return UINT32_MAX;
    default: return 0;
    }
}

/* 1 if the worst case of `count` pixels of `in` can exceed the integer table
 * type `out` (the documented refusal rule), computed in 128 bits. */
static int worst_case_overflows(pixsum_type in, pixsum_type out, uint64_t count, int squared)
{
    tu_u128 limit;
    switch (out) {
    case PIXSUM_U32: limit = UINT32_MAX; break;
    case PIXSUM_U64: limit = UINT64_MAX; break;
    case PIXSUM_I64: limit = INT64_MAX; break;
    default: return 0; /* float tables are never refused */
    }
    tu_u128 m = max_magnitude(in);
    if (squared)
        m *= m;
    return (tu_u128)count * m > limit;
}

static void describe(char *buf, size_t size, const tcase *tc, int id)
{
    snprintf(buf, size,
             "%s %s->%s%s%s %zux%zux%zu ch%zu padded=%d wrap=%d in[pad %zu bu %d roi %zu] "
             "out[pad %zu bu %d roi %zu] method %s seed %llu",
             kind_name[tc->kind], pixsum_type_name(tc->in),
             tc->kind == K_SQ_ONLY ? pixsum_type_name(tc->out_sq) : pixsum_type_name(tc->out),
             tc->kind == K_SQ_BOTH ? "+sq " : "",
             tc->kind == K_SQ_BOTH ? pixsum_type_name(tc->out_sq) : "", tc->w, tc->h, tc->d,
             tc->ch, tc->padded, tc->wrap, tc->lin.row_pad, tc->lin.bottom_up, tc->lin.margin,
             tc->lout.row_pad, tc->lout.bottom_up, tc->lout.margin, tu_method_name(id),
             (unsigned long long)tu_seed());
}

static void run_case(const tcase *tc, stats *st)
{
    tu_rng *r = tu_global_rng();
    tu_image in;
    assert_int_equal(tu_image_alloc(&in, tc->in, tc->w, tc->h, tc->d, tc->ch, &tc->lin), 0);
    tu_fill_random(r, &in.view, tc->fill);
    tu_image_snapshot(&in);

    int want_plain = tc->kind == K_PLAIN || tc->kind == K_SQ_BOTH || tc->kind == K_TILTED;
    int want_sq = tc->kind == K_SQ_ONLY || tc->kind == K_SQ_BOTH;
    tu_ref ref_plain, ref_sq;
    memset(&ref_plain, 0, sizeof ref_plain);
    memset(&ref_sq, 0, sizeof ref_sq);
    if (tc->kind == K_TILTED)
        assert_int_equal(tu_ref_tilted(&ref_plain, &in.view), 0);
    else if (want_plain)
        assert_int_equal(tc->fast_ref ? tu_ref_integral_fast(&ref_plain, &in.view, 0)
                                      : tu_ref_integral(&ref_plain, &in.view, 0),
                         0);
    if (want_sq)
        assert_int_equal(tc->fast_ref ? tu_ref_integral_fast(&ref_sq, &in.view, 1)
                                      : tu_ref_integral(&ref_sq, &in.view, 1),
                         0);

    unsigned ops;
    if (tc->kind == K_TILTED)
        ops = PIXSUM_OP_TILTED;
    else if (want_sq)
        ops = PIXSUM_OP_INTEGRAL_SQ | (tc->d > 1 ? PIXSUM_OP_INTEGRAL_3D : 0u);
    else
        ops = tc->d > 1 ? PIXSUM_OP_INTEGRAL_3D : PIXSUM_OP_INTEGRAL;
    int ids[64];
    size_t nids = tu_methods_for(ops, ids, 64);
    uint64_t count = (uint64_t)tc->w * tc->h * tc->d;
    int refused = !tc->wrap &&
                  ((want_plain && worst_case_overflows(tc->in, tc->out, count, 0)) ||
                   (want_sq && worst_case_overflows(tc->in, tc->out_sq, count, 1)));

    for (size_t k = 0; k < nids; k++) {
        char desc[512];
        describe(desc, sizeof desc, tc, ids[k]);
        pixsum_ctx *ctx = pixsum_ctx_new();
        assert_non_null(ctx);
        assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_METHOD, ids[k]), PIXSUM_OK);
        assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, tc->padded), PIXSUM_OK);
        assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, tc->wrap), PIXSUM_OK);
        assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, (intptr_t)tu_below(r, 5)),
                         PIXSUM_OK);
        size_t tw, th, td;
        if (tc->kind == K_TILTED) {
            tw = tc->w + 1;
            th = tc->h + 1;
            td = 1;
        } else {
            pixsum_integral_shape(ctx, &in.view, &tw, &th, &td);
            size_t pad = tc->padded ? 1u : 0u;
            assert_int_equal(tw, tc->w + pad);
            assert_int_equal(th, tc->h + pad);
            assert_int_equal(td, tc->d > 1 ? tc->d + pad : 1u);
        }
        tu_image out, out_sq;
        memset(&out, 0, sizeof out);
        memset(&out_sq, 0, sizeof out_sq);
        if (want_plain) {
            assert_int_equal(tu_image_alloc(&out, tc->out, tw, th, td, tc->ch, &tc->lout), 0);
            tu_image_snapshot(&out);
        }
        if (want_sq) {
            assert_int_equal(tu_image_alloc(&out_sq, tc->out_sq, tw, th, td, tc->ch, &tc->lout),
                             0);
            tu_image_snapshot(&out_sq);
        }
        int status;
        if (tc->kind == K_TILTED)
            status = pixsum_integral_tilted(ctx, &in.view, &out.view);
        else if (tc->kind == K_PLAIN)
            status = pixsum_integral(ctx, &in.view, &out.view);
        else
            status = pixsum_integral_sq(ctx, &in.view, want_plain ? &out.view : NULL,
                                        &out_sq.view);
        const char *detail = pixsum_last_error();

        if (refused || (status == PIXSUM_ERR_UNSUPPORTED && !tu_method_must_support(ids[k]))) {
            if (refused) {
                if (status != PIXSUM_ERR_OVERFLOW)
                    fail_msg("%s: expected PIXSUM_ERR_OVERFLOW, got %d (%s)", desc, status,
                             detail);
                if (strstr(detail, "overflow") == NULL)
                    fail_msg("%s: overflow detail text '%s' does not say why", desc, detail);
                st->refused++;
            } else {
                st->skipped++;
            }
            if (want_plain)
                assert_int_equal(tu_image_check_untouched(&out, 1, desc), 0);
            if (want_sq)
                assert_int_equal(tu_image_check_untouched(&out_sq, 1, desc), 0);
        } else {
            if (status != PIXSUM_OK)
                fail_msg("%s: status %d (%s): %s", desc, status, pixsum_strerror(status),
                         detail);
            if (detail[0] != '\0')
                fail_msg("%s: success left the detail text '%s'", desc, detail);
            if (want_plain) {
                int padded = tc->kind == K_TILTED ? 0 : tc->padded;
                if (tu_check_table(&out.view, padded, &ref_plain, tc->wrap, desc) != 0)
                    fail_msg("%s: table differs from the reference", desc);
                assert_int_equal(tu_image_check_untouched(&out, 0, desc), 0);
            }
            if (want_sq) {
                if (tu_check_table(&out_sq.view, tc->padded, &ref_sq, tc->wrap, desc) != 0)
                    fail_msg("%s: squared table differs from the reference", desc);
                assert_int_equal(tu_image_check_untouched(&out_sq, 0, desc), 0);
            }
            st->runs++;
        }
        assert_int_equal(tu_image_check_untouched(&in, 1, desc), 0);
        if (want_plain)
            tu_image_free(&out);
        if (want_sq)
            tu_image_free(&out_sq);
        pixsum_ctx_free(ctx);
    }
    tu_ref_free(&ref_plain);
    tu_ref_free(&ref_sq);
    tu_image_free(&in);
}

/* Shape number `i` of a series: 1x1, 1xN, Nx1, then odd, prime and random
 * sizes, kept small enough for the O(N^2) reference. */
static void pick_shape(tu_rng *r, int i, size_t *w, size_t *h)
{
    static const size_t primes[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
    switch (i % 6) {
    case 0: *w = 1; *h = 1; break;
    case 1: *w = tu_dim(r, 130); *h = 1; break;
    case 2: *w = 1; *h = tu_dim(r, 130); break;
    case 3: *w = tu_between(r, 1, 12) * 2 + 1; *h = tu_between(r, 1, 12) * 2 + 1; break;
    case 4:
        *w = primes[tu_below(r, 12)];
        *h = primes[tu_below(r, 12)];
        break;
    default: *w = tu_dim(r, 30); *h = tu_dim(r, 30); break;
    }
}

static tcase random_case(tu_rng *r, enum kind kind, pixsum_type in, pixsum_type out,
                         pixsum_type out_sq, int shape_index, int volume)
{
    tcase tc;
    memset(&tc, 0, sizeof tc);
    tc.kind = kind;
    tc.in = in;
    tc.out = out;
    tc.out_sq = out_sq;
    if (volume) {
        tc.w = tu_dim(r, 9);
        tc.h = tu_dim(r, 9);
        tc.d = tu_between(r, 2, 6);
        if (shape_index % 4 == 0)
            tc.w = tc.h = 1; /* a column of slices */
    } else {
        pick_shape(r, shape_index, &tc.w, &tc.h);
        tc.d = 1;
    }
    tc.ch = tu_between(r, 1, 4);
    if (tc.w * tc.h * tc.d > 200)
        tc.ch = tu_between(r, 1, 2); /* keep the reference cheap */
    tc.lin = tu_random_layout(r);
    tc.lout = tu_random_layout(r);
    tc.padded = (int)tu_below(r, 2);
    tc.wrap = tu_below(r, 3) == 0;
    tc.fill = tu_below(r, 5) == 0 ? (tu_below(r, 2) ? TU_FILL_MAX : TU_FILL_MIN) : TU_FILL_MIXED;
    return tc;
}

/* True when PIXSUM_TEST_METHODS restricts the methods (a run may then have
 * no method for an operation at all). */
static int filtered(void)
{
    const char *sel = getenv("PIXSUM_TEST_METHODS");
    return sel && *sel;
}

static void report(const char *what, const stats *st)
{
    print_message("%s: %zu method runs checked, %zu refused as expected (overflow), %zu "
                  "unsupported by an optional method\n",
                  what, st->runs, st->refused, st->skipped);
}

/* The reference itself: the fast recurrence agrees with the definition, and a
 * hand-computed example holds (so the reference cannot be wrong in the same
 * way as the library). */
static void test_reference_self_check(void **state)
{
    (void)state;
    /* [1 2; 3 4] -> inclusive [1 3; 4 10]. */
    uint8_t px[4] = {1, 2, 3, 4};
    pixsum_view v = pixsum_view_2d(px, PIXSUM_U8, 2, 2, 1, 0);
    tu_ref ref;
    assert_int_equal(tu_ref_integral(&ref, &v, 0), 0);
    assert_true(ref.iv[0] == 1 && ref.iv[1] == 3 && ref.iv[2] == 4 && ref.iv[3] == 10);
    tu_ref_free(&ref);
    assert_int_equal(tu_ref_integral(&ref, &v, 1), 0);
    assert_true(ref.iv[0] == 1 && ref.iv[1] == 5 && ref.iv[2] == 10 && ref.iv[3] == 30);
    tu_ref_free(&ref);

    tu_rng *r = tu_global_rng();
    const pixsum_type types[] = {PIXSUM_U8,  PIXSUM_U16, PIXSUM_I16, PIXSUM_I32,
                                 PIXSUM_U32, PIXSUM_F32, PIXSUM_F64};
    for (int i = 0; i < 40; i++) {
        tu_layout l = tu_random_layout(r);
        pixsum_type t = types[i % 7];
        size_t d = i % 3 == 0 ? tu_between(r, 2, 4) : 1;
        tu_image img;
        assert_int_equal(
            tu_image_alloc(&img, t, tu_dim(r, 12), tu_dim(r, 12), d, tu_between(r, 1, 4), &l), 0);
        tu_fill_random(r, &img.view, TU_FILL_MIXED);
        for (int sq = 0; sq < 2; sq++) {
            tu_ref a, b;
            assert_int_equal(tu_ref_integral(&a, &img.view, sq), 0);
            assert_int_equal(tu_ref_integral_fast(&b, &img.view, sq), 0);
            size_t n = a.width * a.height * a.depth * a.channels;
            for (size_t j = 0; j < n; j++) {
                assert_true(a.iv[j] == b.iv[j]);
                long double tol = 1e-15L * a.mag[j];
                if (!(a.fv[j] - b.fv[j] <= tol && b.fv[j] - a.fv[j] <= tol))
                    fail_msg("fast reference differs at %zu (%s, squared %d)", j,
                             pixsum_type_name(t), sq);
                assert_true(a.terms[j] == b.terms[j]);
            }
            tu_ref_free(&a);
            tu_ref_free(&b);
        }
        tu_image_free(&img);
    }
}

/* A hand-computed tilted table: image [a b c; d e f] with powers of two. */
static void test_tilted_hand_example(void **state)
{
    (void)state;
    const uint8_t a = 1, b = 2, c = 4, d = 8, e = 16, f = 32;
    uint8_t px[6] = {a, b, c, d, e, f};
    pixsum_view in = pixsum_view_2d(px, PIXSUM_U8, 3, 2, 1, 0);
    /* T(X, Y) for X = 0..3, Y = 0..2 from the definition in pixsum.h. */
    const uint32_t want[3][4] = {
        {0, 0, 0, 0},
        {0, a, b, c},
        {a, a + b + d, a + b + c + e, b + c + f},
    };
    tu_ref ref;
    assert_int_equal(tu_ref_tilted(&ref, &in), 0);
    for (int Y = 0; Y < 3; Y++)
        for (int X = 0; X < 4; X++)
            assert_true(ref.iv[Y * 4 + X] == want[Y][X]);
    tu_ref_free(&ref);
    uint32_t out[3][4];
    pixsum_view ov = pixsum_view_2d(out, PIXSUM_U32, 4, 3, 1, 0);
    assert_int_equal(pixsum_integral_tilted(NULL, &in, &ov), PIXSUM_OK);
    for (int Y = 0; Y < 3; Y++)
        for (int X = 0; X < 4; X++)
            if (out[Y][X] != want[Y][X])
                fail_msg("tilted (%d,%d) = %u, expected %u", X, Y, out[Y][X], want[Y][X]);
}

static void test_integral_2d_all_pairs(void **state)
{
    (void)state;
    pixsum_type in[32], out[32];
    size_t n = tu_supported_pairs(0, in, out, 32);
    stats st = {0, 0, 0};
    for (size_t p = 0; p < n; p++)
        for (int s = 0; s < 9; s++) {
            tcase tc = random_case(tu_global_rng(), K_PLAIN, in[p], out[p], PIXSUM_TYPE_NONE,
                                   s, 0);
            run_case(&tc, &st);
        }
    report("2-D integral", &st);
    assert_true(st.runs > 0 || filtered());
}

static void test_integral_3d_all_pairs(void **state)
{
    (void)state;
    pixsum_type in[32], out[32];
    size_t n = tu_supported_pairs(0, in, out, 32);
    stats st = {0, 0, 0};
    for (size_t p = 0; p < n; p++)
        for (int s = 0; s < 4; s++) {
            tcase tc = random_case(tu_global_rng(), K_PLAIN, in[p], out[p], PIXSUM_TYPE_NONE,
                                   s, 1);
            run_case(&tc, &st);
        }
    report("3-D integral volume", &st);
    assert_true(st.runs > 0 || filtered());
}

/* A plain table type for input `in` (for the squared+plain calls). */
static pixsum_type plain_out_for(tu_rng *r, pixsum_type in)
{
    pixsum_type pin[32], pout[32], choice[8];
    size_t n = tu_supported_pairs(0, pin, pout, 32), k = 0;
    for (size_t i = 0; i < n; i++)
        if (pin[i] == in)
            choice[k++] = pout[i];
    return choice[tu_below(r, k)];
}

static void test_integral_squared_all_pairs(void **state)
{
    (void)state;
    pixsum_type in[32], out[32];
    size_t n = tu_supported_pairs(1, in, out, 32);
    stats st = {0, 0, 0};
    tu_rng *r = tu_global_rng();
    for (size_t p = 0; p < n; p++)
        for (int s = 0; s < 8; s++) {
            enum kind kind = s % 2 ? K_SQ_BOTH : K_SQ_ONLY;
            tcase tc = random_case(r, kind, in[p], plain_out_for(r, in[p]), out[p], s, s >= 6);
            run_case(&tc, &st);
        }
    report("squared integral", &st);
    assert_true((st.runs > 0 && st.refused > 0) || filtered());
}

static void test_tilted_all_pairs(void **state)
{
    (void)state;
    pixsum_type in[32], out[32];
    size_t n = tu_supported_pairs(0, in, out, 32);
    stats st = {0, 0, 0};
    for (size_t p = 0; p < n; p++)
        for (int s = 0; s < 6; s++) {
            tcase tc = random_case(tu_global_rng(), K_TILTED, in[p], out[p], PIXSUM_TYPE_NONE,
                                   s, 0);
            /* Keep the O(N^2) tilted reference cheap. */
            if (tc.w * tc.h > 400) {
                tc.w = tc.w > 20 ? 20 : tc.w;
                tc.h = tc.h > 20 ? 20 : tc.h;
            }
            run_case(&tc, &st);
        }
    report("tilted integral", &st);
    assert_true(st.runs > 0 || filtered());
}

/* Layouts the random cases might miss on an unlucky seed, forced: bottom-up
 * input and output, ROI of a larger image with padded strides, padded layout,
 * 3 and 4 channels, for a 2-D image, a volume and the tilted table. */
static void test_forced_layouts(void **state)
{
    (void)state;
    stats st = {0, 0, 0};
    tu_layout bottom_up = {3, 1, 1, 0}, roi = {5, 2, 0, 3}, both = {1, 1, 1, 2};
    const tu_layout *layouts[] = {&bottom_up, &roi, &both};
    for (int li = 0; li < 3; li++)
        for (int lo = 0; lo < 3; lo++) {
            const enum kind kinds[] = {K_PLAIN, K_PLAIN, K_SQ_BOTH, K_TILTED};
            for (int k = 0; k < 4; k++) {
                tcase tc;
                memset(&tc, 0, sizeof tc);
                tc.kind = kinds[k];
                tc.in = k % 2 ? PIXSUM_I16 : PIXSUM_U8;
                tc.out = PIXSUM_I64;
                tc.out_sq = PIXSUM_U64;
                tc.w = 13;
                tc.h = 7;
                tc.d = k == 1 ? 3 : 1;
                tc.ch = (size_t)(3 + (li + lo + k) % 2);
                tc.lin = *layouts[li];
                tc.lout = *layouts[lo];
                tc.padded = (li + k) % 2;
                tc.fill = TU_FILL_MIXED;
                run_case(&tc, &st);
            }
        }
    report("forced layouts", &st);
    assert_true(st.runs > 0 || filtered());
}

/* Rows long enough for the vector main loops and unrolled blocks of the fast
 * methods, and enough rows for threaded methods to split into bands: one image
 * of a few hundred by a hundred or so pixels per type pair, plain and squared,
 * checked against the exact running-sum reference (itself checked against the
 * definition in test_reference_self_check). */
static void test_integral_medium_sizes(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    stats st = {0, 0, 0};
    for (int squared = 0; squared < 2; squared++) {
        pixsum_type in[32], out[32];
        size_t n = tu_supported_pairs(squared, in, out, 32);
        for (size_t p = 0; p < n; p++) {
            tcase tc = random_case(r, squared ? K_SQ_BOTH : K_PLAIN, in[p],
                                   squared ? plain_out_for(r, in[p]) : out[p], out[p], 5, 0);
            tc.w = tu_between(r, 150, 700);
            tc.h = tu_between(r, 20, 130);
            tc.ch = tu_between(r, 1, 2);
            if (p % 5 == 0) { /* a volume now and then */
                tc.w /= 4;
                tc.h /= 2;
                tc.d = tu_between(r, 2, 5);
            }
            tc.fast_ref = 1;
            tc.wrap = 1; /* large sums of u16 into u32 etc. are checked modulo 2^32 */
            run_case(&tc, &st);
        }
    }
    report("medium sizes", &st);
    assert_true(st.runs > 0 || filtered());
}

/* Every method (not just "auto") gives bit-identical integer tables: run each
 * on the same image and compare the bytes with the first. */
/* Rows longer than the fast kernels' chunks, in tables whose rows are all
 * 64-byte aligned (which the guarded allocations of the other tests seldom
 * are): the AVX2 u8 -> u32 row-pair kernel, when it streams, keeps the second
 * row of a pair in its row buffer and streams it out 1024 samples at a time.
 * Rows of 1024 to a few thousand samples, with and without a remainder of the
 * 32-sample step, odd row counts (a last row without a pair) and two
 * channels, every method against exact running sums (u32, modulo 2^32). */
static void test_integral_long_rows(void **state)
{
    (void)state;
    static const size_t widths[] = {1024, 1025, 1056, 2047, 2048, 2080, 3001, 4133};
    tu_rng *r = tu_global_rng();
    int ids[64];
    size_t nm = tu_methods_for(PIXSUM_OP_INTEGRAL, ids, 64), runs = 0;
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        size_t w = widths[i], h = 2 + i % 5, ch = i % 4 == 3 ? 2 : 1, n = w * ch;
        size_t stride = (n * 4 + 63) / 64 * 64;
        tu_image in;
        assert_int_equal(tu_image_alloc(&in, PIXSUM_U8, w, h, 1, ch, NULL), 0);
        tu_fill_random(r, &in.view, TU_FILL_MIXED);
        uint32_t *ref = calloc(h * n, 4), *out = aligned_alloc(64, h * stride);
        assert_non_null(ref);
        assert_non_null(out);
        for (size_t y = 0; y < h; y++) {
            const uint8_t *row = (const uint8_t *)in.view.data + (ptrdiff_t)y * in.view.row_stride;
            for (size_t x = 0; x < n; x++) {
                uint32_t left = x >= ch ? ref[y * n + x - ch] - (y ? ref[(y - 1) * n + x - ch] : 0)
                                        : 0;
                ref[y * n + x] = (y ? ref[(y - 1) * n + x] : 0) + left + row[x];
            }
        }
        pixsum_view ov = pixsum_view_2d(out, PIXSUM_U32, w, h, ch, (ptrdiff_t)stride);
        for (size_t k = 0; k < nm; k++) {
            pixsum_ctx *ctx = pixsum_ctx_new();
            assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_METHOD, ids[k]), 0);
            assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 1), 0);
            memset(out, 0xA5, h * stride);
            int st = pixsum_integral(ctx, &in.view, &ov);
            pixsum_ctx_free(ctx);
            if (st == PIXSUM_ERR_UNSUPPORTED && !tu_method_must_support(ids[k]))
                continue;
            if (st != PIXSUM_OK)
                fail_msg("method %s: %s", tu_method_name(ids[k]), pixsum_last_error());
            for (size_t y = 0; y < h; y++)
                for (size_t x = 0; x < n; x++) {
                    uint32_t got = *(const uint32_t *)((const char *)out + y * stride + x * 4);
                    if (got != ref[y * n + x])
                        fail_msg("method %s, %zux%zu x%zu: (%zu, %zu) is %u, not %u",
                                 tu_method_name(ids[k]), w, h, ch, x / ch, y, got,
                                 ref[y * n + x]);
                }
            runs++;
        }
        free(ref);
        free(out);
        tu_image_free(&in);
    }
    assert_true(runs > 0 || filtered());
}

static void test_methods_bit_identical(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    const pixsum_type outs[] = {PIXSUM_U32, PIXSUM_U64, PIXSUM_I64};
    for (int t = 0; t < 3; t++) {
        for (int vol = 0; vol < 2; vol++) {
            size_t w = tu_dim(r, 70), h = tu_dim(r, 40), d = vol ? 3 : 1, ch = 1 + (size_t)t;
            tu_image in;
            assert_int_equal(tu_image_alloc(&in, PIXSUM_U16, w, h, d, ch, NULL), 0);
            tu_fill_random(r, &in.view, TU_FILL_MIXED);
            int ids[64];
            size_t n = tu_methods_for(vol ? PIXSUM_OP_INTEGRAL_3D : PIXSUM_OP_INTEGRAL, ids, 64);
            void *first = NULL;
            size_t bytes = pixsum_packed_bytes(outs[t], w, h, d, ch);
            for (size_t k = 0; k < n; k++) {
                pixsum_ctx *ctx = pixsum_ctx_new();
                assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_METHOD, ids[k]), 0);
                assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 1), 0);
                void *buf = malloc(bytes);
                assert_non_null(buf);
                pixsum_view ov = pixsum_view_3d(buf, outs[t], w, h, d, ch, 0, 0);
                int st = pixsum_integral(ctx, &in.view, &ov);
                pixsum_ctx_free(ctx);
                if (st == PIXSUM_ERR_UNSUPPORTED && !tu_method_must_support(ids[k])) {
                    free(buf);
                    continue;
                }
                if (st != PIXSUM_OK)
                    fail_msg("method %s: %s", tu_method_name(ids[k]), pixsum_last_error());
                if (!first) {
                    first = buf;
                } else {
                    if (memcmp(first, buf, bytes) != 0)
                        fail_msg("method %s differs from %s (%zux%zux%zu, %s, seed %llu)",
                                 tu_method_name(ids[k]), tu_method_name(ids[0]), w, h, d,
                                 pixsum_type_name(outs[t]), (unsigned long long)tu_seed());
                    free(buf);
                }
            }
            free(first);
            tu_image_free(&in);
        }
    }
}

int main(void)
{
    tu_init("test_integral");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_self_check),
        cmocka_unit_test(test_tilted_hand_example),
        cmocka_unit_test(test_integral_2d_all_pairs),
        cmocka_unit_test(test_integral_3d_all_pairs),
        cmocka_unit_test(test_integral_squared_all_pairs),
        cmocka_unit_test(test_tilted_all_pairs),
        cmocka_unit_test(test_forced_layouts),
        cmocka_unit_test(test_integral_medium_sizes),
        cmocka_unit_test(test_integral_long_rows),
        cmocka_unit_test(test_methods_bit_identical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

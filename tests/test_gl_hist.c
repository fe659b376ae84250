/*
 * test_gl_hist.c - the OpenGL histogram methods of paper 002 (gl.depth, the
 * depth-buffer + occlusion-query method, and gl.perbin, one pass per bin)
 * against the reference hist.scalar: counts, below / above / NaN and in-range
 * totals bit-identical on random, natural-like (smooth gradient + noise) and
 * constant images; shapes 1x1, 1xN, Nx1, odd widths, padded / bottom-up / ROI
 * strides, 1-4 channels, 3-D, masks, every bin count 1..256 for u8, u16 / i16
 * with up to 65536 bins, f32 with NaN, infinities, zeros of both signs and
 * denormals; tiles forced small (PIXSUM_GL_TILE) so that tiled uploads and
 * summed queries are exercised, and the query pool forced to 3 names
 * (PIXSUM_GL_QUERIES) so that results are read back mid-pass; concurrent calls from several threads. The
 * refusals: i32 / f64, bins above 65536, and (gl.depth only) f32 bin edges
 * among the denormal floats, which a flush-to-zero GPU could not separate.
 *
 * Without an EGL display (or a library built without GL) it prints
 * "skipped: no EGL/OpenGL display" and exits 77. With PIXSUM_TEST_GL_EXPECT=
 * unavailable (set by tests/gl.cmake together with PIXSUM_GL_PLATFORM=bogus or
 * PIXSUM_GL_VERSION=9.9) it checks the failure path instead: the GL methods
 * return PIXSUM_ERR_UNAVAILABLE with a detail, leave the counts untouched and
 * leak nothing (under ASan), and the CPU methods still work.
 */
#include "testutil.h"

#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *const gl_methods[] = {"gl.depth", "gl.perbin"};
#define N_GL 2

typedef enum content { RANDOM, NATURAL, CONSTANT, N_CONTENT } content;
static const char *const content_name[] = {"random", "natural", "constant"};

/* Fills channel c of every pixel: uniform noise over the type's values,
 * a smooth gradient with noise, or one value. */
static void fill(tu_rng *r, const pixsum_view *v, content what, double lo, double hi)
{
    double k = tu_unit(r) * (hi - lo) + lo;
    for (size_t z = 0; z < v->depth; z++)
        for (size_t y = 0; y < v->height; y++)
            for (size_t x = 0; x < v->width; x++)
                for (size_t c = 0; c < v->channels; c++) {
                    double val;
                    if (what == CONSTANT) {
                        val = k;
                    } else if (what == NATURAL) {
                        double s = 0.5 + 0.35 * sin((double)x / 17.0 + (double)c) *
                                             cos((double)y / 23.0 + (double)z);
                        s += (tu_unit(r) - 0.5) * 0.1;
                        val = lo + s * (hi - lo);
                    } else {
                        val = lo + tu_unit(r) * (hi - lo);
                    }
                    if (v->type == PIXSUM_F32) {
                        tu_set_f(v, x, y, z, c, val);
                    } else {
                        double m = floor(val);
                        if (m < (double)tu_type_min(v->type))
                            m = (double)tu_type_min(v->type);
                        if (m > (double)tu_type_max(v->type))
                            m = (double)tu_type_max(v->type);
                        tu_set_i(v, x, y, z, c, (int64_t)m);
                    }
                }
}

/* Runs `method` and hist.scalar on (v, spec); returns the method's status and
 * fails the test if it succeeded with counts or totals that differ. */
static int compare(const char *method, const pixsum_view *v, const pixsum_hist_spec *spec,
                   const char *what)
{
    pixsum_hist_info want, got;
    int st = pixsum_hist_resolve(v, spec, &want);
    assert_int_equal(st, PIXSUM_OK);
    size_t n = want.bins * v->channels;
    uint64_t *ref = malloc(n * sizeof *ref), *out = malloc((n + 1) * sizeof *out);
    assert_true(ref && out);
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_non_null(ctx);
    assert_int_equal(pixsum_ctx_set_method(ctx, "hist.scalar"), PIXSUM_OK);
    assert_int_equal(pixsum_histogram(ctx, v, spec, ref, n, &want), PIXSUM_OK);
    assert_int_equal(pixsum_ctx_set_method(ctx, method), PIXSUM_OK);
    for (size_t i = 0; i <= n; i++)
        out[i] = 0xDEADBEEFull;
    st = pixsum_histogram(ctx, v, spec, out, n, &got);
    if (st == PIXSUM_OK) {
        if (memcmp(ref, out, n * sizeof *ref) != 0) {
            for (size_t i = 0; i < n; i++)
                if (ref[i] != out[i]) {
                    fail_msg("%s %s (%s %zux%zux%zu ch %zu, %zu bins [%g, %g)): bin %zu is "
                             "%llu, hist.scalar %llu (seed %llu)",
                             method, what, pixsum_type_name(v->type), v->width, v->height,
                             v->depth, v->channels, want.bins, want.lo, want.hi, i,
                             (unsigned long long)out[i], (unsigned long long)ref[i],
                             (unsigned long long)tu_seed());
                }
        }
        assert_true(out[n] == 0xDEADBEEFull); /* nothing written past counts_len */
        for (size_t c = 0; c < v->channels; c++) {
            if (got.below[c] != want.below[c] || got.above[c] != want.above[c] ||
                got.nan[c] != want.nan[c] || got.in_range[c] != want.in_range[c])
                fail_msg("%s %s channel %zu: below/above/nan/in %llu %llu %llu %llu, "
                         "hist.scalar %llu %llu %llu %llu (seed %llu)",
                         method, what, c, (unsigned long long)got.below[c],
                         (unsigned long long)got.above[c], (unsigned long long)got.nan[c],
                         (unsigned long long)got.in_range[c],
                         (unsigned long long)want.below[c], (unsigned long long)want.above[c],
                         (unsigned long long)want.nan[c], (unsigned long long)want.in_range[c],
                         (unsigned long long)tu_seed());
        }
    } else {
        for (size_t i = 0; i < n; i++) /* counts untouched on error */
            assert_true(out[i] == 0xDEADBEEFull);
        assert_true(pixsum_last_error()[0] != '\0');
    }
    pixsum_ctx_free(ctx);
    free(ref);
    free(out);
    return st;
}

/* Both methods must succeed and match. */
static void check_both(const pixsum_view *v, const pixsum_hist_spec *spec, const char *what)
{
    for (int m = 0; m < N_GL; m++) {
        int st = compare(gl_methods[m], v, spec, what);
        if (st != PIXSUM_OK)
            fail_msg("%s %s: status %d (%s)", gl_methods[m], what, st, pixsum_last_error());
    }
}

/* ---- u8: shapes, strides, channels, contents --------------------------- */

static void test_u8_shapes_strides_channels(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    static const size_t shapes[][2] = {{1, 1},  {1, 97},  {97, 1},  {2, 3},   {31, 7},
                                       {33, 65}, {129, 3}, {255, 17}, {300, 200}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int what = 0; what < N_CONTENT; what++) {
            tu_layout lay = tu_random_layout(r);
            size_t ch = tu_between(r, 1, 4);
            tu_image img;
            assert_int_equal(
                tu_image_alloc(&img, PIXSUM_U8, shapes[s][0], shapes[s][1], 1, ch, &lay), 0);
            fill(r, &img.view, (content)what, 0, 256);
            pixsum_hist_spec spec = {0};
            if (tu_below(r, 2))
                spec.bins = tu_between(r, 1, 256);
            if (tu_below(r, 3) == 0) { /* a partial range: below and above counts */
                spec.lo = (double)tu_below(r, 100);
                spec.hi = spec.lo + 1 + (double)tu_below(r, 200);
            }
            char what_s[64];
            snprintf(what_s, sizeof what_s, "u8 %s", content_name[what]);
            check_both(&img.view, &spec, what_s);
            tu_image_free(&img);
        }
}

/* Every bin count 1..256 over [0, 256) on a natural-like image. */
static void test_u8_every_bin_count(void **state)
{
    (void)state;
    tu_image img;
    assert_int_equal(tu_image_alloc(&img, PIXSUM_U8, 45, 23, 1, 1, NULL), 0);
    fill(tu_global_rng(), &img.view, NATURAL, 0, 256);
    for (size_t bins = 1; bins <= 256; bins++) {
        pixsum_hist_spec spec = {0};
        spec.bins = bins;
        spec.lo = 0;
        spec.hi = 256;
        check_both(&img.view, &spec, "u8 natural, bins 1..256");
    }
    tu_image_free(&img);
}

/* Masks (2-D and 3-D), with small tiles so masked tiles are uploaded apart. */
static void test_masks_and_volumes(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    static const pixsum_type types[] = {PIXSUM_U8, PIXSUM_U16, PIXSUM_I16, PIXSUM_F32};
    for (int tile = 0; tile < 2; tile++) {
        if (tile) {
            setenv("PIXSUM_GL_TILE", "5", 1);
            setenv("PIXSUM_GL_QUERIES", "3", 1); /* read back every 3 passes */
        }
        for (size_t t = 0; t < 4; t++)
            for (int what = 0; what < N_CONTENT; what++) {
                size_t w = tu_between(r, 1, 40), h = tu_between(r, 1, 30);
                size_t d = tu_between(r, 1, 3), ch = tu_between(r, 1, 4);
                tu_layout lay = tu_random_layout(r);
                tu_image img, mask;
                assert_int_equal(tu_image_alloc(&img, types[t], w, h, d, ch, &lay), 0);
                assert_int_equal(tu_image_alloc(&mask, PIXSUM_U8, w, h, d, 1, NULL), 0);
                double lo = types[t] == PIXSUM_I16 ? -32768 : 0;
                double hi = types[t] == PIXSUM_U8 ? 256 : types[t] == PIXSUM_F32 ? 1 : lo + 65536;
                fill(r, &img.view, (content)what, lo, hi);
                fill(r, &mask.view, RANDOM, 0, 2);
                pixsum_hist_spec spec = {0};
                spec.bins = tu_between(r, 1, 300);
                spec.lo = lo;
                spec.hi = hi;
                spec.mask = tu_below(r, 4) ? &mask.view : NULL;
                char what_s[80];
                snprintf(what_s, sizeof what_s, "%s %s %s%s", pixsum_type_name(types[t]),
                         content_name[what], spec.mask ? "masked" : "unmasked",
                         tile ? " tile 5, 3 queries" : "");
                check_both(&img.view, &spec, what_s);
                tu_image_free(&img);
                tu_image_free(&mask);
            }
    }
    unsetenv("PIXSUM_GL_TILE");
    unsetenv("PIXSUM_GL_QUERIES");
}

/* ---- 16-bit ------------------------------------------------------------ */

static void test_u16_i16(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    static const pixsum_type types[] = {PIXSUM_U16, PIXSUM_I16};
    for (int t = 0; t < 2; t++)
        for (int what = 0; what < N_CONTENT; what++)
            for (int rep = 0; rep < 3; rep++) {
                size_t w = tu_dim(r, 90), h = tu_dim(r, 40), ch = tu_between(r, 1, 4);
                tu_layout lay = tu_random_layout(r);
                tu_image img;
                assert_int_equal(tu_image_alloc(&img, types[t], w, h, 1, ch, &lay), 0);
                double tmin = (double)tu_type_min(types[t]), tmax = (double)tu_type_max(types[t]);
                if (rep == 2)
                    tu_fill_random(r, &img.view, TU_FILL_MIXED); /* extremes */
                else
                    fill(r, &img.view, (content)what, tmin, tmax + 1);
                pixsum_hist_spec spec = {0};
                spec.bins = (size_t[]){1, 7, 256, 1000, 4096}[tu_below(r, 5)];
                if (rep == 1) { /* a range inside the type: below and above */
                    spec.lo = tmin + (double)tu_below(r, 30000);
                    spec.hi = spec.lo + 1 + (double)tu_below(r, 30000);
                }
                char what_s[64];
                snprintf(what_s, sizeof what_s, "%s %s rep %d", pixsum_type_name(types[t]),
                         content_name[what], rep);
                check_both(&img.view, &spec, what_s);
                tu_image_free(&img);
            }
    /* the type's full resolution: 65536 bins (one pass per bin, so the pool of
     * query names is read back and reused 64 times per channel) */
    tu_image img;
    assert_int_equal(tu_image_alloc(&img, PIXSUM_U16, 13, 5, 1, 1, NULL), 0);
    fill(r, &img.view, RANDOM, 0, 65536);
    pixsum_hist_spec spec = {0};
    spec.bins = 65536;
    check_both(&img.view, &spec, "u16 65536 bins");
    tu_image_free(&img);
}

/* ---- f32 --------------------------------------------------------------- */

/* f32 with special values; gl.perbin must match, gl.depth must match or refuse
 * with PIXSUM_ERR_UNSUPPORTED (never wrong counts). Returns the refusals. */
static int f32_case(tu_rng *r, const pixsum_hist_spec *spec, content what, double lo,
                    double hi, int specials)
{
    size_t w = tu_dim(r, 70), h = tu_dim(r, 30), ch = tu_between(r, 1, 3);
    tu_layout lay = tu_random_layout(r);
    tu_image img;
    assert_int_equal(tu_image_alloc(&img, PIXSUM_F32, w, h, 1, ch, &lay), 0);
    fill(r, &img.view, what, lo, hi);
    if (specials) {
        static const float special[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f,
                                        1e-45f, -1e-45f, 1.17549435e-38f, 3.4e38f, -3.4e38f};
        for (size_t i = 0; i < w * h / 4 + 1; i++)
            tu_set_f(&img.view, tu_below(r, w), tu_below(r, h), 0, tu_below(r, ch),
                     special[tu_below(r, sizeof special / sizeof special[0])]);
    }
    int refused = 0;
    char what_s[96];
    snprintf(what_s, sizeof what_s, "f32 %s [%g, %g) %zu bins", content_name[what], spec->lo,
             spec->hi, spec->bins);
    int st = compare("gl.perbin", &img.view, spec, what_s);
    if (st != PIXSUM_OK)
        fail_msg("gl.perbin %s: %s", what_s, pixsum_last_error());
    st = compare("gl.depth", &img.view, spec, what_s);
    if (st != PIXSUM_OK) {
        if (st != PIXSUM_ERR_UNSUPPORTED)
            fail_msg("gl.depth %s: status %d %s", what_s, st, pixsum_last_error());
        refused = 1;
    }
    tu_image_free(&img);
    return refused;
}

static void test_f32(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    /* the depth method must take these (one side of 0: one depth pass; both
     * sides: one pass per sign) */
    static const double ranges[][2] = {{0, 1},       {0, 255},    {0, 65535}, {-1, 0},
                                       {0.25, 0.75}, {1000, 1e6}, {-5e3, -1}, {0, 1e-30},
                                       {-1, 1},      {-100, 156}, {-1e-3, 5}};
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        for (int what = 0; what < N_CONTENT; what++) {
            pixsum_hist_spec spec = {0};
            spec.bins = (size_t[]){1, 16, 100, 256, 1000}[tu_below(r, 5)];
            spec.lo = ranges[i][0];
            spec.hi = ranges[i][1];
            double pad = (spec.hi - spec.lo) * 0.1;
            int refused = f32_case(r, &spec, (content)what, spec.lo - pad, spec.hi + pad,
                                   what == RANDOM);
            if (refused)
                fail_msg("gl.depth refused f32 [%g, %g) with %zu bins: %s", spec.lo, spec.hi,
                         spec.bins, pixsum_last_error());
        }
    /* the data-range default (bins 0, no range), and 65536 bins across 0 */
    pixsum_hist_spec def = {0};
    assert_int_equal(f32_case(r, &def, NATURAL, -3, 7, 0), 0);
    pixsum_hist_spec wide = {0};
    wide.bins = 65536;
    wide.lo = -2;
    wide.hi = 3;
    assert_int_equal(f32_case(r, &wide, NATURAL, -2.5, 3.5, 1), 0);
    /* edges among the denormal floats: a flush-to-zero GPU would merge them, so
     * gl.depth refuses and says why (gl.perbin counts them) */
    pixsum_hist_spec tiny = {0};
    tiny.bins = 65536;
    tiny.lo = 0;
    tiny.hi = 1e-36;
    assert_int_equal(f32_case(r, &tiny, RANDOM, 0, 1.2e-36, 0), 1);
    assert_non_null(strstr(pixsum_last_error(), "cannot be told apart"));
    /* random ranges: match, never refuse */
    for (int i = 0; i < 12; i++) {
        pixsum_hist_spec spec = {0};
        spec.bins = tu_between(r, 1, 300);
        spec.lo = (tu_unit(r) - 0.5) * 200;
        spec.hi = spec.lo + tu_unit(r) * 300 + 1e-3;
        if (f32_case(r, &spec, (content)(i % N_CONTENT), spec.lo - 10, spec.hi + 10, i % 2))
            fail_msg("gl.depth refused f32 [%g, %g) with %zu bins: %s", spec.lo, spec.hi,
                     spec.bins, pixsum_last_error());
    }
}

/* ---- refusals ----------------------------------------------------------- */

static void test_refusals(void **state)
{
    (void)state;
    static const pixsum_type types[] = {PIXSUM_I32, PIXSUM_F64};
    for (int t = 0; t < 2; t++) {
        tu_image img;
        assert_int_equal(tu_image_alloc(&img, types[t], 9, 4, 1, 1, NULL), 0);
        fill(tu_global_rng(), &img.view, RANDOM, 0, 100);
        for (int m = 0; m < N_GL; m++) {
            assert_int_equal(compare(gl_methods[m], &img.view, NULL, "refused type"),
                             PIXSUM_ERR_UNSUPPORTED);
            assert_non_null(strstr(pixsum_last_error(), "u8, u16, i16 and f32"));
        }
        tu_image_free(&img);
    }
    tu_image img;
    assert_int_equal(tu_image_alloc(&img, PIXSUM_U16, 9, 4, 1, 1, NULL), 0);
    fill(tu_global_rng(), &img.view, RANDOM, 0, 65536);
    pixsum_hist_spec spec = {0};
    spec.bins = 65537;
    for (int m = 0; m < N_GL; m++) {
        assert_int_equal(compare(gl_methods[m], &img.view, &spec, "too many bins"),
                         PIXSUM_ERR_UNSUPPORTED);
        assert_non_null(strstr(pixsum_last_error(), "at most 65536 bins"));
    }
    tu_image_free(&img);
}

/* ---- threads ----------------------------------------------------------- */

typedef struct thread_job {
    tu_image img;
    pixsum_hist_spec spec;
    const char *method;
    uint64_t want[256], got[256];
    int status;
} thread_job;

static void *thread_main(void *arg)
{
    thread_job *j = arg;
    pixsum_ctx *ctx = pixsum_ctx_new();
    j->status = -1;
    if (!ctx)
        return NULL;
    for (int rep = 0; rep < 4; rep++) {
        pixsum_ctx_set_method(ctx, j->method);
        j->status = pixsum_histogram(ctx, &j->img.view, &j->spec, j->got, 256, NULL);
        if (j->status != PIXSUM_OK || memcmp(j->got, j->want, sizeof j->want) != 0) {
            if (j->status == PIXSUM_OK)
                j->status = -2;
            break;
        }
    }
    pixsum_ctx_free(ctx);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    enum { N = 4 };
    thread_job jobs[N];
    pthread_t tid[N];
    pixsum_ctx *ref = pixsum_ctx_new();
    assert_non_null(ref);
    assert_int_equal(pixsum_ctx_set_method(ref, "hist.scalar"), PIXSUM_OK);
    for (int i = 0; i < N; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        assert_int_equal(tu_image_alloc(&jobs[i].img, PIXSUM_U8, 40 + (size_t)i, 31, 1, 1, NULL),
                         0);
        fill(tu_global_rng(), &jobs[i].img.view, (content)(i % N_CONTENT), 0, 256);
        jobs[i].spec.bins = 256;
        jobs[i].method = gl_methods[i % N_GL];
        assert_int_equal(pixsum_histogram(ref, &jobs[i].img.view, &jobs[i].spec, jobs[i].want,
                                          256, NULL),
                         PIXSUM_OK);
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_create(&tid[i], NULL, thread_main, &jobs[i]), 0);
    for (int i = 0; i < N; i++) {
        pthread_join(tid[i], NULL);
        if (jobs[i].status != PIXSUM_OK)
            fail_msg("thread %d (%s): status %d", i, jobs[i].method, jobs[i].status);
        tu_image_free(&jobs[i].img);
    }
    pixsum_ctx_free(ref);
}

/* ---- the failure path ---------------------------------------------------- */

static void test_unavailable(void **state)
{
    (void)state;
    tu_image img;
    assert_int_equal(tu_image_alloc(&img, PIXSUM_U8, 17, 9, 1, 1, NULL), 0);
    fill(tu_global_rng(), &img.view, RANDOM, 0, 256);
    for (int rep = 0; rep < 2; rep++) /* the failure is remembered: same answer again */
        for (int m = 0; m < N_GL; m++) {
            int st = compare(gl_methods[m], &img.view, NULL, "no context");
            if (st != PIXSUM_ERR_UNAVAILABLE)
                fail_msg("%s without a context: status %d (%s)", gl_methods[m], st,
                         pixsum_last_error());
            print_message("%s: %s\n", gl_methods[m], pixsum_last_error());
        }
    /* the registry's flag is not stale once a creation has failed, and the CPU
     * methods are unaffected */
    assert_int_equal(compare("hist.sub", &img.view, NULL, "cpu"), PIXSUM_OK);
    tu_image_free(&img);
}

/* A skip, or with PIXSUM_TEST_GL_REQUIRE=1 (set by .ci/run, whose machine has
 * Mesa's llvmpipe from the project's packages) a failure: GL that silently
 * stopped working must not pass as "skipped". */
static int skip_or_fail(const char *why)
{
    const char *require = getenv("PIXSUM_TEST_GL_REQUIRE");
    if (require && strcmp(require, "1") == 0) {
        printf("test_gl_hist: FAILED: GL required (PIXSUM_TEST_GL_REQUIRE=1) but %s\n", why);
        return 1;
    }
    printf("test_gl_hist: skipped: %s\n", why);
    return 77;
}

int main(void)
{
    tu_init("test_gl_hist");
    const char *expect = getenv("PIXSUM_TEST_GL_EXPECT");
    int id = pixsum_method_find("gl.depth");
    if (id < 0)
        return skip_or_fail("no EGL/OpenGL display (library built without GL)");
    if (expect && strcmp(expect, "unavailable") == 0) {
        const struct CMUnitTest fail_tests[] = {cmocka_unit_test(test_unavailable)};
        return cmocka_run_group_tests(fail_tests, NULL, NULL);
    }
    /* one tiny call decides whether a context can be made here */
    uint8_t px = 7;
    uint64_t counts[256];
    pixsum_view v = pixsum_view_2d(&px, PIXSUM_U8, 1, 1, 1, 0);
    pixsum_ctx *ctx = pixsum_ctx_new();
    pixsum_ctx_set_method(ctx, "gl.depth");
    int st = pixsum_histogram(ctx, &v, NULL, counts, 256, NULL);
    pixsum_ctx_free(ctx);
    if (st == PIXSUM_ERR_UNAVAILABLE) {
        char why[512];
        snprintf(why, sizeof why, "no EGL/OpenGL display (%s)", pixsum_last_error());
        return skip_or_fail(why);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u8_shapes_strides_channels),
        cmocka_unit_test(test_u8_every_bin_count),
        cmocka_unit_test(test_masks_and_volumes),
        cmocka_unit_test(test_u16_i16),
        cmocka_unit_test(test_f32),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

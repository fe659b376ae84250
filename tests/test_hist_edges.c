/*
 * test_hist_edges.c - histograms over given edges (NumPy's bins=<array>,
 * closed last bin), weighted histograms, density and bin centres, the
 * equalisation with a bin count and of float images, and Otsu's result
 * (bin centre, constant images), each against a reference written from the
 * definitions of pixsum.h: a linear scan over the edges, sums of exact
 * weights, the scaled cumulative counts and a piecewise-linear interpolation
 * found by linear search; plus the refusals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pixsum.h"
#include "testutil.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static size_t rnd_between(size_t lo, size_t hi)
{
    return lo + (size_t)(rnd() % (hi - lo + 1));
}

/* Class of v by a linear scan over the edges: its bin, or bins + 0 (below),
 * + 1 (above), + 2 (NaN). */
static size_t ref_class(const double *e, size_t bins, int closed, double v)
{
    if (isnan(v))
        return bins + 2;
    for (size_t i = 0; i < bins; i++)
        if (e[i] <= v && (v < e[i + 1] || (closed && i == bins - 1 && v == e[bins])))
            return i;
    return v < e[0] ? bins : bins + 1;
}

static void store(pixsum_type t, void *row, size_t i, double v)
{
    switch (t) {
    case PIXSUM_U8: ((uint8_t *)row)[i] = (uint8_t)v; break;
    case PIXSUM_U16: ((uint16_t *)row)[i] = (uint16_t)v; break;
    case PIXSUM_I16: ((int16_t *)row)[i] = (int16_t)v; break;
    case PIXSUM_I32: ((int32_t *)row)[i] = (int32_t)v; break;
    case PIXSUM_F32: ((float *)row)[i] = (float)v; break;
    default: ((double *)row)[i] = v; break;
    }
}

static double load(pixsum_type t, const void *row, size_t i)
{
    switch (t) {
    case PIXSUM_U8: return ((const uint8_t *)row)[i];
    case PIXSUM_U16: return ((const uint16_t *)row)[i];
    case PIXSUM_I16: return ((const int16_t *)row)[i];
    case PIXSUM_I32: return ((const int32_t *)row)[i];
    case PIXSUM_F32: return ((const float *)row)[i];
    default: return ((const double *)row)[i];
    }
}

/* A value of type t: usually an edge, or next to one, else random in the
 * type's span; NaN and infinities for floats. */
static double sample_value(pixsum_type t, const double *e, size_t ne)
{
    double lo, hi;
    switch (t) {
    case PIXSUM_U8: lo = 0, hi = 255; break;
    case PIXSUM_U16: lo = 0, hi = 65535; break;
    case PIXSUM_I16: lo = -32768, hi = 32767; break;
    case PIXSUM_I32: lo = -2147483648.0, hi = 2147483647.0; break;
    default: lo = -1e6, hi = 1e6; break;
    }
    double v;
    unsigned k = (unsigned)(rnd() % 16);
    double edge = e[rnd() % ne];
    if (!isfinite(edge))
        edge = 0;
    if (k < 5)
        v = edge;
    else if (k < 7)
        v = nextafter(edge, INFINITY);
    else if (k < 9)
        v = nextafter(edge, -INFINITY);
    else if (k < 11)
        v = edge + (double)(rnd() % 3) - 1;
    else
        v = lo + (double)(rnd() % 100000) / 100000.0 * (hi - lo);
    if (t == PIXSUM_F32 || t == PIXSUM_F64) {
        if (k == 15 && rnd() % 2)
            return rnd() % 3 == 0 ? NAN : rnd() % 2 ? INFINITY : -INFINITY;
        return t == PIXSUM_F32 ? (double)(float)v : v;
    }
    v = floor(v);
    return v < lo ? lo : v > hi ? hi : v;
}

/* Random non-decreasing edges: duplicates, and -inf / +inf ends at times. */
static double *random_edges(pixsum_type t, size_t ne)
{
    double *e = malloc(ne * sizeof *e);
    double span = t == PIXSUM_U8 ? 256 : t == PIXSUM_F32 || t == PIXSUM_F64 ? 2e6 : 70000;
    double base = t == PIXSUM_U8 || t == PIXSUM_U16 ? 0 : -span / 2;
    for (size_t i = 0; i < ne; i++) {
        double v = base + (double)(rnd() % 1000000) / 1000000.0 * span;
        e[i] = rnd() % 3 ? floor(v) : v;
    }
    for (size_t i = 1; i < ne; i++) /* insertion sort */
        for (size_t j = i; j > 0 && e[j] < e[j - 1]; j--) {
            double x = e[j];
            e[j] = e[j - 1];
            e[j - 1] = x;
        }
    if (ne > 2 && rnd() % 4 == 0)
        e[1] = e[0]; /* an empty bin */
    if (rnd() % 5 == 0)
        e[0] = -INFINITY;
    if (rnd() % 5 == 0)
        e[ne - 1] = INFINITY;
    return e;
}

static const pixsum_type hist_types[] = {PIXSUM_U8, PIXSUM_U16, PIXSUM_I16,
                                         PIXSUM_I32, PIXSUM_F32, PIXSUM_F64};

static void test_edges_against_linear_scan(void **state)
{
    (void)state;
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_non_null(ctx);
    for (int iter = 0; iter < 120; iter++) {
        pixsum_type t = hist_types[iter % 6];
        size_t w, h;
        switch (iter % 5) {
        case 0: w = h = 1; break;
        case 1: w = rnd_between(1, 40), h = 1; break;
        case 2: w = 1, h = rnd_between(1, 40); break;
        default: w = rnd_between(1, 90) | 1, h = rnd_between(1, 600); break;
        }
        size_t ch = rnd_between(1, 4), ts = pixsum_type_size(t), pad = rnd_between(0, 3);
        size_t stride = (w * ch + pad) * ts, ne = rnd_between(2, 70);
        double *e = random_edges(t, ne);
        size_t bins = ne - 1;
        unsigned char *img = malloc(stride * h);
        uint8_t *mask = malloc(w * h);
        for (size_t y = 0; y < h; y++)
            for (size_t i = 0; i < w * ch; i++)
                store(t, img + y * stride, i, sample_value(t, e, ne));
        for (size_t i = 0; i < w * h; i++)
            mask[i] = (uint8_t)(rnd() % 3 != 0);
        pixsum_view v = pixsum_view_2d(img, t, w, h, ch, (ptrdiff_t)stride);
        pixsum_view mv = pixsum_view_2d(mask, PIXSUM_U8, w, h, 1, 0);
        int closed = (int)(rnd() % 2), masked = (int)(rnd() % 2);
        /* reference */
        uint64_t *want = calloc(ch * (bins + 3), sizeof *want);
        uint64_t pixels = 0;
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w; x++) {
                if (masked && !mask[y * w + x])
                    continue;
                pixels++;
                for (size_t c = 0; c < ch; c++)
                    want[c * (bins + 3) +
                         ref_class(e, bins, closed, load(t, img + y * stride, x * ch + c))]++;
            }
        pixsum_hist_edges_spec es = {e, ne, closed ? PIXSUM_HIST_CLOSED_LAST : 0u,
                                     masked ? &mv : NULL, NULL};
        uint64_t *got = malloc(ch * bins * sizeof *got);
        for (int threads = 1; threads <= 3; threads += 2) {
            assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, threads), PIXSUM_OK);
            pixsum_hist_info info;
            memset(got, 0xAB, ch * bins * sizeof *got);
            int st = pixsum_histogram_edges(ctx, &v, &es, got, ch * bins, &info);
            if (st != PIXSUM_OK)
                fail_msg("iter %d: %s", iter, pixsum_last_error());
            assert_int_equal(info.bins, bins);
            assert_int_equal(info.channels, ch);
            assert_int_equal(info.pixels, pixels);
            for (size_t c = 0; c < ch; c++) {
                const uint64_t *r = want + c * (bins + 3);
                uint64_t in_range = 0;
                for (size_t i = 0; i < bins; i++) {
                    if (got[c * bins + i] != r[i])
                        fail_msg("iter %d (%s %zux%zu x%zu closed %d): channel %zu bin %zu: "
                                 "%llu, want %llu", iter, pixsum_type_name(t), w, h, ch,
                                 closed, c, i, (unsigned long long)got[c * bins + i],
                                 (unsigned long long)r[i]);
                    in_range += r[i];
                }
                assert_int_equal(info.in_range[c], in_range);
                assert_int_equal(info.below[c], r[bins]);
                assert_int_equal(info.above[c], r[bins + 1]);
                assert_int_equal(info.nan[c], r[bins + 2]);
            }
        }
        free(got);
        free(want);
        free(e);
        free(img);
        free(mask);
    }
    pixsum_ctx_free(ctx);
}

/* With the library's own uniform edges, the edge path equals the fast path. */
static void test_uniform_edges_equal_histogram(void **state)
{
    (void)state;
    for (int iter = 0; iter < 36; iter++) {
        pixsum_type t = hist_types[iter % 6];
        size_t w = rnd_between(1, 120), h = rnd_between(1, 50), ch = rnd_between(1, 3);
        size_t ts = pixsum_type_size(t);
        unsigned char *img = malloc(w * h * ch * ts);
        double probe[2] = {-300, 70000};
        for (size_t i = 0; i < w * h * ch; i++)
            store(t, img, i, sample_value(t, probe, 2));
        pixsum_view v = pixsum_view_2d(img, t, w, h, ch, 0);
        pixsum_hist_spec spec = {0};
        spec.bins = rnd_between(1, 300);
        if (iter % 2) {
            spec.lo = -250.5;
            spec.hi = 1000.25;
        }
        pixsum_hist_info info, info2;
        assert_int_equal(pixsum_hist_resolve(&v, &spec, &info), PIXSUM_OK);
        size_t bins = info.bins, n = bins * ch;
        double *e = malloc((bins + 1) * sizeof *e);
        for (size_t i = 0; i <= bins; i++)
            e[i] = pixsum_hist_edge(bins, info.lo, info.hi, i);
        spec.bins = bins;
        spec.lo = info.lo;
        spec.hi = info.hi;
        uint64_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        assert_int_equal(pixsum_histogram(NULL, &v, &spec, a, n, &info), PIXSUM_OK);
        pixsum_hist_edges_spec es = {e, bins + 1, 0, NULL, NULL};
        assert_int_equal(pixsum_histogram_edges(NULL, &v, &es, b, n, &info2), PIXSUM_OK);
        assert_memory_equal(a, b, n * sizeof *a);
        assert_memory_equal(info.below, info2.below, sizeof info.below);
        assert_memory_equal(info.above, info2.above, sizeof info.above);
        assert_memory_equal(info.nan, info2.nan, sizeof info.nan);
        free(a);
        free(b);
        free(e);
        free(img);
    }
}

static void test_weighted_sums(void **state)
{
    (void)state;
    pixsum_ctx *ctx = pixsum_ctx_new();
    for (int iter = 0; iter < 40; iter++) {
        pixsum_type t = hist_types[iter % 6];
        size_t w = rnd_between(1, 200), h = rnd_between(1, 400), ch = rnd_between(1, 4);
        size_t ts = pixsum_type_size(t), ne = rnd_between(2, 40), bins = ne - 1;
        double *e = random_edges(t, ne);
        unsigned char *img = malloc(w * h * ch * ts);
        for (size_t i = 0; i < w * h * ch; i++)
            store(t, img, i, sample_value(t, e, ne));
        int per_sample = (int)(rnd() % 2);
        size_t wch = per_sample ? ch : 1;
        /* small integers: every sum is exact, so any order gives the same */
        double *wt = malloc(w * h * wch * sizeof *wt);
        float *wf = malloc(w * h * wch * sizeof *wf);
        for (size_t i = 0; i < w * h * wch; i++) {
            wt[i] = (double)(int)(rnd() % 2001) - 1000;
            wf[i] = (float)((double)(rnd() % 1000) / 7.0);
        }
        pixsum_view v = pixsum_view_2d(img, t, w, h, ch, 0);
        pixsum_view wv = pixsum_view_2d(wt, PIXSUM_F64, w, h, wch, 0);
        pixsum_view fv = pixsum_view_2d(wf, PIXSUM_F32, w, h, wch, 0);
        double *want = calloc(ch * (bins + 3), sizeof *want);
        for (size_t p = 0; p < w * h; p++)
            for (size_t c = 0; c < ch; c++)
                want[c * (bins + 3) + ref_class(e, bins, 0, load(t, img, p * ch + c))] +=
                    wt[per_sample ? p * ch + c : p];
        pixsum_hist_edges_spec es = {e, ne, 0, NULL, &wv};
        double *got = malloc(ch * bins * sizeof *got), *g1 = malloc(ch * bins * sizeof *g1);
        pixsum_hist_info info;
        assert_int_equal(pixsum_histogram_weighted(ctx, &v, &es, got, ch * bins, &info),
                         PIXSUM_OK);
        for (size_t c = 0; c < ch; c++)
            for (size_t i = 0; i < bins; i++)
                assert_true(got[c * bins + i] == want[c * (bins + 3) + i]);
        assert_int_equal(info.pixels, w * h);
        /* inexact float weights: the same bits whatever the threads */
        es.weights = &fv;
        pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, 1);
        assert_int_equal(pixsum_histogram_weighted(ctx, &v, &es, g1, ch * bins, NULL), PIXSUM_OK);
        pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, 4);
        assert_int_equal(pixsum_histogram_weighted(ctx, &v, &es, got, ch * bins, &info),
                         PIXSUM_OK);
        assert_memory_equal(g1, got, ch * bins * sizeof *got);
        /* no weights: the counts as doubles */
        es.weights = NULL;
        uint64_t *cnt = malloc(ch * bins * sizeof *cnt);
        assert_int_equal(pixsum_histogram_weighted(ctx, &v, &es, got, ch * bins, NULL), PIXSUM_OK);
        assert_int_equal(pixsum_histogram_edges(ctx, &v, &es, cnt, ch * bins, NULL), PIXSUM_OK);
        for (size_t i = 0; i < ch * bins; i++)
            assert_true(got[i] == (double)cnt[i]);
        /* density: integrates to 1 over the finite-width bins holding counts */
        pixsum_hist_info ci = {0};
        ci.bins = bins;
        ci.channels = ch;
        double *dens = malloc(ch * bins * sizeof *dens);
        assert_int_equal(pixsum_hist_density(&ci, e, cnt, NULL, dens), PIXSUM_OK);
        for (size_t c = 0; c < ch; c++) {
            uint64_t total = 0;
            for (size_t i = 0; i < bins; i++)
                total += cnt[c * bins + i];
            for (size_t i = 0; i < bins; i++) {
                long double width = (long double)e[i + 1] - e[i];
                long double ref = (long double)cnt[c * bins + i] / width / (long double)total;
                double d = dens[c * bins + i];
                if (isnan((double)ref) || isinf((double)ref))
                    assert_true(isnan(d) || isinf(d));
                else
                    assert_true(fabsl(d - ref) <= fabsl(ref) * 4 * DBL_EPSILON);
            }
        }
        free(dens);
        free(cnt);
        free(got);
        free(g1);
        free(want);
        free(wt);
        free(wf);
        free(e);
        free(img);
    }
    pixsum_ctx_free(ctx);
}

static void test_centers_and_density_uniform(void **state)
{
    (void)state;
    pixsum_hist_info info = {0};
    info.bins = 7;
    info.channels = 1;
    info.lo = -3.5;
    info.hi = 11;
    double c[7], d[7];
    assert_int_equal(pixsum_hist_centers(&info, NULL, 0, c), PIXSUM_OK);
    for (size_t i = 0; i < 7; i++) {
        long double a = tu_hist_edge(7, -3.5, 11, i), b = tu_hist_edge(7, -3.5, 11, i + 1);
        assert_true(c[i] == (double)((a + b) / 2));
    }
    double big[3] = {-DBL_MAX, DBL_MAX * 0.5, DBL_MAX};
    pixsum_hist_info two = {0};
    two.bins = 2;
    two.channels = 1;
    assert_int_equal(pixsum_hist_centers(&two, big, 0, c), PIXSUM_OK);
    assert_true(isfinite(c[0]) && isfinite(c[1]) && c[1] == DBL_MAX * 0.75);
    double sums[7] = {1, 0, 2.5, 0, 0, 0, 0.5};
    assert_int_equal(pixsum_hist_density(&info, NULL, NULL, sums, d), PIXSUM_OK);
    long double integral = 0;
    for (size_t i = 0; i < 7; i++)
        integral += (long double)d[i] * (tu_hist_edge(7, -3.5, 11, i + 1) - tu_hist_edge(7, -3.5, 11, i));
    assert_true(fabsl(integral - 1) < 1e-14L);
    /* f32 edges and centres: each edge rounded once, the centre in f32 */
    double e32[8];
    assert_int_equal(pixsum_hist_uniform_edges(7, -3.5, 11, PIXSUM_HIST_F32_EDGES, e32),
                     PIXSUM_OK);
    assert_int_equal(pixsum_hist_centers(&info, e32, PIXSUM_HIST_F32_EDGES, c), PIXSUM_OK);
    for (size_t i = 0; i < 7; i++) {
        float a = (float)tu_hist_edge(7, -3.5, 11, i), b = (float)tu_hist_edge(7, -3.5, 11, i + 1);
        assert_true(e32[i] == (double)a && e32[i + 1] == (double)b);
        volatile float s = a + b;
        assert_true(c[i] == (double)(s / 2.0f));
    }
    assert_int_equal(pixsum_hist_uniform_edges(7, 1, 1, 0, e32), PIXSUM_ERR_INVALID_ARG);
    assert_int_equal(pixsum_hist_uniform_edges(7, 0, 1, 64, e32), PIXSUM_ERR_INVALID_ARG);
    assert_int_equal(pixsum_hist_density(&info, NULL, NULL, NULL, d), PIXSUM_ERR_NULL);
    info.bins = 0;
    assert_int_equal(pixsum_hist_density(&info, NULL, NULL, sums, d), PIXSUM_ERR_INVALID_ARG);
    assert_int_equal(pixsum_hist_centers(&info, NULL, 0, c), PIXSUM_ERR_INVALID_ARG);
}

static void test_edges_refusals(void **state)
{
    (void)state;
    uint8_t img[12] = {0};
    uint64_t counts[8];
    double sums[8];
    pixsum_view v = pixsum_view_2d(img, PIXSUM_U8, 4, 3, 1, 0);
    double e[4] = {0, 1, 2, 3};
    pixsum_hist_edges_spec es = {e, 4, 0, NULL, NULL};
    assert_int_equal(pixsum_histogram_edges(NULL, &v, &es, counts, 8, NULL), PIXSUM_OK);
    assert_int_equal(pixsum_histogram_edges(NULL, NULL, &es, counts, 8, NULL), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_histogram_edges(NULL, &v, NULL, counts, 8, NULL), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_histogram_edges(NULL, &v, &es, NULL, 8, NULL), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_histogram_edges(NULL, &v, &es, counts, 2, NULL), PIXSUM_ERR_BAD_SHAPE);
    es.n_edges = 1;
    assert_int_equal(pixsum_histogram_edges(NULL, &v, &es, counts, 8, NULL),
                     PIXSUM_ERR_INVALID_ARG);
    es.n_edges = 4;
    e[2] = NAN;
    assert_int_equal(pixsum_histogram_edges(NULL, &v, &es, counts, 8, NULL),
                     PIXSUM_ERR_INVALID_ARG);
    e[2] = 0.5;
    assert_int_equal(pixsum_histogram_edges(NULL, &v, &es, counts, 8, NULL),
                     PIXSUM_ERR_INVALID_ARG);
    assert_non_null(strstr(pixsum_last_error(), "decrease"));
    e[2] = 2;
    es.flags = 8;
    assert_int_equal(pixsum_histogram_edges(NULL, &v, &es, counts, 8, NULL),
                     PIXSUM_ERR_INVALID_ARG);
    es.flags = 0;
    pixsum_view wv = pixsum_view_2d(sums, PIXSUM_F64, 4, 2, 1, 0); /* wrong height */
    es.weights = &wv;
    assert_int_equal(pixsum_histogram_edges(NULL, &v, &es, counts, 8, NULL),
                     PIXSUM_ERR_INVALID_ARG);
    assert_int_equal(pixsum_histogram_weighted(NULL, &v, &es, sums, 8, NULL),
                     PIXSUM_ERR_BAD_SHAPE);
    uint64_t w64[12];
    pixsum_view bad = pixsum_view_2d(w64, PIXSUM_U64, 4, 3, 1, 0);
    es.weights = &bad;
    assert_int_equal(pixsum_histogram_weighted(NULL, &v, &es, sums, 8, NULL),
                     PIXSUM_ERR_BAD_TYPE);
    es.weights = NULL;
    /* counts inside the image */
    uint64_t big[16] = {0};
    pixsum_view over = pixsum_view_2d(big, PIXSUM_U8, 32, 1, 1, 0);
    assert_int_equal(pixsum_histogram_edges(NULL, &over, &es, big, 3, NULL),
                     PIXSUM_ERR_ALIASING);
    /* a mask of another shape */
    uint8_t m[6] = {1, 1, 1, 1, 1, 1};
    pixsum_view mv = pixsum_view_2d(m, PIXSUM_U8, 3, 2, 1, 0);
    es.mask = &mv;
    assert_int_equal(pixsum_histogram_edges(NULL, &v, &es, counts, 8, NULL),
                     PIXSUM_ERR_BAD_SHAPE);
    /* u64 images are not histogram inputs (u32 are: test_hist.c) */
    uint64_t u[4] = {0};
    pixsum_view uv = pixsum_view_2d(u, PIXSUM_U64, 4, 1, 1, 0);
    es.mask = NULL;
    assert_int_equal(pixsum_histogram_edges(NULL, &uv, &es, counts, 8, NULL),
                     PIXSUM_ERR_BAD_TYPE);
}

/* ---- equalisation ------------------------------------------------------ */

static void test_equalize_bins_integer(void **state)
{
    (void)state;
    for (int iter = 0; iter < 30; iter++) {
        pixsum_type t = iter % 2 ? PIXSUM_U16 : PIXSUM_U8;
        size_t levels = t == PIXSUM_U8 ? 256 : 65536;
        size_t w = rnd_between(1, 80), h = rnd_between(1, 40), ch = rnd_between(1, 3);
        size_t n = w * h * ch, ts = pixsum_type_size(t);
        size_t bins = iter % 5 == 0 ? 0 : rnd_between(1, iter % 3 ? 64 : 1000);
        unsigned char *img = malloc(n * ts), *out = malloc(n * ts), *ref = malloc(n * ts);
        for (size_t i = 0; i < n; i++)
            store(t, img, i, (double)(rnd() % (iter % 4 ? levels : 7)));
        pixsum_view v = pixsum_view_2d(img, t, w, h, ch, 0);
        pixsum_view o = pixsum_view_2d(out, t, w, h, ch, 0);
        assert_int_equal(pixsum_equalize_bins(NULL, &v, &o, NULL, bins), PIXSUM_OK);
        size_t nb = bins ? bins : levels;
        for (size_t c = 0; c < ch; c++) {
            /* per-bin counts by the definition of the bins */
            uint64_t *cnt = calloc(nb, sizeof *cnt);
            for (size_t p = 0; p < w * h; p++)
                cnt[tu_hist_bin(load(t, img, p * ch + c), nb, 0, (double)levels)]++;
            uint64_t total = 0, cmin = 0;
            for (size_t i = 0; i < nb; i++) {
                total += cnt[i];
                if (!cmin && total)
                    cmin = total;
            }
            for (size_t p = 0; p < w * h; p++) {
                double x = load(t, img, p * ch + c);
                size_t b = tu_hist_bin(x, nb, 0, (double)levels);
                uint64_t cum = 0;
                for (size_t i = 0; i <= b; i++)
                    cum += cnt[i];
                double want;
                if (total == cmin)
                    want = x;
                else if (cum <= cmin)
                    want = 0;
                else /* round half up of (cum - cmin) (L - 1) / (total - cmin), exact */
                    want = floor(((long double)(cum - cmin) * (levels - 1) * 2 +
                                  (total - cmin)) / (2.0L * (total - cmin)));
                store(t, ref, p * ch + c, want);
            }
            free(cnt);
        }
        if (memcmp(out, ref, n * ts) != 0)
            fail_msg("iter %d: %s %zux%zu x%zu, %zu bins differ from the definition", iter,
                     pixsum_type_name(t), w, h, ch, bins);
        if (bins == 0 || bins == levels) { /* the same as pixsum_equalize() */
            assert_int_equal(pixsum_equalize(NULL, &v, &o, NULL), PIXSUM_OK);
            assert_memory_equal(out, ref, n * ts);
        }
        free(img);
        free(out);
        free(ref);
    }
}

/* scikit-image's equalize_hist from its definition: bins over [min, max]
 * (closed last), normalised cumulative counts, interpolated at the centres
 * (interval found by linear search); for f32 images NumPy's float32 edges,
 * centres and (scikit-image) cumulative values. */
static double ref_float_map(const double *cdf, const double *centre, size_t bins, double v)
{
    if (isnan(v))
        return v;
    if (v <= centre[0])
        return cdf[0];
    if (v >= centre[bins - 1])
        return cdf[bins - 1];
    size_t j = 0;
    while (!(centre[j] <= v && v < centre[j + 1]))
        j++;
    if (v == centre[j])
        return cdf[j];
    double slope = (cdf[j + 1] - cdf[j]) / (centre[j + 1] - centre[j]);
    double part = slope * (v - centre[j]);
    return part + cdf[j];
}

static void test_equalize_float(void **state)
{
    (void)state;
    for (int iter = 0; iter < 30; iter++) {
        pixsum_type t = iter % 2 ? PIXSUM_F32 : PIXSUM_F64, ot = iter % 3 ? t : PIXSUM_F64;
        size_t w = rnd_between(1, 60), h = rnd_between(1, 30), ch = rnd_between(1, 2);
        size_t n = w * h * ch, bins = iter % 4 ? rnd_between(1, 300) : 0;
        size_t nb = bins ? bins : 256;
        unsigned char *img = malloc(n * pixsum_type_size(t));
        double *got = malloc(n * sizeof *got);
        for (size_t i = 0; i < n; i++) {
            double x = iter % 7 == 0 ? 0.25 : (double)(rnd() % 100000) / 99999.0;
            if (iter % 5 == 1 && i % 11 == 3)
                x = i % 2 ? NAN : -INFINITY;
            store(t, img, i, x);
        }
        pixsum_view v = pixsum_view_2d(img, t, w, h, ch, 0);
        pixsum_view o = pixsum_view_2d(got, ot, w, h, ch, 0);
        int st = pixsum_equalize_bins(NULL, &v, &o, NULL, bins);
        if (st != PIXSUM_OK)
            fail_msg("iter %d: %s", iter, pixsum_last_error());
        for (size_t c = 0; c < ch; c++) {
            double mn = INFINITY, mx = -INFINITY;
            for (size_t p = 0; p < w * h; p++) {
                double x = load(t, img, p * ch + c);
                if (isfinite(x)) {
                    mn = fmin(mn, x);
                    mx = fmax(mx, x);
                }
            }
            if (mn == mx)
                mn -= 0.5, mx += 0.5;
            double *e = malloc((nb + 1) * sizeof *e), *cdf = malloc(nb * sizeof *cdf);
            double *centre = malloc(nb * sizeof *centre);
            uint64_t *cnt = calloc(nb + 3, sizeof *cnt), run = 0, total = 0;
            int f32 = t == PIXSUM_F32; /* NumPy's float32 edges, centres and cdf */
            for (size_t i = 0; i <= nb; i++)
                e[i] = f32 ? (double)(float)tu_hist_edge(nb, mn, mx, i) : tu_hist_edge(nb, mn, mx, i);
            for (size_t p = 0; p < w * h; p++)
                cnt[ref_class(e, nb, 1, load(t, img, p * ch + c))]++;
            for (size_t i = 0; i < nb; i++)
                total += cnt[i];
            for (size_t i = 0; i < nb; i++) {
                run += cnt[i];
                cdf[i] = (double)run / (double)total;
                centre[i] = (e[i] + e[i + 1]) / 2.0;
                if (f32) {
                    volatile float fs = (float)e[i] + (float)e[i + 1];
                    cdf[i] = (double)(float)cdf[i];
                    centre[i] = (double)(fs / 2.0f);
                }
            }
            for (size_t p = 0; p < w * h; p++) {
                double want = ref_float_map(cdf, centre, nb, load(t, img, p * ch + c));
                double g = ot == PIXSUM_F32 ? (double)((float *)got)[p * ch + c]
                                            : got[p * ch + c];
                if (ot == PIXSUM_F32)
                    want = (double)(float)want;
                if (!(g == want || (isnan(g) && isnan(want))))
                    fail_msg("iter %d pixel %zu channel %zu: %.17g, want %.17g", iter, p, c, g,
                             want);
            }
            free(e);
            free(cdf);
            free(centre);
            free(cnt);
        }
        free(img);
        free(got);
    }
}

static void test_equalize_int_to_float_and_refusals(void **state)
{
    (void)state;
    uint8_t img[6] = {5, 9, 9, 200, 5, 7};
    uint8_t m[6] = {0, 1, 1, 1, 0, 1};
    double out[6];
    pixsum_view v = pixsum_view_2d(img, PIXSUM_U8, 3, 2, 1, 0);
    pixsum_view o = pixsum_view_2d(out, PIXSUM_F64, 3, 2, 1, 0);
    pixsum_view mv = pixsum_view_2d(m, PIXSUM_U8, 3, 2, 1, 0);
    assert_int_equal(pixsum_equalize_bins(NULL, &v, &o, NULL, 0), PIXSUM_OK);
    const double want[6] = {2 / 6.0, 5 / 6.0, 5 / 6.0, 1.0, 2 / 6.0, 3 / 6.0};
    for (int i = 0; i < 6; i++)
        assert_true(out[i] == want[i]);
    /* masked: selected 9, 9, 200, 7; the 5s below the smallest give F(7) */
    assert_int_equal(pixsum_equalize_bins(NULL, &v, &o, &mv, 256), PIXSUM_OK);
    const double wm[6] = {0.25, 0.75, 0.75, 1.0, 0.25, 0.25};
    for (int i = 0; i < 6; i++)
        assert_true(out[i] == wm[i]);
    assert_int_equal(pixsum_equalize_bins(NULL, &v, &o, NULL, 16), PIXSUM_ERR_INVALID_ARG);
    pixsum_view o16 = pixsum_view_2d(out, PIXSUM_U16, 3, 2, 1, 0);
    assert_int_equal(pixsum_equalize_bins(NULL, &v, &o16, NULL, 0), PIXSUM_ERR_BAD_TYPE);
    pixsum_view small = pixsum_view_2d(out, PIXSUM_F64, 2, 2, 1, 0);
    assert_int_equal(pixsum_equalize_bins(NULL, &v, &small, NULL, 0), PIXSUM_ERR_BAD_SHAPE);
    assert_int_equal(pixsum_equalize_bins(NULL, NULL, &o, NULL, 0), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_equalize_bins(NULL, &v, &o, NULL, PIXSUM_HIST_MAX_BINS + 1),
                     PIXSUM_ERR_INVALID_ARG);
    /* floats: no finite sample; an f64 output over the f32 input's memory */
    float f[4] = {NAN, INFINITY, NAN, -INFINITY};
    pixsum_view fv = pixsum_view_2d(f, PIXSUM_F32, 4, 1, 1, 0);
    pixsum_view fo = pixsum_view_2d(out, PIXSUM_F32, 4, 1, 1, 0);
    assert_int_equal(pixsum_equalize_bins(NULL, &fv, &fo, NULL, 0), PIXSUM_ERR_INVALID_ARG);
    f[1] = 0.5f;
    /* in place; one finite value 0.5: the range [0, 1], 0.5 is the edge of
     * bin 128, halfway between the centres of bins 127 (cdf 0) and 128 (1) */
    assert_int_equal(pixsum_equalize_bins(NULL, &fv, &fv, NULL, 0), PIXSUM_OK);
    assert_true(isnan(f[0]) && isnan(f[2]) && f[1] == 0.5f && f[3] == 0.0f);
    double d2[2] = {0.5, 0.25};
    pixsum_view dv = pixsum_view_2d(d2, PIXSUM_F64, 2, 1, 1, 0);
    pixsum_view alias = pixsum_view_2d((char *)d2 + 4, PIXSUM_F32, 2, 1, 1, 0);
    assert_int_equal(pixsum_equalize_bins(NULL, &dv, &alias, NULL, 0), PIXSUM_ERR_ALIASING);
}

/* ---- Otsu --------------------------------------------------------------- */

static void test_otsu_image(void **state)
{
    (void)state;
    /* constant images: their value, no error */
    uint8_t c8[12];
    memset(c8, 77, sizeof c8);
    pixsum_view v = pixsum_view_2d(c8, PIXSUM_U8, 4, 3, 1, 0);
    pixsum_otsu_result r;
    assert_int_equal(pixsum_otsu_image(NULL, &v, NULL, 0, &r), PIXSUM_OK);
    assert_true(r.constant == 1 && r.threshold == 77 && r.center == 77 && r.bin == 77);
    double thr;
    size_t bin;
    assert_int_equal(pixsum_otsu_threshold(NULL, &v, NULL, &thr, &bin), PIXSUM_OK);
    assert_true(thr == 77 && bin == 77);
    pixsum_hist_spec outside = {10, 100, 200, NULL};
    assert_int_equal(pixsum_otsu_image(NULL, &v, &outside, 0, &r), PIXSUM_OK);
    assert_true(r.constant == 1 && r.bin == SIZE_MAX && r.threshold == 77);
    double cd[3] = {-2.5, -2.5, -2.5};
    pixsum_view dv = pixsum_view_2d(cd, PIXSUM_F64, 3, 1, 1, 0);
    assert_int_equal(pixsum_otsu_image(NULL, &dv, NULL, PIXSUM_HIST_CLOSED_LAST, &r), PIXSUM_OK);
    assert_true(r.constant && r.threshold == -2.5);
    /* two values in one bin: not constant, no threshold */
    cd[1] = -2.25;
    pixsum_hist_spec one_bin = {4, -3, 5, NULL};
    assert_int_equal(pixsum_otsu_image(NULL, &dv, &one_bin, 0, &r), PIXSUM_ERR_INVALID_ARG);
    cd[1] = NAN; /* a NaN: not constant either */
    assert_int_equal(pixsum_otsu_image(NULL, &dv, &one_bin, 0, &r), PIXSUM_ERR_INVALID_ARG);
    /* centre and edges; closed last bin counts the maximum */
    double two[6] = {0, 0, 0, 10, 10, 1};
    pixsum_view tv = pixsum_view_2d(two, PIXSUM_F64, 6, 1, 1, 0);
    pixsum_hist_spec s = {4, 0, 10, NULL};
    assert_int_equal(pixsum_otsu_image(NULL, &tv, &s, PIXSUM_HIST_CLOSED_LAST, &r), PIXSUM_OK);
    assert_true(r.bin == 0 && r.lower == 0 && r.threshold == 2.5 && r.center == 1.25);
    assert_int_equal(r.info.in_range[0], 6);
    /* without the flag the 10s are above the range: only 0s and a 1 in bin 0 */
    assert_int_equal(pixsum_otsu_image(NULL, &tv, &s, 0, &r), PIXSUM_ERR_INVALID_ARG);
    assert_int_equal(pixsum_otsu_image(NULL, &tv, &s, 1, &r), PIXSUM_ERR_INVALID_ARG);
    assert_int_equal(pixsum_otsu_image(NULL, NULL, &s, 0, &r), PIXSUM_ERR_NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edges_against_linear_scan),
        cmocka_unit_test(test_uniform_edges_equal_histogram),
        cmocka_unit_test(test_weighted_sums),
        cmocka_unit_test(test_centers_and_density_uniform),
        cmocka_unit_test(test_edges_refusals),
        cmocka_unit_test(test_equalize_bins_integer),
        cmocka_unit_test(test_equalize_float),
        cmocka_unit_test(test_equalize_int_to_float_and_refusals),
        cmocka_unit_test(test_otsu_image),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_hist.c - histograms (pixsum.h section 8): counts of every method
 * bit-exact against a naive reference written here for every input type,
 * bin counts 1, 7, 256, 65536, default and explicit ranges, edge values
 * (exactly lo, exactly hi, the largest value below hi, NaN, +-inf), masks,
 * 1-4 channels, strides, 3-D volumes and 1x1 / 1xN / Nx1 shapes; relative
 * and cumulative forms; bad calls and their status codes.
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

#if defined(__unix__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "cpu/isa.h"
#include "hist/hist.h"
#include "pixsum.h"
#include "testutil.h"

/* ---- helpers ----------------------------------------------------------- */

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

/* An image with its own buffer; row_stride padded by `pad` bytes. */
typedef struct image {
    pixsum_view v;
    void *buf;
} image;

static image make_image(pixsum_type t, size_t w, size_t h, size_t d, size_t ch, size_t pad)
{
    image im;
    size_t row = w * ch * pixsum_type_size(t) + pad;
    im.buf = calloc(row * h * d + 1, 1);
    assert_non_null(im.buf);
    im.v = pixsum_view_3d(im.buf, t, w, h, d, ch, (ptrdiff_t)row, (ptrdiff_t)(row * h));
    return im;
}

static void *sample_ptr(const pixsum_view *v, size_t x, size_t y, size_t z, size_t c)
{
    return (char *)v->data + (ptrdiff_t)z * v->slice_stride + (ptrdiff_t)y * v->row_stride +
           (x * v->channels + c) * pixsum_type_size(v->type);
}

static double get(const pixsum_view *v, size_t x, size_t y, size_t z, size_t c)
{
    void *p = sample_ptr(v, x, y, z, c);
    switch (v->type) {
    case PIXSUM_U8: return *(uint8_t *)p;
    case PIXSUM_U16: return *(uint16_t *)p;
    case PIXSUM_I16: return *(int16_t *)p;
    case PIXSUM_I32: return *(int32_t *)p;
    case PIXSUM_U32: return *(uint32_t *)p;
    case PIXSUM_F32: return *(float *)p;
    default: return *(double *)p;
    }
}

static void set(const pixsum_view *v, size_t x, size_t y, size_t z, size_t c, double val)
{
    void *p = sample_ptr(v, x, y, z, c);
    switch (v->type) {
    case PIXSUM_U8: *(uint8_t *)p = (uint8_t)val; break;
    case PIXSUM_U16: *(uint16_t *)p = (uint16_t)val; break;
    case PIXSUM_I16: *(int16_t *)p = (int16_t)val; break;
    case PIXSUM_I32: *(int32_t *)p = (int32_t)val; break;
    case PIXSUM_U32: *(uint32_t *)p = (uint32_t)val; break;
    case PIXSUM_F32: *(float *)p = (float)val; break;
    default: *(double *)p = val; break;
    }
}

/* Random values: full range for integers, a mix with specials for floats. */
static double random_value(pixsum_type t)
{
    switch (t) {
    case PIXSUM_U8: return (double)(rnd() & 0xff);
    case PIXSUM_U16: return (double)(rnd() & 0xffff);
    case PIXSUM_I16: return (double)(int16_t)(rnd() & 0xffff);
    case PIXSUM_I32: {
        uint64_t k = rnd() % 8;
        if (k == 0)
            return (double)INT32_MIN;
        if (k == 1)
            return (double)INT32_MAX;
        return (double)(int32_t)(rnd() % 2001) - 1000;
    }
    default: {
        uint64_t k = rnd() % 32;
        if (k == 0)
            return NAN;
        if (k == 1)
            return INFINITY;
        if (k == 2)
            return -INFINITY;
        if (k == 3)
            return t == PIXSUM_F32 ? FLT_MAX : DBL_MAX;
        return ((double)(rnd() % 200001) - 100000.0) / 997.0;
    }
    }
}

static void fill_random(const pixsum_view *v)
{
    for (size_t z = 0; z < v->depth; z++)
        for (size_t y = 0; y < v->height; y++)
            for (size_t x = 0; x < v->width; x++)
                for (size_t c = 0; c < v->channels; c++)
                    set(v, x, y, z, c, random_value(v->type));
}

/* The reference: the documented formula, written independently of the library. */
typedef struct reference {
    uint64_t *counts;
    uint64_t below[4], above[4], nan[4], in_range[4], pixels;
} reference;

static reference naive(const pixsum_view *v, const pixsum_view *mask, size_t bins, double lo,
                       double hi)
{
    reference r;
    memset(&r, 0, sizeof r);
    r.counts = calloc(bins * v->channels, sizeof *r.counts);
    assert_non_null(r.counts);
    for (size_t z = 0; z < v->depth; z++)
        for (size_t y = 0; y < v->height; y++)
            for (size_t x = 0; x < v->width; x++) {
                if (mask && *(uint8_t *)sample_ptr(mask, x, y, z, 0) == 0)
                    continue;
                r.pixels++;
                for (size_t c = 0; c < v->channels; c++) {
                    double s = get(v, x, y, z, c);
                    if (isnan(s)) {
                        r.nan[c]++;
                    } else if (s < lo) {
                        r.below[c]++;
                    } else if (s >= hi) {
                        r.above[c]++;
                    } else {
                        size_t i = tu_hist_bin(s, bins, lo, hi);
                        r.counts[c * bins + i]++;
                        r.in_range[c]++;
                    }
                }
            }
    return r;
}

static const char *const methods[] = {"auto", "hist.scalar", "hist.sub", "hist.avx512",
                                      "hist.omp"};
#define N_METHODS (sizeof methods / sizeof methods[0])

/* True if the method exists and can run here. */
static int method_usable(const char *name)
{
    int id = pixsum_method_find(name);
    if (id < 0)
        return 0;
    if (id == 0)
        return 1;
    return pixsum_method_get(id)->available;
}

/* Runs every method on (v, spec) and compares with the reference. */
static void check_all_methods(const pixsum_view *v, const pixsum_hist_spec *spec)
{
    pixsum_hist_info want;
    assert_int_equal(pixsum_hist_resolve(v, spec, &want), PIXSUM_OK);
    reference ref = naive(v, spec ? spec->mask : NULL, want.bins, want.lo, want.hi);
    size_t n = want.bins * v->channels;
    uint64_t *got = malloc((n + 1) * sizeof *got);
    assert_non_null(got);
    pixsum_ctx *ctx = pixsum_ctx_new();
    for (size_t m = 0; m < N_METHODS; m++) {
        if (!method_usable(methods[m]))
            continue;
        int avx = strcmp(methods[m], "hist.avx512") == 0;
        if (avx && !(v->type == PIXSUM_I32 || v->type == PIXSUM_F32 || v->type == PIXSUM_F64 ||
                     v->type == PIXSUM_U8))
            continue; /* the method declines such jobs (tested below) */
        assert_int_equal(pixsum_ctx_set_method(ctx, methods[m]), PIXSUM_OK);
        for (int threads = 1; threads <= 2; threads++) {
            assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, threads), PIXSUM_OK);
            pixsum_hist_info info;
            got[n] = 0xdeadbeef;
            int st = pixsum_histogram(ctx, v, spec, got, n, &info);
            if (st != PIXSUM_OK)
                fail_msg("%s: %s", methods[m], pixsum_last_error());
            assert_int_equal(got[n], 0xdeadbeef); /* nothing written past n */
            if (memcmp(got, ref.counts, n * sizeof *got) != 0) {
                for (size_t i = 0; i < n; i++)
                    if (got[i] != ref.counts[i])
                        fail_msg("%s %s %zux%zux%zu x%zu bins %zu [%g,%g): bin %zu got %llu "
                                 "want %llu", methods[m], pixsum_type_name(v->type), v->width,
                                 v->height, v->depth, v->channels, want.bins, want.lo, want.hi,
                                 i, (unsigned long long)got[i],
                                 (unsigned long long)ref.counts[i]);
            }
            assert_int_equal(info.bins, want.bins);
            assert_int_equal(info.channels, v->channels);
            assert_true(info.lo == want.lo && info.hi == want.hi);
            assert_int_equal(info.pixels, ref.pixels);
            for (size_t c = 0; c < v->channels; c++) {
                assert_int_equal(info.below[c], ref.below[c]);
                assert_int_equal(info.above[c], ref.above[c]);
                assert_int_equal(info.nan[c], ref.nan[c]);
                assert_int_equal(info.in_range[c], ref.in_range[c]);
                assert_int_equal(info.below[c] + info.above[c] + info.nan[c] +
                                     info.in_range[c], ref.pixels);
            }
        }
    }
    pixsum_ctx_free(ctx);
    free(got);
    free(ref.counts);
}

static const pixsum_type types[] = {PIXSUM_U8, PIXSUM_U16, PIXSUM_I16,
                                    PIXSUM_I32, PIXSUM_F32, PIXSUM_F64};

/* ---- tests ------------------------------------------------------------- */

static void test_defaults_every_type(void **state)
{
    (void)state;
    for (size_t t = 0; t < 6; t++) {
        image im = make_image(types[t], 61, 17, 1, 1, 0);
        fill_random(&im.v);
        check_all_methods(&im.v, NULL);
        pixsum_hist_info info;
        assert_int_equal(pixsum_hist_resolve(&im.v, NULL, &info), PIXSUM_OK);
        if (types[t] == PIXSUM_U8)
            assert_true(info.bins == 256 && info.lo == 0 && info.hi == 256);
        if (types[t] == PIXSUM_U16)
            assert_true(info.bins == 65536 && info.lo == 0 && info.hi == 65536);
        if (types[t] == PIXSUM_I16)
            assert_true(info.bins == 65536 && info.lo == -32768 && info.hi == 32768);
        if (types[t] == PIXSUM_I32 || types[t] == PIXSUM_F32 || types[t] == PIXSUM_F64) {
            /* data range: every finite sample is in range */
            assert_int_equal(info.bins, 256);
            pixsum_hist_info got;
            uint64_t *h = calloc(256, sizeof *h);
            assert_int_equal(pixsum_histogram(NULL, &im.v, NULL, h, 256, &got), PIXSUM_OK);
            uint64_t neg_inf = 0, pos_inf = 0;
            for (size_t y = 0; y < 17; y++)
                for (size_t x = 0; x < 61; x++) {
                    double v = get(&im.v, x, y, 0, 0);
                    neg_inf += v == -INFINITY;
                    /* DBL_MAX has no double above it: documented to count as above */
                    pos_inf += v == INFINITY || v == DBL_MAX;
                }
            assert_int_equal(got.below[0], neg_inf);
            assert_int_equal(got.above[0], pos_inf);
            free(h);
        }
        free(im.buf);
    }
}

static void test_bin_counts_and_ranges(void **state)
{
    (void)state;
    const size_t bins[] = {1, 7, 256, 65536};
    for (size_t t = 0; t < 6; t++)
        for (size_t b = 0; b < 4; b++) {
            image im = make_image(types[t], 33, 9, 1, 1, 0);
            fill_random(&im.v);
            pixsum_hist_spec spec = {0};
            spec.bins = bins[b];
            check_all_methods(&im.v, &spec); /* default range */
            spec.lo = types[t] == PIXSUM_U8 ? 10 : -300.5;
            spec.hi = types[t] == PIXSUM_U8 ? 200.25 : 41000;
            check_all_methods(&im.v, &spec);
            free(im.buf);
        }
}

static void test_shapes_channels_strides(void **state)
{
    (void)state;
    for (int iter = 0; iter < 60; iter++) {
        pixsum_type t = types[iter % 6];
        size_t shape = (size_t)iter % 5;
        size_t w = shape == 0 ? 1 : shape == 1 ? 1 : rnd_between(1, 700);
        size_t h = shape == 0 ? 1 : shape == 2 ? 1 : rnd_between(1, 23);
        size_t d = iter % 7 == 0 ? rnd_between(2, 3) : 1;
        size_t ch = rnd_between(1, 4);
        size_t pad = rnd_between(0, 3) * pixsum_type_size(t);
        image im = make_image(t, w, h, d, ch, pad);
        fill_random(&im.v);
        pixsum_hist_spec spec = {0};
        if (iter % 2) {
            spec.bins = rnd_between(1, 300);
            spec.lo = -50;
            spec.hi = 250;
        }
        check_all_methods(&im.v, &spec);
        free(im.buf);
    }
}

static void test_large_u8_paths(void **state)
{
    (void)state;
    /* Long enough for the bit-sliced blocks, chunk tails and the scalar tail;
     * random, constant and two-valued content. */
    const size_t sizes[][2] = {{4096, 3}, {513, 7}, {1000, 9}, {512, 8}, {64, 64}};
    for (size_t s = 0; s < 5; s++)
        for (int content = 0; content < 4; content++) {
            image im = make_image(PIXSUM_U8, sizes[s][0], sizes[s][1], 1, 1, 0);
            uint8_t *p = im.buf;
            for (size_t i = 0; i < sizes[s][0] * sizes[s][1]; i++)
                p[i] = content == 0 ? (uint8_t)rnd() : content == 1 ? 255 : (uint8_t)(i % 2 ? 0 : 128);
            if (content == 3) /* nearly uniform: one odd byte per 512, at moving offsets */
                for (size_t i = 0; i < sizes[s][0] * sizes[s][1]; i++)
                    p[i] = (i % 512) == (i / 512 * 37) % 512 ? 10 : 9;
            check_all_methods(&im.v, NULL);
            pixsum_hist_spec spec = {0};
            spec.bins = 7;
            spec.lo = 3;
            spec.hi = 250;
            check_all_methods(&im.v, &spec);
            free(im.buf);
        }
}

/* u8 images with 2-4 channels or a mask, large enough for the AVX-512 plane
 * gathering (from 4096 pixels; planes counted every 32768 pixels, so 300x200
 * flushes them mid-row): packed and padded rows, widths that leave a tail of
 * a 16- or 64-pixel step, random, constant and per-channel constant content
 * (uniform 512-byte blocks in every plane), masks random, all-zero and
 * all-set. */
static void test_large_u8_channels(void **state)
{
    (void)state;
    const size_t sizes[][2] = {{300, 200}, {4099, 3}, {70, 117}, {1, 5000}};
    for (size_t s = 0; s < 4; s++)
        for (size_t ch = 1; ch <= 4; ch++)
            for (int content = 0; content < 3; content++) {
                size_t w = sizes[s][0], h = sizes[s][1];
                image im = make_image(PIXSUM_U8, w, h, 1, ch, (s + ch) % 2 ? 0 : 3);
                for (size_t y = 0; y < h; y++)
                    for (size_t x = 0; x < w; x++)
                        for (size_t c = 0; c < ch; c++)
                            set(&im.v, x, y, 0, c,
                                content == 0 ? (double)(rnd() & 0xff)
                                : content == 1 ? 200.0 : (double)(17 * c + 1));
                if (ch > 1)
                    check_all_methods(&im.v, NULL);
                image mk = make_image(PIXSUM_U8, w, h, 1, 1, s % 2 ? 0 : 7);
                pixsum_hist_spec spec = {0};
                spec.mask = &mk.v;
                for (int masking = 0; masking < 3; masking++) {
                    for (size_t y = 0; y < h; y++)
                        for (size_t x = 0; x < w; x++)
                            set(&mk.v, x, y, 0, 0,
                                masking == 0 ? (double)(rnd() % 2 ? rnd() % 255 + 1 : 0)
                                : masking == 1 ? 0.0 : 255.0);
                    check_all_methods(&im.v, &spec);
                }
                free(mk.buf);
                free(im.buf);
            }
}

/* Jobs with fewer samples than their counting table has entries are counted
 * sample by sample (psi_hist_count_rows_isa()); these are large enough for
 * the table paths: 16-bit raw tables (65536 entries per channel) and
 * classified tables of 65536 bins, with channels, row padding, masks and a
 * range that leaves samples below and above. Each method also runs on 2
 * threads, whose halves of the rows stay above the threshold. */
static void test_table_paths(void **state)
{
    (void)state;
    const size_t w = 331, h = 2 * 199; /* 131738 pixels: 2 x 65869 >= 65540 */
    for (size_t t = 1; t < 6; t++)
        for (size_t ch = 1; ch <= 3; ch += 2)
            for (int variant = 0; variant < 3; variant++) {
                pixsum_type ty = types[t];
                image im = make_image(ty, w, h, 1, ch, (size_t)variant * pixsum_type_size(ty));
                image mk = make_image(PIXSUM_U8, w, h, 1, 1, 3);
                fill_random(&im.v);
                pixsum_hist_spec spec = {0};
                if (!(ty == PIXSUM_U16 || ty == PIXSUM_I16) || variant == 1) {
                    spec.bins = 65536;
                    spec.lo = -1000.5;
                    spec.hi = 60000;
                }
                if (variant == 2) {
                    for (size_t y = 0; y < h; y++)
                        for (size_t x = 0; x < w; x++)
                            set(&mk.v, x, y, 0, 0, (double)(rnd() % 4 != 0));
                    spec.mask = &mk.v;
                }
                check_all_methods(&im.v, &spec);
                free(im.buf);
                free(mk.buf);
            }
}

/* Rows longer than the classifier's slice (4096 pixels) and the u8 plane,
 * cut mid-row: i32 / f32 / f64 / u16 / u8 with 1 and 3 channels, padded,
 * with and without a mask. */
static void test_long_rows(void **state)
{
    (void)state;
    const size_t w = 9001, h = 3;
    for (size_t t = 0; t < 6; t++)
        for (size_t ch = 1; ch <= 3; ch += 2)
            for (int masked = 0; masked < 2; masked++) {
                pixsum_type ty = types[t];
                image im = make_image(ty, w, h, 1, ch, pixsum_type_size(ty));
                image mk = make_image(PIXSUM_U8, w, h, 1, 1, 1);
                fill_random(&im.v);
                pixsum_hist_spec spec = {0};
                spec.bins = 97;
                spec.lo = -300;
                spec.hi = 250;
                if (masked) {
                    for (size_t y = 0; y < h; y++)
                        for (size_t x = 0; x < w; x++)
                            set(&mk.v, x, y, 0, 0, (double)(rnd() % 3 != 0));
                    spec.mask = &mk.v;
                }
                check_all_methods(&im.v, &spec);
                free(im.buf);
                free(mk.buf);
            }
}

static void test_edge_values(void **state)
{
    (void)state;
    for (int is64 = 0; is64 < 2; is64++) {
        pixsum_type t = is64 ? PIXSUM_F64 : PIXSUM_F32;
        double lo = -1.5, hi = 2.0;
        double below_hi = is64 ? nextafter(hi, -INFINITY) : (double)nextafterf((float)hi, -INFINITY);
        double below_lo = is64 ? nextafter(lo, -INFINITY) : (double)nextafterf((float)lo, -INFINITY);
        double vals[] = {lo, hi, below_hi, NAN, INFINITY, -INFINITY, below_lo, 0.25};
        image im = make_image(t, 8, 1, 1, 1, 0);
        for (size_t i = 0; i < 8; i++)
            set(&im.v, i, 0, 0, 0, vals[i]);
        pixsum_hist_spec spec = {0};
        spec.bins = 7;
        spec.lo = lo;
        spec.hi = hi;
        check_all_methods(&im.v, &spec);
        uint64_t h[7];
        pixsum_hist_info info;
        assert_int_equal(pixsum_histogram(NULL, &im.v, &spec, h, 7, &info), PIXSUM_OK);
        assert_int_equal(info.below[0], 2); /* -inf, below lo */
        assert_int_equal(info.above[0], 2); /* hi, +inf */
        assert_int_equal(info.nan[0], 1);
        assert_int_equal(h[0], 1);          /* exactly lo */
        assert_int_equal(h[6], 1);          /* the largest value below hi */
        assert_int_equal(h[3], 1);          /* 0.25: (0.25 + 1.5) * 2 = 3.5 */
        free(im.buf);
    }
    /* Integer edges: u8 with unit bins counts each value in its own bin. */
    image im = make_image(PIXSUM_U8, 256, 1, 1, 1, 0);
    for (size_t i = 0; i < 256; i++)
        ((uint8_t *)im.buf)[i] = (uint8_t)i;
    uint64_t h[256];
    assert_int_equal(pixsum_histogram(NULL, &im.v, NULL, h, 256, NULL), PIXSUM_OK);
    for (size_t i = 0; i < 256; i++)
        assert_int_equal(h[i], 1);
    /* i16 extremes with the default range */
    image s = make_image(PIXSUM_I16, 4, 1, 1, 1, 0);
    int16_t sv[4] = {-32768, 32767, 0, -1};
    memcpy(s.buf, sv, sizeof sv);
    uint64_t *hs = calloc(65536, sizeof *hs);
    assert_int_equal(pixsum_histogram(NULL, &s.v, NULL, hs, 65536, NULL), PIXSUM_OK);
    assert_int_equal(hs[0], 1);
    assert_int_equal(hs[65535], 1);
    assert_int_equal(hs[32768], 1);
    assert_int_equal(hs[32767], 1);
    check_all_methods(&s.v, NULL);
    free(hs);
    free(s.buf);
    free(im.buf);
}

/* Fills a 1-row image with samples on, just below and just above the edges
 * of (bins, lo, hi) as the type can hold them, plus random samples in range. */
static void fill_on_edges(const pixsum_view *v, size_t bins, double lo, double hi)
{
    size_t n = v->width * v->channels;
    for (size_t k = 0; k < n; k++) {
        double e = tu_hist_edge(bins, lo, hi, rnd() % (bins + 1));
        double s;
        switch (rnd() % 4) {
        case 0: s = e; break;
        case 1: s = nextafter(e, -INFINITY); break;
        case 2: s = nextafter(e, INFINITY); break;
        default: s = lo + (hi - lo) * (double)(rnd() >> 11) * 0x1p-53; break;
        }
        switch (v->type) {
        case PIXSUM_U8: s = fmin(fmax(round(s), 0), 255); break;
        case PIXSUM_U16: s = fmin(fmax(round(s), 0), 65535); break;
        case PIXSUM_I16: s = fmin(fmax(round(s), -32768), 32767); break;
        case PIXSUM_I32: s = fmin(fmax(round(s), -2147483648.0), 2147483647.0); break;
        case PIXSUM_F32: s = (double)(float)s; break;
        default: break;
        }
        set(v, k / v->channels, 0, 0, k % v->channels, s);
    }
}

/* The bins are their reported edges: on random (lo, hi, bins), with most
 * samples exactly on an edge or one step beside it, every method counts
 * sample v in the bin i with edge[i] <= v < edge[i + 1], the edges being
 * pixsum_hist_edge(), equal to the definition's (tu_hist_edge). */
static void test_edge_rule(void **state)
{
    (void)state;
    for (int round = 0; round < 240; round++) {
        pixsum_type t = types[round % (sizeof types / sizeof types[0])];
        size_t bins = rnd_between(1, round % 3 == 0 ? 300 : 40);
        double lo, hi;
        if (t == PIXSUM_F32 || t == PIXSUM_F64) {
            lo = ((double)(int64_t)(rnd() % 2001) - 1000.0) / (double)(1 + rnd() % 16);
            hi = lo + (double)(1 + rnd() % 5000) / (double)(1 + rnd() % 64);
        } else {
            double tmin = t == PIXSUM_U8 || t == PIXSUM_U16 ? 0 : -30000;
            double span = t == PIXSUM_U8 ? 255 : 30000;
            lo = tmin + (double)(rnd() % (uint64_t)span);
            hi = lo + 1 + (double)(rnd() % 6000);
            if (round % 5 == 0) /* integer edges: bins divides hi - lo */
                hi = lo + (double)bins * (double)(1 + rnd() % 7);
        }
        for (size_t i = 0; i <= bins; i++) {
            double a = pixsum_hist_edge(bins, lo, hi, i), b = tu_hist_edge(bins, lo, hi, i);
            if (memcmp(&a, &b, sizeof a) != 0)
                fail_msg("edge %zu of %zu over [%.17g, %.17g): %.17g, definition %.17g", i,
                         bins, lo, hi, a, b);
        }
        size_t ch = 1 + round % 3;
        image im = make_image(t, rnd_between(1, 700), 1, 1, ch, 0);
        fill_on_edges(&im.v, bins, lo, hi);
        pixsum_hist_spec spec = {0};
        spec.bins = bins;
        spec.lo = lo;
        spec.hi = hi;
        check_all_methods(&im.v, &spec);
        free(im.buf);
    }
    assert_true(isnan(pixsum_hist_edge(4, 0, 1, 5)));
    assert_true(isnan(pixsum_hist_edge(0, 0, 1, 0)));
    assert_true(isnan(pixsum_hist_edge(4, 1, 1, 0)));
}

/* The cases that found the fault: a u16 ramp 3496..8311 in 217 bins over
 * [3496, 8312) (edge 31 is 4184, and 4184 belongs to bin 31), and float data
 * with integer values under the automatic range. */
static void test_edge_regressions(void **state)
{
    (void)state;
    image im = make_image(PIXSUM_U16, 8312 - 3496, 1, 1, 1, 0);
    for (size_t i = 0; i < im.v.width; i++)
        ((uint16_t *)im.buf)[i] = (uint16_t)(3496 + i);
    pixsum_hist_spec spec = {0};
    spec.bins = 217;
    spec.lo = 3496;
    spec.hi = 8312;
    assert_true(pixsum_hist_edge(217, 3496, 8312, 31) == 4184.0);
    uint64_t h[217];
    assert_int_equal(pixsum_histogram(NULL, &im.v, &spec, h, 217, NULL), PIXSUM_OK);
    for (size_t i = 0; i < 217; i++) {
        double e0 = pixsum_hist_edge(217, 3496, 8312, i);
        double e1 = pixsum_hist_edge(217, 3496, 8312, i + 1);
        uint64_t want = (uint64_t)(ceil(e1) - ceil(e0)); /* integers in [e0, e1) */
        if (h[i] != want)
            fail_msg("bin %zu [%.17g, %.17g): %llu, want %llu", i, e0, e1,
                     (unsigned long long)h[i], (unsigned long long)want);
    }
    check_all_methods(&im.v, &spec);
    free(im.buf);

    /* 0.0 .. 100.0, 10 bins, automatic range [0, 100 + 1 ulp): every bin is
     * what its reported edges say */
    image f = make_image(PIXSUM_F64, 101, 1, 1, 1, 0);
    for (size_t i = 0; i <= 100; i++)
        ((double *)f.buf)[i] = (double)i;
    pixsum_hist_spec ten = {0};
    ten.bins = 10;
    pixsum_hist_info info;
    uint64_t g[10];
    assert_int_equal(pixsum_histogram(NULL, &f.v, &ten, g, 10, &info), PIXSUM_OK);
    assert_true(info.lo == 0 && info.hi == nextafter(100.0, INFINITY));
    for (size_t i = 0; i < 10; i++) {
        uint64_t want = 0;
        for (size_t v = 0; v <= 100; v++)
            want += tu_hist_bin((double)v, 10, info.lo, info.hi) == i;
        assert_int_equal(g[i], want);
    }
    assert_int_equal(g[9], 10); /* the maximum is in the last bin */
    check_all_methods(&f.v, &ten);
    free(f.buf);

    /* one value: [v, v + 1), the value in bin 0 */
    image c = make_image(PIXSUM_F32, 5, 3, 1, 1, 0);
    for (size_t i = 0; i < 15; i++)
        ((float *)c.buf)[i] = 2.5f;
    uint64_t k[256];
    assert_int_equal(pixsum_histogram(NULL, &c.v, NULL, k, 256, &info), PIXSUM_OK);
    assert_true(info.lo == 2.5 && info.hi == 3.5);
    assert_int_equal(k[0], 15);
    free(c.buf);

    /* edges merged by rounding: a range a few ulps wide in many bins */
    image m = make_image(PIXSUM_F64, 64, 1, 1, 1, 0);
    double base = 1e8;
    for (size_t i = 0; i < 64; i++)
        ((double *)m.buf)[i] = base + (double)(i % 8) * 0x1p-26;
    pixsum_hist_spec merged = {0};
    merged.bins = 1000;
    merged.lo = base;
    merged.hi = base + 8 * 0x1p-26;
    check_all_methods(&m.v, &merged);
    free(m.buf);
}

/* The histogram kernels follow the library's one ISA detector: capped below
 * avx512 (PIXSUM_FORCE_ISA, psi_isa_force), their AVX-512 paths are off and
 * the counts stay the same. */
static void test_forced_isa(void **state)
{
    (void)state;
    int had = psi_hist_avx512_available();
    assert_true(!had || psi_isa_supported() == PSI_ISA_AVX512);
    image im = make_image(PIXSUM_F32, 300, 7, 1, 1, 0);
    fill_random(&im.v);
    pixsum_hist_spec spec = {0};
    spec.bins = 100;
    spec.lo = -1;
    spec.hi = 1;
    uint64_t a[100], b[100];
    assert_int_equal(pixsum_histogram(NULL, &im.v, &spec, a, 100, NULL), PIXSUM_OK);
    psi_isa_force(PSI_ISA_AVX2);
    assert_false(psi_hist_avx512_available());
    assert_int_equal(pixsum_histogram(NULL, &im.v, &spec, b, 100, NULL), PIXSUM_OK);
    assert_memory_equal(a, b, sizeof a);
    psi_isa_force(PSI_ISA_COUNT);
    assert_int_equal(psi_hist_avx512_available(), had);
    free(im.buf);
}

static void test_masks(void **state)
{
    (void)state;
    for (int iter = 0; iter < 18; iter++) {
        pixsum_type t = types[iter % 6];
        size_t w = rnd_between(1, 1500), h = rnd_between(1, 5), ch = rnd_between(1, 4);
        image im = make_image(t, w, h, 1, ch, 0);
        image mk = make_image(PIXSUM_U8, w, h, 1, 1, 5);
        fill_random(&im.v);
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w; x++)
                set(&mk.v, x, y, 0, 0, (double)(rnd() % 3 == 0 ? 0 : rnd() % 256 | 1));
        pixsum_hist_spec spec = {0};
        spec.mask = &mk.v;
        check_all_methods(&im.v, &spec);
        /* an all-zero mask counts nothing */
        memset(mk.buf, 0, (size_t)mk.v.row_stride * h);
        check_all_methods(&im.v, &spec);
        free(im.buf);
        free(mk.buf);
    }
}

static void test_relative_cumulative(void **state)
{
    (void)state;
    image im = make_image(PIXSUM_F32, 301, 7, 1, 3, 0);
    fill_random(&im.v);
    pixsum_hist_spec spec = {0};
    spec.bins = 100;
    spec.lo = -50;
    spec.hi = 50;
    size_t n = 300;
    uint64_t h[300], cum[300];
    double rel[300], crel[300], all[300];
    pixsum_hist_info info;
    assert_int_equal(pixsum_histogram(NULL, &im.v, &spec, h, n, &info), PIXSUM_OK);
    assert_int_equal(pixsum_hist_cumulative(&info, h, cum), PIXSUM_OK);
    assert_int_equal(pixsum_hist_relative(&info, h, 0, rel), PIXSUM_OK);
    assert_int_equal(pixsum_hist_relative(&info, h, PIXSUM_HIST_CUMULATIVE, crel), PIXSUM_OK);
    assert_int_equal(pixsum_hist_relative(&info, h, PIXSUM_HIST_OF_ALL_SAMPLES, all), PIXSUM_OK);
    for (size_t c = 0; c < 3; c++) {
        double s = 0, sa = 0;
        uint64_t run = 0;
        for (size_t i = 0; i < 100; i++) {
            run += h[c * 100 + i];
            assert_int_equal(cum[c * 100 + i], run);
            s += rel[c * 100 + i];
            sa += all[c * 100 + i];
            assert_true(fabs(crel[c * 100 + i] - (double)run / (double)info.in_range[c]) < 1e-15);
        }
        assert_int_equal(cum[c * 100 + 99], info.in_range[c]);
        assert_true(fabs(s - 1.0) < 1e-12);
        assert_true(crel[c * 100 + 99] == 1.0);
        assert_true(fabs(sa - (double)info.in_range[c] / (double)info.pixels) < 1e-12);
    }
    /* in place */
    assert_int_equal(pixsum_hist_cumulative(&info, h, h), PIXSUM_OK);
    assert_memory_equal(h, cum, sizeof h);
    /* an empty channel gives zeros */
    pixsum_hist_info z = info;
    z.in_range[0] = 0;
    assert_int_equal(pixsum_hist_relative(&z, h, 0, rel), PIXSUM_OK);
    assert_true(rel[0] == 0 && rel[99] == 0);
    free(im.buf);
}

/* pixsum_hist_bins(): the bin count of the defaults table in pixsum.h, for
 * every type, spec NULL, bins 0, given bins, with and without a range; the
 * count pixsum_hist_resolve() reports on random data; the same refusals as
 * resolving; and no sample read (the data is a page that cannot be read). */
static void test_hist_bins(void **state)
{
    (void)state;
    static const pixsum_type all[] = {PIXSUM_U8,  PIXSUM_U16, PIXSUM_I16, PIXSUM_I32,
                                      PIXSUM_U32, PIXSUM_F32, PIXSUM_F64};
    /* bins 0 without a range, from the table in pixsum.h */
    static const size_t default_bins[] = {256, 65536, 65536, 256, 256, 256, 256};
    for (size_t t = 0; t < 7; t++) {
        pixsum_type ty = all[t];
        size_t bins = 0;
        image im = make_image(ty, 1 + t, 3, 1 + t % 3, 1 + t % 4, t * pixsum_type_size(ty));
        assert_int_equal(pixsum_hist_bins(&im.v, NULL, &bins), PIXSUM_OK);
        assert_int_equal(bins, default_bins[t]);
        pixsum_hist_spec spec = {0};
        bins = 0;
        assert_int_equal(pixsum_hist_bins(&im.v, &spec, &bins), PIXSUM_OK);
        assert_int_equal(bins, default_bins[t]);
        spec.lo = -3, spec.hi = 5; /* a range with bins 0: 256 bins for every type */
        assert_int_equal(pixsum_hist_bins(&im.v, &spec, &bins), PIXSUM_OK);
        assert_int_equal(bins, 256);
        spec.bins = 1;
        assert_int_equal(pixsum_hist_bins(&im.v, &spec, &bins), PIXSUM_OK);
        assert_int_equal(bins, 1);
        spec.lo = spec.hi = 7; /* given bins, default range */
        spec.bins = 4099;
        assert_int_equal(pixsum_hist_bins(&im.v, &spec, &bins), PIXSUM_OK);
        assert_int_equal(bins, 4099);
        spec.bins = PIXSUM_HIST_MAX_BINS;
        assert_int_equal(pixsum_hist_bins(&im.v, &spec, &bins), PIXSUM_OK);
        assert_int_equal(bins, PIXSUM_HIST_MAX_BINS);
        free(im.buf);
    }
    /* random images, specs and masks: the count resolving reports */
    for (int iter = 0; iter < 200; iter++) {
        pixsum_type ty = all[rnd() % 7];
        size_t w = rnd_between(1, 9), h = rnd_between(1, 5), d = rnd_between(1, 3);
        image im = make_image(ty, w, h, d, rnd_between(1, 4), (rnd() % 5) * pixsum_type_size(ty));
        fill_random(&im.v);
        image mask = make_image(PIXSUM_U8, w, h, d, 1, 0);
        for (size_t i = 0; i < w * h * d; i++)
            ((uint8_t *)mask.buf)[i] = (uint8_t)(rnd() % 2);
        pixsum_hist_spec spec = {0};
        if (rnd() % 2)
            spec.bins = rnd() % 3 == 0 ? 0 : rnd_between(1, 70000);
        if (rnd() % 2) {
            spec.lo = (double)(int)rnd_between(0, 200) - 100;
            spec.hi = spec.lo + (double)rnd_between(0, 300);
        }
        if (rnd() % 2)
            spec.mask = &mask.v;
        size_t bins = 0;
        pixsum_hist_info info;
        assert_int_equal(pixsum_hist_bins(&im.v, &spec, &bins), PIXSUM_OK);
        assert_int_equal(pixsum_hist_resolve(&im.v, &spec, &info), PIXSUM_OK);
        assert_int_equal(bins, info.bins);
        free(mask.buf);
        free(im.buf);
    }
    /* refusals: those of pixsum_hist_resolve(), *bins untouched */
    image im = make_image(PIXSUM_F32, 5, 4, 1, 1, 0);
    size_t bins = 12345;
    pixsum_hist_info info;
    assert_int_equal(pixsum_hist_bins(NULL, NULL, &bins), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_hist_bins(&im.v, NULL, NULL), PIXSUM_ERR_NULL);
    pixsum_hist_spec bad[5] = {{PIXSUM_HIST_MAX_BINS + 1, 0, 0, NULL},
                               {4, 5, 1, NULL},
                               {4, NAN, 1, NULL},
                               {4, 0, INFINITY, NULL},
                               {4, -DBL_MAX, DBL_MAX, NULL}}; /* the width overflows */
    for (int i = 0; i < 5; i++) {
        assert_int_equal(pixsum_hist_bins(&im.v, &bad[i], &bins), PIXSUM_ERR_INVALID_ARG);
        assert_int_equal(pixsum_hist_resolve(&im.v, &bad[i], &info), PIXSUM_ERR_INVALID_ARG);
    }
    pixsum_view v = im.v;
    v.type = PIXSUM_U64;
    v.row_stride = (ptrdiff_t)(5 * pixsum_type_size(PIXSUM_U64));
    v.slice_stride = v.row_stride * 4;
    assert_int_equal(pixsum_hist_bins(&v, NULL, &bins), PIXSUM_ERR_BAD_TYPE);
    v = im.v;
    v.channels = 5;
    assert_int_equal(pixsum_hist_bins(&v, NULL, &bins), pixsum_view_check(&v));
    assert_int_not_equal(pixsum_view_check(&v), PIXSUM_OK);
    v = im.v;
    v.data = NULL;
    assert_int_equal(pixsum_hist_bins(&v, NULL, &bins), pixsum_view_check(&v));
    assert_int_equal(bins, 12345);
    free(im.buf);
#if defined(__unix__)
    /* no sample read: a float image on a page that faults when read */
    long page = sysconf(_SC_PAGESIZE);
    void *locked = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(locked != MAP_FAILED);
    pixsum_view hidden = pixsum_view_2d(locked, PIXSUM_F32, 16, 16, 1, 64);
    assert_int_equal(pixsum_hist_bins(&hidden, NULL, &bins), PIXSUM_OK);
    assert_int_equal(bins, 256);
    munmap(locked, (size_t)page);
#endif
}

static void test_bad_calls(void **state)
{
    (void)state;
    image im = make_image(PIXSUM_U8, 10, 10, 1, 1, 0);
    uint64_t h[256];
    pixsum_hist_spec spec = {0};
    pixsum_hist_info info;
    assert_int_equal(pixsum_histogram(NULL, NULL, NULL, h, 256, NULL), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_histogram(NULL, &im.v, NULL, NULL, 256, NULL), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_histogram(NULL, &im.v, NULL, h, 255, NULL), PIXSUM_ERR_BAD_SHAPE);
    assert_non_null(strstr(pixsum_last_error(), "256"));
    spec.bins = PIXSUM_HIST_MAX_BINS + 1;
    assert_int_equal(pixsum_histogram(NULL, &im.v, &spec, h, 256, NULL), PIXSUM_ERR_INVALID_ARG);
    spec.bins = 4;
    spec.lo = 5;
    spec.hi = 1;
    assert_int_equal(pixsum_histogram(NULL, &im.v, &spec, h, 256, NULL), PIXSUM_ERR_INVALID_ARG);
    spec.lo = NAN;
    assert_int_equal(pixsum_histogram(NULL, &im.v, &spec, h, 256, NULL), PIXSUM_ERR_INVALID_ARG);
    spec.lo = -DBL_MAX;
    spec.hi = DBL_MAX; /* the width overflows */
    assert_int_equal(pixsum_histogram(NULL, &im.v, &spec, h, 256, NULL), PIXSUM_ERR_INVALID_ARG);
    spec.lo = 1;
    spec.hi = nextafter(1.0, 2.0);
    spec.bins = PIXSUM_HIST_MAX_BINS; /* fine: scale is finite */
    assert_int_equal(pixsum_hist_resolve(&im.v, &spec, &info), PIXSUM_OK);
    /* unsupported type */
    image u = make_image(PIXSUM_U64, 4, 4, 1, 1, 0);
    assert_int_equal(pixsum_histogram(NULL, &u.v, NULL, h, 256, NULL), PIXSUM_ERR_BAD_TYPE);
    /* bad masks */
    image m16 = make_image(PIXSUM_U16, 10, 10, 1, 1, 0);
    image msmall = make_image(PIXSUM_U8, 9, 10, 1, 1, 0);
    image m2 = make_image(PIXSUM_U8, 10, 10, 1, 2, 0);
    memset(&spec, 0, sizeof spec);
    spec.mask = &m16.v;
    assert_int_equal(pixsum_histogram(NULL, &im.v, &spec, h, 256, NULL), PIXSUM_ERR_BAD_TYPE);
    spec.mask = &msmall.v;
    assert_int_equal(pixsum_histogram(NULL, &im.v, &spec, h, 256, NULL), PIXSUM_ERR_BAD_SHAPE);
    spec.mask = &m2.v;
    assert_int_equal(pixsum_histogram(NULL, &im.v, &spec, h, 256, NULL), PIXSUM_ERR_BAD_SHAPE);
    /* bad views */
    pixsum_view bad = im.v;
    bad.width = 0;
    assert_int_equal(pixsum_histogram(NULL, &bad, NULL, h, 256, NULL), PIXSUM_ERR_BAD_SHAPE);
    bad = im.v;
    bad.row_stride = 3;
    assert_int_equal(pixsum_histogram(NULL, &bad, NULL, h, 256, NULL), PIXSUM_ERR_BAD_STRIDE);
    /* counts inside the image */
    uint64_t *big = calloc(512, sizeof *big);
    pixsum_view alias = pixsum_view_2d(big, PIXSUM_U8, 64, 8, 1, 0);
    assert_int_equal(pixsum_histogram(NULL, &alias, NULL, big + 2, 256, NULL),
                     PIXSUM_ERR_ALIASING);
    free(big);
    /* counts left untouched on error */
    for (size_t i = 0; i < 256; i++)
        h[i] = 7;
    assert_int_equal(pixsum_histogram(NULL, &u.v, NULL, h, 256, NULL), PIXSUM_ERR_BAD_TYPE);
    assert_int_equal(h[0], 7);
    /* a method that is not a histogram method */
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_int_equal(pixsum_ctx_set_method(ctx, "serial.2wh"), PIXSUM_OK);
    assert_int_equal(pixsum_histogram(ctx, &im.v, NULL, h, 256, NULL), PIXSUM_ERR_UNSUPPORTED);
    if (method_usable("hist.avx512")) {
        image c2 = make_image(PIXSUM_U16, 4, 4, 1, 2, 0);
        uint64_t h2[512];
        assert_int_equal(pixsum_ctx_set_method(ctx, "hist.avx512"), PIXSUM_OK);
        pixsum_hist_spec s256 = {0};
        s256.bins = 256;
        s256.lo = 0;
        s256.hi = 65536;
        assert_int_equal(pixsum_histogram(ctx, &c2.v, &s256, h2, 512, NULL),
                         PIXSUM_ERR_UNSUPPORTED);
        free(c2.buf);
    }
    pixsum_ctx_free(ctx);
    /* derived forms */
    memset(&info, 0, sizeof info);
    assert_int_equal(pixsum_hist_cumulative(&info, h, h), PIXSUM_ERR_INVALID_ARG);
    info.bins = 4;
    info.channels = 1;
    assert_int_equal(pixsum_hist_relative(&info, h, 8, (double *)h), PIXSUM_ERR_INVALID_ARG);
    assert_int_equal(pixsum_hist_relative(NULL, h, 0, (double *)h), PIXSUM_ERR_NULL);
    free(im.buf);
    free(u.buf);
    free(m16.buf);
    free(msmall.buf);
    free(m2.buf);
}

/* ---- u32 images ---------------------------------------------------------- */

/* The bin of v from the definition: the i with edge[i] <= v < edge[i + 1],
 * over the edges the library reports (pixsum_hist_edge(), e[0..bins]);
 * bins + PSI_BIN_BELOW / ABOVE outside. Binary search over the non-decreasing
 * edges: the last i with e[i] <= v. */
static size_t bin_by_edges(const double *e, size_t bins, double v)
{
    if (v < e[0])
        return bins + PSI_BIN_BELOW;
    if (v >= e[bins])
        return bins + PSI_BIN_ABOVE;
    size_t lo = 0, hi = bins; /* e[lo] <= v < e[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (e[mid] <= v)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Counts of a u32 view (any channels, strides, mask) from the definition:
 * each sample, as the exact double it is, in the bin its edges name. */
static reference u32_by_edges(const pixsum_view *v, const pixsum_view *mask, size_t bins,
                              double lo, double hi)
{
    double *e = malloc((bins + 1) * sizeof *e);
    assert_non_null(e);
    for (size_t i = 0; i <= bins; i++)
        e[i] = pixsum_hist_edge(bins, lo, hi, i);
    reference r;
    memset(&r, 0, sizeof r);
    r.counts = calloc(bins * v->channels, sizeof *r.counts);
    assert_non_null(r.counts);
    for (size_t z = 0; z < v->depth; z++)
        for (size_t y = 0; y < v->height; y++)
            for (size_t x = 0; x < v->width; x++) {
                if (mask && *(uint8_t *)sample_ptr(mask, x, y, z, 0) == 0)
                    continue;
                r.pixels++;
                for (size_t c = 0; c < v->channels; c++) {
                    uint32_t s = *(uint32_t *)sample_ptr(v, x, y, z, c);
                    size_t b = bin_by_edges(e, bins, (double)s);
                    if (b < bins) {
                        r.counts[c * bins + b]++;
                        r.in_range[c]++;
                    } else if (b == bins + PSI_BIN_BELOW) {
                        r.below[c]++;
                    } else {
                        r.above[c]++;
                    }
                }
            }
    free(e);
    return r;
}

/* Every method's counts and totals of (v, spec) against u32_by_edges(). */
static void check_u32(const pixsum_view *v, const pixsum_hist_spec *spec)
{
    pixsum_hist_info want;
    assert_int_equal(pixsum_hist_resolve(v, spec, &want), PIXSUM_OK);
    reference ref = u32_by_edges(v, spec ? spec->mask : NULL, want.bins, want.lo, want.hi);
    size_t n = want.bins * v->channels;
    uint64_t *got = malloc(n * sizeof *got);
    assert_non_null(got);
    pixsum_ctx *ctx = pixsum_ctx_new();
    for (size_t m = 0; m < N_METHODS; m++) {
        if (!method_usable(methods[m]) || strcmp(methods[m], "hist.avx512") == 0)
            continue; /* hist.avx512 declines u32 (it has no u32 kernel) */
        assert_int_equal(pixsum_ctx_set_method(ctx, methods[m]), PIXSUM_OK);
        for (int threads = 1; threads <= 2; threads++) {
            assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, threads), PIXSUM_OK);
            pixsum_hist_info info;
            if (pixsum_histogram(ctx, v, spec, got, n, &info) != PIXSUM_OK)
                fail_msg("%s: %s", methods[m], pixsum_last_error());
            for (size_t i = 0; i < n; i++)
                if (got[i] != ref.counts[i])
                    fail_msg("%s u32 %zux%zux%zu x%zu, %zu bins [%.17g, %.17g): bin %zu got "
                             "%llu want %llu", methods[m], v->width, v->height, v->depth,
                             v->channels, want.bins, want.lo, want.hi, i,
                             (unsigned long long)got[i], (unsigned long long)ref.counts[i]);
            assert_int_equal(info.pixels, ref.pixels);
            for (size_t c = 0; c < v->channels; c++) {
                assert_int_equal(info.in_range[c], ref.in_range[c]);
                assert_int_equal(info.below[c], ref.below[c]);
                assert_int_equal(info.above[c], ref.above[c]);
                assert_int_equal(info.nan[c], 0);
            }
        }
    }
    /* pixsum_histogram_edges over the library's own edges: the same counts */
    double *e = malloc((want.bins + 1) * sizeof *e);
    assert_non_null(e);
    for (size_t i = 0; i <= want.bins; i++)
        e[i] = pixsum_hist_edge(want.bins, want.lo, want.hi, i);
    pixsum_hist_edges_spec es = {0};
    es.edges = e;
    es.n_edges = want.bins + 1;
    es.mask = spec ? spec->mask : NULL;
    assert_int_equal(pixsum_histogram_edges(NULL, v, &es, got, n, NULL), PIXSUM_OK);
    assert_memory_equal(got, ref.counts, n * sizeof *got);
    free(e);
    pixsum_ctx_free(ctx);
    free(got);
    free(ref.counts);
}

/* Samples that test the u32 edges: 0, 2^32 - 1, 2^31, the given range's
 * edges and their neighbours, random values of every size. */
static uint32_t u32_sample(size_t bins, double lo, double hi)
{
    switch (rnd() % 8) {
    case 0: return 0;
    case 1: return UINT32_MAX;
    case 2: return (uint32_t)1 << 31;
    case 3: case 4: { /* on an edge (rounded down to an integer), or beside it */
        double e = floor(pixsum_hist_edge(bins, lo, hi, rnd() % (bins + 1)));
        e += (double)(int)(rnd() % 3) - 1;
        return e < 0 ? 0 : e > 4294967295.0 ? UINT32_MAX : (uint32_t)e;
    }
    case 5: return (uint32_t)(rnd() & 0xff);
    default: return (uint32_t)rnd();
    }
}

static void test_u32(void **state)
{
    (void)state;
    /* (bins, lo, hi): integer rule (bins divide the span), unequal float
     * bins, a range inside, one bin; lo == hi: the default range */
    static const struct { size_t bins; double lo, hi; } ranges[] = {
        {256, 0, 4294967296.0}, {65536, 0, 4294967296.0}, {7, 1000.5, 3e9},
        {1000, 0, 4294967295.0}, {3, 4294967290.0, 4294967296.0}, {1, 0, 1},
        {0, 0, 0}, {17, 0, 0}, {1, 0, 0},
    };
    for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++) {
        for (int iter = 0; iter < 12; iter++) {
            size_t w = iter == 0 ? 1 : iter == 1 ? 1 : iter == 2 ? 23 : rnd_between(1, 40);
            size_t h = iter == 0 ? 1 : iter == 1 ? 19 : iter == 2 ? 1 : rnd_between(1, 20);
            size_t d = iter % 4 == 3 ? 2 : 1, ch = rnd_between(1, 4);
            size_t pad = (rnd() % 3) * 4;
            image im = make_image(PIXSUM_U32, w, h, d, ch, pad);
            size_t gb = ranges[k].bins ? ranges[k].bins : 256;
            double glo = ranges[k].lo, ghi = ranges[k].hi > glo ? ranges[k].hi : 4294967296.0;
            for (size_t z = 0; z < d; z++)
                for (size_t y = 0; y < h; y++)
                    for (size_t x = 0; x < w; x++)
                        for (size_t c = 0; c < ch; c++)
                            *(uint32_t *)sample_ptr(&im.v, x, y, z, c) = u32_sample(gb, glo, ghi);
            pixsum_hist_spec spec = {0};
            spec.bins = ranges[k].bins;
            spec.lo = ranges[k].lo;
            spec.hi = ranges[k].hi;
            check_u32(&im.v, &spec);
            image mk = make_image(PIXSUM_U8, w, h, d, 1, 0);
            for (size_t i = 0; i < w * h * d; i++)
                ((uint8_t *)mk.buf)[i] = (uint8_t)(rnd() % 3 != 0);
            spec.mask = &mk.v;
            check_u32(&im.v, &spec);
            free(mk.buf);
            free(im.buf);
        }
    }
    /* The default range is the data's [min, max + 1), 256 bins: with 0 and
     * 2^32 - 1 in the data that is [0, 2^32) and bins of 2^24 values. */
    image im = make_image(PIXSUM_U32, 5, 1, 1, 1, 0);
    uint32_t vals[5] = {0, UINT32_MAX, (uint32_t)1 << 24, ((uint32_t)1 << 24) - 1, 123456789};
    memcpy(im.buf, vals, sizeof vals);
    pixsum_hist_info info;
    uint64_t h[256];
    assert_int_equal(pixsum_histogram(NULL, &im.v, NULL, h, 256, &info), PIXSUM_OK);
    assert_true(info.bins == 256 && info.lo == 0 && info.hi == 4294967296.0);
    assert_int_equal(h[0], 2);   /* 0 and 2^24 - 1 */
    assert_int_equal(h[1], 1);   /* 2^24: on the edge of bin 1 */
    assert_int_equal(h[7], 1);   /* 123456789 / 2^24 = 7.36 */
    assert_int_equal(h[255], 1); /* 2^32 - 1 */
    assert_int_equal(info.above[0] + info.below[0], 0);
    /* one value: [v, v + 1), v in bin 0 */
    image one = make_image(PIXSUM_U32, 3, 2, 1, 1, 0);
    for (size_t i = 0; i < 6; i++)
        ((uint32_t *)one.buf)[i] = UINT32_MAX;
    assert_int_equal(pixsum_histogram(NULL, &one.v, NULL, h, 256, &info), PIXSUM_OK);
    assert_true(info.lo == 4294967295.0 && info.hi == 4294967296.0 && h[0] == 6);

    /* batch: each image equals its own pixsum_histogram() over the batch's
     * range; joint: u32 against u8 equals the pair of 1-D bins */
    image b = make_image(PIXSUM_U32, 9, 4, 3, 2, 0);
    for (size_t i = 0; i < 9 * 4 * 3 * 2; i++)
        ((uint32_t *)b.buf)[i] = u32_sample(256, 0, 4294967296.0);
    pixsum_hist_info whole;
    assert_int_equal(pixsum_hist_resolve(&b.v, NULL, &whole), PIXSUM_OK);
    size_t per = whole.bins * 2;
    uint64_t *bc = calloc(3 * per, sizeof *bc), *one_c = calloc(per, sizeof *one_c);
    assert_non_null(bc);
    assert_non_null(one_c);
    assert_int_equal(pixsum_histogram_batch(NULL, &b.v, NULL, 0, bc, 3 * per, NULL), PIXSUM_OK);
    for (size_t z = 0; z < 3; z++) {
        pixsum_view slice;
        assert_int_equal(pixsum_view_roi3d(&b.v, 0, 0, z, 9, 4, 1, &slice), PIXSUM_OK);
        reference r = u32_by_edges(&slice, NULL, whole.bins, whole.lo, whole.hi);
        assert_memory_equal(bc + z * per, r.counts, per * sizeof *bc);
        free(r.counts);
    }
    free(bc);
    free(one_c);
    image ja = make_image(PIXSUM_U32, 13, 7, 1, 1, 0), jb = make_image(PIXSUM_U8, 13, 7, 1, 1, 0);
    for (size_t i = 0; i < 13 * 7; i++) {
        ((uint32_t *)ja.buf)[i] = u32_sample(4, 0, 4294967296.0);
        ((uint8_t *)jb.buf)[i] = (uint8_t)rnd();
    }
    pixsum_hist_spec sa = {4, 0, 4294967296.0, NULL}, sb = {2, 0, 256, NULL};
    uint64_t joint[8];
    pixsum_joint_info ji;
    assert_int_equal(pixsum_histogram_joint(NULL, &ja.v, &jb.v, &sa, &sb, joint, 8, &ji),
                     PIXSUM_OK);
    uint64_t want_joint[8] = {0};
    double ea[5], eb[3];
    for (size_t i = 0; i <= 4; i++)
        ea[i] = pixsum_hist_edge(4, 0, 4294967296.0, i);
    for (size_t i = 0; i <= 2; i++)
        eb[i] = pixsum_hist_edge(2, 0, 256, i);
    for (size_t i = 0; i < 13 * 7; i++)
        want_joint[bin_by_edges(ea, 4, ((uint32_t *)ja.buf)[i]) * 2 +
                   bin_by_edges(eb, 2, ((uint8_t *)jb.buf)[i])]++;
    assert_memory_equal(joint, want_joint, sizeof joint);
    assert_int_equal(ji.pairs, 13 * 7);
    /* the joint default range of a u32 image is its data's [min, max + 1) */
    uint32_t mn = UINT32_MAX, mx = 0;
    for (size_t i = 0; i < 13 * 7; i++) {
        uint32_t v = ((uint32_t *)ja.buf)[i];
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
    }
    uint64_t *jd = malloc(256 * 256 * sizeof *jd);
    assert_non_null(jd);
    assert_int_equal(pixsum_histogram_joint(NULL, &ja.v, &jb.v, NULL, NULL, jd, 256 * 256, &ji),
                     PIXSUM_OK);
    assert_true(ji.lo_a == (double)mn && ji.hi_a == (double)mx + 1 && ji.pairs == 13 * 7);
    free(jd);
    /* integral histogram: a box's counts equal pixsum_histogram() of the crop */
    pixsum_ihist *ih = NULL;
    assert_int_equal(pixsum_ihist_new(NULL, &ja.v, &sa, 0, &ih), PIXSUM_OK);
    uint64_t box[4], crop_counts[4];
    pixsum_view crop;
    assert_int_equal(pixsum_view_roi(&ja.v, 2, 1, 9, 5, &crop), PIXSUM_OK);
    assert_int_equal(pixsum_ihist_query(ih, 2, 1, 9, 5, box), PIXSUM_OK);
    assert_int_equal(pixsum_histogram(NULL, &crop, &sa, crop_counts, 4, NULL), PIXSUM_OK);
    assert_memory_equal(box, crop_counts, sizeof box);
    pixsum_ihist_free(ih);
    free(ja.buf);
    free(jb.buf);
    free(b.buf);
    free(one.buf);
    free(im.buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_every_type),
        cmocka_unit_test(test_bin_counts_and_ranges),
        cmocka_unit_test(test_shapes_channels_strides),
        cmocka_unit_test(test_large_u8_paths),
        cmocka_unit_test(test_large_u8_channels),
        cmocka_unit_test(test_table_paths),
        cmocka_unit_test(test_long_rows),
        cmocka_unit_test(test_edge_values),
        cmocka_unit_test(test_edge_rule),
        cmocka_unit_test(test_edge_regressions),
        cmocka_unit_test(test_forced_isa),
        cmocka_unit_test(test_masks),
        cmocka_unit_test(test_relative_cumulative),
        cmocka_unit_test(test_hist_bins),
        cmocka_unit_test(test_bad_calls),
        cmocka_unit_test(test_u32),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

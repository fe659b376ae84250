/*
 * test_hist_apps.c - what is built on histograms: joint histograms against a
 * naive pair count (ranges, masks, exclusions), entropies and mutual
 * information against direct formulas, equalisation against the documented
 * integer mapping (u8, u16, channels, in place, masks, constant images), Otsu
 * against a brute-force search, and integral histograms whose rectangles must
 * equal direct histograms of the cropped image; plus the refusals.
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

static uint64_t rng_state = 0x243F6A8885A308D3ull;

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

static size_t bin_of(double v, size_t bins, double lo, double hi)
{
    return tu_hist_bin(v, bins, lo, hi);
}

/* ---- joint histograms --------------------------------------------------- */

static void test_joint_against_naive(void **state)
{
    (void)state;
    for (int iter = 0; iter < 8; iter++) {
        size_t w = rnd_between(1, 300), h = rnd_between(1, 20);
        uint8_t *a = malloc(w * h), *m = malloc(w * h);
        float *b = malloc(w * h * sizeof *b);
        for (size_t i = 0; i < w * h; i++) {
            a[i] = (uint8_t)rnd();
            b[i] = (float)((double)(rnd() % 1000) / 10.0 - 20.0);
            if (i % 97 == 0)
                b[i] = NAN;
            m[i] = (uint8_t)(rnd() % 4 != 0);
        }
        pixsum_view va = pixsum_view_2d(a, PIXSUM_U8, w, h, 1, 0);
        pixsum_view vb = pixsum_view_2d(b, PIXSUM_F32, w, h, 1, 0);
        pixsum_view vm = pixsum_view_2d(m, PIXSUM_U8, w, h, 1, 0);
        pixsum_hist_spec sa = {0}, sb = {0};
        sa.bins = iter % 2 ? 16 : 0;
        sb.bins = 10;
        sb.lo = 0;
        sb.hi = 50;
        sa.mask = iter % 3 ? &vm : NULL;
        pixsum_joint_info info;
        size_t ba = sa.bins ? sa.bins : 256;
        uint64_t *got = calloc(ba * 10, sizeof *got), *want = calloc(ba * 10, sizeof *want);
        assert_int_equal(pixsum_histogram_joint(NULL, &va, &vb, &sa, &sb, got, ba * 10, &info),
                         PIXSUM_OK);
        uint64_t pairs = 0, excluded = 0;
        for (size_t i = 0; i < w * h; i++) {
            if (sa.mask && !m[i])
                continue;
            size_t ia = bin_of(a[i], ba, 0, 256), ib = bin_of(b[i], 10, 0, 50);
            if (ia == SIZE_MAX || ib == SIZE_MAX) {
                excluded++;
                continue;
            }
            want[ia * 10 + ib]++;
            pairs++;
        }
        assert_memory_equal(got, want, ba * 10 * sizeof *got);
        assert_int_equal(info.pairs, pairs);
        assert_int_equal(info.excluded, excluded);
        assert_int_equal(info.bins_a, ba);
        assert_int_equal(info.bins_b, 10);
        free(a);
        free(b);
        free(m);
        free(got);
        free(want);
    }
}

/* A sample of any input type as a double (test-side loader). */
static double load_any(pixsum_type t, const void *row, size_t x)
{
    switch (t) {
    case PIXSUM_U8: return ((const uint8_t *)row)[x];
    case PIXSUM_U16: return ((const uint16_t *)row)[x];
    case PIXSUM_I16: return ((const int16_t *)row)[x];
    case PIXSUM_I32: return ((const int32_t *)row)[x];
    case PIXSUM_F32: return ((const float *)row)[x];
    default: return ((const double *)row)[x];
    }
}

/* A w x h image of type t with `pad` samples after each row, filled with
 * `content` (0 random over the type's range plus specials, 1 constant, 2 a
 * smooth ramp with flat runs). */
static pixsum_view joint_image(pixsum_type t, size_t w, size_t h, size_t pad, int content)
{
    size_t es = pixsum_type_size(t), row = (w + pad) * es;
    char *buf = calloc(row * h + 1, 1);
    assert_non_null(buf);
    for (size_t y = 0; y < h; y++)
        for (size_t x = 0; x < w; x++) {
            double v = content == 1 ? 77.0 : content == 2 ? (double)((x / 9 + y / 5) % 300)
                                                          : (double)(rnd() % 70000) - 2000.0;
            if (content == 0 && rnd() % 50 == 0)
                v = (t == PIXSUM_F32 || t == PIXSUM_F64) ? (rnd() % 2 ? NAN : -INFINITY)
                                                         : 1e12;
            void *p = buf + y * row + x * es;
            long long k = (long long)fmin(fmax(v, -1e9), 1e9); /* integer types wrap k */
            switch (t) {
            case PIXSUM_U8: *(uint8_t *)p = (uint8_t)(k & 255); break;
            case PIXSUM_U16: *(uint16_t *)p = (uint16_t)(k & 65535); break;
            case PIXSUM_I16:
                *(int16_t *)p = (int16_t)(k > 32767 ? 32767 : k < -32768 ? -32768 : k);
                break;
            case PIXSUM_I32: *(int32_t *)p = (int32_t)(v > 2e9 ? INT32_MAX : k); break;
            case PIXSUM_F32: *(float *)p = (float)v; break;
            default: *(double *)p = v; break;
            }
        }
    return pixsum_view_2d(buf, t, w, h, 1, (ptrdiff_t)row);
}

/* The joint table of every type pair family (8/16-bit pairs through the
 * offset tables, the others classified, mixed), against a direct count:
 * shapes 1x1, 1xN, Nx1, odd widths, padded rows, masks on a, b or both,
 * ranges that exclude samples, random / constant / ramp content, 1-3 threads,
 * and one image large enough for the threads to split it. */
static void test_joint_paths(void **state)
{
    (void)state;
    const pixsum_type types[] = {PIXSUM_U8, PIXSUM_U16, PIXSUM_I16, PIXSUM_I32, PIXSUM_F32,
                                 PIXSUM_F64};
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_non_null(ctx);
    for (int iter = 0; iter < 60; iter++) {
        pixsum_type ta = types[iter % 6], tb = types[(iter / 6 + iter) % 6];
        if (iter % 5 == 0)
            tb = ta == PIXSUM_U8 ? PIXSUM_U16 : PIXSUM_U8;
        size_t shape = (size_t)iter % 6;
        size_t w = shape == 0 ? 1 : shape == 1 ? 1 : rnd_between(1, 333);
        size_t h = shape == 0 ? 1 : shape == 2 ? 1 : rnd_between(1, 40);
        if (iter == 59)
            w = 1031, h = 600; /* > 512 Ki pixels: split over the threads */
        int content = iter % 3;
        pixsum_view a = joint_image(ta, w, h, (size_t)(iter % 2) * 3, content);
        pixsum_view b = joint_image(tb, w, h, (size_t)(iter % 3) * 2, (content + iter / 3) % 3);
        pixsum_view ma = joint_image(PIXSUM_U8, w, h, 1, 0);
        pixsum_view mb = joint_image(PIXSUM_U8, w, h, 0, 0);
        pixsum_hist_spec sa = {0}, sb = {0};
        sa.bins = rnd_between(1, 300);
        sa.lo = -100;
        sa.hi = (double)rnd_between(50, 70000);
        sb.bins = iter % 4 == 0 ? 256 : rnd_between(1, 300);
        sb.lo = iter % 4 == 0 ? 0 : 10;
        sb.hi = iter % 4 == 0 ? 256 : 60000;
        sa.mask = iter % 4 == 1 || iter % 4 == 3 ? &ma : NULL;
        sb.mask = iter % 4 >= 2 ? &mb : NULL;
        size_t cells = sa.bins * sb.bins;
        uint64_t *want = calloc(cells, sizeof *want), *got = malloc((cells + 1) * sizeof *got);
        uint64_t pairs = 0, excluded = 0;
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w; x++) {
                if ((sa.mask && !((const uint8_t *)ma.data)[y * (size_t)ma.row_stride + x]) ||
                    (sb.mask && !((const uint8_t *)mb.data)[y * (size_t)mb.row_stride + x]))
                    continue;
                double va = load_any(ta, (const char *)a.data + y * (size_t)a.row_stride, x);
                double vb = load_any(tb, (const char *)b.data + y * (size_t)b.row_stride, x);
                size_t ia = bin_of(va, sa.bins, sa.lo, sa.hi);
                size_t ib = bin_of(vb, sb.bins, sb.lo, sb.hi);
                if (ia == SIZE_MAX || ib == SIZE_MAX) {
                    excluded++;
                    continue;
                }
                want[ia * sb.bins + ib]++;
                pairs++;
            }
        for (int threads = 1; threads <= 3; threads++) {
            assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, threads), PIXSUM_OK);
            pixsum_joint_info info;
            got[cells] = 0xabcdef;
            int st = pixsum_histogram_joint(threads == 3 ? NULL : ctx, &a, &b, &sa, &sb, got,
                                            cells, &info);
            if (st != PIXSUM_OK)
                fail_msg("%s x %s: %s", pixsum_type_name(ta), pixsum_type_name(tb),
                         pixsum_last_error());
            assert_int_equal(got[cells], 0xabcdef);
            for (size_t i = 0; i < cells; i++)
                if (got[i] != want[i])
                    fail_msg("%s x %s %zux%zu, %zu x %zu bins, masks %d%d, %d threads: cell %zu "
                             "got %llu want %llu", pixsum_type_name(ta), pixsum_type_name(tb),
                             w, h, sa.bins, sb.bins, sa.mask != NULL, sb.mask != NULL, threads,
                             i, (unsigned long long)got[i], (unsigned long long)want[i]);
            assert_int_equal(info.pairs, pairs);
            assert_int_equal(info.excluded, excluded);
        }
        free(want);
        free(got);
        free(a.data);
        free(b.data);
        free(ma.data);
        free(mb.data);
    }
    pixsum_ctx_free(ctx);
}

static void test_joint_information(void **state)
{
    (void)state;
    size_t n = 5000;
    uint8_t *a = malloc(n), *b = malloc(n);
    for (size_t i = 0; i < n; i++) {
        a[i] = (uint8_t)(rnd() % 8);
        b[i] = a[i];
    }
    pixsum_view va = pixsum_view_2d(a, PIXSUM_U8, n, 1, 1, 0);
    pixsum_view vb = pixsum_view_2d(b, PIXSUM_U8, n, 1, 1, 0);
    pixsum_hist_spec s = {0};
    s.bins = 8;
    s.lo = 0;
    s.hi = 8;
    uint64_t t[64];
    pixsum_joint_stats st;
    assert_int_equal(pixsum_histogram_joint(NULL, &va, &vb, &s, &s, t, 64, NULL), PIXSUM_OK);
    assert_int_equal(pixsum_joint_stats_compute(t, 8, 8, &st), PIXSUM_OK);
    /* identical images: H(A) = H(B) = H(A,B) = I(A;B), NMI = 2 */
    double ha = 0;
    uint64_t cnt[8] = {0};
    for (size_t i = 0; i < n; i++)
        cnt[a[i]]++;
    for (int i = 0; i < 8; i++)
        if (cnt[i])
            ha -= (double)cnt[i] / (double)n * log((double)cnt[i] / (double)n);
    assert_true(fabs(st.entropy_a - ha) < 1e-12);
    assert_true(fabs(st.joint_entropy - ha) < 1e-12);
    assert_true(fabs(st.mutual_information - ha) < 1e-12);
    assert_true(fabs(st.normalized_mi - 2.0) < 1e-12);
    /* an independent table: I = 0 exactly up to rounding, NMI = 1 */
    uint64_t ind[6] = {2, 4, 6, 4, 8, 12}; /* rows (1, 2) x cols (2, 4, 6) */
    assert_int_equal(pixsum_joint_stats_compute(ind, 2, 3, &st), PIXSUM_OK);
    assert_true(fabs(st.mutual_information) < 1e-12);
    assert_true(fabs(st.normalized_mi - 1.0) < 1e-12);
    assert_true(fabs(st.joint_entropy - (st.entropy_a + st.entropy_b)) < 1e-12);
    /* all zero */
    uint64_t zero[4] = {0};
    assert_int_equal(pixsum_joint_stats_compute(zero, 2, 2, &st), PIXSUM_OK);
    assert_true(st.joint_entropy == 0 && st.normalized_mi == 0);
    assert_int_equal(pixsum_joint_stats_compute(zero, 0, 2, &st), PIXSUM_ERR_INVALID_ARG);
    free(a);
    free(b);
}

static void test_joint_refusals(void **state)
{
    (void)state;
    uint8_t a[64] = {0}, b[64] = {0};
    uint64_t t[256 * 256];
    pixsum_view va = pixsum_view_2d(a, PIXSUM_U8, 8, 8, 1, 0);
    pixsum_view vb = pixsum_view_2d(b, PIXSUM_U8, 8, 7, 1, 0);
    pixsum_view v2 = pixsum_view_2d(b, PIXSUM_U8, 4, 8, 2, 0);
    assert_int_equal(pixsum_histogram_joint(NULL, &va, &vb, NULL, NULL, t, 65536, NULL),
                     PIXSUM_ERR_BAD_SHAPE);
    assert_int_equal(pixsum_histogram_joint(NULL, &va, &v2, NULL, NULL, t, 65536, NULL),
                     PIXSUM_ERR_BAD_SHAPE);
    assert_int_equal(pixsum_histogram_joint(NULL, &va, &va, NULL, NULL, t, 100, NULL),
                     PIXSUM_ERR_BAD_SHAPE);
    assert_int_equal(pixsum_histogram_joint(NULL, &va, NULL, NULL, NULL, t, 65536, NULL),
                     PIXSUM_ERR_NULL);
    pixsum_hist_spec big = {0};
    big.bins = 1 << 14;
    assert_int_equal(pixsum_histogram_joint(NULL, &va, &va, &big, &big, t, 65536, NULL),
                     PIXSUM_ERR_TOO_LARGE);
    assert_int_equal(pixsum_histogram_joint(NULL, &va, &va, NULL, NULL, t, 65536, NULL),
                     PIXSUM_OK);
    assert_int_equal(t[0], 64);
}

/* ---- equalisation ------------------------------------------------------- */

static void equalize_reference(const uint16_t *in, size_t n, size_t levels, const uint8_t *mask,
                               uint16_t *out)
{
    uint64_t *cdf = calloc(levels, sizeof *cdf);
    for (size_t i = 0; i < n; i++)
        if (!mask || mask[i])
            cdf[in[i]]++;
    for (size_t v = 1; v < levels; v++)
        cdf[v] += cdf[v - 1];
    uint64_t total = cdf[levels - 1], cmin = 0;
    for (size_t v = 0; v < levels; v++)
        if (cdf[v]) {
            cmin = cdf[v];
            break;
        }
    for (size_t i = 0; i < n; i++) {
        uint64_t c = cdf[in[i]];
        if (total == cmin) {
            out[i] = in[i];
        } else if (c <= cmin) {
            out[i] = 0;
        } else {
            long double x = (long double)(c - cmin) * (long double)(levels - 1) /
                            (long double)(total - cmin);
            out[i] = (uint16_t)floorl(x + 0.5L);
        }
    }
    free(cdf);
}

static void test_equalize(void **state)
{
    (void)state;
    for (int iter = 0; iter < 12; iter++) {
        int is16 = iter % 2;
        size_t w = rnd_between(1, 200), h = rnd_between(1, 30), ch = rnd_between(1, 4);
        size_t levels = is16 ? 65536 : 256, n = w * h * ch;
        uint16_t *src = malloc(n * sizeof *src), *want = malloc(n * sizeof *want);
        uint16_t *chan = malloc(w * h * sizeof *chan), *cw = malloc(w * h * sizeof *cw);
        uint8_t *mask = malloc(w * h);
        void *img = malloc(n * (is16 ? 2 : 1)), *out = malloc(n * (is16 ? 2 : 1));
        for (size_t i = 0; i < n; i++) {
            uint16_t v = (uint16_t)(is16 ? 1000 + rnd() % 3000 : 40 + rnd() % 100);
            if (iter == 4)
                v = 77; /* constant */
            src[i] = v;
            if (is16)
                ((uint16_t *)img)[i] = v;
            else
                ((uint8_t *)img)[i] = (uint8_t)v;
        }
        for (size_t i = 0; i < w * h; i++)
            mask[i] = (uint8_t)(rnd() % 3 != 0);
        int use_mask = iter % 3 == 0;
        for (size_t c = 0; c < ch; c++) {
            for (size_t i = 0; i < w * h; i++)
                chan[i] = src[i * ch + c];
            equalize_reference(chan, w * h, levels, use_mask ? mask : NULL, cw);
            for (size_t i = 0; i < w * h; i++)
                want[i * ch + c] = cw[i];
        }
        pixsum_type t = is16 ? PIXSUM_U16 : PIXSUM_U8;
        pixsum_view vi = pixsum_view_2d(img, t, w, h, ch, 0);
        pixsum_view vo = pixsum_view_2d(out, t, w, h, ch, 0);
        pixsum_view vm = pixsum_view_2d(mask, PIXSUM_U8, w, h, 1, 0);
        assert_int_equal(pixsum_equalize(NULL, &vi, &vo, use_mask ? &vm : NULL), PIXSUM_OK);
        for (size_t i = 0; i < n; i++) {
            uint16_t g = is16 ? ((uint16_t *)out)[i] : ((uint8_t *)out)[i];
            if (g != want[i])
                fail_msg("iter %d sample %zu: got %u want %u", iter, i, g, want[i]);
        }
        /* in place gives the same */
        assert_int_equal(pixsum_equalize(NULL, &vi, &vi, use_mask ? &vm : NULL), PIXSUM_OK);
        assert_memory_equal(img, out, n * (is16 ? 2 : 1));
        free(src);
        free(want);
        free(chan);
        free(cw);
        free(mask);
        free(img);
        free(out);
    }
    /* images large enough for the mapping to be split over threads (at least
     * 256 KiB per thread), padded rows, 1 and 3 channels, in place: every
     * thread count gives the reference's output */
    for (int k = 0; k < 3; k++) {
        int is16 = k == 2;
        size_t w = k == 0 ? 1201 : 611, h = 701, ch = k == 1 ? 3 : 1, pad = 13;
        size_t es = is16 ? 2 : 1, row = (w * ch + pad) * es, n = w * h * ch;
        size_t levels = is16 ? 65536 : 256;
        uint16_t *src = malloc(n * sizeof *src), *want = malloc(n * sizeof *want);
        uint16_t *chan = malloc(w * h * sizeof *chan), *cw = malloc(w * h * sizeof *cw);
        unsigned char *img = malloc(row * h), *out = malloc(row * h);
        for (size_t y = 0; y < h; y++)
            for (size_t i = 0; i < w * ch; i++) {
                uint16_t v = (uint16_t)(is16 ? (rnd() % 500) * (rnd() % 100) : rnd() % 200);
                src[y * w * ch + i] = v;
                if (is16)
                    memcpy(img + y * row + i * 2, &v, 2);
                else
                    img[y * row + i] = (uint8_t)v;
            }
        for (size_t c = 0; c < ch; c++) {
            for (size_t i = 0; i < w * h; i++)
                chan[i] = src[i * ch + c];
            equalize_reference(chan, w * h, levels, NULL, cw);
            for (size_t i = 0; i < w * h; i++)
                want[i * ch + c] = cw[i];
        }
        pixsum_type t = is16 ? PIXSUM_U16 : PIXSUM_U8;
        pixsum_view vi = pixsum_view_2d(img, t, w, h, ch, (ptrdiff_t)row);
        pixsum_view vo = pixsum_view_2d(out, t, w, h, ch, (ptrdiff_t)row);
        for (int threads = 1; threads <= 3; threads++) {
            pixsum_ctx *ctx = pixsum_ctx_new();
            assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, threads), PIXSUM_OK);
            memset(out, 0, row * h);
            assert_int_equal(pixsum_equalize(ctx, &vi, &vo, NULL), PIXSUM_OK);
            for (size_t y = 0; y < h; y++)
                for (size_t i = 0; i < w * ch; i++) {
                    uint16_t g = 0;
                    if (is16)
                        memcpy(&g, out + y * row + i * 2, 2);
                    else
                        g = out[y * row + i];
                    if (g != want[y * w * ch + i])
                        fail_msg("large case %d, %d threads, row %zu sample %zu: got %u want %u",
                                 k, threads, y, i, g, want[y * w * ch + i]);
                }
            pixsum_ctx_free(ctx);
        }
        assert_int_equal(pixsum_equalize(NULL, &vi, &vi, NULL), PIXSUM_OK); /* in place */
        for (size_t y = 0; y < h; y++)
            assert_memory_equal(img + y * row, out + y * row, w * ch * es);
        free(src);
        free(want);
        free(chan);
        free(cw);
        free(img);
        free(out);
    }
    /* the full range is used: a two-valued u8 image maps to 0 and 255 */
    uint8_t two[4] = {10, 10, 20, 20}, o[4];
    pixsum_view v2 = pixsum_view_2d(two, PIXSUM_U8, 4, 1, 1, 0);
    pixsum_view vo = pixsum_view_2d(o, PIXSUM_U8, 4, 1, 1, 0);
    assert_int_equal(pixsum_equalize(NULL, &v2, &vo, NULL), PIXSUM_OK);
    assert_true(o[0] == 0 && o[3] == 255);
    /* refusals */
    float f[4] = {0};
    pixsum_view vf = pixsum_view_2d(f, PIXSUM_F32, 4, 1, 1, 0);
    assert_int_equal(pixsum_equalize(NULL, &vf, &vf, NULL), PIXSUM_ERR_BAD_TYPE);
    pixsum_view shifted = pixsum_view_2d(two + 1, PIXSUM_U8, 3, 1, 1, 0);
    pixsum_view first3 = pixsum_view_2d(two, PIXSUM_U8, 3, 1, 1, 0);
    assert_int_equal(pixsum_equalize(NULL, &first3, &shifted, NULL), PIXSUM_ERR_ALIASING);
    pixsum_view wrong = pixsum_view_2d(o, PIXSUM_U8, 3, 1, 1, 0);
    assert_int_equal(pixsum_equalize(NULL, &v2, &wrong, NULL), PIXSUM_ERR_BAD_SHAPE);
    assert_int_equal(pixsum_equalize(NULL, NULL, &wrong, NULL), PIXSUM_ERR_NULL);
}

/* ---- Otsu --------------------------------------------------------------- */

static void test_otsu(void **state)
{
    (void)state;
    for (int iter = 0; iter < 50; iter++) {
        size_t bins = rnd_between(2, 300);
        uint64_t *h = calloc(bins, sizeof *h);
        for (size_t i = 0; i < bins; i++)
            h[i] = rnd() % 5 == 0 ? rnd() % 1000 : 0;
        h[0] += 1;
        h[bins - 1] += 1;
        /* brute force with long double */
        long double best = -1;
        size_t want = 0;
        for (size_t t = 0; t + 1 < bins; t++) {
            long double w0 = 0, w1 = 0, s0 = 0, s1 = 0;
            for (size_t i = 0; i < bins; i++) {
                if (i <= t) {
                    w0 += h[i];
                    s0 += (long double)i * h[i];
                } else {
                    w1 += h[i];
                    s1 += (long double)i * h[i];
                }
            }
            if (w0 == 0 || w1 == 0)
                continue;
            long double d = s0 / w0 - s1 / w1, v = w0 * w1 * d * d;
            if (v > best * (1 + 1e-12L)) {
                best = v;
                want = t;
            }
        }
        size_t got;
        assert_int_equal(pixsum_otsu(h, bins, &got), PIXSUM_OK);
        /* ties within rounding may pick a bin on the same plateau */
        long double w0 = 0, w1 = 0, s0 = 0, s1 = 0;
        for (size_t i = 0; i < bins; i++) {
            if (i <= got) {
                w0 += h[i];
                s0 += (long double)i * h[i];
            } else {
                w1 += h[i];
                s1 += (long double)i * h[i];
            }
        }
        long double d = s0 / w0 - s1 / w1, v = w0 * w1 * d * d;
        assert_true(fabsl(v - best) <= best * 1e-12L);
        (void)want;
        free(h);
    }
    /* a bimodal image: 40s and 200s split between them */
    uint8_t img[1000];
    for (size_t i = 0; i < 1000; i++)
        img[i] = (uint8_t)(i % 2 ? 40 + rnd() % 10 : 200 + rnd() % 10);
    pixsum_view v = pixsum_view_2d(img, PIXSUM_U8, 100, 10, 1, 0);
    double thr;
    size_t bin;
    assert_int_equal(pixsum_otsu_threshold(NULL, &v, NULL, &thr, &bin), PIXSUM_OK);
    assert_true(bin >= 49 && bin < 200);
    assert_true(thr == (double)bin + 1);
    /* refusals */
    uint64_t one[3] = {0, 5, 0};
    size_t t;
    assert_int_equal(pixsum_otsu(one, 3, &t), PIXSUM_ERR_INVALID_ARG);
    assert_int_equal(pixsum_otsu(one, 1, &t), PIXSUM_ERR_INVALID_ARG);
    assert_int_equal(pixsum_otsu(NULL, 3, &t), PIXSUM_ERR_NULL);
}

/* ---- integral histograms ------------------------------------------------ */

static void test_ihist_rectangles(void **state)
{
    (void)state;
    const pixsum_type types[] = {PIXSUM_U8, PIXSUM_U16, PIXSUM_I16, PIXSUM_I32, PIXSUM_F32,
                                 PIXSUM_F64};
    /* iterations 12..17: wide images with 256 bins (10 MB and more), built by
     * two or three threads (the columns split at boundaries the queries
     * straddle) */
    pixsum_ctx *ctx3 = pixsum_ctx_new();
    assert_non_null(ctx3);
    assert_int_equal(pixsum_ctx_set(ctx3, PIXSUM_PARAM_THREADS, 3), PIXSUM_OK);
    for (int iter = 0; iter < 18; iter++) {
        pixsum_type t = types[iter % 6];
        int threaded = iter >= 12;
        size_t w = threaded ? rnd_between(800, 1100) : rnd_between(1, 40);
        size_t h = threaded ? rnd_between(12, 16) : rnd_between(1, 30), ch = rnd_between(1, 3);
        size_t es = pixsum_type_size(t), pad = (size_t)(iter % 2) * 3 * es;
        size_t stride = w * ch * es + pad;
        char *buf = calloc(stride * h, 1);
        for (size_t y = 0; y < h; y++)
            for (size_t i = 0; i < w * ch; i++) {
                void *p = buf + y * stride + i * es;
                double val = (double)(rnd() % 600) - 100;
                if (t == PIXSUM_U8)
                    *(uint8_t *)p = (uint8_t)rnd();
                else if (t == PIXSUM_U16)
                    *(uint16_t *)p = (uint16_t)(rnd() % 700);
                else if (t == PIXSUM_I16)
                    *(int16_t *)p = (int16_t)val;
                else if (t == PIXSUM_I32)
                    *(int32_t *)p = (int32_t)val;
                else if (t == PIXSUM_F32)
                    *(float *)p = (rnd() % 50 == 0) ? NAN : (float)(val / 3);
                else
                    *(double *)p = val / 7;
            }
        pixsum_view v = pixsum_view_2d(buf, t, w, h, ch, (ptrdiff_t)stride);
        uint8_t *mask = malloc(w * h);
        for (size_t i = 0; i < w * h; i++)
            mask[i] = (uint8_t)(rnd() % 5 != 0);
        pixsum_view vm = pixsum_view_2d(mask, PIXSUM_U8, w, h, 1, 0);
        pixsum_hist_spec spec = {0};
        spec.bins = threaded ? 256 : rnd_between(1, 40);
        if (iter % 3 == 0) {
            spec.lo = -20;
            spec.hi = 300;
        }
        if (iter % 4 == 1)
            spec.mask = &vm;
        pixsum_ihist *ih;
        int st = pixsum_ihist_new(threaded ? ctx3 : NULL, &v, &spec, 0, &ih);
        if (st != PIXSUM_OK)
            fail_msg("%s", pixsum_last_error());
        pixsum_hist_info info;
        assert_int_equal(pixsum_ihist_info(ih, &info), PIXSUM_OK);
        size_t n = info.bins * ch;
        uint64_t *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
        for (int q = 0; q < 40; q++) {
            size_t x = rnd_between(0, w - 1), y = rnd_between(0, h - 1);
            size_t rw = rnd_between(1, w - x), rh = rnd_between(1, h - y);
            assert_int_equal(pixsum_ihist_query(ih, x, y, rw, rh, got), PIXSUM_OK);
            pixsum_view crop, mcrop;
            assert_int_equal(pixsum_view_roi(&v, x, y, rw, rh, &crop), PIXSUM_OK);
            assert_int_equal(pixsum_view_roi(&vm, x, y, rw, rh, &mcrop), PIXSUM_OK);
            pixsum_hist_spec cs = spec;
            cs.bins = info.bins;
            cs.lo = info.lo;
            cs.hi = info.hi;
            cs.mask = spec.mask ? &mcrop : NULL;
            assert_int_equal(pixsum_histogram(NULL, &crop, &cs, want, n, NULL), PIXSUM_OK);
            assert_memory_equal(got, want, n * sizeof *got);
        }
        /* the whole image */
        pixsum_hist_info whole;
        assert_int_equal(pixsum_histogram(NULL, &v, &spec, want, n, &whole), PIXSUM_OK);
        for (size_t c = 0; c < ch; c++) {
            assert_int_equal(info.in_range[c], whole.in_range[c]);
            assert_int_equal(info.nan[c], whole.nan[c]);
            assert_int_equal(info.below[c], whole.below[c]);
            assert_int_equal(info.above[c], whole.above[c]);
        }
        assert_int_equal(info.pixels, whole.pixels);
        /* refusals */
        assert_int_equal(pixsum_ihist_query(ih, 0, 0, 0, 1, got), PIXSUM_ERR_BAD_SHAPE);
        assert_int_equal(pixsum_ihist_query(ih, 0, 0, w + 1, 1, got), PIXSUM_ERR_OUT_OF_RANGE);
        assert_int_equal(pixsum_ihist_query(ih, w, 0, 1, 1, got), PIXSUM_ERR_OUT_OF_RANGE);
        assert_int_equal(pixsum_ihist_query(ih, 0, h - 1, 1, 2, got), PIXSUM_ERR_OUT_OF_RANGE);
        pixsum_ihist_free(ih);
        free(got);
        free(want);
        free(buf);
        free(mask);
    }
    pixsum_ctx_free(ctx3);
}

/* pixsum_ihist_queries(): every box equal to its single query, with one
 * thread and with three (the batch large enough to split), on sizes that put
 * the prefetched corners past both ends of the batch; refusals leave the
 * output untouched and name the first bad box. */
static void test_ihist_batches(void **state)
{
    (void)state;
    pixsum_ctx *ctx1 = pixsum_ctx_new(), *ctx3 = pixsum_ctx_new();
    assert_non_null(ctx1);
    assert_non_null(ctx3);
    assert_int_equal(pixsum_ctx_set(ctx1, PIXSUM_PARAM_THREADS, 1), PIXSUM_OK);
    assert_int_equal(pixsum_ctx_set(ctx3, PIXSUM_PARAM_THREADS, 3), PIXSUM_OK);
    const size_t sizes[][3] = {{1, 1, 1}, {1, 57, 2}, {63, 1, 1}, {301, 211, 1}, {97, 45, 3}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t w = sizes[s][0], h = sizes[s][1], ch = sizes[s][2];
        uint8_t *img = malloc(w * h * ch);
        for (size_t i = 0; i < w * h * ch; i++)
            img[i] = (uint8_t)(s == 3 && i % 7 ? 255 : rnd());
        pixsum_view v = pixsum_view_2d(img, PIXSUM_U8, w, h, ch, 0);
        pixsum_hist_spec spec = {0};
        spec.bins = 40;
        pixsum_ihist *ih;
        assert_int_equal(pixsum_ihist_new(NULL, &v, &spec, 0, &ih), PIXSUM_OK);
        size_t cell = ch * 40;
        /* 3 boxes, or enough that the batch splits between 3 threads */
        size_t n = s == 3 ? 20000 : 3 + s * 7;
        pixsum_box *boxes = malloc(n * sizeof *boxes);
        for (size_t i = 0; i < n; i++) {
            size_t x = rnd_between(0, w - 1), y = rnd_between(0, h - 1);
            boxes[i] = (pixsum_box){x, y, 0, rnd_between(1, w - x), rnd_between(1, h - y), 1};
        }
        uint64_t *want = malloc(n * cell * sizeof *want), *got = malloc(n * cell * sizeof *got);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(pixsum_ihist_query(ih, boxes[i].x, boxes[i].y, boxes[i].w,
                                                boxes[i].h, want + i * cell),
                             PIXSUM_OK);
        pixsum_ctx *ctxs[] = {NULL, ctx1, ctx3};
        for (int c = 0; c < 3; c++) {
            memset(got, 0xab, n * cell * sizeof *got);
            assert_int_equal(pixsum_ihist_queries(ctxs[c], ih, boxes, n, got), PIXSUM_OK);
            assert_memory_equal(got, want, n * cell * sizeof *got);
        }
        /* refusals: the last box bad, or one in the middle; nothing written */
        const pixsum_box bad[] = {{0, 0, 0, w + 1, 1, 1}, {0, 0, 0, 0, 1, 1},
                                  {w, 0, 0, 1, 1, 1},     {0, h - 1, 0, 1, 2, 1},
                                  {0, 0, 1, 1, 1, 1},     {0, 0, 0, 1, 1, 0},
                                  {0, 0, 0, 1, 1, 2}};
        const int bad_status[] = {PIXSUM_ERR_OUT_OF_RANGE, PIXSUM_ERR_BAD_SHAPE,
                                  PIXSUM_ERR_OUT_OF_RANGE, PIXSUM_ERR_OUT_OF_RANGE,
                                  PIXSUM_ERR_OUT_OF_RANGE, PIXSUM_ERR_BAD_SHAPE,
                                  PIXSUM_ERR_OUT_OF_RANGE};
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            size_t at = k % 2 ? n - 1 : n / 2;
            pixsum_box keep = boxes[at];
            boxes[at] = bad[k];
            memset(got, 0xab, n * cell * sizeof *got);
            assert_int_equal(pixsum_ihist_queries(ctx3, ih, boxes, n, got), bad_status[k]);
            char name[32];
            snprintf(name, sizeof name, "box %zu ", at);
            if (!strstr(pixsum_last_error(), name))
                fail_msg("'%s' does not name %s", pixsum_last_error(), name);
            for (size_t i = 0; i < n * cell; i++)
                assert_int_equal(got[i], 0xababababababababull);
            boxes[at] = keep;
        }
        assert_int_equal(pixsum_ihist_queries(NULL, ih, boxes, 0, NULL), PIXSUM_OK);
        assert_int_equal(pixsum_ihist_queries(NULL, ih, NULL, 1, got), PIXSUM_ERR_NULL);
        assert_int_equal(pixsum_ihist_queries(NULL, ih, boxes, 1, NULL), PIXSUM_ERR_NULL);
        assert_int_equal(pixsum_ihist_queries(NULL, NULL, boxes, 1, got), PIXSUM_ERR_NULL);
        assert_int_equal(pixsum_ihist_queries(NULL, ih, boxes, SIZE_MAX / 8, got),
                         PIXSUM_ERR_TOO_LARGE);
        pixsum_ihist_free(ih);
        free(boxes);
        free(want);
        free(got);
        free(img);
    }
    pixsum_ctx_free(ctx1);
    pixsum_ctx_free(ctx3);
}

/* Queries of every box of a w x h image (a sample of them when large) from
 * two integral histograms must agree. */
static void assert_same_ihist(const pixsum_ihist *a, const pixsum_ihist *b)
{
    pixsum_hist_info ia, ib;
    assert_int_equal(pixsum_ihist_info(a, &ia), PIXSUM_OK);
    assert_int_equal(pixsum_ihist_info(b, &ib), PIXSUM_OK);
    assert_memory_equal(&ia, &ib, sizeof ia);
    size_t cell = ia.channels * ia.bins;
    uint64_t *qa = malloc(cell * sizeof *qa), *qb = malloc(cell * sizeof *qb);
    size_t w = 0, h = 0;
    /* the image's size from the queries that fit (the info has no shape) */
    while (pixsum_ihist_query(a, 0, 0, w + 1, 1, qa) == PIXSUM_OK)
        w++;
    while (pixsum_ihist_query(a, 0, 0, 1, h + 1, qa) == PIXSUM_OK)
        h++;
    assert_int_equal(pixsum_ihist_query(b, 0, 0, w, h, qb), PIXSUM_OK);
    assert_int_not_equal(pixsum_ihist_query(b, 0, 0, w + 1, h, qb), PIXSUM_OK);
    for (int k = 0; k < 200; k++) {
        size_t x = rnd_between(0, w - 1), y = rnd_between(0, h - 1);
        size_t rw = rnd_between(1, w - x), rh = rnd_between(1, h - y);
        assert_int_equal(pixsum_ihist_query(a, x, y, rw, rh, qa), PIXSUM_OK);
        assert_int_equal(pixsum_ihist_query(b, x, y, rw, rh, qb), PIXSUM_OK);
        assert_memory_equal(qa, qb, cell * sizeof *qa);
    }
    free(qa);
    free(qb);
}

/* pixsum_ihist_rebuild(): a table rebuilt for each of a sequence of images
 * (same shape, smaller, larger, more channels, another type, a data range)
 * answers as a fresh pixsum_ihist_new() of that image; a refused rebuild
 * (limit, bad spec, NULL) leaves the last table as it was. */
static void test_ihist_rebuild(void **state)
{
    (void)state;
    enum { MAXW = 300, MAXH = 200 };
    uint8_t *pix = malloc(MAXW * MAXH * 3);
    uint16_t *pix16 = malloc(MAXW * MAXH * sizeof *pix16);
    for (size_t i = 0; i < MAXW * MAXH * 3; i++)
        pix[i] = (uint8_t)rnd();
    for (size_t i = 0; i < MAXW * MAXH; i++)
        pix16[i] = (uint16_t)(rnd() % 5000);
    struct {
        pixsum_view v;
        pixsum_hist_spec spec;
    } seq[] = {
        {pixsum_view_2d(pix, PIXSUM_U8, 120, 90, 1, 0), {32, 0, 256, NULL}},
        {pixsum_view_2d(pix + 7, PIXSUM_U8, 120, 90, 1, 0), {32, 0, 256, NULL}},
        {pixsum_view_2d(pix, PIXSUM_U8, 31, 17, 1, 0), {32, 0, 256, NULL}},
        {pixsum_view_2d(pix, PIXSUM_U8, MAXW, MAXH, 3, 0), {20, 0, 256, NULL}},
        {pixsum_view_2d(pix16, PIXSUM_U16, MAXW, MAXH, 1, 0), {64, 0, 0, NULL}},
        {pixsum_view_2d(pix, PIXSUM_U8, 1, 1, 1, 0), {3, 0, 256, NULL}},
    };
    pixsum_ctx *ctx2 = pixsum_ctx_new();
    assert_non_null(ctx2);
    assert_int_equal(pixsum_ctx_set(ctx2, PIXSUM_PARAM_THREADS, 2), PIXSUM_OK);
    pixsum_ihist *ih = NULL;
    assert_int_equal(pixsum_ihist_new(NULL, &seq[0].v, &seq[0].spec, 0, &ih), PIXSUM_OK);
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        assert_int_equal(pixsum_ihist_rebuild(i % 2 ? ctx2 : NULL, ih, &seq[i].v, &seq[i].spec, 0),
                         PIXSUM_OK);
        pixsum_ihist *fresh;
        assert_int_equal(pixsum_ihist_new(NULL, &seq[i].v, &seq[i].spec, 0, &fresh), PIXSUM_OK);
        assert_same_ihist(ih, fresh);
        /* refusals: the table stays the last one built */
        size_t bytes;
        assert_int_equal(pixsum_ihist_bytes(&seq[3].v, &seq[3].spec, &bytes), PIXSUM_OK);
        assert_int_equal(pixsum_ihist_rebuild(NULL, ih, &seq[3].v, &seq[3].spec, bytes - 1),
                         PIXSUM_ERR_TOO_LARGE);
        pixsum_hist_spec bad = {4, 10, 5, NULL};
        assert_int_not_equal(pixsum_ihist_rebuild(NULL, ih, &seq[0].v, &bad, 0), PIXSUM_OK);
        assert_int_equal(pixsum_ihist_rebuild(NULL, ih, NULL, &seq[0].spec, 0), PIXSUM_ERR_NULL);
        assert_same_ihist(ih, fresh);
        pixsum_ihist_free(fresh);
    }
    assert_int_equal(pixsum_ihist_rebuild(NULL, NULL, &seq[0].v, &seq[0].spec, 0),
                     PIXSUM_ERR_NULL);
    pixsum_ihist_free(ih);
    pixsum_ctx_free(ctx2);
    free(pix);
    free(pix16);
}

static void test_ihist_memory_limit(void **state)
{
    (void)state;
    uint16_t img[100 * 100] = {0};
    pixsum_view v = pixsum_view_2d(img, PIXSUM_U16, 100, 100, 1, 0);
    size_t bytes;
    assert_int_equal(pixsum_ihist_bytes(&v, NULL, &bytes), PIXSUM_OK);
    assert_int_equal(bytes, (size_t)101 * 101 * 65536 * 4);
    pixsum_ihist *ih = (pixsum_ihist *)1;
    assert_int_equal(pixsum_ihist_new(NULL, &v, NULL, 0, &ih), PIXSUM_ERR_TOO_LARGE);
    assert_null(ih);
    char need[32];
    snprintf(need, sizeof need, "%zu", bytes);
    assert_non_null(strstr(pixsum_last_error(), need)); /* the detail gives the cost */
    pixsum_hist_spec s = {0};
    s.bins = 16;
    assert_int_equal(pixsum_ihist_new(NULL, &v, &s, 1000, &ih), PIXSUM_ERR_TOO_LARGE);
    assert_int_equal(pixsum_ihist_new(NULL, &v, &s, 101 * 101 * 16 * 4, &ih), PIXSUM_OK);
    uint64_t h[16];
    assert_int_equal(pixsum_ihist_query(ih, 10, 10, 5, 7, h), PIXSUM_OK);
    assert_int_equal(h[0], 35);
    pixsum_ihist_free(ih);
    pixsum_ihist_free(NULL);
    /* 3-D and size_t overflow */
    pixsum_view v3 = pixsum_view_3d(img, PIXSUM_U16, 10, 10, 2, 1, 0, 0);
    assert_int_equal(pixsum_ihist_bytes(&v3, NULL, &bytes), PIXSUM_ERR_BAD_SHAPE);
    pixsum_view huge = pixsum_view_2d(img, PIXSUM_U8, (size_t)1 << 40, 1, 1, 0);
    huge.height = 1;
    s.bins = PIXSUM_HIST_MAX_BINS;
    s.lo = 0;
    s.hi = 256;
    /* the view check refuses before (the buffer is small), or the cost overflows */
    assert_int_not_equal(pixsum_ihist_bytes(&huge, &s, &bytes), PIXSUM_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_joint_against_naive),
        cmocka_unit_test(test_joint_paths),
        cmocka_unit_test(test_joint_information),
        cmocka_unit_test(test_joint_refusals),
        cmocka_unit_test(test_equalize),
        cmocka_unit_test(test_otsu),
        cmocka_unit_test(test_ihist_rectangles),
        cmocka_unit_test(test_ihist_batches),
        cmocka_unit_test(test_ihist_rebuild),
        cmocka_unit_test(test_ihist_memory_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

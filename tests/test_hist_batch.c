/*
 * test_hist_batch.c - pixsum_histogram_batch(): every image of a batch gets
 * its own histogram, counted here from the definition (each selected sample's
 * bin found by bisection over the documented edges, tests/testutil.c), with
 * the range the documented defaults give (over the whole batch, or per image
 * with PIXSUM_HIST_RANGE_PER_IMAGE), decided here from the samples' minimum
 * and maximum, not with the library's code. Random N, sizes (1x1, 1xN, Nx1,
 * odd), 1-4 channels, every input type, padded and ROI layouts, no mask / one
 * mask per image / one shared mask, given and default ranges, every histogram
 * method, 1 and several threads (batches smaller and larger than the thread
 * count). Then the refusals, which leave the counts untouched.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pixsum.h"
#include "testutil.h"

static const pixsum_type types[] = {PIXSUM_U8,  PIXSUM_U16, PIXSUM_I16,
                                    PIXSUM_I32, PIXSUM_F32, PIXSUM_F64};

/* Whether mask (NULL, depth 1 = shared, or depth n) selects pixel (x, y) of image z. */
static int selected(const pixsum_view *mask, size_t x, size_t y, size_t z)
{
    if (!mask)
        return 1;
    return tu_get_i(mask, x, y, mask->depth == 1 ? 0 : z, 0) != 0;
}

/* The documented default range of the data-range types from the finite
 * selected samples of images [z0, z1): i32 [min, max + 1); floats
 * [min, next double above max), one value v [v, v + 1); [0, 1) if none. */
static void default_range(const pixsum_view *in, const pixsum_view *mask, size_t z0, size_t z1,
                          double *lo, double *hi)
{
    double mn = INFINITY, mx = -INFINITY;
    for (size_t z = z0; z < z1; z++)
        for (size_t y = 0; y < in->height; y++)
            for (size_t x = 0; x < in->width; x++)
                for (size_t c = 0; c < in->channels && selected(mask, x, y, z); c++) {
                    double v = (double)tu_get_f(in, x, y, z, c);
                    if (isfinite(v)) {
                        mn = v < mn ? v : mn;
                        mx = v > mx ? v : mx;
                    }
                }
    if (mn > mx) {
        *lo = 0, *hi = 1;
    } else if (in->type == PIXSUM_I32 || (mn == mx && mx + 1 > mx)) {
        *lo = mn, *hi = mx + 1;
    } else {
        *lo = mn, *hi = nextafter(mx, INFINITY);
        if (!isfinite(*hi))
            *hi = mx, *lo = mn < mx ? mn : nextafter(mx, -INFINITY);
    }
}

/* Checks image z's counts (and info) against the definition. */
static void check_image(const pixsum_view *in, const pixsum_view *mask, size_t z, size_t bins,
                        double lo, double hi, const uint64_t *counts,
                        const pixsum_hist_info *info, const char *what)
{
    size_t ch = in->channels;
    uint64_t *want = calloc(ch * bins, sizeof *want);
    uint64_t out[4] = {0}, pixels = 0;
    assert_non_null(want);
    for (size_t y = 0; y < in->height; y++)
        for (size_t x = 0; x < in->width; x++) {
            if (!selected(mask, x, y, z))
                continue;
            pixels++;
            for (size_t c = 0; c < ch; c++) {
                size_t b = tu_hist_bin((double)tu_get_f(in, x, y, z, c), bins, lo, hi);
                if (b == SIZE_MAX)
                    out[c]++;
                else
                    want[c * bins + b]++;
            }
        }
    for (size_t i = 0; i < ch * bins; i++)
        if (counts[i] != want[i])
            fail_msg("%s: image %zu channel %zu bin %zu: %llu, want %llu", what, z, i / bins,
                     i % bins, (unsigned long long)counts[i], (unsigned long long)want[i]);
    assert_int_equal(info->bins, bins);
    assert_int_equal(info->channels, ch);
    assert_true(info->lo == lo && info->hi == hi);
    assert_int_equal(info->pixels, pixels);
    for (size_t c = 0; c < ch; c++)
        assert_int_equal(info->below[c] + info->above[c] + info->nan[c], out[c]);
    free(want);
}

static void test_batches_against_definition(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    int methods[32];
    size_t nmethods = tu_methods_for(PIXSUM_OP_HISTOGRAM, methods, 32);
    for (int round = 0; round < 240; round++) {
        pixsum_type type = types[tu_below(r, 6)];
        size_t w = tu_dim(r, 21), h = tu_dim(r, 17), n = 1 + (size_t)tu_below(r, 6);
        size_t ch = 1 + (size_t)tu_below(r, 4);
        int threads = 1 + (int)tu_below(r, 3), mask_kind = (int)tu_below(r, 3);
        int given = (int)tu_below(r, 2);
        unsigned flags = tu_below(r, 2) ? PIXSUM_HIST_RANGE_PER_IMAGE : 0;
        tu_layout lay = tu_random_layout(r);
        lay.bottom_up = 0; /* a batch view has top-down rows and a slice stride */
        tu_image in, mask;
        assert_int_equal(tu_image_alloc(&in, type, w, h, n, ch, &lay), 0);
        tu_fill_random(r, &in.view, tu_below(r, 3) ? TU_FILL_SMALL : TU_FILL_MIXED);
        tu_image_snapshot(&in);
        pixsum_hist_spec spec = {0};
        if (mask_kind) {
            assert_int_equal(tu_image_alloc(&mask, PIXSUM_U8, w, h, mask_kind == 1 ? 1 : n, 1,
                                            NULL), 0);
            for (size_t z = 0; z < mask.view.depth; z++)
                for (size_t y = 0; y < h; y++)
                    for (size_t x = 0; x < w; x++)
                        tu_set_i(&mask.view, x, y, z, 0, tu_below(r, 3) ? 1 : 0);
            spec.mask = &mask.view;
        }
        if (given) {
            spec.bins = 1 + (size_t)tu_below(r, 40);
            spec.lo = -3.0 + (double)tu_below(r, 5);
            spec.hi = spec.lo + 1 + (double)tu_below(r, 20);
        } else if (tu_below(r, 2) && (type == PIXSUM_I32 || type == PIXSUM_F32 ||
                                      type == PIXSUM_F64)) {
            spec.bins = 1 + (size_t)tu_below(r, 300);
        }
        pixsum_hist_info total;
        assert_int_equal(pixsum_hist_resolve(&in.view, &(pixsum_hist_spec){spec.bins, spec.lo,
                                                                            spec.hi, NULL},
                                             &total), PIXSUM_OK);
        size_t bins = total.bins, len = n * ch * bins;
        uint64_t *counts = malloc(len * sizeof *counts);
        pixsum_hist_info *infos = calloc(n, sizeof *infos);
        assert_non_null(counts);
        assert_non_null(infos);
        pixsum_ctx *ctx = pixsum_ctx_new();
        assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, threads), PIXSUM_OK);
        int method = tu_below(r, 3) ? -1 : methods[tu_below(r, nmethods)];
        if (method >= 0)
            assert_int_equal(pixsum_ctx_set_method(ctx, tu_method_name(method)), PIXSUM_OK);
        int st = pixsum_histogram_batch(ctx, &in.view, &spec, flags, counts, len, infos);
        char what[200];
        snprintf(what, sizeof what, "%s %zux%zu x%zu c%zu mask %d given %d flags %u thr %d %s",
                 pixsum_type_name(type), w, h, n, ch, mask_kind, given, flags, threads,
                 method >= 0 ? tu_method_name(method) : "auto");
        if ((st == PIXSUM_ERR_UNAVAILABLE || st == PIXSUM_ERR_UNSUPPORTED) && method >= 0 &&
            !tu_method_must_support(method)) {
            /* a backend this machine lacks (e.g. no GPU) */
        } else {
            if (st != PIXSUM_OK)
                fail_msg("%s: %s", what, pixsum_last_error());
            const pixsum_view *mv = mask_kind ? &mask.view : NULL;
            double lo = spec.lo, hi = spec.hi;
            bool data = !given && (type == PIXSUM_I32 || type == PIXSUM_F32 ||
                                   type == PIXSUM_F64);
            if (data && !flags)
                default_range(&in.view, mv, 0, n, &lo, &hi);
            for (size_t z = 0; z < n; z++) {
                if (data && flags)
                    default_range(&in.view, mv, z, z + 1, &lo, &hi);
                else if (!given && !data) /* the type's fixed range */
                    lo = type == PIXSUM_I16 ? -32768 : 0,
                    hi = type == PIXSUM_U8 ? 256 : type == PIXSUM_U16 ? 65536 : 32768;
                check_image(&in.view, mv, z, bins, lo, hi, counts + z * ch * bins, &infos[z],
                            what);
            }
        }
        assert_int_equal(tu_image_check_untouched(&in, 1, "batch input"), 0);
        pixsum_ctx_free(ctx);
        free(counts);
        free(infos);
        tu_image_free(&in);
        if (mask_kind)
            tu_image_free(&mask);
    }
}

/* A batch equals pixsum_histogram() of each image with the same range. */
static void test_equals_single_image_calls(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    const size_t w = 37, h = 29, n = 5, ch = 2, bins = 100;
    tu_image in;
    assert_int_equal(tu_image_alloc(&in, PIXSUM_F32, w, h, n, ch, NULL), 0);
    tu_fill_random(r, &in.view, TU_FILL_MIXED);
    uint64_t *batch = malloc(n * ch * bins * sizeof *batch), one[2 * 100];
    assert_non_null(batch);
    pixsum_hist_spec spec = {bins, 0, 0, NULL};
    pixsum_hist_info info;
    assert_int_equal(pixsum_histogram_batch(NULL, &in.view, &spec, 0, batch, n * ch * bins,
                                            NULL), PIXSUM_OK);
    assert_int_equal(pixsum_hist_resolve(&in.view, &spec, &info), PIXSUM_OK);
    for (size_t z = 0; z < n; z++) {
        pixsum_view s;
        assert_int_equal(pixsum_view_roi3d(&in.view, 0, 0, z, w, h, 1, &s), PIXSUM_OK);
        pixsum_hist_spec same = {bins, info.lo, info.hi, NULL};
        assert_int_equal(pixsum_histogram(NULL, &s, &same, one, ch * bins, NULL), PIXSUM_OK);
        assert_memory_equal(one, batch + z * ch * bins, sizeof one);
    }
    free(batch);
    tu_image_free(&in);
}

static void test_refusals(void **state)
{
    (void)state;
    uint8_t img[4 * 3 * 2] = {0}, m[4 * 3 * 3] = {0};
    uint64_t counts[256 * 2];
    pixsum_view in = pixsum_view_3d(img, PIXSUM_U8, 4, 3, 2, 1, 4, 12);
    memset(counts, 0x5A, sizeof counts);
    assert_int_equal(pixsum_histogram_batch(NULL, NULL, NULL, 0, counts, 512, NULL),
                     PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_histogram_batch(NULL, &in, NULL, 0, NULL, 512, NULL),
                     PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_histogram_batch(NULL, &in, NULL, 4, counts, 512, NULL),
                     PIXSUM_ERR_INVALID_ARG);
    assert_int_equal(pixsum_histogram_batch(NULL, &in, NULL, 0, counts, 511, NULL),
                     PIXSUM_ERR_BAD_SHAPE);
    assert_non_null(strstr(pixsum_last_error(), "512 needed"));
    pixsum_view mask3 = pixsum_view_3d(m, PIXSUM_U8, 4, 3, 3, 1, 4, 12);
    pixsum_hist_spec spec = {0, 0, 0, &mask3};
    assert_int_equal(pixsum_histogram_batch(NULL, &in, &spec, 0, counts, 512, NULL),
                     PIXSUM_ERR_BAD_SHAPE);
    spec.bins = PIXSUM_HIST_MAX_BINS + 1;
    spec.mask = NULL;
    assert_int_equal(pixsum_histogram_batch(NULL, &in, &spec, 0, counts, 512, NULL),
                     PIXSUM_ERR_INVALID_ARG);
    for (size_t i = 0; i < 512; i++)
        assert_int_equal(counts[i], 0x5A5A5A5A5A5A5A5Aull);
    /* counts over the images */
    uint64_t both[64];
    pixsum_view over = pixsum_view_3d(both, PIXSUM_U8, 4, 3, 2, 1, 4, 12);
    pixsum_hist_spec four = {4, 0, 256, NULL};
    assert_int_equal(pixsum_histogram_batch(NULL, &over, &four, 0, both, 64, NULL),
                     PIXSUM_ERR_ALIASING);
}

int main(void)
{
    tu_init("test_hist_batch");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batches_against_definition),
        cmocka_unit_test(test_equals_single_image_calls),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

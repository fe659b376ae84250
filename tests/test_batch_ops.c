/*
 * test_batch_ops.c - the batched box filter (pixsum_box_filter() of a view of
 * depth N), pixsum_equalize_batch() and pixsum_otsu_batch(). Every image of a
 * batch must equal, bit for bit, the single-image call on that slice (copied
 * into its own packed image, so the single call sees other memory and
 * strides); and for some cases the batch is also checked against references
 * decided here from the definitions: window sums and rounded means walking
 * each window with the border's mapping of coordinates, the equalisation
 * formula from counts taken sample by sample, and Otsu's threshold as the
 * bin maximising the between-class variance found by trying every bin.
 * Random N (1, 2, 7 and others), sizes 1x1, 1xN, Nx1, odd, 1-4 channels,
 * padded / bottom-up / ROI layouts, every border, masks per image and
 * shared, u8 and u16 equalisation, Otsu with shared and per-image ranges,
 * 1 and several threads (batches smaller and larger than the thread count).
 * Then the refusals, which leave the outputs untouched.
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

static const size_t batch_sizes[] = {1, 2, 7, 3, 5};

/* Width and height of a case: 1x1, 1xN, Nx1 and odd sizes in turn. */
static void draw_size(tu_rng *r, int k, size_t *w, size_t *h)
{
    switch (k % 4) {
    case 0: *w = 1, *h = 1; break;
    case 1: *w = tu_between(r, 1, 40), *h = 1; break;
    case 2: *w = 1, *h = tu_between(r, 1, 40); break;
    default: *w = 2 * tu_between(r, 1, 20) + 1, *h = 2 * tu_between(r, 1, 15) + 1; break;
    }
}

static pixsum_ctx *ctx_with_threads(int threads)
{
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_non_null(ctx);
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, threads), PIXSUM_OK);
    return ctx;
}

/* Copies slice z of `batch` into a packed single image `one` (allocated). */
static void copy_slice(const pixsum_view *batch, size_t z, tu_image *one)
{
    assert_int_equal(tu_image_alloc(one, batch->type, batch->width, batch->height, 1,
                                    batch->channels, NULL), 0);
    size_t es = pixsum_type_size(batch->type);
    for (size_t y = 0; y < batch->height; y++)
        for (size_t x = 0; x < batch->width; x++)
            for (size_t c = 0; c < batch->channels; c++)
                memcpy(tu_elem(&one->view, x, y, 0, c), tu_elem(batch, x, y, z, c), es);
}

/* Whether slice z of `batch` holds the same bytes as the single image. */
static int slice_equals(const pixsum_view *batch, size_t z, const pixsum_view *one)
{
    size_t es = pixsum_type_size(batch->type);
    for (size_t y = 0; y < batch->height; y++)
        for (size_t x = 0; x < batch->width; x++)
            for (size_t c = 0; c < batch->channels; c++)
                if (memcmp(tu_elem(one, x, y, 0, c), tu_elem(batch, x, y, z, c), es) != 0) {
                    fprintf(stderr, "image %zu differs at (%zu, %zu) channel %zu\n", z, x, y,
                            c);
                    return 0;
                }
    return 1;
}

/* ---- box filter ---------------------------------------------------------- */

/* The coordinate i of an axis of n samples under a border, or -1 when the
 * sample is outside (constant, shrink). Reflections repeat until inside. */
static long map_coord(long i, long n, pixsum_border b)
{
    if (i >= 0 && i < n)
        return i;
    switch (b) {
    case PIXSUM_BORDER_REPLICATE:
        return i < 0 ? 0 : n - 1;
    case PIXSUM_BORDER_REFLECT:
    case PIXSUM_BORDER_REFLECT101:
        if (n == 1)
            return 0;
        while (i < 0 || i >= n) {
            if (i < 0)
                i = b == PIXSUM_BORDER_REFLECT ? -i - 1 : -i;
            else
                i = b == PIXSUM_BORDER_REFLECT ? 2 * n - 1 - i : 2 * n - 2 - i;
        }
        return i;
    default:
        return -1;
    }
}

/* The window sum and pixel count of output (x, y), channel c, of image z:
 * rows y - kh/2 .. (VALID: y .. from the corner), outside samples mapped by
 * the border (constant: cval; shrink: left out of sum and count). */
static void window_sum(const pixsum_view *in, size_t z, size_t c,
                       const pixsum_box_filter_spec *s, size_t x, size_t y, int64_t cval,
                       int64_t *sum, int64_t *count)
{
    long x0 = (long)x - (long)(s->kw / 2), y0 = (long)y - (long)(s->kh / 2);
    if (s->border == PIXSUM_BORDER_VALID)
        x0 = (long)x, y0 = (long)y;
    *sum = 0;
    *count = 0;
    for (long dy = 0; dy < (long)s->kh; dy++)
        for (long dx = 0; dx < (long)s->kw; dx++) {
            long sx = map_coord(x0 + dx, (long)in->width, s->border);
            long sy = map_coord(y0 + dy, (long)in->height, s->border);
            if (sx < 0 || sy < 0) {
                if (s->border == PIXSUM_BORDER_CONSTANT) {
                    *sum += cval;
                    ++*count;
                }
                continue;
            }
            *sum += tu_get_i(in, (size_t)sx, (size_t)sy, z, c);
            ++*count;
        }
}

/* Checks a u8 batch's sums (u32) or means (u8: the exact quotient rounded
 * to nearest, ties to even) against window_sum(). */
static void check_box_reference(const pixsum_view *in, const pixsum_view *out,
                                const pixsum_box_filter_spec *s)
{
    for (size_t z = 0; z < in->depth; z++)
        for (size_t y = 0; y < out->height; y++)
            for (size_t x = 0; x < out->width; x++)
                for (size_t c = 0; c < in->channels; c++) {
                    int64_t sum, n;
                    window_sum(in, z, c, s, x, y, (int64_t)s->border_value, &sum, &n);
                    int64_t want = sum;
                    if (s->stat == PIXSUM_BOX_MEAN) {
                        int64_t q = sum / n, rem = sum - q * n;
                        if (2 * rem > n || (2 * rem == n && (q & 1)))
                            q++;
                        want = q;
                    }
                    int64_t got = tu_get_i(out, x, y, z, c);
                    if (got != want)
                        fail_msg("box %s %s: image %zu (%zu, %zu) c%zu: %lld, the definition "
                                 "gives %lld", s->stat == PIXSUM_BOX_MEAN ? "mean" : "sum",
                                 pixsum_border_name(s->border), z, x, y, c, (long long)got,
                                 (long long)want);
                }
}

static void test_box_filter_batches(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    static const pixsum_type in_types[] = {PIXSUM_U8, PIXSUM_U16, PIXSUM_I16, PIXSUM_F32,
                                           PIXSUM_F64};
    for (int k = 0; k < 160; k++) {
        size_t w, h, n = batch_sizes[k % 5], ch = tu_between(r, 1, 4);
        draw_size(r, k / 5, &w, &h);
        pixsum_box_filter_spec spec;
        memset(&spec, 0, sizeof spec);
        spec.border = (pixsum_border)(k % PIXSUM_BORDER_COUNT);
        spec.kw = tu_between(r, 1, 7);
        spec.kh = tu_between(r, 1, 7);
        bool reference = k % 3 == 0; /* u8 sums or means, checked from the definition */
        pixsum_type it = reference ? PIXSUM_U8 : in_types[tu_below(r, 5)];
        if (spec.border == PIXSUM_BORDER_VALID) {
            spec.kw = tu_between(r, 1, w);
            spec.kh = tu_between(r, 1, h);
        }
        if (spec.border == PIXSUM_BORDER_CONSTANT)
            spec.border_value = (double)tu_below(r, 256);
        spec.stat = reference ? (k % 2 ? PIXSUM_BOX_MEAN : PIXSUM_BOX_SUM)
                              : (pixsum_box_stat)tu_below(r, 4);
        pixsum_type ot = pixsum_box_filter_type(it, &spec);
        if (!reference && spec.stat == PIXSUM_BOX_MEAN && tu_below(r, 2))
            ot = PIXSUM_F32;
        if (reference && spec.stat == PIXSUM_BOX_SUM)
            ot = PIXSUM_U32;
        size_t ow, oh;
        assert_int_equal(pixsum_box_filter_shape(&spec, w, h, &ow, &oh), PIXSUM_OK);
        tu_layout li = tu_random_layout(r), lo = tu_random_layout(r);
        tu_image in, out;
        assert_int_equal(tu_image_alloc(&in, it, w, h, n, ch, &li), 0);
        assert_int_equal(tu_image_alloc(&out, ot, ow, oh, n, ch, &lo), 0);
        tu_fill_random(r, &in.view, TU_FILL_MIXED);
        tu_image_snapshot(&out);
        int threads = (int)tu_between(r, 1, 4);
        pixsum_ctx *ctx = ctx_with_threads(threads);
        assert_int_equal(pixsum_box_filter(ctx, &in.view, &spec, &out.view), PIXSUM_OK);
        assert_int_equal(tu_image_check_untouched(&out, 0, "box batch output"), 0);
        for (size_t z = 0; z < n; z++) {
            tu_image one, res;
            copy_slice(&in.view, z, &one);
            assert_int_equal(tu_image_alloc(&res, ot, ow, oh, 1, ch, NULL), 0);
            assert_int_equal(pixsum_box_filter(ctx, &one.view, &spec, &res.view), PIXSUM_OK);
            if (!slice_equals(&out.view, z, &res.view))
                fail_msg("box batch %s %s %zux%zu x%zu c%zu window %zux%zu stat %d thr %d: "
                         "image %zu differs from its single call", pixsum_type_name(it),
                         pixsum_border_name(spec.border), w, h, n, ch, spec.kw, spec.kh,
                         (int)spec.stat, threads, z);
            tu_image_free(&one);
            tu_image_free(&res);
        }
        if (reference)
            check_box_reference(&in.view, &out.view, &spec);
        pixsum_ctx_free(ctx);
        tu_image_free(&in);
        tu_image_free(&out);
    }
}

static void test_box_filter_refusals(void **state)
{
    (void)state;
    tu_image in, out, small;
    assert_int_equal(tu_image_alloc(&in, PIXSUM_U8, 9, 7, 3, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&out, PIXSUM_U8, 9, 7, 2, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&small, PIXSUM_U8, 8, 7, 3, 1, NULL), 0);
    pixsum_box_filter_spec spec = {3, 3, PIXSUM_BOX_MEAN, PIXSUM_BORDER_REFLECT101, 0};
    tu_image_snapshot(&out);
    tu_image_snapshot(&small);
    assert_int_equal(pixsum_box_filter(NULL, &in.view, &spec, &out.view), PIXSUM_ERR_BAD_SHAPE);
    assert_non_null(strstr(pixsum_last_error(), "3 images"));
    assert_int_equal(pixsum_box_filter(NULL, &in.view, &spec, &small.view),
                     PIXSUM_ERR_BAD_SHAPE);
    assert_int_equal(tu_image_check_untouched(&out, 1, "out"), 0);
    assert_int_equal(tu_image_check_untouched(&small, 1, "small"), 0);
    /* the output overlapping a later image of the input batch */
    pixsum_view later;
    assert_int_equal(pixsum_view_roi3d(&in.view, 0, 0, 1, 9, 7, 2, &later), PIXSUM_OK);
    pixsum_view first2;
    assert_int_equal(pixsum_view_roi3d(&in.view, 0, 0, 0, 9, 7, 2, &first2), PIXSUM_OK);
    assert_int_equal(pixsum_box_filter(NULL, &first2, &spec, &later), PIXSUM_ERR_ALIASING);
    tu_image_free(&in);
    tu_image_free(&out);
    tu_image_free(&small);
}

/* ---- equalisation ---------------------------------------------------------- */

/* Image z equalised from the definition: counts of the selected samples per
 * channel, cdf, v -> round((cdf[v] - cdf_min) (L - 1) / (n - cdf_min)) with
 * halves up; a channel with one value (n == cdf_min) unchanged. */
static void check_equalize_reference(const pixsum_view *in, const pixsum_view *out,
                                     const pixsum_view *mask, size_t z)
{
    size_t levels = in->type == PIXSUM_U8 ? 256 : 65536;
    uint64_t *cdf = calloc(levels, sizeof *cdf);
    assert_non_null(cdf);
    for (size_t c = 0; c < in->channels; c++) {
        memset(cdf, 0, levels * sizeof *cdf);
        for (size_t y = 0; y < in->height; y++)
            for (size_t x = 0; x < in->width; x++)
                if (!mask || tu_get_i(mask, x, y, mask->depth == 1 ? 0 : z, 0))
                    cdf[tu_get_i(in, x, y, z, c)]++;
        for (size_t v = 1; v < levels; v++)
            cdf[v] += cdf[v - 1];
        uint64_t n = cdf[levels - 1], cmin = 0;
        for (size_t v = 0; v < levels && !cmin; v++)
            cmin = cdf[v];
        for (size_t y = 0; y < in->height; y++)
            for (size_t x = 0; x < in->width; x++) {
                uint64_t v = (uint64_t)tu_get_i(in, x, y, z, c), want = v;
                if (n != cmin) {
                    uint64_t num = cdf[v] <= cmin ? 0 : (cdf[v] - cmin) * (levels - 1);
                    want = (2 * num + (n - cmin)) / (2 * (n - cmin));
                }
                uint64_t got = (uint64_t)tu_get_i(out, x, y, z, c);
                if (got != want)
                    fail_msg("equalize image %zu (%zu, %zu) c%zu: %llu, the definition gives "
                             "%llu", z, x, y, c, (unsigned long long)got,
                             (unsigned long long)want);
            }
    }
    free(cdf);
}

static void test_equalize_batches(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    for (int k = 0; k < 90; k++) {
        size_t w, h, n = batch_sizes[k % 5], ch = tu_between(r, 1, 4);
        draw_size(r, k / 5, &w, &h);
        pixsum_type t = k % 2 ? PIXSUM_U16 : PIXSUM_U8;
        int mask_kind = (int)tu_below(r, 3); /* none, shared, per image */
        int in_place = tu_below(r, 4) == 0;
        tu_layout li = tu_random_layout(r), lo = tu_random_layout(r);
        tu_image in, out, mask, orig;
        assert_int_equal(tu_image_alloc(&in, t, w, h, n, ch, &li), 0);
        assert_int_equal(tu_image_alloc(&out, t, w, h, n, ch, &lo), 0);
        assert_int_equal(tu_image_alloc(&orig, t, w, h, n, ch, NULL), 0);
        tu_fill_random(r, &in.view, tu_below(r, 3) ? TU_FILL_MIXED : TU_FILL_SMALL);
        for (size_t z = 0; z < n; z++)
            for (size_t y = 0; y < h; y++)
                for (size_t x = 0; x < w; x++)
                    for (size_t c = 0; c < ch; c++)
                        tu_set_i(&orig.view, x, y, z, c, tu_get_i(&in.view, x, y, z, c));
        const pixsum_view *m = NULL;
        if (mask_kind) {
            assert_int_equal(tu_image_alloc(&mask, PIXSUM_U8, w, h, mask_kind == 1 ? 1 : n, 1,
                                            NULL), 0);
            for (size_t z = 0; z < mask.view.depth; z++)
                for (size_t y = 0; y < h; y++)
                    for (size_t x = 0; x < w; x++)
                        tu_set_i(&mask.view, x, y, z, 0, tu_below(r, 3) ? 1 : 0);
            m = &mask.view;
        }
        int threads = (int)tu_between(r, 1, 4);
        pixsum_ctx *ctx = ctx_with_threads(threads);
        const pixsum_view *dst = in_place ? &in.view : &out.view;
        assert_int_equal(pixsum_equalize_batch(ctx, &in.view, dst, m), PIXSUM_OK);
        for (size_t z = 0; z < n; z++) {
            tu_image one, res;
            pixsum_view mz;
            copy_slice(&orig.view, z, &one);
            assert_int_equal(tu_image_alloc(&res, t, w, h, 1, ch, NULL), 0);
            if (m)
                assert_int_equal(pixsum_view_roi3d(m, 0, 0, m->depth == 1 ? 0 : z, w, h, 1,
                                                   &mz), PIXSUM_OK);
            assert_int_equal(pixsum_equalize(ctx, &one.view, &res.view, m ? &mz : NULL),
                             PIXSUM_OK);
            if (!slice_equals(dst, z, &res.view))
                fail_msg("equalize batch %s %zux%zu x%zu c%zu mask %d in place %d thr %d: "
                         "image %zu differs from its single call", pixsum_type_name(t), w, h,
                         n, ch, mask_kind, in_place, threads, z);
            if (k % 3 == 0) {
                /* dst's slice z against the definition over the original samples */
                pixsum_view oz, dz;
                assert_int_equal(pixsum_view_roi3d(&orig.view, 0, 0, z, w, h, 1, &oz), 0);
                assert_int_equal(pixsum_view_roi3d(dst, 0, 0, z, w, h, 1, &dz), 0);
                check_equalize_reference(&oz, &dz, m ? &mz : NULL, 0);
            }
            tu_image_free(&one);
            tu_image_free(&res);
        }
        pixsum_ctx_free(ctx);
        tu_image_free(&in);
        tu_image_free(&out);
        tu_image_free(&orig);
        if (mask_kind)
            tu_image_free(&mask);
    }
}

static void test_equalize_refusals(void **state)
{
    (void)state;
    tu_image in, out, mask, f;
    assert_int_equal(tu_image_alloc(&in, PIXSUM_U8, 6, 5, 4, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&out, PIXSUM_U8, 6, 5, 4, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&mask, PIXSUM_U8, 6, 5, 2, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&f, PIXSUM_F32, 6, 5, 4, 1, NULL), 0);
    tu_image_snapshot(&out);
    assert_int_equal(pixsum_equalize_batch(NULL, &in.view, &out.view, &mask.view),
                     PIXSUM_ERR_BAD_SHAPE);
    assert_int_equal(pixsum_equalize_batch(NULL, &f.view, &f.view, NULL), PIXSUM_ERR_BAD_TYPE);
    assert_int_equal(pixsum_equalize_batch(NULL, NULL, &out.view, NULL), PIXSUM_ERR_NULL);
    pixsum_view shifted;
    assert_int_equal(pixsum_view_roi3d(&in.view, 0, 0, 1, 6, 5, 3, &shifted), PIXSUM_OK);
    pixsum_view head;
    assert_int_equal(pixsum_view_roi3d(&in.view, 0, 0, 0, 6, 5, 3, &head), PIXSUM_OK);
    assert_int_equal(pixsum_equalize_batch(NULL, &head, &shifted, NULL), PIXSUM_ERR_ALIASING);
    assert_int_equal(tu_image_check_untouched(&out, 1, "out"), 0);
    tu_image_free(&in);
    tu_image_free(&out);
    tu_image_free(&mask);
    tu_image_free(&f);
}

/* ---- Otsu -------------------------------------------------------------- */

/* Otsu's bin from the definition: every split t tried, the between-class
 * variance w0 w1 (mu0 - mu1)^2 in long double, the first largest kept. */
static size_t otsu_by_trying(const uint64_t *h, size_t bins)
{
    long double best = -1;
    size_t best_t = 0;
    for (size_t t = 0; t + 1 < bins; t++) {
        long double w0 = 0, w1 = 0, s0 = 0, s1 = 0;
        for (size_t i = 0; i < bins; i++) {
            if (i <= t)
                w0 += h[i], s0 += (long double)i * h[i];
            else
                w1 += h[i], s1 += (long double)i * h[i];
        }
        if (w0 == 0 || w1 == 0)
            continue;
        long double d = s0 / w0 - s1 / w1, v = w0 * w1 * d * d;
        if (v > best * (1 + 1e-12L)) {
            best = v;
            best_t = t;
        }
    }
    return best_t;
}

static void test_otsu_batches(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    static const pixsum_type types[] = {PIXSUM_U8, PIXSUM_U16, PIXSUM_I16, PIXSUM_I32,
                                        PIXSUM_F32, PIXSUM_F64};
    for (int k = 0; k < 120; k++) {
        size_t n = batch_sizes[k % 5], w = tu_between(r, 2, 30), h = tu_between(r, 1, 20);
        if (k % 7 == 0)
            w = 1, h = tu_between(r, 2, 30);
        size_t ch = tu_between(r, 1, 3);
        pixsum_type t = types[k % 6];
        int mask_kind = (int)tu_below(r, 3);
        unsigned flags = (tu_below(r, 2) ? PIXSUM_HIST_RANGE_PER_IMAGE : 0u) |
                         (tu_below(r, 4) == 0 ? PIXSUM_HIST_CLOSED_LAST : 0u) |
                         (tu_below(r, 4) == 0 ? PIXSUM_HIST_F32_EDGES : 0u);
        tu_layout li = tu_random_layout(r);
        tu_image in, mask;
        assert_int_equal(tu_image_alloc(&in, t, w, h, n, ch, &li), 0);
        tu_fill_random(r, &in.view, tu_below(r, 2) ? TU_FILL_MIXED : TU_FILL_SMALL);
        pixsum_hist_spec spec = {0};
        if (mask_kind) {
            assert_int_equal(tu_image_alloc(&mask, PIXSUM_U8, w, h, mask_kind == 1 ? 1 : n, 1,
                                            NULL), 0);
            for (size_t z = 0; z < mask.view.depth; z++)
                for (size_t y = 0; y < h; y++)
                    for (size_t x = 0; x < w; x++)
                        tu_set_i(&mask.view, x, y, z, 0, (x + y) % 5 != 0);
            spec.mask = &mask.view;
        }
        if (tu_below(r, 3) == 0)
            spec.bins = tu_between(r, 2, 64);
        pixsum_otsu_result *res = calloc(n, sizeof *res);
        assert_non_null(res);
        int threads = (int)tu_between(r, 1, 4);
        pixsum_ctx *ctx = ctx_with_threads(threads);
        int st = pixsum_otsu_batch(ctx, &in.view, &spec, flags, res, n);
        /* the bins and ranges the batch resolves, from pixsum_histogram_batch() */
        pixsum_hist_info *infos = calloc(n, sizeof *infos);
        assert_non_null(infos);
        pixsum_hist_spec probe = spec;
        probe.mask = NULL;
        pixsum_hist_info total;
        assert_int_equal(pixsum_hist_resolve(&in.view, &probe, &total), PIXSUM_OK);
        uint64_t *counts = malloc(n * ch * total.bins * sizeof *counts);
        assert_non_null(counts);
        assert_int_equal(pixsum_histogram_batch(ctx, &in.view, &spec,
                                                flags & PIXSUM_HIST_RANGE_PER_IMAGE, counts,
                                                n * ch * total.bins, infos), PIXSUM_OK);
        free(counts);
        /* each image alone, with the bins and range the batch resolved for it
         * (the per-image defaults when asked), must give the same result or
         * the same refusal (no threshold in some image) */
        bool any_refused = false;
        for (size_t z = 0; z < n; z++) {
            pixsum_view iz, mz;
            assert_int_equal(pixsum_view_roi3d(&in.view, 0, 0, z, w, h, 1, &iz), PIXSUM_OK);
            pixsum_hist_spec one = spec;
            if (mask_kind) {
                assert_int_equal(pixsum_view_roi3d(&mask.view, 0, 0, mask_kind == 1 ? 0 : z,
                                                   w, h, 1, &mz), PIXSUM_OK);
                one.mask = &mz;
            }
            one.bins = infos[z].bins;
            one.lo = infos[z].lo;
            one.hi = infos[z].hi;
            pixsum_otsu_result single;
            int sst = pixsum_otsu_image(ctx, &iz, &one, flags & ~PIXSUM_HIST_RANGE_PER_IMAGE,
                                        &single);
            if (st != PIXSUM_OK) {
                any_refused |= sst != PIXSUM_OK;
                continue;
            }
            assert_int_equal(sst, PIXSUM_OK);
            if (memcmp(&single, &res[z], sizeof single) != 0)
                fail_msg("otsu batch %s %zux%zu x%zu c%zu mask %d flags %u thr %d: image %zu "
                         "threshold %.17g bin %zu, alone %.17g bin %zu", pixsum_type_name(t), w,
                         h, n, ch, mask_kind, flags, threads, z, res[z].threshold, res[z].bin,
                         single.threshold, single.bin);
            if ((flags & PIXSUM_HIST_RANGE_PER_IMAGE) && t != PIXSUM_U8 && t != PIXSUM_U16 &&
                t != PIXSUM_I16 && !mask_kind) {
                /* each image's own range starts at its own smallest finite sample */
                double mn = INFINITY;
                for (size_t y = 0; y < h; y++)
                    for (size_t x = 0; x < w; x++)
                        for (size_t c = 0; c < ch; c++) {
                            double v = (double)tu_get_f(&in.view, x, y, z, c);
                            if (isfinite(v) && v < mn)
                                mn = v;
                        }
                if (isfinite(mn))
                    assert_true(res[z].info.lo == mn);
            }
        }
        if (st != PIXSUM_OK) {
            assert_int_equal(st, PIXSUM_ERR_INVALID_ARG);
            assert_true(any_refused);
        }
        pixsum_ctx_free(ctx);
        free(res);
        free(infos);
        tu_image_free(&in);
        if (mask_kind)
            tu_image_free(&mask);
    }
}

/* u8 batches with a shared range: the bin of every image decided by trying
 * every split of counts taken sample by sample; threshold = bin + 1. */
static void test_otsu_definition(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    for (int k = 0; k < 30; k++) {
        size_t n = batch_sizes[k % 5], w = tu_between(r, 4, 50), h = tu_between(r, 4, 30);
        tu_image in;
        assert_int_equal(tu_image_alloc(&in, PIXSUM_U8, w, h, n, 1, NULL), 0);
        /* two populations, so that a threshold exists */
        for (size_t z = 0; z < n; z++)
            for (size_t y = 0; y < h; y++)
                for (size_t x = 0; x < w; x++)
                    tu_set_i(&in.view, x, y, z, 0,
                             (int64_t)(tu_below(r, 2) ? tu_below(r, 100)
                                                       : 120 + tu_below(r, 136)));
        pixsum_otsu_result *res = calloc(n, sizeof *res);
        assert_non_null(res);
        pixsum_ctx *ctx = ctx_with_threads((int)tu_between(r, 1, 4));
        assert_int_equal(pixsum_otsu_batch(ctx, &in.view, NULL, 0, res, n), PIXSUM_OK);
        for (size_t z = 0; z < n; z++) {
            uint64_t hcount[256] = {0};
            for (size_t y = 0; y < h; y++)
                for (size_t x = 0; x < w; x++)
                    hcount[tu_get_i(&in.view, x, y, z, 0)]++;
            size_t t = otsu_by_trying(hcount, 256);
            assert_int_equal(res[z].bin, t);
            assert_true(res[z].threshold == (double)(t + 1));
            assert_true(res[z].info.lo == 0 && res[z].info.hi == 256);
        }
        pixsum_ctx_free(ctx);
        free(res);
        tu_image_free(&in);
    }
}

static void test_otsu_refusals(void **state)
{
    (void)state;
    tu_image in;
    assert_int_equal(tu_image_alloc(&in, PIXSUM_U8, 5, 4, 3, 1, NULL), 0);
    pixsum_otsu_result res[3];
    assert_int_equal(pixsum_otsu_batch(NULL, &in.view, NULL, 0, res, 2), PIXSUM_ERR_BAD_SHAPE);
    assert_int_equal(pixsum_otsu_batch(NULL, &in.view, NULL, 0x100, res, 3),
                     PIXSUM_ERR_INVALID_ARG);
    assert_int_equal(pixsum_otsu_batch(NULL, &in.view, NULL, 0, NULL, 3), PIXSUM_ERR_NULL);
    tu_image_free(&in);
}

int main(void)
{
    tu_init("test_batch_ops");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_box_filter_batches),
        cmocka_unit_test(test_box_filter_refusals),
        cmocka_unit_test(test_equalize_batches),
        cmocka_unit_test(test_equalize_refusals),
        cmocka_unit_test(test_otsu_batches),
        cmocka_unit_test(test_otsu_definition),
        cmocka_unit_test(test_otsu_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

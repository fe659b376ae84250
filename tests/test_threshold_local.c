/*
 * test_threshold_local.c - pixsum_threshold_local() and
 * pixsum_normalize_local() against a reference from the definitions: every
 * window summed directly over the bordered image (the border walked by
 * ref_border.h, not by the library's index formula), exactly in 128-bit
 * integers for integer inputs and in long double for float inputs, then the
 * method's formula in long double. Random sizes (1x1, 1xN, Nx1, odd and even
 * windows, windows larger than the image), every border, input type, output
 * type, method, stride and ROI; the f32/f64 maps within pixsum.h's bound;
 * masks equal to x > T wherever x is farther from T than the bound; every
 * ISA's kernel and box.stream / box.omp; and the refusals. Batches (views of
 * depth N) equal the calls on each slice alone, bit for bit, and each slice
 * also meets the reference.
 */
#define PIXSUM_EXPERIMENTAL
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pixsum.h"
#include "pixsum_cuda.h"
#include "ref_border.h"
#include "testutil.h"

static int is_float(pixsum_type t)
{
    return t == PIXSUM_F32 || t == PIXSUM_F64;
}

/* Mean and standard deviation of the window of output (ox, oy), channel c,
 * from the definition; *n_out: the pixel count. */
static void ref_moments(const pixsum_view *in, size_t kw, size_t kh, pixsum_border b,
                        double cval, size_t ox, size_t oy, size_t c, long double *mean,
                        long double *sd, uint64_t *n_out)
{
    tu_i128 s = 0, q = 0;
    long double fs = 0, fq = 0;
    uint64_t n = 0;
    int is_int = !is_float(in->type);
    long x0 = (long)ox - (long)(kw / 2), y0 = (long)oy - (long)(kh / 2);
    if (b == PIXSUM_BORDER_VALID)
        x0 = (long)ox, y0 = (long)oy;
    for (long y = y0; y < y0 + (long)kh; y++)
        for (long x = x0; x < x0 + (long)kw; x++) {
            long sy = ref_border_map(y, (long)in->height, b);
            long sx = ref_border_map(x, (long)in->width, b);
            long double v;
            int64_t iv = 0;
            if (sy < 0 || sx < 0) {
                if (b == PIXSUM_BORDER_SHRINK)
                    continue;
                v = cval;
                iv = (int64_t)cval;
            } else if (is_int) {
                iv = tu_get_i(in, (size_t)sx, (size_t)sy, 0, c);
                v = (long double)iv;
            } else {
                v = tu_get_f(in, (size_t)sx, (size_t)sy, 0, c);
            }
            s += iv;
            q += (tu_i128)iv * iv;
            fs += v;
            fq += v * v;
            n++;
        }
    long double dn = (long double)n;
    if (is_int) {
        tu_i128 num = (tu_i128)n * q - s * s;
        *mean = (long double)s / dn;
        *sd = sqrtl((long double)num / (dn * dn));
    } else {
        long double var = (fq - fs * fs / dn) / dn;
        *mean = fs / dn;
        *sd = var > 0 ? sqrtl(var) : 0;
    }
    *n_out = n;
}

static long double ref_threshold(pixsum_threshold_method m, long double mean, long double sd,
                                 double k, double r, double offset)
{
    if (m == PIXSUM_THRESHOLD_MEAN)
        return mean - offset;
    if (m == PIXSUM_THRESHOLD_NIBLACK)
        return mean + k * sd;
    return mean * (1 + k * (sd / r - 1));
}

/* Error allowed for the mean and sd of float inputs (pixsum.h's box filter
 * bound, as test_box_filter.c applies it), 0 for integer inputs. */
static void float_tol(const pixsum_view *in, size_t kw, size_t kh, uint64_t n, double mag,
                      long double sd, long double *tm, long double *ts)
{
    *tm = *ts = 0;
    double m = (double)(in->width + in->height + kw + kh), nfull = (double)kw * (double)kh;
    /* integer windows whose squares can pass 64 bits are summed in f64 */
    if (!is_float(in->type) && nfull * mag * mag < 0x1p64)
        return;
    double ferr = 16 * m * nfull * mag * 0x1p-52;
    *tm = ferr / (double)n;
    long double tv = 4 * ferr * 2 * mag / (double)n; /* of the variance */
    *ts = sd > 0 ? fminl(sqrtl(tv), tv / sd) : sqrtl(tv);
}

typedef struct tcase {
    pixsum_threshold_spec sp;
    double r_used, mag;
} tcase;

/* Checks map and/or mask of a threshold; returns the number of mismatches. */
static size_t check_threshold(const pixsum_view *in, const tcase *tc, const pixsum_view *map,
                              const pixsum_view *mask)
{
    const pixsum_threshold_spec *sp = &tc->sp;
    size_t bad = 0, ow = map ? map->width : mask->width, oh = map ? map->height : mask->height;
    int valid = sp->border == PIXSUM_BORDER_VALID;
    uint8_t fg = sp->foreground ? sp->foreground : 255;
    for (size_t y = 0; y < oh; y++)
        for (size_t x = 0; x < ow; x++) {
            long double mean, sd, tm, ts;
            uint64_t n;
            ref_moments(in, sp->kw, sp->kh, sp->border, sp->border_value, x, y, 0, &mean, &sd,
                        &n);
            long double want = ref_threshold(sp->method, mean, sd, sp->k, tc->r_used,
                                             sp->offset);
            float_tol(in, sp->kw, sp->kh, n, tc->mag, sd, &tm, &ts);
            long double k = fabsl((long double)sp->k), r = tc->r_used;
            long double tol;
            if (sp->method == PIXSUM_THRESHOLD_MEAN)
                tol = tm;
            else if (sp->method == PIXSUM_THRESHOLD_NIBLACK)
                tol = tm + k * ts;
            else
                tol = tm * fabsl(1 + k * (sd / r + 1)) + fabsl(mean) * k * ts / r;
            long double scale = fabsl(mean) + k * sd * (1 + fabsl(mean) / r) + fabs(sp->offset);
            tol += 0x1p-48 * scale + 1e-300;
            long double xv = is_float(in->type)
                                 ? tu_get_f(in, valid ? x + sp->kw / 2 : x,
                                            valid ? y + sp->kh / 2 : y, 0, 0)
                                 : (long double)tu_get_i(in, valid ? x + sp->kw / 2 : x,
                                                         valid ? y + sp->kh / 2 : y, 0, 0);
            int ok = 1;
            long double got = 0;
            if (map) {
                got = tu_get_f(map, x, y, 0, 0);
                long double t2 = tol + (map->type == PIXSUM_F32 ? 0x1p-24 * fabsl(want) : 0);
                ok = fabsl(got - want) <= t2;
            }
            if (ok && mask) {
                int64_t mv = tu_get_i(mask, x, y, 0, 0);
                if (mv != 0 && mv != fg)
                    ok = 0;
                else if (map && map->type == PIXSUM_F64)
                    ok = (mv == fg) == (xv > got); /* x > T of the f64 threshold */
                else if (fabsl(xv - want) > tol)
                    ok = (mv == fg) == (xv > want);
            }
            if (!ok && bad++ == 0)
                fprintf(stderr, "  mismatch at (%zu, %zu): map %.17Lg want %.17Lg tol %.3Lg "
                        "x %.17Lg mask %lld\n", x, y, got, want, tol, xv,
                        mask ? (long long)tu_get_i(mask, x, y, 0, 0) : -1LL);
        }
    return bad;
}

static size_t check_normalize(const pixsum_view *in, const pixsum_normalize_spec *sp,
                              const pixsum_view *out, double mag)
{
    size_t bad = 0;
    int valid = sp->border == PIXSUM_BORDER_VALID;
    for (size_t y = 0; y < out->height; y++)
        for (size_t x = 0; x < out->width; x++)
            for (size_t c = 0; c < in->channels; c++) {
                long double mean, sd, tm, ts;
                uint64_t n;
                ref_moments(in, sp->kw, sp->kh, sp->border, sp->border_value, x, y, c, &mean,
                            &sd, &n);
                float_tol(in, sp->kw, sp->kh, n, mag, sd, &tm, &ts);
                size_t cx = valid ? x + sp->kw / 2 : x, cy = valid ? y + sp->kh / 2 : y;
                long double xv = is_float(in->type) ? tu_get_f(in, cx, cy, 0, c)
                                                    : (long double)tu_get_i(in, cx, cy, 0, c);
                long double den = sd + sp->eps, got = tu_get_f(out, x, y, 0, c), want, tol;
                if (den - ts <= 0) { /* a flat window: 0 (exact for exact sums) */
                    if (ts > 0 || tm > 0)
                        continue;
                    want = 0;
                    tol = 0;
                } else {
                    want = (xv - mean) / den;
                    tol = (tm + fabsl(xv - mean) * ts / (den - ts)) / den +
                          0x1p-48 * (fabsl(xv) + fabsl(mean)) / den;
                }
                if (out->type == PIXSUM_F32)
                    tol += 0x1p-24 * fabsl(want);
                if (!(fabsl(got - want) <= tol) && bad++ == 0)
                    fprintf(stderr, "  mismatch at (%zu, %zu, c%zu): got %.17Lg want %.17Lg "
                            "tol %.3Lg\n", x, y, c, got, want, tol);
            }
    return bad;
}

static const pixsum_type in_types[] = {PIXSUM_U8, PIXSUM_U16, PIXSUM_I16, PIXSUM_I32,
                                       PIXSUM_U32, PIXSUM_F32, PIXSUM_F64};

static void random_window(tu_rng *r, size_t w, size_t h, size_t *kw, size_t *kh,
                          pixsum_border *b)
{
    *b = (pixsum_border)tu_below(r, PIXSUM_BORDER_COUNT);
    if (*b == PIXSUM_BORDER_VALID) {
        *kw = tu_between(r, 1, w);
        *kh = tu_between(r, 1, h);
        return;
    }
    *kw = tu_below(r, 6) == 0 ? w + tu_between(r, 0, 2 * w + 3) : tu_between(r, 1, w);
    *kh = tu_below(r, 6) == 0 ? h + tu_between(r, 0, 2 * h + 3) : tu_between(r, 1, h);
}

static double fill_input(tu_rng *r, tu_image *in, pixsum_type t)
{
    if (is_float(t)) {
        for (size_t y = 0; y < in->view.height; y++)
            for (size_t x = 0; x < in->view.width; x++)
                for (size_t c = 0; c < in->view.channels; c++)
                    tu_set_f(&in->view, x, y, 0, c, (tu_unit(r) - 0.5) * 2000.0);
        return 2000.0;
    }
    tu_fill_random(r, &in->view, tu_below(r, 5) ? TU_FILL_MIXED : TU_FILL_SMALL);
    double mag = (double)tu_type_max(t);
    return -(double)tu_type_min(t) > mag ? -(double)tu_type_min(t) : mag;
}

static double border_value(tu_rng *r, pixsum_type t)
{
    return t == PIXSUM_U8 ? (double)tu_below(r, 256) : t == PIXSUM_I16 ? -1234
           : t == PIXSUM_F32 ? 2.5 : 77;
}

static pixsum_ctx *random_ctx(tu_rng *r)
{
    static const char *const names[] = {"auto", "box.stream", "box.omp"};
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_non_null(ctx);
    const char *mname = names[tu_below(r, 3)];
    if (pixsum_method_find(mname) < 0)
        mname = "auto";
    assert_int_equal(pixsum_ctx_set_method(ctx, mname), PIXSUM_OK);
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, (intptr_t)tu_between(r, 1, 3)),
                     PIXSUM_OK);
    return ctx;
}

static void run_threshold_cases(size_t cases, size_t maxdim)
{
    tu_rng *r = tu_global_rng();
    for (size_t k = 0; k < cases; k++) {
        pixsum_type t = in_types[tu_below(r, sizeof in_types / sizeof in_types[0])];
        size_t w = tu_dim(r, maxdim), h = tu_dim(r, maxdim);
        tcase tc;
        memset(&tc, 0, sizeof tc);
        pixsum_threshold_spec *sp = &tc.sp;
        random_window(r, w, h, &sp->kw, &sp->kh, &sp->border);
        if (sp->border == PIXSUM_BORDER_CONSTANT)
            sp->border_value = border_value(r, t);
        sp->method = (pixsum_threshold_method)tu_below(r, 3);
        sp->k = tu_below(r, 2) ? 0.2 : (tu_unit(r) - 0.5) * 2;
        sp->r = tu_below(r, 2) ? 0 : 1 + tu_unit(r) * 200;
        sp->offset = tu_below(r, 2) ? 0 : (tu_unit(r) - 0.5) * 20;
        sp->foreground = (uint8_t)tu_below(r, 256);
        tc.r_used = sp->r > 0 ? sp->r : pixsum_threshold_default_r(t);
        tu_layout lay = tu_random_layout(r), l1 = tu_random_layout(r),
                  l2 = tu_random_layout(r);
        tu_image in, map, mask;
        assert_int_equal(tu_image_alloc(&in, t, w, h, 1, 1, &lay), 0);
        tc.mag = fill_input(r, &in, t);
        if (sp->border == PIXSUM_BORDER_CONSTANT && fabs(sp->border_value) > tc.mag)
            tc.mag = fabs(sp->border_value);
        size_t ow = w, oh = h;
        if (sp->border == PIXSUM_BORDER_VALID)
            ow = w - sp->kw + 1, oh = h - sp->kh + 1;
        int outs = (int)tu_between(r, 1, 3); /* 1 map, 2 mask, 3 both */
        pixsum_type mt = tu_below(r, 2) ? PIXSUM_F32 : PIXSUM_F64;
        assert_int_equal(tu_image_alloc(&map, mt, ow, oh, 1, 1, &l1), 0);
        assert_int_equal(tu_image_alloc(&mask, PIXSUM_U8, ow, oh, 1, 1, &l2), 0);
        pixsum_ctx *ctx = random_ctx(r);
        const pixsum_view *pm = outs & 1 ? &map.view : NULL, *pk = outs & 2 ? &mask.view : NULL;
        int st = pixsum_threshold_local(tu_below(r, 4) ? ctx : NULL, &in.view, sp, pm, pk);
        pixsum_ctx_free(ctx);
        if (st != PIXSUM_OK)
            fprintf(stderr, "case %zu: %s\n", k, pixsum_last_error());
        assert_int_equal(st, PIXSUM_OK);
        size_t bad = check_threshold(&in.view, &tc, pm, pk);
        if (bad)
            fprintf(stderr, "case %zu: %s %zux%zu window %zux%zu border %s method %d k %g "
                    "r %g offset %g outs %d map %s: %zu mismatches\n", k, pixsum_type_name(t),
                    w, h, sp->kw, sp->kh, pixsum_border_name(sp->border), (int)sp->method,
                    sp->k, sp->r, sp->offset, outs, pixsum_type_name(mt), bad);
        assert_int_equal(bad, 0);
        tu_image_free(&in);
        tu_image_free(&map);
        tu_image_free(&mask);
    }
}

static void run_normalize_cases(size_t cases, size_t maxdim)
{
    tu_rng *r = tu_global_rng();
    for (size_t k = 0; k < cases; k++) {
        pixsum_type t = in_types[tu_below(r, sizeof in_types / sizeof in_types[0])];
        size_t w = tu_dim(r, maxdim), h = tu_dim(r, maxdim), ch = tu_between(r, 1, 4);
        pixsum_normalize_spec sp;
        memset(&sp, 0, sizeof sp);
        random_window(r, w, h, &sp.kw, &sp.kh, &sp.border);
        if (sp.border == PIXSUM_BORDER_CONSTANT)
            sp.border_value = border_value(r, t);
        sp.eps = tu_below(r, 3) == 0 ? 0 : tu_unit(r);
        tu_layout lay = tu_random_layout(r), l1 = tu_random_layout(r);
        tu_image in, out;
        assert_int_equal(tu_image_alloc(&in, t, w, h, 1, ch, &lay), 0);
        double mag = fill_input(r, &in, t);
        if (sp.border == PIXSUM_BORDER_CONSTANT && fabs(sp.border_value) > mag)
            mag = fabs(sp.border_value);
        size_t ow = w, oh = h;
        if (sp.border == PIXSUM_BORDER_VALID)
            ow = w - sp.kw + 1, oh = h - sp.kh + 1;
        pixsum_type ot = tu_below(r, 2) ? PIXSUM_F32 : PIXSUM_F64;
        assert_int_equal(tu_image_alloc(&out, ot, ow, oh, 1, ch, &l1), 0);
        pixsum_ctx *ctx = random_ctx(r);
        int st = pixsum_normalize_local(ctx, &in.view, &sp, &out.view);
        pixsum_ctx_free(ctx);
        if (st != PIXSUM_OK)
            fprintf(stderr, "case %zu: %s\n", k, pixsum_last_error());
        assert_int_equal(st, PIXSUM_OK);
        size_t bad = check_normalize(&in.view, &sp, &out.view, mag);
        if (bad)
            fprintf(stderr, "case %zu: %s %zux%zux%zu window %zux%zu border %s eps %g -> %s: "
                    "%zu mismatches\n", k, pixsum_type_name(t), w, h, ch, sp.kw, sp.kh,
                    pixsum_border_name(sp.border), sp.eps, pixsum_type_name(ot), bad);
        assert_int_equal(bad, 0);
        tu_image_free(&in);
        tu_image_free(&out);
    }
}

/* Every ISA build of the kernel (the cap is lifted afterwards). */
static void test_threshold_random(void **state)
{
    (void)state;
    static const char *const isas[] = {"scalar", "avx2", NULL};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pixsum_cpu_force_isa(isas[i]), PIXSUM_OK);
        run_threshold_cases(200, 9);
        run_threshold_cases(20, 70);
    }
}

static void test_normalize_random(void **state)
{
    (void)state;
    static const char *const isas[] = {"scalar", "avx2", NULL};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pixsum_cpu_force_isa(isas[i]), PIXSUM_OK);
        run_normalize_cases(150, 9);
        run_normalize_cases(15, 70);
    }
}

/* The slice z of a tu_image's view. */
static pixsum_view slice(const tu_image *img, size_t z)
{
    pixsum_view s;
    assert_int_equal(pixsum_view_roi3d(&img->view, 0, 0, z, img->view.width,
                                       img->view.height, 1, &s), PIXSUM_OK);
    return s;
}

/* True when the samples of two views of one shape and type hold the same bytes. */
static int same_samples(const pixsum_view *a, const pixsum_view *b)
{
    size_t es = pixsum_type_size(a->type) * a->channels;
    for (size_t y = 0; y < a->height; y++)
        for (size_t x = 0; x < a->width; x++)
            if (memcmp(tu_elem(a, x, y, 0, 0), tu_elem(b, x, y, 0, 0), es) != 0) {
                fprintf(stderr, "  batch differs at (%zu, %zu)\n", x, y);
                return 0;
            }
    return 1;
}

/* A batch size (1, 2 or 5) and an image size: 1x1, 1xN, Nx1 or random. */
static void batch_shape(tu_rng *r, size_t *n, size_t *w, size_t *h)
{
    static const size_t ns[] = {1, 2, 5};
    *n = ns[tu_below(r, 3)];
    *w = tu_dim(r, 23);
    *h = tu_dim(r, 23);
    switch (tu_below(r, 5)) {
    case 0: *w = *h = 1; break;
    case 1: *w = 1; break;
    case 2: *h = 1; break;
    default: break;
    }
}

/* Fills every slice: integers as fill_input(), floats in [-1000, 1000). */
static double fill_batch(tu_rng *r, tu_image *in, pixsum_type t)
{
    if (!is_float(t))
        return fill_input(r, in, t);
    const pixsum_view *v = &in->view;
    for (size_t z = 0; z < v->depth; z++)
        for (size_t y = 0; y < v->height; y++)
            for (size_t x = 0; x < v->width; x++)
                for (size_t c = 0; c < v->channels; c++)
                    tu_set_f(v, x, y, z, c, (tu_unit(r) - 0.5) * 2000.0);
    return 2000.0;
}

/* Threshold batches of every method and border, map and/or mask, random
 * layouts and contexts: each image equals the call on its slice alone, bit
 * for bit, and the reference. */
static void test_threshold_batch(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    for (size_t k = 0; k < 300; k++) {
        pixsum_type t = in_types[tu_below(r, sizeof in_types / sizeof in_types[0])];
        size_t n, w, h;
        batch_shape(r, &n, &w, &h);
        tcase tc;
        memset(&tc, 0, sizeof tc);
        pixsum_threshold_spec *sp = &tc.sp;
        random_window(r, w, h, &sp->kw, &sp->kh, &sp->border);
        if (sp->border == PIXSUM_BORDER_CONSTANT)
            sp->border_value = border_value(r, t);
        sp->method = (pixsum_threshold_method)(k % 3);
        sp->k = (tu_unit(r) - 0.5) * 2;
        sp->offset = (tu_unit(r) - 0.5) * 20;
        sp->foreground = (uint8_t)tu_below(r, 256);
        tc.r_used = pixsum_threshold_default_r(t);
        tu_layout lay = tu_random_layout(r), l1 = tu_random_layout(r),
                  l2 = tu_random_layout(r);
        tu_image in, map, mask, one_map, one_mask;
        assert_int_equal(tu_image_alloc(&in, t, w, h, n, 1, &lay), 0);
        tc.mag = fill_batch(r, &in, t);
        if (sp->border == PIXSUM_BORDER_CONSTANT && fabs(sp->border_value) > tc.mag)
            tc.mag = fabs(sp->border_value);
        size_t ow = w, oh = h;
        if (sp->border == PIXSUM_BORDER_VALID)
            ow = w - sp->kw + 1, oh = h - sp->kh + 1;
        int outs = (int)tu_between(r, 1, 3); /* 1 map, 2 mask, 3 both */
        pixsum_type mt = tu_below(r, 2) ? PIXSUM_F32 : PIXSUM_F64;
        assert_int_equal(tu_image_alloc(&map, mt, ow, oh, n, 1, &l1), 0);
        assert_int_equal(tu_image_alloc(&mask, PIXSUM_U8, ow, oh, n, 1, &l2), 0);
        assert_int_equal(tu_image_alloc(&one_map, mt, ow, oh, 1, 1, NULL), 0);
        assert_int_equal(tu_image_alloc(&one_mask, PIXSUM_U8, ow, oh, 1, 1, NULL), 0);
        pixsum_ctx *ctx = random_ctx(r);
        const pixsum_view *pm = outs & 1 ? &map.view : NULL, *pk = outs & 2 ? &mask.view : NULL;
        int st = pixsum_threshold_local(ctx, &in.view, sp, pm, pk);
        if (st != PIXSUM_OK)
            fprintf(stderr, "case %zu: %s\n", k, pixsum_last_error());
        assert_int_equal(st, PIXSUM_OK);
        for (size_t z = 0; z < n; z++) {
            pixsum_view iz = slice(&in, z), mz = slice(&map, z), kz = slice(&mask, z);
            const pixsum_view *om = outs & 1 ? &one_map.view : NULL;
            const pixsum_view *ok = outs & 2 ? &one_mask.view : NULL;
            assert_int_equal(pixsum_threshold_local(ctx, &iz, sp, om, ok), PIXSUM_OK);
            int same = (!om || same_samples(&mz, om)) && (!ok || same_samples(&kz, ok));
            size_t bad = check_threshold(&iz, &tc, om, ok);
            if (!same || bad)
                fprintf(stderr, "case %zu image %zu of %zu: %s %zux%zu window %zux%zu border "
                        "%s method %d outs %d: same %d, %zu mismatches\n", k, z, n,
                        pixsum_type_name(t), w, h, sp->kw, sp->kh,
                        pixsum_border_name(sp->border), (int)sp->method, outs, same, bad);
            assert_true(same);
            assert_int_equal(bad, 0);
        }
        pixsum_ctx_free(ctx);
        tu_image_free(&in);
        tu_image_free(&map);
        tu_image_free(&mask);
        tu_image_free(&one_map);
        tu_image_free(&one_mask);
    }
}

/* Normalisation batches of 1-4 channels: as test_threshold_batch. */
static void test_normalize_batch(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    for (size_t k = 0; k < 200; k++) {
        pixsum_type t = in_types[tu_below(r, sizeof in_types / sizeof in_types[0])];
        size_t n, w, h, ch = 1 + k % 4;
        batch_shape(r, &n, &w, &h);
        pixsum_normalize_spec sp;
        memset(&sp, 0, sizeof sp);
        random_window(r, w, h, &sp.kw, &sp.kh, &sp.border);
        if (sp.border == PIXSUM_BORDER_CONSTANT)
            sp.border_value = border_value(r, t);
        sp.eps = tu_below(r, 3) == 0 ? 0 : tu_unit(r);
        tu_layout lay = tu_random_layout(r), l1 = tu_random_layout(r);
        tu_image in, out, one;
        assert_int_equal(tu_image_alloc(&in, t, w, h, n, ch, &lay), 0);
        double mag = fill_batch(r, &in, t);
        if (sp.border == PIXSUM_BORDER_CONSTANT && fabs(sp.border_value) > mag)
            mag = fabs(sp.border_value);
        size_t ow = w, oh = h;
        if (sp.border == PIXSUM_BORDER_VALID)
            ow = w - sp.kw + 1, oh = h - sp.kh + 1;
        pixsum_type ot = tu_below(r, 2) ? PIXSUM_F32 : PIXSUM_F64;
        assert_int_equal(tu_image_alloc(&out, ot, ow, oh, n, ch, &l1), 0);
        assert_int_equal(tu_image_alloc(&one, ot, ow, oh, 1, ch, NULL), 0);
        pixsum_ctx *ctx = random_ctx(r);
        int st = pixsum_normalize_local(ctx, &in.view, &sp, &out.view);
        if (st != PIXSUM_OK)
            fprintf(stderr, "case %zu: %s\n", k, pixsum_last_error());
        assert_int_equal(st, PIXSUM_OK);
        for (size_t z = 0; z < n; z++) {
            pixsum_view iz = slice(&in, z), oz = slice(&out, z);
            assert_int_equal(pixsum_normalize_local(ctx, &iz, &sp, &one.view), PIXSUM_OK);
            int same = same_samples(&oz, &one.view);
            size_t bad = check_normalize(&iz, &sp, &one.view, mag);
            if (!same || bad)
                fprintf(stderr, "case %zu image %zu of %zu: %s %zux%zux%zu window %zux%zu "
                        "border %s: same %d, %zu mismatches\n", k, z, n, pixsum_type_name(t),
                        w, h, ch, sp.kw, sp.kh, pixsum_border_name(sp.border), same, bad);
            assert_true(same);
            assert_int_equal(bad, 0);
        }
        pixsum_ctx_free(ctx);
        tu_image_free(&in);
        tu_image_free(&out);
        tu_image_free(&one);
    }
}

/* Batches refused: outputs of another depth, overlapping outputs, a method
 * that is not a box filter (named image), and by the GPU entries, which take
 * one image (before any device or memory check, so in every build); nothing
 * written. */
static void test_batch_refusals(void **state)
{
    (void)state;
    tu_image in, map, short_map, mask;
    assert_int_equal(tu_image_alloc(&in, PIXSUM_U8, 7, 5, 3, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&map, PIXSUM_F32, 7, 5, 3, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&short_map, PIXSUM_F32, 7, 5, 2, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&mask, PIXSUM_U8, 7, 5, 1, 1, NULL), 0);
    tu_image_snapshot(&map);
    tu_image_snapshot(&short_map);
    tu_image_snapshot(&mask);
    pixsum_threshold_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.kw = sp.kh = 3;
    assert_int_equal(pixsum_threshold_local(NULL, &in.view, &sp, &short_map.view, NULL),
                     PIXSUM_ERR_BAD_SHAPE);
    assert_non_null(strstr(pixsum_last_error(), "images"));
    assert_int_equal(pixsum_threshold_local(NULL, &in.view, &sp, &map.view, &mask.view),
                     PIXSUM_ERR_BAD_SHAPE);
    pixsum_view bytes = pixsum_view_3d(map.view.data, PIXSUM_U8, 7, 5, 3, 1, 0, 0);
    assert_int_equal(pixsum_threshold_local(NULL, &in.view, &sp, &map.view, &bytes),
                     PIXSUM_ERR_ALIASING);
    pixsum_normalize_spec ns = {3, 3, PIXSUM_BORDER_REFLECT101, 0, 0};
    assert_int_equal(pixsum_normalize_local(NULL, &in.view, &ns, &short_map.view),
                     PIXSUM_ERR_BAD_SHAPE);
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_int_equal(pixsum_ctx_set_method(ctx, "serial.2wh"), PIXSUM_OK);
    assert_int_equal(pixsum_normalize_local(ctx, &in.view, &ns, &map.view),
                     PIXSUM_ERR_UNSUPPORTED);
    assert_non_null(strstr(pixsum_last_error(), "of the batch"));
    pixsum_ctx_free(ctx);
    assert_int_equal(pixsum_cuda_threshold_local(NULL, &in.view, &sp, &map.view, NULL, NULL),
                     PIXSUM_ERR_UNSUPPORTED);
    assert_non_null(strstr(pixsum_last_error(), "call per image"));
    assert_int_equal(pixsum_cuda_normalize_local(NULL, &in.view, &ns, &map.view, NULL),
                     PIXSUM_ERR_UNSUPPORTED);
    assert_non_null(strstr(pixsum_last_error(), "call per image"));
    assert_int_equal(tu_image_check_untouched(&map, 1, "refused batch map"), 0);
    assert_int_equal(tu_image_check_untouched(&short_map, 1, "refused short map"), 0);
    assert_int_equal(tu_image_check_untouched(&mask, 1, "refused batch mask"), 0);
    tu_image_free(&in);
    tu_image_free(&map);
    tu_image_free(&short_map);
    tu_image_free(&mask);
}

/* A 1x1 image, its own window: T = x's mean; a 3x1 row by hand. */
static void test_by_hand(void **state)
{
    (void)state;
    uint8_t px[3] = {10, 20, 60}, mk[3];
    double map[3];
    pixsum_view in = pixsum_view_2d(px, PIXSUM_U8, 3, 1, 1, 0);
    pixsum_view vm = pixsum_view_2d(map, PIXSUM_F64, 3, 1, 1, 0);
    pixsum_view vk = pixsum_view_2d(mk, PIXSUM_U8, 3, 1, 1, 0);
    pixsum_threshold_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.kw = 3;
    sp.kh = 1;
    sp.border = PIXSUM_BORDER_REPLICATE;
    sp.offset = 1;
    /* windows 10 10 20 | 10 20 60 | 20 60 60: means 40/3, 30, 140/3 */
    assert_int_equal(pixsum_threshold_local(NULL, &in, &sp, &vm, &vk), PIXSUM_OK);
    assert_true(map[0] == 40.0 / 3 - 1 && map[1] == 29 && map[2] == 140.0 / 3 - 1);
    assert_true(mk[0] == 0 && mk[1] == 0 && mk[2] == 255);
    sp.method = PIXSUM_THRESHOLD_NIBLACK;
    sp.k = -0.5; /* T = 13.33 - 2.36, 30 - 10.80, 46.67 - 9.43 */
    sp.foreground = 1;
    assert_int_equal(pixsum_threshold_local(NULL, &in, &sp, NULL, &vk), PIXSUM_OK);
    assert_true(mk[0] == 0 && mk[1] == 1 && mk[2] == 1);
    pixsum_view one = pixsum_view_2d(px, PIXSUM_U8, 1, 1, 1, 0);
    pixsum_view om = pixsum_view_2d(map, PIXSUM_F64, 1, 1, 1, 0);
    sp.method = PIXSUM_THRESHOLD_SAUVOLA;
    sp.k = 0.5;
    sp.kw = sp.kh = 5;
    assert_int_equal(pixsum_threshold_local(NULL, &one, &sp, &om, NULL), PIXSUM_OK);
    assert_true(map[0] == 10 * (1 + 0.5 * (0 / 127.5 - 1)));
    pixsum_normalize_spec ns = {3, 1, PIXSUM_BORDER_REPLICATE, 0, 0};
    uint8_t flat[3] = {7, 7, 7};
    pixsum_view fin = pixsum_view_2d(flat, PIXSUM_U8, 3, 1, 1, 0);
    map[0] = map[1] = map[2] = -1;
    assert_int_equal(pixsum_normalize_local(NULL, &fin, &ns, &vm), PIXSUM_OK);
    assert_true(map[0] == 0 && map[1] == 0 && map[2] == 0); /* 0 / 0 -> 0 */
}

/* box.omp's bands and box.stream give the same bytes. */
static void test_bands_equal(void **state)
{
    (void)state;
    if (pixsum_method_find("box.omp") < 0)
        skip();
    tu_rng *r = tu_global_rng();
    tu_image in, a, b;
    assert_int_equal(tu_image_alloc(&in, PIXSUM_U8, 37, 300, 1, 1, NULL), 0);
    tu_fill_random(r, &in.view, TU_FILL_MIXED);
    assert_int_equal(tu_image_alloc(&a, PIXSUM_F32, 37, 300, 1, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&b, PIXSUM_F32, 37, 300, 1, 1, NULL), 0);
    pixsum_threshold_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.kw = 15;
    sp.kh = 31;
    sp.method = PIXSUM_THRESHOLD_SAUVOLA;
    sp.k = 0.3;
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_int_equal(pixsum_ctx_set_method(ctx, "box.omp"), PIXSUM_OK);
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, 3), PIXSUM_OK);
    assert_int_equal(pixsum_threshold_local(ctx, &in.view, &sp, &a.view, NULL), PIXSUM_OK);
    assert_int_equal(pixsum_ctx_set_method(ctx, "box.stream"), PIXSUM_OK);
    assert_int_equal(pixsum_threshold_local(ctx, &in.view, &sp, &b.view, NULL), PIXSUM_OK);
    pixsum_ctx_free(ctx);
    assert_memory_equal(a.view.data, b.view.data, 37 * 300 * sizeof(float));
    tu_image_free(&in);
    tu_image_free(&a);
    tu_image_free(&b);
}

static void test_refusals(void **state)
{
    (void)state;
    tu_image in, rgb, map, mask;
    assert_int_equal(tu_image_alloc(&in, PIXSUM_U8, 8, 6, 1, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&rgb, PIXSUM_U8, 8, 6, 1, 3, NULL), 0);
    assert_int_equal(tu_image_alloc(&map, PIXSUM_F32, 8, 6, 1, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&mask, PIXSUM_U8, 8, 6, 1, 1, NULL), 0);
    tu_image_snapshot(&map);
    tu_image_snapshot(&mask);
    pixsum_threshold_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.kw = sp.kh = 3;
    pixsum_view *m = &map.view, *k = &mask.view;
    assert_int_equal(pixsum_threshold_local(NULL, &in.view, &sp, NULL, NULL), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_threshold_local(NULL, NULL, &sp, m, k), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_threshold_local(NULL, &in.view, NULL, m, k), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_threshold_local(NULL, &rgb.view, &sp, m, k), PIXSUM_ERR_BAD_SHAPE);
    assert_int_equal(pixsum_threshold_local(NULL, &in.view, &sp, k, m), PIXSUM_ERR_BAD_TYPE);
    sp.method = (pixsum_threshold_method)7;
    assert_int_equal(pixsum_threshold_local(NULL, &in.view, &sp, m, k), PIXSUM_ERR_INVALID_ARG);
    sp.method = PIXSUM_THRESHOLD_SAUVOLA;
    sp.r = -1;
    assert_int_equal(pixsum_threshold_local(NULL, &in.view, &sp, m, k), PIXSUM_ERR_INVALID_ARG);
    sp.r = 0;
    sp.k = NAN;
    assert_int_equal(pixsum_threshold_local(NULL, &in.view, &sp, m, k), PIXSUM_ERR_INVALID_ARG);
    sp.k = 0.2;
    sp.kw = 0;
    assert_int_equal(pixsum_threshold_local(NULL, &in.view, &sp, m, k), PIXSUM_ERR_INVALID_ARG);
    sp.kw = 3;
    sp.border = PIXSUM_BORDER_VALID;
    assert_int_equal(pixsum_threshold_local(NULL, &in.view, &sp, m, k), PIXSUM_ERR_BAD_SHAPE);
    sp.border = PIXSUM_BORDER_CONSTANT;
    sp.border_value = 300;
    assert_int_equal(pixsum_threshold_local(NULL, &in.view, &sp, m, k), PIXSUM_ERR_INVALID_ARG);
    sp.border_value = 0;
    pixsum_view half = pixsum_view_2d(map.view.data, PIXSUM_U8, 8, 6, 1, 0);
    assert_int_equal(pixsum_threshold_local(NULL, &in.view, &sp, m, &half), PIXSUM_ERR_ALIASING);
    pixsum_view self = in.view;
    assert_int_equal(pixsum_threshold_local(NULL, &in.view, &sp, NULL, &self),
                     PIXSUM_ERR_ALIASING);
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_int_equal(pixsum_ctx_set_method(ctx, "serial.2wh"), PIXSUM_OK);
    assert_int_equal(pixsum_threshold_local(ctx, &in.view, &sp, m, k), PIXSUM_ERR_UNSUPPORTED);
    pixsum_normalize_spec ns = {3, 3, PIXSUM_BORDER_REFLECT101, 0, -1};
    assert_int_equal(pixsum_normalize_local(NULL, &in.view, &ns, m), PIXSUM_ERR_INVALID_ARG);
    ns.eps = 0;
    assert_int_equal(pixsum_normalize_local(NULL, &rgb.view, &ns, m), PIXSUM_ERR_BAD_SHAPE);
    assert_int_equal(pixsum_normalize_local(NULL, &in.view, &ns, k), PIXSUM_ERR_BAD_TYPE);
    assert_int_equal(pixsum_normalize_local(ctx, &in.view, &ns, m), PIXSUM_ERR_UNSUPPORTED);
    pixsum_ctx_free(ctx);
    assert_int_equal(tu_image_check_untouched(&map, 1, "refused map"), 0);
    assert_int_equal(tu_image_check_untouched(&mask, 1, "refused mask"), 0);
    assert_true(pixsum_threshold_default_r(PIXSUM_U8) == 127.5);
    assert_true(pixsum_threshold_default_r(PIXSUM_I64) == 0);
    tu_image_free(&in);
    tu_image_free(&rgb);
    tu_image_free(&map);
    tu_image_free(&mask);
}

int main(void)
{
    tu_init("test_threshold_local");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_bands_equal),
        cmocka_unit_test(test_threshold_random),
        cmocka_unit_test(test_normalize_random),
        cmocka_unit_test(test_threshold_batch),
        cmocka_unit_test(test_normalize_batch),
        cmocka_unit_test(test_batch_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

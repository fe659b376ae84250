/*
 * test_box_filter.c - pixsum_box_filter() against a direct reference from
 * the definition (the sum of every window, the border applied by walking
 * the reflection, not by the library's index formula): random sizes (1x1,
 * 1xN, Nx1), windows larger than the image, every border, statistic and
 * output type, 1-4 channels, random strides and ROIs; integer outputs exact,
 * float outputs within the documented bound; u8 means rounded half to even;
 * the variance of 1e8 + {0,1,2,3}; and the refusals, which leave the output
 * untouched.
 */
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
#include "ref_border.h"
#include "testutil.h"

typedef struct win_ref {
    tu_i128 s, q;         /* exact (integer inputs) */
    long double fs, fq;   /* long double (all inputs) */
    uint64_t n;           /* pixels the statistic divides by */
} win_ref;

static win_ref ref_window(const pixsum_view *in, const pixsum_box_filter_spec *sp, size_t ox,
                          size_t oy, size_t c)
{
    win_ref r = {0, 0, 0, 0, 0};
    int is_int = in->type != PIXSUM_F32 && in->type != PIXSUM_F64;
    long x0 = (long)ox - (long)(sp->kw / 2), y0 = (long)oy - (long)(sp->kh / 2);
    if (sp->border == PIXSUM_BORDER_VALID)
        x0 = (long)ox, y0 = (long)oy;
    for (long y = y0; y < y0 + (long)sp->kh; y++)
        for (long x = x0; x < x0 + (long)sp->kw; x++) {
            long sy = ref_border_map(y, (long)in->height, sp->border);
            long sx = ref_border_map(x, (long)in->width, sp->border);
            if (sy < 0 || sx < 0) {
                if (sp->border == PIXSUM_BORDER_SHRINK)
                    continue;
                long double v = sp->border_value;
                r.s += (tu_i128)sp->border_value;
                r.q += (tu_i128)sp->border_value * (tu_i128)sp->border_value;
                r.fs += v;
                r.fq += v * v;
                r.n++;
                continue;
            }
            if (is_int) {
                int64_t v = tu_get_i(in, (size_t)sx, (size_t)sy, 0, c);
                r.s += v;
                r.q += (tu_i128)v * v;
                r.fs += (long double)v;
                r.fq += (long double)v * (long double)v;
            } else {
                long double v = tu_get_f(in, (size_t)sx, (size_t)sy, 0, c);
                r.fs += v;
                r.fq += v * v;
            }
            r.n++;
        }
    return r;
}

static int is_float(pixsum_type t)
{
    return t == PIXSUM_F32 || t == PIXSUM_F64;
}

/* Checks every output sample; returns the number of mismatches (prints the first). */
static size_t check_output(const pixsum_view *in, const pixsum_box_filter_spec *sp,
                           const pixsum_view *out, double mag)
{
    size_t bad = 0;
    int in_int = !is_float(in->type);
    double m = (double)(in->width + in->height + sp->kw + sp->kh);
    double nfull = (double)sp->kw * (double)sp->kh;
    /* integer windows whose squares can pass 64 bits are summed in f64 */
    if (in_int && sp->stat >= PIXSUM_BOX_VAR && nfull * mag * mag >= 0x1p64)
        in_int = 0;
    for (size_t y = 0; y < out->height; y++)
        for (size_t x = 0; x < out->width; x++)
            for (size_t c = 0; c < in->channels; c++) {
                win_ref r = ref_window(in, sp, x, y, c);
                int ok = 1;
                long double want = 0, got = 0, tol = 0;
                if (!is_float(out->type)) {
                    int64_t g = tu_get_i(out, x, y, 0, c);
                    tu_i128 w;
                    if (sp->stat == PIXSUM_BOX_SUM) {
                        w = r.s;
                    } else { /* mean, rounded to nearest, ties to even */
                        tu_i128 q = r.s / (tu_i128)r.n, rem = r.s - q * (tu_i128)r.n;
                        if (2 * rem > (tu_i128)r.n || (2 * rem == (tu_i128)r.n && (q & 1)))
                            q++;
                        w = q;
                    }
                    ok = (tu_i128)g == w;
                    want = (long double)w;
                    got = (long double)g;
                } else {
                    got = tu_get_f(out, x, y, 0, c);
                    long double n = (long double)r.n;
                    double orel = out->type == PIXSUM_F32 ? 0x1p-23 : 0x1p-51;
                    double ferr = in_int ? 0 : 16 * m * nfull * mag * 0x1p-52;
                    if (sp->stat == PIXSUM_BOX_SUM) {
                        want = r.fs;
                        tol = ferr + orel * (nfull * mag);
                    } else if (sp->stat == PIXSUM_BOX_MEAN) {
                        want = r.fs / n;
                        tol = ferr / (double)n + orel * mag;
                    } else {
                        if (!is_float(in->type)) {
                            tu_i128 num = (tu_i128)r.n * r.q - r.s * r.s;
                            want = (long double)num / (n * n);
                        } else {
                            want = (r.fq - r.fs * r.fs / n) / n;
                            if (want < 0)
                                want = 0;
                        }
                        long double wv = want;
                        tol = (in_int ? 0 : 4 * ferr * 2 * mag / (double)n) +
                              orel * 4 * (double)wv + 1e-300;
                        if (sp->stat == PIXSUM_BOX_STD) {
                            want = sqrtl(want);
                            tol = sqrtl(tol) + orel * 4 * (double)want;
                        }
                        if (got < 0)
                            ok = 0;
                    }
                    if (!(fabsl(got - want) <= tol))
                        ok = 0;
                }
                if (!ok && bad++ == 0)
                    fprintf(stderr, "  mismatch at (%zu, %zu, c%zu): got %.17Lg want %.17Lg "
                            "tol %.3Lg (n %llu)\n", x, y, c, got, want, tol,
                            (unsigned long long)r.n);
            }
    return bad;
}

static const pixsum_type in_types[] = {PIXSUM_U8, PIXSUM_U16, PIXSUM_I16, PIXSUM_I32,
                                       PIXSUM_U32, PIXSUM_F32, PIXSUM_F64};

/* A random valid output type for (in, stat, window). */
static pixsum_type pick_out(tu_rng *r, pixsum_type in, const pixsum_box_filter_spec *sp)
{
    pixsum_type def = pixsum_box_filter_type(in, sp);
    if (tu_below(r, 3) == 0 || def == PIXSUM_TYPE_NONE)
        return tu_below(r, 2) ? PIXSUM_F64 : PIXSUM_F32;
    if (sp->stat == PIXSUM_BOX_SUM && !is_float(in) && tu_below(r, 2))
        return in == PIXSUM_I16 || in == PIXSUM_I32 ? PIXSUM_I64
               : def == PIXSUM_U32                  ? PIXSUM_U64
                                                    : def;
    return def;
}

static void run_random_cases(size_t cases, size_t maxdim, size_t minw)
{
    tu_rng *r = tu_global_rng();
    for (size_t k = 0; k < cases; k++) {
        pixsum_type t = in_types[tu_below(r, sizeof in_types / sizeof in_types[0])];
        size_t w = tu_dim(r, maxdim), h = tu_dim(r, maxdim), ch = tu_between(r, 1, 4);
        if (minw) { /* wide rows: the 8 interleaved running sums of windows wider than 8 */
            w = tu_between(r, minw, 2 * minw);
            h = tu_between(r, 1, 4);
            ch = tu_between(r, 1, 2);
        }
        pixsum_box_filter_spec sp;
        memset(&sp, 0, sizeof sp);
        sp.kw = tu_below(r, 6) == 0 ? w + tu_between(r, 0, 2 * w + 3) : tu_between(r, 1, w);
        sp.kh = tu_below(r, 6) == 0 ? h + tu_between(r, 0, 2 * h + 3) : tu_between(r, 1, h);
        sp.stat = (pixsum_box_stat)tu_below(r, 4);
        sp.border = (pixsum_border)tu_below(r, PIXSUM_BORDER_COUNT);
        if (sp.border == PIXSUM_BORDER_VALID) {
            sp.kw = tu_between(r, 1, w);
            sp.kh = tu_between(r, 1, h);
        }
        if (sp.border == PIXSUM_BORDER_CONSTANT)
            sp.border_value = t == PIXSUM_U8 ? (double)tu_below(r, 256)
                              : t == PIXSUM_I16 ? -1234 : t == PIXSUM_F32 ? 2.5 : 77;
        tu_layout lay = tu_random_layout(r), olay = tu_random_layout(r);
        tu_image in, out;
        assert_int_equal(tu_image_alloc(&in, t, w, h, 1, ch, &lay), 0);
        if (is_float(t)) {
            for (size_t y = 0; y < h; y++)
                for (size_t x = 0; x < w; x++)
                    for (size_t c = 0; c < ch; c++)
                        tu_set_f(&in.view, x, y, 0, c, (tu_unit(r) - 0.5) * 2000.0);
        } else {
            tu_fill_random(r, &in.view, TU_FILL_MIXED);
        }
        double mag = is_float(t) ? 2000.0 : (double)tu_type_max(t);
        if (-(double)tu_type_min(t) > mag)
            mag = -(double)tu_type_min(t);
        if (sp.border == PIXSUM_BORDER_CONSTANT && fabs(sp.border_value) > mag)
            mag = fabs(sp.border_value);
        size_t ow, oh;
        assert_int_equal(pixsum_box_filter_shape(&sp, w, h, &ow, &oh), PIXSUM_OK);
        pixsum_type ot = pick_out(r, t, &sp);
        assert_int_equal(tu_image_alloc(&out, ot, ow, oh, 1, ch, &olay), 0);
        /* auto, box.stream or box.omp on 1-3 threads: the same results */
        static const char *const names[] = {"auto", "box.stream", "box.omp"};
        pixsum_ctx *ctx = pixsum_ctx_new();
        assert_non_null(ctx);
        const char *mname = names[tu_below(r, 3)];
        if (pixsum_method_find(mname) < 0)
            mname = "auto"; /* box.omp exists only in OpenMP builds */
        assert_int_equal(pixsum_ctx_set_method(ctx, mname), PIXSUM_OK);
        assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, (intptr_t)tu_between(r, 1, 3)),
                         PIXSUM_OK);
        int st = pixsum_box_filter(tu_below(r, 4) ? ctx : NULL, &in.view, &sp, &out.view);
        pixsum_ctx_free(ctx);
        if (st != PIXSUM_OK)
            fprintf(stderr, "case %zu: %s %zux%zux%zu window %zux%zu stat %d border %s -> %s: "
                    "%s\n", k, pixsum_type_name(t), w, h, ch, sp.kw, sp.kh, (int)sp.stat,
                    pixsum_border_name(sp.border), pixsum_type_name(ot), pixsum_last_error());
        assert_int_equal(st, PIXSUM_OK);
        size_t bad = check_output(&in.view, &sp, &out.view, mag);
        if (bad)
            fprintf(stderr, "case %zu: %s %zux%zux%zu window %zux%zu stat %d border %s -> %s: "
                    "%zu mismatches\n", k, pixsum_type_name(t), w, h, ch, sp.kw, sp.kh,
                    (int)sp.stat, pixsum_border_name(sp.border), pixsum_type_name(ot), bad);
        assert_int_equal(bad, 0);
        tu_image_free(&in);
        tu_image_free(&out);
    }
}

static void test_random_small(void **state)
{
    (void)state;
    run_random_cases(600, 9, 0);
}

/* Tall images: box.omp cuts them into bands of at least 64 rows. */
static void test_tall_bands(void **state)
{
    (void)state;
    if (pixsum_method_find("box.omp") < 0)
        skip();
    tu_rng *r = tu_global_rng();
    for (int k = 0; k < 12; k++) {
        size_t w = tu_between(r, 1, 9), h = tu_between(r, 130, 400), ch = tu_between(r, 1, 2);
        pixsum_box_filter_spec sp = {tu_between(r, 1, 5), tu_between(r, 1, 90),
                                     (pixsum_box_stat)tu_below(r, 4),
                                     (pixsum_border)tu_below(r, PIXSUM_BORDER_COUNT), 3};
        tu_image in, a, b;
        assert_int_equal(tu_image_alloc(&in, PIXSUM_U16, w, h, 1, ch, NULL), 0);
        tu_fill_random(r, &in.view, TU_FILL_MIXED);
        size_t ow, oh;
        if (sp.border == PIXSUM_BORDER_VALID)
            sp.kw = 1;
        assert_int_equal(pixsum_box_filter_shape(&sp, w, h, &ow, &oh), PIXSUM_OK);
        pixsum_type ot = sp.stat == PIXSUM_BOX_SUM ? PIXSUM_U64 : PIXSUM_F64;
        assert_int_equal(tu_image_alloc(&a, ot, ow, oh, 1, ch, NULL), 0);
        assert_int_equal(tu_image_alloc(&b, ot, ow, oh, 1, ch, NULL), 0);
        pixsum_ctx *ctx = pixsum_ctx_new();
        assert_int_equal(pixsum_ctx_set_method(ctx, "box.omp"), PIXSUM_OK);
        assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, 3), PIXSUM_OK);
        assert_int_equal(pixsum_box_filter(ctx, &in.view, &sp, &a.view), PIXSUM_OK);
        assert_int_equal(pixsum_ctx_set_method(ctx, "box.stream"), PIXSUM_OK);
        assert_int_equal(pixsum_box_filter(ctx, &in.view, &sp, &b.view), PIXSUM_OK);
        pixsum_ctx_free(ctx);
        assert_int_equal(check_output(&in.view, &sp, &a.view, 65535), 0);
        if (sp.stat == PIXSUM_BOX_SUM || sp.stat == PIXSUM_BOX_VAR)
            for (size_t y = 0; y < oh; y++) /* integers (and exact variances): same bytes */
                assert_memory_equal(tu_elem(&a.view, 0, y, 0, 0), tu_elem(&b.view, 0, y, 0, 0),
                                    ow * ch * pixsum_type_size(ot));
        tu_image_free(&in);
        tu_image_free(&a);
        tu_image_free(&b);
    }
}

static void test_random_larger(void **state)
{
    (void)state;
    run_random_cases(120, 40, 0);
    run_random_cases(40, 0, 512);
}

/* Every border and statistic on one u8 image, against the reference. */
static void test_every_border_and_stat(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    tu_image in, out;
    assert_int_equal(tu_image_alloc(&in, PIXSUM_U8, 13, 7, 1, 3, NULL), 0);
    tu_fill_random(r, &in.view, TU_FILL_MIXED);
    for (int b = 0; b < PIXSUM_BORDER_COUNT; b++)
        for (int s = 0; s < 4; s++)
            for (size_t kw = 1; kw <= 6; kw += 5) {
                pixsum_box_filter_spec sp = {kw, 4, (pixsum_box_stat)s, (pixsum_border)b, 9};
                size_t ow, oh;
                assert_int_equal(pixsum_box_filter_shape(&sp, 13, 7, &ow, &oh), PIXSUM_OK);
                pixsum_type ot = pixsum_box_filter_type(PIXSUM_U8, &sp);
                assert_int_equal(tu_image_alloc(&out, ot, ow, oh, 1, 3, NULL), 0);
                assert_int_equal(pixsum_box_filter(NULL, &in.view, &sp, &out.view), PIXSUM_OK);
                assert_int_equal(check_output(&in.view, &sp, &out.view, 255), 0);
                tu_image_free(&out);
            }
    tu_image_free(&in);
}

static void test_variance_of_large_offset(void **state)
{
    (void)state;
    double px[4] = {1e8, 1e8 + 1, 1e8 + 2, 1e8 + 3}, var = -1, sd = -1;
    pixsum_view in = pixsum_view_2d(px, PIXSUM_F64, 4, 1, 1, 0);
    pixsum_view out = pixsum_view_2d(&var, PIXSUM_F64, 1, 1, 1, 0);
    pixsum_box_filter_spec sp = {4, 1, PIXSUM_BOX_VAR, PIXSUM_BORDER_VALID, 0};
    assert_int_equal(pixsum_box_filter(NULL, &in, &sp, &out), PIXSUM_OK);
    assert_true(var == 1.25);
    sp.stat = PIXSUM_BOX_STD;
    out.data = &sd;
    assert_int_equal(pixsum_box_filter(NULL, &in, &sp, &out), PIXSUM_OK);
    assert_true(sd == sqrt(1.25));
}

static void test_u8_mean_ties_to_even(void **state)
{
    (void)state;
    uint8_t px[4] = {1, 2, 3, 4}, o[3];
    pixsum_view in = pixsum_view_2d(px, PIXSUM_U8, 4, 1, 1, 0);
    pixsum_view out = pixsum_view_2d(o, PIXSUM_U8, 3, 1, 1, 0);
    pixsum_box_filter_spec sp = {2, 1, PIXSUM_BOX_MEAN, PIXSUM_BORDER_VALID, 0};
    assert_int_equal(pixsum_box_filter(NULL, &in, &sp, &out), PIXSUM_OK);
    assert_int_equal(o[0], 2); /* 1.5 -> 2 */
    assert_int_equal(o[1], 2); /* 2.5 -> 2 */
    assert_int_equal(o[2], 4); /* 3.5 -> 4 */
}

/* The one-pass row kernel (AVX-512 builds; elsewhere the same requests run
 * the general passes): u8 u16 f32 f64 inputs, the borders where every window
 * has kw x kh pixels, 1-4 channels, widths around multiples of the 16 (u32)
 * and 8 (f64) lanes, windows whose kw x channels falls either side of 16 and
 * 8 (where the leaving column sums come from registers or from memory),
 * windows wider than the image, random layouts. */
static void test_one_pass_kernel(void **state)
{
    (void)state;
    static const pixsum_type types[] = {PIXSUM_U8, PIXSUM_U8, PIXSUM_U16, PIXSUM_F32,
                                        PIXSUM_F64};
    static const pixsum_border borders[] = {PIXSUM_BORDER_REFLECT101, PIXSUM_BORDER_REFLECT,
                                            PIXSUM_BORDER_REPLICATE, PIXSUM_BORDER_VALID};
    static const size_t widths[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 131};
    static const size_t kws[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65, 140};
    tu_rng *r = tu_global_rng();
    for (int k = 0; k < 500; k++) {
        pixsum_type t = types[tu_below(r, 5)];
        size_t w = widths[tu_below(r, 16)], h = tu_between(r, 1, 7), ch = tu_between(r, 1, 4);
        pixsum_box_filter_spec sp;
        memset(&sp, 0, sizeof sp);
        sp.border = borders[tu_below(r, 4)];
        sp.kw = kws[tu_below(r, 16)];
        sp.kh = tu_between(r, 1, 9);
        sp.stat = (pixsum_box_stat)tu_below(r, 4);
        if (sp.border == PIXSUM_BORDER_VALID) {
            sp.kw = sp.kw > w ? w : sp.kw;
            sp.kh = sp.kh > h ? h : sp.kh;
        }
        pixsum_type ot;
        int is_f = t == PIXSUM_F32 || t == PIXSUM_F64;
        switch (sp.stat) {
        case PIXSUM_BOX_SUM: {
            static const pixsum_type o[] = {PIXSUM_U32, PIXSUM_I32, PIXSUM_F32, PIXSUM_F64};
            ot = is_f ? o[2 + tu_below(r, 2)] : o[tu_below(r, 4)];
            break;
        }
        case PIXSUM_BOX_MEAN: {
            static const pixsum_type o[] = {PIXSUM_U8, PIXSUM_F32, PIXSUM_F64};
            ot = o[tu_below(r, 3)];
            if (ot == PIXSUM_U8 && t != PIXSUM_U8)
                ot = PIXSUM_F32;
            break;
        }
        default:
            ot = tu_below(r, 2) ? PIXSUM_F32 : PIXSUM_F64;
            break;
        }
        tu_layout lay = tu_random_layout(r), olay = tu_random_layout(r);
        tu_image in, out;
        assert_int_equal(tu_image_alloc(&in, t, w, h, 1, ch, &lay), 0);
        if (is_f) {
            for (size_t y = 0; y < h; y++)
                for (size_t x = 0; x < w; x++)
                    for (size_t c = 0; c < ch; c++)
                        tu_set_f(&in.view, x, y, 0, c, (tu_unit(r) - 0.5) * 2000.0);
        } else {
            tu_fill_random(r, &in.view, TU_FILL_MIXED);
        }
        double mag = is_f ? 2000.0 : (double)tu_type_max(t);
        size_t ow, oh;
        assert_int_equal(pixsum_box_filter_shape(&sp, w, h, &ow, &oh), PIXSUM_OK);
        assert_int_equal(tu_image_alloc(&out, ot, ow, oh, 1, ch, &olay), 0);
        pixsum_ctx *ctx = pixsum_ctx_new();
        assert_int_equal(pixsum_ctx_set_method(ctx, "box.stream"), PIXSUM_OK);
        int st = pixsum_box_filter(ctx, &in.view, &sp, &out.view);
        pixsum_ctx_free(ctx);
        size_t bad = st == PIXSUM_OK ? check_output(&in.view, &sp, &out.view, mag) : 1;
        if (bad)
            fprintf(stderr, "one-pass case %d: %s %zux%zux%zu window %zux%zu stat %d border %s "
                    "-> %s: status %d, %zu mismatches\n", k, pixsum_type_name(t), w, h, ch,
                    sp.kw, sp.kh, (int)sp.stat, pixsum_border_name(sp.border),
                    pixsum_type_name(ot), st, bad);
        assert_int_equal(bad, 0);
        tu_image_free(&in);
        tu_image_free(&out);
    }
}

/* u8 -> u8 means of one channel (the 64-column layout of AVX-512 builds):
 * widths around multiples of 64, windows up to 257 rows (the u16 column
 * sums' limit) and either side of it, wider than the image, every border
 * where it applies, odd and even pixel counts. */
static void test_u8_mean_one_channel(void **state)
{
    (void)state;
    static const pixsum_border borders[] = {PIXSUM_BORDER_REFLECT101, PIXSUM_BORDER_REFLECT,
                                            PIXSUM_BORDER_REPLICATE, PIXSUM_BORDER_VALID};
    static const size_t widths[] = {63, 64, 65, 127, 128, 129, 200, 257, 300};
    static const size_t kws[] = {1, 2, 3, 4, 5, 8, 15, 16, 62, 63, 64, 65, 66, 127, 128, 129,
                                 131, 255, 301};
    tu_rng *r = tu_global_rng();
    for (int k = 0; k < 160; k++) {
        size_t w = widths[tu_below(r, 9)], h = tu_between(r, 1, 8);
        pixsum_box_filter_spec sp;
        memset(&sp, 0, sizeof sp);
        sp.stat = PIXSUM_BOX_MEAN;
        sp.border = borders[tu_below(r, 4)];
        sp.kw = kws[tu_below(r, 19)];
        sp.kh = tu_below(r, 8) == 0 ? tu_between(r, 250, 260) : tu_between(r, 1, 9);
        if (sp.kh > 9 && sp.kw > 16) /* the reference sums every window: keep it short */
            sp.kw = kws[tu_below(r, 8)];
        if (sp.border == PIXSUM_BORDER_VALID) {
            sp.kw = sp.kw > w ? w : sp.kw;
            sp.kh = sp.kh > h ? h : sp.kh;
        }
        tu_layout lay = tu_random_layout(r), olay = tu_random_layout(r);
        tu_image in, out;
        assert_int_equal(tu_image_alloc(&in, PIXSUM_U8, w, h, 1, 1, &lay), 0);
        tu_fill_random(r, &in.view, TU_FILL_MIXED);
        size_t ow, oh;
        assert_int_equal(pixsum_box_filter_shape(&sp, w, h, &ow, &oh), PIXSUM_OK);
        assert_int_equal(tu_image_alloc(&out, PIXSUM_U8, ow, oh, 1, 1, &olay), 0);
        int st = pixsum_box_filter(NULL, &in.view, &sp, &out.view);
        size_t bad = st == PIXSUM_OK ? check_output(&in.view, &sp, &out.view, 255) : 1;
        if (bad)
            fprintf(stderr, "u8 mean case %d: %zux%zu window %zux%zu border %s: status %d, "
                    "%zu mismatches\n", k, w, h, sp.kw, sp.kh, pixsum_border_name(sp.border),
                    st, bad);
        assert_int_equal(bad, 0);
        tu_image_free(&in);
        tu_image_free(&out);
    }
}

/* u8 means for every window sum 0 .. 255 n, for pixel counts n on both sides
 * of each change of the rounding method (odd n below 8192: float; odd n up
 * to 65279: 1/n as two floats; larger odd n: double; even n: float estimate
 * and exact remainder; n * 255 reaching 2^24: the general 64-bit path),
 * 1x1 included: a one-row image x[i] = i / n with
 * a 1 x n window (border valid) has the window sum s at column s. */
static void test_u8_mean_every_sum(void **state)
{
    (void)state;
    static const size_t ns[] = {1, 2, 3, 4, 9, 224, 225, 3969, 8191, 8192, 8193, 65024,
                                65025, 65279, 65281, 65792, 65793, 65794};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        size_t n = ns[k], w = 256 * n;
        uint8_t *px = malloc(w), *o = malloc(w - n + 1);
        assert_non_null(px);
        assert_non_null(o);
        for (size_t i = 0; i < w; i++)
            px[i] = (uint8_t)(i / n);
        pixsum_view in = pixsum_view_2d(px, PIXSUM_U8, w, 1, 1, 0);
        pixsum_view out = pixsum_view_2d(o, PIXSUM_U8, w - n + 1, 1, 1, 0);
        pixsum_box_filter_spec sp = {n, 1, PIXSUM_BOX_MEAN, PIXSUM_BORDER_VALID, 0};
        assert_int_equal(pixsum_box_filter(NULL, &in, &sp, &out), PIXSUM_OK);
        size_t bad = 0;
        for (size_t s = 0; s <= 255 * n; s++) {
            size_t q = s / n, rem = s - q * n;
            if (2 * rem > n || (2 * rem == n && (q & 1)))
                q++;
            if (o[s] != q && bad++ == 0)
                fprintf(stderr, "  n %zu: sum %zu gave %u, want %zu\n", n, s, o[s], q);
        }
        assert_int_equal(bad, 0);
        free(px);
        free(o);
    }
}

static void test_refusals_leave_output_untouched(void **state)
{
    (void)state;
    tu_image in, out;
    assert_int_equal(tu_image_alloc(&in, PIXSUM_U16, 10, 8, 1, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&out, PIXSUM_U32, 10, 8, 1, 1, NULL), 0);
    tu_fill_random(tu_global_rng(), &in.view, TU_FILL_MIXED);
    tu_image_snapshot(&out);
    pixsum_box_filter_spec sp = {300, 300, PIXSUM_BOX_SUM, PIXSUM_BORDER_REFLECT101, 0};
    assert_int_equal(pixsum_box_filter(NULL, &in.view, &sp, &out.view), PIXSUM_ERR_OVERFLOW);
    sp.kw = sp.kh = 3;
    sp.stat = PIXSUM_BOX_MEAN; /* u16 means are u16, f32 or f64 */
    assert_int_equal(pixsum_box_filter(NULL, &in.view, &sp, &out.view), PIXSUM_ERR_BAD_TYPE);
    sp.stat = PIXSUM_BOX_SUM;
    sp.border = PIXSUM_BORDER_VALID;
    sp.kw = 11;
    assert_int_equal(pixsum_box_filter(NULL, &in.view, &sp, &out.view), PIXSUM_ERR_BAD_SHAPE);
    sp.kw = 3;
    assert_int_equal(pixsum_box_filter(NULL, &in.view, &sp, &out.view), PIXSUM_ERR_BAD_SHAPE);
    sp.border = PIXSUM_BORDER_CONSTANT;
    sp.border_value = 0.5;
    assert_int_equal(pixsum_box_filter(NULL, &in.view, &sp, &out.view), PIXSUM_ERR_INVALID_ARG);
    sp.border_value = 70000;
    assert_int_equal(pixsum_box_filter(NULL, &in.view, &sp, &out.view), PIXSUM_ERR_INVALID_ARG);
    sp.border_value = 1;
    sp.kw = 0;
    assert_int_equal(pixsum_box_filter(NULL, &in.view, &sp, &out.view), PIXSUM_ERR_INVALID_ARG);
    sp.kw = 3;
    sp.border = (pixsum_border)17;
    assert_int_equal(pixsum_box_filter(NULL, &in.view, &sp, &out.view), PIXSUM_ERR_INVALID_ARG);
    sp.border = PIXSUM_BORDER_REPLICATE;
    assert_int_equal(pixsum_box_filter(NULL, NULL, &sp, &out.view), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_box_filter(NULL, &in.view, NULL, &out.view), PIXSUM_ERR_NULL);
    pixsum_view alias = pixsum_view_2d(in.view.data, PIXSUM_U32, 5, 4, 1, 0);
    pixsum_view small_in;
    assert_int_equal(pixsum_view_roi(&in.view, 0, 0, 5, 4, &small_in), PIXSUM_OK);
    assert_int_equal(pixsum_box_filter(NULL, &small_in, &sp, &alias), PIXSUM_ERR_ALIASING);
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_non_null(ctx);
    assert_int_equal(pixsum_ctx_set_method(ctx, "serial.2wh"), PIXSUM_OK);
    assert_int_equal(pixsum_box_filter(ctx, &in.view, &sp, &out.view), PIXSUM_ERR_UNSUPPORTED);
    assert_int_equal(pixsum_ctx_set_method(ctx, "box.stream"), PIXSUM_OK);
    assert_int_equal(tu_image_check_untouched(&out, 1, "refused output"), 0);
    assert_int_equal(pixsum_box_filter(ctx, &in.view, &sp, &out.view), PIXSUM_OK);
    pixsum_ctx_free(ctx);
    pixsum_border b;
    assert_int_equal(pixsum_border_from_name("reflect_101", &b), PIXSUM_OK);
    assert_int_equal(b, PIXSUM_BORDER_REFLECT101);
    assert_int_equal(pixsum_border_from_name("wrap", &b), PIXSUM_ERR_INVALID_ARG);
    assert_string_equal(pixsum_border_name(PIXSUM_BORDER_SHRINK), "shrink");
    assert_true(pixsum_method_supports(pixsum_method_find("box.stream"), PIXSUM_OP_BOX_FILTER,
                                       PIXSUM_U8, PIXSUM_U8));
    tu_image_free(&in);
    tu_image_free(&out);
}

int main(void)
{
    tu_init("test_box_filter");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_border_and_stat),
        cmocka_unit_test(test_variance_of_large_offset),
        cmocka_unit_test(test_u8_mean_ties_to_even),
        cmocka_unit_test(test_random_small),
        cmocka_unit_test(test_random_larger),
        cmocka_unit_test(test_tall_bands),
        cmocka_unit_test(test_one_pass_kernel),
        cmocka_unit_test(test_u8_mean_one_channel),
        cmocka_unit_test(test_u8_mean_every_sum),
        cmocka_unit_test(test_refusals_leave_output_untouched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_box.c - box queries on integral tables: single and batched box sums
 * (4-corner 2-D and 8-corner 3-D) against sums of the pixels computed directly
 * by the test, padded and inclusive tables giving the same sums, box mean and
 * variance (exact against a 128-bit reference for integer tables, never
 * negative, also for constant images and huge values), wrap-mode tables, and the
 * refusal of empty and out-of-range boxes.
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

/* Sum of the box's pixels (or squares) of channel c, straight from the image. */
typedef struct box_ref {
    tu_i128 exact;    /* integer inputs */
    long double sum;  /* float inputs (and the integer sum as long double) */
    long double mag;  /* sum of |terms| */
} box_ref;

static box_ref direct_box(const pixsum_view *in, const pixsum_box *b, size_t c, int squared)
{
    box_ref r = {0, 0, 0};
    int is_float = in->type == PIXSUM_F32 || in->type == PIXSUM_F64;
    for (size_t z = b->z; z < b->z + b->d; z++)
        for (size_t y = b->y; y < b->y + b->h; y++)
            for (size_t x = b->x; x < b->x + b->w; x++) {
                if (is_float) {
                    long double v = tu_get_f(in, x, y, z, c);
                    if (squared)
                        v *= v;
                    r.sum += v;
                    r.mag += fabsl(v);
                } else {
                    int64_t v = tu_get_i(in, x, y, z, c);
                    uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
                    tu_i128 t = squared ? (tu_i128)(tu_u128)(m * m) : (tu_i128)v;
                    r.exact += t;
                    r.mag += (long double)(squared ? (tu_u128)(m * m) : (tu_u128)m);
                }
            }
    if (!is_float)
        r.sum = (long double)r.exact;
    return r;
}

static pixsum_box random_box(tu_rng *r, size_t w, size_t h, size_t d)
{
    pixsum_box b;
    b.x = tu_between(r, 0, w - 1);
    b.y = tu_between(r, 0, h - 1);
    b.z = tu_between(r, 0, d - 1);
    b.w = tu_between(r, 1, w - b.x);
    b.h = tu_between(r, 1, h - b.y);
    b.d = tu_between(r, 1, d - b.z);
    if (tu_below(r, 8) == 0) { /* the whole image */
        b.x = b.y = b.z = 0;
        b.w = w;
        b.h = h;
        b.d = d;
    }
    return b;
}

/* Integral table of `in` computed by the library (checked against the reference
 * in test_integral). */
static void make_table(tu_image *t, const tu_image *in, pixsum_type out, int padded, int wrap,
                       int squared)
{
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_non_null(ctx);
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, padded), PIXSUM_OK);
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, wrap), PIXSUM_OK);
    size_t w, h, d;
    pixsum_integral_shape(ctx, &in->view, &w, &h, &d);
    tu_layout l = tu_random_layout(tu_global_rng());
    assert_int_equal(tu_image_alloc(t, out, w, h, d, in->view.channels, &l), 0);
    int st = squared ? pixsum_integral_sq(ctx, &in->view, NULL, &t->view)
                     : pixsum_integral(ctx, &in->view, &t->view);
    if (st != PIXSUM_OK)
        fail_msg("integral %s->%s: %s", pixsum_type_name(in->view.type), pixsum_type_name(out),
                 pixsum_last_error());
    pixsum_ctx_free(ctx);
}

static int is_int_table(pixsum_type t)
{
    return t == PIXSUM_U32 || t == PIXSUM_U64 || t == PIXSUM_I64;
}

/* The box sum the library wrote (element k*ch + c of sums). */
static uint64_t raw_sum(pixsum_type t, const void *sums, size_t i)
{
    switch (t) {
    case PIXSUM_U32: return ((const uint32_t *)sums)[i];
    case PIXSUM_U64: return ((const uint64_t *)sums)[i];
    case PIXSUM_I64: return (uint64_t)((const int64_t *)sums)[i];
    default: return 0;
    }
}

static long double float_sum(pixsum_type t, const void *sums, size_t i)
{
    return t == PIXSUM_F32 ? ((const float *)sums)[i] : ((const double *)sums)[i];
}

/* Checks sums[k*ch + c] of a box against the direct sum. */
static void check_box_value(const pixsum_view *in, pixsum_type table_type, const void *sums,
                            size_t k, const pixsum_box *b, int squared, int wrap,
                            const char *what)
{
    size_t ch = in->channels;
    double n_table = (double)(in->width + 1) * (double)(in->height + 1) * (double)(in->depth + 1);
    for (size_t c = 0; c < ch; c++) {
        box_ref r = direct_box(in, b, c, squared);
        if (is_int_table(table_type)) {
            uint64_t want = (uint64_t)(tu_u128)r.exact;
            if (table_type == PIXSUM_U32)
                want = (uint32_t)want;
            uint64_t got = raw_sum(table_type, sums, k * ch + c);
            if (got != want)
                fail_msg("%s: box %zu (%zu,%zu,%zu %zux%zux%zu) channel %zu: %s sum %llu, "
                         "expected %llu (wrap %d, seed %llu)",
                         what, k, b->x, b->y, b->z, b->w, b->h, b->d, c,
                         pixsum_type_name(table_type), (unsigned long long)got,
                         (unsigned long long)want, wrap, (unsigned long long)tu_seed());
        } else {
            long double eps = table_type == PIXSUM_F32 ? FLT_EPSILON : DBL_EPSILON;
            long double tiny = table_type == PIXSUM_F32 ? FLT_MIN : DBL_MIN;
            /* Each of the 8 corners carries at most the table's own bound
             * (see tu_check_table), over at most the whole image. */
            box_ref all = {0, 0, 0};
            pixsum_box whole = {0, 0, 0, in->width, in->height, in->depth};
            all = direct_box(in, &whole, c, squared);
            long double bound = 8 * 8 * eps * (long double)n_table * all.mag + n_table * tiny;
            long double got = float_sum(table_type, sums, k * ch + c);
            if (!(fabsl(got - r.sum) <= bound))
                fail_msg("%s: box %zu channel %zu: %s sum %.20Lg, expected %.20Lg (bound %Lg, "
                         "seed %llu)",
                         what, k, c, pixsum_type_name(table_type), got, r.sum, bound,
                         (unsigned long long)tu_seed());
        }
    }
}

static void test_box_sums_random(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    pixsum_type pin[32], pout[32];
    size_t npairs = tu_supported_pairs(0, pin, pout, 32);
    size_t checked = 0;
    for (size_t p = 0; p < npairs; p++)
        for (int vol = 0; vol < 2; vol++) {
            size_t w = tu_dim(r, 40), h = tu_dim(r, 30), d = vol ? tu_between(r, 2, 5) : 1;
            size_t ch = tu_between(r, 1, 4);
            tu_layout l = tu_random_layout(r);
            tu_image in;
            assert_int_equal(tu_image_alloc(&in, pin[p], w, h, d, ch, &l), 0);
            tu_fill_random(r, &in.view, TU_FILL_MIXED);
            tu_image inc, pad;
            make_table(&inc, &in, pout[p], 0, 0, 0);
            make_table(&pad, &in, pout[p], 1, 0, 0);
            enum { NB = 600 }; /* several batches of the 2-D kernel (256 boxes) */
            pixsum_box boxes[NB];
            for (int k = 0; k < NB; k++)
                boxes[k] = random_box(r, w, h, d);
            size_t es = pixsum_type_size(pout[p]);
            unsigned char *batch_inc = malloc(NB * ch * es), *batch_pad = malloc(NB * ch * es);
            unsigned char one[4 * 8];
            assert_non_null(batch_inc);
            assert_non_null(batch_pad);
            pixsum_ctx *padded = pixsum_ctx_new();
            assert_int_equal(pixsum_ctx_set(padded, PIXSUM_PARAM_PADDED, 1), PIXSUM_OK);
            assert_int_equal(pixsum_box_sums(NULL, &inc.view, boxes, NB, batch_inc), PIXSUM_OK);
            assert_int_equal(pixsum_box_sums(padded, &pad.view, boxes, NB, batch_pad), PIXSUM_OK);
            char what[160];
            snprintf(what, sizeof what, "%s->%s %zux%zux%zu ch%zu", pixsum_type_name(pin[p]),
                     pixsum_type_name(pout[p]), w, h, d, ch);
            for (size_t k = 0; k < NB; k++) {
                check_box_value(&in.view, pout[p], batch_inc, k, &boxes[k], 0, 0, what);
                check_box_value(&in.view, pout[p], batch_pad, k, &boxes[k], 0, 0, what);
                /* single query == batch entry, padded == inclusive */
                assert_int_equal(pixsum_box_sum(NULL, &inc.view, &boxes[k], one), PIXSUM_OK);
                assert_memory_equal(one, batch_inc + k * ch * es, ch * es);
                assert_int_equal(pixsum_box_sum(padded, &pad.view, &boxes[k], one), PIXSUM_OK);
                assert_memory_equal(one, batch_pad + k * ch * es, ch * es);
                if (is_int_table(pout[p]))
                    assert_memory_equal(batch_inc + k * ch * es, batch_pad + k * ch * es,
                                        ch * es);
                checked++;
            }
            pixsum_ctx_free(padded);
            free(batch_inc);
            free(batch_pad);
            tu_image_free(&inc);
            tu_image_free(&pad);
            tu_image_free(&in);
        }
    print_message("%zu boxes checked against direct sums\n", checked);
}

/* 2x2x2 volume of distinct powers of two: every box sum names its voxels. */
static void test_box_eight_corners_hand(void **state)
{
    (void)state;
    uint8_t vox[8] = {1, 2, 4, 8, 16, 32, 64, 128}; /* (x, y, z) -> bit x + 2y + 4z */
    pixsum_view in = pixsum_view_3d(vox, PIXSUM_U8, 2, 2, 2, 1, 0, 0);
    uint32_t table[27];
    for (int padded = 0; padded < 2; padded++) {
        pixsum_ctx *ctx = pixsum_ctx_new();
        assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, padded), PIXSUM_OK);
        size_t s = 2 + (size_t)padded;
        pixsum_view tv = pixsum_view_3d(table, PIXSUM_U32, s, s, s, 1, 0, 0);
        assert_int_equal(pixsum_integral(ctx, &in, &tv), PIXSUM_OK);
        for (size_t x = 0; x < 2; x++)
            for (size_t y = 0; y < 2; y++)
                for (size_t z = 0; z < 2; z++)
                    for (size_t w = 1; x + w <= 2; w++)
                        for (size_t h = 1; y + h <= 2; h++)
                            for (size_t d = 1; z + d <= 2; d++) {
                                uint32_t want = 0;
                                for (size_t k = z; k < z + d; k++)
                                    for (size_t j = y; j < y + h; j++)
                                        for (size_t i = x; i < x + w; i++)
                                            want |= 1u << (i + 2 * j + 4 * k);
                                pixsum_box b = {x, y, z, w, h, d};
                                uint32_t got = 0;
                                assert_int_equal(pixsum_box_sum(ctx, &tv, &b, &got), PIXSUM_OK);
                                if (got != want)
                                    fail_msg("padded %d box (%zu,%zu,%zu %zux%zux%zu): %u != %u",
                                             padded, x, y, z, w, h, d, got, want);
                            }
        pixsum_ctx_free(ctx);
    }
}

/* Exact variance from the 128-bit identity n^2 var = n sum(x^2) - (sum x)^2. */
static long double exact_var(const pixsum_view *in, const pixsum_box *b, size_t c)
{
    box_ref s = direct_box(in, b, c, 0), q = direct_box(in, b, c, 1);
    tu_u128 n = (tu_u128)b->w * b->h * b->d;
    tu_u128 mag = s.exact < 0 ? (tu_u128)0 - (tu_u128)s.exact : (tu_u128)s.exact;
    tu_u128 num = n * (tu_u128)q.exact - mag * mag;
    return (long double)num / (long double)n / (long double)n;
}

static void check_stats(const pixsum_view *in, const pixsum_view *sum_t, const pixsum_view *sq_t,
                        const pixsum_ctx *ctx, const pixsum_box *boxes, size_t nb, int exact,
                        const char *what)
{
    size_t ch = in->channels;
    double *mean = malloc(nb * ch * sizeof *mean), *var = malloc(nb * ch * sizeof *var);
    assert_non_null(mean);
    assert_non_null(var);
    int st = pixsum_box_stats(ctx, sum_t, sq_t, boxes, nb, mean, var);
    if (st != PIXSUM_OK)
        fail_msg("%s: box_stats: %s", what, pixsum_last_error());
    for (size_t k = 0; k < nb; k++)
        for (size_t c = 0; c < ch; c++) {
            double m = mean[k * ch + c], v = var[k * ch + c];
            long double n = (long double)boxes[k].w * boxes[k].h * boxes[k].d;
            box_ref s = direct_box(in, &boxes[k], c, 0);
            if (!(v >= 0))
                fail_msg("%s: box %zu channel %zu: negative variance %g", what, k, c, v);
            long double want_m = s.sum / n;
            if (!(fabsl(m - want_m) <= 1e-12L * (s.mag / n) + 1e-300L))
                fail_msg("%s: box %zu: mean %.17g, expected %.17Lg", what, k, m, want_m);
            if (exact) {
                long double want_v = exact_var(in, &boxes[k], c);
                if (!(fabsl(v - want_v) <= 4 * DBL_EPSILON * want_v))
                    fail_msg("%s: box %zu channel %zu: variance %.17g, exact %.17Lg (seed %llu)",
                             what, k, c, v, want_v, (unsigned long long)tu_seed());
            }
        }
    free(mean);
    free(var);
}

static void test_box_stats_exact_integers(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    const struct {
        pixsum_type in, sum, sq;
    } cfg[] = {
        {PIXSUM_U8, PIXSUM_U32, PIXSUM_U32},  {PIXSUM_U8, PIXSUM_U64, PIXSUM_U64},
        {PIXSUM_U16, PIXSUM_U64, PIXSUM_U64}, {PIXSUM_I16, PIXSUM_I64, PIXSUM_U64},
        {PIXSUM_I16, PIXSUM_I64, PIXSUM_I64}, {PIXSUM_U16, PIXSUM_I64, PIXSUM_U64},
    };
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++)
        for (int vol = 0; vol < 2; vol++)
            for (int fill = 0; fill < 3; fill++) {
                size_t w = tu_dim(r, 30), h = tu_dim(r, 20), d = vol ? tu_between(r, 2, 4) : 1;
                size_t ch = tu_between(r, 1, 3);
                tu_image in;
                assert_int_equal(tu_image_alloc(&in, cfg[i].in, w, h, d, ch, NULL), 0);
                tu_fill_random(r, &in.view,
                               fill == 0 ? TU_FILL_MIXED : (fill == 1 ? TU_FILL_MAX : TU_FILL_MIN));
                int padded = (int)tu_below(r, 2);
                tu_image st, sq;
                make_table(&st, &in, cfg[i].sum, padded, 0, 0);
                make_table(&sq, &in, cfg[i].sq, padded, 0, 1);
                enum { NS = 300 }; /* more than one batch (256 boxes) */
                pixsum_box boxes[NS];
                for (int k = 0; k < NS; k++)
                    boxes[k] = random_box(r, w, h, d);
                pixsum_ctx *ctx = pixsum_ctx_new();
                assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, padded), PIXSUM_OK);
                char what[96];
                snprintf(what, sizeof what, "%s sum %s sq %s fill %d", pixsum_type_name(cfg[i].in),
                         pixsum_type_name(cfg[i].sum), pixsum_type_name(cfg[i].sq), fill);
                check_stats(&in.view, &st.view, &sq.view, ctx, boxes, NS, 1, what);
                /* constant images (max or min fill): variance exactly 0 */
                if (fill != 0) {
                    double v[4];
                    assert_int_equal(pixsum_box_stats(ctx, &st.view, &sq.view, &boxes[0], 1, NULL, v),
                                     PIXSUM_OK);
                    for (size_t c = 0; c < ch; c++)
                        assert_true(v[c] == 0.0);
                }
                pixsum_ctx_free(ctx);
                tu_image_free(&st);
                tu_image_free(&sq);
                tu_image_free(&in);
            }
}

/* Alternating extremes: the variance is known in closed form and large. */
static void test_box_stats_huge_values(void **state)
{
    (void)state;
    const struct {
        pixsum_type in;
        int64_t lo, hi;
        pixsum_type sum, sq;
    } cfg[] = {
        {PIXSUM_U16, 0, 65535, PIXSUM_U64, PIXSUM_U64},
        {PIXSUM_I16, -32768, 32767, PIXSUM_I64, PIXSUM_U64},
        {PIXSUM_U32, 0, UINT32_MAX, PIXSUM_U64, PIXSUM_F64},
        {PIXSUM_I32, INT32_MIN, INT32_MAX, PIXSUM_I64, PIXSUM_F64},
    };
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
        size_t w = 16, h = 9;
        tu_image in;
        assert_int_equal(tu_image_alloc(&in, cfg[i].in, w, h, 1, 1, NULL), 0);
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w; x++)
                tu_set_i(&in.view, x, y, 0, 0, (x + y) % 2 ? cfg[i].hi : cfg[i].lo);
        tu_image st, sq;
        make_table(&st, &in, cfg[i].sum, 0, 0, 0);
        make_table(&sq, &in, cfg[i].sq, 0, 0, 1);
        pixsum_box b = {0, 0, 0, w, h, 1}; /* even count: half lo, half hi */
        double mean, var;
        assert_int_equal(pixsum_box_stats(NULL, &st.view, &sq.view, &b, 1, &mean, &var), PIXSUM_OK);
        long double half = ((long double)cfg[i].hi - (long double)cfg[i].lo) / 2;
        long double want_m = ((long double)cfg[i].hi + (long double)cfg[i].lo) / 2;
        long double want_v = half * half;
        if (!(fabsl(mean - want_m) <= 1e-9L * half) ||
            !(fabsl(var - want_v) <= 1e-12L * want_v))
            fail_msg("%s: mean %.17g var %.17g, expected %.17Lg and %.17Lg",
                     pixsum_type_name(cfg[i].in), mean, var, want_m, want_v);
        tu_image_free(&st);
        tu_image_free(&sq);
        tu_image_free(&in);
    }
}

/* Float tables of constant images: rounding may make sum(x^2)/n - mean^2
 * negative; the library must clamp to 0 and stay near 0. */
static void test_box_stats_float_never_negative(void **state)
{
    (void)state;
    const struct {
        pixsum_type in, table;
        double value, rel;
    } cfg[] = {
        {PIXSUM_F32, PIXSUM_F32, 0.1, 1e-3},     {PIXSUM_F32, PIXSUM_F64, 0.1, 1e-9},
        {PIXSUM_F64, PIXSUM_F64, 0.1, 1e-9},     {PIXSUM_F64, PIXSUM_F64, 1e150, 1e-9},
        {PIXSUM_F64, PIXSUM_F64, -3.3e-7, 1e-9}, {PIXSUM_F32, PIXSUM_F32, 1e16, 1e-3},
        {PIXSUM_U16, PIXSUM_F32, 65535, 1e-3},   {PIXSUM_I32, PIXSUM_F64, INT32_MIN, 1e-9},
    };
    tu_rng *r = tu_global_rng();
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
        size_t w = 37, h = 29;
        tu_image in;
        assert_int_equal(tu_image_alloc(&in, cfg[i].in, w, h, 1, 1, NULL), 0);
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w; x++)
                tu_set_f(&in.view, x, y, 0, 0, cfg[i].value);
        tu_image st, sq;
        make_table(&st, &in, cfg[i].table, 0, 0, 0);
        make_table(&sq, &in, cfg[i].table, 0, 0, 1);
        for (int k = 0; k < 200; k++) {
            pixsum_box b = random_box(r, w, h, 1);
            double mean, var;
            assert_int_equal(pixsum_box_stats(NULL, &st.view, &sq.view, &b, 1, &mean, &var),
                             PIXSUM_OK);
            double m2 = cfg[i].value * cfg[i].value;
            if (!(var >= 0) || !(var <= cfg[i].rel * m2))
                fail_msg("%s -> %s constant %g: box %zux%zu variance %g (must be in [0, %g])",
                         pixsum_type_name(cfg[i].in), pixsum_type_name(cfg[i].table),
                         cfg[i].value, b.w, b.h, var, cfg[i].rel * m2);
        }
        tu_image_free(&st);
        tu_image_free(&sq);
        tu_image_free(&in);
    }
}

/* Wrap mode: tables whose entries wrapped still give exact box sums and exact
 * statistics for every box whose true sums fit, also when the sum table is a
 * float table and only the squared table is an integer one that wrapped. */
static void test_box_wrapped_tables(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    size_t w = 300, h = 280; /* 84000 u16 pixels of up to 65535: wraps u32 */
    tu_image in;
    assert_int_equal(tu_image_alloc(&in, PIXSUM_U16, w, h, 1, 1, NULL), 0);
    for (size_t y = 0; y < h; y++)
        for (size_t x = 0; x < w; x++)
            tu_set_i(&in.view, x, y, 0, 0, 40000 + (int64_t)tu_below(r, 25536));
    tu_image sum32, sq32, sum64, sumf;
    make_table(&sum32, &in, PIXSUM_U32, 0, 1, 0);
    make_table(&sq32, &in, PIXSUM_U32, 0, 1, 1);
    make_table(&sum64, &in, PIXSUM_U64, 0, 0, 0);
    make_table(&sumf, &in, PIXSUM_F64, 0, 0, 0);
    pixsum_box whole = {0, 0, 0, w, h, 1};
    box_ref total = direct_box(&in.view, &whole, 0, 0);
    assert_true(total.exact > (tu_i128)UINT32_MAX); /* the u32 table really wrapped */
    size_t sums_checked = 0, stats_checked = 0;
    for (int k = 0; k < 400; k++) {
        pixsum_box b = random_box(r, w, h, 1);
        if (k % 2) { /* small boxes, whose squared sums fit u32 */
            b.w = tu_between(r, 1, w - b.x < 2 ? w - b.x : 2);
            b.h = 1;
        }
        box_ref s = direct_box(&in.view, &b, 0, 0), q = direct_box(&in.view, &b, 0, 1);
        if (s.exact <= (tu_i128)UINT32_MAX) {
            uint32_t got;
            assert_int_equal(pixsum_box_sum(NULL, &sum32.view, &b, &got), PIXSUM_OK);
            if (got != (uint32_t)s.exact)
                fail_msg("wrapped u32 table: box (%zu,%zu %zux%zu) sum %u, expected %llu", b.x,
                         b.y, b.w, b.h, got, (unsigned long long)s.exact);
            sums_checked++;
        }
        if (q.exact <= (tu_i128)UINT32_MAX) {
            check_stats(&in.view, &sum32.view, &sq32.view, NULL, &b, 1, 1, "u32+u32 wrapped");
            check_stats(&in.view, &sum64.view, &sq32.view, NULL, &b, 1, 1, "u64+u32 wrapped");
            check_stats(&in.view, &sumf.view, &sq32.view, NULL, &b, 1, 1, "f64+u32 wrapped");
            stats_checked++;
        }
    }
    print_message("wrapped tables: %zu box sums, %zu box statistics checked exactly\n",
                  sums_checked, stats_checked);
    assert_true(sums_checked > 100 && stats_checked > 50);
    tu_image_free(&sum32);
    tu_image_free(&sq32);
    tu_image_free(&sum64);
    tu_image_free(&sumf);
    tu_image_free(&in);
}

static void expect_fail(int status, int want, const char *needle, const char *what)
{
    if (status != want)
        fail_msg("%s: status %d (%s), expected %d (%s)", what, status, pixsum_strerror(status),
                 want, pixsum_strerror(want));
    const char *d = pixsum_last_error();
    if (!d[0] || (needle && !strstr(d, needle)))
        fail_msg("%s: detail text '%s' lacks '%s'", what, d, needle ? needle : "(anything)");
}

static void test_box_refusals(void **state)
{
    (void)state;
    uint32_t t2[6 * 5], t3[4 * 3 * 3];
    memset(t2, 0, sizeof t2);
    memset(t3, 0, sizeof t3);
    pixsum_view v2 = pixsum_view_2d(t2, PIXSUM_U32, 6, 5, 1, 0);
    pixsum_view v3 = pixsum_view_3d(t3, PIXSUM_U32, 4, 3, 3, 1, 0, 0);
    uint32_t out[8] = {0};
    const pixsum_box ok2 = {1, 1, 0, 5, 4, 1};
    assert_int_equal(pixsum_box_sum(NULL, &v2, &ok2, out), PIXSUM_OK);
    assert_string_equal(pixsum_last_error(), "");
    const struct {
        pixsum_box b;
        int want;
        const char *needle;
    } bad2[] = {
        {{0, 0, 0, 0, 1, 1}, PIXSUM_ERR_BAD_SHAPE, "empty"},
        {{0, 0, 0, 1, 0, 1}, PIXSUM_ERR_BAD_SHAPE, "empty"},
        {{0, 0, 0, 1, 1, 0}, PIXSUM_ERR_BAD_SHAPE, "empty"},
        {{0, 0, 0, 7, 1, 1}, PIXSUM_ERR_OUT_OF_RANGE, "outside"},
        {{6, 0, 0, 1, 1, 1}, PIXSUM_ERR_OUT_OF_RANGE, "outside"},
        {{0, 4, 0, 1, 2, 1}, PIXSUM_ERR_OUT_OF_RANGE, "outside"},
        {{SIZE_MAX, 0, 0, 2, 1, 1}, PIXSUM_ERR_OUT_OF_RANGE, "outside"},
        {{1, 0, 0, SIZE_MAX, 1, 1}, PIXSUM_ERR_OUT_OF_RANGE, "outside"},
        {{0, SIZE_MAX - 1, 0, 1, 3, 1}, PIXSUM_ERR_OUT_OF_RANGE, "outside"},
        {{0, 0, 1, 1, 1, 1}, PIXSUM_ERR_OUT_OF_RANGE, "outside"}, /* z of a 2-D table */
        {{0, 0, 0, 1, 1, 2}, PIXSUM_ERR_OUT_OF_RANGE, "outside"},
    };
    for (size_t i = 0; i < sizeof bad2 / sizeof bad2[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "2-D bad box %zu", i);
        memset(out, 0x5A, sizeof out);
        expect_fail(pixsum_box_sum(NULL, &v2, &bad2[i].b, out), bad2[i].want, bad2[i].needle,
                    what);
        assert_true(out[0] == 0x5A5A5A5Au); /* nothing written */
    }
    const pixsum_box bad3[] = {{0, 0, 2, 1, 1, 2}, {0, 0, 3, 1, 1, 1}, {4, 0, 0, 1, 1, 1},
                               {0, 0, 0, 1, 1, SIZE_MAX}};
    for (size_t i = 0; i < sizeof bad3 / sizeof bad3[0]; i++)
        expect_fail(pixsum_box_sum(NULL, &v3, &bad3[i], out), PIXSUM_ERR_OUT_OF_RANGE, "outside",
                    "3-D bad box");
    const pixsum_box ok3 = {0, 0, 0, 4, 3, 3};
    assert_int_equal(pixsum_box_sum(NULL, &v3, &ok3, out), PIXSUM_OK);

    /* Padded tables: the image is one smaller; a 1-wide padded table has none. */
    pixsum_ctx *padded = pixsum_ctx_new();
    assert_int_equal(pixsum_ctx_set(padded, PIXSUM_PARAM_PADDED, 1), PIXSUM_OK);
    const pixsum_box pad_ok = {0, 0, 0, 5, 4, 1}, pad_bad = {0, 0, 0, 6, 4, 1};
    assert_int_equal(pixsum_box_sum(padded, &v2, &pad_ok, out), PIXSUM_OK);
    expect_fail(pixsum_box_sum(padded, &v2, &pad_bad, out), PIXSUM_ERR_OUT_OF_RANGE, "outside",
                "padded");
    pixsum_view thin = pixsum_view_2d(t2, PIXSUM_U32, 1, 5, 1, 0);
    const pixsum_box unit = {0, 0, 0, 1, 1, 1};
    assert_true(pixsum_box_sum(padded, &thin, &unit, out) != PIXSUM_OK);
    assert_true(pixsum_last_error()[0] != '\0');

    /* Batches name their first bad box and write nothing (all boxes are
     * checked before any is summed), means and variances included. */
    pixsum_box batch[5] = {ok2, ok2, ok2, {0, 0, 0, 9, 1, 1}, ok2};
    uint32_t bs[5];
    memset(bs, 0x5A, sizeof bs);
    expect_fail(pixsum_box_sums(NULL, &v2, batch, 5, bs), PIXSUM_ERR_OUT_OF_RANGE, "box 3",
                "batch");
    for (size_t i = 0; i < 5; i++)
        assert_true(bs[i] == 0x5A5A5A5Au);
    double bm[5] = {-7, -7, -7, -7, -7};
    expect_fail(pixsum_box_stats(NULL, &v2, NULL, batch, 5, bm, NULL), PIXSUM_ERR_OUT_OF_RANGE,
                "box 3", "batch stats");
    for (size_t i = 0; i < 5; i++)
        assert_true(bm[i] == -7);
    assert_int_equal(pixsum_box_sums(NULL, &v2, NULL, 0, NULL), PIXSUM_OK);

    /* Types and pointers. */
    uint8_t u8t[30] = {0};
    pixsum_view bad_type = pixsum_view_2d(u8t, PIXSUM_U8, 6, 5, 1, 0);
    expect_fail(pixsum_box_sum(NULL, &bad_type, &ok2, out), PIXSUM_ERR_BAD_TYPE, "u8", "u8 table");
    expect_fail(pixsum_box_sum(NULL, NULL, &ok2, out), PIXSUM_ERR_NULL, NULL, "NULL table");
    expect_fail(pixsum_box_sum(NULL, &v2, NULL, out), PIXSUM_ERR_NULL, NULL, "NULL box");
    expect_fail(pixsum_box_sum(NULL, &v2, &ok2, NULL), PIXSUM_ERR_NULL, NULL, "NULL sums");
    expect_fail(pixsum_box_sums(NULL, &v2, NULL, 2, bs), PIXSUM_ERR_NULL, NULL, "NULL boxes");

    /* Statistics: shapes must match; NULL outputs are allowed. */
    uint32_t sq[5 * 5] = {0};
    pixsum_view sqv = pixsum_view_2d(sq, PIXSUM_U32, 5, 5, 1, 0);
    double m, var;
    expect_fail(pixsum_box_stats(NULL, &v2, &sqv, &ok2, 1, &m, &var), PIXSUM_ERR_BAD_SHAPE,
                "shape", "stats shape");
    expect_fail(pixsum_box_stats(NULL, &v2, NULL, &ok2, 1, &m, &var), PIXSUM_ERR_NULL, NULL,
                "stats without squared table");
    assert_int_equal(pixsum_box_stats(NULL, &v2, NULL, &ok2, 1, &m, NULL), PIXSUM_OK);
    assert_int_equal(pixsum_box_stats(NULL, &v2, &v2, &ok2, 1, NULL, NULL), PIXSUM_OK);
    expect_fail(pixsum_box_stats(NULL, &v2, &v2, &bad2[3].b, 1, &m, &var),
                PIXSUM_ERR_OUT_OF_RANGE, "outside", "stats bad box");
    pixsum_ctx_free(padded);
}

int main(void)
{
    tu_init("test_box");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_box_sums_random),
        cmocka_unit_test(test_box_eight_corners_hand),
        cmocka_unit_test(test_box_stats_exact_integers),
        cmocka_unit_test(test_box_stats_huge_values),
        cmocka_unit_test(test_box_stats_float_never_negative),
        cmocka_unit_test(test_box_wrapped_tables),
        cmocka_unit_test(test_box_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

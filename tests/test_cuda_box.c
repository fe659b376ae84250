/*
 * test_cuda_box.c - pixsum_cuda_box_filter() against two references: the
 * documented formula evaluated on the host over the same table (every output
 * type, sums and means, must match bit for bit), and window sums taken
 * directly from the image (integer sums exact; f64 tables within a bound).
 * Covers 'same' and 'valid' windows, windows larger than the image, 1x1,
 * 1xN, Nx1, odd and random sizes, 1-4 channels, padded table and output rows,
 * a wrapped u8 -> u32 table past 2^32, repeated calls on the same buffers,
 * and the refusals (flags, types, shapes, host memory, overlap).
 * PIXSUM_TEST_QUICK=1 leaves out the wrapped table (for compute-sanitizer).
 *
 * Without a CUDA device (or without CUDA in the build) it prints "skipped: no
 * CUDA device" and exits 77. PIXSUM_TEST_SEED=N replays a run.
 */
#include "pixsum.h"

#include <stdio.h>
#include <stdlib.h>

#ifndef PIXSUM_TEST_HAVE_CUDA
int main(void)
{
    printf("test_cuda_box: skipped: no CUDA device (library built without CUDA)\n");
    return 77;
}
#else

#include "pixsum_cuda.h"

#include <cuda_runtime_api.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "testutil_cuda.h"

typedef struct pair {
    pixsum_type in, table;
} pair;

static const pair pairs[] = {
    {PIXSUM_U8, PIXSUM_U32},  {PIXSUM_U8, PIXSUM_U64},  {PIXSUM_U16, PIXSUM_U64},
    {PIXSUM_I16, PIXSUM_I64}, {PIXSUM_I32, PIXSUM_I64}, {PIXSUM_F32, PIXSUM_F32},
    {PIXSUM_F32, PIXSUM_F64}, {PIXSUM_F64, PIXSUM_F64},
};

static int is_float(pixsum_type t)
{
    return t == PIXSUM_F32 || t == PIXSUM_F64;
}

/* [lo, hi) of the window of output o along an axis of n pixels. */
static void window(size_t o, size_t k, size_t n, int valid, size_t *lo, size_t *hi)
{
    if (valid) {
        *lo = o;
        *hi = o + k;
        return;
    }
    long long first = (long long)o - (long long)(k / 2), last = first + (long long)k;
    *lo = first < 0 ? 0 : (size_t)first;
    *hi = last > (long long)n ? n : (size_t)last;
}

/* Table element i of row r as raw bits (integers) or value (floats). */
static uint64_t tbits(const unsigned char *t, size_t row, pixsum_type tt, size_t r, size_t i)
{
    const unsigned char *p = t + r * row;
    return tt == PIXSUM_U32 ? ((const uint32_t *)p)[i] : ((const uint64_t *)p)[i];
}

static double tval(const unsigned char *t, size_t row, pixsum_type tt, size_t r, size_t i)
{
    const unsigned char *p = t + r * row;
    return tt == PIXSUM_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

/* The documented output of window [y0, y1) x [x0, x1), channel c, written
 * to dst as type ot. */
static void formula(const unsigned char *t, size_t row, pixsum_type tt, size_t ch, size_t c,
                    size_t y0, size_t y1, size_t x0, size_t x1, int mean, pixsum_type ot,
                    void *dst)
{
    size_t i0 = x0 * ch + c, i1 = x1 * ch + c;
    double s;
    uint64_t bits = 0;
    if (tt == PIXSUM_F32) {
        float a = (float)tval(t, row, tt, y1, i1) - (float)tval(t, row, tt, y0, i1);
        float b = (float)tval(t, row, tt, y1, i0) - (float)tval(t, row, tt, y0, i0);
        s = (double)(float)(a - b);
    } else if (tt == PIXSUM_F64) {
        s = (tval(t, row, tt, y1, i1) - tval(t, row, tt, y0, i1)) -
            (tval(t, row, tt, y1, i0) - tval(t, row, tt, y0, i0));
    } else {
        bits = (tbits(t, row, tt, y1, i1) - tbits(t, row, tt, y0, i1)) -
               (tbits(t, row, tt, y1, i0) - tbits(t, row, tt, y0, i0));
        if (tt == PIXSUM_U32)
            bits = (uint32_t)bits;
        s = tt == PIXSUM_I64 ? (double)(int64_t)bits : (double)bits;
    }
    if (mean)
        s /= (double)((y1 - y0) * (x1 - x0));
    switch (ot) {
    case PIXSUM_F32: *(float *)dst = (float)s; break;
    case PIXSUM_F64: *(double *)dst = s; break;
    case PIXSUM_U32: *(uint32_t *)dst = (uint32_t)bits; break;
    default: *(uint64_t *)dst = bits; break;
    }
}

/* A sample of the image as double (exact for every input type). */
static double sample(const unsigned char *img, size_t row, pixsum_type t, size_t y, size_t i)
{
    const unsigned char *p = img + y * row;
    switch (t) {
    case PIXSUM_U8: return p[i];
    case PIXSUM_U16: return ((const uint16_t *)p)[i];
    case PIXSUM_I16: return ((const int16_t *)p)[i];
    case PIXSUM_I32: return ((const int32_t *)p)[i];
    case PIXSUM_F32: return ((const float *)p)[i];
    default: return ((const double *)p)[i];
    }
}

typedef struct job {
    size_t kh, kw;
    unsigned flags;
    pixsum_type out;
} job;

/* The table of a w x h image (ch channels, `pad` extra elements per row) on
 * the GPU, then each job's filter checked against both references. */
static void run_image(pair pr, size_t w, size_t h, size_t ch, size_t pad, const job *jobs,
                      size_t njobs, int extreme)
{
    size_t ie = pixsum_type_size(pr.in), te = pixsum_type_size(pr.table);
    size_t in_row = (w * ch + pad) * ie, t_row = ((w + 1) * ch + pad) * te;
    unsigned char *img = malloc(in_row * h), *tab = malloc(t_row * (h + 1));
    assert_true(img && tab);
    fill_random(pr.in, img, in_row * h / ie, extreme);
    void *din, *dtab;
    CU_OK(cudaMalloc(&din, in_row * h));
    CU_OK(cudaMalloc(&dtab, t_row * (h + 1)));
    CU_OK(cudaMemcpy(din, img, in_row * h, cudaMemcpyHostToDevice));
    pixsum_ctx *ctx = pixsum_ctx_new();
    PX_OK(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, 1));
    PX_OK(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 1));
    pixsum_view gin = pixsum_view_2d(din, pr.in, w, h, ch, (ptrdiff_t)in_row);
    pixsum_view gtab = pixsum_view_2d(dtab, pr.table, w + 1, h + 1, ch, (ptrdiff_t)t_row);
    PX_OK(pixsum_cuda_integral(ctx, &gin, &gtab, NULL));
    CU_OK(cudaMemcpy(tab, dtab, t_row * (h + 1), cudaMemcpyDeviceToHost));
    pixsum_ctx_free(ctx);
    for (size_t k = 0; k < njobs; k++) {
        const job *jb = &jobs[k];
        int valid = (jb->flags & PIXSUM_BOX_VALID) != 0, mean = (jb->flags & PIXSUM_BOX_MEAN) != 0;
        if (valid && (jb->kh > h || jb->kw > w))
            continue;
        size_t ow = valid ? w - jb->kw + 1 : w, oh = valid ? h - jb->kh + 1 : h;
        size_t oe = pixsum_type_size(jb->out), o_row = (ow * ch + pad) * oe;
        unsigned char *got = malloc(o_row * oh), *want = calloc(o_row * oh, 1);
        assert_true(got && want);
        void *dout;
        CU_OK(cudaMalloc(&dout, o_row * oh));
        CU_OK(cudaMemset(dout, 0, o_row * oh));
        pixsum_view gout = pixsum_view_2d(dout, jb->out, ow, oh, ch, (ptrdiff_t)o_row);
        for (int rep = 0; rep < 2; rep++) /* a second call on the same buffers */
            PX_OK(pixsum_cuda_box_filter(&gtab, jb->kh, jb->kw, jb->flags, &gout, NULL));
        CU_OK(cudaDeviceSynchronize());
        CU_OK(cudaMemcpy(got, dout, o_row * oh, cudaMemcpyDeviceToHost));
        for (size_t oy = 0; oy < oh; oy++) {
            size_t y0, y1;
            window(oy, jb->kh, h, valid, &y0, &y1);
            for (size_t ox = 0; ox < ow; ox++) {
                size_t x0, x1;
                window(ox, jb->kw, w, valid, &x0, &x1);
                for (size_t c = 0; c < ch; c++) {
                    size_t at = oy * o_row + (ox * ch + c) * oe;
                    formula(tab, t_row, pr.table, ch, c, y0, y1, x0, x1, mean, jb->out,
                            want + at);
                    if (memcmp(got + at, want + at, oe) != 0)
                        fail_msg("%s table %s -> %s %zux%zu c%zu, %zux%zu window flags %u: "
                                 "output (%zu, %zu, %zu) differs from the formula",
                                 pixsum_type_name(pr.in), pixsum_type_name(pr.table),
                                 pixsum_type_name(jb->out), w, h, ch, jb->kh, jb->kw,
                                 jb->flags, ox, oy, c);
                    if (pr.table == PIXSUM_F32)
                        continue; /* f32 tables: the formula check above is the test */
                    if ((jb->kh * jb->kw > 400 || w * h > 4000) && (ox + oy) % 7 != 0)
                        continue; /* large windows: a seventh of the outputs */
                    /* the window's sum straight from the image */
                    double direct = 0;
                    for (size_t y = y0; y < y1; y++)
                        for (size_t x = x0; x < x1; x++)
                            direct += sample(img, in_row, pr.in, y, x * ch + c);
                    if (mean)
                        direct /= (double)((y1 - y0) * (x1 - x0));
                    double g = jb->out == PIXSUM_F32 ? *(float *)(got + at)
                             : jb->out == PIXSUM_F64 ? *(double *)(got + at)
                             : jb->out == PIXSUM_U32 ? *(uint32_t *)(got + at)
                             : jb->out == PIXSUM_I64 ? (double)*(int64_t *)(got + at)
                                                     : (double)*(uint64_t *)(got + at);
                    /* f64 tables: each entry is within (w + h) rounding steps of
                     * its largest partial sum, and four entries enter the sum */
                    double tol = 0;
                    if (is_float(pr.in)) {
                        double tmax = 0;
                        const size_t ys[2] = {y0, y1}, is[2] = {x0 * ch + c, x1 * ch + c};
                        for (int a = 0; a < 2; a++)
                            for (int b = 0; b < 2; b++)
                                tmax = fmax(tmax, fabs(tval(tab, t_row, pr.table, ys[a], is[b])));
                        tol = 4.0 * (double)(w + h + 16) * DBL_EPSILON * tmax;
                        if (mean)
                            tol /= (double)((y1 - y0) * (x1 - x0));
                    }
                    if (jb->out == PIXSUM_F32)
                        tol += fabs(direct) * FLT_EPSILON;
                    else if (jb->out == PIXSUM_F64)
                        tol += fabs(direct) * 2 * DBL_EPSILON;
                    if (!(fabs(g - direct) <= tol))
                        fail_msg("%s table %s -> %s %zux%zu c%zu, %zux%zu window flags %u at "
                                 "(%zu, %zu, %zu): %.17g, direct sum %.17g",
                                 pixsum_type_name(pr.in), pixsum_type_name(pr.table),
                                 pixsum_type_name(jb->out), w, h, ch, jb->kh, jb->kw,
                                 jb->flags, ox, oy, c, g, direct);
                }
            }
        }
        cudaFree(dout);
        free(got);
        free(want);
    }
    cudaFree(din);
    cudaFree(dtab);
    free(img);
    free(tab);
}

/* The jobs of one table type: sums in the table type and in f64, means in
 * f32 and f64, 'same' and 'valid', for the window kh x kw. */
static size_t jobs_for(pixsum_type table, size_t kh, size_t kw, job *out)
{
    size_t n = 0;
    const unsigned modes[] = {0, PIXSUM_BOX_VALID};
    for (size_t m = 0; m < 2; m++) {
        out[n++] = (job){kh, kw, modes[m] | PIXSUM_BOX_MEAN, PIXSUM_F64};
        out[n++] = (job){kh, kw, modes[m] | PIXSUM_BOX_MEAN, PIXSUM_F32};
        out[n++] = (job){kh, kw, modes[m], PIXSUM_F64};
        out[n++] = (job){kh, kw, modes[m], is_float(table) ? PIXSUM_F32 : table};
        if (table == PIXSUM_U64)
            out[n++] = (job){kh, kw, modes[m], PIXSUM_U32}; /* small sums fit u32 */
    }
    return n;
}

static void test_types_shapes_windows(void **state)
{
    (void)state;
    static const size_t shapes[][2] = {{1, 1}, {1, 57}, {61, 1}, {2, 2},   {7, 3},
                                       {33, 31}, {257, 129}, {130, 77}};
    static const size_t windows[][2] = {{1, 1}, {3, 3}, {4, 7}, {9, 2}, {300, 300}};
    job jobs[16];
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            size_t wi = rnd() % (sizeof windows / sizeof windows[0]);
            size_t n = jobs_for(pairs[p].table, windows[wi][0], windows[wi][1], jobs);
            run_image(pairs[p], shapes[s][0], shapes[s][1], 1 + rnd() % 4, rnd() % 3, jobs, n,
                      0);
        }
    /* random sizes and windows, extreme integer values */
    for (int k = 0; k < 10; k++) {
        pair pr = pairs[rnd() % 5];
        size_t n = jobs_for(pr.table, 1 + rnd() % 20, 1 + rnd() % 20, jobs);
        run_image(pr, 1 + rnd() % 300, 1 + rnd() % 200, 1 + rnd() % 4, rnd() % 5, jobs, n, 1);
    }
}

/* u8 -> u32 past 2^32 with wrap: the table wraps, each window's sum is still
 * exact. */
static void test_wrapped_table(void **state)
{
    (void)state;
    if (getenv("PIXSUM_TEST_QUICK")) { /* 18 M pixels: too slow under compute-sanitizer */
        printf("test_wrapped_table: skipped under PIXSUM_TEST_QUICK\n");
        skip();
    }
    job jobs[] = {{15, 15, 0, PIXSUM_U32}, {15, 15, PIXSUM_BOX_MEAN, PIXSUM_F64},
                  {5, 3, PIXSUM_BOX_VALID, PIXSUM_U32}};
    run_image(pairs[0], 6000, 3000, 1, 0, jobs, 3, 1);
}

static void test_refusals(void **state)
{
    (void)state;
    uint32_t *dt;
    double *dout;
    CU_OK(cudaMalloc((void **)&dt, 11 * 9 * 4));
    CU_OK(cudaMalloc((void **)&dout, 10 * 8 * 8));
    pixsum_view t = pixsum_view_2d(dt, PIXSUM_U32, 11, 9, 1, 0);
    pixsum_view o = pixsum_view_2d(dout, PIXSUM_F64, 10, 8, 1, 0);
    PX_OK(pixsum_cuda_box_filter(&t, 3, 3, PIXSUM_BOX_MEAN, &o, NULL));
    assert_int_equal(pixsum_cuda_box_filter(NULL, 3, 3, 0, &o, NULL), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_cuda_box_filter(&t, 3, 3, 4u, &o, NULL), PIXSUM_ERR_INVALID_ARG);
    assert_int_equal(pixsum_cuda_box_filter(&t, 0, 3, 0, &o, NULL), PIXSUM_ERR_INVALID_ARG);
    assert_int_equal(pixsum_cuda_box_filter(&t, 9, 3, PIXSUM_BOX_VALID, &o, NULL),
                     PIXSUM_ERR_BAD_SHAPE); /* window taller than the image */
    assert_int_equal(pixsum_cuda_box_filter(&t, 3, 3, PIXSUM_BOX_VALID, &o, NULL),
                     PIXSUM_ERR_BAD_SHAPE); /* 'valid' output is 8 x 6 */
    pixsum_view oi = pixsum_view_2d(dout, PIXSUM_U32, 10, 8, 1, 0);
    assert_int_equal(pixsum_cuda_box_filter(&t, 3, 3, PIXSUM_BOX_MEAN, &oi, NULL),
                     PIXSUM_ERR_BAD_TYPE);
    pixsum_view tb = pixsum_view_2d(dt, PIXSUM_U16, 11, 9, 1, 0);
    assert_int_equal(pixsum_cuda_box_filter(&tb, 3, 3, 0, &o, NULL), PIXSUM_ERR_BAD_TYPE);
    pixsum_view t1 = pixsum_view_2d(dt, PIXSUM_U32, 1, 9, 1, 0);
    assert_int_equal(pixsum_cuda_box_filter(&t1, 1, 1, 0, &o, NULL), PIXSUM_ERR_BAD_SHAPE);
    pixsum_view t3 = pixsum_view_3d(dt, PIXSUM_U32, 11, 3, 3, 1, 0, 0);
    assert_int_equal(pixsum_cuda_box_filter(&t3, 1, 1, 0, &o, NULL), PIXSUM_ERR_BAD_SHAPE);
    pixsum_view oc = pixsum_view_2d(dout, PIXSUM_F64, 5, 8, 2, 0);
    assert_int_equal(pixsum_cuda_box_filter(&t, 3, 3, 0, &oc, NULL), PIXSUM_ERR_BAD_SHAPE);
    pixsum_view over = pixsum_view_2d(dt, PIXSUM_U32, 10, 8, 1, 0);
    assert_int_equal(pixsum_cuda_box_filter(&t, 3, 3, 0, &over, NULL), PIXSUM_ERR_ALIASING);
    double host[80];
    pixsum_view oh = pixsum_view_2d(host, PIXSUM_F64, 10, 8, 1, 0);
    int st = pixsum_cuda_box_filter(&t, 3, 3, 0, &oh, NULL);
    if (st != PIXSUM_OK) /* systems where the device reads pageable memory accept it */
        assert_int_equal(st, PIXSUM_ERR_INVALID_ARG);
    CU_OK(cudaDeviceSynchronize());
    cudaFree(dt);
    cudaFree(dout);
}

int main(void)
{
    if (pixsum_cuda_device_count() <= 0) {
        printf("test_cuda_box: skipped: no CUDA device\n");
        return 77;
    }
    const char *seed = getenv("PIXSUM_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 10) : (uint64_t)time(NULL);
    printf("test_cuda_box: seed %llu (PIXSUM_TEST_SEED to replay)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_types_shapes_windows),
        cmocka_unit_test(test_wrapped_table),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif

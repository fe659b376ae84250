/*
 * test_cuda_threshold.c - pixsum_cuda_threshold_local() and
 * pixsum_cuda_normalize_local() against the CPU operations (which
 * test_threshold_local.c checks against the definition): random sizes (1x1,
 * 1xN, Nx1, several blocks and bands), windows larger than the image, every
 * border, input type, method, output type and row padding, 1-4 channels for
 * normalisation. Maps agree within twice the documented bound (both sides
 * are within it of the exact value), masks wherever the sample is farther
 * from T than that; the refusals match the CPU's.
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
    printf("test_cuda_threshold: skipped: no CUDA device (library built without CUDA)\n");
    return 77;
}
#else

#include "pixsum_cuda.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "testutil_cuda.h"

static const pixsum_type types[] = {PIXSUM_U8, PIXSUM_U16, PIXSUM_I16, PIXSUM_I32,
                                    PIXSUM_U32, PIXSUM_F32, PIXSUM_F64};

/* A host image and its device copy with `pad` extra bytes per row. */
typedef struct img2 {
    pixsum_view h, d;
    void *hp, *dp;
} img2;

static void img_alloc(img2 *m, pixsum_type t, size_t w, size_t h, size_t c, size_t pad)
{
    size_t row = w * c * pixsum_type_size(t) + pad;
    m->hp = calloc(h ? h : 1, row);
    assert_non_null(m->hp);
    CU_OK(cudaMalloc(&m->dp, (h ? h : 1) * row));
    CU_OK(cudaMemset(m->dp, 0xA5, (h ? h : 1) * row));
    m->h = pixsum_view_2d(m->hp, t, w, h, c, (ptrdiff_t)row);
    m->d = pixsum_view_2d(m->dp, t, w, h, c, (ptrdiff_t)row);
}

static void img_free(img2 *m)
{
    free(m->hp);
    CU_OK(cudaFree(m->dp));
}

static double get(const pixsum_view *v, size_t x, size_t y, size_t c)
{
    const char *row = (const char *)v->data + (ptrdiff_t)y * v->row_stride;
    size_t i = x * v->channels + c;
    switch (v->type) {
    case PIXSUM_U8: return ((const uint8_t *)row)[i];
    case PIXSUM_U16: return ((const uint16_t *)row)[i];
    case PIXSUM_I16: return ((const int16_t *)row)[i];
    case PIXSUM_I32: return ((const int32_t *)row)[i];
    case PIXSUM_U32: return ((const uint32_t *)row)[i];
    case PIXSUM_F32: return ((const float *)row)[i];
    default: return ((const double *)row)[i];
    }
}

/* The device output copied back into a host buffer shaped as `like`. */
static void *download(const img2 *m)
{
    size_t bytes = (m->h.height ? m->h.height : 1) * (size_t)m->h.row_stride;
    void *p = malloc(bytes);
    assert_non_null(p);
    CU_OK(cudaMemcpy(p, m->dp, bytes, cudaMemcpyDeviceToHost));
    return p;
}

static size_t window(size_t n, int big)
{
    return big ? n + 1 + rnd() % (n + 3) : 1 + rnd() % n;
}

static void run_case(int normalize, size_t maxdim)
{
    pixsum_type t = types[rnd() % 7];
    size_t w = 1 + rnd() % maxdim, h = 1 + rnd() % maxdim, ch = normalize ? 1 + rnd() % 4 : 1;
    if (rnd() % 5 == 0)
        w = 1;
    else if (rnd() % 5 == 0)
        h = 1;
    pixsum_border b = (pixsum_border)(rnd() % PIXSUM_BORDER_COUNT);
    size_t kw = window(w, rnd() % 6 == 0), kh = window(h, rnd() % 6 == 0);
    if (b == PIXSUM_BORDER_VALID)
        kw = 1 + rnd() % w, kh = 1 + rnd() % h;
    if (kw > 1024)
        kw = 1024;
    double cval = t == PIXSUM_U8 ? (double)(rnd() % 256) : t == PIXSUM_I16 ? -1234 : 7;
    size_t ow = b == PIXSUM_BORDER_VALID ? w - kw + 1 : w;
    size_t oh = b == PIXSUM_BORDER_VALID ? h - kh + 1 : h;
    img2 in, map, mask;
    img_alloc(&in, t, w, h, ch, (rnd() % 3) * 8);
    fill_random(t, in.hp, h * (size_t)in.h.row_stride / pixsum_type_size(t), rnd() % 8 == 0);
    CU_OK(cudaMemcpy(in.dp, in.hp, h * (size_t)in.h.row_stride, cudaMemcpyHostToDevice));
    pixsum_type mt = rnd() % 2 ? PIXSUM_F32 : PIXSUM_F64;
    img_alloc(&map, mt, ow, oh, ch, (rnd() % 2) * 16);
    img_alloc(&mask, PIXSUM_U8, ow, oh, 1, (rnd() % 2) * 4);
    double k = 0, r = 0, offset = 0, eps = 0;
    int outs = 3;
    pixsum_threshold_method meth = (pixsum_threshold_method)(rnd() % 3);
    /* u32/i32 windows whose sums of squares can pass 2^64 (n x max^2: n >= 2 for
     * u32, n >= 4 for i32, whose largest magnitude is 2^31) are refused by the GPU */
    if ((t == PIXSUM_U32 && kw * kh >= 2) || (t == PIXSUM_I32 && kw * kh >= 4)) {
        pixsum_normalize_spec sp = {kw, kh, b, cval, 0.5};
        assert_int_equal(pixsum_cuda_normalize_local(NULL, &in.d, &sp, &map.d, NULL),
                         PIXSUM_ERR_UNSUPPORTED);
        img_free(&in);
        img_free(&map);
        img_free(&mask);
        return;
    }
    if (normalize) {
        pixsum_normalize_spec sp = {kw, kh, b, cval, (double)(rnd() % 4) * 0.25};
        eps = sp.eps;
        PX_OK(pixsum_normalize_local(NULL, &in.h, &sp, &map.h));
        PX_OK(pixsum_cuda_normalize_local(NULL, &in.d, &sp, &map.d, NULL));
    } else {
        pixsum_threshold_spec sp;
        memset(&sp, 0, sizeof sp);
        sp.kw = kw;
        sp.kh = kh;
        sp.border = b;
        sp.border_value = cval;
        sp.method = meth;
        sp.k = k = (double)((int)(rnd() % 9) - 4) * 0.1;
        sp.r = r = rnd() % 2 ? 0 : 50;
        sp.offset = offset = rnd() % 2 ? 0 : 2.5;
        sp.foreground = (uint8_t)(rnd() % 256);
        outs = 1 + (int)(rnd() % 3);
        PX_OK(pixsum_threshold_local(NULL, &in.h, &sp, outs & 1 ? &map.h : NULL,
                                     outs & 2 ? &mask.h : NULL));
        PX_OK(pixsum_cuda_threshold_local(NULL, &in.d, &sp, outs & 1 ? &map.d : NULL,
                                          outs & 2 ? &mask.d : NULL, NULL));
        if (r == 0)
            r = pixsum_threshold_default_r(t);
    }
    CU_OK(cudaDeviceSynchronize());
    void *gm = download(&map), *gk = download(&mask);
    pixsum_view gmap = map.h, gmask = mask.h;
    gmap.data = gm;
    gmask.data = gk;
    /* magnitude of the samples, for the float sums' bound */
    double mag = t == PIXSUM_F32 || t == PIXSUM_F64 ? 1 : 4294967295.0;
    int fsum = t == PIXSUM_F32 || t == PIXSUM_F64 ||
               ((t == PIXSUM_I32 || t == PIXSUM_U32) && (double)kw * kh * mag * mag >= 0x1p64);
    size_t bad = 0;
    for (size_t y = 0; y < oh; y++)
        for (size_t x = 0; x < ow; x++)
            for (size_t c = 0; c < ch; c++) {
                double cpu = (outs & 1) ? get(&map.h, x, y, c) : 0;
                double gpu = (outs & 1) ? get(&gmap, x, y, c) : 0;
                double scale = fabs(cpu) + fabs(offset) + 1e-300;
                if (normalize)
                    scale = fabs(cpu) + 1;
                else if (meth != PIXSUM_THRESHOLD_MEAN)
                    scale += fabs(k) * fabs(cpu) * (1 + 1 / r) + fabs(cpu);
                double tol = 0x1p-46 * scale + (mt == PIXSUM_F32 ? 0x1p-23 * fabs(cpu) : 0);
                if (fsum) /* f64 sums in other orders: s = sqrt(var) magnifies a
                             near-zero variance's rounding (1x1 windows, flat ones) */
                    tol += normalize ? 1e-6 * (1 + fabs(cpu)) : 1e-7 * (fabs(cpu) + mag);
                if (normalize && fsum && eps == 0)
                    continue; /* near-flat windows of f64 sums: an unbounded ratio */
                int ok = !(outs & 1) || fabs(cpu - gpu) <= tol;
                if (ok && !normalize && (outs & 2)) {
                    double xv = get(&in.h, b == PIXSUM_BORDER_VALID ? x + kw / 2 : x,
                                    b == PIXSUM_BORDER_VALID ? y + kh / 2 : y, 0);
                    int cm = get(&mask.h, x, y, 0) != 0, gmk = get(&gmask, x, y, 0) != 0;
                    double tv = (outs & 1) ? cpu : xv;
                    /* without a map there is no T to judge closeness by */
                    if (cm != gmk && (outs & 1) && fabs(xv - tv) > tol)
                        ok = 0;
                }
                if (!ok && bad++ == 0) {
                    fprintf(stderr, "  (%zu, %zu, c%zu): cpu %.17g gpu %.17g tol %.3g; column:",
                            x, y, c, cpu, gpu, tol);
                    for (size_t yy = 0; yy < h && yy < 12; yy++)
                        fprintf(stderr, " %.17g", get(&in.h, x < w ? x : 0, yy, c));
                    fprintf(stderr, "\n");
                }
            }
    if (bad)
        fprintf(stderr, "%s %s %zux%zux%zu window %zux%zu border %s method %d k %g outs %d -> "
                "%s: %zu mismatches\n", normalize ? "normalize" : "threshold",
                pixsum_type_name(t), w, h, ch, kw, kh, pixsum_border_name(b), (int)meth, k, outs,
                pixsum_type_name(mt), bad);
    assert_int_equal(bad, 0);
    free(gm);
    free(gk);
    img_free(&in);
    img_free(&map);
    img_free(&mask);
}

static void test_threshold_vs_cpu(void **state)
{
    (void)state;
    for (int i = 0; i < 300; i++)
        run_case(0, 12);
    for (int i = 0; i < 40; i++)
        run_case(0, 400);
}

static void test_normalize_vs_cpu(void **state)
{
    (void)state;
    for (int i = 0; i < 200; i++)
        run_case(1, 12);
    for (int i = 0; i < 30; i++)
        run_case(1, 300);
}

/* A u8 image of several blocks and bands: map and mask equal the CPU's bit
 * for bit (exact sums, the same rule). */
static void test_u8_sauvola_large(void **state)
{
    (void)state;
    img2 in, a, m;
    size_t w = 1000, h = 700;
    img_alloc(&in, PIXSUM_U8, w, h, 1, 24);
    fill_random(PIXSUM_U8, in.hp, h * (size_t)in.h.row_stride, 0);
    CU_OK(cudaMemcpy(in.dp, in.hp, h * (size_t)in.h.row_stride, cudaMemcpyHostToDevice));
    img_alloc(&a, PIXSUM_F64, w, h, 1, 0);
    img_alloc(&m, PIXSUM_U8, w, h, 1, 0);
    pixsum_threshold_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.kw = sp.kh = 25;
    sp.method = PIXSUM_THRESHOLD_SAUVOLA;
    sp.k = 0.2;
    PX_OK(pixsum_threshold_local(NULL, &in.h, &sp, &a.h, &m.h));
    PX_OK(pixsum_cuda_threshold_local(NULL, &in.d, &sp, &a.d, &m.d, NULL));
    CU_OK(cudaDeviceSynchronize());
    void *ga = download(&a), *gk = download(&m);
    size_t diff = 0, mdiff = 0;
    for (size_t i = 0; i < w * h; i++) {
        double c = ((const double *)a.hp)[i], g = ((const double *)ga)[i];
        diff += fabs(c - g) > 0x1p-46 * fabs(c);
        mdiff += ((const uint8_t *)m.hp)[i] != ((const uint8_t *)gk)[i] &&
                 fabs(((const uint8_t *)in.hp)[i / w * (size_t)in.h.row_stride + i % w] - c) >
                     0x1p-46 * fabs(c);
    }
    assert_int_equal(diff, 0);
    assert_int_equal(mdiff, 0);
    free(ga);
    free(gk);
    img_free(&in);
    img_free(&a);
    img_free(&m);
}

static void test_refusals(void **state)
{
    (void)state;
    img2 in, map;
    img_alloc(&in, PIXSUM_U8, 8, 6, 1, 0);
    img_alloc(&map, PIXSUM_F32, 8, 6, 1, 0);
    pixsum_threshold_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.kw = sp.kh = 3;
    assert_int_equal(pixsum_cuda_threshold_local(NULL, &in.d, &sp, NULL, NULL, NULL),
                     PIXSUM_ERR_NULL);
    sp.kw = 2000;
    assert_int_equal(pixsum_cuda_threshold_local(NULL, &in.d, &sp, &map.d, NULL, NULL),
                     PIXSUM_ERR_UNSUPPORTED);
    sp.kw = 3;
    /* host memory the GPU cannot reach is refused, as the box filter's */
    static uint8_t host[48];
    pixsum_view hv = pixsum_view_2d(host, PIXSUM_U8, 8, 6, 1, 0);
    int st = pixsum_cuda_threshold_local(NULL, &hv, &sp, &map.d, NULL, NULL);
    assert_true(st == PIXSUM_ERR_INVALID_ARG || st == PIXSUM_OK);
    pixsum_normalize_spec ns = {3, 3, PIXSUM_BORDER_REFLECT101, 0, -1};
    assert_int_equal(pixsum_cuda_normalize_local(NULL, &in.d, &ns, &map.d, NULL),
                     PIXSUM_ERR_INVALID_ARG);
    CU_OK(cudaDeviceSynchronize());
    img_free(&in);
    img_free(&map);
}

int main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("test_cuda_threshold: skipped: no CUDA device\n");
        return 77;
    }
    const char *seed = getenv("PIXSUM_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 10) : (uint64_t)time(NULL);
    printf("test_cuda_threshold: seed %llu\n", (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_u8_sauvola_large),
        cmocka_unit_test(test_threshold_vs_cpu),
        cmocka_unit_test(test_normalize_vs_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif /* PIXSUM_TEST_HAVE_CUDA */

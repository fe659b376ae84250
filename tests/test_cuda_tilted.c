/*
 * test_cuda_tilted.c - pixsum_cuda_integral_tilted() against the CPU's
 * pixsum_integral_tilted(): every type pair of the CUDA kernels, shapes 1x1,
 * 1xN, Nx1, odd and random sizes, padded row strides, 1-4 channels, wrap mode
 * past 2^32 (wrap is on throughout, so sums of any size are compared),
 * repeated calls on one context (the scratch is reused), and the
 * refusals (3-D input, wrong table shape, host memory, a table overlapping
 * the input). Integer tables must
 * match bit for bit; float tables (non-negative input) within
 * (W + H + 16) x epsilon x the CPU's value.
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
    printf("test_cuda_tilted: skipped: no CUDA device (library built without CUDA)\n");
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
    pixsum_type in, out;
} pair;

static const pair pairs[] = {
    {PIXSUM_U8, PIXSUM_U32},  {PIXSUM_U8, PIXSUM_U64},  {PIXSUM_U16, PIXSUM_U32},
    {PIXSUM_U16, PIXSUM_U64}, {PIXSUM_I16, PIXSUM_I64}, {PIXSUM_I32, PIXSUM_I64},
    {PIXSUM_F32, PIXSUM_F32}, {PIXSUM_F32, PIXSUM_F64}, {PIXSUM_F64, PIXSUM_F64},
};

/* One case: a w x h image of ch channels with `pad` extra elements per row,
 * through the GPU and the CPU; the tables must agree. */
static void run_case(pixsum_ctx *gpu, pair pr, size_t w, size_t h, size_t ch, size_t pad,
                     int extreme, int wrap)
{
    size_t ie = pixsum_type_size(pr.in), oe = pixsum_type_size(pr.out);
    size_t in_row = (w * ch + pad) * ie, out_row = ((w + 1) * ch + pad) * oe;
    size_t in_bytes = in_row * h, out_bytes = out_row * (h + 1);
    unsigned char *hin = malloc(in_bytes), *want = malloc(out_bytes), *got = malloc(out_bytes);
    assert_true(hin && want && got);
    fill_random(pr.in, hin, in_bytes / ie, extreme);
    pixsum_view vin = pixsum_view_2d(hin, pr.in, w, h, ch, (ptrdiff_t)in_row);
    pixsum_view vwant = pixsum_view_2d(want, pr.out, w + 1, h + 1, ch, (ptrdiff_t)out_row);
    pixsum_ctx *cpu = pixsum_ctx_new();
    PX_OK(pixsum_ctx_set(cpu, PIXSUM_PARAM_WRAP, wrap));
    PX_OK(pixsum_integral_tilted(cpu, &vin, &vwant));
    pixsum_ctx_free(cpu);

    void *din, *dout;
    CU_OK(cudaMalloc(&din, in_bytes));
    CU_OK(cudaMalloc(&dout, out_bytes));
    CU_OK(cudaMemcpy(din, hin, in_bytes, cudaMemcpyHostToDevice));
    CU_OK(cudaMemset(dout, 0x77, out_bytes));
    pixsum_view gin = pixsum_view_2d(din, pr.in, w, h, ch, (ptrdiff_t)in_row);
    pixsum_view gout = pixsum_view_2d(dout, pr.out, w + 1, h + 1, ch, (ptrdiff_t)out_row);
    PX_OK(pixsum_ctx_set(gpu, PIXSUM_PARAM_WRAP, wrap));
    PX_OK(pixsum_cuda_integral_tilted(gpu, &gin, &gout, NULL));
    CU_OK(cudaDeviceSynchronize());
    CU_OK(cudaMemcpy(got, dout, out_bytes, cudaMemcpyDeviceToHost));
    size_t n = (w + 1) * ch;
    for (size_t y = 0; y <= h; y++) {
        const unsigned char *g = got + y * out_row, *e = want + y * out_row;
        if (pr.out != PIXSUM_F32 && pr.out != PIXSUM_F64) {
            if (memcmp(g, e, n * oe) != 0)
                fail_msg("%s -> %s %zux%zu c%zu: tilted table row %zu differs",
                         pixsum_type_name(pr.in), pixsum_type_name(pr.out), w, h, ch, y);
            continue;
        }
        double eps = pr.out == PIXSUM_F32 ? FLT_EPSILON : DBL_EPSILON;
        for (size_t i = 0; i < n; i++) {
            double gv = oe == 4 ? ((const float *)g)[i] : ((const double *)g)[i];
            double ev = oe == 4 ? ((const float *)e)[i] : ((const double *)e)[i];
            double tol = (double)(w + h + 16) * eps * fabs(ev) + 1e-300;
            if (!(fabs(gv - ev) <= tol))
                fail_msg("%s -> %s %zux%zu c%zu at (%zu, %zu): %.17g vs %.17g",
                         pixsum_type_name(pr.in), pixsum_type_name(pr.out), w, h, ch,
                         i / ch, y, gv, ev);
        }
    }
    cudaFree(din);
    cudaFree(dout);
    free(hin);
    free(want);
    free(got);
}

static void test_types_shapes(void **state)
{
    (void)state;
    static const size_t shapes[][2] = {{1, 1}, {1, 57}, {61, 1}, {2, 2}, {7, 3}, {33, 31},
                                       {257, 129}, {130, 511}, {1000, 37}, {31, 1000}};
    pixsum_ctx *gpu = pixsum_ctx_new(); /* one context: its scratch is reused and grown */
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            size_t ch = 1 + rnd() % 4, pad = rnd() % 3;
            run_case(gpu, pairs[p], shapes[s][0], shapes[s][1], ch, pad, 0, 1);
        }
    /* random sizes and the extreme values of each integer type */
    for (int k = 0; k < 12; k++) {
        pair pr = pairs[rnd() % 6];
        run_case(gpu, pr, 1 + rnd() % 700, 1 + rnd() % 300, 1 + rnd() % 4, rnd() % 5, 1, 1);
    }
    pixsum_ctx_free(gpu);
}

/* u8 -> u32 past 2^32 with wrap: the modular sums must still agree. */
static void test_wrap(void **state)
{
    (void)state;
    pixsum_ctx *gpu = pixsum_ctx_new();
    pair pr = {PIXSUM_U8, PIXSUM_U32};
    run_case(gpu, pr, 6000, 5000, 1, 0, 1, 1);
    pixsum_ctx_free(gpu);
    /* and with no context at all (scratch for the call only) */
    uint8_t *d;
    uint32_t *o;
    CU_OK(cudaMalloc((void **)&d, 64 * 64));
    CU_OK(cudaMalloc((void **)&o, 65 * 65 * 4));
    CU_OK(cudaMemset(d, 1, 64 * 64));
    pixsum_view in = pixsum_view_2d(d, PIXSUM_U8, 64, 64, 1, 0);
    pixsum_view out = pixsum_view_2d(o, PIXSUM_U32, 65, 65, 1, 0);
    PX_OK(pixsum_cuda_integral_tilted(NULL, &in, &out, NULL));
    uint32_t last = 0;
    CU_OK(cudaMemcpy(&last, o + 65 * 65 - 1, 4, cudaMemcpyDeviceToHost));
    /* T(64, 64) of an all-ones 64x64 image: the triangle with apex (63, 63)
     * opening upwards holds rows 63..0 with 1, 3, ... pixels clipped at x = 63 */
    uint32_t want = 0;
    for (int y = 0; y < 64; y++) {
        int half = 63 - y, lo = 63 - half, hi = 63 + half;
        want += (uint32_t)((hi > 63 ? 63 : hi) - (lo < 0 ? 0 : lo) + 1);
    }
    assert_int_equal(last, want);
    cudaFree(d);
    cudaFree(o);
}

static void test_refusals(void **state)
{
    (void)state;
    pixsum_ctx *ctx = pixsum_ctx_new();
    void *d;
    CU_OK(cudaMalloc(&d, 1 << 20));
    pixsum_view in = pixsum_view_2d(d, PIXSUM_U8, 16, 16, 1, 0);
    pixsum_view bad = pixsum_view_2d((char *)d + 4096, PIXSUM_U32, 16, 16, 1, 0);
    assert_int_equal(pixsum_cuda_integral_tilted(ctx, &in, &bad, NULL), PIXSUM_ERR_BAD_SHAPE);
    pixsum_view vol = in;
    vol.depth = 2;
    vol.slice_stride = 16 * 16;
    pixsum_view out = pixsum_view_2d((char *)d + 4096, PIXSUM_U32, 17, 17, 1, 0);
    assert_int_equal(pixsum_cuda_integral_tilted(ctx, &vol, &out, NULL), PIXSUM_ERR_BAD_SHAPE);
    pixsum_view f = pixsum_view_2d((char *)d + 4096, PIXSUM_F32, 17, 17, 1, 0);
    assert_int_equal(pixsum_cuda_integral_tilted(ctx, &in, &f, NULL), PIXSUM_ERR_UNSUPPORTED);
    int pageable = 0;
    CU_OK(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, 0));
    if (!pageable) {
        uint8_t host[256];
        pixsum_view hin = pixsum_view_2d(host, PIXSUM_U8, 16, 16, 1, 0);
        assert_int_equal(pixsum_cuda_integral_tilted(ctx, &hin, &out, NULL),
                         PIXSUM_ERR_INVALID_ARG);
    }
    assert_int_equal(pixsum_cuda_integral_tilted(ctx, NULL, &out, NULL), PIXSUM_ERR_NULL);
    pixsum_view alias = pixsum_view_2d(d, PIXSUM_U32, 17, 17, 1, 0);
    assert_int_equal(pixsum_cuda_integral_tilted(ctx, &in, &alias, NULL), PIXSUM_ERR_ALIASING);
    cudaFree(d);
    pixsum_ctx_free(ctx);
}

int main(void)
{
    if (pixsum_cuda_device_count() == 0) {
        printf("test_cuda_tilted: skipped: no CUDA device\n");
        return 77;
    }
    const char *seed = getenv("PIXSUM_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 10) : (uint64_t)time(NULL);
    printf("test_cuda_tilted: seed %llu (replay with PIXSUM_TEST_SEED=N)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_types_shapes),
        cmocka_unit_test(test_wrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif

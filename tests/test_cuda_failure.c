/*
 * test_cuda_failure.c - failure paths and huge images of the CUDA backend
 * (issue #9), run on a machine with a GPU:
 *   - memory the GPU cannot reach (malloc'ed host memory, a freed buffer, a
 *     view running far past its allocation, a host workspace) is refused with
 *     PIXSUM_ERR_INVALID_ARG before any kernel runs, the output untouched, and
 *     page-locked mapped host memory is accepted;
 *   - device memory exhaustion: with nearly all device memory taken, the
 *     host-memory path and the device-pointer path return PIXSUM_ERR_CUDA with
 *     CUDA's text, leave the output untouched, leak no device memory over
 *     repeated failures, and the same context works once memory is back;
 *   - images of more than 2^31 pixels on the device: 50000 x 50000 u8 -> u64
 *     and 1 x (2^31 + 7) u8 -> u64 through cuda.lookback, compared strip by
 *     strip with the CPU table (PIXSUM_TEST_NO_LARGE=1 skips them).
 * Without a CUDA device (or without CUDA in the build) it prints "skipped: no
 * CUDA device" and exits 77.
 */
#include "pixsum.h"

#include <stdio.h>
#include <stdlib.h>

#ifndef PIXSUM_TEST_HAVE_CUDA
int main(void)
{
    printf("test_cuda_failure: skipped: no CUDA device (library built without CUDA)\n");
    return 77;
}
#else

#include "pixsum_cuda.h"

#include <cuda_runtime_api.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "testutil_cuda.h"

static int skip_large(void)
{
    const char *s = getenv("PIXSUM_TEST_NO_LARGE");
    return s && *s && strcmp(s, "0") != 0;
}

static void fill_bytes(uint8_t *p, size_t n, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        p[i] = (uint8_t)x;
    }
}

/* True if the n device bytes at d all equal `byte`. */
static int device_all(const void *d, size_t n, unsigned char byte)
{
    unsigned char *h = malloc(n);
    assert_non_null(h);
    CU_OK(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost));
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++)
        ok = h[i] == byte;
    free(h);
    return ok;
}

static void expect_refused(int st, const char *needle)
{
    if (st != PIXSUM_ERR_INVALID_ARG)
        fail_msg("expected PIXSUM_ERR_INVALID_ARG, got %d (%s): %s", st, pixsum_strerror(st),
                 pixsum_last_error());
    if (!strstr(pixsum_last_error(), needle))
        fail_msg("detail '%s' does not mention '%s'", pixsum_last_error(), needle);
}

static void test_unreachable_memory(void **state)
{
    (void)state;
    const size_t W = 301, H = 77;
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_non_null(ctx);
    uint8_t *d_in;
    uint32_t *d_out;
    CU_OK(cudaMalloc((void **)&d_in, W * H));
    CU_OK(cudaMalloc((void **)&d_out, W * H * 4));
    CU_OK(cudaMemset(d_out, 0x5a, W * H * 4));
    uint8_t *h_in = malloc(W * H);
    uint32_t *h_out = malloc(W * H * 4);
    assert_true(h_in && h_out);
    fill_bytes(h_in, W * H, 1);
    memset(h_out, 0x5a, W * H * 4);
    CU_OK(cudaMemcpy(d_in, h_in, W * H, cudaMemcpyHostToDevice));

    int pageable = 0;
    CU_OK(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, 0));
    pixsum_view din = pixsum_view_2d(d_in, PIXSUM_U8, W, H, 1, 0);
    pixsum_view dout = pixsum_view_2d(d_out, PIXSUM_U32, W, H, 1, 0);
    pixsum_view hin = pixsum_view_2d(h_in, PIXSUM_U8, W, H, 1, 0);
    pixsum_view hout = pixsum_view_2d(h_out, PIXSUM_U32, W, H, 1, 0);
    if (!pageable) {
        /* malloc'ed host memory handed to the device API */
        expect_refused(pixsum_cuda_integral(ctx, &hin, &dout, NULL), "input");
        expect_refused(pixsum_cuda_integral(ctx, &din, &hout, NULL), "table");
        for (size_t i = 0; i < W * H; i++)
            assert_int_equal(h_out[i], 0x5a5a5a5au);
        /* a host workspace */
        size_t ws_bytes = 0;
        PX_OK(pixsum_cuda_workspace_size(ctx, &din, &dout, NULL, &ws_bytes));
        void *hws = calloc(1, ws_bytes);
        expect_refused(pixsum_cuda_integral_ws(ctx, &din, &dout, NULL, 0, hws, ws_bytes, NULL),
                       "workspace");
        free(hws);
    } else {
        printf("this system lets the GPU read pageable memory: host pointers are valid\n");
    }
    /* an input view running 1 GiB past its 64 KiB allocation (rows of 4 MiB),
     * the table in mapped page-locked host memory, away from device ranges */
    {
        uint8_t *d_small;
        uint64_t *pin_table;
        CU_OK(cudaMalloc((void **)&d_small, 1 << 16));
        CU_OK(cudaHostAlloc((void **)&pin_table, 256 * 256 * 8, cudaHostAllocMapped));
        memset(pin_table, 0x5a, 256 * 256 * 8);
        pixsum_view table = pixsum_view_2d(pin_table, PIXSUM_U64, 256, 256, 1, 0);
        int st = PIXSUM_ERR_ALIASING;
        /* downwards (bottom-up rows), else upwards: one of them misses the table */
        for (int dir = -1; dir <= 1 && st == PIXSUM_ERR_ALIASING; dir += 2) {
            pixsum_view far_in = pixsum_view_2d(d_small, PIXSUM_U8, 256, 256, 1,
                                                dir * ((ptrdiff_t)4 << 20));
            st = pixsum_cuda_integral(ctx, &far_in, &table, NULL);
        }
        if (st == PIXSUM_ERR_ALIASING)
            printf("far-view case skipped: this address layout put the table inside the view\n");
        else
            expect_refused(st, "input");
        for (size_t i = 0; i < 256 * 256; i++)
            assert_int_equal(pin_table[i], 0x5a5a5a5a5a5a5a5aull);
        cudaFreeHost(pin_table);
        cudaFree(d_small);
    }
    /* a freed buffer (unless the driver keeps the range mapped after cudaFree) */
    uint8_t *d_gone;
    CU_OK(cudaMalloc((void **)&d_gone, 64 << 20));
    CU_OK(cudaFree(d_gone));
    struct cudaPointerAttributes ga;
    memset(&ga, 0, sizeof ga);
    if (cudaPointerGetAttributes(&ga, d_gone) == cudaSuccess &&
        ga.type == cudaMemoryTypeDevice) {
        printf("freed-buffer case skipped: the range is still mapped after cudaFree\n");
    } else {
        cudaGetLastError();
        pixsum_view gone = pixsum_view_2d(d_gone, PIXSUM_U8, W, H, 1, 0);
        expect_refused(pixsum_cuda_integral(ctx, &gone, &dout, NULL), "input");
    }
    CU_OK(cudaDeviceSynchronize());
    assert_true(device_all(d_out, W * H * 4, 0x5a));

    /* page-locked host memory mapped into the device: accepted, right table */
    uint8_t *pin_in;
    uint32_t *pin_out;
    CU_OK(cudaHostAlloc((void **)&pin_in, W * H, cudaHostAllocMapped));
    CU_OK(cudaHostAlloc((void **)&pin_out, W * H * 4, cudaHostAllocMapped));
    memcpy(pin_in, h_in, W * H);
    pixsum_view pin = pixsum_view_2d(pin_in, PIXSUM_U8, W, H, 1, 0);
    pixsum_view pout = pixsum_view_2d(pin_out, PIXSUM_U32, W, H, 1, 0);
    PX_OK(pixsum_cuda_integral(ctx, &pin, &pout, NULL));
    CU_OK(cudaDeviceSynchronize());
    pixsum_ctx *cpu = pixsum_ctx_new();
    PX_OK(pixsum_integral(cpu, &hin, &hout));
    assert_memory_equal(pin_out, h_out, W * H * 4);
    /* and the context still works on device memory afterwards */
    PX_OK(pixsum_cuda_integral(ctx, &din, &dout, NULL));
    CU_OK(cudaDeviceSynchronize());
    uint32_t *back = malloc(W * H * 4);
    CU_OK(cudaMemcpy(back, d_out, W * H * 4, cudaMemcpyDeviceToHost));
    assert_memory_equal(back, h_out, W * H * 4);
    free(back);
    pixsum_ctx_free(cpu);
    cudaFreeHost(pin_in);
    cudaFreeHost(pin_out);
    cudaFree(d_in);
    cudaFree(d_out);
    free(h_in);
    free(h_out);
    pixsum_ctx_free(ctx);
}

/* Takes all but about `leave` bytes of free device memory; returns the block. */
static void *hog_device(size_t leave)
{
    size_t freeb = 0, total = 0;
    CU_OK(cudaMemGetInfo(&freeb, &total));
    size_t take = freeb > leave ? freeb - leave : 0;
    void *hog = NULL;
    while (take > ((size_t)64 << 20)) {
        if (cudaMalloc(&hog, take) == cudaSuccess)
            return hog;
        cudaGetLastError();
        take -= (size_t)32 << 20;
    }
    fail_msg("cannot take device memory to simulate exhaustion");
    return NULL;
}

static void test_out_of_memory(void **state)
{
    (void)state;
    const size_t W = 4096, H = 4096; /* u8 -> u32: 16 MiB in, 64 MiB out */
    uint8_t *h_in = malloc(W * H);
    uint32_t *h_out = malloc(W * H * 4), *want = malloc(W * H * 4);
    assert_true(h_in && h_out && want);
    fill_bytes(h_in, W * H, 2);
    pixsum_view hin = pixsum_view_2d(h_in, PIXSUM_U8, W, H, 1, 0);
    pixsum_view hout = pixsum_view_2d(h_out, PIXSUM_U32, W, H, 1, 0);
    pixsum_view hwant = pixsum_view_2d(want, PIXSUM_U32, W, H, 1, 0);
    pixsum_ctx *cpu = pixsum_ctx_new();
    PX_OK(pixsum_integral(cpu, &hin, &hwant));

    /* device buffers of the device-path case, taken before the hog */
    uint8_t *d_in;
    uint32_t *d_out;
    CU_OK(cudaMalloc((void **)&d_in, W * H));
    CU_OK(cudaMalloc((void **)&d_out, W * H * 4));
    CU_OK(cudaMemcpy(d_in, h_in, W * H, cudaMemcpyHostToDevice));
    CU_OK(cudaMemset(d_out, 0x5a, W * H * 4));
    pixsum_view din = pixsum_view_2d(d_in, PIXSUM_U8, W, H, 1, 0);
    pixsum_view dout = pixsum_view_2d(d_out, PIXSUM_U32, W, H, 1, 0);

    pixsum_ctx *ctx = pixsum_ctx_new();
    PX_OK(pixsum_ctx_set_method(ctx, "cuda.lookback"));
    void *hog = hog_device((size_t)2 << 20);
    size_t free_at_first = 0, free_now = 0, total = 0;
    for (int round = 0; round < 8; round++) {
        memset(h_out, 0x5a, W * H * 4);
        int st = pixsum_integral(ctx, &hin, &hout);
        if (st != PIXSUM_ERR_CUDA)
            fail_msg("host path with no device memory: got %d (%s): %s", st,
                     pixsum_strerror(st), pixsum_last_error());
        if (!strstr(pixsum_last_error(), "memory"))
            fail_msg("detail '%s' does not say memory ran out", pixsum_last_error());
        for (size_t i = 0; i < W * H; i += 4099)
            assert_int_equal(h_out[i], 0x5a5a5a5au);
        pixsum_ctx *fresh = pixsum_ctx_new();
        st = pixsum_cuda_integral(fresh, &din, &dout, NULL);
        pixsum_ctx_free(fresh);
        /* the device path needs only a small workspace: it may fit in what is
         * left; if it ran it must be right, if not it must say why */
        if (st != PIXSUM_OK && st != PIXSUM_ERR_CUDA)
            fail_msg("device path with no device memory: got %d (%s): %s", st,
                     pixsum_strerror(st), pixsum_last_error());
        CU_OK(cudaDeviceSynchronize());
        if (st == PIXSUM_ERR_CUDA)
            assert_true(device_all(d_out, W * H * 4, 0x5a));
        CU_OK(cudaMemGetInfo(round == 0 ? &free_at_first : &free_now, &total));
    }
    if (free_now != free_at_first)
        fail_msg("free device memory went from %zu to %zu bytes over failed calls: a leak",
                 free_at_first, free_now);
    CU_OK(cudaFree(hog));
    /* memory is back: the same context now succeeds */
    PX_OK(pixsum_integral(ctx, &hin, &hout));
    assert_memory_equal(h_out, want, W * H * 4);
    PX_OK(pixsum_cuda_integral(ctx, &din, &dout, NULL));
    CU_OK(cudaDeviceSynchronize());
    CU_OK(cudaMemcpy(h_out, d_out, W * H * 4, cudaMemcpyDeviceToHost));
    assert_memory_equal(h_out, want, W * H * 4);
    pixsum_ctx_free(ctx);
    pixsum_ctx_free(cpu);
    cudaFree(d_in);
    cudaFree(d_out);
    free(h_in);
    free(h_out);
    free(want);
}

/* The u64 table of a W x H u8 image on the device, compared with the CPU's in
 * strips of rows. */
static void huge_case(size_t W, size_t H)
{
    size_t in_bytes = W * H, out_bytes = W * H * 8;
    size_t freeb = 0, total = 0;
    CU_OK(cudaMemGetInfo(&freeb, &total));
    if (freeb < in_bytes + out_bytes + ((size_t)1 << 30)) {
        printf("%zux%zu skipped: %zu bytes of device memory free\n", W, H, freeb);
        return;
    }
    uint8_t *h_in = malloc(in_bytes);
    uint64_t *want = malloc(out_bytes);
    if (!h_in || !want) {
        printf("%zux%zu skipped: not enough host memory\n", W, H);
        free(h_in);
        free(want);
        return;
    }
    fill_bytes(h_in, in_bytes, (uint32_t)(W ^ H));
    pixsum_view hin = pixsum_view_2d(h_in, PIXSUM_U8, W, H, 1, 0);
    pixsum_view hwant = pixsum_view_2d(want, PIXSUM_U64, W, H, 1, 0);
    pixsum_ctx *cpu = pixsum_ctx_new();
    PX_OK(pixsum_integral(cpu, &hin, &hwant));
    pixsum_ctx_free(cpu);

    uint8_t *d_in;
    uint64_t *d_out;
    CU_OK(cudaMalloc((void **)&d_in, in_bytes));
    CU_OK(cudaMalloc((void **)&d_out, out_bytes));
    CU_OK(cudaMemcpy(d_in, h_in, in_bytes, cudaMemcpyHostToDevice));
    free(h_in);
    pixsum_view din = pixsum_view_2d(d_in, PIXSUM_U8, W, H, 1, 0);
    pixsum_view dout = pixsum_view_2d(d_out, PIXSUM_U64, W, H, 1, 0);
    pixsum_ctx *ctx = pixsum_ctx_new();
    PX_OK(pixsum_ctx_set_method(ctx, "cuda.lookback"));
    PX_OK(pixsum_cuda_integral(ctx, &din, &dout, NULL));
    CU_OK(cudaDeviceSynchronize());
    const size_t strip_rows = H < 512 ? H : 512;
    uint64_t *strip = malloc(strip_rows * W * 8);
    assert_non_null(strip);
    for (size_t y = 0; y < H; y += strip_rows) {
        size_t n = H - y < strip_rows ? H - y : strip_rows;
        CU_OK(cudaMemcpy(strip, d_out + y * W, n * W * 8, cudaMemcpyDeviceToHost));
        if (memcmp(strip, want + y * W, n * W * 8) != 0)
            fail_msg("%zux%zu: the GPU table differs from the CPU's in rows %zu..%zu", W, H, y,
                     y + n - 1);
    }
    printf("%zux%zu u8 -> u64 (%zu pixels): GPU table identical to the CPU's; last value "
           "%llu\n", W, H, W * H, (unsigned long long)want[W * H - 1]);
    free(strip);
    free(want);
    pixsum_ctx_free(ctx);
    cudaFree(d_in);
    cudaFree(d_out);
}

static void test_huge_images(void **state)
{
    (void)state;
    if (skip_large()) {
        printf("huge images skipped (PIXSUM_TEST_NO_LARGE)\n");
        return;
    }
    huge_case(50000, 50000);
    huge_case(((size_t)1 << 31) + 7, 1);
}

int main(void)
{
    if (pixsum_cuda_device_count() == 0) {
        printf("test_cuda_failure: skipped: no CUDA device\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unreachable_memory),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_huge_images),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif

/*
 * call_cost.c - the bare C cost of the calls that gpu_call_overhead.py makes
 * from Python, for the Python overhead to be read against: pixsum_integral()
 * of a SIZE x SIZE uint8 host image into a uint32 table, with a context made
 * and freed per call (as the Python binding does) and with one reused
 * context; built with -DCALL_COST_CUDA, also the host time of
 * pixsum_cuda_integral() enqueuing the same table on a stream for device
 * memory (nothing synchronised between timed calls; the stream is
 * synchronised every 100 calls, untimed).
 *
 * Prints one line per call: "name median_ns p10_ns p90_ns".
 *
 * Build (next to a CMake build of the library in BUILD):
 *   cc -O2 -std=c11 -Iinclude bench/python/call_cost.c BUILD/src/libpixsum.a \
 *      -fopenmp -lm -lpthread -o call_cost
 *   (CUDA build: add -DCALL_COST_CUDA -I/usr/local/cuda/include
 *    -L/usr/local/cuda/lib64 -lcudart -lstdc++)
 * Usage: call_cost [SIZE]
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pixsum.h"
#ifdef CALL_COST_CUDA
#include <cuda_runtime.h>

#include "pixsum_cuda.h"
#endif

#define CALLS 20000
#define BLOCK 100

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *name, double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, by_value);
    printf("%s %.0f %.0f %.0f\n", name, t[n / 2], t[n / 10], t[n - 1 - n / 10]);
}

int main(int argc, char **argv)
{
    size_t size = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 16;
    if (size < 1 || size > 4096) {
        fprintf(stderr, "call_cost: SIZE must be 1..4096\n");
        return 2;
    }
    uint8_t *img = malloc(size * size);
    uint32_t *table = malloc(size * size * sizeof *table);
    double *t = malloc(CALLS * sizeof *t);
    if (!img || !table || !t)
        return 1;
    for (size_t i = 0; i < size * size; i++)
        img[i] = (uint8_t)(i * 37u);
    pixsum_view in = pixsum_view_2d(img, PIXSUM_U8, size, size, 1, 0);
    pixsum_view out = pixsum_view_2d(table, PIXSUM_U32, size, size, 1, 0);
    for (int i = 0; i < CALLS; i++) {
        double t0 = now_ns();
        pixsum_ctx *ctx = pixsum_ctx_new();
        int st = pixsum_integral(ctx, &in, &out);
        pixsum_ctx_free(ctx);
        t[i] = now_ns() - t0;
        if (st != PIXSUM_OK) {
            fprintf(stderr, "call_cost: %s\n", pixsum_strerror(st));
            return 1;
        }
    }
    report("pixsum_integral(context_per_call)", t, CALLS);
    pixsum_ctx *ctx = pixsum_ctx_new();
    for (int i = 0; i < CALLS; i++) {
        double t0 = now_ns();
        pixsum_integral(ctx, &in, &out);
        t[i] = now_ns() - t0;
    }
    report("pixsum_integral(reused_context)", t, CALLS);
#ifdef CALL_COST_CUDA
    void *din, *dout;
    cudaStream_t stream;
    if (cudaMalloc(&din, size * size) != cudaSuccess ||
        cudaMalloc(&dout, size * size * 4) != cudaSuccess ||
        cudaStreamCreate(&stream) != cudaSuccess) {
        fprintf(stderr, "call_cost: no CUDA device\n");
        return 1;
    }
    cudaMemcpy(din, img, size * size, cudaMemcpyHostToDevice);
    pixsum_view dvin = pixsum_view_2d(din, PIXSUM_U8, size, size, 1, 0);
    pixsum_view dvout = pixsum_view_2d(dout, PIXSUM_U32, size, size, 1, 0);
    for (int i = 0; i < 1000; i++) /* warm-up: scratch, modules */
        pixsum_cuda_integral(ctx, &dvin, &dvout, stream);
    cudaStreamSynchronize(stream);
    for (int i = 0; i < CALLS; i++) {
        double t0 = now_ns();
        int st = pixsum_cuda_integral(ctx, &dvin, &dvout, stream);
        t[i] = now_ns() - t0;
        if (st != PIXSUM_OK) {
            fprintf(stderr, "call_cost: %s: %s\n", pixsum_strerror(st), pixsum_last_error());
            return 1;
        }
        if (i % BLOCK == BLOCK - 1)
            cudaStreamSynchronize(stream);
    }
    report("pixsum_cuda_integral(enqueue)", t, CALLS);
    cudaFree(din);
    cudaFree(dout);
    cudaStreamDestroy(stream);
#endif
    pixsum_ctx_free(ctx);
    free(img);
    free(table);
    free(t);
    return 0;
}

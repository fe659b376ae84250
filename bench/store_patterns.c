/*
 * store_patterns.c - which write pattern of a streamed u8 -> u32 table reaches
 * the memory floor on this machine (issue 3). Times, in one process and in
 * turn (best of N rounds), kernels that move the same bytes as an 8192^2
 * u8 -> u32 table (1 byte read and 4 written per pixel, non-temporal stores)
 * with progressively more of the table kernel's access pattern, and the
 * library's simd.2wh itself:
 *   floor         1 KiB read, then 4 KiB written, as `pixsum bench`'s floor;
 *   rows1         one row at a time, bytes widened and streamed;
 *   rows1+buf     the same, adding and storing a cached row of column sums;
 *   rows2         two rows at a time, both output rows streamed in turn;
 *   rows2+buf     the same with the cached row (the row-pair kernel's pattern
 *                 until the ninth session);
 *   rows2 defer   two rows at a time, the first streamed, the second kept in
 *                 the cached row and streamed out from it 1024 samples at a
 *                 time (the pattern the row-pair kernel uses now);
 *   simd.2wh      pixsum_integral() with method simd.2wh (wrap on).
 * Only the prefix sums are left out of the patterns, so the gap between them
 * and simd.2wh is the cost of the arithmetic that does not overlap memory.
 * usage: store_patterns [rounds] [width] [height]   (x86-64 with AVX2)
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "pixsum.h"
#include "bench_timing.h"

#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t g_w = 8192, g_h = 8192;
static uint8_t *g_in;
static uint32_t *g_out, *g_buf;

#define AVX2 __attribute__((target("avx2")))

AVX2 static void floor_kernel(void)
{
    __m256i a = _mm256_setzero_si256();
    size_t n = g_w * g_h;
    for (size_t o = 0, i = 0; o < n; o += 1024) {
        for (size_t k = 0; k < 1024; k += 32, i += 32)
            a = _mm256_xor_si256(a, _mm256_loadu_si256((const __m256i *)(const void *)(g_in + i)));
        for (size_t k = 0; k < 1024; k += 8)
            _mm256_stream_si256((__m256i *)(void *)(g_out + o + k), a);
    }
    _mm_sfence();
}

AVX2 static inline __m256i widen8(const uint8_t *p)
{
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p));
}

AVX2 static void rows1(int with_buf)
{
    for (size_t y = 0; y < g_h; y++) {
        const uint8_t *r = g_in + y * g_w;
        uint32_t *d = g_out + y * g_w;
        for (size_t x = 0; x < g_w; x += 8) {
            __m256i v = widen8(r + x);
            if (with_buf) {
                v = _mm256_add_epi32(v, _mm256_load_si256((const __m256i *)(const void *)(g_buf + x)));
                _mm256_store_si256((__m256i *)(void *)(g_buf + x), v);
            }
            _mm256_stream_si256((__m256i *)(void *)(d + x), v);
        }
    }
    _mm_sfence();
}

AVX2 static void rows2(int with_buf, int defer)
{
    for (size_t y = 0; y + 2 <= g_h; y += 2) {
        const uint8_t *r0 = g_in + y * g_w, *r1 = r0 + g_w;
        uint32_t *d0 = g_out + y * g_w, *d1 = d0 + g_w;
        for (size_t x0 = 0; x0 < g_w; x0 += 1024) {
            size_t x1 = x0 + 1024 < g_w ? x0 + 1024 : g_w;
            for (size_t x = x0; x < x1; x += 8) {
                __m256i v0 = widen8(r0 + x), v1 = widen8(r1 + x);
                if (with_buf) {
                    v0 = _mm256_add_epi32(
                        v0, _mm256_load_si256((const __m256i *)(const void *)(g_buf + x)));
                    v1 = _mm256_add_epi32(v1, v0);
                    _mm256_store_si256((__m256i *)(void *)(g_buf + x), v1);
                }
                _mm256_stream_si256((__m256i *)(void *)(d0 + x), v0);
                if (!defer)
                    _mm256_stream_si256((__m256i *)(void *)(d1 + x), v1);
            }
            if (defer)
                for (size_t x = x0; x < x1; x += 8)
                    _mm256_stream_si256((__m256i *)(void *)(d1 + x),
                                        _mm256_load_si256((const __m256i *)(const void *)(g_buf + x)));
        }
    }
    _mm_sfence();
}

static pixsum_ctx *g_ctx;

static void library(void)
{
    pixsum_view in = pixsum_view_2d(g_in, PIXSUM_U8, g_w, g_h, 1, 0);
    pixsum_view out = pixsum_view_2d(g_out, PIXSUM_U32, g_w, g_h, 1, 0);
    if (pixsum_integral(g_ctx, &in, &out) != PIXSUM_OK) {
        fprintf(stderr, "store_patterns: %s\n", pixsum_last_error());
        exit(1);
    }
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 7;
    if (argc > 2)
        g_w = (size_t)strtoull(argv[2], NULL, 10);
    if (argc > 3)
        g_h = (size_t)strtoull(argv[3], NULL, 10);
    if (rounds < 1 || g_w < 1024 || g_w % 1024 || g_h < 2 || g_h % 2) {
        fprintf(stderr, "usage: store_patterns [rounds >= 1] [width: a multiple of 1024] "
                        "[height: even]\n");
        return 2;
    }
    if (!__builtin_cpu_supports("avx2")) {
        printf("store_patterns: skipped: no AVX2\n");
        return 0;
    }
    g_in = aligned_alloc(64, g_w * g_h);
    g_out = aligned_alloc(64, g_w * g_h * 4);
    g_buf = aligned_alloc(64, g_w * 4);
    if (!g_in || !g_out || !g_buf) {
        fprintf(stderr, "store_patterns: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < g_w * g_h; i++)
        g_in[i] = (uint8_t)((i * 2654435761u) >> 24);
    memset(g_out, 1, g_w * g_h * 4);
    memset(g_buf, 0, g_w * 4);
    g_ctx = pixsum_ctx_new();
    if (!g_ctx || pixsum_ctx_set_method(g_ctx, "simd.2wh") != PIXSUM_OK ||
        pixsum_ctx_set(g_ctx, PIXSUM_PARAM_WRAP, 1) != PIXSUM_OK) {
        fprintf(stderr, "store_patterns: %s\n", pixsum_last_error());
        return 1;
    }
    enum { FLOOR, ROWS1, ROWS1_BUF, ROWS2, ROWS2_BUF, ROWS2_DEFER, LIBRARY, N };
    static const char *const names[N] = {"floor",     "rows1",       "rows1+buf", "rows2",
                                         "rows2+buf", "rows2 defer", "simd.2wh"};
    double best[N];
    for (int k = 0; k < N; k++)
        best[k] = 1e30;
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < N; k++) {
            double t0 = now_ms();
            switch (k) {
            case FLOOR: floor_kernel(); break;
            case ROWS1: rows1(0); break;
            case ROWS1_BUF: rows1(1); break;
            case ROWS2: rows2(0, 0); break;
            case ROWS2_BUF: rows2(1, 0); break;
            case ROWS2_DEFER: rows2(1, 1); break;
            default: library(); break;
            }
            double t = now_ms() - t0;
            if (t < best[k])
                best[k] = t;
        }
    printf("store_patterns: u8 -> u32 %zux%zu, best of %d rounds, isa %s\n", g_w, g_h, rounds,
           getenv("PIXSUM_FORCE_ISA") ? getenv("PIXSUM_FORCE_ISA") : "auto");
    for (int k = 0; k < N; k++)
        printf("%-12s %8.2f ms  %.2f of floor\n", names[k], best[k], best[FLOOR] / best[k]);
    pixsum_ctx_free(g_ctx);
    free(g_in);
    free(g_out);
    free(g_buf);
    return 0;
}

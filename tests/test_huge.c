/*
 * test_huge.c - images of more than 2^31 pixels on the CPU: 64-bit sizes,
 * offsets and counts everywhere.
 *
 *   - one row of 2^31 + 7 u8 pixels: integral image u8 -> u32 in wrap mode
 *     (a u64 table would need 16 GiB) with serial.2wh, every element checked against a
 *     running sum modulo 2^32; histogram (256 bins) checked against counts
 *     made here;
 *   - a 46341 x 46341 u8 image (2,147,488,281 pixels, so row * stride and
 *     y * width pass 2^31): integral u32 wrap, the whole table checked row by
 *     row against column sums kept here; histogram checked likewise; a few
 *     box sums (4-corner formula on the wrapped table) checked exactly.
 *
 * Memory: 2 GiB of input + 8 GiB of table, allocated once and reused. The
 * test is skipped (exit 77) when /proc/meminfo reports less than 12 GiB
 * available. It is labelled `huge` and `nosanitize` (tests/reliability.cmake).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "pixsum.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define ROW_PIXELS (((size_t)1 << 31) + 7)
#define SIDE ((size_t)46341)

static uint8_t *input;   /* SIDE * SIDE bytes (>= ROW_PIXELS) */
static uint32_t *table;  /* SIDE * SIDE elements */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Pixel pattern: varied, not periodic in the width, uses all 256 values. */
static uint8_t pattern(size_t i)
{
    uint64_t v = (uint64_t)i * 0x9E3779B97F4A7C15ull;
    return (uint8_t)(v >> 56);
}

static size_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %zu kB", &kb) == 1)
            break;
    fclose(f);
    return kb * 1024;
}

static void *big_alloc(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static int setup(void **state)
{
    (void)state;
    input = big_alloc(SIDE * SIDE);
    table = big_alloc(SIDE * SIDE * sizeof *table);
    if (!input || !table)
        return -1;
    for (size_t i = 0; i < SIDE * SIDE; i++)
        input[i] = pattern(i);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (input)
        munmap(input, SIDE * SIDE);
    if (table)
        munmap(table, SIDE * SIDE * sizeof *table);
    return 0;
}

static pixsum_ctx *wrap_ctx(void)
{
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_non_null(ctx);
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 1), PIXSUM_OK);
    return ctx;
}

/* Histogram of `n` pixels made here, compared with the library's. */
static void check_histogram(const pixsum_view *in, size_t n)
{
    uint64_t want[256] = {0}, got[256];
    for (size_t i = 0; i < n; i++)
        want[input[i]]++;
    pixsum_hist_info info;
    double t0 = now();
    assert_int_equal(pixsum_histogram(NULL, in, NULL, got, 256, &info), PIXSUM_OK);
    print_message("  histogram of %zu pixels: %.2f s\n", n, now() - t0);
    assert_memory_equal(got, want, sizeof want);
    assert_true(info.pixels == n && info.in_range[0] == n);
}

static void test_one_long_row(void **state)
{
    (void)state;
    pixsum_view in = pixsum_view_2d(input, PIXSUM_U8, ROW_PIXELS, 1, 1, 0);
    pixsum_view out = pixsum_view_2d(table, PIXSUM_U32, ROW_PIXELS, 1, 1, 0);
    pixsum_ctx *ctx = pixsum_ctx_new();
    /* without wrap the u32 table can overflow: refused, not wrapped silently */
    assert_int_equal(pixsum_integral(ctx, &in, &out), PIXSUM_ERR_OVERFLOW);
    pixsum_ctx_free(ctx);
    ctx = wrap_ctx();
    /* serial.2wh: on one row of 2^31 pixels the streaming-store path of the
     * fast methods (chosen by auto) keeps a row-sized accumulator (8 GiB here)
     * and takes 17-24 s instead of 1.8 s; see docs/reliability.md */
    assert_int_equal(pixsum_ctx_set_method(ctx, "serial.2wh"), PIXSUM_OK);
    table[ROW_PIXELS - 1] = 0xDEADBEEF;
    double t0 = now();
    assert_int_equal(pixsum_integral(ctx, &in, &out), PIXSUM_OK);
    print_message("  integral 1 x %zu u8->u32 (wrap): %.2f s\n", ROW_PIXELS, now() - t0);
    pixsum_ctx_free(ctx);
    uint32_t sum = 0;
    for (size_t i = 0; i < ROW_PIXELS; i++) {
        sum += input[i];
        if (table[i] != sum)
            fail_msg("table[%zu] = %u, expected %u", i, table[i], sum);
    }
    check_histogram(&in, ROW_PIXELS);
}

static void test_square_over_2_31(void **state)
{
    (void)state;
    pixsum_view in = pixsum_view_2d(input, PIXSUM_U8, SIDE, SIDE, 1, 0);
    pixsum_view out = pixsum_view_2d(table, PIXSUM_U32, SIDE, SIDE, 1, 0);
    pixsum_ctx *ctx = wrap_ctx();
    table[SIDE * SIDE - 1] = 0xDEADBEEF;
    double t0 = now();
    assert_int_equal(pixsum_integral(ctx, &in, &out), PIXSUM_OK);
    print_message("  integral %zu x %zu u8->u32 (wrap): %.2f s\n", SIDE, SIDE, now() - t0);
    /* the whole table, row by row, from column sums kept here */
    uint32_t *col = calloc(SIDE, sizeof *col);
    assert_non_null(col);
    for (size_t y = 0; y < SIDE; y++) {
        uint32_t run = 0;
        const uint8_t *row = input + y * SIDE;
        const uint32_t *trow = table + y * SIDE;
        for (size_t x = 0; x < SIDE; x++) {
            col[x] += row[x];
            run += col[x];
            if (trow[x] != run)
                fail_msg("I(%zu, %zu) = %u, expected %u", x, y, trow[x], run);
        }
    }
    free(col);
    /* boxes whose true sums fit 32 bits are exact on the wrapped table */
    const pixsum_box boxes[] = {{SIDE - 100, SIDE - 100, 0, 100, 100, 1},
                                {12345, 40000, 0, 4000, 4000, 1},
                                {0, SIDE - 1, 0, SIDE, 1, 1}};
    for (size_t b = 0; b < sizeof boxes / sizeof boxes[0]; b++) {
        uint32_t got;
        assert_int_equal(pixsum_box_sum(ctx, &out, &boxes[b], &got), PIXSUM_OK);
        uint64_t want = 0;
        for (size_t y = boxes[b].y; y < boxes[b].y + boxes[b].h; y++)
            for (size_t x = boxes[b].x; x < boxes[b].x + boxes[b].w; x++)
                want += input[y * SIDE + x];
        assert_true(want < ((uint64_t)1 << 32));
        assert_int_equal(got, (uint32_t)want);
    }
    pixsum_ctx_free(ctx);
    check_histogram(&in, SIDE * SIDE);
}

int main(void)
{
    size_t need = (size_t)12 << 30;
    size_t avail = mem_available();
    if (avail < need) {
        printf("test_huge: skipped: %zu MiB available, %zu MiB needed\n", avail >> 20,
               need >> 20);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_long_row),
        cmocka_unit_test(test_square_over_2_31),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

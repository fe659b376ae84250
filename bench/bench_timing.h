/*
 * bench_timing.h - the clock and sample arithmetic the CPU-side benchmarks
 * share (`pixsum bench` in bench/cli_bench.c, bench/bench_hist002.c,
 * bench/store_patterns.c): a monotonic millisecond clock and the median of a
 * set of timings.
 */
#ifndef PIXSUM_BENCH_TIMING_H
#define PIXSUM_BENCH_TIMING_H

#include <stdlib.h>
#include <time.h>

/* Milliseconds on the monotonic clock. */
static inline double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* qsort comparison of doubles, ascending. */
static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts the n >= 1 samples in place (ascending) and returns their median. */
static inline double sort_median(double *samples, int n)
{
    qsort(samples, (size_t)n, sizeof *samples, cmp_double);
    return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

#endif /* PIXSUM_BENCH_TIMING_H */

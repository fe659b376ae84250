/*
 * bench_ihist.c - the integral histogram's queries timed three ways in one
 * process: one pixsum_ihist_query() per box (what a caller's loop does), and
 * pixsum_ihist_queries() with one thread and with T threads, against the
 * floor of writing the counts (a memset of the pre-touched output); and the
 * build of a new table and the rebuild in place (pixsum_ihist_rebuild(), a
 * video's next frame), with 1 and T threads, against the floor of writing the
 * table once.
 *
 *   bench_ihist [--size N] [--bins B] [--boxes M] [--max-box S] [--threads T]
 *               [--repeat R]
 *
 * A random u8 N x N image, M random boxes of 1..S pixels a side; median ms
 * of R repeats after one warm-up; every way's counts are compared with the
 * single queries'. Each query way starts after the same untimed write of a
 * table-sized buffer, so that none inherits cache lines of the one before.
 */
#include "bench_timing.h"

#include <pixsum.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t arg_value(int argc, char **argv, const char *name, size_t fallback)
{
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], name))
            return (size_t)strtoull(argv[i + 1], NULL, 10);
    return fallback;
}

static uint64_t lcg = 2026;
static size_t rnd_below(size_t n)
{
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return (size_t)((lcg >> 33) % n);
}

static void die(const char *what, int st)
{
    fprintf(stderr, "bench_ihist: %s: %s: %s\n", what, pixsum_strerror(st), pixsum_last_error());
    exit(1);
}

int main(int argc, char **argv)
{
    size_t size = arg_value(argc, argv, "--size", 1024), bins = arg_value(argc, argv, "--bins", 32);
    size_t n = arg_value(argc, argv, "--boxes", 100000);
    size_t max_box = arg_value(argc, argv, "--max-box", 64);
    int threads = (int)arg_value(argc, argv, "--threads", 2);
    int repeat = (int)arg_value(argc, argv, "--repeat", 9);
    if (size < 1 || bins < 1 || n < 1 || max_box < 1 || threads < 1 || repeat < 1 ||
        repeat > 99) {
        fprintf(stderr, "bench_ihist: sizes, counts and --repeat (1..99) must be positive\n");
        return 2;
    }
    if (max_box > size)
        max_box = size;
    uint8_t *img = malloc(size * size);
    pixsum_box *boxes = malloc(n * sizeof *boxes);
    if (!img || !boxes)
        die("malloc", PIXSUM_ERR_NO_MEMORY);
    for (size_t i = 0; i < size * size; i++)
        img[i] = (uint8_t)rnd_below(256);
    for (size_t i = 0; i < n; i++) {
        size_t w = 1 + rnd_below(max_box), h = 1 + rnd_below(max_box);
        boxes[i] = (pixsum_box){rnd_below(size - w + 1), rnd_below(size - h + 1), 0, w, h, 1};
    }
    pixsum_view v = pixsum_view_2d(img, PIXSUM_U8, size, size, 1, 0);
    pixsum_hist_spec spec = {0};
    spec.bins = bins;
    spec.lo = 0;
    spec.hi = 256;
    pixsum_ctx *one = pixsum_ctx_new(), *many = pixsum_ctx_new();
    if (!one || !many)
        die("pixsum_ctx_new", PIXSUM_ERR_NO_MEMORY);
    pixsum_ctx_set(one, PIXSUM_PARAM_THREADS, 1);
    pixsum_ctx_set(many, PIXSUM_PARAM_THREADS, threads);
    size_t table_bytes = 0;
    int st = pixsum_ihist_bytes(&v, &spec, &table_bytes);
    if (st)
        die("pixsum_ihist_bytes", st);
    size_t out_bytes = n * bins * sizeof(uint64_t);
    uint64_t *want = malloc(out_bytes), *got = malloc(out_bytes);
    char *fill = malloc(table_bytes);
    if (!want || !got || !fill)
        die("malloc", PIXSUM_ERR_NO_MEMORY);
    memset(fill, 1, table_bytes);
    memset(got, 1, out_bytes);

    enum { BUILD1, BUILDT, REBUILD1, REBUILDT, FILL, SINGLE, BATCH1, BATCHT, OUTFLOOR, WAYS };
    static const char *names[WAYS] = {
        "build, 1 thread", "build, T threads", "rebuild in place, 1 thread",
        "rebuild in place, T threads", "floor: table written once (memset)",
        "queries: pixsum_ihist_query per box", "queries: pixsum_ihist_queries, 1 thread",
        "queries: pixsum_ihist_queries, T threads", "floor: counts written once (memset)"};
    double t[WAYS][100];
    pixsum_ihist *ih = NULL;
    for (int r = 0; r <= repeat; r++) {
        for (int way = 0; way < WAYS; way++) {
            if (way >= SINGLE && way <= BATCHT)
                memset(fill, r & 1, table_bytes); /* each way starts with the table's
                                                   * lines evicted by the same writes */
            double t0 = now_ms();
            switch (way) {
            case BUILD1:
            case BUILDT:
                pixsum_ihist_free(ih);
                ih = NULL;
                t0 = now_ms();
                st = pixsum_ihist_new(way == BUILD1 ? one : many, &v, &spec, 0, &ih);
                if (st)
                    die("pixsum_ihist_new", st);
                break;
            case REBUILD1:
            case REBUILDT:
                st = pixsum_ihist_rebuild(way == REBUILD1 ? one : many, ih, &v, &spec, 0);
                if (st)
                    die("pixsum_ihist_rebuild", st);
                break;
            case FILL:
                memset(fill, r & 1, table_bytes);
                break;
            case SINGLE:
                for (size_t i = 0; i < n; i++)
                    if ((st = pixsum_ihist_query(ih, boxes[i].x, boxes[i].y, boxes[i].w,
                                                 boxes[i].h, want + i * bins)))
                        die("pixsum_ihist_query", st);
                break;
            case BATCH1:
            case BATCHT:
                if ((st = pixsum_ihist_queries(way == BATCH1 ? one : many, ih, boxes, n, got)))
                    die("pixsum_ihist_queries", st);
                break;
            case OUTFLOOR:
                memset(got, r & 1, out_bytes);
                break;
            }
            t[way][r] = now_ms() - t0;
            if ((way == BATCH1 || way == BATCHT) && memcmp(got, want, out_bytes)) {
                fprintf(stderr, "bench_ihist: %s differs from the single queries\n", names[way]);
                return 1;
            }
        }
    }
    printf("bench_ihist: u8 %zux%zu, %zu bins, table %.1f MB; %zu boxes up to %zux%zu, counts "
           "%.1f MB; T = %d; median of %d\n",
           size, size, bins, table_bytes / 1e6, n, max_box, max_box, out_bytes / 1e6, threads,
           repeat);
    double med[WAYS];
    for (int way = 0; way < WAYS; way++) {
        med[way] = sort_median(t[way] + 1, repeat); /* repeat 0 is the warm-up */
        int query = way >= SINGLE && way <= BATCHT;
        printf("%-44s %9.3f ms", names[way], med[way]);
        if (query)
            printf("  %7.1f ns/box  %.2fx the per-box loop", med[way] * 1e6 / (double)n,
                   med[SINGLE] / med[way]);
        printf("\n");
    }
    printf("csv,ihist,%zu,%zu,%zu,%d", size, bins, n, threads);
    for (int way = 0; way < WAYS; way++)
        printf(",%.4f", med[way]);
    printf("\n");
    pixsum_ihist_free(ih);
    pixsum_ctx_free(one);
    pixsum_ctx_free(many);
    free(img);
    free(boxes);
    free(want);
    free(got);
    free(fill);
    return 0;
}

/*
 * bench_hist002.c - reproduces paper 002's Tables 1-4 (GPU histograms by
 * depth buffer + occlusion queries) on today's hardware:
 *
 *   Table 1 / 2  image sizes 64^2 .. 1024^2, 256 bins, image A / image B
 *   Table 3 / 4  1024^2, bins 256 .. 16, image A / image B
 *
 * Image A stands for the paper's X-ray image (a natural-looking image: smooth
 * anatomy-like shading over the whole frame with texture and noise, a broad
 * histogram); image B for its teapot image (a shaded object on a flat dark
 * background: a histogram with one tall peak). Both are 8-bit, synthetic and
 * seeded, so every run sees the same pixels. Methods: gl.depth (the paper's
 * method), gl.perbin (the per-bin occlusion-query method it compares with,
 * "NVIDIA's method"), the CPU on one thread like the paper's (hist.scalar =
 * the paper's plain loop, auto = the library's fastest single-thread method)
 * and cuda.hist where the build and machine have it (host image in, counts
 * out: the upload is part of every method's time, as in pixsum_histogram()).
 * Each case is first checked bit-exact against hist.scalar; then timed
 * (warm-up, then at least --min-runs runs and until --max-seconds; median and
 * fastest reported). The paper's own figures (GeForce 8800 GTX, dual Xeon
 * 2.8 GHz) are printed beside ours.
 *
 * usage: bench_hist002 [--tables 1,2,3,4] [--sizes LIST] [--bins LIST]
 *                      [--methods LIST] [--min-runs N] [--max-seconds S]
 *                      [--json FILE]
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "pixsum.h"
#include "bench_timing.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXL 16

/* Paper 002's figures (ms): our method (depth), NVIDIA's (per-bin), CPU. */
typedef struct paper_row {
    int table;
    int key; /* size (tables 1-2) or bins (3-4) */
    double depth, perbin, cpu;
} paper_row;

static const paper_row paper[] = {
    {1, 1024, 6.0, 70.7, 8.3}, {1, 512, 1.9, 16.9, 2.1}, {1, 256, 1.5, 6.1, 0.5},
    {1, 128, 1.4, 4.5, 0.13},  {1, 64, 1.4, 4.4, 0.04},  {2, 1024, 8.0, 72.5, 8.4},
    {2, 512, 2.5, 17.5, 2.1},  {2, 256, 1.5, 6.1, 0.5},  {2, 128, 1.4, 4.5, 0.15},
    {2, 64, 1.5, 4.4, 0.04},   {3, 256, 6.0, 70.7, 8.3}, {3, 128, 3.4, 36.0, 8.3},
    {3, 64, 2.1, 18.7, 8.4},   {3, 32, 1.5, 10.0, 8.3},  {3, 16, 1.1, 5.7, 8.3},
    {4, 256, 8.0, 72.5, 8.4},  {4, 128, 4.4, 37.1, 8.4}, {4, 64, 2.7, 19.2, 8.3},
    {4, 32, 1.8, 10.3, 8.3},   {4, 16, 1.3, 5.8, 8.3},
};

static const paper_row *paper_find(int table, int key)
{
    for (size_t i = 0; i < sizeof paper / sizeof paper[0]; i++)
        if (paper[i].table == table && paper[i].key == key)
            return &paper[i];
    return NULL;
}

/* ---- images ------------------------------------------------------------ */

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double unit(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (double)((rng * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

static uint8_t clamp8(double v)
{
    return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v;
}

/* Image A (X-ray-like): bright smooth body with rib-like bands and noise. */
static void make_xray(uint8_t *img, size_t n)
{
    rng = 0x9E3779B97F4A7C15ull;
    for (size_t y = 0; y < n; y++)
        for (size_t x = 0; x < n; x++) {
            double u = (double)x / (double)n - 0.5, v = (double)y / (double)n - 0.5;
            double body = exp(-(u * u * 3.0 + v * v * 1.5));
            double ribs = 0.15 * sin(v * 60.0 + 8.0 * u * u) * (fabs(u) > 0.08 ? 1.0 : 0.3);
            double spine = fabs(u) < 0.05 ? 0.25 : 0.0;
            double s = 30.0 + 190.0 * body * (0.8 + ribs) + 60.0 * spine * body;
            img[y * n + x] = clamp8(s + (unit() - 0.5) * 24.0);
        }
}

/* Image B (teapot-like): a shaded ellipsoid with a handle on a dark flat
 * background. */
static void make_teapot(uint8_t *img, size_t n)
{
    rng = 0xD1B54A32D192ED03ull;
    for (size_t y = 0; y < n; y++)
        for (size_t x = 0; x < n; x++) {
            double u = (double)x / (double)n - 0.45, v = (double)y / (double)n - 0.55;
            double r2 = (u * u) / 0.09 + (v * v) / 0.05;
            double hu = u - 0.33, ring = sqrt(hu * hu / 0.6 + v * v) - 0.12;
            double s = 12.0;
            if (r2 < 1.0) {
                double nz = sqrt(1.0 - r2); /* Lambert shading, light upper left */
                s = 40.0 + 200.0 * fmax(0.0, 0.5 * nz - 0.4 * u / 0.3 - 0.4 * v / 0.22);
            } else if (fabs(ring) < 0.02) {
                s = 90.0 + 80.0 * (0.02 - fabs(ring)) / 0.02;
            }
            img[y * n + x] = clamp8(s + (unit() - 0.5) * 4.0);
        }
}

/* ---- timing ------------------------------------------------------------ */

typedef struct result {
    int status;        /* PIXSUM_OK, or why it did not run */
    int exact;         /* counts equal hist.scalar's */
    double median_ms, min_ms;
    int runs;
} result;

static result run_method(const char *method, const pixsum_view *v, size_t bins,
                         const uint64_t *ref, int min_runs, double max_seconds)
{
    result r = {0};
    pixsum_ctx *ctx = pixsum_ctx_new();
    uint64_t *counts = calloc(bins, sizeof *counts);
    pixsum_hist_spec spec = {0};
    spec.bins = bins;
    spec.lo = 0;
    spec.hi = 256;
    if (!ctx || !counts) {
        r.status = PIXSUM_ERR_NO_MEMORY;
        goto out;
    }
    /* one CPU thread, like the paper's CPU method (GL and CUDA ignore it) */
    pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, 1);
    r.status = pixsum_ctx_set_method(ctx, method);
    if (r.status == PIXSUM_OK) /* the check run doubles as the warm-up */
        r.status = pixsum_histogram(ctx, v, &spec, counts, bins, NULL);
    if (r.status != PIXSUM_OK)
        goto out;
    r.exact = memcmp(counts, ref, bins * sizeof *counts) == 0;
    double samples[256];
    double start = now_ms();
    while (r.runs < 256) {
        double t0 = now_ms();
        if (pixsum_histogram(ctx, v, &spec, counts, bins, NULL) != PIXSUM_OK) {
            r.status = PIXSUM_ERR_INTERNAL;
            goto out;
        }
        samples[r.runs++] = now_ms() - t0;
        if (r.runs >= min_runs && now_ms() - start > max_seconds * 1e3)
            break;
    }
    r.median_ms = sort_median(samples, r.runs);
    r.min_ms = samples[0];
out:
    free(counts);
    pixsum_ctx_free(ctx);
    return r;
}

/* ---- options ----------------------------------------------------------- */

static int split(char *s, char **out)
{
    int n = 0;
    for (char *t = strtok(s, ","); t && n < MAXL; t = strtok(NULL, ","))
        out[n++] = t;
    return n;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_hist002 [--tables 1,2,3,4] [--sizes 64,128,256,512,1024]\n"
               "                     [--bins 256,128,64,32,16] [--methods LIST]\n"
               "                     [--min-runs N] [--max-seconds S] [--json FILE]\n"
               "methods default: gl.depth,gl.perbin,hist.scalar,auto,cuda.hist\n");
}

int main(int argc, char **argv)
{
    char tables_s[64] = "1,2,3,4", sizes_s[128] = "1024,512,256,128,64",
         bins_s[128] = "256,128,64,32,16",
         methods_s[256] = "gl.depth,gl.perbin,hist.scalar,auto,cuda.hist";
    const char *json_path = NULL;
    int min_runs = 5;
    double max_seconds = 1.0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (!val) {
            usage(stderr);
            return 2;
        }
        i++;
        if (strcmp(a, "--tables") == 0)
            snprintf(tables_s, sizeof tables_s, "%s", val);
        else if (strcmp(a, "--sizes") == 0)
            snprintf(sizes_s, sizeof sizes_s, "%s", val);
        else if (strcmp(a, "--bins") == 0)
            snprintf(bins_s, sizeof bins_s, "%s", val);
        else if (strcmp(a, "--methods") == 0)
            snprintf(methods_s, sizeof methods_s, "%s", val);
        else if (strcmp(a, "--min-runs") == 0)
            min_runs = atoi(val) > 0 ? atoi(val) : 1;
        else if (strcmp(a, "--max-seconds") == 0)
            max_seconds = atof(val);
        else if (strcmp(a, "--json") == 0)
            json_path = val;
        else {
            usage(stderr);
            return 2;
        }
    }
    char *tables[MAXL], *sizes[MAXL], *binsl[MAXL], *methods[MAXL];
    int nt = split(tables_s, tables), ns = split(sizes_s, sizes), nb = split(bins_s, binsl),
        nm = split(methods_s, methods);

    /* which methods can run here */
    int usable[MAXL];
    for (int m = 0; m < nm; m++) {
        int id = pixsum_method_find(methods[m]);
        const pixsum_method_info *info = id > 0 ? pixsum_method_get(id) : NULL;
        usable[m] = id == 0 || (info && info->available);
        if (!usable[m])
            printf("# %s: %s - skipped\n", methods[m],
                   id < 0 ? "not in this build" : "not available on this machine");
    }
    /* create the GL context (and print PIXSUM_GL_VERBOSE's line) before the tables */
    {
        uint8_t px = 0;
        uint64_t c1[1];
        pixsum_view one = pixsum_view_2d(&px, PIXSUM_U8, 1, 1, 1, 0);
        pixsum_hist_spec s1 = {1, 0, 256, NULL};
        pixsum_ctx *wc = pixsum_ctx_new();
        for (int m = 0; m < nm; m++)
            if (usable[m] && pixsum_ctx_set_method(wc, methods[m]) == PIXSUM_OK)
                pixsum_histogram(wc, &one, &s1, c1, 1, NULL);
        pixsum_ctx_free(wc);
        fflush(stderr);
    }
    FILE *json = NULL;
    if (json_path && !(json = fopen(json_path, "w"))) {
        perror(json_path);
        return 1;
    }
    if (json)
        fprintf(json, "[");
    int first_rec = 1, failures = 0;
    printf("# paper 002 reproduction (pixsum %s); times in ms, median of >= %d runs "
           "(fastest in the JSON); 'paper' = paper 002's figure (GeForce 8800 GTX / "
           "dual Xeon 2.8 GHz); ! = counts differ from hist.scalar\n",
           pixsum_version(), min_runs);
    for (int ti = 0; ti < nt; ti++) {
        int table = atoi(tables[ti]);
        if (table < 1 || table > 4) {
            fprintf(stderr, "bench_hist002: no table %s (1-4)\n", tables[ti]);
            return 2;
        }
        int by_size = table <= 2, image_b = table % 2 == 0;
        printf("\n## Table %d: %s, %s\n", table, image_b ? "image B (teapot-like)"
                                                         : "image A (X-ray-like)",
               by_size ? "256 bins, size varies" : "1024x1024, bins vary");
        printf("%-10s", by_size ? "size" : "bins");
        for (int m = 0; m < nm; m++)
            if (usable[m])
                printf(" %12s", methods[m]);
        printf(" | %8s %8s %8s\n", "paper:dp", "paper:pb", "paper:cpu");
        int nrows = by_size ? ns : nb;
        for (int ri = 0; ri < nrows; ri++) {
            size_t n = by_size ? (size_t)atol(sizes[ri]) : 1024;
            size_t bins = by_size ? 256 : (size_t)atol(binsl[ri]);
            if (n < 1 || bins < 1) {
                fprintf(stderr, "bench_hist002: bad size or bins\n");
                return 2;
            }
            uint8_t *img = malloc(n * n);
            uint64_t *ref = calloc(bins, sizeof *ref);
            if (!img || !ref) {
                fprintf(stderr, "bench_hist002: out of memory\n");
                return 1;
            }
            if (image_b)
                make_teapot(img, n);
            else
                make_xray(img, n);
            pixsum_view v = pixsum_view_2d(img, PIXSUM_U8, n, n, 1, 0);
            pixsum_hist_spec spec = {0};
            spec.bins = bins;
            spec.lo = 0;
            spec.hi = 256;
            pixsum_ctx *rc = pixsum_ctx_new();
            pixsum_ctx_set_method(rc, "hist.scalar");
            if (pixsum_histogram(rc, &v, &spec, ref, bins, NULL) != PIXSUM_OK) {
                fprintf(stderr, "bench_hist002: reference failed: %s\n", pixsum_last_error());
                return 1;
            }
            pixsum_ctx_free(rc);
            char key[32];
            snprintf(key, sizeof key, by_size ? "%zux%zu" : "%zu", by_size ? n : bins, n);
            printf("%-10s", key);
            fflush(stdout);
            for (int m = 0; m < nm; m++) {
                if (!usable[m])
                    continue;
                result r = run_method(methods[m], &v, bins, ref, min_runs, max_seconds);
                if (r.status != PIXSUM_OK) {
                    printf(" %12s", "-");
                    fprintf(stderr, "bench_hist002: %s: %s\n", methods[m],
                            pixsum_last_error());
                } else {
                    printf(" %11.3f%s", r.median_ms, r.exact ? " " : "!");
                    failures += !r.exact;
                }
                fflush(stdout);
                if (json) {
                    fprintf(json,
                            "%s\n  {\"table\": %d, \"image\": \"%s\", \"width\": %zu, "
                            "\"height\": %zu, \"bins\": %zu, \"method\": \"%s\", "
                            "\"status\": %d, \"exact\": %s, \"median_ms\": %.6f, "
                            "\"min_ms\": %.6f, \"runs\": %d}",
                            first_rec ? "" : ",", table, image_b ? "teapot" : "xray", n, n,
                            bins, methods[m], r.status, r.exact ? "true" : "false",
                            r.median_ms, r.min_ms, r.runs);
                    first_rec = 0;
                }
            }
            const paper_row *p = paper_find(table, by_size ? (int)n : (int)bins);
            if (p)
                printf(" | %8.2f %8.2f %8.2f\n", p->depth, p->perbin, p->cpu);
            else
                printf(" | %8s %8s %8s\n", "-", "-", "-");
            free(img);
            free(ref);
        }
    }
    if (json) {
        fprintf(json, "\n]\n");
        fclose(json);
    }
    return failures ? 1 : 0;
}

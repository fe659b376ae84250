/*
 * cmd_demo.c - `pixsum demo`, the job `make run` runs: on a built-in sample
 * image (generated in memory, deterministic: gradients, shapes and noise) it
 * computes the integral image, checks its corners and a few box sums, means
 * and variances against direct sums, times every available integral method
 * (and histogram method) on it, summarises its histogram, and writes the
 * sample, its integral, the histogram (CSV) and a gnuplot plot of it into an
 * output directory.
 */
#include "cli_util.h"
#include "commands.h"
#include "image_io.h"
#include "text_out.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const CMD = "demo";

/* ---- the sample image ------------------------------------------------- */

static uint64_t demo_rng(uint64_t *s)
{
    /* splitmix64: deterministic on every platform */
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Fills an n x n u8 image: a diagonal gradient with soft waves (sky), a bright
 * disc (sun), a dark rectangle (building), a mid-grey ring, and noise. */
static void make_sample(uint8_t *img, size_t n)
{
    uint64_t seed = 2024;
    const double pi = 3.14159265358979323846;
    for (size_t y = 0; y < n; y++)
        for (size_t x = 0; x < n; x++) {
            double u = (double)x / (double)n, v = (double)y / (double)n;
            double g = 40.0 + 120.0 * (0.6 * u + 0.4 * v) + 18.0 * sin(2 * pi * 3 * v) *
                                                                cos(2 * pi * 2 * u);
            double dx = u - 0.70, dy = v - 0.28;
            double r = sqrt(dx * dx + dy * dy);
            if (r < 0.12)
                g = 235.0 - 60.0 * r; /* disc, slightly shaded */
            if (u > 0.12 && u < 0.38 && v > 0.45 && v < 0.92)
                g = 25.0 + 10.0 * ((x / 24 + y / 32) % 2); /* building with windows */
            double rx = u - 0.62, ry = v - 0.72;
            double rr = sqrt(rx * rx + ry * ry);
            if (rr > 0.10 && rr < 0.14)
                g = 128.0;
            double noise = (double)(demo_rng(&seed) % 25) - 12.0;
            g += noise;
            img[y * n + x] = (uint8_t)(g < 0 ? 0 : g > 255 ? 255 : g + 0.5);
        }
}

/* ---- helpers ---------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t, size_t n)
{
    qsort(t, n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* mkdir -p */
static int make_dirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return -1;
            buf[i] = c;
        }
    }
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

/* Direct double-loop sum of a box of a 1-channel u8 image. */
static void direct_box(const uint8_t *img, size_t n, const pixsum_box *b, uint64_t *sum,
                       uint64_t *sumsq)
{
    uint64_t s = 0, q = 0;
    for (size_t y = b->y; y < b->y + b->h; y++)
        for (size_t x = b->x; x < b->x + b->w; x++) {
            uint64_t v = img[y * n + x];
            s += v;
            q += v * v;
        }
    *sum = s;
    *sumsq = q;
}

/* ---- sections of the demo ---------------------------------------------- */

typedef struct demo_args {
    const char *out_dir;
    size_t size;
    size_t runs;
    int files;
    cli_common common;
} demo_args;

static int check_boxes(pixsum_ctx *ctx, const uint8_t *img, size_t n, const pixsum_view *table,
                       const pixsum_view *sq, int *failures)
{
    const pixsum_box boxes[] = {
        {.x = 0, .y = 0, .w = n, .h = n, .d = 1},                       /* whole image */
        {.x = 0, .y = 0, .w = 1, .h = 1, .d = 1},                       /* one pixel */
        {.x = n * 58 / 100, .y = n * 16 / 100, .w = n / 5, .h = n / 5, .d = 1}, /* sun */
        {.x = n * 15 / 100, .y = n / 2, .w = n / 5, .h = n / 3, .d = 1},  /* building */
        {.x = n / 3, .y = n / 7, .w = n / 2 + 1, .h = 3, .d = 1},        /* thin strip */
        {.x = n - 17, .y = n - 9, .w = 17, .h = 9, .d = 1},             /* corner */
    };
    const char *names[] = {"whole image", "one pixel", "sun", "building", "thin strip",
                           "bottom-right corner"};
    size_t nb = sizeof boxes / sizeof boxes[0];
    printf("\nBox queries (4 table reads each), checked against direct sums:\n");
    printf("  %-20s %-22s %14s %10s %12s  %s\n", "box", "x,y  w x h", "sum", "mean",
           "variance", "check");
    for (size_t i = 0; i < nb; i++) {
        uint32_t s32;
        double mean, var;
        int st = pixsum_box_sum(ctx, table, &boxes[i], &s32);
        if (st == PIXSUM_OK)
            st = pixsum_box_stats(ctx, table, sq, &boxes[i], 1, &mean, &var);
        if (st != PIXSUM_OK)
            return cli_lib_error(CMD, "box query", st);
        uint64_t ds, dq;
        direct_box(img, n, &boxes[i], &ds, &dq);
        double area = (double)(boxes[i].w * boxes[i].h);
        double dmean = (double)ds / area;
        double dvar = (double)dq / area - dmean * dmean;
        if (dvar < 0)
            dvar = 0;
        int ok = s32 == ds && fabs(mean - dmean) <= 1e-9 * (1 + dmean) &&
                 fabs(var - dvar) <= 1e-6 * (1 + dvar);
        char where[48];
        snprintf(where, sizeof where, "%zu,%zu  %zu x %zu", boxes[i].x, boxes[i].y, boxes[i].w,
                 boxes[i].h);
        printf("  %-20s %-22s %14u %10.4f %12.4f  %s\n", names[i], where, s32, mean, var,
               ok ? "ok" : "MISMATCH");
        if (!ok)
            (*failures)++;
    }
    return 0;
}

static int time_integral_methods(const demo_args *a, const pixsum_view *in,
                                 const pixsum_view *ref, int *failures)
{
    size_t n = in->width, count;
    const pixsum_method_info *m = pixsum_methods(&count);
    size_t bytes = pixsum_packed_bytes(PIXSUM_U32, n, n, 1, 1);
    uint32_t *out = malloc(bytes);
    double *t = malloc(a->runs * sizeof *t);
    if (!out || !t) {
        free(out);
        free(t);
        return cli_error(CMD, "out of memory");
    }
    pixsum_view ov = pixsum_view_2d(out, PIXSUM_U32, n, n, 1, 0);
    printf("\nIntegral image u8 -> u32, %zu x %zu, median of %zu runs (best in brackets):\n",
           n, n, a->runs);
    printf("  %-18s %-7s %10s %10s %9s  %s\n", "method", "backend", "median ms", "(best)",
           "px/ns", "result");
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++) {
        if (!m[i].available ||
            !pixsum_method_supports(m[i].id, PIXSUM_OP_INTEGRAL, PIXSUM_U8, PIXSUM_U32))
            continue;
        pixsum_ctx *ctx = pixsum_ctx_new();
        if (!ctx) {
            rc = cli_error(CMD, "out of memory");
            break;
        }
        pixsum_ctx_set(ctx, PIXSUM_PARAM_METHOD, m[i].id);
        if (a->common.threads >= 0)
            pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, a->common.threads);
        memset(out, 0xAB, bytes);
        int st = pixsum_integral(ctx, in, &ov); /* warm-up, and the checked result */
        if (st != PIXSUM_OK) {
            printf("  %-18s %-7s %s: %s\n", m[i].name, "", pixsum_strerror(st),
                   pixsum_last_error());
            pixsum_ctx_free(ctx);
            continue;
        }
        int same = memcmp(out, ref->data, bytes) == 0;
        for (size_t r = 0; r < a->runs; r++) {
            double t0 = cli_now();
            pixsum_integral(ctx, in, &ov);
            t[r] = cli_now() - t0;
        }
        pixsum_ctx_free(ctx);
        double best = t[0];
        for (size_t r = 1; r < a->runs; r++)
            best = t[r] < best ? t[r] : best;
        double med = median(t, a->runs);
        const char *backend = m[i].backend == PIXSUM_BACKEND_OMP    ? "omp"
                              : m[i].backend == PIXSUM_BACKEND_CUDA ? "cuda"
                              : m[i].backend == PIXSUM_BACKEND_GL   ? "gl"
                                                                    : "cpu";
        printf("  %-18s %-7s %10.3f %10.3f %9.2f  %s\n", m[i].name, backend, med * 1e3,
               best * 1e3, (double)(n * n) / (med * 1e9),
               same ? "bit-exact" : "DIFFERS from the reference");
        if (!same)
            (*failures)++;
    }
    printf("  (CUDA methods, when listed, are timed through host memory: copies included)\n");
    free(out);
    free(t);
    return rc;
}

static int histogram_section(const demo_args *a, const pixsum_view *in, uint64_t *counts,
                             int *failures)
{
    size_t n = in->width, count;
    pixsum_hist_info info;
    pixsum_ctx *ctx = pixsum_ctx_new();
    if (!ctx)
        return cli_error(CMD, "out of memory");
    int st = pixsum_histogram(ctx, in, NULL, counts, 256, &info);
    pixsum_ctx_free(ctx);
    if (st != PIXSUM_OK)
        return cli_lib_error(CMD, "histogram", st);
    size_t lo = 0, hi = 255, mode = 0;
    while (lo < 255 && counts[lo] == 0)
        lo++;
    while (hi > 0 && counts[hi] == 0)
        hi--;
    double sum = 0;
    uint64_t acc = 0;
    size_t med = 0;
    int med_found = 0;
    for (size_t i = 0; i < 256; i++) {
        sum += (double)i * (double)counts[i];
        if (counts[i] > counts[mode])
            mode = i;
        acc += counts[i];
        if (!med_found && acc * 2 >= info.in_range[0]) {
            med = i;
            med_found = 1;
        }
    }
    size_t otsu = 0;
    int ost = pixsum_otsu(counts, 256, &otsu);
    printf("\nHistogram (256 bins over [0, 256)):\n");
    printf("  pixels %llu, values %zu..%zu, mean %.3f, median %zu, mode %zu (%llu pixels)",
           (unsigned long long)info.pixels, lo, hi, sum / (double)info.in_range[0], med, mode,
           (unsigned long long)counts[mode]);
    if (ost == PIXSUM_OK)
        printf(", Otsu threshold %zu", otsu);
    printf("\n");

    /* Every available histogram method: same counts, and its time. */
    const pixsum_method_info *m = pixsum_methods(&count);
    uint64_t other[256];
    double *t = malloc(a->runs * sizeof *t);
    if (!t)
        return cli_error(CMD, "out of memory");
    printf("  %-18s %-7s %10s %10s %9s  %s\n", "method", "backend", "median ms", "(best)",
           "px/ns", "counts");
    for (size_t i = 0; i < count; i++) {
        if (!m[i].available ||
            !pixsum_method_supports(m[i].id, PIXSUM_OP_HISTOGRAM, PIXSUM_U8, PIXSUM_TYPE_NONE))
            continue;
        pixsum_ctx *c = pixsum_ctx_new();
        if (!c)
            break;
        pixsum_ctx_set(c, PIXSUM_PARAM_METHOD, m[i].id);
        if (a->common.threads >= 0)
            pixsum_ctx_set(c, PIXSUM_PARAM_THREADS, a->common.threads);
        st = pixsum_histogram(c, in, NULL, other, 256, NULL);
        if (st != PIXSUM_OK) {
            printf("  %-18s %s: %s\n", m[i].name, pixsum_strerror(st), pixsum_last_error());
            pixsum_ctx_free(c);
            continue;
        }
        int same = memcmp(other, counts, sizeof other) == 0;
        for (size_t r = 0; r < a->runs; r++) {
            double t0 = cli_now();
            pixsum_histogram(c, in, NULL, other, 256, NULL);
            t[r] = cli_now() - t0;
        }
        pixsum_ctx_free(c);
        double best = t[0];
        for (size_t r = 1; r < a->runs; r++)
            best = t[r] < best ? t[r] : best;
        double md = median(t, a->runs);
        printf("  %-18s %-7s %10.3f %10.3f %9.2f  %s\n", m[i].name,
               m[i].backend == PIXSUM_BACKEND_OMP    ? "omp"
               : m[i].backend == PIXSUM_BACKEND_CUDA ? "cuda"
               : m[i].backend == PIXSUM_BACKEND_GL   ? "gl"
                                                     : "cpu",
               md * 1e3, best * 1e3, (double)(n * n) / (md * 1e9),
               same ? "identical" : "DIFFER");
        if (!same)
            (*failures)++;
    }
    free(t);
    return 0;
}

/* Writes the histogram as CSV (bin,lo,hi,count); the plot's data callback. */
static void csv_rows(FILE *f, void *user)
{
    const uint64_t *counts = user;
    fprintf(f, "bin,lo,hi,count\n");
    for (size_t i = 0; i < 256; i++)
        fprintf(f, "%zu,%zu,%zu,%llu\n", i, i, i + 1, (unsigned long long)counts[i]);
}

/* Writes the four demo files into dir: each is finished first, then all are
 * put in place together (the plot only when gnuplot is there). */
static int write_files(const char *dir, const pixsum_view *in, const pixsum_view *tv,
                       uint64_t *counts, size_t n)
{
    char sample[4096], integral[4096], csv[4096], png[4096], err[600];
    const char *ext = strstr(pxio_formats_supported(), "png") ? "png" : "pgm";
    snprintf(sample, sizeof sample, "%s/sample.%s", dir, ext);
    snprintf(integral, sizeof integral, "%s/integral.npy", dir);
    snprintf(csv, sizeof csv, "%s/histogram.csv", dir);
    snprintf(png, sizeof png, "%s/histogram.png", dir);
    pxio_writer *ws = NULL, *wi = NULL;
    text_out t = {0};
    out_file plot = {0};
    int rc = 0, drawn = 0;
    if (pxio_write_staged(sample, in, NULL, &ws, err, sizeof err) != 0 ||
        pxio_write_staged(integral, tv, NULL, &wi, err, sizeof err) != 0) {
        rc = cli_error(CMD, "%s", err);
        goto done;
    }
    if ((rc = text_out_open(&t, CMD, csv)) != 0)
        goto done;
    csv_rows(t.file, counts);
    if ((rc = text_out_finish(&t, CMD)) != 0)
        goto done;
    if ((rc = plot_open(&plot, CMD, png)) != 0)
        goto done;
    char title[128];
    snprintf(title, sizeof title, "pixsum demo: histogram of the %zux%zu sample (256 bins)", n,
             n);
    int prc = plot_histogram(CMD, &plot, title, "pixels", 2, 4, 0, 256, csv_rows, counts);
    if (prc == 1)
        out_file_abort(&plot); /* no gnuplot: no plot, the rest is written */
    else if ((rc = prc) != 0)
        goto done;
    else
        drawn = 1;
    out_file *outs[4] = {pxio_writer_out(ws), pxio_writer_out(wi), &t.out, &plot};
    if (out_file_commit_all(outs, 4, err, sizeof err) != 0) {
        rc = cli_error(CMD, "%s", err);
        goto done;
    }
    printf("\nFiles in %s:\n", dir);
    printf("  %s  the sample image\n", sample);
    printf("  %s  its integral image (u32)\n", integral);
    printf("  %s  its histogram\n", csv);
    if (drawn)
        printf("  %s  the histogram plotted by gnuplot\n", png);
done:
    pxio_writer_abort(ws);
    pxio_writer_abort(wi);
    text_out_abort(&t);
    out_file_abort(&plot);
    return rc;
}

static void demo_usage(FILE *f)
{
    fprintf(f,
            "usage: pixsum demo [--out DIR | --no-files] [--size N] [--runs R] [--threads N]\n"
            "                   [--method NAME]\n"
            "\n"
            "The demonstration `make run` runs: builds a %s sample image in memory\n"
            "(deterministic), computes its integral image, checks corners and box\n"
            "sums/means/variances against direct sums, times every available integral\n"
            "and histogram method on it (median of R runs), summarises its histogram,\n"
            "and writes sample.png (or .pgm), integral.npy, histogram.csv and, with\n"
            "gnuplot, histogram.png into DIR.\n"
            "\n"
            "  --out DIR    output directory (default out/demo; created if missing)\n"
            "  --size N     sample size N x N (default 1024)\n"
            "  --runs R     timed runs per method (default 15)\n"
            "  --no-files   print only, write nothing\n"
            "  --method M   method of the reference integral and squared tables (default\n"
            "               auto; every method is timed anyway)\n"
            "Exit status 1 if any check fails.\n",
            "1024 x 1024 u8");
}

int cmd_demo(int argc, char **argv)
{
    demo_args a = {.out_dir = "out/demo", .size = 1024, .runs = 15, .files = 1};
    /* its reference table and squared table (u8 -> u32/u64) come from the
     * context's method; the types are the demo's own: no --type */
    cli_common_init(&a.common, PIXSUM_OP_INTEGRAL_SQ,
                    CLI_TAKES_METHOD | CLI_TAKES_THREADS | CLI_TAKES_DEVICE);
    int out_set = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int m;
        if (cli_is_help(argv[i])) {
            demo_usage(stdout);
            return CLI_EXIT_OK;
        }
        if ((m = cli_parse_common(CMD, argc, argv, &i, &a.common)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
        } else if ((m = cli_match(CMD, argc, argv, &i, "--out", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            a.out_dir = v;
            out_set = 1;
        } else if ((m = cli_match(CMD, argc, argv, &i, "--size", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (cli_parse_size(v, &a.size) != 0 || a.size < 32 || a.size > 16384)
                return cli_usage_error(CMD, "--size takes 32..16384, not '%s'", v);
        } else if ((m = cli_match(CMD, argc, argv, &i, "--runs", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (cli_parse_size(v, &a.runs) != 0 || a.runs < 1 || a.runs > 10000)
                return cli_usage_error(CMD, "--runs takes 1..10000, not '%s'", v);
        } else if (!strcmp(argv[i], "--no-files")) {
            a.files = 0;
        } else {
            return cli_usage_error(CMD, "unknown argument '%s'", argv[i]);
        }
    }
    if (out_set && !a.files)
        return cli_usage_error(CMD, "--out has no effect with --no-files (nothing is written)");
    size_t n = a.size;
    uint8_t *img = malloc(n * n);
    uint32_t *table = malloc(n * n * sizeof *table);
    uint64_t *sqt = malloc(n * n * sizeof *sqt);
    if (!img || !table || !sqt) {
        free(img);
        free(table);
        free(sqt);
        return cli_error(CMD, "out of memory for a %zu x %zu sample", n, n);
    }
    int rc = 0, failures = 0;
    make_sample(img, n);
    pixsum_view in = pixsum_view_2d(img, PIXSUM_U8, n, n, 1, 0);
    pixsum_view tv = pixsum_view_2d(table, PIXSUM_U32, n, n, 1, 0);
    pixsum_view sv = pixsum_view_2d(sqt, PIXSUM_U64, n, n, 1, 0);
    pixsum_ctx *ctx = pixsum_ctx_new();
    if (!ctx) {
        rc = cli_error(CMD, "out of memory");
        goto done;
    }
    if ((rc = cli_apply_common(CMD, &a.common, ctx)) != 0)
        goto done;

    if (a.files && make_dirs(a.out_dir) != 0) {
        rc = cli_error(CMD, "%s: cannot create the output directory: %s", a.out_dir,
                       strerror(errno));
        goto done;
    }
    printf("pixsum %s demo: built-in %zu x %zu u8 sample (gradients, shapes, noise)\n",
           pixsum_version(), n, n);
    int st = pixsum_integral_sq(ctx, &in, &tv, &sv);
    if (st != PIXSUM_OK) {
        rc = cli_lib_error(CMD, "integral", st);
        goto done;
    }
    uint64_t direct = 0;
    for (size_t k = 0; k < n * n; k++)
        direct += img[k];
    printf("\nIntegral image (inclusive, u32; I(x,y) = sum of pixels with u<=x, v<=y):\n");
    char label[4][48];
    snprintf(label[0], sizeof label[0], "I(0,0)");
    snprintf(label[1], sizeof label[1], "I(%zu,0)", n - 1);
    snprintf(label[2], sizeof label[2], "I(0,%zu)", n - 1);
    snprintf(label[3], sizeof label[3], "I(%zu,%zu)", n - 1, n - 1);
    printf("  %-14s = %-11u (the first pixel: %u)\n", label[0], table[0], img[0]);
    printf("  %-14s = %u\n", label[1], table[n - 1]);
    printf("  %-14s = %u\n", label[2], table[(n - 1) * n]);
    printf("  %-14s = %-11u direct sum of all pixels = %llu  %s\n", label[3], table[n * n - 1],
           (unsigned long long)direct, table[n * n - 1] == direct ? "ok" : "MISMATCH");
    if (table[n * n - 1] != direct || table[0] != img[0])
        failures++;

    if ((rc = check_boxes(ctx, img, n, &tv, &sv, &failures)) != 0)
        goto done;
    if ((rc = time_integral_methods(&a, &in, &tv, &failures)) != 0)
        goto done;
    uint64_t counts[256];
    if ((rc = histogram_section(&a, &in, counts, &failures)) != 0)
        goto done;

    if (a.files && (rc = write_files(a.out_dir, &in, &tv, counts, n)) != 0)
        goto done;
    if (failures) {
        rc = cli_error(CMD, "%d check(s) failed", failures);
    } else {
        printf("\nAll checks passed.\n");
    }
done:
    pixsum_ctx_free(ctx);
    free(img);
    free(table);
    free(sqt);
    return rc;
}

/*
 * cmd_info.c - `pixsum info [FILE...]`: what a file is (format, layout, type,
 * shape, and with --stats per-channel minimum / maximum / mean read strip by
 * strip), or with no file what this build and machine support: version,
 * image formats, CPU instruction sets, threads, CUDA and GL methods.
 */
#include "cli_util.h"
#include "commands.h"
#include "image_io.h"
#include "stream.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const CMD = "info";

/* Present in a library built with CUDA only (pixsum_cuda.h). */
int pixsum_cuda_device_count(void) __attribute__((weak));

static void backend_summary(pixsum_backend b, const char *label)
{
    size_t n, reg = 0, avail = 0;
    const pixsum_method_info *m = pixsum_methods(&n);
    for (size_t i = 0; i < n; i++)
        if (m[i].backend == b) {
            reg++;
            avail += m[i].available != 0;
        }
    printf("%-10s %zu method(s) registered, %zu available\n", label, reg, avail);
}

static int machine_info(void)
{
    printf("pixsum     %s\n", pixsum_version());
    printf("formats    %s\n", pxio_formats_supported());
    const char *missing = pxio_formats_missing();
    if (*missing)
        printf("missing    %s (library not found at build time)\n", missing);
    printf("cpu        ");
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    static const char *const isas[] = {"sse2", "sse4.1", "avx", "avx2", "fma", "avx512f",
                                       "avx512bw", "avx512vl", "gfni", "avx512vpopcntdq"};
    const int have[] = {
        __builtin_cpu_supports("sse2"),     __builtin_cpu_supports("sse4.1"),
        __builtin_cpu_supports("avx"),      __builtin_cpu_supports("avx2"),
        __builtin_cpu_supports("fma"),      __builtin_cpu_supports("avx512f"),
        __builtin_cpu_supports("avx512bw"), __builtin_cpu_supports("avx512vl"),
        __builtin_cpu_supports("gfni"),     __builtin_cpu_supports("avx512vpopcntdq")};
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++)
        if (have[i])
            printf("%s ", isas[i]);
    printf("(x86-64)\n");
#else
    printf("(not x86: SIMD methods use the portable code)\n");
#endif
    printf("threads    %ld online core(s)\n", sysconf(_SC_NPROCESSORS_ONLN));
    backend_summary(PIXSUM_BACKEND_CPU, "cpu");
    backend_summary(PIXSUM_BACKEND_OMP, "openmp");
    backend_summary(PIXSUM_BACKEND_CUDA, "cuda");
    if (pixsum_cuda_device_count)
        printf("           %d CUDA device(s) visible\n", pixsum_cuda_device_count());
    backend_summary(PIXSUM_BACKEND_GL, "gl");
    return CLI_EXIT_OK;
}

/* Per-channel running statistics over the strips of one file. */
typedef struct stats_state {
    size_t channels;
    double min[4], max[4], sum[4];
    uint64_t count[4], nan[4];
} stats_state;

static double sample_at(const pixsum_view *v, const unsigned char *row, size_t k)
{
    switch (v->type) {
    case PIXSUM_U8: return ((const uint8_t *)row)[k];
    case PIXSUM_U16: return ((const uint16_t *)row)[k];
    case PIXSUM_I16: return ((const int16_t *)row)[k];
    case PIXSUM_I32: return ((const int32_t *)row)[k];
    case PIXSUM_U32: return ((const uint32_t *)row)[k];
    case PIXSUM_F32: return ((const float *)row)[k];
    case PIXSUM_F64: return ((const double *)row)[k];
    case PIXSUM_U64: return (double)((const uint64_t *)row)[k];
    case PIXSUM_I64: return (double)((const int64_t *)row)[k];
    default: return 0;
    }
}

static int stats_strip(const pixsum_view *strip, size_t first_row, void *user)
{
    (void)first_row;
    stats_state *s = user;
    size_t c = strip->channels;
    for (size_t y = 0; y < strip->height; y++) {
        const unsigned char *row = (const unsigned char *)strip->data + y * strip->row_stride;
        for (size_t k = 0; k < strip->width * c; k++) {
            double v = sample_at(strip, row, k);
            size_t ch = k % c;
            if (isnan(v)) {
                s->nan[ch]++;
                continue;
            }
            if (v < s->min[ch])
                s->min[ch] = v;
            if (v > s->max[ch])
                s->max[ch] = v;
            s->sum[ch] += v;
            s->count[ch]++;
        }
    }
    return 0;
}

static int file_info(const char *path, const pxio_options *opt, int stats)
{
    char err[512];
    pxio_info info;
    if (pxio_probe(path, opt, &info, err, sizeof err) != 0)
        return cli_error(CMD, "%s", err);
    size_t bytes = pixsum_packed_bytes(info.type, info.width, info.height, info.depth,
                                       info.channels);
    size_t count = info.width * info.height * info.depth;
    printf("%s\n", path);
    printf("  format    %s (%s)\n", info.format, info.detail);
    if (info.pages > 1)
        printf("  pages     %zu (%s)\n", info.pages,
               info.depth > 1 ? "all read" : opt->page_set ? "one read: --page" : "page 0 read");
    if (info.depth > 1)
        printf("  shape     %zu x %zu x %zu (W x H x D), %zu channel(s)\n", info.width,
               info.height, info.depth, info.channels);
    else
        printf("  shape     %zu x %zu (W x H), %zu channel(s)\n", info.width, info.height,
               info.channels);
    printf("  type      %s%s%s%s (%zu bytes of pixels)\n", pixsum_type_name(info.type),
           info.sample[0] ? " (" : "", info.sample, info.sample[0] ? ")" : "", bytes);
    pixsum_type it = pixsum_integral_type(info.type, count, 0);
    pixsum_type st = pixsum_integral_type(info.type, count, 1);
    if (it != PIXSUM_TYPE_NONE) {
        int u32 = pixsum_integral_check(info.type, PIXSUM_U32, count, 0);
        printf("  integral  %s table by default, squared table %s; u32 table %s\n",
               pixsum_type_name(it), pixsum_type_name(st),
               u32 == PIXSUM_OK            ? "cannot overflow"
               : u32 == PIXSUM_ERR_OVERFLOW ? "could overflow (only with --wrap)"
                                           : "not offered for this type");
    }
    else
        printf("  integral  not supported for %s pixels (integral images take %s)\n",
               pixsum_type_name(info.type), cli_integral_input_types());
    if (!stats)
        return CLI_EXIT_OK;
    stats_state s;
    memset(&s, 0, sizeof s);
    s.channels = info.channels;
    for (size_t c = 0; c < 4; c++) {
        s.min[c] = DBL_MAX;
        s.max[c] = -DBL_MAX;
    }
    int rc = cli_stream_strips(CMD, path, opt, (size_t)8 << 20, NULL, stats_strip, &s);
    if (rc != 0)
        return rc;
    for (size_t c = 0; c < info.channels; c++) {
        if (s.count[c] == 0) {
            printf("  channel %zu: no finite samples (%llu NaN)\n", c,
                   (unsigned long long)s.nan[c]);
            continue;
        }
        printf("  channel %zu: min %.10g  max %.10g  mean %.6f", c, s.min[c], s.max[c],
               s.sum[c] / (double)s.count[c]);
        if (s.nan[c])
            printf("  (%llu NaN)", (unsigned long long)s.nan[c]);
        printf("\n");
    }
    return CLI_EXIT_OK;
}

int cmd_info(int argc, char **argv)
{
    int stats = 0, files = 0;
    pxio_options opt = {0};
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            printf("usage: pixsum info [--stats] [--volume|--batch|--page N] [FILE...]\n\n"
                   "With files: the format, layout, shape and pixel type of each, and the\n"
                   "integral table types it gets; --stats adds per-channel min / max / mean\n"
                   "(read strip by strip, so any size works). --volume reads 3-D .npy\n"
                   "arrays as (D,H,W) and every page of a TIFF as a slice; --batch reads\n"
                   "TIFF pages or a .npy stack as N images; --page N one TIFF page.\n"
                   "Without files: what this build and machine support (formats, CPU\n"
                   "instruction sets, threads, CUDA and GL methods).\n");
            return CLI_EXIT_OK;
        }
        int m = cli_parse_pages(CMD, argc, argv, &i, 1, &opt);
        if (m < 0)
            return CLI_EXIT_USAGE;
        if (m > 0)
            continue;
        if (!strcmp(argv[i], "--stats"))
            stats = 1;
        else if (!strcmp(argv[i], "--volume"))
            opt.volume = 1;
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_error(CMD, "unknown option '%s'", argv[i]);
        else
            files++;
    }
    /* without files the machine is described: the file options would be ignored */
    if (!files && (stats || opt.volume || opt.batch || opt.page_set))
        return cli_usage_error(CMD, "%s has no effect without a FILE",
                               stats ? "--stats" : opt.volume ? "--volume"
                                                 : opt.batch ? "--batch" : "--page");
    if (cli_check_pages(CMD, &opt) != CLI_EXIT_OK)
        return CLI_EXIT_USAGE;
    files = 0;
    int rc = CLI_EXIT_OK;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--page") && i + 1 < argc) {
            i++; /* its value */
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1])
            continue;
        files++;
        int r = file_info(argv[i], &opt, stats);
        if (r != 0)
            rc = r;
    }
    if (!files)
        rc = machine_info();
    return rc;
}

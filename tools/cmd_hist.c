/*
 * cmd_hist.c - `pixsum hist`: the histogram of an image file, one histogram
 * per channel, in any of paper 002's forms (absolute, relative, cumulative
 * absolute or relative), printed as CSV or JSON to stdout or a file.
 *
 * CSV: a header "bin,lower,upper,c0[,c1...]" then one line per bin with its
 * half-open edges [lower, upper) and the value per channel. JSON: one object
 * with the type, bins, range, form, totals (pixels, in range, below, above,
 * NaN per channel) and "values" as one array per channel.
 *
 * With --batch the pages of a TIFF (or a .npy stack) are N images counted by
 * pixsum_histogram_batch() over one range: CSV rows get a first column with
 * the image's index, JSON an "images" array of per-image totals and values.
 *
 * With --mpi (mpirun -np N pixsum hist ... --mpi) the ranks each read and
 * count a strip of rows (tools/cmd_hist_mpi.c) and rank 0 writes the totals
 * here, with the same writers: the output is the single-process one.
 */
#include "cli_util.h"
#include "commands.h"
#include "image_io.h"
#include "mpi_cli.h"
#include "stream.h"
#include "text_out.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const CMD = "hist";

static void hist_usage(FILE *f)
{
    fprintf(f,
            "usage: pixsum hist IN [--bins N] [--range LO:HI] [--cumulative] [--relative]\n"
            "                   [--channel C] [--mask FILE] [--format csv|json] [-o FILE]\n"
            "                   [--plot FILE.png|FILE.svg] [--method NAME] [--threads N]\n"
            "\n"
            "Histogram of every channel of IN (u8 u16 i16 i32 u32 f32 f64 images).\n"
            "\n"
            "  --bins N        number of bins (default 256; 65536 for u16 and i16)\n"
            "  --range LO:HI   half-open range [LO, HI) (default: the type's full range\n"
            "                  for u8/u16/i16, the data's range for i32/u32/f32/f64)\n"
            "  --cumulative    H_k = sum of the bins 0..k\n"
            "  --relative      divide by the samples counted in bins (sums to 1)\n"
            "  --channel C     print channel C only (0-based)\n"
            "  --mask FILE     count only pixels where this 8-bit 1-channel image is != 0\n"
            "                  (with --batch: one mask for all, or a stack of N masks)\n"
            "  --page N        read page N (0-based) of a multi-page TIFF\n"
            "  --batch         the pages of a TIFF, or a .npy stack (N,H,W[,C]), are N\n"
            "                  images: one histogram each, over one range for all (CSV:\n"
            "                  a first column 'image'; JSON: an 'images' array)\n"
            "  --format F      csv (default) or json\n"
            "  -o FILE         write to FILE instead of stdout (through a temporary)\n"
            "  --stream        read the image strip by strip (bounded memory; no --mask;\n"
            "                  i32/u32/f32/f64 need --range). Images over 1 GiB stream by\n"
            "                  themselves when no mask or data range is needed\n"
            "  --mpi           distributed: mpirun -np N pixsum hist IN ... --mpi; each\n"
            "                  rank reads and counts its strip of rows, rank 0 writes\n"
            "                  the same output (-v: times and bytes on stderr)\n"
            "  --plot FILE     also draw the histogram (first printed channel) with gnuplot\n"
            "                  as .png or .svg\n"
            "A value v goes to bin floor((v - LO) * bins / (HI - LO)); values below LO,\n"
            "at or above HI and NaN are counted apart (see the JSON totals).\n");
}

/* Parses "LO:HI" into two finite doubles. */
static int parse_range(const char *s, double *lo, double *hi)
{
    const char *colon = strchr(s + (s[0] == '-' ? 1 : 0), ':');
    if (!colon)
        return -1;
    char *end;
    errno = 0;
    *lo = strtod(s, &end);
    if (end != colon || errno)
        return -1;
    *hi = strtod(colon + 1, &end);
    if (*end || end == colon + 1 || errno)
        return -1;
    return isfinite(*lo) && isfinite(*hi) && *lo < *hi ? 0 : -1;
}

static void print_u64_list(FILE *f, const uint64_t *v, size_t n)
{
    fputc('[', f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)v[i]);
    fputc(']', f);
}

/* The totals and values of one histogram as JSON members, each line opened
 * with `indent`. */
static void write_json_counts(FILE *f, const pixsum_hist_info *info, size_t bins, size_t c0,
                              size_t c1, int relative, const double *rel,
                              const uint64_t *ivals, const char *indent)
{
    fprintf(f, "%s\"pixels\": %llu,\n", indent, (unsigned long long)info->pixels);
    const char *names[] = {"in_range", "below", "above", "nan"};
    const uint64_t *arrays[] = {info->in_range, info->below, info->above, info->nan};
    for (int k = 0; k < 4; k++) {
        fprintf(f, "%s\"%s\": ", indent, names[k]);
        print_u64_list(f, arrays[k] + c0, c1 - c0);
        fprintf(f, ",\n");
    }
    fprintf(f, "%s\"values\": [", indent);
    for (size_t c = c0; c < c1; c++) {
        fprintf(f, "%s\n%s  [", c > c0 ? "," : "", indent);
        for (size_t i = 0; i < bins; i++) {
            if (relative)
                fprintf(f, "%s%.17g", i ? ", " : "", rel[c * bins + i]);
            else
                fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)ivals[c * bins + i]);
        }
        fprintf(f, "]");
    }
    fprintf(f, "\n%s]", indent);
}

/* Images larger than this are counted strip by strip when possible. */
#define HIST_STREAM_BYTES ((size_t)1 << 30)

/* True when the default range of `type` comes from the data (it then needs the
 * whole image before counting). */
static int range_from_data(pixsum_type type)
{
    return type == PIXSUM_I32 || type == PIXSUM_U32 || type == PIXSUM_F32 ||
           type == PIXSUM_F64;
}

/* State of a streamed histogram: the resolved spec and the running totals. */
typedef struct hist_stream {
    pixsum_ctx *ctx;
    pixsum_hist_spec spec;
    const char *path;
    long channel;
    pixsum_type type;
    uint64_t *counts, *strip_counts;
    size_t n;
    pixsum_hist_info total;
} hist_stream;

/* Resolves bins and range from the file's header alone and allocates. */
static int hist_stream_header(const pxio_info *header, void *user)
{
    hist_stream *h = user;
    if (h->channel >= 0 && (size_t)h->channel >= header->channels)
        return cli_usage_error(CMD, "--channel %ld: %s has %zu channel(s)", h->channel, h->path,
                               header->channels);
    if (h->spec.lo == h->spec.hi && range_from_data(header->type))
        return cli_usage_error(CMD, "%s: streaming %s data needs --range LO:HI (its default "
                               "range comes from the data)", h->path,
                               pixsum_type_name(header->type));
    /* A 1-pixel stand-in of the file's type: with a fixed range the resolution
     * reads no pixels. */
    double zeros[4] = {0, 0, 0, 0};
    pixsum_view probe = pixsum_view_2d(zeros, header->type, 1, 1, header->channels, 0);
    int st = pixsum_hist_resolve(&probe, &h->spec, &h->total);
    if (st != PIXSUM_OK)
        return cli_lib_error(CMD, h->path, st);
    h->spec.bins = h->total.bins;
    h->spec.lo = h->total.lo;
    h->spec.hi = h->total.hi;
    h->type = header->type;
    h->n = h->total.bins * header->channels;
    h->counts = calloc(h->n, sizeof *h->counts);
    h->strip_counts = malloc(h->n * sizeof *h->strip_counts);
    if (!h->counts || !h->strip_counts)
        return cli_error(CMD, "out of memory for %zu x %zu bins", header->channels,
                         h->total.bins);
    return 0;
}

/* Counts one strip and adds it to the totals (u64: no wrap). */
static int hist_stream_strip(const pixsum_view *strip, size_t first_row, void *user)
{
    (void)first_row;
    hist_stream *h = user;
    pixsum_hist_info li;
    int st = pixsum_histogram(h->ctx, strip, &h->spec, h->strip_counts, h->n, &li);
    if (st != PIXSUM_OK)
        return cli_lib_error(CMD, h->path, st);
    for (size_t i = 0; i < h->n; i++)
        h->counts[i] += h->strip_counts[i];
    h->total.pixels += li.pixels;
    for (size_t c = 0; c < li.channels; c++) {
        h->total.in_range[c] += li.in_range[c];
        h->total.below[c] += li.below[c];
        h->total.above[c] += li.above[c];
        h->total.nan[c] += li.nan[c];
    }
    return 0;
}

/* Writes the CSV form ("bin,lower,upper,c<k>...") of channels [c0, c1). */
/* CSV rows of one histogram; `image` >= 0 (a batch) puts the image's index in
 * a first column, and its first image writes the header, which image < 0
 * always writes. */
static void write_csv(FILE *f, const pixsum_hist_info *info, size_t bins, size_t c0, size_t c1,
                      int relative, const double *rel, const uint64_t *ivals, long image)
{
    if (image <= 0) {
        fprintf(f, "%sbin,lower,upper", image == 0 ? "image," : "");
        for (size_t c = c0; c < c1; c++)
            fprintf(f, ",c%zu", c);
        fputc('\n', f);
    }
    for (size_t i = 0; i < bins; i++) {
        double lower = pixsum_hist_edge(bins, info->lo, info->hi, i);
        double upper = pixsum_hist_edge(bins, info->lo, info->hi, i + 1);
        if (image >= 0)
            fprintf(f, "%ld,", image);
        fprintf(f, "%zu,%.17g,%.17g", i, lower, upper);
        for (size_t c = c0; c < c1; c++) {
            if (relative)
                fprintf(f, ",%.17g", rel[c * bins + i]);
            else
                fprintf(f, ",%llu", (unsigned long long)ivals[c * bins + i]);
        }
        fputc('\n', f);
    }
}

/* What the plot's data callback writes: the CSV of the first printed channel. */
typedef struct hist_plot_data {
    const pixsum_hist_info *info;
    size_t bins, c0;
    int relative;
    const double *rel;
    const uint64_t *ivals;
} hist_plot_data;

static void hist_plot_rows(FILE *f, void *user)
{
    const hist_plot_data *d = user;
    write_csv(f, d->info, d->bins, d->c0, d->c0 + 1, d->relative, d->rel, d->ivals, -1);
}

static int hist_main(int argc, char **argv, int mpi)
{
    const char *in_path = NULL, *out_path = NULL, *mask_path = NULL, *plot_path = NULL;
    pixsum_hist_spec spec = {0};
    pxio_options in_opt = {0}; /* --page N, --batch */
    int cumulative = 0, relative = 0, json = 0, stream = 0, verbose = 0;
    long channel = -1;
    cli_common common;
    /* counts are u64 and relative values f64 whatever the image: no --type */
    cli_common_init(&common, PIXSUM_OP_HISTOGRAM,
                    CLI_TAKES_METHOD | CLI_TAKES_THREADS | CLI_TAKES_DEVICE);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        int m;
        if (cli_is_help(arg)) {
            hist_usage(stdout);
            return CLI_EXIT_OK;
        }
        if ((m = cli_parse_common(CMD, argc, argv, &i, &common)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
        } else if (!mpi && (m = cli_parse_pages(CMD, argc, argv, &i, 1, &in_opt)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
        } else if ((m = cli_match(CMD, argc, argv, &i, "-o|--output", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            out_path = v;
        } else if ((m = cli_match(CMD, argc, argv, &i, "--plot", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            plot_path = v;
            if (!plot_path_ok(plot_path))
                return cli_usage_error(CMD, "--plot writes .png or .svg, not '%s'", v);
        } else if ((m = cli_match(CMD, argc, argv, &i, "--bins", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (cli_parse_size(v, &spec.bins) != 0 || spec.bins == 0 ||
                spec.bins > PIXSUM_HIST_MAX_BINS)
                return cli_usage_error(CMD, "--bins takes 1..%zu, not '%s'",
                                       PIXSUM_HIST_MAX_BINS, v);
        } else if ((m = cli_match(CMD, argc, argv, &i, "--range", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (parse_range(v, &spec.lo, &spec.hi) != 0)
                return cli_usage_error(CMD, "--range takes LO:HI with finite LO < HI, not '%s'",
                                       v);
        } else if ((m = cli_match(CMD, argc, argv, &i, "--channel", &v)) != 0) {
            size_t c;
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (cli_parse_size(v, &c) != 0 || c > 3)
                return cli_usage_error(CMD, "--channel takes 0..3, not '%s'", v);
            channel = (long)c;
        } else if ((m = cli_match(CMD, argc, argv, &i, "--mask", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            mask_path = v;
        } else if ((m = cli_match(CMD, argc, argv, &i, "--format", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (!strcmp(v, "csv"))
                json = 0;
            else if (!strcmp(v, "json"))
                json = 1;
            else
                return cli_usage_error(CMD, "--format is csv or json, not '%s'", v);
        } else if (mpi && !strcmp(arg, "--mpi")) {
            continue;
        } else if (mpi && (!strcmp(arg, "-v") || !strcmp(arg, "--verbose"))) {
            verbose = 1;
        } else if (!strcmp(arg, "--stream")) {
            if (mpi)
                return cli_usage_error(CMD, "--stream: with --mpi each rank holds its strip "
                                            "of rows");
            stream = 1;
        } else if (!strcmp(arg, "--cumulative")) {
            cumulative = 1;
        } else if (!strcmp(arg, "--relative")) {
            relative = 1;
        } else if (cli_take_input(CMD, arg, &in_path) != CLI_EXIT_OK) {
            return CLI_EXIT_USAGE;
        }
    }
    if (!in_path)
        return cli_usage_error(CMD, "no input file");
    if (in_opt.batch && (stream || plot_path))
        return cli_usage_error(CMD, "--batch counts in memory and prints every image's "
                                    "histogram (not with %s)", stream ? "--stream" : "--plot");
    int rc;
    if ((rc = cli_check_not_input(CMD, in_path, out_path, "-o")) != 0 ||
        (rc = cli_check_not_input(CMD, in_path, plot_path, "--plot")) != 0 ||
        (rc = cli_check_not_input(CMD, mask_path, out_path, "-o")) != 0 ||
        (rc = cli_check_not_input(CMD, mask_path, plot_path, "--plot")) != 0)
        return rc;
    if (out_path && plot_path && !strcmp(out_path, plot_path))
        return cli_usage_error(CMD, "-o and --plot name the same file '%s'", out_path);

    pixsum_ctx *ctx;
    rc = cli_new_ctx(CMD, &common, &ctx);
    if (rc != 0 && !mpi)
        return rc; /* with --mpi, mpi_hist_count() agrees on it first */
    char err[512];
    pxio_image img, mask;
    memset(&img, 0, sizeof img);
    memset(&mask, 0, sizeof mask);
    uint64_t *counts = NULL, *cum = NULL;
    double *rel = NULL;
    text_out out = {0};
    out_file plot = {0};
    pixsum_hist_info info, *infos = NULL; /* infos: one per image with --batch */
    pixsum_type in_type;
    size_t nch, bins, n, images = 1;
    int st;
    if (mpi) {
        /* Every rank counts its strip; the totals come to rank 0, which writes. */
        mpi_hist_job job = {.cmd = CMD, .in_path = in_path, .mask_path = mask_path,
                            .spec = spec, .channel = channel, .verbose = verbose,
                            .common = &common};
        mpi_hist_result res;
        rc = mpi_hist_count(rc, &job, ctx, &res);
        counts = res.counts;
        if (rc != 0 || !res.writer)
            goto done;
        info = res.info;
        in_type = res.type;
        goto counted;
    }
    if (!stream) {
        pxio_info header;
        if (pxio_probe(in_path, &in_opt, &header, err, sizeof err) != 0) {
            rc = cli_error(CMD, "%s", err);
            goto done;
        }
        size_t bytes = pixsum_packed_bytes(header.type, header.width, header.height,
                                           header.depth, header.channels);
        /* Large images stream by themselves when nothing needs the whole image. */
        stream = !mask_path && (bytes == 0 || bytes > HIST_STREAM_BYTES) &&
                 (spec.lo != spec.hi || !range_from_data(header.type));
    }
    if (stream) {
        if (mask_path) {
            rc = cli_usage_error(CMD, "--mask cannot be combined with --stream");
            goto done;
        }
        hist_stream st_state = {.ctx = ctx, .spec = spec, .path = in_path, .channel = channel};
        rc = cli_stream_strips(CMD, in_path, &in_opt, (size_t)16 << 20, hist_stream_header,
                               hist_stream_strip, &st_state);
        free(st_state.strip_counts);
        counts = st_state.counts;
        if (rc != 0)
            goto done;
        info = st_state.total;
        in_type = st_state.type;
    } else {
        if (pxio_read(in_path, &in_opt, &img, err, sizeof err) != 0) {
            rc = cli_error(CMD, "%s", err);
            goto done;
        }
        cli_note_pages(CMD, in_path, &img.info, &in_opt);
        if (channel >= 0 && (size_t)channel >= img.view.channels) {
            rc = cli_usage_error(CMD, "--channel %ld: %s has %zu channel(s)", channel, in_path,
                                 img.view.channels);
            goto done;
        }
        if (mask_path) {
            /* with --batch, a mask stack (one per image) or one mask for all */
            pxio_options mask_opt = {.batch = in_opt.batch};
            if (pxio_read(mask_path, &mask_opt, &mask, err, sizeof err) != 0) {
                rc = cli_error(CMD, "%s", err);
                goto done;
            }
            if (mask.view.type != PIXSUM_U8 || mask.view.channels != 1) {
                rc = cli_error(CMD, "%s: the mask must be an 8-bit 1-channel image, not %s x%zu",
                               mask_path, pixsum_type_name(mask.view.type), mask.view.channels);
                goto done;
            }
            spec.mask = &mask.view;
        }
        if (in_opt.batch) {
            /* N images, one range for all (resolved over the batch by the
             * batch call, which reads the data once), N histograms; the bin
             * count comes from the spec alone */
            size_t batch_bins;
            if ((st = pixsum_hist_bins(&img.view, &spec, &batch_bins)) != PIXSUM_OK) {
                rc = cli_lib_error(CMD, in_path, st);
                goto done;
            }
            images = img.view.depth;
            n = batch_bins * img.view.channels;
            if (images > SIZE_MAX / sizeof *counts / n) {
                rc = cli_error(CMD, "%zu images x %zu channels x %zu bins do not fit in memory",
                               images, img.view.channels, batch_bins);
                goto done;
            }
            counts = malloc(images * n * sizeof *counts);
            infos = calloc(images, sizeof *infos);
            if (!counts || !infos) {
                rc = cli_error(CMD, "out of memory for %zu x %zu x %zu bins", images,
                               img.view.channels, batch_bins);
                goto done;
            }
            if ((st = pixsum_histogram_batch(ctx, &img.view, &spec, 0, counts, images * n,
                                             infos)) != PIXSUM_OK) {
                rc = cli_lib_error(CMD, in_path, st);
                goto done;
            }
            info = infos[0]; /* bins, range and channels are the batch's */
            in_type = img.view.type;
            goto counted;
        }
        if ((st = pixsum_hist_resolve(&img.view, &spec, &info)) != PIXSUM_OK) {
            rc = cli_lib_error(CMD, in_path, st);
            goto done;
        }
        /* pin the resolved range (the data range is read once) */
        spec.bins = info.bins;
        spec.lo = info.lo;
        spec.hi = info.hi;
        n = info.bins * img.view.channels;
        if (!(counts = malloc(n * sizeof *counts))) {
            rc = cli_error(CMD, "out of memory for %zu x %zu bins", img.view.channels,
                           info.bins);
            goto done;
        }
        if ((st = pixsum_histogram(ctx, &img.view, &spec, counts, n, &info)) != PIXSUM_OK) {
            rc = cli_lib_error(CMD, in_path, st);
            goto done;
        }
        in_type = img.view.type;
    }
counted:
    bins = info.bins;
    nch = info.channels;
    n = bins * nch;
    cum = malloc(images * n * sizeof *cum);
    rel = malloc(images * n * sizeof *rel);
    if (!cum || !rel) {
        rc = cli_error(CMD, "out of memory for %zu x %zu x %zu bins", images, nch, bins);
        goto done;
    }
    /* the derived forms of every image's histogram (one image unless --batch) */
    const uint64_t *ivals = counts;
    for (size_t k = 0; k < images; k++) {
        const pixsum_hist_info *ik = infos ? &infos[k] : &info;
        if (cumulative && !relative)
            pixsum_hist_cumulative(ik, counts + k * n, cum + k * n);
        if (relative)
            pixsum_hist_relative(ik, counts + k * n, cumulative ? PIXSUM_HIST_CUMULATIVE : 0,
                                 rel + k * n);
    }
    if (cumulative && !relative)
        ivals = cum;
    /* Every output is opened before anything is written, and none is put in
     * place until all are complete (out_file_commit_all() below). */
    if ((rc = text_out_open(&out, CMD, out_path)) != 0)
        goto done;
    if (plot_path && (rc = plot_open(&plot, CMD, plot_path)) != 0)
        goto done;
    size_t c0 = channel >= 0 ? (size_t)channel : 0, c1 = channel >= 0 ? c0 + 1 : nch;
    const char *form = relative ? (cumulative ? "cumulative_relative" : "relative")
                                : (cumulative ? "cumulative" : "absolute");
    if (json) {
        fprintf(out.file, "{\n  \"file\": \"");
        for (const char *p = in_path; *p; p++)
            fprintf(out.file, (*p == '"' || *p == '\\') ? "\\%c" : "%c", *p);
        fprintf(out.file, "\",\n  \"type\": \"%s\",\n  \"bins\": %zu,\n  \"range\": [%.17g, %.17g],\n",
                pixsum_type_name(in_type), bins, info.lo, info.hi);
        fprintf(out.file, "  \"form\": \"%s\",\n  \"channels\": [", form);
        for (size_t c = c0; c < c1; c++)
            fprintf(out.file, "%s%zu", c > c0 ? ", " : "", c);
        fprintf(out.file, "],\n");
        if (!infos) {
            write_json_counts(out.file, &info, bins, c0, c1, relative, rel, ivals, "  ");
        } else { /* --batch: one object per image */
            fprintf(out.file, "  \"images\": [");
            for (size_t k = 0; k < images; k++) {
                fprintf(out.file, "%s\n    {\n      \"image\": %zu,\n", k ? "," : "", k);
                write_json_counts(out.file, &infos[k], bins, c0, c1, relative, rel + k * n,
                                  ivals + k * n, "      ");
                fprintf(out.file, "\n    }");
            }
            fprintf(out.file, "\n  ]");
        }
        fprintf(out.file, "\n}\n");
    } else {
        for (size_t k = 0; k < images; k++)
            write_csv(out.file, infos ? &infos[k] : &info, bins, c0, c1, relative, rel + k * n,
                      ivals + k * n, infos ? (long)k : -1);
    }
    if ((rc = text_out_finish(&out, CMD)) != 0)
        goto done;
    if (plot_path) {
        /* gnuplot reads the same values (first printed channel) as CSV. */
        hist_plot_data pd = {&info, bins, c0, relative, rel, ivals};
        char title[512];
        snprintf(title, sizeof title, "%s histogram of %s, channel %zu (%zu bins)", form,
                 in_path, c0, bins);
        int prc = plot_histogram(CMD, &plot, title, relative ? "fraction" : "pixels", 2, 4,
                                 info.lo, info.hi, hist_plot_rows, &pd);
        if (prc != 0) {
            rc = prc == 1 ? CLI_EXIT_RUNTIME : prc;
            goto done;
        }
    }
    out_file *outs[2] = {&out.out, &plot};
    if (out_file_commit_all(outs, 2, err, sizeof err) != 0)
        rc = cli_error(CMD, "%s", err);
done:
    text_out_abort(&out);
    out_file_abort(&plot);
    free(counts);
    free(infos);
    free(cum);
    free(rel);
    pxio_free(&img);
    pxio_free(&mask);
    pixsum_ctx_free(ctx);
    return rc;
}

int cmd_hist(int argc, char **argv)
{
    if (!mpi_cli_wanted(argc, argv))
        return hist_main(argc, argv, 0);
    int owner = 0; /* distributed: tools/cmd_hist_mpi.c */
    if (mpi_hist_start(CMD, &argc, &argv, &owner) != 0)
        return CLI_EXIT_RUNTIME;
    return mpi_hist_stop(hist_main(argc, argv, 1), owner);
}

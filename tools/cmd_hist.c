/*
 * cmd_hist.c - `pixsum hist`: the histogram of an image file, one histogram
 * per channel, in any of paper 002's forms (absolute, relative, cumulative
 * absolute or relative), printed as CSV or JSON to stdout or a file.
 *
 * CSV: a header "bin,lower,upper,c0[,c1...]" then one line per bin with its
 * half-open edges [lower, upper) and the value per channel. JSON: one object
 * with the type, bins, range, form, totals (pixels, in range, below, above,
 * NaN per channel) and "values" as one array per channel.
 */
#include "cli_util.h"
#include "commands.h"
#include "image_io.h"
#include "text_out.h"

#include <errno.h>
#include <math.h>
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
            "Histogram of every channel of IN (u8 u16 i16 i32 f32 f64 images).\n"
            "\n"
            "  --bins N        number of bins (default 256; 65536 for u16 and i16)\n"
            "  --range LO:HI   half-open range [LO, HI) (default: the type's full range\n"
            "                  for u8/u16/i16, the data's range for i32/f32/f64)\n"
            "  --cumulative    H_k = sum of the bins 0..k\n"
            "  --relative      divide by the samples counted in bins (sums to 1)\n"
            "  --channel C     print channel C only (0-based)\n"
            "  --mask FILE     count only pixels where this 8-bit 1-channel image is != 0\n"
            "  --format F      csv (default) or json\n"
            "  -o FILE         write to FILE instead of stdout (through a temporary)\n"
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

/* Writes the CSV form ("bin,lower,upper,c<k>...") of channels [c0, c1). */
static void write_csv(FILE *f, const pixsum_hist_info *info, size_t bins, size_t c0, size_t c1,
                      int relative, const double *rel, const uint64_t *ivals)
{
    double width = (info->hi - info->lo) / (double)bins;
    fprintf(f, "bin,lower,upper");
    for (size_t c = c0; c < c1; c++)
        fprintf(f, ",c%zu", c);
    fputc('\n', f);
    for (size_t i = 0; i < bins; i++) {
        double lower = info->lo + (double)i * width;
        double upper = i + 1 == bins ? info->hi : info->lo + (double)(i + 1) * width;
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

int cmd_hist(int argc, char **argv)
{
    const char *in_path = NULL, *out_path = NULL, *mask_path = NULL, *plot_path = NULL;
    pixsum_hist_spec spec = {0};
    int cumulative = 0, relative = 0, json = 0;
    long channel = -1;
    cli_common common;
    cli_common_init(&common);
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
        } else if ((m = cli_match(CMD, argc, argv, &i, "-o", &v)) != 0 ||
                   (m = cli_match(CMD, argc, argv, &i, "--output", &v)) != 0) {
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
        } else if (!strcmp(arg, "--cumulative")) {
            cumulative = 1;
        } else if (!strcmp(arg, "--relative")) {
            relative = 1;
        } else if (arg[0] == '-' && arg[1]) {
            return cli_usage_error(CMD, "unknown option '%s'", arg);
        } else if (!in_path) {
            in_path = arg;
        } else {
            return cli_usage_error(CMD, "one input file only ('%s' and '%s')", in_path, arg);
        }
    }
    if (!in_path)
        return cli_usage_error(CMD, "no input file");

    pixsum_ctx *ctx = pixsum_ctx_new();
    if (!ctx)
        return cli_error(CMD, "out of memory");
    int rc = cli_apply_common(CMD, &common, ctx);
    if (rc != 0) {
        pixsum_ctx_free(ctx);
        return rc;
    }
    char err[512];
    pxio_image img, mask;
    memset(&mask, 0, sizeof mask);
    uint64_t *counts = NULL, *cum = NULL;
    double *rel = NULL;
    text_out out = {0}, plot_data = {0};
    if (pxio_read(in_path, NULL, &img, err, sizeof err) != 0) {
        pixsum_ctx_free(ctx);
        return cli_error(CMD, "%s", err);
    }
    if (channel >= 0 && (size_t)channel >= img.view.channels) {
        rc = cli_usage_error(CMD, "--channel %ld: %s has %zu channel(s)", channel, in_path,
                             img.view.channels);
        goto done;
    }
    if (mask_path) {
        if (pxio_read(mask_path, NULL, &mask, err, sizeof err) != 0) {
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
    pixsum_hist_info info;
    int st = pixsum_hist_resolve(&img.view, &spec, &info);
    if (st != PIXSUM_OK) {
        rc = cli_lib_error(CMD, in_path, st);
        goto done;
    }
    size_t bins = info.bins, nch = img.view.channels, n = bins * nch;
    /* pin the resolved range (the data range is read once) */
    spec.bins = info.bins;
    spec.lo = info.lo;
    spec.hi = info.hi;
    counts = malloc(n * sizeof *counts);
    cum = malloc(n * sizeof *cum);
    rel = malloc(n * sizeof *rel);
    if (!counts || !cum || !rel) {
        rc = cli_error(CMD, "out of memory for %zu x %zu bins", nch, bins);
        goto done;
    }
    if ((st = pixsum_histogram(ctx, &img.view, &spec, counts, n, &info)) != PIXSUM_OK) {
        rc = cli_lib_error(CMD, in_path, st);
        goto done;
    }
    const uint64_t *ivals = counts;
    if (cumulative && !relative) {
        pixsum_hist_cumulative(&info, counts, cum);
        ivals = cum;
    }
    if (relative)
        pixsum_hist_relative(&info, counts, cumulative ? PIXSUM_HIST_CUMULATIVE : 0, rel);
    if ((rc = text_out_open(&out, CMD, out_path)) != 0)
        goto done;
    size_t c0 = channel >= 0 ? (size_t)channel : 0, c1 = channel >= 0 ? c0 + 1 : nch;
    const char *form = relative ? (cumulative ? "cumulative_relative" : "relative")
                                : (cumulative ? "cumulative" : "absolute");
    if (json) {
        fprintf(out.file, "{\n  \"file\": \"");
        for (const char *p = in_path; *p; p++)
            fprintf(out.file, (*p == '"' || *p == '\\') ? "\\%c" : "%c", *p);
        fprintf(out.file, "\",\n  \"type\": \"%s\",\n  \"bins\": %zu,\n  \"range\": [%.17g, %.17g],\n",
                pixsum_type_name(img.view.type), bins, info.lo, info.hi);
        fprintf(out.file, "  \"form\": \"%s\",\n  \"channels\": [", form);
        for (size_t c = c0; c < c1; c++)
            fprintf(out.file, "%s%zu", c > c0 ? ", " : "", c);
        fprintf(out.file, "],\n  \"pixels\": %llu,\n", (unsigned long long)info.pixels);
        const char *names[] = {"in_range", "below", "above", "nan"};
        const uint64_t *arrays[] = {info.in_range, info.below, info.above, info.nan};
        for (int k = 0; k < 4; k++) {
            fprintf(out.file, "  \"%s\": ", names[k]);
            print_u64_list(out.file, arrays[k] + c0, c1 - c0);
            fprintf(out.file, ",\n");
        }
        fprintf(out.file, "  \"values\": [");
        for (size_t c = c0; c < c1; c++) {
            fprintf(out.file, "%s\n    [", c > c0 ? "," : "");
            for (size_t i = 0; i < bins; i++) {
                if (relative)
                    fprintf(out.file, "%s%.17g", i ? ", " : "", rel[c * bins + i]);
                else
                    fprintf(out.file, "%s%llu", i ? ", " : "",
                            (unsigned long long)ivals[c * bins + i]);
            }
            fprintf(out.file, "]");
        }
        fprintf(out.file, "\n  ]\n}\n");
    } else {
        write_csv(out.file, &info, bins, c0, c1, relative, rel, ivals);
    }
    rc = text_out_commit(&out, CMD);
    if (rc == 0 && plot_path) {
        /* The plot reads a CSV of the same values from a temporary next to it. */
        char data_path[4200];
        snprintf(data_path, sizeof data_path, "%s.data", plot_path);
        if ((rc = text_out_open(&plot_data, CMD, data_path)) != 0)
            goto done;
        write_csv(plot_data.file, &info, bins, c0, c0 + 1, relative, rel, ivals);
        int bad = fflush(plot_data.file) != 0 || ferror(plot_data.file);
        fclose(plot_data.file);
        plot_data.file = NULL;
        if (bad) {
            remove(plot_data.tmp);
            rc = cli_error(CMD, "%s: cannot write the plot data", plot_path);
            goto done;
        }
        char title[512];
        snprintf(title, sizeof title, "%s histogram of %s, channel %zu (%zu bins)", form,
                 in_path, c0, bins);
        int prc = plot_histogram_csv(CMD, plot_data.tmp, plot_path, title,
                                     relative ? "fraction" : "pixels", 2, 4, info.lo, info.hi);
        remove(plot_data.tmp);
        rc = prc == 1 ? CLI_EXIT_RUNTIME : prc;
    }
done:
    text_out_abort(&out);
    free(counts);
    free(cum);
    free(rel);
    pxio_free(&img);
    pxio_free(&mask);
    pixsum_ctx_free(ctx);
    return rc;
}

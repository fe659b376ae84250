/*
 * cmd_equalize.c - `pixsum equalize`: histogram equalisation of an 8- or
 * 16-bit image file, or of a float (f32/f64) one as scikit-image's
 * equalize_hist (each channel on its own), written in the output's format.
 * Parses the options and calls pixsum_equalize_bins(); the mapping lives in
 * the library. With --batch, the pages of a TIFF (or a .npy stack) are N u8
 * or u16 images, each equalised by its own histogram
 * (pixsum_equalize_batch()), written as an (N, ...) .npy or a multi-page TIFF.
 */
#include "cli_util.h"
#include "commands.h"
#include "image_io.h"

#include <stdio.h>
#include <string.h>

static const char *const CMD = "equalize";

static void equalize_usage(FILE *f)
{
    fprintf(f,
            "usage: pixsum equalize IN -o OUT [--bins N] [--mask FILE] [--method NAME]\n"
            "                       [--threads N] [--device N] [--page N | --batch]\n"
            "\n"
            "Histogram equalisation, each channel on its own, the result in IN's type.\n"
            "u8, u16 images: N bins over [0, L) (default L = 256 or 65536), v in bin b ->\n"
            "round((cdf(b) - cdf_min) * (L - 1) / (n - cdf_min)).\n"
            "f32, f64 images (e.g. .npy), scikit-image's equalize_hist: N bins (default\n"
            "256) over [min, max] of the finite samples, the cumulative histogram\n"
            "divided by its total, interpolated at the bin centres: values in [0, 1].\n"
            "  --bins N      number of bins (see above)\n"
            "  --mask FILE   build the histogram from pixels where this 8-bit 1-channel\n"
            "                image is != 0 (every pixel is still mapped)\n"
            "  --method NAME histogram method (see 'pixsum methods --op hist')\n"
            "  --page N      read page N (0-based) of a multi-page TIFF\n"
            "  --batch       read the pages of a TIFF, or a .npy stack (N,H,W[,C]), as N u8\n"
            "                or u16 images, each equalised by its own histogram (no\n"
            "                --bins); a --mask of one page is shared, one of N pages (or an\n"
            "                (N,H,W) .npy) gives each image its own\n"
            "OUT must not be IN (as for every command): write elsewhere, then rename.\n");
}

int cmd_equalize(int argc, char **argv)
{
    const char *in_path = NULL, *out_path = NULL, *mask_path = NULL;
    size_t bins = 0;
    pxio_options in_opt = {0}; /* --page N, --batch */
    cli_common common;
    /* the output keeps the input's type: no --type */
    cli_common_init(&common, PIXSUM_OP_HISTOGRAM,
                    CLI_TAKES_METHOD | CLI_TAKES_THREADS | CLI_TAKES_DEVICE);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        int m;
        if (cli_is_help(arg)) {
            equalize_usage(stdout);
            return CLI_EXIT_OK;
        }
        if ((m = cli_parse_common(CMD, argc, argv, &i, &common)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
        } else if ((m = cli_match(CMD, argc, argv, &i, "-o|--output", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            out_path = v;
        } else if ((m = cli_match(CMD, argc, argv, &i, "--bins", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (cli_parse_size(v, &bins) != 0 || bins == 0 || bins > PIXSUM_HIST_MAX_BINS)
                return cli_usage_error(CMD, "--bins takes a count from 1 to %zu, not '%s'",
                                       PIXSUM_HIST_MAX_BINS, v);
        } else if ((m = cli_match(CMD, argc, argv, &i, "--mask", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            mask_path = v;
        } else if ((m = cli_parse_pages(CMD, argc, argv, &i, 1, &in_opt)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
        } else if (cli_take_input(CMD, arg, &in_path) != CLI_EXIT_OK) {
            return CLI_EXIT_USAGE;
        }
    }
    if (!in_path)
        return cli_usage_error(CMD, "no input file");
    if (!out_path)
        return cli_usage_error(CMD, "no output file (-o OUT)");
    if (cli_check_pages(CMD, &in_opt) != CLI_EXIT_OK)
        return CLI_EXIT_USAGE;
    if (in_opt.batch && bins)
        return cli_usage_error(CMD, "--batch equalises each image by its own full histogram; "
                                    "--bins is for one image");
    int rc;
    if ((rc = cli_check_not_input(CMD, in_path, out_path, "the output")) != 0 ||
        (rc = cli_check_not_input(CMD, mask_path, out_path, "the output")) != 0)
        return rc;
    pixsum_ctx *ctx;
    rc = cli_new_ctx(CMD, &common, &ctx);
    if (rc != 0)
        return rc;
    char err[512];
    pxio_image img, mask;
    memset(&mask, 0, sizeof mask);
    if (pxio_read(in_path, &in_opt, &img, err, sizeof err) != 0) {
        pixsum_ctx_free(ctx);
        return cli_error(CMD, "%s", err);
    }
    cli_note_pages(CMD, in_path, &img.info, &in_opt);
    if (img.info.type != PIXSUM_U8 && img.info.type != PIXSUM_U16 &&
        img.info.type != PIXSUM_F32 && img.info.type != PIXSUM_F64) {
        rc = cli_error(CMD, "%s: equalisation takes u8, u16, f32 or f64 images, this one is "
                       "%s%s%s%s",
                       in_path, pixsum_type_name(img.info.type), img.info.sample[0] ? " (" : "",
                       img.info.sample, img.info.sample[0] ? ")" : "");
        goto done;
    }
    if (mask_path) {
        pxio_options mask_opt = {0};
        mask_opt.batch = in_opt.batch; /* a batch's masks: one page, or one per image */
        if (pxio_read(mask_path, &mask_opt, &mask, err, sizeof err) != 0) {
            rc = cli_error(CMD, "%s", err);
            goto done;
        }
        if (mask.info.type != PIXSUM_U8 || mask.info.channels != 1) {
            rc = cli_error(CMD, "%s: the mask must be an 8-bit 1-channel image, not %s x%zu",
                           mask_path, pixsum_type_name(mask.info.type), mask.info.channels);
            goto done;
        }
    }
    if (in_opt.batch && img.info.type != PIXSUM_U8 && img.info.type != PIXSUM_U16) {
        rc = cli_error(CMD, "%s: --batch equalises u8 or u16 images, this one is %s", in_path,
                       pixsum_type_name(img.info.type));
        goto done;
    }
    int st = in_opt.batch
                 ? pixsum_equalize_batch(ctx, &img.view, &img.view,
                                         mask_path ? &mask.view : NULL)
                 : pixsum_equalize_bins(ctx, &img.view, &img.view,
                                        mask_path ? &mask.view : NULL, bins);
    if (st != PIXSUM_OK) {
        rc = cli_lib_error(CMD, in_path, st);
        goto done;
    }
    if (pxio_write(out_path, &img.view, NULL, err, sizeof err) != 0)
        rc = cli_error(CMD, "%s", err);
done:
    pxio_free(&img);
    pxio_free(&mask);
    pixsum_ctx_free(ctx);
    return rc;
}

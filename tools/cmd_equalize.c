/*
 * cmd_equalize.c - `pixsum equalize`: histogram equalisation of an 8- or
 * 16-bit image file (each channel on its own), written in the output's format.
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
            "usage: pixsum equalize IN -o OUT [--mask FILE] [--method NAME] [--threads N]\n"
            "                       [--device N]\n"
            "\n"
            "Histogram equalisation of a u8 or u16 image, each channel on its own:\n"
            "v -> round((cdf(v) - cdf_min) * (L - 1) / (n - cdf_min)), L = 256 or 65536.\n"
            "  --mask FILE   build the histogram from pixels where this 8-bit 1-channel\n"
            "                image is != 0 (every pixel is still mapped)\n"
            "  --method NAME histogram method (see 'pixsum methods --op hist')\n"
            "OUT must not be IN (as for every command): write elsewhere, then rename.\n");
}

int cmd_equalize(int argc, char **argv)
{
    const char *in_path = NULL, *out_path = NULL, *mask_path = NULL;
    pxio_options in_opt = {0}; /* --page N */
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
        } else if ((m = cli_match(CMD, argc, argv, &i, "--mask", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            mask_path = v;
        } else if ((m = cli_parse_pages(CMD, argc, argv, &i, 0, &in_opt)) != 0) {
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
    if (img.info.type != PIXSUM_U8 && img.info.type != PIXSUM_U16) {
        rc = cli_error(CMD, "%s: equalisation takes u8 or u16 images, this one is %s%s%s%s",
                       in_path, pixsum_type_name(img.info.type), img.info.sample[0] ? " (" : "",
                       img.info.sample, img.info.sample[0] ? ")" : "");
        goto done;
    }
    if (mask_path) {
        if (pxio_read(mask_path, NULL, &mask, err, sizeof err) != 0) {
            rc = cli_error(CMD, "%s", err);
            goto done;
        }
        if (mask.info.type != PIXSUM_U8 || mask.info.channels != 1) {
            rc = cli_error(CMD, "%s: the mask must be an 8-bit 1-channel image, not %s x%zu",
                           mask_path, pixsum_type_name(mask.info.type), mask.info.channels);
            goto done;
        }
    }
    int st = pixsum_equalize(ctx, &img.view, &img.view, mask_path ? &mask.view : NULL);
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

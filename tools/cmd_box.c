/*
 * cmd_box.c - `pixsum box`: a box filter (moving window sum, mean, variance
 * or standard deviation). Parses the options, reads the image, calls the
 * library's pixsum_box_filter() (streamed, no integral table) and writes the
 * result; the filter itself, its borders and type rules live in the library.
 *
 * Window placement: the output pixel (x, y) gets the window whose left column
 * is x - floor(W/2) and top row y - floor(H/2) (OpenCV's default anchor).
 * Borders: shrink (default; windows cut to the image, statistics over the
 * pixels inside), valid (only full windows: a smaller output), reflect101,
 * reflect, replicate (alias clamp), constant (--value V).
 * Output types: sum -> the narrowest integer type that cannot overflow for
 * one window (or --type); mean, var and std -> f64 (or --type f32, and for
 * means of u8/u16 images the image's own type, rounded to nearest).
 * With --batch, the pages of a TIFF (or the first axis of a .npy stack) are
 * N images filtered in one library call (a view of depth N) and written as
 * an (N, ...) .npy or a multi-page TIFF.
 */
#include "cli_util.h"
#include "commands.h"
#include "image_io.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const CMD = "box";

static void box_usage(FILE *f)
{
    fprintf(f,
            "usage: pixsum box IN -o OUT --window WxH [--stat sum|mean|var|std]\n"
            "                  [--border B] [--value V] [--type T] [--method NAME]\n"
            "                  [--page N | --batch]\n"
            "\n"
            "Box filter: each output pixel is the sum, mean, (population) variance or\n"
            "standard deviation of the W x H window around it, per channel, streamed\n"
            "(the image read once, the output written once, whatever the window).\n"
            "\n"
            "  --window WxH   window size (e.g. 15x15; a single N means NxN)\n"
            "  --stat S       sum (default), mean, var or std\n"
            "  --border B     shrink (default): windows cut at the image edge;\n"
            "                 valid: only full windows; reflect101 (gfedcb|abcdefgh|gfedcba,\n"
            "                 OpenCV's default); reflect (cba|abcdefgh|hgf); replicate\n"
            "                 (alias clamp); constant (the value of --value, default 0)\n"
            "  --value V      the constant border's value (an integer for integer images)\n"
            "  --type T       sum: u32 u64 i32 i64 f32 f64 (default: the narrowest integer\n"
            "                 type exact for one window); mean: f64 (default), f32, or u8/u16\n"
            "                 for u8/u16 images (rounded to nearest); var/std: f64, f32\n"
            "  --method NAME  box filter method (see 'pixsum methods --op box'); --threads N\n"
            "  --page N       read page N (0-based) of a multi-page TIFF\n"
            "  --batch        read the pages of a TIFF, or a .npy stack (N,H,W[,C]), as N\n"
            "                 images: N filtered images, written as an (N,...) .npy or one\n"
            "                 TIFF page each (the images spread over the threads)\n"
            "The window's left column is x - floor(W/2), its top row y - floor(H/2).\n");
}

int cmd_box(int argc, char **argv)
{
    const char *in_path = NULL, *out_path = NULL;
    pxio_options in_opt = {0}; /* --page N, --batch */
    pixsum_box_filter_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.stat = PIXSUM_BOX_SUM;
    spec.border = PIXSUM_BORDER_SHRINK;
    int have_value = 0;
    cli_common common;
    cli_common_init(&common, PIXSUM_OP_BOX_FILTER, CLI_TAKES_ALL);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        int m;
        if (cli_is_help(arg)) {
            box_usage(stdout);
            return CLI_EXIT_OK;
        }
        if ((m = cli_parse_common(CMD, argc, argv, &i, &common)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
        } else if ((m = cli_match(CMD, argc, argv, &i, "-o|--output", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            out_path = v;
        } else if ((m = cli_match(CMD, argc, argv, &i, "--window", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (cli_parse_wxh(v, &spec.kw, &spec.kh) != 0 || spec.kw == 0 || spec.kh == 0)
                return cli_usage_error(CMD, "--window takes WxH with W, H >= 1, not '%s'", v);
        } else if ((m = cli_match(CMD, argc, argv, &i, "--stat", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (!strcmp(v, "sum"))
                spec.stat = PIXSUM_BOX_SUM;
            else if (!strcmp(v, "mean"))
                spec.stat = PIXSUM_BOX_MEAN;
            else if (!strcmp(v, "var"))
                spec.stat = PIXSUM_BOX_VAR;
            else if (!strcmp(v, "std"))
                spec.stat = PIXSUM_BOX_STD;
            else
                return cli_usage_error(CMD, "--stat is sum, mean, var or std, not '%s'", v);
        } else if ((m = cli_match(CMD, argc, argv, &i, "--border", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (pixsum_border_from_name(v, &spec.border) != PIXSUM_OK)
                return cli_usage_error(CMD, "--border is shrink, valid, reflect101, reflect, "
                                            "replicate or constant, not '%s'", v);
        } else if ((m = cli_match(CMD, argc, argv, &i, "--value", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            char *end;
            errno = 0;
            spec.border_value = strtod(v, &end);
            if (end == v || *end || errno || !isfinite(spec.border_value))
                return cli_usage_error(CMD, "--value takes a finite number, not '%s'", v);
            have_value = 1;
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
    if (!spec.kw)
        return cli_usage_error(CMD, "no window (--window WxH)");
    if (spec.stat != PIXSUM_BOX_SUM && common.type != PIXSUM_TYPE_NONE &&
        common.type != PIXSUM_F32 && common.type != PIXSUM_F64 &&
        !(spec.stat == PIXSUM_BOX_MEAN && (common.type == PIXSUM_U8 || common.type == PIXSUM_U16)))
        return cli_usage_error(CMD, "--stat mean/var write f32 or f64 (std too; mean also u8 "
                                    "or u16 for images of that type), not %s",
                               pixsum_type_name(common.type));
    if (have_value && spec.border != PIXSUM_BORDER_CONSTANT)
        return cli_usage_error(CMD, "--value is the value of --border constant");
    if (cli_check_pages(CMD, &in_opt) != CLI_EXIT_OK)
        return CLI_EXIT_USAGE;
    int rc = cli_check_not_input(CMD, in_path, out_path, "the output");
    if (rc != 0)
        return rc;

    pixsum_ctx *ctx;
    rc = cli_new_ctx(CMD, &common, &ctx);
    if (rc != 0)
        return rc;
    char err[512];
    pxio_image img;
    if (pxio_read(in_path, &in_opt, &img, err, sizeof err) != 0) {
        pixsum_ctx_free(ctx);
        return cli_error(CMD, "%s", err);
    }
    cli_note_pages(CMD, in_path, &img.info, &in_opt);
    pixsum_view src = img.view, out = {0};
    size_t OW, OH;
    if (src.depth != 1 && !in_opt.batch) {
        rc = cli_error(CMD, "%s: the box filter takes 2-D images, not volumes (--batch reads "
                       "the pages or a .npy stack as N images)", in_path);
        goto done;
    }
    pixsum_box_filter_spec unit = spec;
    unit.kw = unit.kh = 1;
    if (pixsum_box_filter_type(src.type, &unit) == PIXSUM_TYPE_NONE) {
        rc = cli_error(CMD, "%s: box filters of %s pixels%s%s%s are not supported (they take "
                            "u8 u16 i16 i32 u32 f32 f64 pixels)",
                       in_path, pixsum_type_name(src.type), img.info.sample[0] ? " (" : "",
                       img.info.sample, img.info.sample[0] ? ")" : "");
        goto done;
    }
    if (spec.stat == PIXSUM_BOX_SUM && common.type != PIXSUM_TYPE_NONE) {
        int fl = src.type == PIXSUM_F32 || src.type == PIXSUM_F64;
        int sg = src.type == PIXSUM_I16 || src.type == PIXSUM_I32;
        pixsum_type t = common.type;
        int ok = t == PIXSUM_F32 || t == PIXSUM_F64 ||
                 (!fl && (t == PIXSUM_I32 || t == PIXSUM_I64)) ||
                 (!fl && !sg && (t == PIXSUM_U32 || t == PIXSUM_U64));
        if (!ok) {
            rc = cli_usage_error(CMD, "%s: --type %s: %s pixels give %s box sums, not %s",
                                 in_path, pixsum_type_name(t), pixsum_type_name(src.type),
                                 fl ? "f32 f64" : sg ? "i32 i64 f32 f64" : "u32 u64 i32 i64 f32 f64",
                                 pixsum_type_name(t));
            goto done;
        }
    }
    int st = pixsum_box_filter_shape(&spec, src.width, src.height, &OW, &OH);
    if (st != PIXSUM_OK) {
        rc = cli_lib_error(CMD, in_path, st);
        goto done;
    }
    pixsum_type otype = common.type;
    if (otype == PIXSUM_TYPE_NONE)
        otype = spec.stat == PIXSUM_BOX_SUM ? pixsum_box_filter_type(src.type, &spec)
                                            : PIXSUM_F64;
    if (otype == PIXSUM_TYPE_NONE) {
        rc = cli_error(CMD, "%s: no output type for box sums of %s with a %zux%zu window",
                       in_path, pixsum_type_name(src.type), spec.kw, spec.kh);
        goto done;
    }
    size_t ob = pixsum_packed_bytes(otype, OW, OH, src.depth, src.channels);
    void *od = ob && ob <= (size_t)PTRDIFF_MAX ? malloc(ob) : NULL;
    if (!od) {
        rc = cli_alloc_error(CMD, in_path, "the output", ob);
        goto done;
    }
    out = pixsum_view_3d(od, otype, OW, OH, src.depth, src.channels, 0, 0);
    if ((st = pixsum_box_filter(ctx, &src, &spec, &out)) != PIXSUM_OK) {
        rc = cli_lib_error(CMD, in_path, st);
        goto done;
    }
    if (pxio_write(out_path, &out, NULL, err, sizeof err) != 0)
        rc = cli_error(CMD, "%s", err);
done:
    free(out.data);
    pxio_free(&img);
    pixsum_ctx_free(ctx);
    return rc;
}

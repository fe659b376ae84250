/*
 * cmd_box.c - `pixsum box`: a box filter (moving window sum, mean or
 * variance) built on the library's integral image and box queries.
 *
 * Window placement: the output pixel (x, y) gets the window whose left column
 * is x - floor(W/2) and top row y - floor(H/2) (for odd sizes the window is
 * centred; this is OpenCV's default anchor). Borders:
 *   shrink     (default) the window is cut to the image; mean and variance are
 *              over the pixels inside it;
 *   replicate  the image is extended by repeating its edge pixels, so every
 *              window holds W x H pixels;
 *   valid      only positions where the window fits inside the image: the
 *              output is (width - W + 1) x (height - H + 1).
 * Output types: sum -> the integral table type (the smallest that cannot
 * overflow, or --type); mean and var -> f64 (or f32 with --type f32).
 * Variance is the population variance, never negative.
 */
#include "cli_util.h"
#include "commands.h"
#include "image_io.h"
#include "stream.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const CMD = "box";

enum stat_kind { STAT_SUM, STAT_MEAN, STAT_VAR };
enum border_kind { BORDER_SHRINK, BORDER_REPLICATE, BORDER_VALID };

static void box_usage(FILE *f)
{
    fprintf(f,
            "usage: pixsum box IN -o OUT --window WxH [--stat sum|mean|var]\n"
            "                  [--border shrink|replicate|valid] [--type T] [--method NAME]\n"
            "\n"
            "Box filter: each output pixel is the sum, mean or (population) variance of\n"
            "the W x H window around it, per channel, read from the integral image with\n"
            "4 lookups per window whatever its size.\n"
            "\n"
            "  --window WxH   window size (e.g. 15x15; a single N means NxN)\n"
            "  --stat S       sum (default), mean or var\n"
            "  --border B     shrink (default): windows cut at the image edge;\n"
            "                 replicate: edge pixels repeated; valid: only full windows\n"
            "  --type T       sum: table type (u32 u64 i64 f32 f64); mean/var: f32 or f64\n"
            "  --method NAME  integral method (see 'pixsum methods'); --threads N\n"
            "The window's left column is x - floor(W/2), its top row y - floor(H/2).\n");
}

/* Copies `in` into a new packed image extended by l/r columns and t/b rows of
 * repeated edge pixels. */
static int replicate_pad(const char *path, const pixsum_view *in, size_t l, size_t r, size_t t,
                         size_t b, pixsum_view *out)
{
    size_t W = in->width + l + r, H = in->height + t + b;
    size_t px = pixsum_type_size(in->type) * in->channels;
    size_t bytes = pixsum_packed_bytes(in->type, W, H, 1, in->channels);
    unsigned char *data = bytes && bytes <= (size_t)PTRDIFF_MAX ? malloc(bytes) : NULL;
    if (!data)
        return cli_alloc_error(CMD, path, "the image with its replicated border", bytes);
    for (size_t y = 0; y < H; y++) {
        size_t sy = y < t ? 0 : y - t >= in->height ? in->height - 1 : y - t;
        const unsigned char *src = (const unsigned char *)in->data + sy * in->row_stride;
        unsigned char *dst = data + y * W * px;
        for (size_t x = 0; x < l; x++)
            memcpy(dst + x * px, src, px);
        memcpy(dst + l * px, src, in->width * px);
        for (size_t x = 0; x < r; x++)
            memcpy(dst + (l + in->width + x) * px, src + (in->width - 1) * px, px);
    }
    *out = pixsum_view_2d(data, in->type, W, H, in->channels, 0);
    return 0;
}

int cmd_box(int argc, char **argv)
{
    const char *in_path = NULL, *out_path = NULL;
    size_t ww = 0, wh = 0;
    enum stat_kind stat = STAT_SUM;
    enum border_kind border = BORDER_SHRINK;
    cli_common common;
    cli_common_init(&common, PIXSUM_OP_INTEGRAL, CLI_TAKES_ALL);
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
            if (cli_parse_wxh(v, &ww, &wh) != 0 || ww == 0 || wh == 0)
                return cli_usage_error(CMD, "--window takes WxH with W, H >= 1, not '%s'", v);
        } else if ((m = cli_match(CMD, argc, argv, &i, "--stat", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (!strcmp(v, "sum"))
                stat = STAT_SUM;
            else if (!strcmp(v, "mean"))
                stat = STAT_MEAN;
            else if (!strcmp(v, "var"))
                stat = STAT_VAR;
            else
                return cli_usage_error(CMD, "--stat is sum, mean or var, not '%s'", v);
        } else if ((m = cli_match(CMD, argc, argv, &i, "--border", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (!strcmp(v, "shrink"))
                border = BORDER_SHRINK;
            else if (!strcmp(v, "replicate") || !strcmp(v, "clamp"))
                border = BORDER_REPLICATE;
            else if (!strcmp(v, "valid"))
                border = BORDER_VALID;
            else
                return cli_usage_error(CMD, "--border is shrink, replicate or valid, not '%s'",
                                       v);
        } else if (cli_take_input(CMD, arg, &in_path) != CLI_EXIT_OK) {
            return CLI_EXIT_USAGE;
        }
    }
    if (!in_path)
        return cli_usage_error(CMD, "no input file");
    if (!out_path)
        return cli_usage_error(CMD, "no output file (-o OUT)");
    if (!ww)
        return cli_usage_error(CMD, "no window (--window WxH)");
    if (stat != STAT_SUM && common.type != PIXSUM_TYPE_NONE && common.type != PIXSUM_F32 &&
        common.type != PIXSUM_F64)
        return cli_usage_error(CMD, "--stat mean/var write f32 or f64, not %s",
                               pixsum_type_name(common.type));
    if (border == BORDER_REPLICATE && (ww > ((size_t)1 << 20) || wh > ((size_t)1 << 20)))
        return cli_usage_error(CMD, "--window %zux%zu is too large for --border replicate "
                                    "(at most 1048576 a side)", ww, wh);
    int rc = cli_check_not_input(CMD, in_path, out_path, "the output");
    if (rc != 0)
        return rc;
    if (stat == STAT_VAR)
        common.op = PIXSUM_OP_INTEGRAL_SQ; /* the table and the squared table in one pass */

    pixsum_ctx *ctx;
    rc = cli_new_ctx(CMD, &common, &ctx);
    if (rc != 0)
        return rc;
    char err[512];
    pxio_image img;
    if (pxio_read(in_path, NULL, &img, err, sizeof err) != 0) {
        pixsum_ctx_free(ctx);
        return cli_error(CMD, "%s", err);
    }
    pixsum_view src = img.view, padded = {0}, table = {0}, sq = {0}, out = {0};
    pixsum_box *boxes = NULL;
    double *mean = NULL, *var = NULL;
    size_t W = src.width, H = src.height, C = src.channels;
    if (src.depth != 1) {
        rc = cli_error(CMD, "%s: the box filter takes 2-D images, not volumes", in_path);
        goto done;
    }
    /* the input's type, a --type of the sum table, the tables' sizes */
    if ((rc = cli_integral_check(CMD, in_path, &img.info,
                                 stat == STAT_SUM ? common.type : PIXSUM_TYPE_NONE,
                                 PIXSUM_TYPE_NONE, stat == STAT_VAR, 0)) != 0)
        goto done;
    if (border == BORDER_VALID && (ww > W || wh > H)) {
        rc = cli_error(CMD, "%s: a %zux%zu window does not fit a %zux%zu image (--border valid)",
                       in_path, ww, wh, W, H);
        goto done;
    }
    if (border == BORDER_REPLICATE) {
        if ((rc = replicate_pad(in_path, &img.view, ww / 2, ww - 1 - ww / 2, wh / 2,
                                wh - 1 - wh / 2, &padded)) != 0)
            goto done;
        src = padded;
    }
    size_t count = src.width * src.height;
    pixsum_type ttype = stat == STAT_SUM && common.type != PIXSUM_TYPE_NONE
                            ? common.type
                            : pixsum_integral_type(src.type, count, 0);
    size_t tb = pixsum_packed_bytes(ttype, src.width, src.height, 1, C);
    if (!tb || tb > (size_t)PTRDIFF_MAX || !(table.data = malloc(tb))) {
        rc = cli_alloc_error(CMD, in_path, "the integral table", tb);
        goto done;
    }
    table = pixsum_view_2d(table.data, ttype, src.width, src.height, C, 0);
    if (stat == STAT_VAR) {
        pixsum_type qt = pixsum_integral_type(src.type, count, 1);
        size_t qb = pixsum_packed_bytes(qt, src.width, src.height, 1, C);
        void *qd = qb && qb <= (size_t)PTRDIFF_MAX ? malloc(qb) : NULL;
        if (!qd) {
            rc = cli_alloc_error(CMD, in_path, "the squared table", qb);
            goto done;
        }
        sq = pixsum_view_2d(qd, qt, src.width, src.height, C, 0);
    }
    int st = stat == STAT_VAR ? pixsum_integral_sq(ctx, &src, &table, &sq)
                              : pixsum_integral(ctx, &src, &table);
    if (st != PIXSUM_OK) {
        rc = cli_lib_error(CMD, in_path, st);
        goto done;
    }

    size_t OW = border == BORDER_VALID ? W - ww + 1 : W;
    size_t OH = border == BORDER_VALID ? H - wh + 1 : H;
    pixsum_type otype = stat == STAT_SUM ? ttype
                        : common.type == PIXSUM_F32 ? PIXSUM_F32 : PIXSUM_F64;
    size_t ob = pixsum_packed_bytes(otype, OW, OH, 1, C);
    void *od = ob ? malloc(ob) : NULL;
    boxes = malloc(OW * sizeof *boxes);
    mean = stat != STAT_SUM ? malloc(OW * C * sizeof *mean) : NULL;
    var = stat == STAT_VAR ? malloc(OW * C * sizeof *var) : NULL;
    out = pixsum_view_2d(od, otype, OW, OH, C, 0);
    if (!od || !boxes || (stat != STAT_SUM && !mean) || (stat == STAT_VAR && !var)) {
        rc = cli_alloc_error(CMD, in_path, "the output", ob);
        goto done;
    }
    for (size_t y = 0; y < OH; y++) {
        size_t y0 = y, h = wh;
        if (border == BORDER_SHRINK) {
            size_t top = wh / 2; /* window rows above y */
            y0 = y >= top ? y - top : 0;
            size_t y1 = y - top + wh; /* exclusive bottom, may wrap below 0 */
            if (y < top)
                y1 = wh - (top - y);
            if (y1 > H)
                y1 = H;
            h = y1 - y0;
        }
        for (size_t x = 0; x < OW; x++) {
            size_t x0 = x, w = ww;
            if (border == BORDER_SHRINK) {
                size_t left = ww / 2;
                x0 = x >= left ? x - left : 0;
                size_t x1 = x >= left ? x - left + ww : ww - (left - x);
                if (x1 > W)
                    x1 = W;
                w = x1 - x0;
            }
            boxes[x] = (pixsum_box){.x = x0, .y = y0, .z = 0, .w = w, .h = h, .d = 1};
        }
        unsigned char *orow = (unsigned char *)od + y * OW * C * pixsum_type_size(otype);
        if (stat == STAT_SUM) {
            st = pixsum_box_sums(ctx, &table, boxes, OW, orow);
        } else {
            st = pixsum_box_stats(ctx, &table, stat == STAT_VAR ? &sq : NULL, boxes, OW, mean,
                                  var);
            const double *res = stat == STAT_VAR ? var : mean;
            for (size_t k = 0; k < OW * C; k++) {
                if (otype == PIXSUM_F32)
                    ((float *)orow)[k] = (float)res[k];
                else
                    ((double *)orow)[k] = res[k];
            }
        }
        if (st != PIXSUM_OK) {
            rc = cli_lib_error(CMD, "box query", st);
            goto done;
        }
    }
    if (pxio_write(out_path, &out, NULL, err, sizeof err) != 0)
        rc = cli_error(CMD, "%s", err);
done:
    free(out.data);
    free(boxes);
    free(mean);
    free(var);
    free(table.data);
    free(sq.data);
    free(padded.data);
    pxio_free(&img);
    pixsum_ctx_free(ctx);
    return rc;
}

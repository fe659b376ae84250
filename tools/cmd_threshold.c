/*
 * cmd_threshold.c - `pixsum threshold` (local thresholds: mean, Niblack,
 * Sauvola) and `pixsum normalize` (local normalisation (x - m) / (s + eps)).
 * Parses the options, reads the image, calls the library's
 * pixsum_threshold_local() / pixsum_normalize_local() (streamed on the box
 * filter; the rules, borders and types live in the library) and writes the
 * result with pxio_write(), which leaves no file behind on failure.
 * With --batch, the pages of a TIFF (or the first axis of a .npy stack) are
 * N images computed in one library call (a view of depth N, the images over
 * the threads) and written as an (N, ...) .npy or a multi-page TIFF, as
 * `pixsum box --batch` does.
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

static void threshold_usage(FILE *f)
{
    fprintf(f,
            "usage: pixsum threshold IN -o OUT --method mean|niblack|sauvola --window N|WxH\n"
            "                        [--k K] [--r R] [--offset C] [--border B] [--value V]\n"
            "                        [--output map|mask] [--foreground F] [--type f32|f64]\n"
            "                        [--method-impl NAME] [--threads N] [--page N | --batch]\n"
            "\n"
            "Local threshold of a one-channel image from the mean m and standard deviation\n"
            "s of the window around each pixel (streamed, no integral table):\n"
            "  mean     T = m - offset             (--offset, default 0)\n"
            "  niblack  T = m + k s                (--k, default 0.2; Niblack's usual k is\n"
            "                                       negative; scikit-image's k is -k here)\n"
            "  sauvola  T = m (1 + k (s / r - 1))  (--k 0.2, --r default: half the type's\n"
            "                                       range, 127.5 for u8, 1 for floats)\n"
            "  --output map   the threshold map T (f64, or --type f32; default)\n"
            "  --output mask  u8: F (--foreground, default 255) where pixel > T, else 0\n"
            "  --border B     reflect101 (default), reflect, replicate, constant (--value),\n"
            "                 shrink, valid (a smaller output)\n"
            "  --method-impl NAME  box filter method (box.stream, box.omp); --threads N\n"
            "  --page N       read page N (0-based) of a multi-page TIFF\n"
            "  --batch        read the pages of a TIFF, or a .npy stack (N,H,W), as N images:\n"
            "                 N maps or masks, written as an (N,...) .npy or one TIFF page\n"
            "                 each (the images spread over the threads)\n");
}

static void normalize_usage(FILE *f)
{
    fprintf(f,
            "usage: pixsum normalize IN -o OUT --window N|WxH [--eps E] [--border B]\n"
            "                        [--value V] [--type f32|f64] [--method NAME] [--threads N]\n"
            "                        [--page N | --batch]\n"
            "\n"
            "Local normalisation: (x - m) / (s + eps) per pixel and channel, m and s the mean\n"
            "and standard deviation of the window around it (0 where s + eps is 0).\n"
            "  --eps E     default 1e-6\n"
            "  --border B  reflect101 (default), reflect, replicate, constant (--value),\n"
            "              shrink, valid\n"
            "  --type T    f32 (default) or f64\n"
            "  --page N    read page N (0-based) of a multi-page TIFF\n"
            "  --batch     read the pages of a TIFF, or a .npy stack (N,H,W[,C]), as N\n"
            "              images: N results, written as an (N,...) .npy or one TIFF page\n"
            "              each (the images spread over the threads)\n");
}

/* A finite number option. Returns 0, or a usage error's exit code. */
static int number_arg(const char *cmd, const char *opt, const char *v, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || *end || errno || !isfinite(d))
        return cli_usage_error(cmd, "%s takes a finite number, not '%s'", opt, v);
    *out = d;
    return 0;
}

/* The common tail: read, allocate, run `op`, write. */
typedef struct local_req {
    const char *cmd;
    int normalize;
    pixsum_threshold_spec ts;
    pixsum_normalize_spec ns;
    int mask;
    pixsum_type otype;
} local_req;

static int run_local(local_req *q, const char *in_path, const char *out_path,
                     const pxio_options *in_opt, cli_common *common)
{
    pixsum_ctx *ctx;
    int rc = cli_new_ctx(q->cmd, common, &ctx);
    if (rc != 0)
        return rc;
    char err[512];
    pxio_image img;
    if (pxio_read(in_path, in_opt, &img, err, sizeof err) != 0) {
        pixsum_ctx_free(ctx);
        return cli_error(q->cmd, "%s", err);
    }
    cli_note_pages(q->cmd, in_path, &img.info, in_opt);
    pixsum_view src = img.view, out = {0};
    size_t OW, OH;
    if (src.depth != 1 && !in_opt->batch) {
        rc = cli_error(q->cmd, "%s: 2-D images only, not volumes (--batch reads the pages or "
                       "a .npy stack as N images)", in_path);
        goto done;
    }
    if (!q->normalize && src.channels != 1) {
        rc = cli_error(q->cmd, "%s: local thresholds take one-channel images, not %zu "
                               "channels (convert to gray first)", in_path, src.channels);
        goto done;
    }
    pixsum_box_filter_spec shape;
    memset(&shape, 0, sizeof shape);
    shape.kw = q->normalize ? q->ns.kw : q->ts.kw;
    shape.kh = q->normalize ? q->ns.kh : q->ts.kh;
    shape.border = q->normalize ? q->ns.border : q->ts.border;
    int st = pixsum_box_filter_shape(&shape, src.width, src.height, &OW, &OH);
    if (st != PIXSUM_OK) {
        rc = cli_lib_error(q->cmd, in_path, st);
        goto done;
    }
    pixsum_type ot = q->mask ? PIXSUM_U8 : q->otype;
    size_t ch = q->normalize ? src.channels : 1;
    size_t ob = pixsum_packed_bytes(ot, OW, OH, src.depth, ch);
    void *od = ob && ob <= (size_t)PTRDIFF_MAX ? malloc(ob) : NULL;
    if (!od) {
        rc = cli_alloc_error(q->cmd, in_path, "the output", ob);
        goto done;
    }
    out = pixsum_view_3d(od, ot, OW, OH, src.depth, ch, 0, 0);
    if (q->normalize)
        st = pixsum_normalize_local(ctx, &src, &q->ns, &out);
    else
        st = pixsum_threshold_local(ctx, &src, &q->ts, q->mask ? NULL : &out,
                                    q->mask ? &out : NULL);
    if (st != PIXSUM_OK) {
        rc = cli_lib_error(q->cmd, in_path, st);
        goto done;
    }
    if (pxio_write(out_path, &out, NULL, err, sizeof err) != 0)
        rc = cli_error(q->cmd, "%s", err);
done:
    free(out.data);
    pxio_free(&img);
    pixsum_ctx_free(ctx);
    return rc;
}

/* Both commands: normalize = 0 for `threshold`. */
static int local_command(int argc, char **argv, int normalize)
{
    local_req q;
    memset(&q, 0, sizeof q);
    q.cmd = normalize ? "normalize" : "threshold";
    q.normalize = normalize;
    q.ts.k = 0.2;
    q.ns.eps = 1e-6;
    q.otype = normalize ? PIXSUM_F32 : PIXSUM_F64;
    const char *in_path = NULL, *out_path = NULL;
    pxio_options in_opt = {0};
    size_t kw = 0, kh = 0;
    pixsum_border border = PIXSUM_BORDER_REFLECT101;
    double value = 0;
    int have_value = 0, have_method = 0, rc;
    cli_common common;
    cli_common_init(&common, PIXSUM_OP_BOX_FILTER, CLI_TAKES_ALL);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        int m;
        if (cli_is_help(arg)) {
            (normalize ? normalize_usage : threshold_usage)(stdout);
            return CLI_EXIT_OK;
        }
        if (!normalize && (m = cli_match(q.cmd, argc, argv, &i, "--method", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (!strcmp(v, "mean"))
                q.ts.method = PIXSUM_THRESHOLD_MEAN;
            else if (!strcmp(v, "niblack"))
                q.ts.method = PIXSUM_THRESHOLD_NIBLACK;
            else if (!strcmp(v, "sauvola"))
                q.ts.method = PIXSUM_THRESHOLD_SAUVOLA;
            else
                return cli_usage_error(q.cmd, "--method is mean, niblack or sauvola, not '%s'",
                                       v);
            have_method = 1;
        } else if (!normalize &&
                   (m = cli_match(q.cmd, argc, argv, &i, "--method-impl", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            char *fake[3] = {argv[0], (char *)"--method", (char *)v};
            int j = 1;
            if (cli_parse_common(q.cmd, 3, fake, &j, &common) < 0)
                return CLI_EXIT_USAGE;
        } else if ((m = cli_parse_common(q.cmd, argc, argv, &i, &common)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
        } else if (!normalize && (m = cli_match(q.cmd, argc, argv, &i, "--output", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (!strcmp(v, "map") || !strcmp(v, "mask"))
                q.mask = !strcmp(v, "mask"); /* --output map|mask; -o names the file */
            else
                out_path = v;
        } else if ((m = cli_match(q.cmd, argc, argv, &i, "-o|--output", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            out_path = v;
        } else if ((m = cli_match(q.cmd, argc, argv, &i, "--window", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (cli_parse_wxh(v, &kw, &kh) != 0 || kw == 0 || kh == 0)
                return cli_usage_error(q.cmd, "--window takes N or WxH with W, H >= 1, not "
                                              "'%s'", v);
        } else if ((m = cli_match(q.cmd, argc, argv, &i, "--border", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (pixsum_border_from_name(v, &border) != PIXSUM_OK)
                return cli_usage_error(q.cmd, "--border is reflect101, reflect, replicate, "
                                              "constant, shrink or valid, not '%s'", v);
        } else if ((m = cli_match(q.cmd, argc, argv, &i, "--value", &v)) != 0) {
            if (m < 0 || (rc = number_arg(q.cmd, "--value", v, &value)) != 0)
                return CLI_EXIT_USAGE;
            have_value = 1;
        } else if (!normalize && (m = cli_match(q.cmd, argc, argv, &i, "--k", &v)) != 0) {
            if (m < 0 || number_arg(q.cmd, "--k", v, &q.ts.k) != 0)
                return CLI_EXIT_USAGE;
        } else if (!normalize && (m = cli_match(q.cmd, argc, argv, &i, "--r", &v)) != 0) {
            if (m < 0 || number_arg(q.cmd, "--r", v, &q.ts.r) != 0)
                return CLI_EXIT_USAGE;
            if (!(q.ts.r > 0))
                return cli_usage_error(q.cmd, "--r must be > 0");
        } else if (!normalize && (m = cli_match(q.cmd, argc, argv, &i, "--offset", &v)) != 0) {
            if (m < 0 || number_arg(q.cmd, "--offset", v, &q.ts.offset) != 0)
                return CLI_EXIT_USAGE;
        } else if (!normalize &&
                   (m = cli_match(q.cmd, argc, argv, &i, "--foreground", &v)) != 0) {
            double fgv = 0;
            if (m < 0 || number_arg(q.cmd, "--foreground", v, &fgv) != 0)
                return CLI_EXIT_USAGE;
            if (fgv < 1 || fgv > 255 || fgv != floor(fgv))
                return cli_usage_error(q.cmd, "--foreground is an integer 1..255, not '%s'", v);
            q.ts.foreground = (uint8_t)fgv;
        } else if (normalize && (m = cli_match(q.cmd, argc, argv, &i, "--eps", &v)) != 0) {
            if (m < 0 || number_arg(q.cmd, "--eps", v, &q.ns.eps) != 0)
                return CLI_EXIT_USAGE;
            if (q.ns.eps < 0)
                return cli_usage_error(q.cmd, "--eps must be >= 0");
        } else if ((m = cli_parse_pages(q.cmd, argc, argv, &i, 1, &in_opt)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
        } else if (cli_take_input(q.cmd, arg, &in_path) != CLI_EXIT_OK) {
            return CLI_EXIT_USAGE;
        }
    }
    if (!in_path)
        return cli_usage_error(q.cmd, "no input file");
    if (!out_path)
        return cli_usage_error(q.cmd, "no output file (-o OUT)");
    if (!kw)
        return cli_usage_error(q.cmd, "no window (--window N or WxH)");
    if (!normalize && !have_method)
        return cli_usage_error(q.cmd, "no method (--method mean|niblack|sauvola)");
    if (have_value && border != PIXSUM_BORDER_CONSTANT)
        return cli_usage_error(q.cmd, "--value is the value of --border constant");
    if (cli_check_pages(q.cmd, &in_opt) != CLI_EXIT_OK)
        return CLI_EXIT_USAGE;
    if (common.type != PIXSUM_TYPE_NONE) {
        if (common.type != PIXSUM_F32 && common.type != PIXSUM_F64)
            return cli_usage_error(q.cmd, "--type is f32 or f64, not %s",
                                   pixsum_type_name(common.type));
        if (q.mask)
            return cli_usage_error(q.cmd, "--type applies to the map; the mask is u8");
        q.otype = common.type;
    }
    rc = cli_check_not_input(q.cmd, in_path, out_path, "the output");
    if (rc != 0)
        return rc;
    q.ts.kw = q.ns.kw = kw;
    q.ts.kh = q.ns.kh = kh;
    q.ts.border = q.ns.border = border;
    q.ts.border_value = q.ns.border_value = value;
    return run_local(&q, in_path, out_path, &in_opt, &common);
}

int cmd_threshold(int argc, char **argv)
{
    return local_command(argc, argv, 0);
}

int cmd_normalize(int argc, char **argv)
{
    return local_command(argc, argv, 1);
}

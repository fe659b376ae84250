/*
 * cmd_integral.c - `pixsum integral`: the integral image (summed-area table)
 * of an image file, optionally with its squared table, padded layout, wrap-
 * around arithmetic or the 45-degree tilted table. Images whose tables do not
 * fit --max-memory (or with --stream) are processed strip by strip (stream.c);
 * the others in memory. With --batch, the pages of a TIFF (or the first axis
 * of a .npy stack) are N images and get N tables (pixsum_integral_batch()),
 * written as an (N, ...) .npy or a multi-page TIFF.
 */
#include "cli_util.h"
#include "commands.h"
#include "image_io.h"
#include "mpi_cli.h"
#include "stream.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const CMD = "integral";

static void integral_usage(FILE *f)
{
    fprintf(f,
            "usage: pixsum integral IN -o OUT [options]\n"
            "\n"
            "Computes the integral image (summed-area table) of IN and writes it to OUT.\n"
            "Formats by extension: .npy and .tif/.tiff hold every table type; .pfm holds\n"
            "f32 tables of 1 or 3 channels. IN may be .npy .pgm .ppm .pfm .png .jpg .tif.\n"
            "\n"
            "options:\n"
            "  -o, --output OUT     the integral table\n"
            "  --type T             table type: u32 u64 i64 f32 f64 (default: the smallest\n"
            "                       that cannot overflow for this image)\n"
            "  --wrap               modular integer arithmetic instead of refusing a type\n"
            "                       that can overflow: every box sum below 2^32 (u32) or\n"
            "                       2^64 (u64) is still exact (needs an integer --type or\n"
            "                       --sq-type: the default types cannot overflow)\n"
            "  --padded             (W+1) x (H+1) table with a leading zero row and column\n"
            "  --squared SQOUT      also write the squared table (sums of pixel^2)\n"
            "  --sq-type T          type of the squared table (with --squared; default by rule)\n"
            "  --tilted             OUT gets the 45-degree tilted integral ((W+1) x (H+1))\n"
            "  --volume             read a 3-D .npy array, or every page of a TIFF, as a\n"
            "                       volume (D,H,W): one 3-D table\n"
            "  --batch              read the pages of a TIFF, or a .npy stack (N,H,W[,C]),\n"
            "                       as N images: N tables (type chosen for one image),\n"
            "                       written as (N,...) .npy or one TIFF page each\n"
            "  --page N             read page N (0-based) of a multi-page TIFF\n"
            "  --stream             process strip by strip (TIFF/.npy/any input, 2-D only)\n"
            "  --no-stream          always work in memory\n"
            "  --strip-rows N       rows per strip when streaming (default: 16 MiB of table)\n"
            "  --max-memory SIZE    stream when the in-memory work would need more than\n"
            "                       SIZE bytes (suffix K, M, G; default 2G)\n"
            "  --bigtiff            write BigTIFF even for small .tif outputs\n"
            "  --compress C         TIFF outputs: none (default), deflate, lzw, zstd\n"
            "  --method NAME        integral method (see 'pixsum methods'; default auto)\n"
            "  --threads N          threads for threaded methods (0 = all cores)\n"
            "  --device N           CUDA device for CUDA methods\n"
            "  -v, --verbose        print what was computed and how long it took\n"
            "  --mpi                distributed over MPI ranks (mpirun -np N pixsum integral\n"
            "                       IN -o OUT.npy --mpi; see pixsum integral --mpi --help)\n");
}

/* 1 for the integer table types (the ones --wrap can make wrap around). */
static int int_table(pixsum_type t)
{
    return t == PIXSUM_U32 || t == PIXSUM_U64 || t == PIXSUM_I64;
}

/* Parses SIZE with an optional K/M/G suffix (powers of 1024). */
static int parse_bytes(const char *s, size_t *out)
{
    char num[32];
    size_t n = strlen(s), mult = 1;
    if (n == 0 || n >= sizeof num)
        return -1;
    memcpy(num, s, n + 1);
    char last = num[n - 1];
    if (last == 'K' || last == 'k')
        mult = (size_t)1 << 10;
    else if (last == 'M' || last == 'm')
        mult = (size_t)1 << 20;
    else if (last == 'G' || last == 'g')
        mult = (size_t)1 << 30;
    if (mult != 1)
        num[n - 1] = '\0';
    size_t v;
    if (cli_parse_size(num, &v) != 0 || v > SIZE_MAX / mult)
        return -1;
    *out = v * mult;
    return 0;
}

typedef struct integral_args {
    const char *in, *out, *sq;
    cli_common common;
    pixsum_type sq_type;
    int wrap, padded, tilted, stream, no_stream, verbose;
    pxio_options in_opt; /* --volume, --batch, --page */
    int max_memory_set;
    size_t max_memory;
    size_t strip_rows;
    pxio_write_options wopt;
} integral_args;

static int parse_args(int argc, char **argv, integral_args *a)
{
    memset(a, 0, sizeof *a);
    cli_common_init(&a->common, PIXSUM_OP_INTEGRAL, CLI_TAKES_ALL);
    a->max_memory = (size_t)2 << 30;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        int m;
        if (cli_is_help(arg)) {
            integral_usage(stdout);
            return -1;
        }
        if ((m = cli_parse_common(CMD, argc, argv, &i, &a->common)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
        } else if ((m = cli_parse_pages(CMD, argc, argv, &i, 1, &a->in_opt)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
        } else if ((m = cli_match(CMD, argc, argv, &i, "-o|--output", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            a->out = v;
        } else if ((m = cli_match(CMD, argc, argv, &i, "--squared", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            a->sq = v;
        } else if ((m = cli_match(CMD, argc, argv, &i, "--sq-type", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if ((a->sq_type = pixsum_type_from_name(v)) == PIXSUM_TYPE_NONE)
                return cli_usage_error(CMD, "unknown --sq-type '%s' (u64 f64 ...)", v);
        } else if ((m = cli_match(CMD, argc, argv, &i, "--max-memory", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (parse_bytes(v, &a->max_memory) != 0)
                return cli_usage_error(CMD, "--max-memory takes a size like 512M or 4G, not '%s'",
                                       v);
            a->max_memory_set = 1;
        } else if ((m = cli_match(CMD, argc, argv, &i, "--compress", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            a->wopt.compression = v;
        } else if ((m = cli_match(CMD, argc, argv, &i, "--strip-rows", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (cli_parse_size(v, &a->strip_rows) != 0 || a->strip_rows == 0)
                return cli_usage_error(CMD, "--strip-rows takes a row count >= 1, not '%s'", v);
        } else if (!strcmp(arg, "--wrap")) {
            a->wrap = 1;
        } else if (!strcmp(arg, "--padded")) {
            a->padded = 1;
        } else if (!strcmp(arg, "--tilted")) {
            a->tilted = 1;
        } else if (!strcmp(arg, "--volume")) {
            a->in_opt.volume = 1;
        } else if (!strcmp(arg, "--stream")) {
            a->stream = 1;
        } else if (!strcmp(arg, "--no-stream")) {
            a->no_stream = 1;
        } else if (!strcmp(arg, "--bigtiff")) {
            a->wopt.bigtiff = 1;
        } else if (!strcmp(arg, "-v") || !strcmp(arg, "--verbose")) {
            a->verbose = 1;
        } else if (cli_take_input(CMD, arg, &a->in) != CLI_EXIT_OK) {
            return CLI_EXIT_USAGE;
        }
    }
    if (!a->in)
        return cli_usage_error(CMD, "no input file");
    if (!a->out)
        return cli_usage_error(CMD, "no output file (-o OUT)");
    if (a->stream && a->no_stream)
        return cli_usage_error(CMD, "--stream and --no-stream contradict each other");
    if (cli_check_pages(CMD, &a->in_opt) != CLI_EXIT_OK)
        return CLI_EXIT_USAGE;
    if (a->in_opt.batch && (a->stream || a->tilted))
        return cli_usage_error(CMD, "--batch works in memory on plain or squared tables "
                                    "(not with %s)", a->stream ? "--stream" : "--tilted");
    if (a->tilted && (a->sq || a->padded || a->stream))
        return cli_usage_error(CMD, "--tilted goes with neither --squared, --padded nor "
                                    "--stream (the tilted table is always padded)");
    if (a->sq && !strcmp(a->sq, a->out))
        return cli_usage_error(CMD, "--squared needs a file of its own");
    int rc;
    if ((rc = cli_check_not_input(CMD, a->in, a->out, "the output")) != 0 ||
        (rc = cli_check_not_input(CMD, a->in, a->sq, "the --squared output")) != 0)
        return rc;
    /* options that would have no effect, because of another option's value */
    if (a->sq_type != PIXSUM_TYPE_NONE && !a->sq)
        return cli_usage_error(CMD, "--sq-type has no effect without --squared SQOUT");
    if ((a->wopt.compression || a->wopt.bigtiff) && !cli_is_tiff_name(a->out) &&
        !(a->sq && cli_is_tiff_name(a->sq)))
        return cli_usage_error(CMD, "%s has no effect: only TIFF outputs (.tif .tiff .btf "
                                    ".tf8) are %s, not '%s'",
                               a->wopt.compression ? "--compress" : "--bigtiff",
                               a->wopt.compression ? "compressed" : "BigTIFF", a->out);
    if (a->wrap && !int_table(a->common.type) && !(a->sq && int_table(a->sq_type)))
        return cli_usage_error(CMD, "--wrap has no effect without an integer --type or "
                                    "--sq-type (u32 u64 i64): the default types cannot "
                                    "overflow and f32/f64 tables do not wrap");
    if (a->strip_rows && (a->no_stream || a->tilted))
        return cli_usage_error(CMD, "--strip-rows has no effect with %s (nothing is streamed)",
                               a->tilted ? "--tilted" : "--no-stream");
    if (a->max_memory_set && (a->stream || a->no_stream || a->tilted))
        return cli_usage_error(CMD, "--max-memory has no effect with %s (it chooses between "
                                    "streaming and memory)",
                               a->tilted ? "--tilted" : a->stream ? "--stream" : "--no-stream");
    if (a->tilted)
        a->common.op = PIXSUM_OP_TILTED;
    else if (a->sq)
        a->common.op = PIXSUM_OP_INTEGRAL_SQ;
    return 0;
}

/* Allocates a packed table for `in` of `type` with the shape the context
 * gives (or the tilted shape, or one table per image of a batch). */
static int make_table(const pixsum_ctx *ctx, const char *path, const pixsum_view *in,
                      pixsum_type type, int tilted, int batch, pixsum_view *out,
                      const char *what)
{
    size_t w, h, d;
    if (tilted) {
        w = in->width + 1, h = in->height + 1, d = 1;
    } else if (batch) {
        pixsum_view one = *in;
        one.depth = 1;
        pixsum_integral_shape(ctx, &one, &w, &h, NULL);
        d = in->depth;
    } else {
        pixsum_integral_shape(ctx, in, &w, &h, &d);
    }
    size_t bytes = pixsum_packed_bytes(type, w, h, d, in->channels);
    void *data = bytes && bytes <= (size_t)PTRDIFF_MAX ? malloc(bytes) : NULL;
    if (!data)
        return cli_alloc_error(CMD, path, what, bytes);
    *out = pixsum_view_3d(data, type, w, h, d, in->channels, 0, 0);
    return 0;
}

static int run_in_memory(const integral_args *a, pixsum_ctx *ctx)
{
    char err[512];
    pxio_image img;
    if (pxio_read(a->in, &a->in_opt, &img, err, sizeof err) != 0)
        return cli_error(CMD, "%s", err);
    cli_note_pages(CMD, a->in, &img.info, &a->in_opt);
    const pixsum_view *in = &img.view;
    int batch = a->in_opt.batch;
    if (in->depth > 1 && a->tilted) {
        pxio_free(&img);
        return cli_error(CMD, "%s: the tilted integral is 2-D; this is a volume", a->in);
    }
    /* the input's type, the types named by --type/--sq-type, the tables' sizes */
    int rc = cli_integral_check(CMD, a->in, &img.info, a->common.type, a->sq_type,
                                a->sq != NULL, a->padded || a->tilted ? 1 : 0);
    if (rc != 0) {
        pxio_free(&img);
        return rc;
    }
    /* the overflow rule counts one image of a batch */
    size_t count = in->width * in->height * (batch ? 1 : in->depth);
    pixsum_type type = a->common.type;
    if (type == PIXSUM_TYPE_NONE)
        type = pixsum_integral_type(in->type, count, 0);
    pixsum_type sq_type = a->sq_type;
    if (a->sq && sq_type == PIXSUM_TYPE_NONE)
        sq_type = pixsum_integral_type(in->type, count, 1);
    pixsum_view out = {0}, sq = {0};
    rc = make_table(ctx, a->in, in, type, a->tilted, batch, &out, "the integral table");
    if (rc == 0 && a->sq)
        rc = make_table(ctx, a->in, in, sq_type, 0, batch, &sq, "the squared table");
    double t0 = cli_now(), t1 = t0;
    if (rc == 0) {
        int st;
        if (batch)
            st = pixsum_integral_batch(ctx, in, &out, a->sq ? &sq : NULL);
        else if (a->tilted)
            st = pixsum_integral_tilted(ctx, in, &out);
        else if (a->sq)
            st = pixsum_integral_sq(ctx, in, &out, &sq);
        else
            st = pixsum_integral(ctx, in, &out);
        t1 = cli_now();
        if (st != PIXSUM_OK)
            rc = cli_lib_error(CMD, a->in, st);
    }
    /* Both tables or neither: each is written whole first, then they are
     * put in place together (pxio_writer_commit_all()). */
    pxio_writer *tables[2] = {NULL, NULL};
    if (rc == 0 && (pxio_write_staged(a->out, &out, &a->wopt, &tables[0], err, sizeof err) != 0 ||
                    (a->sq && pxio_write_staged(a->sq, &sq, &a->wopt, &tables[1], err,
                                                sizeof err) != 0))) {
        rc = cli_error(CMD, "%s", err);
        pxio_writer_abort(tables[0]);
    } else if (rc == 0 && pxio_writer_commit_all(tables, 2, err, sizeof err) != 0) {
        rc = cli_error(CMD, "%s", err);
    }
    if (rc == 0 && a->verbose) {
        char shape[96];
        if (batch)
            snprintf(shape, sizeof shape, "%zu images of %zu x %zu", in->depth, in->width,
                     in->height);
        else if (in->depth > 1)
            snprintf(shape, sizeof shape, "%zu x %zu x %zu", in->width, in->height, in->depth);
        else
            snprintf(shape, sizeof shape, "%zu x %zu", in->width, in->height);
        printf("%s: %s x %zu channel(s) %s -> %s %s table%s in %.3f ms\n", a->out, shape,
               in->channels, pixsum_type_name(in->type), pixsum_type_name(type),
               a->tilted ? "tilted" : a->padded ? "padded" : "inclusive",
               a->sq ? " (+ squared)" : "", (t1 - t0) * 1e3);
    }
    free(out.data);
    free(sq.data);
    pxio_free(&img);
    return rc;
}

int cmd_integral(int argc, char **argv)
{
    if (mpi_cli_wanted(argc, argv)) /* distributed: tools/cmd_integral_mpi.c */
        return cmd_integral_mpi(argc, argv);
    integral_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? CLI_EXIT_OK : rc;

    pixsum_ctx *ctx;
    if ((rc = cli_new_ctx(CMD, &a.common, &ctx)) != 0)
        return rc;
    pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, a.wrap);
    pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, a.padded);

    /* Decide between memory and streaming from the header. */
    int stream = a.stream;
    if (!stream && !a.no_stream && !a.tilted && !a.in_opt.batch) {
        char err[512];
        pxio_info info;
        if (pxio_probe(a.in, &a.in_opt, &info, err, sizeof err) != 0) {
            pixsum_ctx_free(ctx);
            return cli_error(CMD, "%s", err);
        }
        /* the reader checked the input's size; a table 8 bytes a sample that
         * overflows counts as too large for memory (streaming then says so) */
        size_t in_bytes = pixsum_packed_bytes(info.type, info.width, info.height, info.depth,
                                              info.channels);
        size_t table = pixsum_packed_bytes(PIXSUM_F64, info.width + 1, info.height + 1,
                                           info.depth, info.channels);
        int too_big = table == 0 || table > (SIZE_MAX - in_bytes) / (a.sq ? 2 : 1);
        if (info.depth == 1 && (too_big || in_bytes + table * (a.sq ? 2 : 1) > a.max_memory))
            stream = 1;
    }
    if (stream) {
        pxio_info info;
        char err[512];
        if (pxio_probe(a.in, &a.in_opt, &info, err, sizeof err) == 0)
            cli_note_pages(CMD, a.in, &info, &a.in_opt); /* else the stream says why */
        cli_integral_job job = {
            .cmd = CMD, .in_path = a.in, .in_opt = &a.in_opt, .out_path = a.out,
            .sq_path = a.sq, .out_type = a.common.type, .sq_type = a.sq_type,
            .wrap = a.wrap, .padded = a.padded, .wopt = a.wopt, .ctx = ctx,
            .max_strip_bytes = (size_t)16 << 20, .strip_rows = a.strip_rows, .progress = 1,
        };
        double t0 = cli_now();
        rc = cli_integral_stream(&job);
        if (rc == 0 && a.verbose)
            printf("%s: streamed integral table%s in %.3f s\n", a.out,
                   a.sq ? " (+ squared)" : "", cli_now() - t0);
    } else {
        rc = run_in_memory(&a, ctx);
    }
    pixsum_ctx_free(ctx);
    return rc;
}

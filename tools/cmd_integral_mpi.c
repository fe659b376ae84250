/*
 * cmd_integral_mpi.c - `mpirun -np N pixsum integral IN -o OUT.npy --mpi`:
 * the integral image of a file too large for one machine.
 *
 * Every rank takes a balanced strip of rows (pixsum_mpi_split_rows). A .npy
 * input is read with MPI-IO at the strip's byte offset (collective reads);
 * other formats (TIFF/BigTIFF, PNG, ...) through the tool's streaming readers,
 * each rank reading past the rows before its strip. The ranks compute the
 * table with pixsum_mpi_integral[_sq]() (only one row per rank travels), then
 * rank 0 writes the .npy header and every rank writes its rows at their offset
 * in one shared file (MPI_File_write_at_all), under a temporary name that rank
 * 0 renames once every rank has succeeded. `--bench WxH` times the distributed
 * integral on a generated image (no files), for the scaling table of
 * docs/distributed.md.
 *
 * Every decision that could differ between ranks (a read error, a full disk)
 * is agreed by a reduction before the next collective step, so that all ranks
 * leave with the same exit status and none is left waiting.
 */
#include "mpi_cli.h"

#include <stdio.h>
#include <string.h>

int mpi_cli_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--mpi") == 0)
            return 1;
    return 0;
}

#ifndef PIXSUM_HAVE_MPI
int cmd_integral_mpi(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "pixsum integral: --mpi: this pixsum was built without MPI "
                    "(install libopenmpi-dev and rebuild)\n");
    return 1;
}
#else
#include "cli_util.h"
#include "image_io.h"
#include "pixsum_mpi.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static const char *const CMD = "integral";

/* Largest byte count of one MPI-IO call (counts are int). */
#define IO_CHUNK ((size_t)1 << 30)

static int g_rank, g_size;

static void mpi_usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -np N pixsum integral IN -o OUT.npy --mpi [options]\n"
            "       mpirun -np N pixsum integral --mpi --bench WxH [options]\n"
            "\n"
            "Distributed integral image: each rank reads its strip of rows of IN, the\n"
            "ranks exchange one row of column sums each (an exclusive scan), and each\n"
            "rank writes its rows of the table into OUT (.npy, one shared file, MPI-IO).\n"
            "IN: .npy (read with MPI-IO at each strip's offset) or any format the tool\n"
            "reads (TIFF/BigTIFF, PNG, ...: each rank reads past the rows before it).\n"
            "\n"
            "options:\n"
            "  -o, --output OUT     the table (.npy)\n"
            "  --type T             table type: u32 u64 i64 f32 f64 (default by rule,\n"
            "                       from the whole image's pixel count)\n"
            "  --wrap               modular integer arithmetic instead of refusing a type\n"
            "  --padded             (W+1) x (H+1) table with a leading zero row and column\n"
            "  --squared SQOUT      also write the squared table (.npy)\n"
            "  --sq-type T          type of the squared table (default by rule)\n"
            "  --method NAME        method for each rank's local table (default auto)\n"
            "  --threads N          threads per rank for threaded methods (default: the\n"
            "                       node's cores divided by the ranks on the node)\n"
            "  --device N           CUDA device for CUDA methods\n"
            "  --gpu-per-rank       CUDA device = the rank's index on its node\n"
            "  -v, --verbose        timings (slowest rank) and bytes exchanged\n"
            "  --bench WxH          time the distributed integral of a generated W x H\n"
            "                       image instead of reading a file\n"
            "  --in-type T          --bench: pixel type (default u8)\n"
            "  --channels C         --bench: channels (default 1)\n"
            "  --repeat R           --bench: runs, the fastest is reported (default 5)\n");
}

/* Prints on rank 0 only (usage errors: every rank parses the same argv). */
static int usage_error(const char *fmt, ...)
{
    if (g_rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "pixsum %s: ", CMD);
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n(try 'pixsum integral --mpi --help')\n");
        va_end(ap);
    }
    return CLI_EXIT_USAGE;
}

/* A runtime error seen by this rank: printed with the rank's number. Returns 1. */
static int rank_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "pixsum %s (rank %d of %d): ", CMD, g_rank, g_size);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 1;
}

/* Collective: 1 if `failed` is non-zero on any rank. */
static int any_failed(int failed)
{
    int any = 0;
    failed = failed != 0;
    if (MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return 1;
    return any;
}

/* Collective: the largest of the ranks' values of t (the slowest rank). */
static double slowest(double t)
{
    double m = t;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

typedef struct mpi_args {
    const char *in, *out, *sq;
    cli_common common;
    pixsum_type sq_type, bench_type;
    int wrap, padded, verbose, gpu_per_rank;
    size_t bench_w, bench_h, bench_channels, repeat;
} mpi_args;

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int parse_args(int argc, char **argv, mpi_args *a)
{
    memset(a, 0, sizeof *a);
    cli_common_init(&a->common);
    a->bench_type = PIXSUM_U8;
    a->bench_channels = 1;
    a->repeat = 5;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        int m;
        if (cli_is_help(arg)) {
            if (g_rank == 0)
                mpi_usage(stdout);
            return -1;
        }
        if (!strcmp(arg, "--mpi"))
            continue;
        if ((m = cli_parse_common(CMD, argc, argv, &i, &a->common)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
        } else if ((m = cli_match(CMD, argc, argv, &i, "-o", &v)) != 0 ||
                   (m = cli_match(CMD, argc, argv, &i, "--output", &v)) != 0) {
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
                return usage_error("unknown --sq-type '%s'", v);
        } else if ((m = cli_match(CMD, argc, argv, &i, "--bench", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (cli_parse_wxh(v, &a->bench_w, &a->bench_h) != 0 || !a->bench_w || !a->bench_h)
                return usage_error("--bench takes WxH (e.g. 8192x8192), not '%s'", v);
        } else if ((m = cli_match(CMD, argc, argv, &i, "--in-type", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if ((a->bench_type = pixsum_type_from_name(v)) == PIXSUM_TYPE_NONE)
                return usage_error("unknown --in-type '%s'", v);
        } else if ((m = cli_match(CMD, argc, argv, &i, "--channels", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (cli_parse_size(v, &a->bench_channels) != 0 || a->bench_channels < 1 ||
                a->bench_channels > 4)
                return usage_error("--channels takes 1..4, not '%s'", v);
        } else if ((m = cli_match(CMD, argc, argv, &i, "--repeat", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (cli_parse_size(v, &a->repeat) != 0 || a->repeat < 1)
                return usage_error("--repeat takes a count >= 1, not '%s'", v);
        } else if (!strcmp(arg, "--wrap")) {
            a->wrap = 1;
        } else if (!strcmp(arg, "--padded")) {
            a->padded = 1;
        } else if (!strcmp(arg, "--gpu-per-rank")) {
            a->gpu_per_rank = 1;
        } else if (!strcmp(arg, "-v") || !strcmp(arg, "--verbose")) {
            a->verbose = 1;
        } else if (!strcmp(arg, "--tilted") || !strcmp(arg, "--volume") ||
                   !strcmp(arg, "--stream")) {
            return usage_error("%s is not available with --mpi (2-D integral tables only)",
                               arg);
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return usage_error("unknown option '%s' with --mpi", arg);
        } else if (!a->in) {
            a->in = arg;
        } else {
            return usage_error("one input file only ('%s' and '%s')", a->in, arg);
        }
    }
    if (a->bench_w) {
        if (a->in || a->out || a->sq)
            return usage_error("--bench generates its image: no IN, -o or --squared");
        return 0;
    }
    if (!a->in)
        return usage_error("no input file");
    if (!a->out)
        return usage_error("no output file (-o OUT.npy)");
    if (!ends_with(a->out, ".npy") || (a->sq && !ends_with(a->sq, ".npy")))
        return usage_error("with --mpi the tables are written as .npy (one shared file, "
                           "MPI-IO); name the output(s) *.npy");
    if (!strcmp(a->in, a->out) || (a->sq && (!strcmp(a->sq, a->out) || !strcmp(a->sq, a->in))))
        return usage_error("input, output and squared output must be different files");
    return 0;
}

/* Applies the common flags and the layout to a new context. */
static int make_ctx(const mpi_args *a, pixsum_ctx **out)
{
    pixsum_ctx *ctx = pixsum_ctx_new();
    int rc = ctx ? cli_apply_common(CMD, &a->common, ctx) : CLI_EXIT_RUNTIME;
    if (rc == 0 && a->common.threads < 0) {
        /* Ranks on one node share its cores: by default each takes its share. */
        int local_size = 1;
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        if (pixsum_mpi_local_rank(MPI_COMM_WORLD, NULL, &local_size) == PIXSUM_OK) {
            long share = (cores > 0 ? cores : 1) / (local_size > 0 ? local_size : 1);
            pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, share > 0 ? (intptr_t)share : 1);
        }
    }
    if (rc == 0 && a->gpu_per_rank) {
        int local = 0;
        if (pixsum_mpi_local_rank(MPI_COMM_WORLD, &local, NULL) != PIXSUM_OK ||
            pixsum_ctx_set(ctx, PIXSUM_PARAM_CUDA_DEVICE, local) != PIXSUM_OK)
            rc = rank_error("--gpu-per-rank: %s", pixsum_last_error());
    }
    if (ctx) {
        pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, a->wrap);
        pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, a->padded);
    }
    /* Usage errors come out alike on every rank; runtime ones may not. */
    int worst = rc;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (worst != 0) {
        pixsum_ctx_free(ctx);
        return worst;
    }
    *out = ctx;
    return 0;
}

/* ---- input ------------------------------------------------------------------ */

/* What rank 0 learns about the input and tells the others. */
typedef struct input_desc {
    int ok;
    int is_npy;
    int type;
    uint64_t width, height, channels, depth, data_offset;
    char err[400];
} input_desc;

static void describe_input(const char *path, input_desc *d)
{
    memset(d, 0, sizeof *d);
    if (g_rank == 0) {
        FILE *f = fopen(path, "rb");
        char magic[6] = {0};
        if (!f) {
            snprintf(d->err, sizeof d->err, "%s: cannot open", path);
        } else {
            d->is_npy = fread(magic, 1, 6, f) == 6 && memcmp(magic, "\x93NUMPY", 6) == 0;
            fclose(f);
            if (d->is_npy) {
                mpi_npy_header h;
                d->ok = mpi_npy_read_header(path, &h, d->err, sizeof d->err) == 0;
                d->type = h.type;
                d->width = h.width;
                d->height = h.height;
                d->channels = h.channels;
                d->depth = 1;
                d->data_offset = h.data_offset;
            } else {
                pxio_info info;
                d->ok = pxio_probe(path, NULL, &info, d->err, sizeof d->err) == 0;
                d->type = info.type;
                d->width = info.width;
                d->height = info.height;
                d->channels = info.channels;
                d->depth = info.depth;
                if (d->ok && info.depth > 1) {
                    d->ok = 0;
                    snprintf(d->err, sizeof d->err, "%s: a volume; --mpi splits 2-D images",
                             path);
                }
            }
        }
    }
    MPI_Bcast(d, (int)sizeof *d, MPI_BYTE, 0, MPI_COMM_WORLD);
}

/* Collective reads or writes of `bytes` at `offset` in chunks of IO_CHUNK;
 * every rank makes the same number of calls (those with less to do pass 0
 * bytes). Returns 0, or -1 with err filled. */
static int file_io_all(MPI_File f, MPI_Offset offset, void *buf, size_t bytes, int write,
                       char *err, size_t errlen)
{
    uint64_t mine = (bytes + IO_CHUNK - 1) / IO_CHUNK, most = 0;
    if (MPI_Allreduce(&mine, &most, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) {
        snprintf(err, errlen, "MPI_Allreduce failed");
        return -1;
    }
    int failed = 0;
    for (uint64_t k = 0; k < most; k++) {
        size_t at = (size_t)k * IO_CHUNK;
        size_t n = at < bytes ? (bytes - at < IO_CHUNK ? bytes - at : IO_CHUNK) : 0;
        if (failed)
            n = 0;
        char *p = (char *)buf + (n ? at : 0);
        MPI_Status status;
        int rc = write ? MPI_File_write_at_all(f, offset + (MPI_Offset)at, p, (int)n, MPI_BYTE,
                                               &status)
                       : MPI_File_read_at_all(f, offset + (MPI_Offset)at, p, (int)n, MPI_BYTE,
                                              &status);
        int done = 0;
        if (rc == MPI_SUCCESS)
            MPI_Get_count(&status, MPI_BYTE, &done);
        if (!failed && (rc != MPI_SUCCESS || (size_t)done != n)) {
            char text[MPI_MAX_ERROR_STRING] = "";
            int len = 0;
            if (rc != MPI_SUCCESS)
                MPI_Error_string(rc, text, &len);
            snprintf(err, errlen, "%s %zu bytes at offset %llu: %s",
                     write ? "writing" : "reading", n,
                     (unsigned long long)(offset + (MPI_Offset)at),
                     rc != MPI_SUCCESS ? text : "short transfer (file truncated?)");
            failed = 1;
        }
    }
    return failed ? -1 : 0;
}

/* Reads this rank's rows [first, first + rows) of a .npy with MPI-IO. */
static int read_strip_npy(const char *path, const input_desc *d, size_t first, size_t rows,
                          void *buf, char *err, size_t errlen)
{
    MPI_File f;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &f);
    if (rc != MPI_SUCCESS) {
        snprintf(err, errlen, "%s: MPI_File_open failed", path);
        return -1;
    }
    size_t row_bytes = (size_t)d->width * d->channels * pixsum_type_size(d->type);
    MPI_Offset at = (MPI_Offset)(d->data_offset + (uint64_t)first * row_bytes);
    int st = file_io_all(f, at, buf, rows * row_bytes, 0, err, errlen);
    MPI_File_close(&f);
    return st;
}

/* Reads this rank's rows of any other format through the streaming reader:
 * the rows before the strip are read and dropped, a reader band at a time. */
static int read_strip_stream(const char *path, size_t first, size_t rows, void *buf,
                             size_t row_bytes, char *err, size_t errlen)
{
    if (rows == 0)
        return 0;
    pxio_reader *r;
    pxio_info info;
    if (pxio_reader_open(path, NULL, &r, &info, err, errlen) != 0)
        return -1;
    size_t band = pxio_reader_strip_rows(r);
    if (band > rows)
        band = rows;
    int st = 0;
    for (size_t skipped = 0; skipped < first && st == 0;) {
        size_t n = first - skipped < band ? first - skipped : band;
        st = pxio_read_rows(r, n, buf, (ptrdiff_t)row_bytes, err, errlen);
        skipped += n;
    }
    if (st == 0)
        st = pxio_read_rows(r, rows, buf, (ptrdiff_t)row_bytes, err, errlen);
    pxio_reader_close(r);
    return st;
}

/* ---- output ---------------------------------------------------------------- */

/* Writes one table's strips into `path` through a temporary name: rank 0
 * writes the header, every rank its rows at their offset; rank 0 renames the
 * file once every rank has written. Collective. Returns 0 or 1. */
static int write_table(const char *path, const pixsum_view *strip, size_t table_w,
                       size_t table_h, size_t first_out_row, double *seconds)
{
    char header[256], err[600] = "", tmp[4096];
    size_t hlen = mpi_npy_make_header(strip->type, table_w, table_h, strip->channels, header,
                                      sizeof header);
    if (hlen == 0) {
        if (g_rank == 0)
            rank_error("%s: cannot make a .npy header for this table", path);
        return 1;
    }
    snprintf(tmp, sizeof tmp, "%s.part-mpi", path);
    double t0 = MPI_Wtime();
    MPI_File f;
    int rc = MPI_File_open(MPI_COMM_WORLD, tmp, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                           MPI_INFO_NULL, &f);
    if (rc != MPI_SUCCESS) {
        if (g_rank == 0)
            rank_error("%s: cannot create (MPI_File_open)", tmp);
        return 1;
    }
    size_t row_bytes = table_w * strip->channels * pixsum_type_size(strip->type);
    MPI_Offset total = (MPI_Offset)(hlen + table_h * row_bytes);
    int failed = MPI_File_set_size(f, total) != MPI_SUCCESS; /* drops stale bytes */
    if (!failed && g_rank == 0) {
        MPI_Status status;
        failed = MPI_File_write_at(f, 0, header, (int)hlen, MPI_BYTE, &status) != MPI_SUCCESS;
        if (failed)
            snprintf(err, sizeof err, "writing the .npy header failed");
    }
    /* The strip is packed unless the caller made it otherwise; write row runs. */
    MPI_Offset at = (MPI_Offset)(hlen + first_out_row * row_bytes);
    if (file_io_all(f, at, strip->height ? strip->data : header, strip->height * row_bytes, 1,
                    err, sizeof err) != 0)
        failed = 1;
    if (MPI_File_close(&f) != MPI_SUCCESS)
        failed = 1;
    if (failed)
        rank_error("%s: %s", tmp, err[0] ? err : "MPI-IO failed");
    int any = any_failed(failed);
    if (g_rank == 0) {
        if (any)
            MPI_File_delete(tmp, MPI_INFO_NULL);
        else if (rename(tmp, path) != 0)
            any = rank_error("cannot rename %s to %s", tmp, path);
    }
    MPI_Bcast(&any, 1, MPI_INT, 0, MPI_COMM_WORLD);
    *seconds = slowest(MPI_Wtime() - t0);
    return any ? 1 : 0;
}

/* Bytes per sample of the vector a rank contributes to the scan of a table of
 * `type` (see pixsum_mpi.h): u32 4, u64/i64 8, floats 16 (double-double). */
static size_t scan_elem_bytes(pixsum_type type)
{
    return type == PIXSUM_U32 ? 4 : type == PIXSUM_F32 || type == PIXSUM_F64 ? 16 : 8;
}

/* Allocates a packed strip of `rows` rows; rows 0 gives a view with data NULL. */
static void *alloc_strip(pixsum_type type, size_t width, size_t rows, size_t channels,
                         pixsum_view *v)
{
    size_t bytes = pixsum_packed_bytes(type, width, rows ? rows : 1, 1, channels);
    void *data = rows && bytes ? malloc(bytes) : NULL;
    *v = pixsum_view_2d(data, type, width, rows, channels,
                        (ptrdiff_t)(width * channels * pixsum_type_size(type)));
    return data;
}

static int run_files(const mpi_args *a, pixsum_ctx *ctx)
{
    double t_start = MPI_Wtime();
    input_desc d;
    describe_input(a->in, &d);
    if (!d.ok) {
        if (g_rank == 0)
            rank_error("%s", d.err);
        return 1;
    }
    pixsum_type in_type = (pixsum_type)d.type;
    size_t W = (size_t)d.width, H = (size_t)d.height, C = (size_t)d.channels;
    size_t first = 0, rows = 0;
    pixsum_mpi_split_rows(H, g_size, g_rank, &first, &rows);
    pixsum_type out_type = a->common.type != PIXSUM_TYPE_NONE
                               ? a->common.type
                               : pixsum_integral_type(in_type, W * H, 0);
    pixsum_type sq_type = !a->sq                          ? PIXSUM_TYPE_NONE
                          : a->sq_type != PIXSUM_TYPE_NONE ? a->sq_type
                                                           : pixsum_integral_type(in_type,
                                                                                  W * H, 1);

    /* Read this rank's strip. */
    char err[600] = "";
    pixsum_view in;
    void *in_data = alloc_strip(in_type, W, rows, C, &in);
    int failed = rows && !in_data;
    if (failed)
        snprintf(err, sizeof err, "out of memory for %zu input rows", rows);
    double t0 = MPI_Wtime();
    if (d.is_npy) {
        /* Collective: ranks that failed to allocate still take part with 0 rows. */
        if (read_strip_npy(a->in, &d, first, failed ? 0 : rows, in_data, err, sizeof err) != 0)
            failed = 1;
    } else if (!failed) {
        failed = read_strip_stream(a->in, first, rows, in_data, in.row_stride > 0
                                   ? (size_t)in.row_stride : 0, err, sizeof err) != 0;
    }
    if (failed)
        rank_error("%s", err);
    if (any_failed(failed)) {
        free(in_data);
        return 1;
    }
    double t_read = slowest(MPI_Wtime() - t0);

    /* Output strips, then the distributed table. */
    size_t pad = a->padded ? 1 : 0, out_rows = rows + (a->padded && g_rank == 0 ? 1 : 0);
    size_t first_out = first + (a->padded && g_rank > 0 ? 1 : 0);
    pixsum_view out, sq;
    memset(&sq, 0, sizeof sq);
    void *out_data = alloc_strip(out_type, W + pad, out_rows, C, &out);
    void *sq_data = a->sq ? alloc_strip(sq_type, W + pad, out_rows, C, &sq) : NULL;
    failed = out_rows && (!out_data || (a->sq && !sq_data));
    if (failed)
        rank_error("out of memory for %zu table rows", out_rows);
    int rc = 1;
    if (any_failed(failed))
        goto done;
    t0 = MPI_Wtime();
    int st = a->sq ? pixsum_mpi_integral_sq(ctx, &in, &out, &sq, MPI_COMM_WORLD)
                   : pixsum_mpi_integral(ctx, &in, &out, MPI_COMM_WORLD);
    double t_table = slowest(MPI_Wtime() - t0);
    if (st != PIXSUM_OK) {
        /* Every rank has the same status; the one that found it says why. */
        if (strncmp(pixsum_last_error(), "rank ", 5) != 0)
            rank_error("%s: %s", pixsum_strerror(st), pixsum_last_error());
        goto done;
    }
    free(in_data);
    in_data = NULL;

    double t_write = 0, t_sq = 0;
    if (write_table(a->out, &out, W + pad, H + pad, first_out, &t_write) != 0)
        goto done;
    if (a->sq && write_table(a->sq, &sq, W + pad, H + pad, first_out, &t_sq) != 0)
        goto done;
    rc = 0;
    if (a->verbose && g_rank == 0) {
        size_t e = scan_elem_bytes(out_type), es = a->sq ? scan_elem_bytes(sq_type) : 0;
        printf("%s: %zux%zux%zu %s -> %s%s%s, %d ranks (%zu..%zu rows each)\n", a->out, W, H,
               C, pixsum_type_name(in_type), pixsum_type_name(out_type),
               a->sq ? " + squared " : "", a->sq ? pixsum_type_name(sq_type) : "", g_size,
               H / (size_t)g_size, (H + (size_t)g_size - 1) / (size_t)g_size);
        printf("  read %.3f s (%s), table %.3f s, write %.3f s%s, total %.3f s "
               "(slowest rank each)\n",
               t_read, d.is_npy ? "MPI-IO" : "stream reader", t_table, t_write + t_sq,
               a->sq ? " (both tables)" : "", MPI_Wtime() - t_start);
        printf("  scan vector per rank: %zu bytes (width x channels x %zu)", W * C * e, e);
        if (a->sq)
            printf(", squared table %zu bytes (x %zu)", W * C * es, es);
        printf("\n");
    }
done:
    free(in_data);
    free(out_data);
    free(sq_data);
    return any_failed(rc);
}

/* ---- --bench ----------------------------------------------------------------- */

static void fill_random(void *data, pixsum_type type, size_t n, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t r = (uint32_t)(s >> 33);
        switch (type) {
        case PIXSUM_U8: ((uint8_t *)data)[i] = (uint8_t)r; break;
        case PIXSUM_U16: ((uint16_t *)data)[i] = (uint16_t)r; break;
        case PIXSUM_I16: ((int16_t *)data)[i] = (int16_t)r; break;
        case PIXSUM_I32: ((int32_t *)data)[i] = (int32_t)r; break;
        case PIXSUM_U32: ((uint32_t *)data)[i] = r; break;
        case PIXSUM_F32: ((float *)data)[i] = (float)r / 4294967296.0f; break;
        case PIXSUM_F64: ((double *)data)[i] = (double)r / 4294967296.0; break;
        default: break;
        }
    }
}

/* CPU seconds of the calling thread: the work a rank does, whatever the
 * scheduler does with it (ranks oversubscribe the cores here). */
static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Best (smallest) of the repeats of the slowest rank, wall and CPU. */
typedef struct bench_time {
    double wall, cpu;
} bench_time;

static void bench_keep(bench_time *best, double wall, double cpu)
{
    wall = slowest(wall);
    cpu = slowest(cpu);
    if (wall < best->wall)
        best->wall = wall;
    if (cpu < best->cpu)
        best->cpu = cpu;
}

static int run_bench(const mpi_args *a, pixsum_ctx *ctx)
{
    size_t W = a->bench_w, H = a->bench_h, C = a->bench_channels;
    size_t first, rows;
    pixsum_mpi_split_rows(H, g_size, g_rank, &first, &rows);
    pixsum_type out_type = a->common.type != PIXSUM_TYPE_NONE
                               ? a->common.type
                               : pixsum_integral_type(a->bench_type, W * H, 0);
    size_t pad = a->padded ? 1 : 0, out_rows = rows + (a->padded && g_rank == 0 ? 1 : 0);
    pixsum_view in, out;
    void *in_data = alloc_strip(a->bench_type, W, rows, C, &in);
    void *out_data = alloc_strip(out_type, W + pad, out_rows, C, &out);
    pixsum_hist_info hinfo;
    size_t nbins = 0;
    uint64_t *counts = NULL;
    if (rows)
        fill_random(in_data, a->bench_type, rows * W * C, 12345 + first);
    /* Bins for the histogram part: the type's defaults, or 256 over [0, 1)
     * for the data-range types (the generator's range). */
    pixsum_hist_spec hspec;
    memset(&hspec, 0, sizeof hspec);
    if (a->bench_type == PIXSUM_F32 || a->bench_type == PIXSUM_F64 ||
        a->bench_type == PIXSUM_I32) {
        hspec.bins = 256;
        hspec.lo = a->bench_type == PIXSUM_I32 ? -2147483648.0 : 0.0;
        hspec.hi = a->bench_type == PIXSUM_I32 ? 2147483648.0 : 1.0;
    }
    double zero = 0; /* a 1x1 image of any type, to resolve the bin count */
    pixsum_view one = pixsum_view_2d(&zero, a->bench_type, 1, 1, 1, 0);
    if (pixsum_hist_resolve(&one, &hspec, &hinfo) == PIXSUM_OK) {
        nbins = hinfo.bins * C;
        counts = calloc(nbins, sizeof *counts);
    }
    if (any_failed(out_rows && (!in_data || !out_data)) || any_failed(!counts)) {
        free(in_data);
        free(out_data);
        free(counts);
        if (g_rank == 0)
            rank_error("out of memory for the bench strips");
        return 1;
    }

    /* 1. the local table only (what each rank would do alone) */
    bench_time local = {1e30, 1e30}, dist = {1e30, 1e30}, scan = {1e30, 1e30};
    bench_time hlocal = {1e30, 1e30}, hdist = {1e30, 1e30};
    pixsum_view roi = out;
    if (rows)
        pixsum_view_roi(&out, pad, out_rows - rows, W, rows, &roi);
    int st = PIXSUM_OK;
    for (size_t r = 0; r < a->repeat; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime(), c0 = thread_cpu();
        if (rows) {
            if (a->padded)
                pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, 0);
            int s = pixsum_integral(ctx, &in, &roi);
            if (a->padded)
                pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, 1);
            if (s != PIXSUM_OK)
                st = s;
        }
        bench_keep(&local, MPI_Wtime() - t0, thread_cpu() - c0);
    }
    if (any_failed(st != PIXSUM_OK)) {
        if (st != PIXSUM_OK)
            rank_error("local table: %s", pixsum_last_error());
        free(in_data);
        free(out_data);
        free(counts);
        return 1;
    }
    /* 2. the distributed table (scan vector, scan, local table + offsets) */
    bench_time pass1 = {1e30, 1e30}, exch = {1e30, 1e30}, pass2 = {1e30, 1e30};
    pixsum_mpi_stats stats;
    memset(&stats, 0, sizeof stats);
    for (size_t r = 0; r < a->repeat && st == PIXSUM_OK; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime(), c0 = thread_cpu();
        st = pixsum_mpi_integral(ctx, &in, &out, MPI_COMM_WORLD);
        bench_keep(&dist, MPI_Wtime() - t0, thread_cpu() - c0);
        pixsum_mpi_last_stats(&stats);
        bench_keep(&pass1, stats.wall[0], stats.cpu[0]);
        bench_keep(&exch, stats.wall[1], stats.cpu[1]);
        bench_keep(&pass2, stats.wall[2], stats.cpu[2]);
    }
    /* 3. one exclusive scan of a vector of the same size, for the exchange alone */
    size_t e = scan_elem_bytes(out_type);
    size_t words = W * C * e / 8;
    uint64_t *vec = calloc(2 * words + 2, sizeof *vec);
    for (size_t r = 0; r < a->repeat && vec; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime(), c0 = thread_cpu();
        MPI_Exscan(vec, vec + words + 1, (int)words, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        bench_keep(&scan, MPI_Wtime() - t0, thread_cpu() - c0);
    }
    free(vec);
    /* 4. the histogram of the strip alone, then of the whole image */
    int hst = PIXSUM_OK;
    for (size_t r = 0; r < a->repeat && st == PIXSUM_OK; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime(), c0 = thread_cpu();
        if (rows && pixsum_histogram(ctx, &in, &hspec, counts, nbins, NULL) != PIXSUM_OK)
            hst = PIXSUM_ERR_INTERNAL;
        bench_keep(&hlocal, MPI_Wtime() - t0, thread_cpu() - c0);
    }
    for (size_t r = 0; r < a->repeat && st == PIXSUM_OK && hst == PIXSUM_OK; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime(), c0 = thread_cpu();
        hst = pixsum_mpi_histogram(ctx, &in, &hspec, counts, nbins, NULL, PIXSUM_MPI_ALL,
                                   MPI_COMM_WORLD);
        bench_keep(&hdist, MPI_Wtime() - t0, thread_cpu() - c0);
    }
    free(in_data);
    free(out_data);
    free(counts);
    if (st != PIXSUM_OK || any_failed(hst != PIXSUM_OK)) {
        if (strncmp(pixsum_last_error(), "rank ", 5) != 0)
            rank_error("%s", pixsum_last_error());
        return 1;
    }
    double most_blocks = slowest((double)stats.blocks);
    if (g_rank == 0) {
        double px = (double)W * (double)H;
        printf("ranks %d  %zux%zux%zu %s->%s  (best of %zu; wall | cpu of the slowest rank, ms)\n",
               g_size, W, H, C, pixsum_type_name(a->bench_type), pixsum_type_name(out_type),
               a->repeat);
        printf("  integral: local strip %.3f | %.3f  distributed %.3f | %.3f  "
               "(%.2f px/ns wall, %.2f px/ns cpu)\n",
               local.wall * 1e3, local.cpu * 1e3, dist.wall * 1e3, dist.cpu * 1e3,
               px / (dist.wall * 1e9), px / (dist.cpu * 1e9));
        printf("  phases: pass 1 (scan vector) %.3f | %.3f  agreements + scan %.3f | %.3f  "
               "pass 2 (local table + offsets, up to %.0f calls) %.3f | %.3f\n",
               pass1.wall * 1e3, pass1.cpu * 1e3, exch.wall * 1e3, exch.cpu * 1e3,
               most_blocks, pass2.wall * 1e3, pass2.cpu * 1e3);
        printf("  scan alone (%zu B per rank): %.3f | %.3f\n", W * C * e, scan.wall * 1e3,
               scan.cpu * 1e3);
        printf("  histogram %zu bins: local strip %.3f | %.3f  distributed %.3f | %.3f  "
               "(%zu B per rank reduced)\n",
               nbins / C, hlocal.wall * 1e3, hlocal.cpu * 1e3, hdist.wall * 1e3,
               hdist.cpu * 1e3, (nbins + 17) * 8);
    }
    return 0;
}

int cmd_integral_mpi(int argc, char **argv)
{
    int initialized = 0, rc;
    MPI_Initialized(&initialized);
    if (!initialized && MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "pixsum %s: MPI_Init failed\n", CMD);
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    mpi_args a;
    pixsum_ctx *ctx = NULL;
    rc = parse_args(argc, argv, &a);
    if (rc == 0)
        rc = make_ctx(&a, &ctx);
    if (rc == 0)
        rc = a.bench_w ? run_bench(&a, ctx) : run_files(&a, ctx);
    else if (rc < 0)
        rc = 0; /* --help */
    pixsum_ctx_free(ctx);
    if (!initialized)
        MPI_Finalize();
    return rc;
}
#endif

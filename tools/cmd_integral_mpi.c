/*
 * cmd_integral_mpi.c - `mpirun -np N pixsum integral IN -o OUT.npy --mpi`:
 * the integral image of a file too large for one machine.
 *
 * Every rank takes a balanced strip of rows (pixsum_mpi_split_rows). A .npy
 * input is read with MPI-IO at the strip's byte offset (collective reads), a
 * TIFF/BigTIFF by each rank decoding only the strips or tiles of its rows,
 * other formats (PNG, JPEG, PNM) through the tool's streaming readers, each
 * rank reading past the rows before its strip (tools/mpi_io.c). The ranks compute the
 * table with pixsum_mpi_integral[_sq]() (only one row per rank travels), then
 * rank 0 writes the .npy header and every rank writes its rows at their offset
 * in one shared file (MPI_File_write_at_all), a temporary that rank 0 creates
 * (tools/out_file.h) and renames once every rank has succeeded, both tables
 * back to back with --squared. `--bench WxH` times the distributed
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
#include "mpi_io.h"
#include "out_file.h"
#include "pixsum_mpi.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static const char *const CMD = "integral";

static void mpi_usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -np N pixsum integral IN -o OUT.npy --mpi [options]\n"
            "       mpirun -np N pixsum integral --mpi --bench WxH [options]\n"
            "\n"
            "Distributed integral image: each rank reads its strip of rows of IN, the\n"
            "ranks exchange one row of column sums each (an exclusive scan), and each\n"
            "rank writes its rows of the table into OUT (.npy, one shared file, MPI-IO).\n"
            "IN: .npy (read with MPI-IO at each strip's offset), TIFF/BigTIFF (each rank\n"
            "decodes only the strips or tiles holding its rows) or any other format the\n"
            "tool reads (PNG, JPEG, PNM: each rank decodes past the rows before it).\n"
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
            "  --device N           CUDA device of every rank for CUDA methods (default:\n"
            "                       the rank's index on its node modulo the node's GPUs)\n"
            "  --gpu-per-rank       that default, said explicitly\n"
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
    if (mpi_cli_rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "pixsum %s: ", CMD);
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n(try 'pixsum integral --mpi --help')\n");
        va_end(ap);
    }
    return CLI_EXIT_USAGE;
}

typedef struct mpi_args {
    const char *in, *out, *sq;
    cli_common common;
    pixsum_type sq_type, bench_type;
    int wrap, padded, verbose, gpu_per_rank;
    int device; /* this rank's CUDA device (-1: none), set by make_ctx() */
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
    cli_common_init(&a->common, PIXSUM_OP_INTEGRAL, CLI_TAKES_ALL);
    int bench_only = 0; /* --in-type, --channels or --repeat given */
    a->bench_type = PIXSUM_U8;
    a->bench_channels = 1;
    a->repeat = 5;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        int m;
        if (cli_is_help(arg)) {
            if (mpi_cli_rank == 0)
                mpi_usage(stdout);
            return -1;
        }
        if (!strcmp(arg, "--mpi"))
            continue;
        if ((m = cli_parse_common(CMD, argc, argv, &i, &a->common)) != 0) {
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
            bench_only = 1;
        } else if ((m = cli_match(CMD, argc, argv, &i, "--channels", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (cli_parse_size(v, &a->bench_channels) != 0 || a->bench_channels < 1 ||
                a->bench_channels > 4)
                return usage_error("--channels takes 1..4, not '%s'", v);
            bench_only = 1;
        } else if ((m = cli_match(CMD, argc, argv, &i, "--repeat", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (cli_parse_size(v, &a->repeat) != 0 || a->repeat < 1)
                return usage_error("--repeat takes a count >= 1, not '%s'", v);
            bench_only = 1;
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
    if (a->gpu_per_rank && a->common.device >= 0)
        return usage_error("--device N and --gpu-per-rank exclude each other");
    /* options that would have no effect, because of another option's value */
    if (bench_only && !a->bench_w)
        return usage_error("--in-type, --channels and --repeat have no effect without "
                           "--bench WxH");
    if (a->sq_type != PIXSUM_TYPE_NONE && !a->sq)
        return usage_error("--sq-type has no effect without --squared SQOUT");
    pixsum_type t = a->common.type, q = a->sq ? a->sq_type : PIXSUM_TYPE_NONE;
    if (a->wrap && t != PIXSUM_U32 && t != PIXSUM_U64 && t != PIXSUM_I64 && q != PIXSUM_U32 &&
        q != PIXSUM_U64 && q != PIXSUM_I64)
        return usage_error("--wrap has no effect without an integer --type or --sq-type "
                           "(u32 u64 i64): the default types cannot overflow and f32/f64 "
                           "tables do not wrap");
    if (a->sq)
        a->common.op = PIXSUM_OP_INTEGRAL_SQ;
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
    if (a->sq && !strcmp(a->sq, a->out))
        return usage_error("input, output and squared output must be different files");
    /* the in-place rule of every command (cli_check_not_input), said by rank 0 */
    if (cli_same_file(a->in, a->out) || cli_same_file(a->in, a->sq))
        return usage_error("the %s would overwrite the input '%s'",
                           cli_same_file(a->in, a->out) ? "output" : "--squared output", a->in);
    return 0;
}

/* Applies the common flags, the rank's share of threads and GPU (see
 * mpi_cli_rank_ctx) and the layout to a new context; *device receives the
 * rank's CUDA device (-1: none). */
static int make_ctx(const mpi_args *a, pixsum_ctx **out, int *device)
{
    pixsum_ctx *ctx = pixsum_ctx_new();
    int rc = ctx ? cli_apply_common(CMD, &a->common, ctx) : CLI_EXIT_RUNTIME;
    *device = -1;
    if (rc == 0)
        rc = mpi_cli_rank_ctx(CMD, &a->common, ctx, device);
    if (ctx) {
        pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, a->wrap);
        pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, a->padded);
    }
    /* Usage errors come out alike on every rank; runtime ones may not. */
    int worst = mpi_cli_max(rc);
    if (worst != 0) {
        pixsum_ctx_free(ctx);
        return worst;
    }
    *out = ctx;
    return 0;
}

/* ---- output ---------------------------------------------------------------- */

/* Writes one table's strips into a temporary of `path` (tools/out_file.h):
 * rank 0 creates it beside the target (symlinks followed, the old file's mode
 * and owner kept; only a regular file will do for MPI-IO) and tells the other
 * ranks its name; rank 0 writes the header, every rank its rows at their
 * offset. Collective. On success rank 0 holds the whole table in *of, to be
 * put in place with the other one (out_file_commit_all() in run_files());
 * on failure the temporary is gone. Returns 0 or 1, alike on every rank. */
static int write_table(const char *path, out_file *of, const pixsum_view *strip,
                       size_t table_w, size_t table_h, size_t first_out_row, double *seconds)
{
    char header[256], err[600] = "", tmp[4096] = "";
    size_t hlen = mpi_npy_make_header(strip->type, table_w, table_h, strip->channels, header,
                                      sizeof header);
    if (hlen == 0) {
        if (mpi_cli_rank == 0)
            mpi_cli_rank_error(CMD, "%s: cannot make a .npy header for this table", path);
        return 1;
    }
    double t0 = MPI_Wtime();
    int failed = 0;
    if (mpi_cli_rank == 0) {
        if (out_file_open(of, path, OUT_FILE_REGULAR, "an MPI table", err, sizeof err) != 0 ||
            out_file_close(of, err, sizeof err) != 0 || strlen(of->tmp) >= sizeof tmp) {
            mpi_cli_rank_error(CMD, "%s", err[0] ? err : "path too long");
            out_file_abort(of);
            failed = 1;
        } else {
            memcpy(tmp, of->tmp, strlen(of->tmp) + 1);
        }
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (failed)
        return 1;
    MPI_Bcast(tmp, (int)sizeof tmp, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_File f;
    failed = MPI_File_open(MPI_COMM_WORLD, tmp, MPI_MODE_WRONLY, MPI_INFO_NULL, &f) !=
             MPI_SUCCESS;
    if (failed)
        snprintf(err, sizeof err, "cannot open the file (MPI_File_open)");
    if (mpi_cli_any(failed)) {
        if (!failed)
            MPI_File_close(&f);
        else
            mpi_cli_rank_error(CMD, "%s: %s", path, err);
        if (mpi_cli_rank == 0)
            out_file_abort(of);
        return 1;
    }
    size_t row_bytes = table_w * strip->channels * pixsum_type_size(strip->type);
    MPI_Offset total = (MPI_Offset)(hlen + table_h * row_bytes);
    failed = MPI_File_set_size(f, total) != MPI_SUCCESS;
    if (!failed && mpi_cli_rank == 0) {
        MPI_Status status;
        failed = MPI_File_write_at(f, 0, header, (int)hlen, MPI_BYTE, &status) != MPI_SUCCESS;
        if (failed)
            snprintf(err, sizeof err, "writing the .npy header failed");
    }
    /* The strip is packed unless the caller made it otherwise; write row runs. */
    MPI_Offset at = (MPI_Offset)(hlen + first_out_row * row_bytes);
    if (mpi_file_io_all(f, at, strip->height ? strip->data : header, strip->height * row_bytes,
                        1, err, sizeof err) != 0)
        failed = 1;
    if (MPI_File_close(&f) != MPI_SUCCESS)
        failed = 1;
    if (failed)
        mpi_cli_rank_error(CMD, "%s: %s", path, err[0] ? err : "MPI-IO failed");
    int any = mpi_cli_any(failed);
    if (any && mpi_cli_rank == 0)
        out_file_abort(of);
    *seconds = mpi_cli_slowest(MPI_Wtime() - t0);
    return any ? 1 : 0;
}

/* Bytes per sample of the vector a rank contributes to the scan of a table of
 * `type` (see pixsum_mpi.h): u32 4, u64/i64 8, floats 16 (double-double). */
static size_t scan_elem_bytes(pixsum_type type)
{
    return type == PIXSUM_U32 ? 4 : type == PIXSUM_F32 || type == PIXSUM_F64 ? 16 : 8;
}

static int run_files(const mpi_args *a, pixsum_ctx *ctx)
{
    double t_start = MPI_Wtime();
    mpi_input d;
    mpi_input_describe(a->in, &d);
    if (!d.ok) {
        if (mpi_cli_rank == 0)
            mpi_cli_rank_error(CMD, "%s", d.err);
        return 1;
    }
    pixsum_type in_type = (pixsum_type)d.type;
    size_t W = (size_t)d.width, H = (size_t)d.height, C = (size_t)d.channels;
    size_t first = 0, rows = 0;
    pixsum_mpi_split_rows(H, mpi_cli_size, mpi_cli_rank, &first, &rows);
    pixsum_type out_type = a->common.type != PIXSUM_TYPE_NONE
                               ? a->common.type
                               : pixsum_integral_type(in_type, W * H, 0);
    pixsum_type sq_type = !a->sq                          ? PIXSUM_TYPE_NONE
                          : a->sq_type != PIXSUM_TYPE_NONE ? a->sq_type
                                                           : pixsum_integral_type(in_type,
                                                                                  W * H, 1);
    /* as cli_integral_check(): an unsupported input is a runtime error, an
     * unsupported pair named by --type/--sq-type a usage error (every rank
     * has the same header, rank 0 says it) */
    if (out_type == PIXSUM_TYPE_NONE) {
        if (mpi_cli_rank == 0)
            mpi_cli_rank_error(CMD, "%s: integral images of %s pixels are not supported (they "
                                    "take %s pixels)",
                               a->in, pixsum_type_name(in_type), cli_integral_input_types());
        return 1;
    }
    int bad_plain = pixsum_integral_check(in_type, out_type, 1, 0) == PIXSUM_ERR_BAD_TYPE;
    int bad_sq = a->sq && pixsum_integral_check(in_type, sq_type, 1, 1) == PIXSUM_ERR_BAD_TYPE;
    if (bad_plain || bad_sq)
        return usage_error("%s: %s %s: %s pixels do not give %s%s tables", a->in,
                           bad_plain ? "--type" : "--sq-type",
                           pixsum_type_name(bad_plain ? out_type : sq_type),
                           pixsum_type_name(in_type),
                           pixsum_type_name(bad_plain ? out_type : sq_type),
                           bad_plain ? "" : " squared");

    /* Read this rank's strip (collective for .npy: a rank that failed to
     * allocate still takes part, with 0 rows). */
    char err[600] = "";
    pixsum_view in;
    void *in_data = mpi_alloc_strip(in_type, W, rows, C, &in);
    int failed = rows && !in_data;
    if (failed)
        snprintf(err, sizeof err, "out of memory for %zu input rows", rows);
    double t0 = MPI_Wtime(), c0 = mpi_cli_thread_cpu();
    if (mpi_input_read(a->in, &d, first, failed ? 0 : rows, in_data, err, sizeof err) != 0)
        failed = 1;
    if (failed)
        mpi_cli_rank_error(CMD, "%s", err);
    if (mpi_cli_any(failed)) {
        free(in_data);
        return 1;
    }
    double t_read = mpi_cli_slowest(MPI_Wtime() - t0);
    double c_read = mpi_cli_slowest(mpi_cli_thread_cpu() - c0);

    /* Output strips, then the distributed table. */
    size_t pad = a->padded ? 1 : 0, out_rows = rows + (a->padded && mpi_cli_rank == 0 ? 1 : 0);
    size_t first_out = first + (a->padded && mpi_cli_rank > 0 ? 1 : 0);
    pixsum_view out, sq;
    memset(&sq, 0, sizeof sq);
    void *out_data = mpi_alloc_strip(out_type, W + pad, out_rows, C, &out);
    void *sq_data = a->sq ? mpi_alloc_strip(sq_type, W + pad, out_rows, C, &sq) : NULL;
    failed = out_rows && (!out_data || (a->sq && !sq_data));
    if (failed)
        mpi_cli_rank_error(CMD, "out of memory for %zu table rows", out_rows);
    int rc = 1;
    out_file of_out = {0}, of_sq = {0}; /* rank 0: the tables, whole, not yet in place */
    if (mpi_cli_any(failed))
        goto done;
    t0 = MPI_Wtime();
    int st = a->sq ? pixsum_mpi_integral_sq(ctx, &in, &out, &sq, MPI_COMM_WORLD)
                   : pixsum_mpi_integral(ctx, &in, &out, MPI_COMM_WORLD);
    double t_table = mpi_cli_slowest(MPI_Wtime() - t0);
    if (st != PIXSUM_OK) {
        /* Every rank has the same status; the one that found it says why. */
        if (strncmp(pixsum_last_error(), "rank ", 5) != 0)
            mpi_cli_rank_error(CMD, "%s: %s", pixsum_strerror(st), pixsum_last_error());
        goto done;
    }
    free(in_data);
    in_data = NULL;

    double t_write = 0, t_sq = 0;
    if (write_table(a->out, &of_out, &out, W + pad, H + pad, first_out, &t_write) != 0)
        goto done;
    if (a->sq && write_table(a->sq, &of_sq, &sq, W + pad, H + pad, first_out, &t_sq) != 0)
        goto done;
    /* Both tables are whole: rank 0 renames them back to back. */
    int bad = 0;
    if (mpi_cli_rank == 0) {
        out_file *outs[2] = {&of_out, &of_sq};
        if (out_file_commit_all(outs, 2, err, sizeof err) != 0)
            bad = mpi_cli_rank_error(CMD, "%s", err);
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad)
        goto done;
    rc = 0;
    if (a->verbose && mpi_cli_rank == 0) {
        size_t e = scan_elem_bytes(out_type), es = a->sq ? scan_elem_bytes(sq_type) : 0;
        printf("%s: %zux%zux%zu %s -> %s%s%s, %d ranks (%zu..%zu rows each)\n", a->out, W, H,
               C, pixsum_type_name(in_type), pixsum_type_name(out_type),
               a->sq ? " + squared " : "", a->sq ? pixsum_type_name(sq_type) : "", mpi_cli_size,
               H / (size_t)mpi_cli_size, (H + (size_t)mpi_cli_size - 1) / (size_t)mpi_cli_size);
        printf("  read %.3f s (cpu %.3f s; %s), table %.3f s, write %.3f s%s, total %.3f s "
               "(slowest rank each)\n",
               t_read, c_read, mpi_input_how(&d), t_table, t_write + t_sq,
               a->sq ? " (both tables)" : "", MPI_Wtime() - t_start);
        printf("  scan vector per rank: %zu bytes (width x channels x %zu)", W * C * e, e);
        if (a->sq)
            printf(", squared table %zu bytes (x %zu)", W * C * es, es);
        printf("\n");
    }
    if (a->verbose)
        mpi_cli_print_devices(stdout, a->device); /* collective */
done:
    out_file_abort(&of_out);
    out_file_abort(&of_sq);
    free(in_data);
    free(out_data);
    free(sq_data);
    return mpi_cli_any(rc);
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
    wall = mpi_cli_slowest(wall);
    cpu = mpi_cli_slowest(cpu);
    if (wall < best->wall)
        best->wall = wall;
    if (cpu < best->cpu)
        best->cpu = cpu;
}

static int run_bench(const mpi_args *a, pixsum_ctx *ctx)
{
    size_t W = a->bench_w, H = a->bench_h, C = a->bench_channels;
    size_t first, rows;
    pixsum_mpi_split_rows(H, mpi_cli_size, mpi_cli_rank, &first, &rows);
    pixsum_type out_type = a->common.type != PIXSUM_TYPE_NONE
                               ? a->common.type
                               : pixsum_integral_type(a->bench_type, W * H, 0);
    size_t pad = a->padded ? 1 : 0, out_rows = rows + (a->padded && mpi_cli_rank == 0 ? 1 : 0);
    pixsum_view in, out;
    void *in_data = mpi_alloc_strip(a->bench_type, W, rows, C, &in);
    void *out_data = mpi_alloc_strip(out_type, W + pad, out_rows, C, &out);
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
    if (mpi_cli_any(out_rows && (!in_data || !out_data)) || mpi_cli_any(!counts)) {
        free(in_data);
        free(out_data);
        free(counts);
        if (mpi_cli_rank == 0)
            mpi_cli_rank_error(CMD, "out of memory for the bench strips");
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
    if (mpi_cli_any(st != PIXSUM_OK)) {
        if (st != PIXSUM_OK)
            mpi_cli_rank_error(CMD, "local table: %s", pixsum_last_error());
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
    /* 4. the histogram of the strip alone, then of the whole image, by the
     * automatic choice (a method named by --method is an integral method) */
    int hst = pixsum_ctx_set_method(ctx, "auto");
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
    if (st != PIXSUM_OK || mpi_cli_any(hst != PIXSUM_OK)) {
        if (strncmp(pixsum_last_error(), "rank ", 5) != 0)
            mpi_cli_rank_error(CMD, "%s", pixsum_last_error());
        return 1;
    }
    double most_blocks = mpi_cli_slowest((double)stats.blocks);
    if (mpi_cli_rank == 0) {
        double px = (double)W * (double)H;
        printf("ranks %d  %zux%zux%zu %s->%s  (best of %zu; wall | cpu of the slowest rank, ms)\n",
               mpi_cli_size, W, H, C, pixsum_type_name(a->bench_type), pixsum_type_name(out_type),
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
    mpi_cli_print_devices(stdout, a->device);
    return 0;
}

int cmd_integral_mpi(int argc, char **argv)
{
    int owner = 0, rc;
    if (mpi_cli_start(CMD, &argc, &argv, &owner) != 0)
        return 1;
    mpi_args a;
    pixsum_ctx *ctx = NULL;
    rc = parse_args(argc, argv, &a);
    if (rc == 0)
        rc = make_ctx(&a, &ctx, &a.device);
    if (rc == 0)
        rc = a.bench_w ? run_bench(&a, ctx) : run_files(&a, ctx);
    else if (rc < 0)
        rc = 0; /* --help */
    pixsum_ctx_free(ctx);
    return mpi_cli_stop(rc, owner);
}
#endif

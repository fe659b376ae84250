/*
 * mpi_cli.h - the distributed (MPI) side of the `pixsum` tool:
 *   mpirun -np N pixsum integral IN -o OUT.npy --mpi [options]
 *   mpirun -np N pixsum hist IN [options] --mpi
 * cmd_integral() hands over to cmd_integral_mpi() when --mpi is among its
 * arguments; cmd_hist() counts through mpi_hist_count() and writes as usual.
 * These entry points exist in every build (without MPI they say so). Also
 * the small .npy header reader/writer the MPI-IO paths use (they need the
 * byte offset of the data, which the stream readers hide).
 */
#ifndef PIXSUM_TOOLS_MPI_CLI_H
#define PIXSUM_TOOLS_MPI_CLI_H

#include "cli_util.h"
#include "pixsum.h"

#include <stddef.h>
#include <stdint.h>

/* `pixsum integral ... --mpi`: every rank reads its strip of rows of IN
 * (.npy read with MPI-IO at its offset, TIFF/BigTIFF decoding only the
 * rank's strips or tiles, other formats through the streaming readers,
 * skipping the rows before the strip), the ranks compute the table
 * with pixsum_mpi_integral(), and each rank writes its rows into one shared
 * .npy with MPI-IO. `--bench WxH` times the distributed integral on a
 * generated image instead. Initialises and finalises MPI itself. argv[0] is
 * "integral". Returns 0, 1 (runtime error) or 2 (usage error), the same on
 * every rank. Without MPI in the build it says so and returns 1. */
int cmd_integral_mpi(int argc, char **argv);

/* `pixsum hist IN ... --mpi` (tools/cmd_hist_mpi.c). cmd_hist() parses the
 * arguments as usual between mpi_hist_start() and mpi_hist_count(), counts
 * with mpi_hist_count(), lets the rank that receives the totals write them
 * with its own writers, and ends with mpi_hist_stop(). */

/* Initialises MPI (unless already done; *owner = 1 then) and mutes stdout and
 * stderr on ranks other than 0 until mpi_hist_count() or mpi_hist_stop(), so
 * that messages of the argument parsing, alike on every rank, print once.
 * Returns 0, or 1 (message printed; also without MPI in the build). */
int mpi_hist_start(const char *cmd, int *argc, char ***argv, int *owner);

/* What to count. */
typedef struct mpi_hist_job {
    const char *cmd;          /* "hist", for messages */
    const char *in_path;
    const char *mask_path;    /* NULL: no mask */
    pixsum_hist_spec spec;    /* bins and range as given (mask ignored) */
    long channel;             /* -1 or the one channel printed (checked here) */
    int verbose;              /* 1: read/count times and bytes on stderr */
    const cli_common *common; /* the parsed common flags (threads, device) */
} mpi_hist_job;

/* What was counted. */
typedef struct mpi_hist_result {
    int writer;               /* 1 on the rank holding the totals (rank 0) */
    uint64_t *counts;         /* writer: channels x bins counts (free()); else NULL */
    pixsum_hist_info info;    /* writer: the whole image's totals */
    pixsum_type type;         /* the input's type */
} mpi_hist_result;

/* Collective: each rank reads its strip of rows of job->in_path (and of the
 * mask), counts it with pixsum_mpi_histogram() on `ctx` (this rank's share of
 * threads and GPU are set on it) and the counts are summed onto rank 0.
 * Unmutes the other ranks first. `rc` is the caller's status so far (any
 * rank's non-zero value makes every rank return it). Returns the exit status,
 * the same on every rank; *res is filled when it is 0. */
int mpi_hist_count(int rc, const mpi_hist_job *job, pixsum_ctx *ctx, mpi_hist_result *res);

/* Collective: unmutes, agrees on the largest of the ranks' exit statuses,
 * finalises MPI if `owner`, and returns that status. */
int mpi_hist_stop(int rc, int owner);

/* 1 if "--mpi" is one of argv[1..argc-1]. */
int mpi_cli_wanted(int argc, char **argv);

/* What a .npy header says. */
typedef struct mpi_npy_header {
    pixsum_type type;
    size_t width, height, channels;
    uint64_t data_offset; /* bytes from the start of the file to the first sample */
} mpi_npy_header;

/* Reads and checks the header of the .npy file at `path`: a C-order,
 * little-endian array of shape (H, W) or (H, W, C) with C in 1..4 and a dtype
 * pixsum knows. Returns 0, or -1 with a one-line reason in err. */
int mpi_npy_read_header(const char *path, mpi_npy_header *h, char *err, size_t errlen);

/* Writes into buf (cap bytes) the .npy v1.0 header of a C-order array of
 * `type` with shape (height, width) or, for channels > 1, (height, width,
 * channels). Its length is a multiple of 64. Returns the length, or 0 if cap
 * is too small or the type has no .npy dtype here. */
size_t mpi_npy_make_header(pixsum_type type, size_t width, size_t height, size_t channels,
                           char *buf, size_t cap);

#endif

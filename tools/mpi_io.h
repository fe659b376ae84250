/*
 * mpi_io.h - what the distributed subcommands of the `pixsum` tool
 * (`integral --mpi`, tools/cmd_integral_mpi.c, and `hist --mpi`,
 * tools/cmd_hist_mpi.c) share: agreement helpers over MPI_COMM_WORLD, the
 * per-rank context set-up (threads per rank, one GPU per rank) and the reading
 * of one rank's strip of rows of an input file:
 *   - .npy: MPI-IO collective reads at the strip's byte offset;
 *   - TIFF/BigTIFF (striped or tiled): each rank opens the file and decodes
 *     only the strips or tile rows that hold its rows (pxio_reader_seek);
 *   - other formats (PNG, JPEG, PNM, PFM): not random access; each rank
 *     decodes from the top and drops the rows before its strip.
 * Only built with MPI (PIXSUM_HAVE_MPI); every function works on
 * MPI_COMM_WORLD, which the caller has initialised.
 */
#ifndef PIXSUM_TOOLS_MPI_IO_H
#define PIXSUM_TOOLS_MPI_IO_H

#ifdef PIXSUM_HAVE_MPI

#include "cli_util.h"
#include "pixsum.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* This process's rank and the number of ranks (set by mpi_cli_start()). */
extern int mpi_cli_rank, mpi_cli_size;

/* Initialises MPI unless the caller already did, and sets mpi_cli_rank and
 * mpi_cli_size. *owner receives 1 when this call initialised MPI (the caller
 * then finalises it with mpi_cli_stop()). Returns 0, or 1 after printing why. */
int mpi_cli_start(const char *cmd, int *argc, char ***argv, int *owner);

/* Collective: the largest of the ranks' exit statuses (so every rank leaves
 * with the same one); then finalises MPI if `owner`. Returns that status. */
int mpi_cli_stop(int rc, int owner);

/* On ranks other than 0, sends stdout and stderr to /dev/null (on = 1) or
 * restores them (on = 0): for steps every rank does alike (parsing the
 * arguments), whose messages need printing once. Rank 0 is never muted. */
void mpi_cli_mute(int on);

/* Collective: 1 if `failed` is non-zero on any rank. */
int mpi_cli_any(int failed);

/* Collective: the largest of the ranks' values of `v`. */
int mpi_cli_max(int v);

/* Collective: the largest of the ranks' values of t (the slowest rank). */
double mpi_cli_slowest(double t);

/* CPU seconds used by the calling thread so far (CLOCK_THREAD_CPUTIME_ID):
 * the work a rank does, whatever share of a core the scheduler gives it. */
double mpi_cli_thread_cpu(void);

/* Prints "pixsum CMD (rank R of N): message" to stderr. Returns 1. */
int mpi_cli_rank_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The per-rank part of a context for a distributed command (not collective):
 * without --threads, each rank takes its share of its node's cores (cores /
 * ranks on the node); without --device, when the method is a CUDA one or
 * auto, each rank takes the CUDA device (its rank on the node) % (CUDA
 * devices visible), so the ranks of a node spread over its GPUs.
 * *device receives the CUDA device this rank's context uses (-1: none, i.e. a
 * build without CUDA or no device). Returns 0, or 1 after printing why. */
int mpi_cli_rank_ctx(const char *cmd, const cli_common *common, pixsum_ctx *ctx, int *device);

/* Collective: rank 0 prints "  CUDA device per rank: d0 d1 ..." to f when any
 * rank has a device (device >= 0). */
void mpi_cli_print_devices(FILE *f, int device);

/* How the ranks read an input. */
typedef enum mpi_input_kind {
    MPI_INPUT_NPY = 0,    /* MPI-IO at the strip's offset */
    MPI_INPUT_SEEK = 1,   /* each rank decodes only its rows (TIFF, BigTIFF) */
    MPI_INPUT_STREAM = 2  /* each rank decodes from the top, dropping earlier rows */
} mpi_input_kind;

/* What rank 0 learns about an input file and tells the others. */
typedef struct mpi_input {
    int ok;
    int kind;           /* mpi_input_kind */
    int type;           /* pixsum_type */
    uint64_t width, height, channels, data_offset;
    char format[8];
    char err[400];      /* when !ok: "PATH: problem" */
} mpi_input;

/* Collective: rank 0 reads the header of `path` (2-D images only: a volume
 * is refused) and broadcasts what it found. */
void mpi_input_describe(const char *path, mpi_input *d);

/* A few words on how the ranks read such an input, for -v. */
const char *mpi_input_how(const mpi_input *d);

/* Collective: reads rows [first, first + rows) of the input described by `d`
 * into buf (packed rows). Every rank must call it (a rank with nothing to
 * read, e.g. after a failed allocation, passes rows 0). Returns 0, or -1 with
 * "PATH: problem" in err. The ranks' outcomes may differ: agree afterwards. */
int mpi_input_read(const char *path, const mpi_input *d, size_t first, size_t rows, void *buf,
                   char *err, size_t errlen);

/* Collective reads (write = 0) or writes (write = 1) of `bytes` at `offset`
 * in chunks of at most 1 GiB (MPI counts are int); every rank makes the same
 * number of calls (those with less to do pass 0 bytes). Returns 0, or -1 with
 * err filled. */
int mpi_file_io_all(MPI_File f, MPI_Offset offset, void *buf, size_t bytes, int write,
                    char *err, size_t errlen);

/* Allocates a packed strip of `rows` rows and points *v at it; rows 0 gives a
 * view with data NULL (and returns NULL). */
void *mpi_alloc_strip(pixsum_type type, size_t width, size_t rows, size_t channels,
                      pixsum_view *v);

#endif /* PIXSUM_HAVE_MPI */
#endif

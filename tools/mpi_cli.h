/*
 * mpi_cli.h - the distributed (MPI) side of the `pixsum` tool:
 *   mpirun -np N pixsum integral IN -o OUT.npy --mpi [options]
 * cmd_integral() hands over to cmd_integral_mpi() when --mpi is among its
 * arguments. Also the small .npy header reader/writer the MPI-IO paths use
 * (they need the byte offset of the data, which the stream readers hide).
 */
#ifndef PIXSUM_TOOLS_MPI_CLI_H
#define PIXSUM_TOOLS_MPI_CLI_H

#include "pixsum.h"

#include <stddef.h>
#include <stdint.h>

/* `pixsum integral ... --mpi`: every rank reads its strip of rows of IN
 * (.npy read with MPI-IO at its offset; other formats through the streaming
 * readers, skipping the rows before the strip), the ranks compute the table
 * with pixsum_mpi_integral(), and each rank writes its rows into one shared
 * .npy with MPI-IO. `--bench WxH` times the distributed integral on a
 * generated image instead. Initialises and finalises MPI itself. argv[0] is
 * "integral". Returns 0, 1 (runtime error) or 2 (usage error), the same on
 * every rank. Without MPI in the build it says so and returns 1. */
int cmd_integral_mpi(int argc, char **argv);

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

/*
 * stream.h - strip-by-strip processing of image files larger than memory,
 * for the `pixsum` subcommands (integral, hist, ...).
 *
 * cli_stream_strips() opens a file, then hands the callback one strip at a
 * time: a packed 2-D view of consecutive rows (at most max_bytes of pixels,
 * at least one row), in order, top row first. A volume's slices are walked
 * one after the other as if stacked into one tall image (row index = slice x
 * height + row). Memory: one strip buffer plus the reader's own band (one
 * strip or tile row of the file).
 *
 * cli_integral_stream() is the streaming integral image: it reads strips,
 * computes each strip's table with the library continuing from the carry (the
 * last table row of the previous strip, pixsum_integral_carry()) and writes
 * the rows out, so the table equals the in-memory one bit for bit (floats
 * too, with a single-threaded method) whatever the image size.
 */
#ifndef PIXSUM_TOOLS_STREAM_H
#define PIXSUM_TOOLS_STREAM_H

#include "image_io.h"
#include "pixsum.h"

#include <stddef.h>

/* Called once per strip; returns 0 to go on, non-zero to stop (that value is
 * then returned by cli_stream_strips). first_row: index of the strip's first
 * row in the whole image. */
typedef int (*cli_strip_fn)(const pixsum_view *strip, size_t first_row, void *user);

/* Called once after the file is opened, before any strip, with its header;
 * non-zero stops. May be NULL. */
typedef int (*cli_header_fn)(const pxio_info *info, void *user);

/* Streams the image at `path` through `fn`. Errors reading the file are
 * printed as "pixsum CMD: PATH: problem" and give CLI_EXIT_RUNTIME. Returns 0,
 * the first non-zero value of a callback, or CLI_EXIT_RUNTIME. */
int cli_stream_strips(const char *cmd, const char *path, const pxio_options *opt,
                      size_t max_bytes, cli_header_fn header, cli_strip_fn fn, void *user);

/* What cli_integral_stream() computes. */
typedef struct cli_integral_job {
    const char *cmd;
    const char *in_path;
    const pxio_options *in_opt;
    const char *out_path;       /* plain table, or NULL */
    const char *sq_path;        /* squared table, or NULL */
    pixsum_type out_type;       /* NONE: default rule */
    pixsum_type sq_type;        /* NONE: default rule */
    int wrap;                   /* modular arithmetic instead of refusing */
    int padded;                 /* (W+1) x (H+1) tables */
    pxio_write_options wopt;
    pixsum_ctx *ctx;            /* method / threads already set */
    size_t max_strip_bytes;     /* bound on one strip of output rows */
    size_t strip_rows;          /* if > 0: rows per strip (overrides the bound) */
    int progress;               /* 1: progress bar (when stderr is a terminal) */
} cli_integral_job;

/* What every integral path (in memory, streamed) checks before making a
 * table for the image described by `info` (read from `path`):
 *   - its pixel type takes an integral table, else a runtime error naming the
 *     type as the file names it (e.g. ".npy dtype int64 ('<i8')") and the
 *     types that do;
 *   - the table types named on the command line (`out`, and `sq` when
 *     `squared`; PIXSUM_TYPE_NONE = the default rule) go with it, else a usage
 *     error (cli_check_table_type());
 *   - the tables' sizes ((W + pad) x (H + pad) x D x C elements) fit in memory
 *     arithmetic, else a runtime error saying that the dimensions overflow,
 *     naming the input.
 * Returns CLI_EXIT_OK or the exit status (message printed). */
int cli_integral_check(const char *cmd, const char *path, const pxio_info *info,
                       pixsum_type out, pixsum_type sq, int squared, size_t pad);

/* Runs the streaming integral (2-D images only). Returns an exit status. */
int cli_integral_stream(const cli_integral_job *job);

#endif

/*
 * text_out.h - text outputs (CSV, JSON) and gnuplot histogram plots of the
 * subcommands, written through tools/out_file.h: a regular (or new) file goes
 * to a hidden temporary beside it, renamed over the final name only when
 * complete (so a failure never leaves a partial file there), a FIFO or
 * character device is written in place, "-" is stdout. A command with several
 * outputs finishes each one (text_out_finish(), plot_histogram()) and then
 * commits them together with out_file_commit_all().
 */
#ifndef PIXSUM_TOOLS_TEXT_OUT_H
#define PIXSUM_TOOLS_TEXT_OUT_H

#include "out_file.h"

#include <stdio.h>

typedef struct text_out {
    FILE *file;       /* where to print; stdout for "-" */
    out_file out;     /* the file behind `file` (unused for stdout) */
    const char *path; /* NULL: stdout */
} text_out;

/* Opens `path` for writing (path NULL or "-": stdout). Returns 0, or an exit
 * status after printing "pixsum <cmd>: PATH: ..." (nothing changed). */
int text_out_open(text_out *t, const char *cmd, const char *path);

/* Flushes and closes the file: complete, but not yet under its name (t->out
 * waits for out_file_commit[_all]()). For stdout, flushes it. Returns 0, or
 * an exit status (message printed) with the output abandoned. */
int text_out_finish(text_out *t, const char *cmd);

/* text_out_finish(), then renames the temporary over the final name. On any
 * failure removes the temporary and returns an exit status (message
 * printed); returns 0 on success. */
int text_out_commit(text_out *t, const char *cmd);

/* Closes and removes the temporary (after an error elsewhere). Safe after a
 * commit or on a zeroed text_out. */
void text_out_abort(text_out *t);

/* Path of gnuplot: the build-time path, else the first on PATH; NULL if none. */
const char *plot_find_gnuplot(void);

/* Returns 1 if `path` names a plot format plot_histogram() writes (.png,
 * .svg), else 0. */
int plot_path_ok(const char *path);

/* Opens the plot output `path` (out_file_open(); .png or .svg). Returns 0,
 * or an exit status (message printed). */
int plot_open(out_file *plot, const char *cmd, const char *path);

/* Writes the plot's data: comma-separated lines under one header line. */
typedef void (*plot_data_fn)(FILE *f, void *user);

/* Draws columns `x_col` (bin lower edge) against `y_col` of the data that
 * `data` writes, as boxes, into the open output `plot` (.png via pngcairo,
 * .svg via svg, by its name's extension): gnuplot reads the data inline and
 * writes the image to the output's descriptor, which is then closed (the
 * output waits for its commit). x_lo/x_hi set the x range. Returns 0, 1 if
 * gnuplot is missing (message printed), or an exit status; on failure the
 * caller abandons `plot` (out_file_abort()). */
int plot_histogram(const char *cmd, out_file *plot, const char *title, const char *ylabel,
                   int x_col, int y_col, double x_lo, double x_hi, plot_data_fn data,
                   void *user);

#endif

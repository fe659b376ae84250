/*
 * text_out.h - text outputs (CSV, JSON, gnuplot plots) written the safe way:
 * into a temporary file in the destination's directory, renamed over the final
 * name only when complete, so a failure never leaves a partial file there.
 */
#ifndef PIXSUM_TOOLS_TEXT_OUT_H
#define PIXSUM_TOOLS_TEXT_OUT_H

#include <stdio.h>

typedef struct text_out {
    FILE *file;
    char tmp[4200];
    const char *path; /* NULL: stdout */
} text_out;

/* Opens `path` for writing through a temporary (path NULL or "-": stdout).
 * Returns 0, or an exit status after printing "pixsum <cmd>: ..." */
int text_out_open(text_out *t, const char *cmd, const char *path);

/* Flushes, closes and renames the temporary over the final name. On any
 * failure removes the temporary and returns an exit status (message printed);
 * returns 0 on success. */
int text_out_commit(text_out *t, const char *cmd);

/* Closes and removes the temporary (after an error elsewhere). */
void text_out_abort(text_out *t);

/* Path of gnuplot: the build-time path, else the first on PATH; NULL if none. */
const char *plot_find_gnuplot(void);

/* Returns 1 if `path` names a plot format plot_histogram_csv() writes (.png,
 * .svg), else 0. */
int plot_path_ok(const char *path);

/* Draws columns `x_col` (bin lower edge) against `y_col` of a comma-separated
 * file with a header line as boxes into `out_path` (.png via pngcairo, .svg
 * via svg, chosen by extension), through a temporary renamed when gnuplot
 * succeeded. x_lo/x_hi set the x range. Returns 0, 1 if gnuplot is missing
 * (message printed), or an exit status. */
int plot_histogram_csv(const char *cmd, const char *csv_path, const char *out_path,
                       const char *title, const char *ylabel, int x_col, int y_col,
                       double x_lo, double x_hi);

#endif

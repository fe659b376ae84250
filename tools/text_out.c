/*
 * text_out.c - atomic text outputs and gnuplot histogram plots for the
 * subcommands (see text_out.h).
 */
#include "text_out.h"

#include "cli_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int text_out_open(text_out *t, const char *cmd, const char *path)
{
    memset(t, 0, sizeof *t);
    if (!path || strcmp(path, "-") == 0) {
        t->file = stdout;
        return 0;
    }
    t->path = path;
    int n = snprintf(t->tmp, sizeof t->tmp, "%s.tmp-XXXXXX", path);
    if (n < 0 || (size_t)n >= sizeof t->tmp)
        return cli_error(cmd, "%s: path too long", path);
    int fd = mkstemp(t->tmp);
    if (fd < 0)
        return cli_error(cmd, "%s: cannot create: %s", path, strerror(errno));
    mode_t mask = umask(0); /* mkstemp makes 0600; give the usual 0666 & ~umask */
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    t->file = fdopen(fd, "w");
    if (!t->file) {
        int e = errno;
        close(fd);
        remove(t->tmp);
        return cli_error(cmd, "%s: cannot open for writing: %s", path, strerror(e));
    }
    return 0;
}

int text_out_commit(text_out *t, const char *cmd)
{
    if (!t->path) {
        if (fflush(stdout) != 0 || ferror(stdout))
            return cli_error(cmd, "stdout: write failed: %s", strerror(errno));
        return 0;
    }
    int bad = fflush(t->file) != 0 || ferror(t->file);
    int e = errno;
    if (fclose(t->file) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    t->file = NULL;
    if (bad) {
        remove(t->tmp);
        return cli_error(cmd, "%s: write failed: %s", t->path, strerror(e));
    }
    if (rename(t->tmp, t->path) != 0) {
        e = errno;
        remove(t->tmp);
        return cli_error(cmd, "%s: cannot rename into place: %s", t->path, strerror(e));
    }
    return 0;
}

void text_out_abort(text_out *t)
{
    if (t->path && t->file) {
        fclose(t->file);
        remove(t->tmp);
    }
    t->file = NULL;
}

const char *plot_find_gnuplot(void)
{
#ifdef PIXSUM_GNUPLOT
    if (access(PIXSUM_GNUPLOT, X_OK) == 0)
        return PIXSUM_GNUPLOT;
#endif
    static char found[4096];
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        if (len && len + sizeof "/gnuplot" < sizeof found) {
            memcpy(found, path, len);
            memcpy(found + len, "/gnuplot", sizeof "/gnuplot");
            if (access(found, X_OK) == 0)
                return found;
        }
        path = colon ? colon + 1 : NULL;
    }
    return NULL;
}

int plot_path_ok(const char *path)
{
    size_t len = strlen(path);
    return len > 4 && (strcmp(path + len - 4, ".svg") == 0 || strcmp(path + len - 4, ".png") == 0);
}

/* Writes s as a gnuplot single-quoted string (quotes doubled). */
static void put_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

int plot_histogram_csv(const char *cmd, const char *csv_path, const char *out_path,
                       const char *title, const char *ylabel, int x_col, int y_col,
                       double x_lo, double x_hi)
{
    const char *gp = plot_find_gnuplot();
    if (!gp) {
        fprintf(stderr, "pixsum %s: gnuplot not found: no plot drawn (install gnuplot-nox)\n",
                cmd);
        return 1;
    }
    if (!plot_path_ok(out_path))
        return cli_usage_error(cmd, "%s: plots are written as .png or .svg", out_path);
    size_t len = strlen(out_path);
    int svg = strcmp(out_path + len - 4, ".svg") == 0;
    char tmp[4200], quoted_gp[4200];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp%s", out_path, svg ? ".svg" : ".png");
    if (n < 0 || (size_t)n >= sizeof tmp)
        return cli_error(cmd, "%s: path too long", out_path);
    snprintf(quoted_gp, sizeof quoted_gp, "'%s'", gp);
    FILE *p = popen(quoted_gp, "w");
    if (!p)
        return cli_error(cmd, "cannot run %s: %s", gp, strerror(errno));
    fprintf(p, "set terminal %s size 900,500 font 'sans,10'\nset output ",
            svg ? "svg" : "pngcairo");
    put_quoted(p, tmp);
    fprintf(p, "\nset datafile separator ','\nset title ");
    put_quoted(p, title);
    fprintf(p, "\nset xlabel 'value'\nset ylabel ");
    put_quoted(p, ylabel);
    fprintf(p,
            "\nset xrange [%.17g:%.17g]\nset style fill solid 0.8 noborder\n"
            "set grid ytics\nplot ",
            x_lo, x_hi);
    put_quoted(p, csv_path);
    /* Boxes centred on each bin: x = lower edge + half the bin width. */
    fprintf(p, " using ($%d+($%d-$%d)/2):%d:($%d-$%d) skip 1 with boxes lc rgb '#3465a4' "
               "notitle\n",
            x_col, x_col + 1, x_col, y_col, x_col + 1, x_col);
    int status = pclose(p);
    if (status != 0) {
        remove(tmp);
        return cli_error(cmd, "gnuplot failed (status %d) drawing %s", status, out_path);
    }
    if (rename(tmp, out_path) != 0) {
        int e = errno;
        remove(tmp);
        return cli_error(cmd, "%s: cannot rename into place: %s", out_path, strerror(e));
    }
    return 0;
}

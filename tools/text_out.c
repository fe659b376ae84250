/*
 * text_out.c - text outputs (CSV, JSON) and gnuplot histogram plots for the
 * subcommands, on top of tools/out_file.c (see text_out.h). gnuplot gets the
 * data inline (a datablock on its standard input) and writes the image to its
 * standard output, which is the plot's own output file: no scratch file, and
 * the same rules (temporary, in place, refusals) as every other output.
 */
#include "text_out.h"

#include "cli_util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int text_out_open(text_out *t, const char *cmd, const char *path)
{
    memset(t, 0, sizeof *t);
    t->out.fd = -1;
    if (!path || strcmp(path, "-") == 0) {
        t->file = stdout;
        return 0;
    }
    t->path = path;
    char err[600];
    if (out_file_open(&t->out, path, 0, NULL, err, sizeof err) != 0)
        return cli_error(cmd, "%s", err);
    t->file = fdopen(t->out.fd, "w");
    if (!t->file) {
        int e = errno;
        out_file_abort(&t->out);
        return cli_error(cmd, "%s: cannot open for writing: %s", path, strerror(e));
    }
    out_file_take_fd(&t->out); /* the stream closes it */
    return 0;
}

int text_out_finish(text_out *t, const char *cmd)
{
    if (!t->path) {
        if (fflush(stdout) != 0 || ferror(stdout))
            return cli_error(cmd, "stdout: write failed: %s", strerror(errno));
        return 0;
    }
    if (!t->file) /* already finished */
        return 0;
    errno = 0;
    int bad = fflush(t->file) != 0 || ferror(t->file);
    int e = errno;
    if (fclose(t->file) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    t->file = NULL;
    if (bad) {
        out_file_abort(&t->out);
        return cli_error(cmd, "%s: write failed: %s", t->path, e ? strerror(e) : "I/O error");
    }
    return 0;
}

int text_out_commit(text_out *t, const char *cmd)
{
    int rc = text_out_finish(t, cmd);
    if (rc != 0 || !t->path)
        return rc;
    char err[600];
    if (out_file_commit(&t->out, err, sizeof err) != 0)
        return cli_error(cmd, "%s", err);
    return 0;
}

void text_out_abort(text_out *t)
{
    if (t->path && t->file)
        fclose(t->file);
    if (t->path)
        out_file_abort(&t->out);
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

int plot_open(out_file *plot, const char *cmd, const char *path)
{
    if (!plot_path_ok(path))
        return cli_usage_error(cmd, "%s: plots are written as .png or .svg", path);
    char err[600];
    if (out_file_open(plot, path, 0, NULL, err, sizeof err) != 0)
        return cli_error(cmd, "%s", err);
    return 0;
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

/* Feeds gnuplot its script: terminal, the data as datablock $data, the plot. */
static void write_script(FILE *p, int svg, const char *title, const char *ylabel, int x_col,
                         int y_col, double x_lo, double x_hi, plot_data_fn data, void *user)
{
    fprintf(p, "set terminal %s size 900,500 font 'sans,10'\n", svg ? "svg" : "pngcairo");
    fprintf(p, "$data << EOD\n");
    data(p, user);
    fprintf(p, "EOD\nset datafile separator ','\nset title ");
    put_quoted(p, title);
    fprintf(p, "\nset xlabel 'value'\nset ylabel ");
    put_quoted(p, ylabel);
    fprintf(p,
            "\nset xrange [%.17g:%.17g]\nset style fill solid 0.8 noborder\n"
            "set grid ytics\n",
            x_lo, x_hi);
    /* Boxes centred on each bin: x = lower edge + half the bin width. */
    fprintf(p,
            "plot $data using ($%d+($%d-$%d)/2):%d:($%d-$%d) skip 1 with boxes "
            "lc rgb '#3465a4' notitle\n",
            x_col, x_col + 1, x_col, y_col, x_col + 1, x_col);
}

int plot_histogram(const char *cmd, out_file *plot, const char *title, const char *ylabel,
                   int x_col, int y_col, double x_lo, double x_hi, plot_data_fn data,
                   void *user)
{
    const char *gp = plot_find_gnuplot();
    if (!gp) {
        fprintf(stderr, "pixsum %s: gnuplot not found: no plot drawn (install gnuplot-nox)\n",
                cmd);
        return 1;
    }
    const char *path = plot->path;
    size_t len = strlen(path);
    int svg = len > 4 && strcmp(path + len - 4, ".svg") == 0;
    int in[2];
    if (pipe2(in, O_CLOEXEC) != 0)
        return cli_error(cmd, "cannot run %s: %s", gp, strerror(errno));
    /* gnuplot: standard input = our script, standard output = the plot file. */
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&fa, plot->fd, STDOUT_FILENO);
    char *argv[] = {(char *)gp, NULL};
    pid_t pid;
    int e = posix_spawn(&pid, gp, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    if (e != 0) {
        close(in[1]);
        return cli_error(cmd, "cannot run %s: %s", gp, strerror(e));
    }
    /* A gnuplot that stops reading must not kill us with SIGPIPE. */
    struct sigaction ign, old_pipe;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old_pipe);
    FILE *p = fdopen(in[1], "w");
    if (p) {
        write_script(p, svg, title, ylabel, x_col, y_col, x_lo, x_hi, data, user);
        fclose(p);
    } else {
        close(in[1]);
    }
    int status = -1;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    sigaction(SIGPIPE, &old_pipe, NULL);
    struct stat st;
    int empty = plot->kind == OUT_FILE_TEMP && fstat(plot->fd, &st) == 0 && st.st_size == 0;
    char err[600];
    if (out_file_close(plot, err, sizeof err) != 0)
        return cli_error(cmd, "%s", err);
    if (!p)
        return cli_error(cmd, "cannot feed %s: out of memory", gp);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return cli_error(cmd, "gnuplot failed (%s %d) drawing %s",
                         WIFSIGNALED(status) ? "signal" : "status",
                         WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), path);
    if (empty)
        return cli_error(cmd, "gnuplot wrote nothing drawing %s", path);
    return 0;
}

/*
 * main.c - entry of the `pixsum` command-line tool: dispatches to the
 * subcommand named by the first argument (see commands.h).
 */
#include "commands.h"
#include "pixsum.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const struct {
    const char *name;
    const char *help;
} commands[] = {
#define PIXSUM_COMMAND_ENTRY(name, help) {#name, help},
    PIXSUM_COMMANDS(PIXSUM_COMMAND_ENTRY)
#undef PIXSUM_COMMAND_ENTRY
};

static pixsum_command_fn command_fn(const char *name)
{
#define PIXSUM_COMMAND_LOOKUP(cname, help) \
    if (strcmp(name, #cname) == 0)         \
        return cmd_##cname;
    PIXSUM_COMMANDS(PIXSUM_COMMAND_LOOKUP)
#undef PIXSUM_COMMAND_LOOKUP
    return NULL;
}

static void usage(FILE *f)
{
    fprintf(f, "pixsum %s - integral images, box statistics and histograms\n\n"
               "usage: pixsum COMMAND [ARGS...]   (pixsum COMMAND --help for details)\n\n"
               "commands:\n",
            pixsum_version());
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (command_fn(commands[i].name))
            fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
}

/* A standard descriptor that was closed (pixsum >&-) gets /dev/null opened
 * the wrong way round on it, so that an output file opened later cannot take
 * its number and receive what is printed, and printing fails (and is
 * reported below) instead of vanishing. */
static void guard_standard_fds(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int n = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
            if (n >= 0 && n != fd) {
                dup2(n, fd);
                close(n);
            }
        }
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("pixsum %s\n", pixsum_version());
        return 0;
    }
    pixsum_command_fn fn = command_fn(argv[1]);
    if (!fn) {
        fprintf(stderr, "pixsum: unknown command '%s' (try pixsum --help)\n", argv[1]);
        return 2;
    }
    return fn(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
    guard_standard_fds();
    int rc = dispatch(argc, argv);
    /* Every command's printing ends here: what stdio still holds is written
     * now, and a write that failed at any point (a full disk, a closed
     * descriptor) makes a run that succeeded fail, with one line. (A command
     * that failed has said why already, and keeps its status.) */
    errno = 0;
    int bad = fflush(stdout) != 0;
    int e = errno;
    if ((bad || ferror(stdout)) && rc == 0) {
        fprintf(stderr, "pixsum: stdout: write failed: %s\n", e ? strerror(e) : "I/O error");
        rc = 1;
    }
    return rc;
}

/*
 * cli_util.h - what every `pixsum` subcommand shares, so they all behave the
 * same: exit codes, error messages "pixsum <cmd>: <message>" on stderr, the
 * common flags --method --threads --type --device, option matching
 * (--name VALUE and --name=VALUE), number/size parsing and a progress bar
 * shown only when stderr is a terminal.
 */
#ifndef PIXSUM_TOOLS_CLI_UTIL_H
#define PIXSUM_TOOLS_CLI_UTIL_H

#include "pixsum.h"

#include <stddef.h>
#include <stdint.h>

/* Exit statuses of every subcommand. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_RUNTIME = 1, CLI_EXIT_USAGE = 2 };

/* The common flags. Unset values: method NULL ("auto"), threads -1 (library
 * default), type PIXSUM_TYPE_NONE (rule default), device -1 (default device). */
typedef struct cli_common {
    const char *method;
    int threads;
    pixsum_type type;
    int device;
} cli_common;

/* Sets *c to the unset values above. */
void cli_common_init(cli_common *c);

/* Prints "pixsum CMD: message\n" to stderr. Returns CLI_EXIT_RUNTIME. */
int cli_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Prints "pixsum CMD: message\n(try 'pixsum CMD --help')" to stderr.
 * Returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Reports a failed library call: "pixsum CMD: WHAT: <status text>: <detail>".
 * Returns CLI_EXIT_RUNTIME. */
int cli_lib_error(const char *cmd, const char *what, int status);

/* 1 if arg is -h or --help. */
int cli_is_help(const char *arg);

/* Matches argv[*i] against option `names` ("--window", or spellings of one
 * option separated by '|': "-o|--output"), taking a value either as
 * "--window=VALUE" or from the next argument. Returns 1 (matched; *value set
 * and *i advanced past a separate value), 0 (not this option) or -1 (matched
 * but the value is missing; the usage error is printed). */
int cli_match(const char *cmd, int argc, char **argv, int *i, const char *names,
              const char **value);

/* Takes arg, an argument that no option of the command matched, as the input
 * file: "-x" is an unknown option, and a second file is refused. Returns
 * CLI_EXIT_OK with *in_path set, or CLI_EXIT_USAGE (message printed). */
int cli_take_input(const char *cmd, const char *arg, const char **in_path);

/* Parses the common flag at argv[*i] into *c. Returns 1 (consumed), 0 (not a
 * common flag) or -1 (bad value; usage error printed). */
int cli_parse_common(const char *cmd, int argc, char **argv, int *i, cli_common *c);

/* Applies method/threads/device of *c to ctx. An unknown method name is a
 * usage error listing the method names; a method that is registered but not
 * available is a runtime error. Returns CLI_EXIT_OK or the exit status. */
int cli_apply_common(const char *cmd, const cli_common *c, pixsum_ctx *ctx);

/* Creates a context with the common flags of *c applied (cli_apply_common).
 * Returns CLI_EXIT_OK with *ctx set, or an exit status (message printed) with
 * *ctx NULL. */
int cli_new_ctx(const char *cmd, const cli_common *c, pixsum_ctx **ctx);

/* Parses a decimal size (no sign, no junk). Returns 0 or -1. */
int cli_parse_size(const char *s, size_t *out);

/* Parses "WxH" (e.g. 15x15) or a single number N meaning NxN. Returns 0/-1. */
int cli_parse_wxh(const char *s, size_t *w, size_t *h);

/* Seconds from a monotonic clock. */
double cli_now(void);

/* A progress bar on stderr, drawn only when stderr is a terminal (and the
 * environment variable PIXSUM_NO_PROGRESS is unset). */
typedef struct cli_progress {
    int active;
    uint64_t total;
    int last_permille;
    double start;
    const char *label;
} cli_progress;

void cli_progress_start(cli_progress *p, const char *label, uint64_t total);
void cli_progress_update(cli_progress *p, uint64_t done);
void cli_progress_end(cli_progress *p);

#endif

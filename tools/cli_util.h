/*
 * cli_util.h - what every `pixsum` subcommand shares, so they all behave the
 * same: exit codes, error messages "pixsum <cmd>: <message>" on stderr, the
 * common flags --method --threads --type --device, option matching
 * (--name VALUE and --name=VALUE), number/size parsing and a progress bar
 * shown only when stderr is a terminal.
 */
#ifndef PIXSUM_TOOLS_CLI_UTIL_H
#define PIXSUM_TOOLS_CLI_UTIL_H

#include "image_io.h"
#include "pixsum.h"

#include <stddef.h>
#include <stdint.h>

/* Exit statuses of every subcommand. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_RUNTIME = 1, CLI_EXIT_USAGE = 2 };

/* The common flags. Unset values: method NULL ("auto"), threads -1 (library
 * default), type PIXSUM_TYPE_NONE (rule default), device -1 (default device).
 * `op` is the operation the command runs (PIXSUM_OP_* bits a --method must
 * have; the command may refine it after parsing, e.g. for --squared) and
 * `takes` the common flags that have an effect on the command (CLI_TAKES_*):
 * the others are refused as usage errors instead of being ignored. */
typedef struct cli_common {
    const char *method;
    int threads;
    pixsum_type type;
    int device;
    unsigned op;
    unsigned takes;
} cli_common;

enum {
    CLI_TAKES_METHOD = 1u << 0,
    CLI_TAKES_THREADS = 1u << 1,
    CLI_TAKES_TYPE = 1u << 2,
    CLI_TAKES_DEVICE = 1u << 3,
    CLI_TAKES_ALL = 0xFu
};

/* Sets *c to the unset values above, for a command running `op` and taking
 * the common flags `takes`. */
void cli_common_init(cli_common *c, unsigned op, unsigned takes);

/* Prints "pixsum CMD: message\n" to stderr. Returns CLI_EXIT_RUNTIME. */
int cli_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Reports a failed allocation of `bytes` bytes for `what` (e.g. "the integral
 * table") made from the input `path`: "PATH: out of memory for WHAT (N bytes)",
 * or, when the size computation overflowed (bytes 0, or above PTRDIFF_MAX),
 * "PATH: image dimensions overflow: WHAT would need more than 2^63 bytes"
 * instead of a misleading "0 bytes". Returns CLI_EXIT_RUNTIME. */
int cli_alloc_error(const char *cmd, const char *path, const char *what, size_t bytes);

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

/* The input's page options at argv[*i]: "--page N" (a 0-based page of a
 * multi-page TIFF) and, when `batch_ok`, "--batch" (every page, or the first
 * axis of a 3-D/4-D .npy, as N images). Sets opt->page_set/page or
 * opt->batch. Returns 1 (consumed), 0 (not one of them) or -1 (bad value or
 * --batch where it is not offered; usage error printed). */
int cli_parse_pages(const char *cmd, int argc, char **argv, int *i, int batch_ok,
                    pxio_options *opt);

/* Checks the page options together (--page with --batch or --volume
 * contradict each other). Returns CLI_EXIT_OK or CLI_EXIT_USAGE (printed). */
int cli_check_pages(const char *cmd, const pxio_options *opt);

/* One note on stderr when the file described by `info` has several pages and
 * only page 0 is read because no page option was given (never silently). */
void cli_note_pages(const char *cmd, const char *path, const pxio_info *info,
                    const pxio_options *opt);

/* Parses the common flag at argv[*i] into *c. Returns 1 (consumed), 0 (not a
 * common flag) or -1 (bad value; usage error printed). */
int cli_parse_common(const char *cmd, int argc, char **argv, int *i, cli_common *c);

/* Applies method/threads/device of *c to ctx. An unknown method name, or a
 * known one that cannot do c->op, is a usage error listing the methods of that
 * operation; --device with a named method that is not a CUDA method is a usage
 * error (it would be ignored); a method that is registered but not available
 * is a runtime error. Returns CLI_EXIT_OK or the exit status. */
int cli_apply_common(const char *cmd, const cli_common *c, pixsum_ctx *ctx);

/* The usage error for a method name that is unknown, or known but not doing
 * `op` (PIXSUM_OP_* bits): one message listing "auto" and every registered
 * method doing op, and pointing at 'pixsum methods --op ...'. Used by every
 * command with --method. Returns CLI_EXIT_USAGE. */
int cli_method_error(const char *cmd, const char *method, unsigned op);

/* What the operation bits `op` compute, for messages ("integral images",
 * "squared integral tables", "tilted integral tables", "histograms"...). */
const char *cli_op_text(unsigned op);

/* Refuses an output file that is the input file (same name, or the same file
 * under another name: a link, "./IN"): "WHAT would overwrite the input 'IN'"
 * as a usage error. `what` names the output ("the output", "--squared").
 * Every command writing files checks its outputs with it. Returns CLI_EXIT_OK
 * or CLI_EXIT_USAGE (message printed). */
int cli_check_not_input(const char *cmd, const char *in, const char *out, const char *what);

/* 1 if paths a and b (either may be NULL: 0) are the same file: the same name,
 * or the same device and inode. The test behind cli_check_not_input(). */
int cli_same_file(const char *a, const char *b);

/* A table type named on the command line (--type, --sq-type) for an input of
 * type `in`: CLI_EXIT_OK when the pair is supported, else a usage error naming
 * the pair and the table types `in` can have (or that `in` has none) - the
 * same exit status (2) as an unknown type name. `flag` is "--type" or
 * "--sq-type"; `path` the input file. */
int cli_check_table_type(const char *cmd, const char *path, const char *flag, pixsum_type in,
                         pixsum_type out, int squared);

/* 1 if `path` names a TIFF output (.tif .tiff .btf .tf8, any case): the only
 * format --compress and --bigtiff apply to. */
int cli_is_tiff_name(const char *path);

/* "u8 u16 i16 i32 u32 f32 f64": the pixel types integral tables take. */
const char *cli_integral_input_types(void);

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

/*
 * cli_util.c - the shared behaviour of the `pixsum` subcommands: error
 * messages, option matching, the common flags and the progress bar.
 */
#include "cli_util.h"

#include <errno.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void cli_common_init(cli_common *c, unsigned op, unsigned takes)
{
    c->method = NULL;
    c->threads = -1;
    c->type = PIXSUM_TYPE_NONE;
    c->device = -1;
    c->op = op;
    c->takes = takes;
}

int cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "pixsum %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_EXIT_RUNTIME;
}

int cli_alloc_error(const char *cmd, const char *path, const char *what, size_t bytes)
{
    if (bytes == 0 || bytes > (size_t)PTRDIFF_MAX)
        return cli_error(cmd, "%s: image dimensions overflow: %s would need more than 2^63 "
                              "bytes",
                         path, what);
    return cli_error(cmd, "%s: out of memory for %s (%zu bytes)", path, what, bytes);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "pixsum %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(try 'pixsum %s --help')\n", cmd);
    return CLI_EXIT_USAGE;
}

int cli_lib_error(const char *cmd, const char *what, int status)
{
    const char *detail = pixsum_last_error();
    if (detail && *detail)
        return cli_error(cmd, "%s: %s: %s", what, pixsum_strerror(status), detail);
    return cli_error(cmd, "%s: %s", what, pixsum_strerror(status));
}

int cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int cli_match(const char *cmd, int argc, char **argv, int *i, const char *names,
              const char **value)
{
    const char *a = argv[*i];
    for (const char *name = names; *name;) {
        size_t n = strcspn(name, "|");
        if (strncmp(a, name, n) == 0 && (a[n] == '=' || a[n] == '\0')) {
            if (a[n] == '=') {
                *value = a + n + 1;
                return 1;
            }
            if (*i + 1 >= argc) {
                cli_usage_error(cmd, "%s needs a value", a);
                return -1;
            }
            *value = argv[++*i];
            return 1;
        }
        name += n + (name[n] == '|');
    }
    return 0;
}

int cli_parse_pages(const char *cmd, int argc, char **argv, int *i, int batch_ok,
                    pxio_options *opt)
{
    const char *v;
    int m = cli_match(cmd, argc, argv, i, "--page", &v);
    if (m < 0)
        return -1;
    if (m > 0) {
        if (cli_parse_size(v, &opt->page) != 0) {
            cli_usage_error(cmd, "--page takes a page number (0, 1, ...), not '%s'", v);
            return -1;
        }
        opt->page_set = 1;
        return 1;
    }
    if (strcmp(argv[*i], "--batch") != 0)
        return 0;
    if (!batch_ok) {
        cli_usage_error(cmd, "--batch is not offered here (one image at a time: --page N)");
        return -1;
    }
    opt->batch = 1;
    return 1;
}

int cli_check_pages(const char *cmd, const pxio_options *opt)
{
    if (opt->page_set && (opt->batch || opt->volume))
        return cli_usage_error(cmd, "--page N reads one page; --%s reads them all",
                               opt->batch ? "batch" : "volume");
    if (opt->batch && opt->volume)
        return cli_usage_error(cmd, "--batch (N images) and --volume (one 3-D image) "
                                    "contradict each other");
    return CLI_EXIT_OK;
}

void cli_note_pages(const char *cmd, const char *path, const pxio_info *info,
                    const pxio_options *opt)
{
    if (info->pages > 1 && info->depth == 1 && !(opt && opt->page_set))
        fprintf(stderr, "pixsum %s: note: %s has %zu pages; page 0 is read (--page N for "
                        "another, --batch for all of them)\n", cmd, path, info->pages);
}

int cli_take_input(const char *cmd, const char *arg, const char **in_path)
{
    if (arg[0] == '-' && arg[1] != '\0')
        return cli_usage_error(cmd, "unknown option '%s'", arg);
    if (*in_path)
        return cli_usage_error(cmd, "one input file only ('%s' and '%s')", *in_path, arg);
    *in_path = arg;
    return CLI_EXIT_OK;
}

int cli_parse_size(const char *s, size_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || end == s || v > SIZE_MAX)
        return -1;
    *out = (size_t)v;
    return 0;
}

int cli_parse_wxh(const char *s, size_t *w, size_t *h)
{
    const char *x = strchr(s, 'x');
    if (!x)
        x = strchr(s, 'X');
    if (!x) {
        if (cli_parse_size(s, w) != 0)
            return -1;
        *h = *w;
        return 0;
    }
    char first[32];
    size_t n = (size_t)(x - s);
    if (n == 0 || n >= sizeof first)
        return -1;
    memcpy(first, s, n);
    first[n] = '\0';
    return cli_parse_size(first, w) == 0 && cli_parse_size(x + 1, h) == 0 ? 0 : -1;
}

/* A common flag the command has no use for: refused rather than ignored. */
static int common_refused(const char *cmd, const cli_common *c, unsigned flag, const char *name)
{
    if (c->takes & flag)
        return 0;
    cli_usage_error(cmd, "%s has no effect on 'pixsum %s'", name, cmd);
    return 1;
}

int cli_parse_common(const char *cmd, int argc, char **argv, int *i, cli_common *c)
{
    const char *v;
    int m;
    if ((m = cli_match(cmd, argc, argv, i, "--method", &v)) != 0) {
        if (m < 0 || common_refused(cmd, c, CLI_TAKES_METHOD, "--method"))
            return -1;
        c->method = v;
        return 1;
    }
    if ((m = cli_match(cmd, argc, argv, i, "--threads", &v)) != 0) {
        size_t t;
        if (m < 0 || common_refused(cmd, c, CLI_TAKES_THREADS, "--threads"))
            return -1;
        if (cli_parse_size(v, &t) != 0 || t > 4096) {
            cli_usage_error(cmd, "--threads takes a count 0..4096 (0 = all cores), not '%s'", v);
            return -1;
        }
        c->threads = (int)t;
        return 1;
    }
    if ((m = cli_match(cmd, argc, argv, i, "--type", &v)) != 0) {
        if (m < 0 || common_refused(cmd, c, CLI_TAKES_TYPE, "--type"))
            return -1;
        pixsum_type t = pixsum_type_from_name(v);
        if (t == PIXSUM_TYPE_NONE) {
            cli_usage_error(cmd, "unknown --type '%s' (u32 u64 i64 f32 f64)", v);
            return -1;
        }
        c->type = t;
        return 1;
    }
    if ((m = cli_match(cmd, argc, argv, i, "--device", &v)) != 0) {
        size_t d;
        if (m < 0 || common_refused(cmd, c, CLI_TAKES_DEVICE, "--device"))
            return -1;
        if (cli_parse_size(v, &d) != 0 || d > 1024) {
            cli_usage_error(cmd, "--device takes a CUDA device number, not '%s'", v);
            return -1;
        }
        c->device = (int)d;
        return 1;
    }
    return 0;
}

const char *cli_op_text(unsigned op)
{
    if (op & PIXSUM_OP_HISTOGRAM)
        return "histograms";
    if (op & PIXSUM_OP_BOX_FILTER)
        return "box filters";
    if (op & PIXSUM_OP_TILTED)
        return "tilted integral tables";
    if (op & PIXSUM_OP_INTEGRAL_3D)
        return "3-D integral tables";
    if (op & PIXSUM_OP_INTEGRAL_SQ)
        return "squared integral tables";
    if (op & PIXSUM_OP_CARRY)
        return "integral tables continuing a carry row";
    return "integral images";
}

/* The name `pixsum methods --op` knows for the main bit of `op`. */
static const char *op_flag_name(unsigned op)
{
    if (op & PIXSUM_OP_HISTOGRAM)
        return "hist";
    if (op & PIXSUM_OP_BOX_FILTER)
        return "box";
    if (op & PIXSUM_OP_TILTED)
        return "tilted";
    if (op & PIXSUM_OP_INTEGRAL_3D)
        return "3d";
    if (op & PIXSUM_OP_INTEGRAL_SQ)
        return "sq";
    return "integral";
}

int cli_method_error(const char *cmd, const char *method, unsigned op)
{
    size_t n;
    const pixsum_method_info *m = pixsum_methods(&n);
    if (pixsum_method_find(method) >= 0)
        fprintf(stderr, "pixsum %s: method '%s' does not compute %s; methods that do: auto",
                cmd, method, cli_op_text(op));
    else
        fprintf(stderr, "pixsum %s: unknown method '%s'; methods for %s: auto", cmd, method,
                cli_op_text(op));
    for (size_t k = 0; k < n; k++)
        if ((m[k].ops & op) == op)
            fprintf(stderr, " %s", m[k].name);
    fprintf(stderr, "\n(see 'pixsum methods --op %s')\n", op_flag_name(op));
    return CLI_EXIT_USAGE;
}

int cli_apply_common(const char *cmd, const cli_common *c, pixsum_ctx *ctx)
{
    if (c->method && strcmp(c->method, "auto") != 0) {
        int id = pixsum_method_find(c->method);
        const pixsum_method_info *info = id < 0 ? NULL : pixsum_method_get(id);
        if (id < 0 || (info && c->op && (info->ops & c->op) != c->op))
            return cli_method_error(cmd, c->method, c->op);
        if (info && c->device >= 0 && info->backend != PIXSUM_BACKEND_CUDA)
            return cli_usage_error(cmd, "--device has no effect with method '%s' (it selects "
                                        "the GPU of CUDA methods)", c->method);
        if (info && !info->available)
            return cli_error(cmd, "method '%s' is not available in this build or on this "
                                  "machine (see 'pixsum methods')",
                             c->method);
        int st = pixsum_ctx_set(ctx, PIXSUM_PARAM_METHOD, id);
        if (st != PIXSUM_OK)
            return cli_lib_error(cmd, "--method", st);
    }
    if (c->threads >= 0) {
        int st = pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, c->threads);
        if (st != PIXSUM_OK)
            return cli_lib_error(cmd, "--threads", st);
    }
    if (c->device >= 0) {
        int st = pixsum_ctx_set(ctx, PIXSUM_PARAM_CUDA_DEVICE, c->device);
        if (st != PIXSUM_OK)
            return cli_lib_error(cmd, "--device", st);
    }
    return CLI_EXIT_OK;
}

int cli_same_file(const char *a, const char *b)
{
    if (!a || !b)
        return 0;
    struct stat sa, sb;
    return strcmp(a, b) == 0 || (stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
                                 sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

int cli_check_not_input(const char *cmd, const char *in, const char *out, const char *what)
{
    if (cli_same_file(in, out))
        return cli_usage_error(cmd, "%s would overwrite the input '%s'", what, in);
    return CLI_EXIT_OK;
}

int cli_is_tiff_name(const char *path)
{
    const char *dot = path ? strrchr(path, '.') : NULL;
    if (!dot || strchr(dot, '/'))
        return 0;
    static const char *const exts[] = {".tif", ".tiff", ".btf", ".tf8"};
    for (size_t k = 0; k < sizeof exts / sizeof exts[0]; k++)
        if (strcasecmp(dot, exts[k]) == 0)
            return 1;
    return 0;
}

static const pixsum_type table_types[] = {PIXSUM_U32, PIXSUM_U64, PIXSUM_I64, PIXSUM_F32,
                                          PIXSUM_F64};

const char *cli_integral_input_types(void)
{
    return "u8 u16 i16 i32 u32 f32 f64";
}

int cli_check_table_type(const char *cmd, const char *path, const char *flag, pixsum_type in,
                         pixsum_type out, int squared)
{
    /* count 1: only the pair is asked about here; overflow is the data's business */
    if (out == PIXSUM_TYPE_NONE ||
        pixsum_integral_check(in, out, 1, squared) != PIXSUM_ERR_BAD_TYPE)
        return CLI_EXIT_OK;
    char ok[64] = "";
    for (size_t k = 0; k < sizeof table_types / sizeof table_types[0]; k++)
        if (pixsum_integral_check(in, table_types[k], 1, squared) != PIXSUM_ERR_BAD_TYPE) {
            size_t used = strlen(ok);
            snprintf(ok + used, sizeof ok - used, "%s%s", used ? " " : "",
                     pixsum_type_name(table_types[k]));
        }
    if (!ok[0])
        return cli_usage_error(cmd, "%s: %s %s: %s pixels have no integral table (the pixel "
                                    "types are %s)",
                               path, flag, pixsum_type_name(out), pixsum_type_name(in),
                               cli_integral_input_types());
    return cli_usage_error(cmd, "%s: %s %s: %s pixels give %s%s tables, not %s", path, flag,
                           pixsum_type_name(out), pixsum_type_name(in), ok,
                           squared ? " squared" : "", pixsum_type_name(out));
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_start(cli_progress *p, const char *label, uint64_t total)
{
    p->active = isatty(STDERR_FILENO) && !getenv("PIXSUM_NO_PROGRESS") && total > 0;
    p->total = total;
    p->last_permille = -1;
    p->start = cli_now();
    p->label = label;
    cli_progress_update(p, 0);
}

void cli_progress_update(cli_progress *p, uint64_t done)
{
    if (!p->active)
        return;
    int permille = (int)(done >= p->total ? 1000 : done * 1000 / p->total);
    if (permille == p->last_permille)
        return;
    p->last_permille = permille;
    char bar[41];
    int filled = permille * 40 / 1000;
    for (int k = 0; k < 40; k++)
        bar[k] = k < filled ? '#' : '.';
    bar[40] = '\0';
    double t = cli_now() - p->start;
    fprintf(stderr, "\r%s [%s] %5.1f%% %6.1fs", p->label, bar, permille / 10.0, t);
    fflush(stderr);
}

void cli_progress_end(cli_progress *p)
{
    if (!p->active)
        return;
    cli_progress_update(p, p->total);
    fputc('\n', stderr);
    p->active = 0;
}

int cli_new_ctx(const char *cmd, const cli_common *c, pixsum_ctx **ctx)
{
    *ctx = pixsum_ctx_new();
    if (!*ctx)
        return cli_error(cmd, "out of memory");
    int rc = cli_apply_common(cmd, c, *ctx);
    if (rc != CLI_EXIT_OK) {
        pixsum_ctx_free(*ctx);
        *ctx = NULL;
    }
    return rc;
}

/*
 * cli_util.c - the shared behaviour of the `pixsum` subcommands: error
 * messages, option matching, the common flags and the progress bar.
 */
#include "cli_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void cli_common_init(cli_common *c)
{
    c->method = NULL;
    c->threads = -1;
    c->type = PIXSUM_TYPE_NONE;
    c->device = -1;
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

int cli_parse_common(const char *cmd, int argc, char **argv, int *i, cli_common *c)
{
    const char *v;
    int m;
    if ((m = cli_match(cmd, argc, argv, i, "--method", &v)) != 0) {
        if (m < 0)
            return -1;
        c->method = v;
        return 1;
    }
    if ((m = cli_match(cmd, argc, argv, i, "--threads", &v)) != 0) {
        size_t t;
        if (m < 0)
            return -1;
        if (cli_parse_size(v, &t) != 0 || t > 4096) {
            cli_usage_error(cmd, "--threads takes a count 0..4096 (0 = all cores), not '%s'", v);
            return -1;
        }
        c->threads = (int)t;
        return 1;
    }
    if ((m = cli_match(cmd, argc, argv, i, "--type", &v)) != 0) {
        if (m < 0)
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
        if (m < 0)
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

int cli_apply_common(const char *cmd, const cli_common *c, pixsum_ctx *ctx)
{
    if (c->method && strcmp(c->method, "auto") != 0) {
        int id = pixsum_method_find(c->method);
        if (id < 0) {
            size_t n;
            const pixsum_method_info *m = pixsum_methods(&n);
            fprintf(stderr, "pixsum %s: unknown method '%s'; known methods: auto", cmd,
                    c->method);
            for (size_t k = 0; k < n; k++)
                fprintf(stderr, " %s", m[k].name);
            fprintf(stderr, "\n(see 'pixsum methods')\n");
            return CLI_EXIT_USAGE;
        }
        const pixsum_method_info *info = pixsum_method_get(id);
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

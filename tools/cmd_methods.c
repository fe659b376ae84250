/*
 * cmd_methods.c - `pixsum methods`: the table of registered methods (name,
 * backend, operations, availability, description), or just their names.
 */
#include "cli_util.h"
#include "commands.h"

#include <stdio.h>
#include <string.h>

static const char *const CMD = "methods";

static const char *backend_name(pixsum_backend b)
{
    switch (b) {
    case PIXSUM_BACKEND_CPU: return "cpu";
    case PIXSUM_BACKEND_OMP: return "omp";
    case PIXSUM_BACKEND_CUDA: return "cuda";
    case PIXSUM_BACKEND_GL: return "gl";
    case PIXSUM_BACKEND_MPI: return "mpi";
    default: return "?";
    }
}

/* Writes the operation names of `ops` ("integral,sq,tilted") into buf. */
static void ops_text(unsigned ops, char *buf, size_t n)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{PIXSUM_OP_INTEGRAL, "integral"}, {PIXSUM_OP_INTEGRAL_SQ, "sq"},
                 {PIXSUM_OP_TILTED, "tilted"},     {PIXSUM_OP_INTEGRAL_3D, "3d"},
                 {PIXSUM_OP_HISTOGRAM, "hist"}, {PIXSUM_OP_CARRY, "carry"},
                 {PIXSUM_OP_BOX_FILTER, "box"}};
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (ops & names[i].bit) {
            size_t used = strlen(buf);
            snprintf(buf + used, n - used, "%s%s", used ? "," : "", names[i].name);
        }
}

/* Maps an --op name to its bit; 0 if unknown. */
static unsigned op_bit(const char *name)
{
    if (!strcmp(name, "integral")) return PIXSUM_OP_INTEGRAL;
    if (!strcmp(name, "sq")) return PIXSUM_OP_INTEGRAL_SQ;
    if (!strcmp(name, "tilted")) return PIXSUM_OP_TILTED;
    if (!strcmp(name, "3d")) return PIXSUM_OP_INTEGRAL_3D;
    if (!strcmp(name, "hist")) return PIXSUM_OP_HISTOGRAM;
    if (!strcmp(name, "carry")) return PIXSUM_OP_CARRY;
    if (!strcmp(name, "box")) return PIXSUM_OP_BOX_FILTER;
    return 0;
}

int cmd_methods(int argc, char **argv)
{
    int names_only = 0, available_only = 0;
    unsigned want = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int m;
        if (cli_is_help(argv[i])) {
            printf("usage: pixsum methods [--names] [--available] [--op OP]\n\n"
                   "Lists the registered methods: name, backend (cpu, omp, cuda, gl, mpi),\n"
                   "operations (integral, sq, tilted, 3d, hist, box), whether it can run here,\n"
                   "and what it is. Select one with --method NAME in other commands.\n\n"
                   "  --names       print only the names, one a line\n"
                   "  --available   only methods that can run in this process\n"
                   "  --op OP       only methods doing OP (integral sq tilted 3d hist carry box)\n");
            return CLI_EXIT_OK;
        }
        if (!strcmp(argv[i], "--names")) {
            names_only = 1;
        } else if (!strcmp(argv[i], "--available")) {
            available_only = 1;
        } else if ((m = cli_match(CMD, argc, argv, &i, "--op", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (!(want = op_bit(v)))
                return cli_usage_error(CMD, "unknown --op '%s' (integral sq tilted 3d hist carry box)", v);
        } else {
            return cli_usage_error(CMD, "unknown argument '%s'", argv[i]);
        }
    }
    size_t n;
    const pixsum_method_info *m = pixsum_methods(&n);
    if (!names_only)
        printf("%-22s %-7s %-26s %-9s %s\n", "name", "backend", "ops", "available",
               "description");
    for (size_t i = 0; i < n; i++) {
        if ((available_only && !m[i].available) || (want && !(m[i].ops & want)))
            continue;
        if (names_only) {
            printf("%s\n", m[i].name);
            continue;
        }
        char ops[64];
        ops_text(m[i].ops, ops, sizeof ops);
        printf("%-22s %-7s %-26s %-9s %s\n", m[i].name, backend_name(m[i].backend), ops,
               m[i].available ? "yes" : "no", m[i].description ? m[i].description : "");
    }
    return CLI_EXIT_OK;
}

/*
 * registry.c - the method registry: joins the per-backend method tables into
 * one list with stable ids (1-based, in table order), answers name lookups and
 * chooses the method that runs a job ("auto" = highest auto_rank among the
 * available methods that support it).
 */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define PSI_MAX_METHODS 128

static const psi_method *methods[PSI_MAX_METHODS + 1]; /* index = id */
static pixsum_method_info infos[PSI_MAX_METHODS];
static int method_total;
static pthread_once_t registry_once = PTHREAD_ONCE_INIT;

static void add_table(const psi_method *table)
{
    for (const psi_method *m = table; m->name; m++) {
        if (method_total >= PSI_MAX_METHODS)
            return;
        method_total++;
        methods[method_total] = m;
        pixsum_method_info *info = &infos[method_total - 1];
        info->id = method_total;
        info->name = m->name;
        info->backend = m->backend;
        info->ops = m->ops;
        info->description = m->description;
        info->available = m->available ? m->available() : 1;
    }
}

static void build_registry(void)
{
    add_table(psi_methods_serial);
    add_table(psi_methods_cpu_fast);
    add_table(psi_methods_omp);
    add_table(psi_methods_papers_cpu);
    add_table(psi_methods_hist);
    add_table(psi_methods_box);
    add_table(psi_methods_cuda);
    add_table(psi_methods_gl);
}

static void ensure_registry(void)
{
    pthread_once(&registry_once, build_registry);
}

int psi_method_count(void)
{
    ensure_registry();
    return method_total;
}

const psi_method *psi_method_by_id(int id)
{
    ensure_registry();
    return id >= 1 && id <= method_total ? methods[id] : NULL;
}

const pixsum_method_info *pixsum_methods(size_t *count)
{
    ensure_registry();
    if (count)
        *count = (size_t)method_total;
    return infos;
}

int pixsum_method_find(const char *name)
{
    if (!name)
        return -1;
    if (strcmp(name, "auto") == 0)
        return 0;
    ensure_registry();
    for (int id = 1; id <= method_total; id++)
        if (strcmp(methods[id]->name, name) == 0)
            return id;
    return -1;
}

const pixsum_method_info *pixsum_method_get(int id)
{
    ensure_registry();
    return id >= 1 && id <= method_total ? &infos[id - 1] : NULL;
}

int pixsum_method_supports(int id, pixsum_op op, pixsum_type in, pixsum_type out)
{
    const psi_method *m = psi_method_by_id(id);
    if (!m || !(m->ops & (unsigned)op))
        return 0;
    if (op == PIXSUM_OP_HISTOGRAM)
        return 1;
    if (op == PIXSUM_OP_BOX_FILTER) { /* any input and output pixsum_box_filter() takes */
        pixsum_box_filter_spec spec = {1, 1, PIXSUM_BOX_SUM, PIXSUM_BORDER_REFLECT101, 0};
        if (pixsum_box_filter_type(in, &spec) == PIXSUM_TYPE_NONE)
            return 0;
        return out == PIXSUM_TYPE_NONE || (out != PIXSUM_I16 && (unsigned)out < PIXSUM_TYPE_COUNT);
    }
    int squared = op == PIXSUM_OP_INTEGRAL_SQ;
    if (out == PIXSUM_TYPE_NONE) {
        for (int t = 1; t < PIXSUM_TYPE_COUNT; t++)
            if (psi_pair_supported(in, (pixsum_type)t, squared))
                return 1;
        return 0;
    }
    return psi_pair_supported(in, out, squared);
}

/* The op bits a job needs: a squared table of a volume (op INTEGRAL_SQ with
 * depth > 1) also needs INTEGRAL_3D, so a 2-D-only method never receives it;
 * a job with carry rows also needs CARRY. */
static unsigned job_ops(const psi_job *job)
{
    unsigned ops = (unsigned)job->op;
    if (job->op == PIXSUM_OP_INTEGRAL_SQ && job->in.depth > 1)
        ops |= PIXSUM_OP_INTEGRAL_3D;
    if (job->carry || job->carry_sq)
        ops |= PIXSUM_OP_CARRY;
    return ops;
}

static bool method_handles(const psi_method *m, const psi_job *job)
{
    unsigned need = job_ops(job);
    if ((m->ops & need) != need)
        return false;
    return !m->supports || m->supports(job);
}

static bool method_available(const psi_method *m)
{
    return !m->available || m->available();
}

int psi_choose_method(const psi_job *job, const psi_method **chosen)
{
    ensure_registry();
    int id = job->ctx->method;
    if (id != 0) {
        const psi_method *m = psi_method_by_id(id);
        if (!m)
            return psi_fail(PIXSUM_ERR_UNKNOWN_METHOD, "no method with id %d", id);
        psi_clear_error(); /* a supports() may explain its refusal in the detail */
        if (!method_handles(m, job)) {
            char why[320];
            snprintf(why, sizeof why, "%s", pixsum_last_error());
            return psi_fail(PIXSUM_ERR_UNSUPPORTED,
                            "method %s does not support this operation for %s input "
                            "(%zu channels, %zux%zux%zu)%s%s",
                            m->name, pixsum_type_name(job->in.type), job->in.channels,
                            job->in.width, job->in.height, job->in.depth, why[0] ? ": " : "",
                            why);
        }
        if (!method_available(m))
            return psi_fail(PIXSUM_ERR_UNAVAILABLE,
                            "method %s is not available on this machine or build", m->name);
        *chosen = m;
        return PIXSUM_OK;
    }
    const psi_method *best = NULL;
    for (int i = 1; i <= method_total; i++) {
        const psi_method *m = methods[i];
        if (m->auto_rank <= 0 || !method_handles(m, job) || !method_available(m))
            continue;
        if (!best || m->auto_rank > best->auto_rank)
            best = m;
    }
    if (!best)
        return psi_fail(PIXSUM_ERR_UNSUPPORTED, "no method supports this request");
    *chosen = best;
    return PIXSUM_OK;
}

/*
 * context.c - the opaque pixsum_ctx: creation, parameters, release of the
 * scratch memory backends attach to it, and the CPU core count.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const pixsum_ctx psi_default_ctx = {0};

pixsum_ctx *pixsum_ctx_new(void)
{
    pixsum_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate a context");
    return ctx;
}

void pixsum_ctx_free(pixsum_ctx *ctx)
{
    if (!ctx)
        return;
    if (ctx->cuda_release)
        ctx->cuda_release(ctx);
    free(ctx);
}

static int check_flag(intptr_t value, const char *what)
{
    if (value != 0 && value != 1)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "%s must be 0 or 1, got %jd", what,
                        (intmax_t)value);
    return PIXSUM_OK;
}

int pixsum_ctx_set(pixsum_ctx *ctx, pixsum_param param, intptr_t value)
{
    psi_clear_error();
    if (!ctx)
        return psi_fail(PIXSUM_ERR_NULL, "context is NULL");
    int st;
    switch (param) {
    case PIXSUM_PARAM_METHOD:
        if (value != 0 && (value < 0 || value > INT32_MAX || !psi_method_by_id((int)value)))
            return psi_fail(PIXSUM_ERR_UNKNOWN_METHOD, "no method with id %jd",
                            (intmax_t)value);
        ctx->method = (int)value;
        return PIXSUM_OK;
    case PIXSUM_PARAM_THREADS:
        if (value < 0 || value > 4096)
            return psi_fail(PIXSUM_ERR_INVALID_ARG, "threads must be 0..4096, got %jd",
                            (intmax_t)value);
        ctx->threads = (int)value;
        return PIXSUM_OK;
    case PIXSUM_PARAM_WRAP:
        if ((st = check_flag(value, "wrap")) != PIXSUM_OK)
            return st;
        ctx->wrap = (int)value;
        return PIXSUM_OK;
    case PIXSUM_PARAM_PADDED:
        if ((st = check_flag(value, "padded")) != PIXSUM_OK)
            return st;
        ctx->padded = (int)value;
        return PIXSUM_OK;
    case PIXSUM_PARAM_CUDA_STREAM:
        ctx->cuda_stream = value;
        return PIXSUM_OK;
    case PIXSUM_PARAM_CUDA_DEVICE:
        if (value < 0 || value > 1024)
            return psi_fail(PIXSUM_ERR_INVALID_ARG, "CUDA device must be 0..1024, got %jd",
                            (intmax_t)value);
        ctx->cuda_device = (int)value;
        return PIXSUM_OK;
    }
    return psi_fail(PIXSUM_ERR_INVALID_ARG, "unknown parameter %d", (int)param);
}

int pixsum_ctx_get(const pixsum_ctx *ctx, pixsum_param param, intptr_t *value)
{
    psi_clear_error();
    if (!ctx || !value)
        return psi_fail(PIXSUM_ERR_NULL, "context or value pointer is NULL");
    switch (param) {
    case PIXSUM_PARAM_METHOD: *value = ctx->method; return PIXSUM_OK;
    case PIXSUM_PARAM_THREADS: *value = ctx->threads; return PIXSUM_OK;
    case PIXSUM_PARAM_WRAP: *value = ctx->wrap; return PIXSUM_OK;
    case PIXSUM_PARAM_PADDED: *value = ctx->padded; return PIXSUM_OK;
    case PIXSUM_PARAM_CUDA_STREAM: *value = ctx->cuda_stream; return PIXSUM_OK;
    case PIXSUM_PARAM_CUDA_DEVICE: *value = ctx->cuda_device; return PIXSUM_OK;
    }
    return psi_fail(PIXSUM_ERR_INVALID_ARG, "unknown parameter %d", (int)param);
}

int pixsum_ctx_set_method(pixsum_ctx *ctx, const char *name)
{
    psi_clear_error();
    if (!ctx || !name)
        return psi_fail(PIXSUM_ERR_NULL, "context or method name is NULL");
    int id = pixsum_method_find(name);
    if (id < 0)
        return psi_fail(PIXSUM_ERR_UNKNOWN_METHOD,
                        "unknown method '%s' (run `pixsum methods` for the list)", name);
    ctx->method = id;
    return PIXSUM_OK;
}

int psi_cpu_count(void)
{
    static int cached; /* benign race: every thread computes the same value */
    int n = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (n == 0) {
        long v = sysconf(_SC_NPROCESSORS_ONLN);
        n = v < 1 ? 1 : (v > 4096 ? 4096 : (int)v);
        __atomic_store_n(&cached, n, __ATOMIC_RELAXED);
    }
    return n;
}

int psi_ctx_threads(const pixsum_ctx *ctx)
{
    return ctx && ctx->threads > 0 ? ctx->threads : psi_cpu_count();
}

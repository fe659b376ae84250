/*
 * batch.c - how the batched entry points (pixsum_integral_batch(),
 * pixsum_histogram_batch(), the box filter of a view of depth N,
 * pixsum_equalize_batch(), pixsum_otsu_batch()) spread their images: with several threads in the
 * context, at least as many images as threads and a CPU method, each image
 * runs on one thread (a copy of the context with one thread and no backend
 * state); otherwise the images run in turn, each with every thread. The
 * first failure is kept with the image it happened on and its detail text.
 */
#include "internal.h"

#include <stdio.h>

int psi_batch_run(pixsum_ctx *c, size_t n, psi_batch_image_fn one, void *user)
{
    int threads = psi_ctx_threads(c);
    const psi_method *m = psi_method_by_id(c->method);
    bool host_cpu = !m || m->backend == PIXSUM_BACKEND_CPU || m->backend == PIXSUM_BACKEND_OMP;
    if (threads < 2 || n < (size_t)threads || !host_cpu) {
        for (size_t z = 0; z < n; z++) {
            int st = one(c, z, user);
            if (st != PIXSUM_OK)
                return psi_fail(st, "image %zu of the batch: %s", z, pixsum_last_error());
        }
        return PIXSUM_OK;
    }
    int failed = PIXSUM_OK;
    size_t failed_at = 0;
    char detail[256] = "";
#ifdef PIXSUM_HAVE_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
#endif
    for (long long z = 0; z < (long long)n; z++) {
        if (__atomic_load_n(&failed, __ATOMIC_RELAXED) != PIXSUM_OK)
            continue;
        pixsum_ctx single = *c; /* one thread; no backend state shared */
        single.threads = 1;
        single.cuda_scratch = NULL;
        single.cuda_scratch_bytes = 0;
        single.cuda_release = NULL;
        int st = one(&single, (size_t)z, user);
        if (st != PIXSUM_OK) {
#ifdef PIXSUM_HAVE_OPENMP
#pragma omp critical(pixsum_batch_failure)
#endif
            if (failed == PIXSUM_OK) {
                failed_at = (size_t)z;
                snprintf(detail, sizeof detail, "%s", pixsum_last_error());
                __atomic_store_n(&failed, st, __ATOMIC_RELAXED);
            }
        }
    }
    if (failed != PIXSUM_OK)
        return psi_fail(failed, "image %zu of the batch: %s", failed_at, detail);
    return PIXSUM_OK;
}

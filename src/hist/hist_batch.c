/*
 * hist_batch.c - pixsum_histogram_batch(): one histogram per image of a batch
 * (a view whose depth counts the images). The whole batch is validated and
 * its bins and range resolved first (one range for every image, so the
 * histograms compare, unless each image's own data range is asked for); then
 * each image is counted by pixsum_histogram() with that resolved range, so a
 * batch equals the single-image calls bit for bit by construction. Small
 * images are shared out over the context's threads, one image per thread.
 */
#include "hist_classify.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static pixsum_view slice_of(const pixsum_view *v, size_t z)
{
    pixsum_view s;
    pixsum_view_roi3d(v, 0, 0, z, v->width, v->height, 1, &s);
    return s;
}

/* The range depends on the data: no range given for an i32, f32 or f64 image. */
static bool data_dependent(const pixsum_view *in, const pixsum_hist_spec *spec)
{
    bool given = spec && spec->lo != spec->hi;
    return !given && !psi_hist_small_type(in->type);
}

/* Image z: pixsum_histogram() with the batch's bins and range (or, with
 * per_image, the caller's spec and its own defaults) and its mask slice. */
static int count_one(pixsum_ctx *c, const pixsum_view *in, const pixsum_hist_spec *spec,
                     const psi_hist_params *resolved, bool per_image, size_t z,
                     uint64_t *counts, pixsum_hist_info *infos)
{
    pixsum_view image = slice_of(in, z), mask;
    pixsum_hist_spec one = spec ? *spec : (pixsum_hist_spec){0};
    if (!per_image) {
        one.bins = resolved->bins;
        one.lo = resolved->lo;
        one.hi = resolved->hi;
    }
    if (spec && spec->mask) {
        mask = spec->mask->depth == 1 ? *spec->mask : slice_of(spec->mask, z);
        one.mask = &mask;
    }
    size_t len = resolved->bins * in->channels;
    return pixsum_histogram(c, &image, &one, counts + z * len, len, infos ? &infos[z] : NULL);
}

int pixsum_histogram_batch(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_hist_spec *spec,
                           unsigned flags, uint64_t *counts, size_t counts_len,
                           pixsum_hist_info *infos)
{
    psi_clear_error();
    if (!in || !counts)
        return psi_fail(PIXSUM_ERR_NULL, "image or counts is NULL");
    if (flags & ~PIXSUM_HIST_RANGE_PER_IMAGE)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "unknown flags 0x%x", flags);
    /* Validation and the bins: with per-image data ranges, the batch is only
     * validated here (a placeholder range, the bin count the defaults give);
     * each image then resolves its own range. */
    bool per_image = (flags & PIXSUM_HIST_RANGE_PER_IMAGE) && data_dependent(in, spec);
    pixsum_hist_spec check = spec ? *spec : (pixsum_hist_spec){0};
    if (per_image) {
        check.bins = check.bins ? check.bins : 256;
        check.lo = 0;
        check.hi = 1;
    }
    psi_hist_params p;
    int st = psi_hist_prepare_batch(in, &check, &p);
    if (st != PIXSUM_OK)
        return st;
    size_t n = in->depth, per = p.bins * in->channels;
    if (per > SIZE_MAX / n)
        return psi_fail(PIXSUM_ERR_TOO_LARGE, "%zu images x %zu counts overflow", n, per);
    if (counts_len < n * per)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE,
                        "counts holds %zu values, %zu needed (%zu images x %zu channels x "
                        "%zu bins)", counts_len, n * per, n, in->channels, p.bins);
    uintptr_t ilo, ihi, clo = (uintptr_t)counts, chi = (uintptr_t)(counts + n * per);
    psi_view_extent(in, &ilo, &ihi);
    if (clo < ihi && ilo < chi)
        return psi_fail(PIXSUM_ERR_ALIASING, "counts overlaps the images");

    pixsum_ctx local = psi_default_ctx;
    pixsum_ctx *c = ctx ? ctx : &local;
    int threads = psi_ctx_threads(c);
    const psi_method *m = psi_method_by_id(c->method);
    bool host_cpu = !m || m->backend == PIXSUM_BACKEND_CPU || m->backend == PIXSUM_BACKEND_OMP;
    if (threads < 2 || n < (size_t)threads || !host_cpu) {
        for (size_t z = 0; z < n; z++)
            if ((st = count_one(c, in, spec, &p, per_image, z, counts, infos)) != PIXSUM_OK)
                return psi_fail(st, "image %zu of the batch: %s", z, pixsum_last_error());
        return PIXSUM_OK;
    }
    /* Images shared out over the threads, each counted on one thread; the
     * first failure (its image and detail text, which is per thread) is kept. */
    int failed = PIXSUM_OK;
    size_t failed_at = 0;
    char detail[256] = "";
#ifdef PIXSUM_HAVE_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
#endif
    for (long long z = 0; z < (long long)n; z++) {
        if (__atomic_load_n(&failed, __ATOMIC_RELAXED) != PIXSUM_OK)
            continue;
        pixsum_ctx one = *c; /* one thread; no backend state shared */
        one.threads = 1;
        one.cuda_scratch = NULL;
        one.cuda_scratch_bytes = 0;
        one.cuda_release = NULL;
        int s = count_one(&one, in, spec, &p, per_image, (size_t)z, counts, infos);
        if (s != PIXSUM_OK) {
#ifdef PIXSUM_HAVE_OPENMP
#pragma omp critical(pixsum_hist_batch_failure)
#endif
            if (failed == PIXSUM_OK) {
                failed_at = (size_t)z;
                snprintf(detail, sizeof detail, "%s", pixsum_last_error());
                __atomic_store_n(&failed, s, __ATOMIC_RELAXED);
            }
        }
    }
    if (failed != PIXSUM_OK)
        return psi_fail(failed, "image %zu of the batch: %s", failed_at, detail);
    return PIXSUM_OK;
}

/*
 * hist_batch.c - pixsum_histogram_batch(): one histogram per image of a batch
 * (a view whose depth counts the images). The whole batch is validated and
 * its bins and range resolved first (one range for every image, so the
 * histograms compare, unless each image's own data range is asked for); then
 * each image is counted by pixsum_histogram() with that resolved range, so a
 * batch equals the single-image calls bit for bit by construction. Small
 * images are shared out over the context's threads, one image per thread
 * (psi_batch_run(), as for the integral batches).
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

/* What every image of the batch shares. */
typedef struct hist_batch {
    const pixsum_view *in;
    const pixsum_hist_spec *spec;
    const psi_hist_params *resolved;
    bool per_image;
    uint64_t *counts;
    pixsum_hist_info *infos;
} hist_batch;

/* Image z: pixsum_histogram() with the batch's bins and range (or, with
 * per_image, the caller's spec and its own defaults) and its mask slice. */
static int count_one(pixsum_ctx *c, size_t z, void *user)
{
    const hist_batch *b = user;
    pixsum_view image = slice_of(b->in, z), mask;
    pixsum_hist_spec one = b->spec ? *b->spec : (pixsum_hist_spec){0};
    if (!b->per_image) {
        one.bins = b->resolved->b.bins;
        one.lo = b->resolved->b.lo;
        one.hi = b->resolved->b.hi;
    }
    if (b->spec && b->spec->mask) {
        mask = b->spec->mask->depth == 1 ? *b->spec->mask : slice_of(b->spec->mask, z);
        one.mask = &mask;
    }
    size_t len = b->resolved->b.bins * b->in->channels;
    return pixsum_histogram(c, &image, &one, b->counts + z * len, len,
                            b->infos ? &b->infos[z] : NULL);
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
    int st = psi_hist_prepare_batch_host(in, &check, &p);
    if (st != PIXSUM_OK)
        return st;
    size_t n = in->depth, per = p.b.bins * in->channels;
    if (per > SIZE_MAX / n)
        return psi_fail(PIXSUM_ERR_TOO_LARGE, "%zu images x %zu counts overflow", n, per);
    if (counts_len < n * per)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE,
                        "counts holds %zu values, %zu needed (%zu images x %zu channels x "
                        "%zu bins)", counts_len, n * per, n, in->channels, (size_t)p.b.bins);
    uintptr_t ilo, ihi, clo = (uintptr_t)counts, chi = (uintptr_t)(counts + n * per);
    psi_view_extent(in, &ilo, &ihi);
    if (clo < ihi && ilo < chi)
        return psi_fail(PIXSUM_ERR_ALIASING, "counts overlaps the images");

    pixsum_ctx local = psi_default_ctx;
    hist_batch b = {in, spec, &p, per_image, counts, infos};
    return psi_batch_run(ctx ? ctx : &local, n, count_one, &b);
}

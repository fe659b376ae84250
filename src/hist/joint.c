/*
 * joint.c - joint (2-D) histograms of two images of the same shape and the
 * information measures computed from them (entropies, mutual information,
 * normalised mutual information), the registration use paper 002 names.
 */
#include "hist_classify.h"

#include <stdlib.h>
#include <string.h>

int pixsum_histogram_joint(pixsum_ctx *ctx, const pixsum_view *a, const pixsum_view *b,
                           const pixsum_hist_spec *spec_a, const pixsum_hist_spec *spec_b,
                           uint64_t *counts, size_t counts_len, pixsum_joint_info *info)
{
    (void)ctx;
    psi_clear_error();
    if (!a || !b || !counts)
        return psi_fail(PIXSUM_ERR_NULL, "image a, image b or counts is NULL");
    psi_hist_params pa, pb;
    int st = psi_hist_prepare(a, spec_a, 256, &pa);
    if (st != PIXSUM_OK)
        return psi_fail(st, "image a: %s", pixsum_last_error());
    if ((st = psi_hist_prepare(b, spec_b, 256, &pb)) != PIXSUM_OK)
        return psi_fail(st, "image b: %s", pixsum_last_error());
    if (a->channels != 1 || b->channels != 1)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE,
                        "joint histograms take 1-channel images, got %zu and %zu channels",
                        a->channels, b->channels);
    if (a->width != b->width || a->height != b->height || a->depth != b->depth)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "image a is %zux%zux%zu, image b %zux%zux%zu",
                        a->width, a->height, a->depth, b->width, b->height, b->depth);
    if (pa.bins > PIXSUM_HIST_JOINT_MAX_CELLS / pb.bins)
        return psi_fail(PIXSUM_ERR_TOO_LARGE,
                        "a %zu x %zu joint histogram has more than 2^26 cells", pa.bins,
                        pb.bins);
    size_t cells = pa.bins * pb.bins;
    if (counts_len < cells)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "counts holds %zu values, %zu needed (%zu x %zu)",
                        counts_len, cells, pa.bins, pb.bins);
    uintptr_t lo, hi, clo = (uintptr_t)counts, chi = (uintptr_t)(counts + cells);
    psi_view_extent(a, &lo, &hi);
    if (clo < hi && lo < chi)
        return psi_fail(PIXSUM_ERR_ALIASING, "counts overlaps image a");
    psi_view_extent(b, &lo, &hi);
    if (clo < hi && lo < chi)
        return psi_fail(PIXSUM_ERR_ALIASING, "counts overlaps image b");

    psi_classifier ka, kb;
    uint64_t *table = calloc(cells, sizeof *table);
    uint32_t *ia = malloc(a->width * sizeof *ia), *ib = malloc(a->width * sizeof *ib);
    st = table && ia && ib ? PIXSUM_OK
                           : psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate the joint table");
    if (st == PIXSUM_OK && (st = psi_classifier_init(&ka, a->type, &pa)) == PIXSUM_OK) {
        if ((st = psi_classifier_init(&kb, b->type, &pb)) != PIXSUM_OK)
            psi_classifier_free(&ka);
    }
    if (st != PIXSUM_OK) {
        free(table);
        free(ia);
        free(ib);
        return st;
    }
    uint64_t pairs = 0, excluded = 0;
    size_t rows = a->height * a->depth;
    for (size_t r = 0; r < rows; r++) {
        psi_classify_row(&ka, psi_hist_row(a, r), a->width, ia);
        psi_classify_row(&kb, psi_hist_row(b, r), b->width, ib);
        const uint8_t *ma = pa.mask.data ? psi_hist_row(&pa.mask, r) : NULL;
        const uint8_t *mb = pb.mask.data ? psi_hist_row(&pb.mask, r) : NULL;
        for (size_t x = 0; x < a->width; x++) {
            if ((ma && !ma[x]) || (mb && !mb[x]))
                continue;
            if (ia[x] < pa.bins && ib[x] < pb.bins) {
                table[(size_t)ia[x] * pb.bins + ib[x]]++;
                pairs++;
            } else {
                excluded++;
            }
        }
    }
    psi_classifier_free(&ka);
    psi_classifier_free(&kb);
    free(ia);
    free(ib);
    memcpy(counts, table, cells * sizeof *counts);
    free(table);
    if (info) {
        info->bins_a = pa.bins;
        info->bins_b = pb.bins;
        info->lo_a = pa.lo;
        info->hi_a = pa.hi;
        info->lo_b = pb.lo;
        info->hi_b = pb.hi;
        info->pairs = pairs;
        info->excluded = excluded;
    }
    return PIXSUM_OK;
}

/* -sum p log p of n counts over `total`, skipping empty cells. */
static double entropy_of(const uint64_t *k, size_t n, size_t step, double total)
{
    double h = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t c = k[i * step];
        if (c) {
            double pr = (double)c / total;
            h -= pr * log(pr);
        }
    }
    return h;
}

int pixsum_joint_stats_compute(const uint64_t *counts, size_t bins_a, size_t bins_b,
                               pixsum_joint_stats *stats)
{
    psi_clear_error();
    if (!counts || !stats)
        return psi_fail(PIXSUM_ERR_NULL, "counts or stats is NULL");
    if (bins_a == 0 || bins_b == 0)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "a %zu x %zu table has no cells", bins_a,
                        bins_b);
    memset(stats, 0, sizeof *stats);
    uint64_t *rows = calloc(bins_a, sizeof *rows), *cols = calloc(bins_b, sizeof *cols);
    if (!rows || !cols) {
        free(rows);
        free(cols);
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate marginals");
    }
    uint64_t total = 0;
    for (size_t i = 0; i < bins_a; i++)
        for (size_t j = 0; j < bins_b; j++) {
            uint64_t c = counts[i * bins_b + j];
            rows[i] += c;
            cols[j] += c;
            total += c;
        }
    if (total) {
        double t = (double)total;
        stats->entropy_a = entropy_of(rows, bins_a, 1, t);
        stats->entropy_b = entropy_of(cols, bins_b, 1, t);
        stats->joint_entropy = entropy_of(counts, bins_a * bins_b, 1, t);
        double mi = stats->entropy_a + stats->entropy_b - stats->joint_entropy;
        stats->mutual_information = mi > 0 ? mi : 0; /* rounding can dip below 0 */
        stats->normalized_mi = stats->joint_entropy > 0
                                   ? (stats->entropy_a + stats->entropy_b) / stats->joint_entropy
                                   : 2.0;
    }
    free(rows);
    free(cols);
    return PIXSUM_OK;
}

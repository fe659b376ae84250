/*
 * mpi_hist.c - distributed histograms (pixsum_mpi_histogram).
 *
 * Each rank counts its strip with pixsum_histogram(); the u64 counts and the
 * below/above/NaN/pixel tallies travel in one buffer through an integer sum
 * reduction (MPI_UINT64_T, MPI_SUM), which is exact and independent of the
 * reduction order. The bins must be the same on every rank: a data-range
 * default (i32, f32, f64 without a range) is therefore resolved over the whole
 * image first, by reducing each strip's smallest and largest finite selected
 * sample and letting pixsum_hist_resolve() apply its own rule to a two-pixel
 * image holding those two values, so the range is exactly the one a single
 * process would choose for the whole image.
 */
#include "mpi_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Number of u64 tallies appended to the counts: pixels, in_range[4],
 * below[4], above[4], nan[4]. */
#define TALLIES 17

static int64_t double_bits(double v)
{
    int64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/* True when the default range of this type depends on the data. */
static bool range_from_data(pixsum_type type, const pixsum_hist_spec *spec)
{
    bool default_range = !spec || spec->lo == spec->hi;
    return default_range &&
           (type == PIXSUM_I32 || type == PIXSUM_U32 || type == PIXSUM_F32 ||
            type == PIXSUM_F64);
}

/* Smallest and largest finite sample of the strip among the pixels the mask
 * selects (all channels). Returns false if there is none. */
static bool finite_extremes(const pixsum_view *in, const pixsum_view *mask, double *lo,
                            double *hi)
{
    bool any = false;
    double mn = 0, mx = 0;
    size_t c = in->channels;
    for (size_t y = 0; y < in->height; y++) {
        const void *row = psi_row(in, y, 0);
        const uint8_t *m = mask ? psi_row(mask, y, 0) : NULL;
        for (size_t x = 0; x < in->width; x++) {
            if (m && !m[x])
                continue;
            for (size_t k = 0; k < c; k++) {
                double v = psi_load_f64(in->type, row, x * c + k);
                if (!isfinite(v))
                    continue;
                if (!any || v < mn)
                    mn = v;
                if (!any || v > mx)
                    mx = v;
                any = true;
            }
        }
    }
    *lo = mn;
    *hi = mx;
    return any;
}

/* Resolves the bins and range for the whole image: from the spec alone (fixed
 * defaults or a given range), or from the global finite extremes `lo`, `hi`
 * (`any` false: no finite sample anywhere) through pixsum_hist_resolve() on a
 * two-pixel image of the input type. Same inputs on every rank, same result. */
static int resolve_global(pixsum_type type, const pixsum_hist_spec *spec, bool any, double lo,
                          double hi, pixsum_hist_info *info)
{
    union {
        int32_t i32[2];
        uint32_t u32[2];
        float f32[2];
        double f64[2];
        uint64_t raw[2];
    } px = {{0}};
    if (type == PIXSUM_I32) {
        px.i32[0] = (int32_t)lo;
        px.i32[1] = (int32_t)hi;
    } else if (type == PIXSUM_U32) {
        px.u32[0] = (uint32_t)lo;
        px.u32[1] = (uint32_t)hi;
    } else if (type == PIXSUM_F32) {
        px.f32[0] = (float)lo; /* exact: they were f32 samples */
        px.f32[1] = (float)hi;
    } else if (type == PIXSUM_F64) {
        px.f64[0] = lo;
        px.f64[1] = hi;
    }
    uint8_t select[2] = {any ? 1 : 0, any ? 1 : 0};
    pixsum_view tiny = pixsum_view_2d(&px, type, 2, 1, 1, 0);
    pixsum_view tiny_mask = pixsum_view_2d(select, PIXSUM_U8, 2, 1, 1, 0);
    pixsum_hist_spec s;
    memset(&s, 0, sizeof s);
    if (spec) {
        s.bins = spec->bins;
        s.lo = spec->lo;
        s.hi = spec->hi;
    }
    s.mask = &tiny_mask;
    return pixsum_hist_resolve(&tiny, &s, info);
}

static int check_local(const pixsum_view *in, const pixsum_hist_spec *spec, int root,
                       int size)
{
    if (!in)
        return psi_fail(PIXSUM_ERR_NULL, "input view is NULL");
    int st = in->height == 0 ? psm_check_empty_view(in, "input") : pixsum_view_check(in);
    if (st != PIXSUM_OK)
        return in->height == 0 ? st : psi_fail(st, "input: %s", pixsum_last_error());
    if (in->depth != 1)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "input: depth %zu; strips are 2-D (depth 1)",
                        in->depth);
    if (root != PIXSUM_MPI_ALL && (root < 0 || root >= size))
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "root %d of %d ranks", root, size);
    const pixsum_view *m = spec ? spec->mask : NULL;
    if (m) {
        if (m->type != PIXSUM_U8 || m->channels != 1)
            return psi_fail(PIXSUM_ERR_BAD_TYPE, "the mask must be u8 with 1 channel");
        if (m->width != in->width || m->height != in->height || m->depth != 1)
            return psi_fail(PIXSUM_ERR_BAD_SHAPE,
                            "the mask strip is %zux%zu, the image strip %zux%zu", m->width,
                            m->height, in->width, in->height);
        if (m->height > 0 && (st = pixsum_view_check(m)) != PIXSUM_OK)
            return psi_fail(st, "mask: %s", pixsum_last_error());
    }
    return PIXSUM_OK;
}

int pixsum_mpi_histogram(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_hist_spec *spec,
                         uint64_t *counts, size_t counts_len, pixsum_hist_info *info, int root,
                         MPI_Comm comm)
{
    psi_clear_error();
    int rank, size, st = psm_rank_size(comm, &rank, &size);
    if (st != PIXSUM_OK)
        return st;
    int local = check_local(in, spec, root, size);
    bool ok = local == PIXSUM_OK;
    psm_desc desc[] = {
        {"the width", ok ? (int64_t)in->width : 0},
        {"the channel count", ok ? (int64_t)in->channels : 0},
        {"the input type", ok ? (int64_t)in->type : 0},
        {"the bin count", ok && spec ? (int64_t)spec->bins : 0},
        {"the range start (bits)", ok && spec ? double_bits(spec->lo) : 0},
        {"the range end (bits)", ok && spec ? double_bits(spec->hi) : 0},
        {"the use of a mask", ok && spec && spec->mask ? 1 : 0},
        {"the root", root},
    };
    if ((st = psm_agree(comm, local, desc, (int)(sizeof desc / sizeof desc[0]))) != PIXSUM_OK)
        return st;
    size_t first_row, total_rows;
    if ((st = pixsum_mpi_row_offset(in->height, &first_row, &total_rows, comm)) != PIXSUM_OK)
        return st;
    if (total_rows == 0)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "no rank holds any row of the image");

    /* Bins and range of the whole image. */
    const pixsum_view *mask = spec ? spec->mask : NULL;
    bool any = false;
    double lo = 0, hi = 0;
    if (range_from_data(in->type, spec)) {
        double mine[3] = {0, 0, 0}, all[3];
        if (in->height > 0 && finite_extremes(in, mask, &lo, &hi)) {
            mine[0] = -lo;
            mine[1] = hi;
            mine[2] = 1;
        } else {
            mine[0] = mine[1] = -HUGE_VAL;
        }
        int rc = MPI_Allreduce(mine, all, 3, MPI_DOUBLE, MPI_MAX, comm);
        if (rc != MPI_SUCCESS)
            return psm_mpi_fail(rc, "MPI_Allreduce");
        any = all[2] > 0;
        lo = any ? -all[0] : 0.0;
        hi = any ? all[1] : 0.0;
    }
    pixsum_hist_info resolved;
    memset(&resolved, 0, sizeof resolved);
    if ((st = resolve_global(in->type, spec, any, lo, hi, &resolved)) != PIXSUM_OK)
        return st; /* same verdict on every rank */
    size_t bins = resolved.bins, nc = bins * in->channels;

    /* Local counts, then one agreement on the outcome and on the receivers'
     * buffers. */
    bool receiver = root == PIXSUM_MPI_ALL || root == rank;
    if (receiver && !counts)
        local = psi_fail(PIXSUM_ERR_NULL, "counts is NULL");
    else if (receiver && counts_len < nc)
        local = psi_fail(PIXSUM_ERR_BAD_SHAPE, "counts holds %zu elements, %zu needed",
                         counts_len, nc);
    uint64_t *buf = NULL;
    if (local == PIXSUM_OK) {
        buf = calloc(nc + TALLIES, sizeof *buf);
        if (!buf)
            local = psi_fail(PIXSUM_ERR_NO_MEMORY, "%zu bytes for the local counts",
                             (nc + TALLIES) * sizeof *buf);
    }
    if (local == PIXSUM_OK && in->height > 0) {
        pixsum_hist_spec s;
        memset(&s, 0, sizeof s);
        s.bins = bins;
        s.lo = resolved.lo;
        s.hi = resolved.hi;
        s.mask = mask;
        pixsum_hist_info li;
        local = pixsum_histogram(ctx, in, &s, buf, nc, &li);
        if (local == PIXSUM_OK) {
            uint64_t *t = buf + nc;
            t[0] = li.pixels;
            for (int c = 0; c < 4; c++) {
                t[1 + c] = li.in_range[c];
                t[5 + c] = li.below[c];
                t[9 + c] = li.above[c];
                t[13 + c] = li.nan[c];
            }
        }
    }
    if ((st = psm_agree(comm, local, NULL, 0)) != PIXSUM_OK) {
        free(buf);
        return st;
    }
    int rc, count = (int)(nc + TALLIES);
    if (root == PIXSUM_MPI_ALL)
        rc = MPI_Allreduce(MPI_IN_PLACE, buf, count, MPI_UINT64_T, MPI_SUM, comm);
    else
        rc = MPI_Reduce(rank == root ? MPI_IN_PLACE : buf, buf, count, MPI_UINT64_T, MPI_SUM,
                        root, comm);
    if (rc != MPI_SUCCESS) {
        free(buf);
        return psm_mpi_fail(rc, root == PIXSUM_MPI_ALL ? "MPI_Allreduce" : "MPI_Reduce");
    }
    if (info) {
        *info = resolved;
        info->channels = in->channels;
        if (receiver) {
            const uint64_t *t = buf + nc;
            info->pixels = t[0];
            for (int c = 0; c < 4; c++) {
                info->in_range[c] = t[1 + c];
                info->below[c] = t[5 + c];
                info->above[c] = t[9 + c];
                info->nan[c] = t[13 + c];
            }
        }
    }
    if (receiver)
        memcpy(counts, buf, nc * sizeof *buf);
    free(buf);
    return PIXSUM_OK;
}

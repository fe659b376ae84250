/*
 * apply.c - applications built on histograms: histogram equalisation of 8-
 * and 16-bit images (per channel, exact integer mapping over any number of
 * bins; the tables applied with VPERMI2B for one u8 channel on AVX-512 VBMI,
 * rows split over threads), equalisation to floats (scikit-image's
 * equalize_hist: the normalised cumulative histogram interpolated at the bin
 * centres), and Otsu's threshold (pixsum's upper-edge convention and
 * scikit-image's bin centre; constant images give their value). Batches
 * (a view of depth N as N images): pixsum_equalize_batch() and
 * pixsum_otsu_batch() (on pixsum_histogram_batch()'s counts), images shared
 * out over the threads by psi_batch_run().
 */
#include "hist_classify.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The output of an equalisation has the input's shape, and is either the input
 * itself (in place: the same memory, strides and type) or memory apart from it.
 * Returns PIXSUM_OK, PIXSUM_ERR_BAD_SHAPE or PIXSUM_ERR_ALIASING. */
static int check_shape_and_overlap(const pixsum_view *in, const pixsum_view *out)
{
    if (out->width != in->width || out->height != in->height || out->depth != in->depth ||
        out->channels != in->channels)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "the output is %zux%zux%zu x%zu, the input "
                        "%zux%zux%zu x%zu", out->width, out->height, out->depth, out->channels,
                        in->width, in->height, in->depth, in->channels);
    bool same = out->type == in->type && out->data == in->data &&
                out->row_stride == in->row_stride &&
                (in->depth == 1 || out->slice_stride == in->slice_stride);
    if (!same) {
        uintptr_t alo, ahi, blo, bhi;
        psi_view_extent(in, &alo, &ahi);
        psi_view_extent(out, &blo, &bhi);
        if (alo < bhi && blo < ahi)
            return psi_fail(PIXSUM_ERR_ALIASING,
                            "the output overlaps the input without being the same view");
    }
    return PIXSUM_OK;
}

int psi_equalize_check(const pixsum_view *in, const pixsum_view *out)
{
    if (!in || !out)
        return psi_fail(PIXSUM_ERR_NULL, "input or output view is NULL");
    int st = pixsum_view_check(in);
    if (st != PIXSUM_OK)
        return psi_fail(st, "input: %s", pixsum_last_error());
    if (in->type != PIXSUM_U8 && in->type != PIXSUM_U16)
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "equalisation takes u8 or u16 images, got %s",
                        pixsum_type_name(in->type));
    st = pixsum_view_check(out);
    if (st != PIXSUM_OK)
        return psi_fail(st, "output: %s", pixsum_last_error());
    if (out->type != in->type)
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "the output is %s, the input %s",
                        pixsum_type_name(out->type), pixsum_type_name(in->type));
    return check_shape_and_overlap(in, out);
}

/* out = the channel tables applied to rows [r0, r1) of in (u8: tables of
 * 256 bytes per channel in lut8; u16: 65536 u16 per channel in lut16). One
 * u8 channel on AVX-512 VBMI: 64 pixels per two VPERMI2B. */
static void map_rows(const pixsum_view *in, const pixsum_view *out, const uint8_t *lut8,
                     const uint16_t *lut16, size_t r0, size_t r1, bool simd)
{
    const size_t ch = in->channels, n = in->width * ch;
    for (size_t r = r0; r < r1; r++) {
        if (in->type == PIXSUM_U8) {
            const uint8_t *s = psi_hist_row(in, r);
            uint8_t *d = (uint8_t *)psi_hist_row(out, r);
            if (ch == 1 && simd) {
                psi_hist_map_u8_avx512(s, d, n, lut8);
            } else if (ch == 1) {
                for (size_t i = 0; i < n; i++)
                    d[i] = lut8[s[i]];
            } else {
                for (size_t i = 0; i < n; i += ch)
                    for (size_t c = 0; c < ch; c++)
                        d[i + c] = lut8[c * 256 + s[i + c]];
            }
        } else {
            const uint16_t *s = psi_hist_row(in, r);
            uint16_t *d = (uint16_t *)psi_hist_row(out, r);
            if (ch == 1) {
                for (size_t i = 0; i < n; i++)
                    d[i] = lut16[s[i]];
            } else {
                for (size_t i = 0; i < n; i += ch)
                    for (size_t c = 0; c < ch; c++)
                        d[i + c] = lut16[(c << 16) + s[i + c]];
            }
        }
    }
}

/* Applies the tables (channels x levels) to every pixel, rows split over the
 * context's threads (OpenMP builds; at least 256 KiB of samples per thread). */
static void map_image(const pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                      const uint16_t *lut, size_t levels)
{
    const size_t ch = in->channels, rows = in->height * in->depth;
    uint8_t lut8[4 * 256];
    const uint16_t *lut16 = levels == 256 ? NULL : lut;
    if (levels == 256)
        for (size_t i = 0; i < ch * 256; i++)
            lut8[i] = (uint8_t)lut[i];
    const bool simd = levels == 256 && ch == 1 && psi_hist_avx512_available();
    size_t bytes = rows * in->width * ch * (levels == 256 ? 1 : 2);
    int threads = psi_ctx_threads(ctx);
    if ((size_t)threads > bytes / (256u << 10))
        threads = (int)(bytes / (256u << 10));
    if ((size_t)threads > rows)
        threads = (int)rows;
    if (threads <= 1) {
        map_rows(in, out, lut8, lut16, 0, rows, simd);
        return;
    }
#ifdef PIXSUM_HAVE_OPENMP
#pragma omp parallel for num_threads(threads) schedule(static, 1)
#endif
    for (int t = 0; t < threads; t++)
        map_rows(in, out, lut8, lut16, rows * (size_t)t / (size_t)threads,
                 rows * (size_t)(t + 1) / (size_t)threads, simd);
}

/* Builds each channel's mapping from its counts `h` (channels x levels,
 * turned into cumulative counts in place) and maps the image. */
static void equalize_by_counts(const pixsum_ctx *ctx, const pixsum_view *in,
                               const pixsum_view *out, uint64_t *h, uint16_t *lut,
                               size_t levels)
{
    for (size_t c = 0; c < in->channels; c++) {
        uint64_t *cdf = h + c * levels;
        uint16_t *map = lut + c * levels;
        for (size_t v = 1; v < levels; v++)
            cdf[v] += cdf[v - 1];
        uint64_t n = cdf[levels - 1], cmin = 0;
        for (size_t v = 0; v < levels; v++)
            if (cdf[v]) {
                cmin = cdf[v];
                break;
            }
        if (n == cmin) { /* one value (or nothing selected): unchanged */
            for (size_t v = 0; v < levels; v++)
                map[v] = (uint16_t)v;
            continue;
        }
        unsigned __int128 d = n - cmin;
        for (size_t v = 0; v < levels; v++) {
            if (cdf[v] <= cmin) {
                map[v] = 0;
                continue;
            }
            unsigned __int128 x = (unsigned __int128)(cdf[v] - cmin) * (levels - 1);
            uint64_t q = (uint64_t)((2 * x + d) / (2 * d));
            map[v] = (uint16_t)(q > levels - 1 ? levels - 1 : q);
        }
    }
    map_image(ctx, in, out, lut, levels);
}

/* Shared body of pixsum_equalize() and pixsum_equalize_counts(): `given`
 * NULL counts the image's own histogram (with `mask`). */
static int equalize_common(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                           const pixsum_view *mask, const uint64_t *given, size_t ncounts)
{
    int st = psi_equalize_check(in, out);
    if (st != PIXSUM_OK)
        return st;
    size_t levels = in->type == PIXSUM_U8 ? 256 : 65536, ch = in->channels;
    if (given && ncounts != levels * ch)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "the counts hold %zu values; a %s image of %zu "
                        "channels needs %zu (%zu per channel)", ncounts,
                        pixsum_type_name(in->type), ch, levels * ch, levels);
    uint64_t *h = malloc(levels * ch * sizeof *h);
    uint16_t *lut = malloc(levels * ch * sizeof *lut); /* levels - 1 <= 65535 */
    if (!h || !lut) {
        free(h);
        free(lut);
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate equalisation tables");
    }
    if (given) {
        uint64_t total[4] = {0, 0, 0, 0};
        for (size_t i = 0; i < levels * ch; i++) {
            uint64_t prev = total[i / levels];
            total[i / levels] += given[i];
            if (total[i / levels] < prev) {
                free(h);
                free(lut);
                return psi_fail(PIXSUM_ERR_OVERFLOW, "the counts of channel %zu add up to "
                                "more than 2^64", i / levels);
            }
        }
        memcpy(h, given, levels * ch * sizeof *h);
    } else {
        pixsum_hist_spec spec = {0};
        spec.mask = mask;
        if ((st = pixsum_histogram(ctx, in, &spec, h, levels * ch, NULL)) != PIXSUM_OK) {
            free(h);
            free(lut);
            return st;
        }
    }
    equalize_by_counts(ctx, in, out, h, lut, levels);
    free(h);
    free(lut);
    return PIXSUM_OK;
}

int pixsum_equalize(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                    const pixsum_view *mask)
{
    psi_clear_error();
    return equalize_common(ctx, in, out, mask, NULL, 0);
}

static pixsum_view slice_of(const pixsum_view *v, size_t z)
{
    pixsum_view s;
    pixsum_view_roi3d(v, 0, 0, z, v->width, v->height, 1, &s);
    return s;
}

/* Image z of a mask given for a batch: its own slice, or the shared one. */
static pixsum_view mask_of(const pixsum_view *mask, size_t z)
{
    return mask->depth == 1 ? *mask : slice_of(mask, z);
}

/* What every image of an equalisation batch shares. */
typedef struct equalize_batch {
    const pixsum_view *in, *out, *mask;
} equalize_batch;

static int equalize_image(pixsum_ctx *c, size_t z, void *user)
{
    const equalize_batch *b = user;
    pixsum_view in = slice_of(b->in, z), out = slice_of(b->out, z), mask;
    if (b->mask)
        mask = mask_of(b->mask, z);
    return equalize_common(c, &in, &out, b->mask ? &mask : NULL, NULL, 0);
}

int pixsum_equalize_batch(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                          const pixsum_view *mask)
{
    psi_clear_error();
    int st = psi_equalize_check(in, out);
    if (st != PIXSUM_OK)
        return st;
    if (mask) { /* the mask rules of pixsum_histogram() on image 0, and its depth */
        if ((st = pixsum_view_check(mask)) != PIXSUM_OK)
            return psi_fail(st, "mask: %s", pixsum_last_error());
        if (mask->depth != 1 && mask->depth != in->depth)
            return psi_fail(PIXSUM_ERR_BAD_SHAPE, "the mask holds %zu images; a batch of %zu "
                            "takes one mask per image or one for all (depth 1)", mask->depth,
                            in->depth);
        pixsum_view in0 = slice_of(in, 0), m0 = mask_of(mask, 0);
        pixsum_hist_spec probe = {1, 0.0, 1.0, &m0};
        pixsum_hist_info unused;
        if ((st = pixsum_hist_resolve(&in0, &probe, &unused)) != PIXSUM_OK)
            return st;
    }
    pixsum_ctx local = psi_default_ctx;
    equalize_batch b = {in, out, mask};
    st = psi_batch_run(ctx ? ctx : &local, in->depth, equalize_image, &b);
    if (st == PIXSUM_OK)
        psi_clear_error();
    return st;
}

int pixsum_equalize_counts(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                           const uint64_t *counts, size_t ncounts)
{
    psi_clear_error();
    if (!counts)
        return psi_fail(PIXSUM_ERR_NULL, "counts is NULL");
    return equalize_common(ctx, in, out, NULL, counts, ncounts);
}

/* Integer to integer with `bins` equal bins over [0, L): the counts of each
 * bin are put at the bin's first level, so that the cumulative count of every
 * level of a bin is the bin's, and equalize_by_counts()'s one formula maps
 * them (bins = L: the counts themselves). Views checked by the caller. */
static int equalize_levels(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                           const pixsum_view *mask, size_t bins)
{
    size_t levels = in->type == PIXSUM_U8 ? 256 : 65536, ch = in->channels;
    if (bins == 0 || bins == levels)
        return equalize_common(ctx, in, out, mask, NULL, 0);
    psi_bins b;
    if (psi_bins_init(&b, bins, 0.0, (double)levels) != 0)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "%zu bins over [0, %zu) are not usable", bins,
                        levels);
    uint64_t *h = malloc(bins * ch * sizeof *h);
    uint64_t *level_counts = calloc(levels * ch, sizeof *level_counts);
    if (!h || !level_counts) {
        free(h);
        free(level_counts);
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate equalisation tables");
    }
    pixsum_hist_spec spec = {bins, 0.0, (double)levels, mask};
    int st = pixsum_histogram(ctx, in, &spec, h, bins * ch, NULL);
    if (st == PIXSUM_OK) {
        size_t prev = SIZE_MAX;
        for (size_t v = 0; v < levels; v++) {
            size_t k = psi_bins_class_int(&b, (int64_t)v);
            if (k == prev)
                continue;
            prev = k; /* v is the first level of bin k */
            for (size_t c = 0; c < ch; c++)
                level_counts[c * levels + v] = h[c * bins + k];
        }
        st = equalize_common(ctx, in, out, NULL, level_counts, levels * ch);
    }
    free(h);
    free(level_counts);
    return st;
}

/* Stores v into sample i of a f32 or f64 row (rounded once). */
static void store_float(pixsum_type t, void *row, size_t i, double v)
{
    if (t == PIXSUM_F32)
        ((float *)row)[i] = (float)v;
    else
        ((double *)row)[i] = v;
}

/* Integer to float (scikit-image's equalize_hist of an integer image): v ->
 * the fraction of the selected samples <= max(v, smallest selected). */
static int equalize_int_to_float(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                                 const pixsum_view *mask, size_t bins)
{
    size_t levels = in->type == PIXSUM_U8 ? 256 : 65536, ch = in->channels;
    if (bins != 0 && bins != levels)
        return psi_fail(PIXSUM_ERR_INVALID_ARG,
                        "a %s image equalised to floats uses one bin per value: bins must be "
                        "0 or %zu, not %zu", pixsum_type_name(in->type), levels, bins);
    uint64_t *h = malloc(levels * ch * sizeof *h);
    double *f = malloc(levels * ch * sizeof *f);
    if (!h || !f) {
        free(h);
        free(f);
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate equalisation tables");
    }
    pixsum_hist_spec spec = {levels, 0.0, (double)levels, mask};
    pixsum_hist_info info;
    int st = pixsum_histogram(ctx, in, &spec, h, levels * ch, &info);
    for (size_t c = 0; st == PIXSUM_OK && c < ch; c++) {
        uint64_t *cdf = h + c * levels;
        pixsum_hist_info one = info;
        one.channels = 1;
        pixsum_hist_cumulative(&one, cdf, cdf);
        uint64_t n = cdf[levels - 1];
        if (n == 0) {
            st = psi_fail(PIXSUM_ERR_INVALID_ARG, "the mask selects no pixel to equalise by");
            break;
        }
        size_t first = 0;
        while (cdf[first] == 0)
            first++;
        for (size_t v = 0; v < levels; v++)
            f[c * levels + v] = (double)cdf[v < first ? first : v] / (double)n;
    }
    if (st == PIXSUM_OK) {
        size_t rows = in->height * in->depth, n = in->width * ch;
        for (size_t r = 0; r < rows; r++) {
            const void *s = psi_hist_row(in, r);
            void *d = (void *)psi_hist_row(out, r);
            for (size_t i = 0; i < n; i++) {
                size_t v = in->type == PIXSUM_U8 ? ((const uint8_t *)s)[i]
                                                 : ((const uint16_t *)s)[i];
                store_float(out->type, d, i, f[(i % ch) * levels + v]);
            }
        }
    }
    free(h);
    free(f);
    return st;
}

/* One channel's mapping of a float equalisation: the normalised cumulative
 * counts and the bin centres. */
typedef struct float_map {
    double *cdf, *centre;
} float_map;

/* Fills m for channel c (scikit-image's equalize_hist, see pixsum.h): the
 * range of the finite selected samples, their counts with the last bin
 * closed, the cumulative counts divided by their total, the centres. */
static int float_map_build(const pixsum_view *in, const pixsum_view *mask, size_t bins,
                           size_t c, float_map *m)
{
    const size_t ch = in->channels, rows = in->height * in->depth;
    double mn = INFINITY, mx = -INFINITY;
    for (size_t r = 0; r < rows; r++) {
        const void *s = psi_hist_row(in, r);
        const uint8_t *mk = mask ? psi_hist_row(mask, r) : NULL;
        for (size_t x = 0; x < in->width; x++) {
            double v = psi_load_f64(in->type, s, x * ch + c);
            if ((mk && !mk[x]) || !(v - v == 0))
                continue;
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
        }
    }
    if (!(mn <= mx))
        return psi_fail(PIXSUM_ERR_INVALID_ARG,
                        "channel %zu has no finite sample to equalise by", c);
    /* NumPy's edges (and scikit-image's cumulative values): in f32 for f32 data */
    const unsigned f32 = in->type == PIXSUM_F32 ? PIXSUM_HIST_F32_EDGES : 0u;
    if (mn == mx) { /* NumPy's widening of an empty range */
        mn -= 0.5;
        mx += 0.5;
    }
    double *e = malloc((bins + 1) * sizeof *e);
    uint64_t *h = calloc(bins + 3, sizeof *h);
    m->cdf = malloc(bins * sizeof *m->cdf);
    m->centre = malloc(bins * sizeof *m->centre);
    if (!e || !h || !m->cdf || !m->centre) {
        free(e);
        free(h);
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu bins", bins);
    }
    if (pixsum_hist_uniform_edges(bins, mn, mx, f32, e) != PIXSUM_OK) {
        free(e);
        free(h);
        return psi_fail(PIXSUM_ERR_INVALID_ARG,
                        "channel %zu: the range [%g, %g] cannot be split into %zu bins", c, mn,
                        mx, bins);
    }
    for (size_t r = 0; r < rows; r++) {
        const void *s = psi_hist_row(in, r);
        const uint8_t *mk = mask ? psi_hist_row(mask, r) : NULL;
        for (size_t x = 0; x < in->width; x++)
            if (!mk || mk[x])
                h[psi_edges_class(e, (uint32_t)bins, true,
                                  psi_load_f64(in->type, s, x * ch + c))]++;
    }
    uint64_t run = 0, n = 0;
    for (size_t i = 0; i < bins; i++)
        n += h[i];
    for (size_t i = 0; i < bins; i++) {
        run += h[i];
        double q = (double)run / (double)n;
        m->cdf[i] = f32 ? (double)(float)q : q;
    }
    pixsum_hist_info one = {0};
    one.bins = bins;
    one.channels = 1;
    pixsum_hist_centers(&one, e, f32, m->centre);
    free(e);
    free(h);
    return PIXSUM_OK;
}

/* The value of sample v: the cdf interpolated at v between the centres. */
static double float_map_value(const float_map *m, size_t bins, double v)
{
    const size_t last = bins - 1;
    if (v != v)
        return v;
    if (v <= m->centre[0])
        return m->cdf[0];
    if (v >= m->centre[last])
        return m->cdf[last];
    size_t lo = 0, hi = last; /* centre[lo] <= v < centre[hi], by bisection */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->centre[mid] <= v)
            lo = mid;
        else
            hi = mid;
    }
    if (v == m->centre[lo])
        return m->cdf[lo];
    double slope = (m->cdf[lo + 1] - m->cdf[lo]) / (m->centre[lo + 1] - m->centre[lo]);
    double part = slope * (v - m->centre[lo]);
    return part + m->cdf[lo];
}

/* Float to float: every channel's mapping first (a failure writes nothing),
 * then every sample. */
static int equalize_float(const pixsum_view *in, const pixsum_view *out,
                          const pixsum_view *mask, size_t bins)
{
    float_map maps[4];
    memset(maps, 0, sizeof maps);
    const size_t ch = in->channels, rows = in->height * in->depth;
    int st = PIXSUM_OK;
    for (size_t c = 0; st == PIXSUM_OK && c < ch; c++)
        st = float_map_build(in, mask, bins, c, &maps[c]);
    for (size_t r = 0; st == PIXSUM_OK && r < rows; r++) {
        const void *s = psi_hist_row(in, r);
        void *d = (void *)psi_hist_row(out, r);
        for (size_t i = 0; i < in->width * ch; i++)
            store_float(out->type, d, i,
                        float_map_value(&maps[i % ch], bins, psi_load_f64(in->type, s, i)));
    }
    for (size_t c = 0; c < ch; c++) {
        free(maps[c].cdf);
        free(maps[c].centre);
    }
    return st;
}

/* Checks in and out of pixsum_equalize_bins(): valid views of one shape,
 * the same view or not overlapping (the same view needs the same type). */
static int check_equalize_pair(const pixsum_view *in, const pixsum_view *out)
{
    if (!in || !out)
        return psi_fail(PIXSUM_ERR_NULL, "input or output view is NULL");
    int st = pixsum_view_check(in);
    if (st != PIXSUM_OK)
        return psi_fail(st, "input: %s", pixsum_last_error());
    st = pixsum_view_check(out);
    if (st != PIXSUM_OK)
        return psi_fail(st, "output: %s", pixsum_last_error());
    bool in_int = in->type == PIXSUM_U8 || in->type == PIXSUM_U16;
    bool in_float = in->type == PIXSUM_F32 || in->type == PIXSUM_F64;
    bool out_float = out->type == PIXSUM_F32 || out->type == PIXSUM_F64;
    if (!((in_int && (out->type == in->type || out_float)) || (in_float && out_float)))
        return psi_fail(PIXSUM_ERR_BAD_TYPE,
                        "equalisation writes u8 -> u8, u16 -> u16, or u8, u16, f32, f64 -> "
                        "f32 or f64, not %s -> %s", pixsum_type_name(in->type),
                        pixsum_type_name(out->type));
    return check_shape_and_overlap(in, out);
}

int pixsum_equalize_bins(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                         const pixsum_view *mask, size_t bins)
{
    psi_clear_error();
    int st = check_equalize_pair(in, out);
    if (st != PIXSUM_OK)
        return st;
    if (bins > PIXSUM_HIST_MAX_BINS)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "%zu bins requested, at most %zu", bins,
                        PIXSUM_HIST_MAX_BINS);
    if (mask) { /* the mask rules of pixsum_histogram(), without counting */
        pixsum_hist_spec probe = {1, 0.0, 1.0, mask};
        pixsum_hist_info unused;
        if ((st = pixsum_hist_resolve(in, &probe, &unused)) != PIXSUM_OK)
            return st;
    }
    if (in->type == out->type)
        if (in->type == PIXSUM_U8 || in->type == PIXSUM_U16)
            return equalize_levels(ctx, in, out, mask, bins);
    if (in->type == PIXSUM_U8 || in->type == PIXSUM_U16)
        return equalize_int_to_float(ctx, in, out, mask, bins);
    return equalize_float(in, out, mask, bins ? bins : 256);
}

int pixsum_otsu(const uint64_t *counts, size_t bins, size_t *t)
{
    psi_clear_error();
    if (!counts || !t)
        return psi_fail(PIXSUM_ERR_NULL, "counts or t is NULL");
    *t = 0;
    if (bins < 2)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "Otsu needs at least 2 bins, got %zu", bins);
    double total = 0, sum_all = 0;
    size_t nonempty = 0;
    for (size_t i = 0; i < bins; i++) {
        total += (double)counts[i];
        sum_all += (double)i * (double)counts[i];
        nonempty += counts[i] != 0;
    }
    if (nonempty < 2)
        return psi_fail(PIXSUM_ERR_INVALID_ARG,
                        "Otsu needs two non-empty bins, the histogram has %zu", nonempty);
    double w0 = 0, sum0 = 0, best = -1;
    size_t best_t = 0;
    for (size_t i = 0; i + 1 < bins; i++) {
        w0 += (double)counts[i];
        sum0 += (double)i * (double)counts[i];
        double w1 = total - w0;
        if (w0 == 0 || w1 == 0)
            continue;
        double diff = sum0 / w0 - (sum_all - sum0) / w1;
        double between = w0 * w1 * diff * diff;
        if (between > best) {
            best = between;
            best_t = i;
        }
    }
    *t = best_t;
    return PIXSUM_OK;
}

/* True when every selected sample of channel 0 is one finite value (*v). */
static bool constant_channel0(const pixsum_view *in, const pixsum_view *mask, double *v)
{
    const size_t rows = in->height * in->depth, ch = in->channels;
    bool seen = false;
    double first = 0;
    for (size_t r = 0; r < rows; r++) {
        const void *s = psi_hist_row(in, r);
        const uint8_t *m = mask ? psi_hist_row(mask, r) : NULL;
        for (size_t x = 0; x < in->width; x++) {
            if (m && !m[x])
                continue;
            double x0 = psi_load_f64(in->type, s, x * ch);
            if (!(x0 - x0 == 0) || (seen && x0 != first))
                return false;
            first = x0;
            seen = true;
        }
    }
    *v = first;
    return seen;
}

/* Otsu's result for image `in` from its counts h (channel 0's first),
 * counted over `edges` (info's bins and range): a constant channel 0 gives
 * its value, else the search of pixsum_otsu(). Returns PIXSUM_OK or
 * pixsum_otsu()'s PIXSUM_ERR_INVALID_ARG; *res is written on success only. */
static int otsu_of_counts(const pixsum_view *in, const pixsum_view *mask, const uint64_t *h,
                          const pixsum_hist_info *info, const double *edges, unsigned f32,
                          pixsum_otsu_result *res)
{
    const size_t bins = info->bins;
    size_t nonempty = 0, t = 0;
    for (size_t i = 0; i < bins; i++)
        nonempty += h[i] != 0;
    double v;
    int st;
    if (nonempty < 2 && constant_channel0(in, mask, &v)) {
        memset(res, 0, sizeof *res);
        res->threshold = res->center = res->lower = v;
        res->bin = SIZE_MAX;
        for (size_t i = 0; i < bins; i++)
            if (h[i])
                res->bin = i;
        res->constant = 1;
        res->info = *info;
    } else if ((st = pixsum_otsu(h, bins, &t)) == PIXSUM_OK) {
        memset(res, 0, sizeof *res);
        res->bin = t;
        res->lower = edges[t];
        res->threshold = edges[t + 1];
        pixsum_hist_info one = *info; /* bin t alone: its two edges */
        one.bins = 1;
        one.channels = 1;
        pixsum_hist_centers(&one, edges + t, f32, &res->center);
        res->info = *info;
    } else {
        return st;
    }
    return PIXSUM_OK;
}

int pixsum_otsu_image(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_hist_spec *spec,
                      unsigned flags, pixsum_otsu_result *res)
{
    psi_clear_error();
    if (!in || !res)
        return psi_fail(PIXSUM_ERR_NULL, "image or result is NULL");
    if (flags & ~(PIXSUM_HIST_CLOSED_LAST | PIXSUM_HIST_F32_EDGES))
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "unknown flags 0x%x", flags);
    const unsigned f32 = in->type == PIXSUM_F32 ? (flags & PIXSUM_HIST_F32_EDGES) : 0u;
    pixsum_hist_info info;
    int st = pixsum_hist_resolve(in, spec, &info);
    if (st != PIXSUM_OK)
        return st;
    const size_t bins = info.bins, n = bins * info.channels;
    uint64_t *h = malloc(n * sizeof *h);
    double *edges = malloc((bins + 1) * sizeof *edges);
    if (!h || !edges) {
        free(h);
        free(edges);
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu counts", n);
    }
    if ((st = pixsum_hist_uniform_edges(bins, info.lo, info.hi, f32, edges)) !=
        PIXSUM_OK) {
        free(h);
        free(edges);
        return st;
    }
    if ((flags & PIXSUM_HIST_CLOSED_LAST) || f32) {
        pixsum_hist_edges_spec es = {edges, bins + 1, flags & PIXSUM_HIST_CLOSED_LAST,
                                     spec ? spec->mask : NULL, NULL};
        st = pixsum_histogram_edges(ctx, in, &es, h, n, &info);
    } else {
        /* Pin the resolved range so the data-range default is not read twice. */
        pixsum_hist_spec s = {0};
        if (spec)
            s = *spec;
        s.bins = bins;
        s.lo = info.lo;
        s.hi = info.hi;
        st = pixsum_histogram(ctx, in, &s, h, n, &info);
    }
    if (st == PIXSUM_OK)
        st = otsu_of_counts(in, spec ? spec->mask : NULL, h, &info, edges, f32, res);
    free(h);
    free(edges);
    return st;
}

int pixsum_otsu_threshold(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_hist_spec *spec,
                          double *threshold, size_t *bin)
{
    psi_clear_error();
    if (!in || !threshold)
        return psi_fail(PIXSUM_ERR_NULL, "image or threshold is NULL");
    pixsum_otsu_result res;
    int st = pixsum_otsu_image(ctx, in, spec, 0, &res);
    if (st != PIXSUM_OK)
        return st;
    *threshold = res.threshold;
    if (bin)
        *bin = res.bin;
    return PIXSUM_OK;
}

/* What every image of an Otsu batch shares: the batch's counts and infos
 * (pixsum_histogram_batch()), the caller's spec and flags. */
typedef struct otsu_batch {
    const pixsum_view *in;
    const pixsum_hist_spec *spec;
    unsigned flags;
    const uint64_t *counts;
    const pixsum_hist_info *infos;
    pixsum_otsu_result *results;
} otsu_batch;

/* Image z from the batch's counts (no flag changes the counting). */
static int otsu_counted_image(pixsum_ctx *c, size_t z, void *user)
{
    (void)c;
    const otsu_batch *b = user;
    const pixsum_hist_info *info = &b->infos[z];
    pixsum_view image = slice_of(b->in, z), mask;
    const pixsum_view *m = b->spec ? b->spec->mask : NULL;
    if (m) {
        mask = mask_of(m, z);
        m = &mask;
    }
    double *edges = malloc((info->bins + 1) * sizeof *edges);
    if (!edges)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu edges", info->bins + 1);
    int st = pixsum_hist_uniform_edges(info->bins, info->lo, info->hi, 0, edges);
    if (st == PIXSUM_OK)
        st = otsu_of_counts(&image, m, b->counts + z * info->bins * info->channels, info,
                            edges, 0, &b->results[z]);
    free(edges);
    return st;
}

/* Image z with the closed last bin or f32 edges: pixsum_otsu_image() with
 * the bins and range the batch resolved for it. */
static int otsu_edges_image(pixsum_ctx *c, size_t z, void *user)
{
    const otsu_batch *b = user;
    pixsum_view image = slice_of(b->in, z), mask;
    pixsum_hist_spec one = b->spec ? *b->spec : (pixsum_hist_spec){0};
    one.bins = b->infos[z].bins;
    one.lo = b->infos[z].lo;
    one.hi = b->infos[z].hi;
    if (one.mask) {
        mask = mask_of(one.mask, z);
        one.mask = &mask;
    }
    return pixsum_otsu_image(c, &image, &one, b->flags, &b->results[z]);
}

int pixsum_otsu_batch(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_hist_spec *spec,
                      unsigned flags, pixsum_otsu_result *results, size_t n_results)
{
    psi_clear_error();
    if (!in || !results)
        return psi_fail(PIXSUM_ERR_NULL, "image or results is NULL");
    const unsigned known = PIXSUM_HIST_CLOSED_LAST | PIXSUM_HIST_F32_EDGES |
                           PIXSUM_HIST_RANGE_PER_IMAGE;
    if (flags & ~known)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "unknown flags 0x%x", flags);
    int st = pixsum_view_check(in);
    if (st != PIXSUM_OK)
        return psi_fail(st, "input: %s", pixsum_last_error());
    const size_t n = in->depth;
    if (n_results < n)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "results holds %zu values, the batch has %zu "
                        "images", n_results, n);
    /* The bin count: the batch's spec on image 0, with a placeholder range
     * where the range would come from the data (the bin count never does). */
    pixsum_hist_spec probe = spec ? *spec : (pixsum_hist_spec){0};
    pixsum_view in0 = slice_of(in, 0), m0;
    if (probe.mask) {
        if ((st = pixsum_view_check(probe.mask)) != PIXSUM_OK)
            return psi_fail(st, "mask: %s", pixsum_last_error());
        if (probe.mask->depth != 1 && probe.mask->depth != n)
            return psi_fail(PIXSUM_ERR_BAD_SHAPE, "the mask holds %zu images; a batch of %zu "
                            "takes one mask per image or one for all (depth 1)",
                            probe.mask->depth, n);
        m0 = mask_of(probe.mask, 0);
        probe.mask = &m0;
    }
    if (probe.lo == probe.hi && !psi_hist_small_type(in->type)) {
        probe.lo = 0;
        probe.hi = 1;
    }
    pixsum_hist_info info0;
    if ((st = pixsum_hist_resolve(&in0, &probe, &info0)) != PIXSUM_OK)
        return st;
    const size_t per = info0.bins * in->channels;
    if (per > SIZE_MAX / sizeof(uint64_t) / n)
        return psi_fail(PIXSUM_ERR_TOO_LARGE, "%zu images x %zu counts overflow", n, per);
    uint64_t *counts = malloc(n * per * sizeof *counts);
    pixsum_hist_info *infos = malloc(n * sizeof *infos);
    if (!counts || !infos) {
        free(counts);
        free(infos);
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu histograms", n);
    }
    pixsum_ctx local = psi_default_ctx;
    pixsum_ctx *c = ctx ? ctx : &local;
    st = pixsum_histogram_batch(c, in, spec,
                                flags & PIXSUM_HIST_RANGE_PER_IMAGE
                                    ? PIXSUM_HIST_RANGE_PER_IMAGE : 0u,
                                counts, n * per, infos);
    if (st == PIXSUM_OK) {
        const unsigned f32 = in->type == PIXSUM_F32 ? (flags & PIXSUM_HIST_F32_EDGES) : 0u;
        otsu_batch b = {in, spec, flags & ~PIXSUM_HIST_RANGE_PER_IMAGE, counts, infos,
                        results};
        bool edges = (flags & PIXSUM_HIST_CLOSED_LAST) || f32;
        st = psi_batch_run(c, n, edges ? otsu_edges_image : otsu_counted_image, &b);
    }
    free(counts);
    free(infos);
    if (st == PIXSUM_OK)
        psi_clear_error();
    return st;
}

/*
 * apply.c - applications built on histograms: histogram equalisation of 8-
 * and 16-bit images (per channel, exact integer mapping; the tables applied
 * with VPERMI2B for one u8 channel on AVX-512 VBMI, rows split over threads)
 * and Otsu's threshold.
 */
#include "hist_classify.h"

#include <stdlib.h>
#include <string.h>

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
    if (out->width != in->width || out->height != in->height || out->depth != in->depth ||
        out->channels != in->channels)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "the output is %zux%zux%zu x%zu, the input "
                        "%zux%zux%zu x%zu", out->width, out->height, out->depth, out->channels,
                        in->width, in->height, in->depth, in->channels);
    bool same = out->data == in->data && out->row_stride == in->row_stride &&
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

int pixsum_equalize(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                    const pixsum_view *mask)
{
    psi_clear_error();
    int st = psi_equalize_check(in, out);
    if (st != PIXSUM_OK)
        return st;
    size_t levels = in->type == PIXSUM_U8 ? 256 : 65536, ch = in->channels;
    uint64_t *h = malloc(levels * ch * sizeof *h);
    uint16_t *lut = malloc(levels * ch * sizeof *lut); /* levels - 1 <= 65535 */
    if (!h || !lut) {
        free(h);
        free(lut);
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate equalisation tables");
    }
    pixsum_hist_spec spec = {0};
    spec.mask = mask;
    pixsum_hist_info info;
    if ((st = pixsum_histogram(ctx, in, &spec, h, levels * ch, &info)) != PIXSUM_OK) {
        free(h);
        free(lut);
        return st;
    }
    for (size_t c = 0; c < ch; c++) {
        uint64_t *cdf = h + c * levels;
        uint16_t *map = lut + c * levels;
        pixsum_hist_info one = info;
        one.channels = 1;
        pixsum_hist_cumulative(&one, cdf, cdf);
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
    free(h);
    free(lut);
    return PIXSUM_OK;
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

int pixsum_otsu_threshold(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_hist_spec *spec,
                          double *threshold, size_t *bin)
{
    psi_clear_error();
    if (!in || !threshold)
        return psi_fail(PIXSUM_ERR_NULL, "image or threshold is NULL");
    pixsum_hist_info info;
    int st = pixsum_hist_resolve(in, spec, &info);
    if (st != PIXSUM_OK)
        return st;
    size_t n = info.bins * info.channels;
    uint64_t *h = malloc(n * sizeof *h);
    if (!h)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu counts", n);
    /* Pin the resolved range so the data-range default is not read twice. */
    pixsum_hist_spec s = {0};
    if (spec)
        s = *spec;
    s.bins = info.bins;
    s.lo = info.lo;
    s.hi = info.hi;
    size_t t = 0;
    if ((st = pixsum_histogram(ctx, in, &s, h, n, &info)) == PIXSUM_OK &&
        (st = pixsum_otsu(h, info.bins, &t)) == PIXSUM_OK) {
        *threshold = pixsum_hist_edge(info.bins, info.lo, info.hi, t + 1);
        if (bin)
            *bin = t;
    }
    free(h);
    return st;
}

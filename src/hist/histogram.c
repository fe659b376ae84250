/*
 * histogram.c - the histogram entry points of pixsum.h section 8: resolving a
 * spec (defaults, data range, validation), pixsum_histogram() (validation,
 * aliasing check, dispatch to the chosen PIXSUM_OP_HISTOGRAM method, totals),
 * and the derived forms of paper 002: cumulative (eq. 3, by an inclusive scan)
 * and relative (eq. 1, 2, 6).
 */
#include "hist_classify.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

/* The types of every histogram entry point, the device ones included. */
static bool hist_input_type(pixsum_type t)
{
    return t == PIXSUM_U8 || t == PIXSUM_U16 || t == PIXSUM_I16 || t == PIXSUM_I32 ||
           t == PIXSUM_F32 || t == PIXSUM_F64;
}

/* The types of the host-memory histograms: those, and u32 (its samples are
 * integers below 2^53, decided by the same integer rule as i32). */
static bool hist_host_input_type(pixsum_type t)
{
    return hist_input_type(t) || t == PIXSUM_U32;
}

/* Checks the mask against the (checked) image: the image's width, height and
 * depth, or depth 1 over a batch when `shared_ok` (one mask for every image). */
static int check_mask(const pixsum_view *in, const pixsum_view *mask, bool shared_ok)
{
    int st = pixsum_view_check(mask);
    if (st != PIXSUM_OK)
        return psi_fail(st, "mask: %s", pixsum_last_error());
    if (mask->type != PIXSUM_U8)
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "the mask must be u8, got %s",
                        pixsum_type_name(mask->type));
    if (mask->channels != 1)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "the mask must have 1 channel, got %zu",
                        mask->channels);
    if (mask->width != in->width || mask->height != in->height ||
        (mask->depth != in->depth && !(shared_ok && mask->depth == 1)))
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "the mask is %zux%zux%zu, the image %zux%zux%zu",
                        mask->width, mask->height, mask->depth, in->width, in->height,
                        in->depth);
    return PIXSUM_OK;
}

/* Folds the smallest and largest of the n integer samples of `row` (type T)
 * into lo and hi: one typed loop, no per-sample type switch. */
#define INT_ROW_RANGE(T)                                                       \
    do {                                                                       \
        const T *s_ = row;                                                     \
        T a_ = s_[0], b_ = s_[0];                                              \
        for (size_t i_ = 1; i_ < n; i_++) {                                    \
            a_ = s_[i_] < a_ ? s_[i_] : a_;                                    \
            b_ = s_[i_] > b_ ? s_[i_] : b_;                                    \
        }                                                                      \
        lo = (double)a_ < lo ? (double)a_ : lo;                                \
        hi = (double)b_ > hi ? (double)b_ : hi;                                \
    } while (0)

/* Smallest and largest finite selected samples over all channels; returns
 * false if there is none. A mask of depth 1 over a deeper image is applied to
 * every slice (a batch's shared mask). */
static bool data_range(const pixsum_view *in, const pixsum_view *mask, double *mn, double *mx)
{
    double lo = INFINITY, hi = -INFINITY;
    size_t rows = in->height * in->depth, n = in->width * in->channels;
    for (size_t r = 0; r < rows; r++) {
        const void *row = psi_hist_row(in, r);
        const uint8_t *m = mask ? psi_hist_row(mask, mask->depth == 1 ? r % in->height : r)
                                : NULL;
        if (!m) { /* typed loops: no per-sample type switch */
            if (in->type == PIXSUM_I32) {
                INT_ROW_RANGE(int32_t);
                continue;
            }
            if (in->type == PIXSUM_U32) {
                INT_ROW_RANGE(uint32_t);
                continue;
            }
            if (in->type == PIXSUM_F32) {
                const float *s = row;
                float a = INFINITY, b = -INFINITY;
                for (size_t i = 0; i < n; i++) {
                    float v = s[i];
                    if (v - v == 0) { /* finite (false for NaN and +-inf) */
                        a = v < a ? v : a;
                        b = v > b ? v : b;
                    }
                }
                lo = (double)a < lo ? (double)a : lo;
                hi = (double)b > hi ? (double)b : hi;
                continue;
            }
            if (in->type == PIXSUM_F64) {
                const double *s = row;
                for (size_t i = 0; i < n; i++) {
                    double v = s[i];
                    if (v - v == 0) {
                        lo = v < lo ? v : lo;
                        hi = v > hi ? v : hi;
                    }
                }
                continue;
            }
        }
        for (size_t x = 0; x < in->width; x++) {
            if (m && !m[x])
                continue;
            for (size_t c = 0; c < in->channels; c++) {
                double v = psi_load_f64(in->type, row, x * in->channels + c);
                if (!isfinite(v))
                    continue;
                if (v < lo)
                    lo = v;
                if (v > hi)
                    hi = v;
            }
        }
    }
    *mn = lo;
    *mx = hi;
    return lo <= hi;
}

/* The spec's rules that need no sample: bins and a given range checked, and
 * the bin count. This is the one home of the default bin count, used by
 * resolve_params() and pixsum_hist_bins(): a given count; else, without a
 * range, `default_bins_small` for u16 and i16 (one bin per value for the
 * entry points of pixsum.h) and 256 for the other types; 256 with a range. */
static int spec_bins(pixsum_type type, const pixsum_hist_spec *spec,
                     size_t default_bins_small, size_t *bins_out)
{
    size_t bins = spec ? spec->bins : 0;
    double lo = spec ? spec->lo : 0, hi = spec ? spec->hi : 0;
    bool given_range = spec && lo != hi;
    if (bins > PIXSUM_HIST_MAX_BINS)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "%zu bins requested, at most %zu", bins,
                        PIXSUM_HIST_MAX_BINS);
    if (spec && (!isfinite(lo) || !isfinite(hi)))
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "the range [%g, %g) is not finite", lo, hi);
    if (given_range && lo > hi)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "the range [%g, %g) has lo > hi", lo, hi);
    if (bins == 0)
        bins = !given_range && (type == PIXSUM_U16 || type == PIXSUM_I16) ? default_bins_small
                                                                           : 256;
    psi_bins b;
    if (given_range && psi_bins_init(&b, bins, lo, hi) != 0)
        return psi_fail(PIXSUM_ERR_INVALID_ARG,
                        "the range [%g, %g) cannot be split into %zu bins in double "
                        "precision", lo, hi, bins);
    *bins_out = bins;
    return PIXSUM_OK;
}

/* Validates bins and range and fills p->b: the bins of spec_bins() over the
 * given range, the type's full range, or the data's. */
static int resolve_params(const pixsum_view *in, const pixsum_hist_spec *spec,
                          size_t default_bins_small, psi_hist_params *p)
{
    size_t bins;
    int st = spec_bins(in->type, spec, default_bins_small, &bins);
    if (st != PIXSUM_OK)
        return st;
    if (spec && spec->lo != spec->hi) { /* a given range, checked by spec_bins() */
        (void)psi_bins_init(&p->b, bins, spec->lo, spec->hi);
        return PIXSUM_OK;
    }
    double lo, hi;
    switch (in->type) {
    case PIXSUM_U8:
        lo = 0, hi = 256;
        break;
    case PIXSUM_U16:
        lo = 0, hi = 65536;
        break;
    case PIXSUM_I16:
        lo = -32768, hi = 32768;
        break;
    default: {
        const pixsum_view *m = spec ? spec->mask : NULL;
        double mn, mx;
        if (!data_range(in, m, &mn, &mx)) {
            lo = 0, hi = 1;
        } else if (in->type == PIXSUM_I32 || in->type == PIXSUM_U32) {
            /* integers: [min, max + 1), exact in double (max + 1 <= 2^32) */
            lo = mn, hi = mx + 1;
        } else if (mn == mx && mx + 1 > mx) {
            /* One value: a unit range as for i32, so that the value is
             * in bin 0 and the edges are distinct (with [v, v + 1 ulp)
             * every edge but the last would round to v). */
            lo = mn, hi = mx + 1;
        } else {
            lo = mn, hi = nextafter(mx, INFINITY);
            if (!isfinite(hi))
                hi = mx, lo = mn < mx ? mn : nextafter(mx, -INFINITY);
        }
        break;
    }
    }
    if (psi_bins_init(&p->b, bins, lo, hi) != 0) {
        if (!isfinite(hi - lo))
            return psi_fail(PIXSUM_ERR_INVALID_ARG,
                            "the data range [%g, %g] is wider than a double can hold; "
                            "give a range", lo, hi);
        /* A data range of tiny values (its width or step underflows): widen
         * it to something usable. */
        hi = lo + 1 > lo ? lo + 1 : nextafter(lo, INFINITY) * 2;
        if (psi_bins_init(&p->b, bins, lo, hi) != 0)
            return psi_fail(PIXSUM_ERR_INVALID_ARG, "cannot choose a range for this data");
    }
    return PIXSUM_OK;
}

double pixsum_hist_edge(size_t bins, double lo, double hi, size_t i)
{
    psi_bins b;
    if (i > bins || psi_bins_init(&b, bins, lo, hi) != 0)
        return NAN;
    return psi_bins_edge(&b, (uint32_t)i);
}

/* The image and mask rules every histogram shares, none of which reads a
 * sample: a valid view of a histogram type (u32 only when `host_types`: the
 * caller counts on the CPU) and, if given, a mask of its shape (or depth 1
 * over a batch when `batch_mask`). */
static int check_image(const pixsum_view *in, const pixsum_view *mask, bool batch_mask,
                       bool host_types)
{
    int st = pixsum_view_check(in);
    if (st != PIXSUM_OK)
        return psi_fail(st, "input: %s", pixsum_last_error());
    if (in->type == PIXSUM_U32 && !host_types)
        return psi_fail(PIXSUM_ERR_BAD_TYPE,
                        "this histogram takes u8, u16, i16, i32, f32 or f64 images, got u32 "
                        "(u32 images are counted on the CPU, by pixsum_histogram() and the "
                        "other host-memory histograms)");
    if (!hist_host_input_type(in->type))
        return psi_fail(PIXSUM_ERR_BAD_TYPE,
                        "histograms take u8, u16, i16, i32, u32, f32 or f64 images, got %s",
                        pixsum_type_name(in->type));
    return mask ? check_mask(in, mask, batch_mask) : PIXSUM_OK;
}

int psi_hist_check_host(const pixsum_view *in, const pixsum_view *mask)
{
    return check_image(in, mask, false, true);
}

/* Shared by the single-image entry points, the joint and the integral
 * histogram, and (with batch_mask) the batches (declared in hist_classify.h).
 * `host_types`: the caller counts on the CPU, which also takes u32. */
static int prepare(const pixsum_view *in, const pixsum_hist_spec *spec,
                   size_t default_bins_small, bool batch_mask, bool host_types,
                   psi_hist_params *p)
{
    memset(p, 0, sizeof *p);
    const pixsum_view *mask = spec ? spec->mask : NULL;
    int st = check_image(in, mask, batch_mask, host_types);
    if (st != PIXSUM_OK)
        return st;
    if (mask)
        p->mask = *mask;
    return resolve_params(in, spec, default_bins_small, p);
}

int psi_hist_prepare(const pixsum_view *in, const pixsum_hist_spec *spec,
                     size_t default_bins_small, psi_hist_params *p)
{
    return prepare(in, spec, default_bins_small, false, false, p);
}

int psi_hist_prepare_host(const pixsum_view *in, const pixsum_hist_spec *spec,
                          size_t default_bins_small, psi_hist_params *p)
{
    return prepare(in, spec, default_bins_small, false, true, p);
}

int psi_hist_prepare_batch(const pixsum_view *in, const pixsum_hist_spec *spec,
                           psi_hist_params *p)
{
    return prepare(in, spec, 65536, true, false, p);
}

int psi_hist_prepare_batch_host(const pixsum_view *in, const pixsum_hist_spec *spec,
                                psi_hist_params *p)
{
    return prepare(in, spec, 65536, true, true, p);
}

int pixsum_hist_resolve(const pixsum_view *in, const pixsum_hist_spec *spec,
                        pixsum_hist_info *info)
{
    psi_clear_error();
    if (!in || !info)
        return psi_fail(PIXSUM_ERR_NULL, "image or info is NULL");
    psi_hist_params p;
    int st = psi_hist_prepare_host(in, spec, 65536, &p);
    if (st != PIXSUM_OK)
        return st;
    memset(info, 0, sizeof *info);
    info->bins = p.b.bins;
    info->channels = in->channels;
    info->lo = p.b.lo;
    info->hi = p.b.hi;
    return PIXSUM_OK;
}

int pixsum_hist_bins(const pixsum_view *in, const pixsum_hist_spec *spec, size_t *bins)
{
    psi_clear_error();
    if (!in || !bins)
        return psi_fail(PIXSUM_ERR_NULL, "image or bins is NULL");
    int st = check_image(in, NULL, false, true);
    if (st != PIXSUM_OK)
        return st;
    /* the default of pixsum_hist_resolve() and pixsum_histogram(): one bin
     * per value for u16 and i16 */
    return spec_bins(in->type, spec, 65536, bins);
}

/* Pixels the mask selects (all pixels without a mask). */
static uint64_t selected_pixels(const pixsum_view *in, const pixsum_view *mask)
{
    size_t rows = in->height * in->depth;
    if (!mask->data)
        return (uint64_t)in->width * rows;
    uint64_t n = 0;
    for (size_t r = 0; r < rows; r++) {
        const uint8_t *m = psi_hist_row(mask, r);
        size_t k = 0;
        for (size_t x = 0; x < in->width; x++)
            k += m[x] != 0;
        n += k;
    }
    return n;
}

int pixsum_histogram(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_hist_spec *spec,
                     uint64_t *counts, size_t counts_len, pixsum_hist_info *info)
{
    psi_clear_error();
    if (!in || !counts)
        return psi_fail(PIXSUM_ERR_NULL, "image or counts is NULL");
    psi_hist_params p;
    int st = psi_hist_prepare_host(in, spec, 65536, &p);
    if (st != PIXSUM_OK)
        return st;
    const size_t bins = p.b.bins, need = bins * in->channels;
    if (counts_len < need)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE,
                        "counts holds %zu values, %zu needed (%zu channels x %zu bins)",
                        counts_len, need, in->channels, bins);
    uintptr_t ilo, ihi, clo = (uintptr_t)counts, chi = (uintptr_t)(counts + need);
    psi_view_extent(in, &ilo, &ihi);
    if (clo < ihi && ilo < chi)
        return psi_fail(PIXSUM_ERR_ALIASING, "counts overlaps the image");

    pixsum_ctx local = psi_default_ctx;
    pixsum_ctx *c = ctx ? ctx : &local;
    p.counts = psi_scratch_take(PSI_SCRATCH_HIST_COUNTS, need * sizeof *p.counts);
    if (!p.counts)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu counts", need);
    psi_job job;
    memset(&job, 0, sizeof job);
    job.op = PIXSUM_OP_HISTOGRAM;
    job.in = *in;
    job.threads = psi_ctx_threads(c);
    job.ctx = c;
    job.extra = &p;
    const psi_method *m;
    if ((st = psi_choose_method(&job, &m)) == PIXSUM_OK)
        st = m->run(&job);
    if (st != PIXSUM_OK) {
        psi_scratch_give(PSI_SCRATCH_HIST_COUNTS, p.counts);
        return st;
    }
    memcpy(counts, p.counts, need * sizeof *counts);
    if (info) {
        memset(info, 0, sizeof *info);
        info->bins = p.b.bins;
        info->channels = in->channels;
        info->lo = p.b.lo;
        info->hi = p.b.hi;
        info->pixels = selected_pixels(in, &p.mask);
        for (size_t ch = 0; ch < in->channels; ch++) {
            uint64_t s = 0;
            for (size_t i = 0; i < bins; i++)
                s += p.counts[ch * bins + i];
            info->in_range[ch] = s;
            info->below[ch] = p.below[ch];
            info->above[ch] = p.above[ch];
            info->nan[ch] = p.nan[ch];
        }
    }
    psi_scratch_give(PSI_SCRATCH_HIST_COUNTS, p.counts);
    return PIXSUM_OK;
}

static int check_info(const pixsum_hist_info *info)
{
    if (info->bins == 0 || info->channels < 1 || info->channels > 4)
        return psi_fail(PIXSUM_ERR_INVALID_ARG,
                        "info describes %zu channels x %zu bins; need 1-4 channels and bins >= 1",
                        info->channels, info->bins);
    return PIXSUM_OK;
}

/* Inclusive prefix sum of n u64 values (out may equal in). Four independent
 * partial chains are not worth it here: bins are few compared with pixels. */
static void scan_u64(const uint64_t *in, uint64_t *out, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++) {
        s += in[i];
        out[i] = s;
    }
}

int pixsum_hist_cumulative(const pixsum_hist_info *info, const uint64_t *counts,
                           uint64_t *out)
{
    psi_clear_error();
    if (!info || !counts || !out)
        return psi_fail(PIXSUM_ERR_NULL, "info, counts or out is NULL");
    int st = check_info(info);
    if (st != PIXSUM_OK)
        return st;
    for (size_t c = 0; c < info->channels; c++)
        scan_u64(counts + c * info->bins, out + c * info->bins, info->bins);
    return PIXSUM_OK;
}

int pixsum_hist_relative(const pixsum_hist_info *info, const uint64_t *counts, unsigned flags,
                         double *out)
{
    psi_clear_error();
    if (!info || !counts || !out)
        return psi_fail(PIXSUM_ERR_NULL, "info, counts or out is NULL");
    int st = check_info(info);
    if (st != PIXSUM_OK)
        return st;
    if (flags & ~(PIXSUM_HIST_CUMULATIVE | PIXSUM_HIST_OF_ALL_SAMPLES))
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "unknown flags 0x%x", flags);
    for (size_t c = 0; c < info->channels; c++) {
        uint64_t n = (flags & PIXSUM_HIST_OF_ALL_SAMPLES) ? info->pixels : info->in_range[c];
        const uint64_t *h = counts + c * info->bins;
        double *o = out + c * info->bins;
        uint64_t run = 0;
        for (size_t i = 0; i < info->bins; i++) {
            uint64_t k = h[i];
            if (flags & PIXSUM_HIST_CUMULATIVE)
                k = run += h[i];
            o[i] = n ? (double)k / (double)n : 0.0;
        }
    }
    return PIXSUM_OK;
}

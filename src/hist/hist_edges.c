/*
 * hist_edges.c - histograms over bins given by their edges (NumPy's
 * `bins=<array>`, with its closed last bin on request), weighted histograms
 * (NumPy's `weights=`), and the derived density and bin centres.
 *
 * The rule is the edges themselves: a sample v (exactly as a double) is in
 * bin i when e[i] <= v < e[i + 1], found by binary search; 8- and 16-bit
 * images look each raw value up once in a class table. Rows are cut into
 * bands whose number depends only on the image's shape and the bins; each
 * band is counted into a table of its own (on any thread) and the tables are
 * added in band order, so weighted sums do not depend on the thread count.
 */
#include "hist_classify.h"

#include <stdlib.h>
#include <string.h>

/* Classes past the bins in a band table (bins + these): those of hist_bins.h. */
enum { EDGE_BELOW = PSI_BIN_BELOW, EDGE_ABOVE = PSI_BIN_ABOVE, EDGE_NAN = PSI_BIN_NAN,
       EDGE_EXTRA = 3 };

typedef struct edge_rule {
    const double *e; /* bins + 1 edges */
    uint32_t bins;
    bool closed_last;
} edge_rule;

uint32_t psi_edges_class(const double *e, uint32_t bins, bool closed_last, double v)
{
    if (v != v)
        return bins + EDGE_NAN;
    if (v < e[0])
        return bins + EDGE_BELOW;
    double top = e[bins];
    if (v > top || (v == top && !closed_last))
        return bins + EDGE_ABOVE;
    /* e[lo] <= v and the bin is below hi: the largest i < bins with e[i] <= v */
    uint32_t lo = 0, hi = bins;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (e[mid] <= v)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The class of v: its bin, or bins + EDGE_BELOW / ABOVE / NAN. */
static uint32_t edge_class(const edge_rule *r, double v)
{
    return psi_edges_class(r->e, r->bins, r->closed_last, v);
}

/* Everything a band needs. */
typedef struct edge_job {
    const pixsum_view *in, *mask, *weights;
    edge_rule rule;
    const uint32_t *lut; /* class of every raw value (u8, u16, i16), else NULL */
    size_t rows, bands, table; /* table = channels x (bins + EDGE_EXTRA) */
    uint64_t *counts;          /* bands x table, or NULL */
    double *sums;              /* bands x table, or NULL */
} edge_job;

static uint32_t raw_index(pixsum_type t, const void *row, size_t i)
{
    switch (t) {
    case PIXSUM_U8: return ((const uint8_t *)row)[i];
    case PIXSUM_U16: return ((const uint16_t *)row)[i];
    default: return (uint32_t)((int32_t)((const int16_t *)row)[i] + 32768);
    }
}

static void count_band(const edge_job *j, size_t band)
{
    const pixsum_view *in = j->in;
    const size_t ch = in->channels, per = j->rule.bins + EDGE_EXTRA;
    const size_t r0 = j->rows * band / j->bands, r1 = j->rows * (band + 1) / j->bands;
    uint64_t *cnt = j->counts ? j->counts + band * j->table : NULL;
    double *sum = j->sums ? j->sums + band * j->table : NULL;
    const size_t wch = j->weights ? j->weights->channels : 0;
    for (size_t r = r0; r < r1; r++) {
        const void *row = psi_hist_row(in, r);
        const uint8_t *m = j->mask ? psi_hist_row(j->mask, r) : NULL;
        const void *wrow = j->weights ? psi_hist_row(j->weights, r) : NULL;
        for (size_t x = 0; x < in->width; x++) {
            if (m && !m[x])
                continue;
            for (size_t c = 0; c < ch; c++) {
                size_t i = x * ch + c;
                uint32_t k = j->lut ? j->lut[raw_index(in->type, row, i)]
                                    : edge_class(&j->rule, psi_load_f64(in->type, row, i));
                if (cnt)
                    cnt[c * per + k]++;
                if (sum)
                    sum[c * per + k] +=
                        wrow ? psi_load_f64(j->weights->type, wrow, wch == 1 ? x : i) : 1.0;
            }
        }
    }
}

/* Checks the edges and flags of spec. */
static int check_edges(const pixsum_hist_edges_spec *spec)
{
    if (!spec->edges)
        return psi_fail(PIXSUM_ERR_NULL, "the edges are NULL");
    if (spec->n_edges < 2 || spec->n_edges > PIXSUM_HIST_MAX_BINS + 1)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "%zu edges given; 2 to %zu are accepted",
                        spec->n_edges, PIXSUM_HIST_MAX_BINS + 1);
    if (spec->flags & ~PIXSUM_HIST_CLOSED_LAST)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "unknown flags 0x%x", spec->flags);
    for (size_t i = 0; i < spec->n_edges; i++) {
        if (spec->edges[i] != spec->edges[i])
            return psi_fail(PIXSUM_ERR_INVALID_ARG, "edge %zu is NaN", i);
        if (i > 0 && spec->edges[i] < spec->edges[i - 1])
            return psi_fail(PIXSUM_ERR_INVALID_ARG,
                            "the edges decrease at %zu (%.17g after %.17g); they must not "
                            "decrease", i, spec->edges[i], spec->edges[i - 1]);
    }
    return PIXSUM_OK;
}

static bool weight_type(pixsum_type t)
{
    return t == PIXSUM_U8 || t == PIXSUM_U16 || t == PIXSUM_I16 || t == PIXSUM_I32 ||
           t == PIXSUM_U32 || t == PIXSUM_F32 || t == PIXSUM_F64;
}

static int check_weights(const pixsum_view *in, const pixsum_view *w)
{
    int st = pixsum_view_check(w);
    if (st != PIXSUM_OK)
        return psi_fail(st, "weights: %s", pixsum_last_error());
    if (!weight_type(w->type))
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "weights of type %s are not supported",
                        pixsum_type_name(w->type));
    if (w->width != in->width || w->height != in->height || w->depth != in->depth ||
        (w->channels != 1 && w->channels != in->channels))
        return psi_fail(PIXSUM_ERR_BAD_SHAPE,
                        "the weights are %zux%zux%zu x%zu, the image %zux%zux%zu x%zu (weights "
                        "have 1 channel or the image's)", w->width, w->height, w->depth,
                        w->channels, in->width, in->height, in->depth, in->channels);
    return PIXSUM_OK;
}

/* Shared by both entry points: validates, counts into the band tables, and
 * reduces them in band order into `counts` (u64) or `sums` (f64). */
static int histogram_edges(pixsum_ctx *ctx, const pixsum_view *in,
                           const pixsum_hist_edges_spec *spec, uint64_t *counts, double *sums,
                           size_t out_len, pixsum_hist_info *info)
{
    void *out = counts ? (void *)counts : (void *)sums;
    if (!in || !spec || !out)
        return psi_fail(PIXSUM_ERR_NULL, "image, spec or output is NULL");
    int st = check_edges(spec);
    if (st != PIXSUM_OK)
        return st;
    if (counts && spec->weights)
        return psi_fail(PIXSUM_ERR_INVALID_ARG,
                        "weights are summed by pixsum_histogram_weighted(), not counted");
    /* the image and mask rules of pixsum_histogram(), without a data scan */
    if ((st = psi_hist_check_host(in, spec->mask)) != PIXSUM_OK)
        return st;
    if (spec->weights && (st = check_weights(in, spec->weights)) != PIXSUM_OK)
        return st;
    const size_t bins = spec->n_edges - 1, ch = in->channels, need = bins * ch;
    if (out_len < need)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE,
                        "the output holds %zu values, %zu needed (%zu channels x %zu bins)",
                        out_len, need, ch, bins);
    size_t esize = counts ? sizeof *counts : sizeof *sums;
    size_t table_bytes = counts ? 8 : 16; /* per entry of the band tables (sums: + counts) */
    uintptr_t ilo, ihi, olo = (uintptr_t)out, ohi = olo + need * esize;
    psi_view_extent(in, &ilo, &ihi);
    if (olo < ihi && ilo < ohi)
        return psi_fail(PIXSUM_ERR_ALIASING, "the output overlaps the image");
    if (spec->weights) {
        psi_view_extent(spec->weights, &ilo, &ihi);
        if (olo < ihi && ilo < ohi)
            return psi_fail(PIXSUM_ERR_ALIASING, "the output overlaps the weights");
    }

    edge_job j;
    memset(&j, 0, sizeof j);
    j.in = in;
    j.mask = spec->mask;
    j.weights = spec->weights;
    j.rule = (edge_rule){spec->edges, (uint32_t)bins, (spec->flags & PIXSUM_HIST_CLOSED_LAST) != 0};
    j.rows = in->height * in->depth;
    j.table = ch * (bins + EDGE_EXTRA);
    /* bands: about one per 64 Ki samples, at most 64, tables within 64 MiB */
    size_t samples = j.rows * in->width * ch, cap = ((size_t)64 << 20) / (j.table * table_bytes);
    j.bands = samples / 65536 + 1;
    j.bands = j.bands < 64 ? j.bands : 64;
    j.bands = j.bands < j.rows ? j.bands : j.rows;
    j.bands = j.bands < cap ? j.bands : cap;
    j.bands = j.bands ? j.bands : 1;
    uint32_t *lut = NULL;
    if (psi_hist_small_type(in->type)) {
        size_t levels = in->type == PIXSUM_U8 ? 256 : 65536;
        lut = malloc(levels * sizeof *lut);
        if (!lut)
            return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate a class table");
        for (size_t v = 0; v < levels; v++)
            lut[v] = edge_class(&j.rule, in->type == PIXSUM_I16 ? (double)v - 32768 : (double)v);
        j.lut = lut;
    }
    /* sample counts (the result, or info's totals) and weight sums */
    const bool want_counts = counts || info;
    j.counts = want_counts ? calloc(j.bands * j.table, sizeof *j.counts) : NULL;
    j.sums = sums ? calloc(j.bands * j.table, sizeof *j.sums) : NULL;
    if ((want_counts && !j.counts) || (sums && !j.sums)) {
        free(j.counts);
        free(j.sums);
        free(lut);
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu histogram tables", j.bands);
    }
    int threads = psi_ctx_threads(ctx);
    threads = (size_t)threads < j.bands ? threads : (int)j.bands;
    if (threads <= 1) {
        for (size_t b = 0; b < j.bands; b++)
            count_band(&j, b);
    } else {
#ifdef PIXSUM_HAVE_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
#endif
        for (long b = 0; b < (long)j.bands; b++)
            count_band(&j, (size_t)b);
    }
    /* band order: a fixed sum order */
    for (size_t b = 1; b < j.bands; b++)
        for (size_t k = 0; k < j.table; k++) {
            if (j.counts)
                j.counts[k] += j.counts[b * j.table + k];
            if (j.sums)
                j.sums[k] += j.sums[b * j.table + k];
        }
    const uint64_t *nk = j.counts;
    const size_t per = bins + EDGE_EXTRA;
    for (size_t c = 0; c < ch; c++) {
        if (counts)
            memcpy(counts + c * bins, nk + c * per, bins * sizeof *counts);
        else
            memcpy(sums + c * bins, j.sums + c * per, bins * sizeof *sums);
    }
    if (info) {
        memset(info, 0, sizeof *info);
        info->bins = bins;
        info->channels = ch;
        info->lo = spec->edges[0];
        info->hi = spec->edges[bins];
        for (size_t c = 0; c < ch; c++) {
            const uint64_t *t = nk + c * per;
            uint64_t s = 0;
            for (size_t i = 0; i < bins; i++)
                s += t[i];
            info->in_range[c] = s;
            info->below[c] = t[bins + EDGE_BELOW];
            info->above[c] = t[bins + EDGE_ABOVE];
            info->nan[c] = t[bins + EDGE_NAN];
        }
        info->pixels = info->in_range[0] + info->below[0] + info->above[0] + info->nan[0];
    }
    free(j.counts);
    free(j.sums);
    free(lut);
    return PIXSUM_OK;
}

int pixsum_histogram_edges(pixsum_ctx *ctx, const pixsum_view *in,
                           const pixsum_hist_edges_spec *spec, uint64_t *counts,
                           size_t counts_len, pixsum_hist_info *info)
{
    psi_clear_error();
    if (!counts)
        return psi_fail(PIXSUM_ERR_NULL, "counts is NULL");
    return histogram_edges(ctx, in, spec, counts, NULL, counts_len, info);
}

int pixsum_histogram_weighted(pixsum_ctx *ctx, const pixsum_view *in,
                              const pixsum_hist_edges_spec *spec, double *sums, size_t sums_len,
                              pixsum_hist_info *info)
{
    psi_clear_error();
    if (!sums)
        return psi_fail(PIXSUM_ERR_NULL, "sums is NULL");
    return histogram_edges(ctx, in, spec, NULL, sums, sums_len, info);
}

static int check_info(const pixsum_hist_info *info)
{
    if (info->bins == 0 || info->bins > PIXSUM_HIST_MAX_BINS || info->channels < 1 ||
        info->channels > 4)
        return psi_fail(PIXSUM_ERR_INVALID_ARG,
                        "info describes %zu channels x %zu bins; need 1-4 channels and 1 to "
                        "%zu bins", info->channels, info->bins, PIXSUM_HIST_MAX_BINS);
    return PIXSUM_OK;
}

/* Edge i of info's bins: edges[i], or the uniform edge. */
static double edge_at(const pixsum_hist_info *info, const double *edges, size_t i)
{
    return edges ? edges[i] : pixsum_hist_edge(info->bins, info->lo, info->hi, i);
}

int pixsum_hist_density(const pixsum_hist_info *info, const double *edges,
                        const uint64_t *counts, const double *sums, double *out)
{
    psi_clear_error();
    if (!info || !out || (!counts && !sums))
        return psi_fail(PIXSUM_ERR_NULL, "info, out, or both counts and sums are NULL");
    int st = check_info(info);
    if (st != PIXSUM_OK)
        return st;
    const size_t bins = info->bins;
    for (size_t c = 0; c < info->channels; c++) {
        double total;
        if (counts) {
            uint64_t n = 0;
            for (size_t i = 0; i < bins; i++)
                n += counts[c * bins + i];
            total = (double)n;
        } else {
            total = 0;
            for (size_t i = 0; i < bins; i++)
                total += sums[c * bins + i];
        }
        for (size_t i = 0; i < bins; i++) {
            double x = counts ? (double)counts[c * bins + i] : sums[c * bins + i];
            double width = edge_at(info, edges, i + 1) - edge_at(info, edges, i);
            double d = x / width;
            out[c * bins + i] = d / total;
        }
    }
    return PIXSUM_OK;
}

/* (a + b) / 2: in double (halves added where the sum overflows), or with
 * `f32` in f32 arithmetic on the f32 roundings of a and b, as NumPy's
 * float32 arrays compute it. */
static double centre_of(double a, double b, bool f32)
{
    if (f32) {
        float fa = (float)a, fb = (float)b;
        float s = fa + fb;
        return (s - s == 0) ? (double)(s / 2.0f) : (double)(fa / 2.0f + fb / 2.0f);
    }
    double s = a + b;
    return (s - s == 0) ? s / 2 : a / 2 + b / 2;
}

int pixsum_hist_centers(const pixsum_hist_info *info, const double *edges, unsigned flags,
                        double *centers)
{
    psi_clear_error();
    if (!info || !centers)
        return psi_fail(PIXSUM_ERR_NULL, "info or centers is NULL");
    if (info->bins == 0 || info->bins > PIXSUM_HIST_MAX_BINS)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "info describes %zu bins; 1 to %zu are accepted",
                        info->bins, PIXSUM_HIST_MAX_BINS);
    if (flags & ~PIXSUM_HIST_F32_EDGES)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "unknown flags 0x%x", flags);
    for (size_t i = 0; i < info->bins; i++)
        centers[i] = centre_of(edge_at(info, edges, i), edge_at(info, edges, i + 1),
                               (flags & PIXSUM_HIST_F32_EDGES) != 0);
    return PIXSUM_OK;
}

int pixsum_hist_uniform_edges(size_t bins, double lo, double hi, unsigned flags, double *edges)
{
    psi_clear_error();
    if (!edges)
        return psi_fail(PIXSUM_ERR_NULL, "edges is NULL");
    if (flags & ~PIXSUM_HIST_F32_EDGES)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "unknown flags 0x%x", flags);
    psi_bins b;
    if (bins > PIXSUM_HIST_MAX_BINS || psi_bins_init(&b, bins, lo, hi) != 0)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "%zu bins over [%g, %g) are not a valid "
                        "histogram range", bins, lo, hi);
    for (size_t i = 0; i <= bins; i++) {
        double e = psi_bins_edge(&b, (uint32_t)i);
        edges[i] = (flags & PIXSUM_HIST_F32_EDGES) ? (double)(float)e : e;
    }
    return PIXSUM_OK;
}

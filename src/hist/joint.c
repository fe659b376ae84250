/*
 * joint.c - joint (2-D) histograms of two images of the same shape and the
 * information measures computed from them (entropies, mutual information,
 * normalised mutual information), the registration use paper 002 names.
 *
 * Counting: u32 tables of cells + 1 entries (the last one takes the pairs
 * outside a range), one per thread over row ranges, flushed into the u64
 * counts before a counter can wrap. Masks add weights of 0 or 1 instead of
 * branching. 8/16-bit pairs go through two offset tables (cell = off_a[a] +
 * off_b[b]); other types are classified a slice of a row at a time.
 */
#include "hist_classify.h"

#include <stdlib.h>
#include <string.h>

/* What the row counters of one joint histogram share. For 8/16-bit images
 * the classifiers' tables are turned into cell offsets: off_a[v] is
 * bin_a(v) * bins_b and off_b[v] is bin_b(v), or `cells` for a value outside
 * its range, so that off_a + off_b is the cell of a pair or >= cells. */
typedef struct joint_plan {
    const pixsum_view *a, *b;
    const psi_hist_params *pa, *pb;
    size_t cells;
    psi_classifier ka, kb;
    uint32_t *off_a, *off_b; /* both NULL unless both images are 8/16-bit */
} joint_plan;

static int joint_plan_init(joint_plan *j)
{
    int st = psi_classifier_init(&j->ka, j->a->type, j->pa, true);
    if (st != PIXSUM_OK)
        return st;
    if ((st = psi_classifier_init(&j->kb, j->b->type, j->pb, true)) != PIXSUM_OK) {
        psi_classifier_free(&j->ka);
        return st;
    }
    j->off_a = j->off_b = NULL;
    if (j->ka.lut && j->kb.lut) {
        /* the classifier tables become offset tables in place */
        j->off_a = j->ka.lut;
        j->off_b = j->kb.lut;
        size_t na = j->a->type == PIXSUM_U8 ? 256 : 65536;
        size_t nb = j->b->type == PIXSUM_U8 ? 256 : 65536;
        size_t bins_a = j->pa->b.bins, bins_b = j->pb->b.bins;
        for (size_t v = 0; v < na; v++)
            j->off_a[v] = j->off_a[v] < bins_a ? (uint32_t)(j->off_a[v] * bins_b)
                                               : (uint32_t)j->cells;
        for (size_t v = 0; v < nb; v++)
            j->off_b[v] = j->off_b[v] < bins_b ? j->off_b[v] : (uint32_t)j->cells;
    }
    return PIXSUM_OK;
}

static void joint_plan_free(joint_plan *j)
{
    psi_classifier_free(&j->ka);
    psi_classifier_free(&j->kb);
}

/* Threads for the row ranges: the context's, at most one per 256 Ki pixels
 * and, as each has a table of its own, at most what 256 MiB of tables allow. */
static int joint_threads(const pixsum_ctx *ctx, const pixsum_view *a, size_t cells)
{
#ifdef PIXSUM_HAVE_OPENMP
    size_t threads = (size_t)psi_ctx_threads(ctx);
    size_t pixels = a->width * a->height * a->depth;
    if (threads > pixels / (256u << 10))
        threads = pixels / (256u << 10);
    if (threads > ((size_t)256 << 20) / ((cells + 1) * sizeof(uint32_t)))
        threads = ((size_t)256 << 20) / ((cells + 1) * sizeof(uint32_t));
    return threads < 1 ? 1 : (int)threads;
#else
    (void)ctx, (void)a, (void)cells;
    return 1;
#endif
}

/* Sub-tables per thread: 2 where they fit in 2 MiB together (up to 262143
 * cells, 256 x 256 included), else 1. Two tables halve the chain of
 * increments to one counter on constant regions; four were faster still
 * there but 15% slower on random pairs (2-core VM, one process). */
#define JOINT_TABLES 2

static int joint_subtables(size_t cells)
{
    return (cells + 1) * sizeof(uint32_t) * JOINT_TABLES <= ((size_t)2 << 20) ? JOINT_TABLES : 1;
}

/* Adds the k u32 tables of cells + 1 entries at t into counts (cells) and
 * their last entries into *excluded, then clears them. Several threads may
 * flush at once: one at a time. */
static void flush_tables(uint32_t *t, int k, size_t cells, uint64_t *counts, uint64_t *excluded)
{
#ifdef PIXSUM_HAVE_OPENMP
#pragma omp critical(pixsum_joint_flush)
#endif
    for (int s = 0; s < k; s++) {
        const uint32_t *ts = t + (size_t)s * (cells + 1);
        for (size_t i = 0; i < cells; i++)
            counts[i] += ts[i];
        *excluded += ts[cells];
    }
    memset(t, 0, (size_t)k * (cells + 1) * sizeof *t);
}

/* Samples classified at a time when a row is not 8/16-bit (on the stack). */
#define JOINT_SLICE 1024

/* Sample x of an 8-bit (wide false) or 16-bit row. */
static inline size_t raw_at(const void *row, size_t x, bool wide)
{
    return wide ? ((const uint16_t *)row)[x] : ((const uint8_t *)row)[x];
}

/* Mask weight of pixel x: 1 where every given mask is non-zero, else 0
 * (computed, not branched on: random masks would mispredict). */
static inline uint32_t pair_weight(const uint8_t *ma, const uint8_t *mb, size_t x)
{
    return (uint32_t)(ma ? ma[x] != 0 : 1) & (uint32_t)(mb ? mb[x] != 0 : 1);
}

/* One row of 8/16-bit pairs into the `tables` (1 or 2) u32 tables t[]
 * through the offset tables: each pixel adds 1, or its mask weight, to its
 * cell or to the last entry; with two tables, consecutive pixels alternate
 * between them, so that runs of one pair (constant regions) do not wait on
 * one counter. Always inlined, so that each (wide_a, wide_b, masked, tables)
 * gets its own loop. */
static inline __attribute__((always_inline)) void
count_row_small(const joint_plan *j, const void *ra, const void *rb, const uint8_t *ma,
                const uint8_t *mb, size_t n, bool wide_a, bool wide_b, bool masked, int tables,
                uint32_t *const t[JOINT_TABLES])
{
    const uint32_t *oa = j->off_a, *ob = j->off_b;
    size_t cells = j->cells, x = 0;
#define WEIGHT(X) (masked ? pair_weight(ma, mb, (X)) : 1u)
#define CELL(X)                                                                      \
    ((size_t)oa[raw_at(ra, (X), wide_a)] + ob[raw_at(rb, (X), wide_b)] < cells       \
         ? (size_t)oa[raw_at(ra, (X), wide_a)] + ob[raw_at(rb, (X), wide_b)]         \
         : cells)
    if (tables == 2) {
        uint32_t *t0 = t[0], *t1 = t[1];
        for (; x + 2 <= n; x += 2) {
            size_t c0 = CELL(x), c1 = CELL(x + 1);
            t0[c0] += WEIGHT(x);
            t1[c1] += WEIGHT(x + 1);
        }
    }
    for (; x < n; x++)
        t[0][CELL(x)] += WEIGHT(x);
#undef CELL
#undef WEIGHT
}

/* Pixels of a row counted between two checks of the counters (a row of
 * more than 2^32 pixels must not wrap them). */
#define JOINT_SEGMENT ((size_t)1 << 30)

/* Rows [r0, r1) into the k u32 tables of cells + 1 entries at block,
 * flushed into counts and *excluded before a counter can wrap. */
static void count_rows(const joint_plan *j, size_t r0, size_t r1, uint32_t *block, int k,
                       uint64_t *counts, uint64_t *excluded)
{
    const pixsum_view *a = j->a, *b = j->b;
    size_t w = a->width, bins_a = j->pa->b.bins, bins_b = j->pb->b.bins, cells = j->cells;
    size_t sa = pixsum_type_size(a->type), sb = pixsum_type_size(b->type);
    uint32_t *t[JOINT_TABLES];
    for (int s = 0; s < JOINT_TABLES; s++)
        t[s] = block + (size_t)(s % k) * (cells + 1);
    uint32_t ia[JOINT_SLICE], ib[JOINT_SLICE]; /* classes of a slice of a row */
    bool wa = a->type != PIXSUM_U8, wb = b->type != PIXSUM_U8;
    uint64_t pending = 0;
    for (size_t r = r0; r < r1; r++)
        for (size_t x0 = 0; x0 < w; x0 += JOINT_SEGMENT) {
            size_t n = w - x0 < JOINT_SEGMENT ? w - x0 : JOINT_SEGMENT;
            if (pending + n > UINT32_MAX) {
                flush_tables(block, k, cells, counts, excluded);
                pending = 0;
            }
            pending += n;
            const void *ra = (const char *)psi_hist_row(a, r) + x0 * sa;
            const void *rb = (const char *)psi_hist_row(b, r) + x0 * sb;
            const uint8_t *ma = NULL, *mb = NULL;
            if (j->pa->mask.data)
                ma = (const uint8_t *)psi_hist_row(&j->pa->mask, r) + x0;
            if (j->pb->mask.data)
                mb = (const uint8_t *)psi_hist_row(&j->pb->mask, r) + x0;
            if (j->off_a) {
#define JOINT_ROW_M(WA, WB, M)                                                         \
    (k == 2 ? count_row_small(j, ra, rb, ma, mb, n, WA, WB, M, 2, t)                   \
            : count_row_small(j, ra, rb, ma, mb, n, WA, WB, M, 1, t))
#define JOINT_ROW(WA, WB) \
    ((ma || mb) ? JOINT_ROW_M(WA, WB, true) : JOINT_ROW_M(WA, WB, false))
                if (!wa && !wb)
                    JOINT_ROW(false, false);
                else if (!wa)
                    JOINT_ROW(false, true);
                else if (!wb)
                    JOINT_ROW(true, false);
                else
                    JOINT_ROW(true, true);
#undef JOINT_ROW
#undef JOINT_ROW_M
                continue;
            }
            for (size_t s0 = 0; s0 < n; s0 += JOINT_SLICE) {
                size_t m = n - s0 < JOINT_SLICE ? n - s0 : JOINT_SLICE;
                psi_classify_row(&j->ka, (const char *)ra + s0 * sa, m, ia);
                psi_classify_row(&j->kb, (const char *)rb + s0 * sb, m, ib);
                const uint8_t *mas = ma ? ma + s0 : NULL, *mbs = mb ? mb + s0 : NULL;
                for (size_t x = 0; x < m; x++) {
                    size_t c = ia[x] < bins_a && ib[x] < bins_b
                                   ? (size_t)ia[x] * bins_b + ib[x]
                                   : cells;
                    t[x % JOINT_TABLES][c] += pair_weight(mas, mbs, x);
                }
            }
        }
}

int pixsum_histogram_joint(pixsum_ctx *ctx, const pixsum_view *a, const pixsum_view *b,
                           const pixsum_hist_spec *spec_a, const pixsum_hist_spec *spec_b,
                           uint64_t *counts, size_t counts_len, pixsum_joint_info *info)
{
    (void)ctx;
    psi_clear_error();
    if (!a || !b || !counts)
        return psi_fail(PIXSUM_ERR_NULL, "image a, image b or counts is NULL");
    psi_hist_params pa, pb;
    int st = psi_hist_prepare_host(a, spec_a, 256, &pa);
    if (st != PIXSUM_OK)
        return psi_fail(st, "image a: %s", pixsum_last_error());
    if ((st = psi_hist_prepare_host(b, spec_b, 256, &pb)) != PIXSUM_OK)
        return psi_fail(st, "image b: %s", pixsum_last_error());
    if (a->channels != 1 || b->channels != 1)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE,
                        "joint histograms take 1-channel images, got %zu and %zu channels",
                        a->channels, b->channels);
    if (a->width != b->width || a->height != b->height || a->depth != b->depth)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "image a is %zux%zux%zu, image b %zux%zux%zu",
                        a->width, a->height, a->depth, b->width, b->height, b->depth);
    if (pa.b.bins > PIXSUM_HIST_JOINT_MAX_CELLS / pb.b.bins)
        return psi_fail(PIXSUM_ERR_TOO_LARGE,
                        "a %zu x %zu joint histogram has more than 2^26 cells",
                        (size_t)pa.b.bins, (size_t)pb.b.bins);
    size_t cells = (size_t)pa.b.bins * pb.b.bins;
    if (counts_len < cells)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "counts holds %zu values, %zu needed (%zu x %zu)",
                        counts_len, cells, (size_t)pa.b.bins, (size_t)pb.b.bins);
    uintptr_t lo, hi, clo = (uintptr_t)counts, chi = (uintptr_t)(counts + cells);
    psi_view_extent(a, &lo, &hi);
    if (clo < hi && lo < chi)
        return psi_fail(PIXSUM_ERR_ALIASING, "counts overlaps image a");
    psi_view_extent(b, &lo, &hi);
    if (clo < hi && lo < chi)
        return psi_fail(PIXSUM_ERR_ALIASING, "counts overlaps image b");

    joint_plan plan = {.a = a, .b = b, .pa = &pa, .pb = &pb, .cells = cells};
    size_t rows = a->height * a->depth;
    int threads = joint_threads(ctx, a, cells);
    int k = joint_subtables(cells);
    uint32_t **tables = calloc((size_t)threads, sizeof *tables);
    st = tables ? PIXSUM_OK : psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate the joint tables");
    for (int t = 0; st == PIXSUM_OK && t < threads; t++)
        if (!(tables[t] = calloc((size_t)k * (cells + 1), sizeof **tables)))
            st = psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate a %zu-cell joint table", cells);
    if (st == PIXSUM_OK)
        st = joint_plan_init(&plan);
    if (st != PIXSUM_OK) {
        for (int t = 0; tables && t < threads; t++)
            free(tables[t]);
        free(tables);
        return st;
    }
    /* Nothing can fail from here on: counts is written. */
    memset(counts, 0, cells * sizeof *counts);
    uint64_t excluded = 0;
    if (threads == 1) {
        count_rows(&plan, 0, rows, tables[0], k, counts, &excluded);
    } else {
#ifdef PIXSUM_HAVE_OPENMP
#pragma omp parallel for num_threads(threads) schedule(static, 1)
#endif
        for (int t = 0; t < threads; t++)
            count_rows(&plan, rows * (size_t)t / (size_t)threads,
                       rows * (size_t)(t + 1) / (size_t)threads, tables[t], k, counts,
                       &excluded);
    }
    /* the tables' remainders (integer sums: the order does not change them) */
    for (int t = 0; t < threads; t++) {
        flush_tables(tables[t], k, cells, counts, &excluded);
        free(tables[t]);
    }
    free(tables);
    joint_plan_free(&plan);
    uint64_t pairs = 0;
    for (size_t i = 0; i < cells; i++)
        pairs += counts[i];
    if (info) {
        info->bins_a = pa.b.bins;
        info->bins_b = pb.b.bins;
        info->lo_a = pa.b.lo;
        info->hi_a = pa.b.hi;
        info->lo_b = pb.b.lo;
        info->hi_b = pb.b.hi;
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

/*
 * ihist.c - integral histograms (Porikli 2005): one summed-area table per bin,
 * stored bin-innermost with a zero leading row and column,
 *   T(x, y)[c][b] = number of samples of channel c in bin b over [0, x) x [0, y),
 * so that the histogram of any rectangle is 4 reads per bin. Counters are u32
 * when the image has fewer than 2^32 pixels (exact: no count can exceed the
 * pixel count), else u64. The memory cost is computed with overflow checks and
 * compared with the caller's limit before anything is allocated; a rebuild
 * for the next image reuses the table's memory when the new one fits. The build
 * splits the columns between the context's threads; batches of queries split
 * the boxes, with the corners of later boxes prefetched.
 */
#include "hist_classify.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

struct pixsum_ihist {
    size_t width, height, channels, bins;
    size_t cell;           /* counters per table position: channels x bins */
    int wide;              /* 1: u64 counters, 0: u32 */
    void *table;           /* (height + 1) x (width + 1) x cell counters */
    size_t capacity;       /* bytes allocated at table (a rebuild may use fewer) */
    pixsum_hist_info info; /* bins, range and whole-image totals */
};

/* Computes the cost; fills p. */
static int ihist_cost(const pixsum_view *in, const pixsum_hist_spec *spec, psi_hist_params *p,
                      size_t *bytes, int *wide)
{
    int st = psi_hist_prepare_host(in, spec, 65536, p);
    if (st != PIXSUM_OK)
        return st;
    if (in->depth != 1)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "integral histograms are for 2-D images");
    *wide = (uint64_t)in->width * in->height >= ((uint64_t)1 << 32);
    size_t e = *wide ? 8 : 4, total = e;
    size_t factors[4] = {in->width + 1, in->height + 1, in->channels, p->b.bins};
    for (int i = 0; i < 4; i++) {
        if (factors[i] && total > SIZE_MAX / factors[i])
            return psi_fail(PIXSUM_ERR_TOO_LARGE,
                            "an integral histogram of %zux%zu x%zu with %zu bins does not fit "
                            "in the address space", in->width, in->height, in->channels,
                            (size_t)p->b.bins);
        total *= factors[i];
    }
    *bytes = total;
    return PIXSUM_OK;
}

int pixsum_ihist_bytes(const pixsum_view *in, const pixsum_hist_spec *spec, size_t *bytes)
{
    psi_clear_error();
    if (!in || !bytes)
        return psi_fail(PIXSUM_ERR_NULL, "image or bytes is NULL");
    psi_hist_params p;
    int wide = 0;
    return ihist_cost(in, spec, &p, bytes, &wide);
}

/* One thread's share of the build: the table positions of columns [x0, x1)
 * (and column 0 when x0 is 0) on every row. Threads split the columns, so no
 * table entry is written twice and none waits for another thread: position
 * (x, y) needs the row above (written by the same thread) and the counts of
 * row y left of x, which a thread takes for [0, x0) from its own pass over
 * those samples. `cls` holds x1 x channels classes; `row` the running counts
 * of the row (cell entries, u32 for a u32 table, else u64). The samples are
 * counted into *tot (pixels, below, above, nan) for [x0, x1) only. */
typedef struct ihist_build {
    const pixsum_view *in;
    const psi_hist_params *p;
    const psi_classifier *k;
    char *table;
    size_t pitch, cell;
    int wide;
} ihist_build;

/* Counts class k of channel c in the row counts when it is a bin (k < bins);
 * false for the below / above / NaN classes. */
static inline bool count_in_row(const ihist_build *b, void *row, size_t c, uint32_t k)
{
    size_t bins = b->p->b.bins;
    if (k >= bins)
        return false;
    if (b->wide)
        ((uint64_t *)row)[c * bins + k]++;
    else
        ((uint32_t *)row)[c * bins + k]++;
    return true;
}

static void build_columns(const ihist_build *b, size_t x0, size_t x1, uint32_t *cls, void *row,
                          pixsum_hist_info *tot)
{
    const pixsum_view *in = b->in;
    size_t ch = in->channels, bins = b->p->b.bins, cell = b->cell;
    size_t e = b->wide ? 8 : 4;
    for (size_t y = 0; y < in->height; y++) {
        char *dst = b->table + (y + 1) * b->pitch;
        const char *up = dst - b->pitch;
        if (x0 == 0)
            memset(dst, 0, cell * e); /* column 0 */
        memset(row, 0, cell * e);
        psi_classify_row(b->k, psi_row(in, y, 0), x1 * ch, cls);
        const uint8_t *m = b->p->mask.data ? psi_row(&b->p->mask, y, 0) : NULL;
        /* the row's counts left of the thread's columns (their totals are the
         * owning thread's) */
        for (size_t x = 0; x < x0; x++)
            if (!m || m[x])
                for (size_t c = 0; c < ch; c++)
                    count_in_row(b, row, c, cls[x * ch + c]);
        for (size_t x = x0; x < x1; x++) {
            if (!m || m[x]) {
                tot->pixels++;
                for (size_t c = 0; c < ch; c++) {
                    uint32_t k = cls[x * ch + c];
                    if (count_in_row(b, row, c, k))
                        continue;
                    if (k == bins + PSI_HIST_BELOW)
                        tot->below[c]++;
                    else if (k == bins + PSI_HIST_ABOVE)
                        tot->above[c]++;
                    else
                        tot->nan[c]++;
                }
            }
            size_t off = (x + 1) * cell * e;
            if (b->wide) {
                uint64_t *d = (uint64_t *)(dst + off);
                const uint64_t *u = (const uint64_t *)(up + off);
                const uint64_t *r = row;
                for (size_t i = 0; i < cell; i++)
                    d[i] = u[i] + r[i];
            } else {
                uint32_t *d = (uint32_t *)(dst + off);
                const uint32_t *u = (const uint32_t *)(up + off);
                const uint32_t *r = row;
                for (size_t i = 0; i < cell; i++)
                    d[i] = u[i] + r[i];
            }
        }
    }
}

/* Asks Linux for transparent huge pages over the 2 MiB-aligned part of a large
 * table. Every 4 KiB page of a fresh table is otherwise faulted in one by one
 * (33,000 faults for a 134 MB table, about a third of its build on the 2-core
 * VM); where THP is off or "never" the advice does nothing. */
static void advise_huge_pages(void *table, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t first = ((uintptr_t)table + huge - 1) & ~(huge - 1);
    uintptr_t end = ((uintptr_t)table + bytes) & ~(huge - 1);
    if (end > first)
        (void)madvise((void *)first, end - first, MADV_HUGEPAGE);
#else
    (void)table, (void)bytes;
#endif
}

/* The table, aligned so that a cell of a multiple of 64 bytes spans whole
 * cache lines (a query then reads 2 lines per corner at 32 u32 bins, not 3),
 * and large tables to 2 MiB, so that huge pages cover all of them. */
static void *alloc_table(size_t bytes, size_t *capacity)
{
    const size_t huge = (size_t)2 << 20;
    size_t align = bytes >= 2 * huge ? huge : 64;
    if (bytes > SIZE_MAX - align)
        return NULL;
    *capacity = (bytes + align - 1) / align * align;
    return aligned_alloc(align, *capacity);
}

/* Threads for the build: the context's, at most one per 256 columns and one
 * per 4 MiB of table (below that, starting them costs more than they save). */
static int build_threads(const pixsum_ctx *ctx, const pixsum_view *in, size_t bytes)
{
#ifdef PIXSUM_HAVE_OPENMP
    size_t t = (size_t)psi_ctx_threads(ctx);
    if (t > in->width / 256)
        t = in->width / 256;
    if (t > bytes / (4u << 20))
        t = bytes / (4u << 20);
    return t < 1 ? 1 : (int)t;
#else
    (void)ctx, (void)in, (void)bytes;
    return 1;
#endif
}

/* Builds the table of `in` under p (cost `bytes`, counters u64 when `wide`)
 * into `table` and, on success, sets every field of *ih but `capacity` (the
 * caller's), `table` included. The scratch and the classifier are set up
 * before the first write: on failure `table` and *ih are untouched. */
static int build_into(const pixsum_ctx *ctx, const pixsum_view *in, const psi_hist_params *p,
                      int wide, size_t bytes, void *table, pixsum_ihist *ih)
{
    int threads = build_threads(ctx, in, bytes);
    size_t cell = in->channels * p->b.bins, e = wide ? 8 : 4;
    size_t cls_len = in->width * in->channels;
    /* Each thread's row counts and totals on cache lines of their own: they
     * are written for every sample (2-core VM, 1024^2 u8, 32 bins: the
     * 2-thread rebuild took 39-41 ms with them on shared lines, 22 after). */
    const size_t line = 64, row_stride = (cell * e + line - 1) / line * line;
    const size_t tot_stride = (sizeof(pixsum_hist_info) + line - 1) / line * line;
    char *rows = aligned_alloc(line, (size_t)threads * row_stride);
    uint32_t *cls = malloc((size_t)threads * cls_len * sizeof *cls);
    char *tot_mem = aligned_alloc(line, (size_t)threads * tot_stride);
    if (rows)
        memset(rows, 0, (size_t)threads * row_stride);
    if (tot_mem)
        memset(tot_mem, 0, (size_t)threads * tot_stride);
#define TOT(t) ((pixsum_hist_info *)(tot_mem + (size_t)(t) * tot_stride))
    psi_classifier k;
    int st = rows && cls && tot_mem ? psi_classifier_init(&k, in->type, p, true)
                                : psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate the scratch "
                                           "rows of an integral histogram");
    if (st != PIXSUM_OK) {
        free(rows);
        free(cls);
        free(tot_mem);
        return st;
    }
    advise_huge_pages(table, bytes);
    size_t pitch = (in->width + 1) * cell * e; /* bytes per table row */
    memset(table, 0, pitch);                   /* row 0 */
    ihist_build b = {in, p, &k, table, pitch, cell, wide};
#ifdef PIXSUM_HAVE_OPENMP
#pragma omp parallel for num_threads(threads) schedule(static, 1)
#endif
    for (int t = 0; t < threads; t++)
        build_columns(&b, in->width * (size_t)t / (size_t)threads,
                      in->width * (size_t)(t + 1) / (size_t)threads, cls + (size_t)t * cls_len,
                      rows + (size_t)t * row_stride, TOT(t));
    psi_classifier_free(&k);
    pixsum_hist_info *info = &ih->info;
    memset(info, 0, sizeof *info);
    info->bins = p->b.bins;
    info->channels = in->channels;
    info->lo = p->b.lo;
    info->hi = p->b.hi;
    for (int t = 0; t < threads; t++) {
        info->pixels += TOT(t)->pixels;
        for (size_t c = 0; c < in->channels; c++) {
            info->below[c] += TOT(t)->below[c];
            info->above[c] += TOT(t)->above[c];
            info->nan[c] += TOT(t)->nan[c];
        }
    }
#undef TOT
    free(rows);
    free(cls);
    free(tot_mem);
    ih->width = in->width;
    ih->height = in->height;
    ih->channels = in->channels;
    ih->bins = p->b.bins;
    ih->cell = cell;
    ih->wide = wide;
    ih->table = table;
    /* in_range: the table's last position holds the whole image's counts */
    const char *last = (const char *)table + in->height * pitch + in->width * cell * e;
    for (size_t c = 0; c < in->channels; c++)
        for (size_t i = 0; i < p->b.bins; i++)
            info->in_range[c] += wide ? ((const uint64_t *)last)[c * p->b.bins + i]
                                      : ((const uint32_t *)last)[c * p->b.bins + i];
    return PIXSUM_OK;
}

/* The cost of `in` under spec checked against max_bytes (0: the default). */
static int ihist_cost_within(const pixsum_view *in, const pixsum_hist_spec *spec,
                             size_t max_bytes, psi_hist_params *p, size_t *bytes, int *wide)
{
    int st = ihist_cost(in, spec, p, bytes, wide);
    if (st != PIXSUM_OK)
        return st;
    size_t limit = max_bytes ? max_bytes : PIXSUM_IHIST_DEFAULT_MAX_BYTES;
    if (*bytes > limit)
        return psi_fail(PIXSUM_ERR_TOO_LARGE,
                        "an integral histogram of %zux%zu x%zu with %zu bins needs %zu bytes, "
                        "above the limit of %zu bytes (raise max_bytes or use fewer bins)",
                        in->width, in->height, in->channels, (size_t)p->b.bins, *bytes, limit);
    return PIXSUM_OK;
}

int pixsum_ihist_new(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_hist_spec *spec,
                     size_t max_bytes, pixsum_ihist **out)
{
    psi_clear_error();
    if (out)
        *out = NULL;
    if (!in || !out)
        return psi_fail(PIXSUM_ERR_NULL, "image or out is NULL");
    psi_hist_params p;
    size_t bytes = 0, capacity = 0;
    int wide = 0;
    int st = ihist_cost_within(in, spec, max_bytes, &p, &bytes, &wide);
    if (st != PIXSUM_OK)
        return st;
    pixsum_ihist *ih = calloc(1, sizeof *ih);
    void *table = ih ? alloc_table(bytes, &capacity) : NULL;
    st = table ? build_into(ctx, in, &p, wide, bytes, table, ih)
               : psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu bytes", bytes);
    if (st != PIXSUM_OK) {
        free(ih);
        free(table);
        return st;
    }
    ih->capacity = capacity;
    *out = ih;
    return PIXSUM_OK;
}

int pixsum_ihist_rebuild(pixsum_ctx *ctx, pixsum_ihist *ih, const pixsum_view *in,
                         const pixsum_hist_spec *spec, size_t max_bytes)
{
    psi_clear_error();
    if (!ih || !in)
        return psi_fail(PIXSUM_ERR_NULL, "integral histogram or image is NULL");
    psi_hist_params p;
    size_t bytes = 0, capacity = ih->capacity;
    int wide = 0;
    int st = ihist_cost_within(in, spec, max_bytes, &p, &bytes, &wide);
    if (st != PIXSUM_OK)
        return st;
    void *old = ih->table;
    void *table = bytes <= ih->capacity ? old : alloc_table(bytes, &capacity);
    if (!table)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu bytes", bytes);
    st = build_into(ctx, in, &p, wide, bytes, table, ih);
    if (st != PIXSUM_OK) {
        if (table != old)
            free(table);
        return st;
    }
    if (table != old)
        free(old);
    ih->capacity = capacity;
    return PIXSUM_OK;
}

int pixsum_ihist_info(const pixsum_ihist *ih, pixsum_hist_info *info)
{
    psi_clear_error();
    if (!ih || !info)
        return psi_fail(PIXSUM_ERR_NULL, "integral histogram or info is NULL");
    *info = ih->info;
    return PIXSUM_OK;
}

/* Checks rectangle [x, x+w) x [y, y+h) of a single query against the image
 * (batches check their boxes with psi_check_box()). */
static int check_rect(const pixsum_ihist *ih, size_t x, size_t y, size_t w, size_t h)
{
    if (w == 0 || h == 0)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "the rectangle is empty (%zux%zu)", w, h);
    if (x > ih->width || w > ih->width - x || y > ih->height || h > ih->height - y)
        return psi_fail(PIXSUM_ERR_OUT_OF_RANGE,
                        "rectangle [%zu, %zu+%zu) x [%zu, %zu+%zu) is outside the %zux%zu image",
                        x, x, w, y, y, h, ih->width, ih->height);
    return PIXSUM_OK;
}

/* Offsets (in counters) of the four table positions of a checked rectangle:
 * [0] (x, y), [1] (x+w, y), [2] (x, y+h), [3] (x+w, y+h). */
static inline void rect_corners(const pixsum_ihist *ih, const pixsum_box *b, size_t at[4])
{
    size_t pitch = (ih->width + 1) * ih->cell;
    at[0] = b->y * pitch + b->x * ih->cell;
    at[1] = at[0] + b->w * ih->cell;
    at[2] = at[0] + b->h * pitch;
    at[3] = at[2] + b->w * ih->cell;
}

/* counts = T[3] - T[1] - T[2] + T[0] over one cell: exact in the counters'
 * modular width, since the true count fits it. */
static inline void rect_counts(const pixsum_ihist *ih, const size_t at[4],
                               uint64_t *restrict counts)
{
    const size_t cell = ih->cell;
    if (ih->wide) {
        const uint64_t *t = ih->table;
        const uint64_t *restrict a = t + at[0], *restrict b = t + at[1], *restrict c = t + at[2],
                                 *restrict d = t + at[3];
        for (size_t i = 0; i < cell; i++)
            counts[i] = d[i] - b[i] - c[i] + a[i];
    } else {
        const uint32_t *t = ih->table;
        const uint32_t *restrict a = t + at[0], *restrict b = t + at[1], *restrict c = t + at[2],
                                 *restrict d = t + at[3];
        for (size_t i = 0; i < cell; i++)
            counts[i] = (uint32_t)(d[i] - b[i] - c[i] + a[i]);
    }
}

int pixsum_ihist_query(const pixsum_ihist *ih, size_t x, size_t y, size_t w, size_t h,
                       uint64_t *counts)
{
    psi_clear_error();
    if (!ih || !counts)
        return psi_fail(PIXSUM_ERR_NULL, "integral histogram or counts is NULL");
    int st = check_rect(ih, x, y, w, h);
    if (st != PIXSUM_OK)
        return st;
    pixsum_box b = {x, y, 0, w, h, 1};
    size_t at[4];
    rect_corners(ih, &b, at);
    rect_counts(ih, at, counts);
    return PIXSUM_OK;
}

/* Boxes ahead of the current one whose corners are prefetched, and the most
 * cache lines prefetched per corner (the hardware prefetcher follows longer
 * cells). A table far larger than the cache costs four DRAM misses per box;
 * the prefetches gained 10-13% at 32 bins and 0-6% at 64 on the 2-core VM
 * (docs/benchmarks.md, twenty-second session). */
#define IHIST_PREFETCH_AHEAD 8
#define IHIST_PREFETCH_LINES 8

/* Always inlined: as a function of its own, GCC 12 finds it free of side
 * effects (prefetches do not count) and drops every call to it. */
static inline __attribute__((always_inline)) void prefetch_rect(const pixsum_ihist *ih,
                                                                 const pixsum_box *b)
{
    size_t at[4], e = ih->wide ? 8 : 4, bytes = ih->cell * e;
    if (bytes > IHIST_PREFETCH_LINES * 64)
        bytes = IHIST_PREFETCH_LINES * 64;
    rect_corners(ih, b, at);
    for (int k = 0; k < 4; k++) {
        const char *p = (const char *)ih->table + at[k] * e;
        const char *first = (const char *)((uintptr_t)p & ~(uintptr_t)63);
        for (const char *q = first; q < p + bytes; q += 64)
            __builtin_prefetch(q);
    }
}

/* Queries of boxes [i0, i1), all checked. */
static void query_range(const pixsum_ihist *ih, const pixsum_box *boxes, size_t i0, size_t i1,
                        uint64_t *counts)
{
    for (size_t i = i0; i < i1 && i < i0 + IHIST_PREFETCH_AHEAD; i++)
        prefetch_rect(ih, &boxes[i]);
    for (size_t i = i0; i < i1; i++) {
        if (i + IHIST_PREFETCH_AHEAD < i1)
            prefetch_rect(ih, &boxes[i + IHIST_PREFETCH_AHEAD]);
        size_t at[4];
        rect_corners(ih, &boxes[i], at);
        rect_counts(ih, at, counts + i * ih->cell);
    }
}

/* Threads for a batch: the context's, at most one per IHIST_QUERY_GRAIN
 * counters answered (2^18 counters are about 1 ms of queries on the 2-core
 * VM, far more than starting a thread team costs). */
#define IHIST_QUERY_GRAIN ((size_t)1 << 18)

static int query_threads(const pixsum_ctx *ctx, const pixsum_ihist *ih, size_t n)
{
#ifdef PIXSUM_HAVE_OPENMP
    size_t t = (size_t)psi_ctx_threads(ctx), work = n * ih->cell / IHIST_QUERY_GRAIN;
    if (t > work)
        t = work;
    return t < 1 ? 1 : (int)t;
#else
    (void)ctx, (void)ih, (void)n;
    return 1;
#endif
}

int pixsum_ihist_queries(const pixsum_ctx *ctx, const pixsum_ihist *ih,
                         const pixsum_box *boxes, size_t n, uint64_t *counts)
{
    psi_clear_error();
    if (!ih || (n && (!boxes || !counts)))
        return psi_fail(PIXSUM_ERR_NULL, "integral histogram, boxes or counts is NULL");
    if (n > SIZE_MAX / ih->cell / sizeof *counts)
        return psi_fail(PIXSUM_ERR_TOO_LARGE, "%zu boxes of %zu counters overflow size_t", n,
                        ih->cell);
    for (size_t i = 0; i < n; i++) {
        int st = psi_check_box(ih->width, ih->height, 1, &boxes[i], i);
        if (st != PIXSUM_OK)
            return st;
    }
    int threads = query_threads(ctx, ih, n);
#ifdef PIXSUM_HAVE_OPENMP
#pragma omp parallel for num_threads(threads) schedule(static, 1)
#endif
    for (int t = 0; t < threads; t++)
        query_range(ih, boxes, n * (size_t)t / (size_t)threads,
                    n * (size_t)(t + 1) / (size_t)threads, counts);
    return PIXSUM_OK;
}

void pixsum_ihist_free(pixsum_ihist *ih)
{
    if (!ih)
        return;
    free(ih->table);
    free(ih);
}

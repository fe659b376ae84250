/*
 * ihist.c - integral histograms (Porikli 2005): one summed-area table per bin,
 * stored bin-innermost with a zero leading row and column,
 *   T(x, y)[c][b] = number of samples of channel c in bin b over [0, x) x [0, y),
 * so that the histogram of any rectangle is 4 reads per bin. Counters are u32
 * when the image has fewer than 2^32 pixels (exact: no count can exceed the
 * pixel count), else u64. The memory cost is computed with overflow checks and
 * compared with the caller's limit before anything is allocated. The build
 * splits the columns between the context's threads.
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
    pixsum_hist_info info; /* bins, range and whole-image totals */
};

/* Computes the cost; fills p. */
static int ihist_cost(const pixsum_view *in, const pixsum_hist_spec *spec, psi_hist_params *p,
                      size_t *bytes, int *wide)
{
    int st = psi_hist_prepare(in, spec, 65536, p);
    if (st != PIXSUM_OK)
        return st;
    if (in->depth != 1)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "integral histograms are for 2-D images");
    *wide = (uint64_t)in->width * in->height >= ((uint64_t)1 << 32);
    size_t e = *wide ? 8 : 4, total = e;
    size_t factors[4] = {in->width + 1, in->height + 1, in->channels, p->bins};
    for (int i = 0; i < 4; i++) {
        if (factors[i] && total > SIZE_MAX / factors[i])
            return psi_fail(PIXSUM_ERR_TOO_LARGE,
                            "an integral histogram of %zux%zu x%zu with %zu bins does not fit "
                            "in the address space", in->width, in->height, in->channels,
                            p->bins);
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
    size_t bins = b->p->bins;
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
    size_t ch = in->channels, bins = b->p->bins, cell = b->cell;
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

int pixsum_ihist_new(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_hist_spec *spec,
                     size_t max_bytes, pixsum_ihist **out)
{
    psi_clear_error();
    if (out)
        *out = NULL;
    if (!in || !out)
        return psi_fail(PIXSUM_ERR_NULL, "image or out is NULL");
    psi_hist_params p;
    size_t bytes = 0;
    int wide = 0;
    int st = ihist_cost(in, spec, &p, &bytes, &wide);
    if (st != PIXSUM_OK)
        return st;
    size_t limit = max_bytes ? max_bytes : PIXSUM_IHIST_DEFAULT_MAX_BYTES;
    if (bytes > limit)
        return psi_fail(PIXSUM_ERR_TOO_LARGE,
                        "an integral histogram of %zux%zu x%zu with %zu bins needs %zu bytes, "
                        "above the limit of %zu bytes (raise max_bytes or use fewer bins)",
                        in->width, in->height, in->channels, p.bins, bytes, limit);
    int threads = build_threads(ctx, in, bytes);
    size_t cell = in->channels * p.bins, e = wide ? 8 : 4;
    size_t cls_len = in->width * in->channels;
    pixsum_ihist *ih = calloc(1, sizeof *ih);
    char *rows = calloc((size_t)threads, cell * e);
    uint32_t *cls = malloc((size_t)threads * cls_len * sizeof *cls);
    pixsum_hist_info *tot = calloc((size_t)threads, sizeof *tot);
    void *table = ih && rows && cls && tot ? malloc(bytes) : NULL;
    psi_classifier k;
    st = table ? psi_classifier_init(&k, in->type, &p, true)
               : psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu bytes", bytes);
    if (st != PIXSUM_OK) {
        free(ih);
        free(rows);
        free(cls);
        free(tot);
        free(table);
        return st;
    }
    advise_huge_pages(table, bytes);
    size_t pitch = (in->width + 1) * cell * e; /* bytes per table row */
    memset(table, 0, pitch);                   /* row 0 */
    ihist_build b = {in, &p, &k, table, pitch, cell, wide};
#ifdef PIXSUM_HAVE_OPENMP
#pragma omp parallel for num_threads(threads) schedule(static, 1)
#endif
    for (int t = 0; t < threads; t++)
        build_columns(&b, in->width * (size_t)t / (size_t)threads,
                      in->width * (size_t)(t + 1) / (size_t)threads, cls + (size_t)t * cls_len,
                      rows + (size_t)t * cell * e, &tot[t]);
    psi_classifier_free(&k);
    pixsum_hist_info *info = &ih->info;
    info->bins = p.bins;
    info->channels = in->channels;
    info->lo = p.lo;
    info->hi = p.hi;
    for (int t = 0; t < threads; t++) {
        info->pixels += tot[t].pixels;
        for (size_t c = 0; c < in->channels; c++) {
            info->below[c] += tot[t].below[c];
            info->above[c] += tot[t].above[c];
            info->nan[c] += tot[t].nan[c];
        }
    }
    free(rows);
    free(cls);
    free(tot);
    ih->width = in->width;
    ih->height = in->height;
    ih->channels = in->channels;
    ih->bins = p.bins;
    ih->cell = cell;
    ih->wide = wide;
    ih->table = table;
    /* in_range: the table's last position holds the whole image's counts */
    const char *last = (const char *)table + in->height * pitch + in->width * cell * e;
    for (size_t c = 0; c < in->channels; c++)
        for (size_t i = 0; i < p.bins; i++)
            info->in_range[c] += wide ? ((const uint64_t *)last)[c * p.bins + i]
                                      : ((const uint32_t *)last)[c * p.bins + i];
    *out = ih;
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

int pixsum_ihist_query(const pixsum_ihist *ih, size_t x, size_t y, size_t w, size_t h,
                       uint64_t *counts)
{
    psi_clear_error();
    if (!ih || !counts)
        return psi_fail(PIXSUM_ERR_NULL, "integral histogram or counts is NULL");
    if (w == 0 || h == 0)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "the rectangle is empty (%zux%zu)", w, h);
    if (x > ih->width || w > ih->width - x || y > ih->height || h > ih->height - y)
        return psi_fail(PIXSUM_ERR_OUT_OF_RANGE,
                        "rectangle [%zu, %zu+%zu) x [%zu, %zu+%zu) is outside the %zux%zu image",
                        x, x, w, y, y, h, ih->width, ih->height);
    size_t e = ih->wide ? 8 : 4, pitch = (ih->width + 1) * ih->cell;
    size_t i00 = y * pitch + x * ih->cell, i01 = y * pitch + (x + w) * ih->cell;
    size_t i10 = (y + h) * pitch + x * ih->cell, i11 = (y + h) * pitch + (x + w) * ih->cell;
    (void)e;
    if (ih->wide) {
        const uint64_t *t = ih->table;
        for (size_t i = 0; i < ih->cell; i++)
            counts[i] = t[i11 + i] - t[i01 + i] - t[i10 + i] + t[i00 + i];
    } else {
        const uint32_t *t = ih->table;
        for (size_t i = 0; i < ih->cell; i++)
            counts[i] = (uint32_t)(t[i11 + i] - t[i01 + i] - t[i10 + i] + t[i00 + i]);
    }
    return PIXSUM_OK;
}

void pixsum_ihist_free(pixsum_ihist *ih)
{
    if (!ih)
        return;
    free(ih->table);
    free(ih);
}

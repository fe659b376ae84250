/*
 * ihist.c - integral histograms (Porikli 2005): one summed-area table per bin,
 * stored bin-innermost with a zero leading row and column,
 *   T(x, y)[c][b] = number of samples of channel c in bin b over [0, x) x [0, y),
 * so that the histogram of any rectangle is 4 reads per bin. Counters are u32
 * when the image has fewer than 2^32 pixels (exact: no count can exceed the
 * pixel count), else u64. The memory cost is computed with overflow checks and
 * compared with the caller's limit before anything is allocated.
 */
#include "hist_classify.h"

#include <stdlib.h>
#include <string.h>

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

/* dst[i] = up[i] + row[i] for n counters of the table's width. */
static void add_row(void *dst, const void *up, const uint64_t *row, size_t n, int wide)
{
    if (wide) {
        uint64_t *d = dst;
        const uint64_t *u = up;
        for (size_t i = 0; i < n; i++)
            d[i] = u[i] + row[i];
    } else {
        uint32_t *d = dst;
        const uint32_t *u = up;
        for (size_t i = 0; i < n; i++)
            d[i] = u[i] + (uint32_t)row[i];
    }
}

int pixsum_ihist_new(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_hist_spec *spec,
                     size_t max_bytes, pixsum_ihist **out)
{
    (void)ctx;
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
    pixsum_ihist *ih = calloc(1, sizeof *ih);
    size_t cell = in->channels * p.bins, e = wide ? 8 : 4;
    uint64_t *row = calloc(cell, sizeof *row);
    uint32_t *cls = malloc(in->width * in->channels * sizeof *cls);
    void *table = ih && row && cls ? malloc(bytes) : NULL;
    psi_classifier k;
    st = table ? psi_classifier_init(&k, in->type, &p, true)
               : psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu bytes", bytes);
    if (st != PIXSUM_OK) {
        free(ih);
        free(row);
        free(cls);
        free(table);
        return st;
    }
    size_t pitch = (in->width + 1) * cell * e; /* bytes per table row */
    memset(table, 0, pitch);                   /* row 0 */
    pixsum_hist_info *info = &ih->info;
    info->bins = p.bins;
    info->channels = in->channels;
    info->lo = p.lo;
    info->hi = p.hi;
    for (size_t y = 0; y < in->height; y++) {
        char *dst = (char *)table + (y + 1) * pitch, *up = dst - pitch;
        memset(dst, 0, cell * e); /* column 0 */
        memset(row, 0, cell * sizeof *row);
        psi_classify_row(&k, psi_row(in, y, 0), in->width * in->channels, cls);
        const uint8_t *m = p.mask.data ? psi_row(&p.mask, y, 0) : NULL;
        for (size_t x = 0; x < in->width; x++) {
            if (!m || m[x]) {
                info->pixels++;
                for (size_t c = 0; c < in->channels; c++) {
                    uint32_t b = cls[x * in->channels + c];
                    if (b < p.bins)
                        row[c * p.bins + b]++;
                    else if (b == p.bins + PSI_HIST_BELOW)
                        info->below[c]++;
                    else if (b == p.bins + PSI_HIST_ABOVE)
                        info->above[c]++;
                    else
                        info->nan[c]++;
                }
            }
            size_t off = (x + 1) * cell * e;
            add_row(dst + off, up + off, row, cell, wide);
        }
    }
    psi_classifier_free(&k);
    free(row);
    free(cls);
    ih->width = in->width;
    ih->height = in->height;
    ih->channels = in->channels;
    ih->bins = p.bins;
    ih->cell = cell;
    ih->wide = wide;
    ih->table = table;
    /* in_range from the last table position. */
    uint64_t *all = calloc(cell, sizeof *all);
    if (all && pixsum_ihist_query(ih, 0, 0, ih->width, ih->height, all) == PIXSUM_OK)
        for (size_t c = 0; c < ih->channels; c++)
            for (size_t b = 0; b < ih->bins; b++)
                info->in_range[c] += all[c * ih->bins + b];
    free(all);
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

/*
 * box.c - box queries on integral tables: sums by the 4-corner (2-D) or
 * 8-corner (3-D) inclusion-exclusion formula, batches of boxes, and box mean and
 * variance from a sum table and a squared table.
 *
 * Integer tables are combined in modular 64-bit arithmetic, so a box sum is exact
 * whenever its true value fits the table type, even if the table wrapped.
 * Variance of integer tables uses the exact 128-bit identity
 *   n^2 var = n * sum(x^2) - (sum x)^2  (>= 0 by Cauchy-Schwarz),
 * so it cannot come out negative; float tables clamp rounding below zero.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

static bool table_type_ok(pixsum_type t)
{
    return t == PIXSUM_U32 || t == PIXSUM_U64 || t == PIXSUM_I64 || t == PIXSUM_F32 ||
           t == PIXSUM_F64;
}

static int check_table_view(const pixsum_view *t, const char *what)
{
    int st = pixsum_view_check(t);
    if (st != PIXSUM_OK)
        return psi_fail(st, "%s: %s", what, pixsum_last_error());
    if (!table_type_ok(t->type))
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "%s has type %s; tables are u32, u64, i64, f32 "
                        "or f64", what, pixsum_type_name(t->type));
    return PIXSUM_OK;
}

/* Checks a box against a table; *padded says how the table is laid out. */
static int check_box(const pixsum_view *t, int padded, const pixsum_box *b, size_t index)
{
    if (b->w == 0 || b->h == 0 || b->d == 0)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "box %zu is empty (%zux%zux%zu)", index, b->w,
                        b->h, b->d);
    size_t pad = padded ? 1 : 0;
    if (padded && (t->width < 2 || t->height < 2))
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "a padded table needs at least 2x2 entries");
    size_t iw = t->width - pad, ih = t->height - pad;
    size_t id = t->depth > 1 ? t->depth - pad : 1;
    if (b->x > iw || b->w > iw - b->x || b->y > ih || b->h > ih - b->y || b->z > id ||
        b->d > id - b->z)
        return psi_fail(PIXSUM_ERR_OUT_OF_RANGE,
                        "box %zu at (%zu,%zu,%zu) of size %zux%zux%zu is outside the "
                        "%zux%zux%zu image",
                        index, b->x, b->y, b->z, b->w, b->h, b->d, iw, ih, id);
    return PIXSUM_OK;
}

/* Table coordinates of a box's corners along one axis: the corner "hi" is the
 * last element inside, "lo" the last before it (absent in an inclusive table
 * when the box starts at 0). */
typedef struct axis {
    size_t hi, lo;
    bool has_lo;
} axis;

static axis make_axis(size_t start, size_t len, int padded)
{
    axis a;
    if (padded) {
        a.hi = start + len;
        a.lo = start;
        a.has_lo = true;
    } else {
        a.hi = start + len - 1;
        a.lo = start ? start - 1 : 0;
        a.has_lo = start > 0;
    }
    return a;
}

/* Signed sum over the 4 or 8 corners, per channel, in modular integers
 * (ints) or doubles (floats). */
static void corner_sums(const pixsum_view *t, int padded, const pixsum_box *b,
                        uint64_t *isum, double *fsum)
{
    axis ax[3] = {make_axis(b->x, b->w, padded), make_axis(b->y, b->h, padded),
                  t->depth > 1 ? make_axis(b->z, b->d, padded) : (axis){0, 0, false}};
    size_t ch = t->channels;
    for (size_t c = 0; c < ch; c++) {
        isum[c] = 0;
        fsum[c] = 0;
    }
    for (int corner = 0; corner < 8; corner++) {
        int lo_x = corner & 1, lo_y = (corner >> 1) & 1, lo_z = (corner >> 2) & 1;
        if ((lo_x && !ax[0].has_lo) || (lo_y && !ax[1].has_lo) || (lo_z && !ax[2].has_lo))
            continue;
        size_t x = lo_x ? ax[0].lo : ax[0].hi;
        size_t y = lo_y ? ax[1].lo : ax[1].hi;
        size_t z = lo_z ? ax[2].lo : ax[2].hi;
        bool negative = (lo_x + lo_y + lo_z) & 1;
        const void *row = psi_row(t, y, z);
        for (size_t c = 0; c < ch; c++) {
            size_t i = x * ch + c;
            if (psi_type_is_int(t->type)) {
                uint64_t v = psi_load_u64(t->type, row, i);
                isum[c] = negative ? isum[c] - v : isum[c] + v;
            } else {
                double v = psi_load_f64(t->type, row, i);
                fsum[c] = negative ? fsum[c] - v : fsum[c] + v;
            }
        }
    }
}

static int padded_of(const pixsum_ctx *ctx)
{
    return ctx ? ctx->padded : 0;
}

int pixsum_box_sums(const pixsum_ctx *ctx, const pixsum_view *table, const pixsum_box *boxes,
                    size_t n, void *sums)
{
    psi_clear_error();
    if (!table || (n && (!boxes || !sums)))
        return psi_fail(PIXSUM_ERR_NULL, "table, boxes or sums is NULL");
    int st = check_table_view(table, "table");
    if (st != PIXSUM_OK)
        return st;
    int padded = padded_of(ctx);
    size_t ch = table->channels;
    uint64_t isum[4];
    double fsum[4];
    for (size_t k = 0; k < n; k++) {
        if ((st = check_box(table, padded, &boxes[k], k)) != PIXSUM_OK)
            return st;
        corner_sums(table, padded, &boxes[k], isum, fsum);
        for (size_t c = 0; c < ch; c++) {
            if (psi_type_is_int(table->type))
                psi_store_u64(table->type, sums, k * ch + c, isum[c]);
            else
                psi_store_f64(table->type, sums, k * ch + c, fsum[c]);
        }
    }
    return PIXSUM_OK;
}

int pixsum_box_sum(const pixsum_ctx *ctx, const pixsum_view *table, const pixsum_box *box,
                   void *sums)
{
    if (!box) {
        psi_clear_error();
        return psi_fail(PIXSUM_ERR_NULL, "box is NULL");
    }
    return pixsum_box_sums(ctx, table, box, 1, sums);
}

/* A modular box sum of an integer table read back as that type's value. */
static double int_sum_value(pixsum_type t, uint64_t raw)
{
    if (t == PIXSUM_U32)
        return (double)(uint32_t)raw;
    if (t == PIXSUM_I64)
        return (double)(int64_t)raw;
    return (double)raw;
}

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 psi_u128;

/* Exact population variance of integers: (n*sq - sum^2) / n^2, never negative. */
static double exact_variance(uint64_t n, uint64_t sum_raw, bool sum_signed, uint64_t sq)
{
    uint64_t mag = sum_signed && (int64_t)sum_raw < 0 ? (uint64_t)0 - sum_raw : sum_raw;
    psi_u128 lhs = (psi_u128)n * sq, rhs = (psi_u128)mag * mag;
    if (lhs <= rhs)
        return 0.0;
    return (double)(lhs - rhs) / (double)n / (double)n;
}
#else
static double exact_variance(uint64_t n, uint64_t sum_raw, bool sum_signed, uint64_t sq)
{
    long double s = sum_signed ? (long double)(int64_t)sum_raw : (long double)sum_raw;
    long double v = ((long double)n * sq - s * s) / ((long double)n * n);
    return v > 0 ? (double)v : 0.0;
}
#endif

int pixsum_box_stats(const pixsum_ctx *ctx, const pixsum_view *sum_table,
                     const pixsum_view *sq_table, const pixsum_box *boxes, size_t n,
                     double *mean, double *variance)
{
    psi_clear_error();
    if (!sum_table || (variance && !sq_table) || (n && !boxes))
        return psi_fail(PIXSUM_ERR_NULL, "table or boxes is NULL");
    int st = check_table_view(sum_table, "sum table");
    if (st != PIXSUM_OK)
        return st;
    if (variance) {
        if ((st = check_table_view(sq_table, "squared table")) != PIXSUM_OK)
            return st;
        if (sq_table->width != sum_table->width || sq_table->height != sum_table->height ||
            sq_table->depth != sum_table->depth || sq_table->channels != sum_table->channels)
            return psi_fail(PIXSUM_ERR_BAD_SHAPE, "sum and squared tables differ in shape");
    }
    int padded = padded_of(ctx);
    size_t ch = sum_table->channels;
    bool exact = psi_type_is_int(sum_table->type) && sq_table && psi_type_is_int(sq_table->type);
    for (size_t k = 0; k < n; k++) {
        const pixsum_box *b = &boxes[k];
        if ((st = check_box(sum_table, padded, b, k)) != PIXSUM_OK)
            return st;
        uint64_t is[4], iq[4];
        double fs[4], fq[4];
        corner_sums(sum_table, padded, b, is, fs);
        if (variance)
            corner_sums(sq_table, padded, b, iq, fq);
        double count = (double)b->w * (double)b->h * (double)b->d;
        for (size_t c = 0; c < ch; c++) {
            double s = psi_type_is_int(sum_table->type) ? int_sum_value(sum_table->type, is[c])
                                                         : fs[c];
            double m = s / count;
            if (mean)
                mean[k * ch + c] = m;
            if (!variance)
                continue;
            double v;
            if (exact) {
                uint64_t q = sq_table->type == PIXSUM_U32 ? (uint32_t)iq[c] : iq[c];
                uint64_t sraw = sum_table->type == PIXSUM_U32 ? (uint32_t)is[c] : is[c];
                v = exact_variance((uint64_t)b->w * b->h * b->d, sraw,
                                   sum_table->type == PIXSUM_I64, q);
            } else {
                /* A modular integer box sum must be read back in the table's own
                 * type: a wrapped u32 table's difference is only right mod 2^32. */
                double q = psi_type_is_int(sq_table->type)
                               ? int_sum_value(sq_table->type, iq[c])
                               : fq[c];
                v = q / count - m * m;
                if (!(v > 0))
                    v = 0.0;
            }
            variance[k * ch + c] = v;
        }
    }
    return PIXSUM_OK;
}

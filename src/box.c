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

int psi_check_box(size_t iw, size_t ih, size_t id, const pixsum_box *b, size_t index)
{
    if (b->w == 0 || b->h == 0 || b->d == 0)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "box %zu is empty (%zux%zux%zu)", index, b->w,
                        b->h, b->d);
    if (b->x > iw || b->w > iw - b->x || b->y > ih || b->h > ih - b->y || b->z > id ||
        b->d > id - b->z)
        return psi_fail(PIXSUM_ERR_OUT_OF_RANGE,
                        "box %zu at (%zu,%zu,%zu) of size %zux%zux%zu is outside the "
                        "%zux%zux%zu image",
                        index, b->x, b->y, b->z, b->w, b->h, b->d, iw, ih, id);
    return PIXSUM_OK;
}

/* Checks a box against a table; *padded says how the table is laid out. */
static int check_box(const pixsum_view *t, int padded, const pixsum_box *b, size_t index)
{
    size_t pad = padded ? 1 : 0;
    if (padded && (t->width < 2 || t->height < 2))
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "a padded table needs at least 2x2 entries");
    return psi_check_box(t->width - pad, t->height - pad, t->depth > 1 ? t->depth - pad : 1, b,
                         index);
}

/* Table coordinates of a box's corners along one axis: the corner "hi" is the
 * last element inside, "lo" the last before it (absent in an inclusive table
 * when the box starts at 0). */
typedef struct axis {
    size_t hi, lo;
    bool has_lo;
} axis;

static inline axis make_axis(size_t start, size_t len, int padded)
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

/* ---- batched 2-D corner sums ------------------------------------------- */

/* Boxes whose corners are computed in one batch (the typed kernel writes their
 * sums into arrays of BOX_BATCH x channels). */
#define BOX_BATCH 256

/* Boxes ahead whose corners are prefetched: a table larger than the cache
 * costs up to four misses per box, and the loop body alone keeps too few of
 * them in flight (box_sum of random boxes on a 16 MB table: 259 ns per box). */
#define BOX_PREFETCH 8

/* The corner columns and rows of a 2-D box (make_axis() per axis): x0/y0 the
 * entry before the box, SIZE_MAX where an inclusive table has none (the box
 * starts at 0), x1/y1 its last. */
static inline void box_corners(const pixsum_box *b, int padded, size_t *x0, size_t *x1,
                               size_t *y0, size_t *y1)
{
    axis ax = make_axis(b->x, b->w, padded), ay = make_axis(b->y, b->h, padded);
    *x1 = ax.hi;
    *y1 = ay.hi;
    *x0 = ax.has_lo ? ax.lo : SIZE_MAX;
    *y0 = ay.has_lo ? ay.lo : SIZE_MAX;
}

/* n boxes (all valid) of a 2-D table of element type T into acc[k * ch + c]
 * (ACC: uint64_t, modular, for integer tables; double for floats), with the
 * corners added and subtracted in corner_sums()' order, so that float results
 * are identical. Boxes touching row or column 0 of an inclusive table go
 * through corner_sums(). */
#define PSI_BOX_KERNEL(NAME, T, ACC, IS_INT)                                              \
    static void NAME(const pixsum_view *t, int padded, const pixsum_box *b, size_t n,     \
                     ACC *acc)                                                            \
    {                                                                                     \
        size_t ch = t->channels;                                                          \
        for (size_t k = 0; k < n; k++) {                                                  \
            if (k + BOX_PREFETCH < n) {                                                   \
                size_t px0, px1, py0, py1;                                                \
                box_corners(&b[k + BOX_PREFETCH], padded, &px0, &px1, &py0, &py1);        \
                const T *q1 = psi_row(t, py1, 0);                                         \
                __builtin_prefetch(q1 + px1 * ch);                                        \
                if (px0 != SIZE_MAX)                                                      \
                    __builtin_prefetch(q1 + px0 * ch);                                    \
                if (py0 != SIZE_MAX) {                                                    \
                    const T *q0 = psi_row(t, py0, 0);                                     \
                    __builtin_prefetch(q0 + px1 * ch);                                    \
                    if (px0 != SIZE_MAX)                                                  \
                        __builtin_prefetch(q0 + px0 * ch);                                \
                }                                                                         \
            }                                                                             \
            size_t x0, x1, y0, y1;                                                        \
            box_corners(&b[k], padded, &x0, &x1, &y0, &y1);                               \
            if (x0 == SIZE_MAX || y0 == SIZE_MAX) {                                       \
                uint64_t is[4];                                                           \
                double fs[4];                                                             \
                corner_sums(t, padded, &b[k], is, fs);                                    \
                for (size_t c = 0; c < ch; c++)                                           \
                    acc[k * ch + c] = IS_INT ? (ACC)is[c] : (ACC)fs[c];                   \
                continue;                                                                 \
            }                                                                             \
            const T *r1 = psi_row(t, y1, 0), *r0 = psi_row(t, y0, 0);                     \
            for (size_t c = 0; c < ch; c++) {                                             \
                ACC v = 0;                                                                \
                v += (ACC)r1[x1 * ch + c];                                                \
                v -= (ACC)r1[x0 * ch + c];                                                \
                v -= (ACC)r0[x1 * ch + c];                                                \
                v += (ACC)r0[x0 * ch + c];                                                \
                acc[k * ch + c] = v;                                                      \
            }                                                                             \
        }                                                                                 \
    }

PSI_BOX_KERNEL(box_u32, uint32_t, uint64_t, 1)
PSI_BOX_KERNEL(box_u64, uint64_t, uint64_t, 1)
PSI_BOX_KERNEL(box_i64, int64_t, uint64_t, 1)
PSI_BOX_KERNEL(box_f32, float, double, 0)
PSI_BOX_KERNEL(box_f64, double, double, 0)

/* Sums of n valid boxes of any table: a 2-D table through the typed kernels
 * (integer sums into isum, float ones into fsum, k * ch + c), a 3-D one box by
 * box through corner_sums(). */
static void batch_sums(const pixsum_view *t, int padded, const pixsum_box *b, size_t n,
                       uint64_t *isum, double *fsum)
{
    if (t->depth > 1) {
        size_t ch = t->channels;
        for (size_t k = 0; k < n; k++)
            corner_sums(t, padded, &b[k], isum + k * ch, fsum + k * ch);
        return;
    }
    switch (t->type) {
    case PIXSUM_U32: box_u32(t, padded, b, n, isum); break;
    case PIXSUM_U64: box_u64(t, padded, b, n, isum); break;
    case PIXSUM_I64: box_i64(t, padded, b, n, isum); break;
    case PIXSUM_F32: box_f32(t, padded, b, n, fsum); break;
    default: box_f64(t, padded, b, n, fsum); break;
    }
}

/* Checks every box before anything is written (outputs stay untouched on
 * error). */
static int check_boxes(const pixsum_view *t, int padded, const pixsum_box *boxes, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        int st = check_box(t, padded, &boxes[k], k);
        if (st != PIXSUM_OK)
            return st;
    }
    return PIXSUM_OK;
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
    if ((st = check_boxes(table, padded, boxes, n)) != PIXSUM_OK)
        return st;
    size_t ch = table->channels;
    bool is_int = psi_type_is_int(table->type);
    uint64_t isum[BOX_BATCH * 4];
    double fsum[BOX_BATCH * 4];
    for (size_t k0 = 0; k0 < n; k0 += BOX_BATCH) {
        size_t m = n - k0 < BOX_BATCH ? n - k0 : BOX_BATCH;
        batch_sums(table, padded, boxes + k0, m, isum, fsum);
        for (size_t i = 0; i < m * ch; i++) {
            if (is_int)
                psi_store_u64(table->type, sums, k0 * ch + i, isum[i]);
            else
                psi_store_f64(table->type, sums, k0 * ch + i, fsum[i]);
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
    if ((st = check_boxes(sum_table, padded, boxes, n)) != PIXSUM_OK)
        return st;
    size_t ch = sum_table->channels;
    bool exact = psi_type_is_int(sum_table->type) && sq_table && psi_type_is_int(sq_table->type);
    uint64_t is_all[BOX_BATCH * 4], iq_all[BOX_BATCH * 4];
    double fs_all[BOX_BATCH * 4], fq_all[BOX_BATCH * 4];
    for (size_t k0 = 0; k0 < n; k0 += BOX_BATCH) {
        size_t m = n - k0 < BOX_BATCH ? n - k0 : BOX_BATCH;
        batch_sums(sum_table, padded, boxes + k0, m, is_all, fs_all);
        if (variance)
            batch_sums(sq_table, padded, boxes + k0, m, iq_all, fq_all);
        for (size_t j = 0; j < m; j++) {
            size_t k = k0 + j;
            const pixsum_box *b = &boxes[k];
            const uint64_t *is = is_all + j * ch, *iq = iq_all + j * ch;
            const double *fs = fs_all + j * ch, *fq = fq_all + j * ch;
            double count = (double)b->w * (double)b->h * (double)b->d;
            for (size_t c = 0; c < ch; c++) {
                double s = psi_type_is_int(sum_table->type)
                               ? int_sum_value(sum_table->type, is[c])
                               : fs[c];
                double mval = s / count;
                if (mean)
                    mean[k * ch + c] = mval;
                if (!variance)
                    continue;
                double v;
                if (exact) {
                    uint64_t q = sq_table->type == PIXSUM_U32 ? (uint32_t)iq[c] : iq[c];
                    uint64_t sraw = sum_table->type == PIXSUM_U32 ? (uint32_t)is[c] : is[c];
                    v = exact_variance((uint64_t)b->w * b->h * b->d, sraw,
                                       sum_table->type == PIXSUM_I64, q);
                } else {
                    /* A modular integer box sum must be read back in the table's
                     * own type: a wrapped u32 table's difference is only right
                     * mod 2^32. */
                    double q = psi_type_is_int(sq_table->type)
                                   ? int_sum_value(sq_table->type, iq[c])
                                   : fq[c];
                    v = q / count - mval * mval;
                    if (!(v > 0))
                        v = 0.0;
                }
                variance[k * ch + c] = v;
            }
        }
    }
    return PIXSUM_OK;
}

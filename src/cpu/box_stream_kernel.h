/*
 * box_stream_kernel.h - the streamed box filter of pixsum_box_filter(),
 * written once and compiled per ISA: box_stream.c (baseline),
 * box_stream_avx2.c and box_stream_avx512.c define PSI_BOX_FN and include
 * this file, so the compiler vectorises the same loops for each target.
 *
 * Per output row: the running column sums (one per sample of an extended
 * row of W + kw - 1 pixels) are updated by adding the row entering the window
 * and subtracting the row leaving it; the border columns are filled from the
 * interior ones (the border maps columns independently of rows); a
 * horizontal sum over kw columns gives each window's sum; the statistic is
 * written straight to the output row. No integral table: the input is read
 * once and the output written once. Integer sums are modular (u32 or u64),
 * exact for every window sum that fits, which validation guarantees; float
 * sums are f64 of samples shifted by the first sample of each channel.
 * AVX-512 builds run the common requests in one pass per row instead
 * (box_stream_fused.h); the rest, and other ISAs, take these passes.
 */
#include "box_stream.h"
#include "../border_rule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef PSI_BOX_FN
#error "define PSI_BOX_FN before including box_stream_kernel.h"
#endif

typedef unsigned __int128 bx_u128;

/* Index in [0, len) of the extended index r under border b, or -1 for a
 * position outside the image under constant and shrink borders: the one
 * rule of src/border_rule.h. */
static inline ptrdiff_t bx_map(ptrdiff_t r, ptrdiff_t len, pixsum_border b)
{
    return (ptrdiff_t)psi_border_index((long long)r, (long long)len, (int)b);
}

/* Number of positions of [start, start + k) inside [0, len). */
static inline size_t bx_inside(ptrdiff_t start, size_t k, size_t len)
{
    ptrdiff_t a = start < 0 ? 0 : start, b = start + (ptrdiff_t)k;
    if (b > (ptrdiff_t)len)
        b = (ptrdiff_t)len;
    return b > a ? (size_t)(b - a) : 0;
}

/* Runs BODY with T the C type of input type `t`. */
#define BX_INPUT(t, ...)                                                                   \
    switch (t) {                                                                           \
    case PIXSUM_U8: { typedef uint8_t T; __VA_ARGS__ } break;                              \
    case PIXSUM_U16: { typedef uint16_t T; __VA_ARGS__ } break;                            \
    case PIXSUM_I16: { typedef int16_t T; __VA_ARGS__ } break;                             \
    case PIXSUM_I32: { typedef int32_t T; __VA_ARGS__ } break;                             \
    case PIXSUM_U32: { typedef uint32_t T; __VA_ARGS__ } break;                            \
    case PIXSUM_F32: { typedef float T; __VA_ARGS__ } break;                               \
    case PIXSUM_F64: { typedef double T; __VA_ARGS__ } break;                              \
    default: break;                                                                        \
    }

/* The running sums of one call. */
typedef struct bx_state {
    const psi_box_plan *p;
    pixsum_type t;       /* input type */
    size_t C, W, H, OW, OH, Le, n;
    void *ext;           /* Le x C accumulators (interior at column ax) */
    void *extq;          /* Le x C squares: u64 or f64 */
    void *hs;            /* OW x C window sums */
    void *hq;            /* OW x C window sums of squares */
    double *kb;          /* W x C shifts (f64 accumulation) */
    double K[4];
    int small_sums;      /* every window sum and n are below 2^24 (exact in float) */
    uint32_t *pre;       /* Le + 1 prefix sums (u32, one channel) */
    size_t *iw;          /* OW: image columns inside each window */
    ptrdiff_t *colmap;   /* Le: source column of each extended column, -1 = none */
} bx_state;

/* ext (and extq) interior += w * row_a - w * row_b, either row may be NULL. */
static void bx_vertical(const bx_state *s, const void *ra, const void *rb, uint64_t w)
{
    const psi_box_plan *p = s->p;
    size_t m = s->W * s->C, off = p->spec.border == PIXSUM_BORDER_VALID ? 0 : p->ax * s->C;
    int sq = p->squares;
    if (p->acc == PSI_BOX_ACC_F64) {
        double *e = (double *)s->ext + off, *q = sq ? (double *)s->extq + off : NULL;
        const double *kb = s->kb, dw = (double)w;
        BX_INPUT(s->t, {
            const T *a = ra, *b = rb;
            if (a && b && w == 1) {
                for (size_t i = 0; i < m; i++)
                    e[i] += (double)a[i] - (double)b[i];
                if (q)
                    for (size_t i = 0; i < m; i++) {
                        double da = (double)a[i] - kb[i], db = (double)b[i] - kb[i];
                        q[i] += da * da - db * db;
                    }
            } else {
                if (a)
                    for (size_t i = 0; i < m; i++) {
                        double da = (double)a[i] - kb[i];
                        e[i] += dw * da;
                        if (q)
                            q[i] += dw * (da * da);
                    }
                if (b)
                    for (size_t i = 0; i < m; i++) {
                        double db = (double)b[i] - kb[i];
                        e[i] -= dw * db;
                        if (q)
                            q[i] -= dw * (db * db);
                    }
            }
        })
        return;
    }
    uint64_t *q = sq ? (uint64_t *)s->extq + off : NULL;
    if (p->acc == PSI_BOX_ACC_U32) {
        uint32_t *e = (uint32_t *)s->ext + off, w32 = (uint32_t)w;
        BX_INPUT(s->t, {
            const T *a = ra, *b = rb;
            if (a && b && w == 1) {
                for (size_t i = 0; i < m; i++)
                    e[i] += (uint32_t)a[i] - (uint32_t)b[i];
            } else {
                if (a)
                    for (size_t i = 0; i < m; i++)
                        e[i] += w32 * (uint32_t)a[i];
                if (b)
                    for (size_t i = 0; i < m; i++)
                        e[i] -= w32 * (uint32_t)b[i];
            }
        })
    } else {
        uint64_t *e = (uint64_t *)s->ext + off;
        BX_INPUT(s->t, {
            const T *a = ra, *b = rb;
            if (a)
                for (size_t i = 0; i < m; i++)
                    e[i] += w * (uint64_t)a[i];
            if (b)
                for (size_t i = 0; i < m; i++)
                    e[i] -= w * (uint64_t)b[i];
        })
    }
    if (q) {
        BX_INPUT(s->t, {
            const T *a = ra, *b = rb;
            if (a)
                for (size_t i = 0; i < m; i++) {
                    uint64_t v = (uint64_t)a[i];
                    q[i] += w * (v * v);
                }
            if (b)
                for (size_t i = 0; i < m; i++) {
                    uint64_t v = (uint64_t)b[i];
                    q[i] -= w * (v * v);
                }
        })
    }
}

/* Fills the border columns [0, ax) and [ax + W, Le) of an extended row of E
 * elements from the interior columns (or zeros). */
#define BX_FILL(E, buf)                                                                    \
    do {                                                                                   \
        E *x_ = (E *)(buf);                                                                \
        for (size_t j = 0; j < s->Le; j++) {                                               \
            if (j == p->ax && s->W < s->Le) {                                              \
                j = p->ax + s->W - 1;                                                      \
                continue;                                                                  \
            }                                                                              \
            ptrdiff_t src = s->colmap[j];                                                  \
            for (size_t c = 0; c < C; c++)                                                 \
                x_[j * C + c] = src < 0 ? (E)0 : x_[(p->ax + (size_t)src) * C + c];        \
        }                                                                                  \
    } while (0)

/* dst[x * C + c] = sum of src[(x + k) * C + c] over k < kw, for x < OW.
 * Small windows: kw vectorised passes. Larger ones: a running sum per
 * channel, the row cut into 8 segments whose independent chains are
 * interleaved (the chain of one add per sample is latency-bound). One
 * channel of u32 sums uses vectorised prefix sums instead (bx_hsum_prefix_u32). */
#define BX_HK(E, K)                                                                        \
    for (size_t i = 0; i < m_; i++) {                                                      \
        E t_ = src_[i];                                                                    \
        for (size_t k = 1; k < (K); k++)                                                   \
            t_ += src_[i + k * C];                                                         \
        dst_[i] = t_;                                                                      \
    }
#define BX_HSUM(E, srcp, dstp)                                                             \
    do {                                                                                   \
        const E *src_ = (const E *)(srcp);                                                 \
        E *dst_ = (E *)(dstp);                                                             \
        size_t kw_ = p->spec.kw, m_ = s->OW * C, ow_ = s->OW;                              \
        if (kw_ <= 8) { /* one pass with kw a constant: unrolled and vectorised */        \
            switch (kw_) {                                                                 \
            case 1: memcpy(dst_, src_, m_ * sizeof(E)); break;                             \
            case 2: BX_HK(E, 2); break;                                                    \
            case 3: BX_HK(E, 3); break;                                                    \
            case 4: BX_HK(E, 4); break;                                                    \
            case 5: BX_HK(E, 5); break;                                                    \
            case 6: BX_HK(E, 6); break;                                                    \
            case 7: BX_HK(E, 7); break;                                                    \
            default: BX_HK(E, 8); break;                                                   \
            }                                                                              \
            break;                                                                         \
        }                                                                                  \
        size_t ns_ = ow_ >= 512 ? 8 : 1, L_ = ow_ / ns_;                                   \
        const E *add_ = src_ + (kw_ - 1) * C;                                              \
        for (size_t c = 0; c < C; c++) {                                                   \
            E a_[8];                                                                       \
            for (size_t j = 0; j < ns_; j++) {                                             \
                E acc_ = 0;                                                                \
                const E *w_ = src_ + j * L_ * C + c;                                       \
                for (size_t k = 0; k < kw_; k++)                                           \
                    acc_ += w_[k * C];                                                     \
                a_[j] = acc_;                                                              \
                dst_[j * L_ * C + c] = acc_;                                               \
            }                                                                              \
            if (ns_ == 8) {                                                                \
                for (size_t t = 1; t < L_; t++)                                            \
                    for (size_t j = 0; j < 8; j++) {                                       \
                        size_t i = (j * L_ + t) * C + c;                                   \
                        a_[j] += add_[i] - src_[i - C];                                    \
                        dst_[i] = a_[j];                                                   \
                    }                                                                      \
            }                                                                              \
            E last_ = a_[ns_ - 1];                                                         \
            for (size_t x = ns_ == 8 ? 8 * L_ : 1; x < ow_; x++) {                         \
                size_t i = x * C + c;                                                      \
                last_ += add_[i] - src_[i - C];                                            \
                dst_[i] = last_;                                                           \
            }                                                                              \
        }                                                                                  \
    } while (0)

/* Inclusive prefix sums (modular) of src[0, n) into dst, 64 elements at a
 * time: a log-step scan inside each of four 16-lane vectors (independent),
 * then each vector gets the running carry plus the totals of the vectors
 * before it, so the loop-carried chain is one vector add per 64 elements. */
typedef uint32_t bx_v16u __attribute__((vector_size(64)));
/* v = its inclusive scan (z: a zero vector); BX_LAST16: lane 15 everywhere.
 * Macros, not functions: 64-byte vector arguments change the ABI between
 * the per-ISA builds (-Wpsabi). */
#define BX_SCAN16(v, z)                                                                    \
    do {                                                                                   \
        (v) += __builtin_shufflevector(z, v, 0, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,  \
                                       27, 28, 29, 30);                                    \
        (v) += __builtin_shufflevector(z, v, 0, 1, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,   \
                                       26, 27, 28, 29);                                    \
        (v) += __builtin_shufflevector(z, v, 0, 1, 2, 3, 16, 17, 18, 19, 20, 21, 22, 23, 24, \
                                       25, 26, 27);                                        \
        (v) += __builtin_shufflevector(z, v, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, \
                                       22, 23);                                            \
    } while (0)
#define BX_LAST16(v)                                                                       \
    __builtin_shufflevector(v, v, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15,  \
                            15, 15)

static void bx_prefix_u32(const uint32_t *src, uint32_t *dst, size_t n)
{
    const bx_v16u z = {0};
    bx_v16u cv = z;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        bx_v16u l0, l1, l2, l3;
        memcpy(&l0, src + i, sizeof l0);
        memcpy(&l1, src + i + 16, sizeof l1);
        memcpy(&l2, src + i + 32, sizeof l2);
        memcpy(&l3, src + i + 48, sizeof l3);
        BX_SCAN16(l0, z);
        BX_SCAN16(l1, z);
        BX_SCAN16(l2, z);
        BX_SCAN16(l3, z);
        bx_v16u b0 = BX_LAST16(l0), b1 = BX_LAST16(l1), b2 = BX_LAST16(l2), b3 = BX_LAST16(l3);
        bx_v16u b01 = b0 + b1, b012 = b01 + b2;
        l0 += cv;
        l1 += cv + b0;
        l2 += cv + b01;
        l3 += cv + b012;
        cv += b012 + b3;
        memcpy(dst + i, &l0, sizeof l0);
        memcpy(dst + i + 16, &l1, sizeof l1);
        memcpy(dst + i + 32, &l2, sizeof l2);
        memcpy(dst + i + 48, &l3, sizeof l3);
    }
    uint32_t carry = cv[0];
    for (; i < n; i++) {
        carry += src[i];
        dst[i] = carry;
    }
}

/* Window sums of a u32 extended row (one channel) from its prefix sums:
 * dst[x] = P[x + kw - 1] - P[x - 1]. `pre` holds Le + 1 elements. */
static void bx_hsum_prefix_u32(const bx_state *s, const uint32_t *src, uint32_t *pre,
                               uint32_t *restrict dst)
{
    size_t kw = s->p->spec.kw;
    pre[0] = 0;
    bx_prefix_u32(src, pre + 1, s->Le);
    const uint32_t *hi = pre + kw;
    for (size_t x = 0; x < s->OW; x++)
        dst[x] = hi[x] - pre[x];
}

static void bx_horizontal(const bx_state *s)
{
    const psi_box_plan *p = s->p;
    size_t C = s->C;
    int fill = p->spec.border != PIXSUM_BORDER_VALID;
    switch (p->acc) {
    case PSI_BOX_ACC_U32:
        if (fill)
            BX_FILL(uint32_t, s->ext);
        if (C == 1 && p->spec.kw > 4)
            bx_hsum_prefix_u32(s, s->ext, s->pre, s->hs);
        else
            BX_HSUM(uint32_t, s->ext, s->hs);
        break;
    case PSI_BOX_ACC_U64:
        if (fill)
            BX_FILL(uint64_t, s->ext);
        BX_HSUM(uint64_t, s->ext, s->hs);
        break;
    default:
        if (fill)
            BX_FILL(double, s->ext);
        BX_HSUM(double, s->ext, s->hs);
        break;
    }
    if (p->squares) {
        if (p->acc == PSI_BOX_ACC_F64) {
            if (fill)
                BX_FILL(double, s->extq);
            BX_HSUM(double, s->extq, s->hq);
        } else {
            if (fill)
                BX_FILL(uint64_t, s->extq);
            BX_HSUM(uint64_t, s->extq, s->hq);
        }
    }
}

/* Small windows (kw <= 8) of u32 sums, means written as u8 (odd n) or f32
 * (sums below 2^24): the horizontal sum and the statistic in one pass, so
 * the window sums never go through memory. Returns 1 if it handled the row. */
#define BX_FUSED(K, EXPR)                                                                  \
    for (size_t i = 0; i < m; i++) {                                                       \
        uint32_t t = e[i];                                                                 \
        for (size_t k = 1; k < (K); k++)                                                   \
            t += e[i + k * C];                                                             \
        EXPR;                                                                              \
    }
#define BX_FUSED_KW(EXPR)                                                                  \
    switch (p->spec.kw) {                                                                  \
    case 1: BX_FUSED(1, EXPR) break;                                                       \
    case 2: BX_FUSED(2, EXPR) break;                                                       \
    case 3: BX_FUSED(3, EXPR) break;                                                       \
    case 4: BX_FUSED(4, EXPR) break;                                                       \
    case 5: BX_FUSED(5, EXPR) break;                                                       \
    case 6: BX_FUSED(6, EXPR) break;                                                       \
    case 7: BX_FUSED(7, EXPR) break;                                                       \
    default: BX_FUSED(8, EXPR) break;                                                      \
    }

static int bx_fused_mean(const bx_state *s, void *o, pixsum_type ot)
{
    const psi_box_plan *p = s->p;
    size_t C = s->C, m = s->OW * C;
    int wide = p->spec.kw > 8; /* then one channel: window sums from prefix sums */
    if (p->acc != PSI_BOX_ACC_U32 || p->is_signed || (wide && (C != 1 || !s->pre)) ||
        p->spec.stat != PIXSUM_BOX_MEAN || p->squares)
        return 0;
    int u8 = ot == PIXSUM_U8 && (s->n & 1), f32 = ot == PIXSUM_F32 && s->small_sums;
    if (!u8 && !f32)
        return 0;
    if (p->spec.border != PIXSUM_BORDER_VALID)
        BX_FILL(uint32_t, s->ext);
    const uint32_t *e = s->ext;
    if (wide) {
        uint32_t *pre = s->pre;
        const uint32_t *hi = pre + p->spec.kw;
        pre[0] = 0;
        bx_prefix_u32(e, pre + 1, s->Le);
        if (u8 && s->small_sums && s->n < 8192) {
            uint8_t *restrict d = o;
            float inv = 1.0f / (float)s->n;
            for (size_t i = 0; i < m; i++)
                d[i] = (uint8_t)(int32_t)((float)(hi[i] - pre[i]) * inv + 0.5f);
        } else if (u8 && s->small_sums) {
            /* larger odd n: the float estimate is off by at most one, and the
             * remainder of (2t + n) / 2n, in exact int32, corrects it */
            uint8_t *restrict d = o;
            float inv = 1.0f / (float)s->n;
            int32_t nn = (int32_t)s->n, n2 = 2 * nn;
            for (size_t i = 0; i < m; i++) {
                int32_t t = (int32_t)(hi[i] - pre[i]);
                int32_t q = (int32_t)((float)t * inv + 0.5f);
                int32_t r2 = 2 * t + nn - n2 * q;
                q = r2 < 0 ? q - 1 : q;
                q = r2 >= n2 ? q + 1 : q;
                d[i] = (uint8_t)q;
            }
        } else if (u8) {
            uint8_t *restrict d = o;
            double inv = 1.0 / (double)s->n;
            for (size_t i = 0; i < m; i++)
                d[i] = (uint8_t)(int32_t)((double)(hi[i] - pre[i]) * inv + 0.5);
        } else {
            float *restrict d = o, fn = (float)s->n;
            for (size_t i = 0; i < m; i++)
                d[i] = (float)(hi[i] - pre[i]) / fn;
        }
        return 1;
    }
    if (u8 && s->small_sums && s->n < 8192) {
        /* float: t < 2^24 exact, the error of t * (1/n) + 0.5 is below
         * 255 * 2^-23 + 2^-16 < 1/(2n): still the exact rounded quotient */
        uint8_t *restrict d = o;
        float inv = 1.0f / (float)s->n;
        BX_FUSED_KW(d[i] = (uint8_t)(int32_t)((float)t * inv + 0.5f))
    } else if (u8) { /* as bx_finish_fast: exact for odd n */
        uint8_t *restrict d = o;
        double inv = 1.0 / (double)s->n;
        BX_FUSED_KW(d[i] = (uint8_t)(int32_t)((double)t * inv + 0.5))
    } else { /* correctly rounded, as bx_finish_fast */
        float *restrict d = o, fn = (float)s->n;
        BX_FUSED_KW(d[i] = (float)t / fn)
    }
    return 1;
}

/* Exact quotient s / n rounded to nearest, ties to even. */
static inline uint64_t bx_round_div(uint64_t s, uint64_t n)
{
    uint64_t q = s / n, r = s - q * n;
    if (2 * r > n || (2 * r == n && (q & 1)))
        q++;
    return q;
}

static inline void bx_store_int(pixsum_type ot, void *o, size_t i, uint64_t v)
{
    switch (ot) {
    case PIXSUM_U8: ((uint8_t *)o)[i] = (uint8_t)v; break;
    case PIXSUM_U16: ((uint16_t *)o)[i] = (uint16_t)v; break;
    case PIXSUM_I32: ((int32_t *)o)[i] = (int32_t)(uint32_t)v; break;
    case PIXSUM_U32: ((uint32_t *)o)[i] = (uint32_t)v; break;
    case PIXSUM_U64: ((uint64_t *)o)[i] = v; break;
    case PIXSUM_I64: ((int64_t *)o)[i] = (int64_t)v; break;
    default: break;
    }
}

static inline void bx_store_f(pixsum_type ot, void *o, size_t i, double v)
{
    if (ot == PIXSUM_F32)
        ((float *)o)[i] = (float)v;
    else
        ((double *)o)[i] = v;
}

/* The statistic of every window of output row y (ih image rows inside). */
static void bx_finish_generic(const bx_state *s, size_t ih, void *o, pixsum_type ot)
{
    const psi_box_plan *p = s->p;
    size_t C = s->C, m = s->OW * C;
    pixsum_border b = p->spec.border;
    int shrink = b == PIXSUM_BORDER_SHRINK, cst = b == PIXSUM_BORDER_CONSTANT;
    pixsum_box_stat st = p->spec.stat;
    int flt = ot == PIXSUM_F32 || ot == PIXSUM_F64;
    for (size_t i = 0; i < m; i++) {
        size_t x = i / C, c = i - x * C;
        uint64_t inside = (shrink || cst) ? (uint64_t)s->iw[x] * ih : s->n;
        uint64_t n = shrink ? inside : s->n, outside = cst ? s->n - inside : 0;
        if (p->acc == PSI_BOX_ACC_F64) {
            double K = s->K[c], S = ((const double *)s->hs)[i];
            double Q = p->squares ? ((const double *)s->hq)[i] : 0;
            if (outside) {
                double d = p->spec.border_value - K;
                S += (double)outside * d;
                Q += (double)outside * (d * d);
            }
            double v, dn = (double)n;
            if (st == PIXSUM_BOX_SUM)
                v = S + dn * K;
            else if (st == PIXSUM_BOX_MEAN)
                v = S / dn + K;
            else {
                v = (Q - S * (S / dn)) / dn;
                if (!(v > 0))
                    v = 0;
                if (st == PIXSUM_BOX_STD)
                    v = sqrt(v);
            }
            bx_store_f(ot, o, i, v);
            continue;
        }
        uint64_t S = p->acc == PSI_BOX_ACC_U32
                         ? (p->is_signed ? (uint64_t)(int64_t)(int32_t)((const uint32_t *)s->hs)[i]
                                         : (uint64_t)((const uint32_t *)s->hs)[i])
                         : ((const uint64_t *)s->hs)[i];
        uint64_t Q = p->squares ? ((const uint64_t *)s->hq)[i] : 0;
        if (outside) {
            S += outside * p->cval_int;
            Q += outside * (p->cval_int * p->cval_int);
        }
        double sv = p->is_signed ? (double)(int64_t)S : (double)S;
        if (st == PIXSUM_BOX_SUM) {
            if (flt)
                bx_store_f(ot, o, i, sv);
            else
                bx_store_int(ot, o, i, S);
        } else if (st == PIXSUM_BOX_MEAN) {
            if (flt)
                bx_store_f(ot, o, i, sv / (double)n);
            else
                bx_store_int(ot, o, i, bx_round_div(S, n));
        } else {
            uint64_t mag = p->is_signed && (int64_t)S < 0 ? (uint64_t)0 - S : S;
            bx_u128 num = (bx_u128)n * Q - (bx_u128)mag * mag;
            double v = (double)num / ((double)n * (double)n);
            bx_store_f(ot, o, i, st == PIXSUM_BOX_STD ? sqrt(v) : v);
        }
    }
}

/* Fast paths: every window has n = kw x kh pixels of the (extended) image. */
static int bx_finish_fast(const bx_state *s, void *o, pixsum_type ot)
{
    const psi_box_plan *p = s->p;
    size_t m = s->OW * s->C;
    pixsum_box_stat st = p->spec.stat;
    double dn = (double)s->n;
    if (p->acc == PSI_BOX_ACC_U32 && !p->is_signed) {
        const uint32_t *h = s->hs;
        if (st == PIXSUM_BOX_SUM && (ot == PIXSUM_U32 || ot == PIXSUM_I32)) {
            memcpy(o, h, m * sizeof *h);
            return 1;
        }
        if (st == PIXSUM_BOX_MEAN && ot == PIXSUM_F32) {
            float *restrict d = o;
            /* the correctly rounded quotient (what the CUDA path and
             * float64 means rounded to float32 give): with h and n exact in
             * float one float division, else a double one then rounded */
            if (s->small_sums) {
                float fn = (float)s->n;
                for (size_t i = 0; i < m; i++)
                    d[i] = (float)h[i] / fn;
            } else {
                for (size_t i = 0; i < m; i++)
                    d[i] = (float)((double)h[i] / dn);
            }
            return 1;
        }
        if ((st == PIXSUM_BOX_VAR || st == PIXSUM_BOX_STD) && (ot == PIXSUM_F64 || ot == PIXSUM_F32)) {
            /* n * Q - S^2 <= n^2 M^2 < 2^64 since n M < 2^32: exact in u64 */
            const uint64_t *q = s->hq;
            double inv2 = 1.0 / (dn * dn);
            uint64_t n64 = s->n;
            for (size_t i = 0; i < m; i++) {
                uint64_t S = h[i];
                double v = (double)(n64 * q[i] - S * S) * inv2;
                v = st == PIXSUM_BOX_STD ? sqrt(v) : v;
                if (ot == PIXSUM_F64)
                    ((double *)o)[i] = v;
                else
                    ((float *)o)[i] = (float)v;
            }
            return 1;
        }
        if (st == PIXSUM_BOX_MEAN && ot == PIXSUM_F64) {
            double *restrict d = o; /* correctly rounded, as the CUDA path */
            for (size_t i = 0; i < m; i++)
                d[i] = (double)h[i] / dn;
            return 1;
        }
        if (st == PIXSUM_BOX_MEAN && (ot == PIXSUM_U8 || ot == PIXSUM_U16) && (s->n & 1)) {
            /* odd n: no ties, and h / n is at least 1/(2n) away from every
             * half-integer, far more than the error of h * (1/n) + 0.5 in
             * double (below 2^-35 for h < 2^32): truncating gives the
             * exact quotient rounded to nearest */
            double inv = 1.0 / dn;
            if (ot == PIXSUM_U8 && s->small_sums && s->n < 8192) {
                /* the same in float: error below 255 * 2^-23 + 2^-16 < 1/(2n) */
                uint8_t *restrict d = o;
                float finv = 1.0f / (float)s->n;
                for (size_t i = 0; i < m; i++)
                    d[i] = (uint8_t)(int32_t)((float)h[i] * finv + 0.5f);
            } else if (ot == PIXSUM_U8) {
                uint8_t *restrict d = o;
                for (size_t i = 0; i < m; i++)
                    d[i] = (uint8_t)(int32_t)((double)h[i] * inv + 0.5);
            } else {
                uint16_t *restrict d = o;
                for (size_t i = 0; i < m; i++)
                    d[i] = (uint16_t)(int32_t)((double)h[i] * inv + 0.5);
            }
            return 1;
        }
        if (st == PIXSUM_BOX_MEAN && ot == PIXSUM_U8 && s->n * 255 < (1u << 24)) {
            /* round(h / n) = floor((2h + n) / 2n): 2h + n < 2^25 and 2n are
             * exact in float, the product is off by at most one, which the
             * remainder corrects; a remainder of 0 is a tie (v/n = q - 1/2),
             * rounded to even */
            float inv2 = 0.5f / (float)s->n;
            int32_t n2 = 2 * (int32_t)s->n, nn = (int32_t)s->n;
            int32_t even_n = (nn & 1) == 0;
            uint8_t *restrict d = o;
            for (size_t i = 0; i < m; i++) {
                int32_t t = 2 * (int32_t)h[i] + nn, q = (int32_t)((float)t * inv2);
                int32_t r = t - q * n2;
                q = r >= n2 ? q + 1 : q;
                q = r < 0 ? q - 1 : q;
                r = t - q * n2;
                q -= (r == 0) & even_n & q;
                d[i] = (uint8_t)q;
            }
            return 1;
        }
        if (st == PIXSUM_BOX_MEAN && ot == PIXSUM_U16) {
            /* the same in double and 64-bit integers (h < 2^32) */
            double inv = 1.0 / dn;
            int64_t n64 = (int64_t)s->n;
            {
                uint16_t *restrict d = o;
                for (size_t i = 0; i < m; i++) {
                    int64_t v = (int64_t)h[i], q = (int64_t)((double)v * inv);
                    int64_t r = v - q * n64;
                    q = r >= n64 ? q + 1 : q;
                    r = r >= n64 ? r - n64 : r;
                    q = r < 0 ? q - 1 : q;
                    r = r < 0 ? r + n64 : r;
                    int64_t up = (2 * r > n64) | ((2 * r == n64) & q);
                    d[i] = (uint16_t)(q + (up & 1));
                }
            }
            return 1;
        }
        return 0;
    }
    if (p->acc == PSI_BOX_ACC_F64 && st == PIXSUM_BOX_MEAN && s->C == 1) {
        const double *h = s->hs;
        double K = s->K[0], inv = 1.0 / dn;
        if (ot == PIXSUM_F32) {
            float *restrict d = o;
            for (size_t i = 0; i < m; i++)
                d[i] = (float)(h[i] * inv + K);
        } else {
            double *restrict d = o;
            for (size_t i = 0; i < m; i++)
                d[i] = h[i] * inv + K;
        }
        return 1;
    }
    return 0;
}

#include "box_local_kernel.h"
#include "box_stream_fused.h"

int PSI_BOX_FN(const psi_job *job, size_t y0, size_t y1)
{
    const psi_box_plan *p = job->extra;
    const pixsum_view *in = &job->in, *out = &job->out;
    bx_state s;
    memset(&s, 0, sizeof s);
    s.p = p;
    s.t = in->type;
    s.C = in->channels;
    s.W = in->width;
    s.H = in->height;
    s.OW = out->width;
    s.OH = out->height;
    s.Le = s.OW + p->spec.kw - 1;
    s.n = p->n;
    s.small_sums = p->acc == PSI_BOX_ACC_U32 && !p->is_signed &&
                   (uint64_t)p->n * psi_type_max_magnitude(in->type) < (1u << 24);
    size_t C = s.C;
    size_t ea = p->acc == PSI_BOX_ACC_U32 ? 4 : 8;
    size_t le = s.Le * C, om = s.OW * C;
    /* one allocation, each buffer on a 64-byte boundary */
#define BX_ROUND(v) (((v) + 63) & ~(size_t)63)
    size_t sz_ext = BX_ROUND(le * ea), sz_hs = BX_ROUND(om * ea);
    size_t sz_qe = p->squares ? BX_ROUND(le * 8) : 0, sz_qh = p->squares ? BX_ROUND(om * 8) : 0;
    size_t sz_kb = p->acc == PSI_BOX_ACC_F64 ? BX_ROUND(s.W * C * 8) : 0;
    size_t sz_iw = BX_ROUND(s.OW * sizeof(size_t)), sz_map = BX_ROUND(s.Le * sizeof(ptrdiff_t));
    size_t sz_pre = p->acc == PSI_BOX_ACC_U32 && C == 1 ? BX_ROUND((s.Le + 1) * 4) : 0;
    size_t sz_loc = p->local ? BX_ROUND(om * sizeof(double)) : 0; /* local: mean, std rows */
#undef BX_ROUND
    size_t bytes = sz_ext + sz_hs + sz_qe + sz_qh + sz_kb + sz_iw + sz_map + sz_pre +
                   2 * sz_loc + s.H * sizeof(uint64_t) + 64;
    unsigned char *mem = calloc(1, bytes), *cur;
    if (!mem)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "box filter: %zu bytes of row buffers", bytes);
    cur = mem + ((64 - (uintptr_t)mem % 64) % 64);
    s.ext = cur;
    cur += sz_ext;
    s.hs = cur;
    cur += sz_hs;
    if (p->squares) {
        s.extq = cur;
        s.hq = cur + sz_qe;
    }
    cur += sz_qe + sz_qh;
    if (sz_kb)
        s.kb = (double *)cur;
    cur += sz_kb;
    s.iw = (size_t *)cur;
    cur += sz_iw;
    s.colmap = (ptrdiff_t *)cur;
    cur += sz_map;
    s.pre = sz_pre ? (uint32_t *)cur : NULL;
    cur += sz_pre;
    double *loc_mu = (double *)cur, *loc_sd = (double *)(cur + sz_loc);
    cur += 2 * sz_loc;
    uint64_t *rowcount = (uint64_t *)cur;

    pixsum_border b = p->spec.border;
    int valid = b == PIXSUM_BORDER_VALID;
    size_t ax = valid ? 0 : p->ax, ay = valid ? 0 : p->ay, kh = p->spec.kh;
    for (size_t j = 0; j < s.Le; j++)
        s.colmap[j] = bx_map((ptrdiff_t)j - (ptrdiff_t)ax, (ptrdiff_t)s.W, b);
    for (size_t x = 0; x < s.OW; x++)
        s.iw[x] = bx_inside((ptrdiff_t)x - (ptrdiff_t)ax, p->spec.kw, s.W);
    if (p->acc == PSI_BOX_ACC_F64) {
        const void *r0 = psi_row(in, 0, 0);
        for (size_t c = 0; c < C; c++)
            s.K[c] = psi_load_f64(s.t, r0, c);
        for (size_t i = 0; i < s.W * C; i++)
            s.kb[i] = s.K[i % C];
    }
    /* the first window's rows (output row y0), each with its multiplicity */
    for (size_t k = 0; k < kh; k++) {
        ptrdiff_t r = bx_map((ptrdiff_t)(y0 + k) - (ptrdiff_t)ay, (ptrdiff_t)s.H, b);
        if (r >= 0)
            rowcount[r]++;
    }
#ifdef BXF_ENABLED
    {
        int fst = bxf_try(job, &s, rowcount, y0, y1);
        if (fst >= 0) {
            free(mem);
            return fst;
        }
    }
#endif
    for (size_t r = 0; r < s.H; r++)
        if (rowcount[r])
            bx_vertical(&s, psi_row(in, r, 0), NULL, rowcount[r]);
    int fast = b != PIXSUM_BORDER_SHRINK && b != PIXSUM_BORDER_CONSTANT;
    for (size_t y = y0; y < y1; y++) {
        if (y > y0) {
            ptrdiff_t top = (ptrdiff_t)(y - 1) - (ptrdiff_t)ay;
            ptrdiff_t ro = bx_map(top, (ptrdiff_t)s.H, b);
            ptrdiff_t ri = bx_map(top + (ptrdiff_t)kh, (ptrdiff_t)s.H, b);
            if (ro != ri)
                bx_vertical(&s, ri >= 0 ? psi_row(in, (size_t)ri, 0) : NULL,
                            ro >= 0 ? psi_row(in, (size_t)ro, 0) : NULL, 1);
        }
        if (p->local) {
            bx_horizontal(&s);
            bx_finish_local(&s, job, y, bx_inside((ptrdiff_t)y - (ptrdiff_t)ay, kh, s.H),
                            loc_mu, loc_sd);
            continue;
        }
        void *o = psi_row(out, y, 0);
        int direct = fast && p->acc == PSI_BOX_ACC_U32 && p->spec.stat == PIXSUM_BOX_SUM &&
                     (out->type == PIXSUM_U32 || out->type == PIXSUM_I32);
        if (direct) { /* the window sums are the output row */
            void *keep = s.hs;
            s.hs = o;
            bx_horizontal(&s);
            s.hs = keep;
            continue;
        }
        if (fast && bx_fused_mean(&s, o, out->type))
            continue;
        bx_horizontal(&s);
        if (!(fast && bx_finish_fast(&s, o, out->type)))
            bx_finish_generic(&s, bx_inside((ptrdiff_t)y - (ptrdiff_t)ay, kh, s.H), o,
                              out->type);
    }
    free(mem);
    return PIXSUM_OK;
}

/*
 * box_stream_fused.h - the one-pass row kernel of the streamed box filter for
 * AVX-512 builds (included by box_stream_kernel.h; empty elsewhere).
 *
 * Handles the common requests: borders reflect101, reflect, replicate and
 * valid (every window has n = kw x kh pixels of the extended image), any
 * channel count 1-4, and
 *   u8 / u16 inputs with 32-bit sums: sum (u32 i32 f32 f64), mean (f32 f64,
 *     and u8 for u8 inputs when n * 255 < 2^24), and for u8 inputs with
 *     n * 255^2 < 2^32 variance / std (f32 f64, sums of squares in 32 bits);
 *   f32 / f64 inputs (f64 sums of samples shifted by K): sum and mean.
 * Everything else runs the general passes of box_stream_kernel.h.
 *
 * Per output row, one pass over the extended row of Le x C column sums, V
 * lanes at a time (V = 16 u32 or 8 f64), does all of:
 *   1. the vertical update e[k] += in[y + kh - 1 - ay][k] - in[y - 1 - ay][k]
 *      of the interior columns (the column sums stay in L1/L2; the border
 *      columns are copies of interior ones, filled once the interior
 *      columns they copy are up to date);
 *   2. the horizontal window sum as a running difference,
 *      G[k] = G[k - C] + e[k] - e[k - kw C]   (G[k] = window ending at k),
 *      vectorised as an in-register scan with stride C of the differences
 *      plus a carry vector: the cost per sample does not depend on kw, and
 *      the loop-carried chain is one vector add per V samples when C
 *      divides V (C = 3: a permute and an add);
 *   3. the statistic of the windows G[i + (kw - 1) C], written straight to
 *      the output row.
 * Integer sums are modular 32-bit: every window sum fits (the validation
 * guarantees it), so the wrapped differences and scans are exact. The f64
 * running difference has the error of the running sums of pixsum.h's bound.
 * u8 -> u8 means of one channel use a layout of 64 columns per vector
 * instead (bxq_*, below). Results equal those of the general passes bit for
 * bit on integer outputs and u8 means; float outputs stay within the bound.
 */
#if defined(__AVX512F__)
#define BXF_ENABLED 1
#include <immintrin.h>

/* Where the column sums leaving the window, e[j + l - kw C], come from.
 * A load that straddles two recent vector stores cannot be served from the
 * store buffer and waits for the stores to commit, which chains the
 * iterations when they are one or two chunks back; further back, a load
 * across two cache lines still costs more than two aligned loads (each
 * matching one earlier store) and one permute. */
enum {
    BXF_BEHIND_REGS = 0, /* kw C < V: the previous and current chunks, in registers */
    BXF_BEHIND_PAIR = 1, /* kw C >= V, not a multiple of V: two aligned loads, a permute */
    BXF_BEHIND_LOAD = 2  /* kw C a multiple of V: one aligned load */
};

/* What one emitted vector of window sums becomes. */
typedef enum bxf_kind {
    BXF_SUM_U32,   /* u32 / i32 sums: the sums themselves */
    BXF_SUM_F32,
    BXF_SUM_F64,
    BXF_MEAN_F32S, /* sums below 2^24: float division, correctly rounded */
    BXF_MEAN_F32D, /* larger sums: double division rounded to float */
    BXF_MEAN_F64,
    BXF_MEAN_U8F,  /* u8 means, odd n < 8192: float multiply, truncated */
    BXF_MEAN_U8F2, /* u8 means, odd 8192 <= n <= 65279: 1/n as two floats, two FMAs */
    BXF_MEAN_U8D,  /* u8 means, odd n > 65279: double multiply, truncated */
    BXF_MEAN_U8X,  /* u8 means, even n, n * 255 < 2^24: float estimate + exact correction */
    BXF_VAR_F32,
    BXF_VAR_F64,
    BXF_STD_F32,
    BXF_STD_F64,
    BXF_LOCAL,     /* local operations (u8, n * 255^2 < 2^32): the u32 window sums S
                      to the output row, Q to f->lq, for the rule of box_local_kernel.h */
    BXF_FMEAN_F32, /* float inputs: S / n + K */
    BXF_FMEAN_F64,
    BXF_FSUM_F32,  /* float inputs: S + n K */
    BXF_FSUM_F64
} bxf_kind;

typedef struct bxf {
    const bx_state *s;
    bxf_kind kind;
    int flt;             /* f64 accumulation (float inputs) */
    int fast_carry;      /* C divides the lane count */
    size_t C, kw, LeC, IS, IE, L0, kwC, OWC, lag, osz;
    int mode;            /* where e[k - kw C] comes from, BXF_BEHIND_* */
    size_t off0, off1;   /* mode PAIR: the aligned chunks kwC / V and kwC / V + 1 back */
    pixsum_type it;      /* input type */
    void *e;             /* LeC column sums (padded, zero beyond LeC) */
    uint32_t *q;         /* LeC column sums of squares (u8 variance) */
    uint32_t *lq;        /* BXF_LOCAL: the row's window sums of squares */
    size_t *src;         /* the interior element each border element copies:
                            src[k] for k < IS, src[k - IE + IS] for k >= IE */
    int32_t *src32;      /* the same as int32 (gather indices) */
    uint32_t n;
    float finv, inv2f;   /* 1/n; 1/(2n) */
    float fhi, flo;      /* 1/n = fhi + flo within 2^-47 relative */
    double dn, inv, inv2d; /* n, 1/n, 1/n^2 */
    int32_t n2, even_n;
    size_t nextph[4];    /* the phase 8 samples on: (p + 8) mod C */
    double Kl[4][8];     /* K of each lane's channel, for each start phase */
    double nKl[4][8];    /* n K likewise */
} bxf;

/* Which kind handles this request, or -1. */
static int bxf_pick(const bx_state *s, pixsum_type ot)
{
    const psi_box_plan *p = s->p;
    pixsum_border b = p->spec.border;
    if (b != PIXSUM_BORDER_REFLECT101 && b != PIXSUM_BORDER_REFLECT &&
        b != PIXSUM_BORDER_REPLICATE && b != PIXSUM_BORDER_VALID)
        return -1;
    if (s->C < 1 || s->C > 4 || s->Le * s->C >= (size_t)INT32_MAX) /* int32 gathers */
        return -1;
    if (p->local)
        return s->t == PIXSUM_U8 && p->acc == PSI_BOX_ACC_U32 &&
                       (uint64_t)s->n * 255 * 255 <= UINT32_MAX
                   ? BXF_LOCAL
                   : -1;
    pixsum_box_stat st = p->spec.stat;
    if (p->acc == PSI_BOX_ACC_F64) {
        if ((s->t != PIXSUM_F32 && s->t != PIXSUM_F64) || p->squares)
            return -1;
        if (st == PIXSUM_BOX_MEAN)
            return ot == PIXSUM_F32 ? BXF_FMEAN_F32 : ot == PIXSUM_F64 ? BXF_FMEAN_F64 : -1;
        if (st == PIXSUM_BOX_SUM)
            return ot == PIXSUM_F32 ? BXF_FSUM_F32 : ot == PIXSUM_F64 ? BXF_FSUM_F64 : -1;
        return -1;
    }
    if (p->acc != PSI_BOX_ACC_U32 || p->is_signed || (s->t != PIXSUM_U8 && s->t != PIXSUM_U16))
        return -1;
    uint64_t n = s->n;
    switch (st) {
    case PIXSUM_BOX_SUM:
        switch (ot) {
        case PIXSUM_U32: case PIXSUM_I32: return BXF_SUM_U32;
        case PIXSUM_F32: return BXF_SUM_F32;
        case PIXSUM_F64: return BXF_SUM_F64;
        default: return -1;
        }
    case PIXSUM_BOX_MEAN:
        if (ot == PIXSUM_F32)
            return s->small_sums ? BXF_MEAN_F32S : BXF_MEAN_F32D;
        if (ot == PIXSUM_F64)
            return BXF_MEAN_F64;
        if (ot == PIXSUM_U8 && s->t == PIXSUM_U8 && n * 255 < (1u << 24))
            return !(n & 1)    ? BXF_MEAN_U8X
                   : n < 8192   ? BXF_MEAN_U8F
                   : n <= 65279 ? BXF_MEAN_U8F2
                                : BXF_MEAN_U8D;
        return -1;
    case PIXSUM_BOX_VAR:
    case PIXSUM_BOX_STD:
        if (s->t != PIXSUM_U8 || n * 255 * 255 > UINT32_MAX)
            return -1;
        if (ot == PIXSUM_F32)
            return st == PIXSUM_BOX_VAR ? BXF_VAR_F32 : BXF_STD_F32;
        if (ot == PIXSUM_F64)
            return st == PIXSUM_BOX_VAR ? BXF_VAR_F64 : BXF_STD_F64;
        return -1;
    default:
        return -1;
    }
}

/* In-register inclusive scan with stride C (lanes l, l-C, l-2C, ... summed). */
static inline __m512i bxf_scan_u32(__m512i v, size_t C)
{
    const __m512i z = _mm512_setzero_si512();
    switch (C) {
    case 1:
        v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, z, 15));
        v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, z, 14));
        v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, z, 12));
        v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, z, 8));
        break;
    case 2:
        v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, z, 14));
        v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, z, 12));
        v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, z, 8));
        break;
    case 3:
        v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, z, 13));
        v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, z, 10));
        v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, z, 4));
        break;
    default:
        v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, z, 12));
        v = _mm512_add_epi32(v, _mm512_alignr_epi32(v, z, 8));
        break;
    }
    return v;
}

static inline __m512d bxf_scan_f64(__m512d v, size_t C)
{
    const __m512i z = _mm512_setzero_si512();
#define BXF_SH(k) _mm512_castsi512_pd(_mm512_alignr_epi64(_mm512_castpd_si512(v), z, (k)))
    switch (C) {
    case 1:
        v = _mm512_add_pd(v, BXF_SH(7));
        v = _mm512_add_pd(v, BXF_SH(6));
        v = _mm512_add_pd(v, BXF_SH(4));
        break;
    case 2:
        v = _mm512_add_pd(v, BXF_SH(6));
        v = _mm512_add_pd(v, BXF_SH(4));
        break;
    case 3:
        v = _mm512_add_pd(v, BXF_SH(5));
        v = _mm512_add_pd(v, BXF_SH(2));
        break;
    default:
        v = _mm512_add_pd(v, BXF_SH(4));
        break;
    }
#undef BXF_SH
    return v;
}

/* e[k] (and q[k]) += a[k - IS] - b[k - IS] for k in [lo, hi), one by one. */
static void bxf_vert_scalar(const bxf *f, const void *ra, const void *rb, size_t lo,
                            size_t hi)
{
    size_t is = f->IS;
    if (f->flt) {
        double *e = f->e;
        if (f->it == PIXSUM_F32) {
            const float *a = ra, *b = rb;
            for (size_t k = lo; k < hi; k++)
                e[k] += (double)a[k - is] - (double)b[k - is];
        } else {
            const double *a = ra, *b = rb;
            for (size_t k = lo; k < hi; k++)
                e[k] += a[k - is] - b[k - is];
        }
        return;
    }
    uint32_t *e = f->e;
    if (f->it == PIXSUM_U8) {
        const uint8_t *a = ra, *b = rb;
        for (size_t k = lo; k < hi; k++)
            e[k] += (uint32_t)a[k - is] - (uint32_t)b[k - is];
        if (f->q)
            for (size_t k = lo; k < hi; k++) {
                uint32_t u = a[k - is], w = b[k - is];
                f->q[k] += u * u - w * w;
            }
    } else {
        const uint16_t *a = ra, *b = rb;
        for (size_t k = lo; k < hi; k++)
            e[k] += (uint32_t)a[k - is] - (uint32_t)b[k - is];
    }
}

/* The border elements, left ([0, IS)) or right ([IE, LeC)), copied from the
 * interior elements they map to (up to date by then). */
static void bxf_fill(const bxf *f, int right)
{
    size_t lo = right ? f->IE : 0, hi = right ? f->LeC : f->IS, m = hi - lo, i = 0;
    const size_t *src = f->src + (right ? f->IS : 0);
    const int32_t *s32 = f->src32 + (right ? f->IS : 0);
    if (f->flt) {
        double *e = (double *)f->e + lo;
        for (; i + 8 <= m; i += 8) /* the sources are interior: no overlap */
            _mm512_storeu_pd(e + i, _mm512_i32gather_pd(
                                        _mm256_loadu_si256((const void *)(s32 + i)), f->e, 8));
        for (; i < m; i++)
            e[i] = ((const double *)f->e)[src[i]];
        return;
    }
    uint32_t *e = (uint32_t *)f->e + lo;
    for (; i + 16 <= m; i += 16)
        _mm512_storeu_si512(e + i, _mm512_i32gather_epi32(_mm512_loadu_si512(s32 + i), f->e, 4));
    for (; i < m; i++)
        e[i] = ((const uint32_t *)f->e)[src[i]];
    if (f->q)
        for (i = 0; i < m; i++)
            f->q[lo + i] = f->q[src[i]];
}

/* Stores the `cnt` elements of size sz at tmp for output indices i0.. that
 * fall inside [0, OWC). */
static void bxf_store_part(const bxf *f, void *o, ptrdiff_t i0, const void *tmp, size_t cnt)
{
    size_t sz = f->osz;
    for (size_t l = 0; l < cnt; l++) {
        ptrdiff_t i = i0 + (ptrdiff_t)l;
        if (i >= 0 && (size_t)i < f->OWC)
            memcpy((char *)o + (size_t)i * sz, (const char *)tmp + l * sz, sz);
    }
}

static inline __m512 bxf_cat_ps(__m256 lo, __m256 hi)
{
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)),
                                               _mm256_castps_pd(hi), 1));
}

/* The statistic of 16 integer window sums h (squares hq) for outputs i0... */
#define BXF_INLINE static inline __attribute__((always_inline))

/* u8 means of 16 window sums h < 2^24: the exact quotient h / n rounded to
 * nearest, ties to even, as 16 int32. */
BXF_INLINE __m512i bxf_u8_quot(const bxf *f, int kind, __m512i h)
{
    if (kind == BXF_MEAN_U8F) {
        /* odd n < 8192: no ties, h / n lies at least 1/(2n) > 2^-14 from every
         * half-integer, more than the error of fma(h, 1/n, 0.5) in float
         * (below 255 * 2^-23 + 2^-16): truncating gives the exact quotient
         * rounded to nearest */
        __m512 x = _mm512_fmadd_ps(_mm512_cvtepu32_ps(h), _mm512_set1_ps(f->finv),
                                   _mm512_set1_ps(0.5f));
        return _mm512_cvttps_epi32(x);
    }
    if (kind == BXF_MEAN_U8F2) {
        /* odd n <= 65279: x = fma(h, fhi, fma(h, flo, 0.5)). |h flo| < 2^-15,
         * so the inner fma, near 0.5, is within 2^-25; the outer one adds
         * h fhi exactly and rounds once, within 2^-17 below 256; fhi + flo
         * is 1/n within 2^-47 relative (2^-39 on h / n < 256). The total,
         * below 2^-17 + 2^-25 + 2^-39, is less than 1/(2n) for n <= 65280,
         * the least distance of h / n + 1/2 from an integer for odd n:
         * truncating gives the exact quotient rounded to nearest */
        __m512 hf = _mm512_cvtepu32_ps(h);
        __m512 x = _mm512_fmadd_ps(hf, _mm512_set1_ps(f->flo), _mm512_set1_ps(0.5f));
        return _mm512_cvttps_epi32(_mm512_fmadd_ps(hf, _mm512_set1_ps(f->fhi), x));
    }
    if (kind == BXF_MEAN_U8D) {
        /* odd n: h / n lies at least 1/(2n) > 2^-18 from every half-integer,
         * far more than the error of fma(h, 1/n, 0.5) in double (h < 2^24):
         * truncating gives the exact quotient rounded to nearest */
        __m512d inv = _mm512_set1_pd(f->inv), half = _mm512_set1_pd(0.5);
        __m256i lo = _mm512_cvttpd_epi32(
            _mm512_fmadd_pd(_mm512_cvtepu32_pd(_mm512_castsi512_si256(h)), inv, half));
        __m256i hi = _mm512_cvttpd_epi32(
            _mm512_fmadd_pd(_mm512_cvtepu32_pd(_mm512_extracti64x4_epi64(h, 1)), inv, half));
        return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
    }
    /* round(h / n) = floor((2h + n) / 2n), t = 2h + n < 2^26: the float
     * quotient (t, 1/(2n) and the product each rounded once, relative error
     * below 2^-22 on a quotient below 257) is off by at most one, which the
     * exact int32 remainder r = t - 2n q corrects; r = 0 then means
     * h / n = q - 1/2, a tie, rounded to even */
    __m512i n2 = _mm512_set1_epi32(f->n2);
    __m512i t = _mm512_add_epi32(_mm512_add_epi32(h, h), _mm512_set1_epi32((int32_t)f->n));
    __m512i q = _mm512_cvttps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(t),
                                                  _mm512_set1_ps(f->inv2f)));
    __m512i r = _mm512_sub_epi32(t, _mm512_mullo_epi32(q, n2));
    __mmask16 up = _mm512_cmpge_epi32_mask(r, n2);
    q = _mm512_mask_add_epi32(q, up, q, _mm512_set1_epi32(1));
    r = _mm512_mask_sub_epi32(r, up, r, n2);
    __mmask16 dn = _mm512_cmplt_epi32_mask(r, _mm512_setzero_si512());
    q = _mm512_mask_sub_epi32(q, dn, q, _mm512_set1_epi32(1));
    r = _mm512_mask_add_epi32(r, dn, r, n2);
    if (f->even_n) {
        __mmask16 tie = _mm512_cmpeq_epi32_mask(r, _mm512_setzero_si512());
        q = _mm512_mask_sub_epi32(q, tie, q, _mm512_and_si512(q, _mm512_set1_epi32(1)));
    }
    return q;
}

BXF_INLINE void bxf_emit_int(const bxf *f, int kind, int full, void *o, ptrdiff_t i0,
                             __m512i h, __m512i hq)
{
    _Alignas(64) unsigned char tmp[128];
    void *dst = full ? (void *)((char *)o + (size_t)i0 * f->osz) : (void *)tmp;
    __m256i hl = _mm512_castsi512_si256(h), hh = _mm512_extracti64x4_epi64(h, 1);
    switch (kind) {
    case BXF_SUM_U32:
        _mm512_storeu_si512(dst, h);
        break;
    case BXF_SUM_F32:
        _mm512_storeu_ps(dst, _mm512_cvtepu32_ps(h));
        break;
    case BXF_SUM_F64:
        _mm512_storeu_pd(dst, _mm512_cvtepu32_pd(hl));
        _mm512_storeu_pd((double *)dst + 8, _mm512_cvtepu32_pd(hh));
        break;
    case BXF_MEAN_F32S:
        _mm512_storeu_ps(dst, _mm512_div_ps(_mm512_cvtepu32_ps(h), _mm512_set1_ps((float)f->n)));
        break;
    case BXF_MEAN_F32D: {
        __m512d dn = _mm512_set1_pd(f->dn);
        __m256 lo = _mm512_cvtpd_ps(_mm512_div_pd(_mm512_cvtepu32_pd(hl), dn));
        __m256 hi = _mm512_cvtpd_ps(_mm512_div_pd(_mm512_cvtepu32_pd(hh), dn));
        _mm512_storeu_ps(dst, bxf_cat_ps(lo, hi));
        break;
    }
    case BXF_MEAN_F64: {
        __m512d dn = _mm512_set1_pd(f->dn);
        _mm512_storeu_pd(dst, _mm512_div_pd(_mm512_cvtepu32_pd(hl), dn));
        _mm512_storeu_pd((double *)dst + 8, _mm512_div_pd(_mm512_cvtepu32_pd(hh), dn));
        break;
    }
    case BXF_MEAN_U8F:
    case BXF_MEAN_U8F2:
    case BXF_MEAN_U8D:
    case BXF_MEAN_U8X:
        _mm_storeu_si128(dst, _mm512_cvtepi32_epi8(bxf_u8_quot(f, kind, h)));
        break;
    case BXF_LOCAL: /* S to the row (osz 4), Q to f->lq */
        _mm512_storeu_si512(dst, h);
        if (full) {
            _mm512_storeu_si512(f->lq + i0, hq);
        } else {
            _Alignas(64) uint32_t tq[16];
            _mm512_store_si512(tq, hq);
            for (ptrdiff_t l = 0; l < 16; l++)
                if (i0 + l >= 0 && (size_t)(i0 + l) < f->OWC)
                    f->lq[i0 + l] = tq[l];
        }
        break;
    default: { /* variance / std: n Q - S^2 < 2^53 and each term is exact in double */
        __m256i ql = _mm512_castsi512_si256(hq), qh = _mm512_extracti64x4_epi64(hq, 1);
        __m512d dn = _mm512_set1_pd(f->dn), i2 = _mm512_set1_pd(f->inv2d);
        __m512d sl = _mm512_cvtepu32_pd(hl), sh = _mm512_cvtepu32_pd(hh);
        __m512d vl = _mm512_mul_pd(_mm512_fmsub_pd(dn, _mm512_cvtepu32_pd(ql),
                                                   _mm512_mul_pd(sl, sl)), i2);
        __m512d vh = _mm512_mul_pd(_mm512_fmsub_pd(dn, _mm512_cvtepu32_pd(qh),
                                                   _mm512_mul_pd(sh, sh)), i2);
        if (kind == BXF_STD_F32 || kind == BXF_STD_F64) {
            vl = _mm512_sqrt_pd(vl);
            vh = _mm512_sqrt_pd(vh);
        }
        if (kind == BXF_VAR_F64 || kind == BXF_STD_F64) {
            _mm512_storeu_pd(dst, vl);
            _mm512_storeu_pd((double *)dst + 8, vh);
        } else {
            _mm512_storeu_ps(dst, bxf_cat_ps(_mm512_cvtpd_ps(vl), _mm512_cvtpd_ps(vh)));
        }
        break;
    }
    }
    if (!full)
        bxf_store_part(f, o, i0, tmp, 16);
}

/* The running state of one row: carries and the previous chunk. */
typedef struct bxf_ist {
    __m512i carry, prev, carryq, prevq, cidx, sidx;
    int tail; /* the interior is complete and the right border filled */
} bxf_ist;

/* One chunk of 16 column sums [j, j + 16) of an integer row: vertical update
 * (hot: all 16 interior, u8, updated here), window sums, statistic. kind,
 * mode (BXF_BEHIND_*) and hot are constants in the specialised loops. */
BXF_INLINE void bxf_step_int(const bxf *f, bxf_ist *st, size_t j, const void *ra,
                             const void *rb, void *o, int kind, size_t C, int mode, int hot,
                             int upd, int emit)
{
    uint32_t *e = f->e, *q = f->q;
    const size_t IS = f->IS, IE = f->IE, L0 = f->L0, kwC = f->kwC;
    const int sq = kind >= BXF_VAR_F32 && kind <= BXF_LOCAL;
    const __m512i zero = _mm512_setzero_si512();
    __m512i v, vq = zero;
    if (hot ? upd : (ra && f->it == PIXSUM_U8 && j >= L0 && j + 16 <= IE)) {
        __m512i na = _mm512_cvtepu8_epi32(
            _mm_loadu_si128((const void *)((const uint8_t *)ra + (j - IS))));
        __m512i nb = _mm512_cvtepu8_epi32(
            _mm_loadu_si128((const void *)((const uint8_t *)rb + (j - IS))));
        __m512i dl = _mm512_sub_epi32(na, nb);
        v = _mm512_add_epi32(_mm512_load_si512(e + j), dl);
        _mm512_store_si512(e + j, v);
        if (sq) { /* a^2 - b^2 = (a - b)(a + b), both int16: one vpmaddwd */
            vq = _mm512_add_epi32(_mm512_load_si512(q + j),
                                  _mm512_madd_epi16(dl, _mm512_add_epi32(na, nb)));
            _mm512_store_si512(q + j, vq);
        }
    } else if (hot) { /* a run of chunks already up to date */
        v = _mm512_load_si512(e + j);
        if (sq)
            vq = _mm512_load_si512(q + j);
    } else if (ra && j >= L0 && j + 16 <= IE) { /* u16 */
        __m512i na = _mm512_cvtepu16_epi32(
            _mm256_loadu_si256((const void *)((const uint16_t *)ra + (j - IS))));
        __m512i nb = _mm512_cvtepu16_epi32(
            _mm256_loadu_si256((const void *)((const uint16_t *)rb + (j - IS))));
        v = _mm512_add_epi32(_mm512_load_si512(e + j), _mm512_sub_epi32(na, nb));
        _mm512_store_si512(e + j, v);
    } else {
        if (!st->tail && j + 16 > IE) {
            /* the rest of the interior, then the whole right border, once
             * (scalar stores, then vector loads: one wait, not one a chunk) */
            size_t lo = j > L0 ? j : L0;
            if (ra && lo < IE)
                bxf_vert_scalar(f, ra, rb, lo, IE);
            bxf_fill(f, 1);
            st->tail = 1;
        }
        v = _mm512_load_si512(e + j);
        if (sq)
            vq = _mm512_load_si512(q + j);
    }
    __m512i d, dq = zero;
    /* e[j + l - kwC]: zeros from the front pad for j < kwC */
    if (mode == BXF_BEHIND_REGS) {
        d = _mm512_sub_epi32(v, _mm512_permutex2var_epi32(st->prev, st->sidx, v));
        if (sq)
            dq = _mm512_sub_epi32(vq, _mm512_permutex2var_epi32(st->prevq, st->sidx, vq));
    } else if (mode == BXF_BEHIND_PAIR) {
        d = _mm512_sub_epi32(v, _mm512_permutex2var_epi32(_mm512_load_si512(e + j - f->off1),
                                                          st->sidx,
                                                          _mm512_load_si512(e + j - f->off0)));
        if (sq)
            dq = _mm512_sub_epi32(
                vq, _mm512_permutex2var_epi32(_mm512_load_si512(q + j - f->off1), st->sidx,
                                              _mm512_load_si512(q + j - f->off0)));
    } else {
        d = _mm512_sub_epi32(v, _mm512_loadu_si512(e + j - kwC));
        if (sq)
            dq = _mm512_sub_epi32(vq, _mm512_loadu_si512(q + j - kwC));
    }
    if (mode == BXF_BEHIND_REGS) {
        st->prev = v;
        st->prevq = vq;
    }
    __m512i loc = bxf_scan_u32(d, C), h = _mm512_add_epi32(loc, st->carry);
    st->carry = 16 % C == 0 ? _mm512_add_epi32(st->carry, _mm512_permutexvar_epi32(st->cidx, loc))
                            : _mm512_permutexvar_epi32(st->cidx, h);
    __m512i hq = zero;
    if (sq) {
        __m512i locq = bxf_scan_u32(dq, C);
        hq = _mm512_add_epi32(locq, st->carryq);
        st->carryq = 16 % C == 0
                         ? _mm512_add_epi32(st->carryq, _mm512_permutexvar_epi32(st->cidx, locq))
                         : _mm512_permutexvar_epi32(st->cidx, hq);
    }
    ptrdiff_t i0 = (ptrdiff_t)j - (ptrdiff_t)f->lag;
    if (hot) {
        if (emit)
            bxf_emit_int(f, kind, 1, o, i0, h, hq);
    } else if (i0 + 16 > 0) {
        bxf_emit_int(f, kind, i0 >= 0 && (size_t)i0 + 16 <= f->OWC, o, i0, h, hq);
    }
}

/* A run of chunks [ja, jb) of a row: each updated from u8 rows (upd) or
 * already up to date, each emitting 16 outputs inside the row (emit) or none. */
BXF_INLINE void bxf_hot_int(const bxf *f, bxf_ist *st, size_t ja, size_t jb, const void *ra,
                            const void *rb, void *o, int kind, size_t C, int mode, int upd,
                            int emit)
{
    bxf_ist l = *st; /* in registers */
    for (size_t j = ja; j < jb; j += 16)
        bxf_step_int(f, &l, j, ra, rb, o, kind, C, mode, 1, upd, emit);
    *st = l;
}

/* The specialised hot loops: each kind and source of the leaving sums, for
 * one channel (the scan's shifts constants) or any. */
#define BXF_HOT_CASE(K)                                                                    \
    case K:                                                                                \
        if (f->C == 1) {                                                                   \
            if (f->mode == BXF_BEHIND_REGS)                                                \
                bxf_hot_int(f, st, ja, jb, ra, rb, o, K, 1, BXF_BEHIND_REGS, upd, emit);              \
            else if (f->mode == BXF_BEHIND_PAIR)                                           \
                bxf_hot_int(f, st, ja, jb, ra, rb, o, K, 1, BXF_BEHIND_PAIR, upd, emit);              \
            else                                                                           \
                bxf_hot_int(f, st, ja, jb, ra, rb, o, K, 1, BXF_BEHIND_LOAD, upd, emit);              \
        } else if (f->mode == BXF_BEHIND_REGS) {                                           \
            bxf_hot_int(f, st, ja, jb, ra, rb, o, K, f->C, BXF_BEHIND_REGS, upd, emit);               \
        } else if (f->mode == BXF_BEHIND_PAIR) {                                           \
            bxf_hot_int(f, st, ja, jb, ra, rb, o, K, f->C, BXF_BEHIND_PAIR, upd, emit);               \
        } else {                                                                           \
            bxf_hot_int(f, st, ja, jb, ra, rb, o, K, f->C, BXF_BEHIND_LOAD, upd, emit);               \
        }                                                                                  \
        break;
static void bxf_hot_dispatch(const bxf *f, bxf_ist *st, size_t ja, size_t jb, const void *ra,
                             const void *rb, void *o, int upd, int emit)
{
    switch (f->kind) {
    BXF_HOT_CASE(BXF_SUM_U32)
    BXF_HOT_CASE(BXF_SUM_F32)
    BXF_HOT_CASE(BXF_SUM_F64)
    BXF_HOT_CASE(BXF_MEAN_F32S)
    BXF_HOT_CASE(BXF_MEAN_F32D)
    BXF_HOT_CASE(BXF_MEAN_F64)
    BXF_HOT_CASE(BXF_MEAN_U8F)
    BXF_HOT_CASE(BXF_MEAN_U8F2)
    BXF_HOT_CASE(BXF_MEAN_U8D)
    BXF_HOT_CASE(BXF_MEAN_U8X)
    BXF_HOT_CASE(BXF_VAR_F32)
    BXF_HOT_CASE(BXF_VAR_F64)
    BXF_HOT_CASE(BXF_STD_F32)
    BXF_HOT_CASE(BXF_STD_F64)
    BXF_HOT_CASE(BXF_LOCAL)
    default: break;
    }
}
#undef BXF_HOT_CASE

/* One output row of integer sums: ra enters the window, rb leaves it (both
 * NULL: the column sums are already those of this row). */
static void bxf_row_int(const bxf *f, const void *ra, const void *rb, void *o)
{
    const size_t C = f->C, LeC = f->LeC, IS = f->IS, IE = f->IE, L0 = f->L0, kwC = f->kwC;
    if (ra)
        bxf_vert_scalar(f, ra, rb, IS, L0);
    bxf_fill(f, 0);
    bxf_ist st;
    st.carry = st.prev = st.carryq = st.prevq = _mm512_setzero_si512();
    st.tail = 0;
    {
        _Alignas(64) int32_t t[16];
        for (int l = 0; l < 16; l++)
            t[l] = 16 - (int)C + l % (int)C; /* lane of the carry in the previous chunk */
        st.cidx = _mm512_load_si512(t);
        for (int l = 0; l < 16; l++) /* e[j + l - kw C] from two consecutive chunks */
            t[l] = l + 16 - (int32_t)(kwC % 16);
        st.sidx = _mm512_load_si512(t);
    }
    /* The chunks fall into runs where the update (fused u8, or none) and the
     * emission (full, or none) do not change; those run the specialised
     * loop. The chunk holding the end of the interior (scalar update, right
     * border), chunks with part of their outputs outside the row, and u16
     * rows run the general step. Every j where one of the conditions below
     * changes is a cut (c16(x): x rounded up to the 16-element grid): */
    size_t lag = f->lag, OWC = f->OWC;
#define BXF_C16(x) (((x) + 15) / 16 * 16)
    size_t tailj = IE / 16 * 16; /* the first j with j + 16 > IE */
    size_t cut[9] = {BXF_C16(L0), L0 / 16 * 16, tailj, tailj + 16, BXF_C16(IE),
                     lag / 16 * 16,          /* j + 16 > lag: some outputs i0 + l >= 0 */
                     BXF_C16(lag),           /* i0 >= 0 */
                     (OWC + lag) / 16 * 16,  /* i0 + 16 > OWC */
                     BXF_C16(OWC + lag)};
#undef BXF_C16
    size_t j = 0;
    const int u8 = f->it == PIXSUM_U8;
    while (j < LeC) {
        size_t end = LeC;
        for (int c = 0; c < 9; c++)
            if (cut[c] > j && cut[c] < end)
                end = cut[c];
        ptrdiff_t i0 = (ptrdiff_t)j - (ptrdiff_t)lag;
        int none = i0 + 16 <= 0, full = i0 >= 0 && (size_t)i0 + 16 <= OWC;
        int inter = ra && j >= L0 && j + 16 <= IE, tailc = j + 16 > IE && !st.tail;
        int stale = ra && j < IE && j + 16 > L0 && !inter; /* needs a partial update */
        if (tailc || stale || (!none && !full) || (inter && !u8)) {
            for (; j < end; j += 16)
                bxf_step_int(f, &st, j, ra, rb, o, f->kind, C, f->mode, 0, 0, 0);
        } else {
            bxf_hot_dispatch(f, &st, j, end, ra, rb, o, inter, full);
            j = end;
        }
    }
}

/* The statistic of 8 f64 window sums (of samples shifted by K). */
BXF_INLINE void bxf_emit_f64(const bxf *f, int kind, int full, void *o, ptrdiff_t i0,
                             size_t phase, __m512d h)
{
    _Alignas(64) unsigned char tmp[64];
    void *dst = full ? (void *)((char *)o + (size_t)i0 * f->osz) : (void *)tmp;
    __m512d v;
    if (kind == BXF_FMEAN_F32 || kind == BXF_FMEAN_F64)
        v = _mm512_fmadd_pd(h, _mm512_set1_pd(f->inv), _mm512_loadu_pd(f->Kl[phase]));
    else
        v = _mm512_add_pd(h, _mm512_loadu_pd(f->nKl[phase]));
    if (kind == BXF_FMEAN_F64 || kind == BXF_FSUM_F64)
        _mm512_storeu_pd(dst, v);
    else
        _mm256_storeu_ps(dst, _mm512_cvtpd_ps(v));
    if (!full)
        bxf_store_part(f, o, i0, tmp, 8);
}

typedef struct bxf_fst {
    __m512d carry, prev;
    __m512i cidx, sidx;
    size_t phase; /* the channel of output lane 0 */
    int tail;
} bxf_fst;

/* One chunk of 8 f64 column sums: as bxf_step_int (hot: f32 rows). */
BXF_INLINE void bxf_step_f64(const bxf *f, bxf_fst *st, size_t j, const void *ra,
                             const void *rb, void *o, int kind, size_t C, int mode, int hot)
{
    double *e = f->e;
    const size_t IS = f->IS, IE = f->IE, L0 = f->L0;
    __m512d v;
    if (hot || (ra && j >= L0 && j + 8 <= IE)) {
        __m512d dlt;
        if (hot || f->it == PIXSUM_F32)
            dlt = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps((const float *)ra + (j - IS))),
                                _mm512_cvtps_pd(_mm256_loadu_ps((const float *)rb + (j - IS))));
        else
            dlt = _mm512_sub_pd(_mm512_loadu_pd((const double *)ra + (j - IS)),
                                _mm512_loadu_pd((const double *)rb + (j - IS)));
        v = _mm512_add_pd(_mm512_load_pd(e + j), dlt);
        _mm512_store_pd(e + j, v);
    } else {
        if (!st->tail && j + 8 > IE) { /* as in bxf_step_int */
            size_t lo = j > L0 ? j : L0;
            if (ra && lo < IE)
                bxf_vert_scalar(f, ra, rb, lo, IE);
            bxf_fill(f, 1);
            st->tail = 1;
        }
        v = _mm512_load_pd(e + j);
    }
    __m512d d;
    if (mode == BXF_BEHIND_REGS)
        d = _mm512_sub_pd(v, _mm512_permutex2var_pd(st->prev, st->sidx, v));
    else if (mode == BXF_BEHIND_PAIR)
        d = _mm512_sub_pd(v, _mm512_permutex2var_pd(_mm512_load_pd(e + j - f->off1), st->sidx,
                                                    _mm512_load_pd(e + j - f->off0)));
    else
        d = _mm512_sub_pd(v, _mm512_loadu_pd(e + j - f->kwC));
    st->prev = v;
    __m512d loc = bxf_scan_f64(d, C), h = _mm512_add_pd(loc, st->carry);
    st->carry = 8 % C == 0 ? _mm512_add_pd(st->carry, _mm512_permutexvar_pd(st->cidx, loc))
                           : _mm512_permutexvar_pd(st->cidx, h);
    ptrdiff_t i0 = (ptrdiff_t)j - (ptrdiff_t)f->lag;
    if (hot)
        bxf_emit_f64(f, kind, 1, o, i0, st->phase, h);
    else if (i0 + 8 > 0)
        bxf_emit_f64(f, kind, i0 >= 0 && (size_t)i0 + 8 <= f->OWC, o, i0, st->phase, h);
    if (C > 1)
        st->phase = f->nextph[st->phase];
}

BXF_INLINE void bxf_hot_f64(const bxf *f, bxf_fst *st, size_t ja, size_t jb, const void *ra,
                            const void *rb, void *o, int kind, size_t C, int mode)
{
    bxf_fst l = *st; /* in registers */
    for (size_t j = ja; j < jb; j += 8)
        bxf_step_f64(f, &l, j, ra, rb, o, kind, C, mode, 1);
    *st = l;
}

#define BXF_HOT_F(K)                                                                       \
    case K:                                                                                \
        if (f->C == 1) {                                                                   \
            if (f->mode == BXF_BEHIND_REGS)                                                \
                bxf_hot_f64(f, st, ja, jb, ra, rb, o, K, 1, BXF_BEHIND_REGS);              \
            else if (f->mode == BXF_BEHIND_PAIR)                                           \
                bxf_hot_f64(f, st, ja, jb, ra, rb, o, K, 1, BXF_BEHIND_PAIR);              \
            else                                                                           \
                bxf_hot_f64(f, st, ja, jb, ra, rb, o, K, 1, BXF_BEHIND_LOAD);              \
        } else if (f->mode == BXF_BEHIND_REGS) {                                           \
            bxf_hot_f64(f, st, ja, jb, ra, rb, o, K, f->C, BXF_BEHIND_REGS);               \
        } else if (f->mode == BXF_BEHIND_PAIR) {                                           \
            bxf_hot_f64(f, st, ja, jb, ra, rb, o, K, f->C, BXF_BEHIND_PAIR);               \
        } else {                                                                           \
            bxf_hot_f64(f, st, ja, jb, ra, rb, o, K, f->C, BXF_BEHIND_LOAD);               \
        }                                                                                  \
        break;
static void bxf_hot_f64_dispatch(const bxf *f, bxf_fst *st, size_t ja, size_t jb,
                                 const void *ra, const void *rb, void *o)
{
    switch (f->kind) {
    BXF_HOT_F(BXF_FMEAN_F32)
    BXF_HOT_F(BXF_FMEAN_F64)
    BXF_HOT_F(BXF_FSUM_F32)
    BXF_HOT_F(BXF_FSUM_F64)
    default: break;
    }
}
#undef BXF_HOT_F

/* One output row of f64 sums: as bxf_row_int, the specialised loop over the
 * interior chunks of f32 rows whose outputs are all inside the row. */
static void bxf_row_f64(const bxf *f, const void *ra, const void *rb, void *o)
{
    const size_t C = f->C, LeC = f->LeC, IS = f->IS, IE = f->IE, L0 = f->L0, kwC = f->kwC;
    if (ra)
        bxf_vert_scalar(f, ra, rb, IS, L0);
    bxf_fill(f, 0);
    bxf_fst st;
    st.carry = st.prev = _mm512_setzero_pd();
    st.tail = 0;
    st.phase = (C - f->lag % C) % C; /* (j - lag) mod C at j = 0 */
    {
        _Alignas(64) int64_t t[8];
        for (int l = 0; l < 8; l++)
            t[l] = 8 - (int)C + l % (int)C;
        st.cidx = _mm512_load_si512(t);
        for (int l = 0; l < 8; l++)
            t[l] = l + 8 - (int64_t)(kwC % 8);
        st.sidx = _mm512_load_si512(t);
    }
    size_t ja = L0 > f->lag ? L0 : f->lag, jb = 0;
    ja = (ja + 7) / 8 * 8;
    if (ra && f->it == PIXSUM_F32 && ja + 8 <= IE)
        jb = ja + (IE - ja) / 8 * 8;
    else
        ja = jb = LeC + 8; /* none */
    size_t j = 0;
    for (; j < LeC && j < ja; j += 8)
        bxf_step_f64(f, &st, j, ra, rb, o, f->kind, C, f->mode, 0);
    if (jb > ja) {
        bxf_hot_f64_dispatch(f, &st, ja, jb, ra, rb, o);
        j = jb;
    }
    for (; j < LeC; j += 8)
        bxf_step_f64(f, &st, j, ra, rb, o, f->kind, C, f->mode, 0);
}

/* ---------------------------------------------------------------------- */
/* u8 -> u8 means of one channel: 64 columns per vector.                   */
/*                                                                          */
/* The general kernel spends about twenty 512-bit ALU operations on 16      */
/* samples (widening, update, scan, carry, quotient, narrowing), and on     */
/* this core 512-bit ALU operations issue on two ports. For u8 images of    */
/* one channel and windows of at most 257 rows (column sums below 2^16)     */
/* this path keeps the column sums as u16 in a layout matched to 64 input   */
/* bytes read as 16 u32 lanes: lane l of block b holds columns 64b + 4l + t */
/* (t = 0..3), the sums of t = 0, 2 in EA and of t = 1, 3 in EB (low, high */
/* 16 bits). Then                                                           */
/*   - the vertical update is masks and shifts of the two input rows and    */
/*     16-bit adds, no widening shuffles;                                   */
/*   - one scan of the 4-column sums gives the row prefix P[k] (sum of      */
/*     columns < k) at every fourth column; three adds give the others,     */
/*     stored as four arrays PT[t][m] = P[4m + t];                          */
/*   - the window sum of output x is P[x + kw] - P[x], two loads from PT;   */
/*   - the four quotient vectors q_t of a block, shifted by 8t and OR-ed,   */
/*     are the 64 output bytes in order.                                    */
/* About 55 ALU operations per 64 samples instead of about 80.              */
/* ---------------------------------------------------------------------- */

/* A block holding border columns: the E positions of the columns they copy
 * (idx[t][l] for column 64b + 4l + t) and which lanes are border columns. */
typedef struct bxq_bb {
    int32_t idx[4][16];
    __mmask16 m[4];
    __mmask32 ma, mb; /* the same as 16-bit lanes of EA and EB */
    size_t b;
} bxq_bb;

typedef struct bxq {
    const bxf *f;
    uint16_t *E;          /* EA then EB, nbE blocks of 32 u16 each */
    uint32_t *PT[4];
    const uint32_t *plo[4], *phi[4]; /* P[x] and P[x + kw] of outputs x = 4m + t */
    size_t nbE, nbP, nob, D, L0q, OW, Le;
    bxq_bb *lbb, *rbb;    /* the blocks with left / right border columns */
    size_t nlb, nrb;
} bxq;

/* Position in E of the sum of extended column k. */
static inline size_t bxq_pos(size_t nbE, size_t k)
{
    size_t b = k >> 6, r = k & 63, l = r >> 2, t = r & 3;
    return (t & 1) * nbE * 32 + b * 32 + 2 * l + (t >> 1);
}

/* Scalar vertical update of the interior columns [lo, hi). */
static void bxq_vert_scalar(const bxq *qd, const uint8_t *a, const uint8_t *b, size_t lo,
                            size_t hi)
{
    size_t is = qd->f->IS;
    for (size_t k = lo; k < hi; k++) {
        size_t p = bxq_pos(qd->nbE, k);
        qd->E[p] = (uint16_t)(qd->E[p] + a[k - is] - b[k - is]);
    }
}

/* Vector vertical update of block bl (all 64 columns interior). */
BXF_INLINE void bxq_vert_block(const bxq *qd, const uint8_t *a, const uint8_t *b, size_t bl,
                               __m512i *ea, __m512i *eb)
{
    const __m512i m8 = _mm512_set1_epi32(0x00FF00FF);
    size_t off = 64 * bl - qd->f->IS;
    __m512i na = _mm512_loadu_si512(a + off), nb = _mm512_loadu_si512(b + off);
    __m512i da = _mm512_sub_epi16(_mm512_and_si512(na, m8), _mm512_and_si512(nb, m8));
    __m512i db = _mm512_sub_epi16(_mm512_and_si512(_mm512_srli_epi32(na, 8), m8),
                                  _mm512_and_si512(_mm512_srli_epi32(nb, 8), m8));
    uint16_t *pa = qd->E + bl * 32, *pb = qd->E + qd->nbE * 32 + bl * 32;
    *ea = _mm512_add_epi16(_mm512_load_si512(pa), da);
    *eb = _mm512_add_epi16(_mm512_load_si512(pb), db);
    _mm512_store_si512(pa, *ea);
    _mm512_store_si512(pb, *eb);
}

/* Border columns copied from the interior columns they map to, a block at a
 * time: four 16-lane gathers of the 32-bit words at the sources (the low
 * half is the u16 wanted), blended into the 16-bit lanes of EA and EB. */
static void bxq_fill(const bxq *qd, const bxq_bb *bb, size_t nb)
{
    const __m512i lo16 = _mm512_set1_epi32(0xFFFF), z = _mm512_setzero_si512();
    for (size_t i = 0; i < nb; i++) {
        __m512i g[4];
        for (int t = 0; t < 4; t++)
            g[t] = _mm512_mask_i32gather_epi32(z, bb[i].m[t], _mm512_loadu_si512(bb[i].idx[t]),
                                               qd->E, 2);
        __m512i ga = _mm512_or_si512(_mm512_and_si512(g[0], lo16), _mm512_slli_epi32(g[2], 16));
        __m512i gb = _mm512_or_si512(_mm512_and_si512(g[1], lo16), _mm512_slli_epi32(g[3], 16));
        uint16_t *pa = qd->E + bb[i].b * 32, *pb = qd->E + qd->nbE * 32 + bb[i].b * 32;
        _mm512_store_si512(pa, _mm512_mask_blend_epi16(bb[i].ma, _mm512_load_si512(pa), ga));
        _mm512_store_si512(pb, _mm512_mask_blend_epi16(bb[i].mb, _mm512_load_si512(pb), gb));
    }
}

/* Output block ob: 64 means from PT. */
BXF_INLINE void bxq_emit(const bxq *qd, uint8_t *o, size_t ob, int kind)
{
    const bxf *f = qd->f;
    __m512i q[4];
    for (size_t t = 0; t < 4; t++)
        q[t] = bxf_u8_quot(f, kind, _mm512_sub_epi32(_mm512_loadu_si512(qd->phi[t] + 16 * ob),
                                                     _mm512_load_si512(qd->plo[t] + 16 * ob)));
    /* bytes 4l + t = q[t] lane l; 0xFE: a | b | c */
    __m512i acc = _mm512_ternarylogic_epi32(q[0], _mm512_slli_epi32(q[1], 8),
                                            _mm512_slli_epi32(q[2], 16), 0xFE);
    acc = _mm512_or_si512(acc, _mm512_slli_epi32(q[3], 24));
    if (64 * ob + 64 <= qd->OW) {
        _mm512_storeu_si512(o + 64 * ob, acc);
    } else {
        _Alignas(64) uint8_t tmp[64];
        _mm512_store_si512(tmp, acc);
        memcpy(o + 64 * ob, tmp, qd->OW - 64 * ob);
    }
}

/* One output row (ra enters the window, rb leaves it; NULL: no update). */
BXF_INLINE void bxq_row(const bxq *qd, const uint8_t *ra, const uint8_t *rb, uint8_t *o,
                        int kind)
{
    const bxf *f = qd->f;
    const size_t IS = f->IS, IE = f->IE, L0q = qd->L0q, nbE = qd->nbE;
    uint16_t *E = qd->E;
    if (ra) { /* the left region [IS, L0q): its full blocks vectorised */
        size_t vlo = (IS + 63) / 64 * 64, vhi = L0q / 64 * 64;
        if (vlo >= vhi) {
            bxq_vert_scalar(qd, ra, rb, IS, L0q);
        } else {
            __m512i ea, eb;
            bxq_vert_scalar(qd, ra, rb, IS, vlo);
            for (size_t bl = vlo / 64; bl < vhi / 64; bl++)
                bxq_vert_block(qd, ra, rb, bl, &ea, &eb);
            bxq_vert_scalar(qd, ra, rb, vhi, L0q);
        }
    }
    bxq_fill(qd, qd->lbb, qd->nlb);
    const __m512i m16 = _mm512_set1_epi32(0xFFFF), z = _mm512_setzero_si512();
    const __m512i last = _mm512_set1_epi32(15);
    __m512i carry = z;
    int tail = 0;
    size_t D = qd->D;
    for (size_t bl = 0; bl < qd->nbP; bl++) {
        __m512i ea, eb;
        if (ra && 64 * bl >= L0q && 64 * bl + 64 <= IE) {
            bxq_vert_block(qd, ra, rb, bl, &ea, &eb);
        } else {
            if (!tail && 64 * bl + 64 > IE) { /* the rest of the interior, the right border */
                size_t lo = 64 * bl > L0q ? 64 * bl : L0q;
                if (ra && lo == 64 * bl && lo >= IS && lo < IE) {
                    /* the interior part of the block from masked loads (bytes
                     * past the row end are not read; they add zero) */
                    __mmask64 m = _cvtu64_mask64(~0ull >> (64 - (IE - lo)));
                    const __m512i m8 = _mm512_set1_epi32(0x00FF00FF);
                    __m512i na = _mm512_maskz_loadu_epi8(m, ra + (lo - IS));
                    __m512i nb = _mm512_maskz_loadu_epi8(m, rb + (lo - IS));
                    __m512i da = _mm512_sub_epi16(_mm512_and_si512(na, m8),
                                                  _mm512_and_si512(nb, m8));
                    __m512i db = _mm512_sub_epi16(_mm512_and_si512(_mm512_srli_epi32(na, 8), m8),
                                                  _mm512_and_si512(_mm512_srli_epi32(nb, 8), m8));
                    uint16_t *pa = E + bl * 32, *pb = E + nbE * 32 + bl * 32;
                    _mm512_store_si512(pa, _mm512_add_epi16(_mm512_load_si512(pa), da));
                    _mm512_store_si512(pb, _mm512_add_epi16(_mm512_load_si512(pb), db));
                } else if (ra && lo < IE) {
                    bxq_vert_scalar(qd, ra, rb, lo, IE);
                }
                bxq_fill(qd, qd->rbb, qd->nrb);
                tail = 1;
            }
            ea = _mm512_load_si512(E + bl * 32);
            eb = _mm512_load_si512(E + nbE * 32 + bl * 32);
        }
        __m512i c0 = _mm512_and_si512(ea, m16), c2 = _mm512_srli_epi32(ea, 16);
        __m512i c1 = _mm512_and_si512(eb, m16), c3 = _mm512_srli_epi32(eb, 16);
        __m512i q01 = _mm512_add_epi32(c0, c1);
        __m512i qs = _mm512_add_epi32(q01, _mm512_add_epi32(c2, c3));
        __m512i loc = bxf_scan_u32(qs, 1);
        __m512i x = _mm512_add_epi32(_mm512_sub_epi32(loc, qs), carry); /* P[64bl + 4l] */
        carry = _mm512_add_epi32(carry, _mm512_permutexvar_epi32(last, loc));
        _mm512_store_si512(qd->PT[0] + 16 * bl, x);
        _mm512_store_si512(qd->PT[1] + 16 * bl, _mm512_add_epi32(x, c0));
        _mm512_store_si512(qd->PT[2] + 16 * bl, _mm512_add_epi32(x, q01));
        _mm512_store_si512(qd->PT[3] + 16 * bl,
                           _mm512_add_epi32(x, _mm512_add_epi32(q01, c2)));
        if (bl >= D && bl - D < qd->nob)
            bxq_emit(qd, o, bl - D, kind);
    }
    for (size_t ob = qd->nbP > D ? qd->nbP - D : 0; ob < qd->nob; ob++)
        bxq_emit(qd, o, ob, kind);
}

static void bxq_rows(const bxq *qd, const psi_job *job, size_t y0, size_t y1)
{
    const bxf *f = qd->f;
    const bx_state *s = f->s;
    const psi_box_plan *p = s->p;
    pixsum_border b = p->spec.border;
    int valid = b == PIXSUM_BORDER_VALID;
    size_t ay = valid ? 0 : p->ay, kh = p->spec.kh;
    for (size_t y = y0; y < y1; y++) {
        const uint8_t *ra = NULL, *rb = NULL;
        if (y > y0) {
            ptrdiff_t top = (ptrdiff_t)(y - 1) - (ptrdiff_t)ay;
            ptrdiff_t ro = bx_map(top, (ptrdiff_t)s->H, b);
            ptrdiff_t ri = bx_map(top + (ptrdiff_t)kh, (ptrdiff_t)s->H, b);
            if (ri != ro) {
                ra = psi_row(&job->in, (size_t)ri, 0);
                rb = psi_row(&job->in, (size_t)ro, 0);
            }
        }
        uint8_t *o = psi_row(&job->out, y, 0);
        switch (f->kind) {
        case BXF_MEAN_U8F: bxq_row(qd, ra, rb, o, BXF_MEAN_U8F); break;
        case BXF_MEAN_U8F2: bxq_row(qd, ra, rb, o, BXF_MEAN_U8F2); break;
        case BXF_MEAN_U8D: bxq_row(qd, ra, rb, o, BXF_MEAN_U8D); break;
        default: bxq_row(qd, ra, rb, o, BXF_MEAN_U8X); break;
        }
    }
}

/* Runs the rows with the 64-column layout if the request fits it: returns
 * -1 (nothing done) or a status. f->e holds the first window's column sums
 * (interior and borders filled). */
static int bxq_try(const bxf *f, const psi_job *job, size_t y0, size_t y1)
{
    const bx_state *s = f->s;
    if (f->C != 1 || f->it != PIXSUM_U8 || s->p->spec.kh > 257 || s->W < 64 ||
        (f->kind != BXF_MEAN_U8F && f->kind != BXF_MEAN_U8F2 && f->kind != BXF_MEAN_U8D &&
         f->kind != BXF_MEAN_U8X))
        return -1;
    bxq qd;
    memset(&qd, 0, sizeof qd);
    qd.f = f;
    qd.Le = s->Le;
    qd.OW = s->OW;
    qd.nbE = (qd.Le + 63) / 64 + 1;
    qd.nbP = (qd.Le >> 6) + 1; /* blocks through column Le: P[Le] is needed */
    qd.nob = (qd.OW + 63) / 64;
    qd.D = ((63 + f->kw) >> 6) + 1;
    /* the left region: the interior columns the left border copies */
    size_t L0q = f->IS;
    if (f->IS > 0) {
        ptrdiff_t mx = 0;
        for (size_t j = 0; j < f->IS; j++)
            mx = s->colmap[j] > mx ? s->colmap[j] : mx;
        L0q = (f->IS + (size_t)mx + 1 + 63) / 64 * 64;
        L0q = L0q < f->IE ? L0q : f->IE;
    }
    qd.L0q = L0q;
    size_t IS = f->IS, IE = f->IE, Le = qd.Le;
    qd.nlb = IS ? (IS - 1) / 64 + 1 : 0;                    /* blocks [0, nlb) */
    size_t rb0 = IE / 64, rb1 = (Le + 63) / 64;              /* blocks [rb0, rb1) */
    qd.nrb = IE < Le ? rb1 - rb0 : 0;
    size_t lenP = 16 * ((qd.nbP > qd.nob ? qd.nbP : qd.nob) + qd.D + 2) + ((f->kw + 3) >> 2) + 32;
    size_t bytesE = (qd.nbE * 64 * 2 + 64 + 63) / 64 * 64, bytesP = (lenP * 4 + 63) / 64 * 64;
    size_t bytesB = (qd.nlb + qd.nrb) * sizeof(bxq_bb);
    size_t bytes = bytesE + 4 * bytesP + bytesB + 64;
    unsigned char *mem = calloc(1, bytes);
    if (!mem)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "box filter: %zu bytes of row buffers", bytes);
    unsigned char *cur = mem + ((64 - (uintptr_t)mem % 64) % 64);
    qd.E = (uint16_t *)cur;
    cur += bytesE;
    for (int t = 0; t < 4; t++, cur += bytesP)
        qd.PT[t] = (uint32_t *)cur;
    for (size_t t = 0; t < 4; t++) {
        qd.plo[t] = qd.PT[t];
        qd.phi[t] = qd.PT[(t + f->kw) & 3] + ((t + f->kw) >> 2);
    }
    qd.lbb = (bxq_bb *)cur;
    qd.rbb = qd.lbb + qd.nlb;
    for (size_t i = 0; i < qd.nlb + qd.nrb; i++) {
        bxq_bb *bb = i < qd.nlb ? qd.lbb + i : qd.rbb + (i - qd.nlb);
        bb->b = i < qd.nlb ? i : rb0 + (i - qd.nlb);
        for (size_t t = 0; t < 4; t++)
            for (size_t l = 0; l < 16; l++) {
                size_t k = 64 * bb->b + 4 * l + t;
                int border = k < Le && (k < IS || k >= IE);
                /* f->src: left border k, then right border k - IE + IS */
                size_t src = border ? f->src[k < IS ? k : k - IE + IS] : 0;
                bb->idx[t][l] = border ? (int32_t)bxq_pos(qd.nbE, src) : 0;
                if (border) {
                    bb->m[t] = (__mmask16)(bb->m[t] | (1u << l));
                    if (t & 1)
                        bb->mb |= (__mmask32)1u << (2 * l + (t >> 1));
                    else
                        bb->ma |= (__mmask32)1u << (2 * l + (t >> 1));
                }
            }
    }
    const uint32_t *e = f->e;
    for (size_t k = 0; k < qd.Le; k++)
        qd.E[bxq_pos(qd.nbE, k)] = (uint16_t)e[k];
    bxq_rows(&qd, job, y0, y1);
    free(mem);
    return PIXSUM_OK;
}

/* Runs output rows [y0, y1) if the request has a one-pass kernel: returns
 * -1 when it has not (nothing done), else PIXSUM_OK or
 * PIXSUM_ERR_NO_MEMORY. rowcount[r]: how often image row r is in the first
 * window (output row y0). */
static int bxf_try(const psi_job *job, const bx_state *s, const uint64_t *rowcount, size_t y0,
                   size_t y1)
{
    const psi_box_plan *p = s->p;
    const pixsum_view *in = &job->in, *out = &job->out;
    int kind = bxf_pick(s, out->type);
    if (kind < 0)
        return -1;
    bxf f;
    memset(&f, 0, sizeof f);
    f.s = s;
    f.kind = (bxf_kind)kind;
    f.flt = p->acc == PSI_BOX_ACC_F64;
    f.it = s->t;
    f.C = s->C;
    f.kw = p->spec.kw;
    size_t V = f.flt ? 8 : 16, C = f.C;
    int valid = p->spec.border == PIXSUM_BORDER_VALID;
    size_t ax = valid ? 0 : p->ax;
    f.fast_carry = V % C == 0;
    f.LeC = s->Le * C;
    f.IS = ax * C;
    f.IE = f.IS + s->W * C;
    f.kwC = f.kw * C;
    f.OWC = s->OW * C;
    f.lag = (f.kw - 1) * C;
    f.mode = f.kwC < V ? BXF_BEHIND_REGS
             : f.kwC % V ? BXF_BEHIND_PAIR : BXF_BEHIND_LOAD;
    f.off0 = f.kwC / V * V;
    f.off1 = f.off0 + V;
    f.osz = kind == BXF_LOCAL ? 4 : pixsum_type_size(out->type);
    f.L0 = f.IS;
    if (ax > 0) {
        ptrdiff_t mx = 0;
        for (size_t j = 0; j < ax; j++)
            mx = s->colmap[j] > mx ? s->colmap[j] : mx;
        size_t need = (ax + (size_t)mx + 1) * C;
        need = (need + V - 1) / V * V;
        f.L0 = need < f.IE ? need : f.IE;
        if (f.L0 < f.IS)
            f.L0 = f.IS;
    }
    f.n = (uint32_t)s->n;
    f.dn = (double)s->n;
    f.inv = 1.0 / f.dn;
    f.inv2d = 1.0 / (f.dn * f.dn);
    f.finv = 1.0f / (float)s->n;
    f.inv2f = 0.5f / (float)s->n;
    f.fhi = (float)(1.0 / (double)s->n);
    f.flo = (float)(1.0 / (double)s->n - (double)f.fhi);
    f.n2 = 2 * (int32_t)(s->n < (1u << 24) ? s->n : 0);
    f.even_n = (s->n & 1) == 0;
    for (size_t ph = 0; ph < C; ph++)
        f.nextph[ph] = (ph + 8) % C;
    for (size_t ph = 0; ph < C; ph++)
        for (size_t l = 0; l < 8; l++) {
            double K = s->K[(ph + l) % C];
            f.Kl[ph][l] = K;
            f.nKl[ph][l] = f.dn * K;
        }
    /* the column sums with a zero front pad of kw C (rounded to 64 bytes):
     * e[k - kw C] reads zeros for k < kw C */
    size_t esz = f.flt ? 8 : 4, len = (f.LeC + V - 1) / V * V + V;
    size_t pad = (f.kwC * esz + 63) / 64 * 64, ebytes = pad + (len * esz + 63) / 64 * 64;
    int sq = kind >= BXF_VAR_F32 && kind <= BXF_LOCAL;
    size_t nsrc = f.IS + (f.LeC - f.IE);
    size_t bytes = ebytes * (sq ? 2 : 1) + nsrc * (sizeof(size_t) + 4) + 64;
    /* BXF_LOCAL: rows of S, Q (u32), means and standard deviations (f64) */
    size_t lrow = kind == BXF_LOCAL ? (f.OWC * 8 + 63) / 64 * 64 : 0;
    size_t loff = (bytes - 64 + 63) / 64 * 64; /* after the other buffers, aligned */
    if (lrow)
        bytes = loff + 3 * lrow + 64;
    unsigned char *mem = calloc(1, bytes);
    if (!mem)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "box filter: %zu bytes of row buffers", bytes);
    unsigned char *base = mem + ((64 - (uintptr_t)mem % 64) % 64);
    uint32_t *lsrow = NULL;
    double *lmu = NULL, *lsd = NULL;
    if (lrow) {
        unsigned char *lb = base + loff;
        lsrow = (uint32_t *)lb;
        f.lq = lsrow + f.OWC;
        lmu = (double *)(lb + lrow);
        lsd = (double *)(lb + 2 * lrow);
    }
    f.e = base + pad;
    if (sq)
        f.q = (uint32_t *)(base + ebytes + pad);
    f.src = (size_t *)(base + ebytes * (sq ? 2 : 1));
    f.src32 = (int32_t *)(f.src + nsrc);
    for (size_t i = 0; i < nsrc; i++) {
        size_t k = i < f.IS ? i : i - f.IS + f.IE;
        f.src[i] = (ax + (size_t)s->colmap[k / C]) * C + k % C;
        f.src32[i] = (int32_t)f.src[i];
    }

    /* the first window's rows, each with its multiplicity */
    for (size_t r = 0; r < s->H; r++) {
        uint64_t w = rowcount[r];
        if (!w)
            continue;
        const void *row = psi_row(in, r, 0);
        size_t m = s->W * C;
        if (f.flt) {
            double *e = (double *)f.e + f.IS, dw = (double)w;
            const double *kb = s->kb;
            if (f.it == PIXSUM_F32) {
                const float *a = row;
                for (size_t i = 0; i < m; i++)
                    e[i] += dw * ((double)a[i] - kb[i]);
            } else {
                const double *a = row;
                for (size_t i = 0; i < m; i++)
                    e[i] += dw * (a[i] - kb[i]);
            }
        } else {
            uint32_t *e = (uint32_t *)f.e + f.IS, w32 = (uint32_t)w;
            if (f.it == PIXSUM_U8) {
                const uint8_t *a = row;
                for (size_t i = 0; i < m; i++)
                    e[i] += w32 * a[i];
                if (f.q)
                    for (size_t i = 0; i < m; i++)
                        f.q[f.IS + i] += w32 * ((uint32_t)a[i] * a[i]);
            } else {
                const uint16_t *a = row;
                for (size_t i = 0; i < m; i++)
                    e[i] += w32 * a[i];
            }
        }
    }
    if (!f.flt) { /* u8 -> u8 means of one channel: the 64-column layout */
        bxf_fill(&f, 0);
        bxf_fill(&f, 1);
        int qst = bxq_try(&f, job, y0, y1);
        if (qst >= 0) {
            free(mem);
            return qst;
        }
    }
    pixsum_border b = p->spec.border;
    size_t ay = valid ? 0 : p->ay, kh = p->spec.kh;
    for (size_t y = y0; y < y1; y++) {
        const void *ra = NULL, *rb = NULL; /* the first row: no update */
        if (y > y0) {
            ptrdiff_t top = (ptrdiff_t)(y - 1) - (ptrdiff_t)ay;
            ptrdiff_t ro = bx_map(top, (ptrdiff_t)s->H, b);
            ptrdiff_t ri = bx_map(top + (ptrdiff_t)kh, (ptrdiff_t)s->H, b);
            if (ri != ro) {
                ra = psi_row(in, (size_t)ri, 0);
                rb = psi_row(in, (size_t)ro, 0);
            }
        }
        if (lsrow) { /* a local operation: the rule on the row's sums */
            bxf_row_int(&f, ra, rb, lsrow);
            bx_local_moments_u32(s, lsrow, f.lq, lmu, lsd);
            bx_local_apply(s, job, y, lmu, lsd);
            continue;
        }
        void *o = psi_row(out, y, 0);
        if (f.flt)
            bxf_row_f64(&f, ra, rb, o);
        else
            bxf_row_int(&f, ra, rb, o);
    }
    free(mem);
    return PIXSUM_OK;
}
#endif /* __AVX512F__ */

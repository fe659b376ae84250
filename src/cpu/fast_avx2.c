/*
 * fast_avx2.c - AVX2 row kernels of the fast integral methods: 8 lanes of
 * u32/f32 or 4 lanes of u64/f64 per 256-bit register. Built with AVX2 target
 * flags; only called when the CPU has AVX2.
 */
#include "fast_kernels.h"

#include <immintrin.h>
#include <string.h>

#define PSI_VI __m256i
#define PSI_VDW 8
#define PSI_LOADU(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define PSI_STOREU(p, x) _mm256_storeu_si256((__m256i *)(void *)(p), (x))
#define PSI_STREAM(p, x) _mm256_stream_si256((__m256i *)(void *)(p), (x))
#define PSI_ZERO() _mm256_setzero_si256()

static const int32_t carry_idx[2][4][8] = {
    {{7, 7, 7, 7, 7, 7, 7, 7},
     {6, 7, 6, 7, 6, 7, 6, 7},
     {5, 6, 7, 5, 6, 7, 5, 6},
     {4, 5, 6, 7, 4, 5, 6, 7}},
    {{6, 7, 6, 7, 6, 7, 6, 7},
     {4, 5, 6, 7, 4, 5, 6, 7},
     {2, 3, 4, 5, 6, 7, 2, 3},
     {0, 1, 2, 3, 4, 5, 6, 7}},
};

/* Shifts by k 32-bit units: an in-lane byte shift (1 cycle) plus the spill of
 * the low 128-bit lane into the high one (vperm2i128), instead of one vpermd
 * per step: on Zen 3 vpermd has a latency of about 8 cycles, and the ladder's
 * steps are dependent, so a vpermd ladder would be latency-bound. The
 * ladder's shift counts are constants in the one-channel kernels (the switch
 * folds away); other channel counts branch on k. */
typedef struct {
    int k;
} psi_shift_t;

static inline psi_shift_t psi_shift_make(int k)
{
    psi_shift_t s = {k};
    return s;
}

static inline __attribute__((always_inline)) __m256i psi_shift(__m256i x, psi_shift_t s)
{
    __m256i lo = _mm256_permute2x128_si256(x, x, 0x08); /* [0 | low lane of x] */
    switch (s.k) {
    case 1:
        return _mm256_alignr_epi8(x, lo, 12);
    case 2:
        return _mm256_alignr_epi8(x, lo, 8);
    case 3:
        return _mm256_alignr_epi8(x, lo, 4);
    case 4:
        return lo;
    case 5:
        return _mm256_slli_si256(lo, 4);
    case 6:
        return _mm256_slli_si256(lo, 8);
    default:
        return _mm256_slli_si256(lo, 12);
    }
}

/* The carry pattern: where it is a broadcast of the high lane (one or more
 * units), vperm2i128 + vpshufd (latency about 4 cycles on Zen 3) instead of
 * vpermd (about 8). mode: 0 vpermd, 1 last unit, 2 last two units, 3 high
 * lane, 4 x itself. */
typedef struct {
    __m256i idx;
    int mode;
} psi_perm_t;

static inline psi_perm_t psi_perm_make(int dpl, int c)
{
    static const signed char modes[2][4] = {{1, 2, 0, 3}, {2, 3, 0, 4}};
    psi_perm_t p = {PSI_LOADU(carry_idx[dpl - 1][c - 1]), modes[dpl - 1][c - 1]};
    return p;
}

static inline __attribute__((always_inline)) __m256i psi_perm(__m256i x, psi_perm_t p)
{
    __m256i hi = _mm256_permute2x128_si256(x, x, 0x11);
    switch (p.mode) {
    case 1:
        return _mm256_shuffle_epi32(hi, 0xFF);
    case 2:
        return _mm256_shuffle_epi32(hi, 0xEE);
    case 3:
        return hi;
    case 4:
        return x;
    default:
        return _mm256_permutevar8x32_epi32(x, p.idx);
    }
}

#define PSI_SHORT_CARRY 1
#include "fast_row_template.h"

#define L128(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define L64(p) _mm_loadl_epi64((const __m128i *)(const void *)(p))

static inline __m128i load32(const void *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return _mm_cvtsi32_si128(v);
}

/* u32 lanes */
#define LD_U8_A32(p) _mm256_cvtepu8_epi32(L64(p))
#define LD_U16_A32(p) _mm256_cvtepu16_epi32(L128(p))
#define LD_I16_A32(p) _mm256_cvtepi16_epi32(L128(p))
#define ADD_A32(a, b) _mm256_add_epi32(a, b)
#define SQ_A32(x) _mm256_mullo_epi32(x, x)
/* u64 lanes */
#define LD_U8_A64(p) _mm256_cvtepu8_epi64(load32(p))
#define LD_U16_A64(p) _mm256_cvtepu16_epi64(L64(p))
#define LD_I16_A64(p) _mm256_cvtepi16_epi64(L64(p))
#define LD_I32_A64(p) _mm256_cvtepi32_epi64(L128(p))
#define LD_U32_A64(p) _mm256_cvtepu32_epi64(L128(p))
#define ADD_A64(a, b) _mm256_add_epi64(a, b)
#define SQ_A64(x) sq_a64(x)
static inline __m256i sq_a64(__m256i x)
{
    __m256i sign = _mm256_cmpgt_epi64(_mm256_setzero_si256(), x);
    __m256i a = _mm256_sub_epi64(_mm256_xor_si256(x, sign), sign);
    return _mm256_mul_epu32(a, a);
}
/* f32 lanes */
#define PS(x) _mm256_castsi256_ps(x)
#define SI(x) _mm256_castps_si256(x)
#define PD(x) _mm256_castsi256_pd(x)
#define SID(x) _mm256_castpd_si256(x)
#define LD_U8_F32(p) SI(_mm256_cvtepi32_ps(LD_U8_A32(p)))
#define LD_U16_F32(p) SI(_mm256_cvtepi32_ps(LD_U16_A32(p)))
#define LD_I16_F32(p) SI(_mm256_cvtepi32_ps(LD_I16_A32(p)))
#define LD_F32_F32(p) PSI_LOADU(p)
#define ADD_F32(a, b) SI(_mm256_add_ps(PS(a), PS(b)))
#define SQ_F32(x) SI(_mm256_mul_ps(PS(x), PS(x)))
/* f64 lanes */
#define LD_U8_F64(p) SID(_mm256_cvtepi32_pd(_mm_cvtepu8_epi32(load32(p))))
#define LD_U16_F64(p) SID(_mm256_cvtepi32_pd(_mm_cvtepu16_epi32(L64(p))))
#define LD_I16_F64(p) SID(_mm256_cvtepi32_pd(_mm_cvtepi16_epi32(L64(p))))
#define LD_I32_F64(p) SID(_mm256_cvtepi32_pd(L128(p)))
#define LD_U32_F64(p) SID(u32_to_f64(L128(p)))
/* (double)u = (double)(int)(u - 2^31) + 2^31, exact */
static inline __m256d u32_to_f64(__m128i u)
{
    __m128i s = _mm_xor_si128(u, _mm_set1_epi32((int)0x80000000u));
    return _mm256_add_pd(_mm256_cvtepi32_pd(s), _mm256_set1_pd(2147483648.0));
}
#define LD_F32_F64(p) SID(_mm256_cvtps_pd(_mm_loadu_ps((const float *)(const void *)(p))))
#define LD_F64_F64(p) PSI_LOADU(p)
#define ADD_F64(a, b) SID(_mm256_add_pd(PD(a), PD(b)))
#define SQ_F64(x) SID(_mm256_mul_pd(PD(x), PD(x)))
#define NOSQ(x) (x)

#include "fast_kinds.h"

static psi_fast_row_fn psi_fast_row_avx2_generic(pixsum_type in, pixsum_type out, int squared,
                                                 size_t channels);
PSI_FAST_GETTER(psi_fast_row_avx2_generic)

/* ---- u8 -> u64 squared table, one channel: 32 pixels per step ----
 * Squares in 16-bit units (255^2 fits), widened to 32-bit units in-lane and
 * prefixed within groups of 4 (vpsllq, then the pair total through vpshufd and
 * a mask) and across the 4 groups of each 128-bit lane (at most 16 * 255^2, no
 * overflow); widened in-lane to 64-bit units, the high lane gets the low lane's
 * total and the carry, and vperm2i128 puts the units in order (10 cross-lane
 * shuffles per 32 pixels, against 3 per 4 pixels for the generic ladder). */
PSI_FAST_ALWAYS_INLINE void sq_u8u64_c1_body(const uint8_t *in, uint64_t *out,
                                             const uint64_t *prev, uint64_t *acc, size_t n,
                                             const int has_prev, const int stream,
                                             const int has_acc)
{
    uint64_t s = 0;
    size_t i = 0;
    if (stream) /* scalar until the stores are aligned (the caller checked 8 bytes) */
        for (; i < n && (uintptr_t)(out + i) % 32 != 0; i++) {
            s += (uint64_t)in[i] * in[i];
            uint64_t r = s + (has_prev ? prev[i] : 0);
            out[i] = r;
            if (has_acc)
                acc[i] = r;
        }
    const __m256i z = _mm256_setzero_si256();
    const __m256i hi2 = _mm256_setr_epi32(0, 0, -1, -1, 0, 0, -1, -1);
    __m256i carry = _mm256_set1_epi64x((long long)s);
    for (; i + 32 <= n; i += 32) {
        __m256i v = PSI_LOADU(in + i);
        __m256i a = _mm256_unpacklo_epi8(v, z), b = _mm256_unpackhi_epi8(v, z);
        a = _mm256_mullo_epi16(a, a);
        b = _mm256_mullo_epi16(b, b);
        /* g0 = pixels 0-3 | 16-19, g1 = 4-7 | 20-23, g2 = 8-11 | 24-27,
         * g3 = 12-15 | 28-31 */
        __m256i g[4] = {_mm256_unpacklo_epi16(a, z), _mm256_unpackhi_epi16(a, z),
                        _mm256_unpacklo_epi16(b, z), _mm256_unpackhi_epi16(b, z)};
        for (int k = 0; k < 4; k++) {
            g[k] = _mm256_add_epi32(g[k], _mm256_slli_epi64(g[k], 32));
            g[k] = _mm256_add_epi32(
                g[k], _mm256_and_si256(_mm256_shuffle_epi32(g[k], 0x50), hi2));
        }
        for (int k = 1; k < 4; k++)
            g[k] = _mm256_add_epi32(g[k], _mm256_shuffle_epi32(g[k - 1], 0xFF));
        __m256i t = _mm256_srli_si256(g[3], 12); /* lane total in unit 0 */
        t = _mm256_unpacklo_epi64(t, t);
        __m256i off = _mm256_add_epi64(carry, _mm256_permute2x128_si256(t, t, 0x08));
        carry = _mm256_add_epi64(carry,
                                 _mm256_add_epi64(t, _mm256_permute2x128_si256(t, t, 0x01)));
        for (int k = 0; k < 4; k++) {
            __m256i lo = _mm256_add_epi64(_mm256_unpacklo_epi32(g[k], z), off);
            __m256i hi = _mm256_add_epi64(_mm256_unpackhi_epi32(g[k], z), off);
            __m256i r[2] = {_mm256_permute2x128_si256(lo, hi, 0x20),  /* 4k .. 4k+3 */
                            _mm256_permute2x128_si256(lo, hi, 0x31)}; /* 16+4k .. */
            for (int h = 0; h < 2; h++) {
                size_t at = i + 4 * (size_t)k + 16 * (size_t)h;
                if (has_prev)
                    r[h] = _mm256_add_epi64(r[h], PSI_LOADU(prev + at));
                if (stream)
                    PSI_STREAM(out + at, r[h]);
                else
                    PSI_STOREU(out + at, r[h]);
                if (has_acc)
                    PSI_STOREU(acc + at, r[h]);
            }
        }
    }
    s = (uint64_t)_mm256_extract_epi64(carry, 0);
    for (; i < n; i++) {
        s += (uint64_t)in[i] * in[i];
        uint64_t r = s + (has_prev ? prev[i] : 0);
        out[i] = r;
        if (has_acc)
            acc[i] = r;
    }
}

static void sq_u8u64_c1(const void *in_, void *out_, const void *prev_, void *acc_,
                        size_t width, size_t ch, int stream)
{
    const uint8_t *in = in_;
    uint64_t *out = out_, *acc = acc_;
    const uint64_t *prev = prev_;
    if (ch != 1) {
        sq_u8_u64(in_, out_, prev_, acc_, width, ch, stream);
        return;
    }
    int st = stream && (uintptr_t)out % 8 == 0;
#define SQ_CALL(P, S, A) sq_u8u64_c1_body(in, out, prev, acc, width, P, S, A)
    if (prev) {
        if (st && acc)
            SQ_CALL(1, 1, 1);
        else if (st)
            SQ_CALL(1, 1, 0);
        else if (acc)
            SQ_CALL(1, 0, 1);
        else
            SQ_CALL(1, 0, 0);
    } else {
        if (st && acc)
            SQ_CALL(0, 1, 1);
        else if (st)
            SQ_CALL(0, 1, 0);
        else if (acc)
            SQ_CALL(0, 0, 1);
        else
            SQ_CALL(0, 0, 0);
    }
#undef SQ_CALL
}

psi_fast_row_fn psi_fast_row_avx2(pixsum_type in, pixsum_type out, int squared,
                                  size_t channels)
{
    if (in == PIXSUM_U8 && psi_fast_code(out) == PIXSUM_U64 && squared && channels == 1)
        return sq_u8u64_c1;
    return psi_fast_row_avx2_generic(in, out, squared, channels);
}
PSI_FAST_COLSUM_GETTER(psi_fast_colsum_avx2)

/* ---- two rows at once for u8 -> u32 (fast_pair_template.h) ---- */

#define PSI_ADD32(a, b) _mm256_add_epi32(a, b)
#define PSI_AND(a, b) _mm256_and_si256(a, b)
#define PSI_OR(a, b) _mm256_or_si256(a, b)
#define PSI_SLLI32(x, k) _mm256_slli_epi32(x, k)
#define PSI_SRLI32(x, k) _mm256_srli_epi32(x, k)
#define PSI_SET1_32(v) _mm256_set1_epi32(v)
#define PSI_PAIR_FN psi_fast_pair_u8u32_avx2

/* The inclusive prefix of one channel within x: three shifts of 1, 2 and 4
 * units (psi_shift() with constant counts). */
static inline __attribute__((always_inline)) __m256i psi_prefix_c1(__m256i x)
{
    x = _mm256_add_epi32(x, psi_shift(x, psi_shift_make(1)));
    x = _mm256_add_epi32(x, psi_shift(x, psi_shift_make(2)));
    return _mm256_add_epi32(x, psi_shift(x, psi_shift_make(4)));
}

/* 32 pixels of both rows with in-lane shuffles only, except six vperm2i128
 * (a 256-bit shift ladder costs a cross-lane shuffle per step): each row's
 * bytes are widened to 16 bits, prefixed within groups of 4 by 64-bit shifts
 * (vpsllq, no shuffle), then the rows are interleaved into 32-bit units (row
 * 0 low half, row 1 high half) and the groups chained within each 128-bit
 * lane; the high lane then gets the low lane's total, and vperm2i128 puts the
 * units in order. The 16-bit halves never carry: a lane's sum is at most
 * 32 * 255. */
static inline __attribute__((always_inline)) void psi_pair_block32(const uint8_t *in0,
                                                                   const uint8_t *in1,
                                                                   __m256i o[4], __m256i *tot)
{
    const __m256i z = _mm256_setzero_si256();
    __m256i va = PSI_LOADU(in0), vb = PSI_LOADU(in1);
    __m256i aa = _mm256_unpacklo_epi8(va, z), ba = _mm256_unpackhi_epi8(va, z);
    __m256i ab = _mm256_unpacklo_epi8(vb, z), bb = _mm256_unpackhi_epi8(vb, z);
    aa = _mm256_add_epi16(aa, _mm256_slli_epi64(aa, 16));
    ab = _mm256_add_epi16(ab, _mm256_slli_epi64(ab, 16));
    ba = _mm256_add_epi16(ba, _mm256_slli_epi64(ba, 16));
    bb = _mm256_add_epi16(bb, _mm256_slli_epi64(bb, 16));
    aa = _mm256_add_epi16(aa, _mm256_slli_epi64(aa, 32));
    ab = _mm256_add_epi16(ab, _mm256_slli_epi64(ab, 32));
    ba = _mm256_add_epi16(ba, _mm256_slli_epi64(ba, 32));
    bb = _mm256_add_epi16(bb, _mm256_slli_epi64(bb, 32));
    /* g0 = pixels 0-3 | 16-19, g1 = 4-7 | 20-23, g2 = 8-11 | 24-27,
     * g3 = 12-15 | 28-31 */
    __m256i g0 = _mm256_unpacklo_epi16(aa, ab), g1 = _mm256_unpackhi_epi16(aa, ab);
    __m256i g2 = _mm256_unpacklo_epi16(ba, bb), g3 = _mm256_unpackhi_epi16(ba, bb);
    g1 = _mm256_add_epi32(g1, _mm256_shuffle_epi32(g0, 0xFF));
    g2 = _mm256_add_epi32(g2, _mm256_shuffle_epi32(g1, 0xFF));
    g3 = _mm256_add_epi32(g3, _mm256_shuffle_epi32(g2, 0xFF));
    __m256i t = _mm256_shuffle_epi32(g3, 0xFF);          /* lane totals */
    __m256i t01 = _mm256_permute2x128_si256(t, t, 0x08); /* [0 | low's] */
    *tot = _mm256_add_epi32(t, _mm256_permute2x128_si256(t, t, 0x01));
    g0 = _mm256_add_epi32(g0, t01);
    g1 = _mm256_add_epi32(g1, t01);
    g2 = _mm256_add_epi32(g2, t01);
    g3 = _mm256_add_epi32(g3, t01);
    o[0] = _mm256_permute2x128_si256(g0, g1, 0x20);
    o[1] = _mm256_permute2x128_si256(g2, g3, 0x20);
    o[2] = _mm256_permute2x128_si256(g0, g1, 0x31);
    o[3] = _mm256_permute2x128_si256(g2, g3, 0x31);
}

#include "fast_pair_template.h"

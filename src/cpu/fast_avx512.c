/*
 * fast_avx512.c - AVX-512 (F, BW, VL, DQ) row kernels of the fast integral
 * methods: 16 lanes of u32/f32 or 8 lanes of u64/f64 per 512-bit register.
 * Built with AVX-512 target flags; only called when the CPU has AVX-512.
 */
#include "fast_kernels.h"

#include <immintrin.h>
#include <string.h>

#define PSI_VI __m512i
#define PSI_VDW 16
#define PSI_LOADU(p) _mm512_loadu_si512((const void *)(p))
#define PSI_STOREU(p, x) _mm512_storeu_si512((void *)(p), (x))
#define PSI_STREAM(p, x) _mm512_stream_si512((void *)(p), (x))
#define PSI_ZERO() _mm512_setzero_si512()

/* ramp[16 - k + j] = j - k: the permutation that moves units up by k. */
static const int32_t ramp[32] = {-16, -15, -14, -13, -12, -11, -10, -9, -8, -7, -6,
                                 -5,  -4,  -3,  -2,  -1,  0,   1,   2,  3,  4,  5,
                                 6,   7,   8,   9,   10,  11,  12,  13, 14, 15};

/* carry_idx[dpl - 1][c - 1]: 32-bit unit j takes unit idx (see the template). */
static const int32_t carry_idx[2][4][16] = {
    {{15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15},
     {14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15},
     {13, 14, 15, 13, 14, 15, 13, 14, 15, 13, 14, 15, 13, 14, 15, 13},
     {12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15}},
    {{14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15},
     {12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15},
     {10, 11, 12, 13, 14, 15, 10, 11, 12, 13, 14, 15, 10, 11, 12, 13},
     {8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15}},
};

typedef struct {
    __m512i idx;
    __mmask16 keep;
} psi_shift_t;

static inline psi_shift_t psi_shift_make(int k)
{
    psi_shift_t s = {_mm512_loadu_si512((const void *)(ramp + 16 - k)),
                     (__mmask16)(0xFFFFu << k)};
    return s;
}

static inline __m512i psi_shift(__m512i x, psi_shift_t s)
{
    return _mm512_maskz_permutexvar_epi32(s.keep, s.idx, x);
}

typedef __m512i psi_perm_t;

static inline psi_perm_t psi_perm_make(int dpl, int c)
{
    return _mm512_loadu_si512((const void *)carry_idx[dpl - 1][c - 1]);
}

static inline __m512i psi_perm(__m512i x, psi_perm_t p)
{
    return _mm512_permutexvar_epi32(p, x);
}

#include "fast_row_template.h"

/* ---- widening loads ---- */
#define L128(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define L64(p) _mm_loadl_epi64((const __m128i *)(const void *)(p))
#define L256(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))

/* u32 lanes */
#define LD_U8_A32(p) _mm512_cvtepu8_epi32(L128(p))
#define LD_U16_A32(p) _mm512_cvtepu16_epi32(L256(p))
#define LD_I16_A32(p) _mm512_cvtepi16_epi32(L256(p))
#define ADD_A32(a, b) _mm512_add_epi32(a, b)
#define SQ_A32(x) _mm512_mullo_epi32(x, x)
/* u64 lanes */
#define LD_U8_A64(p) _mm512_cvtepu8_epi64(L64(p))
#define LD_U16_A64(p) _mm512_cvtepu16_epi64(L128(p))
#define LD_I16_A64(p) _mm512_cvtepi16_epi64(L128(p))
#define LD_I32_A64(p) _mm512_cvtepi32_epi64(L256(p))
#define LD_U32_A64(p) _mm512_cvtepu32_epi64(L256(p))
#define ADD_A64(a, b) _mm512_add_epi64(a, b)
/* |x|^2 from the low 32 bits of |x| (exact for inputs of at most 32 bits) */
#define SQ_A64(x) sq_a64(x)
static inline __m512i sq_a64(__m512i x)
{
    __m512i a = _mm512_abs_epi64(x);
    return _mm512_mul_epu32(a, a);
}
/* f32 lanes (kept as bits in __m512i) */
#define PS(x) _mm512_castsi512_ps(x)
#define SI(x) _mm512_castps_si512(x)
#define PD(x) _mm512_castsi512_pd(x)
#define SID(x) _mm512_castpd_si512(x)
#define LD_U8_F32(p) SI(_mm512_cvtepi32_ps(LD_U8_A32(p)))
#define LD_U16_F32(p) SI(_mm512_cvtepi32_ps(LD_U16_A32(p)))
#define LD_I16_F32(p) SI(_mm512_cvtepi32_ps(LD_I16_A32(p)))
#define LD_F32_F32(p) _mm512_loadu_si512((const void *)(p))
#define ADD_F32(a, b) SI(_mm512_add_ps(PS(a), PS(b)))
#define SQ_F32(x) SI(_mm512_mul_ps(PS(x), PS(x)))
/* f64 lanes */
#define LD_U8_F64(p) SID(_mm512_cvtepi32_pd(_mm256_cvtepu8_epi32(L64(p))))
#define LD_U16_F64(p) SID(_mm512_cvtepi32_pd(_mm256_cvtepu16_epi32(L128(p))))
#define LD_I16_F64(p) SID(_mm512_cvtepi32_pd(_mm256_cvtepi16_epi32(L128(p))))
#define LD_I32_F64(p) SID(_mm512_cvtepi32_pd(L256(p)))
#define LD_U32_F64(p) SID(_mm512_cvtepu32_pd(L256(p)))
#define LD_F32_F64(p) SID(_mm512_cvtps_pd(_mm256_loadu_ps((const float *)(const void *)(p))))
#define LD_F64_F64(p) _mm512_loadu_si512((const void *)(p))
#define ADD_F64(a, b) SID(_mm512_add_pd(PD(a), PD(b)))
#define SQ_F64(x) SID(_mm512_mul_pd(PD(x), PD(x)))
#define NOSQ(x) (x)

#include "fast_kinds.h"

PSI_FAST_GETTER(psi_fast_row_avx512)
PSI_FAST_COLSUM_GETTER(psi_fast_colsum_avx512)

/* out[a, b) = acc[a, b) with non-temporal stores (out 64-byte aligned, a and
 * b multiples of 16). */
static inline void stream_from_acc(uint32_t *out, const uint32_t *acc, size_t a, size_t b)
{
    for (size_t x = a; x < b; x += 16)
        _mm512_stream_si512((void *)(out + x), _mm512_loadu_si512((const void *)(acc + x)));
}

/* ---- two rows at once for u8 -> u32 ----
 * Row y goes to the low 16 bits and row y+1 to the high 16 bits of each u32
 * lane; one shift-and-add ladder then computes both rows' in-vector prefixes
 * (a lane's partial sum is at most 16 x 255 < 2^16, so the halves never
 * carry into each other), halving the shuffles per pixel. The halves are split
 * before the running totals (which do exceed 16 bits) are added. Row y+1 adds
 * row y's result straight from the register. */
PSI_FAST_ALWAYS_INLINE void u8u32_pair_body(const uint8_t *in0, const uint8_t *in1,
                                            uint32_t *out0, uint32_t *out1,
                                            const uint32_t *prev, uint32_t *acc, size_t n,
                                            size_t ch, const int has_prev, const int stream,
                                            const int has_acc)
{
    psi_shift_t sh[4];
    int nsteps = 0;
    for (size_t s = ch; s < 16; s *= 2)
        sh[nsteps++] = psi_shift_make((int)s);
    const psi_perm_t perm = psi_perm_make(1, (int)ch);
    const int rotating = 16 % ch != 0;
    const __m512i low16 = _mm512_set1_epi32(0xFFFF);
    __m512i ca = _mm512_setzero_si512(), cb = _mm512_setzero_si512();
    size_t i = 0;
    if (ch == 1) {
        /* two vectors per step with their ladders interleaved (the ladder is a
         * chain of dependent shuffles; two chains keep the shuffle unit busy);
         * the second vector takes the first one's totals before the carry
         * (at most 32 x 255 per half, still below 2^16) */
        const __m512i z = _mm512_setzero_si512(), last = _mm512_set1_epi32(15);
        /* streamed with a row buffer: row 1 streamed out of acc a chunk at a
         * time (PSI_PAIR_CHUNK) */
        const int defer = stream && has_acc;
        size_t copied = 0; /* out1 holds acc's values below this */
        for (; i + 32 <= n; i += 32) {
            __m512i p = _mm512_or_si512(_mm512_cvtepu8_epi32(L128(in0 + i)),
                                        _mm512_slli_epi32(_mm512_cvtepu8_epi32(L128(in1 + i)), 16));
            __m512i q = _mm512_or_si512(
                _mm512_cvtepu8_epi32(L128(in0 + i + 16)),
                _mm512_slli_epi32(_mm512_cvtepu8_epi32(L128(in1 + i + 16)), 16));
            p = _mm512_add_epi32(p, _mm512_alignr_epi32(p, z, 15));
            q = _mm512_add_epi32(q, _mm512_alignr_epi32(q, z, 15));
            p = _mm512_add_epi32(p, _mm512_alignr_epi32(p, z, 14));
            q = _mm512_add_epi32(q, _mm512_alignr_epi32(q, z, 14));
            p = _mm512_add_epi32(p, _mm512_alignr_epi32(p, z, 12));
            q = _mm512_add_epi32(q, _mm512_alignr_epi32(q, z, 12));
            p = _mm512_add_epi32(p, _mm512_alignr_epi32(p, z, 8));
            q = _mm512_add_epi32(q, _mm512_alignr_epi32(q, z, 8));
            q = _mm512_add_epi32(q, _mm512_permutexvar_epi32(last, p));
            __m512i tq = _mm512_permutexvar_epi32(last, q);
            __m512i r0 = _mm512_add_epi32(_mm512_and_si512(p, low16), ca);
            __m512i r1 = _mm512_add_epi32(_mm512_srli_epi32(p, 16), cb);
            __m512i s0 = _mm512_add_epi32(_mm512_and_si512(q, low16), ca);
            __m512i s1 = _mm512_add_epi32(_mm512_srli_epi32(q, 16), cb);
            ca = _mm512_add_epi32(ca, _mm512_and_si512(tq, low16));
            cb = _mm512_add_epi32(cb, _mm512_srli_epi32(tq, 16));
            if (has_prev) {
                r0 = _mm512_add_epi32(r0, _mm512_loadu_si512((const void *)(prev + i)));
                s0 = _mm512_add_epi32(s0, _mm512_loadu_si512((const void *)(prev + i + 16)));
            }
            r1 = _mm512_add_epi32(r1, r0);
            s1 = _mm512_add_epi32(s1, s0);
            if (stream) {
                _mm512_stream_si512((void *)(out0 + i), r0);
                _mm512_stream_si512((void *)(out0 + i + 16), s0);
                if (!defer) {
                    _mm512_stream_si512((void *)(out1 + i), r1);
                    _mm512_stream_si512((void *)(out1 + i + 16), s1);
                }
            } else {
                _mm512_storeu_si512((void *)(out0 + i), r0);
                _mm512_storeu_si512((void *)(out0 + i + 16), s0);
                _mm512_storeu_si512((void *)(out1 + i), r1);
                _mm512_storeu_si512((void *)(out1 + i + 16), s1);
            }
            if (has_acc) {
                _mm512_storeu_si512((void *)(acc + i), r1);
                _mm512_storeu_si512((void *)(acc + i + 16), s1);
            }
            if (defer && (i + 32) % PSI_PAIR_CHUNK == 0) {
                stream_from_acc(out1, acc, copied, i + 32);
                copied = i + 32;
            }
        }
        if (defer)
            stream_from_acc(out1, acc, copied, i);
    }
    for (; i + 16 <= n; i += 16) {
        __m512i a = _mm512_cvtepu8_epi32(L128(in0 + i));
        __m512i b = _mm512_cvtepu8_epi32(L128(in1 + i));
        __m512i p = _mm512_or_si512(a, _mm512_slli_epi32(b, 16));
        if (ch == 1) { /* valignd with zeros: shifts with immediate distances */
            const __m512i z = _mm512_setzero_si512();
            p = _mm512_add_epi32(p, _mm512_alignr_epi32(p, z, 15));
            p = _mm512_add_epi32(p, _mm512_alignr_epi32(p, z, 14));
            p = _mm512_add_epi32(p, _mm512_alignr_epi32(p, z, 12));
            p = _mm512_add_epi32(p, _mm512_alignr_epi32(p, z, 8));
        } else {
            for (int k = 0; k < nsteps; k++)
                p = _mm512_add_epi32(p, psi_shift(p, sh[k]));
        }
        __m512i lo = _mm512_and_si512(p, low16), hi = _mm512_srli_epi32(p, 16);
        __m512i r0 = _mm512_add_epi32(lo, ca), r1 = _mm512_add_epi32(hi, cb);
        if (rotating) {
            ca = psi_perm(r0, perm);
            cb = psi_perm(r1, perm);
        } else {
            __m512i t = psi_perm(p, perm);
            ca = _mm512_add_epi32(ca, _mm512_and_si512(t, low16));
            cb = _mm512_add_epi32(cb, _mm512_srli_epi32(t, 16));
        }
        if (has_prev)
            r0 = _mm512_add_epi32(r0, _mm512_loadu_si512((const void *)(prev + i)));
        r1 = _mm512_add_epi32(r1, r0);
        if (stream) {
            _mm512_stream_si512((void *)(out0 + i), r0);
            _mm512_stream_si512((void *)(out1 + i), r1);
        } else {
            _mm512_storeu_si512((void *)(out0 + i), r0);
            _mm512_storeu_si512((void *)(out1 + i), r1);
        }
        if (has_acc)
            _mm512_storeu_si512((void *)(acc + i), r1);
    }
    if (i < n) { /* tail: lane j continues the total held in lane j of the carry */
        uint32_t ta[16], tb[16], sa[16], sb[16];
        _mm512_storeu_si512((void *)ta, ca);
        _mm512_storeu_si512((void *)tb, cb);
        for (size_t j = 0; i + j < n; j++) {
            sa[j] = in0[i + j] + (j >= ch ? sa[j - ch] : ta[j]);
            sb[j] = in1[i + j] + (j >= ch ? sb[j - ch] : tb[j]);
            uint32_t r0 = sa[j] + (has_prev ? prev[i + j] : 0);
            out0[i + j] = r0;
            out1[i + j] = sb[j] + r0;
            if (has_acc)
                acc[i + j] = sb[j] + r0;
        }
    }
}

PSI_FAST_ALWAYS_INLINE void pair_flags(const void *in0, const void *in1, void *out0, void *out1,
                                       const void *prev, void *acc, size_t n, size_t ch,
                                       int stream)
{
    int st = stream && (uintptr_t)out0 % 64 == 0 && (uintptr_t)out1 % 64 == 0;
    if (prev) {
        if (st && acc)
            u8u32_pair_body(in0, in1, out0, out1, prev, acc, n, ch, 1, 1, 1);
        else if (st)
            u8u32_pair_body(in0, in1, out0, out1, prev, acc, n, ch, 1, 1, 0);
        else if (acc)
            u8u32_pair_body(in0, in1, out0, out1, prev, acc, n, ch, 1, 0, 1);
        else
            u8u32_pair_body(in0, in1, out0, out1, prev, acc, n, ch, 1, 0, 0);
    } else {
        if (st && acc)
            u8u32_pair_body(in0, in1, out0, out1, prev, acc, n, ch, 0, 1, 1);
        else if (st)
            u8u32_pair_body(in0, in1, out0, out1, prev, acc, n, ch, 0, 1, 0);
        else if (acc)
            u8u32_pair_body(in0, in1, out0, out1, prev, acc, n, ch, 0, 0, 1);
        else
            u8u32_pair_body(in0, in1, out0, out1, prev, acc, n, ch, 0, 0, 0);
    }
}

void psi_fast_pair_u8u32_avx512(const void *in0, const void *in1, void *out0, void *out1,
                                const void *prev, void *acc, size_t width, size_t ch,
                                int stream)
{
    size_t n = width * ch;
    if (ch == 1)
        pair_flags(in0, in1, out0, out1, prev, acc, n, 1, stream);
    else
        pair_flags(in0, in1, out0, out1, prev, acc, n, ch, stream);
}

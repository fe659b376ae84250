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

/* ---- two rows at once for u8 -> u32 (fast_pair_template.h) ---- */

#define PSI_ADD32(a, b) _mm512_add_epi32(a, b)
#define PSI_AND(a, b) _mm512_and_si512(a, b)
#define PSI_OR(a, b) _mm512_or_si512(a, b)
#define PSI_SLLI32(x, k) _mm512_slli_epi32(x, k)
#define PSI_SRLI32(x, k) _mm512_srli_epi32(x, k)
#define PSI_SET1_32(v) _mm512_set1_epi32(v)
#define PSI_PAIR_FN psi_fast_pair_u8u32_avx512

/* The inclusive prefix of one channel within x: valignd with zeros, shifts
 * with immediate distances (no index vector, unlike psi_shift()). */
static inline __attribute__((always_inline)) __m512i psi_prefix_c1(__m512i x)
{
    const __m512i z = _mm512_setzero_si512();
    x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 15));
    x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 14));
    x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 12));
    return _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 8));
}

/* 32 pixels of both rows as two vectors with their ladders interleaved (the
 * ladder is a chain of dependent shuffles; two chains keep the shuffle unit
 * busy); the second vector takes the first one's totals (at most 32 x 255
 * per half, still below 2^16). */
static inline __attribute__((always_inline)) void psi_pair_block32(const uint8_t *in0,
                                                                   const uint8_t *in1,
                                                                   __m512i o[2], __m512i *tot)
{
    const __m512i z = _mm512_setzero_si512(), last = _mm512_set1_epi32(15);
    __m512i p = _mm512_or_si512(_mm512_cvtepu8_epi32(L128(in0)),
                                _mm512_slli_epi32(_mm512_cvtepu8_epi32(L128(in1)), 16));
    __m512i q = _mm512_or_si512(_mm512_cvtepu8_epi32(L128(in0 + 16)),
                                _mm512_slli_epi32(_mm512_cvtepu8_epi32(L128(in1 + 16)), 16));
    p = _mm512_add_epi32(p, _mm512_alignr_epi32(p, z, 15));
    q = _mm512_add_epi32(q, _mm512_alignr_epi32(q, z, 15));
    p = _mm512_add_epi32(p, _mm512_alignr_epi32(p, z, 14));
    q = _mm512_add_epi32(q, _mm512_alignr_epi32(q, z, 14));
    p = _mm512_add_epi32(p, _mm512_alignr_epi32(p, z, 12));
    q = _mm512_add_epi32(q, _mm512_alignr_epi32(q, z, 12));
    p = _mm512_add_epi32(p, _mm512_alignr_epi32(p, z, 8));
    q = _mm512_add_epi32(q, _mm512_alignr_epi32(q, z, 8));
    q = _mm512_add_epi32(q, _mm512_permutexvar_epi32(last, p));
    o[0] = p;
    o[1] = q;
    *tot = _mm512_permutexvar_epi32(last, q);
}

#include "fast_pair_template.h"

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
#define PSI_SFENCE() _mm_sfence()

/* ramp[8 - k + j] = j - k (the low 3 bits pick the unit); keep[8 - k + j] is
 * all ones for j >= k. */
static const int32_t ramp[16] = {-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7};
static const int32_t keep[16] = {0, 0, 0, 0, 0, 0, 0, 0, -1, -1, -1, -1, -1, -1, -1, -1};

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

typedef struct {
    __m256i idx, keep;
} psi_shift_t;

static inline psi_shift_t psi_shift_make(int k)
{
    psi_shift_t s = {PSI_LOADU(ramp + 8 - k), PSI_LOADU(keep + 8 - k)};
    return s;
}

static inline __m256i psi_shift(__m256i x, psi_shift_t s)
{
    return _mm256_and_si256(_mm256_permutevar8x32_epi32(x, s.idx), s.keep);
}

typedef __m256i psi_perm_t;

static inline psi_perm_t psi_perm_make(int dpl, int c)
{
    return PSI_LOADU(carry_idx[dpl - 1][c - 1]);
}

static inline __m256i psi_perm(__m256i x, psi_perm_t p)
{
    return _mm256_permutevar8x32_epi32(x, p);
}

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

PSI_FAST_GETTER(psi_fast_row_avx2)

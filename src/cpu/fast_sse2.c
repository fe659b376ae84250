/*
 * fast_sse2.c - SSE2 row kernels of the fast integral methods: 4 lanes of
 * u32/f32 or 2 lanes of u64/f64 per 128-bit register (the baseline of every
 * x86-64 CPU). SSE2 has only immediate byte shifts and shuffles, so the shift
 * distance and the carry pattern are picked by small switches.
 */
#include "fast_kernels.h"

#include <emmintrin.h>
#include <string.h>

#define PSI_VI __m128i
#define PSI_VDW 4
#define PSI_LOADU(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define PSI_STOREU(p, x) _mm_storeu_si128((__m128i *)(void *)(p), (x))
#define PSI_STREAM(p, x) _mm_stream_si128((__m128i *)(void *)(p), (x))
#define PSI_ZERO() _mm_setzero_si128()

typedef int psi_shift_t; /* distance in 32-bit units, 1..3 */

static inline psi_shift_t psi_shift_make(int k)
{
    return k;
}

static inline __m128i psi_shift(__m128i x, psi_shift_t k)
{
    switch (k) {
    case 1: return _mm_slli_si128(x, 4);
    case 2: return _mm_slli_si128(x, 8);
    default: return _mm_slli_si128(x, 12);
    }
}

typedef int psi_perm_t; /* (units per lane - 1) * 4 + channels - 1 */

static inline psi_perm_t psi_perm_make(int dpl, int c)
{
    return (dpl - 1) * 4 + c - 1;
}

static inline __m128i psi_perm(__m128i x, psi_perm_t p)
{
    switch (p) {
    case 0: return _mm_shuffle_epi32(x, _MM_SHUFFLE(3, 3, 3, 3));
    case 1: return _mm_shuffle_epi32(x, _MM_SHUFFLE(3, 2, 3, 2));
    case 2: return _mm_shuffle_epi32(x, _MM_SHUFFLE(1, 3, 2, 1));
    case 4: return _mm_shuffle_epi32(x, _MM_SHUFFLE(3, 2, 3, 2));
    default: return x; /* 4 channels in 4 lanes, 2 channels in 2 lanes */
    }
}

#include "fast_row_template.h"

static inline __m128i load16(const void *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return _mm_cvtsi32_si128(v);
}

static inline __m128i load32(const void *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return _mm_cvtsi32_si128(v);
}

#define L64(p) _mm_loadl_epi64((const __m128i *)(const void *)(p))
#define Z _mm_setzero_si128()
#define SEXT32_64(v) _mm_unpacklo_epi32((v), _mm_srai_epi32((v), 31))
#define SEXT16_32(v) _mm_srai_epi32(_mm_unpacklo_epi16((v), (v)), 16)

/* u32 lanes */
#define LD_U8_A32(p) _mm_unpacklo_epi16(_mm_unpacklo_epi8(load32(p), Z), Z)
#define LD_U16_A32(p) _mm_unpacklo_epi16(L64(p), Z)
#define LD_I16_A32(p) SEXT16_32(L64(p))
#define ADD_A32(a, b) _mm_add_epi32(a, b)
#define SQ_A32(x) sq_a32(x)
static inline __m128i sq_a32(__m128i a)
{
    __m128i hi = _mm_srli_si128(a, 4);
    __m128i even = _mm_mul_epu32(a, a), odd = _mm_mul_epu32(hi, hi);
    return _mm_unpacklo_epi32(_mm_shuffle_epi32(even, _MM_SHUFFLE(0, 0, 2, 0)),
                              _mm_shuffle_epi32(odd, _MM_SHUFFLE(0, 0, 2, 0)));
}
/* u64 lanes */
#define LD_U8_A64(p) _mm_unpacklo_epi32(_mm_unpacklo_epi16(_mm_unpacklo_epi8(load16(p), Z), Z), Z)
#define LD_U16_A64(p) _mm_unpacklo_epi32(_mm_unpacklo_epi16(load32(p), Z), Z)
#define LD_I16_A64(p) sext16_64(load32(p))
static inline __m128i sext16_64(__m128i v)
{
    __m128i w = SEXT16_32(v);
    return SEXT32_64(w);
}
#define LD_I32_A64(p) sext32_64(L64(p))
static inline __m128i sext32_64(__m128i v)
{
    return SEXT32_64(v);
}
#define LD_U32_A64(p) _mm_unpacklo_epi32(L64(p), Z)
#define ADD_A64(a, b) _mm_add_epi64(a, b)
#define SQ_A64(x) sq_a64(x)
static inline __m128i sq_a64(__m128i x)
{
    __m128i sign = _mm_shuffle_epi32(_mm_srai_epi32(x, 31), _MM_SHUFFLE(3, 3, 1, 1));
    __m128i a = _mm_sub_epi64(_mm_xor_si128(x, sign), sign);
    return _mm_mul_epu32(a, a);
}
/* f32 lanes */
#define PS(x) _mm_castsi128_ps(x)
#define SI(x) _mm_castps_si128(x)
#define PD(x) _mm_castsi128_pd(x)
#define SID(x) _mm_castpd_si128(x)
#define LD_U8_F32(p) SI(_mm_cvtepi32_ps(LD_U8_A32(p)))
#define LD_U16_F32(p) SI(_mm_cvtepi32_ps(LD_U16_A32(p)))
#define LD_I16_F32(p) SI(_mm_cvtepi32_ps(LD_I16_A32(p)))
#define LD_F32_F32(p) PSI_LOADU(p)
#define ADD_F32(a, b) SI(_mm_add_ps(PS(a), PS(b)))
#define SQ_F32(x) SI(_mm_mul_ps(PS(x), PS(x)))
/* f64 lanes */
#define LD_U8_F64(p) SID(_mm_cvtepi32_pd(_mm_unpacklo_epi16(_mm_unpacklo_epi8(load16(p), Z), Z)))
#define LD_U16_F64(p) SID(_mm_cvtepi32_pd(_mm_unpacklo_epi16(load32(p), Z)))
#define LD_I16_F64(p) SID(_mm_cvtepi32_pd(SEXT16_32(load32(p))))
#define LD_I32_F64(p) SID(_mm_cvtepi32_pd(L64(p)))
#define LD_U32_F64(p) SID(u32_to_f64(L64(p)))
static inline __m128d u32_to_f64(__m128i u)
{
    __m128i s = _mm_xor_si128(u, _mm_set1_epi32((int)0x80000000u));
    return _mm_add_pd(_mm_cvtepi32_pd(s), _mm_set1_pd(2147483648.0));
}
#define LD_F32_F64(p) SID(_mm_cvtps_pd(_mm_castsi128_ps(L64(p))))
#define LD_F64_F64(p) PSI_LOADU(p)
#define ADD_F64(a, b) SID(_mm_add_pd(PD(a), PD(b)))
#define SQ_F64(x) SID(_mm_mul_pd(PD(x), PD(x)))
#define NOSQ(x) (x)

#include "fast_kinds.h"

PSI_FAST_GETTER(psi_fast_row_sse2)
PSI_FAST_COLSUM_GETTER(psi_fast_colsum_sse2)

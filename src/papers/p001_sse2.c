/*
 * p001_sse2.c - paper 001's SSE2 row scan: load 4 elements (2 for 64-bit
 * types) into a register, add copies of it shifted left by one, two and three
 * elements (shift-and-add), add the running total of the row and store back.
 */
#include "p001.h"

#include <emmintrin.h>

static void scan_u32(uint32_t *a, size_t n)
{
    __m128i carry = _mm_setzero_si128();
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
        __m128i t = _mm_slli_si128(x, 4);
        x = _mm_add_epi32(x, t);
        t = _mm_slli_si128(t, 4);
        x = _mm_add_epi32(x, t);
        t = _mm_slli_si128(t, 4);
        x = _mm_add_epi32(x, t);
        x = _mm_add_epi32(x, carry);
        _mm_storeu_si128((__m128i *)(void *)(a + i), x);
        carry = _mm_shuffle_epi32(x, _MM_SHUFFLE(3, 3, 3, 3));
    }
    uint32_t run = (uint32_t)_mm_cvtsi128_si32(carry);
    for (; i < n; i++)
        a[i] = run += a[i];
}

static void scan_f32(float *a, size_t n)
{
    __m128 carry = _mm_setzero_ps();
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m128 x = _mm_loadu_ps(a + i);
        __m128i t = _mm_slli_si128(_mm_castps_si128(x), 4);
        x = _mm_add_ps(x, _mm_castsi128_ps(t));
        t = _mm_slli_si128(t, 4);
        x = _mm_add_ps(x, _mm_castsi128_ps(t));
        t = _mm_slli_si128(t, 4);
        x = _mm_add_ps(x, _mm_castsi128_ps(t));
        x = _mm_add_ps(x, carry);
        _mm_storeu_ps(a + i, x);
        carry = _mm_shuffle_ps(x, x, _MM_SHUFFLE(3, 3, 3, 3));
    }
    float run = _mm_cvtss_f32(carry);
    for (; i < n; i++)
        a[i] = run += a[i];
}

static void scan_u64(uint64_t *a, size_t n)
{
    __m128i carry = _mm_setzero_si128();
    size_t i = 0;
    for (; i + 2 <= n; i += 2) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
        x = _mm_add_epi64(x, _mm_slli_si128(x, 8));
        x = _mm_add_epi64(x, carry);
        _mm_storeu_si128((__m128i *)(void *)(a + i), x);
        carry = _mm_shuffle_epi32(x, _MM_SHUFFLE(3, 2, 3, 2));
    }
    uint64_t run = 0;
    _mm_storel_epi64((__m128i *)(void *)&run, carry);
    for (; i < n; i++)
        a[i] = run += a[i];
}

static void scan_f64(double *a, size_t n)
{
    __m128d carry = _mm_setzero_pd();
    size_t i = 0;
    for (; i + 2 <= n; i += 2) {
        __m128d x = _mm_loadu_pd(a + i);
        x = _mm_add_pd(x, _mm_castsi128_pd(_mm_slli_si128(_mm_castpd_si128(x), 8)));
        x = _mm_add_pd(x, carry);
        _mm_storeu_pd(a + i, x);
        carry = _mm_unpackhi_pd(x, x);
    }
    double run = _mm_cvtsd_f64(carry);
    for (; i < n; i++)
        a[i] = run += a[i];
}

bool psi_p001_scan_sse2(pixsum_type t, void *row, size_t n)
{
    switch (t) {
    case PIXSUM_U32: scan_u32(row, n); return true;
    case PIXSUM_F32: scan_f32(row, n); return true;
    case PIXSUM_U64:
    case PIXSUM_I64: scan_u64(row, n); return true;
    case PIXSUM_F64: scan_f64(row, n); return true;
    default: return false;
    }
}

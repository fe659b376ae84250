/*
 * hist_avx512.c - AVX-512 histogram kernels (compiled with AVX-512 flags; the
 * bit-sliced counter also needs VPOPCNTDQ, GFNI and VBMI, enabled per function).
 *
 * u8 counting. A scalar histogram does one load-add-store per pixel, which
 * caps it near one pixel per cycle. Here:
 *  1. a 512-pixel block whose bytes are all equal is counted with one
 *     addition (constant images and flat regions cost almost nothing);
 *  2. the other blocks are split by the top two bits of each pixel into 4
 *     bucket buffers (VPCMPUB + VPCOMPRESSB, 64 pixels at a time);
 *  3. each bucket is counted bit-sliced: 512 pixels become 6 bit planes of
 *     512 bits (GF2P8AFFINEQB transposes the 8x8 bit matrix of each 8 pixels,
 *     VPERMB and a qword transpose gather the planes), then 16 "low nibble ==
 *     l" and 4 "bits 4-5 == h" masks; the count of value 64 j + 16 h + l is
 *     the sum of popcount(H[h] & L[l]). With the h loop outside the block
 *     loop, 8 accumulators stay in registers: 3 vector instructions per value
 *     per 512 pixels, and 64 values per bucket instead of 256.
 * Buckets are padded to whole blocks with a known value whose count is taken
 * off again.
 *
 * Interleaved channels and masks: 16 pixels of 2-4 channels are grouped by
 * channel with one VPERMB (64 pixels of one masked channel at a time), masked
 * pixels dropped with VPCOMPRESSB, into one 32 KiB plane per channel; full
 * planes go through the counter above, whose accumulators stay per channel
 * until the image is done.
 *
 * u8 table lookups (equalisation): 64 pixels at a time, each 128-entry half
 * of the 256-byte table by one VPERMI2B, the half picked by the index's top
 * bit.
 *
 * i32, f32, f64 classification: 8 samples at a time (as doubles) are compared with lo and hi
 * (NaN unordered); the estimate (v - lo) * scale is corrected by one bin
 * against the two neighbouring edges lo + i * step (separate multiply and add)
 * exactly as psi_bins_class() does, so the bins are identical. Bins whose
 * estimate can be more than one bin off (merged edges, !one_step) go through
 * psi_hist_bin() instead.
 */
#include "hist.h"

#include "../cpu/isa.h"

#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#define BS_TARGET \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512vpopcntdq,gfni,avx512vbmi")))

/* The library's one ISA detector (src/cpu/isa.c), so PIXSUM_FORCE_ISA and
 * psi_isa_force() below avx512 turn these kernels off too. */
bool psi_hist_avx512_available(void)
{
    return psi_isa_active() >= PSI_ISA_AVX512 && psi_isa_avx512_extras();
}

/* Blocks of 512 pixels per chunk: the chunk's nibble masks (2 KiB per block)
 * stay in L1 while every high nibble sweeps over them. */
#define CHUNK_BLOCKS 8

/* 8x8 transpose of 64-bit lanes: c[j] lane r = r_[r] lane j. */
BS_TARGET static inline void transpose8x8_q(__m512i r_[8], __m512i c[8])
{
    __m512i a[8], b[8];
    for (int i = 0; i < 8; i += 2) {
        a[i] = _mm512_unpacklo_epi64(r_[i], r_[i + 1]);
        a[i + 1] = _mm512_unpackhi_epi64(r_[i], r_[i + 1]);
    }
    const __m512i lo128 = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
    const __m512i hi128 = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    for (int g = 0; g < 8; g += 4) {
        b[g + 0] = _mm512_permutex2var_epi64(a[g + 0], lo128, a[g + 2]);
        b[g + 2] = _mm512_permutex2var_epi64(a[g + 0], hi128, a[g + 2]);
        b[g + 1] = _mm512_permutex2var_epi64(a[g + 1], lo128, a[g + 3]);
        b[g + 3] = _mm512_permutex2var_epi64(a[g + 1], hi128, a[g + 3]);
    }
    const __m512i lo256 = _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11);
    const __m512i hi256 = _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15);
    for (int j = 0; j < 4; j++) {
        c[j] = _mm512_permutex2var_epi64(b[j], lo256, b[j + 4]);
        c[j + 4] = _mm512_permutex2var_epi64(b[j], hi256, b[j + 4]);
    }
}

/* The 16 masks "nibble == v" from 4 bit planes p[0..3] (bit 0 first). */
BS_TARGET static inline void nibble_masks(const __m512i p[4], __m512i out[16])
{
    /* ternlog 0x11 = ~a & ~b, 0x22 = a & ~b ... with (a, b, b) operands. */
    __m512i lo2[4], hi2[4];
    lo2[0] = _mm512_ternarylogic_epi64(p[0], p[1], p[1], 0x03); /* ~a & ~b */
    lo2[1] = _mm512_ternarylogic_epi64(p[0], p[1], p[1], 0x30); /*  a & ~b */
    lo2[2] = _mm512_ternarylogic_epi64(p[0], p[1], p[1], 0x0c); /* ~a &  b */
    lo2[3] = _mm512_ternarylogic_epi64(p[0], p[1], p[1], 0xc0); /*  a &  b */
    hi2[0] = _mm512_ternarylogic_epi64(p[2], p[3], p[3], 0x03);
    hi2[1] = _mm512_ternarylogic_epi64(p[2], p[3], p[3], 0x30);
    hi2[2] = _mm512_ternarylogic_epi64(p[2], p[3], p[3], 0x0c);
    hi2[3] = _mm512_ternarylogic_epi64(p[2], p[3], p[3], 0xc0);
    for (int v = 0; v < 16; v++)
        out[v] = _mm512_and_si512(lo2[v & 3], hi2[v >> 2]);
}

/* True when the 512 bytes held in x[0..7] all equal `first`. Such blocks -
 * flat backgrounds, constant images - are counted with one addition and never
 * reach the bucket split or the bit-sliced counter. */
BS_TARGET static inline bool block_uniform(const __m512i x[8], uint8_t first)
{
    const __m512i v0 = _mm512_set1_epi8((char)first);
    __m512i d = _mm512_xor_si512(x[0], v0);
    for (int r = 1; r < 8; r++)
        d = _mm512_ternarylogic_epi64(d, x[r], v0, 0xF6); /* d | (x ^ v0) */
    return _mm512_test_epi64_mask(d, d) == 0;
}

/* Bit planes 0..5 of 512 pixels into the 16 low-nibble masks and the 4 masks
 * of bits 4-5 (the top two bits are the same within a bucket). */
BS_TARGET static inline void block_masks64(const uint8_t *src, __m512i *lo, __m512i *hi)
{
    const __m512i sel = _mm512_set1_epi64((long long)0x8040201008040201ull);
    const __m512i gather = _mm512_set_epi8(
        63, 55, 47, 39, 31, 23, 15, 7, 62, 54, 46, 38, 30, 22, 14, 6,
        61, 53, 45, 37, 29, 21, 13, 5, 60, 52, 44, 36, 28, 20, 12, 4,
        59, 51, 43, 35, 27, 19, 11, 3, 58, 50, 42, 34, 26, 18, 10, 2,
        57, 49, 41, 33, 25, 17, 9, 1, 56, 48, 40, 32, 24, 16, 8, 0);
    __m512i v[8], planes[8];
    for (int r = 0; r < 8; r++) {
        __m512i x = _mm512_loadu_si512((const void *)(src + 64 * r));
        v[r] = _mm512_permutexvar_epi8(gather, _mm512_gf2p8affine_epi64_epi8(sel, x, 0));
    }
    transpose8x8_q(v, planes);
    nibble_masks(planes, lo);
    hi[0] = _mm512_ternarylogic_epi64(planes[4], planes[5], planes[5], 0x03);
    hi[1] = _mm512_ternarylogic_epi64(planes[4], planes[5], planes[5], 0x30);
    hi[2] = _mm512_ternarylogic_epi64(planes[4], planes[5], planes[5], 0x0c);
    hi[3] = _mm512_ternarylogic_epi64(planes[4], planes[5], planes[5], 0xc0);
}

/* Counts the nb (<= CHUNK_BLOCKS) blocks whose masks are in lo/hi into the 64
 * accumulators acc (value 16 h + l of the bucket). */
BS_TARGET static inline void count_chunk64(size_t nb, __m512i (*lo)[16], __m512i (*hi)[4],
                                           __m512i *acc)
{
    /* 4 values of bits 4-5 x 2 halves of the low nibbles: 8 accumulators
     * plus the operands fit the 32 vector registers without moves. */
    for (int hh = 0; hh < 8; hh++) {
        int h = hh >> 1, l0 = (hh & 1) * 8;
        __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
        __m512i a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        /* Fully unrolled, this loop makes compilers hoist every popcount and
         * spill; by 2 it runs best (measured). */
#if defined(__clang__)
#pragma unroll 2
#elif defined(__GNUC__)
#pragma GCC unroll 2
#endif
        for (size_t b = 0; b < nb; b++) {
            __m512i hv = hi[b][h];
            const __m512i *lp = lo[b] + l0;
#define PSI_BS_STEP(A, K) A = _mm512_add_epi64(A, _mm512_popcnt_epi64(_mm512_and_si512(hv, lp[K])))
            PSI_BS_STEP(a0, 0);
            PSI_BS_STEP(a1, 1);
            PSI_BS_STEP(a2, 2);
            PSI_BS_STEP(a3, 3);
            PSI_BS_STEP(a4, 4);
            PSI_BS_STEP(a5, 5);
            PSI_BS_STEP(a6, 6);
            PSI_BS_STEP(a7, 7);
#undef PSI_BS_STEP
        }
        __m512i *dst = acc + h * 16 + l0;
        dst[0] = _mm512_add_epi64(dst[0], a0);
        dst[1] = _mm512_add_epi64(dst[1], a1);
        dst[2] = _mm512_add_epi64(dst[2], a2);
        dst[3] = _mm512_add_epi64(dst[3], a3);
        dst[4] = _mm512_add_epi64(dst[4], a4);
        dst[5] = _mm512_add_epi64(dst[5], a5);
        dst[6] = _mm512_add_epi64(dst[6], a6);
        dst[7] = _mm512_add_epi64(dst[7], a7);
    }
}

/* Pixels partitioned per round: each of the 4 bucket buffers holds at most
 * this many bytes (plus one vector of slack and padding to a whole block). */
#define PART_BYTES 16384

/* Software prefetch distance of the u8 counter, in bytes. */
#define PF_DIST 16384

/* The bit-sliced count of one bucket buffer (len bytes, all with top bits
 * `bucket`): padded with the bucket's first value to whole blocks, the
 * padding taken off again. */
BS_TARGET static void count_bucket(uint8_t *buf, size_t len, int bucket, __m512i *acc,
                                   uint64_t *raw)
{
    __m512i lo[CHUNK_BLOCKS][16], hi[CHUNK_BLOCKS][4];
    size_t padded = (len + 511) / 512 * 512;
    memset(buf + len, bucket << 6, padded - len);
    raw[bucket << 6] -= padded - len;
    size_t blocks = padded / 512;
    for (size_t b0 = 0; b0 < blocks; b0 += CHUNK_BLOCKS) {
        size_t nb = blocks - b0 < CHUNK_BLOCKS ? blocks - b0 : CHUNK_BLOCKS;
        for (size_t b = 0; b < nb; b++)
            block_masks64(buf + (b0 + b) * 512, lo[b], hi[b]);
        count_chunk64(nb, lo, hi, acc);
    }
}

/* The u8 counter: uniform 512-pixel blocks are counted at once; the others
 * are split by their top two bits into 4 buckets with VPCOMPRESSB, and each
 * bucket - 64 possible values - is counted bit-sliced. Splitting first cuts
 * the bit-sliced work (pixels x values / 512) by 4 for the price of a few
 * compress and store instructions per 64 pixels. */
#define BS_TARGET2 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vpopcntdq,gfni,avx512vbmi,avx512vbmi2")))

/* Bytes of the bucket buffers one bit-sliced counter needs (4 buckets of
 * PART_BYTES, each with a vector of slack and block padding, plus alignment). */
#define BUCKET_MEM (4 * (PART_BYTES + 1024) + 64)

/* The 4 bucket buffers inside `mem` (BUCKET_MEM bytes), 64-byte aligned. */
static void bucket_buffers(uint8_t *mem, uint8_t *buf[4])
{
    for (int j = 0; j < 4; j++)
        buf[j] = (uint8_t *)(((uintptr_t)mem + 63) & ~(uintptr_t)63) + (size_t)j * (PART_BYTES + 1024);
}

/* Counts n u8 values into the accumulators acc (whole blocks) and raw (uniform
 * blocks, the tail); buf: the 4 bucket buffers. */
BS_TARGET2 static void bs_feed(const uint8_t *data, size_t n, uint8_t *const buf[4],
                               __m512i acc[4][64], uint64_t *raw)
{
    const __m512i c64 = _mm512_set1_epi8(64), c128 = _mm512_set1_epi8((char)128);
    const __m512i c192 = _mm512_set1_epi8((char)192);
    size_t blocks = n / 512, b = 0;
    while (b < blocks) {
        size_t len[4] = {0, 0, 0, 0};
        /* partition up to PART_BYTES / 512 blocks (bounded per bucket too) */
        for (size_t taken = 0; b < blocks && taken < PART_BYTES / 512; b++) {
            const uint8_t *src = data + b * 512;
            /* The hardware prefetcher alone leaves this loop waiting on DRAM:
             * ask for the block 16 KiB ahead (a prefetch never faults, past
             * the end included). 16 KiB measured best of 2, 8, 16, 32 KiB. */
            for (int line = 0; line < 512; line += 64)
                _mm_prefetch((const char *)src + PF_DIST + line, _MM_HINT_T0);
            /* Load the block once: the uniformity test and the partition
             * both work from these registers (measured 16% faster than
             * testing and partitioning with separate loads). */
            __m512i xs[8];
            for (int r = 0; r < 8; r++)
                xs[r] = _mm512_loadu_si512((const void *)(src + 64 * r));
            if (block_uniform(xs, src[0])) {
                raw[src[0]] += 512;
                continue;
            }
            taken++;
            for (int r = 0; r < 8; r++) {
                __m512i x = xs[r];
                __m512i top = _mm512_and_si512(x, c192); /* the top two bits */
                __mmask64 k[4] = {_mm512_cmpeq_epi8_mask(top, _mm512_setzero_si512()),
                                  _mm512_cmpeq_epi8_mask(top, c64),
                                  _mm512_cmpeq_epi8_mask(top, c128),
                                  _mm512_cmpeq_epi8_mask(top, c192)};
                for (int j = 0; j < 4; j++) {
                    _mm512_storeu_si512((void *)(buf[j] + len[j]),
                                        _mm512_maskz_compress_epi8(k[j], x));
                    len[j] += (size_t)_mm_popcnt_u64(k[j]);
                }
            }
        }
        for (int j = 0; j < 4; j++)
            if (len[j])
                count_bucket(buf[j], len[j], j, acc[j], raw);
    }
    for (size_t i = blocks * 512; i < n; i++)
        raw[data[i]]++;
}

/* Adds the accumulators into raw[256]. */
BS_TARGET static void bs_fold(__m512i acc[4][64], uint64_t *raw)
{
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 64; i++)
            raw[j * 64 + i] += (uint64_t)_mm512_reduce_add_epi64(acc[j][i]);
}

BS_TARGET2 void psi_hist_u8_bitsliced(const uint8_t *data, size_t n, uint64_t *raw)
{
    uint8_t *mem = malloc(BUCKET_MEM);
    if (!mem) { /* no scratch: count plainly (correct, slower) */
        for (size_t i = 0; i < n; i++)
            raw[data[i]]++;
        return;
    }
    uint8_t *buf[4];
    bucket_buffers(mem, buf);
    __m512i acc[4][64];
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 64; i++)
            acc[j][i] = _mm512_setzero_si512();
    bs_feed(data, n, buf, acc, raw);
    bs_fold(acc, raw);
    free(mem);
}

/* ---- interleaved channels and masks: planes, then the bit-sliced counter ---- */

/* Pixels gathered per plane before the planes are counted (32 KiB a plane:
 * all four stay in L2 while they are counted). */
#define PLANE_PIXELS 32768

/* The multi-channel / masked counter's state: per channel a plane of gathered
 * samples and its bit-sliced accumulators, the bucket buffers they share. */
typedef struct planes {
    size_t ch, n;      /* channels; pixels now held in each plane */
    uint8_t *plane[4]; /* PLANE_PIXELS + 64 bytes each */
    uint8_t *buf[4];   /* bucket buffers of bs_feed() */
    __m512i (*acc)[4][64];
    uint64_t *raw;     /* raw[256 c + v] */
} planes;

/* Counts what the planes hold and empties them. */
BS_TARGET2 static void planes_flush(planes *pl)
{
    for (size_t c = 0; c < pl->ch; c++)
        bs_feed(pl->plane[c], pl->n, pl->buf, pl->acc[c], pl->raw + 256 * c);
    pl->n = 0;
}

/* VPERMB indices that group 16 interleaved pixels of `ch` (2-4) channels by
 * channel: byte 16 c + i of the result is byte ch i + c of the source. */
BS_TARGET static __m512i deinterleave_index(size_t ch)
{
    uint8_t idx[64] = {0};
    for (size_t c = 0; c < ch; c++)
        for (size_t i = 0; i < 16; i++)
            idx[16 * c + i] = (uint8_t)(ch * i + c);
    return _mm512_loadu_si512((const void *)idx);
}

/* Gathers `pixels` pixels at src into the planes, dropping those whose mask
 * byte is 0 (m may be NULL), counting the planes whenever they fill up. */
BS_TARGET2 static void planes_add(planes *pl, const uint8_t *src, const uint8_t *m,
                                  size_t pixels, __m512i perm)
{
    size_t ch = pl->ch, x = 0;
    while (x < pixels) {
        if (pl->n + 64 > PLANE_PIXELS)
            planes_flush(pl);
        if (ch == 1) { /* masked (an unmasked channel never comes here) */
            size_t take = pixels - x < 64 ? pixels - x : 64;
            __mmask64 lm = take == 64 ? ~(__mmask64)0 : ((__mmask64)1 << take) - 1;
            __m512i v = _mm512_maskz_loadu_epi8(lm, src + x);
            __m512i mv = _mm512_maskz_loadu_epi8(lm, m + x);
            __mmask64 k = _mm512_test_epi8_mask(mv, mv);
            _mm512_storeu_si512((void *)(pl->plane[0] + pl->n), _mm512_maskz_compress_epi8(k, v));
            pl->n += (size_t)_mm_popcnt_u64(k);
            x += take;
            continue;
        }
        size_t take = pixels - x < 16 ? pixels - x : 16;
        size_t bytes = take * ch;
        __mmask64 lm = bytes == 64 ? ~(__mmask64)0 : ((__mmask64)1 << bytes) - 1;
        __m512i v = _mm512_permutexvar_epi8(perm, _mm512_maskz_loadu_epi8(lm, src + x * ch));
        __m128i lane[4] = {_mm512_castsi512_si128(v), _mm512_extracti32x4_epi32(v, 1),
                           _mm512_extracti32x4_epi32(v, 2), _mm512_extracti32x4_epi32(v, 3)};
        __mmask16 k = (__mmask16)(((uint32_t)1 << take) - 1);
        if (m) {
            __m128i mv = _mm_maskz_loadu_epi8(k, m + x);
            k = _mm_test_epi8_mask(mv, mv);
            for (size_t c = 0; c < ch; c++)
                lane[c] = _mm_maskz_compress_epi8(k, lane[c]);
        }
        for (size_t c = 0; c < ch; c++)
            _mm_storeu_si128((__m128i *)(void *)(pl->plane[c] + pl->n), lane[c]);
        pl->n += (size_t)_mm_popcnt_u32(k);
        x += take;
    }
}

BS_TARGET2 bool psi_hist_u8_rows_avx512(const pixsum_view *in, const pixsum_view *mask,
                                        size_t r0, size_t r1, uint64_t *raw)
{
    size_t ch = in->channels;
    if (ch == 1 && !mask)
        return false; /* psi_hist_u8_bitsliced() counts such rows directly */
    size_t plane_bytes = PLANE_PIXELS + 64;
    size_t acc_bytes = ch * sizeof(__m512i[4][64]);
    uint8_t *mem = malloc(64 + acc_bytes + BUCKET_MEM + ch * plane_bytes);
    if (!mem)
        return false;
    planes pl = {.ch = ch, .n = 0, .raw = raw};
    uint8_t *base = (uint8_t *)(((uintptr_t)mem + 63) & ~(uintptr_t)63);
    pl.acc = (__m512i(*)[4][64])(void *)base;
    memset(base, 0, acc_bytes);
    bucket_buffers(base + acc_bytes, pl.buf);
    for (size_t c = 0; c < ch; c++)
        pl.plane[c] = base + acc_bytes + BUCKET_MEM + c * plane_bytes;
    __m512i perm = deinterleave_index(ch > 1 ? ch : 2);
    size_t row_bytes = in->width * ch;
    bool packed = !mask && in->row_stride == (ptrdiff_t)row_bytes &&
                  (in->depth == 1 || in->slice_stride == (ptrdiff_t)(row_bytes * in->height));
    if (packed) {
        planes_add(&pl, psi_hist_row(in, r0), NULL, (r1 - r0) * in->width, perm);
    } else {
        for (size_t r = r0; r < r1; r++)
            planes_add(&pl, psi_hist_row(in, r), mask ? psi_hist_row(mask, r) : NULL,
                       in->width, perm);
    }
    planes_flush(&pl);
    for (size_t c = 0; c < ch; c++)
        bs_fold(pl.acc[c], raw + 256 * c);
    free(mem);
    return true;
}

void psi_hist_classify_avx512(const void *data, pixsum_type type, size_t n,
                              const psi_hist_params *p, uint32_t *out)
{
    const __m512d lo = _mm512_set1_pd(p->b.lo), hi = _mm512_set1_pd(p->b.hi);
    const __m512d scale = _mm512_set1_pd(p->b.scale), step = _mm512_set1_pd(p->b.step);
    const __m256i last = _mm256_set1_epi32((int)(p->b.bins - 1));
    const __m256i one = _mm256_set1_epi32(1);
    const __m512d onef = _mm512_set1_pd(1.0);
    const __m256i cls_below = _mm256_set1_epi32((int)(p->b.bins + PSI_HIST_BELOW));
    const __m256i cls_above = _mm256_set1_epi32((int)(p->b.bins + PSI_HIST_ABOVE));
    const __m256i cls_nan = _mm256_set1_epi32((int)(p->b.bins + PSI_HIST_NAN));
    size_t i = 0;
    const char *bytes = data;
    const bool is_f64 = type == PIXSUM_F64, is_i32 = type == PIXSUM_I32;
    size_t es = is_f64 ? 8 : 4;
    for (; p->b.one_step && i + 8 <= n; i += 8) {
        if ((i * es) % 64 == 0) /* one prefetch per cache line, 16 KiB ahead */
            _mm_prefetch(bytes + i * es + PF_DIST, _MM_HINT_T0);
        __m512d v = is_f64   ? _mm512_loadu_pd((const double *)data + i)
                    : is_i32 ? _mm512_cvtepi32_pd(_mm256_loadu_si256((const __m256i *)data + i / 8))
                             : _mm512_cvtps_pd(_mm256_loadu_ps((const float *)data + i));
        __mmask8 below = _mm512_cmp_pd_mask(v, lo, _CMP_LT_OQ);
        __mmask8 above = _mm512_cmp_pd_mask(v, hi, _CMP_GE_OQ);
        __mmask8 nan = _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q);
        __mmask8 in = (__mmask8)~(below | above | nan);
        __m512d f = _mm512_mul_pd(_mm512_sub_pd(v, lo), scale);
        __m256i b = _mm512_maskz_cvttpd_epu32(in, f); /* <= bins */
        /* psi_bins_class(): both edges of the estimate, one step each way */
        __m512d bd = _mm512_cvtepu32_pd(b);
        __m512d e0 = _mm512_add_pd(lo, _mm512_mul_pd(bd, step));
        __m512d e1 = _mm512_add_pd(lo, _mm512_mul_pd(_mm512_add_pd(bd, onef), step));
        b = _mm256_mask_sub_epi32(b, _mm512_mask_cmp_pd_mask(in, v, e0, _CMP_LT_OQ), b, one);
        b = _mm256_mask_add_epi32(b, _mm512_mask_cmp_pd_mask(in, v, e1, _CMP_GE_OQ), b, one);
        b = _mm256_min_epu32(b, last);
        b = _mm256_mask_mov_epi32(b, below, cls_below);
        b = _mm256_mask_mov_epi32(b, above, cls_above);
        b = _mm256_mask_mov_epi32(b, nan, cls_nan);
        _mm256_storeu_si256((__m256i *)(out + i), b);
    }
    for (; i < n; i++)
        out[i] = (uint32_t)psi_hist_bin(p, psi_load_f64(type, data, i));
}

BS_TARGET void psi_hist_map_u8_avx512(const uint8_t *src, uint8_t *dst, size_t n,
                                      const uint8_t lut[256])
{
    const __m512i t0 = _mm512_loadu_si512(lut), t1 = _mm512_loadu_si512(lut + 64);
    const __m512i t2 = _mm512_loadu_si512(lut + 128), t3 = _mm512_loadu_si512(lut + 192);
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512i v = _mm512_loadu_si512(src + i);
        __m512i lo = _mm512_permutex2var_epi8(t0, v, t1); /* bit 6 picks t0 / t1 */
        __m512i hi = _mm512_permutex2var_epi8(t2, v, t3);
        _mm512_storeu_si512(dst + i, _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi));
    }
    if (i < n) {
        __mmask64 m = (1ull << (n - i)) - 1; /* n - i < 64 */
        __m512i v = _mm512_maskz_loadu_epi8(m, src + i);
        __m512i lo = _mm512_permutex2var_epi8(t0, v, t1);
        __m512i hi = _mm512_permutex2var_epi8(t2, v, t3);
        _mm512_mask_storeu_epi8(dst + i, m,
                                _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi));
    }
}

/*
 * hist_post.cu - what the CUDA histograms compute besides counting: the
 * cumulative histogram (an inclusive scan per channel), the relative and
 * cumulative relative histograms (k / n in double, as the CPU divides), and
 * the joint histogram of two images (both classes by the bin formula of
 * pixsum.h, a pair counted where both are bins).
 *
 * Scans go in tiles of 1024 x 8 values; u64 values, so exact. When the
 * output does not overlap the input, each tile has a block of its own, which
 * sums the tiles before it itself (a row of 65536 bins: 8 blocks in
 * parallel instead of 8 tiles one after another); in place, one block per
 * channel walks its tiles
 * with a carry. The joint kernel keeps the table in
 * shared memory (u32, fewer than 2^31 pixels per block) when it fits, else
 * adds into the caller's u64 table with global atomics.
 */
#include "cuda_hist.h"

#include <cuda_runtime.h>
#include <stdint.h>

namespace {

constexpr int kScanThreads = 1024;
constexpr int kScanPer = 8;
constexpr int kJointThreads = 512;
constexpr int kJointPix = 8;
constexpr size_t kJointSmem = 96u << 10;

typedef psi_bins Bins;

/* The class of v (hist_bins.h): bin, or bins + 0 below, + 1 above, + 2 NaN. */
__device__ __forceinline__ unsigned classify(double v, const Bins &b)
{
    return (unsigned)psi_bins_class(&b, v);
}

/* Exclusive prefix of v over the block (all threads call); *total = sum. */
__device__ unsigned long long block_exclusive(unsigned long long v, unsigned long long *total)
{
    __shared__ unsigned long long warp_sums[32];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned long long x = v;
    for (int o = 1; o < 32; o <<= 1) {
        unsigned long long y = __shfl_up_sync(0xFFFFFFFFu, x, o);
        if (lane >= (unsigned)o)
            x += y;
    }
    if (lane == 31)
        warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        unsigned nw = blockDim.x / 32;
        unsigned long long s = lane < nw ? warp_sums[lane] : 0;
        for (int o = 1; o < 32; o <<= 1) {
            unsigned long long y = __shfl_up_sync(0xFFFFFFFFu, s, o);
            if (lane >= (unsigned)o)
                s += y;
        }
        warp_sums[lane] = s; /* inclusive over warps */
    }
    __syncthreads();
    unsigned long long before = warp ? warp_sums[warp - 1] : 0;
    *total = warp_sums[blockDim.x / 32 - 1];
    __syncthreads();
    return before + x - v;
}

/* Sum of v over the block (all threads call). */
__device__ unsigned long long block_sum(unsigned long long v)
{
    unsigned long long t;
    block_exclusive(v, &t);
    return t;
}

/* Per channel (block): out_u64 = running sums, or out_f64 = k / n. */
__global__ void __launch_bounds__(kScanThreads)
    post_kernel(const unsigned long long *in, unsigned long long *out_u64, double *out_f64,
                long long bins, const unsigned long long *totals, int cumulative, int of_all)
{
    const long long base = (long long)blockIdx.y * bins;
    double n = 0;
    if (out_f64) {
        unsigned long long nk;
        if (totals) {
            nk = of_all ? totals[PSI_CH_T_PIXELS] : totals[PSI_CH_T_IN_RANGE + blockIdx.y];
        } else {
            unsigned long long s = 0;
            for (long long i = threadIdx.x; i < bins; i += blockDim.x)
                s += in[base + i];
            nk = block_sum(s);
        }
        n = (double)nk;
    }
    unsigned long long carry = 0;
    const long long tile = (long long)kScanThreads * kScanPer;
    long long first = 0, last = bins;
    if (gridDim.x > 1) { /* one tile per block: the sum of the tiles before it */
        first = (long long)blockIdx.x * tile;
        last = first + tile < bins ? first + tile : bins;
        if (cumulative) {
            unsigned long long s = 0;
            for (long long i = threadIdx.x; i < first; i += blockDim.x)
                s += in[base + i];
            carry = block_sum(s);
        }
    }
    for (long long t0 = first; t0 < last; t0 += tile) {
        long long i0 = t0 + (long long)threadIdx.x * kScanPer;
        unsigned long long v[kScanPer], s = 0;
#pragma unroll
        for (int k = 0; k < kScanPer; k++) {
            v[k] = i0 + k < bins ? in[base + i0 + k] : 0;
            s += v[k];
        }
        unsigned long long total = 0, run = 0;
        if (cumulative)
            run = carry + block_exclusive(s, &total);
        /* every thread has read its values before any is written (in == out) */
        __syncthreads();
#pragma unroll
        for (int k = 0; k < kScanPer; k++) {
            if (i0 + k >= bins)
                break;
            unsigned long long kv = v[k];
            if (cumulative)
                kv = run += v[k];
            if (out_u64)
                out_u64[base + i0 + k] = kv;
            else
                out_f64[base + i0 + k] = n != 0 ? (double)kv / n : 0.0;
        }
        carry += total;
    }
}

struct Img {
    const char *data;
    int type;
    long long height, row_stride, slice_stride;
    const unsigned char *mask;
    long long mask_row, mask_slice;
};

__device__ __forceinline__ const char *row_at(const char *base, long long r, long long height,
                                              long long rs, long long ss)
{
    long long z = r / height;
    return base + z * ss + (r - z * height) * rs;
}

__device__ __forceinline__ double load_as_double(const char *row, int type, long long x)
{
    switch (type) {
    case PSI_CH_U8: return (double)((const uint8_t *)row)[x];
    case PSI_CH_U16: return (double)((const uint16_t *)row)[x];
    case PSI_CH_I16: return (double)((const int16_t *)row)[x];
    case PSI_CH_I32: return (double)((const int32_t *)row)[x];
    case PSI_CH_F32: return (double)((const float *)row)[x];
    default: return ((const double *)row)[x];
    }
}

__global__ void __launch_bounds__(kJointThreads)
    joint_kernel(Img a, Bins ba, Img b, Bins bb, long long width, long long rows,
                 long long chunks, int in_smem, unsigned long long *counts,
                 unsigned long long *pair_totals)
{
    extern __shared__ unsigned tab[];
    const unsigned cells = ba.bins * bb.bins;
    if (in_smem) {
        for (unsigned i = threadIdx.x; i < cells; i += blockDim.x)
            tab[i] = 0;
        __syncthreads();
    }
    unsigned long long pairs = 0, excluded = 0;
    long long items = rows * chunks;
    for (long long item = blockIdx.x; item < items; item += gridDim.x) {
        long long r = item / chunks, ck = item - r * chunks;
        const char *ra = row_at(a.data, r, a.height, a.row_stride, a.slice_stride);
        const char *rb = row_at(b.data, r, b.height, b.row_stride, b.slice_stride);
        const unsigned char *ma =
            a.mask ? (const unsigned char *)row_at((const char *)a.mask, r, a.height, a.mask_row,
                                                   a.mask_slice)
                   : nullptr;
        const unsigned char *mb =
            b.mask ? (const unsigned char *)row_at((const char *)b.mask, r, b.height, b.mask_row,
                                                   b.mask_slice)
                   : nullptr;
        long long x0 = ck * (long long)blockDim.x * kJointPix + threadIdx.x;
        for (int j = 0; j < kJointPix; j++) {
            long long x = x0 + (long long)j * blockDim.x;
            if (x >= width || (ma && !ma[x]) || (mb && !mb[x]))
                continue;
            unsigned ia = classify(load_as_double(ra, a.type, x), ba);
            unsigned ib = classify(load_as_double(rb, b.type, x), bb);
            if (ia < ba.bins && ib < bb.bins) {
                pairs++;
                unsigned cell = ia * bb.bins + ib;
                if (in_smem)
                    atomicAdd(&tab[cell], 1u);
                else
                    atomicAdd(&counts[cell], 1ull);
            } else {
                excluded++;
            }
        }
    }
    pairs = block_sum(pairs);
    excluded = block_sum(excluded);
    if (threadIdx.x == 0) {
        if (pairs)
            atomicAdd(&pair_totals[0], pairs);
        if (excluded)
            atomicAdd(&pair_totals[1], excluded);
    }
    if (in_smem) {
        __syncthreads();
        for (unsigned i = threadIdx.x; i < cells; i += blockDim.x)
            if (tab[i])
                atomicAdd(&counts[i], (unsigned long long)tab[i]);
    }
}

Bins make_bins(const psi_ch_bins &b)
{
    return b;
}

Img make_img(const psi_ch_image *im)
{
    Img r;
    r.data = (const char *)im->data;
    r.type = (int)im->type;
    r.height = im->height;
    r.row_stride = im->row_stride;
    r.slice_stride = im->depth > 1 ? im->slice_stride : 0;
    r.mask = im->mask;
    r.mask_row = im->mask_row;
    r.mask_slice = im->depth > 1 ? im->mask_slice : 0;
    return r;
}

/* The grid of a post_kernel launch: a block per tile unless out (of
 * channels x bins values of 8 bytes) overlaps in, then a block per channel. */
dim3 post_grid(const void *in, const void *out, long long channels, long long bins)
{
    const long long tile = (long long)kScanThreads * kScanPer;
    const uintptr_t a = (uintptr_t)in, b = (uintptr_t)out, bytes = (uintptr_t)(channels * bins * 8);
    const bool overlap = a < b + bytes && b < a + bytes;
    return dim3(overlap ? 1u : (unsigned)((bins + tile - 1) / tile), (unsigned)channels);
}

} // namespace

extern "C" int psi_ch_cumulative(const unsigned long long *in, unsigned long long *out,
                                 long long channels, long long bins, void *stream)
{
    if (channels <= 0 || bins <= 0)
        return 0;
    post_kernel<<<post_grid(in, out, channels, bins), kScanThreads, 0, (cudaStream_t)stream>>>(
        in, out, nullptr, bins, nullptr, 1, 0);
    return (int)cudaGetLastError();
}

extern "C" int psi_ch_relative(const unsigned long long *in, double *out, long long channels,
                               long long bins, const unsigned long long *totals, int cumulative,
                               int of_all, void *stream)
{
    if (channels <= 0 || bins <= 0)
        return 0;
    post_kernel<<<post_grid(in, out, channels, bins), kScanThreads, 0, (cudaStream_t)stream>>>(
        in, nullptr, out, bins, totals, cumulative, of_all);
    return (int)cudaGetLastError();
}

extern "C" size_t psi_ch_joint_workspace_bytes(const psi_ch_image *a, const psi_ch_image *b)
{
    (void)a;
    (void)b;
    return 0;
}

extern "C" int psi_ch_joint_launch(const psi_ch_image *a, const psi_ch_bins *ba,
                                   const psi_ch_image *b, const psi_ch_bins *bb,
                                   unsigned long long *counts, unsigned long long *pair_totals,
                                   void *ws, int sm_count, void *stream)
{
    (void)ws;
    cudaStream_t s = (cudaStream_t)stream;
    size_t cells = (size_t)ba->bins * (size_t)bb->bins;
    cudaError_t e = cudaMemsetAsync(counts, 0, cells * 8, s);
    if (e == cudaSuccess)
        e = cudaMemsetAsync(pair_totals, 0, 2 * 8, s);
    if (e != cudaSuccess)
        return (int)e;
    long long rows = a->height * a->depth, width = a->width;
    if (rows == 0 || width == 0)
        return 0;
    long long chunks = (width + (long long)kJointThreads * kJointPix - 1) /
                       ((long long)kJointThreads * kJointPix);
    long long items = rows * chunks;
    int in_smem = cells * 4 <= kJointSmem;
    size_t smem = in_smem ? cells * 4 : 0;
    if (in_smem && (e = cudaFuncSetAttribute(joint_kernel,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)kJointSmem)) != cudaSuccess)
        return (int)e;
    int per_sm = 0;
    if ((e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, joint_kernel, kJointThreads,
                                                            smem)) != cudaSuccess)
        return (int)e;
    long long grid = (long long)(per_sm > 0 ? per_sm : 1) * sm_count;
    /* Fewer than 2^31 pixels per block: the u32 shared table cannot wrap. */
    long long per_block_items = ((long long)1 << 30) / ((long long)kJointThreads * kJointPix);
    long long need = (items + per_block_items - 1) / per_block_items;
    if (grid < need)
        grid = need;
    if (grid > items)
        grid = items;
    if (grid > 0x7FFFFFFFLL)
        return (int)cudaErrorInvalidConfiguration;
    joint_kernel<<<(unsigned)grid, kJointThreads, smem, s>>>(
        make_img(a), make_bins(*ba), make_img(b), make_bins(*bb), width, rows, chunks, in_smem,
        counts, pair_totals);
    return (int)cudaGetLastError();
}

/*
 * hist_equalize.cu - the device half of pixsum_cuda_equalize(): each
 * channel's equalisation table from its cumulative histogram, and the table
 * applied to every sample of a u8 or u16 image (1-4 interleaved channels).
 *
 * The table follows pixsum_equalize() (src/hist/apply.c) exactly:
 *   n = cdf[L - 1], cmin = the first non-zero cdf value, d = n - cmin;
 *   v -> 0 where cdf[v] <= cmin, else (2 (cdf[v] - cmin) (L - 1) + d) / (2 d)
 *   (integer division: halves rounded up), and the identity where d = 0.
 * The CPU computes the product in 128 bits; here 64 bits are exact because
 * the host refuses channels of 2^46 samples or more (2 * 2^46 * 65535 + 2^46
 * < 2^64), far beyond any device image.
 *
 * The mapping reads the image once and writes it once. u8 takes two
 * launches: the histogram, then the mapping kernel, each of whose blocks
 * scans the 256 counts per channel and builds its tables in shared memory.
 * u16 takes four: the histogram, its cumulative sums, the tables (every
 * block finding the channel's first non-zero cumulative count by a 32-way
 * search), and the mapping, with the table in shared memory for one channel
 * (128 KiB, one block of 1024 threads per SM; a gather from shared memory
 * costs a few bank conflicts where one from L1 costs a transaction per
 * lane) and read through the read-only cache for 2-4 channels (and on
 * devices with less shared memory per block). Images whose input and output
 * are both packed (rows back to back) and 16-byte aligned are treated as one
 * run of 16-byte vectors; any other layout goes sample by sample, row by
 * row. out == in (same memory and strides) is allowed: each sample is read
 * and written by the same thread.
 */
#include "cuda_hist.h"
#include "device_caps.cuh"

#include <cuda_runtime.h>
#include <stdint.h>

namespace {

constexpr int kTableThreads = 256;
constexpr int kApplyThreads = 256;
constexpr int kWideThreads = 1024; /* u16, one channel: the table in shared memory */
constexpr size_t kWideTableBytes = 65536 * sizeof(unsigned short);

/* pixsum_equalize()'s value for level v of a channel: cdf = its cumulative
 * count, cmin = the channel's first non-zero cumulative count (0 if none),
 * n = its last. */
__device__ __forceinline__ unsigned eq_value(unsigned long long cdf, unsigned long long cmin,
                                             unsigned long long n, unsigned levels, unsigned v)
{
    const unsigned long long d = n - cmin;
    if (d == 0)
        return v; /* one value (or none): unchanged */
    if (cdf <= cmin)
        return 0;
    unsigned long long q = (2 * (cdf - cmin) * (unsigned long long)(levels - 1) + d) / (2 * d);
    return q < levels - 1 ? (unsigned)q : levels - 1;
}

/* The first non-zero value of a non-decreasing row h of `levels` (a power
 * of two, 32 .. 65536) values, or 0 if all are zero: one warp narrows the
 * range 32-fold per round (four rounds of loads for 65536). All lanes of
 * the calling warp get the result. */
__device__ unsigned long long first_nonzero(const unsigned long long *h, unsigned levels,
                                            unsigned lane)
{
    unsigned lo = 0, span = levels;
    while (span > 32) {
        const unsigned sub = span / 32;
        const unsigned ones = __ballot_sync(0xFFFFFFFFu, h[lo + lane * sub + sub - 1] != 0);
        if (!ones)
            return 0;
        lo += (unsigned)(__ffs(ones) - 1) * sub;
        span = sub;
    }
    const unsigned ones = __ballot_sync(0xFFFFFFFFu, lane < span && h[lo + lane] != 0);
    return ones ? h[lo + __ffs(ones) - 1] : 0;
}

/* Grid (levels / kTableThreads, channels): lut[c * L + v] from the
 * cumulative counts cdf[c * L + v]; each block finds cmin itself. */
__global__ void __launch_bounds__(kTableThreads)
    table_kernel(const unsigned long long *__restrict__ cdf, unsigned short *__restrict__ lut,
                 unsigned levels)
{
    __shared__ unsigned long long s_cmin;
    const unsigned long long *h = cdf + (size_t)blockIdx.y * levels;
    if (threadIdx.x < 32) {
        unsigned long long m = first_nonzero(h, levels, threadIdx.x);
        if (threadIdx.x == 0)
            s_cmin = m;
    }
    __syncthreads();
    const unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
    lut[(size_t)blockIdx.y * levels + v] =
        (unsigned short)eq_value(h[v], s_cmin, h[levels - 1], levels, v);
}

/* What the apply kernels see of one image pair. */
struct Remap {
    const unsigned char *in;
    unsigned char *out;
    long long width, rows, height, channels; /* rows = height x depth */
    long long in_row, in_slice, out_row, out_slice;
};

/* u8: each block builds the tables of all channels in shared memory from
 * the raw counts (256 per channel), kApplyThreads = 256 threads, one level
 * each: a block scan gives the cdf, the first non-zero cdf value is read
 * back from shared memory. Saves the cumulative and table launches. */
struct TableU8 {
    unsigned char *s;
    __device__ void build(const unsigned long long *counts, int channels)
    {
        __shared__ unsigned char s_lut[4 * 256];
        __shared__ unsigned long long s_cdf[256], s_warp[8];
        s = s_lut;
        const unsigned t = threadIdx.x, lane = t & 31, warp = t >> 5;
        for (int c = 0; c < channels; c++) {
            unsigned long long x = counts[c * 256 + t];
            for (int o = 1; o < 32; o <<= 1) {
                unsigned long long y = __shfl_up_sync(0xFFFFFFFFu, x, o);
                if (lane >= (unsigned)o)
                    x += y;
            }
            if (lane == 31)
                s_warp[warp] = x;
            __syncthreads();
            for (unsigned w = 0; w < warp; w++)
                x += s_warp[w];
            s_cdf[t] = x;
            __syncthreads();
            unsigned long long cmin = 0;
            if (warp == 0)
                cmin = first_nonzero(s_cdf, 256, lane);
            if (t == 0)
                s_warp[0] = cmin;
            __syncthreads();
            s_lut[c * 256 + t] = (unsigned char)eq_value(x, s_warp[0], s_cdf[255], 256, t);
            __syncthreads();
        }
    }
    __device__ unsigned char operator()(int c, unsigned v) const { return s[c * 256 + v]; }
};

/* u16, one channel: the table copied into shared memory (dynamic, 128 KiB). */
struct TableU16Shared {
    const unsigned short *s;
    __device__ void load(const unsigned short *lut)
    {
        extern __shared__ uint4 s_dyn[];
        const uint4 *g = (const uint4 *)lut;
        for (int i = threadIdx.x; i < (int)(kWideTableBytes / 16); i += blockDim.x)
            s_dyn[i] = g[i];
        s = (const unsigned short *)s_dyn;
        __syncthreads();
    }
    __device__ unsigned short operator()(int, unsigned v) const { return s[v]; }
};

/* u16, 2-4 channels (tables of 256-512 KiB): read through the read-only cache. */
struct TableU16Global {
    const unsigned short *g;
    __device__ unsigned short operator()(int c, unsigned v) const
    {
        return __ldg(g + (c << 16) + v);
    }
};

/* Per-sample loops over a ready table (u8: `lut` NULL and `counts` the raw
 * histogram; u16: the table). */
template <typename T, typename Tab> __device__ void prepare(Tab &tab, const unsigned long long *counts,
                                                            const unsigned short *lut, int ch);
template <>
__device__ void prepare<unsigned char, TableU8>(TableU8 &tab, const unsigned long long *counts,
                                                const unsigned short *, int ch)
{
    tab.build(counts, ch);
}
template <>
__device__ void prepare<unsigned short, TableU16Shared>(TableU16Shared &tab,
                                                        const unsigned long long *,
                                                        const unsigned short *lut, int)
{
    tab.load(lut);
}
template <>
__device__ void prepare<unsigned short, TableU16Global>(TableU16Global &tab,
                                                        const unsigned long long *,
                                                        const unsigned short *lut, int)
{
    tab.g = lut;
}

/* Packed, 16-byte aligned input and output: `vecs` vectors of 16 bytes, then
 * `tail` samples (fewer than a vector's worth) after them. Each thread loads
 * kUnroll vectors before it maps them, so that enough bytes are in flight
 * per SM (the u16 kernel runs one block per SM). */
constexpr int kUnroll = 4;

template <typename T, typename Tab> struct Mapper {
    static constexpr int per = 16 / sizeof(T);
    union Vec {
        uint4 v;
        T s[per];
    };
    __device__ static void map(const Tab &tab, Vec &u, long long i, int ch)
    {
        int c = (int)((i * per) % ch);
#pragma unroll
        for (int k = 0; k < per; k++) {
            u.s[k] = tab(c, u.s[k]);
            c = c + 1 == ch ? 0 : c + 1;
        }
    }
};

template <typename T, typename Tab>
__global__ void apply_flat(Remap r, const unsigned long long *__restrict__ counts,
                           const unsigned short *__restrict__ lut, long long vecs, int tail)
{
    using M = Mapper<T, Tab>;
    Tab tab;
    prepare<T, Tab>(tab, counts, lut, (int)r.channels);
    const int ch = (int)r.channels;
    const uint4 *src = (const uint4 *)r.in;
    uint4 *dst = (uint4 *)r.out;
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    for (; i + (kUnroll - 1) * stride < vecs; i += kUnroll * stride) {
        typename M::Vec u[kUnroll];
#pragma unroll
        for (int k = 0; k < kUnroll; k++)
            u[k].v = src[i + k * stride];
#pragma unroll
        for (int k = 0; k < kUnroll; k++) {
            M::map(tab, u[k], i + k * stride, ch);
            dst[i + k * stride] = u[k].v;
        }
    }
    for (; i < vecs; i += stride) {
        typename M::Vec u;
        u.v = src[i];
        M::map(tab, u, i, ch);
        dst[i] = u.v;
    }
    if (blockIdx.x == 0 && threadIdx.x < tail) {
        const long long j = vecs * M::per + threadIdx.x;
        ((T *)r.out)[j] = tab((int)(j % ch), ((const T *)r.in)[j]);
    }
}

/* Any layout: grid-stride over rows, the block's threads along each row. */
template <typename T, typename Tab>
__global__ void apply_rows(Remap r, const unsigned long long *__restrict__ counts,
                           const unsigned short *__restrict__ lut)
{
    Tab tab;
    prepare<T, Tab>(tab, counts, lut, (int)r.channels);
    const long long samples = r.width * r.channels;
    const int ch = (int)r.channels;
    for (long long row = blockIdx.x; row < r.rows; row += gridDim.x) {
        const long long z = row / r.height, y = row - z * r.height;
        const T *s = (const T *)(r.in + z * r.in_slice + y * r.in_row);
        T *d = (T *)(r.out + z * r.out_slice + y * r.out_row);
        for (long long i = threadIdx.x; i < samples; i += blockDim.x)
            d[i] = tab((int)(i % ch), s[i]);
    }
}

/* threads x blocks_per_sm blocks at most (as many as fit an SM: the flat
 * kernels take 32-48 registers); dynamic shared memory `smem`. */
template <typename T, typename Tab>
int launch_apply(const Remap &r, const unsigned long long *counts, const unsigned short *lut,
                 int sms, int threads, int blocks_per_sm, size_t smem, cudaStream_t s)
{
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(apply_flat<T, Tab>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)smem);
        if (e == cudaSuccess)
            e = cudaFuncSetAttribute(apply_rows<T, Tab>,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (e != cudaSuccess)
            return (int)e;
    }
    const long long row_bytes = r.width * r.channels * (long long)sizeof(T);
    const bool packed = r.in_row == row_bytes && r.out_row == row_bytes &&
                        (r.rows == r.height ||
                         (r.in_slice == row_bytes * r.height && r.out_slice == row_bytes * r.height));
    const bool aligned = ((uintptr_t)r.in % 16 == 0) && ((uintptr_t)r.out % 16 == 0);
    const long long grid_cap = (long long)sms * blocks_per_sm;
    if (packed && aligned) {
        const long long bytes = row_bytes * r.rows;
        const long long vecs = bytes / 16;
        const int tail = (int)(bytes % 16 / (long long)sizeof(T));
        long long blocks = (vecs + (long long)threads * kUnroll - 1) / ((long long)threads * kUnroll);
        blocks = blocks < 1 ? 1 : blocks > grid_cap ? grid_cap : blocks;
        apply_flat<T, Tab><<<(unsigned)blocks, threads, smem, s>>>(r, counts, lut, vecs, tail);
    } else {
        long long blocks = r.rows < grid_cap ? r.rows : grid_cap;
        apply_rows<T, Tab><<<(unsigned)blocks, threads, smem, s>>>(r, counts, lut);
    }
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int psi_ch_equalize_table(const unsigned long long *cdf, unsigned short *lut,
                                     long long channels, long long levels, void *stream)
{
    table_kernel<<<dim3((unsigned)(levels / kTableThreads), (unsigned)channels), kTableThreads, 0,
                   (cudaStream_t)stream>>>(cdf, lut, (unsigned)levels);
    return (int)cudaGetLastError();
}

extern "C" int psi_ch_equalize_apply(const psi_ch_image *in, void *out, long long out_row,
                                     long long out_slice, const unsigned long long *counts,
                                     const unsigned short *lut, int sm_count, void *stream)
{
    Remap r;
    r.in = (const unsigned char *)in->data;
    r.out = (unsigned char *)out;
    r.width = in->width;
    r.height = in->height;
    r.rows = in->height * in->depth;
    r.channels = in->channels;
    r.in_row = in->row_stride;
    r.in_slice = in->slice_stride;
    r.out_row = out_row;
    r.out_slice = out_slice;
    cudaStream_t s = (cudaStream_t)stream;
    if (in->type == PSI_CH_U8)
        return launch_apply<unsigned char, TableU8>(r, counts, NULL, sm_count, kApplyThreads, 4,
                                                    0, s);
    psi_device_caps caps;
    cudaError_t e = psi_current_device_caps(&caps);
    if (e != cudaSuccess)
        return (int)e;
    if (in->channels == 1 && caps.smem_optin >= (int)kWideTableBytes)
        return launch_apply<unsigned short, TableU16Shared>(r, NULL, lut, sm_count, kWideThreads,
                                                            1, kWideTableBytes, s);
    return launch_apply<unsigned short, TableU16Global>(r, NULL, lut, sm_count, kApplyThreads, 4,
                                                        0, s);
}

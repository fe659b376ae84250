/*
 * hist_count.cuh - what the counting kernels of the CUDA histograms share
 * (internal to hist_count.cu, hist_flat.cu, hist_narrow.cu and hist_wide.cu):
 * the block sizes and workspace layout of the three schemes, the image
 * walk in items (Geo, load_item(), count_item(), pix_item()), the class of a
 * value and the warp sums that end a block's counting, and the host helpers
 * and per-scheme launchers that psi_ch_launch() (hist_count.cu) calls.
 * The schemes themselves are described in hist_count.cu.
 */
#ifndef PSI_HIST_COUNT_CUH
#define PSI_HIST_COUNT_CUH

#include "cuda_hist.h"
#include "device_caps.cuh"
#include "gpu_order.cuh"

#include <cuda_runtime.h>
#include <stdint.h>

namespace psi_hist {


constexpr int kNarrowThreads = 512;
constexpr int kNarrowVec = 4;      /* 16-byte loads per thread per item */
constexpr int kNarrowPix = 8;      /* pixels per thread per item (pixel path) */
constexpr int kFlatThreads = 1024; /* one block per SM */
constexpr int kFlatVec = 4;        /* 16-byte loads per thread per step (and as many prefetched) */
constexpr int kFlatCopies = 64;    /* table copies: entry stride 256 bytes */
constexpr int kWideThreads = 1024;
constexpr int kWideSamples = 24;   /* samples per thread per item; two items per interval */
constexpr int kWidePix = 16;       /* pixels per thread per item (pixel path) */
constexpr size_t kNarrowSmemMax = 96u << 10;
constexpr size_t kNarrowSmemPref = 64u << 10;
/* Workspace (zeroed at allocation): [0, 256) scratch totals, [256, 512) the
 * wide reduce's ticket and FlatSync's words (both left zeroed by every call),
 * then the wide scheme's buffers. */
constexpr size_t kTicketOff = 256;
constexpr size_t kFlatSyncOff = kTicketOff + 16; /* FlatSync's three words */
constexpr size_t kWideOff = 512;

typedef psi_bins Bins;

/* The class of v (hist_bins.h): bin, or bins + 0 below, + 1 above, + 2 NaN. */
__device__ __forceinline__ unsigned classify(double v, const Bins &b)
{
    return (unsigned)psi_bins_class(&b, v);
}

/* Adds k to class cls of channel ch of the caller's outputs. */
__device__ __forceinline__ void add_class(unsigned long long *counts, unsigned long long *totals,
                                          const Bins &b, int ch, unsigned cls,
                                          unsigned long long k)
{
    if (cls < b.bins)
        atomicAdd(&counts[(size_t)ch * b.bins + cls], k);
    else
        atomicAdd(&totals[PSI_CH_T_BELOW + 4 * (cls - b.bins) + ch], k);
}

template <typename T> struct Raw;
template <> struct Raw<uint8_t> { static __device__ unsigned index(uint8_t v) { return v; } };
template <> struct Raw<uint16_t> { static __device__ unsigned index(uint16_t v) { return v; } };
template <> struct Raw<int16_t> {
    static __device__ unsigned index(int16_t v) { return (unsigned)(uint16_t)v; }
};
template <> struct Raw<int32_t> { static __device__ unsigned index(int32_t) { return 0; } };
template <> struct Raw<float> { static __device__ unsigned index(float) { return 0; } };
template <> struct Raw<double> { static __device__ unsigned index(double) { return 0; } };

/* The image as the kernels walk it. */
struct Geo {
    const char *data;
    long long rows, height;        /* rows in all (height x depth, or 1 when flat) */
    long long row_stride, slice_stride;
    long long n;                   /* samples per row */
    long long width;               /* pixels per row (pixel path) */
    int channels;
    const unsigned char *mask;
    long long mask_row, mask_slice;
    long long chunks, items;       /* chunks per row, rows x chunks */
};

__device__ __forceinline__ const char *row_at(const char *base, long long r, long long height,
                                              long long rs, long long ss)
{
    long long z = r / height;
    return base + z * ss + (r - z * height) * rs;
}

template <typename T> union Vec {
    uint4 raw;
    T e[16 / sizeof(T)];
};

/* One item's vectors for one thread: VPT 16-byte vectors spaced blockDim
 * apart (out-of-row ones not loaded). */
template <typename T, int VPT> struct VecItem {
    Vec<T> v[VPT];
    const char *row;
    long long v0;
};

template <typename T, int VPT>
__device__ __forceinline__ void load_item(const Geo &g, long long item, VecItem<T, VPT> &it)
{
    constexpr int E = 16 / sizeof(T);
    long long r = 0, ck = item;
    if (g.rows > 1) { /* one long row needs no division (about 100 instructions) */
        r = item / g.chunks;
        ck = item - r * g.chunks;
    }
    it.row = r ? row_at(g.data, r, g.height, g.row_stride, g.slice_stride) : g.data;
    it.v0 = ck * (long long)blockDim.x * VPT + threadIdx.x;
    long long nfull = g.n / E;
#pragma unroll
    for (int j = 0; j < VPT; j++) {
        long long v = it.v0 + (long long)j * blockDim.x;
        if (v < nfull)
            it.v[j].raw = __ldcs((const uint4 *)it.row + v);
    }
}

/* Calls f(channel, value) for the samples of a loaded item; the row's last
 * partial vector is read sample by sample. */
template <typename T, int VPT, typename F>
__device__ __forceinline__ void count_item(const Geo &g, const VecItem<T, VPT> &it, F &&f)
{
    constexpr int E = 16 / sizeof(T);
    long long nfull = g.n / E;
#pragma unroll
    for (int j = 0; j < VPT; j++) {
        long long v = it.v0 + (long long)j * blockDim.x;
        if (v < nfull) {
            if (g.channels == 1) {
#pragma unroll
                for (int k = 0; k < E; k++)
                    f(0, it.v[j].e[k]);
            } else {
                int ch = (int)((v * E) % g.channels);
#pragma unroll
                for (int k = 0; k < E; k++) {
                    f(ch, it.v[j].e[k]);
                    ch = ch + 1 == g.channels ? 0 : ch + 1;
                }
            }
        } else if (v == nfull) {
            const T *t = (const T *)it.row;
            for (long long i = nfull * E; i < g.n; i++)
                f((int)(i % g.channels), t[i]);
        }
    }
}

/* Pixel path: PPT pixels per thread spaced blockDim apart, mask honoured. */
template <typename T, int PPT, typename F>
__device__ __forceinline__ void pix_item(const Geo &g, long long item, F &&f)
{
    long long r = item / g.chunks, ck = item - r * g.chunks;
    const T *row = (const T *)row_at(g.data, r, g.height, g.row_stride, g.slice_stride);
    const unsigned char *m =
        g.mask ? (const unsigned char *)row_at((const char *)g.mask, r, g.height, g.mask_row,
                                               g.mask_slice)
               : nullptr;
    long long x0 = ck * (long long)blockDim.x * PPT + threadIdx.x;
#pragma unroll 4
    for (int j = 0; j < PPT; j++) {
        long long x = x0 + (long long)j * blockDim.x;
        if (x < g.width && (!m || m[x]))
            for (int c = 0; c < g.channels; c++)
                f(c, row[x * g.channels + c]);
    }
}

/* The sum of v over the warp, in lane 0 (the other lanes get partial sums);
 * every lane of the warp calls it. */
__device__ __forceinline__ unsigned long long warp_total(unsigned long long v)
{
    for (int o = 16; o; o >>= 1)
        v += __shfl_down_sync(0xFFFFFFFFu, v, o);
    return v;
}

/* The sum of a table entry's copies, starting at copy e (mod copies, a power
 * of two) so that the 32 lanes summing entries e..e + 31 read 32 banks. */
__device__ __forceinline__ unsigned long long rotated_sum(const unsigned *copies_of_e, unsigned e,
                                                          unsigned copies)
{
    unsigned long long s = 0;
    for (unsigned j = 0; j < copies; j++)
        s += copies_of_e[(j + e) & (copies - 1)];
    return s;
}

/* For lanes whose equal keys sit side by side in the warp: the total of v
 * over each run of equal keys at the run's last lane, 0 at the others (all 32
 * lanes call it). Folding raw u8 values into few bins makes such runs, since
 * a value's class never falls as the value grows within one range part. */
__device__ __forceinline__ unsigned long long run_total(unsigned key, unsigned long long v)
{
    const unsigned lane = threadIdx.x & 31u;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        unsigned long long up = __shfl_up_sync(0xFFFFFFFFu, v, o);
        unsigned key_up = __shfl_up_sync(0xFFFFFFFFu, key, o);
        if (lane >= (unsigned)o && key_up == key)
            v += up;
    }
    unsigned key_next = __shfl_down_sync(0xFFFFFFFFu, key, 1);
    return lane == 31u || key_next != key ? v : 0;
}

/* The end of a narrow block: sum(e) is the block's count of entry e (entries
 * per channel; raw u8 values when RAW, else classes), added with atomics
 * into the zeroed counts and totals. Entries of one class are first added up
 * within the warp (run_total), so no address takes more than one atomic per
 * warp; the in-range and pixel totals are warp sums, one atomic per block.
 * The block size is a multiple of 32. */
template <bool RAW, typename S>
__device__ void finish_block(S &&sum, unsigned entries, const Bins &b, int channels,
                             unsigned long long *counts, unsigned long long *totals)
{
    const unsigned cells = (unsigned)channels * entries;
    const unsigned span = (cells + 31u) & ~31u; /* whole warps take each step */
    /* Entry e's channel, class and key (keys past the cells stay apart). */
    auto class_of = [&](unsigned e, unsigned &ch, unsigned &cls) -> unsigned {
        ch = e / entries;
        const unsigned idx = e - ch * entries;
        cls = RAW ? classify((double)idx, b) : idx;
        return ch * (b.bins + 3u) + cls;
    };
    /* The block's in-range counts per channel and its pixels (channel 0's
     * samples of every class) go into the totals too, as warp sums. */
    unsigned long long in_part[4] = {0, 0, 0, 0}, pixels = 0;
    for (unsigned e = threadIdx.x; e < span; e += blockDim.x) {
        unsigned long long s = 0;
        unsigned key = 0xFFFFFFFFu, ch = 0, cls = 0;
        if (e < cells) {
            s = sum(e);
            key = class_of(e, ch, cls);
        }
        const unsigned long long t = run_total(key, s);
        if (t) {
            add_class(counts, totals, b, (int)ch, cls, t);
#pragma unroll
            for (unsigned q = 0; q < 4; q++)
                in_part[q] += q == ch && cls < b.bins ? t : 0;
            pixels += ch == 0 ? t : 0;
        }
    }
    /* Warp sums, then one atomic per total and block. */
    __shared__ unsigned long long block_tot[5];
    if (threadIdx.x < 5)
        block_tot[threadIdx.x] = 0;
    __syncthreads();
#pragma unroll
    for (int q = 0; q < 5; q++) {
        const unsigned long long v = warp_total(q < 4 ? in_part[q] : pixels);
        if ((threadIdx.x & 31u) == 0 && v)
            atomicAdd(&block_tot[q], v);
    }
    __syncthreads();
    if (threadIdx.x < 5 && block_tot[threadIdx.x])
        atomicAdd(&totals[threadIdx.x < 4 ? PSI_CH_T_IN_RANGE + threadIdx.x : PSI_CH_T_PIXELS],
                  block_tot[threadIdx.x]);
}

/* ---- host side, defined in hist_count.cu unless said otherwise ----------------- */

/* Bytes per sample of type t. */
size_t elem_size(psi_ch_type t);
/* Whether t is counted by its 16-bit raw value (u16, i16). */
bool raw16(psi_ch_type t);
/* Whether the image's rows and slices lie back to back (one long row). */
bool contiguous(const psi_ch_image &im);
/* The samples of all rows, channels included (a contiguous image's length). */
long long all_samples(const psi_ch_image &im);
/* Whether the vector path (16-byte loads, no mask) can read the image. */
bool vec_ok(const psi_ch_image &im);
/* Raises a kernel's dynamic shared memory limit once per device (to what the
 * device allows beside the kernel's static shared memory), checks that `smem`
 * fits, and returns its resident blocks per multiprocessor for (threads,
 * smem) when per_sm is not NULL; all cached. cudaErrorInvalidConfiguration:
 * `smem` does not fit this device. */
cudaError_t kernel_ready(const void *fn, int threads, size_t smem, int *per_sm);
/* Entries per channel of a wide table (u16/i16: raw values; else bins). */
unsigned wide_entries(const psi_ch_plan *p);
/* The image as the kernels walk it, in items of per_item_vec vectors (vector
 * path, `vec`) or per_item_pix pixels per block. */
Geo make_geo(const psi_ch_image &im, bool vec, long long per_item_vec, long long per_item_pix);
Bins make_bins(const psi_ch_bins &b);
/* Grid: `resident` blocks, raised so that no block takes more than
 * max_items items, capped at the item count. */
cudaError_t grid_for(long long items, long long resident, long long max_items, unsigned *grid);
/* Sets *pdl: whether this plan's flat and wide kernels are launched with
 * programmatic dependent launch (the device's architecture policy, unless
 * the plan forces it off). Those kernels call psi_pdl_wait() before their
 * first global access. Returns the error of the device query, if any. */
cudaError_t pdl_for(const psi_ch_plan *p, bool *pdl);

/* The flat scheme (hist_flat.cu): u8, one channel, contiguous, 16-byte
 * aligned, unmasked. Presets the outputs itself. cudaErrorInvalidConfiguration
 * when the device lacks the shared memory (the caller falls back to narrow). */
cudaError_t launch_flat(const psi_ch_plan *p);
/* The narrow scheme (hist_narrow.cu) on zeroed outputs: T the sample type,
 * RAW counting raw u8 values (else classes). Instantiated for u8 (RAW) and
 * for u16, i16, i32, f32, f64 (classes). */
template <typename T, bool RAW> cudaError_t launch_narrow(const psi_ch_plan *p);
/* The wide scheme (hist_wide.cu), which writes its outputs itself: RAW for
 * u16/i16 (raw values through the lookup table), else classes of i32, f32,
 * f64. */
template <typename T, bool RAW> cudaError_t launch_wide(const psi_ch_plan *p);

/* The wide scheme's buffers in the workspace, after kWideOff (hist_wide.cu). */
struct WideLayout {
    unsigned *lut;
    unsigned long long *spill;
    unsigned *partials;
    size_t bytes;
};
WideLayout wide_layout(const psi_ch_plan *p, unsigned entries);

} // namespace psi_hist

#endif

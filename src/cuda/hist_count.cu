/*
 * hist_count.cu - the counting kernels of the CUDA histograms and their
 * launcher psi_ch_launch() (the schemes are listed in cuda_hist.h).
 *
 * All kernels read the image in "items": a chunk of one row (rows of
 * width x channels samples; a contiguous image is one long row). The vector
 * path loads 16 bytes per thread and load (rows 16-byte aligned, no mask); the
 * pixel path loads one sample at a time (masks, odd alignment). Counters live
 * in shared memory, laid out so that the lanes of a warp never collide on a
 * bank whatever the image holds, and every block's counts end in the
 * caller's u64 counts by global atomics (one per class and warp: run_total()),
 * so no count wraps.
 *   flat   (u8, one channel, unmasked, contiguous, 16-byte aligned) the image
 *          as one array of 16-byte vectors, each thread loading its next four
 *          while it counts the current four; one block of 1024 threads per SM,
 *          only as many blocks as give each the same number of rounds; 64
 *          copies of 256 u32 counters, two instructions per sample (a byte
 *          permute gives the counter's address, then a shared atomic), one
 *          atomic for a vector of 16 equal bytes. Its first block presets the
 *          outputs and raises a flag the others wait for before adding
 *          (FlatSync): no memset, no last-block pass.
 *   narrow (other u8 images; i32/f32/f64 whose channels x (bins + 3) u32 fit
 *          96 KiB) a u32 table per block, replicated so that lane l adds into
 *          copy l; u8 counts raw values, the other types classes; fewer than
 *          2^31 samples per block. Outputs zeroed first.
 *   wide   (u16/i16 raw values; the other types with many bins) one channel
 *          per pass; 16-bit counters, two per word, for up to 65536 indices;
 *          every 49152 samples per block the counters of 2^14 or more move to a
 *          u64 spill table, so none wraps; each thread merges runs of equal
 *          indices before adding; a reduce kernel adds the blocks' tables and
 *          folds raw values into bins.
 * On sm_90 and newer the flat and wide kernels are launched with programmatic
 * dependent launch (device_caps.cuh): a block clears its table while the
 * stream's previous kernel drains, then waits for it before its first global
 * access. The bin of a value is hist_bins.h's rule, shared with the CPU.
 */
#include "cuda_hist.h"
#include "device_caps.cuh"
#include "gpu_order.cuh"

#include <cuda_runtime.h>
#include <stdint.h>

#include <mutex>

namespace {

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

/* ---- flat (u8, one channel, contiguous and 16-byte aligned) -------------------- */

/* The flat table's counter of byte BYTE (0-3) of word q: the byte offset of
 * value v in copy c is v * 256 + c * 4, one byte permute (v into byte 1, the
 * copy's offset `cbytes` into byte 0, zeros above). */
template <unsigned BYTE>
__device__ __forceinline__ unsigned *flat_counter(char *tab, unsigned cbytes, unsigned q)
{
    return (unsigned *)(tab + __byte_perm(q, cbytes, 0x5504u | BYTE << 4));
}

/* Adds the four samples of word q to the flat table: one shared atomic each. */
__device__ __forceinline__ void flat_word(char *tab, unsigned cbytes, unsigned q)
{
    atomicAdd(flat_counter<0>(tab, cbytes, q), 1u);
    atomicAdd(flat_counter<1>(tab, cbytes, q), 1u);
    atomicAdd(flat_counter<2>(tab, cbytes, q), 1u);
    atomicAdd(flat_counter<3>(tab, cbytes, q), 1u);
}

/* Counts the 16 samples of q: one atomic of 16 when all 16 bytes are equal.
 * The block's last group is counted after its bytes arrive, at the rate of
 * the shared atomics; on a constant image this makes that tail 16 times
 * shorter, at no cost on other content. */
__device__ __forceinline__ void flat_vec(char *tab, unsigned cbytes, const uint4 &q)
{
    const unsigned r = __byte_perm(q.x, 0, 0x0000u);
    if (q.x == r && q.y == r && q.z == r && q.w == r) {
        atomicAdd(flat_counter<0>(tab, cbytes, q.x), 16u);
        return;
    }
    flat_word(tab, cbytes, q.x);
    flat_word(tab, cbytes, q.y);
    flat_word(tab, cbytes, q.z);
    flat_word(tab, cbytes, q.w);
}

/* The flat kernel's outputs without memsets or a last block. `sync` points
 * at three workspace words, zero between launches: [0] start tickets, [1] the
 * flag raised once the outputs are preset, [2] blocks that have seen it.
 * Lane 0 of warp 0 of each block takes a ticket as the block starts; warp 0
 * of the block with ticket 0 presets the outputs (counts 0, the pixel and
 * in-range totals the sample count, the rest 0) and raises the flag. Every
 * block adds its counts with atomics once it has seen the flag (a relaxed
 * load while it counts, an acquire fence before it adds); the last block to
 * see it lowers the three words again. Thread 0 takes one step per group, using
 * the results of the previous step's loads and atomics, so no step waits on
 * memory while the block counts. */
struct FlatSync {
    unsigned *sync;
    unsigned ticket;  /* lane 0: this block's start ticket (in flight until step 1) */
    unsigned flag;    /* lane 0: the flag as last loaded (in flight until the next step) */
    unsigned seen_no; /* lane 0: sync[2] before this block's increment */
    bool seen;        /* lane 0: the flag was seen (and counted in sync[2]) */
};

/* Warp 0 of the block with ticket 0: counts 0 and the totals preset, then
 * the flag raised (every lane's stores fenced before lane 0 raises it). */
__device__ void flat_preset(const FlatSync &fs, unsigned long long *counts, unsigned bins,
                            unsigned long long *totals, unsigned long long samples)
{
    const unsigned lane = threadIdx.x & 31u;
    for (unsigned i = lane; i < bins; i += 32)
        counts[i] = 0;
    static_assert(PSI_CH_T_COUNT <= 32, "one total per lane");
    if (lane < PSI_CH_T_COUNT)
        totals[lane] = lane == PSI_CH_T_PIXELS || lane == PSI_CH_T_IN_RANGE ? samples : 0;
    __threadfence();
    __syncwarp();
    if (lane == 0)
        atomicExch(&fs.sync[1], 1u);
}

/* The first step, by the 32 lanes of warp 0 together (before the counting
 * loop, where they are converged; in the loop the lanes of the last group
 * part ways): the preset by the block with ticket 0, the first look at the
 * flag. The ticket's round trip overlaps the block's first loads. */
__device__ void flat_sync_begin(FlatSync &fs, unsigned long long *counts, unsigned bins,
                                unsigned long long *totals, unsigned long long samples)
{
    if (__shfl_sync(0xFFFFFFFFu, fs.ticket, 0) == 0)
        flat_preset(fs, counts, bins, totals, samples);
    if ((threadIdx.x & 31u) == 0)
        fs.flag = psi_gpu::load_relaxed(&fs.sync[1]);
}

/* One later step (thread 0 alone, once per group): the flag loaded by the
 * previous step is looked at; once seen, the block counts itself in sync[2]. */
__device__ __forceinline__ void flat_sync_step(FlatSync &fs)
{
    if (fs.seen)
        return;
    if (fs.flag) {
        fs.seen_no = atomicAdd(&fs.sync[2], 1u);
        fs.seen = true;
    } else {
        fs.flag = psi_gpu::load_relaxed(&fs.sync[1]);
    }
}

/* After the counting (thread 0; the block's barrier follows): steps until the
 * flag is seen, the acquire fence, and the reset by the last block. */
__device__ void flat_sync_end(FlatSync &fs)
{
    while (!fs.seen)
        flat_sync_step(fs);
    psi_gpu::fence_acq_rel();
    if (fs.seen_no == gridDim.x - 1) {
        fs.sync[0] = 0;
        fs.sync[1] = 0;
        fs.sync[2] = 0;
    }
}

/* Counts nvec 16-byte vectors and ntail trailing bytes of a u8 image into
 * 256 raw entries x kFlatCopies u32 counters and adds them to the outputs
 * that the block with the first ticket presets (FlatSync at `sync`). Thread t
 * uses copy t % 64: lane l always hits bank l, whatever the image holds. Each
 * thread walks groups of kFlatVec vectors spaced blockDim apart, the block's
 * groups a grid apart, loading the next group while it counts the current
 * one (without PDL the first group's loads are issued before the table is
 * cleared); a block with a group less finishes early without slowing the
 * rest, which still saturate DRAM. A block counts fewer than 2^31 samples
 * (launcher). */
__global__ void __launch_bounds__(kFlatThreads, 1)
    flat_u8_kernel(const uint4 *data, long long nvec, int ntail, Bins b,
                   unsigned long long *counts, unsigned long long *totals, unsigned *sync,
                   bool pdl)
{
    extern __shared__ uint4 dyn_flat[];
    char *tab = (char *)dyn_flat;
    constexpr unsigned kWords = 256u * kFlatCopies;
    static_assert(kFlatCopies == 64, "the byte permute places a value at bits 8-15");
    const long long T = kFlatThreads;
    const long long step = (long long)gridDim.x * T * kFlatVec;
    const unsigned long long samples = (unsigned long long)nvec * 16 + (unsigned)ntail;
    const bool warp0 = threadIdx.x < 32;
    long long v = (long long)blockIdx.x * T * kFlatVec + threadIdx.x;
    uint4 cur[kFlatVec], nxt[kFlatVec];
    bool have = v + (kFlatVec - 1) * T < nvec;
    auto clear_table = [&] {
        for (unsigned i = threadIdx.x; i < kWords / 4; i += blockDim.x)
            dyn_flat[i] = make_uint4(0, 0, 0, 0);
    };
    /* Launched with PDL, the table is cleared while the previous kernel
     * drains; else the first group's loads are in flight during the clear. */
    if (pdl) {
        clear_table();
        psi_pdl_wait();
    }
    if (have) {
#pragma unroll
        for (int j = 0; j < kFlatVec; j++)
            cur[j] = __ldcs(data + v + j * T);
    }
    FlatSync fs = {sync, 0, 0, 0, false};
    if (threadIdx.x == 0)
        fs.ticket = atomicAdd(&sync[0], 1u);
    if (!pdl)
        clear_table();
    __syncthreads();
    if (warp0)
        flat_sync_begin(fs, counts, b.bins, totals, samples);
    const unsigned cbytes = (threadIdx.x & (kFlatCopies - 1)) * 4u;
    while (have) {
        const long long vn = v + step;
        const bool next = vn + (kFlatVec - 1) * T < nvec;
        if (next) {
#pragma unroll
            for (int j = 0; j < kFlatVec; j++)
                nxt[j] = __ldcs(data + vn + j * T);
        }
#pragma unroll
        for (int j = 0; j < kFlatVec; j++)
            flat_vec(tab, cbytes, cur[j]);
        if (threadIdx.x == 0)
            flat_sync_step(fs);
#pragma unroll
        for (int j = 0; j < kFlatVec; j++)
            cur[j] = nxt[j];
        v = vn;
        have = next;
    }
    /* The thread's last group, when only part of it lies in the image (the
     * groups after it lie beyond the end). */
#pragma unroll
    for (int j = 0; j < kFlatVec; j++)
        if (v + j * T < nvec)
            flat_vec(tab, cbytes, __ldcs(data + v + j * T));
    if (blockIdx.x == 0 && (int)threadIdx.x < ntail) {
        unsigned byte = ((const unsigned char *)(data + nvec))[threadIdx.x];
        atomicAdd((unsigned *)(tab + (byte << 8) + cbytes), 1u);
    }
    if (threadIdx.x == 0)
        flat_sync_end(fs);
    __syncthreads();
    /* Entry e's copies lie in words e x 64 ... e x 64 + 63. */
    const unsigned *words = (const unsigned *)dyn_flat;
    auto sum = [&](unsigned e) {
        return rotated_sum(words + (size_t)e * kFlatCopies, e, kFlatCopies);
    };
    /* Preset outputs: each class's count added once per warp; samples outside
     * the range leave the in-range total (preset to all samples). */
    if (threadIdx.x < 256) {
        const unsigned cls = classify((double)threadIdx.x, b);
        const unsigned long long t = run_total(cls, sum(threadIdx.x));
        if (t) {
            add_class(counts, totals, b, 0, cls, t);
            if (cls >= b.bins)
                atomicAdd(&totals[PSI_CH_T_IN_RANGE], 0ull - t);
        }
    }
}

/* ---- narrow -------------------------------------------------------------------- */

template <typename T, bool RAW>
__global__ void __launch_bounds__(kNarrowThreads)
    narrow_kernel(Geo g, Bins b, int vec, unsigned entries, int copies_log2,
                  unsigned long long *counts, unsigned long long *totals)
{
    extern __shared__ unsigned long long dyn_narrow[];
    unsigned *tab = (unsigned *)dyn_narrow;
    const unsigned copies = 1u << copies_log2;
    const unsigned lane_off = threadIdx.x & (copies - 1);
    const unsigned cells = (unsigned)g.channels * entries;
    for (unsigned i = threadIdx.x; i < cells * copies; i += blockDim.x)
        tab[i] = 0;
    __syncthreads();
    auto count = [&](int ch, T v) {
        unsigned idx = RAW ? Raw<T>::index(v) : classify((double)v, b);
        atomicAdd(&tab[(((unsigned)ch * entries + idx) << copies_log2) + lane_off], 1u);
    };
    if (vec) {
        for (long long item = blockIdx.x; item < g.items; item += gridDim.x) {
            VecItem<T, kNarrowVec> it;
            load_item(g, item, it);
            count_item(g, it, count);
        }
    } else {
        for (long long item = blockIdx.x; item < g.items; item += gridDim.x)
            pix_item<T, kNarrowPix>(g, item, count);
    }
    __syncthreads();
    auto sum = [&](unsigned e) { return rotated_sum(tab + ((size_t)e << copies_log2), e, copies); };
    finish_block<RAW>(sum, entries, b, g.channels, counts, totals);
}

/* ---- wide ---------------------------------------------------------------------- */

__device__ __forceinline__ void wide_put(unsigned *tab, unsigned idx, unsigned k)
{
    atomicAdd(&tab[idx >> 1], k << ((idx & 1u) << 4));
}

template <typename T, bool RAW>
__global__ void __launch_bounds__(kWideThreads, 1)
    wide_kernel(Geo g, Bins b, int vec, int pass_ch, unsigned words4, unsigned *partials,
                unsigned long long *spill, unsigned long long *totals)
{
    extern __shared__ uint4 dyn_wide[];
    unsigned *tab = (unsigned *)dyn_wide;
    constexpr int E = 16 / sizeof(T);
    constexpr int VPT = kWideSamples / E > 0 ? kWideSamples / E : 1;
    for (unsigned i = threadIdx.x; i < words4; i += blockDim.x)
        dyn_wide[i] = make_uint4(0, 0, 0, 0);
    psi_pdl_wait(); /* the table is cleared while the previous kernel drains */
    __syncthreads();
    unsigned long long n_below = 0, n_above = 0, n_nan = 0;
    const unsigned none = 0xFFFFFFFFu;
    unsigned cur = none, run = 0;
    /* Index of a sample of the pass channel, or `none` (class counted here). */
    auto index_of = [&](T v) -> unsigned {
        if (RAW)
            return Raw<T>::index(v);
        unsigned c = classify((double)v, b);
        if (c >= b.bins) {
            n_below += c == b.bins;
            n_above += c == b.bins + 1;
            n_nan += c == b.bins + 2;
            return none;
        }
        return c;
    };
    /* k more samples of index idx: extends the current run, or puts it and
     * starts another. */
    auto add_run = [&](unsigned idx, unsigned k) {
        if (idx == cur) {
            run += k;
        } else {
            if (run)
                wide_put(tab, cur, run);
            cur = idx;
            run = k;
        }
    };
    auto count_run = [&](int ch, T v) {
        if (ch != pass_ch)
            return;
        unsigned idx = index_of(v);
        if (idx != none)
            add_run(idx, 1);
    };
    const unsigned lane = threadIdx.x & 31;
    VecItem<T, VPT> cur_it;
    long long item = blockIdx.x;
    for (unsigned round = 0; item < g.items; item += gridDim.x, round++) {
        if (vec) {
            load_item(g, item, cur_it);
            if (RAW && sizeof(T) == 2 && g.channels == 1) {
                /* A vector of 8 equal samples is one run of 8: five compares
                 * instead of eight samples' merging (constant and skewed
                 * images), one more branch for the others. */
                const long long nfull = g.n / E;
#pragma unroll
                for (int j = 0; j < VPT; j++) {
                    const long long v = cur_it.v0 + (long long)j * blockDim.x;
                    if (v >= nfull) {
                        if (v == nfull) {
                            const T *t = (const T *)cur_it.row;
                            for (long long i = nfull * E; i < g.n; i++)
                                count_run(0, t[i]);
                        }
                        continue;
                    }
                    const uint4 q = cur_it.v[j].raw;
                    const bool same = q.y == q.x && q.z == q.x && q.w == q.x &&
                                      (q.x >> 16) == (q.x & 0xFFFFu);
                    if (same) {
                        add_run(q.x & 0xFFFFu, 8);
                    } else {
#pragma unroll
                        for (int k = 0; k < E; k++)
                            count_run(0, cur_it.v[j].e[k]);
                    }
                }
            } else {
                count_item(g, cur_it, count_run);
            }
        } else {
            pix_item<T, kWidePix>(g, item, count_run);
        }
        /* The item's last run; when every lane of the warp ends on the same
         * index (a constant image), lane 0 puts the warp's total instead of
         * 32 atomics on one address. The warp's lanes share the item. */
        const unsigned lead = __shfl_sync(0xFFFFFFFFu, cur, 0);
        if (__all_sync(0xFFFFFFFFu, cur == lead && cur != none)) {
#if __CUDA_ARCH__ >= 800
            const unsigned total = __reduce_add_sync(0xFFFFFFFFu, run);
#else
            const unsigned total = (unsigned)warp_total(run);
#endif
            if (lane == 0)
                wide_put(tab, cur, total);
        } else if (run) {
            wide_put(tab, cur, run);
        }
        run = 0;
        cur = none;
        /* Every second item, and after the last: move counters >= 2^14. */
        if ((round & 1) || item + gridDim.x >= g.items) {
            __syncthreads();
            for (unsigned i = threadIdx.x; i < words4; i += blockDim.x) {
                uint4 q = dyn_wide[i];
                unsigned w[4] = {q.x, q.y, q.z, q.w};
                bool changed = false;
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    if (!(w[k] & 0xC000C000u))
                        continue;
                    for (unsigned h = 0; h < 2; h++) {
                        unsigned half = (w[k] >> (16 * h)) & 0xFFFFu;
                        if (half >= 0x4000u) {
                            atomicAdd(&spill[8 * i + 2 * k + h], (unsigned long long)half);
                            w[k] -= half << (16 * h);
                            changed = true;
                        }
                    }
                }
                if (changed)
                    dyn_wide[i] = make_uint4(w[0], w[1], w[2], w[3]);
            }
            __syncthreads();
        }
    }
    uint4 *mine = (uint4 *)partials + (size_t)blockIdx.x * words4;
    for (unsigned i = threadIdx.x; i < words4; i += blockDim.x)
        mine[i] = dyn_wide[i];
    if (!RAW) {
        n_below = warp_total(n_below);
        n_above = warp_total(n_above);
        n_nan = warp_total(n_nan);
        if (lane == 0) {
            if (n_below)
                atomicAdd(&totals[PSI_CH_T_BELOW + pass_ch], n_below);
            if (n_above)
                atomicAdd(&totals[PSI_CH_T_ABOVE + pass_ch], n_above);
            if (n_nan)
                atomicAdd(&totals[PSI_CH_T_NAN + pass_ch], n_nan);
        }
    }
}

/* Adds the blocks' 16-bit tables and the spill of one pass into counts:
 * 64 words per block, four groups of threads each adding a quarter of the
 * blocks' tables (more loads in flight). direct >= 0: index i is bin
 * i ^ direct and every bin of the channel is written (no memset needed);
 * else raw values fold through lut with atomics (counts zeroed before). The
 * spill is read and left zeroed. in_range[pass_ch] gets the pass's bins; the
 * pass of channel 0 also finishes `pixels` (its last block). */
constexpr int kReduceWords = 64;
__global__ void __launch_bounds__(256)
    wide_reduce(const unsigned *partials, int nblocks, unsigned words,
                unsigned long long *spill, unsigned entries, const unsigned *lut, int direct,
                Bins b, int pass_ch, unsigned long long *counts,
                unsigned long long *totals, unsigned *ticket)
{
    __shared__ unsigned long long part[2][4][kReduceWords];
    __shared__ unsigned long long block_in;
    __shared__ unsigned last;
    const unsigned col = threadIdx.x % kReduceWords, grp = threadIdx.x / kReduceWords;
    const unsigned w = blockIdx.x * kReduceWords + col;
    psi_pdl_wait();
    if (threadIdx.x == 0)
        block_in = 0;
    unsigned long long lo = 0, hi = 0;
    if (w < words) {
        int i = (int)grp;
        for (; i + 12 < nblocks; i += 16) {
            unsigned x0 = __ldcs(&partials[(size_t)i * words + w]);
            unsigned x1 = __ldcs(&partials[(size_t)(i + 4) * words + w]);
            unsigned x2 = __ldcs(&partials[(size_t)(i + 8) * words + w]);
            unsigned x3 = __ldcs(&partials[(size_t)(i + 12) * words + w]);
            lo += (x0 & 0xFFFFu) + (x1 & 0xFFFFu) + (x2 & 0xFFFFu) + (x3 & 0xFFFFu);
            hi += (x0 >> 16) + (x1 >> 16) + (x2 >> 16) + (x3 >> 16);
        }
        for (; i < nblocks; i += 4) {
            unsigned x = __ldcs(&partials[(size_t)i * words + w]);
            lo += x & 0xFFFFu;
            hi += x >> 16;
        }
    }
    part[0][grp][col] = lo;
    part[1][grp][col] = hi;
    __syncthreads();
    unsigned long long in = 0;
    if (grp == 0 && w < words) {
        for (unsigned h = 0; h < 2; h++) {
            unsigned idx = 2 * w + h;
            if (idx >= entries)
                break;
            unsigned long long s = part[h][0][col] + part[h][1][col] + part[h][2][col] +
                                   part[h][3][col];
            unsigned long long sp = spill[idx];
            if (sp) {
                s += sp;
                spill[idx] = 0;
            }
            if (direct >= 0) {
                counts[(size_t)pass_ch * b.bins + (idx ^ (unsigned)direct)] = s;
                in += s;
            } else if (s) {
                unsigned cls = lut ? lut[idx] : idx;
                add_class(counts, totals, b, pass_ch, cls, s);
                if (cls < b.bins)
                    in += s;
            }
        }
    }
    if (grp == 0) { /* warps 0 and 1, whole */
        in = warp_total(in);
        if ((threadIdx.x & 31) == 0 && in)
            atomicAdd(&block_in, in);
    }
    __syncthreads();
    if (threadIdx.x == 0 && block_in)
        atomicAdd(&totals[PSI_CH_T_IN_RANGE + pass_ch], block_in);
    if (pass_ch != 0)
        return;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (last && threadIdx.x == 0) {
        __threadfence();
        totals[PSI_CH_T_PIXELS] =
            atomicAdd(&totals[PSI_CH_T_IN_RANGE], 0ull) + atomicAdd(&totals[PSI_CH_T_BELOW], 0ull) +
            atomicAdd(&totals[PSI_CH_T_ABOVE], 0ull) + atomicAdd(&totals[PSI_CH_T_NAN], 0ull);
        *ticket = 0;
    }
}

/* lut[r] = class of the 16-bit raw value r (u16, or i16 when is_signed);
 * also zeroes the totals (this kernel runs first). */
__global__ void raw16_lut(unsigned *lut, Bins b, int is_signed, unsigned long long *totals)
{
    psi_pdl_wait();
    unsigned r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < PSI_CH_T_COUNT)
        totals[r] = 0;
    if (r < 65536u) {
        double v = is_signed ? (double)(int16_t)(uint16_t)r : (double)r;
        lut[r] = classify(v, b);
    }
}

/* ---- launcher ------------------------------------------------------------------ */

size_t elem_size(psi_ch_type t)
{
    switch (t) {
    case PSI_CH_U8: return 1;
    case PSI_CH_U16:
    case PSI_CH_I16: return 2;
    case PSI_CH_I32:
    case PSI_CH_F32: return 4;
    default: return 8;
    }
}

bool raw16(psi_ch_type t)
{
    return t == PSI_CH_U16 || t == PSI_CH_I16;
}

/* Whether the image's rows and slices lie back to back (one long row). */
bool contiguous(const psi_ch_image &im)
{
    const long long row_bytes = im.width * im.channels * (long long)elem_size(im.type);
    return im.row_stride == row_bytes &&
           (im.depth <= 1 || im.slice_stride == im.height * im.row_stride);
}

/* The samples of all rows, channels included (a contiguous image's length). */
long long all_samples(const psi_ch_image &im)
{
    return im.width * im.channels * im.height * (im.depth > 1 ? im.depth : 1);
}

bool vec_ok(const psi_ch_image &im)
{
    if (im.mask || (uintptr_t)im.data % 16)
        return false;
    if (contiguous(im))
        return true;
    return im.row_stride % 16 == 0 && (im.depth <= 1 || im.slice_stride % 16 == 0);
}

/* A u8 image of one channel, unmasked, 16-byte aligned and contiguous (rows
 * and slices back to back): the flat scheme's input. */
bool flat_u8(const psi_ch_image &im)
{
    return im.type == PSI_CH_U8 && im.channels == 1 && !im.mask && (uintptr_t)im.data % 16 == 0 &&
           contiguous(im);
}

/* Raises a kernel's dynamic shared memory limit once per device (to what the
 * device allows beside the kernel's static shared memory), checks that `smem`
 * fits, and returns its resident blocks per multiprocessor for (threads,
 * smem) when per_sm is not NULL; all cached. */
struct KernelSlot {
    const void *fn;
    int device, threads, per_sm;
    size_t smem;
};

cudaError_t kernel_ready(const void *fn, int threads, size_t smem, int *per_sm)
{
    static std::mutex mu;
    static KernelSlot attr[128], occ[256];
    static int n_attr, n_occ;
    psi_device_caps caps;
    cudaError_t e = psi_current_device_caps(&caps);
    if (e != cudaSuccess)
        return e;
    const int dev = caps.device, optin = caps.smem_optin;
    std::lock_guard<std::mutex> lock(mu);
    size_t max_dyn = 0;
    bool set = false;
    for (int i = 0; i < n_attr && !set; i++)
        if (attr[i].fn == fn && attr[i].device == dev) {
            set = true;
            max_dyn = attr[i].smem;
        }
    if (!set) {
        cudaFuncAttributes fa;
        if ((e = cudaFuncGetAttributes(&fa, fn)) != cudaSuccess)
            return e;
        int room = optin - (int)fa.sharedSizeBytes;
        if (room < 0)
            room = 0;
        e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, room);
        if (e != cudaSuccess)
            return e;
        max_dyn = (size_t)room;
        if (n_attr < 128)
            attr[n_attr++] = KernelSlot{fn, dev, 0, 0, max_dyn};
    }
    if (smem > max_dyn)
        return cudaErrorInvalidConfiguration; /* too little shared memory on this device */
    if (!per_sm)
        return cudaSuccess;
    for (int i = 0; i < n_occ; i++)
        if (occ[i].fn == fn && occ[i].device == dev && occ[i].threads == threads &&
            occ[i].smem == smem) {
            *per_sm = occ[i].per_sm;
            return cudaSuccess;
        }
    int n = 0;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, fn, threads, smem);
    if (e != cudaSuccess)
        return e;
    *per_sm = n > 0 ? n : 1;
    if (n_occ < 256)
        occ[n_occ++] = KernelSlot{fn, dev, threads, *per_sm, smem};
    return cudaSuccess;
}

enum Scheme { S_FLAT, S_NARROW, S_WIDE };

/* Entries per channel of a narrow table (u8: raw values; else classes). */
unsigned narrow_entries(const psi_ch_plan *p)
{
    if (p->img.type == PSI_CH_U8)
        return 256;
    return (unsigned)p->b.bins + 3;
}

/* The scheme of plan p: the automatic choice (cuda_hist.h), or the one the
 * plan forces where its type can take it. */
Scheme scheme_of(const psi_ch_plan *p)
{
    const psi_ch_image &im = p->img;
    if (im.type == PSI_CH_U8)
        return p->force.scheme == 0 && flat_u8(im) ? S_FLAT : S_NARROW;
    if (raw16(im.type) || p->force.scheme == 2)
        return S_WIDE;
    unsigned long long e = (unsigned long long)p->b.bins + 3;
    if (e * (unsigned long long)im.channels * 4 > kNarrowSmemMax)
        return S_WIDE;
    return S_NARROW;
}

int copies_log2_for(unsigned entries, long long channels)
{
    size_t one = (size_t)entries * (size_t)channels * 4;
    int l = 0;
    while (l < 5 && (one << (l + 1)) <= kNarrowSmemPref)
        l++;
    return l;
}

unsigned wide_entries(const psi_ch_plan *p)
{
    return raw16(p->img.type) ? 65536u : (unsigned)p->b.bins;
}

unsigned wide_words4(unsigned entries)
{
    return ((entries + 1) / 2 + 3) / 4;
}

Geo make_geo(const psi_ch_image &im, bool vec, long long per_item_vec, long long per_item_pix)
{
    Geo g;
    size_t es = elem_size(im.type);
    g.data = (const char *)im.data;
    g.channels = (int)im.channels;
    g.width = im.width;
    g.mask = im.mask;
    g.mask_row = im.mask_row;
    g.mask_slice = im.depth > 1 ? im.mask_slice : 0;
    g.row_stride = im.row_stride;
    g.slice_stride = im.depth > 1 ? im.slice_stride : 0;
    g.height = im.height;
    g.rows = im.height * im.depth;
    g.n = im.width * im.channels;
    if (vec && contiguous(im)) {
        g.n = all_samples(im); /* one long row */
        g.rows = 1;
        g.height = 1;
        g.slice_stride = 0;
    }
    if (vec) {
        long long e = 16 / (long long)es;
        long long vecs = (g.n + e - 1) / e;
        g.chunks = (vecs + per_item_vec - 1) / per_item_vec;
    } else {
        g.chunks = (g.width + per_item_pix - 1) / per_item_pix;
    }
    g.items = g.rows * g.chunks;
    return g;
}

Bins make_bins(const psi_ch_bins &b)
{
    return b;
}

/* Grid: `resident` blocks, raised so that no block takes more than
 * max_items items, capped at the item count. */
cudaError_t grid_for(long long items, long long resident, long long max_items, unsigned *grid)
{
    long long g = resident;
    long long need = (items + max_items - 1) / max_items;
    if (g < need)
        g = need;
    if (g > items)
        g = items;
    if (g > 0x7FFFFFFFLL)
        return cudaErrorInvalidConfiguration;
    *grid = (unsigned)g;
    return cudaSuccess;
}

/* Sets *pdl: whether this plan's flat and wide kernels are launched with
 * programmatic dependent launch (the device's architecture policy, unless
 * the plan forces it off). Those kernels call psi_pdl_wait() before their
 * first global access. Returns the error of the device query, if any. */
cudaError_t pdl_for(const psi_ch_plan *p, bool *pdl)
{
    psi_device_caps caps;
    cudaError_t e = psi_current_device_caps(&caps);
    *pdl = e == cudaSuccess && caps.policy->pdl && !p->force.no_pdl;
    return e;
}

/* The flat kernel's grid for `groups` groups dealt grid-strided to at most
 * `grid` blocks: the fewest blocks that still need no more rounds, so that
 * every block counts the same number of groups, give or take the partial
 * last one. With one block per resident slot, 16384^2 u8 is 4096 groups for
 * 132 blocks: 128 blocks count 31 and 4 count a 32nd alone at the end, with
 * DRAM mostly idle; 128 blocks count 32 each in the same rounds. */
static unsigned balanced_grid(long long groups, unsigned grid)
{
    const long long rounds = (groups + grid - 1) / grid;
    return (unsigned)((groups + rounds - 1) / rounds);
}

cudaError_t launch_flat(const psi_ch_plan *p)
{
    const psi_ch_image &im = p->img;
    const long long bytes = all_samples(im); /* u8, one channel */
    long long nvec = bytes / 16;
    int ntail = (int)(bytes - nvec * 16);
    size_t smem = (size_t)256 * kFlatCopies * 4;
    int per_sm = 1;
    cudaError_t e = kernel_ready((const void *)flat_u8_kernel, kFlatThreads, smem, &per_sm);
    if (e != cudaSuccess)
        return e;
    /* At most 2^14 groups of kFlatThreads x kFlatVec vectors per block: fewer
     * than 2^30 + 16 samples, so no u32 counter wraps. */
    const long long group = (long long)kFlatThreads * kFlatVec;
    long long groups = (nvec + group - 1) / group;
    if (groups < 1)
        groups = 1;
    unsigned grid;
    if ((e = grid_for(groups, (long long)per_sm * p->sm_count, 1LL << 14, &grid)) !=
        cudaSuccess)
        return e;
    grid = balanced_grid(groups, grid);
    unsigned *sync = (unsigned *)((char *)p->ws + kFlatSyncOff);
    bool pdl;
    if ((e = pdl_for(p, &pdl)) != cudaSuccess)
        return e;
    return psi_launch(pdl, flat_u8_kernel, dim3(grid), dim3(kFlatThreads), smem,
                      (cudaStream_t)p->stream, (const uint4 *)im.data, nvec, ntail,
                      make_bins(p->b), p->counts, p->totals, sync, pdl);
}

template <typename T, bool RAW> cudaError_t launch_narrow(const psi_ch_plan *p)
{
    unsigned entries = narrow_entries(p);
    bool vec = vec_ok(p->img);
    Geo g = make_geo(p->img, vec, (long long)kNarrowThreads * kNarrowVec,
                     (long long)kNarrowThreads * kNarrowPix);
    if (g.items == 0)
        return cudaSuccess;
    int cl = copies_log2_for(entries, p->img.channels);
    size_t smem = (size_t)entries * (size_t)p->img.channels * ((size_t)1 << cl) * 4;
    auto kern = narrow_kernel<T, RAW>;
    int per_sm = 1;
    cudaError_t e = kernel_ready((const void *)kern, kNarrowThreads, smem, &per_sm);
    if (e != cudaSuccess)
        return e;
    /* Fewer than 2^31 samples per block, so the u32 counters never wrap. */
    long long item_samples = vec ? (long long)kNarrowThreads * kNarrowVec * (16 / (long long)sizeof(T))
                                 : (long long)kNarrowThreads * kNarrowPix * p->img.channels;
    unsigned grid;
    if ((e = grid_for(g.items, (long long)per_sm * p->sm_count,
                      ((long long)1 << 30) / item_samples, &grid)) != cudaSuccess)
        return e;
    kern<<<grid, kNarrowThreads, smem, (cudaStream_t)p->stream>>>(
        g, make_bins(p->b), vec ? 1 : 0, entries, cl, p->counts, p->totals);
    return cudaGetLastError();
}

struct WideLayout {
    unsigned *lut;
    unsigned long long *spill;
    unsigned *partials;
    size_t bytes;
};

WideLayout wide_layout(const psi_ch_plan *p, unsigned entries)
{
    WideLayout w;
    char *base = (char *)p->ws;
    size_t off = kWideOff;
    w.lut = (unsigned *)(base + off);
    off += 65536 * 4;
    w.spill = (unsigned long long *)(base + off);
    off += (size_t)65536 * 8;
    w.partials = (unsigned *)(base + off);
    off += (size_t)p->sm_count * wide_words4(entries) * 16;
    w.bytes = off;
    return w;
}

/* The bin of raw index i is i ^ direct for every i (u16 or i16 with the
 * default 65536 unit bins), or the index is the bin (non-raw): the reduce
 * writes every count. -1: raw values fold through the lookup table. */
int direct_of(const psi_ch_plan *p)
{
    if (!raw16(p->img.type))
        return 0;
    double lo = p->img.type == PSI_CH_U16 ? 0.0 : -32768.0;
    if (p->b.bins == 65536 && p->b.lo == lo && p->b.hi == lo + 65536.0 && p->b.step == 1.0)
        return p->img.type == PSI_CH_U16 ? 0 : 0x8000;
    return -1;
}

/* The count and reduce kernels of channel pass_ch, launched with PDL when
 * `pdl` (pdl_for(), asked once by launch_wide). */
template <typename T, bool RAW>
cudaError_t launch_wide_pass(const psi_ch_plan *p, const WideLayout &w, unsigned entries,
                             int pass_ch, bool pdl)
{
    cudaStream_t s = (cudaStream_t)p->stream;
    bool vec = vec_ok(p->img);
    constexpr long long E = 16 / sizeof(T);
    constexpr long long VPT = kWideSamples / E > 0 ? kWideSamples / E : 1;
    Geo g = make_geo(p->img, vec, (long long)kWideThreads * VPT,
                     (long long)kWideThreads * kWidePix);
    unsigned words4 = wide_words4(entries);
    size_t smem = (size_t)words4 * 16;
    auto kern = wide_kernel<T, RAW>;
    cudaError_t e = kernel_ready((const void *)kern, kWideThreads, smem, nullptr);
    if (e != cudaSuccess)
        return e;
    long long grid = g.items < p->sm_count ? g.items : p->sm_count;
    if (grid == 0)
        return cudaSuccess;
    e = psi_launch(pdl, kern, dim3((unsigned)grid), dim3(kWideThreads), smem, s, g,
                   make_bins(p->b), vec ? 1 : 0, pass_ch, words4, w.partials, w.spill,
                   p->totals);
    if (e != cudaSuccess)
        return e;
    unsigned words = words4 * 4;
    return psi_launch(pdl, wide_reduce, dim3((words + kReduceWords - 1) / kReduceWords),
                      dim3(256), 0, s, (const unsigned *)w.partials, (int)grid, words, w.spill,
                      entries, (const unsigned *)(RAW ? w.lut : nullptr), direct_of(p),
                      make_bins(p->b), pass_ch, p->counts, p->totals,
                      (unsigned *)((char *)p->ws + kTicketOff));
}

/* Launches: the lookup table (raw; it zeroes the totals) or a totals memset,
 * a counts memset unless every count is written, then per channel the count
 * and reduce kernels. The spill table is zero on entry and left zeroed. */
template <typename T, bool RAW> cudaError_t launch_wide(const psi_ch_plan *p)
{
    unsigned entries = wide_entries(p);
    WideLayout w = wide_layout(p, entries);
    if (p->ws_bytes < w.bytes)
        return cudaErrorInvalidValue;
    cudaStream_t s = (cudaStream_t)p->stream;
    bool pdl;
    cudaError_t e = pdl_for(p, &pdl);
    if (e != cudaSuccess)
        return e;
    if (RAW) {
        e = psi_launch(pdl, raw16_lut, dim3(256), dim3(256), 0, s, w.lut, make_bins(p->b),
                       p->img.type == PSI_CH_I16 ? 1 : 0, p->totals);
    } else {
        e = cudaMemsetAsync(p->totals, 0, PSI_CH_T_COUNT * 8, s);
    }
    if (e == cudaSuccess && direct_of(p) < 0)
        e = cudaMemsetAsync(p->counts, 0, (size_t)p->img.channels * (size_t)p->b.bins * 8, s);
    if (e != cudaSuccess)
        return e;
    for (int c = 0; c < (int)p->img.channels; c++) {
        e = launch_wide_pass<T, RAW>(p, w, entries, c, pdl);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

/* Zeroes the counts and totals of p on its stream (before the atomics of the
 * narrow kernel). */
cudaError_t zero_outputs(const psi_ch_plan *p)
{
    cudaStream_t s = (cudaStream_t)p->stream;
    cudaError_t e =
        cudaMemsetAsync(p->counts, 0, (size_t)p->img.channels * (size_t)p->b.bins * 8, s);
    return e == cudaSuccess ? cudaMemsetAsync(p->totals, 0, PSI_CH_T_COUNT * 8, s) : e;
}

template <typename T> cudaError_t launch_typed(const psi_ch_plan *p)
{
    if constexpr (sizeof(T) == 1) {
        if (scheme_of(p) == S_FLAT) {
            cudaError_t e = launch_flat(p);
            if (e != cudaErrorInvalidConfiguration)
                return e;
            /* Flat does not fit this device: narrow, whose outputs the flat
             * kernel would have preset. */
            if ((e = zero_outputs(p)) != cudaSuccess)
                return e;
        }
        return launch_narrow<T, true>(p);
    } else {
        if (scheme_of(p) == S_NARROW)
            return launch_narrow<T, false>(p);
        return launch_wide<T, sizeof(T) == 2>(p);
    }
}

} // namespace

extern "C" size_t psi_ch_workspace_bytes(const psi_ch_plan *p)
{
    if (scheme_of(p) != S_WIDE)
        return kWideOff;
    return wide_layout(p, wide_entries(p)).bytes;
}

extern "C" int psi_ch_launch(const psi_ch_plan *p)
{
    cudaError_t e = cudaSuccess;
    bool empty = p->img.width <= 0 || p->img.height <= 0 || p->img.depth <= 0;
    /* Narrow (and empty images): zeroed outputs, then the kernel's atomics.
     * Flat presets its outputs and wide writes them itself. */
    if (empty || scheme_of(p) == S_NARROW) {
        e = zero_outputs(p);
        if (e != cudaSuccess)
            return (int)e;
    }
    if (!empty) {
        switch (p->img.type) {
        case PSI_CH_U8: e = launch_typed<uint8_t>(p); break;
        case PSI_CH_U16: e = launch_typed<uint16_t>(p); break;
        case PSI_CH_I16: e = launch_typed<int16_t>(p); break;
        case PSI_CH_I32: e = launch_typed<int32_t>(p); break;
        case PSI_CH_F32: e = launch_typed<float>(p); break;
        case PSI_CH_F64: e = launch_typed<double>(p); break;
        }
        if (e != cudaSuccess)
            return (int)e;
    }
    return 0;
}

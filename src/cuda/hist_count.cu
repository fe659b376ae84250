/*
 * hist_count.cu - the counting kernels of the CUDA histograms and their
 * launcher psi_ch_launch() (the schemes are described in cuda_hist.h).
 *
 * Both schemes read the image in "items": a chunk of one row (rows of
 * width x channels samples; a contiguous image is one long row). The vector
 * path loads 16 bytes per thread and load (rows 16-byte aligned, no mask); the
 * pixel path loads one sample at a time (masks, odd alignment).
 *
 * narrow  C x entries x copies u32 counters in shared memory; lane l of a
 *         warp adds into copy l % copies, and copy j of entry e lies in bank
 *         (e * copies + j) % 32, so 32 lanes never collide (copies = 32)
 *         whatever the image holds: a constant image costs what noise costs.
 *         Each block counts fewer than 2^31 samples, so a u32 never wraps; at
 *         the end the copies are added in u64 and folded into the caller's
 *         u64 counts (raw u8 values go through the bin formula then).
 * wide    one channel per launch; 16-bit counters, two per word, for up to
 *         65536 indices (raw u16/i16 values, or bins). A block counts in
 *         rounds of at most 2^15 - 1 samples. Every counter is below 2^15 when
 *         a round starts; the add that takes a counter to 2^15 or more marks
 *         its word in a bitmap, and after the round's barrier the marked
 *         counters give 2^15 to a u64 spill table. A counter therefore stays
 *         below 2^15 + 2^15 - 1 and never wraps. Each thread merges runs of
 *         equal indices before adding (or, in the "match" mode, the lanes of a
 *         warp that hold the same index add once).
 *
 * The bin formula is evaluated with __dsub_rn / __dmul_rn (no contraction
 * into an FMA) and truncation, as on the CPU, so every class is the CPU's.
 */
#include "cuda_hist.h"

#include <cuda_runtime.h>
#include <stdint.h>

namespace {

constexpr int kNarrowThreads = 512;
constexpr int kNarrowVec = 4;      /* 16-byte loads per thread per item */
constexpr int kNarrowPix = 8;      /* pixels per thread per item (pixel path) */
constexpr int kWideThreads = 1024;
constexpr int kWideSamples = 24;   /* samples per thread per round: 1024 x 24 < 2^15 */
constexpr int kWidePix = 16;       /* pixels per thread per round (pixel path) */
constexpr size_t kNarrowSmemMax = 96u << 10;
constexpr size_t kNarrowSmemPref = 64u << 10;
constexpr size_t kTotalsBytes = 256; /* workspace head: scratch totals */

struct Bins {
    double lo, hi, scale;
    unsigned bins;
};

/* The class of v (hist.h): bin, or bins + 0 below, + 1 above, + 2 NaN. */
__device__ __forceinline__ unsigned classify(double v, const Bins &b)
{
    if (v != v)
        return b.bins + 2;
    if (v < b.lo)
        return b.bins;
    if (v >= b.hi)
        return b.bins + 1;
    double f = __dmul_rn(__dsub_rn(v, b.lo), b.scale);
    unsigned long long i = __double2ull_rz(f);
    return i < b.bins ? (unsigned)i : b.bins - 1;
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

/* Calls f(channel, value) for this thread's samples of item `item`, vector
 * path: VPT 16-byte vectors spaced blockDim apart. Out-of-row vectors are
 * skipped; the row's last partial vector is read sample by sample. */
template <typename T, int VPT, typename F>
__device__ __forceinline__ void vec_item(const Geo &g, long long item, F &&f)
{
    constexpr int E = 16 / sizeof(T);
    long long r = item / g.chunks, ck = item - r * g.chunks;
    const char *row = row_at(g.data, r, g.height, g.row_stride, g.slice_stride);
    long long nfull = g.n / E;
    long long v0 = ck * (long long)blockDim.x * VPT + threadIdx.x;
    Vec<T> buf[VPT];
#pragma unroll
    for (int j = 0; j < VPT; j++) {
        long long v = v0 + (long long)j * blockDim.x;
        if (v < nfull)
            buf[j].raw = __ldcs((const uint4 *)row + v);
    }
#pragma unroll
    for (int j = 0; j < VPT; j++) {
        long long v = v0 + (long long)j * blockDim.x;
        if (v < nfull) {
            if (g.channels == 1) {
#pragma unroll
                for (int k = 0; k < E; k++)
                    f(0, buf[j].e[k]);
            } else {
                int ch = (int)((v * E) % g.channels);
#pragma unroll
                for (int k = 0; k < E; k++) {
                    f(ch, buf[j].e[k]);
                    ch = ch + 1 == g.channels ? 0 : ch + 1;
                }
            }
        } else if (v == nfull) {
            const T *t = (const T *)row;
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

/* ---- narrow -------------------------------------------------------------------- */

template <typename T, bool RAW>
__global__ void __launch_bounds__(kNarrowThreads)
    narrow_kernel(Geo g, Bins b, int vec, unsigned entries, int copies_log2,
                  unsigned long long *counts, unsigned long long *totals)
{
    extern __shared__ unsigned tab[];
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
        for (long long item = blockIdx.x; item < g.items; item += gridDim.x)
            vec_item<T, kNarrowVec>(g, item, count);
    } else {
        for (long long item = blockIdx.x; item < g.items; item += gridDim.x)
            pix_item<T, kNarrowPix>(g, item, count);
    }
    __syncthreads();
    for (unsigned e = threadIdx.x; e < cells; e += blockDim.x) {
        unsigned long long s = 0;
        const unsigned *c = tab + ((size_t)e << copies_log2);
        for (unsigned j = 0; j < copies; j++)
            s += c[(j + e) & (copies - 1)]; /* rotated start: no bank conflicts */
        if (s) {
            unsigned ch = e / entries, idx = e - ch * entries;
            unsigned cls = RAW ? classify((double)idx, b) : idx;
            add_class(counts, totals, b, (int)ch, cls, s);
        }
    }
}

/* ---- wide ---------------------------------------------------------------------- */

/* Adds k to 16-bit counter idx; marks its word when the counter reaches 2^15. */
__device__ __forceinline__ void wide_put(unsigned *tab, unsigned *hot, unsigned idx, unsigned k)
{
    unsigned w = idx >> 1, sh = (idx & 1u) << 4;
    unsigned old = atomicAdd(&tab[w], k << sh);
    unsigned h = (old >> sh) & 0xFFFFu;
    if (h < 0x8000u && h + k >= 0x8000u)
        atomicOr(&hot[w >> 5], 1u << (w & 31));
}

template <typename T, bool RAW, int MATCH>
__global__ void __launch_bounds__(kWideThreads, 1)
    wide_kernel(Geo g, Bins b, int vec, int pass_ch, unsigned words, unsigned *partials,
                unsigned long long *spill, unsigned long long *totals)
{
    extern __shared__ unsigned tab[];
    constexpr int E = 16 / sizeof(T);
    constexpr int VPT = kWideSamples / E;
    const unsigned hot_words = (words + 31) / 32;
    unsigned *hot = tab + words;
    for (unsigned i = threadIdx.x; i < words + hot_words; i += blockDim.x)
        tab[i] = 0;
    __syncthreads();
    unsigned long long n_below = 0, n_above = 0, n_nan = 0;
    unsigned cur = 0xFFFFFFFFu, run = 0;
    const unsigned none = 0xFFFFFFFFu;
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
    auto count_run = [&](int ch, T v) {
        if (ch != pass_ch)
            return;
        unsigned idx = index_of(v);
        if (idx == none)
            return;
        if (idx == cur) {
            run++;
        } else {
            if (run)
                wide_put(tab, hot, cur, run);
            cur = idx;
            run = 1;
        }
    };
    for (long long item = blockIdx.x; item < g.items; item += gridDim.x) {
        if (MATCH && vec && g.channels == 1) {
            /* Lanes stay converged: every lane walks the same E x VPT steps. */
            long long r = item / g.chunks, ck = item - r * g.chunks;
            const char *row = row_at(g.data, r, g.height, g.row_stride, g.slice_stride);
            long long nfull = g.n / E;
            long long v0 = ck * (long long)blockDim.x * VPT + threadIdx.x;
            Vec<T> buf[VPT];
#pragma unroll
            for (int j = 0; j < VPT; j++) {
                long long v = v0 + (long long)j * blockDim.x;
                if (v < nfull)
                    buf[j].raw = __ldcs((const uint4 *)row + v);
            }
            const unsigned lane = threadIdx.x & 31;
#pragma unroll
            for (int j = 0; j < VPT; j++) {
                long long v = v0 + (long long)j * blockDim.x;
                bool in = v < nfull;
#pragma unroll
                for (int k = 0; k < E; k++) {
                    unsigned idx = in ? index_of(buf[j].e[k]) : none;
                    unsigned peers = __match_any_sync(0xFFFFFFFFu, idx);
                    if (idx != none && lane == (unsigned)(__ffs(peers) - 1))
                        wide_put(tab, hot, idx, (unsigned)__popc(peers));
                }
                if (v == nfull) {
                    const T *t = (const T *)row;
                    for (long long i = nfull * E; i < g.n; i++) {
                        unsigned idx = index_of(t[i]);
                        if (idx != none)
                            wide_put(tab, hot, idx, 1);
                    }
                }
            }
        } else if (vec) {
            vec_item<T, VPT>(g, item, count_run);
        } else {
            pix_item<T, kWidePix>(g, item, count_run);
        }
        if (run) {
            wide_put(tab, hot, cur, run);
            run = 0;
            cur = none;
        }
        __syncthreads();
        for (unsigned hw = threadIdx.x; hw < hot_words; hw += blockDim.x) {
            unsigned bits = hot[hw];
            if (!bits)
                continue;
            hot[hw] = 0;
            while (bits) {
                unsigned w = hw * 32 + (unsigned)(__ffs(bits) - 1);
                bits &= bits - 1;
                unsigned val = tab[w];
                for (unsigned h = 0; h < 2; h++) {
                    if (((val >> (16 * h)) & 0xFFFFu) >= 0x8000u) {
                        val -= 0x8000u << (16 * h);
                        atomicAdd(&spill[2 * w + h], 0x8000ull);
                    }
                }
                tab[w] = val;
            }
        }
        __syncthreads();
    }
    unsigned *mine = partials + (size_t)blockIdx.x * words;
    for (unsigned w = threadIdx.x; w < words; w += blockDim.x)
        mine[w] = tab[w];
    if (!RAW) {
        for (int o = 16; o; o >>= 1) {
            n_below += __shfl_down_sync(0xFFFFFFFFu, n_below, o);
            n_above += __shfl_down_sync(0xFFFFFFFFu, n_above, o);
            n_nan += __shfl_down_sync(0xFFFFFFFFu, n_nan, o);
        }
        if ((threadIdx.x & 31) == 0) {
            if (n_below)
                atomicAdd(&totals[PSI_CH_T_BELOW + pass_ch], n_below);
            if (n_above)
                atomicAdd(&totals[PSI_CH_T_ABOVE + pass_ch], n_above);
            if (n_nan)
                atomicAdd(&totals[PSI_CH_T_NAN + pass_ch], n_nan);
        }
    }
}

/* Adds the blocks' 16-bit tables and the spill of one pass, folds raw values
 * through lut (NULL: the index is the bin), into counts / totals. */
__global__ void wide_reduce(const unsigned *partials, int nblocks, unsigned words,
                            const unsigned long long *spill, unsigned entries,
                            const unsigned *lut, Bins b, int pass_ch,
                            unsigned long long *counts, unsigned long long *totals)
{
    unsigned w = blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= words)
        return;
    unsigned long long lo = 0, hi = 0;
    int i = 0;
    for (; i + 4 <= nblocks; i += 4) {
        unsigned x0 = partials[(size_t)i * words + w];
        unsigned x1 = partials[(size_t)(i + 1) * words + w];
        unsigned x2 = partials[(size_t)(i + 2) * words + w];
        unsigned x3 = partials[(size_t)(i + 3) * words + w];
        lo += (x0 & 0xFFFFu) + (x1 & 0xFFFFu) + (x2 & 0xFFFFu) + (x3 & 0xFFFFu);
        hi += (x0 >> 16) + (x1 >> 16) + (x2 >> 16) + (x3 >> 16);
    }
    for (; i < nblocks; i++) {
        unsigned x = partials[(size_t)i * words + w];
        lo += x & 0xFFFFu;
        hi += x >> 16;
    }
    for (unsigned h = 0; h < 2; h++) {
        unsigned idx = 2 * w + h;
        if (idx >= entries)
            break;
        unsigned long long s = (h ? hi : lo) + spill[idx];
        if (s)
            add_class(counts, totals, b, pass_ch, lut ? lut[idx] : idx, s);
    }
}

/* lut[r] = class of the 16-bit raw value r (u16, or i16 when is_signed). */
__global__ void raw16_lut(unsigned *lut, Bins b, int is_signed)
{
    unsigned r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < 65536u) {
        double v = is_signed ? (double)(int16_t)(uint16_t)r : (double)r;
        lut[r] = classify(v, b);
    }
}

/* totals: in_range[c] = sum of channel c's bins; pixels from channel 0. One
 * block per channel. */
__global__ void totals_finish(const unsigned long long *counts, unsigned long long bins,
                              unsigned long long *totals)
{
    __shared__ unsigned long long part[32];
    int c = blockIdx.x;
    unsigned long long s = 0;
    for (unsigned long long i = threadIdx.x; i < bins; i += blockDim.x)
        s += counts[c * bins + i];
    for (int o = 16; o; o >>= 1)
        s += __shfl_down_sync(0xFFFFFFFFu, s, o);
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long t = 0;
        for (unsigned k = 0; k < (blockDim.x + 31) / 32; k++)
            t += part[k];
        totals[PSI_CH_T_IN_RANGE + c] = t;
        if (c == 0)
            totals[PSI_CH_T_PIXELS] = t + totals[PSI_CH_T_BELOW] + totals[PSI_CH_T_ABOVE] +
                                      totals[PSI_CH_T_NAN];
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

/* Entries per channel a narrow table needs, 0 if the type goes wide. */
unsigned narrow_entries(const psi_ch_plan *p)
{
    if (p->tuning.scheme == 2 && p->img.type != PSI_CH_U8)
        return 0;
    if (p->img.type == PSI_CH_U8)
        return 256;
    if (raw16(p->img.type))
        return 0;
    unsigned long long e = (unsigned long long)p->b.bins + 3;
    if (p->tuning.scheme != 1 && e * p->img.channels * 4 > kNarrowSmemMax)
        return 0;
    if (e * p->img.channels * 4 > kNarrowSmemMax)
        return 0;
    return (unsigned)e;
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

bool vec_ok(const psi_ch_image &im)
{
    if (im.mask || (uintptr_t)im.data % 16)
        return false;
    size_t es = elem_size(im.type);
    long long row_bytes = im.width * im.channels * (long long)es;
    bool flat = im.row_stride == row_bytes &&
                (im.depth <= 1 || im.slice_stride == im.height * im.row_stride);
    if (flat)
        return true;
    return im.row_stride % 16 == 0 && (im.depth <= 1 || im.slice_stride % 16 == 0);
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
    g.mask_slice = im.mask_slice;
    g.row_stride = im.row_stride;
    g.slice_stride = im.depth > 1 ? im.slice_stride : 0;
    g.height = im.height;
    g.rows = im.height * im.depth;
    g.n = im.width * im.channels;
    long long row_bytes = g.n * (long long)es;
    if (vec && im.row_stride == row_bytes &&
        (im.depth <= 1 || im.slice_stride == im.height * im.row_stride)) {
        g.n *= g.rows; /* one long row */
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
    Bins r;
    r.lo = b.lo;
    r.hi = b.hi;
    r.scale = b.scale;
    r.bins = (unsigned)b.bins;
    return r;
}

template <typename T, bool RAW>
cudaError_t launch_narrow(const psi_ch_plan *p, unsigned entries)
{
    cudaStream_t s = (cudaStream_t)p->stream;
    bool vec = vec_ok(p->img);
    Geo g = make_geo(p->img, vec, (long long)kNarrowThreads * kNarrowVec,
                     (long long)kNarrowThreads * kNarrowPix);
    if (g.items == 0)
        return cudaSuccess;
    int cl = copies_log2_for(entries, p->img.channels);
    size_t smem = (size_t)entries * (size_t)p->img.channels * ((size_t)1 << cl) * 4;
    auto kern = narrow_kernel<T, RAW>;
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)kNarrowSmemMax);
    if (e != cudaSuccess)
        return e;
    int per_sm = 0;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, kNarrowThreads, smem);
    if (e != cudaSuccess)
        return e;
    long long grid = (long long)(per_sm > 0 ? per_sm : 1) * p->sm_count;
    /* Fewer than 2^31 samples per block, so the u32 counters never wrap. */
    long long item_samples = vec ? (long long)kNarrowThreads * kNarrowVec * (16 / (long long)sizeof(T))
                                 : (long long)kNarrowThreads * kNarrowPix * p->img.channels;
    long long per_block_items = ((long long)1 << 30) / item_samples;
    long long need = (g.items + per_block_items - 1) / per_block_items;
    if (grid < need)
        grid = need;
    if (grid > g.items)
        grid = g.items;
    if (grid > 0x7FFFFFFFLL)
        return cudaErrorInvalidConfiguration;
    kern<<<(unsigned)grid, kNarrowThreads, smem, s>>>(g, make_bins(p->b), vec ? 1 : 0, entries,
                                                       cl, p->counts, p->totals);
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
    size_t off = kTotalsBytes;
    w.lut = (unsigned *)(base + off);
    off += 65536 * 4;
    w.spill = (unsigned long long *)(base + off);
    off += (size_t)65536 * 8;
    w.partials = (unsigned *)(base + off);
    off += (size_t)p->sm_count * ((entries + 1) / 2) * 4;
    w.bytes = off;
    return w;
}

template <typename T, bool RAW, int MATCH>
cudaError_t launch_wide_pass(const psi_ch_plan *p, const WideLayout &w, unsigned entries,
                             int pass_ch)
{
    cudaStream_t s = (cudaStream_t)p->stream;
    bool vec = vec_ok(p->img);
    constexpr long long E = 16 / sizeof(T);
    Geo g = make_geo(p->img, vec, (long long)kWideThreads * (kWideSamples / E),
                     (long long)kWideThreads * kWidePix);
    unsigned words = (entries + 1) / 2;
    size_t smem = ((size_t)words + (words + 31) / 32) * 4;
    auto kern = wide_kernel<T, RAW, MATCH>;
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)smem);
    if (e != cudaSuccess)
        return e;
    if ((e = cudaMemsetAsync(w.spill, 0, (size_t)entries * 8, s)) != cudaSuccess)
        return e;
    long long grid = g.items < p->sm_count ? g.items : p->sm_count;
    if (grid == 0)
        return cudaSuccess;
    kern<<<(unsigned)grid, kWideThreads, smem, s>>>(g, make_bins(p->b), vec ? 1 : 0, pass_ch,
                                                     words, w.partials, w.spill, p->totals);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    wide_reduce<<<(words + 255) / 256, 256, 0, s>>>(w.partials, (int)grid, words, w.spill, entries,
                                                    RAW ? w.lut : nullptr, make_bins(p->b),
                                                    pass_ch, p->counts, p->totals);
    return cudaGetLastError();
}

template <typename T, bool RAW>
cudaError_t launch_wide(const psi_ch_plan *p)
{
    unsigned entries = wide_entries(p);
    WideLayout w = wide_layout(p, entries);
    if (p->ws_bytes < w.bytes)
        return cudaErrorInvalidValue;
    cudaStream_t s = (cudaStream_t)p->stream;
    if (RAW) {
        raw16_lut<<<256, 256, 0, s>>>(w.lut, make_bins(p->b), p->img.type == PSI_CH_I16);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            return e;
    }
    for (int c = 0; c < (int)p->img.channels; c++) {
        cudaError_t e = p->tuning.runs == 2 ? launch_wide_pass<T, RAW, 1>(p, w, entries, c)
                                            : launch_wide_pass<T, RAW, 0>(p, w, entries, c);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

template <typename T> cudaError_t launch_typed(const psi_ch_plan *p)
{
    unsigned entries = narrow_entries(p);
    constexpr bool raw = sizeof(T) <= 2;
    if (entries)
        return launch_narrow<T, raw && sizeof(T) == 1>(p, entries);
    return launch_wide<T, raw && sizeof(T) == 2>(p);
}

} // namespace

extern "C" size_t psi_ch_workspace_bytes(const psi_ch_plan *p)
{
    if (narrow_entries(p))
        return kTotalsBytes;
    return wide_layout(p, wide_entries(p)).bytes;
}

extern "C" int psi_ch_launch(const psi_ch_plan *p)
{
    cudaStream_t s = (cudaStream_t)p->stream;
    cudaError_t e = cudaMemsetAsync(p->counts, 0,
                                    (size_t)p->img.channels * (size_t)p->b.bins * 8, s);
    if (e == cudaSuccess)
        e = cudaMemsetAsync(p->totals, 0, PSI_CH_T_COUNT * 8, s);
    if (e != cudaSuccess)
        return (int)e;
    if (p->img.width > 0 && p->img.height > 0 && p->img.depth > 0) {
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
    totals_finish<<<(unsigned)p->img.channels, 256, 0, s>>>(p->counts,
                                                           (unsigned long long)p->b.bins,
                                                           p->totals);
    return (int)cudaGetLastError();
}

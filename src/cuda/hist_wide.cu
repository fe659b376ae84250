/*
 * hist_wide.cu - the wide counting scheme of the CUDA histograms: u16/i16 raw
 * values, and the other types with more bins than the narrow scheme holds.
 * One channel per pass; 16-bit counters, two per word, for up to 65536
 * indices; every 49152 samples per block the counters of 2^14 or more move to
 * a u64 spill table, so none wraps; each thread merges runs of equal indices
 * before adding; a reduce kernel adds the blocks' tables and folds raw values
 * into bins, through a lookup table of the 65536 raw values' classes
 * (raw16_lut) unless each raw value is its own bin. Launched by
 * psi_ch_launch() (hist_count.cu) through launch_wide().
 */
#include "hist_count.cuh"

namespace psi_hist {
namespace {

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

unsigned wide_words4(unsigned entries)
{
    return ((entries + 1) / 2 + 3) / 4;
}

} // namespace

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

namespace {

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

} // namespace

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

/* The instantiations that launch_typed() (hist_count.cu) calls. */
template cudaError_t launch_wide<uint16_t, true>(const psi_ch_plan *p);
template cudaError_t launch_wide<int16_t, true>(const psi_ch_plan *p);
template cudaError_t launch_wide<int32_t, false>(const psi_ch_plan *p);
template cudaError_t launch_wide<float, false>(const psi_ch_plan *p);
template cudaError_t launch_wide<double, false>(const psi_ch_plan *p);

} // namespace psi_hist

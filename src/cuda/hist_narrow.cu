/*
 * hist_narrow.cu - the narrow counting scheme of the CUDA histograms: u8
 * images the flat scheme cannot take, and i32/f32/f64 images whose
 * channels x (bins + 3) u32 counters fit 96 KiB. One u32 table per block in
 * shared memory, replicated so that lane l adds into copy l; u8 counts raw
 * values, the other types classes; fewer than 2^31 samples per block, so no
 * counter wraps. The outputs are zeroed first (psi_ch_launch(), hist_count.cu)
 * and each block adds its table with finish_block().
 */
#include "hist_count.cuh"

namespace psi_hist {
namespace {

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

/* Entries per channel of a narrow table (u8: raw values; else classes). */
unsigned narrow_entries(const psi_ch_plan *p)
{
    if (p->img.type == PSI_CH_U8)
        return 256;
    return (unsigned)p->b.bins + 3;
}

int copies_log2_for(unsigned entries, long long channels)
{
    size_t one = (size_t)entries * (size_t)channels * 4;
    int l = 0;
    while (l < 5 && (one << (l + 1)) <= kNarrowSmemPref)
        l++;
    return l;
}

} // namespace

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

/* The instantiations that launch_typed() (hist_count.cu) calls. */
template cudaError_t launch_narrow<uint8_t, true>(const psi_ch_plan *p);
template cudaError_t launch_narrow<uint16_t, false>(const psi_ch_plan *p);
template cudaError_t launch_narrow<int16_t, false>(const psi_ch_plan *p);
template cudaError_t launch_narrow<int32_t, false>(const psi_ch_plan *p);
template cudaError_t launch_narrow<float, false>(const psi_ch_plan *p);
template cudaError_t launch_narrow<double, false>(const psi_ch_plan *p);

} // namespace psi_hist

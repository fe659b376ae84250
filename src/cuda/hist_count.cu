/*
 * hist_count.cu - the launcher psi_ch_launch() of the CUDA histograms'
 * counting kernels (the schemes are listed in cuda_hist.h): it picks the
 * scheme of a plan and runs it; each scheme's kernels and launcher are in
 * their own file (hist_flat.cu, hist_narrow.cu, hist_wide.cu), the helpers
 * they share in hist_count.cuh.
 *
 * All kernels read the image in "items": a chunk of one row (rows of
 * width x channels samples; a contiguous image is one long row). The vector
 * path loads 16 bytes per thread and load (rows 16-byte aligned, no mask); the
 * pixel path loads one sample at a time (masks, odd alignment). Counters live
 * in shared memory, laid out so that the lanes of a warp never collide on a
 * bank whatever the image holds, and every block's counts end in the
 * caller's u64 counts by global atomics (one per class and warp: run_total()),
 * so no count wraps.
 *   flat   (hist_flat.cu) u8, one channel, unmasked, contiguous, 16-byte
 *          aligned: 64 copies of 256 u32 counters per block, one block per
 *          SM; the first block presets the outputs (no memset).
 *   narrow (hist_narrow.cu) other u8 images; i32/f32/f64 whose
 *          channels x (bins + 3) u32 fit 96 KiB: a replicated u32 table per
 *          block. Outputs zeroed first.
 *   wide   (hist_wide.cu) u16/i16 raw values; the other types with many
 *          bins: one channel per pass, 16-bit counters with a u64 spill, and a
 *          reduce kernel that adds the blocks' tables and folds raw values
 *          into bins.
 * On sm_90 and newer the flat and wide kernels are launched with programmatic
 * dependent launch (device_caps.cuh): a block clears its table while the
 * stream's previous kernel drains, then waits for it before its first global
 * access. The bin of a value is hist_bins.h's rule, shared with the CPU.
 */
#include "hist_count.cuh"

#include <mutex>

namespace psi_hist {

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

unsigned wide_entries(const psi_ch_plan *p)
{
    return raw16(p->img.type) ? 65536u : (unsigned)p->b.bins;
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

namespace {

/* A u8 image of one channel, unmasked, 16-byte aligned and contiguous (rows
 * and slices back to back): the flat scheme's input. */
bool flat_u8(const psi_ch_image &im)
{
    return im.type == PSI_CH_U8 && im.channels == 1 && !im.mask && (uintptr_t)im.data % 16 == 0 &&
           contiguous(im);
}

enum Scheme { S_FLAT, S_NARROW, S_WIDE };

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
} // namespace psi_hist

using namespace psi_hist;

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

/*
 * hist_flat.cu - the flat counting scheme of the CUDA histograms: a u8 image
 * of one channel, unmasked, contiguous and 16-byte aligned, read as one array
 * of 16-byte vectors, each thread loading its next four while it counts the
 * current four; one block of 1024 threads per SM, only as many blocks as give
 * each the same number of rounds; 64 copies of 256 u32 counters, two
 * instructions per sample (a byte permute gives the counter's address, then a
 * shared atomic), one atomic for a vector of 16 equal bytes. Its first block
 * presets the outputs and raises a flag the others wait for before adding
 * (FlatSync): no memset, no last-block pass. Launched by psi_ch_launch()
 * (hist_count.cu) through launch_flat().
 */
#include "hist_count.cuh"

namespace psi_hist {
namespace {

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

} // namespace

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

} // namespace psi_hist

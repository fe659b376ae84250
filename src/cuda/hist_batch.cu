/*
 * hist_batch.cu - the counting kernel of pixsum_cuda_histogram_batch() for
 * u8 batches (1-4 channels, any bins and range, masks per image or shared):
 * one launch for the whole batch, no memset. The grid is blocks per image
 * (x) by images (y, looped past 65535). Each block counts raw byte values in
 * a table in shared memory, replicated K times so that thread t always adds
 * into copy t % K. With one channel K = 64 and value v's copy c sits at byte
 * v * 256 + 4c, so one byte permute gives a sample's counter and a warp's 32
 * lanes hit 32 different banks whatever the image holds; a 16-byte vector of
 * equal bytes is one atomic of 16. One-channel unmasked images are read with
 * aligned 16-byte loads, eight in flight per thread; the others sample by
 * sample.
 *
 * The image's counts are written by one block: the only one, or, where
 * several share an image, the last to finish. The others add their raw
 * sums into the image's u32 table in the scratch and take a ticket; the
 * block with the last ticket reads the table back and clears it (atomic
 * exchange), resets the ticket, so the scratch is zero again after every
 * launch. The writing block zeroes the image's counts, folds raw values
 * into bins through the class table the host filled with the bin rule of
 * src/hist/hist_bins.h (values of one bin add with atomics) and writes the
 * totals record whole.
 *
 * A contiguous image (rows packed, mask too) is one long row split into
 * equal parts, one per block; a strided one is counted row by row, a warp
 * per row. The host routes images of 2^31 bytes or more elsewhere, so no
 * u32 counter or raw sum wraps.
 */
#include "cuda_hist_batch.h"

#include "../hist/hist_bins.h"

#include <cuda_runtime.h>
#include <stdint.h>

namespace {

constexpr int kThreads = 512;
/* Fields of the totals record (pixels, in_range[4], below[4], above[4],
 * nan[4]; u8 has no NaN) and the ones a block adds up. */
constexpr int kTotRecord = 17;
constexpr int kTotFields = 13;
/* Blocks share an image only when each still counts this many bytes per
 * thread: a block's table costs about as much to clear and read. */
constexpr long long kMinBytesPerThread = 128;

/* Copies of the table per channel count. */
__host__ __device__ constexpr int copies_for(int channels)
{
    return channels == 1 ? 64 : channels == 2 ? 16 : 8;
}

/* One sample of channel c with raw value v into copy `copy`. */
template <int K>
__device__ __forceinline__ void add_sample(unsigned *h, unsigned c, unsigned v, unsigned copy)
{
    atomicAdd(&h[((c << 8) | v) * K + copy], 1u);
}

/* One channel, 64 copies: byte BYTE of word q is value v, whose counter in
 * this thread's copy is at byte offset v * 256 + cbytes (cbytes = 4 x copy):
 * v into byte 1, cbytes into byte 0, zeros above. */
template <unsigned BYTE>
__device__ __forceinline__ unsigned *counter(char *tab, unsigned cbytes, unsigned q)
{
    return (unsigned *)(tab + __byte_perm(q, cbytes, 0x5504u | BYTE << 4));
}

__device__ __forceinline__ void add_word(char *tab, unsigned cbytes, unsigned q)
{
    atomicAdd(counter<0>(tab, cbytes, q), 1u);
    atomicAdd(counter<1>(tab, cbytes, q), 1u);
    atomicAdd(counter<2>(tab, cbytes, q), 1u);
    atomicAdd(counter<3>(tab, cbytes, q), 1u);
}

/* The 16 samples of q: one atomic of 16 when all are equal. */
__device__ __forceinline__ void add_vec(char *tab, unsigned cbytes, const uint4 &q)
{
    const unsigned r = __byte_perm(q.x, 0, 0x0000u);
    if (q.x == r && q.y == r && q.z == r && q.w == r) {
        atomicAdd(counter<0>(tab, cbytes, q.x), 16u);
        return;
    }
    add_word(tab, cbytes, q.x);
    add_word(tab, cbytes, q.y);
    add_word(tab, cbytes, q.z);
    add_word(tab, cbytes, q.w);
}

__device__ __forceinline__ void add_byte(char *tab, unsigned cbytes, unsigned v)
{
    atomicAdd((unsigned *)(tab + (v << 8) + cbytes), 1u);
}

/* Bytes [0, n) at p, one channel, no mask: thread i of `step` takes the
 * bytes before the first 16-byte boundary, then 16-byte vectors i, i + step,
 * ... in groups of kVec whose loads are all issued before their counts (a
 * block's part is mostly one or two groups, so each is one round trip to
 * memory), then the tail. */
constexpr int kVec = 8;

__device__ void count_vec(char *tab, const unsigned char *p, long long n, long long i,
                          long long step, unsigned cbytes)
{
    long long head = (long long)((16 - ((uintptr_t)p & 15)) & 15);
    if (head > n)
        head = n;
    for (long long x = i; x < head; x += step)
        add_byte(tab, cbytes, p[x]);
    const uint4 *q = reinterpret_cast<const uint4 *>(p + head);
    const long long nv = (n - head) >> 4;
    for (long long k = i; k < nv; k += kVec * step) {
        uint4 v[kVec];
#pragma unroll
        for (int j = 0; j < kVec; j++)
            if (k + j * step < nv)
                v[j] = __ldcs(q + k + j * step);
#pragma unroll
        for (int j = 0; j < kVec; j++)
            if (k + j * step < nv)
                add_vec(tab, cbytes, v[j]);
    }
    for (long long x = head + nv * 16 + i; x < n; x += step)
        add_byte(tab, cbytes, p[x]);
}

/* Bytes [0, n) at p, sample by sample: the byte p[x] sits at offset pos0 + x
 * of its (flattened) row, so its channel is that offset mod C and its pixel,
 * whose mask byte is m[pixel], that offset / C. */
template <int K>
__device__ void count_samples(unsigned *h, const unsigned char *p, long long n, long long pos0,
                              const unsigned char *m, int C, long long i, long long step,
                              unsigned copy)
{
    for (long long x = i; x < n; x += step) {
        const long long pos = pos0 + x, px = pos / C;
        if (m && !m[px])
            continue;
        add_sample<K>(h, (unsigned)(pos - px * C), p[x], copy);
    }
}

/* rows x row_bytes per image (rows 1: the image flattened, split into
 * gridDim.x parts). */
template <int K>
__global__ void __launch_bounds__(kThreads, 2)
batch_kernel(const psi_hb_batch b, long long rows, long long row_bytes)
{
    extern __shared__ uint4 dyn_tab[]; /* channels x 256 raw values x K copies (u32) */
    __shared__ unsigned raw[4 * 256];  /* the image's raw sums (the writing block) */
    __shared__ unsigned long long tot[kTotFields];
    __shared__ int s_last;
    unsigned *const h = (unsigned *)dyn_tab;
    char *const tab = (char *)dyn_tab;
    const int C = (int)b.channels;
    const unsigned cells = (unsigned)C * 256u, words = cells * K;
    const unsigned tid = threadIdx.x, T = blockDim.x, copy = tid & (K - 1);
    const unsigned warp = tid >> 5, lane = tid & 31, warps = T >> 5;
    const unsigned parts = gridDim.x;
    const bool vec = K == 64 && C == 1 && !b.mask;
    for (long long n = blockIdx.y; n < b.images; n += gridDim.y) {
        for (unsigned t = tid; t < words / 4; t += T)
            dyn_tab[t] = make_uint4(0, 0, 0, 0);
        __syncthreads();
        const unsigned char *img = b.data + n * b.slice;
        const unsigned char *msk = b.mask ? b.mask + n * b.mask_slice : nullptr;
        if (rows == 1) {
            /* parts of a multiple of 16 bytes keep every part's alignment */
            const long long per = ((row_bytes + parts - 1) / parts + 15) & ~15LL;
            const long long x0 = (long long)blockIdx.x * per;
            const long long x1 = x0 + per < row_bytes ? x0 + per : row_bytes;
            if (x0 < x1) {
                if (vec)
                    count_vec(tab, img + x0, x1 - x0, tid, T, copy * 4);
                else
                    count_samples<K>(h, img + x0, x1 - x0, x0, msk, C, tid, T, copy);
            }
        } else {
            for (long long y = (long long)blockIdx.x * warps + warp; y < rows;
                 y += (long long)parts * warps) {
                const unsigned char *p = img + y * b.row;
                if (vec)
                    count_vec(tab, p, row_bytes, lane, 32, copy * 4);
                else
                    count_samples<K>(h, p, row_bytes, 0, msk ? msk + y * b.mask_row : nullptr,
                                     C, lane, 32, copy);
            }
        }
        __syncthreads();
        /* the block's raw sums: the K copies of each (channel, value), read
         * in a rotated order so that a warp's threads read different banks */
        unsigned *const shared_sums = b.scratch ? b.scratch + (size_t)n * cells : nullptr;
        for (unsigned t = tid; t < cells; t += T) {
            unsigned s = 0;
#pragma unroll 16
            for (int k = 0; k < K; k++)
                s += h[t * K + ((k + t) & (K - 1))];
            if (parts == 1)
                raw[t] = s;
            else if (s)
                atomicAdd(&shared_sums[t], s);
        }
        if (parts > 1) {
            /* the last block of the image to finish writes its counts */
            __threadfence();
            __syncthreads();
            if (tid == 0) {
                unsigned *ticket = b.scratch + (size_t)b.images * cells + n;
                s_last = atomicAdd(ticket, 1u) == parts - 1;
                if (s_last)
                    *ticket = 0;
            }
            __syncthreads();
            if (!s_last)
                continue; /* every thread: s_last is the block's */
            __threadfence();
            for (unsigned t = tid; t < cells; t += T)
                raw[t] = atomicExch(&shared_sums[t], 0u);
        }
        if (tid < kTotFields)
            tot[tid] = 0;
        unsigned long long *counts = b.counts + (unsigned long long)n * C * b.bins;
        for (unsigned long long i = tid; i < (unsigned long long)C * b.bins; i += T)
            counts[i] = 0;
        __syncthreads();
        for (unsigned t = tid; t < cells; t += T) {
            const unsigned s = raw[t];
            if (!s)
                continue;
            const unsigned c = t >> 8, cl = b.cls[t & 255];
            if (cl < b.bins)
                atomicAdd(&counts[(unsigned long long)c * b.bins + cl], (unsigned long long)s);
            if (b.totals) {
                const int f = cl < b.bins ? 1 : cl - b.bins == PSI_BIN_BELOW ? 5 : 9;
                atomicAdd(&tot[f + c], (unsigned long long)s);
                if (c == 0)
                    atomicAdd(&tot[0], (unsigned long long)s);
            }
        }
        __syncthreads();
        if (b.totals && tid < kTotRecord)
            b.totals[n * kTotRecord + tid] = tid < kTotFields ? tot[tid] : 0ull;
        /* the next image clears the table and tot only after its barrier */
    }
}

/* The shape of a launch: rows x row_bytes per image, blocks per image. */
struct Shape {
    long long rows, row_bytes, parts;
    size_t smem;
};

template <int K>
cudaError_t shape_of(const psi_hb_batch &b, int sm_count, Shape *sh)
{
    const long long C = b.channels, rb = b.width * C;
    const bool flat = b.height == 1 || (b.row == rb && (!b.mask || b.mask_row == b.width));
    sh->rows = flat ? 1 : b.height;
    sh->row_bytes = flat ? b.height * rb : rb;
    sh->smem = (size_t)C * 256 * K * sizeof(unsigned);
    cudaError_t e;
    if (sh->smem > 48 * 1024 &&
        (e = cudaFuncSetAttribute(batch_kernel<K>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)sh->smem)) != cudaSuccess)
        return e;
    int occ = 0;
    if ((e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, batch_kernel<K>, kThreads,
                                                           sh->smem)) != cudaSuccess)
        return e;
    if (occ < 1)
        occ = 1;
    /* blocks per image: enough for one wave over the batch, but no fewer
     * than kMinBytesPerThread bytes per thread and no more than a warp per
     * row */
    const long long slots = (long long)occ * (sm_count > 0 ? sm_count : 1);
    long long parts = (slots + b.images - 1) / b.images;
    const long long most = flat ? (sh->row_bytes + kThreads * kMinBytesPerThread - 1) /
                                      (kThreads * kMinBytesPerThread)
                                : (sh->rows + kThreads / 32 - 1) / (kThreads / 32);
    if (parts > most)
        parts = most;
    sh->parts = parts < 1 ? 1 : parts;
    return cudaSuccess;
}

template <int K>
cudaError_t launch(const psi_hb_batch &b, int sm_count, cudaStream_t s)
{
    Shape sh;
    cudaError_t e = shape_of<K>(b, sm_count, &sh);
    if (e != cudaSuccess)
        return e;
    const unsigned gy = (unsigned)(b.images < 65535 ? b.images : 65535);
    batch_kernel<K><<<dim3((unsigned)sh.parts, gy), kThreads, sh.smem, s>>>(b, sh.rows,
                                                                            sh.row_bytes);
    return cudaGetLastError();
}

} // namespace

extern "C" size_t psi_hb_scratch_bytes(const psi_hb_batch *b, int sm_count, int *error)
{
    Shape sh;
    cudaError_t e;
    switch (b->channels) {
    case 1: e = shape_of<copies_for(1)>(*b, sm_count, &sh); break;
    case 2: e = shape_of<copies_for(2)>(*b, sm_count, &sh); break;
    default: e = shape_of<copies_for(4)>(*b, sm_count, &sh); break;
    }
    *error = (int)e;
    if (e != cudaSuccess || sh.parts == 1)
        return 0;
    /* each image's raw sums and its ticket */
    return (size_t)b->images * ((size_t)b->channels * 256 + 1) * sizeof(unsigned);
}

extern "C" int psi_hb_launch(const psi_hb_batch *b, int sm_count, void *stream)
{
    const cudaStream_t s = (cudaStream_t)stream;
    if (b->images <= 0)
        return 0;
    cudaError_t e;
    switch (b->channels) {
    case 1: e = launch<copies_for(1)>(*b, sm_count, s); break;
    case 2: e = launch<copies_for(2)>(*b, sm_count, s); break;
    default: e = launch<copies_for(4)>(*b, sm_count, s); break;
    }
    return (int)e;
}

/*
 * box_filter.cu - every window sum (or mean) of an image from its padded
 * integral table P, in one kernel: output (x, y) of channel c is
 *   S = (P[y1][x1] - P[y0][x1]) - (P[y1][x0] - P[y0][x0])
 * in the table's arithmetic (integer tables modulo their width, so a wrapped
 * table still gives each window's exact sum), with [y0, y1) x [x0, x1) the
 * window: y0 = y, x0 = x and kh x kw pixels in 'valid' mode; centred on the
 * pixel (starting kh / 2 rows above it) and clipped to the image in 'same'
 * mode. A mean is (double) S / (double) pixel count, rounded once to the
 * output type; float sums go through double too, integer sums are truncated
 * to the output width (the caller checks that they fit).
 *
 * A thread computes one output element; a block covers 256 consecutive
 * elements of an output row (columns x channels), so the four table reads of
 * a warp are four coalesced row segments, and rows y0 and y1 of neighbouring
 * outputs come from L2.
 */
#include "cuda_box.h"

#include <cuda_runtime.h>
#include <stdint.h>

namespace {

constexpr int kBoxThreads = 256;

/* The table's element type and the type its differences are taken in. */
template <psi_box_kind K> struct TableOf;
template <> struct TableOf<PSI_BOX_U32> { typedef uint32_t T; };
template <> struct TableOf<PSI_BOX_U64> { typedef uint64_t T; };
template <> struct TableOf<PSI_BOX_I64> { typedef uint64_t T; };
template <> struct TableOf<PSI_BOX_F32> { typedef float T; };
template <> struct TableOf<PSI_BOX_F64> { typedef double T; };

/* A window sum as double: i64 tables are signed. */
template <psi_box_kind K> __device__ __forceinline__ double as_double(typename TableOf<K>::T s)
{
    if (K == PSI_BOX_I64)
        return (double)(int64_t)s;
    return (double)s;
}

/* Stores sum s (or the mean over n pixels) as output kind O. */
template <psi_box_kind K, psi_box_kind O>
__device__ __forceinline__ void store(void *row, size_t i, typename TableOf<K>::T s, double n,
                                      bool mean)
{
    if (O == PSI_BOX_F32 || O == PSI_BOX_F64) {
        double v = as_double<K>(s);
        if (mean)
            v = __ddiv_rn(v, n);
        if (O == PSI_BOX_F32)
            ((float *)row)[i] = (float)v;
        else
            ((double *)row)[i] = v;
    } else if (O == PSI_BOX_U32) {
        ((uint32_t *)row)[i] = (uint32_t)s;
    } else {
        ((uint64_t *)row)[i] = (uint64_t)s;
    }
}

/* [lo, hi) of the window of output o along an axis of n pixels. */
__device__ __forceinline__ void window(size_t o, size_t k, size_t n, bool valid, size_t &lo,
                                       size_t &hi)
{
    if (valid) {
        lo = o;
        hi = o + k;
        return;
    }
    const long long first = (long long)o - (long long)(k / 2);
    const long long last = first + (long long)k;
    lo = first < 0 ? 0 : (size_t)first;
    hi = last > (long long)n ? n : (size_t)last;
}

template <psi_box_kind K, psi_box_kind O>
__global__ void __launch_bounds__(kBoxThreads) box_kernel(psi_box_job j)
{
    typedef typename TableOf<K>::T T;
    const size_t row_elems = j.out_width * j.channels;
    const size_t e = (size_t)blockIdx.x * kBoxThreads + threadIdx.x;
    if (e >= row_elems)
        return;
    const size_t ox = e / j.channels, c = e - ox * j.channels;
    size_t x0, x1;
    window(ox, j.kw, j.width, j.valid, x0, x1);
    const size_t i0 = x0 * j.channels + c, i1 = x1 * j.channels + c;
    for (size_t oy = blockIdx.y; oy < j.out_height; oy += gridDim.y) {
        size_t y0, y1;
        window(oy, j.kh, j.height, j.valid, y0, y1);
        const T *r0 = (const T *)((const char *)j.table + (ptrdiff_t)y0 * j.table_row);
        const T *r1 = (const T *)((const char *)j.table + (ptrdiff_t)y1 * j.table_row);
        const T right = r1[i1] - r0[i1], left = r1[i0] - r0[i0];
        const double n = (double)((y1 - y0) * (x1 - x0));
        store<K, O>((char *)j.out + (ptrdiff_t)oy * j.out_row, e, (T)(right - left), n,
                    j.mean != 0);
    }
}

template <psi_box_kind K>
cudaError_t launch_for_table(const psi_box_job &j, dim3 grid, cudaStream_t s)
{
    switch (j.out_kind) {
    case PSI_BOX_U32: box_kernel<K, PSI_BOX_U32><<<grid, kBoxThreads, 0, s>>>(j); break;
    case PSI_BOX_U64: box_kernel<K, PSI_BOX_U64><<<grid, kBoxThreads, 0, s>>>(j); break;
    case PSI_BOX_I64: box_kernel<K, PSI_BOX_I64><<<grid, kBoxThreads, 0, s>>>(j); break;
    case PSI_BOX_F32: box_kernel<K, PSI_BOX_F32><<<grid, kBoxThreads, 0, s>>>(j); break;
    default: box_kernel<K, PSI_BOX_F64><<<grid, kBoxThreads, 0, s>>>(j); break;
    }
    return cudaGetLastError();
}

} // namespace

extern "C" int psi_cu_box_filter(const psi_box_job *job, void *stream)
{
    const psi_box_job &j = *job;
    const size_t row_elems = j.out_width * j.channels;
    if (row_elems == 0 || j.out_height == 0)
        return 0;
    const size_t blocks_x = (row_elems + kBoxThreads - 1) / kBoxThreads;
    /* enough rows per launch to fill the GPU; each block walks its rows with
     * a stride of gridDim.y */
    const size_t rows = j.out_height < 65535 ? j.out_height : 65535;
    const dim3 grid((unsigned)blocks_x, (unsigned)rows);
    const cudaStream_t s = (cudaStream_t)stream;
    cudaError_t e;
    switch (j.table_kind) {
    case PSI_BOX_U32: e = launch_for_table<PSI_BOX_U32>(j, grid, s); break;
    case PSI_BOX_U64: e = launch_for_table<PSI_BOX_U64>(j, grid, s); break;
    case PSI_BOX_I64: e = launch_for_table<PSI_BOX_I64>(j, grid, s); break;
    case PSI_BOX_F32: e = launch_for_table<PSI_BOX_F32>(j, grid, s); break;
    default: e = launch_for_table<PSI_BOX_F64>(j, grid, s); break;
    }
    return (int)e;
}

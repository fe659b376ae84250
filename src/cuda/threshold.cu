/*
 * threshold.cu - the CUDA method of the local thresholds and local
 * normalisation (pixsum_cuda_threshold_local(), pixsum_cuda_normalize_local()):
 * a streamed box filter of sums and sums of squares with the per-pixel rule
 * of src/local_rule.h applied as each output row is produced.
 *
 * A block owns 128 output columns of one channel and a band of up to 64
 * output rows. Its shared memory holds the running column sums (and sums of
 * squares) of the 128 + kw - 1 extended columns the band's windows read:
 * each row adds the image row entering the window and subtracts the one
 * leaving it (the border mapping of src/border_rule.h), a block scan turns
 * the column sums into prefix sums, and each thread reads its window as the
 * difference of two prefix sums and writes its outputs. Integer inputs sum
 * exactly in modular 64-bit integers (the validation guarantees that every
 * window sum and sum of squares fits); f64 sums (float inputs, wide i32/u32
 * windows) use samples shifted by the image's first sample of the channel,
 * as the CPU method. No table or full-size intermediate is written.
 */
#include "cuda_threshold.h"

#include "../border_rule.h"
#include "../local_rule.h"

#include <cuda_runtime.h>
#include <stdint.h>

#define LC_TW 128 /* output columns (and threads) per block */
#define LC_BH 64  /* output rows per block */

/* pixsum_type's values (pixsum.h pins them) */
enum { LC_U8 = 1, LC_U16 = 2, LC_I16 = 3, LC_I32 = 4, LC_U32 = 5, LC_F32 = 6, LC_F64 = 7 };

/* Sample (row r, column x, channel c) of the image as a double, and as a
 * two's complement 64-bit integer. */
__device__ __forceinline__ double lc_load_f(const psi_cu_local_job &j, long long r,
                                            long long x, int c)
{
    const char *row = (const char *)j.in + r * j.in_row;
    long long i = x * j.channels + c;
    switch (j.in_type) {
    case LC_U8: return (double)((const uint8_t *)row)[i];
    case LC_U16: return (double)((const uint16_t *)row)[i];
    case LC_I16: return (double)((const int16_t *)row)[i];
    case LC_U32: return (double)((const uint32_t *)row)[i];
    case LC_I32: return (double)((const int32_t *)row)[i];
    case LC_F32: return (double)((const float *)row)[i];
    default: return ((const double *)row)[i];
    }
}

__device__ __forceinline__ unsigned long long lc_load_i(const psi_cu_local_job &j, long long r,
                                                        long long x, int c)
{
    const char *row = (const char *)j.in + r * j.in_row;
    long long i = x * j.channels + c;
    switch (j.in_type) {
    case LC_U8: return ((const uint8_t *)row)[i];
    case LC_U16: return ((const uint16_t *)row)[i];
    case LC_I16: return (unsigned long long)(long long)((const int16_t *)row)[i];
    case LC_U32: return ((const uint32_t *)row)[i];
    default: return (unsigned long long)(long long)((const int32_t *)row)[i];
    }
}

/* Integer sums (modular) or f64 sums. */
struct lc_int {
    typedef unsigned long long T;
};
struct lc_flt {
    typedef double T;
};

/* Adds sign x the values of extended image row r (-1: outside) to the
 * column sums [e0, e1) of the block. */
template <typename A>
__device__ void lc_add_row(const psi_cu_local_job &j, long long r, int sign, long long xs,
                           int c, int e0, int e1, typename A::T *cs, typename A::T *cq,
                           double K)
{
    long long mr = psi_border_index(r, j.height, j.border);
    if (mr < 0 && j.border != 3) /* shrink / valid: nothing outside */
        return;
    for (int e = e0; e < e1; e++) {
        long long mc = psi_border_index(xs + e, j.width, j.border);
        typename A::T v;
        if (mr < 0 || mc < 0) {
            if (j.border != 3)
                continue;
            v = j.flt ? (typename A::T)(j.cval_f - K) : (typename A::T)j.cval;
        } else if (j.flt) {
            v = (typename A::T)(lc_load_f(j, mr, mc, c) - K);
        } else {
            v = (typename A::T)lc_load_i(j, mr, mc, c);
        }
        if (sign > 0) {
            cs[e] += v;
            cq[e] += v * v;
        } else {
            cs[e] -= v;
            cq[e] -= v * v;
        }
    }
}

/* Inclusive block scan of one value per thread (LC_TW threads). */
template <typename T>
__device__ T lc_block_scan(T v, T *warp_tot)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (int d = 1; d < 32; d <<= 1) {
        T u = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d)
            v += u;
    }
    if (lane == 31)
        warp_tot[w] = v;
    __syncthreads();
    T off = 0;
    for (int k = 0; k < w; k++)
        off += warp_tot[k];
    __syncthreads();
    return v + off;
}

/* n x Q - S^2 of exact integer sums as a double (128-bit difference). */
__device__ __forceinline__ double lc_var_num(unsigned long long n, unsigned long long Q,
                                             unsigned long long mag)
{
    unsigned long long alo = n * Q, ahi = __umul64hi(n, Q);
    unsigned long long blo = mag * mag, bhi = __umul64hi(mag, mag);
    unsigned long long lo = alo - blo, hi = ahi - bhi - (alo < blo ? 1ull : 0ull);
    if (hi == 0)
        return (double)lo;
    return __dadd_rn(__dmul_rn((double)hi, 18446744073709551616.0), (double)lo);
}

template <typename A>
__global__ void __launch_bounds__(LC_TW) lc_kernel(psi_cu_local_job j)
{
    typedef typename A::T T;
    extern __shared__ __align__(16) unsigned char lc_smem[];
    __shared__ T warp_tot[LC_TW / 32];
    const int c = (int)blockIdx.z;
    const long long x0 = (long long)blockIdx.x * LC_TW;
    const long long y0 = (long long)blockIdx.y * LC_BH;
    if (x0 >= j.out_width || y0 >= j.out_height)
        return;
    long long y1 = y0 + LC_BH < j.out_height ? y0 + LC_BH : j.out_height;
    int ow = (int)(j.out_width - x0 < LC_TW ? j.out_width - x0 : LC_TW);
    int E = ow + (int)j.kw - 1;
    T *cs = (T *)lc_smem, *cq = cs + E, *ps = cq + E, *pq = ps + E + 1;
    int per = (E + LC_TW - 1) / LC_TW;
    int e0 = (int)threadIdx.x * per, e1 = e0 + per < E ? e0 + per : E;
    if (e0 > E)
        e0 = E;
    const long long xs = x0 - j.ax; /* image column of extended column 0 */
    double K = j.flt ? lc_load_f(j, 0, 0, c) : 0.0;
    for (int e = e0; e < e1; e++)
        cs[e] = cq[e] = 0;
    for (long long k = 0; k < j.kh; k++)
        lc_add_row<A>(j, y0 - j.ay + k, 1, xs, c, e0, e1, cs, cq, K);
    const int x = (int)threadIdx.x;
    for (long long y = y0; y < y1; y++) {
        if (y > y0) {
            long long top = y - 1 - j.ay;
            long long ro = psi_border_index(top, j.height, j.border);
            long long ri = psi_border_index(top + j.kh, j.height, j.border);
            if (ro != ri || (ro < 0 && j.border == 3)) {
                if (!(ro < 0 && ri < 0)) {
                    lc_add_row<A>(j, top + j.kh, 1, xs, c, e0, e1, cs, cq, K);
                    lc_add_row<A>(j, top, -1, xs, c, e0, e1, cs, cq, K);
                }
            }
        }
        /* prefix sums: each thread's chunk, then the block's chunk totals */
        T ts = 0, tq = 0;
        for (int e = e0; e < e1; e++) {
            ts += cs[e];
            tq += cq[e];
        }
        T is = lc_block_scan<T>(ts, warp_tot), iq = lc_block_scan<T>(tq, warp_tot);
        T rs = is - ts, rq = iq - tq;
        for (int e = e0; e < e1; e++) {
            rs += cs[e];
            rq += cq[e];
            ps[e + 1] = rs;
            pq[e + 1] = rq;
        }
        if (threadIdx.x == 0)
            ps[0] = pq[0] = 0;
        __syncthreads();
        if (x < ow) {
            T S = ps[x + j.kw] - ps[x], Q = pq[x + j.kw] - pq[x];
            unsigned long long n = j.n;
            if (j.border == 4) { /* shrink: the pixels inside only */
                long long a = y - j.ay, b = a + j.kh, p = xs + x, q = p + j.kw;
                a = a < 0 ? 0 : a;
                b = b > j.height ? j.height : b;
                p = p < 0 ? 0 : p;
                q = q > j.width ? j.width : q;
                n = (unsigned long long)((b - a) * (q - p));
            }
            double mean, sd, dn = (double)n;
            if (j.flt) {
                double Sd = (double)S, Qd = (double)Q, v = (Qd - Sd * (Sd / dn)) / dn;
                mean = Sd / dn + K;
                sd = v > 0 ? sqrt(v) : 0.0;
            } else {
                unsigned long long Su = (unsigned long long)S;
                bool neg = j.is_signed && (long long)Su < 0;
                unsigned long long mag = neg ? 0ull - Su : Su;
                mean = (j.is_signed ? (double)(long long)Su : (double)Su) / dn;
                sd = sqrt(lc_var_num(n, (unsigned long long)Q, mag) / (dn * dn));
            }
            long long ox = x0 + x;
            double xv = lc_load_f(j, y + j.cy, ox + j.cx, c);
            long long oi = ox * j.channels + c;
            if (j.kind == PSI_LOCAL_NORMALIZE) {
                double v = psi_local_normalize(xv, mean, sd, j.eps);
                char *row = (char *)j.map + y * j.map_row;
                if (j.map_type == LC_F32)
                    ((float *)row)[oi] = (float)v;
                else
                    ((double *)row)[oi] = v;
            } else {
                double t = psi_local_threshold(j.kind, mean, sd, j.a, j.r);
                if (j.map) {
                    char *row = (char *)j.map + y * j.map_row;
                    if (j.map_type == LC_F32)
                        ((float *)row)[ox] = (float)t;
                    else
                        ((double *)row)[ox] = t;
                }
                if (j.mask)
                    ((unsigned char *)j.mask + y * j.mask_row)[ox] = xv > t ? j.fg : 0;
            }
        }
        __syncthreads();
    }
}

extern "C" int psi_cu_local(const psi_cu_local_job *job, void *stream)
{
    size_t E = (size_t)LC_TW + (size_t)job->kw - 1;
    size_t smem = (4 * E + 2) * 8;
    dim3 grid((unsigned)((job->out_width + LC_TW - 1) / LC_TW),
              (unsigned)((job->out_height + LC_BH - 1) / LC_BH), (unsigned)job->channels);
    cudaStream_t s = (cudaStream_t)stream;
    cudaError_t e;
    if (job->flt) {
        e = cudaFuncSetAttribute(lc_kernel<lc_flt>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)smem);
        if (e != cudaSuccess)
            return (int)e;
        lc_kernel<lc_flt><<<grid, LC_TW, smem, s>>>(*job);
    } else {
        e = cudaFuncSetAttribute(lc_kernel<lc_int>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)smem);
        if (e != cudaSuccess)
            return (int)e;
        lc_kernel<lc_int><<<grid, LC_TW, smem, s>>>(*job);
    }
    return (int)cudaGetLastError();
}

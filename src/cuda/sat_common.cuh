/*
 * sat_common.cuh - device-side building blocks shared by the CUDA integral
 * kernels: plane addressing, element conversion (plain or squared, modular
 * for integers), warp scans, the workspace ticket/epoch protocol and the
 * acquire/release flag accesses of the look-back kernels.
 */
#ifndef PIXSUM_SAT_COMMON_CUH
#define PIXSUM_SAT_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_plan.h"
#include "gpu_order.cuh"

namespace psi_cu {

typedef unsigned long long u64;
typedef long long i64;

/* The input element types, by psi_cu_in, and the type pairs every templated
 * kernel is built for: (input type, accumulator type). i64 tables are built
 * with u64 accumulators (same bits, modular). */
#define PSI_CU_PAIRS(X)                       \
    X(PSI_CU_IN_U8, PSI_CU_U32, uint8_t, unsigned)        \
    X(PSI_CU_IN_U8, PSI_CU_U64, uint8_t, unsigned long long)  \
    X(PSI_CU_IN_U16, PSI_CU_U32, uint16_t, unsigned)      \
    X(PSI_CU_IN_U16, PSI_CU_U64, uint16_t, unsigned long long) \
    X(PSI_CU_IN_I16, PSI_CU_U64, int16_t, unsigned long long)  \
    X(PSI_CU_IN_I32, PSI_CU_U64, int32_t, unsigned long long)  \
    X(PSI_CU_IN_U32, PSI_CU_U64, uint32_t, unsigned long long) \
    X(PSI_CU_IN_F32, PSI_CU_F32, float, float)             \
    X(PSI_CU_IN_F32, PSI_CU_F64, float, double)            \
    X(PSI_CU_IN_F64, PSI_CU_F64, double, double)

/* The accumulator types alone (second stages of the paper methods). */
#define PSI_CU_ACCS(X)                 \
    X(PSI_CU_U32, unsigned)            \
    X(PSI_CU_U64, unsigned long long)  \
    X(PSI_CU_F32, float)               \
    X(PSI_CU_F64, double)

/* Converts an input sample to the accumulator: signed integers are
 * sign-extended first, so u64 arithmetic is the two's-complement sum. */
template <typename TAcc, typename TIn>
__device__ __forceinline__ TAcc to_acc(TIn v)
{
    return (TAcc)v;
}
template <>
__device__ __forceinline__ unsigned long long to_acc<unsigned long long, int16_t>(int16_t v)
{
    return (unsigned long long)(long long)v;
}
template <>
__device__ __forceinline__ unsigned long long to_acc<unsigned long long, int32_t>(int32_t v)
{
    return (unsigned long long)(long long)v;
}

template <typename TAcc, typename TIn>
__device__ __forceinline__ TAcc sample(TIn v, int squared)
{
    TAcc a = to_acc<TAcc, TIn>(v);
    return squared ? a * a : a;
}

/* Geometry of one plane (see cuda_plan.h). */
struct plane_ptrs {
    const char *in;
    char *out;
};

__device__ __forceinline__ plane_ptrs plane_base(const psi_cu_plan &p, i64 plane,
                                                 size_t in_size, size_t acc_size)
{
    i64 z = plane / p.channels, c = plane % p.channels;
    plane_ptrs r;
    r.in = (const char *)p.in + z * p.in_slice + c * (i64)in_size;
    r.out = (char *)p.out + z * p.out_slice + c * (i64)acc_size;
    return r;
}

/* Inclusive warp scan of one value per lane. */
template <typename T>
__device__ __forceinline__ T warp_inclusive(T v, unsigned lane)
{
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        T o = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= (unsigned)d)
            v += o;
    }
    return v;
}

/* Sum of one value per lane, returned to every lane. */
template <typename T>
__device__ __forceinline__ T warp_sum(T v)
{
#pragma unroll
    for (int d = 16; d > 0; d >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, d);
    return v;
}

/* Exclusive warp prefix from an inclusive one (no subtraction, so floats
 * keep the rounding of a plain left-to-right association per lane). */
template <typename T>
__device__ __forceinline__ T warp_exclusive_from_inclusive(T incl, unsigned lane)
{
    T o = __shfl_up_sync(0xffffffffu, incl, 1);
    return lane == 0 ? (T)0 : o;
}

/* ---- flags: release/acquire at GPU scope (gpu_order.cuh) ------------------ */

using psi_gpu::fence_acq_rel;
using psi_gpu::load_acquire;
using psi_gpu::load_relaxed;
using psi_gpu::store_relaxed;
using psi_gpu::store_release;

/* Flag values: (epoch << 2) | status. Zeroed memory reads "nothing". */
enum { FLAG_AGGREGATE = 1, FLAG_INCLUSIVE = 2 };

__device__ __forceinline__ u64 flag_value(u64 epoch, int status)
{
    return (epoch << 2) | (u64)status;
}

/* Spins until the flag carries this launch's epoch and a status; returns the
 * status. */
__device__ __forceinline__ int wait_flag(const u64 *p, u64 epoch)
{
    for (;;) {
        u64 f = load_acquire(p);
        if ((f >> 2) == epoch && (f & 3u) != 0)
            return (int)(f & 3u);
#if __CUDA_ARCH__ >= 700
        __nanosleep(32);
#endif
    }
}

/* Returns the status if the flag is already set for this epoch, else 0. */
__device__ __forceinline__ int peek_flag(const u64 *p, u64 epoch)
{
    u64 f = load_acquire(p);
    return (f >> 2) == epoch ? (int)(f & 3u) : 0;
}

/* ---- ticket / epoch protocol ----------------------------------------------- */

/* Called by one thread per block at its start: takes the next tile number and
 * reads the launch's epoch. */
__device__ __forceinline__ u64 take_ticket(psi_cu_header *h, u64 *epoch)
{
    u64 t = atomicAdd(&h->ticket, 1ull);
    *epoch = *(volatile u64 *)&h->epoch;
    return t;
}

/* Called by one thread per block at its very end (after a __syncthreads that
 * follows the block's last flag use): the last block of the launch resets the
 * ticket and advances the epoch for the next launch.
 * No fence is needed: every block took its ticket and read the epoch before
 * its own increment of `done` (it used both values since), so the last block
 * resets nothing another block still reads; values and flags written in this
 * launch carry its epoch, and the next launch sees the reset at the kernel
 * boundary. (A fence here would make thread 0 wait for the block's table
 * stores to drain before the increment.) */
__device__ __forceinline__ void finish_block(psi_cu_header *h, u64 total_blocks)
{
    u64 d = atomicAdd(&h->done, 1ull);
    if (d == total_blocks - 1) {
        *(volatile u64 *)&h->ticket = 0;
        *(volatile u64 *)&h->done = 0;
        *(volatile u64 *)&h->epoch = *(volatile u64 *)&h->epoch + 1;
    }
}

/* Value loads/stores that bypass L1 (data published by other blocks). */
template <typename T>
__device__ __forceinline__ T ld_cg(const T *p)
{
    return __ldcg(p);
}
template <typename T>
__device__ __forceinline__ void st_cg(T *p, T v)
{
    __stcg(p, v);
}

} // namespace psi_cu

#endif /* PIXSUM_SAT_COMMON_CUH */

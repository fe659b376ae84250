/*
 * gpu_order.cuh - the GPU-scope memory-ordering accesses that the CUDA
 * kernels use to hand values between thread blocks of one launch: the
 * look-back flags and tagged words of the integral kernels (sat_common.cuh,
 * sat_lookback.cuh) and the preset
 * flag of the flat histogram kernel (hist_flat.cu).
 */
#ifndef PIXSUM_GPU_ORDER_CUH
#define PIXSUM_GPU_ORDER_CUH

namespace psi_gpu {

__device__ __forceinline__ unsigned long long load_acquire(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

/* A flag read with no ordering of its own (a fence after it orders what
 * follows: acquire by fence). */
__device__ __forceinline__ unsigned long long load_relaxed(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned load_relaxed(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* A word stored whole with no ordering of its own (tagged look-back words:
 * the word validates itself). */
__device__ __forceinline__ void store_relaxed(unsigned long long *p, unsigned long long v)
{
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ void store_release(unsigned long long *p, unsigned long long v)
{
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/* Acquire (and release) by fence at GPU scope: after relaxed flag reads, it
 * orders the reads of the values the flags announce (lighter than the
 * sequentially consistent __threadfence()). */
__device__ __forceinline__ void fence_acq_rel(void)
{
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

} // namespace psi_gpu

#endif

/*
 * border_rule.h - the border index mapping of the box filter family
 * (pixsum_border of pixsum.h): which image row or column an extended
 * coordinate reads. Plain C that also compiles as CUDA device code; the CPU
 * streamed kernels (bx_map, src/cpu/box_stream_kernel.h) and the local
 * operations' CUDA kernel (src/cuda/threshold.cu) both call it.
 */
#ifndef PIXSUM_BORDER_RULE_H
#define PIXSUM_BORDER_RULE_H

#ifdef __CUDACC__
#define PSI_BR_FN static __host__ __device__ __forceinline__
#else
#define PSI_BR_FN static inline
#endif

/* Index in [0, len) of extended coordinate r under border b (pixsum_border's
 * value), or -1 for a position outside the image under constant, shrink and
 * valid borders. */
PSI_BR_FN long long psi_border_index(long long r, long long len, int b)
{
    if (r >= 0 && r < len)
        return r;
    switch (b) {
    case 0: { /* reflect101 */
        if (len == 1)
            return 0;
        long long p = 2 * len - 2;
        r %= p;
        if (r < 0)
            r += p;
        return r < len ? r : p - r;
    }
    case 1: { /* reflect */
        long long p = 2 * len;
        r %= p;
        if (r < 0)
            r += p;
        return r < len ? r : p - 1 - r;
    }
    case 2: /* replicate */
        return r < 0 ? 0 : len - 1;
    default:
        return -1;
    }
}

#endif /* PIXSUM_BORDER_RULE_H */

/*
 * local_rule.h - the one definition of the per-pixel functions of the local
 * operations (pixsum_threshold_local(), pixsum_normalize_local()): the
 * threshold of each method and the normalised value, from a window's mean
 * and standard deviation. Plain C that compiles as CUDA device code too, so
 * the CPU kernels (src/cpu/box_local.h) and the GPU kernel
 * (src/cuda/threshold.cu) evaluate exactly the same expressions in the same
 * order (double precision, no contraction: the library is built with
 * -ffp-contract=off and the kernel uses explicit __dmul_rn/__dadd_rn).
 */
#ifndef PIXSUM_LOCAL_RULE_H
#define PIXSUM_LOCAL_RULE_H

#ifdef __CUDACC__
#define PSI_LR_FN static __device__ __forceinline__
#define PSI_LR_MUL(a, b) __dmul_rn((a), (b))
#define PSI_LR_ADD(a, b) __dadd_rn((a), (b))
#else
#define PSI_LR_FN static inline
#define PSI_LR_MUL(a, b) ((a) * (b))
#define PSI_LR_ADD(a, b) ((a) + (b))
#endif

/* The operations (pinned: the CUDA job passes them as int). The first three
 * are pixsum_threshold_method's values. */
enum {
    PSI_LOCAL_MEAN = 0,     /* T = mean - offset */
    PSI_LOCAL_NIBLACK = 1,  /* T = mean + k std */
    PSI_LOCAL_SAUVOLA = 2,  /* T = mean (1 + k (std / r - 1)) */
    PSI_LOCAL_NORMALIZE = 3 /* (x - mean) / (std + eps), 0 where std + eps is 0 */
};

/* The threshold of a window of mean `mean` and standard deviation `sd`.
 * `a` is offset (mean), k (Niblack, Sauvola); `r` is Sauvola's range (> 0). */
PSI_LR_FN double psi_local_threshold(int kind, double mean, double sd, double a, double r)
{
    if (kind == PSI_LOCAL_MEAN)
        return PSI_LR_ADD(mean, -a);
    if (kind == PSI_LOCAL_NIBLACK)
        return PSI_LR_ADD(mean, PSI_LR_MUL(a, sd));
    /* Sauvola */
    return PSI_LR_MUL(mean, PSI_LR_ADD(1.0, PSI_LR_MUL(a, PSI_LR_ADD(sd / r, -1.0))));
}

/* The normalised value of sample x: (x - mean) / (sd + eps), 0 where the
 * denominator is 0 (a flat window with eps = 0). */
PSI_LR_FN double psi_local_normalize(double x, double mean, double sd, double eps)
{
    double den = PSI_LR_ADD(sd, eps);
    return den > 0 ? PSI_LR_ADD(x, -mean) / den : 0.0;
}

#endif /* PIXSUM_LOCAL_RULE_H */

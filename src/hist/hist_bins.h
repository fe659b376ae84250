/*
 * hist_bins.h - the one definition of a histogram bin, compiled by the C
 * library (every CPU method, MPI, the OpenGL plans) and by the CUDA kernels
 * (hist_count.cu, hist_post.cu), so that every backend decides every sample
 * the same way.
 *
 * The edges are the definition. For `bins` equal bins over [lo, hi):
 *     edge(i) = lo + i * step     (i < bins; step = (hi - lo) / bins, both
 *                                  rounded once to double, no fused multiply-add)
 *     edge(bins) = hi
 * This is NumPy's `linspace` rule, and the values pixsum reports
 * (pixsum_hist_edge(), the CLI's CSV/JSON, Python's info['edges']). A sample
 * v, converted exactly to double, belongs to the bin i with
 * edge(i) <= v < edge(i + 1); NaN, v < lo and v >= hi are classes of their
 * own. The edges never decrease (rounding is monotonic), so that bin is
 * unique; where rounding merges edges, the bins between them are empty.
 *
 * The decision: an estimate floor((v - lo) * scale), scale = bins / (hi - lo),
 * corrected by one bin against the two neighbouring edges (as NumPy corrects
 * its estimate), branch-free. One step is enough whenever the step is at
 * least 2^-48 of max(|lo|, |hi|) (`one_step`, decided once): the computed
 * edges then lie within 7 units in the last place of that magnitude of their
 * exact values, and the estimate within a few of the exact position, so
 * together less than one bin off. Otherwise (a range a few ulps wide split
 * into many bins, where rounding merges edges) the correction walks until
 * the rule holds.
 *
 * The integer rule: when lo and hi are integers of magnitude at most 2^53 and
 * bins divides hi - lo, every edge is an integer computed exactly, and an
 * integer sample is decided in integer arithmetic: the same estimate,
 * corrected against the integer edges lo + i * int_step (exact, no division).
 */
#ifndef PIXSUM_HIST_BINS_H
#define PIXSUM_HIST_BINS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define PSI_BINS_FN static __host__ __device__ __forceinline__
#else
#define PSI_BINS_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Class numbers past the bins (bins + PSI_BIN_*). */
enum { PSI_BIN_BELOW = 0, PSI_BIN_ABOVE = 1, PSI_BIN_NAN = 2 };

/* Resolved bins: filled by psi_bins_init() only. */
typedef struct psi_bins {
    double lo, hi;    /* finite, lo < hi */
    double step;      /* (hi - lo) / bins, > 0: edge(i) = lo + i * step */
    double scale;     /* bins / (hi - lo), finite, > 0: the estimate only */
    int64_t int_lo;   /* the integer rule, when int_step > 0: lo */
    int64_t int_step; /* the integer bin width, or 0 where the rule does not apply */
    uint32_t bins;    /* 1 .. 2^31 */
    uint32_t one_step; /* 1: the estimate is never more than one bin off */
} psi_bins;

/* One IEEE double product and sum (a - b is a + (-b), the same rounding),
 * each rounded on its own: the compilers may
 * not fuse them into one multiply-add (CUDA: the _rn intrinsics; C: two
 * statements, -ffp-contract=off in the build, and the pragma for clang). */
PSI_BINS_FN double psi_bins_mul(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif
    double r = a * b;
    return r;
#endif
}

PSI_BINS_FN double psi_bins_add(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dadd_rn(a, b);
#else
    double r = a + b;
    return r;
#endif
}

/* Fills b for `bins` bins over [lo, hi). Returns 0, or -1 (b untouched) when
 * bins is 0 or above 2^31, lo or hi is not finite, lo >= hi, or the step or scale is not a
 * finite double above zero (a range too narrow or too wide for the count). */
PSI_BINS_FN int psi_bins_init(psi_bins *b, uint64_t bins, double lo, double hi)
{
    if (bins == 0 || bins > ((uint64_t)1 << 31) || !(lo < hi) || !(lo - lo == 0) ||
        !(hi - hi == 0))
        return -1;
    double width = psi_bins_add(hi, -lo);
    double step = width / (double)bins;
    double scale = (double)bins / width;
    if (!(width - width == 0) || !(step > 0) || !(scale > 0) || !(scale - scale == 0))
        return -1;
    b->lo = lo;
    b->hi = hi;
    b->step = step;
    b->scale = scale;
    b->bins = (uint32_t)bins;
    double mag = -lo > hi ? -lo : hi; /* max(|lo|, |hi|) */
    mag = lo > mag ? lo : mag;
    b->one_step = step >= mag * 0x1p-48;
    b->int_lo = 0;
    b->int_step = 0;
    const double limit = 9007199254740992.0; /* 2^53 */
    if (lo >= -limit && hi <= limit && lo == (double)(int64_t)lo && hi == (double)(int64_t)hi) {
        int64_t ilo = (int64_t)lo, ihi = (int64_t)hi;
        uint64_t span = (uint64_t)(ihi - ilo);
        if (span % bins == 0) {
            b->int_lo = ilo;
            b->int_step = (int64_t)(span / bins);
        }
    }
    return 0;
}

/* Edge i of b (0 <= i <= bins): the value reported as the bin's lower edge. */
PSI_BINS_FN double psi_bins_edge(const psi_bins *b, uint32_t i)
{
    if (i >= b->bins)
        return b->hi;
    return psi_bins_add(b->lo, psi_bins_mul((double)i, b->step));
}

/* The class of sample v: its bin, or bins + PSI_BIN_BELOW / ABOVE / NAN. */
PSI_BINS_FN uint32_t psi_bins_class(const psi_bins *b, double v)
{
    if (v != v)
        return b->bins + PSI_BIN_NAN;
    if (v < b->lo)
        return b->bins + PSI_BIN_BELOW;
    if (v >= b->hi)
        return b->bins + PSI_BIN_ABOVE;
    /* lo <= v < hi: the estimate is finite and >= 0 */
    const uint32_t last = b->bins - 1;
    double f = psi_bins_mul(psi_bins_add(v, -b->lo), b->scale);
    uint32_t i = f < (double)b->bins ? (uint32_t)f : b->bins;
    /* One step each way, both edges of the estimate at once (lo + i * step
     * by the formula, also for i = bins): an estimate one above the bin has
     * v below its lower edge, one below has v at or above its upper edge.
     * edge(0) = lo <= v, so i never goes below 0; a result of bins (v at or
     * above the formula's lo + bins * step, but below hi) is the last bin. */
    double di = (double)i;
    double e0 = psi_bins_add(b->lo, psi_bins_mul(di, b->step));
    double e1 = psi_bins_add(b->lo, psi_bins_mul(psi_bins_add(di, 1.0), b->step));
    i = i - (uint32_t)(v < e0) + (uint32_t)(v >= e1);
    i = i < last ? i : last;
    if (!b->one_step) { /* merged edges: walk to the bin the rule names */
        while (i > 0 && v < psi_bins_edge(b, i))
            i--;
        while (i < last && v >= psi_bins_edge(b, i + 1))
            i++;
    }
    return i;
}

/* The class of an integer sample (|v| <= 2^53): the integer rule where it
 * applies (the same class as psi_bins_class((double)v)), else
 * psi_bins_class(). */
PSI_BINS_FN uint32_t psi_bins_class_int(const psi_bins *b, int64_t v)
{
    if (b->int_step <= 0)
        return psi_bins_class(b, (double)v);
    if (v < b->int_lo)
        return b->bins + PSI_BIN_BELOW;
    const uint64_t d = (uint64_t)(v - b->int_lo); /* |v|, |int_lo| <= 2^53: no overflow */
    const uint64_t w = (uint64_t)b->int_step, last = b->bins - 1;
    if (d >= w * b->bins)
        return b->bins + PSI_BIN_ABOVE;
    /* the estimate is within one bin (its error is a few ulps of at most
     * 2^31 bins); the edges lo + i * w are exact integers */
    uint64_t i = (uint64_t)((double)d * b->scale);
    i = i < last ? i : last;
    i -= (uint64_t)(d < i * w);
    i += (uint64_t)(d >= (i + 1) * w);
    return (uint32_t)(i < last ? i : last);
}

#ifdef __cplusplus
}
#endif

#endif /* PIXSUM_HIST_BINS_H */

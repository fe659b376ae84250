/*
 * box_local_kernel.h - the per-row finish of the local operations
 * (pixsum_threshold_local(), pixsum_normalize_local()) inside the streamed
 * box filter: included by box_stream_kernel.h, so it is compiled per ISA
 * with the rest of the kernel. Once an output row's window sums (s->hs) and
 * sums of squares (s->hq) are there, the window means and standard
 * deviations of that row go into two row buffers, and the rule of
 * src/local_rule.h turns them and the centre samples into the outputs of
 * the row. Nothing larger than a row is ever stored.
 */
#include "../local_op.h"

/* Mean and standard deviation of window i of the current row (ih image rows
 * inside the window), from the running sums as bx_finish_generic() reads
 * them: any accumulator and border. */
static inline void bx_local_moments_at(const bx_state *s, size_t i, size_t ih, double *mean,
                                       double *sd)
{
    const psi_box_plan *p = s->p;
    size_t C = s->C, x = i / C, c = i - x * C;
    pixsum_border b = p->spec.border;
    int shrink = b == PIXSUM_BORDER_SHRINK, cst = b == PIXSUM_BORDER_CONSTANT;
    uint64_t inside = (shrink || cst) ? (uint64_t)s->iw[x] * ih : s->n;
    uint64_t n = shrink ? inside : s->n, outside = cst ? s->n - inside : 0;
    if (p->acc == PSI_BOX_ACC_F64) {
        double K = s->K[c], S = ((const double *)s->hs)[i], Q = ((const double *)s->hq)[i];
        if (outside) {
            double d = p->spec.border_value - K;
            S += (double)outside * d;
            Q += (double)outside * (d * d);
        }
        double dn = (double)n, v = (Q - S * (S / dn)) / dn;
        *mean = S / dn + K;
        *sd = v > 0 ? sqrt(v) : 0.0;
        return;
    }
    uint64_t S = p->acc == PSI_BOX_ACC_U32
                     ? (p->is_signed ? (uint64_t)(int64_t)(int32_t)((const uint32_t *)s->hs)[i]
                                     : (uint64_t)((const uint32_t *)s->hs)[i])
                     : ((const uint64_t *)s->hs)[i];
    uint64_t Q = ((const uint64_t *)s->hq)[i];
    if (outside) {
        S += outside * p->cval_int;
        Q += outside * (p->cval_int * p->cval_int);
    }
    double sv = p->is_signed ? (double)(int64_t)S : (double)S;
    uint64_t mag = p->is_signed && (int64_t)S < 0 ? (uint64_t)0 - S : S;
    bx_u128 num = (bx_u128)n * Q - (bx_u128)mag * mag;
    *mean = sv / (double)n;
    *sd = sqrt((double)num / ((double)n * (double)n));
}

/* The means and standard deviations of the current row into mu[], sd[]. */
static void bx_local_moments(const bx_state *s, size_t ih, double *restrict mu,
                             double *restrict sd)
{
    const psi_box_plan *p = s->p;
    size_t m = s->OW * s->C;
    pixsum_border b = p->spec.border;
    int fixed_n = b != PIXSUM_BORDER_SHRINK && b != PIXSUM_BORDER_CONSTANT;
    double dn = (double)s->n, inv2 = 1.0 / (dn * dn);
    if (fixed_n && p->acc == PSI_BOX_ACC_U32 && !p->is_signed) {
        /* n * Q - S^2 <= n^2 M^2 < 2^64 since n M < 2^32: exact in u64 */
        const uint32_t *h = s->hs;
        const uint64_t *q = s->hq;
        uint64_t n64 = s->n;
        for (size_t i = 0; i < m; i++) {
            uint64_t S = h[i];
            mu[i] = (double)h[i] / dn;
            sd[i] = sqrt((double)(n64 * q[i] - S * S) * inv2);
        }
        return;
    }
    if (fixed_n && p->acc == PSI_BOX_ACC_F64 && s->C == 1) {
        const double *h = s->hs, *q = s->hq, K = s->K[0];
        for (size_t i = 0; i < m; i++) {
            double S = h[i], v = (q[i] - S * (S / dn)) / dn;
            mu[i] = S / dn + K;
            sd[i] = v > 0 ? sqrt(v) : 0.0;
        }
        return;
    }
    for (size_t i = 0; i < m; i++)
        bx_local_moments_at(s, i, ih, mu + i, sd + i);
}

/* Applies the rule to samples of the centre row xr (input type T) of the
 * current output row: the thresholds (or normalised values) replace sd[]
 * in place, then each output is written by its own loop, so every loop
 * vectorises: map (f32 mf or f64 md, may be NULL), mask mk (may be NULL). */
#define BX_LOCAL_APPLY(T, KIND)                                                            \
    do {                                                                                   \
        const T *xs = (const T *)xr;                                                       \
        if ((KIND) == PSI_LOCAL_NORMALIZE) {                                               \
            for (size_t i = 0; i < m; i++)                                                 \
                tv[i] = psi_local_normalize((double)xs[i], mu[i], tv[i], L->eps);          \
        } else {                                                                           \
            for (size_t i = 0; i < m; i++)                                                 \
                tv[i] = psi_local_threshold((KIND), mu[i], tv[i], L->a, L->r);             \
            if (mk)                                                                        \
                for (size_t i = 0; i < m; i++)                                             \
                    mk[i] = (double)xs[i] > tv[i] ? fg : 0;                                \
        }                                                                                  \
    } while (0)

#define BX_LOCAL_KINDS(T)                                                                  \
    switch (L->kind) {                                                                     \
    case PSI_LOCAL_MEAN: BX_LOCAL_APPLY(T, PSI_LOCAL_MEAN); break;                         \
    case PSI_LOCAL_NIBLACK: BX_LOCAL_APPLY(T, PSI_LOCAL_NIBLACK); break;                   \
    case PSI_LOCAL_SAUVOLA: BX_LOCAL_APPLY(T, PSI_LOCAL_SAUVOLA); break;                   \
    default: BX_LOCAL_APPLY(T, PSI_LOCAL_NORMALIZE); break;                                \
    }

/* Means and standard deviations from u32 window sums S and sums of squares
 * Q of n pixels with n x Q < 2^64 (the fused AVX-512 kernel's u8 rows):
 * n Q - S^2 is exact in u64. */
#if defined(__AVX512F__) /* used by box_stream_fused.h only */
static void bx_local_moments_u32(const bx_state *s, const uint32_t *restrict S,
                                 const uint32_t *restrict Q, double *restrict mu,
                                 double *restrict sd)
{
    size_t m = s->OW * s->C;
    double dn = (double)s->n, inv2 = 1.0 / (dn * dn);
    uint64_t n64 = s->n;
    for (size_t i = 0; i < m; i++) {
        uint64_t Sv = S[i];
        mu[i] = (double)S[i] / dn;
        sd[i] = sqrt((double)(n64 * Q[i] - Sv * Sv) * inv2);
    }
}
#endif

/* Writes output row y of a local operation from the row's means mu[] and
 * standard deviations tv[] (OW x C each; tv is overwritten by the
 * thresholds or normalised values) and the centre samples. */
static void bx_local_apply(const bx_state *s, const psi_job *job, size_t y,
                           const double *restrict mu, double *restrict tv)
{
    const psi_box_plan *p = s->p;
    const psi_local_plan *L = p->local;
    size_t m = s->OW * s->C;
    /* the centre sample: the same position, or (x + ax, y + ay) for VALID */
    int valid = p->spec.border == PIXSUM_BORDER_VALID;
    const char *xr = (const char *)psi_row(&job->in, valid ? y + p->ay : y, 0) +
                     (valid ? p->ax * s->C * pixsum_type_size(s->t) : 0);
    float *mf = NULL;
    double *md = NULL;
    uint8_t *mk = L->has_mask ? psi_row(&L->mask, y, 0) : NULL, fg = L->fg;
    if (L->has_map) {
        if (L->map.type == PIXSUM_F32)
            mf = psi_row(&L->map, y, 0);
        else
            md = psi_row(&L->map, y, 0);
    }
    BX_INPUT(s->t, { BX_LOCAL_KINDS(T) })
    if (mf)
        for (size_t i = 0; i < m; i++)
            mf[i] = (float)tv[i];
    if (md)
        memcpy(md, tv, m * sizeof *md);
}

/* Output row y of a local operation (ih image rows inside its windows):
 * s->hs and s->hq hold the row's window sums; mu, sd are row buffers of
 * OW x C doubles. */
static void bx_finish_local(const bx_state *s, const psi_job *job, size_t y, size_t ih,
                            double *restrict mu, double *restrict sd)
{
    bx_local_moments(s, ih, mu, sd);
    bx_local_apply(s, job, y, mu, sd);
}

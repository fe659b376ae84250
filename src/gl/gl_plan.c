/*
 * gl_plan.c - keys, bin edges and depth planes of the GL histogram methods
 * (the reasoning is in gl_plan.h). Pure CPU code; no GL calls.
 */
#include "gl_plan.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

bool psi_gl_type_supported(pixsum_type t)
{
    return t == PIXSUM_U8 || t == PIXSUM_U16 || t == PIXSUM_I16 || t == PIXSUM_F32;
}

/* The float whose ordered key is k (k in [kmin, kmax] of f32). */
static float f32_of_key(uint32_t k)
{
    uint32_t bits = (k & 0x80000000u) ? (k ^ 0x80000000u) : ~k;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint32_t key_of_f32(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

/* Value of key k (k <= kmax) as a double. */
static double key_value(pixsum_type t, uint32_t k)
{
    switch (t) {
    case PIXSUM_I16: return (double)k - 32768.0;
    case PIXSUM_F32: return (double)f32_of_key(k);
    default: return (double)k;
    }
}

/* Class of key k: -1 below, 0..bins-1 the bin, bins above (past kmax: bins). */
static int64_t key_class(const psi_hist_params *p, pixsum_type t, uint64_t k, uint32_t kmax)
{
    if (k > kmax)
        return (int64_t)p->bins;
    size_t c = psi_hist_bin(p, key_value(t, (uint32_t)k));
    if (c == p->bins + PSI_HIST_BELOW)
        return -1;
    if (c >= p->bins) /* ABOVE; NaN cannot occur for keys in [kmin, kmax] */
        return (int64_t)p->bins;
    return (int64_t)c;
}

/* ---- gl.depth: the depth map and its check ----------------------------- */

static float ftz(float x)
{
    return (x < FLT_MIN && x > -FLT_MIN) ? 0.0f * x : x;
}

/* t(v) = (v - L) * S as a GPU may evaluate it: variant bit 0 flushes
 * denormal inputs, bit 1 denormal results. */
static float depth_of(float v, float L, float S, int variant)
{
    if (variant & 1)
        v = ftz(v), L = ftz(L), S = ftz(S);
    volatile float d = v - L; /* volatile: one rounding per operation, as on the GPU */
    float x = d;
    if (variant & 2)
        x = ftz(x);
    volatile float r = x * S;
    float y = r;
    if (variant & 2)
        y = ftz(y);
    return y;
}

static void depth_range(float v, float L, float S, float *lo, float *hi)
{
    *lo = *hi = depth_of(v, L, S, 0);
    for (int variant = 1; variant < 4; variant++) {
        float d = depth_of(v, L, S, variant);
        *lo = d < *lo ? d : *lo;
        *hi = d > *hi ? d : *hi;
    }
}

static int plan_depth(const psi_hist_params *p, pixsum_type t, psi_gl_plan *plan)
{
    size_t bins = plan->bins;
    uint64_t k0 = plan->edges[0], kb = plan->edges[bins];
    plan->planes = calloc(bins + 1, sizeof *plan->planes);
    if (!plan->planes)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu plane depths", bins + 1);
    plan->L = 0.0f;
    plan->S = 1.0f;
    plan->down = false;
    if (k0 >= kb) /* no value of the type lies in [lo, hi): every bin is empty */
        return PIXSUM_OK;
    /* Integers: L = the lowest in-range value (every step exact). f32: L = 0,
     * so that t = v * S is an exact power-of-two scaling of v and every
     * in-range float keeps its own depth; for a range below 0, S < 0. A range
     * with in-range values on both sides of 0 cannot be mapped that way. */
    float first = (float)key_value(t, (uint32_t)k0);
    float last = (float)key_value(t, (uint32_t)(kb - 1));
    bool down = false;
    plan->L = first;
    if (t == PIXSUM_F32) {
        if (first < 0.0f && last > 0.0f)
            return psi_fail(PIXSUM_ERR_UNSUPPORTED,
                            "gl.depth: the f32 range [%g, %g) holds values on both sides of 0; "
                            "its float32 depths t = v * 2^k cannot cover both signs in [0, 1] "
                            "(exact for ranges with lo >= 0 or hi <= 0); use gl.perbin",
                            p->lo, p->hi);
        down = last <= 0.0f && first < 0.0f;
        plan->L = 0.0f;
    }
    plan->down = down;
    /* |S|: the power of two that maps the farthest in-range value to [0.25, 0.5). */
    float far_lo, far_hi;
    depth_range(down ? first : last, plan->L, down ? -1.0f : 1.0f, &far_lo, &far_hi);
    /* (integers: far_hi = last - first < 2^16; f32: |farthest value|) */
    if (far_hi > 0.0f) {
        int e;
        (void)frexpf(far_hi, &e);
        if (-e - 1 < FLT_MIN_EXP - 1 || -e - 1 > FLT_MAX_EXP - 1)
            return psi_fail(PIXSUM_ERR_UNSUPPORTED,
                            "gl.depth: the f32 range [%g, %g) spans %g, too wide or too narrow "
                            "to scale into a 32-bit depth buffer; use gl.perbin",
                            p->lo, p->hi, (double)far_hi);
        plan->S = ldexpf(down ? -1.0f : 1.0f, -e - 1);
    }
    for (size_t k = 1; k < bins; k++) {
        uint64_t kk = plan->edges[k];
        /* planes[k] counts the in-range samples below edge k (S > 0) or at or
         * above it (S < 0) */
        if (kk <= k0) {
            plan->planes[k] = down ? PSI_GL_PLANE_INRANGE : 0.0f;
            continue;
        }
        if (kk >= kb) {
            plan->planes[k] = down ? 0.0f : PSI_GL_PLANE_INRANGE;
            continue;
        }
        float v = (float)key_value(t, (uint32_t)kk);
        float below = (float)key_value(t, (uint32_t)(kk - 1));
        float at_lo, at_hi, b_lo, b_hi;
        depth_range(v, plan->L, plan->S, &at_lo, &at_hi);
        depth_range(below, plan->L, plan->S, &b_lo, &b_hi);
        /* the smaller depths (of v below the edge when S > 0) must all lie
         * under the plane, the larger ones on or above it */
        float small_hi = down ? at_hi : b_hi, large_lo = down ? b_lo : at_lo;
        if (!(large_lo >= FLT_MIN) || !(small_hi < large_lo))
            return psi_fail(PIXSUM_ERR_UNSUPPORTED,
                            "gl.depth: f32 bin edge %zu at %.9g cannot be told apart from the "
                            "float below it (%.9g) in a 32-bit depth buffer (depths %.9g and "
                            "%.9g with t = (v - %.9g) * %g); the depth method is exact for "
                            "u8/u16/i16 and for f32 bins on one side of 0 that are wider than "
                            "about 2^-24 of the range; use gl.perbin, fewer bins or another "
                            "range",
                            k, (double)v, (double)below, (double)large_lo, (double)small_hi,
                            (double)plan->L, (double)plan->S);
        plan->planes[k] = large_lo;
    }
    return PIXSUM_OK;
}

/* ---- the plan ---------------------------------------------------------- */

int psi_gl_plan_make(const psi_hist_params *p, pixsum_type type, bool depth,
                     psi_gl_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    if (!psi_gl_type_supported(type))
        return psi_fail(PIXSUM_ERR_UNSUPPORTED,
                        "the GL methods read u8, u16, i16 and f32 images, not %s",
                        pixsum_type_name(type));
    if (p->bins > PSI_GL_MAX_BINS)
        return psi_fail(PIXSUM_ERR_UNSUPPORTED,
                        "the GL methods take at most %zu bins (one pass per bin), %zu asked",
                        PSI_GL_MAX_BINS, p->bins);
    plan->bins = p->bins;
    switch (type) {
    case PIXSUM_U8:
        plan->kind = PSI_GL_KIND_UINT, plan->kmin = 0, plan->kmax = 255;
        break;
    case PIXSUM_U16:
        plan->kind = PSI_GL_KIND_UINT, plan->kmin = 0, plan->kmax = 65535;
        break;
    case PIXSUM_I16:
        plan->kind = PSI_GL_KIND_I16, plan->kmin = 0, plan->kmax = 65535;
        break;
    default:
        plan->kind = PSI_GL_KIND_F32;
        plan->kmin = key_of_f32(-INFINITY);
        plan->kmax = key_of_f32(INFINITY);
        break;
    }
    plan->edges = malloc((p->bins + 1) * sizeof *plan->edges);
    if (!plan->edges)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu bin edges", p->bins + 1);
    /* K_k = smallest key with class >= k; non-decreasing in k, so each search
     * starts at the previous edge. */
    uint64_t from = plan->kmin, past = (uint64_t)plan->kmax + 1;
    for (size_t k = 0; k <= p->bins; k++) {
        uint64_t a = from, b = past; /* answer in [a, b]; class(past) = bins >= k */
        while (a < b) {
            uint64_t mid = a + (b - a) / 2;
            if (key_class(p, type, mid, plan->kmax) >= (int64_t)k)
                b = mid;
            else
                a = mid + 1;
        }
        plan->edges[k] = a;
        from = a;
    }
    if (depth) {
        int st = plan_depth(p, type, plan);
        if (st != PIXSUM_OK) {
            psi_gl_plan_free(plan);
            return st;
        }
    }
    return PIXSUM_OK;
}

void psi_gl_plan_free(psi_gl_plan *plan)
{
    free(plan->edges);
    free(plan->planes);
    plan->edges = NULL;
    plan->planes = NULL;
}

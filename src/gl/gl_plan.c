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
        return (int64_t)p->b.bins;
    size_t c = psi_hist_bin(p, key_value(t, (uint32_t)k));
    if (c == p->b.bins + PSI_HIST_BELOW)
        return -1;
    if (c >= p->b.bins) /* ABOVE; NaN cannot occur for keys in [kmin, kmax] */
        return (int64_t)p->b.bins;
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

/* The power of two S (sign: down) that maps the in-range value farthest from
 * L to a depth in [0.25, 0.5). */
static int segment_scale(const psi_hist_params *p, float far, float L, bool down, float *S)
{
    float lo, hi;
    depth_range(far, L, down ? -1.0f : 1.0f, &lo, &hi);
    *S = down ? -1.0f : 1.0f;
    if (!(hi > 0.0f))
        return PIXSUM_OK; /* one value only: t = 0 */
    int e;
    (void)frexpf(hi, &e);
    if (-e - 1 < FLT_MIN_EXP - 1 || -e - 1 > FLT_MAX_EXP - 1)
        return psi_fail(PIXSUM_ERR_UNSUPPORTED,
                        "gl.depth: the f32 range [%g, %g) spans %g, too wide or too narrow to "
                        "scale into a 32-bit depth buffer; use gl.perbin",
                        p->b.lo, p->b.hi, (double)hi);
    *S = ldexpf(down ? -1.0f : 1.0f, -e - 1);
    return PIXSUM_OK;
}

typedef struct edge_plane {
    float depth;
    size_t k;
} edge_plane;

/* Back to front: larger depth first, then by edge. */
static int cmp_plane(const void *a, const void *b)
{
    const edge_plane *x = a, *y = b;
    if (x->depth != y->depth)
        return x->depth > y->depth ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

static int plan_depth(const psi_hist_params *p, pixsum_type t, psi_gl_plan *plan)
{
    size_t bins = plan->bins;
    uint64_t k0 = plan->edges[0], kb = plan->edges[bins];
    bool f32 = t == PIXSUM_F32;
    /* passes: up to 5 fixed planes + one per edge */
    plan->pass_depth = calloc(bins + 5, sizeof *plan->pass_depth);
    plan->edge_pass = calloc(bins + 1, sizeof *plan->edge_pass);
    edge_plane *ep = calloc(bins + 1, sizeof *ep);
    float *edge_depth = calloc(bins + 1, sizeof *edge_depth);
    int *edge_seg = calloc(bins + 1, sizeof *edge_seg);
    int st = PIXSUM_OK;
    if (!plan->pass_depth || !plan->edge_pass || !ep || !edge_depth || !edge_seg) {
        st = psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu plane depths", bins + 5);
        goto out;
    }
    /* Segments. Integers: one, L = the lowest in-range value (every step exact).
     * f32: L = 0, so that t = v * S is an exact power-of-two scaling; values
     * below 0 get S < 0; a range holding both signs gets one segment each. */
    const uint32_t zero_key = 0x7FFFFFFFu; /* key of -0.0: the first key >= 0 */
    plan->nseg = 1;
    plan->seg[0] = (psi_gl_segment){(uint32_t)k0, (uint32_t)k0, 0.0f, 1.0f, 0, 0};
    bool split = false;
    if (k0 < kb) {
        float first = (float)key_value(t, (uint32_t)k0);
        float last = (float)key_value(t, (uint32_t)(kb - 1));
        psi_gl_segment *s0 = &plan->seg[0];
        s0->k_b = (uint32_t)kb;
        if (!f32) {
            s0->L = first;
            st = segment_scale(p, last, first, false, &s0->S);
        } else if (first < 0.0f && last > 0.0f) {
            split = true;
            plan->nseg = 2;
            s0->k_b = zero_key;
            plan->seg[1] = (psi_gl_segment){zero_key, (uint32_t)kb, 0.0f, 1.0f, 0, 0};
            st = segment_scale(p, first, 0.0f, true, &s0->S);
            if (st == PIXSUM_OK)
                st = segment_scale(p, last, 0.0f, false, &plan->seg[1].S);
        } else {
            bool down = first < 0.0f; /* then last <= 0 */
            st = segment_scale(p, down ? first : last, 0.0f, down, &s0->S);
        }
        if (st != PIXSUM_OK)
            goto out;
    }
    /* The plane of each edge, checked: the smaller depths (of the values below
     * the edge when S > 0) must all lie under the plane, the others on or
     * above it, however the GPU rounds. */
    for (size_t k = 1; k < bins; k++) {
        uint64_t kk = plan->edges[k];
        if (kk <= k0) {
            plan->edge_pass[k] = PSI_GL_EDGE_NONE;
            continue;
        }
        if (kk >= kb) {
            plan->edge_pass[k] = PSI_GL_EDGE_ALL;
            continue;
        }
        if (split && kk == zero_key) {
            plan->edge_pass[k] = PSI_GL_EDGE_SPLIT;
            continue;
        }
        int sg = split && kk > zero_key ? 1 : 0;
        const psi_gl_segment *seg = &plan->seg[sg];
        bool down = seg->S < 0.0f;
        float v = (float)key_value(t, (uint32_t)kk);
        float below = (float)key_value(t, (uint32_t)(kk - 1));
        float at_lo, at_hi, b_lo, b_hi;
        depth_range(v, seg->L, seg->S, &at_lo, &at_hi);
        depth_range(below, seg->L, seg->S, &b_lo, &b_hi);
        float small_hi = down ? at_hi : b_hi, large_lo = down ? b_lo : at_lo;
        if (!(large_lo >= FLT_MIN) || !(small_hi < large_lo)) {
            st = psi_fail(PIXSUM_ERR_UNSUPPORTED,
                          "gl.depth: f32 bin edge %zu at %.9g cannot be told apart from the "
                          "float below it (%.9g) in a 32-bit depth buffer (depths %.9g and "
                          "%.9g with t = v * %g); edges among denormal floats or scaled below "
                          "2^-126 are refused; use gl.perbin",
                          k, (double)v, (double)below, (double)large_lo, (double)small_hi,
                          (double)seg->S);
            goto out;
        }
        edge_depth[k] = large_lo;
        edge_seg[k] = sg;
    }
    /* Passes of segment 0: the fixed planes, then its edges; then segment 1's. */
    size_t n = 0;
    plan->pass_nan = plan->pass_part = SIZE_MAX;
    if (f32)
        plan->pass_nan = n, plan->pass_depth[n++] = PSI_GL_PLANE_NAN;
    plan->pass_above = n, plan->pass_depth[n++] = PSI_GL_PLANE_ABOVE;
    plan->pass_below = n, plan->pass_depth[n++] = PSI_GL_PLANE_BELOW;
    plan->pass_inrange = n, plan->pass_depth[n++] = PSI_GL_PLANE_INRANGE;
    if (split)
        plan->pass_part = n, plan->pass_depth[n++] = PSI_GL_PLANE_PART;
    for (int sg = 0; sg < plan->nseg; sg++) {
        psi_gl_segment *seg = &plan->seg[sg];
        seg->first_pass = sg == 0 ? 0 : n;
        size_t m = 0;
        for (size_t k = 1; k < bins; k++)
            if (plan->edge_pass[k] >= 0 && edge_seg[k] == sg)
                ep[m++] = (edge_plane){edge_depth[k], k};
        qsort(ep, m, sizeof *ep, cmp_plane);
        for (size_t i = 0; i < m; i++) {
            plan->edge_pass[ep[i].k] = (long)n;
            plan->pass_depth[n++] = ep[i].depth;
        }
        seg->npasses = n - seg->first_pass;
    }
    plan->npasses = n;
out:
    free(ep);
    free(edge_depth);
    free(edge_seg);
    return st;
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
    if (p->b.bins > PSI_GL_MAX_BINS)
        return psi_fail(PIXSUM_ERR_UNSUPPORTED,
                        "the GL methods take at most %zu bins (one pass per bin), %zu asked",
                        PSI_GL_MAX_BINS, (size_t)p->b.bins);
    plan->bins = p->b.bins;
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
    plan->edges = malloc((p->b.bins + 1) * sizeof *plan->edges);
    if (!plan->edges)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu bin edges",
                        (size_t)p->b.bins + 1);
    /* K_k = smallest key with class >= k; non-decreasing in k, so each search
     * starts at the previous edge. */
    uint64_t from = plan->kmin, past = (uint64_t)plan->kmax + 1;
    for (size_t k = 0; k <= p->b.bins; k++) {
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
    free(plan->pass_depth);
    free(plan->edge_pass);
    plan->edges = NULL;
    plan->pass_depth = NULL;
    plan->edge_pass = NULL;
}

/*
 * gl_plan.h - the CPU side of the GL histogram methods: sample keys, bin edges
 * and (for gl.depth) the depth values, worked out so that the GPU's counts
 * equal the library's bin formula (pixsum.h section 8) exactly.
 *
 * Keys. Each sample is read on the GPU as an unsigned 32-bit key that orders
 * the samples like their values: u8/u16 the value, i16 the value + 32768, f32
 * the IEEE bits with the sign flipped (negative: all bits inverted), so that
 * integer comparisons of keys are comparisons of values. The keys of non-NaN
 * samples fill [kmin, kmax]; f32 NaNs lie outside.
 *
 * Edges. The bin formula is non-decreasing in the value, so bin k (or below /
 * above) holds exactly the samples whose key lies in [K_k, K_{k+1}), where K_k
 * is the smallest key whose class is >= k (class: -1 below, 0..bins-1 the bin,
 * bins above; K_0 is the first in-range key, K_bins the first above). The
 * edges come from a binary search with psi_hist_bin() itself, so they are the
 * formula's own, double rounding included. gl.perbin compares keys with them:
 * exact for every type and range.
 *
 * Depth (gl.depth, paper 002). An in-range sample gets the depth
 * t(v) = (v - L) * S in float32, S a power of two that puts t in [0, 0.5];
 * below / above / NaN samples get the fixed depths 0.625 / 0.75 / 0.875 and
 * unselected (masked) pixels keep the cleared 1.0. A plane at depth P drawn
 * with GL_GREATER counts the pixels whose depth is < P. Plane k (1 <= k <
 * bins) is drawn at P_k = t(K_k): it counts the samples with key < K_k
 * exactly when t separates K_k from the value just below it.
 *
 * Precision limit of the 32-bit float depth buffer (24-bit significand):
 *   u8, u16, i16: L = the lowest in-range value, so v - L is an integer below
 *     2^16 and every step is exact: any bin count up to PSI_GL_MAX_BINS.
 *   f32: L = 0, so t = v * S is v with its exponent shifted: exact, and every
 *     in-range float keeps a depth of its own (for values below 0, S < 0).
 *     One depth range [0, 1] cannot hold both signs at full float resolution,
 *     so a range with in-range values on both sides of 0 is counted in two
 *     depth passes (segments): the negative values (S < 0), then the others
 *     (S > 0), each with the planes of its own edges. Every f32 range is
 *     therefore taken with any bin count up to PSI_GL_MAX_BINS.
 *   The plan still checks every edge, under IEEE rounding and under
 *   flush-to-zero (the two ways a GPU may evaluate t), and refuses a request
 *   whose edge k is not separated or whose plane depth is not a normal float:
 *   f32 ranges with edges among the denormal floats (|edge| < 2^-126, which a
 *   flush-to-zero GPU would merge) or whose scaled edges underflow.
 */
#ifndef PIXSUM_GL_PLAN_H
#define PIXSUM_GL_PLAN_H

#include "../hist/hist.h"

/* Largest bin count the GL methods take: each bin is one full-image pass. */
#define PSI_GL_MAX_BINS ((size_t)65536)

/* Fixed depths of gl.depth (see above); planes between the levels. */
#define PSI_GL_PLANE_INRANGE 0.5625f /* counts all in-range samples */
#define PSI_GL_LEVEL_BELOW 0.625f
#define PSI_GL_PLANE_BELOW 0.6875f /* ... plus the below ones */
#define PSI_GL_LEVEL_ABOVE 0.75f
#define PSI_GL_PLANE_ABOVE 0.8125f /* ... plus the above ones */
#define PSI_GL_LEVEL_NAN 0.875f
#define PSI_GL_PLANE_NAN 0.9375f /* ... plus the NaNs (f32 only) */
#define PSI_GL_PLANE_PART 0.515625f /* in-range samples of the depth pass's segment */
#define PSI_GL_LEVEL_OTHER 0.53125f /* in-range samples of the other segment */

/* How the shader reads a sample (texture format and key). */
typedef enum psi_gl_kind {
    PSI_GL_KIND_UINT = 0, /* u8, u16: usampler, key = value */
    PSI_GL_KIND_I16 = 1,  /* i16: isampler, key = value + 32768 */
    PSI_GL_KIND_F32 = 2,  /* f32: usampler on the raw bits, ordered key */
    PSI_GL_KINDS = 3
} psi_gl_kind;

/* gl.depth: one depth pass (the image written as depths) and the planes drawn
 * after it. The keys [k_a, k_b) get t(v) = (v - L) * S; other in-range keys
 * PSI_GL_LEVEL_OTHER. */
typedef struct psi_gl_segment {
    uint32_t k_a, k_b;
    float L, S;              /* S < 0: t decreases with the value */
    size_t first_pass;       /* its planes: passes [first_pass, first_pass + npasses) */
    size_t npasses;
} psi_gl_segment;

/* edge_pass[] codes for edges that need no plane */
enum { PSI_GL_EDGE_NONE = -1,  /* no in-range sample lies below the edge */
       PSI_GL_EDGE_ALL = -2,   /* every in-range sample lies below it */
       PSI_GL_EDGE_SPLIT = -3  /* the edge is 0 where two segments meet */ };

typedef struct psi_gl_plan {
    psi_gl_kind kind;
    size_t bins;
    uint32_t kmin, kmax;  /* keys of the non-NaN values, inclusive */
    uint64_t *edges;      /* bins + 1 keys K_0..K_bins; kmax + 1 = past the last */
    /* gl.depth only (depth == true at creation): */
    int nseg;                 /* 1, or 2 for an f32 range holding both signs */
    psi_gl_segment seg[2];
    size_t npasses;           /* planes of all segments, each segment's back to front */
    float *pass_depth;
    long *edge_pass;          /* bins + 1; [k] for 1 <= k < bins: the plane counting
                                 edge k (below it; S < 0: at or above it) or PSI_GL_EDGE_* */
    size_t pass_nan, pass_above, pass_below, pass_inrange, pass_part; /* fixed planes
                                 of segment 0; SIZE_MAX where absent */
} psi_gl_plan;

/* True for the input types the GL methods read (u8 u16 i16 f32). */
bool psi_gl_type_supported(pixsum_type t);

/* Works out the keys and edges of histogram p for `type`, and with `depth`
 * the depth map and plane depths of gl.depth. Returns PIXSUM_OK,
 * PIXSUM_ERR_UNSUPPORTED (type, bins above PSI_GL_MAX_BINS, or an f32 edge the
 * depth buffer cannot separate: the detail says which) or
 * PIXSUM_ERR_NO_MEMORY. On success free with psi_gl_plan_free(). */
int psi_gl_plan_make(const psi_hist_params *p, pixsum_type type, bool depth,
                     psi_gl_plan *plan);

/* Frees the plan's arrays (the plan itself is the caller's). */
void psi_gl_plan_free(psi_gl_plan *plan);

#endif /* PIXSUM_GL_PLAN_H */

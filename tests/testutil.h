/*
 * testutil.h - helpers shared by pixsum's C tests:
 *   - a seeded pseudo-random generator (the seed is printed; PIXSUM_TEST_SEED=N
 *     replays a run),
 *   - test images of every pixel type with extreme values, in views with padded
 *     or negative (bottom-up) row strides, as regions (ROIs) of a larger buffer,
 *     with 1-4 channels, 2-D or 3-D, inside a guarded allocation so that writes
 *     outside the view can be detected,
 *   - a naive reference integral computed from the definition (every entry an
 *     independent sum, exact 128-bit integers for integer inputs, compensated
 *     long double sums for float inputs), and the tilted integral likewise,
 *   - comparison of a table produced by the library with the reference
 *     (bit-exact for integer tables, a stated relative bound for float tables),
 *   - the list of methods to run a check with: "auto" plus every registered
 *     method that supports the operation and is available in this process, so
 *     methods added later (SIMD, threads, GPU) are checked automatically.
 *
 * None of these helpers calls the library's kernels; the references read pixels
 * directly through the documented memory layout (see pixsum.h).
 */
#ifndef PIXSUM_TESTUTIL_H
#define PIXSUM_TESTUTIL_H

#include "pixsum.h"

#include <stddef.h>
#include <stdint.h>

/* ---- random numbers ----------------------------------------------------- */

/* Reads PIXSUM_TEST_SEED (or draws a seed from the clock), seeds the global
 * generator and prints "name: seed N (replay with PIXSUM_TEST_SEED=N)". Call
 * once at the start of main(). PIXSUM_TEST_FILTER=pattern runs only the cmocka
 * tests whose names match (cmocka_set_test_filter: '*' and '?' wildcards).
 * Returns the seed. */
uint64_t tu_init(const char *name);

/* The seed tu_init() chose. */
uint64_t tu_seed(void);

/* A generator state (splitmix64); threads each use their own. */
typedef struct tu_rng {
    uint64_t s;
} tu_rng;

/* The global generator seeded by tu_init(). */
tu_rng *tu_global_rng(void);

uint64_t tu_next(tu_rng *r);
/* Uniform in [0, n) (n > 0). */
uint64_t tu_below(tu_rng *r, uint64_t n);
/* Uniform in [lo, hi] (inclusive). */
size_t tu_between(tu_rng *r, size_t lo, size_t hi);
/* Uniform double in [0, 1). */
double tu_unit(tu_rng *r);

/* A random image dimension biased towards the cases that break code: 1, 2,
 * small primes, odd numbers, and sizes just around powers of two; at most max. */
size_t tu_dim(tu_rng *r, size_t max);

/* ---- images ------------------------------------------------------------- */

/* How a test image is placed in memory. All zero = packed, top-down, no ROI. */
typedef struct tu_layout {
    size_t row_pad;   /* extra elements (of the view's type) after each row */
    size_t slice_pad; /* extra rows after each slice (3-D) */
    int bottom_up;    /* 1: rows stored last-to-first (negative row stride) */
    size_t margin;    /* the view is an ROI with this many pixels/rows/slices of
                         parent image on every side (slices only for 3-D) */
} tu_layout;

/* Draws a random layout (padding, bottom-up, ROI margin) for a test case. */
tu_layout tu_random_layout(tu_rng *r);

/* An image (or table) in a guarded allocation. `view` describes the pixels under
 * test; `block` is the whole allocation (parent image, padding and guard bytes),
 * filled with a known byte pattern outside the view. */
typedef struct tu_image {
    pixsum_view view;
    unsigned char *block;
    size_t block_bytes;
    unsigned char *snapshot; /* copy of block taken by tu_image_snapshot() */
} tu_image;

/* Allocates an image of `type` and the given shape and layout (NULL = packed).
 * Every byte of the block is set to 0xA5 (so tables start out as garbage).
 * Successive images start 0, 16, 32 and 48 bytes past a 64-byte boundary, in
 * turn. Returns 0, or -1 if the allocation fails. */
int tu_image_alloc(tu_image *img, pixsum_type type, size_t width, size_t height,
                   size_t depth, size_t channels, const tu_layout *layout);

void tu_image_free(tu_image *img);

/* Remembers the current content of the whole block. */
void tu_image_snapshot(tu_image *img);

/* Returns 0 if no byte outside the view's elements changed since the snapshot
 * (when `inside_too` is 1: no byte at all changed), else prints the first changed
 * offset and returns -1. */
int tu_image_check_untouched(const tu_image *img, int inside_too, const char *what);

/* Address of element (x, y, z, channel c) of a view, from the documented layout. */
void *tu_elem(const pixsum_view *v, size_t x, size_t y, size_t z, size_t c);

/* Sample value as an exact integer (integer types) or as long double. */
int64_t tu_get_i(const pixsum_view *v, size_t x, size_t y, size_t z, size_t c);
long double tu_get_f(const pixsum_view *v, size_t x, size_t y, size_t z, size_t c);
/* Stores an integer (converted to the view's type; floats too). */
void tu_set_i(const pixsum_view *v, size_t x, size_t y, size_t z, size_t c, int64_t val);
void tu_set_f(const pixsum_view *v, size_t x, size_t y, size_t z, size_t c, double val);

/* Content of a random fill. */
typedef enum tu_fill {
    TU_FILL_MIXED, /* uniform over the type's range with ~1/4 extremes (min, max,
                      0, and for floats large and tiny magnitudes, subnormals) */
    TU_FILL_MAX,   /* every sample = the type's maximum (floats: 1) */
    TU_FILL_MIN,   /* every sample = the type's minimum (floats: -1) */
    TU_FILL_SMALL  /* small non-negative integers 0..15, also for floats */
} tu_fill;

void tu_fill_random(tu_rng *r, const pixsum_view *v, tu_fill fill);

/* Largest and smallest value of an integer input type. */
int64_t tu_type_max(pixsum_type t);
int64_t tu_type_min(pixsum_type t);

/* ---- references --------------------------------------------------------- */

__extension__ typedef __int128 tu_i128;
__extension__ typedef unsigned __int128 tu_u128;

/* A reference table: entry (x, y, z, c) of a width x height x depth table with
 * `channels` channels. For integer inputs `iv` holds the exact sums; for float
 * inputs `fv` holds compensated long double sums. `mag` holds the sum of the
 * absolute values of the terms and `terms` their number (used for the float
 * error bound). */
typedef struct tu_ref {
    size_t width, height, depth, channels;
    int exact; /* 1: integer input, iv valid */
    tu_i128 *iv;
    long double *fv;
    long double *mag;
    double *terms;
} tu_ref;

/* Reference inclusive integral (squared = 1: of the squares) of a checked view,
 * 2-D or 3-D, every entry summed independently from the definition. Cost
 * O(N^2) per channel: keep images small (a few thousand pixels). Returns 0 or -1
 * (no memory). */
int tu_ref_integral(tu_ref *ref, const pixsum_view *in, int squared);

/* Same table by a running-sum recurrence in the same exact arithmetic, for
 * images too large for the definition; tu_ref_integral() validates it. */
int tu_ref_integral_fast(tu_ref *ref, const pixsum_view *in, int squared);

/* Reference 45-degree tilted integral ((W+1) x (H+1), see pixsum.h), every
 * entry summed independently from the definition. */
int tu_ref_tilted(tu_ref *ref, const pixsum_view *in);

void tu_ref_free(tu_ref *ref);

/* Compares a table produced by the library with a reference. `table` is the
 * full output view; `padded` says whether it has the leading zero row/column
 * (and slice, for 3-D); for the tilted table pass padded = 0 and a reference of
 * the table's own shape. Integer tables must equal the exact value reduced
 * modulo 2^bits of the type (without wrap the exact value must also fit, else
 * the call should have been refused). Float tables must satisfy
 *   |out - ref| <= 8 * eps(type) * terms * mag + terms * min_normal(type)
 * i.e. the first-order bound of any summation order (including recurrences
 * with subtraction, whose errors add up over all earlier entries), which is far
 * below any logic error. Returns 0, or prints the first mismatch (with `what`
 * and the seed) and returns -1. */
int tu_check_table(const pixsum_view *table, int padded, const tu_ref *ref, int wrap,
                   const char *what);

/* ---- methods ------------------------------------------------------------ */

/* Fills ids[] with 0 ("auto") and the id of every registered, available method
 * whose ops include every bit of `ops` (a pixsum_op set); returns how many (at
 * most max). The environment variable PIXSUM_TEST_METHODS (comma-separated name
 * prefixes, e.g. "serial.,auto") restricts the list, to debug one method. The
 * OpenGL methods (tested by test_gl_hist) are listed only when it names them. */
size_t tu_methods_for(unsigned ops, int *ids, size_t max);

/* Name of method id (0 = "auto"). */
const char *tu_method_name(int id);

/* 1 for the methods every request of their operations must succeed with (the
 * serial reference methods and "auto"); other methods may answer
 * PIXSUM_ERR_UNSUPPORTED for a job outside their supports(). */
int tu_method_must_support(int id);

/* Every (input, output) pair the API documents as supported for plain
 * (squared = 0) or squared (squared = 1) tables; returns how many were written
 * to in[] / out[] (at most max). */
size_t tu_supported_pairs(int squared, pixsum_type *in, pixsum_type *out, size_t max);

/* ---- histogram bins from the definition -------------------------------- */

/* Edge i (0..bins) of `bins` bins over [lo, hi) as pixsum.h defines them:
 * lo + i * ((hi - lo) / bins), each operation rounded once (no fused
 * multiply-add), and hi for i == bins. Written here from the definition, not
 * with the library's code. */
double tu_hist_edge(size_t bins, double lo, double hi, size_t i);

/* The bin of v decided from the edges alone: the largest i with
 * edge(i) <= v, found by bisection, for lo <= v < hi; SIZE_MAX for NaN,
 * v < lo or v >= hi. */
size_t tu_hist_bin(double v, size_t bins, double lo, double hi);

#endif /* PIXSUM_TESTUTIL_H */

/*
 * kernels.h - the per-row building blocks of CPU integral images, one set per
 * (input type, output type) pair, and the row driver that turns them into a
 * 2-D or 3-D table. The scalar set (scalar_kernels.c) is the reference every
 * faster set is tested against.
 *
 * Arithmetic: integer tables accumulate in the unsigned type of the output's
 * width (modular, so wrap mode is exact and never undefined); f32 tables in
 * float; f64 tables in double.
 */
#ifndef PIXSUM_CPU_KERNELS_H
#define PIXSUM_CPU_KERNELS_H

#include "../internal.h"

/* out[i] = (per-channel inclusive prefix of in, or of in^2)[i] + prev[i], over
 * `width` pixels of `channels` interleaved samples; prev == NULL means zeros.
 * This is the single pass of paper 001 (2wh additions). */
typedef void (*psi_row_fn)(const void *in, void *out, const void *prev, size_t width,
                           size_t channels);

/* out[i] += a[i] - b[i] for n samples (b == NULL: out[i] += a[i]). */
typedef void (*psi_add_fn)(void *out, const void *a, const void *b, size_t n);

typedef struct psi_row_kernels {
    psi_row_fn row_sum;   /* 2wh single pass, plain values */
    psi_row_fn row_sq;    /* 2wh single pass, squared values */
    psi_row_fn cell3_sum; /* 3wh recurrence: v + left + up - upleft */
    psi_row_fn cell3_sq;
} psi_row_kernels;

/* The scalar kernels of a supported pair (NULL for an unsupported pair). */
const psi_row_kernels *psi_scalar_kernels(pixsum_type in, pixsum_type out);

/* The scalar add for an output type (NULL for non-table types). */
psi_add_fn psi_scalar_add(pixsum_type out);

/* In-place running sums along a row of w pixels of ch interleaved samples. */
typedef void (*psi_running_fn)(void *row, size_t w, size_t ch);

/* The running sum of a table type (u32, u64 / i64, f32; f64 otherwise). */
psi_running_fn psi_scalar_running(pixsum_type t);

/* Fills job->out and/or job->out_sq (2-D or 3-D) row by row in one pass over
 * the input: row y of slice z is rowfn(in row, out row, out row y-1), and for
 * z > 0 the previous slice is folded in with the same row still in cache:
 * out(z,y) += out(z-1,y) - out(z-1,y-1). sum_fn/sq_fn are used for the plain
 * and squared tables. Rows [y0, y1) of every slice only, so threaded methods can
 * share it; y0 > 0 requires row y0-1 already final. Returns PIXSUM_OK. */
int psi_rows_driver(const psi_job *job, psi_row_fn sum_fn, psi_row_fn sq_fn, size_t y0,
                    size_t y1);

#endif /* PIXSUM_CPU_KERNELS_H */

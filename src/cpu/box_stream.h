/*
 * box_stream.h - the resolved request of pixsum_box_filter() (src/box_filter.c
 * validates and fills it) and the streamed box-filter kernels that run it
 * (src/cpu/box_stream*.c, one file per ISA compiled from box_stream_kernel.h).
 */
#ifndef PIXSUM_CPU_BOX_STREAM_H
#define PIXSUM_CPU_BOX_STREAM_H

#include "../internal.h"

/* Accumulator of the running sums. */
typedef enum psi_box_acc {
    PSI_BOX_ACC_U32 = 0, /* integer inputs whose window sum fits 32 bits (modular) */
    PSI_BOX_ACC_U64 = 1, /* other integer inputs (modular 64-bit; squares too) */
    PSI_BOX_ACC_F64 = 2  /* float inputs, and integer windows too wide for u64 squares */
} psi_box_acc;

struct psi_local_plan; /* src/cpu/box_local.h: a per-pixel function of the moments */

/* A validated box filter request, passed to the method as psi_job.extra
 * (psi_job.in and psi_job.out are the checked views). */
typedef struct psi_box_plan {
    pixsum_box_filter_spec spec;
    size_t ax, ay;      /* the window of (x, y) starts at column x - ax, row y - ay */
    size_t n;           /* kw x kh */
    psi_box_acc acc;
    int squares;        /* var/std: sums of squares too */
    int is_signed;      /* signed integer input */
    uint64_t cval_int;  /* constant border value, two's complement (integer inputs) */
    /* NULL for a box filter. Else the local operation (threshold,
     * normalisation) applied to each output row's window sums and sums of
     * squares as the row is produced; psi_job.out then only gives the output
     * shape (the outputs are the local plan's views). */
    const struct psi_local_plan *local;
} psi_box_plan;

/* The kernel of one ISA: output rows [y0, y1) of a box filter job
 * (job->extra is a psi_box_plan); a band starts its running sums from the
 * kh input rows of its first window. Returns PIXSUM_OK or
 * PIXSUM_ERR_NO_MEMORY (before writing anything). */
int psi_box_stream_scalar(const psi_job *job, size_t y0, size_t y1);
int psi_box_stream_avx2(const psi_job *job, size_t y0, size_t y1);
int psi_box_stream_avx512(const psi_job *job, size_t y0, size_t y1);

#endif /* PIXSUM_CPU_BOX_STREAM_H */

/*
 * cuda_plan.h - what the host side of the CUDA backend (cuda_host.c, C) hands
 * to the kernel launchers (sat_*.cu, CUDA C): one validated table request over
 * device memory, cut into "planes".
 *
 * A plane is one channel of one slice: plane p = z * channels + c starts at
 *   base + z * slice_stride + c * element_size
 * and its sample (x, y) lies x * channels elements and y * row_stride bytes
 * further. Every plane gets its own 2-D inclusive table; for a 3-D volume the
 * launcher then adds the slices up (accumulate_z). Rows [y0, y1) only may be
 * computed: with y0 > 0 the table row y0 - 1 must already be final in `out`
 * and is carried in, so the host can pipeline horizontal strips.
 *
 * Workspace: a device block that starts with a psi_cu_header (zeroed once when
 * allocated) followed by method-specific flags and values. Kernels that hand
 * out tile numbers take them from header.ticket; the last block of a launch
 * resets the ticket and advances header.epoch, and every published flag
 * carries the epoch, so flags of an earlier launch never look valid.
 */
#ifndef PIXSUM_CUDA_PLAN_H
#define PIXSUM_CUDA_PLAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Accumulator (and output bit pattern) kinds: i64 tables use u64 modular
 * arithmetic, which gives the same bits. */
typedef enum psi_cu_acc { PSI_CU_U32 = 0, PSI_CU_U64 = 1, PSI_CU_F32 = 2, PSI_CU_F64 = 3 } psi_cu_acc;

/* Input kinds (pixsum_type values are mapped by the host). */
typedef enum psi_cu_in {
    PSI_CU_IN_U8 = 0,
    PSI_CU_IN_U16 = 1,
    PSI_CU_IN_I16 = 2,
    PSI_CU_IN_I32 = 3,
    PSI_CU_IN_U32 = 4,
    PSI_CU_IN_F32 = 5,
    PSI_CU_IN_F64 = 6
} psi_cu_in;

/* The CUDA methods (index into the method table of cuda_host.c). */
typedef enum psi_cu_method {
    PSI_CU_LOOKBACK = 0,   /* single pass, decoupled look-back on both axes */
    PSI_CU_ROWTHREAD = 1,  /* paper 000 / 003 GPUv1: a thread per row, then per column */
    PSI_CU_BLOCKSCAN = 2,  /* paper 003 GPUv2: block prefix per row + transpose, twice */
    PSI_CU_NAIVE004 = 3,   /* paper 004: naive row kernel + tiled transpose */
    PSI_CU_KOGGE004 = 4,   /* paper 004: hierarchical Kogge-Stone row scan + transpose */
    PSI_CU_SINGLE004 = 5,  /* paper 004: single-pass row scan, dynamic ids, flags */
    PSI_CU_METHOD_COUNT = 6
} psi_cu_method;

/* Code paths a test forces (pixsum_cuda_set_force(), the experimental API of
 * pixsum_cuda.h); all zero: the automatic choice. Each is a path the
 * automatic choice takes for some image, type pair or device, so a forced
 * call computes a correct table (integer tables the same bits; float tables
 * may round differently, within the documented bound). lb_choose() in
 * sat_lookback.cu ignores a value the plan's type pair or shape cannot take. */
typedef struct psi_cu_force {
    int kernel;        /* cuda.lookback: 0 auto, 1 register kernel, 2 staged kernel */
    int rows;          /* staged kernel: rows per warp, 0 auto (8-bit input 16 or 8,
                          16-bit and f32 input 8 or 4) */
    int tile_width;    /* register kernel: 0 auto, 256, or 128 where its aggregate-only
                          look-backs fit */
    int chained;       /* register kernel: chained look-backs on small planes too */
    int no_pdl;        /* no programmatic dependent launch (as before sm_90) */
    int no_async_copy; /* staged kernel: tile loaded through registers (as before sm_80) */
} psi_cu_force;

typedef struct psi_cu_header {
    unsigned long long ticket; /* next tile number of the running launch */
    unsigned long long done;   /* blocks of the running launch that finished */
    unsigned long long epoch;  /* launches completed on this workspace */
    unsigned long long pad[5];
} psi_cu_header;

typedef struct psi_cu_plan {
    const void *in;
    void *out;
    psi_cu_in tin;
    psi_cu_acc acc;
    int squared;           /* table of in^2 */
    int accumulate_z;      /* 3-D volume: add slices after the per-plane tables */
    long long width;       /* pixels per row */
    long long height;      /* rows per slice */
    long long depth;       /* slices (images of a batch, or of a volume) */
    long long channels;    /* 1..4 */
    long long in_row, in_slice;   /* byte strides of the input */
    long long out_row, out_slice; /* byte strides of the output */
    long long y0, y1;      /* rows to compute (0, height for all) */
    int section_size, tile_dim, block_rows; /* paper-004 tuning (resolved) */
    psi_cu_force force;    /* cuda.lookback: forced code paths (tests) */
    void *ws;              /* workspace, starts with a psi_cu_header */
    size_t ws_bytes;
    void *stream;          /* cudaStream_t */
} psi_cu_plan;

/* Bytes of workspace method m needs for plan p (header included). */
size_t psi_cu_workspace_bytes(psi_cu_method m, const psi_cu_plan *p);

/* Enqueues method m for plan p on p->stream. Returns 0 or the cudaError_t of
 * the failing launch (the caller turns it into PIXSUM_ERR_CUDA). */
int psi_cu_launch(psi_cu_method m, const psi_cu_plan *p);

/* Size in bytes of one accumulator / input element. */
size_t psi_cu_acc_size(psi_cu_acc a);
size_t psi_cu_in_size(psi_cu_in t);

#ifdef __cplusplus
}
#endif

#endif /* PIXSUM_CUDA_PLAN_H */

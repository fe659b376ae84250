/*
 * cuda_threshold.h - the local operations' kernel (threshold.cu) as the host
 * side (cuda_threshold.c) sees it: one validated request over device memory,
 * passed by value, and its launch.
 */
#ifndef PIXSUM_CUDA_THRESHOLD_H
#define PIXSUM_CUDA_THRESHOLD_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Widest window the kernel takes: its shared memory holds 4 x (128 + kw - 1)
 * 8-byte sums. */
#define PSI_CU_LOCAL_MAX_KW 1024

/* A request resolved by psi_threshold_prepare() / psi_normalize_prepare().
 * Values of pixsum.h (pixsum_type, pixsum_border) and local_rule.h. */
typedef struct psi_cu_local_job {
    const void *in;          /* image row y at in + y * in_row */
    ptrdiff_t in_row;
    void *map;               /* f32 / f64 rows (threshold map or normalised image), or NULL */
    ptrdiff_t map_row;
    int map_type;
    void *mask;              /* u8 mask rows, or NULL */
    ptrdiff_t mask_row;
    int in_type, flt, is_signed, border, channels, kind;
    long long width, height, out_width, out_height;
    long long kw, kh, ax, ay; /* window of (x, y): columns from x - ax, rows from y - ay */
    long long cx, cy;         /* centre sample of (x, y): (x + cx, y + cy) */
    unsigned long long n;     /* kw x kh */
    unsigned long long cval;  /* constant border value (integer inputs, two's complement) */
    double cval_f;            /* the same for f64 sums */
    double a, r, eps;         /* the rule's parameters (psi_local_plan) */
    unsigned char fg;
} psi_cu_local_job;

/* Enqueues the kernel on `stream` (no synchronisation). Returns 0 or the
 * cudaError_t of the attribute call or the launch. */
int psi_cu_local(const psi_cu_local_job *job, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* PIXSUM_CUDA_THRESHOLD_H */

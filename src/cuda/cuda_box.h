/*
 * cuda_box.h - the streamed box-filter kernel (box_filter.cu) as the host
 * side (cuda_box.c) sees it: one validated request over device memory,
 * the tile geometry chosen for it, and the launch.
 */
#ifndef PIXSUM_CUDA_BOX_H
#define PIXSUM_CUDA_BOX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A request resolved by psi_box_filter_prepare(): plain values only, so the
 * kernel receives it by value. Types and enums carry the values of pixsum.h
 * (pixsum_type, pixsum_box_stat, pixsum_border) and of src/cpu/box_stream.h
 * (psi_box_acc). */
typedef struct psi_cu_box_job {
    const void *in;         /* image row y at in + y * in_row */
    ptrdiff_t in_row;
    void *out;              /* output row y at out + y * out_row */
    ptrdiff_t out_row;
    long long images;       /* a batch: image z at in + z * in_slice, out + z * out_slice */
    ptrdiff_t in_slice, out_slice;
    int in_type, out_type;  /* pixsum_type */
    int acc;                /* psi_box_acc: u32, u64 or f64 running sums */
    int stat, border;       /* pixsum_box_stat, pixsum_border */
    int channels;           /* 1-4 */
    int is_signed;          /* i16 / i32 input */
    int squares;            /* var / std: sums of squares too */
    int mean_fast;          /* u8/u16 means: 2 * sum + n and 2 * n below 2^31 */
    int mean_odd;           /* u8/u16 means of odd n (see cuda_box.c) */
    float inv_n_f;          /* 1 / n in float and double */
    double inv_n;
    int in_size;            /* bytes per input sample */
    int vec_ok;             /* input data and row stride aligned for vector loads
                               (4 samples, 2 for 8-byte samples) */
    long long width, height;         /* the image */
    long long out_width, out_height;
    long long kw, kh, ax, ay;        /* window; (x, y) starts at (x - ax, y - ay) */
    unsigned long long n;            /* kw x kh */
    unsigned long long cval;         /* constant border value (integer inputs, two's complement) */
    double cval_f;                   /* constant border value (float accumulation) */
} psi_cu_box_job;

/* Tile geometry of one launch (psi_cu_box_geometry()). */
typedef struct psi_cu_box_geo {
    int threads;     /* threads per block (64-256) */
    int te;          /* output samples (columns x channels) per block */
    int ext;         /* te + (kw - 1) x channels: samples of running column sums */
    int ng;          /* groups of consecutive column sums per thread */
    int g;           /* output rows per phase (one barrier each) */
    int ep;          /* shared-memory row length (ext with bank padding) */
    long long bh;    /* output rows per block */
    unsigned grid_x, grid_y;
    size_t smem;     /* dynamic shared memory bytes */
} psi_cu_box_geo;

/* Chooses the geometry of `job` for a device of `sm_count` multiprocessors.
 * Returns 1, or 0 when the window is too wide for the kernel's column-sum
 * registers (max_samples receives the widest (kw - 1) x channels allowed). */
int psi_cu_box_geometry(const psi_cu_box_job *job, int sm_count, psi_cu_box_geo *geo,
                        long long *max_samples);

/* Enqueues the filter on `stream` (no synchronisation): the one-channel sum
 * and mean kernel when it takes the request (it chooses its own geometry),
 * else the general kernel with `geo`. Returns 0 or the cudaError_t of the
 * launch or of the attribute and occupancy queries before it. */
int psi_cu_box_filter(const psi_cu_box_job *job, const psi_cu_box_geo *geo, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* PIXSUM_CUDA_BOX_H */

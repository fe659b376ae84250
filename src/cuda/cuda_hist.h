/*
 * cuda_hist.h - what the host side of the CUDA histograms (cuda_hist_host.c,
 * C) hands to the kernel launchers (hist_count.cu, hist_post.cu and
 * hist_equalize.cu, CUDA C), and the per-context state slot that cuda_host.c
 * keeps for it.
 *
 * A count request (psi_ch_plan) is one validated image on the device with its
 * resolved bins. The launcher picks one of three counting schemes (their
 * details are in hist_count.cu):
 *   flat    u8 images of one channel, unmasked, contiguous and 16-byte
 *           aligned: a u32 table of 64 copies per block, two instructions
 *           per sample (a byte permute gives the address, then a shared atomic);
 *   narrow  other u8 images, and the other types when channels x (bins + 3) u32 fit
 *           in 96 KiB: a u32 table per block in shared memory,
 *           replicated so that lane l of a warp always hits copy l (no bank
 *           conflict whatever the content); u8 counts raw values, the other
 *           types count classes (bins + below/above/NaN);
 *   wide    u16/i16 (raw values) and many bins: up to 65536 16-bit counters
 *           (two per word) per block for one channel at a time, moved to a u64
 *           spill table before they can wrap; a reduce kernel adds the blocks'
 *           tables and folds raw values into bins.
 * Counts end in the caller's u64 array, so they never wrap. Flat runs as one
 * launch whose first block presets the outputs for the others' atomics;
 * narrow counts into outputs zeroed first. A test may force narrow or wide
 * where the automatic choice takes another scheme (psi_ch_force): every
 * scheme counts the same.
 * Class numbers follow hist.h: bin, then bins + 0 (below), + 1 (above),
 * + 2 (NaN). The workspace must be zero-filled when allocated.
 *
 * Totals (pixsum_cuda_hist_totals in pixsum_cuda.h) are 17 u64: pixels,
 * in_range[4], below[4], above[4], nan[4].
 */
#ifndef PIXSUM_CUDA_HIST_H
#define PIXSUM_CUDA_HIST_H

#include <stddef.h>
#include <stdint.h>

#include "../hist/hist_bins.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Input kinds of the histogram kernels. */
typedef enum psi_ch_type {
    PSI_CH_U8 = 0,
    PSI_CH_U16 = 1,
    PSI_CH_I16 = 2,
    PSI_CH_I32 = 3,
    PSI_CH_F32 = 4,
    PSI_CH_F64 = 5
} psi_ch_type;

/* Offsets (in u64) of the fields of the totals record. */
enum { PSI_CH_T_PIXELS = 0, PSI_CH_T_IN_RANGE = 1, PSI_CH_T_BELOW = 5, PSI_CH_T_ABOVE = 9,
       PSI_CH_T_NAN = 13, PSI_CH_T_COUNT = 17 };

/* One image in device memory (byte strides; a slice stride is only read when
 * depth > 1). mask: u8, one sample per pixel, or NULL. */
typedef struct psi_ch_image {
    const void *data;
    psi_ch_type type;
    long long width, height, depth, channels;
    long long row_stride, slice_stride;
    const unsigned char *mask;
    long long mask_row, mask_slice;
} psi_ch_image;

/* The bins of pixsum.h (1 .. 65536 of them), decided by hist_bins.h. */
typedef psi_bins psi_ch_bins;

/* Code paths a test forces (pixsum_cuda_set_force(), the experimental API of
 * pixsum_cuda.h); all zero: the automatic choice. Each is one the automatic
 * choice takes for some image or device, and every one counts the same. */
typedef struct psi_ch_force {
    int scheme; /* 0 auto; 1 narrow (u8 images that flat would take; other types
                   where their table fits); 2 wide (i32, f32, f64 with few bins) */
    int no_pdl; /* flat and wide launched without programmatic dependent launch,
                   as on devices before sm_90 */
} psi_ch_force;

typedef struct psi_ch_plan {
    psi_ch_image img;
    psi_ch_bins b;
    unsigned long long *counts; /* channels x bins (device), zeroed by the launcher */
    unsigned long long *totals; /* PSI_CH_T_COUNT u64 (device), zeroed and filled */
    void *ws;                   /* workspace of psi_ch_workspace_bytes() */
    size_t ws_bytes;
    int sm_count;               /* multiprocessors of the device */
    psi_ch_force force;
    void *stream;               /* cudaStream_t */
} psi_ch_plan;

/* Bytes of workspace a plan needs (for its image shape and type). */
size_t psi_ch_workspace_bytes(const psi_ch_plan *p);

/* Zeroes p->counts and p->totals and enqueues the counting on p->stream.
 * Returns 0 or the cudaError_t of the failing call. */
int psi_ch_launch(const psi_ch_plan *p);

/* Joint histogram: two 1-channel images of one shape (masks in a and b),
 * counts[i * bins_b + j] (zeroed here), pair_totals[0] = pairs counted,
 * [1] = excluded (zeroed here). ws: psi_ch_joint_workspace_bytes(). */
size_t psi_ch_joint_workspace_bytes(const psi_ch_image *a, const psi_ch_image *b);
int psi_ch_joint_launch(const psi_ch_image *a, const psi_ch_bins *ba, const psi_ch_image *b,
                        const psi_ch_bins *bb, unsigned long long *counts,
                        unsigned long long *pair_totals, void *ws, int sm_count, void *stream);

/* Inclusive scan of each of `channels` rows of `bins` u64 (out may be in). */
int psi_ch_cumulative(const unsigned long long *in, unsigned long long *out, long long channels,
                      long long bins, void *stream);

/* out[c * bins + i] = k / n as double with k = h_i (or the running sum when
 * cumulative) and n = totals in_range[c] (or totals pixels when of_all); a
 * channel with n = 0 gives zeros. totals NULL: n = sum of the channel's bins. */
int psi_ch_relative(const unsigned long long *in, double *out, long long channels,
                    long long bins, const unsigned long long *totals, int cumulative,
                    int of_all, void *stream);

/* Equalisation (hist_equalize.cu): lut[c * levels + v] (u16) = the mapping
 * of pixsum_equalize() for channel c, from its cumulative histogram cdf
 * (channels x levels u64, levels a power of two 256 .. 65536; fewer than
 * 2^46 samples per channel). */
int psi_ch_equalize_table(const unsigned long long *cdf, unsigned short *lut, long long channels,
                          long long levels, void *stream);

/* Every sample of `in` (no mask) mapped into `out` (same shape and type; byte
 * strides out_row, out_slice; out may be in with the same strides): u8 from
 * `counts`, the raw histogram (channels x 256 u64; the tables are built in
 * the kernel), u16 through `lut` of psi_ch_equalize_table(). sm_count sizes
 * the grid. */
int psi_ch_equalize_apply(const psi_ch_image *in, void *out, long long out_row,
                          long long out_slice, const unsigned long long *counts,
                          const unsigned short *lut, int sm_count, void *stream);

/* The histogram state slot cuda_host.c keeps in each context's CUDA state
 * (the hist code owns `state` and frees it with `release`). */
typedef struct psi_cuda_hist_slot {
    void *state;
    void (*release)(void *state);
    int device;
} psi_cuda_hist_slot;

/* The slot of ctx (the CUDA state is created on demand); NULL when out of
 * memory. Defined in cuda_host.c. */
struct pixsum_ctx;
psi_cuda_hist_slot *psi_cuda_hist_slot_of(struct pixsum_ctx *ctx);

/* The histogram paths ctx forces (zero without a CUDA state). Defined in
 * cuda_host.c. */
psi_ch_force psi_cuda_hist_force_of(const struct pixsum_ctx *ctx);

#ifndef __CUDACC__
/* The registered method "cuda.hist" (cuda_hist_host.c), listed in
 * psi_methods_cuda[] of cuda_host.c. */
struct psi_job;
_Bool psi_cuda_hist_available(void);
_Bool psi_cuda_hist_supports(const struct psi_job *job);
int psi_cuda_hist_run(const struct psi_job *job);
#endif

#ifdef __cplusplus
}
#endif

#endif /* PIXSUM_CUDA_HIST_H */

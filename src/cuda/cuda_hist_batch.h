/*
 * cuda_hist_batch.h - what the host side of pixsum_cuda_histogram_batch()
 * (cuda_hist_host.c, C) hands to the one-launch counting kernel of u8
 * batches (hist_batch.cu, CUDA C).
 *
 * The kernel counts raw byte values (0..255 per channel) in a table in
 * shared memory, one table per block and image, and folds them into bins
 * only when it writes the image's u64 counts: the class of each
 * raw value comes from `cls`, which the host fills with the bin rule of
 * src/hist/hist_bins.h, so any bin count and range give the counts of the
 * single-image histogram bit for bit.
 */
#ifndef PIXSUM_CUDA_HIST_BATCH_H
#define PIXSUM_CUDA_HIST_BATCH_H

#ifdef __cplusplus
extern "C" {
#endif

/* A validated u8 batch on the device (byte strides). */
typedef struct psi_hb_batch {
    const unsigned char *data;  /* image n, row y at data + n * slice + y * row */
    long long row, slice;
    long long width, height, channels, images;
    const unsigned char *mask;  /* u8, one per pixel, or NULL */
    long long mask_row, mask_slice; /* mask_slice 0: one mask for every image */
    unsigned bins;              /* 1 .. 65536 */
    unsigned cls[256];          /* class of each raw value: bin, or bins + PSI_BIN_* */
    unsigned long long *counts; /* images x channels x bins (device), overwritten */
    unsigned long long *totals; /* images x 17 (pixsum_cuda_hist_totals), or NULL */
    unsigned *scratch;          /* psi_hb_scratch_bytes() of device memory, zero-filled
                                   when allocated and left zero by every launch */
} psi_hb_batch;

/* Bytes of scratch a launch of `b` needs on a device of sm_count
 * multiprocessors (0 when every image is counted by one block). Sets
 * *error to 0 or the cudaError_t of the occupancy query. */
size_t psi_hb_scratch_bytes(const psi_hb_batch *b, int sm_count, int *error);

/* Enqueues the counting on `stream`: one launch for the whole batch, which
 * writes every count and total (no memset). sm_count sizes the grid.
 * Returns 0 or the cudaError_t of the failing call. */
int psi_hb_launch(const psi_hb_batch *b, int sm_count, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* PIXSUM_CUDA_HIST_BATCH_H */

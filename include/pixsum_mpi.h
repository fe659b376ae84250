/*
 * pixsum_mpi.h - distributed integral images and histograms over MPI, for
 * images larger than one machine. Built only when CMake finds MPI (the library
 * then defines PIXSUM_HAVE_MPI for its users).
 *
 * Model
 * -----
 * An image of W x H pixels is split by rows over the ranks of a communicator:
 * rank 0 holds the first rows, rank 1 the next ones, and so on in rank order.
 * Each rank passes a pixsum_view of its own strip of rows ("the strip"); strips
 * may have any number of rows, including zero. A zero-row strip is a view with
 * height 0 whose data may be NULL, but whose type, width and channels must
 * still be set: every rank must describe the same width, channels and types.
 * Only 2-D images are distributed (depth 1).
 *
 * Every function here is collective: all ranks of `comm` must call it with
 * matching arguments, and all of them return the same status. When one rank
 * finds a problem (a bad view, an allocation failure) every rank returns that
 * rank's status; the rank that found it has the precise detail in
 * pixsum_last_error(), the others "rank R failed: ...". When the ranks
 * disagree on what must be alike (width, channels, types, settings) every rank
 * returns PIXSUM_ERR_BAD_SHAPE naming the value. An error detected before
 * computing leaves outputs untouched.
 *
 * Integral images: the ranks exchange only one vector per rank, the last row
 * the local table of its strip has (its column sums prefix-summed along the
 * row, W x channels elements, computed from one read of the strip), through an
 * exclusive scan over the ranks (MPI_Exscan). Each rank then computes its local
 * table with the ordinary library (pixsum_integral(), any method the context
 * selects, a GPU included), in cache-sized blocks of rows to each of which the
 * sum of the vectors of the ranks before it is added while the block is still
 * in the cache. Bytes a rank contributes to the scan: W x channels x e, with
 * e = 4 (u32 tables), 8 (u64, i64) or 16 (f32, f64: the offsets travel as
 * double-double pairs); the whole table is never sent. The block size comes
 * from the context (the method's backend and threads); tests may set it with
 * the experimental pixsum_mpi_set_block_bytes() below.
 *
 * Exactness: integer tables are bit-identical to pixsum_integral() on the whole
 * image, in wrap mode too (the scan is modular in the output type). Float
 * tables add the offset once, rounded from a double-double sum; they are
 * bit-identical whenever the sums are exact in the output type (e.g. f32
 * samples that are multiples of 2^-24 below 1, fewer than 2^29 pixels, into
 * f64) and otherwise differ from the single-process table by rounding only.
 *
 * Histograms: each rank counts its strip with pixsum_histogram(), then the u64
 * counts (and the below/above/NaN/pixel counts) are summed with an integer
 * MPI reduction, which is exact and deterministic. Data-range defaults (i32,
 * f32, f64 without a range) are resolved over the whole image first, so the
 * bins are those of the single-process call.
 */
#ifndef PIXSUM_MPI_H
#define PIXSUM_MPI_H

#include "pixsum.h"

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* `root` value of pixsum_mpi_histogram(): every rank receives the totals. */
#define PIXSUM_MPI_ALL (-1)

/* Balanced split of `total_rows` rows over `nranks` ranks: rank r gets rows
 * [*first, *first + *count), the first total_rows % nranks ranks one row more
 * than the others (so ranks may get zero rows when total_rows < nranks). Not
 * collective; needs no MPI. Returns PIXSUM_OK, PIXSUM_ERR_NULL or
 * PIXSUM_ERR_INVALID_ARG (nranks < 1, rank outside [0, nranks)). */
PIXSUM_API int pixsum_mpi_split_rows(size_t total_rows, int nranks, int rank,
                                     size_t *first, size_t *count);

/* Collective: given this rank's row count, returns in *first_row the global
 * index of its first row (the rows of the ranks before it) and in *total_rows
 * (may be NULL) the rows of all ranks. Returns PIXSUM_OK, PIXSUM_ERR_NULL
 * (first_row NULL, on any rank) or PIXSUM_ERR_MPI. */
PIXSUM_API int pixsum_mpi_row_offset(size_t local_rows, size_t *first_row,
                                     size_t *total_rows, MPI_Comm comm);

/* Collective: the rank of the caller among the ranks of `comm` that share its
 * node (MPI_COMM_TYPE_SHARED) and how many they are; use it to pick a GPU per
 * rank, e.g. PIXSUM_PARAM_CUDA_DEVICE = local_rank % device count. Either
 * pointer may be NULL. Returns PIXSUM_OK or PIXSUM_ERR_MPI. */
PIXSUM_API int pixsum_mpi_local_rank(MPI_Comm comm, int *local_rank, int *local_size);

/* Collective: this rank's strip of the integral image of the image whose rows
 * are spread over `comm` (see the model above). `in` is the rank's strip
 * (height h >= 0, depth 1); `out` receives the same rows of the whole image's
 * table: shape W x h, or with PIXSUM_PARAM_PADDED (W + 1) x h, plus one more
 * leading row of zeros on rank 0 (the padded table's top border belongs to
 * rank 0; a rank-0 strip of zero rows then still has that one output row).
 * Output types and overflow rules are those of pixsum_integral(), with the
 * overflow check made on the whole image's pixel count (W x sum of h), so a
 * type that fits every strip but not the image is refused (unless wrap).
 * The context (NULL = defaults) is used on each rank for the local table: its
 * method, threads, wrap and CUDA device/stream; during the call its padded
 * setting is read and temporarily cleared. Returns PIXSUM_OK or the codes of
 * pixsum_integral() (the same on every rank, see the model above), plus
 * PIXSUM_ERR_BAD_SHAPE (width, channels, types, padded or wrap settings differ
 * between ranks; depth > 1; no rows on any rank) and PIXSUM_ERR_MPI (an MPI
 * call failed; the detail holds MPI's text). */
PIXSUM_API int pixsum_mpi_integral(pixsum_ctx *ctx, const pixsum_view *in,
                                   const pixsum_view *out, MPI_Comm comm);

/* Collective: as pixsum_mpi_integral() for the squared table `out_sq` and,
 * when `out` is not NULL, the plain one (NULL or not alike on every rank), as
 * pixsum_integral_sq() does for one process. Returns as pixsum_mpi_integral(). */
PIXSUM_API int pixsum_mpi_integral_sq(pixsum_ctx *ctx, const pixsum_view *in,
                                      const pixsum_view *out, const pixsum_view *out_sq,
                                      MPI_Comm comm);

/* What the last pixsum_mpi_integral[_sq]() call on this thread did on this
 * rank, phase by phase, in seconds of wall-clock time and of this thread's CPU
 * time (worker threads of threaded methods not included):
 *   [0] pass 1: reading the strip for its scan vector(s),
 *   [1] the agreements and the exclusive scan(s), waiting for the other ranks
 *       included,
 *   [2] pass 2: the local table(s) with the offsets added. */
typedef struct pixsum_mpi_stats {
    double wall[3];
    double cpu[3];
    uint64_t bytes_scanned;  /* bytes of the vector(s) this rank put into the scan */
    uint64_t blocks;         /* library calls the local tables took (cache blocks) */
} pixsum_mpi_stats;

/* Copies the statistics of the last distributed integral call on this thread
 * (all zero before the first). Not collective. Accepts NULL (does nothing). */
PIXSUM_API void pixsum_mpi_last_stats(pixsum_mpi_stats *stats);

/* Collective: the histogram of the whole image whose rows are spread over
 * `comm`, as pixsum_histogram() gives for the whole image in one process (same
 * bins, ranges, defaults and counts, bit for bit). `spec` must be alike on
 * every rank except its mask, which is the rank's strip of the mask (height
 * h, may have zero rows). With root = PIXSUM_MPI_ALL every rank receives the
 * totals in counts/info; with root = r only rank r does, and the other ranks
 * may pass counts NULL and counts_len 0 (their info, if given, receives the
 * resolved bins and range only). Bytes each rank sends: (channels x bins + 17)
 * x 8 in one integer reduction (plus 3 doubles when a data range is resolved).
 * Returns PIXSUM_OK or the codes of pixsum_histogram() (the same on every
 * rank), plus PIXSUM_ERR_BAD_SHAPE (width, channels, type, bins, range, use of
 * a mask or root differ between ranks; depth > 1; no rows on any rank),
 * PIXSUM_ERR_INVALID_ARG (root neither PIXSUM_MPI_ALL nor a rank) and
 * PIXSUM_ERR_MPI. */
PIXSUM_API int pixsum_mpi_histogram(pixsum_ctx *ctx, const pixsum_view *in,
                                    const pixsum_hist_spec *spec, uint64_t *counts,
                                    size_t counts_len, pixsum_hist_info *info, int root,
                                    MPI_Comm comm);

#ifdef __cplusplus
}
#endif

#endif /* PIXSUM_MPI_H */

/* ---- Experimental: test entry points ----------------------------------------------------
 * Seen where PIXSUM_EXPERIMENTAL is defined before this header is included, as in
 * pixsum.h. Not part of the stable API. */
#if defined(PIXSUM_EXPERIMENTAL) && !defined(PIXSUM_MPI_H_EXPERIMENTAL)
#define PIXSUM_MPI_H_EXPERIMENTAL

#ifdef __cplusplus
extern "C" {
#endif

/* Sets the table bytes per local block of the distributed integral on every
 * thread of this process: 0 = the whole strip in one call, then a separate pass
 * adds the carried row; PIXSUM_MPI_BLOCK_AUTO = the library's choice (the
 * default: 512 KiB for single-threaded CPU methods, 16 MiB for threaded and GPU
 * ones). Integer tables keep their bits; float tables may round differently
 * (the carried row joins at other rows), within the documented bound. For
 * tests of the block paths; not collective (set it alike on every rank). */
#define PIXSUM_MPI_BLOCK_AUTO ((size_t)-1)
PIXSUM_API void pixsum_mpi_set_block_bytes(size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* PIXSUM_EXPERIMENTAL */

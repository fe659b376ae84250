/*
 * fast_kernels.h - the single-threaded SIMD row kernels of the fast integral
 * methods, one set per ISA (fast_sse2.c, fast_avx2.c, fast_avx512.c), and the
 * drivers built on them (fast_driver.c).
 *
 * A fast row kernel computes, for one row of `width` pixels of `channels`
 * interleaved samples,
 *     r[i] = (per-channel inclusive prefix of in, or of in^2)[i] + prev[i]
 * (prev == NULL means zeros), keeping the running prefix in SIMD registers, and
 * stores r to `out` (with non-temporal stores when `stream` is set and `out` is
 * aligned to the vector size) and, when acc != NULL, also to `acc` with normal
 * stores (acc may equal prev: each element is read before it is written).
 * The streamed form lets a driver keep the previous row in a small cached
 * buffer (acc) while the table itself bypasses the caches. The kernels do
 * not fence their non-temporal stores: whoever streams rows calls
 * psi_stream_fence() once after its last row, before other threads may read
 * them (psi_fast_rows does; a fence per row drained the write-combining
 * buffers at every row, which the bench's floor kernel does not do).
 *
 * Integer outputs use modular arithmetic in the output's width, so results are
 * bit-exact with the scalar reference (wrap mode included). Float outputs sum
 * the row in a different order (a tree inside each vector), so they can differ
 * from the scalar reference by rounding: at most a few units in the last place
 * of the largest partial sum of the row, times the row's column count.
 */
#ifndef PIXSUM_CPU_FAST_KERNELS_H
#define PIXSUM_CPU_FAST_KERNELS_H

#include "isa.h"
#include "kernels.h"

typedef void (*psi_fast_row_fn)(const void *in, void *out, const void *prev, void *acc,
                                size_t width, size_t channels, int stream);

/* The kernel of one ISA for (in, out, squared, channels), or NULL if that ISA
 * file has none for it. Each returns NULL when built for another architecture. */
psi_fast_row_fn psi_fast_row_sse2(pixsum_type in, pixsum_type out, int squared,
                                  size_t channels);
psi_fast_row_fn psi_fast_row_avx2(pixsum_type in, pixsum_type out, int squared,
                                  size_t channels);
psi_fast_row_fn psi_fast_row_avx512(pixsum_type in, pixsum_type out, int squared,
                                    size_t channels);

/* Two rows at once: out0 = prefix(in0) + prev, out1 = prefix(in1) + out0,
 * acc (when not NULL) = out1; otherwise as psi_fast_row_fn. Only where packing
 * two rows into one register pays (u8 -> u32 plain sums). */
typedef void (*psi_fast_pair_fn)(const void *in0, const void *in1, void *out0, void *out1,
                                 const void *prev, void *acc, size_t width, size_t channels,
                                 int stream);
void psi_fast_pair_u8u32_avx512(const void *in0, const void *in1, void *out0, void *out1,
                                const void *prev, void *acc, size_t width, size_t ch,
                                int stream);
void psi_fast_pair_u8u32_avx2(const void *in0, const void *in1, void *out0, void *out1,
                              const void *prev, void *acc, size_t width, size_t ch,
                              int stream);

/* acc[i] += sum over nrows (1-4) rows of in (or in^2), n samples each, in
 * the output type's arithmetic. */
typedef void (*psi_fast_colsum_fn)(const void *const *rows, int nrows, void *acc, size_t n);
psi_fast_colsum_fn psi_fast_colsum_sse2(pixsum_type in, pixsum_type out, int squared);
psi_fast_colsum_fn psi_fast_colsum_avx2(pixsum_type in, pixsum_type out, int squared);
psi_fast_colsum_fn psi_fast_colsum_avx512(pixsum_type in, pixsum_type out, int squared);

/* Column sums of rows [y0, y1) of a 2-D view into acc (output type `out`,
 * one table row, zeroed by the caller), with the active ISA's kernel or a
 * portable loop. */
void psi_fast_column_sums(const pixsum_view *in, size_t y0, size_t y1, pixsum_type out,
                          int squared, void *acc);

/* A row kernel for the active ISA: the best SIMD kernel at or below
 * psi_isa_active(); when none exists (or the active ISA is scalar) `fast` is
 * NULL and `scalar` is the reference row function of the pair. */
typedef struct psi_fast_kernel {
    psi_fast_row_fn fast;
    psi_fast_pair_fn pair; /* NULL where no two-row kernel exists */
    psi_row_fn scalar;
    psi_isa isa; /* the ISA of `fast`, PSI_ISA_SCALAR when fast is NULL */
    size_t out_size; /* bytes per output sample */
} psi_fast_kernel;

/* Fills *k for a supported pair. Returns false for an unsupported pair. */
bool psi_fast_kernel_get(pixsum_type in, pixsum_type out, int squared, size_t channels,
                         psi_fast_kernel *k);

/* Runs one row through k (see psi_fast_row_fn); the scalar fallback ignores
 * `stream` and copies r to acc itself. */
void psi_fast_kernel_row(const psi_fast_kernel *k, const void *in, void *out,
                         const void *prev, void *acc, size_t width, size_t channels,
                         int stream);

/* Bytes above which a table is written with non-temporal stores: a quarter of
 * the last-level cache this core shares (sysfs cpu0/cache/index3, else sysconf,
 * 8 MiB when unknown, at most 48 MiB: a table that fits that share of the
 * cache runs faster cached, a larger one faster streamed, and a VM can report
 * far more cache than one core keeps), or
 * PIXSUM_STREAM_BYTES from the environment when set (0 = always stream). Read
 * once. */
size_t psi_stream_threshold(void);

/* The threshold psi_stream_threshold() takes from a last-level cache of llc
 * bytes (llc <= 0: unknown): a quarter of it, 8 MiB when unknown, at most
 * 48 MiB. */
size_t psi_stream_threshold_for(long llc);

/* Bytes of the cached row buffers psi_fast_rows() needs to stream `job`'s
 * tables (one row per requested table, each rounded up to 64 bytes), or 0 when
 * it would not stream: `stream` 0, a 3-D job, or a row too long to keep in the
 * cache. */
size_t psi_fast_stream_buffer_bytes(const psi_job *job, int stream);

/* Fills rows [y0, y1) of every requested table of a 2-D job (depth 1) with the
 * fast kernels, one pass over the input. `init` / `init_sq`, when not NULL,
 * hold the column sums of the rows above y0 (output type, one table row);
 * otherwise rows above y0 are read from the table itself (y0 > 0) or taken as
 * zero. `stream` selects non-temporal stores (a cached row buffer then
 * carries the column sums), fenced once before it returns. `buffers`: when it
 * streams, the caller's psi_fast_stream_buffer_bytes() bytes (64-byte
 * aligned), so that nothing can fail after a table row is written; NULL
 * allocates them here, before any row is written. Returns PIXSUM_OK or
 * PIXSUM_ERR_NO_MEMORY (nothing written). */
int psi_fast_rows(const psi_job *job, size_t y0, size_t y1, const void *init,
                  const void *init_sq, int stream, void *buffers);

/* Samples per chunk in which the u8 -> u32 row-pair kernels, when they
 * stream, copy a pair's second row from the row buffer to the table (4 KiB of
 * u32): two output rows streamed one after the other run at the memory
 * floor, in alternation well below it (docs/rejected.md); the chunk length
 * hardly matters between 256 samples and a whole row
 * (bench/store_patterns.c). */
#define PSI_PAIR_CHUNK 1024

/* Orders the calling thread's earlier non-temporal stores before its later
 * stores (sfence on x86-64, a full fence elsewhere). */
void psi_stream_fence(void);

/* Runs a whole job (2-D or 3-D, plain and/or squared) single-threaded with the
 * fast kernels. Returns a pixsum status. */
int psi_fast_run(const psi_job *job);

#endif /* PIXSUM_CPU_FAST_KERNELS_H */

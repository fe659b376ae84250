/*
 * omp_methods.c - the multi-threaded CPU integral method and its registry
 * table:
 *   omp.banded     the fast method: rows split into bands; band 0 starts its
 *                  final table at once while each other thread first sums the
 *                  columns of the band before its own (reads the input), the
 *                  column sums of the earlier bands give each band its first
 *                  row's offsets, and every band then writes its final table in
 *                  one pass with the SIMD row kernels (fast_driver.c). Input
 *                  read at most twice, output written once.
 * The papers' threaded methods (omp.transpose, omp.chunks, p001.*) are in
 * src/papers/.
 * The OpenMP methods exist only in builds with OpenMP (PIXSUM_HAVE_OPENMP);
 * thread counts come from the context (job->threads).
 */
#include "fast_kernels.h"

#include <stdlib.h>
#include <string.h>

#ifdef PIXSUM_HAVE_OPENMP
#include <omp.h>
#endif

#ifdef PIXSUM_HAVE_OPENMP

/* ---------------------------------------------------------- omp.banded */

/* Cost of summing a band's columns relative to writing its table, used to
 * size the bands so that every thread finishes together: thread 0 only writes
 * band 0; thread t >= 1 sums band t-1's columns, then writes band t. */
#define BANDED_COLSUM_COST 0.3

/* Band boundaries for `t` threads over `h` rows into b[0..t]. */
static void banded_bounds(size_t h, int t, size_t *b)
{
    double share[256], total = 0;
    share[0] = 1.0;
    total = 1.0;
    for (int i = 1; i < t; i++) {
        share[i] = 1.0 - BANDED_COLSUM_COST * share[i - 1];
        if (share[i] < 0.05)
            share[i] = 0.05;
        total += share[i];
    }
    double acc = 0;
    b[0] = 0;
    for (int i = 0; i < t; i++) {
        acc += share[i];
        b[i + 1] = i + 1 == t ? h : (size_t)((double)h * acc / total);
    }
}

/* The carry rows of the job's tables, in psi_job_tables()' order. */
static void job_carries(const psi_job *job, const void **carries)
{
    int n = 0;
    if (job->out.data)
        carries[n++] = job->carry;
    if (job->out_sq.data)
        carries[n++] = job->carry_sq;
}


static int run_banded(const psi_job *job)
{
    const pixsum_view *in = &job->in;
    int t = job->threads < 1 ? 1 : (job->threads > 256 ? 256 : job->threads);
    if ((size_t)t > in->height / 8)
        t = (int)(in->height / 8);
    if (t <= 1 || in->depth > 1)
        return psi_fast_run(job); /* one band (3-D volumes run single-threaded) */

    size_t bounds[257];
    banded_bounds(in->height, t, bounds);
    const pixsum_view *tables[2];
    int squared[2];
    int nt = psi_job_tables(job, tables, squared);
    size_t n = psi_row_samples(in);
    size_t row_bytes[2] = {0, 0};
    for (int k = 0; k < nt; k++)
        row_bytes[k] = (n * pixsum_type_size(tables[k]->type) + 63) / 64 * 64;
    size_t total_bytes = 0;
    for (int k = 0; k < nt; k++)
        total_bytes += pixsum_type_size(tables[k]->type) * n * in->height;
    /* Non-temporal stores from every thread, as from one: the row-pair
     * kernel streams its two output rows one after the other
     * (PSI_PAIR_CHUNK), so threads streaming side by side keep the rate. */
    int stream = total_bytes > psi_stream_threshold();
    /* per band and table: its column sums, then (prefix over bands) its
     * offsets; then each band's streaming row buffers, allocated here so that
     * no band can fail after another has written its rows */
    size_t per_band = row_bytes[0] + row_bytes[1];
    size_t buffers = psi_fast_stream_buffer_bytes(job, stream);
    unsigned char *sums = aligned_alloc(64, per_band * (size_t)t * 2 + buffers * (size_t)t);
    if (!sums)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "omp.banded: no memory for %d x %zu bytes of "
                        "column sums and row buffers", t, 2 * per_band + buffers);
    memset(sums, 0, per_band * (size_t)t * 2);
    unsigned char *offsets = sums + per_band * (size_t)t;
    unsigned char *row_buffers = sums + per_band * (size_t)t * 2;
    int done[256];
    memset(done, 0, sizeof done);
    int status = PIXSUM_OK;

#pragma omp parallel num_threads(t)
    {
        int id = omp_get_thread_num(), nth = omp_get_num_threads();
        if (nth != t) {
            /* OpenMP gave fewer threads: one of them runs the whole job */
            if (id == 0) {
                __atomic_store_n(&status, psi_fast_run(job), __ATOMIC_RELAXED);
            }
        } else {
            if (id >= 1) {
                /* column sums of band id-1 */
                unsigned char *mine = sums + per_band * (size_t)(id - 1);
                for (int k = 0; k < nt; k++)
                    psi_fast_column_sums(in, bounds[id - 1], bounds[id], tables[k]->type,
                                         squared[k], mine + (k ? row_bytes[0] : 0));
                __atomic_store_n(&done[id - 1], 1, __ATOMIC_RELEASE);
                /* offsets of band id = sum of the column sums of bands < id */
                unsigned char *off = offsets + per_band * (size_t)id;
                for (int b = 0; b < id; b++) {
                    while (!__atomic_load_n(&done[b], __ATOMIC_ACQUIRE))
                        ; /* the bands before finish their sums at about the same time */
                    for (int k = 0; k < nt; k++) {
                        size_t o = k ? row_bytes[0] : 0;
                        psi_scalar_add(tables[k]->type)(off + o, sums + per_band * (size_t)b + o,
                                                        NULL, n);
                    }
                }
                /* the row above the band = running sums of those column sums,
                 * plus the carry row above the whole table */
                const void *carries[2];
                job_carries(job, carries);
                for (int k = 0; k < nt; k++) {
                    unsigned char *row = off + (k ? row_bytes[0] : 0);
                    psi_scalar_running(tables[k]->type)(row, in->width, in->channels);
                    if (carries[k])
                        psi_scalar_add(tables[k]->type)(row, carries[k], NULL, n);
                }
            }
            const void *init = job->carry, *init_sq = job->carry_sq;
            if (id >= 1) {
                unsigned char *off = offsets + per_band * (size_t)id;
                if (job->out.data)
                    init = off;
                if (job->out_sq.data)
                    init_sq = off + (job->out.data ? row_bytes[0] : 0);
            }
            int st = psi_fast_rows(job, bounds[id], bounds[id + 1], init, init_sq, stream,
                                   buffers ? row_buffers + buffers * (size_t)id : NULL);
            if (st != PIXSUM_OK)
                __atomic_store_n(&status, st, __ATOMIC_RELAXED);
        }
    }
    free(sums);
    return status;
}

#define OMP_ENTRIES                                                                          \
    {"omp.banded", PIXSUM_BACKEND_OMP,                                                       \
     PIXSUM_OP_INTEGRAL | PIXSUM_OP_INTEGRAL_SQ | PIXSUM_OP_INTEGRAL_3D | PIXSUM_OP_CARRY,   \
     "OpenMP bands: column sums of earlier bands, then each band's final table in one SIMD " \
     "pass (input read <= 2x, output written once); 3-D runs single-threaded",               \
     30, NULL, NULL, run_banded},
#else
#define OMP_ENTRIES
#endif /* PIXSUM_HAVE_OPENMP */

const psi_method psi_methods_omp[] = {
    OMP_ENTRIES
    {NULL, 0, 0, NULL, 0, NULL, NULL, NULL},
};

/*
 * hist_methods.c - the CPU histogram methods (op PIXSUM_OP_HISTOGRAM):
 *   hist.scalar  the reference: the bin formula per sample, one table;
 *   hist.sub     portable C: raw-value tables / classified rows (i32, u32,
 *                f32, f64) counted into several u32 sub-tables merged at the
 *                end (no slowdown on constant images);
 *   hist.avx512  hist.sub with the AVX-512 kernels: u8 (any channels, masks)
 *                counted without a per-pixel store (channel planes, uniform
 *                blocks, buckets, bit-sliced popcounts; see hist_avx512.c),
 *                vector bins for i32/f32/f64;
 *   hist.omp     OpenMP threads over row ranges, each with its own tables (the
 *                best single-thread kernel), merged in thread order, so the
 *                result is deterministic and identical to the other methods.
 * Every method produces bit-identical counts.
 */
#include "hist.h"

#include <stdlib.h>
#include <string.h>

#ifdef PIXSUM_HAVE_OPENMP
#include <omp.h>
#endif

static int run_sub(const psi_job *job)
{
    psi_hist_params *p = (psi_hist_params *)job->extra;
    size_t rows = job->in.height * job->in.depth;
    return psi_hist_count_rows_isa(&job->in, p, 0, rows, p->counts, p->below, p->above, p->nan,
                                   false);
}

static int run_avx512(const psi_job *job)
{
    psi_hist_params *p = (psi_hist_params *)job->extra;
    size_t rows = job->in.height * job->in.depth;
    return psi_hist_count_rows_isa(&job->in, p, 0, rows, p->counts, p->below, p->above, p->nan,
                                   true);
}

static bool avx512_available(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return psi_hist_avx512_available();
#else
    return false;
#endif
}

/* The AVX-512 method only claims the jobs its kernels speed up. */
static bool avx512_supports(const psi_job *job)
{
    return job->in.type == PIXSUM_I32 || job->in.type == PIXSUM_F32 ||
           job->in.type == PIXSUM_F64 || job->in.type == PIXSUM_U8;
}

#ifdef PIXSUM_HAVE_OPENMP
typedef struct part {
    uint64_t *counts;
    uint64_t below[4], above[4], nan[4];
    int status;
} part;

static int run_omp(const psi_job *job)
{
    psi_hist_params *p = (psi_hist_params *)job->extra;
    size_t rows = job->in.height * job->in.depth;
    size_t need = p->b.bins * job->in.channels;
    int threads = job->threads;
    if ((size_t)threads > rows)
        threads = (int)rows;
    /* Each thread past the first costs a table of `need` entries to clear
     * and merge: no more threads than have that many samples each. */
    size_t per_table = rows * job->in.width * job->in.channels / need;
    if ((size_t)threads > per_table)
        threads = (int)per_table;
    if (threads < 1)
        threads = 1;
    part *parts = calloc((size_t)threads, sizeof *parts);
    if (!parts)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate per-thread histograms");
    bool simd = avx512_available();
    int st = PIXSUM_OK;
    for (int t = 0; t < threads; t++) {
        parts[t].counts = t == 0 ? p->counts : calloc(need, sizeof(uint64_t));
        if (!parts[t].counts)
            st = psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate per-thread histograms");
    }
    if (st == PIXSUM_OK) {
#pragma omp parallel for num_threads(threads) schedule(static, 1)
        for (int t = 0; t < threads; t++) {
            size_t r0 = rows * (size_t)t / (size_t)threads;
            size_t r1 = rows * (size_t)(t + 1) / (size_t)threads;
            part *q = &parts[t];
            q->status = psi_hist_count_rows_isa(&job->in, p, r0, r1, q->counts, q->below,
                                                q->above, q->nan, simd);
        }
        /* Merge in thread order: deterministic. */
        for (int t = 0; t < threads && st == PIXSUM_OK; t++)
            st = parts[t].status;
        for (int t = 1; t < threads && st == PIXSUM_OK; t++)
            for (size_t i = 0; i < need; i++)
                p->counts[i] += parts[t].counts[i];
        for (int t = 0; t < threads && st == PIXSUM_OK; t++)
            for (size_t c = 0; c < job->in.channels; c++) {
                p->below[c] += parts[t].below[c];
                p->above[c] += parts[t].above[c];
                p->nan[c] += parts[t].nan[c];
            }
    }
    for (int t = 1; t < threads; t++)
        free(parts[t].counts);
    free(parts);
    if (st != PIXSUM_OK)
        memset(p->counts, 0, need * sizeof(uint64_t));
    return st;
}

static bool omp_supports(const psi_job *job)
{
    /* auto picks threads only when asked for more than one. */
    return job->threads > 1 || job->ctx->method != 0;
}
#define OMP_RUN run_omp
#define OMP_SUPPORTS omp_supports
#define OMP_AVAILABLE NULL
#else
static bool omp_never(void)
{
    return false;
}
static int run_omp_missing(const psi_job *job)
{
    (void)job;
    return psi_fail(PIXSUM_ERR_UNAVAILABLE, "hist.omp: this build has no OpenMP");
}
#define OMP_RUN run_omp_missing
#define OMP_SUPPORTS NULL
#define OMP_AVAILABLE omp_never
#endif

const psi_method psi_methods_hist[] = {
    {"hist.scalar", PIXSUM_BACKEND_CPU, PIXSUM_OP_HISTOGRAM,
     "reference histogram: bin formula per sample, one u64 table (paper 002 CPU method)", 1,
     NULL, NULL, psi_hist_run_scalar},
    {"hist.sub", PIXSUM_BACKEND_CPU, PIXSUM_OP_HISTOGRAM,
     "raw-value / classified counting into 1-4 u32 sub-tables merged at the end (portable C)",
     10, NULL, NULL, run_sub},
    {"hist.avx512", PIXSUM_BACKEND_CPU, PIXSUM_OP_HISTOGRAM,
     "u8: uniform-block skip, VPCOMPRESSB buckets, bit-sliced VPOPCNTQ counts; AVX-512 i32/float bins",
     20,
     avx512_available, avx512_supports, run_avx512},
    {"hist.omp", PIXSUM_BACKEND_OMP, PIXSUM_OP_HISTOGRAM,
     "OpenMP row ranges with per-thread tables merged in thread order (deterministic)", 30,
     OMP_AVAILABLE, OMP_SUPPORTS, OMP_RUN},
    {NULL, 0, 0, NULL, 0, NULL, NULL, NULL},
};

/*
 * box_stream.c - the box filter methods: the streamed kernel of
 * box_stream_kernel.h compiled for the baseline ISA, the dispatch to the AVX2
 * and AVX-512 builds of the same kernel (box_stream_avx2.c,
 * box_stream_avx512.c) by the active ISA (src/cpu/isa.h), and
 *   box.stream  one thread;
 *   box.omp     the output rows cut into one band per thread (OpenMP), each
 *               band re-reading the kh input rows of its first window.
 * All give identical results on integer outputs.
 */
#define PSI_BOX_FN psi_box_stream_scalar
#include "box_stream_kernel.h"
#include "isa.h"

#ifdef PIXSUM_HAVE_OPENMP
#include <omp.h>
#endif

typedef int (*box_band_fn)(const psi_job *job, size_t y0, size_t y1);

static box_band_fn band_kernel(void)
{
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
    psi_isa isa = psi_isa_active();
    if (isa >= PSI_ISA_AVX512)
        return psi_box_stream_avx512;
    if (isa >= PSI_ISA_AVX2)
        return psi_box_stream_avx2;
#endif
    return psi_box_stream_scalar;
}

static int run_box_stream(const psi_job *job)
{
    return band_kernel()(job, 0, job->out.height);
}

#ifdef PIXSUM_HAVE_OPENMP
/* Bands of at least 64 output rows, one per thread. */
static int run_box_omp(const psi_job *job)
{
    box_band_fn fn = band_kernel();
    size_t oh = job->out.height, t = job->threads > 0 ? (size_t)job->threads : 1;
    if (t > oh / 64)
        t = oh / 64;
    if (t <= 1)
        return fn(job, 0, oh);
    int status = PIXSUM_OK;
#pragma omp parallel for num_threads((int)t) schedule(static, 1)
    for (size_t b = 0; b < t; b++) {
        int st = fn(job, oh * b / t, oh * (b + 1) / t);
        if (st != PIXSUM_OK) {
#pragma omp critical
            status = st;
        }
    }
    return status;
}
#define BOX_OMP_ENTRY                                                                      \
    {"box.omp", PIXSUM_BACKEND_OMP, PIXSUM_OP_BOX_FILTER,                                 \
     "streamed box filter over row bands, one per thread (OpenMP), each as box.stream",  \
     20, NULL, NULL, run_box_omp},
#else
#define BOX_OMP_ENTRY
#endif

const psi_method psi_methods_box[] = {
    {"box.stream", PIXSUM_BACKEND_CPU, PIXSUM_OP_BOX_FILTER,
     "streamed box filter: running column sums and a row sum, the input read once "
     "(SIMD by the active ISA, one thread)",
     10, NULL, NULL, run_box_stream},
    BOX_OMP_ENTRY
    {NULL, 0, 0, NULL, 0, NULL, NULL, NULL},
};

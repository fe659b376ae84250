/*
 * fast_methods.c - the single-threaded fast method: simd.2wh, the 2wh single
 * pass of paper 001 with the row prefix in SIMD registers (SSE2, AVX2 or
 * AVX-512, chosen at run time, see isa.h) and non-temporal stores for tables
 * larger than the cache (see fast_driver.c). Every supported type pair, the
 * squared table, 1-4 channels and 3-D volumes; pairs or channel counts an ISA
 * has no kernel for run the scalar reference rows. The tilted table runs
 * psi_tilted_fast() (tilted.c).
 */
#include "fast_kernels.h"
#include "tilted.h"

static int run_simd_2wh(const psi_job *job)
{
    if (job->op == PIXSUM_OP_TILTED)
        return psi_tilted_fast(job);
    return psi_fast_run(job);
}

const psi_method psi_methods_cpu_fast[] = {
    {"simd.2wh", PIXSUM_BACKEND_CPU,
     PIXSUM_OP_INTEGRAL | PIXSUM_OP_INTEGRAL_SQ | PIXSUM_OP_INTEGRAL_3D | PIXSUM_OP_TILTED |
         PIXSUM_OP_CARRY,
     "single pass, row prefix in SIMD registers + row above, non-temporal stores for "
     "large tables; ISA chosen at run time (PIXSUM_FORCE_ISA); tilted tables by "
     "typed, vectorised diagonal rows",
     20, NULL, NULL, run_simd_2wh},
    {NULL, 0, 0, NULL, 0, NULL, NULL, NULL},
};

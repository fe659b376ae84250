/*
 * cuda_tilted.h - the tilted-integral kernels (sat_tilted.cu) as the host
 * side sees them.
 */
#ifndef PIXSUM_CUDA_TILTED_H
#define PIXSUM_CUDA_TILTED_H

#include "cuda_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Workspace bytes (header included) the tilted kernels need for plan p:
 * W x H x channels accumulators for the diagonal sums plus H x channels for
 * the first column's. */
size_t psi_cu_tilted_workspace(const psi_cu_plan *p);

/* Enqueues the tilted table of p->in (W x H, p->channels interleaved) into
 * p->out, the whole (W+1) x (H+1) table with stride p->out_row, on p->stream,
 * using p->ws (at least psi_cu_tilted_workspace() bytes). Returns 0 or the
 * cudaError_t of the failing launch. */
int psi_cu_tilted(const psi_cu_plan *p);

#ifdef __cplusplus
}
#endif

#endif /* PIXSUM_CUDA_TILTED_H */

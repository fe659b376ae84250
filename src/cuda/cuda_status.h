/*
 * cuda_status.h - how the host side of the CUDA backend (cuda_host.c,
 * cuda_hist_host.c, cuda_box.c) turns a failed CUDA runtime call into a pixsum
 * status: PIXSUM_ERR_CUDA with CUDA's text and error name as the detail.
 */
#ifndef PIXSUM_CUDA_STATUS_H
#define PIXSUM_CUDA_STATUS_H

#include "../internal.h"

#include <cuda_runtime_api.h>

/* Clears a non-sticky error from the runtime's last-error slot, so the next
 * call does not report it again, and returns PIXSUM_ERR_CUDA with the detail
 * "what: <CUDA's text> (<error name>)". */
static inline int psi_cuda_fail(cudaError_t e, const char *what)
{
    cudaGetLastError();
    return psi_fail(PIXSUM_ERR_CUDA, "%s: %s (%s)", what, cudaGetErrorString(e),
                    cudaGetErrorName(e));
}

/* Evaluates a CUDA runtime call; on failure returns psi_cuda_fail() from the
 * calling function. */
#define PSI_CUDA_TRY(call, what)                 \
    do {                                         \
        cudaError_t e_ = (call);                 \
        if (e_ != cudaSuccess)                   \
            return psi_cuda_fail(e_, what);      \
    } while (0)

#endif /* PIXSUM_CUDA_STATUS_H */

/*
 * cuda_status.h - how the host side of the CUDA backend (cuda_host.c,
 * cuda_hist_host.c, cuda_box.c) turns a failed CUDA runtime call into a pixsum
 * status: PIXSUM_ERR_CUDA with CUDA's text and error name as the detail; and
 * the check, shared by every device entry point, that the context's device
 * exists.
 */
#ifndef PIXSUM_CUDA_STATUS_H
#define PIXSUM_CUDA_STATUS_H

#include "../internal.h"
#include "pixsum_cuda.h"

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

/* The one check that a context's CUDA device exists: PIXSUM_OK, or
 * PIXSUM_ERR_UNAVAILABLE with "no CUDA device" or the device asked for and
 * the number present. */
static inline int psi_cuda_need_device(const pixsum_ctx *c)
{
    int n = pixsum_cuda_device_count();
    if (n <= 0)
        return psi_fail(PIXSUM_ERR_UNAVAILABLE, "no CUDA device");
    if (c->cuda_device >= n)
        return psi_fail(PIXSUM_ERR_UNAVAILABLE, "CUDA device %d requested, %d present",
                        c->cuda_device, n);
    return PIXSUM_OK;
}

#endif /* PIXSUM_CUDA_STATUS_H */

/*
 * cuda_memcheck.c - the reachability checks of cuda_memcheck.h, made with
 * cudaPointerGetAttributes() on the first and last byte of a range (a few
 * hundred nanoseconds each, no synchronisation).
 */
#include "cuda_memcheck.h"

#include <cuda_runtime_api.h>
#include <string.h>

/* PIXSUM_OK if byte p can be used by kernels on `device`; else a failure that
 * names `what` and says what p is. */
static int check_byte(const void *p, const char *what, const char *which, int device)
{
    struct cudaPointerAttributes a;
    memset(&a, 0, sizeof a);
    cudaError_t e = cudaPointerGetAttributes(&a, p);
    if (e != cudaSuccess) {
        cudaGetLastError(); /* not sticky: clear it */
        a.type = cudaMemoryTypeUnregistered;
    }
    switch (a.type) {
    case cudaMemoryTypeDevice:
        if (a.device != device)
            return psi_fail(PIXSUM_ERR_INVALID_ARG,
                            "%s: its %s byte is memory of CUDA device %d, but the context "
                            "computes on device %d (PIXSUM_PARAM_CUDA_DEVICE)",
                            what, which, a.device, device);
        return PIXSUM_OK;
    case cudaMemoryTypeManaged:
        return PIXSUM_OK;
    case cudaMemoryTypeHost:
        if (a.devicePointer == p)
            return PIXSUM_OK;
        return psi_fail(PIXSUM_ERR_INVALID_ARG,
                        "%s: its %s byte is page-locked host memory that is not mapped at "
                        "the same address on the device (use cudaHostGetDevicePointer)",
                        what, which);
    default: {
        int pageable = 0;
        if (cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device) !=
            cudaSuccess) {
            cudaGetLastError();
            pageable = 0;
        }
        if (pageable)
            return PIXSUM_OK;
        return psi_fail(PIXSUM_ERR_INVALID_ARG,
                        "%s: its %s byte (%p) is not memory the GPU can reach (host memory "
                        "from malloc, a freed buffer, or a view running past its cudaMalloc "
                        "allocation); pass cudaMalloc'ed, managed or cudaHostRegister'ed "
                        "memory, or use pixsum.h's host-memory functions",
                        what, which, p);
    }
    }
}

int psi_cuda_check_range(const void *p, size_t bytes, const char *what, int device)
{
    if (!p || bytes == 0)
        return PIXSUM_OK;
    int st = check_byte(p, what, "first", device);
    if (st == PIXSUM_OK && bytes > 1)
        st = check_byte((const char *)p + (bytes - 1), what, "last", device);
    return st;
}

int psi_cuda_check_view(const pixsum_view *v, const char *what, int device)
{
    if (!v || !v->data)
        return PIXSUM_OK;
    uintptr_t lo, hi;
    psi_view_extent(v, &lo, &hi);
    return psi_cuda_check_range((const void *)lo, (size_t)(hi - lo), what, device);
}

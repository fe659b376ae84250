/*
 * cuda_memcheck.h - checks that the memory a device-pointer entry point was
 * handed can be reached by the GPU, so that a host pointer, a freed buffer or
 * a view running far past its allocation is refused with a status instead of
 * faulting inside a kernel (which would leave the CUDA context unusable).
 */
#ifndef PIXSUM_CUDA_MEMCHECK_H
#define PIXSUM_CUDA_MEMCHECK_H

#include "../internal.h"

/* Checks the first and the last byte a (validated) view touches: each must be
 * device memory of `device`, managed memory, or page-locked host memory mapped
 * into the device's address space; plain pageable host memory is accepted
 * only on systems where the device can read it (cudaDevAttrPageableMemoryAccess).
 * `what` names the view in the detail text ("input", "table", "mask").
 * Returns PIXSUM_OK or PIXSUM_ERR_INVALID_ARG with a detail saying what the
 * memory is and what to use instead. Views with no data pointer pass. */
int psi_cuda_check_view(const pixsum_view *v, const char *what, int device);

/* The same for a plain byte range [p, p + bytes) (a workspace, a counts
 * array). bytes 0 checks nothing. */
int psi_cuda_check_range(const void *p, size_t bytes, const char *what, int device);

#endif /* PIXSUM_CUDA_MEMCHECK_H */

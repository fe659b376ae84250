/*
 * testutil_cuda.h - the checks the CUDA tests share (include after cmocka.h
 * and cuda_runtime_api.h): a CUDA call that must succeed, a pixsum call that
 * must return PIXSUM_OK; either failure ends the test with the call's text.
 */
#ifndef PIXSUM_TESTUTIL_CUDA_H
#define PIXSUM_TESTUTIL_CUDA_H

#define CU_OK(call)                                                                    \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess)                                                         \
            fail_msg("%s failed: %s", #call, cudaGetErrorString(e_));                  \
    } while (0)

#define PX_OK(call)                                                                    \
    do {                                                                               \
        int st_ = (call);                                                              \
        if (st_ != PIXSUM_OK)                                                          \
            fail_msg("%s returned %d (%s): %s", #call, st_, pixsum_strerror(st_),     \
                     pixsum_last_error());                                            \
    } while (0)

#endif /* PIXSUM_TESTUTIL_CUDA_H */

/*
 * bench_check.h - the checks the GPU benchmarks share: a CUDA call (CK) or a
 * pixsum call (PK) that fails prints where and why and ends the program.
 */
#ifndef PIXSUM_BENCH_CHECK_H
#define PIXSUM_BENCH_CHECK_H

#include <cstdio>
#include <cstdlib>

#define CK(call)                                                                        \
    do {                                                                                \
        cudaError_t e_ = (call);                                                        \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,                \
                    cudaGetErrorString(e_));                                            \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

#define PK(call)                                                                        \
    do {                                                                                \
        int st_ = (call);                                                               \
        if (st_ != PIXSUM_OK) {                                                         \
            fprintf(stderr, "%s:%d %s: %s: %s\n", __FILE__, __LINE__, #call,           \
                    pixsum_strerror(st_), pixsum_last_error());                         \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

#endif /* PIXSUM_BENCH_CHECK_H */

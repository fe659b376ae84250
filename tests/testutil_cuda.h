/*
 * testutil_cuda.h - what the CUDA tests share (include after pixsum.h,
 * cmocka.h and cuda_runtime_api.h): a CUDA call that must succeed, a pixsum
 * call that must return PIXSUM_OK (either failure ends the test with the
 * call's text), and seeded random samples of every input type.
 */
#ifndef PIXSUM_TESTUTIL_CUDA_H
#define PIXSUM_TESTUTIL_CUDA_H

#include <stdint.h>

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

/* The tests' random numbers (splitmix64); seed rng_state before use. */
static uint64_t rng_state;

static inline uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* n random samples of type t at p (extreme: the type's extreme value; floats
 * are uniform in [0, 1) either way). */
static inline void fill_random(pixsum_type t, void *p, size_t n, int extreme)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd();
        switch (t) {
        case PIXSUM_U8: ((uint8_t *)p)[i] = extreme ? 255 : (uint8_t)r; break;
        case PIXSUM_U16: ((uint16_t *)p)[i] = extreme ? 65535 : (uint16_t)r; break;
        case PIXSUM_I16: ((int16_t *)p)[i] = extreme ? (int16_t)-32768 : (int16_t)r; break;
        case PIXSUM_I32: ((int32_t *)p)[i] = extreme ? INT32_MIN : (int32_t)r; break;
        case PIXSUM_U32: ((uint32_t *)p)[i] = extreme ? UINT32_MAX : (uint32_t)r; break;
        case PIXSUM_F32: ((float *)p)[i] = (float)((double)(r >> 11) / 9007199254740992.0); break;
        case PIXSUM_F64: ((double *)p)[i] = (double)(r >> 11) / 9007199254740992.0; break;
        default: break;
        }
    }
}

#endif /* PIXSUM_TESTUTIL_CUDA_H */

/*
 * profile_cases.cu - one call of each kernel that misses a figure of issues 5
 * and 6, bracketed by cudaProfilerStart/Stop, for Nsight Compute:
 *
 *   ncu --clock-control none --profile-from-start off --set full \
 *       -o prof build-gpu/profile_cases
 *
 * Each case is run twice before the profiled call (warm-up, first-use
 * allocations), so ncu sees only the steady-state kernels:
 *   - the CUDA histogram's u8 256-bin schemes: "flat" on noise and constant,
 *     "narrow" on noise (forced with pixsum_cuda_set_force(), the
 *     experimental API);
 *   - its u16 65536-bin "wide" scheme on noise and constant;
 *   - the integral image's default kernels: u8->u32 and f32->f32 at 8192^2,
 *     u8->u32 at 1024^2 and 16384^2, u8->u64 at 8192^2;
 *   - a read kernel and a copy kernel that move the same bytes as the 8192^2
 *     cases (the floors the figures are measured against).
 * The case order is printed.
 * usage: profile_cases [only]   only: substrings of the case names to run, "a|b"
 */
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "pixsum.h"
#define PIXSUM_EXPERIMENTAL /* pixsum_cuda_set_force() */
#include "pixsum_cuda.h"

#include "bench_check.h"

__device__ unsigned mix32(unsigned long long i)
{
    unsigned long long z = i * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (unsigned)(z ^ (z >> 31));
}

/* noise (constant == 0) or every sample = constant. */
template <typename T> __global__ void fill(T *p, long long n, unsigned levels, unsigned constant)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        p[i] = (T)(constant ? constant : mix32((unsigned long long)i) % levels);
}

__global__ void read_kernel(const uint4 *p, long long n, unsigned *sink)
{
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        uint4 v = __ldcs(p + i);
        acc.x ^= v.x;
        acc.y ^= v.y;
        acc.z ^= v.z;
        acc.w ^= v.w;
    }
    if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x9E3779B9u)
        sink[0] = 1;
}

/* Reads n 4-byte words and writes 4 x n: the u8->u32 copy floor's traffic. */
__global__ void widen_kernel(const unsigned *in, uint4 *out, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        unsigned v = __ldcs(in + i);
        __stcs(out + i, make_uint4(v & 255u, (v >> 8) & 255u, (v >> 16) & 255u, v >> 24));
    }
}

static const char *g_only;

static bool wanted(const char *name)
{
    if (g_only) { /* "a|b|c": any of the substrings */
        bool hit = false;
        std::string list = g_only;
        size_t from = 0;
        while (!hit && from <= list.size()) {
            size_t bar = list.find('|', from);
            std::string part = list.substr(from, bar == std::string::npos ? bar : bar - from);
            hit = !part.empty() && strstr(name, part.c_str());
            from = bar == std::string::npos ? list.size() + 1 : bar + 1;
        }
        if (!hit)
            return false;
    }
    printf("case: %s\n", name);
    fflush(stdout);
    return true;
}

template <typename F> static void profiled(F &&call)
{
    call();
    call();
    CK(cudaDeviceSynchronize());
    CK(cudaProfilerStart());
    call();
    CK(cudaDeviceSynchronize());
    CK(cudaProfilerStop());
}

static void hist_case(pixsum_ctx *ctx, const char *name, pixsum_type type, size_t side,
                      size_t bins, unsigned constant, int scheme)
{
    if (!wanted(name))
        return;
    size_t es = pixsum_type_size(type), n = side * side;
    void *img;
    uint64_t *counts;
    CK(cudaMalloc(&img, n * es));
    CK(cudaMalloc(&counts, bins * 8));
    if (es == 1)
        fill<unsigned char><<<1024, 256>>>((unsigned char *)img, (long long)n, 256, constant);
    else
        fill<unsigned short><<<1024, 256>>>((unsigned short *)img, (long long)n, 65536,
                                            constant);
    CK(cudaGetLastError());
    pixsum_cuda_force force;
    memset(&force, 0, sizeof force);
    force.hist_scheme = scheme; /* 0: the automatic choice */
    PK(pixsum_cuda_set_force(ctx, &force));
    pixsum_view v = pixsum_view_2d(img, type, side, side, 1, 0);
    pixsum_hist_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.bins = bins;
    spec.lo = 0;
    spec.hi = (double)bins;
    profiled([&] { PK(pixsum_cuda_histogram(ctx, &v, &spec, counts, bins, NULL, NULL)); });
    PK(pixsum_cuda_set_force(ctx, NULL));
    CK(cudaFree(img));
    CK(cudaFree(counts));
}

static void sat_case(pixsum_ctx *ctx, const char *name, pixsum_type in_t, pixsum_type out_t,
                     size_t side)
{
    if (!wanted(name))
        return;
    size_t n = side * side;
    void *in, *out;
    CK(cudaMalloc(&in, n * pixsum_type_size(in_t)));
    CK(cudaMalloc(&out, n * pixsum_type_size(out_t)));
    if (in_t == PIXSUM_U8)
        fill<unsigned char><<<1024, 256>>>((unsigned char *)in, (long long)n, 256, 0);
    else
        fill<float><<<1024, 256>>>((float *)in, (long long)n, 256, 0);
    CK(cudaGetLastError());
    pixsum_view vi = pixsum_view_2d(in, in_t, side, side, 1, 0);
    pixsum_view vo = pixsum_view_2d(out, out_t, side, side, 1, 0);
    profiled([&] { PK(pixsum_cuda_integral(ctx, &vi, &vo, NULL)); });
    CK(cudaFree(in));
    CK(cudaFree(out));
}

int main(int argc, char **argv)
{
    g_only = argc > 1 ? argv[1] : NULL;
    pixsum_ctx *ctx = pixsum_ctx_new();
    if (!ctx) {
        fprintf(stderr, "profile_cases: no context\n");
        return 1;
    }
    PK(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 1)); /* u8->u32 at 8192^2 needs wrap */
    hist_case(ctx, "hist u8 8192 noise flat", PIXSUM_U8, 8192, 256, 0, 0);
    hist_case(ctx, "hist u8 8192 constant flat", PIXSUM_U8, 8192, 256, 77, 0);
    hist_case(ctx, "hist u8 8192 noise narrow", PIXSUM_U8, 8192, 256, 0, PIXSUM_CUDA_FORCE_NARROW);
    hist_case(ctx, "hist u16 8192 noise wide", PIXSUM_U16, 8192, 65536, 0, 0);
    hist_case(ctx, "hist u16 8192 constant wide", PIXSUM_U16, 8192, 65536, 12345, 0);
    sat_case(ctx, "sat u8 u32 8192", PIXSUM_U8, PIXSUM_U32, 8192);
    sat_case(ctx, "sat f32 f32 8192", PIXSUM_F32, PIXSUM_F32, 8192);
    sat_case(ctx, "sat u8 u32 1024", PIXSUM_U8, PIXSUM_U32, 1024);
    sat_case(ctx, "sat u8 u32 16384", PIXSUM_U8, PIXSUM_U32, 16384);
    sat_case(ctx, "sat u8 u64 8192", PIXSUM_U8, PIXSUM_U64, 8192);
    if (wanted("floors 8192")) {
        const long long n = 8192LL * 8192;
        unsigned char *in;
        uint4 *out;
        unsigned *sink;
        CK(cudaMalloc(&in, (size_t)n));
        CK(cudaMalloc(&out, (size_t)n * 4));
        CK(cudaMalloc(&sink, 16));
        CK(cudaMemset(in, 1, (size_t)n));
        profiled([&] {
            read_kernel<<<132 * 8, 256>>>((const uint4 *)in, n / 16, sink);
            CK(cudaGetLastError());
        });
        profiled([&] {
            widen_kernel<<<132 * 8, 256>>>((const unsigned *)in, out, n / 4);
            CK(cudaGetLastError());
        });
        CK(cudaFree(in));
        CK(cudaFree(out));
        CK(cudaFree(sink));
    }
    pixsum_ctx_free(ctx);
    printf("profile_cases: done\n");
    return 0;
}

/*
 * gpu_bench.cu - GPU timings of pixsum's CUDA integral methods next to their
 * peers and floors, all measured in this one process:
 *   floor   a copy kernel that moves the same bytes without computing
 *           (u8 -> u32: reads 1 B, writes 4 B per pixel; f32 -> f32: 4 + 4);
 *   npp     nppiIntegral_8u32s_C1R_Ctx (u8 -> padded i32 table), when built
 *           with NPP (PIXSUM_BENCH_NPP);
 *   methods cuda.lookback and the paper methods through pixsum_cuda_integral_ws
 *           / pixsum_cuda_integral on device data and one stream.
 * Timing: CUDA events around a batch of calls, after warm-up; each figure is
 * the median of `reps` batches divided by the batch length. When one input +
 * output pair fits in 2x the L2 cache, calls rotate over enough buffer pairs to
 * span more than 2x L2, so the cache never holds the data of the next call.
 *
 * Sections (argv[1]): "tune" (register-kernel rows and hints), "fast"
 * (targets table), "variants" (PIXSUM_CUDA_LB launch variants side by side:
 * BENCH_LB_VARIANTS, BENCH_SIZES, BENCH_PAIR_SIZES), "p004" (paper 004
 * sweep), "p003" (paper 003 4096^2 table, CPU and GPU, host and device data),
 * "all" (those five); "trace" (the staged kernel's phase times, a
 * PIXSUM_CUDA_TRACE build) only when named. argv[2]: batches per figure.
 * Output: a readable table on stdout and CSV rows (prefix "csv,") to parse.
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "pixsum.h"
#include "pixsum_cuda.h"

#include "device_caps.cuh" /* psi_launch, psi_pdl_wait (src/cuda) */

#ifdef PIXSUM_BENCH_NPP
#include <npp.h>
#endif

#include "bench_check.h"

static cudaStream_t g_stream;
static size_t g_l2 = 50u << 20;
static int g_cc_major = 0;
static int g_reps = 15;

/* ---- the copy floor ------------------------------------------------------------- */

/* Each thread moves chunks of 16 output bytes (16 / sizeof(TOut) elements),
 * four chunks per thread spaced a grid apart, so every load and store
 * instruction of a warp covers one contiguous span. CS: streaming hints.
 * PDL: launched with programmatic dependent launch, as cuda.lookback is on
 * sm_90 (waits for the previous kernel before its first access). */
template <int B> struct raw_of;
template <> struct raw_of<4> { typedef unsigned type; };
template <> struct raw_of<8> { typedef uint2 type; };
template <> struct raw_of<16> { typedef uint4 type; };

template <typename TIn, typename TOut, int CS, bool PDL = false>
__global__ void copy_kernel(const TIn *__restrict__ in, TOut *__restrict__ out, size_t n)
{
    if (PDL)
        psi_pdl_wait();
    constexpr int E = 16 / sizeof(TOut);
    typedef typename raw_of<E * sizeof(TIn)>::type rin;
    union vin {
        rin r;
        TIn e[E];
    };
    struct alignas(16) vout {
        TOut e[E];
    };
    const size_t chunks = n / E, grid = (size_t)gridDim.x * blockDim.x;
    size_t c0 = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; c0 < chunks; c0 += 4 * grid) {
        vin a[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            size_t c = c0 + u * grid;
            if (c < chunks)
                a[u].r = CS ? __ldcs((const rin *)in + c) : ((const rin *)in)[c];
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            size_t c = c0 + u * grid;
            if (c >= chunks)
                continue;
            vout b;
#pragma unroll
            for (int k = 0; k < E; k++)
                b.e[k] = (TOut)a[u].e[k];
            if (CS)
                __stcs((uint4 *)((vout *)out + c), *(uint4 *)&b);
            else
                ((vout *)out)[c] = b;
        }
    }
}

/* ---- buffers and timing ------------------------------------------------------- */

struct bufset {
    std::vector<void *> in, out;
    size_t in_bytes, out_bytes;
};

static bufset make_bufs(size_t in_bytes, size_t out_bytes, pixsum_type tin)
{
    bufset b;
    b.in_bytes = in_bytes;
    b.out_bytes = out_bytes;
    size_t pair = in_bytes + out_bytes;
    size_t n = pair >= 2 * g_l2 ? 1 : (4 * g_l2 + pair - 1) / pair;
    if (n > 64)
        n = 64;
    std::vector<unsigned char> host(in_bytes);
    unsigned long long x = 88172645463325252ull;
    for (size_t i = 0; i < in_bytes; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        host[i] = (unsigned char)x;
    }
    if (tin == PIXSUM_F32) /* random floats in [0, 1) */
        for (size_t i = 0; i + 4 <= in_bytes; i += 4) {
            float f = (float)(host[i] | host[i + 1] << 8) / 65536.0f;
            memcpy(&host[i], &f, 4);
        }
    for (size_t i = 0; i < n; i++) {
        void *a, *o;
        CK(cudaMalloc(&a, in_bytes));
        CK(cudaMalloc(&o, out_bytes));
        CK(cudaMemcpy(a, host.data(), in_bytes, cudaMemcpyHostToDevice));
        CK(cudaMemset(o, 0, out_bytes));
        b.in.push_back(a);
        b.out.push_back(o);
    }
    return b;
}

static void free_bufs(bufset &b)
{
    for (void *p : b.in)
        cudaFree(p);
    for (void *p : b.out)
        cudaFree(p);
    b.in.clear();
    b.out.clear();
}

/* Median milliseconds per call of fn(buffer index), batches of `batch` calls. */
template <typename F>
static double time_ms(F fn, size_t nbufs, int batch)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int w = 0; w < 3; w++)
        fn((size_t)w % nbufs);
    CK(cudaStreamSynchronize(g_stream));
    std::vector<double> v;
    size_t k = 0;
    for (int r = 0; r < g_reps; r++) {
        CK(cudaEventRecord(a, g_stream));
        for (int i = 0; i < batch; i++)
            fn(k++ % nbufs);
        CK(cudaEventRecord(b, g_stream));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        v.push_back(ms / batch);
    }
    CK(cudaGetLastError());
    std::sort(v.begin(), v.end());
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return v[v.size() / 2];
}

static int batch_for(size_t bytes)
{
    return bytes < (64u << 20) ? 20 : 3;
}

/* ---- pixsum methods on device data ------------------------------------------------ */

static double time_method(const char *method, pixsum_type tin, pixsum_type tout, size_t w,
                          size_t h, bufset &b, const pixsum_cuda_tuning *tun,
                          ptrdiff_t out_stride = 0)
{
    pixsum_ctx *ctx = pixsum_ctx_new();
    PK(pixsum_ctx_set_method(ctx, method));
    PK(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 1));
    PK(pixsum_ctx_set(ctx, PIXSUM_PARAM_CUDA_STREAM, (intptr_t)g_stream));
    if (tun)
        PK(pixsum_cuda_set_tuning(ctx, tun));
    pixsum_view vi = pixsum_view_2d(b.in[0], tin, w, h, 1, 0);
    pixsum_view vo = pixsum_view_2d(b.out[0], tout, w, h, 1, out_stride);
    size_t need = 0;
    PK(pixsum_cuda_workspace_size(ctx, &vi, &vo, NULL, &need));
    void *ws;
    CK(cudaMalloc(&ws, need));
    CK(cudaMemset(ws, 0, need));
    double ms = time_ms(
        [&](size_t i) {
            pixsum_view a = pixsum_view_2d(b.in[i], tin, w, h, 1, 0);
            pixsum_view o = pixsum_view_2d(b.out[i], tout, w, h, 1, out_stride);
            PK(pixsum_cuda_integral_ws(ctx, &a, &o, NULL, 0, ws, need, g_stream));
        },
        b.in.size(), batch_for(b.in_bytes + b.out_bytes));
    CK(cudaFree(ws));
    pixsum_ctx_free(ctx);
    return ms;
}

/* The copy floor: the fastest of plain / streaming-hint copies, with a grid
 * covering the data once or 8 blocks per SM looping over it. With pdl_best
 * (sm_90 and newer), *pdl_best gets the fastest of the same four launched
 * with programmatic dependent launch, as cuda.lookback is: its launch then
 * overlaps the previous call's drain too (-1 on older devices). */
template <typename TIn, typename TOut>
static double time_copy(size_t n, bufset &b, double variants[4], double *pdl_best = NULL)
{
    double best = 1e30;
    const int passes = pdl_best && g_cc_major >= 9 ? 2 : 1;
    if (pdl_best)
        *pdl_best = -1;
    for (int pass = 0; pass < passes; pass++) {
        const bool pdl = pass == 1;
        double best_pass = 1e30;
        for (int v = 0; v < 4; v++) {
            size_t threads = (n / (16 / sizeof(TOut)) + 3) / 4;
            unsigned blocks = v & 2 ? 132 * 8 : (unsigned)((threads + 255) / 256);
            double t = time_ms(
                [&](size_t i) {
                    const TIn *in = (const TIn *)b.in[i];
                    TOut *out = (TOut *)b.out[i];
                    if (v & 1)
                        CK(psi_launch(pdl, pdl ? copy_kernel<TIn, TOut, 1, true>
                                               : copy_kernel<TIn, TOut, 1, false>,
                                      dim3(blocks), dim3(256), 0, g_stream, in, out, n));
                    else
                        CK(psi_launch(pdl, pdl ? copy_kernel<TIn, TOut, 0, true>
                                               : copy_kernel<TIn, TOut, 0, false>,
                                      dim3(blocks), dim3(256), 0, g_stream, in, out, n));
                },
                b.in.size(), batch_for(b.in_bytes + b.out_bytes));
            if (variants && !pdl)
                variants[v] = t;
            best_pass = t < best_pass ? t : best_pass;
        }
        if (pdl)
            *pdl_best = best_pass;
        else
            best = best_pass;
    }
    return best;
}

/* GPU time per call without host overhead: 20 calls captured in a CUDA graph
 * (possible because the calls neither allocate nor synchronise), replayed. */
static double graph_ms(pixsum_type tin, pixsum_type tout, size_t w, size_t h, bufset &b,
                       double *host_us)
{
    pixsum_ctx *ctx = pixsum_ctx_new();
    PK(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 1));
    pixsum_view vi = pixsum_view_2d(b.in[0], tin, w, h, 1, 0);
    pixsum_view vo = pixsum_view_2d(b.out[0], tout, w, h, 1, 0);
    size_t need = 0;
    PK(pixsum_cuda_workspace_size(ctx, &vi, &vo, NULL, &need));
    void *ws;
    CK(cudaMalloc(&ws, need));
    CK(cudaMemset(ws, 0, need));
    const int calls = 20;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeThreadLocal));
    for (int c = 0; c < calls; c++) {
        size_t i = (size_t)c % b.in.size();
        pixsum_view a = pixsum_view_2d(b.in[i], tin, w, h, 1, 0);
        pixsum_view o = pixsum_view_2d(b.out[i], tout, w, h, 1, 0);
        PK(pixsum_cuda_integral_ws(ctx, &a, &o, NULL, 0, ws, need, g_stream));
    }
    CK(cudaStreamEndCapture(g_stream, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    double ms = time_ms([&](size_t) { CK(cudaGraphLaunch(exec, g_stream)); }, 1, 1) / calls;
    /* Host cost of one call (enqueue only). */
    CK(cudaStreamSynchronize(g_stream));
    const int n = 200;
    double t0 = std::chrono::duration<double, std::micro>(
                    std::chrono::steady_clock::now().time_since_epoch()).count();
    for (int c = 0; c < n; c++)
        PK(pixsum_cuda_integral_ws(ctx, &vi, &vo, NULL, 0, ws, need, g_stream));
    double t1 = std::chrono::duration<double, std::micro>(
                    std::chrono::steady_clock::now().time_since_epoch()).count();
    CK(cudaStreamSynchronize(g_stream));
    *host_us = (t1 - t0) / n;
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaFree(ws);
    pixsum_ctx_free(ctx);
    return ms;
}

#ifdef PIXSUM_BENCH_NPP
static double time_npp(size_t w, size_t h)
{
    /* NPP writes a (W+1) x (H+1) i32 table. */
    bufset b = make_bufs(w * h, (w + 1) * (h + 1) * 4, PIXSUM_U8);
    NppStreamContext nc;
    memset(&nc, 0, sizeof nc);
    int dev = 0;
    cudaDeviceProp pr;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&pr, dev));
    nc.hStream = g_stream;
    nc.nCudaDeviceId = dev;
    nc.nMultiProcessorCount = pr.multiProcessorCount;
    nc.nMaxThreadsPerMultiProcessor = pr.maxThreadsPerMultiProcessor;
    nc.nMaxThreadsPerBlock = pr.maxThreadsPerBlock;
    nc.nSharedMemPerBlock = pr.sharedMemPerBlock;
    nc.nCudaDevAttrComputeCapabilityMajor = pr.major;
    nc.nCudaDevAttrComputeCapabilityMinor = pr.minor;
    cudaStreamGetFlags(g_stream, &nc.nStreamFlags);
    NppiSize roi = {(int)w, (int)h};
    int bad = 0;
    double ms = time_ms(
        [&](size_t i) {
            NppStatus s = nppiIntegral_8u32s_C1R_Ctx((const Npp8u *)b.in[i], (int)w,
                                                     (Npp32s *)b.out[i], (int)(w + 1) * 4, roi,
                                                     0, nc);
            if (s != NPP_SUCCESS)
                bad = (int)s;
        },
        b.in.size(), batch_for(b.in_bytes + b.out_bytes));
    free_bufs(b);
    if (bad) {
        fprintf(stderr, "nppiIntegral_8u32s_C1R_Ctx returned %d\n", bad);
        return -1;
    }
    return ms;
}
#else
static double time_npp(size_t, size_t)
{
    return -1;
}
#endif

/* ---- sections ----------------------------------------------------------------------- */

/* The headline cases of the fast and variants sections: u8->u32 and f32->f32
 * at each size, f32->f64 up to 8192^2, each with its buffers and same-run copy
 * floor (ms; cpv[0..3]: the floor's four variants, cpv[4]: the floor launched
 * with PDL, -1 where there is none): fn(tin, tout, n, b, cp, cpv). */
template <typename F>
static void for_each_headline_case(const std::vector<size_t> &sizes, F fn)
{
    for (int pi = 0; pi < 3; pi++) {
        pixsum_type tin = pi == 0 ? PIXSUM_U8 : PIXSUM_F32;
        pixsum_type tout = pi == 0 ? PIXSUM_U32 : (pi == 1 ? PIXSUM_F32 : PIXSUM_F64);
        for (size_t n : sizes) {
            if (pi == 2 && n > 8192)
                continue;
            size_t px = n * n;
            bufset b = make_bufs(px * pixsum_type_size(tin), px * pixsum_type_size(tout), tin);
            double cpv[5];
            double cp = pi == 0   ? time_copy<unsigned char, unsigned>(px, b, cpv, &cpv[4])
                        : pi == 1 ? time_copy<float, float>(px, b, cpv, &cpv[4])
                                  : time_copy<float, double>(px, b, cpv, &cpv[4]);
            fn(tin, tout, n, b, cp, cpv);
            free_bufs(b);
        }
    }
}

static void section_fast(void)
{
    printf("\n== fast method vs same-run copy floor and NPP (device data, median of %d) ==\n",
           g_reps);
    printf("%-10s %7s %10s %10s %10s %8s %8s %9s %10s %8s\n", "pair", "size", "copy_ms",
           "lookback_ms", "npp_ms", "vs_copy", "npp_x", "Gpx/s", "pdlcopy_ms", "vs_pdl");
    for_each_headline_case({1024, 2048, 4096, 8192, 16384}, [](pixsum_type tin, pixsum_type tout,
                                                              size_t n, bufset &b, double cp,
                                                              const double *cpv) {
        char pair[32];
        snprintf(pair, sizeof pair, "%s->%s", pixsum_type_name(tin), pixsum_type_name(tout));
        printf("csv,copyvariants,%s,%zu,%.5f,%.5f,%.5f,%.5f\n", pair, n, cpv[0], cpv[1], cpv[2],
               cpv[3]);
        double lb = time_method("cuda.lookback", tin, tout, n, n, b, NULL);
        double np = tin == PIXSUM_U8 ? time_npp(n, n) : -1;
        printf("%-10s %7zu %10.4f %10.4f %10.4f %8.3f %8.2f %9.1f %10.4f %8.3f\n", pair, n, cp,
               lb, np, cp / lb, np > 0 ? np / lb : 0.0, (double)(n * n) / lb * 1e-6, cpv[4],
               cpv[4] > 0 ? cpv[4] / lb : 0.0);
        printf("csv,fast,%s,%zu,%.5f,%.5f,%.5f,%.5f\n", pair, n, cp, lb, np, cpv[4]);
    });
}

/* The sizes in environment variable `var` (comma-separated), or `dflt` when
 * it is unset or empty. */
static std::vector<size_t> sizes_from_env(const char *var, std::vector<size_t> dflt)
{
    const char *sz = getenv(var);
    if (!sz || !*sz)
        return dflt;
    std::vector<size_t> sizes;
    for (const char *c = sz; *c;) {
        char *end;
        unsigned long v = strtoul(c, &end, 10);
        if (end == c)
            break;
        if (v > 0)
            sizes.push_back(v);
        c = *end == ',' ? end + 1 : end;
    }
    return sizes;
}

/* The PIXSUM_CUDA_LB strings of BENCH_LB_VARIANTS (space-separated), or of
 * `dflt` when it is unset. */
static std::vector<std::string> variants_from_env(const char *dflt)
{
    const char *env = getenv("BENCH_LB_VARIANTS");
    const std::string list = env ? env : dflt;
    std::vector<std::string> vars;
    for (size_t a = 0; a < list.size();) {
        size_t z = list.find(' ', a);
        if (z == std::string::npos)
            z = list.size();
        if (z > a)
            vars.push_back(list.substr(a, z - a));
        a = z + 1;
    }
    return vars;
}

/* cuda.lookback launch variants side by side with the copy floor, all in this
 * process: the PIXSUM_CUDA_LB strings of BENCH_LB_VARIANTS (space-separated;
 * default: both kernels, with and without their look-backs) at the sizes of
 * BENCH_SIZES (comma-separated; default 1024,4096,8192,16384, and then the
 * other type pairs at 8192^2, or at the sizes of BENCH_PAIR_SIZES), then the
 * GPU-only time per call at 1024^2 (graph replay) of each. */
static void section_variants(void)
{
    const char *sz = getenv("BENCH_SIZES");
    const std::vector<size_t> sizes = sizes_from_env("BENCH_SIZES", {1024, 4096, 8192, 16384});
    const std::vector<std::string> vars =
        variants_from_env("staged=0 staged=1 staged=0,hints=7 staged=1,hints=7");
    printf("\n== cuda.lookback variants vs same-run copy floor (device data, median of %d) ==\n",
           g_reps);
    printf("(hints=7 skips the look-backs: a timing experiment whose table is wrong)\n");
    printf("%-10s %6s %9s", "pair", "size", "copy_ms");
    for (auto &v : vars)
        printf(" %22s", v.c_str());
    printf("\n");
    for_each_headline_case(sizes, [&](pixsum_type tin, pixsum_type tout, size_t n, bufset &b,
                                      double cp, const double *) {
        printf("%s->%-4s %6zu %9.4f", pixsum_type_name(tin), pixsum_type_name(tout), n, cp);
        for (auto &v : vars) {
            setenv("PIXSUM_CUDA_LB", v.c_str(), 1);
            double t = time_method("cuda.lookback", tin, tout, n, n, b, NULL);
            printf("   %9.4f (%5.3f cp)", t, cp / t);
            fflush(stdout);
            fprintf(stderr, "csv,variant,%s,%s,%zu,%s,%.5f,%.5f\n", pixsum_type_name(tin),
                    pixsum_type_name(tout), n, v.c_str(), cp, t);
        }
        unsetenv("PIXSUM_CUDA_LB");
        printf("\n");
    });
    /* The other type pairs (ms per call; which kernel and hints each should
     * default to) at the sizes of BENCH_PAIR_SIZES, which adds f32 -> f64;
     * without it at 8192^2 unless BENCH_SIZES is set. */
    const char *ps = getenv("BENCH_PAIR_SIZES");
    const bool pair_sizes = ps && *ps;
    std::vector<size_t> more_sizes;
    if (pair_sizes)
        more_sizes = sizes_from_env("BENCH_PAIR_SIZES", {});
    else if (!(sz && *sz))
        more_sizes.push_back(8192);
    const pixsum_type more[][2] = {{PIXSUM_U8, PIXSUM_U64},  {PIXSUM_U16, PIXSUM_U32},
                                   {PIXSUM_U16, PIXSUM_U64}, {PIXSUM_I32, PIXSUM_I64},
                                   {PIXSUM_F64, PIXSUM_F64}, {PIXSUM_F32, PIXSUM_F64}};
    const int n_more = pair_sizes ? 6 : 5;
    for (int m = 0; m < n_more * (int)more_sizes.size(); m++) {
        const pixsum_type *pr = more[m / (int)more_sizes.size()];
        size_t n = more_sizes[m % more_sizes.size()], px = n * n;
        pixsum_type tin = pr[0], tout = pr[1];
        bufset b = make_bufs(px * pixsum_type_size(tin), px * pixsum_type_size(tout), tin);
        printf("%s->%-4s %6zu %9s", pixsum_type_name(tin), pixsum_type_name(tout), n, "-");
        for (auto &v : vars) {
            setenv("PIXSUM_CUDA_LB", v.c_str(), 1);
            double t = time_method("cuda.lookback", tin, tout, n, n, b, NULL);
            printf("   %9.4f %12s", t, "");
            fflush(stdout);
            fprintf(stderr, "csv,variant,%s,%s,%zu,%s,-1,%.5f\n", pixsum_type_name(tin),
                    pixsum_type_name(tout), n, v.c_str(), t);
        }
        unsetenv("PIXSUM_CUDA_LB");
        printf("\n");
        free_bufs(b);
    }
    size_t n = 1024, px = n * n;
    bufset b = make_bufs(px, px * 4, PIXSUM_U8);
    for (auto &v : vars) {
        setenv("PIXSUM_CUDA_LB", v.c_str(), 1);
        double host_us = 0, g = graph_ms(PIXSUM_U8, PIXSUM_U32, n, n, b, &host_us);
        printf("u8->u32 1024^2 %-22s graph replay %.2f us per call (GPU only); host enqueue "
               "%.2f us per call\n", v.c_str(), g * 1e3, host_us);
    }
    unsetenv("PIXSUM_CUDA_LB");
    free_bufs(b);
}

/* The staged kernel's phase times per tile (a library built with
 * -DPIXSUM_CUDA_TRACE=ON; PIXSUM_CUDA_LB=...,trace=1 appends a trace region to
 * the workspace, TRACE_WORDS words per tile, see LB_TRACE_WORDS in sat_lookback.cuh).
 * For u8->u32 (f32->f32 with BENCH_TRACE_PAIR=f32) at the sizes of
 * BENCH_SIZES (default 4096,8192,16384) and the variants of
 * BENCH_LB_VARIANTS (default "staged=1 staged=1,hints=7"): times
 * the variant with and without the trace, then one traced call on a buffer not
 * in L2, writes its records to $OUT/trace-[f32-]<variant>-<size>.bin and prints the
 * median and 90th percentile of each phase (us) and the walk lengths.
 * TRACE_PAD=k gives the table rows k extra elements (row stride experiment). */
static const size_t TRACE_WORDS = 14; /* LB_TRACE_WORDS */

static double pct(std::vector<double> v, double q)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[(size_t)(q * (double)(v.size() - 1))];
}

static void section_trace(void)
{
    const std::vector<size_t> sizes = sizes_from_env("BENCH_SIZES", {4096, 8192, 16384});
    const std::vector<std::string> vars = variants_from_env("staged=1 staged=1,hints=7");
    const char *od = getenv("OUT");
    std::string outdir = od && *od ? od : ".";
    const char *tp = getenv("BENCH_TRACE_PAIR");
    const bool f32 = tp && strcmp(tp, "f32") == 0;
    const pixsum_type tin = f32 ? PIXSUM_F32 : PIXSUM_U8, tout = f32 ? PIXSUM_F32 : PIXSUM_U32;
    const size_t in_size = f32 ? 4 : 1;
    printf("\n== staged kernel phase trace, %s (us; p50 / p90 over tiles) ==\n",
           f32 ? "f32->f32" : "u8->u32");
    const char *pe = getenv("TRACE_PAD"); /* extra u32 per table row (stride experiment) */
    const size_t pad = pe ? strtoul(pe, NULL, 10) : 0;
    for (size_t n : sizes) {
        size_t px = n * n;
        const ptrdiff_t ostride = pad ? (ptrdiff_t)((n + pad) * 4) : 0;
        bufset b = make_bufs(px * in_size, (n + pad) * n * 4, tin);
        double cp = f32 ? time_copy<float, float>(px, b, NULL)
                        : time_copy<unsigned char, unsigned>(px, b, NULL);
        for (const std::string &v : vars) {
            setenv("PIXSUM_CUDA_LB", v.c_str(), 1);
            double plain = time_method("cuda.lookback", tin, tout, n, n, b, NULL, ostride);
            pixsum_ctx *ctx = pixsum_ctx_new();
            PK(pixsum_ctx_set_method(ctx, "cuda.lookback"));
            PK(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 1));
            PK(pixsum_ctx_set(ctx, PIXSUM_PARAM_CUDA_STREAM, (intptr_t)g_stream));
            pixsum_view vi = pixsum_view_2d(b.in[0], tin, n, n, 1, 0);
            pixsum_view vo = pixsum_view_2d(b.out[0], tout, n, n, 1, ostride);
            size_t need0 = 0, need = 0;
            PK(pixsum_cuda_workspace_size(ctx, &vi, &vo, NULL, &need0));
            std::string vt = v + ",trace=1";
            setenv("PIXSUM_CUDA_LB", vt.c_str(), 1);
            double traced = time_method("cuda.lookback", tin, tout, n, n, b, NULL, ostride);
            PK(pixsum_cuda_workspace_size(ctx, &vi, &vo, NULL, &need));
            const size_t off = (need0 + 7) & ~(size_t)7;
            if (need <= off) { /* the register kernel was chosen: it records nothing */
                printf("%-18s %6zu not the staged kernel: no trace\n", v.c_str(), n);
                pixsum_ctx_free(ctx);
                unsetenv("PIXSUM_CUDA_LB");
                continue;
            }
            const size_t tiles = (need - off) / (TRACE_WORDS * 8);
            void *ws;
            CK(cudaMalloc(&ws, need));
            CK(cudaMemset(ws, 0, need));
            for (size_t i = 0; i < b.in.size() + 2; i++) { /* warm, then a cold buffer */
                size_t k = i % b.in.size();
                pixsum_view ai = pixsum_view_2d(b.in[k], tin, n, n, 1, 0);
                pixsum_view ao = pixsum_view_2d(b.out[k], tout, n, n, 1, ostride);
                PK(pixsum_cuda_integral_ws(ctx, &ai, &ao, NULL, 0, ws, need, g_stream));
            }
            CK(cudaStreamSynchronize(g_stream));
            std::vector<unsigned long long> rec(tiles * TRACE_WORDS);
            CK(cudaMemcpy(rec.data(), (char *)ws + off, tiles * TRACE_WORDS * 8,
                          cudaMemcpyDeviceToHost));
            CK(cudaFree(ws));
            pixsum_ctx_free(ctx);
            unsetenv("PIXSUM_CUDA_LB");
            std::string fn = outdir + "/trace-" + (f32 ? "f32-" : "") + v + "-" +
                             std::to_string(n) +
                             (pad ? "-pad" + std::to_string(pad) : std::string()) + ".bin";
            for (char &c : fn)
                if (c == ',' || c == '=')
                    c = '_';
            if (FILE *f = fopen(fn.c_str(), "wb")) {
                fwrite(rec.data(), 8, rec.size(), f);
                fclose(f);
            }
            std::vector<double> ph[4], vs, hs;
            unsigned long long t0 = ~0ull, t1 = 0;
            for (size_t t = 0; t < tiles; t++) {
                const unsigned long long *r = &rec[t * TRACE_WORDS];
                for (int k = 0; k < 4; k++)
                    ph[k].push_back((double)(r[2 + k] - r[1 + k]) * 1e-3);
                vs.push_back((double)(r[0] & 0xffff));
                hs.push_back((double)(r[0] >> 16 & 0xffff));
                t0 = std::min(t0, r[1]);
                t1 = std::max(t1, r[5]);
            }
            printf("%-18s %6zu copy %.4f ms, plain %.4f ms (%.3f cp), traced %.4f ms; %zu tiles, "
                   "span %.1f us\n", v.c_str(), n, cp, plain, cp / plain, traced, tiles,
                   (double)(t1 - t0) * 1e-3);
            const char *names[4] = {"load", "sums", "lookback", "write"};
            for (int k = 0; k < 4; k++)
                printf("    %-9s p50 %7.2f  p90 %7.2f  max %7.2f\n", names[k], pct(ph[k], 0.5),
                       pct(ph[k], 0.9), pct(ph[k], 1.0));
            printf("    walks: vertical p50 %.0f p90 %.0f max %.0f; horizontal p50 %.0f p90 %.0f "
                   "max %.0f\n", pct(vs, 0.5), pct(vs, 0.9), pct(vs, 1.0), pct(hs, 0.5),
                   pct(hs, 0.9), pct(hs, 1.0));
            fflush(stdout);
        }
        free_bufs(b);
    }
}

/* Lookback launch variants (rows per warp, cache hints) and the GPU-only
 * per-call time at 1024^2 through graph replay. */
static void section_tune(void)
{
    printf("\n== cuda.lookback variants (PIXSUM_CUDA_LB), ms per call ==\n");
    const size_t sizes[] = {1024, 8192};
    for (int pi = 0; pi < 2; pi++) {
        pixsum_type tin = pi == 0 ? PIXSUM_U8 : PIXSUM_F32;
        pixsum_type tout = pi == 0 ? PIXSUM_U32 : PIXSUM_F32;
        for (size_t n : sizes) {
            size_t px = n * n;
            bufset b = make_bufs(px * pixsum_type_size(tin), px * pixsum_type_size(tout), tin);
            for (int rows : {4, 8, 16})
                for (int hints : {0, 3, 7}) {
                    char env[64];
                    if (rows == 16) /* 16 warps of 4 rows */
                        snprintf(env, sizeof env, "rows=4,warps=16,hints=%d", hints);
                    else
                        snprintf(env, sizeof env, "rows=%d,hints=%d", rows, hints);
                    setenv("PIXSUM_CUDA_LB", env, 1);
                    double t = time_method("cuda.lookback", tin, tout, n, n, b, NULL);
                    printf("%s->%s %5zu %-16s %9.4f ms\n", pixsum_type_name(tin),
                           pixsum_type_name(tout), n, env, t);
                    printf("csv,tune,%s,%zu,%d,%d,%.5f\n", pixsum_type_name(tin), n, rows, hints,
                           t);
                }
            unsetenv("PIXSUM_CUDA_LB");
            double host_us = 0, g = graph_ms(tin, tout, n, n, b, &host_us);
            printf("%s->%s %5zu graph replay %.4f ms per call (GPU only); host enqueue %.2f us "
                   "per call\n", pixsum_type_name(tin), pixsum_type_name(tout), n, g, host_us);
            printf("csv,graph,%s,%zu,%.5f,%.3f\n", pixsum_type_name(tin), n, g, host_us);
            free_bufs(b);
        }
    }
}

static void section_p004(void)
{
    printf("\n== paper 004 table: u8 -> u32, device data, ms per call (median of %d) ==\n",
           g_reps);
    const pixsum_cuda_tuning tun[4] = {{256, 32, 8}, {256, 32, 16}, {512, 32, 8}, {512, 32, 16}};
    const char *methods[] = {"cuda.naive004", "cuda.kogge004", "cuda.single004"};
    printf("%-16s %6s %12s %12s %12s %12s %12s\n", "method", "size", "256,(32,8)",
           "256,(32,16)", "512,(32,8)", "512,(32,16)", "lookback");
    for (size_t n = 1024; n <= 8192; n *= 2) {
        bufset b = make_bufs(n * n, n * n * 4, PIXSUM_U8);
        double lb = time_method("cuda.lookback", PIXSUM_U8, PIXSUM_U32, n, n, b, NULL);
        for (const char *m : methods) {
            double t[4];
            for (int i = 0; i < 4; i++)
                t[i] = time_method(m, PIXSUM_U8, PIXSUM_U32, n, n, b, &tun[i]);
            printf("%-16s %6zu %12.4f %12.4f %12.4f %12.4f %12.4f\n", m, n, t[0], t[1], t[2],
                   t[3], lb);
            printf("csv,p004,%s,%zu,%.5f,%.5f,%.5f,%.5f,%.5f\n", m, n, t[0], t[1], t[2], t[3], lb);
        }
        free_bufs(b);
    }
}

static double wall_ms(void)
{
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

/* Median wall time of a host-memory pixsum_integral() call. */
static double host_call_ms(const char *method, const pixsum_view *in, const pixsum_view *out,
                           int reps, double parts[4])
{
    pixsum_ctx *ctx = pixsum_ctx_new();
    PK(pixsum_ctx_set_method(ctx, method));
    PK(pixsum_integral(ctx, in, out)); /* warm-up, allocations */
    std::vector<double> v;
    std::vector<double> p0, p1, p2;
    for (int r = 0; r < reps; r++) {
        double t0 = wall_ms();
        PK(pixsum_integral(ctx, in, out));
        v.push_back(wall_ms() - t0);
        double a = 0, b = 0, c = 0, d = 0;
        if (parts && pixsum_cuda_last_transfer_ms(ctx, &a, &b, &c, &d) == PIXSUM_OK) {
            p0.push_back(a);
            p1.push_back(b);
            p2.push_back(c);
        }
    }
    pixsum_ctx_free(ctx);
    std::sort(v.begin(), v.end());
    if (parts) {
        std::sort(p0.begin(), p0.end());
        std::sort(p1.begin(), p1.end());
        std::sort(p2.begin(), p2.end());
        parts[0] = p0.empty() ? -1 : p0[p0.size() / 2];
        parts[1] = p1.empty() ? -1 : p1[p1.size() / 2];
        parts[2] = p2.empty() ? -1 : p2[p2.size() / 2];
    }
    return v[v.size() / 2];
}

static void section_p003(void)
{
    const size_t n = 4096;
    printf("\n== paper 003 table: 4096^2 u8 -> u32 ==\n");
    std::vector<unsigned char> hin(n * n);
    for (size_t i = 0; i < hin.size(); i++)
        hin[i] = (unsigned char)(i * 2654435761u >> 24);
    std::vector<unsigned> hout(n * n);
    pixsum_view in = pixsum_view_2d(hin.data(), PIXSUM_U8, n, n, 1, 0);
    pixsum_view out = pixsum_view_2d(hout.data(), PIXSUM_U32, n, n, 1, 0);
    double cpu = host_call_ms("serial.2wh", &in, &out, 7, NULL);
    printf("%-28s %10.3f ms  (host data)\n", "CPU serial.2wh", cpu);
    printf("csv,p003,CPU,serial.2wh,%.4f\n", cpu);
    /* The threaded CPU methods registered in this build. */
    size_t count = 0;
    const pixsum_method_info *ms = pixsum_methods(&count);
    for (size_t i = 0; i < count; i++) {
        if (ms[i].backend != PIXSUM_BACKEND_OMP || !(ms[i].ops & PIXSUM_OP_INTEGRAL) ||
            !ms[i].available || !pixsum_method_supports(ms[i].id, PIXSUM_OP_INTEGRAL,
                                                        PIXSUM_U8, PIXSUM_U32))
            continue;
        pixsum_ctx *probe = pixsum_ctx_new();
        pixsum_ctx_set(probe, PIXSUM_PARAM_METHOD, ms[i].id);
        int ok = pixsum_integral(probe, &in, &out) == PIXSUM_OK;
        pixsum_ctx_free(probe);
        if (!ok)
            continue;
        double t = host_call_ms(ms[i].name, &in, &out, 7, NULL);
        printf("%-28s %10.3f ms  (host data, all cores)\n", ms[i].name, t);
        printf("csv,p003,CPUxT,%s,%.4f\n", ms[i].name, t);
    }
    const char *gpu[] = {"cuda.rowthread", "cuda.blockscan", "cuda.lookback"};
    const char *label[] = {"GPUv1", "GPUv2", "fast"};
    bufset b = make_bufs(n * n, n * n * 4, PIXSUM_U8);
    for (int i = 0; i < 3; i++) {
        double dev = time_method(gpu[i], PIXSUM_U8, PIXSUM_U32, n, n, b, NULL);
        double parts[4];
        double host = host_call_ms(gpu[i], &in, &out, 7, parts);
        printf("%-6s %-20s device %9.4f ms | host data %8.3f ms (h2d %.3f, kernel %.3f, d2h %.3f)\n",
               label[i], gpu[i], dev, host, parts[0], parts[1], parts[2]);
        printf("csv,p003,%s,%s,%.5f,%.4f,%.4f,%.4f,%.4f\n", label[i], gpu[i], dev, host,
               parts[0], parts[1], parts[2]);
    }
    free_bufs(b);
}

int main(int argc, char **argv)
{
    std::string what = argc > 1 ? argv[1] : "all";
    if (argc > 2)
        g_reps = atoi(argv[2]);
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("skipped: no CUDA device\n");
        return 77;
    }
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, 0));
    g_l2 = (size_t)pr.l2CacheSize;
    g_cc_major = pr.major;
    printf("device: %s, %d SMs, L2 %zu MB, pixsum %s\n", pr.name, pr.multiProcessorCount,
           g_l2 >> 20, pixsum_version());
    CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
    if (what == "tune" || what == "all")
        section_tune();
    if (what == "fast" || what == "all")
        section_fast();
    if (what == "variants" || what == "all")
        section_variants();
    if (what == "p004" || what == "all")
        section_p004();
    if (what == "p003" || what == "all")
        section_p003();
    if (what == "trace")
        section_trace();
    CK(cudaStreamDestroy(g_stream));
    return 0;
}

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
 * Sections (argv[1]): "fast" (cuda.lookback's default path against the copy
 * floor and NPP at BENCH_SIZES, default 1024-16384, then the other type
 * pairs at BENCH_PAIR_SIZES, default 8192, and the GPU-only and host
 * enqueue time per call at 1024^2), "p004" (paper 004 sweep), "p003" (paper
 * 003 4096^2 table, CPU and GPU, host and device data), "all" (those three).
 * argv[2]: batches per figure.
 * Output: a readable table and CSV rows (prefix "csv,") on stdout, which
 * scripts/gpu-check.sh keeps under $OUT; the program writes no file.
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
#define PIXSUM_EXPERIMENTAL /* paper-004 tuning, transfer times of host-memory calls */
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

/* The headline cases of the fast section: u8->u32 and f32->f32
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

/* cuda.lookback's default path (the launch its policy picks for the device,
 * type pair and size) against the same-run copy floor and NPP; then the other
 * type pairs (ms per call); then the GPU-only time per call at 1024^2 (graph
 * replay) and the host's enqueue time. */
static void section_fast(void)
{
    printf("\n== fast method vs same-run copy floor and NPP (device data, median of %d) ==\n",
           g_reps);
    printf("%-10s %7s %10s %10s %10s %8s %8s %9s %10s %8s\n", "pair", "size", "copy_ms",
           "lookback_ms", "npp_ms", "vs_copy", "npp_x", "Gpx/s", "pdlcopy_ms", "vs_pdl");
    const std::vector<size_t> sizes =
        sizes_from_env("BENCH_SIZES", {1024, 2048, 4096, 8192, 16384});
    for_each_headline_case(sizes, [](pixsum_type tin, pixsum_type tout, size_t n, bufset &b,
                                     double cp, const double *cpv) {
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
        fflush(stdout);
    });
    const pixsum_type more[][2] = {{PIXSUM_U8, PIXSUM_U64},  {PIXSUM_U16, PIXSUM_U32},
                                   {PIXSUM_U16, PIXSUM_U64}, {PIXSUM_I32, PIXSUM_I64},
                                   {PIXSUM_F64, PIXSUM_F64}};
    for (size_t n : sizes_from_env("BENCH_PAIR_SIZES", {8192})) {
        for (const auto &pr : more) {
            const size_t px = n * n;
            bufset b = make_bufs(px * pixsum_type_size(pr[0]), px * pixsum_type_size(pr[1]), pr[0]);
            const double t = time_method("cuda.lookback", pr[0], pr[1], n, n, b, NULL);
            printf("%s->%-4s %6zu lookback %9.4f ms\n", pixsum_type_name(pr[0]),
                   pixsum_type_name(pr[1]), n, t);
            printf("csv,pair,%s,%s,%zu,%.5f\n", pixsum_type_name(pr[0]), pixsum_type_name(pr[1]),
                   n, t);
            fflush(stdout);
            free_bufs(b);
        }
    }
    for (int pi = 0; pi < 2; pi++) {
        const pixsum_type tin = pi == 0 ? PIXSUM_U8 : PIXSUM_F32;
        const pixsum_type tout = pi == 0 ? PIXSUM_U32 : PIXSUM_F32;
        const size_t n = 1024, px = n * n;
        bufset b = make_bufs(px * pixsum_type_size(tin), px * pixsum_type_size(tout), tin);
        double host_us = 0, g = graph_ms(tin, tout, n, n, b, &host_us);
        printf("%s->%s %5zu graph replay %.4f ms per call (GPU only); host enqueue %.2f us "
               "per call\n", pixsum_type_name(tin), pixsum_type_name(tout), n, g, host_us);
        printf("csv,graph,%s,%zu,%.5f,%.3f\n", pixsum_type_name(tin), n, g, host_us);
        free_bufs(b);
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
    if (what == "fast" || what == "all")
        section_fast();
    if (what == "p004" || what == "all")
        section_p004();
    if (what == "p003" || what == "all")
        section_p003();
    CK(cudaStreamDestroy(g_stream));
    return 0;
}

/*
 * box_bench.cu - GPU timings of the streamed box filter
 * (pixsum_cuda_box_filter(), device data) next to its floor, all measured in
 * this one process:
 *   copy   a kernel that reads the input bytes and writes the output bytes
 *          of the same call (one input element converted per output element,
 *          16-byte stores), launched the same way;
 *   npp    nppiFilterBoxBorder (u8 -> u8 and f32 -> f32 means, replicate
 *          border), when built with NPP (PIXSUM_BENCH_NPP).
 * Cases: u8 -> u8 mean, u8 -> f32 mean, f32 -> f32 mean, u8 -> u32 sum and
 * u8 -> f64 variance, reflect101 border, windows 3x3, 15x15 and 63x63, at
 * 8192^2 and 1024^2 (argv[2]: other sides, comma-separated).
 * Timing: CUDA events around a batch of calls on one stream, after warm-up;
 * each figure is the median of `reps` batches (argv[1], default 15) divided
 * by the batch length. Calls rotate over at least two input/output pairs
 * that together hold more than 100 MB and 4x the L2 cache, so no call finds
 * its data in L2. Output: a readable table and CSV rows (prefix "csv,") on
 * stdout; the program writes no file.
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "pixsum.h"
#include "pixsum_cuda.h"

#ifdef PIXSUM_BENCH_NPP
#include <npp.h>
#endif

#include "bench_check.h"

static cudaStream_t g_stream;
static size_t g_l2 = 50u << 20;
static int g_reps = 15;

/* ---- the copy floor --------------------------------------------------------------- */

template <int B> struct raw_of;
template <> struct raw_of<1> { typedef unsigned char type; };
template <> struct raw_of<2> { typedef unsigned short type; };
template <> struct raw_of<4> { typedef unsigned type; };
template <> struct raw_of<8> { typedef uint2 type; };
template <> struct raw_of<16> { typedef uint4 type; };

/* Each thread moves chunks of 16 output bytes (E elements) from E input
 * elements, grid-stride. */
template <typename TIn, typename TOut>
__global__ void copy_kernel(const TIn *__restrict__ in, TOut *__restrict__ out, size_t n)
{
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
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += grid) {
        vin a;
        a.r = reinterpret_cast<const rin *>(in)[c];
        vout o;
#pragma unroll
        for (int k = 0; k < E; k++)
            o.e[k] = (TOut)a.e[k];
        reinterpret_cast<vout *>(out)[c] = o;
    }
}

/* ---- buffers and timing ----------------------------------------------------------- */

struct bufset {
    std::vector<void *> in, out;
};

static bufset make_bufs(size_t in_bytes, size_t out_bytes, pixsum_type tin)
{
    bufset b;
    size_t pair = in_bytes + out_bytes, want = std::max<size_t>(100u << 20, 4 * g_l2);
    size_t n = std::max<size_t>(2, (want + pair - 1) / pair);
    std::vector<unsigned char> host(in_bytes);
    unsigned long long x = 88172645463325252ull;
    for (size_t i = 0; i < in_bytes; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        host[i] = (unsigned char)x;
    }
    if (tin == PIXSUM_F32)
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
}

/* Median milliseconds per call of fn(buffer index). */
template <typename F> static double time_ms(F fn, size_t nbufs, int batch)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (size_t w = 0; w < 2 * nbufs + 2; w++)
        fn(w % nbufs);
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

template <typename TIn, typename TOut> static double time_copy(size_t n, bufset &b, int batch)
{
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const unsigned blocks = (unsigned)std::min<size_t>((n / (16 / sizeof(TOut)) + 255) / 256,
                                                       (size_t)sms * 8);
    return time_ms(
        [&](size_t i) {
            copy_kernel<TIn, TOut><<<blocks, 256, 0, g_stream>>>((const TIn *)b.in[i],
                                                                 (TOut *)b.out[i], n);
        },
        b.in.size(), batch);
}

static double copy_for(pixsum_type tin, pixsum_type tout, size_t n, bufset &b, int batch)
{
    if (tin == PIXSUM_U8 && tout == PIXSUM_U8)
        return time_copy<uint8_t, uint8_t>(n, b, batch);
    if (tin == PIXSUM_U8 && tout == PIXSUM_F32)
        return time_copy<uint8_t, float>(n, b, batch);
    if (tin == PIXSUM_U8 && tout == PIXSUM_U32)
        return time_copy<uint8_t, uint32_t>(n, b, batch);
    if (tin == PIXSUM_U8 && tout == PIXSUM_F64)
        return time_copy<uint8_t, double>(n, b, batch);
    return time_copy<float, float>(n, b, batch);
}

#ifdef PIXSUM_BENCH_NPP
/* NPP's box filter of the same case (u8 and f32 means), or 0 where NPP
 * lacks the type pair. */
static double time_npp(pixsum_type tin, pixsum_type tout, size_t side, int k, bufset &b,
                       int batch)
{
    /* the context filled from the device's properties: nppGetStreamContext()
     * is deprecated and gone from recent NPP releases */
    NppStreamContext nc;
    memset(&nc, 0, sizeof nc);
    int dev = 0;
    cudaDeviceProp prop;
    unsigned flags = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess ||
        cudaStreamGetFlags(g_stream, &flags) != cudaSuccess)
        return 0;
    nc.hStream = g_stream;
    nc.nCudaDeviceId = dev;
    nc.nMultiProcessorCount = prop.multiProcessorCount;
    nc.nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
    nc.nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
    nc.nSharedMemPerBlock = prop.sharedMemPerBlock;
    nc.nCudaDevAttrComputeCapabilityMajor = prop.major;
    nc.nCudaDevAttrComputeCapabilityMinor = prop.minor;
    nc.nStreamFlags = flags;
    NppiSize sz = {(int)side, (int)side}, mask = {k, k};
    NppiPoint off = {0, 0}, anchor = {k / 2, k / 2};
    int es = tin == PIXSUM_U8 ? 1 : 4;
    if (tin == PIXSUM_U8 && tout == PIXSUM_U8)
        return time_ms(
            [&](size_t i) {
                nppiFilterBoxBorder_8u_C1R_Ctx((const Npp8u *)b.in[i], (int)side * es, sz, off,
                                               (Npp8u *)b.out[i], (int)side, sz, mask, anchor,
                                               NPP_BORDER_REPLICATE, nc);
            },
            b.in.size(), batch);
    if (tin == PIXSUM_F32 && tout == PIXSUM_F32)
        return time_ms(
            [&](size_t i) {
                nppiFilterBoxBorder_32f_C1R_Ctx((const Npp32f *)b.in[i], (int)side * es, sz,
                                                off, (Npp32f *)b.out[i], (int)side * 4, sz,
                                                mask, anchor, NPP_BORDER_REPLICATE, nc);
            },
            b.in.size(), batch);
    return 0;
}
#endif

/* ---- the cases -------------------------------------------------------------------- */

struct bcase {
    const char *name;
    pixsum_type tin, tout;
    pixsum_box_stat stat;
};

static const bcase cases[] = {
    {"u8->u8 mean", PIXSUM_U8, PIXSUM_U8, PIXSUM_BOX_MEAN},
    {"u8->f32 mean", PIXSUM_U8, PIXSUM_F32, PIXSUM_BOX_MEAN},
    {"f32->f32 mean", PIXSUM_F32, PIXSUM_F32, PIXSUM_BOX_MEAN},
    {"u8->u32 sum", PIXSUM_U8, PIXSUM_U32, PIXSUM_BOX_SUM},
    {"u8->f64 var", PIXSUM_U8, PIXSUM_F64, PIXSUM_BOX_VAR},
};

static void run_side(size_t side)
{
    static const int windows[] = {3, 15, 63};
    for (const bcase &c : cases) {
        size_t n = side * side, ib = n * pixsum_type_size(c.tin), ob = n * pixsum_type_size(c.tout);
        bufset b = make_bufs(ib, ob, c.tin);
        int batch = ib + ob < (64u << 20) ? 20 : 4;
        double floor_ms = copy_for(c.tin, c.tout, n, b, batch);
        pixsum_ctx *ctx = pixsum_ctx_new();
        for (int k : windows) {
            pixsum_box_filter_spec spec;
            memset(&spec, 0, sizeof spec);
            spec.kw = spec.kh = (size_t)k;
            spec.stat = c.stat;
            spec.border = PIXSUM_BORDER_REFLECT101;
            std::vector<pixsum_view> vin, vout;
            for (size_t i = 0; i < b.in.size(); i++) {
                vin.push_back(pixsum_view_2d(b.in[i], c.tin, side, side, 1, 0));
                vout.push_back(pixsum_view_2d(b.out[i], c.tout, side, side, 1, 0));
            }
            PK(pixsum_cuda_box_filter(ctx, &vin[0], &spec, &vout[0], g_stream));
            double ms = time_ms(
                [&](size_t i) {
                    PK(pixsum_cuda_box_filter(ctx, &vin[i], &spec, &vout[i], g_stream));
                },
                b.in.size(), batch);
            double npp = 0;
#ifdef PIXSUM_BENCH_NPP
            npp = time_npp(c.tin, c.tout, side, k, b, batch);
#endif
            double gbs = (double)(ib + ob) / (ms * 1e6);
            printf("%5zu^2 %-14s %2dx%-2d  pixsum %8.4f ms  %7.1f GB/s  copy %8.4f ms  "
                   "ratio %.3f", side, c.name, k, k, ms, gbs, floor_ms, floor_ms / ms);
            if (npp > 0)
                printf("  npp %8.4f ms (pixsum %.2fx)", npp, npp / ms);
            printf("\n");
            printf("csv,box,%zu,%s,%d,%.5f,%.5f,%.4f,%.5f\n", side, c.name, k, ms, floor_ms,
                   floor_ms / ms, npp);
        }
        pixsum_ctx_free(ctx);
        free_bufs(b);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1)
        g_reps = std::max(3, atoi(argv[1]));
    std::vector<size_t> sides = {8192, 1024};
    if (argc > 2) {
        sides.clear();
        std::string s = argv[2];
        for (size_t p = 0; p < s.size();) {
            size_t q = s.find(',', p);
            sides.push_back((size_t)strtoull(s.substr(p, q - p).c_str(), NULL, 10));
            p = q == std::string::npos ? s.size() : q + 1;
        }
    }
    if (pixsum_cuda_device_count() <= 0) {
        printf("box_bench: skipped: no CUDA device\n");
        return 0;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    g_l2 = (size_t)prop.l2CacheSize;
    CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
    printf("box_bench: %s, %d SMs, L2 %zu MB, %d reps (median per call)\n", prop.name,
           prop.multiProcessorCount, g_l2 >> 20, g_reps);
    printf("csv,box,side,case,window,pixsum_ms,copy_ms,ratio,npp_ms\n");
    for (size_t s : sides)
        run_side(s);
    CK(cudaStreamDestroy(g_stream));
    return 0;
}

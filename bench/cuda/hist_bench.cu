/*
 * hist_bench.cu - GPU histogram timings of pixsum's cuda.hist next to its peer
 * and floor, all measured in this one process (issue 6):
 *   floor  a read kernel that loads the same bytes with 16-byte loads and
 *          writes nothing significant (best of two launch shapes); on sm_90
 *          and newer also the same kernel launched with programmatic
 *          dependent launch ("PDL floor"), as the flat u8 kernel is;
 *   cub    cub::DeviceHistogram::HistogramEven (int counters, the toolkit's
 *          CUB), unit bins over the type's range;
 *   pixsum pixsum_cuda_histogram() on device data (u64 counts, totals off),
 *          in its automatic scheme (the device's policy).
 * Images: u8 with 256 bins and u16 with 65536 bins at 8192^2 and 16384^2, of
 * five contents: noise (uniform), natural (smooth field + a little noise),
 * constant, skewed (90% one value), stripes (a period that puts every lane of a
 * warp on the same value at each step: the worst case for shared atomics).
 * Timing: CUDA events around a batch of (at least 8) calls, after warm-up; the median of
 * `reps` batches divided by the batch length. Calls rotate over enough copies
 * of the image to span more than 4x the L2 cache (or one copy when it is
 * larger than 2x L2), so the cache never holds the next call's data. The
 * counts of pixsum and CUB are compared once per case.
 * Output: a readable table and CSV rows (prefix "csv,") on stdout, which
 * scripts/gpu-check.sh keeps under $OUT; the program writes no file.
 * Batches (issue 39): pixsum_cuda_histogram_batch() of 256 x 224^2, 64 x
 * 512^2 and 16 x 1920x1080 u8 images, 256 bins, against the read floor of
 * the same bytes and against one pixsum_cuda_histogram() call per image.
 * usage: hist_bench [reps] [all|main|u8|equalize|batch]   (u8: the two u8 cases alone;
 * equalize: pixsum_cuda_equalize() against its floor, see run_equalize();
 * batch: the batches alone)
 * HIST_BENCH_QUEUED=1: every batch enqueued behind a 0.5 ms hold
 */
#include <cuda_runtime.h>
#include <cub/cub.cuh>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "pixsum.h"
#include "pixsum_cuda.h"

#include "bench_check.h"
#include "device_caps.cuh" /* src/cuda: psi_launch, psi_pdl_wait */

static cudaStream_t g_stream;
static size_t g_l2 = 50u << 20;
static int g_reps = 15;
static int g_sms = 132;
static int g_cc_major = 0;

/* ---- content ----------------------------------------------------------------------- */

__device__ unsigned hash32(unsigned long long i, unsigned seed)
{
    unsigned long long z = i * 0x9e3779b97f4a7c15ull + seed * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (unsigned)(z ^ (z >> 31));
}

enum { NOISE, NATURAL, CONSTANT, SKEWED, STRIPES, CONTENTS };
static const char *const content_name[] = {"noise", "natural", "constant", "skewed", "stripes"};

/* levels = 256 or 65536; stripes period = 16 bytes of samples. */
template <typename T>
__global__ void fill(T *p, long long w, long long n, int content, unsigned seed, unsigned levels)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long x = i % w, y = i / w;
        unsigned h = hash32((unsigned long long)i, seed);
        unsigned v;
        switch (content) {
        case NOISE: v = h % levels; break;
        case NATURAL: {
            float u = 0.5f + 0.25f * __sinf(x * 0.0021f + seed) * __cosf(y * 0.0017f) +
                      0.15f * __sinf((x + 2 * y) * 0.011f) +
                      0.05f * __sinf(x * 0.093f) * __sinf(y * 0.071f);
            float noise = ((float)(h & 1023) / 1023.0f - 0.5f) * 4.0f / 256.0f;
            u += noise;
            u = fminf(fmaxf(u, 0.0f), 1.0f);
            v = (unsigned)(u * (levels - 1));
            break;
        }
        case CONSTANT: v = levels == 256 ? 77 : 12345; break;
        case SKEWED: v = h % 10 ? (levels == 256 ? 200 : 40000) : (h >> 8) % levels; break;
        default: {
            unsigned period = 16 / sizeof(T);
            v = (unsigned)(x % period) * (levels / period);
            break;
        }
        }
        p[i] = (T)v;
    }
}

/* ---- floor ------------------------------------------------------------------------- */

/* PDL: launched with programmatic dependent launch (psi_launch), so its
 * launch overlaps the previous kernel's drain as cuda.hist's flat kernel's
 * does; it waits for that kernel before its first load. */
template <int U, bool PDL>
__global__ void read_floor(const uint4 *p, long long n, unsigned *sink)
{
    if (PDL)
        psi_pdl_wait();
    uint4 acc = make_uint4(0, 0, 0, 0);
    long long stride = (long long)gridDim.x * blockDim.x;
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    for (; i + (U - 1) * stride < n; i += U * stride) {
        uint4 v[U];
#pragma unroll
        for (int k = 0; k < U; k++)
            v[k] = __ldcs(p + i + k * stride);
#pragma unroll
        for (int k = 0; k < U; k++) {
            acc.x ^= v[k].x;
            acc.y ^= v[k].y;
            acc.z ^= v[k].z;
            acc.w ^= v[k].w;
        }
    }
    for (; i < n; i += stride) {
        uint4 v = __ldcs(p + i);
        acc.x ^= v.x;
        acc.y ^= v.y;
        acc.z ^= v.z;
        acc.w ^= v.w;
    }
    if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x9E3779B9u) /* practically never */
        sink[0] = 1;
}

/* The bytes of an equalisation's second pass: read n vectors, write n. */
template <int U> __global__ void copy_floor(const uint4 *p, uint4 *q, long long n)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    for (; i + (U - 1) * stride < n; i += U * stride) {
        uint4 v[U];
#pragma unroll
        for (int k = 0; k < U; k++)
            v[k] = __ldcs(p + i + k * stride);
#pragma unroll
        for (int k = 0; k < U; k++)
            __stcs(q + i + k * stride, v[k]);
    }
    for (; i < n; i += stride)
        __stcs(q + i, __ldcs(p + i));
}

/* ---- timing ------------------------------------------------------------------------ */

/* Holds the stream for about `ns` nanoseconds (HIST_BENCH_QUEUED=1: the batch
 * is enqueued behind it, so host time per call does not show in the events). */
__global__ void hold_stream(long long ns)
{
    long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (;;) {
        long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 >= ns)
            break;
    }
}

template <typename F> static double time_ms(int batch, F &&call)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 3; i++)
        call(i);
    std::vector<double> t;
    static const bool queued = getenv("HIST_BENCH_QUEUED") && atoi(getenv("HIST_BENCH_QUEUED"));
    for (int r = 0; r < g_reps; r++) {
        if (queued)
            hold_stream<<<1, 1, 0, g_stream>>>(500000);
        CK(cudaEventRecord(a, g_stream));
        for (int i = 0; i < batch; i++)
            call(i);
        CK(cudaEventRecord(b, g_stream));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms / batch);
    }
    CK(cudaGetLastError());
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

struct Case {
    pixsum_type type;
    size_t side, channels, bins;
    double lo, hi;
    bool with_cub;
};

static void run_case(const Case &c, int content, pixsum_ctx *ctx, unsigned *sink)
{
    size_t es = pixsum_type_size(c.type);
    size_t w = c.side, h = c.side, n = w * h * c.channels, bytes = n * es;
    int nbuf = bytes >= 2 * g_l2 ? 1 : (int)((4 * g_l2 + bytes - 1) / bytes);
    std::vector<void *> buf(nbuf);
    for (int i = 0; i < nbuf; i++) {
        CK(cudaMalloc(&buf[i], bytes));
        unsigned levels = es == 1 ? 256 : 65536;
        if (es == 1)
            fill<unsigned char><<<g_sms * 8, 256, 0, g_stream>>>((unsigned char *)buf[i],
                                                                 (long long)(w * c.channels),
                                                                 (long long)n, content,
                                                                 17u + i, levels);
        else if (c.type == PIXSUM_F32)
            fill<float><<<g_sms * 8, 256, 0, g_stream>>>((float *)buf[i],
                                                         (long long)(w * c.channels), (long long)n,
                                                         content, 17u + i, levels);
        else
            fill<unsigned short><<<g_sms * 8, 256, 0, g_stream>>>((unsigned short *)buf[i],
                                                                  (long long)(w * c.channels),
                                                                  (long long)n, content, 17u + i,
                                                                  levels);
        CK(cudaGetLastError());
    }
    CK(cudaStreamSynchronize(g_stream));
    size_t ncounts = c.bins * c.channels;
    uint64_t *counts;
    int *cub_counts;
    CK(cudaMalloc(&counts, ncounts * 8));
    CK(cudaMalloc(&cub_counts, c.bins * sizeof(int)));
    std::vector<pixsum_view> views(nbuf);
    for (int i = 0; i < nbuf; i++)
        views[i] = pixsum_view_2d(buf[i], c.type, w, h, c.channels, 0);
    pixsum_hist_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.bins = c.bins;
    spec.lo = c.lo;
    spec.hi = c.hi;
    PK(pixsum_cuda_hist_reserve(ctx, &views[0], &spec));
    CK(cudaDeviceSynchronize());
    int batch = nbuf < 8 ? 8 : nbuf; /* calls per timed batch, rotating over the copies */

    /* floor: best of three launch shapes, plain launches; pdl_floor: the same
     * with programmatic dependent launch (sm_90 and newer). The third is the
     * flat kernel's own shape (1024 threads, 4 vectors each per round) on its
     * balanced grid: as many blocks as give each the same number of rounds. */
    long long nvec = (long long)(bytes / 16);
    const long long groups = std::max(1LL, (nvec + 4095) / 4096);
    const long long rounds = (groups + g_sms - 1) / g_sms;
    const unsigned balanced = (unsigned)((groups + rounds - 1) / rounds);
    double floor_ms = 1e30, pdl_floor_ms = -1;
    floor_ms = std::min(floor_ms, time_ms(batch, [&](int i) {
        read_floor<4, false><<<balanced, 1024, 0, g_stream>>>((const uint4 *)buf[i % nbuf], nvec,
                                                              sink);
    }));
    floor_ms = std::min(floor_ms, time_ms(batch, [&](int i) {
        read_floor<4, false><<<g_sms * 8, 256, 0, g_stream>>>((const uint4 *)buf[i % nbuf], nvec,
                                                              sink);
    }));
    floor_ms = std::min(floor_ms, time_ms(batch, [&](int i) {
        read_floor<2, false><<<g_sms * 2, 1024, 0, g_stream>>>((const uint4 *)buf[i % nbuf],
                                                               nvec, sink);
    }));
    if (g_cc_major >= 9) {
        pdl_floor_ms = time_ms(batch, [&](int i) {
            CK(psi_launch(true, read_floor<4, true>, dim3(g_sms * 8), dim3(256), 0, g_stream,
                          (const uint4 *)buf[i % nbuf], nvec, sink));
        });
        pdl_floor_ms = std::min(pdl_floor_ms, time_ms(batch, [&](int i) {
            CK(psi_launch(true, read_floor<2, true>, dim3(g_sms * 2), dim3(1024), 0, g_stream,
                          (const uint4 *)buf[i % nbuf], nvec, sink));
        }));
        pdl_floor_ms = std::min(pdl_floor_ms, time_ms(batch, [&](int i) {
            CK(psi_launch(true, read_floor<4, true>, dim3(balanced), dim3(1024), 0, g_stream,
                          (const uint4 *)buf[i % nbuf], nvec, sink));
        }));
    }

    double px_ms = time_ms(batch, [&](int i) {
        PK(pixsum_cuda_histogram(ctx, &views[i % nbuf], &spec, counts, ncounts, NULL, g_stream));
    });

    double cub_ms = -1;
    const char *check = "-";
    if (c.with_cub) {
        void *tmp = nullptr;
        size_t tmp_bytes = 0;
        int levels = (int)c.bins + 1;
        int lo = (int)c.lo, hi = (int)c.hi;
        if (es == 1)
            CK(cub::DeviceHistogram::HistogramEven(nullptr, tmp_bytes, (const unsigned char *)buf[0],
                                                   cub_counts, levels, lo, hi, (long long)n,
                                                   g_stream));
        else
            CK(cub::DeviceHistogram::HistogramEven(nullptr, tmp_bytes,
                                                   (const unsigned short *)buf[0], cub_counts,
                                                   levels, lo, hi, (long long)n, g_stream));
        CK(cudaMalloc(&tmp, tmp_bytes));
        cub_ms = time_ms(batch, [&](int i) {
            if (es == 1)
                CK(cub::DeviceHistogram::HistogramEven(tmp, tmp_bytes,
                                                       (const unsigned char *)buf[i % nbuf],
                                                       cub_counts, levels, lo, hi, (long long)n,
                                                       g_stream));
            else
                CK(cub::DeviceHistogram::HistogramEven(tmp, tmp_bytes,
                                                       (const unsigned short *)buf[i % nbuf],
                                                       cub_counts, levels, lo, hi, (long long)n,
                                                       g_stream));
        });
        /* Same counts for buffer 0? */
        PK(pixsum_cuda_histogram(ctx, &views[0], &spec, counts, ncounts, NULL, g_stream));
        if (es == 1)
            CK(cub::DeviceHistogram::HistogramEven(tmp, tmp_bytes, (const unsigned char *)buf[0],
                                                   cub_counts, levels, lo, hi, (long long)n,
                                                   g_stream));
        else
            CK(cub::DeviceHistogram::HistogramEven(tmp, tmp_bytes, (const unsigned short *)buf[0],
                                                   cub_counts, levels, lo, hi, (long long)n,
                                                   g_stream));
        std::vector<uint64_t> a(c.bins);
        std::vector<int> b(c.bins);
        CK(cudaMemcpyAsync(a.data(), counts, c.bins * 8, cudaMemcpyDeviceToHost, g_stream));
        CK(cudaMemcpyAsync(b.data(), cub_counts, c.bins * 4, cudaMemcpyDeviceToHost, g_stream));
        CK(cudaStreamSynchronize(g_stream));
        check = "same";
        for (size_t k = 0; k < c.bins; k++)
            if (a[k] != (uint64_t)(unsigned)b[k])
                check = "DIFFER";
        cudaFree(tmp);
    }
    double gbs = (double)bytes / (floor_ms * 1e-3) / 1e9;
    char name[64];
    snprintf(name, sizeof name, "%s %zux%zu%s %zu bins", pixsum_type_name(c.type), w, h,
             c.channels > 1 ? (c.channels == 4 ? " x4ch" : " xch") : "", c.bins);
    printf("%-28s %-9s floor %8.4f ms (%5.0f GB/s) | pixsum %8.4f ms = %.2f of floor",
           name, content_name[content], floor_ms, gbs, px_ms, floor_ms / px_ms);
    if (pdl_floor_ms > 0)
        printf(" | PDL floor %8.4f ms, pixsum = %.2f of it", pdl_floor_ms, pdl_floor_ms / px_ms);
    if (cub_ms > 0)
        printf(" | CUB %8.4f ms, pixsum %.2fx faster, counts %s", cub_ms, cub_ms / px_ms, check);
    printf("\n");
    printf("csv,%s,%zu,%zu,%zu,%zu,%s,%.5f,%.5f,%.5f", pixsum_type_name(c.type), w, h,
           c.channels, c.bins, content_name[content], floor_ms, px_ms, cub_ms);
    printf(",pdl_floor=%.5f\n", pdl_floor_ms);
    fflush(stdout);
    for (int i = 0; i < nbuf; i++)
        cudaFree(buf[i]);
    cudaFree(counts);
    cudaFree(cub_counts);
}

/* Equalisation: pixsum_cuda_equalize() (histogram, cumulative sums, tables,
 * mapping into a separate output) against its floor, the read floor of the
 * image (the histogram's pass) plus a copy of it (the mapping's pass), both
 * timed here, and two of its parts alone (the histogram, the cumulative
 * sums in place and into another array); the output of buffer 0 is compared with pixsum_equalize() on the
 * host. */
static void run_equalize(pixsum_type type, size_t side, size_t channels, int content,
                         pixsum_ctx *ctx, unsigned *sink)
{
    size_t es = pixsum_type_size(type), w = side, h = side, n = w * h * channels;
    size_t bytes = n * es;
    int nbuf = bytes >= g_l2 ? 2 : (int)((4 * g_l2 + bytes - 1) / bytes);
    std::vector<void *> in(nbuf), out(nbuf);
    for (int i = 0; i < nbuf; i++) {
        CK(cudaMalloc(&in[i], bytes));
        CK(cudaMalloc(&out[i], bytes));
        if (es == 1)
            fill<unsigned char><<<g_sms * 8, 256, 0, g_stream>>>(
                (unsigned char *)in[i], (long long)(w * channels), (long long)n, content, 29u + i,
                256);
        else
            fill<unsigned short><<<g_sms * 8, 256, 0, g_stream>>>(
                (unsigned short *)in[i], (long long)(w * channels), (long long)n, content,
                29u + i, 65536);
        CK(cudaGetLastError());
    }
    CK(cudaStreamSynchronize(g_stream));
    std::vector<pixsum_view> vin(nbuf), vout(nbuf);
    for (int i = 0; i < nbuf; i++) {
        vin[i] = pixsum_view_2d(in[i], type, w, h, channels, 0);
        vout[i] = pixsum_view_2d(out[i], type, w, h, channels, 0);
    }
    int batch = nbuf < 8 ? 8 : nbuf;
    long long nvec = (long long)(bytes / 16);
    double read_ms = 1e30, copy_ms = 1e30;
    read_ms = std::min(read_ms, time_ms(batch, [&](int i) {
        read_floor<4, false><<<g_sms * 8, 256, 0, g_stream>>>((const uint4 *)in[i % nbuf], nvec,
                                                              sink);
    }));
    read_ms = std::min(read_ms, time_ms(batch, [&](int i) {
        read_floor<2, false><<<g_sms * 2, 1024, 0, g_stream>>>((const uint4 *)in[i % nbuf], nvec,
                                                               sink);
    }));
    copy_ms = std::min(copy_ms, time_ms(batch, [&](int i) {
        copy_floor<4><<<g_sms * 8, 256, 0, g_stream>>>((const uint4 *)in[i % nbuf],
                                                       (uint4 *)out[i % nbuf], nvec);
    }));
    copy_ms = std::min(copy_ms, time_ms(batch, [&](int i) {
        copy_floor<2><<<g_sms * 2, 1024, 0, g_stream>>>((const uint4 *)in[i % nbuf],
                                                        (uint4 *)out[i % nbuf], nvec);
    }));
    double px_ms = time_ms(batch, [&](int i) {
        PK(pixsum_cuda_equalize(ctx, &vin[i % nbuf], &vout[i % nbuf], NULL, g_stream));
    });
    /* its parts that are public entry points: the histogram, the cumulative sums */
    size_t levels = es == 1 ? 256 : 65536;
    uint64_t *counts, *cdf;
    CK(cudaMalloc(&counts, levels * channels * 8));
    CK(cudaMalloc(&cdf, levels * channels * 8));
    double hist_ms = time_ms(batch, [&](int i) {
        PK(pixsum_cuda_histogram(ctx, &vin[i % nbuf], NULL, counts, levels * channels, NULL,
                                 g_stream));
    });
    double cum_ms = time_ms(batch, [&](int) {
        PK(pixsum_cuda_hist_cumulative(counts, channels, levels, counts, g_stream));
    });
    double cum_apart_ms = time_ms(batch, [&](int) {
        PK(pixsum_cuda_hist_cumulative(counts, channels, levels, cdf, g_stream));
    });
    cudaFree(counts);
    cudaFree(cdf);
    /* the first buffer against the CPU */
    PK(pixsum_cuda_equalize(ctx, &vin[0], &vout[0], NULL, g_stream));
    std::vector<unsigned char> host_in(bytes), got(bytes), want(bytes);
    CK(cudaMemcpyAsync(host_in.data(), in[0], bytes, cudaMemcpyDeviceToHost, g_stream));
    CK(cudaMemcpyAsync(got.data(), out[0], bytes, cudaMemcpyDeviceToHost, g_stream));
    CK(cudaStreamSynchronize(g_stream));
    pixsum_view hin = pixsum_view_2d(host_in.data(), type, w, h, channels, 0);
    pixsum_view hout = pixsum_view_2d(want.data(), type, w, h, channels, 0);
    PK(pixsum_equalize(NULL, &hin, &hout, NULL));
    const char *check = got == want ? "same" : "DIFFER";
    double fl = read_ms + copy_ms;
    char name[64];
    snprintf(name, sizeof name, "equalize %s %zux%zu%s", pixsum_type_name(type), w, h,
             channels > 1 ? " xch" : "");
    printf("%-28s %-9s read %.4f + copy %.4f = floor %.4f ms | pixsum %.4f ms = %.2f of floor "
           "| output vs CPU %s | alone: histogram %.4f, cumulative in place %.4f, into "
           "another array %.4f\n",
           name, content_name[content], read_ms, copy_ms, fl, px_ms, fl / px_ms, check, hist_ms,
           cum_ms, cum_apart_ms);
    printf("csv,equalize,%s,%zu,%zu,%zu,%s,%.5f,%.5f,%.5f,%.5f,%.5f,%.5f\n",
           pixsum_type_name(type), w, h, channels, content_name[content], read_ms, copy_ms, px_ms,
           hist_ms, cum_ms, cum_apart_ms);
    fflush(stdout);
    for (int i = 0; i < nbuf; i++) {
        cudaFree(in[i]);
        cudaFree(out[i]);
    }
}

/* A batch of n u8 images of w x h, 256 bins, one histogram per image:
 * pixsum_cuda_histogram_batch() against the read floor of the same bytes
 * (best of the launch shapes of run_case()), calls rotating over copies of
 * the batch that span more than 4x the L2 cache; the counts of batch 0 are
 * compared once with the single-image pixsum_cuda_histogram() of each image. */
static void run_batch(size_t n, size_t w, size_t h, int content, pixsum_ctx *ctx,
                      unsigned *sink)
{
    const size_t bytes = n * w * h;
    int nbuf = bytes >= 2 * g_l2 ? 1 : (int)((4 * g_l2 + bytes - 1) / bytes);
    std::vector<void *> buf(nbuf);
    std::vector<pixsum_view> views(nbuf);
    for (int i = 0; i < nbuf; i++) {
        CK(cudaMalloc(&buf[i], bytes));
        fill<unsigned char><<<g_sms * 8, 256, 0, g_stream>>>((unsigned char *)buf[i],
                                                             (long long)w, (long long)bytes,
                                                             content, 41u + i, 256);
        CK(cudaGetLastError());
        views[i] = pixsum_view_3d(buf[i], PIXSUM_U8, w, h, n, 1, (ptrdiff_t)w,
                                  (ptrdiff_t)(w * h));
    }
    CK(cudaStreamSynchronize(g_stream));
    uint64_t *counts, *one;
    CK(cudaMalloc(&counts, n * 256 * 8));
    CK(cudaMalloc(&one, n * 256 * 8));
    const int batch = nbuf < 8 ? 8 : nbuf;
    const long long nvec = (long long)(bytes / 16);
    double floor_ms = 1e30;
    floor_ms = std::min(floor_ms, time_ms(batch, [&](int i) {
        read_floor<4, false><<<g_sms * 8, 256, 0, g_stream>>>((const uint4 *)buf[i % nbuf], nvec,
                                                              sink);
    }));
    floor_ms = std::min(floor_ms, time_ms(batch, [&](int i) {
        read_floor<2, false><<<g_sms * 2, 1024, 0, g_stream>>>((const uint4 *)buf[i % nbuf],
                                                               nvec, sink);
    }));
    floor_ms = std::min(floor_ms, time_ms(batch, [&](int i) {
        read_floor<1, false><<<(unsigned)std::max(1LL, (nvec + 255) / 256), 256, 0, g_stream>>>(
            (const uint4 *)buf[i % nbuf], nvec, sink);
    }));
    double px_ms = time_ms(batch, [&](int i) {
        PK(pixsum_cuda_histogram_batch(ctx, &views[i % nbuf], NULL, 0, counts, n * 256, NULL,
                                       g_stream));
    });
    /* the same images one call each, for comparison (and the check) */
    double loop_ms = time_ms(1, [&](int i) {
        for (size_t z = 0; z < n; z++) {
            pixsum_view v;
            PK(pixsum_view_roi3d(&views[i % nbuf], 0, 0, z, w, h, 1, &v));
            PK(pixsum_cuda_histogram(ctx, &v, NULL, one + z * 256, 256, NULL, g_stream));
        }
    });
    PK(pixsum_cuda_histogram_batch(ctx, &views[0], NULL, 0, counts, n * 256, NULL, g_stream));
    for (size_t z = 0; z < n; z++) {
        pixsum_view v;
        PK(pixsum_view_roi3d(&views[0], 0, 0, z, w, h, 1, &v));
        PK(pixsum_cuda_histogram(ctx, &v, NULL, one + z * 256, 256, NULL, g_stream));
    }
    std::vector<uint64_t> a(n * 256), b(n * 256);
    CK(cudaMemcpyAsync(a.data(), counts, n * 256 * 8, cudaMemcpyDeviceToHost, g_stream));
    CK(cudaMemcpyAsync(b.data(), one, n * 256 * 8, cudaMemcpyDeviceToHost, g_stream));
    CK(cudaStreamSynchronize(g_stream));
    const char *check = a == b ? "same" : "DIFFER";
    char name[64];
    snprintf(name, sizeof name, "batch u8 %zu x %zux%zu", n, w, h);
    printf("%-28s %-9s floor %8.4f ms (%5.0f GB/s) | pixsum batch %8.4f ms = %.2f of floor | "
           "one call per image %8.4f ms | counts vs single-image calls %s\n",
           name, content_name[content], floor_ms, (double)bytes / (floor_ms * 1e-3) / 1e9, px_ms,
           floor_ms / px_ms, loop_ms, check);
    printf("csv,batch,u8,%zu,%zu,%zu,256,%s,%.5f,%.5f,%.5f\n", n, w, h, content_name[content],
           floor_ms, px_ms, loop_ms);
    fflush(stdout);
    for (int i = 0; i < nbuf; i++)
        cudaFree(buf[i]);
    cudaFree(counts);
    cudaFree(one);
}

/* Host memory: pixsum_histogram() of a u8 8192^2 image in pageable host memory
 * with method cuda.hist (copy in, count, copy out) against the CPU's auto
 * method; wall-clock medians of 5 calls. */
static void host_path(void)
{
    size_t w = 8192, h = 8192, n = w * h;
    std::vector<unsigned char> img(n);
    unsigned long long z = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
        z ^= z << 13;
        z ^= z >> 7;
        z ^= z << 17;
        img[i] = (unsigned char)z;
    }
    pixsum_view v = pixsum_view_2d(img.data(), PIXSUM_U8, w, h, 1, 0);
    std::vector<uint64_t> counts(256), ref(256);
    const char *methods[] = {"auto", "cuda.hist"};
    double ms[2];
    for (int m = 0; m < 2; m++) {
        pixsum_ctx *ctx = pixsum_ctx_new();
        PK(pixsum_ctx_set_method(ctx, methods[m]));
        std::vector<double> t;
        for (int r = 0; r < 6; r++) {
            auto t0 = std::chrono::steady_clock::now();
            PK(pixsum_histogram(ctx, &v, NULL, m ? counts.data() : ref.data(), 256, NULL));
            auto t1 = std::chrono::steady_clock::now();
            if (r)
                t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        }
        std::sort(t.begin(), t.end());
        ms[m] = t[t.size() / 2];
        pixsum_ctx_free(ctx);
    }
    printf("host u8 8192x8192 256 bins noise: CPU auto %.3f ms, cuda.hist (copy in + count + "
           "copy out) %.3f ms, counts %s\n",
           ms[0], ms[1], counts == ref ? "same" : "DIFFER");
    printf("csv,host,u8,8192,8192,1,256,noise,%.4f,%.4f\n", ms[0], ms[1]);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        g_reps = std::max(3, atoi(argv[1]));
    std::string what = argc > 2 ? argv[2] : "all";
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, 0));
    g_l2 = (size_t)pr.l2CacheSize;
    g_sms = pr.multiProcessorCount;
    g_cc_major = pr.major;
    printf("hist_bench: %s, %d SMs, L2 %zu MiB, pixsum %s, CUB %d.%d.%d, %d reps (median)\n",
           pr.name, g_sms, g_l2 >> 20, pixsum_version(), CUB_MAJOR_VERSION, CUB_MINOR_VERSION,
           CUB_SUBMINOR_VERSION, g_reps);
    CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
    unsigned *sink;
    CK(cudaMalloc(&sink, 16));
    pixsum_ctx *ctx = pixsum_ctx_new();
    std::vector<Case> cases = {
        {PIXSUM_U8, 8192, 1, 256, 0, 256, true},
        {PIXSUM_U8, 16384, 1, 256, 0, 256, true},
    };
    if (what != "u8") {
        cases.push_back({PIXSUM_U16, 8192, 1, 65536, 0, 65536, true});
        cases.push_back({PIXSUM_U16, 16384, 1, 65536, 0, 65536, true});
    }
    if (what == "all") {
        cases.push_back({PIXSUM_U8, 4096, 4, 256, 0, 256, false});
        cases.push_back({PIXSUM_U16, 8192, 1, 256, 0, 65536, false});
        cases.push_back({PIXSUM_F32, 8192, 1, 1000, 0, 65536, false});
        cases.push_back({PIXSUM_F32, 8192, 1, 65536, 0, 65536, false});
    }
    if (what == "equalize") {
        cases.clear();
        const struct {
            pixsum_type t;
            size_t side, ch;
        } eq[] = {{PIXSUM_U8, 1024, 1}, {PIXSUM_U8, 8192, 1}, {PIXSUM_U8, 16384, 1},
                  {PIXSUM_U8, 4096, 3}, {PIXSUM_U16, 8192, 1}};
        for (const auto &e : eq)
            for (int content : {NOISE, NATURAL, CONSTANT})
                run_equalize(e.t, e.side, e.ch, content, ctx, sink);
    }
    if (what == "all" || what == "batch") {
        const size_t shapes[][3] = {{256, 224, 224}, {64, 512, 512}, {16, 1920, 1080}};
        for (const auto &b : shapes)
            for (int content : {NOISE, NATURAL, CONSTANT})
                run_batch(b[0], b[1], b[2], content, ctx, sink);
        if (what == "batch")
            cases.clear();
    }
    for (const Case &c : cases) {
        for (int content = 0; content < CONTENTS; content++) {
            if (!c.with_cub && content != NOISE && content != CONSTANT)
                continue;
            run_case(c, content, ctx, sink);
        }
    }
    pixsum_ctx_free(ctx);
    if (what == "all")
        host_path();
    cudaFree(sink);
    cudaStreamDestroy(g_stream);
    return 0;
}

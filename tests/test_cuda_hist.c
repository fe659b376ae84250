/*
 * test_cuda_hist.c - the CUDA histograms against the CPU reference
 * (pixsum_histogram with hist.scalar): random shapes (1x1, 1xN, Nx1, odd
 * widths, 3-D), padded and misaligned rows, 1-4 channels, masks, bins 1..65536,
 * ranges that cut values off, NaN and infinities, random / natural-like /
 * constant / skewed / striped content, each counting scheme on images the
 * automatic choice would give another one (flat, narrow, wide, and the
 * launches without programmatic dependent launch of devices before sm_90,
 * forced through pixsum_cuda_set_force(), the experimental API), images
 * large enough for the 16-bit counters to spill, repeated launches, the
 * caller's stream
 * (captured into a CUDA graph: no synchronisation, no allocation), the
 * cumulative and relative histograms, the joint histogram, the device
 * equalisation (against pixsum_equalize), the host-memory method cuda.hist,
 * and batches (pixsum_cuda_histogram_batch against the CPU batch, each image
 * against the bins' definition and the single-image call; N 1, 3, 17, masks
 * per image and shared, padding between rows and between images). Counts
 * and totals must match bit for bit; relative values too (same division).
 *
 * Without a CUDA device (or in a build without CUDA) the program prints
 * "skipped: no CUDA device" and exits with 77. PIXSUM_TEST_SEED=N replays a
 * run; PIXSUM_TEST_QUICK=1 runs fewer cases; PIXSUM_TEST_FILTER=PATTERN
 * (cmocka's wildcards, e.g. test_batch*) runs only the tests it names.
 */
#include "pixsum.h"

#include <stdio.h>
#include <stdlib.h>

#ifndef PIXSUM_TEST_HAVE_CUDA
int main(void)
{
    printf("test_cuda_hist: skipped: no CUDA device (library built without CUDA)\n");
    return 77;
}
#else

#define PIXSUM_EXPERIMENTAL /* pixsum_cuda_set_force() */
#include "pixsum_cuda.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "testutil_cuda.h"

static cudaStream_t g_stream;
static int g_quick;

static size_t rnd_in(size_t lo, size_t hi) /* inclusive */
{
    return lo + (size_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* C_LANES: a period of 8 pixels, so with 16-bit samples every lane of a warp
 * holds the same value at each step of the wide scheme (all 32 lanes add to
 * one shared word at once). */
/* C_EDGES: samples on the bin edges of the case's range and one step
 * beside them (set in run_case, once the bins are known). */
enum content { C_RANDOM, C_NATURAL, C_CONSTANT, C_SKEWED, C_STRIPES, C_LANES, C_EDGES,
               C_COUNT };
static const char *const content_names[] = {"random", "natural", "constant", "skewed",
                                             "stripes", "lanes", "edges"};

/* A value of `content` at (x, y, z, c) as a double in the type's range. */
static double sample_value(pixsum_type t, int content, size_t x, size_t y, size_t z, size_t c,
                           double konst)
{
    double lo, hi;
    switch (t) {
    case PIXSUM_U8: lo = 0, hi = 255; break;
    case PIXSUM_U16: lo = 0, hi = 65535; break;
    case PIXSUM_I16: lo = -32768, hi = 32767; break;
    case PIXSUM_I32: lo = -100000, hi = 100000; break;
    default: lo = -2, hi = 3; break;
    }
    double u; /* in [0, 1] */
    switch (content) {
    case C_NATURAL:
        u = 0.5 + 0.3 * sin((double)x / 9.0 + (double)c) * cos((double)y / 7.0 + (double)z) +
            0.15 * sin((double)(x + y) / 3.0) + 0.01 * (double)(rnd() % 100) / 100.0;
        break;
    case C_CONSTANT: u = konst; break;
    case C_SKEWED: u = rnd() % 10 ? konst : (double)(rnd() % 1000001) / 1e6; break;
    case C_STRIPES: u = (double)((x * 3 + c) % 16) / 15.0; break;
    case C_LANES: u = (double)((x + c) % 8) / 7.0; break;
    default: u = (double)(rnd() % 1000001) / 1e6; break;
    }
    if (u < 0)
        u = 0;
    if (u > 1)
        u = 1;
    return lo + u * (hi - lo);
}

static void store(pixsum_type t, void *row, size_t i, double v)
{
    switch (t) {
    case PIXSUM_U8: ((uint8_t *)row)[i] = (uint8_t)lround(v); break;
    case PIXSUM_U16: ((uint16_t *)row)[i] = (uint16_t)lround(v); break;
    case PIXSUM_I16: ((int16_t *)row)[i] = (int16_t)lround(v); break;
    case PIXSUM_I32: ((int32_t *)row)[i] = (int32_t)lround(v); break;
    case PIXSUM_F32: ((float *)row)[i] = (float)v; break;
    case PIXSUM_F64: ((double *)row)[i] = v; break;
    default: break;
    }
}

/* A host image and its device twin (same strides; optional byte offset). */
typedef struct img {
    pixsum_view h, d; /* host view, device view */
    void *hmem, *dmem;
} img;

static img make_img(pixsum_type t, size_t w, size_t hgt, size_t dep, size_t ch, size_t pad,
                    size_t offset_elems, int content, int specials)
{
    img m;
    size_t es = pixsum_type_size(t);
    ptrdiff_t row = (ptrdiff_t)((w * ch + pad) * es);
    size_t bytes = (size_t)row * hgt * dep + offset_elems * es;
    m.hmem = malloc(bytes);
    assert_non_null(m.hmem);
    memset(m.hmem, 0x5A, bytes);
    char *base = (char *)m.hmem + offset_elems * es;
    m.h = pixsum_view_3d(base, t, w, hgt, dep, ch, row, row * (ptrdiff_t)hgt);
    double konst = (double)(rnd() % 1000) / 999.0;
    for (size_t z = 0; z < dep; z++)
        for (size_t y = 0; y < hgt; y++) {
            char *r = base + (ptrdiff_t)z * m.h.slice_stride + (ptrdiff_t)y * row;
            for (size_t x = 0; x < w; x++)
                for (size_t c = 0; c < ch; c++) {
                    double v = sample_value(t, content, x, y, z, c, konst);
                    if (specials && (t == PIXSUM_F32 || t == PIXSUM_F64) && rnd() % 13 == 0) {
                        static const double sp[] = {NAN, INFINITY, -INFINITY, 1e300, -1e300, 0.0};
                        v = sp[rnd() % 6];
                        if (t == PIXSUM_F32 && fabs(v) == 1e300)
                            v = v > 0 ? 3e38 : -3e38;
                    }
                    store(t, r, x * ch + c, v);
                }
        }
    CU_OK(cudaMalloc(&m.dmem, bytes));
    CU_OK(cudaMemcpy(m.dmem, m.hmem, bytes, cudaMemcpyHostToDevice));
    m.d = m.h;
    m.d.data = (char *)m.dmem + offset_elems * es;
    return m;
}

static void free_img(img *m)
{
    free(m->hmem);
    cudaFree(m->dmem);
}

static img make_mask(size_t w, size_t hgt, size_t dep, int kind)
{
    img m = make_img(PIXSUM_U8, w, hgt, dep, 1, rnd() % 3, 0, C_RANDOM, 0);
    for (size_t z = 0; z < dep; z++)
        for (size_t y = 0; y < hgt; y++) {
            uint8_t *r = (uint8_t *)m.h.data + (ptrdiff_t)z * m.h.slice_stride +
                         (ptrdiff_t)y * m.h.row_stride;
            for (size_t x = 0; x < w; x++)
                r[x] = kind == 0 ? (uint8_t)(rnd() % 2 ? rnd() % 256 : 0) : (uint8_t)1;
        }
    size_t bytes = (size_t)m.h.row_stride * hgt * dep;
    CU_OK(cudaMemcpy(m.dmem, m.hmem, bytes, cudaMemcpyHostToDevice));
    return m;
}

/* CPU reference through hist.scalar. */
static void cpu_hist(const pixsum_view *in, const pixsum_hist_spec *spec, uint64_t *counts,
                     size_t len, pixsum_hist_info *info)
{
    pixsum_ctx *ctx = pixsum_ctx_new();
    PX_OK(pixsum_ctx_set_method(ctx, "hist.scalar"));
    PX_OK(pixsum_histogram(ctx, in, spec, counts, len, info));
    pixsum_ctx_free(ctx);
}

static void compare_totals(const pixsum_cuda_hist_totals *t, const pixsum_hist_info *info,
                           const char *what)
{
    if (t->pixels != info->pixels)
        fail_msg("%s: pixels %llu, CPU %llu", what, (unsigned long long)t->pixels,
                 (unsigned long long)info->pixels);
    for (size_t c = 0; c < info->channels; c++) {
        if (t->in_range[c] != info->in_range[c] || t->below[c] != info->below[c] ||
            t->above[c] != info->above[c] || t->nan[c] != info->nan[c])
            fail_msg("%s: channel %zu totals in/below/above/nan %llu %llu %llu %llu, CPU %llu "
                     "%llu %llu %llu",
                     what, c, (unsigned long long)t->in_range[c],
                     (unsigned long long)t->below[c], (unsigned long long)t->above[c],
                     (unsigned long long)t->nan[c], (unsigned long long)info->in_range[c],
                     (unsigned long long)info->below[c], (unsigned long long)info->above[c],
                     (unsigned long long)info->nan[c]);
    }
}

static void compare_counts(const uint64_t *got, const uint64_t *want, size_t n, size_t bins,
                           const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("%s: channel %zu bin %zu: GPU %llu, CPU %llu", what, i / bins, i % bins,
                     (unsigned long long)got[i], (unsigned long long)want[i]);
}

/* Replaces the samples of m by edges of info's bins (pixsum_hist_edge), the
 * doubles beside them, or values in range, rounded to the type, and uploads
 * them (the range must not depend on the data). */
static void put_on_edges(img *m, const pixsum_hist_info *info)
{
    const pixsum_view *v = &m->h;
    size_t n = v->width * v->channels;
    for (size_t z = 0; z < v->depth; z++)
        for (size_t y = 0; y < v->height; y++) {
            char *r = (char *)v->data + (ptrdiff_t)z * v->slice_stride +
                      (ptrdiff_t)y * v->row_stride;
            for (size_t i = 0; i < n; i++) {
                double e = pixsum_hist_edge(info->bins, info->lo, info->hi,
                                            rnd() % (info->bins + 1));
                int k = (int)(rnd() % 4);
                double s = k == 0   ? e
                           : k == 1 ? nextafter(e, -INFINITY)
                           : k == 2 ? nextafter(e, INFINITY)
                                    : info->lo + (info->hi - info->lo) * (double)(rnd() % 1000) / 1000.0;
                if (v->type != PIXSUM_F32 && v->type != PIXSUM_F64) {
                    double tlo = v->type == PIXSUM_U8 || v->type == PIXSUM_U16 ? 0
                                 : v->type == PIXSUM_I16                     ? -32768
                                                                              : -2147483648.0;
                    double thi = v->type == PIXSUM_U8    ? 255
                                 : v->type == PIXSUM_U16 ? 65535
                                 : v->type == PIXSUM_I16 ? 32767
                                                         : 2147483647.0;
                    s = fmin(fmax(floor(s + (k == 1 ? 0 : 0.5)), tlo), thi);
                }
                store(v->type, r, i, s);
            }
        }
    size_t bytes = (size_t)v->row_stride * v->height * v->depth;
    CU_OK(cudaMemcpy(m->d.data, m->h.data, bytes, cudaMemcpyHostToDevice));
}

typedef struct hcase {
    pixsum_type t;
    size_t w, h, d, ch, pad, offset;
    int content, masked, specials;
    size_t bins;
    int range; /* 0 default (small types), 1 cutting range, 2 covering range */
    const char *mode; /* forced paths (force_of()), or "" */
} hcase;

/* The forced paths of a case's mode: "narrow" or "wide" (the scheme),
 * "nopdl" (no programmatic dependent launch), comma-separated. */
static pixsum_cuda_force force_of(const char *mode)
{
    pixsum_cuda_force f;
    memset(&f, 0, sizeof f);
    if (strstr(mode, "narrow"))
        f.hist_scheme = PIXSUM_CUDA_FORCE_NARROW;
    if (strstr(mode, "wide"))
        f.hist_scheme = PIXSUM_CUDA_FORCE_WIDE;
    if (strstr(mode, "nopdl"))
        f.no_pdl = 1;
    return f;
}

/* Runs one case through the device API (twice: repeated launches) and, every
 * few cases, through the host-memory method, against the CPU. */
static void run_case(const hcase *k, int also_host)
{
    char what[320];
    snprintf(what, sizeof what, "%s %zux%zux%zu ch%zu pad%zu off%zu %s mask%d bins%zu range%d "
             "mode '%s'", pixsum_type_name(k->t), k->w, k->h, k->d, k->ch, k->pad, k->offset,
             content_names[k->content], k->masked, k->bins, k->range, k->mode);
    img im = make_img(k->t, k->w, k->h, k->d, k->ch, k->pad, k->offset, k->content, k->specials);
    img mk;
    memset(&mk, 0, sizeof mk);
    pixsum_hist_spec hs, ds;
    memset(&hs, 0, sizeof hs);
    hs.bins = k->bins;
    int small = k->t == PIXSUM_U8 || k->t == PIXSUM_U16 || k->t == PIXSUM_I16;
    if (k->range || !small) {
        double lo, hi;
        switch (k->t) {
        case PIXSUM_U8: lo = -20.0 + (double)(rnd() % 120), hi = lo + 1 + (double)(rnd() % 300); break;
        case PIXSUM_U16: lo = -500.0 + (double)(rnd() % 30000), hi = lo + 1 + (double)(rnd() % 70000); break;
        case PIXSUM_I16: lo = -33000.0 + (double)(rnd() % 40000), hi = lo + 1 + (double)(rnd() % 70000); break;
        case PIXSUM_I32: lo = -120000.0 + (double)(rnd() % 150000), hi = lo + 1 + (double)(rnd() % 250000); break;
        default: lo = -2.5 + (double)(rnd() % 1000) / 400.0, hi = lo + 0.001 + (double)(rnd() % 1000) / 200.0; break;
        }
        if (k->range == 2 || (!small && rnd() % 3 == 0)) {
            lo = k->t == PIXSUM_U8 ? 0 : k->t == PIXSUM_U16 ? 0 : k->t == PIXSUM_I16 ? -32768 : lo;
            hi = k->t == PIXSUM_U8 ? 256 : k->t == PIXSUM_U16 ? 65536 : k->t == PIXSUM_I16 ? 32768 : hi;
        }
        hs.lo = lo;
        hs.hi = hi;
    }
    ds = hs;
    pixsum_view hmask, dmask;
    if (k->masked) {
        mk = make_mask(k->w, k->h, k->d, k->masked == 2);
        hmask = mk.h;
        dmask = mk.d;
        hs.mask = &hmask;
        ds.mask = &dmask;
    }
    pixsum_hist_info info;
    PX_OK(pixsum_hist_resolve(&im.h, &hs, &info));
    if (k->content == C_EDGES)
        put_on_edges(&im, &info);
    size_t n = info.bins * k->ch;
    uint64_t *want = calloc(n, sizeof *want), *got = calloc(n, sizeof *got);
    assert_non_null(want);
    assert_non_null(got);
    cpu_hist(&im.h, &hs, want, n, &info);

    pixsum_ctx *ctx = pixsum_ctx_new();
    const pixsum_cuda_force force = force_of(k->mode);
    PX_OK(pixsum_cuda_set_force(ctx, &force));
    uint64_t *dcounts;
    pixsum_cuda_hist_totals *dtot, tot;
    CU_OK(cudaMalloc((void **)&dcounts, n * 8 + 64));
    CU_OK(cudaMalloc((void **)&dtot, sizeof *dtot));
    for (int rep = 0; rep < 2; rep++) {
        CU_OK(cudaMemsetAsync(dcounts, 0xFF, n * 8, g_stream)); /* the call overwrites */
        PX_OK(pixsum_cuda_histogram(ctx, &im.d, &ds, dcounts, n, dtot, g_stream));
        CU_OK(cudaMemcpyAsync(got, dcounts, n * 8, cudaMemcpyDeviceToHost, g_stream));
        CU_OK(cudaMemcpyAsync(&tot, dtot, sizeof tot, cudaMemcpyDeviceToHost, g_stream));
        CU_OK(cudaStreamSynchronize(g_stream));
        compare_counts(got, want, n, info.bins, what);
        compare_totals(&tot, &info, what);
    }
    /* without totals, and without a context */
    memset(got, 0, n * 8);
    PX_OK(pixsum_cuda_histogram(NULL, &im.d, &ds, dcounts, n, NULL, g_stream));
    CU_OK(cudaMemcpyAsync(got, dcounts, n * 8, cudaMemcpyDeviceToHost, g_stream));
    CU_OK(cudaStreamSynchronize(g_stream));
    compare_counts(got, want, n, info.bins, what);

    if (also_host) {
        pixsum_hist_info hinfo;
        memset(got, 0, n * 8);
        PX_OK(pixsum_ctx_set_method(ctx, "cuda.hist"));
        PX_OK(pixsum_histogram(ctx, &im.h, &hs, got, n, &hinfo));
        compare_counts(got, want, n, info.bins, what);
        assert_memory_equal(&hinfo, &info, sizeof info);
    }
    pixsum_ctx_free(ctx);
    cudaFree(dcounts);
    cudaFree(dtot);
    free(want);
    free(got);
    free_img(&im);
    if (k->masked)
        free_img(&mk);
}

static const pixsum_type types[] = {PIXSUM_U8, PIXSUM_U16, PIXSUM_I16,
                                    PIXSUM_I32, PIXSUM_F32, PIXSUM_F64};
static const char *const modes[] = {"", "", "wide", "narrow", "nopdl", "wide,nopdl"};
#define MODE_COUNT (sizeof modes / sizeof modes[0])

static size_t pick_bins(void)
{
    static const size_t common[] = {1, 2, 3, 7, 64, 100, 255, 256, 257, 1000, 4096,
                                    12000, 30000, 40000, 65535, 65536};
    if (rnd() % 4 == 0)
        return rnd_in(1, 65536);
    return common[rnd() % (sizeof common / sizeof common[0])];
}

static void random_case(hcase *k)
{
    memset(k, 0, sizeof *k);
    k->t = types[rnd() % 6];
    switch (rnd() % 6) {
    case 0: k->w = 1, k->h = 1; break;
    case 1: k->w = rnd_in(1, 3000), k->h = 1; break;
    case 2: k->w = 1, k->h = rnd_in(1, 700); break;
    default: k->w = rnd_in(1, 400), k->h = rnd_in(1, 300); break;
    }
    k->d = rnd() % 5 == 0 ? rnd_in(2, 3) : 1;
    k->ch = rnd_in(1, 4);
    k->pad = rnd() % 2 ? 0 : rnd_in(1, 40);
    k->offset = rnd() % 4 == 0 ? rnd_in(1, 7) : 0;
    k->content = (int)(rnd() % C_COUNT);
    k->masked = rnd() % 4 == 0 ? (int)rnd_in(1, 2) : 0;
    k->specials = rnd() % 2;
    k->bins = rnd() % 5 == 0 ? 0 : pick_bins();
    k->range = (int)(rnd() % 3);
    k->mode = modes[rnd() % MODE_COUNT];
}

static void test_random(void **state)
{
    (void)state;
    int n = g_quick ? 60 : 400;
    for (int i = 0; i < n; i++) {
        hcase k;
        random_case(&k);
        run_case(&k, i % 5 == 0);
    }
}

/* Images where one value fills more than 2^15 samples per block, so the
 * 16-bit counters of the wide scheme spill; and large u8 / float images. */
static void test_large_and_spill(void **state)
{
    (void)state;
    static const hcase cases[] = {
        {PIXSUM_U16, 3000, 2000, 1, 1, 0, 0, C_CONSTANT, 0, 0, 0, 0, ""},
        {PIXSUM_U16, 3000, 2000, 1, 1, 0, 0, C_CONSTANT, 0, 0, 0, 0, "nopdl"},
        {PIXSUM_U16, 4096, 2048, 1, 1, 0, 0, C_LANES, 0, 0, 0, 0, ""},
        {PIXSUM_U16, 4096, 2048, 1, 1, 0, 0, C_LANES, 0, 0, 65536, 1, ""},
        {PIXSUM_I16, 2050, 2048, 1, 2, 0, 0, C_LANES, 0, 0, 0, 0, ""},
        {PIXSUM_U16, 3000, 2000, 1, 1, 0, 0, C_SKEWED, 0, 0, 0, 0, ""},
        {PIXSUM_I16, 2048, 1500, 1, 2, 0, 0, C_CONSTANT, 0, 0, 0, 0, ""},
        {PIXSUM_U8, 4096, 4096, 1, 1, 0, 0, C_SKEWED, 0, 0, 0, 0, "narrow"},
        {PIXSUM_U8, 4096, 4096, 1, 1, 0, 0, C_CONSTANT, 0, 0, 0, 0, "nopdl"},
        {PIXSUM_I16, 2048, 2048, 1, 1, 0, 0, C_SKEWED, 0, 0, 0, 0, ""},
        {PIXSUM_U16, 2048, 1024, 1, 3, 8, 0, C_CONSTANT, 0, 0, 0, 0, ""},
        {PIXSUM_U16, 2048, 2048, 1, 1, 0, 0, C_CONSTANT, 2, 0, 0, 0, ""},
        {PIXSUM_U16, 1999, 1500, 2, 1, 0, 0, C_STRIPES, 0, 0, 1000, 1, ""},
        {PIXSUM_U16, 4096, 1024, 1, 1, 0, 0, C_NATURAL, 0, 0, 65536, 2, ""},
        {PIXSUM_F32, 2048, 2048, 1, 1, 0, 0, C_CONSTANT, 0, 0, 65536, 1, ""},
        {PIXSUM_F32, 2048, 2048, 1, 1, 0, 0, C_SKEWED, 0, 1, 50000, 1, "wide"},
        {PIXSUM_U8, 4096, 4096, 1, 1, 0, 0, C_CONSTANT, 0, 0, 0, 0, ""},
        {PIXSUM_U8, 4096, 2048, 1, 4, 0, 0, C_NATURAL, 0, 0, 0, 0, ""},
        {PIXSUM_U8, 4095, 2047, 1, 3, 5, 1, C_SKEWED, 1, 0, 100, 1, ""},
        {PIXSUM_F64, 1024, 1024, 1, 2, 0, 0, C_RANDOM, 0, 1, 300, 1, ""},
        {PIXSUM_I32, 1024, 1024, 1, 1, 0, 0, C_CONSTANT, 0, 0, 4096, 1, ""},
    };
    size_t n = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n; i++) {
        if (g_quick && i % 3)
            continue;
        run_case(&cases[i], i % 4 == 0);
    }
}

/* The flat u8 scheme (one channel, contiguous, aligned: the default for such
 * images): lengths around its 16-byte vectors and its groups of 1024 x 4
 * vectors per thread block (65536 bytes; 32768 when its blocks had 512
 * threads), partial last groups (49317 and 114855 bytes: a block whose first
 * group is its last splits warp 0 between the lanes that load and the lanes
 * that do not), tails of 1-15 bytes, many blocks, 3-D, every
 * content and cutting ranges, each against the CPU, each twice on one context
 * (the preset flags must be lowered for the next launch); the mode cycles over
 * flat, narrow (forced) and flat without programmatic dependent launch (as
 * before sm_90). The largest shapes take several rounds of groups per block. */
static void test_flat_u8(void **state)
{
    (void)state;
    static const size_t shapes[][3] = {
        {1, 1, 1},      {15, 1, 1},     {16, 1, 1},    {17, 1, 1},      {1, 33, 1},
        {32767, 1, 1},  {32768, 1, 1},  {32769, 1, 1}, {16384, 2, 1},   {1000, 33, 1},
        {65535, 1, 1},  {65536, 1, 1},  {65537, 1, 1}, {65552, 3, 1},   {131071, 7, 1},
        {49317, 1, 1},  {114855, 1, 1}, {49152, 1, 1}, {49167, 1, 1},   {163840, 1, 1},
        {4099, 517, 1}, {8192, 1031, 1}, {777, 333, 3}, {65536, 64, 2}, {12345, 679, 1},
        {16384, 1100, 1}, {40000, 1003, 1},
    };
    static const char *const flat_modes[] = {"", "narrow", "nopdl"};
    const size_t nmodes = sizeof flat_modes / sizeof flat_modes[0];
    size_t n = sizeof shapes / sizeof shapes[0];
    for (size_t i = 0; i < n; i++) {
        if (g_quick && i % 3)
            continue;
        for (int c = 0; c < C_COUNT; c++) {
            hcase k;
            memset(&k, 0, sizeof k);
            k.t = PIXSUM_U8;
            k.w = shapes[i][0];
            k.h = shapes[i][1];
            k.d = shapes[i][2];
            k.ch = 1;
            k.content = c;
            k.bins = c % 2 ? 0 : (size_t)(1 + rnd() % 300);
            k.range = c % 2 ? 0 : (int)(1 + rnd() % 2);
            k.mode = flat_modes[(i + (size_t)c) % nmodes];
            run_case(&k, c == 0 && i % 4 == 0);
        }
    }
}

/* Launches queued back to back on one stream with no host synchronisation
 * between them, where programmatic dependent launch lets a kernel begin while
 * the stream's previous kernel drains: the flat (u8) and wide (u16, 65536
 * bins) kernels must count the bytes of an integral table that the kernel
 * just before them wrote, and each call into one shared counts buffer must
 * preset it only after the call before has added its counts. */
static void test_queued(void **state)
{
    (void)state;
    enum { ROUNDS = 4, WIDE = 65536 };
    static const size_t sizes[ROUNDS][2] = {{1031, 517}, {3000, 700}, {17, 3}, {4096, 257}};
    img src[ROUNDS];
    uint32_t *dtable;
    uint64_t *d8[ROUNDS], *d16[ROUNDS], *dshared;
    CU_OK(cudaMalloc((void **)&dtable, 3000 * 700 * 4));
    CU_OK(cudaMalloc((void **)&dshared, 256 * 8));
    pixsum_ctx *ctx = pixsum_ctx_new();
    for (int r = 0; r < ROUNDS; r++) {
        src[r] = make_img(PIXSUM_U8, sizes[r][0], sizes[r][1], 1, 1, 0, 0, r % 2 ? C_NATURAL
                                                                                 : C_RANDOM, 0);
        CU_OK(cudaMalloc((void **)&d8[r], 256 * 8));
        CU_OK(cudaMalloc((void **)&d16[r], WIDE * 8));
    }
    CU_OK(cudaStreamSynchronize(g_stream));
    /* twice: the first pass may grow the context's scratch (which waits);
     * the second queues every launch behind the one before */
    for (int pass = 0; pass < 2; pass++)
        for (int r = 0; r < ROUNDS; r++) {
            size_t w = sizes[r][0], h = sizes[r][1];
            pixsum_view table = pixsum_view_2d(dtable, PIXSUM_U32, w, h, 1, 0);
            pixsum_view as8 = pixsum_view_2d(dtable, PIXSUM_U8, w * 4, h, 1, 0);
            pixsum_view as16 = pixsum_view_2d(dtable, PIXSUM_U16, w * 2, h, 1, 0);
            PX_OK(pixsum_cuda_integral(ctx, &src[r].d, &table, g_stream));
            PX_OK(pixsum_cuda_histogram(ctx, &as8, NULL, d8[r], 256, NULL, g_stream));
            PX_OK(pixsum_cuda_histogram(ctx, &src[r].d, NULL, dshared, 256, NULL, g_stream));
            /* the same table again, so that the wide histogram too follows
             * the kernel that wrote what it reads */
            PX_OK(pixsum_cuda_integral(ctx, &src[r].d, &table, g_stream));
            PX_OK(pixsum_cuda_histogram(ctx, &as16, NULL, d16[r], WIDE, NULL, g_stream));
        }
    uint64_t *got = malloc(WIDE * 8), *want = malloc(WIDE * 8);
    assert_non_null(got);
    assert_non_null(want);
    pixsum_hist_info info;
    for (int r = 0; r < ROUNDS; r++) {
        size_t w = sizes[r][0], h = sizes[r][1];
        uint32_t *t = malloc(w * h * 4);
        assert_non_null(t);
        pixsum_view table = pixsum_view_2d(t, PIXSUM_U32, w, h, 1, 0);
        pixsum_view as8 = pixsum_view_2d(t, PIXSUM_U8, w * 4, h, 1, 0);
        pixsum_view as16 = pixsum_view_2d(t, PIXSUM_U16, w * 2, h, 1, 0);
        PX_OK(pixsum_integral(NULL, &src[r].h, &table));
        cpu_hist(&as8, NULL, want, 256, &info);
        CU_OK(cudaMemcpyAsync(got, d8[r], 256 * 8, cudaMemcpyDeviceToHost, g_stream));
        CU_OK(cudaStreamSynchronize(g_stream));
        compare_counts(got, want, 256, 256, "queued: bytes of the integral table");
        cpu_hist(&as16, NULL, want, WIDE, &info);
        CU_OK(cudaMemcpyAsync(got, d16[r], WIDE * 8, cudaMemcpyDeviceToHost, g_stream));
        CU_OK(cudaStreamSynchronize(g_stream));
        compare_counts(got, want, WIDE, WIDE, "queued: 16-bit halves of the integral table");
        free(t);
    }
    cpu_hist(&src[ROUNDS - 1].h, NULL, want, 256, &info);
    CU_OK(cudaMemcpyAsync(got, dshared, 256 * 8, cudaMemcpyDeviceToHost, g_stream));
    CU_OK(cudaStreamSynchronize(g_stream));
    compare_counts(got, want, 256, 256, "queued: shared counts");
    for (int r = 0; r < ROUNDS; r++) {
        free_img(&src[r]);
        cudaFree(d8[r]);
        cudaFree(d16[r]);
    }
    free(got);
    free(want);
    pixsum_ctx_free(ctx);
    cudaFree(dtable);
    cudaFree(dshared);
}

static void test_errors(void **state)
{
    (void)state;
    uint8_t *d;
    uint64_t *c;
    CU_OK(cudaMalloc((void **)&d, 1024));
    CU_OK(cudaMalloc((void **)&c, 70000 * 8));
    pixsum_view v = pixsum_view_2d(d, PIXSUM_U8, 32, 32, 1, 0);
    pixsum_view f = pixsum_view_2d(d, PIXSUM_F32, 16, 16, 1, 0);
    pixsum_hist_spec s;
    memset(&s, 0, sizeof s);
    assert_int_equal(pixsum_cuda_histogram(NULL, NULL, NULL, c, 256, NULL, NULL), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_cuda_histogram(NULL, &v, NULL, NULL, 256, NULL, NULL), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_cuda_histogram(NULL, &v, NULL, c, 255, NULL, NULL),
                     PIXSUM_ERR_BAD_SHAPE);
    assert_int_equal(pixsum_cuda_histogram(NULL, &f, NULL, c, 256, NULL, NULL),
                     PIXSUM_ERR_INVALID_ARG);
    s.bins = 65537;
    assert_int_equal(pixsum_cuda_histogram(NULL, &v, &s, c, 70000, NULL, NULL),
                     PIXSUM_ERR_UNSUPPORTED);
    pixsum_view odd = pixsum_view_2d(d + 1, PIXSUM_U16, 8, 8, 1, 0);
    int st = pixsum_cuda_histogram(NULL, &odd, NULL, c, 65536, NULL, NULL);
    assert_true(st == PIXSUM_ERR_UNSUPPORTED || st == PIXSUM_ERR_BAD_STRIDE);
    pixsum_view alias = pixsum_view_2d(c, PIXSUM_U8, 64, 1, 1, 0);
    assert_int_equal(pixsum_cuda_histogram(NULL, &alias, NULL, c, 256, NULL, NULL),
                     PIXSUM_ERR_ALIASING);
    assert_int_equal(pixsum_cuda_hist_cumulative(c, 5, 10, c, NULL), PIXSUM_ERR_INVALID_ARG);
    assert_int_equal(pixsum_cuda_hist_relative(c, 1, 10, NULL, 2, (double *)d, NULL),
                     PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_cuda_hist_relative(c, 1, 10, NULL, 8, (double *)d, NULL),
                     PIXSUM_ERR_INVALID_ARG);
    pixsum_view two = pixsum_view_2d(d, PIXSUM_U8, 16, 16, 2, 0);
    assert_int_equal(pixsum_cuda_histogram_joint(NULL, &two, &two, NULL, NULL, c, 65536, NULL,
                                                 NULL),
                     PIXSUM_ERR_BAD_SHAPE);
    cudaFree(d);
    cudaFree(c);
}

/* Cumulative and relative histograms on the device against the CPU's. */
static void test_cumulative_relative(void **state)
{
    (void)state;
    for (int i = 0; i < (g_quick ? 6 : 24); i++) {
        hcase k;
        random_case(&k);
        k.masked = rnd() % 2;
        if (i == 0)
            k.t = PIXSUM_U8;
        img im = make_img(k.t, k.w, k.h, k.d, k.ch, 0, 0, k.content, 1);
        img mk;
        pixsum_hist_spec hs, ds;
        memset(&hs, 0, sizeof hs);
        hs.bins = i == 0 ? 65536 * 4 : pick_bins();
        hs.lo = -1;
        hs.hi = k.t == PIXSUM_U8 ? 300 : 2.5;
        ds = hs;
        pixsum_view hm, dm;
        if (k.masked) {
            mk = make_mask(k.w, k.h, k.d, 0);
            hm = mk.h;
            dm = mk.d;
            hs.mask = &hm;
            ds.mask = &dm;
        }
        pixsum_hist_info info;
        PX_OK(pixsum_hist_resolve(&im.h, &hs, &info));
        size_t n = info.bins * k.ch;
        uint64_t *h = calloc(n, 8), *cum = calloc(n, 8), *got = calloc(n, 8);
        double *rel = calloc(n, 8), *grel = calloc(n, 8);
        cpu_hist(&im.h, &hs, h, n, &info);
        uint64_t *dc, *dcum;
        double *drel;
        pixsum_cuda_hist_totals *dt;
        CU_OK(cudaMalloc((void **)&dc, n * 8));
        CU_OK(cudaMalloc((void **)&dcum, n * 8));
        CU_OK(cudaMalloc((void **)&drel, n * 8));
        CU_OK(cudaMalloc((void **)&dt, sizeof *dt));
        if (info.bins <= PIXSUM_CUDA_HIST_MAX_BINS) {
            PX_OK(pixsum_cuda_histogram(NULL, &im.d, &ds, dc, n, dt, g_stream));
        } else { /* more bins than the device counts: scan the CPU's counts */
            CU_OK(cudaMemcpy(dc, h, n * 8, cudaMemcpyHostToDevice));
            cudaFree(dt);
            dt = NULL;
        }
        PX_OK(pixsum_hist_cumulative(&info, h, cum));
        PX_OK(pixsum_cuda_hist_cumulative(dc, k.ch, info.bins, dcum, g_stream));
        CU_OK(cudaMemcpyAsync(got, dcum, n * 8, cudaMemcpyDeviceToHost, g_stream));
        CU_OK(cudaStreamSynchronize(g_stream));
        compare_counts(got, cum, n, info.bins, "cumulative");
        /* in place */
        PX_OK(pixsum_cuda_hist_cumulative(dc, k.ch, info.bins, dc, g_stream));
        CU_OK(cudaMemcpyAsync(got, dc, n * 8, cudaMemcpyDeviceToHost, g_stream));
        CU_OK(cudaStreamSynchronize(g_stream));
        compare_counts(got, cum, n, info.bins, "cumulative in place");
        CU_OK(cudaMemcpy(dc, h, n * 8, cudaMemcpyHostToDevice));
        for (unsigned flags = 0; flags < 4; flags++) {
            if ((flags & PIXSUM_HIST_OF_ALL_SAMPLES) && !dt)
                continue;
            const pixsum_cuda_hist_totals *tp = flags & 2 ? dt : (rnd() % 2 ? dt : NULL);
            PX_OK(pixsum_hist_relative(&info, h, flags, rel));
            PX_OK(pixsum_cuda_hist_relative(dc, k.ch, info.bins, tp, flags, drel, g_stream));
            CU_OK(cudaMemcpyAsync(grel, drel, n * 8, cudaMemcpyDeviceToHost, g_stream));
            CU_OK(cudaStreamSynchronize(g_stream));
            for (size_t j = 0; j < n; j++)
                if (memcmp(&grel[j], &rel[j], 8) != 0)
                    fail_msg("relative flags %u at %zu: GPU %.17g, CPU %.17g", flags, j, grel[j],
                             rel[j]);
        }
        cudaFree(dc);
        cudaFree(dcum);
        cudaFree(drel);
        if (dt)
            cudaFree(dt);
        free(h);
        free(cum);
        free(got);
        free(rel);
        free(grel);
        free_img(&im);
        if (k.masked)
            free_img(&mk);
    }
}

static void test_joint(void **state)
{
    (void)state;
    for (int i = 0; i < (g_quick ? 8 : 40); i++) {
        pixsum_type ta = types[rnd() % 6], tb = types[rnd() % 6];
        size_t w = rnd_in(1, 700), h = rnd_in(1, 200), d = rnd() % 4 ? 1 : 2;
        int content = (int)(rnd() % C_COUNT);
        img a = make_img(ta, w, h, d, 1, rnd() % 5, rnd() % 3, content, 1);
        img b = make_img(tb, w, h, d, 1, rnd() % 5, 0, (int)(rnd() % C_COUNT), 1);
        pixsum_hist_spec sa, sb, dsa, dsb;
        memset(&sa, 0, sizeof sa);
        memset(&sb, 0, sizeof sb);
        static const size_t jb[] = {1, 5, 16, 64, 100, 256, 1000, 4096};
        sa.bins = jb[rnd() % 8];
        sb.bins = jb[rnd() % 8];
        if (!(ta == PIXSUM_U8 || ta == PIXSUM_U16 || ta == PIXSUM_I16) || rnd() % 2)
            sa.lo = -1.5, sa.hi = ta == PIXSUM_U8 ? 200 : ta == PIXSUM_F32 || ta == PIXSUM_F64 ? 2.0 : 20000;
        if (!(tb == PIXSUM_U8 || tb == PIXSUM_U16 || tb == PIXSUM_I16) || rnd() % 2)
            sb.lo = 0.25, sb.hi = tb == PIXSUM_U8 ? 255 : tb == PIXSUM_F32 || tb == PIXSUM_F64 ? 3.0 : 30000;
        dsa = sa;
        dsb = sb;
        img mk;
        pixsum_view hm, dm;
        int masked = rnd() % 3 == 0;
        if (masked) {
            mk = make_mask(w, h, d, 0);
            hm = mk.h;
            dm = mk.d;
            sb.mask = &hm;
            dsb.mask = &dm;
        }
        pixsum_joint_info ji;
        pixsum_hist_info ia, ib;
        PX_OK(pixsum_hist_resolve(&a.h, &sa, &ia));
        PX_OK(pixsum_hist_resolve(&b.h, &sb, &ib));
        size_t cells = (sa.bins ? sa.bins : 256) * (sb.bins ? sb.bins : 256);
        uint64_t *want = calloc(cells, 8), *got = calloc(cells, 8), pairs[2];
        PX_OK(pixsum_histogram_joint(NULL, &a.h, &b.h, &sa, &sb, want, cells, &ji));
        uint64_t *dc, *dp;
        CU_OK(cudaMalloc((void **)&dc, cells * 8));
        CU_OK(cudaMalloc((void **)&dp, 16));
        pixsum_ctx *ctx = pixsum_ctx_new();
        PX_OK(pixsum_cuda_histogram_joint(ctx, &a.d, &b.d, &dsa, &dsb, dc, cells, dp, g_stream));
        CU_OK(cudaMemcpyAsync(got, dc, cells * 8, cudaMemcpyDeviceToHost, g_stream));
        CU_OK(cudaMemcpyAsync(pairs, dp, 16, cudaMemcpyDeviceToHost, g_stream));
        CU_OK(cudaStreamSynchronize(g_stream));
        compare_counts(got, want, cells, cells, "joint");
        assert_int_equal(pairs[0], ji.pairs);
        assert_int_equal(pairs[1], ji.excluded);
        pixsum_ctx_free(ctx);
        cudaFree(dc);
        cudaFree(dp);
        free(want);
        free(got);
        free_img(&a);
        free_img(&b);
        if (masked)
            free_img(&mk);
    }
}

/* The caller's stream: the whole call is captured into a graph (which fails
 * on any synchronisation or allocation), then the graph runs twice. */
static void test_stream_capture(void **state)
{
    (void)state;
    static const pixsum_type ts[] = {PIXSUM_U8, PIXSUM_U16, PIXSUM_F32};
    for (int i = 0; i < 3; i++) {
        img im = make_img(ts[i], 1000, 600, 1, i == 0 ? 3 : 1, 0, 0, C_NATURAL, 0);
        pixsum_hist_spec s;
        memset(&s, 0, sizeof s);
        if (ts[i] == PIXSUM_F32)
            s.bins = 20000, s.lo = -1, s.hi = 2;
        pixsum_hist_info info;
        PX_OK(pixsum_hist_resolve(&im.h, &s, &info));
        size_t n = info.bins * im.h.channels;
        uint64_t *want = calloc(n, 8), *got = calloc(n, 8), *dc;
        cpu_hist(&im.h, &s, want, n, &info);
        CU_OK(cudaMalloc((void **)&dc, n * 8));
        pixsum_ctx *ctx = pixsum_ctx_new();
        PX_OK(pixsum_ctx_set(ctx, PIXSUM_PARAM_CUDA_STREAM, (intptr_t)g_stream));
        PX_OK(pixsum_cuda_hist_reserve(ctx, &im.d, &s));
        CU_OK(cudaStreamSynchronize(g_stream));
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CU_OK(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeGlobal));
        int st = pixsum_cuda_histogram(ctx, &im.d, &s, dc, n, NULL, NULL); /* ctx's stream */
        CU_OK(cudaStreamEndCapture(g_stream, &graph));
        if (st != PIXSUM_OK)
            fail_msg("captured call: %s", pixsum_last_error());
        CU_OK(cudaGraphInstantiate(&exec, graph, 0));
        for (int rep = 0; rep < 2; rep++) {
            CU_OK(cudaMemsetAsync(dc, 0x77, n * 8, g_stream));
            CU_OK(cudaGraphLaunch(exec, g_stream));
            CU_OK(cudaMemcpyAsync(got, dc, n * 8, cudaMemcpyDeviceToHost, g_stream));
            CU_OK(cudaStreamSynchronize(g_stream));
            compare_counts(got, want, n, info.bins, "graph");
        }
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
        pixsum_ctx_free(ctx);
        cudaFree(dc);
        free(want);
        free(got);
        free_img(&im);
    }
}

/* pixsum_cuda_equalize against pixsum_equalize on random u8/u16 images:
 * shapes 1x1, 1xN, Nx1, odd and 3-D, 1-4 channels, padded and misaligned rows
 * (the row-by-row kernel) and packed aligned ones (the vector kernel, with a
 * tail), masks (also one that selects nothing), constant channels (the
 * identity), in place and into a padded output whose padding must stay
 * untouched, with and without a context, twice on the same buffers. */
static void equalize_case(pixsum_type t, size_t w, size_t h, size_t d, size_t ch, size_t pad,
                          size_t offset, int content, int masked, int in_place)
{
    char what[200];
    snprintf(what, sizeof what, "equalize %s %zux%zux%zu ch%zu pad%zu off%zu %s mask%d inplace%d",
             pixsum_type_name(t), w, h, d, ch, pad, offset, content_names[content], masked,
             in_place);
    img im = make_img(t, w, h, d, ch, pad, offset, content, 0);
    img mk;
    memset(&mk, 0, sizeof mk);
    pixsum_view hmask, dmask;
    if (masked) {
        mk = make_mask(w, h, d, 0);
        if (masked == 2) { /* selects nothing */
            size_t mb = (size_t)mk.h.row_stride * h * d;
            memset(mk.hmem, 0, mb);
            CU_OK(cudaMemset(mk.dmem, 0, mb));
        }
        hmask = mk.h;
        dmask = mk.d;
    }
    /* The output: the image itself, or a padded buffer of its own. */
    img out = in_place ? im : make_img(t, w, h, d, ch, rnd() % 2 ? 0 : rnd_in(1, 9), 0, C_RANDOM, 0);
    size_t es = pixsum_type_size(t);
    size_t out_bytes = (size_t)out.h.row_stride * h * d + (in_place ? offset * es : 0);
    void *want = malloc(out_bytes), *got = malloc(out_bytes);
    assert_non_null(want);
    assert_non_null(got);
    char *out_base = (char *)out.hmem;
    memcpy(want, out_base, out_bytes);
    pixsum_view wv = out.h;
    wv.data = (char *)want + ((char *)out.h.data - out_base);
    PX_OK(pixsum_equalize(NULL, &im.h, &wv, masked ? &hmask : NULL));
    pixsum_ctx *ctx = pixsum_ctx_new();
    for (int rep = 0; rep < (in_place ? 1 : 2); rep++) {
        PX_OK(pixsum_cuda_equalize(rep ? NULL : ctx, &im.d, &out.d, masked ? &dmask : NULL,
                                   g_stream));
        CU_OK(cudaMemcpyAsync(got, out.dmem, out_bytes, cudaMemcpyDeviceToHost, g_stream));
        CU_OK(cudaStreamSynchronize(g_stream));
        for (size_t i = 0; i < out_bytes; i++)
            if (((unsigned char *)got)[i] != ((unsigned char *)want)[i])
                fail_msg("%s: byte %zu of the output buffer: GPU 0x%02x, CPU 0x%02x", what, i,
                         ((unsigned char *)got)[i], ((unsigned char *)want)[i]);
    }
    pixsum_ctx_free(ctx);
    free(want);
    free(got);
    if (!in_place)
        free_img(&out);
    free_img(&im);
    if (masked)
        free_img(&mk);
}

static void test_equalize(void **state)
{
    (void)state;
    /* fixed shapes: the vector kernel with and without a tail, channels 3 */
    equalize_case(PIXSUM_U8, 1000, 777, 1, 1, 0, 0, C_NATURAL, 0, 0);
    equalize_case(PIXSUM_U8, 999, 33, 2, 3, 0, 0, C_RANDOM, 1, 0);
    equalize_case(PIXSUM_U16, 640, 480, 1, 1, 0, 0, C_NATURAL, 0, 1);
    equalize_case(PIXSUM_U16, 33, 17, 1, 4, 0, 0, C_SKEWED, 2, 0);
    equalize_case(PIXSUM_U8, 64, 64, 1, 2, 0, 0, C_CONSTANT, 0, 0);
    equalize_case(PIXSUM_U8, 1, 1, 1, 1, 0, 0, C_RANDOM, 0, 1);
    /* large enough for the flat kernels' unrolled loop (4 vectors per thread
     * per step of a full grid) on devices of up to ~150 SMs */
    equalize_case(PIXSUM_U8, 5000, 4000, 1, 1, 0, 0, C_NATURAL, 0, 0);
    equalize_case(PIXSUM_U16, 3000, 2000, 1, 1, 0, 0, C_RANDOM, 1, 0);
    for (int i = 0; i < (g_quick ? 10 : 60); i++) {
        pixsum_type t = rnd() % 2 ? PIXSUM_U8 : PIXSUM_U16;
        size_t w, h;
        switch (rnd() % 5) {
        case 0: w = 1, h = 1; break;
        case 1: w = rnd_in(1, 3000), h = 1; break;
        case 2: w = 1, h = rnd_in(1, 700); break;
        default: w = rnd_in(1, 400), h = rnd_in(1, 300); break;
        }
        size_t d = rnd() % 5 == 0 ? rnd_in(2, 3) : 1, ch = rnd_in(1, 4);
        size_t pad = rnd() % 2 ? 0 : rnd_in(1, 40), off = rnd() % 4 == 0 ? rnd_in(1, 7) : 0;
        int content = (int)(rnd() % C_COUNT);
        int masked = rnd() % 4 == 0 ? (int)rnd_in(1, 2) : 0;
        equalize_case(t, w, h, d, ch, pad, off, content, masked, rnd() % 3 == 0);
    }
    /* refusals */
    uint8_t *dm;
    CU_OK(cudaMalloc((void **)&dm, 4096));
    pixsum_view a = pixsum_view_2d(dm, PIXSUM_U8, 32, 32, 1, 0);
    pixsum_view b = pixsum_view_2d(dm + 2048, PIXSUM_U8, 32, 32, 1, 0);
    pixsum_view half = pixsum_view_2d(dm + 16, PIXSUM_U8, 32, 32, 1, 0);
    pixsum_view f = pixsum_view_2d(dm, PIXSUM_F32, 16, 16, 1, 0);
    pixsum_view w16 = pixsum_view_2d(dm + 2048, PIXSUM_U16, 32, 32, 1, 0);
    pixsum_view small = pixsum_view_2d(dm + 2048, PIXSUM_U8, 31, 32, 1, 0);
    pixsum_view mask_bad = pixsum_view_2d(dm + 3072, PIXSUM_U8, 16, 16, 1, 0);
    uint8_t host[1024];
    pixsum_view hv = pixsum_view_2d(host, PIXSUM_U8, 32, 32, 1, 0);
    assert_int_equal(pixsum_cuda_equalize(NULL, NULL, &b, NULL, NULL), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_cuda_equalize(NULL, &a, NULL, NULL, NULL), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_cuda_equalize(NULL, &f, &f, NULL, NULL), PIXSUM_ERR_BAD_TYPE);
    assert_int_equal(pixsum_cuda_equalize(NULL, &a, &w16, NULL, NULL), PIXSUM_ERR_BAD_TYPE);
    assert_int_equal(pixsum_cuda_equalize(NULL, &a, &small, NULL, NULL), PIXSUM_ERR_BAD_SHAPE);
    assert_int_equal(pixsum_cuda_equalize(NULL, &a, &half, NULL, NULL), PIXSUM_ERR_ALIASING);
    assert_int_equal(pixsum_cuda_equalize(NULL, &a, &b, &mask_bad, NULL), PIXSUM_ERR_BAD_SHAPE);
    /* host memory: refused, except where the device reads pageable memory */
    memset(host, 7, sizeof host);
    int st = pixsum_cuda_equalize(NULL, &hv, &b, NULL, NULL);
    if (st != PIXSUM_OK)
        assert_int_equal(st, PIXSUM_ERR_INVALID_ARG);
    st = pixsum_cuda_equalize(NULL, &a, &hv, NULL, NULL);
    if (st != PIXSUM_OK)
        assert_int_equal(st, PIXSUM_ERR_INVALID_ARG);
    CU_OK(cudaDeviceSynchronize());
    cudaFree(dm);
}

/* ---- batches: pixsum_cuda_histogram_batch() -------------------------------------- */

/* Sample i of row r of a host view as a double. */
static double load_sample(const pixsum_view *v, const char *row, size_t i)
{
    switch (v->type) {
    case PIXSUM_U8: return ((const uint8_t *)row)[i];
    case PIXSUM_U16: return ((const uint16_t *)row)[i];
    case PIXSUM_I16: return ((const int16_t *)row)[i];
    case PIXSUM_I32: return ((const int32_t *)row)[i];
    case PIXSUM_F32: return ((const float *)row)[i];
    default: return ((const double *)row)[i];
    }
}

/* The histogram of image z of a host batch from the definition: the edges
 * pixsum_hist_edge() reports, a sample in the bin i with edge(i) <= v <
 * edge(i + 1) (found by bisection), NaN, v < lo and v >= hi counted apart. */
static void definition_hist(const pixsum_view *in, const pixsum_view *mask, size_t z,
                            size_t bins, double lo, double hi, uint64_t *counts)
{
    double *e = malloc((bins + 1) * sizeof *e);
    assert_non_null(e);
    for (size_t i = 0; i <= bins; i++)
        e[i] = pixsum_hist_edge(bins, lo, hi, i);
    memset(counts, 0, bins * in->channels * sizeof *counts);
    for (size_t y = 0; y < in->height; y++) {
        const char *r = (const char *)in->data + (ptrdiff_t)z * in->slice_stride +
                        (ptrdiff_t)y * in->row_stride;
        const uint8_t *m = NULL;
        if (mask)
            m = (const uint8_t *)mask->data +
                (mask->depth > 1 ? (ptrdiff_t)z * mask->slice_stride : 0) +
                (ptrdiff_t)y * mask->row_stride;
        for (size_t x = 0; x < in->width; x++) {
            if (m && !m[x])
                continue;
            for (size_t c = 0; c < in->channels; c++) {
                double v = load_sample(in, r, x * in->channels + c);
                if (!(v >= e[0]) || !(v < e[bins]))
                    continue;
                size_t a = 0, b = bins; /* e[a] <= v < e[b] */
                while (b - a > 1) {
                    size_t mid = a + (b - a) / 2;
                    if (v < e[mid])
                        b = mid;
                    else
                        a = mid;
                }
                counts[c * bins + a]++;
            }
        }
    }
    free(e);
}

typedef struct bcase {
    pixsum_type t;
    size_t n, w, h, ch, pad, slice_pad, offset;
    int content, masked; /* 0 none, 1 one per image, 2 shared (depth 1) */
    size_t bins;
    int range; /* 0 the type's default (u8/u16/i16), 1 a random range */
    unsigned flags;
} bcase;

/* One batch on the device against the CPU batch (hist.scalar), each image
 * against the definition and against the single-image device call. */
static void run_batch_case(const bcase *k)
{
    char what[320];
    snprintf(what, sizeof what, "batch %s N%zu %zux%zu ch%zu pad%zu slicepad%zu off%zu %s "
             "mask%d bins%zu range%d flags%u", pixsum_type_name(k->t), k->n, k->w, k->h, k->ch,
             k->pad, k->slice_pad, k->offset, content_names[k->content], k->masked, k->bins,
             k->range, k->flags);
    /* images k->h + slice_pad rows tall, viewed k->h rows tall: padding
     * between the images */
    const size_t th = k->h + k->slice_pad;
    img im = make_img(k->t, k->w, th, k->n, k->ch, k->pad, k->offset, k->content, 1);
    pixsum_view hin, din;
    PX_OK(pixsum_view_roi3d(&im.h, 0, 0, 0, k->w, k->h, k->n, &hin));
    PX_OK(pixsum_view_roi3d(&im.d, 0, 0, 0, k->w, k->h, k->n, &din));
    pixsum_hist_spec hs, ds;
    memset(&hs, 0, sizeof hs);
    hs.bins = k->bins;
    if (k->range) {
        double lo, hi;
        switch (k->t) {
        case PIXSUM_U8: lo = -20.0 + (double)(rnd() % 120), hi = lo + 1 + (double)(rnd() % 300); break;
        case PIXSUM_U16: lo = -500.0 + (double)(rnd() % 30000), hi = lo + 1 + (double)(rnd() % 70000); break;
        case PIXSUM_I16: lo = -33000.0 + (double)(rnd() % 40000), hi = lo + 1 + (double)(rnd() % 70000); break;
        case PIXSUM_I32: lo = -120000.0 + (double)(rnd() % 150000), hi = lo + 1 + (double)(rnd() % 250000); break;
        default: lo = -2.5 + (double)(rnd() % 1000) / 400.0, hi = lo + 0.001 + (double)(rnd() % 1000) / 200.0; break;
        }
        hs.lo = lo;
        hs.hi = hi;
    }
    ds = hs;
    img mk;
    memset(&mk, 0, sizeof mk);
    pixsum_view hmask, dmask;
    if (k->masked) {
        mk = make_mask(k->w, k->h, k->masked == 1 ? k->n : 1, 0);
        hmask = mk.h;
        dmask = mk.d;
        hs.mask = &hmask;
        ds.mask = &dmask;
    }
    /* the bins and range (no data read: the range is given or the type's);
     * without the mask, which may be the batch's shared one of depth 1 */
    pixsum_hist_info probe;
    pixsum_hist_spec bins_only = hs;
    bins_only.mask = NULL;
    PX_OK(pixsum_hist_resolve(&hin, &bins_only, &probe));
    if (k->content == C_EDGES) {
        put_on_edges(&im, &probe);
    }
    const size_t bins = probe.bins, per = bins * k->ch, total = per * k->n;
    uint64_t *want = calloc(total, 8), *got = calloc(total, 8), *def = calloc(per, 8);
    pixsum_hist_info *infos = calloc(k->n, sizeof *infos);
    pixsum_cuda_hist_totals *tot = calloc(k->n, sizeof *tot);
    assert_true(want && got && def && infos && tot);
    pixsum_ctx *cpu = pixsum_ctx_new();
    PX_OK(pixsum_ctx_set_method(cpu, "hist.scalar"));
    PX_OK(pixsum_histogram_batch(cpu, &hin, &hs, k->flags, want, total, infos));
    pixsum_ctx_free(cpu);

    uint64_t *dcounts;
    pixsum_cuda_hist_totals *dtot;
    CU_OK(cudaMalloc((void **)&dcounts, total * 8 + 64));
    CU_OK(cudaMalloc((void **)&dtot, k->n * sizeof *dtot));
    pixsum_ctx *ctx = pixsum_ctx_new();
    for (int rep = 0; rep < 2; rep++) {
        CU_OK(cudaMemsetAsync(dcounts, 0xFF, total * 8, g_stream)); /* the call overwrites */
        CU_OK(cudaMemsetAsync(dtot, 0xFF, k->n * sizeof *dtot, g_stream));
        PX_OK(pixsum_cuda_histogram_batch(rep ? NULL : ctx, &din, &ds, k->flags, dcounts,
                                          total, rep ? NULL : dtot, g_stream));
        CU_OK(cudaMemcpyAsync(got, dcounts, total * 8, cudaMemcpyDeviceToHost, g_stream));
        if (!rep)
            CU_OK(cudaMemcpyAsync(tot, dtot, k->n * sizeof *dtot, cudaMemcpyDeviceToHost,
                                  g_stream));
        CU_OK(cudaStreamSynchronize(g_stream));
        for (size_t i = 0; i < total; i++)
            if (got[i] != want[i])
                fail_msg("%s (call %d): image %zu channel %zu bin %zu: GPU batch %llu, CPU "
                         "batch %llu", what, rep, i / per, i % per / bins, i % bins,
                         (unsigned long long)got[i], (unsigned long long)want[i]);
        if (!rep)
            for (size_t z = 0; z < k->n; z++) {
                char w2[360];
                snprintf(w2, sizeof w2, "%s: image %zu totals", what, z);
                compare_totals(&tot[z], &infos[z], w2);
            }
    }
    /* each image: the definition, and the single-image device call */
    uint64_t *dsingle;
    CU_OK(cudaMalloc((void **)&dsingle, per * 8));
    for (size_t z = 0; z < k->n; z++) {
        definition_hist(&hin, k->masked ? &hmask : NULL, z, bins, infos[z].lo, infos[z].hi,
                        def);
        for (size_t i = 0; i < per; i++)
            if (def[i] != want[z * per + i])
                fail_msg("%s: image %zu channel %zu bin %zu: CPU batch %llu, the definition "
                         "%llu", what, z, i / bins, i % bins,
                         (unsigned long long)want[z * per + i], (unsigned long long)def[i]);
        pixsum_view one, onemask;
        PX_OK(pixsum_view_roi3d(&din, 0, 0, z, k->w, k->h, 1, &one));
        pixsum_hist_spec s1 = ds;
        s1.bins = bins;
        s1.lo = infos[z].lo;
        s1.hi = infos[z].hi;
        if (k->masked == 1) {
            PX_OK(pixsum_view_roi3d(&dmask, 0, 0, z, k->w, k->h, 1, &onemask));
            s1.mask = &onemask;
        }
        PX_OK(pixsum_cuda_histogram(ctx, &one, &s1, dsingle, per, NULL, g_stream));
        CU_OK(cudaMemcpyAsync(def, dsingle, per * 8, cudaMemcpyDeviceToHost, g_stream));
        CU_OK(cudaStreamSynchronize(g_stream));
        for (size_t i = 0; i < per; i++)
            if (def[i] != got[z * per + i])
                fail_msg("%s: image %zu channel %zu bin %zu: GPU batch %llu, GPU single "
                         "image %llu", what, z, i / bins, i % bins,
                         (unsigned long long)got[z * per + i], (unsigned long long)def[i]);
    }
    pixsum_ctx_free(ctx);
    cudaFree(dsingle);
    cudaFree(dcounts);
    cudaFree(dtot);
    free(want);
    free(got);
    free(def);
    free(infos);
    free(tot);
    free_img(&im);
    if (k->masked)
        free_img(&mk);
}

static void random_batch_case(bcase *k, pixsum_type t)
{
    static const size_t ns[] = {1, 3, 17};
    memset(k, 0, sizeof *k);
    k->t = t;
    k->n = ns[rnd() % 3];
    switch (rnd() % 6) {
    case 0: k->w = 1, k->h = 1; break;
    case 1: k->w = rnd_in(1, 3000), k->h = 1; break;
    case 2: k->w = 1, k->h = rnd_in(1, 500); break;
    case 3: k->w = 224, k->h = 224; break;
    default: k->w = rnd_in(1, 300) | 1, k->h = rnd_in(1, 200) | 1; break;
    }
    k->ch = rnd_in(1, 4);
    k->pad = rnd() % 2 ? 0 : rnd_in(1, 40);
    k->slice_pad = rnd() % 3 ? 0 : rnd_in(1, 3);
    k->offset = rnd() % 4 == 0 ? rnd_in(1, 7) : 0;
    k->content = (int)(rnd() % C_COUNT);
    k->masked = (int)(rnd() % 3);
    int small = t == PIXSUM_U8 || t == PIXSUM_U16 || t == PIXSUM_I16;
    k->range = small ? (int)(rnd() % 2) : 1;
    k->bins = rnd() % 3 == 0 ? 0 : pick_bins();
    if (t == PIXSUM_U16 && k->bins == 0 && !k->range && rnd() % 2)
        k->bins = 256; /* 65536 default bins make the definition slow */
    k->flags = rnd() % 2 ? PIXSUM_HIST_RANGE_PER_IMAGE : 0;
}

static void test_batch(void **state)
{
    (void)state;
    /* u8 one channel, unmasked, contiguous: the 16-byte load path at the
     * speed target's shapes and odd ones */
    static const size_t flat[][3] = {{224, 224, 17}, {224, 224, 3}, {1, 1, 17}, {15, 1, 3},
                                     {17, 17, 17},   {1000, 3, 3},  {1, 999, 3}, {4099, 7, 1},
                                     {512, 512, 3},  {333, 77, 17}};
    for (size_t i = 0; i < sizeof flat / sizeof flat[0]; i++)
        for (int c = 0; c < C_COUNT; c++) {
            if (g_quick && (i + (size_t)c) % 3)
                continue;
            bcase k;
            memset(&k, 0, sizeof k);
            k.t = PIXSUM_U8;
            k.w = flat[i][0];
            k.h = flat[i][1];
            k.n = flat[i][2];
            k.ch = 1;
            k.content = c;
            k.offset = c == C_STRIPES ? 3 : 0; /* unaligned start: head and tail bytes */
            k.bins = c % 2 ? 0 : (size_t)(1 + rnd() % 300);
            k.range = c % 2 ? 0 : 1;
            run_batch_case(&k);
        }
    static const pixsum_type bt[] = {PIXSUM_U8, PIXSUM_U8, PIXSUM_U8, PIXSUM_U16, PIXSUM_F32,
                                     PIXSUM_I16, PIXSUM_I32, PIXSUM_F64};
    int n = g_quick ? 30 : 160;
    for (int i = 0; i < n; i++) {
        bcase k;
        random_batch_case(&k, bt[(size_t)i % (sizeof bt / sizeof bt[0])]);
        run_batch_case(&k);
    }
}

static void test_batch_errors(void **state)
{
    (void)state;
    uint8_t *d;
    uint64_t *c;
    CU_OK(cudaMalloc((void **)&d, 4096));
    CU_OK(cudaMalloc((void **)&c, 70000 * 8));
    pixsum_view v = pixsum_view_3d(d, PIXSUM_U8, 16, 16, 3, 1, 16, 256);
    pixsum_view f = pixsum_view_3d(d, PIXSUM_F32, 8, 8, 3, 1, 32, 256);
    pixsum_hist_spec s;
    memset(&s, 0, sizeof s);
    assert_int_equal(pixsum_cuda_histogram_batch(NULL, NULL, NULL, 0, c, 768, NULL, NULL),
                     PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_cuda_histogram_batch(NULL, &v, NULL, 0, NULL, 768, NULL, NULL),
                     PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_cuda_histogram_batch(NULL, &v, NULL, 0, c, 767, NULL, NULL),
                     PIXSUM_ERR_BAD_SHAPE);
    assert_int_equal(pixsum_cuda_histogram_batch(NULL, &v, NULL, 4, c, 768, NULL, NULL),
                     PIXSUM_ERR_INVALID_ARG);
    /* a float batch needs a range, with or without the per-image flag */
    assert_int_equal(pixsum_cuda_histogram_batch(NULL, &f, NULL, 0, c, 768, NULL, NULL),
                     PIXSUM_ERR_INVALID_ARG);
    assert_int_equal(pixsum_cuda_histogram_batch(NULL, &f, NULL, PIXSUM_HIST_RANGE_PER_IMAGE,
                                                 c, 768, NULL, NULL),
                     PIXSUM_ERR_INVALID_ARG);
    s.bins = 65537;
    assert_int_equal(pixsum_cuda_histogram_batch(NULL, &v, &s, 0, c, 70000, NULL, NULL),
                     PIXSUM_ERR_UNSUPPORTED);
    /* a mask of depth 2 for 3 images */
    pixsum_view m2 = pixsum_view_3d(d + 1024, PIXSUM_U8, 16, 16, 2, 1, 16, 256);
    memset(&s, 0, sizeof s);
    s.mask = &m2;
    assert_int_equal(pixsum_cuda_histogram_batch(NULL, &v, &s, 0, c, 768, NULL, NULL),
                     PIXSUM_ERR_BAD_SHAPE);
    pixsum_view alias = pixsum_view_3d(c, PIXSUM_U8, 64, 1, 3, 1, 64, 64);
    assert_int_equal(pixsum_cuda_histogram_batch(NULL, &alias, NULL, 0, c, 768, NULL, NULL),
                     PIXSUM_ERR_ALIASING);
    cudaFree(d);
    cudaFree(c);
}

int main(void)
{
    if (pixsum_cuda_device_count() == 0) {
        printf("test_cuda_hist: skipped: no CUDA device\n");
        return 77;
    }
    const char *seed = getenv("PIXSUM_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 10) : (uint64_t)time(NULL);
    g_quick = getenv("PIXSUM_TEST_QUICK") != NULL;
    /* PIXSUM_TEST_FILTER=test_batch*: only the matching tests (sanitizer runs) */
    if (getenv("PIXSUM_TEST_FILTER"))
        cmocka_set_test_filter(getenv("PIXSUM_TEST_FILTER"));
    printf("test_cuda_hist: seed %llu (replay with PIXSUM_TEST_SEED=N)\n",
           (unsigned long long)rng_state);
    if (cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking) != cudaSuccess) {
        printf("cannot create a CUDA stream\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_large_and_spill),
        cmocka_unit_test(test_flat_u8),
        cmocka_unit_test(test_queued),
        cmocka_unit_test(test_cumulative_relative),
        cmocka_unit_test(test_joint),
        cmocka_unit_test(test_stream_capture),
        cmocka_unit_test(test_equalize),
        cmocka_unit_test(test_batch_errors),
        cmocka_unit_test(test_batch),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    cudaStreamDestroy(g_stream);
    return failed ? 1 : 0;
}
#endif

/*
 * test_cuda.c - the CUDA integral-image methods against the CPU reference
 * (serial.2wh): every CUDA method, every type pair the kernels are built for,
 * random and awkward shapes (1x1, 1xN, Nx1, widths that are not multiples of
 * 4 or 32, padded row strides, 1-4 channels), squared tables, 3-D volumes,
 * batches, the padded layout, wrap mode, the host-memory path (pinned staging
 * in row strips), the device-pointer API on a caller's stream, a caller-given
 * workspace, repeated launches on the same buffers (no stale flags), an
 * output larger than 2^31 bytes from every method, and every code path of
 * cuda.lookback that the automatic choice takes for some size, type pair or
 * device, forced on small images (pixsum_cuda_set_force(), the experimental
 * API: each kernel, tile height and width, chained look-backs, no PDL, no
 * cp.async). Integer tables must match bit for bit; float tables within
 * (W + H + D + 16) x epsilon x the exact table of |input|.
 *
 * Without a CUDA device (or in a build without CUDA) the program prints
 * "skipped: no CUDA device" and exits with 77, which ctest reports as skipped.
 * PIXSUM_TEST_SEED=N replays a run; PIXSUM_TEST_NO_LARGE=1 skips the > 2 GiB
 * case; PIXSUM_TEST_PROBE=1 only says whether the GPU tests would run.
 */
#include "pixsum.h"

#include <stdio.h>
#include <stdlib.h>

#ifndef PIXSUM_TEST_HAVE_CUDA
int main(void)
{
    printf("test_cuda: skipped: no CUDA device (library built without CUDA)\n");
    return 77;
}
#else

#define PIXSUM_EXPERIMENTAL /* tuning, transfer times, forced paths */
#include "pixsum_cuda.h"

#include <cuda_runtime_api.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

/* ---- helpers --------------------------------------------------------------------- */

#include "testutil_cuda.h"

/* Compares two tables of the same shape; floats against `bound_table` (the f64
 * table of the input, which is >= 0 here) scaled by the error bound. */
static void compare_tables(const pixsum_view *got, const pixsum_view *want,
                           const pixsum_view *bound_table, const char *what)
{
    size_t es = pixsum_type_size(got->type), n = got->width * got->channels;
    double eps = got->type == PIXSUM_F32 ? FLT_EPSILON : DBL_EPSILON;
    for (size_t z = 0; z < got->depth; z++) {
        for (size_t y = 0; y < got->height; y++) {
            const char *g = (const char *)got->data + (ptrdiff_t)z * got->slice_stride +
                            (ptrdiff_t)y * got->row_stride;
            const char *w = (const char *)want->data + (ptrdiff_t)z * want->slice_stride +
                            (ptrdiff_t)y * want->row_stride;
            if (got->type != PIXSUM_F32 && got->type != PIXSUM_F64) {
                if (memcmp(g, w, n * es) != 0) {
                    size_t i = 0;
                    while (memcmp(g + i * es, w + i * es, es) == 0)
                        i++;
                    fail_msg("%s: %s table differs at x=%zu c=%zu y=%zu z=%zu", what,
                             pixsum_type_name(got->type), i / got->channels, i % got->channels,
                             y, z);
                }
                continue;
            }
            const double *b = (const double *)((const char *)bound_table->data +
                                               (ptrdiff_t)z * bound_table->slice_stride +
                                               (ptrdiff_t)y * bound_table->row_stride);
            double tol_scale = (double)(got->width + got->height + got->depth + 16) * eps;
            for (size_t i = 0; i < n; i++) {
                double gv = es == 4 ? ((const float *)g)[i] : ((const double *)g)[i];
                double wv = es == 4 ? ((const float *)w)[i] : ((const double *)w)[i];
                double tol = tol_scale * fabs(b[i]) + 1e-30;
                if (!(fabs(gv - wv) <= tol))
                    fail_msg("%s: %s table at x=%zu c=%zu y=%zu z=%zu: %.17g vs %.17g (tol %g)",
                             what, pixsum_type_name(got->type), i / got->channels,
                             i % got->channels, y, z, gv, wv, tol);
            }
        }
    }
}

/* A host image/table buffer and its view. */
typedef struct hbuf {
    pixsum_view v;
    void *mem;
    size_t bytes;
} hbuf;

static hbuf make_host(pixsum_type t, size_t w, size_t h, size_t d, size_t ch, size_t pad_elems)
{
    hbuf b;
    size_t es = pixsum_type_size(t);
    ptrdiff_t row = (ptrdiff_t)((w * ch + pad_elems) * es);
    b.bytes = (size_t)row * h * d;
    b.mem = malloc(b.bytes ? b.bytes : 1);
    assert_non_null(b.mem);
    memset(b.mem, 0xA5, b.bytes);
    b.v = pixsum_view_3d(b.mem, t, w, h, d, ch, row, row * (ptrdiff_t)h);
    return b;
}

/* ---- one case -------------------------------------------------------------------- */

enum api { API_HOST, API_DEVICE, API_WORKSPACE };
enum tables { T_PLAIN, T_SQ_ONLY, T_BOTH };

typedef struct tcase {
    const char *method;
    pixsum_type in, out;
    size_t w, h, d, ch, pad;
    int tables, batch, wrap, padded, extreme;
    enum api api;
    const pixsum_cuda_force *force; /* paths forced on the call's context, or NULL */
} tcase;

/* The CPU reference tables of a case (per slice for batches). */
static void reference(const tcase *c, const hbuf *in, hbuf *ref, hbuf *ref_sq, hbuf *bound,
                      hbuf *bound_sq)
{
    pixsum_ctx *ctx = pixsum_ctx_new();
    PX_OK(pixsum_ctx_set_method(ctx, "serial.2wh"));
    PX_OK(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, c->wrap));
    PX_OK(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, c->padded));
    size_t slices = c->batch ? c->d : 1;
    for (size_t z = 0; z < slices; z++) {
        pixsum_view vi = in->v, vr = ref->v, vs = ref_sq->v, vb = bound->v, vbs = bound_sq->v;
        if (c->batch) {
            vi.data = (char *)vi.data + (ptrdiff_t)z * vi.slice_stride;
            vi.depth = 1;
            pixsum_view *vv[4] = {&vr, &vs, &vb, &vbs};
            for (int k = 0; k < 4; k++) {
                if (!vv[k]->data)
                    continue;
                vv[k]->data = (char *)vv[k]->data + (ptrdiff_t)z * vv[k]->slice_stride;
                vv[k]->depth = 1;
            }
        }
        if (c->tables != T_SQ_ONLY)
            PX_OK(pixsum_integral(ctx, &vi, &vr));
        if (c->tables != T_PLAIN)
            PX_OK(pixsum_integral_sq(ctx, &vi, NULL, &vs));
        if (bound->mem)
            PX_OK(pixsum_integral(ctx, &vi, &vb));
        if (bound_sq->mem)
            PX_OK(pixsum_integral_sq(ctx, &vi, NULL, &vbs));
    }
    pixsum_ctx_free(ctx);
}

static void run_case(const tcase *c, cudaStream_t stream)
{
    char what[256];
    snprintf(what, sizeof what, "%s %s->%s %zux%zux%zu ch%zu pad%zu tables%d batch%d wrap%d "
             "padded%d api%d", c->method, pixsum_type_name(c->in), pixsum_type_name(c->out),
             c->w, c->h, c->d, c->ch, c->pad, c->tables, c->batch, c->wrap, c->padded,
             (int)c->api);
    hbuf in = make_host(c->in, c->w, c->h, c->d, c->ch, c->pad);
    fill_random(c->in, in.mem, in.bytes / pixsum_type_size(c->in), c->extreme);
    size_t pd = c->padded ? 1 : 0;
    size_t tw = c->w + pd, th = c->h + pd, td = c->d > 1 && !c->batch ? c->d + pd : c->d;
    int isfloat = c->out == PIXSUM_F32 || c->out == PIXSUM_F64;
    hbuf none = {{0}, NULL, 0};
    hbuf ref = c->tables != T_SQ_ONLY ? make_host(c->out, tw, th, td, c->ch, 0) : none;
    hbuf ref_sq = c->tables != T_PLAIN ? make_host(c->out, tw, th, td, c->ch, 0) : none;
    hbuf bound = isfloat && c->tables != T_SQ_ONLY ? make_host(PIXSUM_F64, tw, th, td, c->ch, 0)
                                                   : none;
    hbuf bound_sq =
        isfloat && c->tables != T_PLAIN ? make_host(PIXSUM_F64, tw, th, td, c->ch, 0) : none;
    reference(c, &in, &ref, &ref_sq, &bound, &bound_sq);

    size_t opad = 3; /* output rows padded too */
    hbuf got = c->tables != T_SQ_ONLY ? make_host(c->out, tw, th, td, c->ch, opad) : none;
    hbuf got_sq = c->tables != T_PLAIN ? make_host(c->out, tw, th, td, c->ch, opad) : none;

    pixsum_ctx *ctx = pixsum_ctx_new();
    PX_OK(pixsum_ctx_set_method(ctx, c->method));
    PX_OK(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, c->wrap));
    PX_OK(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, c->padded));
    PX_OK(pixsum_ctx_set(ctx, PIXSUM_PARAM_CUDA_STREAM, (intptr_t)stream));
    if (c->force)
        PX_OK(pixsum_cuda_set_force(ctx, c->force));
    if (c->api == API_HOST) {
        if (c->tables == T_PLAIN)
            PX_OK(pixsum_integral(ctx, &in.v, &got.v));
        else
            PX_OK(pixsum_integral_sq(ctx, &in.v, got.mem ? &got.v : NULL, &got_sq.v));
        double h2d, k, d2h, total;
        PX_OK(pixsum_cuda_last_transfer_ms(ctx, &h2d, &k, &d2h, &total));
        assert_true(total >= 0 && h2d >= 0 && k >= 0 && d2h >= 0);
    } else {
        void *din, *dout = NULL, *dsq = NULL;
        CU_OK(cudaMalloc(&din, in.bytes));
        CU_OK(cudaMemcpy(din, in.mem, in.bytes, cudaMemcpyHostToDevice));
        pixsum_view vin = in.v, vout = got.v, vsq = got_sq.v;
        vin.data = din;
        if (got.mem) {
            CU_OK(cudaMalloc(&dout, got.bytes));
            CU_OK(cudaMemset(dout, 0xA5, got.bytes));
            vout.data = dout;
        }
        if (got_sq.mem) {
            CU_OK(cudaMalloc(&dsq, got_sq.bytes));
            CU_OK(cudaMemset(dsq, 0xA5, got_sq.bytes));
            vsq.data = dsq;
        }
        const pixsum_view *po = got.mem ? &vout : NULL, *ps = got_sq.mem ? &vsq : NULL;
        if (c->api == API_DEVICE) {
            if (c->batch && c->tables == T_PLAIN)
                PX_OK(pixsum_cuda_integral_batch(ctx, &vin, &vout, NULL));
            else if (c->batch)
                PX_OK(pixsum_cuda_integral_batch_sq(ctx, &vin, po, ps, NULL));
            else if (c->tables == T_PLAIN)
                PX_OK(pixsum_cuda_integral(ctx, &vin, &vout, NULL));
            else
                PX_OK(pixsum_cuda_integral_sq(ctx, &vin, po, ps, NULL));
        } else {
            size_t need = 0;
            PX_OK(pixsum_cuda_workspace_size(ctx, &vin, po, ps, &need));
            void *ws;
            CU_OK(cudaMalloc(&ws, need));
            CU_OK(cudaMemsetAsync(ws, 0, need, stream));
            for (int rep = 0; rep < 3; rep++)
                PX_OK(pixsum_cuda_integral_ws(ctx, &vin, po, ps, c->batch, ws, need, stream));
            CU_OK(cudaStreamSynchronize(stream));
            CU_OK(cudaFree(ws));
        }
        CU_OK(cudaStreamSynchronize(stream));
        CU_OK(cudaGetLastError());
        if (dout)
            CU_OK(cudaMemcpy(got.mem, dout, got.bytes, cudaMemcpyDeviceToHost));
        if (dsq)
            CU_OK(cudaMemcpy(got_sq.mem, dsq, got_sq.bytes, cudaMemcpyDeviceToHost));
        cudaFree(din);
        cudaFree(dout);
        cudaFree(dsq);
    }
    if (got.mem)
        compare_tables(&got.v, &ref.v, &bound.v, what);
    if (got_sq.mem)
        compare_tables(&got_sq.v, &ref_sq.v, &bound_sq.v, what);
    pixsum_ctx_free(ctx);
    free(in.mem);
    free(ref.mem);
    free(ref_sq.mem);
    free(bound.mem);
    free(bound_sq.mem);
    free(got.mem);
    free(got_sq.mem);
}

/* ---- the tests ------------------------------------------------------------------------- */

static const char *const methods[] = {"cuda.lookback",  "cuda.rowthread", "cuda.blockscan",
                                      "cuda.naive004",  "cuda.kogge004",  "cuda.single004"};
#define NMETHODS (sizeof methods / sizeof methods[0])

static const pixsum_type pairs[][2] = {
    {PIXSUM_U8, PIXSUM_U32},  {PIXSUM_U8, PIXSUM_U64},  {PIXSUM_U8, PIXSUM_I64},
    {PIXSUM_U16, PIXSUM_U32}, {PIXSUM_U16, PIXSUM_U64}, {PIXSUM_I16, PIXSUM_I64},
    {PIXSUM_I32, PIXSUM_I64}, {PIXSUM_U32, PIXSUM_U64}, {PIXSUM_F32, PIXSUM_F32},
    {PIXSUM_F32, PIXSUM_F64}, {PIXSUM_F64, PIXSUM_F64},
};
#define NPAIRS (sizeof pairs / sizeof pairs[0])

static const size_t shapes[][2] = {{1, 1},    {1, 300},  {300, 1},  {7, 5},    {33, 17},
                                   {257, 65}, {1000, 3}, {3, 1000}, {513, 300}, {1029, 77},
                                   {255, 129}, {2049, 33}};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

static cudaStream_t g_stream;

/* PIXSUM_TEST_QUICK=1: small sizes only (for compute-sanitizer runs). */
static int quick(void)
{
    const char *q = getenv("PIXSUM_TEST_QUICK");
    return q && *q && strcmp(q, "0") != 0;
}

/* Small sums only: wrap needed for u8 -> u32 only beyond 4104^2, never here. */
static void test_methods_types_shapes(void **state)
{
    (void)state;
    for (size_t m = 0; m < NMETHODS; m++)
        for (size_t p = 0; p < NPAIRS; p++)
            for (size_t s = 0; s < (quick() ? 6 : NSHAPES); s++) {
                tcase c = {methods[m], pairs[p][0], pairs[p][1], shapes[s][0], shapes[s][1],
                           1, 1 + (s + p) % 4, (s % 3) * 5, T_PLAIN, 0, 0, 0, 0, API_DEVICE, NULL};
                if (pairs[p][1] == PIXSUM_U32 && pairs[p][0] == PIXSUM_U16)
                    c.wrap = 1; /* u16 sums may pass 2^32 only in wrap mode */
                run_case(&c, g_stream);
            }
}

static void test_host_memory_path(void **state)
{
    (void)state;
    for (size_t m = 0; m < NMETHODS; m++)
        for (size_t p = 0; p < NPAIRS; p += 2)
            for (size_t s = 0; s < (quick() ? 6 : NSHAPES); s += 3) {
                tcase c = {methods[m], pairs[p][0], pairs[p][1], shapes[s][0], shapes[s][1],
                           1, 1 + s % 4, s % 2, T_PLAIN, 0, 1, 0, 0, API_HOST, NULL};
                run_case(&c, g_stream);
            }
}

static void test_squared_volumes_batches_padded(void **state)
{
    (void)state;
    static const pixsum_type sq_pairs[][2] = {{PIXSUM_U8, PIXSUM_U32},
                                              {PIXSUM_U8, PIXSUM_U64},
                                              {PIXSUM_U16, PIXSUM_U64},
                                              {PIXSUM_I32, PIXSUM_I64},
                                              {PIXSUM_I16, PIXSUM_I64},
                                              {PIXSUM_F32, PIXSUM_F64},
                                              {PIXSUM_F64, PIXSUM_F64}};
    for (size_t m = 0; m < NMETHODS; m++)
        for (size_t p = 0; p < sizeof sq_pairs / sizeof sq_pairs[0]; p++) {
            size_t lim = quick() ? 40 : 300;
            size_t w = 1 + rnd() % lim, h = 1 + rnd() % (lim * 2 / 3), d = 1 + rnd() % 5;
            tcase c = {methods[m], sq_pairs[p][0], sq_pairs[p][1], w, h, 1, 1 + p % 4, p % 2,
                       T_BOTH, 0, 1, (int)(p % 2), 0, API_DEVICE, NULL}; /* wrap: u8^2 -> u32 */
            run_case(&c, g_stream); /* plain + squared, padded half the time */
            c.tables = T_SQ_ONLY;
            c.api = API_HOST;
            run_case(&c, g_stream);
            c.tables = T_PLAIN;
            c.d = d + 1; /* 3-D volume */
            c.api = (p % 2) ? API_HOST : API_DEVICE;
            run_case(&c, g_stream);
            c.api = API_DEVICE; /* batch of independent images */
            c.batch = 1;
            run_case(&c, g_stream);
            c.api = API_WORKSPACE;
            run_case(&c, g_stream);
            c.api = API_DEVICE; /* batches of squared tables, with and without plain ones */
            c.tables = T_BOTH;
            run_case(&c, g_stream);
            c.tables = T_SQ_ONLY;
            run_case(&c, g_stream);
        }
}

/* Sums that pass 2^32 in a u32 table: exact modulo 2^32 as on the CPU. */
static void test_wrap_mode(void **state)
{
    (void)state;
    if (quick())
        return;
    for (size_t m = 0; m < NMETHODS; m++) {
        tcase c = {methods[m], PIXSUM_U8, PIXSUM_U32, 4200, 4150, 1, 1, 0, T_PLAIN, 0, 1, 0,
                   1, API_DEVICE, NULL};
        run_case(&c, g_stream);
    }
    tcase h = {"cuda.lookback", PIXSUM_U16, PIXSUM_U32, 1200, 1100, 1, 2, 4, T_PLAIN, 0, 1, 0,
               1, API_HOST, NULL};
    run_case(&h, g_stream);
}

/* Host images cut into row strips (about 1024 rows each) small enough (at
 * most 32 x 32 tiles) for the aggregate-only look-backs, each strip adding
 * the carried table row above it: f32 -> f32 (the register kernel's wide
 * tiles) and u8 -> u32 in 2 channels (the staged kernel), each also with the
 * other kernel forced. */
static void test_host_strips_small_planes(void **state)
{
    (void)state;
    if (quick())
        return;
    static const pixsum_cuda_force reg = {PIXSUM_CUDA_FORCE_REGISTER, 0, 0, 0, 0, 0, 0};
    static const pixsum_cuda_force staged = {PIXSUM_CUDA_FORCE_STAGED, 0, 0, 0, 0, 0, 0};
    tcase f = {"cuda.lookback", PIXSUM_F32, PIXSUM_F32, 4096, 3000, 1, 1, 0, T_PLAIN, 0, 0, 0,
               0, API_HOST, NULL};
    run_case(&f, g_stream);
    f.force = &staged;
    run_case(&f, g_stream);
    tcase u = {"cuda.lookback", PIXSUM_U8, PIXSUM_U32, 4000, 2500, 1, 2, 3, T_PLAIN, 0, 0, 0,
               1, API_HOST, NULL};
    run_case(&u, g_stream);
    u.force = &reg;
    run_case(&u, g_stream);
}

/* Every path of cuda.lookback that the automatic choice takes for some
 * image, type pair or device, forced on small images (where the automatic
 * choice is the register kernel's aggregate-only look-backs): the register
 * kernel with chained look-backs, wide and narrow tiles and without PDL; the
 * staged kernel with each of its tile heights, without PDL and without
 * cp.async. Each over every type pair and the shapes above, then a squared
 * padded volume, a batch through a caller's workspace and a host image. */
static void test_lookback_paths(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        pixsum_cuda_force f; /* kernel, rows, tile width, chained, hist, no PDL, no cp.async */
    } paths[] = {
        {"register", {PIXSUM_CUDA_FORCE_REGISTER, 0, 0, 0, 0, 0, 0}},
        {"register chained", {PIXSUM_CUDA_FORCE_REGISTER, 0, 0, 1, 0, 0, 0}},
        {"register wide", {PIXSUM_CUDA_FORCE_REGISTER, 0, 256, 0, 0, 0, 0}},
        {"register narrow", {PIXSUM_CUDA_FORCE_REGISTER, 0, 128, 0, 0, 0, 0}},
        {"register no-pdl", {PIXSUM_CUDA_FORCE_REGISTER, 0, 0, 0, 0, 1, 0}},
        {"staged", {PIXSUM_CUDA_FORCE_STAGED, 0, 0, 0, 0, 0, 0}},
        {"staged rows 16", {PIXSUM_CUDA_FORCE_STAGED, 16, 0, 0, 0, 0, 0}},
        {"staged rows 8", {PIXSUM_CUDA_FORCE_STAGED, 8, 0, 0, 0, 0, 0}},
        {"staged rows 4", {PIXSUM_CUDA_FORCE_STAGED, 4, 0, 0, 0, 0, 0}},
        {"staged no-pdl", {PIXSUM_CUDA_FORCE_STAGED, 0, 0, 0, 0, 1, 0}},
        {"staged no-async", {PIXSUM_CUDA_FORCE_STAGED, 0, 0, 0, 0, 0, 1}},
    };
    /* quick (under compute-sanitizer): three shapes of several tiles */
    static const size_t quick_shapes[] = {4, 8, 9};
    const size_t nshapes = quick() ? 3 : NSHAPES;
    for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++) {
        printf("cuda.lookback forced: %s\n", paths[k].name);
        for (size_t p = 0; p < NPAIRS; p++)
            for (size_t i = 0; i < nshapes; i++) {
                const size_t s = quick() ? quick_shapes[i] : i;
                tcase c = {"cuda.lookback", pairs[p][0], pairs[p][1], shapes[s][0],
                           shapes[s][1], 1, 1 + (s + p) % 4, (s % 3) * 5, T_PLAIN, 0, 0, 0, 0,
                           API_DEVICE, &paths[k].f};
                if (pairs[p][1] == PIXSUM_U32 && pairs[p][0] == PIXSUM_U16)
                    c.wrap = 1; /* u16 sums may pass 2^32 only in wrap mode */
                run_case(&c, g_stream);
            }
        const size_t w = quick() ? 70 : 600, h = quick() ? 40 : 300;
        tcase v = {"cuda.lookback", PIXSUM_U16, PIXSUM_U64, w, h, 3, 2, 1, T_BOTH, 0, 1, 1, 0,
                   API_DEVICE, &paths[k].f};
        run_case(&v, g_stream); /* squared padded volume */
        tcase b = {"cuda.lookback", PIXSUM_F32, PIXSUM_F32, w, h, 3, 1, 0, T_PLAIN, 1, 0, 0, 0,
                   API_WORKSPACE, &paths[k].f};
        run_case(&b, g_stream); /* batch, caller's workspace */
        tcase hm = {"cuda.lookback", PIXSUM_U8, PIXSUM_U32, w * 3, h * 4, 1, 1, 2, T_PLAIN, 0, 0,
                    0, 0, API_HOST, &paths[k].f};
        run_case(&hm, g_stream); /* host image */
    }
}

/* Many launches on the same buffers and workspace with new data and new
 * shapes each time: a flag left by an earlier launch must never be taken for
 * a fresh one. */
static void test_repeated_launches(void **state)
{
    (void)state;
    const size_t W = 3000, H = 1700;
    size_t inb = W * H, outb = W * H * 4;
    uint8_t *hin = malloc(inb);
    uint32_t *hout = malloc(outb), *href = malloc(outb);
    assert_non_null(hin);
    assert_non_null(hout);
    assert_non_null(href);
    void *din, *dout;
    CU_OK(cudaMalloc(&din, inb));
    CU_OK(cudaMalloc(&dout, outb));
    const char *flagged[] = {"cuda.lookback", "cuda.single004"};
    for (int mi = 0; mi < 2; mi++) {
        pixsum_ctx *ctx = pixsum_ctx_new(), *cpu = pixsum_ctx_new();
        PX_OK(pixsum_ctx_set_method(ctx, flagged[mi]));
        PX_OK(pixsum_ctx_set(ctx, PIXSUM_PARAM_CUDA_STREAM, (intptr_t)g_stream));
        PX_OK(pixsum_ctx_set_method(cpu, "serial.2wh"));
        for (int rep = 0; rep < (quick() ? 4 : 40); rep++) {
            size_t w = 1 + rnd() % (quick() ? 600 : W), h = 1 + rnd() % (quick() ? 300 : H);
            fill_random(PIXSUM_U8, hin, w * h, 0);
            pixsum_view hi = pixsum_view_2d(hin, PIXSUM_U8, w, h, 1, 0);
            pixsum_view hr = pixsum_view_2d(href, PIXSUM_U32, w, h, 1, 0);
            PX_OK(pixsum_integral(cpu, &hi, &hr));
            CU_OK(cudaMemcpyAsync(din, hin, w * h, cudaMemcpyHostToDevice, g_stream));
            pixsum_view di = pixsum_view_2d(din, PIXSUM_U8, w, h, 1, 0);
            pixsum_view dd = pixsum_view_2d(dout, PIXSUM_U32, w, h, 1, 0);
            /* Several launches back to back before looking. */
            for (int k = 0; k < 3; k++)
                PX_OK(pixsum_cuda_integral(ctx, &di, &dd, NULL));
            CU_OK(cudaMemcpyAsync(hout, dout, w * h * 4, cudaMemcpyDeviceToHost, g_stream));
            CU_OK(cudaStreamSynchronize(g_stream));
            pixsum_view hg = pixsum_view_2d(hout, PIXSUM_U32, w, h, 1, 0);
            char what[96];
            snprintf(what, sizeof what, "%s repeat %d (%zux%zu)", flagged[mi], rep, w, h);
            compare_tables(&hg, &hr, NULL, what);
        }
        pixsum_ctx_free(ctx);
        pixsum_ctx_free(cpu);
    }
    cudaFree(din);
    cudaFree(dout);
    free(hin);
    free(hout);
    free(href);
}

/* An output table of more than 2^31 bytes (byte offsets past 32 bits in every
 * kernel): through cuda.lookback's host path (many row strips, each carrying
 * the row above) and through the device path of every CUDA method. */
static void test_large_output(void **state)
{
    (void)state;
    const char *skip = getenv("PIXSUM_TEST_NO_LARGE");
    if (quick() || (skip && *skip && strcmp(skip, "0") != 0)) {
        printf("large-output case skipped (PIXSUM_TEST_NO_LARGE)\n");
        return;
    }
    size_t freeb = 0, totalb = 0;
    CU_OK(cudaMemGetInfo(&freeb, &totalb));
    const size_t W = 16400, H = 16400; /* u64 table: 2.15e9 bytes */
    if (freeb < (size_t)6 << 30) {
        printf("large-output case skipped: %zu bytes of device memory free\n", freeb);
        return;
    }
    tcase c = {"cuda.lookback", PIXSUM_U8, PIXSUM_U64, W, H, 1, 1, 0, T_PLAIN, 0, 0, 0, 1,
               API_HOST, NULL};
    run_case(&c, g_stream);
    c.api = API_DEVICE;
    for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++) {
        c.method = methods[m];
        run_case(&c, g_stream);
    }
}

static void test_errors(void **state)
{
    (void)state;
    pixsum_ctx *ctx = pixsum_ctx_new();
    int st;
    /* A type pair the kernels do not compute. */
    void *d;
    CU_OK(cudaMalloc(&d, 4096));
    pixsum_view in = pixsum_view_2d(d, PIXSUM_U8, 8, 8, 1, 0);
    pixsum_view out = pixsum_view_2d((char *)d + 1024, PIXSUM_F32, 8, 8, 1, 0);
    assert_int_equal(pixsum_cuda_integral(ctx, &in, &out, NULL), PIXSUM_ERR_UNSUPPORTED);
    /* Misaligned table. */
    pixsum_view mis = pixsum_view_2d((char *)d + 1026, PIXSUM_U32, 8, 8, 1, 0);
    st = pixsum_cuda_integral(ctx, &in, &mis, NULL);
    assert_true(st == PIXSUM_ERR_UNSUPPORTED || st == PIXSUM_ERR_BAD_STRIDE);
    /* Overflow refused without wrap. */
    pixsum_view big_in = pixsum_view_2d(d, PIXSUM_U8, 5000, 5000, 1, 0);
    pixsum_view big_out = pixsum_view_2d((char *)d + 1024, PIXSUM_U32, 5000, 5000, 1, 0);
    assert_int_equal(pixsum_cuda_integral(ctx, &big_in, &big_out, NULL), PIXSUM_ERR_OVERFLOW);
    /* A CUDA failure comes back as PIXSUM_ERR_CUDA with CUDA's text. */
    st = pixsum_cuda_reserve(ctx, (size_t)1 << 52);
    assert_int_equal(st, PIXSUM_ERR_CUDA);
    assert_non_null(strstr(pixsum_last_error(), "cudaMalloc"));
    /* Too small a workspace. */
    pixsum_view o2 = pixsum_view_2d((char *)d + 1024, PIXSUM_U32, 8, 8, 1, 0);
    void *ws;
    CU_OK(cudaMalloc(&ws, 64));
    CU_OK(cudaMemset(ws, 0, 64));
    assert_int_equal(pixsum_cuda_integral_ws(ctx, &in, &o2, NULL, 0, ws, 64, NULL),
                     PIXSUM_ERR_INVALID_ARG);
    /* Bad tuning, bad forced paths. */
    pixsum_cuda_tuning t = {100, 32, 8};
    assert_int_equal(pixsum_cuda_set_tuning(ctx, &t), PIXSUM_ERR_INVALID_ARG);
    pixsum_cuda_force f = {3, 0, 0, 0, 0, 0, 0};
    assert_int_equal(pixsum_cuda_set_force(ctx, &f), PIXSUM_ERR_INVALID_ARG);
    f.lookback_kernel = 0;
    f.lookback_rows = 12;
    assert_int_equal(pixsum_cuda_set_force(ctx, &f), PIXSUM_ERR_INVALID_ARG);
    f.lookback_rows = 0;
    f.lookback_tile_width = 64;
    assert_int_equal(pixsum_cuda_set_force(ctx, &f), PIXSUM_ERR_INVALID_ARG);
    f.lookback_tile_width = 0;
    f.hist_scheme = 3;
    assert_int_equal(pixsum_cuda_set_force(ctx, &f), PIXSUM_ERR_INVALID_ARG);
    assert_int_equal(pixsum_cuda_set_force(NULL, NULL), PIXSUM_ERR_NULL);
    PX_OK(pixsum_cuda_set_force(ctx, NULL));
    cudaFree(ws);
    cudaFree(d);
    pixsum_ctx_free(ctx);
}

/* The overflow rule of a batch counts one image: images of 257 x 65537 =
 * 16843009 all-255 u8 pixels sum to exactly 2^32 - 1, so a batch of them has
 * u32 tables (its volume would not), and one pixel more per image (2 x
 * 8421505) is refused; a volume of the same slices is refused too. */
static void test_batch_overflow_rule(void **state)
{
    (void)state;
    const size_t w = 65537, h = 257, n = 2, px = w * h;
    void *din, *dout, *ws;
    CU_OK(cudaMalloc(&din, n * px + 64)); /* + 64: room for the 2 x 8421505 views */
    CU_OK(cudaMalloc(&dout, n * px * 4 + 64));
    CU_OK(cudaMemset(din, 0xFF, n * px));
    pixsum_ctx *ctx = pixsum_ctx_new();
    pixsum_view in = pixsum_view_3d(din, PIXSUM_U8, w, h, n, 1, (ptrdiff_t)w, (ptrdiff_t)px);
    pixsum_view out = pixsum_view_3d(dout, PIXSUM_U32, w, h, n, 1, (ptrdiff_t)(w * 4),
                                     (ptrdiff_t)(px * 4));
    PX_OK(pixsum_cuda_integral_batch(ctx, &in, &out, NULL));
    size_t need = 0;
    PX_OK(pixsum_cuda_workspace_size(ctx, &in, &out, NULL, &need));
    CU_OK(cudaMalloc(&ws, need));
    CU_OK(cudaMemset(ws, 0, need));
    PX_OK(pixsum_cuda_integral_ws(ctx, &in, &out, NULL, 1, ws, need, NULL));
    CU_OK(cudaDeviceSynchronize());
    for (size_t z = 0; z < n; z++) {
        uint32_t last;
        CU_OK(cudaMemcpy(&last, (char *)dout + (z + 1) * px * 4 - 4, 4, cudaMemcpyDeviceToHost));
        assert_int_equal(last, UINT32_MAX);
    }
    /* the same slices as one volume: 2 x (2^32 - 1) does not fit */
    assert_int_equal(pixsum_cuda_integral(ctx, &in, &out, NULL), PIXSUM_ERR_OVERFLOW);
    assert_int_equal(pixsum_cuda_integral_ws(ctx, &in, &out, NULL, 0, ws, need, NULL),
                     PIXSUM_ERR_OVERFLOW);
    /* one pixel more per image */
    pixsum_view in1 = pixsum_view_3d(din, PIXSUM_U8, 8421505, 2, n, 1, 8421505, 16843010);
    pixsum_view out1 = pixsum_view_3d(dout, PIXSUM_U32, 8421505, 2, n, 1, 8421505 * 4,
                                      16843010 * 4);
    assert_int_equal(pixsum_cuda_integral_batch(ctx, &in1, &out1, NULL), PIXSUM_ERR_OVERFLOW);
    assert_non_null(strstr(pixsum_last_error(), "16843010"));
    CU_OK(cudaFree(ws));
    CU_OK(cudaFree(din));
    CU_OK(cudaFree(dout));
    pixsum_ctx_free(ctx);
}

/* The paper-004 sweep parameters all give the same table. */
static void test_tuning(void **state)
{
    (void)state;
    static const pixsum_cuda_tuning tunings[] = {{256, 32, 8}, {256, 32, 16}, {512, 32, 8},
                                                 {512, 32, 16}, {1024, 16, 4}, {64, 16, 16}};
    for (size_t i = 0; i < sizeof tunings / sizeof tunings[0]; i++) {
        for (int m = 3; m <= 5; m++) {
            size_t w = 1 + rnd() % (quick() ? 300 : 2000), h = 1 + rnd() % (quick() ? 100 : 700);
            hbuf in = make_host(PIXSUM_U8, w, h, 1, 1, 0);
            fill_random(PIXSUM_U8, in.mem, in.bytes, 0);
            hbuf ref = make_host(PIXSUM_U32, w, h, 1, 1, 0), got = make_host(PIXSUM_U32, w, h, 1, 1, 0);
            pixsum_ctx *cpu = pixsum_ctx_new(), *ctx = pixsum_ctx_new();
            PX_OK(pixsum_integral(cpu, &in.v, &ref.v));
            PX_OK(pixsum_ctx_set_method(ctx, methods[m]));
            PX_OK(pixsum_cuda_set_tuning(ctx, &tunings[i]));
            PX_OK(pixsum_integral(ctx, &in.v, &got.v));
            compare_tables(&got.v, &ref.v, NULL, methods[m]);
            pixsum_ctx_free(cpu);
            pixsum_ctx_free(ctx);
            free(in.mem);
            free(ref.mem);
            free(got.mem);
        }
    }
}

int main(void)
{
    if (pixsum_cuda_device_count() == 0) {
        printf("test_cuda: skipped: no CUDA device\n");
        return 77;
    }
    if (getenv("PIXSUM_TEST_PROBE")) { /* `make test` announces what will run */
        printf("test_cuda: %d CUDA device(s): the GPU tests run\n", pixsum_cuda_device_count());
        return 0;
    }
    const char *seed = getenv("PIXSUM_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 10) : (uint64_t)time(NULL);
    printf("test_cuda: seed %llu (replay with PIXSUM_TEST_SEED=N)\n",
           (unsigned long long)rng_state);
    if (cudaStreamCreate(&g_stream) != cudaSuccess) {
        printf("cannot create a CUDA stream\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_batch_overflow_rule),
        cmocka_unit_test(test_methods_types_shapes),
        cmocka_unit_test(test_host_memory_path),
        cmocka_unit_test(test_squared_volumes_batches_padded),
        cmocka_unit_test(test_wrap_mode),
        cmocka_unit_test(test_host_strips_small_planes),
        cmocka_unit_test(test_lookback_paths),
        cmocka_unit_test(test_repeated_launches),
        cmocka_unit_test(test_tuning),
        cmocka_unit_test(test_large_output),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    cudaStreamDestroy(g_stream);
    return failed ? 1 : 0;
}
#endif

/*
 * cuda_host.c - the host side of the CUDA backend: the registered CUDA
 * methods (psi_methods_cuda[]), the device-pointer entry points of
 * pixsum_cuda.h, the context's device scratch, and the host-memory path of
 * pixsum_integral(): pinned staging buffers, copies cut into row chunks on
 * their own streams, overlapped with the kernels (for cuda.lookback each
 * chunk of rows is computed as soon as it arrives, carrying the table row
 * above it) and with the CPU's packing of the next chunk.
 *
 * Every CUDA error becomes PIXSUM_ERR_CUDA with CUDA's text as the detail.
 * The experimental entry points of pixsum_cuda.h (the paper-004 tuning, the
 * transfer times of the last host-memory call, the forced code paths of the
 * tests) live here too: a context keeps their settings in its CUDA state.
 */
#define PIXSUM_EXPERIMENTAL /* the experimental section of pixsum_cuda.h */
#include "../internal.h"
#include "pixsum_cuda.h"

#include "cuda_hist.h"
#include "cuda_memcheck.h"
#include "cuda_plan.h"
#include "cuda_status.h"
#include "cuda_tilted.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PSI_CU_CHUNK_BYTES ((size_t)16 << 20) /* pinned staging chunk */
#define PSI_CU_SLOTS 2                         /* staging double buffer */

/* ---- per-context state (ctx->cuda_scratch) ----------------------------------- */

typedef struct psi_cuda_state {
    int device;                 /* device the buffers below belong to */
    void *ws;                   /* workspace (header zeroed at allocation) */
    size_t ws_bytes;
    pixsum_cuda_tuning tuning;  /* paper-004 launch parameters (pixsum_cuda_set_tuning) */
    pixsum_cuda_force force;    /* forced code paths (pixsum_cuda_set_force) */
    /* host-memory path */
    void *d_in, *d_out[2];
    size_t d_in_bytes, d_out_bytes[2];
    void *pin_in[PSI_CU_SLOTS], *pin_out[PSI_CU_SLOTS];
    size_t pin_bytes;
    cudaStream_t s_h2d, s_kernel, s_d2h;
    cudaEvent_t ev[PSI_CU_SLOTS][6]; /* h2d begin/end, kernel begin/end, d2h begin/end */
    int have_streams;
    double last_ms[4];
    int have_last;
    psi_cuda_hist_slot hist;    /* histogram buffers (cuda_hist_host.c) */
    void *tilted_ws;            /* scratch of the tilted integral (kept apart from ws,
                                   whose look-back flags it would overwrite) */
    size_t tilted_ws_bytes;
} psi_cuda_state;

static void state_free(psi_cuda_state *s)
{
    if (!s)
        return;
    int prev = -1;
    if (cudaGetDevice(&prev) == cudaSuccess && prev != s->device)
        cudaSetDevice(s->device);
    cudaFree(s->ws);
    cudaFree(s->tilted_ws);
    cudaFree(s->d_in);
    cudaFree(s->d_out[0]);
    cudaFree(s->d_out[1]);
    for (int i = 0; i < PSI_CU_SLOTS; i++) {
        cudaFreeHost(s->pin_in[i]);
        cudaFreeHost(s->pin_out[i]);
    }
    if (s->have_streams) {
        cudaStreamDestroy(s->s_h2d);
        cudaStreamDestroy(s->s_kernel);
        cudaStreamDestroy(s->s_d2h);
        for (int i = 0; i < PSI_CU_SLOTS; i++)
            for (int j = 0; j < 6; j++)
                cudaEventDestroy(s->ev[i][j]);
    }
    if (s->hist.release)
        s->hist.release(s->hist.state);
    if (prev >= 0 && prev != s->device)
        cudaSetDevice(prev);
    free(s);
}

static void ctx_release(pixsum_ctx *ctx)
{
    state_free((psi_cuda_state *)ctx->cuda_scratch);
    ctx->cuda_scratch = NULL;
    ctx->cuda_scratch_bytes = 0;
    ctx->cuda_release = NULL;
}

static psi_cuda_state *state_of(pixsum_ctx *ctx)
{
    if (!ctx->cuda_scratch) {
        psi_cuda_state *s = calloc(1, sizeof *s);
        if (!s)
            return NULL;
        s->device = ctx->cuda_device;
        ctx->cuda_scratch = s;
        ctx->cuda_release = ctx_release;
    }
    return (psi_cuda_state *)ctx->cuda_scratch;
}

psi_cuda_hist_slot *psi_cuda_hist_slot_of(struct pixsum_ctx *ctx)
{
    psi_cuda_state *s = state_of(ctx);
    if (!s)
        return NULL;
    s->hist.device = s->device;
    return &s->hist;
}

static pthread_once_t count_once = PTHREAD_ONCE_INIT;
static int device_total;

static void count_devices(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess)
        n = 0;
    cudaGetLastError();
    device_total = n;
}

int pixsum_cuda_device_count(void)
{
    pthread_once(&count_once, count_devices);
    return device_total;
}

static bool cuda_available(void)
{
    return pixsum_cuda_device_count() > 0;
}

/* Grows the workspace to `bytes` (zeroing it), on the state's device. */
static int reserve_ws(psi_cuda_state *s, size_t bytes)
{
    if (s->ws_bytes >= bytes && s->ws)
        return PIXSUM_OK;
    PSI_CUDA_TRY(cudaSetDevice(s->device), "cudaSetDevice");
    if (s->ws) {
        PSI_CUDA_TRY(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        cudaFree(s->ws);
        s->ws = NULL;
        s->ws_bytes = 0;
    }
    void *p = NULL;
    PSI_CUDA_TRY(cudaMalloc(&p, bytes), "cudaMalloc (workspace)");
    cudaError_t e = cudaMemset(p, 0, bytes);
    if (e != cudaSuccess) {
        cudaFree(p);
        return psi_cuda_fail(e, "cudaMemset (workspace)");
    }
    s->ws = p;
    s->ws_bytes = bytes;
    return PIXSUM_OK;
}

/* ---- tuning --------------------------------------------------------------------- */

static pixsum_cuda_tuning resolve_tuning(const pixsum_cuda_tuning *t)
{
    pixsum_cuda_tuning r = {256, 32, 8};
    if (t) {
        if (t->section_size)
            r.section_size = t->section_size;
        if (t->tile_dim)
            r.tile_dim = t->tile_dim;
        if (t->block_rows)
            r.block_rows = t->block_rows;
    }
    return r;
}

int pixsum_cuda_set_tuning(pixsum_ctx *ctx, const pixsum_cuda_tuning *tuning)
{
    psi_clear_error();
    if (!ctx)
        return psi_fail(PIXSUM_ERR_NULL, "context is NULL");
    pixsum_cuda_tuning r = resolve_tuning(tuning);
    int ss = r.section_size;
    if (ss < 64 || ss > 1024 || (ss & (ss - 1)))
        return psi_fail(PIXSUM_ERR_INVALID_ARG,
                        "section_size must be a power of two in 64..1024, got %d", ss);
    if (r.tile_dim != 16 && r.tile_dim != 32)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "tile_dim must be 16 or 32, got %d", r.tile_dim);
    if (r.block_rows < 1 || r.block_rows > r.tile_dim || r.tile_dim % r.block_rows)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "block_rows must divide tile_dim, got %d",
                        r.block_rows);
    psi_cuda_state *s = state_of(ctx);
    if (!s)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate the CUDA state");
    s->tuning = r;
    return PIXSUM_OK;
}

int pixsum_cuda_set_force(pixsum_ctx *ctx, const pixsum_cuda_force *force)
{
    psi_clear_error();
    if (!ctx)
        return psi_fail(PIXSUM_ERR_NULL, "context is NULL");
    pixsum_cuda_force f;
    memset(&f, 0, sizeof f);
    if (force)
        f = *force;
    if (f.lookback_kernel < 0 || f.lookback_kernel > PIXSUM_CUDA_FORCE_STAGED)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "lookback_kernel must be 0, 1 or 2, got %d",
                        f.lookback_kernel);
    if (f.lookback_rows != 0 && f.lookback_rows != 4 && f.lookback_rows != 8 &&
        f.lookback_rows != 16)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "lookback_rows must be 0, 4, 8 or 16, got %d",
                        f.lookback_rows);
    if (f.lookback_tile_width != 0 && f.lookback_tile_width != 128 &&
        f.lookback_tile_width != 256)
        return psi_fail(PIXSUM_ERR_INVALID_ARG,
                        "lookback_tile_width must be 0, 128 or 256, got %d",
                        f.lookback_tile_width);
    if (f.hist_scheme < 0 || f.hist_scheme > PIXSUM_CUDA_FORCE_WIDE)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "hist_scheme must be 0, 1 or 2, got %d",
                        f.hist_scheme);
    psi_cuda_state *s = state_of(ctx);
    if (!s)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate the CUDA state");
    f.lookback_chained = f.lookback_chained != 0;
    f.no_pdl = f.no_pdl != 0;
    f.no_async_copy = f.no_async_copy != 0;
    s->force = f;
    return PIXSUM_OK;
}

psi_ch_force psi_cuda_hist_force_of(const struct pixsum_ctx *ctx)
{
    psi_ch_force f;
    memset(&f, 0, sizeof f);
    const psi_cuda_state *s = ctx ? (const psi_cuda_state *)ctx->cuda_scratch : NULL;
    if (s) {
        f.scheme = s->force.hist_scheme;
        f.no_pdl = s->force.no_pdl;
    }
    return f;
}

/* ---- plans ------------------------------------------------------------------------- */

static bool map_in(pixsum_type t, psi_cu_in *r)
{
    switch (t) {
    case PIXSUM_U8: *r = PSI_CU_IN_U8; return true;
    case PIXSUM_U16: *r = PSI_CU_IN_U16; return true;
    case PIXSUM_I16: *r = PSI_CU_IN_I16; return true;
    case PIXSUM_I32: *r = PSI_CU_IN_I32; return true;
    case PIXSUM_U32: *r = PSI_CU_IN_U32; return true;
    case PIXSUM_F32: *r = PSI_CU_IN_F32; return true;
    case PIXSUM_F64: *r = PSI_CU_IN_F64; return true;
    default: return false;
    }
}

static bool map_acc(pixsum_type t, psi_cu_acc *r)
{
    switch (t) {
    case PIXSUM_U32: *r = PSI_CU_U32; return true;
    case PIXSUM_U64:
    case PIXSUM_I64: *r = PSI_CU_U64; return true;
    case PIXSUM_F32: *r = PSI_CU_F32; return true;
    case PIXSUM_F64: *r = PSI_CU_F64; return true;
    default: return false;
    }
}

/* The (input, accumulator) pairs the kernels are built for (sat_common.cuh). */
static bool kernel_pair(psi_cu_in in, psi_cu_acc acc)
{
    switch (in) {
    case PSI_CU_IN_U8:
    case PSI_CU_IN_U16: return acc == PSI_CU_U32 || acc == PSI_CU_U64;
    case PSI_CU_IN_I16:
    case PSI_CU_IN_I32:
    case PSI_CU_IN_U32: return acc == PSI_CU_U64;
    case PSI_CU_IN_F32: return acc == PSI_CU_F32 || acc == PSI_CU_F64;
    case PSI_CU_IN_F64: return acc == PSI_CU_F64;
    }
    return false;
}

static bool aligned_view(const pixsum_view *v)
{
    size_t es = pixsum_type_size(v->type);
    return es && (uintptr_t)v->data % es == 0 && v->row_stride % (ptrdiff_t)es == 0 &&
           (v->depth <= 1 || v->slice_stride % (ptrdiff_t)es == 0);
}

/* Checks that the kernels handle in -> t and fills the plan's geometry. */
static int make_plan(const pixsum_view *in, const pixsum_view *t, int squared, int volume,
                     psi_cu_plan *p)
{
    memset(p, 0, sizeof *p);
    if (!map_in(in->type, &p->tin) || !map_acc(t->type, &p->acc) || !kernel_pair(p->tin, p->acc))
        return psi_fail(PIXSUM_ERR_UNSUPPORTED, "the CUDA methods do not compute %s -> %s tables",
                        pixsum_type_name(in->type), pixsum_type_name(t->type));
    if (!aligned_view(in) || !aligned_view(t))
        return psi_fail(PIXSUM_ERR_UNSUPPORTED,
                        "the CUDA methods need element-aligned data and strides");
    p->in = in->data;
    p->out = t->data;
    p->squared = squared;
    p->accumulate_z = volume && in->depth > 1;
    p->width = (long long)in->width;
    p->height = (long long)in->height;
    p->depth = (long long)in->depth;
    p->channels = (long long)in->channels;
    p->in_row = in->row_stride;
    p->in_slice = in->depth > 1 ? in->slice_stride : 0;
    p->out_row = t->row_stride;
    p->out_slice = t->depth > 1 ? t->slice_stride : 0;
    p->y0 = 0;
    p->y1 = p->height;
    return PIXSUM_OK;
}

/* Shape limits of the grid layouts of each method. */
static int method_limits(psi_cu_method m, const psi_cu_plan *p)
{
    long long planes = p->depth * p->channels;
    if (m != PSI_CU_LOOKBACK && m != PSI_CU_ROWTHREAD && planes > 65535)
        return psi_fail(PIXSUM_ERR_UNSUPPORTED, "more than 65535 planes (slices x channels)");
    if (m == PSI_CU_KOGGE004 && (p->width > 65535 || p->height > 65535))
        return psi_fail(PIXSUM_ERR_UNSUPPORTED, "cuda.kogge004 handles sides up to 65535");
    return PIXSUM_OK;
}

/* The kernel family a context selects: its method's registry entry is
 * psi_methods_cuda[k] (below), which lists the integral methods in
 * psi_cu_method order, so entry k runs family k (auto and every other
 * method: lookback). The registry keeps pointers to these entries. */
static psi_cu_method ctx_method(const pixsum_ctx *ctx)
{
    const psi_method *m = ctx ? psi_method_by_id(ctx->method) : NULL;
    for (int k = 0; m && k < PSI_CU_METHOD_COUNT; k++)
        if (m == &psi_methods_cuda[k])
            return (psi_cu_method)k;
    return PSI_CU_LOOKBACK;
}

/* ---- validation of device-pointer requests -------------------------------- */

static void view_extent(const pixsum_view *v, uintptr_t *lo, uintptr_t *hi)
{
    psi_view_extent(v, lo, hi);
}

/* A validated device request: inner (inclusive) views of the tables. */
typedef struct dev_request {
    pixsum_view in, out, out_sq, full_out, full_sq;
    int have_out, have_sq, padded, batch;
} dev_request;

static int validate(const pixsum_ctx *c, const pixsum_view *in, const pixsum_view *out,
                    const pixsum_view *out_sq, int batch, dev_request *r)
{
    memset(r, 0, sizeof *r);
    if (!in || (!out && !out_sq))
        return psi_fail(PIXSUM_ERR_NULL, "input or output view is NULL");
    int st = pixsum_view_check(in);
    if (st != PIXSUM_OK)
        return psi_fail(st, "input: %s", pixsum_last_error());
    size_t pad = c->padded ? 1 : 0;
    size_t w = in->width + pad, h = in->height + pad;
    size_t d = in->depth > 1 && !batch ? in->depth + pad : in->depth;
    if (out && (st = psi_integral_check_table(in, out, w, h, d, 0, c->wrap, 0, batch,
                                              "output")) != PIXSUM_OK)
        return st;
    if (out_sq &&
        (st = psi_integral_check_table(in, out_sq, w, h, d, 1, c->wrap, 0, batch,
                                       "squared output")) != PIXSUM_OK)
        return st;
    if (out && out_sq) {
        uintptr_t alo, ahi, blo, bhi;
        view_extent(out, &alo, &ahi);
        view_extent(out_sq, &blo, &bhi);
        if (alo < bhi && blo < ahi)
            return psi_fail(PIXSUM_ERR_ALIASING, "the output and the squared output overlap");
    }
    if (pad && ((out && out->row_stride < 0) || (out_sq && out_sq->row_stride < 0)))
        return psi_fail(PIXSUM_ERR_UNSUPPORTED,
                        "padded tables on the GPU need positive row strides");
    r->in = *in;
    r->padded = (int)pad;
    r->batch = batch;
    size_t zpad = in->depth > 1 && !batch ? pad : 0;
    if (out) {
        r->have_out = 1;
        r->full_out = *out;
        pixsum_view_roi3d(out, pad, pad, zpad, in->width, in->height, in->depth, &r->out);
    }
    if (out_sq) {
        r->have_sq = 1;
        r->full_sq = *out_sq;
        pixsum_view_roi3d(out_sq, pad, pad, zpad, in->width, in->height, in->depth, &r->out_sq);
    }
    return PIXSUM_OK;
}

/* Zeroes the border of a padded device table on the stream. */
static int zero_border(const pixsum_view *t, int volume, cudaStream_t s)
{
    size_t px = t->channels * pixsum_type_size(t->type);
    for (size_t z = 0; z < t->depth; z++) {
        char *base = (char *)t->data + (ptrdiff_t)z * t->slice_stride;
        if (volume && z == 0) {
            PSI_CUDA_TRY(cudaMemset2DAsync(base, (size_t)t->row_stride, 0, t->width * px, t->height, s),
                         "cudaMemset2DAsync");
            continue;
        }
        PSI_CUDA_TRY(cudaMemsetAsync(base, 0, t->width * px, s), "cudaMemsetAsync");
        PSI_CUDA_TRY(cudaMemset2DAsync(base, (size_t)t->row_stride, 0, px, t->height, s),
                     "cudaMemset2DAsync");
    }
    return PIXSUM_OK;
}

/* Builds the plans (plain, squared) of a request. */
static int request_plans(const dev_request *r, psi_cu_plan plans[2], int *count)
{
    int st, n = 0;
    int volume = !r->batch;
    if (r->have_out) {
        if ((st = make_plan(&r->in, &r->out, 0, volume, &plans[n])) != PIXSUM_OK)
            return st;
        n++;
    }
    if (r->have_sq) {
        if ((st = make_plan(&r->in, &r->out_sq, 1, volume, &plans[n])) != PIXSUM_OK)
            return st;
        n++;
    }
    *count = n;
    return PIXSUM_OK;
}

/* Gives the plans the settings of a context's CUDA state s (NULL: the
 * defaults) and returns the workspace they need. */
static size_t plans_workspace(psi_cu_method m, psi_cu_plan *plans, int n,
                              const psi_cuda_state *s)
{
    const pixsum_cuda_tuning t = resolve_tuning(s ? &s->tuning : NULL);
    size_t most = sizeof(psi_cu_header);
    for (int i = 0; i < n; i++) {
        plans[i].section_size = t.section_size;
        plans[i].tile_dim = t.tile_dim;
        plans[i].block_rows = t.block_rows;
        memset(&plans[i].force, 0, sizeof plans[i].force);
        if (s) {
            plans[i].force.kernel = s->force.lookback_kernel;
            plans[i].force.rows = s->force.lookback_rows;
            plans[i].force.tile_width = s->force.lookback_tile_width;
            plans[i].force.chained = s->force.lookback_chained;
            plans[i].force.no_pdl = s->force.no_pdl;
            plans[i].force.no_async_copy = s->force.no_async_copy;
        }
        size_t b = psi_cu_workspace_bytes(m, &plans[i]);
        if (b > most)
            most = b;
    }
    return most;
}

/* Enqueues the plans (one after the other, sharing the workspace). */
static int launch_plans(psi_cu_method m, psi_cu_plan *plans, int n, void *ws, size_t ws_bytes,
                        cudaStream_t stream)
{
    for (int i = 0; i < n; i++) {
        int st = method_limits(m, &plans[i]);
        if (st != PIXSUM_OK)
            return st;
        plans[i].ws = ws;
        plans[i].ws_bytes = ws_bytes;
        plans[i].stream = stream;
        int e = psi_cu_launch(m, &plans[i]);
        if (e)
            return psi_cuda_fail((cudaError_t)e, psi_methods_cuda[m].name);
    }
    return PIXSUM_OK;
}

static cudaStream_t ctx_stream(const pixsum_ctx *c, void *stream)
{
    return stream ? (cudaStream_t)stream : (cudaStream_t)c->cuda_stream;
}

/* ---- device-pointer entry points ------------------------------------------------- */

/* Refuses tables or inputs the GPU cannot reach (cuda_memcheck.h), before any
 * kernel could fault on them. */
static int check_request_memory(const dev_request *r, int device)
{
    int st = psi_cuda_check_view(&r->in, "input", device);
    if (st == PIXSUM_OK && r->have_out)
        st = psi_cuda_check_view(&r->full_out, "table", device);
    if (st == PIXSUM_OK && r->have_sq)
        st = psi_cuda_check_view(&r->full_sq, "squared table", device);
    return st;
}

int pixsum_cuda_workspace_size(const pixsum_ctx *ctx, const pixsum_view *in,
                               const pixsum_view *out, const pixsum_view *out_sq, size_t *bytes)
{
    psi_clear_error();
    const pixsum_ctx *c = ctx ? ctx : &psi_default_ctx;
    if (!bytes)
        return psi_fail(PIXSUM_ERR_NULL, "bytes is NULL");
    /* A volume's and a batch's tables can have the same shape, and a batch
     * can be valid where the volume's sum would overflow: the size that
     * serves every reading of the request that validates. */
    const psi_cuda_state *s = (const psi_cuda_state *)c->cuda_scratch;
    int valid = 0, readings = in && in->depth > 1 ? 2 : 1;
    size_t most = 0;
    for (int batch = 0; batch < readings; batch++) {
        dev_request r;
        psi_cu_plan plans[2];
        int n, st = validate(c, in, out, out_sq, batch, &r);
        if (st == PIXSUM_OK && (st = request_plans(&r, plans, &n)) == PIXSUM_OK) {
            size_t need = plans_workspace(ctx_method(c), plans, n, s);
            most = need > most ? need : most;
            valid = 1;
        }
    }
    if (!valid) { /* the volume reading's refusal, with its own detail text */
        dev_request r;
        psi_cu_plan plans[2];
        int n, st = validate(c, in, out, out_sq, 0, &r);
        return st != PIXSUM_OK ? st : request_plans(&r, plans, &n);
    }
    psi_clear_error();
    *bytes = most;
    return PIXSUM_OK;
}

int pixsum_cuda_reserve(pixsum_ctx *ctx, size_t bytes)
{
    psi_clear_error();
    if (!ctx)
        return psi_fail(PIXSUM_ERR_NULL, "context is NULL");
    int st = psi_cuda_need_device(ctx);
    if (st != PIXSUM_OK)
        return st;
    psi_cuda_state *s = state_of(ctx);
    if (!s)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate the CUDA state");
    if (s->device != ctx->cuda_device && s->ws)
        return psi_fail(PIXSUM_ERR_INVALID_ARG,
                        "the context's scratch lives on device %d; use another context",
                        s->device);
    s->device = ctx->cuda_device;
    st = reserve_ws(s, bytes < sizeof(psi_cu_header) ? sizeof(psi_cu_header) : bytes);
    ctx->cuda_scratch_bytes = s->ws_bytes;
    return st;
}

static int run_device(const pixsum_ctx *c, psi_cuda_state *s, const dev_request *r,
                      psi_cu_method m, void *ws, size_t ws_bytes, cudaStream_t stream)
{
    psi_cu_plan plans[2];
    int n, st;
    if ((st = request_plans(r, plans, &n)) != PIXSUM_OK)
        return st;
    size_t need = plans_workspace(m, plans, n, s);
    if (!ws) {
        if ((st = reserve_ws(s, need)) != PIXSUM_OK)
            return st;
        ws = s->ws;
        ws_bytes = s->ws_bytes;
    } else if (ws_bytes < need) {
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "workspace of %zu bytes, %zu needed", ws_bytes,
                        need);
    }
    (void)c;
    if (r->padded) {
        if (r->have_out && (st = zero_border(&r->full_out, !r->batch && r->in.depth > 1,
                                             stream)) != PIXSUM_OK)
            return st;
        if (r->have_sq && (st = zero_border(&r->full_sq, !r->batch && r->in.depth > 1,
                                            stream)) != PIXSUM_OK)
            return st;
    }
    return launch_plans(m, plans, n, ws, ws_bytes, stream);
}

static int device_entry(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                        const pixsum_view *out_sq, int batch, void *stream)
{
    pixsum_ctx local = psi_default_ctx;
    pixsum_ctx *c = ctx ? ctx : &local;
    dev_request r;
    int st = validate(c, in, out, out_sq, batch, &r);
    if (st == PIXSUM_OK)
        st = psi_cuda_need_device(c);
    if (st == PIXSUM_OK)
        st = check_request_memory(&r, c->cuda_device);
    if (st != PIXSUM_OK)
        return st;
    psi_cuda_state *s = state_of(c);
    if (!s)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate the CUDA state");
    int prev = -1;
    cudaGetDevice(&prev);
    if (prev != s->device)
        PSI_CUDA_TRY(cudaSetDevice(s->device), "cudaSetDevice");
    st = run_device(c, s, &r, ctx_method(c), NULL, 0, ctx_stream(c, stream));
    if (prev >= 0 && prev != s->device)
        cudaSetDevice(prev);
    if (!ctx) {
        /* No context to keep scratch in: wait for the work, then free it. */
        cudaStreamSynchronize(ctx_stream(c, stream));
        ctx_release(c);
    }
    return st;
}

int pixsum_cuda_integral(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                         void *stream)
{
    psi_clear_error();
    if (!out)
        return psi_fail(PIXSUM_ERR_NULL, "output view is NULL");
    return device_entry(ctx, in, out, NULL, 0, stream);
}

int pixsum_cuda_integral_sq(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                            const pixsum_view *out_sq, void *stream)
{
    psi_clear_error();
    if (!out_sq)
        return psi_fail(PIXSUM_ERR_NULL, "squared output view is NULL");
    return device_entry(ctx, in, out, out_sq, 0, stream);
}

int pixsum_cuda_integral_batch(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                               void *stream)
{
    psi_clear_error();
    if (!out)
        return psi_fail(PIXSUM_ERR_NULL, "output view is NULL");
    return device_entry(ctx, in, out, NULL, 1, stream);
}

int pixsum_cuda_integral_batch_sq(pixsum_ctx *ctx, const pixsum_view *in,
                                  const pixsum_view *out, const pixsum_view *out_sq,
                                  void *stream)
{
    psi_clear_error();
    if (!out_sq)
        return psi_fail(PIXSUM_ERR_NULL, "squared output view is NULL");
    return device_entry(ctx, in, out, out_sq, 1, stream);
}

int pixsum_cuda_integral_tilted(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                                void *stream)
{
    psi_clear_error();
    pixsum_ctx local = psi_default_ctx;
    pixsum_ctx *c = ctx ? ctx : &local;
    if (!in || !out)
        return psi_fail(PIXSUM_ERR_NULL, "input or output view is NULL");
    int st = pixsum_view_check(in);
    if (st != PIXSUM_OK)
        return psi_fail(st, "input: %s", pixsum_last_error());
    if (in->depth != 1)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "the tilted integral is defined for 2-D images");
    if ((st = psi_integral_check_table(in, out, in->width + 1, in->height + 1, 1, 0, c->wrap, 0,
                                       false, "output")) != PIXSUM_OK)
        return st;
    psi_cu_plan plan;
    if ((st = make_plan(in, out, 0, 0, &plan)) != PIXSUM_OK)
        return st;
    plan.out_slice = 0;
    if ((st = psi_cuda_need_device(c)) != PIXSUM_OK ||
        (st = psi_cuda_check_view(in, "input", c->cuda_device)) != PIXSUM_OK ||
        (st = psi_cuda_check_view(out, "table", c->cuda_device)) != PIXSUM_OK)
        return st;
    psi_cuda_state *s = state_of(c);
    if (!s)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate the CUDA state");
    const int device = s->device;
    int prev = -1;
    cudaGetDevice(&prev);
    cudaError_t e = prev != device ? cudaSetDevice(device) : cudaSuccess;
    const char *what = "cudaSetDevice";
    size_t bytes = psi_cu_tilted_workspace(&plan);
    if (e == cudaSuccess && s->tilted_ws_bytes < bytes) {
        if (s->tilted_ws) {
            what = "cudaDeviceSynchronize";
            e = cudaDeviceSynchronize();
            cudaFree(s->tilted_ws);
            s->tilted_ws = NULL;
            s->tilted_ws_bytes = 0;
        }
        if (e == cudaSuccess) {
            what = "cudaMalloc (tilted scratch)";
            e = cudaMalloc(&s->tilted_ws, bytes);
            if (e != cudaSuccess)
                s->tilted_ws = NULL;
            s->tilted_ws_bytes = e == cudaSuccess ? bytes : 0;
        }
    }
    if (e == cudaSuccess) {
        plan.ws = s->tilted_ws;
        plan.ws_bytes = s->tilted_ws_bytes;
        plan.stream = (void *)ctx_stream(c, stream);
        what = "tilted integral";
        e = (cudaError_t)psi_cu_tilted(&plan);
    }
    st = e == cudaSuccess ? PIXSUM_OK : psi_cuda_fail(e, what);
    if (!ctx) { /* no context to keep the scratch in: wait for the work, then free it */
        cudaStreamSynchronize(ctx_stream(c, stream));
        ctx_release(c); /* frees s */
    }
    if (prev >= 0 && prev != device)
        cudaSetDevice(prev);
    return st;
}

int pixsum_cuda_integral_ws(const pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                            const pixsum_view *out_sq, int batch, void *workspace,
                            size_t workspace_bytes, void *stream)
{
    psi_clear_error();
    const pixsum_ctx *c = ctx ? ctx : &psi_default_ctx;
    if (!workspace)
        return psi_fail(PIXSUM_ERR_NULL, "workspace is NULL");
    dev_request r;
    int st = validate(c, in, out, out_sq, batch != 0, &r);
    if (st == PIXSUM_OK)
        st = psi_cuda_need_device(c);
    if (st == PIXSUM_OK)
        st = check_request_memory(&r, c->cuda_device);
    if (st == PIXSUM_OK)
        st = psi_cuda_check_range(workspace, workspace_bytes, "workspace", c->cuda_device);
    if (st != PIXSUM_OK)
        return st;
    const psi_cuda_state *s = (const psi_cuda_state *)c->cuda_scratch;
    psi_cuda_state tmp;
    memset(&tmp, 0, sizeof tmp);
    if (s) {
        tmp.tuning = s->tuning;
        tmp.force = s->force;
    }
    return run_device(c, &tmp, &r, ctx_method(c), workspace, workspace_bytes,
                      ctx_stream(c, stream));
}

int pixsum_cuda_last_transfer_ms(const pixsum_ctx *ctx, double *h2d_ms, double *kernel_ms,
                                 double *d2h_ms, double *total_ms)
{
    psi_clear_error();
    if (!ctx)
        return psi_fail(PIXSUM_ERR_NULL, "context is NULL");
    const psi_cuda_state *s = (const psi_cuda_state *)ctx->cuda_scratch;
    if (!s || !s->have_last)
        return psi_fail(PIXSUM_ERR_UNAVAILABLE, "no host-memory CUDA call on this context yet");
    if (h2d_ms) *h2d_ms = s->last_ms[0];
    if (kernel_ms) *kernel_ms = s->last_ms[1];
    if (d2h_ms) *d2h_ms = s->last_ms[2];
    if (total_ms) *total_ms = s->last_ms[3];
    return PIXSUM_OK;
}

/* ---- host-memory path (pixsum_integral with a CUDA method) --------------------- */

static int grow_device(void **p, size_t *have, size_t want, const char *what)
{
    if (*have >= want && *p)
        return PIXSUM_OK;
    cudaFree(*p);
    *p = NULL;
    *have = 0;
    PSI_CUDA_TRY(cudaMalloc(p, want), what);
    *have = want;
    return PIXSUM_OK;
}

static int ensure_staging(psi_cuda_state *s)
{
    if (!s->have_streams) {
        PSI_CUDA_TRY(cudaStreamCreateWithFlags(&s->s_h2d, cudaStreamNonBlocking), "cudaStreamCreate");
        PSI_CUDA_TRY(cudaStreamCreateWithFlags(&s->s_kernel, cudaStreamNonBlocking), "cudaStreamCreate");
        PSI_CUDA_TRY(cudaStreamCreateWithFlags(&s->s_d2h, cudaStreamNonBlocking), "cudaStreamCreate");
        for (int i = 0; i < PSI_CU_SLOTS; i++)
            for (int j = 0; j < 6; j++)
                PSI_CUDA_TRY(cudaEventCreate(&s->ev[i][j]), "cudaEventCreate");
        s->have_streams = 1;
    }
    if (!s->pin_in[0]) {
        for (int i = 0; i < PSI_CU_SLOTS; i++) {
            PSI_CUDA_TRY(cudaMallocHost(&s->pin_in[i], PSI_CU_CHUNK_BYTES), "cudaMallocHost");
            PSI_CUDA_TRY(cudaMallocHost(&s->pin_out[i], 2 * PSI_CU_CHUNK_BYTES), "cudaMallocHost");
        }
        s->pin_bytes = PSI_CU_CHUNK_BYTES;
    }
    return PIXSUM_OK;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Rows are numbered across slices: global row g = z * height + y. */
static const char *host_row(const pixsum_view *v, size_t g)
{
    return (const char *)psi_row(v, g % v->height, g / v->height);
}

typedef struct stage_job {
    const pixsum_view *in;
    const pixsum_view *outs[2];
    int nout;
    size_t in_row_bytes, out_row_bytes[2];
    size_t rows_total; /* height x depth */
    int threads;       /* CPU threads for the staging copies */
} stage_job;

/* Threads for the staging copies: the context's, at most 8 (the copies are
 * bound by the host's memory long before that). */
#define PSI_CU_STAGE_THREADS 8
/* Chunks smaller than this are copied by the calling thread alone. */
#define PSI_CU_STAGE_PARALLEL_BYTES ((size_t)2 << 20)

/* Rows [r0, r1) of the chunk that starts at view row g0 (see stage_rows). */
static void stage_range(const pixsum_view *v, char *slot, size_t row_bytes, size_t g0,
                        size_t r0, size_t r1, int to_view)
{
    for (size_t i = r0; i < r1; i++) {
        char *packed = slot + i * row_bytes;
        char *row = (char *)host_row(v, g0 + i);
        if (to_view)
            memcpy(row, packed, row_bytes);
        else
            memcpy(packed, row, row_bytes);
    }
}

/* Copies rows [g0, g1) of the caller's view `v` into the packed staging
 * buffer `slot` (rows row_bytes apart), or out of it into the view when
 * `to_view` is set. Large chunks are split over `threads` threads: one thread
 * copies 5-10 GB/s into pageable memory (faulting a fresh table in as it
 * goes), less than the PCIe link, and these copies were most of a host-memory
 * call (for a large u8 -> u32 table, many times the transfers and the
 * kernels together). */
static void stage_rows(const pixsum_view *v, char *slot, size_t row_bytes, size_t g0,
                       size_t g1, int to_view, int threads)
{
    const size_t n = g1 - g0;
    if (threads > 1 && n * row_bytes < PSI_CU_STAGE_PARALLEL_BYTES)
        threads = 1;
    if ((size_t)threads > n)
        threads = (int)n;
    if (threads <= 1) {
        stage_range(v, slot, row_bytes, g0, 0, n, to_view);
        return;
    }
#ifdef PIXSUM_HAVE_OPENMP
#pragma omp parallel for num_threads(threads) schedule(static, 1)
#endif
    for (int t = 0; t < threads; t++)
        stage_range(v, slot, row_bytes, g0, n * (size_t)t / (size_t)threads,
                    n * (size_t)(t + 1) / (size_t)threads, to_view);
}

static double event_ms(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return ms;
}

/* Copies table rows [g0, g1) of the finished chunk in slot k back to the
 * caller's views and adds the slot's event times. */
static int finish_chunk(psi_cuda_state *s, const stage_job *j, int slot, size_t g0, size_t g1,
                        int strip_mode)
{
    PSI_CUDA_TRY(cudaEventSynchronize(s->ev[slot][5]), "cudaEventSynchronize");
    char *src = s->pin_out[slot];
    for (int t = 0; t < j->nout; t++) {
        stage_rows(j->outs[t], src, j->out_row_bytes[t], g0, g1, 1, j->threads);
        src += (g1 - g0) * j->out_row_bytes[t];
    }
    if (strip_mode) { /* else the caller counted the uploads and the kernel */
        s->last_ms[0] += event_ms(s->ev[slot][0], s->ev[slot][1]);
        s->last_ms[1] += event_ms(s->ev[slot][2], s->ev[slot][3]);
    }
    s->last_ms[2] += event_ms(s->ev[slot][4], s->ev[slot][5]);
    return PIXSUM_OK;
}

static int run_host(const psi_job *job, psi_cu_method m)
{
    pixsum_ctx *c = job->ctx;
    int st = psi_cuda_need_device(c);
    if (st != PIXSUM_OK)
        return st;
    psi_cuda_state *s = state_of(c);
    if (!s)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate the CUDA state");
    PSI_CUDA_TRY(cudaSetDevice(s->device), "cudaSetDevice");
    double t0 = now_ms();
    if ((st = ensure_staging(s)) != PIXSUM_OK)
        return st;

    const pixsum_view *in = &job->in;
    stage_job j;
    memset(&j, 0, sizeof j);
    j.in = in;
    if (job->out.data)
        j.outs[j.nout++] = &job->out;
    if (job->out_sq.data)
        j.outs[j.nout++] = &job->out_sq;
    j.in_row_bytes = in->width * in->channels * pixsum_type_size(in->type);
    j.rows_total = in->height * in->depth;
    j.threads = psi_ctx_threads(c);
    if (j.threads > PSI_CU_STAGE_THREADS)
        j.threads = PSI_CU_STAGE_THREADS;

    /* Packed device copies of the input and the tables. */
    if ((st = grow_device(&s->d_in, &s->d_in_bytes, j.in_row_bytes * j.rows_total,
                          "cudaMalloc (input)")) != PIXSUM_OK)
        return st;
    pixsum_view din = *in, dout[2];
    din.data = s->d_in;
    din.row_stride = (ptrdiff_t)j.in_row_bytes;
    din.slice_stride = (ptrdiff_t)(j.in_row_bytes * in->height);
    for (int t = 0; t < j.nout; t++) {
        j.out_row_bytes[t] = in->width * in->channels * pixsum_type_size(j.outs[t]->type);
        if ((st = grow_device(&s->d_out[t], &s->d_out_bytes[t],
                              j.out_row_bytes[t] * j.rows_total, "cudaMalloc (table)")) !=
            PIXSUM_OK)
            return st;
        dout[t] = *j.outs[t];
        dout[t].data = s->d_out[t];
        dout[t].row_stride = (ptrdiff_t)j.out_row_bytes[t];
        dout[t].slice_stride = (ptrdiff_t)(j.out_row_bytes[t] * in->height);
    }
    psi_cu_plan plans[2];
    for (int t = 0; t < j.nout; t++) {
        int sq = j.outs[t] == &job->out_sq;
        if ((st = make_plan(&din, &dout[t], sq, 1, &plans[t])) != PIXSUM_OK)
            return st;
    }
    if ((st = reserve_ws(s, plans_workspace(m, plans, j.nout, s))) != PIXSUM_OK)
        return st;

    /* Chunk = rows that fit a staging slot, each way. */
    size_t out_bytes_per_row = 0;
    for (int t = 0; t < j.nout; t++)
        out_bytes_per_row += j.out_row_bytes[t];
    size_t rows_in = s->pin_bytes / j.in_row_bytes, rows_out = 2 * s->pin_bytes / out_bytes_per_row;
    size_t chunk = rows_in < rows_out ? rows_in : rows_out;
    if (chunk == 0)
        return psi_fail(PIXSUM_ERR_TOO_LARGE, "a row is larger than the %zu-byte staging buffer",
                        s->pin_bytes);
    /* Strip mode: cuda.lookback on a 2-D image computes each chunk of rows as
     * it arrives (carrying the row above); otherwise one launch after the
     * last chunk arrived. */
    const int strips = m == PSI_CU_LOOKBACK && in->depth == 1;
    memset(s->last_ms, 0, sizeof s->last_ms);
    size_t nchunks = (j.rows_total + chunk - 1) / chunk;

    for (size_t k = 0; k <= nchunks; k++) {
        if (k < nchunks) {
            int slot = (int)(k % PSI_CU_SLOTS);
            size_t g0 = k * chunk, g1 = g0 + chunk < j.rows_total ? g0 + chunk : j.rows_total;
            /* The slot's input buffer is free once its previous copy ended. */
            PSI_CUDA_TRY(cudaEventSynchronize(s->ev[slot][1]), "cudaEventSynchronize");
            if (!strips && k >= PSI_CU_SLOTS)
                s->last_ms[0] += event_ms(s->ev[slot][0], s->ev[slot][1]);
            stage_rows(in, s->pin_in[slot], j.in_row_bytes, g0, g1, 0, j.threads);
            PSI_CUDA_TRY(cudaEventRecord(s->ev[slot][0], s->s_h2d), "cudaEventRecord");
            PSI_CUDA_TRY(cudaMemcpyAsync((char *)s->d_in + g0 * j.in_row_bytes, s->pin_in[slot],
                                         (g1 - g0) * j.in_row_bytes, cudaMemcpyHostToDevice,
                                         s->s_h2d),
                         "cudaMemcpyAsync (to device)");
            PSI_CUDA_TRY(cudaEventRecord(s->ev[slot][1], s->s_h2d), "cudaEventRecord");
            if (strips || k + 1 == nchunks) {
                PSI_CUDA_TRY(cudaStreamWaitEvent(s->s_kernel, s->ev[slot][1], 0), "cudaStreamWaitEvent");
                PSI_CUDA_TRY(cudaEventRecord(s->ev[slot][2], s->s_kernel), "cudaEventRecord");
                for (int t = 0; t < j.nout; t++) {
                    if (strips) {
                        plans[t].y0 = (long long)g0;
                        plans[t].y1 = (long long)g1;
                    }
                    if ((st = launch_plans(m, &plans[t], 1, s->ws, s->ws_bytes, s->s_kernel)) !=
                        PIXSUM_OK)
                        return st;
                }
                PSI_CUDA_TRY(cudaEventRecord(s->ev[slot][3], s->s_kernel), "cudaEventRecord");
            }
            if (strips) {
                /* Copy this strip back once computed. */
                PSI_CUDA_TRY(cudaStreamWaitEvent(s->s_d2h, s->ev[slot][3], 0), "cudaStreamWaitEvent");
                PSI_CUDA_TRY(cudaEventRecord(s->ev[slot][4], s->s_d2h), "cudaEventRecord");
                char *pdst = s->pin_out[slot];
                for (int t = 0; t < j.nout; t++) {
                    size_t b = (g1 - g0) * j.out_row_bytes[t];
                    PSI_CUDA_TRY(cudaMemcpyAsync(pdst, (char *)s->d_out[t] + g0 * j.out_row_bytes[t],
                                                 b, cudaMemcpyDeviceToHost, s->s_d2h),
                                 "cudaMemcpyAsync (to host)");
                    pdst += b;
                }
                PSI_CUDA_TRY(cudaEventRecord(s->ev[slot][5], s->s_d2h), "cudaEventRecord");
            }
        }
        /* Finish the previous strip while this one is in flight. */
        if (strips && k > 0) {
            size_t p = k - 1;
            size_t g0 = p * chunk, g1 = g0 + chunk < j.rows_total ? g0 + chunk : j.rows_total;
            if ((st = finish_chunk(s, &j, (int)(p % PSI_CU_SLOTS), g0, g1, 1)) != PIXSUM_OK)
                return st;
        }
    }
    if (!strips) {
        /* Whole-table copies back, chunk by chunk, double-buffered. */
        const int last = (int)((nchunks - 1) % PSI_CU_SLOTS);
        PSI_CUDA_TRY(cudaStreamWaitEvent(s->s_d2h, s->ev[last][3], 0), "cudaStreamWaitEvent");
        PSI_CUDA_TRY(cudaEventSynchronize(s->ev[last][3]), "cudaEventSynchronize");
        s->last_ms[1] = event_ms(s->ev[last][2], s->ev[last][3]);
        for (size_t k = nchunks > PSI_CU_SLOTS ? nchunks - PSI_CU_SLOTS : 0; k < nchunks; k++)
            s->last_ms[0] += event_ms(s->ev[k % PSI_CU_SLOTS][0], s->ev[k % PSI_CU_SLOTS][1]);
        for (size_t k = 0; k <= nchunks; k++) {
            if (k < nchunks) {
                int slot = (int)(k % PSI_CU_SLOTS);
                size_t g0 = k * chunk, g1 = g0 + chunk < j.rows_total ? g0 + chunk : j.rows_total;
                PSI_CUDA_TRY(cudaEventRecord(s->ev[slot][4], s->s_d2h), "cudaEventRecord");
                char *pdst = s->pin_out[slot];
                for (int t = 0; t < j.nout; t++) {
                    size_t b = (g1 - g0) * j.out_row_bytes[t];
                    PSI_CUDA_TRY(cudaMemcpyAsync(pdst, (char *)s->d_out[t] + g0 * j.out_row_bytes[t],
                                                 b, cudaMemcpyDeviceToHost, s->s_d2h),
                                 "cudaMemcpyAsync (to host)");
                    pdst += b;
                }
                PSI_CUDA_TRY(cudaEventRecord(s->ev[slot][5], s->s_d2h), "cudaEventRecord");
            }
            if (k > 0) {
                size_t p = k - 1;
                size_t g0 = p * chunk, g1 = g0 + chunk < j.rows_total ? g0 + chunk : j.rows_total;
                if ((st = finish_chunk(s, &j, (int)(p % PSI_CU_SLOTS), g0, g1, 0)) != PIXSUM_OK)
                    return st;
            }
        }
    }
    PSI_CUDA_TRY(cudaStreamSynchronize(s->s_d2h), "cudaStreamSynchronize");
    PSI_CUDA_TRY(cudaGetLastError(), "CUDA");
    s->last_ms[3] = now_ms() - t0;
    s->have_last = 1;
    return PIXSUM_OK;
}

/* ---- the registered methods ----------------------------------------------------------- */

/* cudaMemoryType of a pointer (host for plain host memory). */
static int memory_kind(const void *p, int *device)
{
    struct cudaPointerAttributes a;
    memset(&a, 0, sizeof a);
    cudaError_t e = cudaPointerGetAttributes(&a, p);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return cudaMemoryTypeUnregistered;
    }
    *device = a.device;
    return (int)a.type;
}

static bool is_device_kind(int k)
{
    return k == cudaMemoryTypeDevice || k == cudaMemoryTypeManaged;
}

static int run_method(const psi_job *job, psi_cu_method m)
{
    int dev = 0;
    int kin = memory_kind(job->in.data, &dev);
    int kout = memory_kind(job->out.data ? job->out.data : job->out_sq.data, &dev);
    if (job->out.data && job->out_sq.data &&
        is_device_kind(memory_kind(job->out_sq.data, &dev)) != is_device_kind(kout))
        return psi_fail(PIXSUM_ERR_UNSUPPORTED, "the two tables live in different memories");
    if (is_device_kind(kin) != is_device_kind(kout))
        return psi_fail(PIXSUM_ERR_UNSUPPORTED,
                        "input and output must both be in host or both in device memory");
    if (!is_device_kind(kin))
        return run_host(job, m);
    /* Device (or managed) memory through the synchronous API. */
    if (job->ctx->padded)
        return psi_fail(PIXSUM_ERR_UNSUPPORTED,
                        "padded tables in device memory: use pixsum_cuda_integral()");
    int st = psi_cuda_need_device(job->ctx);
    if (st != PIXSUM_OK)
        return st;
    psi_cuda_state *s = state_of(job->ctx);
    if (!s)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate the CUDA state");
    dev_request r;
    memset(&r, 0, sizeof r);
    r.in = job->in;
    if (job->out.data) {
        r.have_out = 1;
        r.out = r.full_out = job->out;
    }
    if (job->out_sq.data) {
        r.have_sq = 1;
        r.out_sq = r.full_sq = job->out_sq;
    }
    PSI_CUDA_TRY(cudaSetDevice(s->device), "cudaSetDevice");
    cudaStream_t stream = (cudaStream_t)job->ctx->cuda_stream;
    if ((st = run_device(job->ctx, s, &r, m, NULL, 0, stream)) != PIXSUM_OK)
        return st;
    PSI_CUDA_TRY(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    return PIXSUM_OK;
}

/* Types, alignment and shape limits the kernels accept. */
static bool supports_common(const psi_job *job, psi_cu_method m)
{
    const pixsum_view *tables[2] = {&job->out, &job->out_sq};
    for (int i = 0; i < 2; i++) {
        if (!tables[i]->data)
            continue;
        psi_cu_in a;
        psi_cu_acc b;
        if (!map_in(job->in.type, &a) || !map_acc(tables[i]->type, &b) || !kernel_pair(a, b))
            return false;
        if (!aligned_view(&job->in) || !aligned_view(tables[i]))
            return false;
    }
    size_t planes = job->in.depth * job->in.channels;
    if (m != PSI_CU_LOOKBACK && m != PSI_CU_ROWTHREAD && planes > 65535)
        return false;
    if (m == PSI_CU_KOGGE004 && (job->in.width > 65535 || job->in.height > 65535))
        return false;
    return true;
}

#define PSI_CU_DEFINE(FN, M)                                    \
    static int run_##FN(const psi_job *job)                     \
    {                                                           \
        return run_method(job, M);                              \
    }                                                           \
    static bool supports_##FN(const psi_job *job)               \
    {                                                           \
        return supports_common(job, M);                         \
    }

PSI_CU_DEFINE(lookback, PSI_CU_LOOKBACK)
PSI_CU_DEFINE(rowthread, PSI_CU_ROWTHREAD)
PSI_CU_DEFINE(blockscan, PSI_CU_BLOCKSCAN)
PSI_CU_DEFINE(naive004, PSI_CU_NAIVE004)
PSI_CU_DEFINE(kogge004, PSI_CU_KOGGE004)
PSI_CU_DEFINE(single004, PSI_CU_SINGLE004)

#define PSI_CU_OPS (PIXSUM_OP_INTEGRAL | PIXSUM_OP_INTEGRAL_SQ | PIXSUM_OP_INTEGRAL_3D)

/* Entries 0 .. PSI_CU_METHOD_COUNT - 1 in psi_cu_method order (ctx_method()
 * and run_<name> map an entry to its kernel family by that position). */
const psi_method psi_methods_cuda[] = {
    {"cuda.lookback", PIXSUM_BACKEND_CUDA, PSI_CU_OPS,
     "GPU single pass: tile-local SAT + decoupled look-back on both axes, 1 read + 1 write",
     0, cuda_available, supports_lookback, run_lookback},
    {"cuda.rowthread", PIXSUM_BACKEND_CUDA, PSI_CU_OPS,
     "GPU one thread per row, then per column (paper 000; paper 003 GPUv1)", 0,
     cuda_available, supports_rowthread, run_rowthread},
    {"cuda.blockscan", PIXSUM_BACKEND_CUDA, PSI_CU_OPS,
     "GPU block-wide prefix sum per row + transpose, twice (paper 003 GPUv2)", 0,
     cuda_available, supports_blockscan, run_blockscan},
    {"cuda.naive004", PIXSUM_BACKEND_CUDA, PSI_CU_OPS,
     "GPU naive row kernel + tiled transpose (TILE_DIM, BLOCK_ROWS, diagonal order), paper 004",
     0, cuda_available, supports_naive004, run_naive004},
    {"cuda.kogge004", PIXSUM_BACKEND_CUDA, PSI_CU_OPS,
     "GPU Kogge-Stone section scans + section sums + transpose (paper 004, hierarchical)", 0,
     cuda_available, supports_kogge004, run_kogge004},
    {"cuda.single004", PIXSUM_BACKEND_CUDA, PSI_CU_OPS,
     "GPU single-pass row scan, dynamic block ids, flag sync + transpose (paper 004)", 0,
     cuda_available, supports_single004, run_single004},
    {"cuda.hist", PIXSUM_BACKEND_CUDA, PIXSUM_OP_HISTOGRAM,
     "GPU histogram: lane-replicated u32 tables (u8, few bins) or 16-bit tables with spill "
     "(u16/i16, many bins); host data copied in and counts out",
     0, psi_cuda_hist_available, psi_cuda_hist_supports, psi_cuda_hist_run},
    {NULL, 0, 0, NULL, 0, NULL, NULL, NULL},
};

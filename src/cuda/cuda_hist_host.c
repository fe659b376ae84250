/*
 * cuda_hist_host.c - the host side of the CUDA histograms: the device-pointer
 * entry points of pixsum_cuda.h (pixsum_cuda_histogram, _hist_reserve,
 * _hist_cumulative, _hist_relative, _histogram_joint, _equalize), their validation
 * (shared with the CPU through psi_hist_prepare(), so bins and ranges resolve
 * identically), the per-context histogram scratch, and the registered method
 * "cuda.hist" that serves pixsum_histogram() on host memory (image and mask
 * copied in, counted, counts copied out). pixsum_cuda_histogram_batch()
 * counts a u8 batch in one launch (hist_batch.cu) and other batches image
 * by image with the single-image kernels, all with the batch's one
 * resolved range.
 *
 * Every CUDA error becomes PIXSUM_ERR_CUDA with CUDA's text as the detail.
 * The counting paths a context forces for tests (pixsum_cuda_set_force())
 * go into each count plan.
 */
#include "../hist/hist_classify.h"
#include "pixsum_cuda.h"

#include "cuda_hist.h"
#include "cuda_hist_batch.h"
#include "cuda_memcheck.h"
#include "cuda_status.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

/* What the context keeps for histograms (in its CUDA state's slot). */
typedef struct hist_state {
    int device;
    int sm_count;
    void *ws; /* scratch of psi_ch_workspace_bytes() */
    size_t ws_bytes;
    void *d_in, *d_mask, *d_out; /* host-memory path: packed copies, counts */
    size_t d_in_bytes, d_mask_bytes, d_out_bytes;
    void *d_eq; /* equalisation: counts and cumulative counts (u64), tables (u16) */
    size_t d_eq_bytes;
    void *d_batch; /* u8 batches: raw sums and tickets, zero between launches */
    size_t d_batch_bytes;
} hist_state;

static void hist_state_release(void *p)
{
    hist_state *h = p;
    if (!h)
        return;
    cudaFree(h->ws);
    cudaFree(h->d_in);
    cudaFree(h->d_mask);
    cudaFree(h->d_out);
    cudaFree(h->d_eq);
    cudaFree(h->d_batch);
    free(h);
}

/* The context's histogram state on its device (created on demand). */
static int state_for(pixsum_ctx *c, hist_state **out)
{
    psi_cuda_hist_slot *slot = psi_cuda_hist_slot_of(c);
    if (!slot)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate the CUDA state");
    if (!slot->state) {
        hist_state *h = calloc(1, sizeof *h);
        if (!h)
            return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate the CUDA histogram state");
        h->device = slot->device;
        slot->state = h;
        slot->release = hist_state_release;
    }
    hist_state *h = slot->state;
    PSI_CUDA_TRY(cudaSetDevice(h->device), "cudaSetDevice");
    if (!h->sm_count) {
        int n = 0;
        PSI_CUDA_TRY(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, h->device),
                     "cudaDeviceGetAttribute");
        h->sm_count = n > 0 ? n : 1;
    }
    *out = h;
    return PIXSUM_OK;
}

/* Grows a device buffer (waits for the device before freeing one in use);
 * `zero`: zero-filled before use (the counting workspace). */
static int grow_buf(void **p, size_t *have, size_t want, const char *what, int zero)
{
    if (*p && *have >= want)
        return PIXSUM_OK;
    if (*p) {
        PSI_CUDA_TRY(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        cudaFree(*p);
        *p = NULL;
        *have = 0;
    }
    PSI_CUDA_TRY(cudaMalloc(p, want ? want : 1), what);
    *have = want;
    if (zero) {
        PSI_CUDA_TRY(cudaMemset(*p, 0, want ? want : 1), "cudaMemset (scratch)");
        PSI_CUDA_TRY(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    return PIXSUM_OK;
}

static int grow(void **p, size_t *have, size_t want, const char *what)
{
    return grow_buf(p, have, want, what, 0);
}

static int grow_ws(hist_state *h, size_t want)
{
    return grow_buf(&h->ws, &h->ws_bytes, want, "cudaMalloc (scratch)", 1);
}

static bool ch_type(pixsum_type t, psi_ch_type *r)
{
    switch (t) {
    case PIXSUM_U8: *r = PSI_CH_U8; return true;
    case PIXSUM_U16: *r = PSI_CH_U16; return true;
    case PIXSUM_I16: *r = PSI_CH_I16; return true;
    case PIXSUM_I32: *r = PSI_CH_I32; return true;
    case PIXSUM_F32: *r = PSI_CH_F32; return true;
    case PIXSUM_F64: *r = PSI_CH_F64; return true;
    default: return false;
    }
}

static bool aligned_view(const pixsum_view *v)
{
    size_t es = pixsum_type_size(v->type);
    return es && (uintptr_t)v->data % es == 0 && v->row_stride % (ptrdiff_t)es == 0 &&
           (v->depth <= 1 || v->slice_stride % (ptrdiff_t)es == 0);
}

static void to_image(const pixsum_view *in, const pixsum_view *mask, psi_ch_image *im)
{
    memset(im, 0, sizeof *im);
    im->data = in->data;
    ch_type(in->type, &im->type);
    im->width = (long long)in->width;
    im->height = (long long)in->height;
    im->depth = (long long)in->depth;
    im->channels = (long long)in->channels;
    im->row_stride = in->row_stride;
    im->slice_stride = in->slice_stride;
    if (mask && mask->data) {
        im->mask = mask->data;
        im->mask_row = mask->row_stride;
        im->mask_slice = mask->slice_stride;
    }
}

static void to_bins(const psi_hist_params *p, psi_ch_bins *b)
{
    *b = p->b;
}

/* Resolves and checks a device request (reads no device memory). */
static int resolve_device(const pixsum_view *in, const pixsum_hist_spec *spec,
                          size_t default_bins_small, psi_hist_params *p)
{
    if (!in)
        return psi_fail(PIXSUM_ERR_NULL, "image is NULL");
    psi_ch_type t;
    if (ch_type(in->type, &t) && !psi_hist_small_type(in->type) &&
        !(spec && spec->lo != spec->hi))
        return psi_fail(PIXSUM_ERR_INVALID_ARG,
                        "a %s device image needs a given range (spec lo < hi): its default "
                        "range would read the data on the host",
                        pixsum_type_name(in->type));
    int st = psi_hist_prepare(in, spec, default_bins_small, p);
    if (st != PIXSUM_OK)
        return st;
    if (p->b.bins > PIXSUM_CUDA_HIST_MAX_BINS)
        return psi_fail(PIXSUM_ERR_UNSUPPORTED, "%zu bins: the CUDA histograms take at most %zu",
                        (size_t)p->b.bins, PIXSUM_CUDA_HIST_MAX_BINS);
    if (!aligned_view(in) || (p->mask.data && !aligned_view(&p->mask)))
        return psi_fail(PIXSUM_ERR_UNSUPPORTED,
                        "the CUDA histograms need samples aligned to their size");
    return PIXSUM_OK;
}

static int check_counts(const pixsum_view *in, const uint64_t *counts, size_t counts_len,
                        size_t need, const char *what)
{
    if (counts_len < need)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "counts holds %zu values, %zu needed (%s)",
                        counts_len, need, what);
    uintptr_t ilo, ihi, clo = (uintptr_t)counts, chi = (uintptr_t)(counts + need);
    psi_view_extent(in, &ilo, &ihi);
    if (clo < ihi && ilo < chi)
        return psi_fail(PIXSUM_ERR_ALIASING, "counts overlaps the image");
    return PIXSUM_OK;
}

static void make_plan(const pixsum_ctx *c, const hist_state *h, const pixsum_view *in,
                      const psi_hist_params *p, uint64_t *counts, void *stream,
                      psi_ch_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    to_image(in, &p->mask, &plan->img);
    to_bins(p, &plan->b);
    plan->counts = (unsigned long long *)counts;
    plan->sm_count = h->sm_count;
    plan->stream = stream;
    plan->force = psi_cuda_hist_force_of(c);
}

static int launch_count(hist_state *h, psi_ch_plan *plan, pixsum_cuda_hist_totals *totals)
{
    int st = grow_ws(h, psi_ch_workspace_bytes(plan));
    if (st != PIXSUM_OK)
        return st;
    plan->ws = h->ws;
    plan->ws_bytes = h->ws_bytes;
    plan->totals = totals ? (unsigned long long *)totals : (unsigned long long *)h->ws;
    int e = psi_ch_launch(plan);
    if (e == cudaErrorInvalidConfiguration) {
        cudaGetLastError();
        return psi_fail(PIXSUM_ERR_UNSUPPORTED,
                        "cuda.hist: this device cannot run the counting kernels for this image "
                        "type with %u bins (16-bit images and many bins need 128 KiB of "
                        "shared memory per block)",
                        (unsigned)plan->b.bins);
    }
    if (e)
        return psi_cuda_fail((cudaError_t)e, "cuda.hist");
    return PIXSUM_OK;
}

static void *ctx_stream(const pixsum_ctx *c, void *stream)
{
    return stream ? stream : (void *)c->cuda_stream;
}

/* ---- device-pointer entry points ------------------------------------------------- */

/* Runs fn with the caller's context, or with a local one whose scratch is
 * released after the work (ctx NULL). */
typedef struct hist_call {
    const pixsum_view *in, *b, *out;
    const pixsum_hist_spec *spec, *spec_b;
    uint64_t *counts;
    size_t counts_len;
    void *totals;
    void *stream;
    int reserve_only;
    unsigned flags; /* batches: PIXSUM_HIST_RANGE_PER_IMAGE */
} hist_call;

static int run_count(pixsum_ctx *c, const hist_call *k)
{
    psi_hist_params p;
    int st = resolve_device(k->in, k->spec, 65536, &p);
    if (st != PIXSUM_OK)
        return st;
    if (!k->reserve_only) {
        if (!k->counts)
            return psi_fail(PIXSUM_ERR_NULL, "counts is NULL");
        if ((st = check_counts(k->in, k->counts, k->counts_len, p.b.bins * k->in->channels,
                               "channels x bins")) != PIXSUM_OK)
            return st;
    }
    if ((st = psi_cuda_need_device(c)) != PIXSUM_OK)
        return st;
    hist_state *h;
    if ((st = state_for(c, &h)) != PIXSUM_OK)
        return st;
    psi_ch_plan plan;
    make_plan(c, h, k->in, &p, k->counts, ctx_stream(c, k->stream), &plan);
    if (k->reserve_only)
        return grow_ws(h, psi_ch_workspace_bytes(&plan));
    return launch_count(h, &plan, k->totals);
}

static pixsum_view slice_of(const pixsum_view *v, size_t z)
{
    pixsum_view s;
    pixsum_view_roi3d(v, 0, 0, z, v->width, v->height, 1, &s);
    return s;
}

/* A batch: validated as a whole (the CPU batch's rules, so bins and range
 * resolve as there), then u8 images of fewer than 2^31 bytes in one launch
 * of hist_batch.cu, other batches image by image through the single-image
 * plans with the batch's bins and range, on the same stream. */
static int run_batch(pixsum_ctx *c, const hist_call *k)
{
    const pixsum_view *in = k->in;
    if (!in || !k->counts)
        return psi_fail(PIXSUM_ERR_NULL, "image or counts is NULL");
    if (k->flags & ~PIXSUM_HIST_RANGE_PER_IMAGE)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "unknown flags 0x%x", k->flags);
    psi_ch_type t;
    if (ch_type(in->type, &t) && !psi_hist_small_type(in->type) &&
        !(k->spec && k->spec->lo != k->spec->hi))
        return psi_fail(PIXSUM_ERR_INVALID_ARG,
                        "a batch of %s device images needs a given range (spec lo < hi): its "
                        "default range, over the batch or per image, would read the data on "
                        "the host", pixsum_type_name(in->type));
    psi_hist_params p;
    int st = psi_hist_prepare_batch(in, k->spec, &p);
    if (st != PIXSUM_OK)
        return st;
    if (p.b.bins > PIXSUM_CUDA_HIST_MAX_BINS)
        return psi_fail(PIXSUM_ERR_UNSUPPORTED, "%zu bins: the CUDA histograms take at most %zu",
                        (size_t)p.b.bins, PIXSUM_CUDA_HIST_MAX_BINS);
    if (!aligned_view(in) || (p.mask.data && !aligned_view(&p.mask)))
        return psi_fail(PIXSUM_ERR_UNSUPPORTED,
                        "the CUDA histograms need samples aligned to their size");
    const size_t n = in->depth, per = p.b.bins * in->channels;
    if (per > SIZE_MAX / 8 / n)
        return psi_fail(PIXSUM_ERR_TOO_LARGE, "%zu images x %zu counts overflow", n, per);
    if ((st = check_counts(in, k->counts, k->counts_len, n * per,
                           "images x channels x bins")) != PIXSUM_OK)
        return st;
    if ((st = psi_cuda_need_device(c)) != PIXSUM_OK)
        return st;
    hist_state *h;
    if ((st = state_for(c, &h)) != PIXSUM_OK)
        return st;
    void *stream = ctx_stream(c, k->stream);
    pixsum_cuda_hist_totals *totals = k->totals;
    const size_t image_bytes = in->width * in->height * in->channels;
    if (in->type == PIXSUM_U8 && image_bytes < ((size_t)1 << 31)) {
        psi_hb_batch b;
        memset(&b, 0, sizeof b);
        b.data = in->data;
        b.row = in->row_stride;
        b.slice = in->slice_stride;
        b.width = (long long)in->width;
        b.height = (long long)in->height;
        b.channels = (long long)in->channels;
        b.images = (long long)n;
        if (p.mask.data) {
            b.mask = p.mask.data;
            b.mask_row = p.mask.row_stride;
            b.mask_slice = p.mask.depth == 1 ? 0 : p.mask.slice_stride;
        }
        b.bins = (unsigned)p.b.bins;
        for (int v = 0; v < 256; v++)
            b.cls[v] = psi_bins_class_int(&p.b, v);
        b.counts = (unsigned long long *)k->counts;
        b.totals = (unsigned long long *)totals;
        int e = 0;
        size_t scratch = psi_hb_scratch_bytes(&b, h->sm_count, &e);
        if (e)
            return psi_cuda_fail((cudaError_t)e, "cuda.hist (batch)");
        if (scratch) {
            if ((st = grow_buf(&h->d_batch, &h->d_batch_bytes, scratch,
                               "cudaMalloc (batch scratch)", 1)) != PIXSUM_OK)
                return st;
            b.scratch = h->d_batch;
        }
        e = psi_hb_launch(&b, h->sm_count, stream);
        return e ? psi_cuda_fail((cudaError_t)e, "cuda.hist (batch)") : PIXSUM_OK;
    }
    for (size_t z = 0; z < n; z++) {
        pixsum_view image = slice_of(in, z);
        psi_hist_params one = p;
        if (p.mask.data && p.mask.depth > 1)
            one.mask = slice_of(&p.mask, z);
        psi_ch_plan plan;
        make_plan(c, h, &image, &one, k->counts + z * per, stream, &plan);
        if ((st = launch_count(h, &plan, totals ? totals + z : NULL)) != PIXSUM_OK)
            return psi_fail(st, "image %zu: %s", z, pixsum_last_error());
    }
    return PIXSUM_OK;
}

static int run_joint(pixsum_ctx *c, const hist_call *k)
{
    if (!k->in || !k->b || !k->counts)
        return psi_fail(PIXSUM_ERR_NULL, "image a, image b or counts is NULL");
    psi_hist_params pa, pb;
    int st = resolve_device(k->in, k->spec, 256, &pa);
    if (st != PIXSUM_OK)
        return psi_fail(st, "image a: %s", pixsum_last_error());
    if ((st = resolve_device(k->b, k->spec_b, 256, &pb)) != PIXSUM_OK)
        return psi_fail(st, "image b: %s", pixsum_last_error());
    const pixsum_view *a = k->in, *b = k->b;
    if (a->channels != 1 || b->channels != 1)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE,
                        "joint histograms take 1-channel images, got %zu and %zu channels",
                        a->channels, b->channels);
    if (a->width != b->width || a->height != b->height || a->depth != b->depth)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "image a is %zux%zux%zu, image b %zux%zux%zu",
                        a->width, a->height, a->depth, b->width, b->height, b->depth);
    if (pa.b.bins > PIXSUM_HIST_JOINT_MAX_CELLS / pb.b.bins)
        return psi_fail(PIXSUM_ERR_TOO_LARGE,
                        "a %zu x %zu joint histogram has more than 2^26 cells",
                        (size_t)pa.b.bins, (size_t)pb.b.bins);
    size_t cells = (size_t)pa.b.bins * pb.b.bins;
    if ((st = check_counts(a, k->counts, k->counts_len, cells, "bins_a x bins_b")) != PIXSUM_OK)
        return st;
    if ((st = check_counts(b, k->counts, k->counts_len, cells, "bins_a x bins_b")) != PIXSUM_OK)
        return psi_fail(st, "image b: %s", pixsum_last_error());
    if ((st = psi_cuda_need_device(c)) != PIXSUM_OK)
        return st;
    hist_state *h;
    if ((st = state_for(c, &h)) != PIXSUM_OK)
        return st;
    if ((st = grow_ws(h, 256)) != PIXSUM_OK)
        return st;
    psi_ch_image ia, ib;
    psi_ch_bins ba, bb;
    to_image(a, &pa.mask, &ia);
    to_image(b, &pb.mask, &ib);
    to_bins(&pa, &ba);
    to_bins(&pb, &bb);
    unsigned long long *pairs = k->totals ? k->totals : h->ws;
    int e = psi_ch_joint_launch(&ia, &ba, &ib, &bb, (unsigned long long *)k->counts, pairs, h->ws,
                                h->sm_count, ctx_stream(c, k->stream));
    if (e)
        return psi_cuda_fail((cudaError_t)e, "cuda.hist (joint)");
    return PIXSUM_OK;
}

/* Equalisation: the image's histogram with one bin per level, then every
 * sample mapped (u8: the mapping kernel builds the tables from the counts;
 * u16: the cumulative sums and the tables first, four launches in all). */
static int run_equalize(pixsum_ctx *c, const hist_call *k)
{
    int st = psi_equalize_check(k->in, k->out);
    if (st != PIXSUM_OK)
        return st;
    const pixsum_view *in = k->in, *out = k->out;
    const size_t levels = in->type == PIXSUM_U8 ? 256 : 65536, ch = in->channels;
    if (in->width * in->height * in->depth >= ((size_t)1 << 46))
        return psi_fail(PIXSUM_ERR_TOO_LARGE, "equalisation on the device takes fewer than "
                        "2^46 pixels");
    psi_hist_params p;
    if ((st = resolve_device(in, k->spec, levels, &p)) != PIXSUM_OK)
        return st;
    if (!aligned_view(out))
        return psi_fail(PIXSUM_ERR_UNSUPPORTED,
                        "the CUDA equalisation needs output samples aligned to their size");
    if ((st = psi_cuda_need_device(c)) != PIXSUM_OK)
        return st;
    hist_state *h;
    if ((st = state_for(c, &h)) != PIXSUM_OK)
        return st;
    if ((st = psi_cuda_check_view(in, "input", h->device)) != PIXSUM_OK ||
        (st = psi_cuda_check_view(out, "output", h->device)) != PIXSUM_OK ||
        (p.mask.data && (st = psi_cuda_check_view(&p.mask, "mask", h->device)) != PIXSUM_OK))
        return st;
    const size_t cells = levels * ch;
    if ((st = grow(&h->d_eq, &h->d_eq_bytes, cells * (8 + 8 + 2), "cudaMalloc (equalisation)")) !=
        PIXSUM_OK)
        return st;
    /* the counts; for u16 the cumulative counts (apart from the counts, so
     * that every tile of the scan gets a block of its own) and the tables */
    uint64_t *counts = h->d_eq, *cdf = counts + cells;
    unsigned short *lut = (unsigned short *)(cdf + cells);
    void *stream = ctx_stream(c, k->stream);
    psi_ch_plan plan;
    make_plan(c, h, in, &p, counts, stream, &plan);
    if ((st = launch_count(h, &plan, NULL)) != PIXSUM_OK)
        return st;
    int e = 0;
    if (in->type == PIXSUM_U16) {
        e = psi_ch_cumulative((const unsigned long long *)counts, (unsigned long long *)cdf,
                              (long long)ch, (long long)levels, stream);
        if (!e)
            e = psi_ch_equalize_table((const unsigned long long *)cdf, lut, (long long)ch,
                                      (long long)levels, stream);
    }
    if (!e) {
        psi_ch_image im;
        to_image(in, NULL, &im);
        e = psi_ch_equalize_apply(&im, out->data, out->row_stride, out->slice_stride,
                                  (const unsigned long long *)counts, lut, h->sm_count, stream);
    }
    return e ? psi_cuda_fail((cudaError_t)e, "equalisation") : PIXSUM_OK;
}

static int with_ctx(pixsum_ctx *ctx, const hist_call *k, int (*fn)(pixsum_ctx *, const hist_call *))
{
    if (ctx)
        return fn(ctx, k);
    pixsum_ctx local = psi_default_ctx;
    int st = fn(&local, k);
    if (local.cuda_scratch) {
        /* No context to keep scratch in: wait for the work, then free it. */
        cudaStreamSynchronize((cudaStream_t)ctx_stream(&local, k->stream));
        if (local.cuda_release)
            local.cuda_release(&local);
    }
    return st;
}

int pixsum_cuda_histogram(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_hist_spec *spec,
                          uint64_t *counts, size_t counts_len, pixsum_cuda_hist_totals *totals,
                          void *stream)
{
    psi_clear_error();
    hist_call k;
    memset(&k, 0, sizeof k);
    k.in = in;
    k.spec = spec;
    k.counts = counts;
    k.counts_len = counts_len;
    k.totals = totals;
    k.stream = stream;
    return with_ctx(ctx, &k, run_count);
}

int pixsum_cuda_histogram_batch(pixsum_ctx *ctx, const pixsum_view *in,
                                const pixsum_hist_spec *spec, unsigned flags, uint64_t *counts,
                                size_t counts_len, pixsum_cuda_hist_totals *totals, void *stream)
{
    psi_clear_error();
    hist_call k;
    memset(&k, 0, sizeof k);
    k.in = in;
    k.spec = spec;
    k.flags = flags;
    k.counts = counts;
    k.counts_len = counts_len;
    k.totals = totals;
    k.stream = stream;
    return with_ctx(ctx, &k, run_batch);
}

int pixsum_cuda_hist_reserve(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_hist_spec *spec)
{
    psi_clear_error();
    if (!ctx)
        return psi_fail(PIXSUM_ERR_NULL, "context is NULL");
    hist_call k;
    memset(&k, 0, sizeof k);
    k.in = in;
    k.spec = spec;
    k.reserve_only = 1;
    return run_count(ctx, &k);
}

int pixsum_cuda_histogram_joint(pixsum_ctx *ctx, const pixsum_view *a, const pixsum_view *b,
                                const pixsum_hist_spec *spec_a, const pixsum_hist_spec *spec_b,
                                uint64_t *counts, size_t counts_len, uint64_t *pairs,
                                void *stream)
{
    psi_clear_error();
    hist_call k;
    memset(&k, 0, sizeof k);
    k.in = a;
    k.b = b;
    k.spec = spec_a;
    k.spec_b = spec_b;
    k.counts = counts;
    k.counts_len = counts_len;
    k.totals = pairs;
    k.stream = stream;
    return with_ctx(ctx, &k, run_joint);
}

int pixsum_cuda_equalize(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                         const pixsum_view *mask, void *stream)
{
    psi_clear_error();
    pixsum_hist_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.mask = mask;
    hist_call k;
    memset(&k, 0, sizeof k);
    k.in = in;
    k.out = out;
    k.spec = &spec;
    k.stream = stream;
    return with_ctx(ctx, &k, run_equalize);
}

static int check_rows(const void *counts, const void *out, size_t channels, size_t bins)
{
    if (!counts || !out)
        return psi_fail(PIXSUM_ERR_NULL, "counts or out is NULL");
    if (channels < 1 || channels > 4 || bins == 0 || bins > PIXSUM_HIST_MAX_BINS)
        return psi_fail(PIXSUM_ERR_INVALID_ARG,
                        "%zu channels x %zu bins; need 1-4 channels and 1..2^24 bins", channels,
                        bins);
    if (pixsum_cuda_device_count() <= 0)
        return psi_fail(PIXSUM_ERR_UNAVAILABLE, "no CUDA device");
    return PIXSUM_OK;
}

int pixsum_cuda_hist_cumulative(const uint64_t *counts, size_t channels, size_t bins,
                                uint64_t *out, void *stream)
{
    psi_clear_error();
    int st = check_rows(counts, out, channels, bins);
    if (st != PIXSUM_OK)
        return st;
    int e = psi_ch_cumulative((const unsigned long long *)counts, (unsigned long long *)out,
                              (long long)channels, (long long)bins, stream);
    if (e)
        return psi_cuda_fail((cudaError_t)e, "cumulative histogram");
    return PIXSUM_OK;
}

int pixsum_cuda_hist_relative(const uint64_t *counts, size_t channels, size_t bins,
                              const pixsum_cuda_hist_totals *totals, unsigned flags, double *out,
                              void *stream)
{
    psi_clear_error();
    int st = check_rows(counts, out, channels, bins);
    if (st != PIXSUM_OK)
        return st;
    if (flags & ~(PIXSUM_HIST_CUMULATIVE | PIXSUM_HIST_OF_ALL_SAMPLES))
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "unknown flags 0x%x", flags);
    if ((flags & PIXSUM_HIST_OF_ALL_SAMPLES) && !totals)
        return psi_fail(PIXSUM_ERR_NULL, "PIXSUM_HIST_OF_ALL_SAMPLES needs the totals");
    int e = psi_ch_relative((const unsigned long long *)counts, out, (long long)channels,
                            (long long)bins, (const unsigned long long *)totals,
                            (flags & PIXSUM_HIST_CUMULATIVE) != 0,
                            (flags & PIXSUM_HIST_OF_ALL_SAMPLES) != 0, stream);
    if (e)
        return psi_cuda_fail((cudaError_t)e, "relative histogram");
    return PIXSUM_OK;
}

/* ---- the registered method: pixsum_histogram() of host memory -------------------- */

bool psi_cuda_hist_available(void)
{
    return pixsum_cuda_device_count() > 0;
}

bool psi_cuda_hist_supports(const psi_job *job)
{
    const psi_hist_params *p = job->extra;
    psi_ch_type t;
    return job->op == PIXSUM_OP_HISTOGRAM && p && ch_type(job->in.type, &t) &&
           p->b.bins <= PIXSUM_CUDA_HIST_MAX_BINS && job->in.channels >= 1 &&
           job->in.channels <= 4;
}

/* Copies a (host or device) view's samples into a packed device buffer. */
static int pack_to_device(const pixsum_view *v, void *dst, cudaStream_t s)
{
    size_t row = v->width * v->channels * pixsum_type_size(v->type);
    for (size_t z = 0; z < v->depth; z++) {
        char *d = (char *)dst + z * row * v->height;
        const char *src = psi_row(v, 0, z);
        if (v->row_stride > 0) {
            PSI_CUDA_TRY(cudaMemcpy2DAsync(d, row, src, (size_t)v->row_stride, row, v->height,
                                           cudaMemcpyDefault, s),
                         "cudaMemcpy2DAsync (image to device)");
            continue;
        }
        for (size_t y = 0; y < v->height; y++)
            PSI_CUDA_TRY(cudaMemcpyAsync(d + y * row, psi_row(v, y, z), row, cudaMemcpyDefault, s),
                         "cudaMemcpyAsync (image to device)");
    }
    return PIXSUM_OK;
}

static pixsum_view packed_view(const pixsum_view *v, void *data)
{
    pixsum_view r = *v;
    size_t row = v->width * v->channels * pixsum_type_size(v->type);
    r.data = data;
    r.row_stride = (ptrdiff_t)row;
    r.slice_stride = (ptrdiff_t)(row * v->height);
    return r;
}

int psi_cuda_hist_run(const psi_job *job)
{
    pixsum_ctx *c = job->ctx;
    psi_hist_params *p = (psi_hist_params *)job->extra;
    int st = psi_cuda_need_device(c);
    hist_state *h;
    if (st != PIXSUM_OK || (st = state_for(c, &h)) != PIXSUM_OK)
        return st;
    const pixsum_view *in = &job->in;
    cudaStream_t s = (cudaStream_t)c->cuda_stream;
    size_t in_bytes = in->width * in->channels * pixsum_type_size(in->type) * in->height *
                      in->depth;
    size_t ncounts = p->b.bins * in->channels;
    size_t out_bytes = ncounts * 8 + sizeof(pixsum_cuda_hist_totals);
    if ((st = grow(&h->d_in, &h->d_in_bytes, in_bytes, "cudaMalloc (image)")) != PIXSUM_OK ||
        (st = grow(&h->d_out, &h->d_out_bytes, out_bytes, "cudaMalloc (counts)")) != PIXSUM_OK)
        return st;
    if ((st = pack_to_device(in, h->d_in, s)) != PIXSUM_OK)
        return st;
    psi_hist_params dp = *p;
    pixsum_view din = packed_view(in, h->d_in);
    if (p->mask.data) {
        size_t mb = in->width * in->height * in->depth;
        if ((st = grow(&h->d_mask, &h->d_mask_bytes, mb, "cudaMalloc (mask)")) != PIXSUM_OK ||
            (st = pack_to_device(&p->mask, h->d_mask, s)) != PIXSUM_OK)
            return st;
        dp.mask = packed_view(&p->mask, h->d_mask);
    }
    psi_ch_plan plan;
    make_plan(c, h, &din, &dp, h->d_out, s, &plan);
    pixsum_cuda_hist_totals *dtot = (pixsum_cuda_hist_totals *)((uint64_t *)h->d_out + ncounts);
    if ((st = launch_count(h, &plan, dtot)) != PIXSUM_OK)
        return st;
    uint64_t *host = malloc(out_bytes);
    if (!host)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu bytes", out_bytes);
    cudaError_t e = cudaMemcpyAsync(host, h->d_out, out_bytes, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) {
        free(host);
        return psi_cuda_fail(e, "cuda.hist (counts to host)");
    }
    for (size_t i = 0; i < ncounts; i++)
        p->counts[i] += host[i];
    pixsum_cuda_hist_totals t;
    memcpy(&t, host + ncounts, sizeof t);
    for (size_t ch = 0; ch < in->channels; ch++) {
        p->below[ch] += t.below[ch];
        p->above[ch] += t.above[ch];
        p->nan[ch] += t.nan[ch];
    }
    free(host);
    return PIXSUM_OK;
}

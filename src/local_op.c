/*
 * local_op.c - the local thresholds and local normalisation (pixsum.h
 * section 10): validation shared with the CUDA entry points
 * (psi_threshold_prepare(), psi_normalize_prepare(); src/local_op.h) and the
 * CPU entry points, which run the context's box filter method with the
 * local plan attached, so the per-pixel rule is applied to each output row
 * of window sums as the streamed box filter produces it. A view of depth N
 * is a batch of N independent images (outputs of depth N): the request is
 * validated once on the whole views, and psi_batch_run() (src/batch.c)
 * shares the images out over the context's threads as the box filter batch
 * does, each image computed exactly as the call on its slice alone. The
 * device entries take one image: psi_threshold_prepare() and
 * psi_normalize_prepare() add that refusal to the same checks.
 */
#include "local_op.h"

#include <math.h>
#include <string.h>

double pixsum_threshold_default_r(pixsum_type t)
{
    switch (t) {
    case PIXSUM_U8: return 127.5;
    case PIXSUM_U16: case PIXSUM_I16: return 32767.5;
    case PIXSUM_U32: case PIXSUM_I32: return 2147483647.5;
    case PIXSUM_F32: case PIXSUM_F64: return 1.0;
    default: return 0.0;
    }
}

/* The slice z of a view (a 2-D view of depth 1). */
static pixsum_view slice_of(const pixsum_view *v, size_t z)
{
    pixsum_view s = *v;
    if (v->depth > 1)
        pixsum_view_roi3d(v, 0, 0, z, v->width, v->height, 1, &s);
    return s;
}

/* The box plan of window spec (kw, kh, border, value) with sums of squares
 * for one image of `in` (its first slice: every image has its shape), and
 * the output size. */
static int box_part(const pixsum_view *in, size_t kw, size_t kh, pixsum_border border,
                    double border_value, psi_box_plan *box, size_t *ow, size_t *oh)
{
    int st = pixsum_view_check(in);
    if (st != PIXSUM_OK)
        return psi_fail(st, "input: %s", pixsum_last_error());
    pixsum_view in0 = slice_of(in, 0);
    pixsum_box_filter_spec bs;
    memset(&bs, 0, sizeof bs);
    bs.kw = kw;
    bs.kh = kh;
    bs.stat = PIXSUM_BOX_VAR;
    bs.border = border;
    bs.border_value = border_value;
    return psi_box_input_plan(&in0, &bs, ow, oh, box);
}

/* Checks one output view: type, shape, channels, depth (one image per input
 * image), overlap with the input (whole views). */
static int check_output(const pixsum_view *in, const pixsum_view *o, const char *what,
                        size_t ow, size_t oh, size_t channels, int want_u8)
{
    int st = pixsum_view_check(o);
    if (st != PIXSUM_OK)
        return psi_fail(st, "%s: %s", what, pixsum_last_error());
    if (o->depth != in->depth)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "%s holds %zu images, the input %zu: a batch "
                        "writes one result per input image", what, o->depth, in->depth);
    if (want_u8 ? o->type != PIXSUM_U8 : (o->type != PIXSUM_F32 && o->type != PIXSUM_F64))
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "%s is %s; it must be %s", what,
                        pixsum_type_name(o->type), want_u8 ? "u8" : "f32 or f64");
    if (o->width != ow || o->height != oh || o->channels != channels)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "%s is %zux%zu with %zu channels; this image "
                        "and window need %zux%zu with %zu", what, o->width, o->height,
                        o->channels, ow, oh, channels);
    if (psi_views_overlap(in, o))
        return psi_fail(PIXSUM_ERR_ALIASING, "%s overlaps the input", what);
    return PIXSUM_OK;
}

/* The rule of pixsum_threshold_local() for one image or a batch: fills the
 * box plan of one image and the local plan with the whole output views. */
static int threshold_check(const pixsum_view *in, const pixsum_threshold_spec *spec,
                           const pixsum_view *map, const pixsum_view *mask,
                           psi_box_plan *box_out, psi_local_plan *local_out)
{
    if (!in || !spec)
        return psi_fail(PIXSUM_ERR_NULL, "in or spec is NULL");
    if (!map && !mask)
        return psi_fail(PIXSUM_ERR_NULL, "no output: give a threshold map, a mask or both");
    if ((unsigned)spec->method > PIXSUM_THRESHOLD_SAUVOLA)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "unknown threshold method %d",
                        (int)spec->method);
    if (!isfinite(spec->k) || !isfinite(spec->offset))
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "k and offset must be finite");
    if (!isfinite(spec->r) || spec->r < 0)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "r must be finite and >= 0 (0: the input "
                        "type's default), not %g", spec->r);
    psi_box_plan box;
    size_t ow, oh;
    int st = box_part(in, spec->kw, spec->kh, spec->border, spec->border_value, &box, &ow, &oh);
    if (st != PIXSUM_OK)
        return st;
    if (in->channels != 1)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "local thresholds take one channel, not %zu: "
                        "convert to gray or threshold one channel at a time", in->channels);
    if (map && (st = check_output(in, map, "the threshold map", ow, oh, 1, 0)) != PIXSUM_OK)
        return st;
    if (mask && (st = check_output(in, mask, "the mask", ow, oh, 1, 1)) != PIXSUM_OK)
        return st;
    if (map && mask && psi_views_overlap(map, mask))
        return psi_fail(PIXSUM_ERR_ALIASING, "the threshold map overlaps the mask");
    psi_local_plan lp;
    memset(&lp, 0, sizeof lp);
    lp.kind = (int)spec->method;
    lp.a = spec->method == PIXSUM_THRESHOLD_MEAN ? spec->offset : spec->k;
    lp.r = spec->r > 0 ? spec->r : pixsum_threshold_default_r(in->type);
    lp.fg = spec->foreground ? spec->foreground : 255;
    lp.has_map = map != NULL;
    lp.has_mask = mask != NULL;
    if (map)
        lp.map = *map;
    if (mask)
        lp.mask = *mask;
    *box_out = box;
    *local_out = lp;
    return PIXSUM_OK;
}

/* The rule of pixsum_normalize_local() for one image or a batch. */
static int normalize_check(const pixsum_view *in, const pixsum_normalize_spec *spec,
                           const pixsum_view *out, psi_box_plan *box_out,
                           psi_local_plan *local_out)
{
    if (!in || !spec || !out)
        return psi_fail(PIXSUM_ERR_NULL, "in, spec or out is NULL");
    if (!isfinite(spec->eps) || spec->eps < 0)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "eps must be finite and >= 0, not %g",
                        spec->eps);
    psi_box_plan box;
    size_t ow, oh;
    int st = box_part(in, spec->kw, spec->kh, spec->border, spec->border_value, &box, &ow, &oh);
    if (st != PIXSUM_OK)
        return st;
    if ((st = check_output(in, out, "the output", ow, oh, in->channels, 0)) != PIXSUM_OK)
        return st;
    psi_local_plan lp;
    memset(&lp, 0, sizeof lp);
    lp.kind = PSI_LOCAL_NORMALIZE;
    lp.eps = spec->eps;
    lp.has_map = 1;
    lp.map = *out;
    *box_out = box;
    *local_out = lp;
    return PIXSUM_OK;
}

int psi_threshold_prepare(const pixsum_view *in, const pixsum_threshold_spec *spec,
                          const pixsum_view *map, const pixsum_view *mask,
                          psi_box_plan *box, psi_local_plan *local)
{
    int st = threshold_check(in, spec, map, mask, box, local);
    if (st == PIXSUM_OK && in->depth > 1)
        return psi_fail(PIXSUM_ERR_UNSUPPORTED, "GPU local thresholds take one image; call "
                        "per image (this view holds %zu)", in->depth);
    return st;
}

int psi_normalize_prepare(const pixsum_view *in, const pixsum_normalize_spec *spec,
                          const pixsum_view *out, psi_box_plan *box, psi_local_plan *local)
{
    int st = normalize_check(in, spec, out, box, local);
    if (st == PIXSUM_OK && in->depth > 1)
        return psi_fail(PIXSUM_ERR_UNSUPPORTED, "GPU local normalisation takes one image; "
                        "call per image (this view holds %zu)", in->depth);
    return st;
}

/* Runs the context's box filter method on one validated image: `in` and the
 * plan's outputs are 2-D. The plans are copied, as a method may keep state in
 * its job's plan and the images of a batch run at the same time. */
static int run_local(pixsum_ctx *c, const pixsum_view *in, const psi_box_plan *box_in,
                     const psi_local_plan *lp_in)
{
    psi_box_plan box = *box_in;
    psi_local_plan lp = *lp_in;
    box.local = &lp;
    psi_job job;
    memset(&job, 0, sizeof job);
    job.op = PIXSUM_OP_BOX_FILTER;
    job.in = *in;
    job.out = lp.has_map ? lp.map : lp.mask; /* the output shape */
    job.threads = psi_ctx_threads(c);
    job.ctx = c;
    job.extra = &box;
    const psi_method *m;
    int st = psi_choose_method(&job, &m);
    if (st != PIXSUM_OK)
        return st;
    return m->run(&job);
}

/* What every image of a local batch shares: the whole views and the plans. */
typedef struct local_batch {
    const pixsum_view *in;
    const psi_box_plan *box;
    const psi_local_plan *lp; /* map and mask: the whole (depth N) views */
} local_batch;

static int local_image(pixsum_ctx *c, size_t z, void *user)
{
    const local_batch *b = user;
    pixsum_view in = slice_of(b->in, z);
    psi_local_plan lp = *b->lp;
    if (lp.has_map)
        lp.map = slice_of(&b->lp->map, z);
    if (lp.has_mask)
        lp.mask = slice_of(&b->lp->mask, z);
    return run_local(c, &in, b->box, &lp);
}

/* Runs a validated request: one image, or a batch over psi_batch_run(). */
static int run_request(pixsum_ctx *ctx, const pixsum_view *in, const psi_box_plan *box,
                       const psi_local_plan *lp)
{
    pixsum_ctx local = psi_default_ctx;
    pixsum_ctx *c = ctx ? ctx : &local;
    int st;
    if (in->depth == 1) {
        st = run_local(c, in, box, lp);
    } else {
        local_batch b = {in, box, lp};
        st = psi_batch_run(c, in->depth, local_image, &b);
    }
    if (st == PIXSUM_OK)
        psi_clear_error();
    return st;
}

int pixsum_threshold_local(pixsum_ctx *ctx, const pixsum_view *in,
                           const pixsum_threshold_spec *spec, const pixsum_view *map,
                           const pixsum_view *mask)
{
    psi_clear_error();
    psi_box_plan box;
    psi_local_plan lp;
    int st = threshold_check(in, spec, map, mask, &box, &lp);
    if (st != PIXSUM_OK)
        return st;
    return run_request(ctx, in, &box, &lp);
}

int pixsum_normalize_local(pixsum_ctx *ctx, const pixsum_view *in,
                           const pixsum_normalize_spec *spec, const pixsum_view *out)
{
    psi_clear_error();
    psi_box_plan box;
    psi_local_plan lp;
    int st = normalize_check(in, spec, out, &box, &lp);
    if (st != PIXSUM_OK)
        return st;
    return run_request(ctx, in, &box, &lp);
}

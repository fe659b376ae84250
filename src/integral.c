/*
 * integral.c - the integral-image entry points: argument validation, the type
 * and overflow rules, the aliasing check, the padded layout (the core writes the
 * zero border, methods always fill an inclusive table) and dispatch to the
 * chosen method.
 */
#include "internal.h"

#include <string.h>

static const pixsum_ctx *ctx_or_default(const pixsum_ctx *ctx)
{
    return ctx ? ctx : &psi_default_ctx;
}

void pixsum_integral_shape(const pixsum_ctx *ctx, const pixsum_view *in, size_t *width,
                           size_t *height, size_t *depth)
{
    int pad = ctx_or_default(ctx)->padded ? 1 : 0;
    size_t w = in ? in->width + (size_t)pad : 0;
    size_t h = in ? in->height + (size_t)pad : 0;
    size_t d = in ? (in->depth > 1 ? in->depth + (size_t)pad : in->depth) : 0;
    if (width) *width = w;
    if (height) *height = h;
    if (depth) *depth = d;
}

static int check_no_overlap(const pixsum_view *a, const pixsum_view *b, const char *what)
{
    uintptr_t alo, ahi, blo, bhi;
    psi_view_extent(a, &alo, &ahi);
    psi_view_extent(b, &blo, &bhi);
    if (alo < bhi && blo < ahi)
        return psi_fail(PIXSUM_ERR_ALIASING, "%s overlaps the input", what);
    return PIXSUM_OK;
}

/* Validates one output table against the (checked) input. */
static int check_table(const pixsum_view *in, const pixsum_view *out, size_t want_w,
                       size_t want_h, size_t want_d, int squared, int wrap, const char *what)
{
    int st = pixsum_view_check(out);
    if (st != PIXSUM_OK)
        return psi_fail(st, "%s: %s", what, pixsum_last_error());
    if (out->channels != in->channels)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "%s has %zu channels, the input %zu", what,
                        out->channels, in->channels);
    if (out->width != want_w || out->height != want_h || out->depth != want_d)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "%s is %zux%zux%zu, expected %zux%zux%zu", what,
                        out->width, out->height, out->depth, want_w, want_h, want_d);
    size_t count = in->width * in->height * in->depth;
    if (wrap && psi_type_is_int(out->type)) {
        if (!psi_pair_supported(in->type, out->type, squared))
            return pixsum_integral_check(in->type, out->type, count, squared);
    } else if ((st = pixsum_integral_check(in->type, out->type, count, squared)) != PIXSUM_OK) {
        return st;
    }
    return check_no_overlap(out, in, what);
}

/* Writes zeros over the leading row and column (and slice, for 3-D) of a
 * padded table. */
static void zero_padding(const pixsum_view *t)
{
    size_t px = t->channels * pixsum_type_size(t->type);
    for (size_t z = 0; z < t->depth; z++) {
        for (size_t y = 0; y < t->height; y++) {
            bool whole = y == 0 || (t->depth > 1 && z == 0);
            memset(psi_row(t, y, z), 0, whole ? t->width * px : px);
        }
    }
}

/* Shared body of pixsum_integral() and pixsum_integral_sq(). */
static int integral_common(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                           const pixsum_view *out_sq)
{
    pixsum_ctx local = psi_default_ctx;
    pixsum_ctx *c = ctx ? ctx : &local;
    int st = pixsum_view_check(in);
    if (st != PIXSUM_OK)
        return psi_fail(st, "input: %s", pixsum_last_error());
    size_t w, h, d;
    pixsum_integral_shape(c, in, &w, &h, &d);
    if (out && (st = check_table(in, out, w, h, d, 0, c->wrap, "output")) != PIXSUM_OK)
        return st;
    if (out_sq &&
        (st = check_table(in, out_sq, w, h, d, 1, c->wrap, "squared output")) != PIXSUM_OK)
        return st;
    if (out && out_sq && (st = check_no_overlap(out, out_sq, "squared output")) != PIXSUM_OK)
        return psi_fail(st, "the output and the squared output overlap");

    psi_job job;
    memset(&job, 0, sizeof job);
    job.op = out_sq ? PIXSUM_OP_INTEGRAL_SQ
                    : (in->depth > 1 ? PIXSUM_OP_INTEGRAL_3D : PIXSUM_OP_INTEGRAL);
    job.in = *in;
    job.wrap = c->wrap;
    job.threads = psi_ctx_threads(c);
    job.ctx = c;
    size_t pad = c->padded ? 1 : 0, zpad = in->depth > 1 ? pad : 0;
    if (out)
        pixsum_view_roi3d(out, pad, pad, zpad, in->width, in->height, in->depth, &job.out);
    if (out_sq)
        pixsum_view_roi3d(out_sq, pad, pad, zpad, in->width, in->height, in->depth,
                          &job.out_sq);

    const psi_method *m;
    if ((st = psi_choose_method(&job, &m)) != PIXSUM_OK)
        return st;
    st = m->run(&job);
    if (!ctx && local.cuda_release)
        local.cuda_release(&local); /* scratch a backend hung on the local context */
    if (st != PIXSUM_OK)
        return st;
    if (c->padded) {
        if (out)
            zero_padding(out);
        if (out_sq)
            zero_padding(out_sq);
    }
    return PIXSUM_OK;
}

int pixsum_integral(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out)
{
    psi_clear_error();
    if (!in || !out)
        return psi_fail(PIXSUM_ERR_NULL, "input or output view is NULL");
    return integral_common(ctx, in, out, NULL);
}

int pixsum_integral_sq(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                       const pixsum_view *out_sq)
{
    psi_clear_error();
    if (!in || !out_sq)
        return psi_fail(PIXSUM_ERR_NULL, "input or squared output view is NULL");
    return integral_common(ctx, in, out, out_sq);
}

int pixsum_integral_tilted(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out)
{
    psi_clear_error();
    if (!in || !out)
        return psi_fail(PIXSUM_ERR_NULL, "input or output view is NULL");
    pixsum_ctx local = psi_default_ctx;
    pixsum_ctx *c = ctx ? ctx : &local;
    int st = pixsum_view_check(in);
    if (st != PIXSUM_OK)
        return psi_fail(st, "input: %s", pixsum_last_error());
    if (in->depth != 1)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "the tilted integral is defined for 2-D images");
    st = check_table(in, out, in->width + 1, in->height + 1, 1, 0, c->wrap, "output");
    if (st != PIXSUM_OK)
        return st;
    psi_job job;
    memset(&job, 0, sizeof job);
    job.op = PIXSUM_OP_TILTED;
    job.in = *in;
    job.out = *out;
    job.wrap = c->wrap;
    job.threads = psi_ctx_threads(c);
    job.ctx = c;
    const psi_method *m;
    if ((st = psi_choose_method(&job, &m)) != PIXSUM_OK)
        return st;
    return m->run(&job);
}

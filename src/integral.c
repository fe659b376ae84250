/*
 * integral.c - the integral-image entry points: argument validation, the type
 * and overflow rules, the aliasing check, the padded layout (the core writes the
 * zero border, methods always fill an inclusive table) and dispatch to the
 * chosen method.
 */
#include "internal.h"

#include <stdio.h>
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

/* Whether the byte ranges two views span (first to last byte) overlap. */
static bool views_overlap(const pixsum_view *a, const pixsum_view *b)
{
    uintptr_t alo, ahi, blo, bhi;
    psi_view_extent(a, &alo, &ahi);
    psi_view_extent(b, &blo, &bhi);
    return alo < bhi && blo < ahi;
}

static int check_no_overlap(const pixsum_view *a, const pixsum_view *b, const char *what)
{
    if (views_overlap(a, b))
        return psi_fail(PIXSUM_ERR_ALIASING, "%s overlaps the input", what);
    return PIXSUM_OK;
}

int psi_integral_check_table(const pixsum_view *in, const pixsum_view *out, size_t want_w,
                             size_t want_h, size_t want_d, int squared, int wrap, uint64_t above,
                             bool per_slice, const char *what)
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
    /* One table's worst case: a batch's images are summed apart. */
    size_t count = in->width * in->height * (per_slice ? 1 : in->depth);
    if (wrap && psi_type_is_int(out->type)) {
        if (!psi_pair_supported(in->type, out->type, squared))
            return pixsum_integral_check(in->type, out->type, count, squared);
    } else if ((st = psi_integral_check_above(in->type, out->type, count, squared, above)) !=
               PIXSUM_OK) {
        return st;
    }
    return check_no_overlap(out, in, what);
}

/* The largest magnitude in a carry row of an integer table (0 for floats). */
static uint64_t carry_magnitude(const pixsum_view *carry)
{
    const void *row = psi_row(carry, 0, 0);
    size_t n = psi_row_samples(carry);
    uint64_t most = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t m;
        switch (carry->type) {
        case PIXSUM_U32: m = ((const uint32_t *)row)[i]; break;
        case PIXSUM_U64: m = ((const uint64_t *)row)[i]; break;
        case PIXSUM_I64: {
            int64_t v = ((const int64_t *)row)[i];
            m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
            break;
        }
        default: return 0;
        }
        if (m > most)
            most = m;
    }
    return most;
}

/* Validates the carry row of a table: one row of the input's width and
 * channels, of the table's type, not overlapping either table. */
static int check_carry(const pixsum_view *in, const pixsum_view *table, const pixsum_view *carry,
                       const pixsum_view *other, const char *what)
{
    int st = pixsum_view_check(carry);
    if (st != PIXSUM_OK)
        return psi_fail(st, "%s: %s", what, pixsum_last_error());
    if (carry->type != table->type)
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "%s is %s, its table %s", what,
                        pixsum_type_name(carry->type), pixsum_type_name(table->type));
    if (carry->width != in->width || carry->height != 1 || carry->depth != 1 ||
        carry->channels != in->channels)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE,
                        "%s is %zux%zux%zu with %zu channels, expected one row of %zu pixels "
                        "with %zu channels",
                        what, carry->width, carry->height, carry->depth, carry->channels,
                        in->width, in->channels);
    const pixsum_view *tables[2] = {table, other};
    for (int i = 0; i < 2; i++) {
        if (!tables[i] || pixsum_view_check(tables[i]) != PIXSUM_OK)
            continue; /* reported by psi_integral_check_table() */
        if (views_overlap(carry, tables[i]))
            return psi_fail(PIXSUM_ERR_ALIASING, "%s overlaps the %s", what,
                            tables[i] == table ? "table it continues" : "other table");
    }
    return PIXSUM_OK;
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

/* Shared body of pixsum_integral(), pixsum_integral_sq() and
 * pixsum_integral_carry() (carry and carry_sq NULL but for the last). */
static int integral_common(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                           const pixsum_view *out_sq, const pixsum_view *carry,
                           const pixsum_view *carry_sq)
{
    pixsum_ctx local = psi_default_ctx;
    pixsum_ctx *c = ctx ? ctx : &local;
    int st = pixsum_view_check(in);
    if (st != PIXSUM_OK)
        return psi_fail(st, "input: %s", pixsum_last_error());
    uint64_t above = 0, above_sq = 0;
    if (carry || carry_sq) {
        if (c->padded)
            return psi_fail(PIXSUM_ERR_UNSUPPORTED,
                            "carry rows continue inclusive tables; the context asks for padded "
                            "ones");
        if (in->depth != 1)
            return psi_fail(PIXSUM_ERR_BAD_SHAPE, "carry rows continue 2-D tables; the input "
                            "has %zu slices", in->depth);
        if (carry && (st = check_carry(in, out, carry, out_sq, "carry row")) != PIXSUM_OK)
            return st;
        if (carry_sq &&
            (st = check_carry(in, out_sq, carry_sq, out, "squared carry row")) != PIXSUM_OK)
            return st;
        if (!c->wrap) {
            above = carry ? carry_magnitude(carry) : 0;
            above_sq = carry_sq ? carry_magnitude(carry_sq) : 0;
        }
    }
    size_t w, h, d;
    pixsum_integral_shape(c, in, &w, &h, &d);
    if (out && (st = psi_integral_check_table(in, out, w, h, d, 0, c->wrap, above, false,
                                              "output")) != PIXSUM_OK)
        return st;
    if (out_sq && (st = psi_integral_check_table(in, out_sq, w, h, d, 1, c->wrap, above_sq,
                                                 false, "squared output")) != PIXSUM_OK)
        return st;
    if (out && out_sq && (st = check_no_overlap(out, out_sq, "squared output")) != PIXSUM_OK)
        return psi_fail(st, "the output and the squared output overlap");

    psi_job job;
    memset(&job, 0, sizeof job);
    job.op = out_sq ? PIXSUM_OP_INTEGRAL_SQ
                    : (in->depth > 1 ? PIXSUM_OP_INTEGRAL_3D : PIXSUM_OP_INTEGRAL);
    job.in = *in;
    job.carry = carry ? psi_row(carry, 0, 0) : NULL;
    job.carry_sq = carry_sq ? psi_row(carry_sq, 0, 0) : NULL;
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
    return integral_common(ctx, in, out, NULL, NULL, NULL);
}

int pixsum_integral_sq(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                       const pixsum_view *out_sq)
{
    psi_clear_error();
    if (!in || !out_sq)
        return psi_fail(PIXSUM_ERR_NULL, "input or squared output view is NULL");
    return integral_common(ctx, in, out, out_sq, NULL, NULL);
}

int pixsum_integral_carry(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                          const pixsum_view *carry, const pixsum_view *out_sq,
                          const pixsum_view *carry_sq)
{
    psi_clear_error();
    if (!in)
        return psi_fail(PIXSUM_ERR_NULL, "input view is NULL");
    if (!out && !out_sq)
        return psi_fail(PIXSUM_ERR_NULL, "neither a table nor a squared table was given");
    if (!out != !carry)
        return psi_fail(PIXSUM_ERR_NULL, out ? "the table has no carry row"
                                             : "a carry row was given without its table");
    if (!out_sq != !carry_sq)
        return psi_fail(PIXSUM_ERR_NULL, out_sq ? "the squared table has no carry row"
                                                : "a squared carry row was given without its "
                                                  "table");
    return integral_common(ctx, in, out, out_sq, carry, carry_sq);
}

/* Slice z of a batch's input or table as a 2-D view. */
static pixsum_view batch_slice(const pixsum_view *v, size_t z)
{
    pixsum_view s;
    pixsum_view_roi3d(v, 0, 0, z, v->width, v->height, 1, &s);
    return s;
}

/* One image of a batch through the 2-D path (validation included: cheap). */
typedef struct batch_views {
    const pixsum_view *in, *out, *out_sq;
} batch_views;

static int batch_one(pixsum_ctx *c, size_t z, void *user)
{
    const batch_views *b = user;
    pixsum_view si = batch_slice(b->in, z), so, ss;
    if (b->out)
        so = batch_slice(b->out, z);
    if (b->out_sq)
        ss = batch_slice(b->out_sq, z);
    return integral_common(c, &si, b->out ? &so : NULL, b->out_sq ? &ss : NULL, NULL, NULL);
}

int pixsum_integral_batch(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                          const pixsum_view *out_sq)
{
    psi_clear_error();
    if (!in || (!out && !out_sq))
        return psi_fail(PIXSUM_ERR_NULL, "input or output view is NULL");
    pixsum_ctx local = psi_default_ctx;
    pixsum_ctx *c = ctx ? ctx : &local;
    int st = pixsum_view_check(in);
    if (st != PIXSUM_OK)
        return psi_fail(st, "input: %s", pixsum_last_error());
    size_t pad = c->padded ? 1 : 0, w = in->width + pad, h = in->height + pad, n = in->depth;
    if (out && (st = psi_integral_check_table(in, out, w, h, n, 0, c->wrap, 0, true,
                                              "output")) != PIXSUM_OK)
        return st;
    if (out_sq && (st = psi_integral_check_table(in, out_sq, w, h, n, 1, c->wrap, 0, true,
                                                 "squared output")) != PIXSUM_OK)
        return st;
    if (out && out_sq && (st = check_no_overlap(out, out_sq, "squared output")) != PIXSUM_OK)
        return psi_fail(st, "the output and the squared output overlap");
    batch_views views = {in, out, out_sq};
    st = psi_batch_run(c, n, batch_one, &views);
    if (!ctx && local.cuda_release)
        local.cuda_release(&local);
    return st;
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
    st = psi_integral_check_table(in, out, in->width + 1, in->height + 1, 1, 0, c->wrap, 0,
                                  false, "output");
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

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

/* ---- tiles of a grid: a carry row above and a carry column on the left ---- */

/* Table bytes per block of rows of pixsum_integral_carry_tile(): small enough
 * that a block is still in the cache when its column carries are added. */
#define TILE_BLOCK_BYTES ((size_t)256 << 10)

/* Validates a carry column of a tile: in->height rows of one pixel, the
 * input's channels, the table's type, not overlapping a table or the input. */
static int check_carry_column(const pixsum_view *in, const pixsum_view *table,
                              const pixsum_view *col, const pixsum_view *other,
                              const char *what)
{
    int st = pixsum_view_check(col);
    if (st != PIXSUM_OK)
        return psi_fail(st, "%s: %s", what, pixsum_last_error());
    if (col->type != table->type)
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "%s is %s, its table %s", what,
                        pixsum_type_name(col->type), pixsum_type_name(table->type));
    if (col->width != 1 || col->height != in->height || col->depth != 1 ||
        col->channels != in->channels)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE,
                        "%s is %zux%zux%zu with %zu channels, expected one column of %zu "
                        "pixels with %zu channels",
                        what, col->width, col->height, col->depth, col->channels, in->height,
                        in->channels);
    const pixsum_view *tables[2] = {table, other};
    for (int i = 0; i < 2; i++) {
        if (!tables[i] || pixsum_view_check(tables[i]) != PIXSUM_OK)
            continue; /* reported by psi_integral_check_table() */
        if (views_overlap(col, tables[i]))
            return psi_fail(PIXSUM_ERR_ALIASING, "%s overlaps the %s", what,
                            tables[i] == table ? "table it continues" : "other table");
    }
    return check_no_overlap(col, in, what);
}

/* Magnitude of one integer table sample (0 for floats). */
static uint64_t sample_magnitude(pixsum_type t, const void *row, size_t i)
{
    switch (t) {
    case PIXSUM_U32: return ((const uint32_t *)row)[i];
    case PIXSUM_U64: return ((const uint64_t *)row)[i];
    case PIXSUM_I64: {
        int64_t v = ((const int64_t *)row)[i];
        return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    }
    default: return 0;
    }
}

static uint64_t add_saturating(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The largest magnitude the carries can add to an entry of an integer table:
 * per channel, the carry row's largest magnitude plus the sum of the carry
 * column's magnitudes (saturated at UINT64_MAX), the largest over channels. */
static uint64_t tile_carry_magnitude(const pixsum_view *row, const pixsum_view *col,
                                     size_t channels)
{
    uint64_t most = 0;
    for (size_t c = 0; c < channels; c++) {
        uint64_t row_most = 0, col_sum = 0;
        if (row) {
            const void *r = psi_row(row, 0, 0);
            for (size_t x = 0; x < row->width; x++) {
                uint64_t m = sample_magnitude(row->type, r, x * channels + c);
                row_most = m > row_most ? m : row_most;
            }
        }
        if (col)
            for (size_t y = 0; y < col->height; y++)
                col_sum = add_saturating(col_sum,
                                         sample_magnitude(col->type, psi_row(col, y, 0), c));
        uint64_t total = add_saturating(row_most, col_sum);
        most = total > most ? total : most;
    }
    return most;
}

/* Adds to each row y of `block` (rows y0.. of the tile) the running sum of
 * the carry column from the block's first row to y: the part of the rows'
 * left sums that the block's carry row (the row above the block) lacks.
 * Integer tables add modulo their width, as the kernels do in wrap mode. */
static void add_column_carries(const pixsum_view *block, const pixsum_view *col, size_t y0)
{
    size_t ch = block->channels, n = block->width;
    uint64_t acc_i[4] = {0, 0, 0, 0};
    double acc_f[4] = {0, 0, 0, 0};
    for (size_t y = 0; y < block->height; y++) {
        const void *cv = psi_row(col, y0 + y, 0);
        void *row = psi_row(block, y, 0);
        switch (block->type) {
        case PIXSUM_U32:
            for (size_t c = 0; c < ch; c++)
                acc_i[c] += ((const uint32_t *)cv)[c];
            for (size_t x = 0; x < n; x++)
                for (size_t c = 0; c < ch; c++)
                    ((uint32_t *)row)[x * ch + c] += (uint32_t)acc_i[c];
            break;
        case PIXSUM_U64:
        case PIXSUM_I64: /* i64 added as its unsigned twin: defined wrap-around */
            for (size_t c = 0; c < ch; c++)
                acc_i[c] += ((const uint64_t *)cv)[c];
            for (size_t x = 0; x < n; x++)
                for (size_t c = 0; c < ch; c++)
                    ((uint64_t *)row)[x * ch + c] += acc_i[c];
            break;
        case PIXSUM_F32:
            for (size_t c = 0; c < ch; c++)
                acc_f[c] += (double)((const float *)cv)[c];
            for (size_t x = 0; x < n; x++)
                for (size_t c = 0; c < ch; c++) {
                    float *p = (float *)row + x * ch + c;
                    *p = (float)((double)*p + acc_f[c]);
                }
            break;
        default: /* PIXSUM_F64 */
            for (size_t c = 0; c < ch; c++)
                acc_f[c] += ((const double *)cv)[c];
            for (size_t x = 0; x < n; x++)
                for (size_t c = 0; c < ch; c++)
                    ((double *)row)[x * ch + c] += acc_f[c];
            break;
        }
    }
}

int pixsum_integral_carry_tile(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                               const pixsum_view *carry_row, const pixsum_view *carry_col,
                               const pixsum_view *out_sq, const pixsum_view *carry_row_sq,
                               const pixsum_view *carry_col_sq)
{
    psi_clear_error();
    if (!in)
        return psi_fail(PIXSUM_ERR_NULL, "input view is NULL");
    if (!out && !out_sq)
        return psi_fail(PIXSUM_ERR_NULL, "neither a table nor a squared table was given");
    if (!out && (carry_row || carry_col))
        return psi_fail(PIXSUM_ERR_NULL, "a carry was given without its table");
    if (!out_sq && (carry_row_sq || carry_col_sq))
        return psi_fail(PIXSUM_ERR_NULL, "a squared carry was given without its table");
    const pixsum_ctx *c = ctx_or_default(ctx);
    int st = pixsum_view_check(in);
    if (st != PIXSUM_OK)
        return psi_fail(st, "input: %s", pixsum_last_error());
    if (c->padded)
        return psi_fail(PIXSUM_ERR_UNSUPPORTED, "tiles continue inclusive tables; the context "
                        "asks for padded ones");
    if (in->depth != 1)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "tiles are 2-D; the input has %zu slices",
                        in->depth);
    if (carry_row && (st = check_carry(in, out, carry_row, out_sq, "carry row")) != PIXSUM_OK)
        return st;
    if (carry_row_sq && (st = check_carry(in, out_sq, carry_row_sq, out,
                                          "squared carry row")) != PIXSUM_OK)
        return st;
    if (carry_col && (st = check_carry_column(in, out, carry_col, out_sq, "carry column")) !=
                         PIXSUM_OK)
        return st;
    if (carry_col_sq && (st = check_carry_column(in, out_sq, carry_col_sq, out,
                                                 "squared carry column")) != PIXSUM_OK)
        return st;
    /* the whole tile's rule, before anything is written: the carries' largest
     * contribution plus the tile's own worst case */
    uint64_t above = 0, above_sq = 0;
    if (!c->wrap) {
        above = tile_carry_magnitude(carry_row, carry_col, in->channels);
        above_sq = tile_carry_magnitude(carry_row_sq, carry_col_sq, in->channels);
    }
    if (out && (st = psi_integral_check_table(in, out, in->width, in->height, 1, 0, c->wrap,
                                              above, false, "output")) != PIXSUM_OK)
        return st;
    if (out_sq && (st = psi_integral_check_table(in, out_sq, in->width, in->height, 1, 1,
                                                 c->wrap, above_sq, false,
                                                 "squared output")) != PIXSUM_OK)
        return st;
    if (out && out_sq && (st = check_no_overlap(out, out_sq, "squared output")) != PIXSUM_OK)
        return psi_fail(st, "the output and the squared output overlap");
    if (!carry_col && !carry_col_sq)
        return integral_common(ctx, in, out, out_sq, carry_row, carry_row_sq);

    /* Blocks of rows: each block's table continues the row above it (the
     * tile's carry row, then the previous block's last row, which already
     * holds the column carries up to there), then gets the running sum of the
     * column carries over its own rows added while it is in the cache. */
    size_t row_bytes = (out ? psi_row_samples(out) * pixsum_type_size(out->type) : 0) +
                       (out_sq ? psi_row_samples(out_sq) * pixsum_type_size(out_sq->type) : 0);
    size_t budget = TILE_BLOCK_BYTES * (size_t)psi_ctx_threads(c);
    size_t step = budget / row_bytes > 0 ? budget / row_bytes : 1;
    for (size_t y0 = 0; y0 < in->height; y0 += step) {
        size_t h = in->height - y0 < step ? in->height - y0 : step;
        pixsum_view bin, bp, bs, cp, cs;
        const pixsum_view *above_p = carry_row, *above_s = carry_row_sq;
        pixsum_view_roi(in, 0, y0, in->width, h, &bin);
        if (out) {
            pixsum_view_roi(out, 0, y0, in->width, h, &bp);
            if (y0) {
                pixsum_view_roi(out, 0, y0 - 1, in->width, 1, &cp);
                above_p = &cp;
            }
        }
        if (out_sq) {
            pixsum_view_roi(out_sq, 0, y0, in->width, h, &bs);
            if (y0) {
                pixsum_view_roi(out_sq, 0, y0 - 1, in->width, 1, &cs);
                above_s = &cs;
            }
        }
        st = integral_common(ctx, &bin, out ? &bp : NULL, out_sq ? &bs : NULL, above_p,
                             above_s);
        if (st != PIXSUM_OK)
            return st;
        if (carry_col)
            add_column_carries(&bp, carry_col, y0);
        if (carry_col_sq)
            add_column_carries(&bs, carry_col_sq, y0);
    }
    return PIXSUM_OK;
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

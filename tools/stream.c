/*
 * stream.c - strip-by-strip processing for the `pixsum` tool: a generic strip
 * walker (used by integral and available to hist) and the streaming integral
 * image, each strip continuing the last row of the one above
 * (pixsum_integral_carry()). See stream.h for the contracts.
 */
#include "stream.h"

#include "cli_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_stream_strips(const char *cmd, const char *path, const pxio_options *opt,
                      size_t max_bytes, cli_header_fn header, cli_strip_fn fn, void *user)
{
    char err[512];
    pxio_reader *r;
    pxio_info info;
    if (pxio_reader_open(path, opt, &r, &info, err, sizeof err) != 0)
        return cli_error(cmd, "%s", err);
    int rc = 0;
    if (header && (rc = header(&info, user)) != 0) {
        pxio_reader_close(r);
        return rc;
    }
    size_t row_bytes = info.width * info.channels * pixsum_type_size(info.type);
    size_t total = info.height * info.depth;
    size_t file_strip = pxio_reader_strip_rows(r);
    size_t rows = max_bytes / row_bytes;
    if (rows == 0)
        rows = 1;
    if (rows > file_strip)
        rows -= rows % file_strip; /* whole file strips: each band is decoded once */
    if (rows > total)
        rows = total;
    unsigned char *buf = malloc(rows * row_bytes);
    if (!buf) {
        pxio_reader_close(r);
        return cli_error(cmd, "%s: out of memory for a strip of %zu rows (%zu bytes)", path,
                         rows, rows * row_bytes);
    }
    for (size_t y = 0; y < total && rc == 0; y += rows) {
        size_t n = total - y < rows ? total - y : rows;
        if (pxio_read_rows(r, n, buf, 0, err, sizeof err) != 0) {
            rc = cli_error(cmd, "%s", err);
            break;
        }
        pixsum_view strip = pixsum_view_2d(buf, info.type, info.width, n, info.channels, 0);
        rc = fn(&strip, y, user);
    }
    free(buf);
    pxio_reader_close(r);
    return rc;
}

/* ---- streaming integral ---------------------------------------------- */

int cli_integral_check(const char *cmd, const char *path, const pxio_info *info,
                       pixsum_type out, pixsum_type sq, int squared, size_t pad)
{
    size_t count = info->width * info->height * info->depth; /* the reader checked it */
    if (pixsum_integral_type(info->type, count, 0) == PIXSUM_TYPE_NONE)
        return cli_error(cmd, "%s: integral images of %s pixels%s%s%s are not supported (they "
                              "take %s pixels)",
                         path, pixsum_type_name(info->type), info->sample[0] ? " (" : "",
                         info->sample, info->sample[0] ? ")" : "", cli_integral_input_types());
    int rc;
    if ((rc = cli_check_table_type(cmd, path, "--type", info->type, out, 0)) != 0 ||
        (squared && (rc = cli_check_table_type(cmd, path, "--sq-type", info->type, sq, 1)) != 0))
        return rc;
    for (int k = 0; k < 1 + (squared != 0); k++) {
        pixsum_type t = k ? sq : out;
        if (t == PIXSUM_TYPE_NONE)
            t = pixsum_integral_type(info->type, count, k);
        size_t bytes = pixsum_packed_bytes(t, info->width + pad, info->height + pad,
                                           info->depth, info->channels);
        if (bytes == 0 || bytes > (size_t)PTRDIFF_MAX)
            return cli_error(cmd, "%s: image dimensions overflow: the %s%s table of %zu x %zu "
                                  "x %zu channel(s) would need more than 2^63 bytes",
                             path, pixsum_type_name(t), k ? " squared" : " integral",
                             info->width + pad, (info->height + pad) * info->depth,
                             info->channels);
    }
    return CLI_EXIT_OK;
}

typedef struct table_out {
    const char *path;
    pixsum_type type;
    size_t tsize;
    pxio_writer *writer;
    unsigned char *strip;   /* strip rows of the output table */
    ptrdiff_t stride;       /* bytes per output row (padded width) */
    unsigned char *carry;   /* last inclusive row so far (W x C elements) */
} table_out;

typedef struct integral_state {
    const cli_integral_job *job;
    pxio_info info;
    size_t strip_rows;
    table_out plain, sq;
    cli_progress progress;
    int started;
    int lib_carry; /* the method continues carry rows itself (PIXSUM_OP_CARRY) */
} integral_state;

/* Adds the carry row to `rows` rows of n samples; modular for integers (the
 * methods without PIXSUM_OP_CARRY). */
static void add_carry(pixsum_type t, unsigned char *rows_buf, ptrdiff_t stride, size_t rows,
                      const unsigned char *carry, size_t n)
{
    for (size_t y = 0; y < rows; y++) {
        unsigned char *row = rows_buf + (ptrdiff_t)y * stride;
        switch (t) {
        case PIXSUM_U32: {
            uint32_t *d = (uint32_t *)row;
            const uint32_t *c = (const uint32_t *)carry;
            for (size_t k = 0; k < n; k++)
                d[k] += c[k];
            break;
        }
        case PIXSUM_U64:
        case PIXSUM_I64: { /* two's complement: the same bits as modular u64 */
            uint64_t *d = (uint64_t *)row;
            const uint64_t *c = (const uint64_t *)carry;
            for (size_t k = 0; k < n; k++)
                d[k] += c[k];
            break;
        }
        case PIXSUM_F32: {
            float *d = (float *)row;
            const float *c = (const float *)carry;
            for (size_t k = 0; k < n; k++)
                d[k] += c[k];
            break;
        }
        case PIXSUM_F64: {
            double *d = (double *)row;
            const double *c = (const double *)carry;
            for (size_t k = 0; k < n; k++)
                d[k] += c[k];
            break;
        }
        default:
            break;
        }
    }
}

static int is_int_type(pixsum_type t)
{
    return t != PIXSUM_F32 && t != PIXSUM_F64;
}

static int table_open(integral_state *s, table_out *t, const char *path, pixsum_type type,
                      int squared)
{
    const cli_integral_job *job = s->job;
    const pxio_info *in = &s->info;
    size_t count = in->width * in->height;
    char err[512];
    if (type == PIXSUM_TYPE_NONE)
        type = pixsum_integral_type(in->type, count, squared);
    if (!job->wrap) {
        int st = pixsum_integral_check(in->type, type, count, squared);
        if (st != PIXSUM_OK) {
            char what[600];
            snprintf(what, sizeof what, "%s: %s", job->in_path,
                     squared ? "squared table" : "integral table");
            return cli_lib_error(job->cmd, what, st);
        }
    }
    t->path = path;
    t->type = type;
    t->tsize = pixsum_type_size(type);
    size_t pad = job->padded ? 1 : 0;
    size_t samples = (in->width + pad) * in->channels;
    t->stride = (ptrdiff_t)(samples * t->tsize);
    t->strip = calloc(s->strip_rows, (size_t)t->stride);
    t->carry = calloc(in->width * in->channels, t->tsize);
    if (!t->strip || !t->carry)
        return cli_error(job->cmd, "%s: out of memory for the output strips (%zu rows of %td "
                                   "bytes)",
                         job->in_path, s->strip_rows, t->stride);
    pxio_info shape;
    memset(&shape, 0, sizeof shape);
    shape.type = type;
    shape.width = in->width + pad;
    shape.height = in->height + pad;
    shape.depth = 1;
    shape.channels = in->channels;
    if (pxio_writer_open(path, &shape, &job->wopt, &t->writer, err, sizeof err) != 0)
        return cli_error(job->cmd, "%s", err);
    if (pad) /* the leading row of zeros (the strip buffer is still all zero) */
        if (pxio_write_rows(t->writer, 1, t->strip, t->stride, err, sizeof err) != 0)
            return cli_error(job->cmd, "%s", err);
    return 0;
}

static int integral_header(const pxio_info *info, void *user)
{
    integral_state *s = user;
    const cli_integral_job *job = s->job;
    s->info = *info;
    if (info->depth != 1)
        return cli_error(job->cmd,
                         "%s: streaming handles 2-D images; a volume (depth %zu) is "
                         "processed in memory (drop --stream)",
                         job->in_path, info->depth);
    int rc = cli_integral_check(job->cmd, job->in_path, info, job->out_type, job->sq_type,
                                job->sq_path != NULL, job->padded ? 1 : 0);
    if (rc != 0)
        return rc;
    /* Strip height: max_strip_bytes of the widest output row, at least 1. */
    size_t widest = (info->width + 1) * info->channels * 8;
    s->strip_rows = job->max_strip_bytes / widest;
    if (job->strip_rows)
        s->strip_rows = job->strip_rows;
    if (s->strip_rows == 0)
        s->strip_rows = 1;
    if (s->strip_rows > info->height)
        s->strip_rows = info->height;
    if (job->out_path && (rc = table_open(s, &s->plain, job->out_path, job->out_type, 0)) != 0)
        return rc;
    if (job->sq_path && (rc = table_open(s, &s->sq, job->sq_path, job->sq_type, 1)) != 0)
        return rc;
    /* Methods with PIXSUM_OP_CARRY ("auto" picks one) continue each strip
     * from the carry row in their own pass. Others compute each strip alone,
     * then the carry is added; their float tables go one row at a time, so that
     * each row is still its prefix sums plus the row above (with taller strips
     * the carry would be added after the strip's column sums and round
     * differently). Integer tables are exact either way. */
    intptr_t method = 0;
    pixsum_ctx_get(job->ctx, PIXSUM_PARAM_METHOD, &method);
    s->lib_carry =
        method == 0 ||
        ((!job->out_path ||
          pixsum_method_supports((int)method, PIXSUM_OP_CARRY, info->type, s->plain.type)) &&
         (!job->sq_path ||
          pixsum_method_supports((int)method, PIXSUM_OP_CARRY, info->type, s->sq.type)));
    if (!s->lib_carry && ((job->out_path && !is_int_type(s->plain.type)) ||
                          (job->sq_path && !is_int_type(s->sq.type))))
        s->strip_rows = 1;
    if (job->progress)
        cli_progress_start(&s->progress, "integral", info->height);
    s->started = 1;
    return 0;
}

static pixsum_view table_view(const integral_state *s, const table_out *t, size_t rows)
{
    size_t pad = s->job->padded ? 1 : 0;
    return pixsum_view_2d(t->strip + pad * s->info.channels * t->tsize, t->type, s->info.width,
                          rows, s->info.channels, t->stride);
}

/* The table row above the strip (pixsum_integral_carry()). */
static pixsum_view carry_view(const integral_state *s, const table_out *t)
{
    return pixsum_view_2d(t->carry, t->type, s->info.width, 1, s->info.channels, 0);
}

/* Adds the carry where the method could not (first_row > 0), keeps the
 * strip's last table row as the next strip's carry and writes the strip. */
static int table_finish_strip(integral_state *s, table_out *t, size_t rows, size_t first_row)
{
    size_t pad = s->job->padded ? 1 : 0;
    size_t n = s->info.width * s->info.channels;
    unsigned char *first = t->strip + pad * s->info.channels * t->tsize;
    if (first_row > 0 && !s->lib_carry)
        add_carry(t->type, first, t->stride, rows, t->carry, n);
    memcpy(t->carry, first + (ptrdiff_t)(rows - 1) * t->stride, n * t->tsize);
    char err[512];
    if (pxio_write_rows(t->writer, rows, t->strip, t->stride, err, sizeof err) != 0)
        return cli_error(s->job->cmd, "%s", err);
    return 0;
}

static int integral_strip(const pixsum_view *strip, size_t first_row, void *user)
{
    integral_state *s = user;
    const cli_integral_job *job = s->job;
    /* The reader's strips may be taller than ours: split them. */
    for (size_t y = 0; y < strip->height; y += s->strip_rows) {
        size_t rows = strip->height - y < s->strip_rows ? strip->height - y : s->strip_rows;
        pixsum_view part;
        int st = pixsum_view_roi(strip, 0, y, strip->width, rows, &part);
        if (st != PIXSUM_OK)
            return cli_lib_error(job->cmd, "strip", st);
        pixsum_view pv = job->out_path ? table_view(s, &s->plain, rows) : (pixsum_view){0};
        pixsum_view sv = job->sq_path ? table_view(s, &s->sq, rows) : (pixsum_view){0};
        /* below the first strip each table continues from its last row: the
         * same arithmetic as one call over the image, so the streamed table
         * equals the in-memory one bit for bit (floats included) */
        if (first_row + y > 0 && s->lib_carry) {
            pixsum_view pc = carry_view(s, &s->plain), sc = carry_view(s, &s->sq);
            st = pixsum_integral_carry(job->ctx, &part, job->out_path ? &pv : NULL,
                                       job->out_path ? &pc : NULL, job->sq_path ? &sv : NULL,
                                       job->sq_path ? &sc : NULL);
        } else if (job->sq_path) {
            st = pixsum_integral_sq(job->ctx, &part, job->out_path ? &pv : NULL, &sv);
        } else {
            st = pixsum_integral(job->ctx, &part, &pv);
        }
        if (st != PIXSUM_OK)
            return cli_lib_error(job->cmd, job->in_path, st);
        int rc;
        if (job->out_path && (rc = table_finish_strip(s, &s->plain, rows, first_row + y)) != 0)
            return rc;
        if (job->sq_path && (rc = table_finish_strip(s, &s->sq, rows, first_row + y)) != 0)
            return rc;
        if (job->progress)
            cli_progress_update(&s->progress, first_row + y + rows);
    }
    return 0;
}

/* Frees a table's buffers (its writer is committed or abandoned apart). */
static void table_free(table_out *t)
{
    free(t->strip);
    free(t->carry);
}

int cli_integral_stream(const cli_integral_job *job)
{
    integral_state s;
    memset(&s, 0, sizeof s);
    s.job = job;
    /* Each strip is computed on its own: the overflow rule was applied to the
     * whole image in integral_header(), and the strips use modular arithmetic
     * only if the caller asked for it. Strips are always inclusive. */
    pixsum_ctx_set(job->ctx, PIXSUM_PARAM_PADDED, 0);
    pixsum_ctx_set(job->ctx, PIXSUM_PARAM_WRAP, job->wrap);
    int rc = cli_stream_strips(job->cmd, job->in_path, job->in_opt, job->max_strip_bytes,
                               integral_header, integral_strip, &s);
    if (s.started && job->progress)
        cli_progress_end(&s.progress);
    /* Both tables or neither: each is finished (trailers, flush, close), and
     * only when both are whole are they renamed, back to back
     * (pxio_writer_commit_all()); an existing file of either name is never
     * removed. */
    pxio_writer *tables[2] = {s.plain.writer, s.sq.writer};
    if (rc == 0) {
        char err[512];
        if (pxio_writer_commit_all(tables, 2, err, sizeof err) != 0)
            rc = cli_error(job->cmd, "%s", err);
    } else {
        pxio_writer_abort(tables[0]);
        pxio_writer_abort(tables[1]);
    }
    table_free(&s.sq);
    table_free(&s.plain);
    return rc;
}

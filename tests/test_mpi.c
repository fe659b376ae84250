/*
 * test_mpi.c - the distributed integral images of pixsum_mpi.h against the
 * single-process library. Run under mpirun with any number of ranks (ctest
 * runs 1..4, see mpi.cmake); without MPI in the build it exits 77 (skipped).
 *
 * Every rank builds the same whole image from a seed shared by rank 0, computes
 * the whole image's table with pixsum_integral() in one process, then the
 * ranks compute it together with pixsum_mpi_integral() from strips (balanced,
 * random, with zero-row ranks at either end or in the middle, or everything on
 * one rank) and each rank compares its strip with its rows of the single-
 * process table, byte for byte. Checks are collective (all ranks agree before
 * asserting) so that a failure on one rank cannot leave the others waiting in
 * a collective call.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define PIXSUM_EXPERIMENTAL /* pixsum_mpi_set_block_bytes() */
#include "pixsum.h"

#ifndef PIXSUM_HAVE_MPI
int main(void)
{
    printf("test_mpi: this build has no MPI; skipped\n");
    return 77;
}
#else
#include "pixsum_mpi.h"

#include <mpi.h>

static int g_rank, g_size;
static uint64_t g_seed;

/* ---- collective checks --------------------------------------------------- */

/* True on every rank if `ok` is true on every rank. */
static int all_ranks(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

/* True on every rank if every rank got the same status `st`. */
static int same_status(int st, int want)
{
    int mine[2] = {st, -st}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (st != want)
        fprintf(stderr, "rank %d: status %d (%s), expected %d: %s\n", g_rank, st,
                pixsum_strerror(st), want, pixsum_last_error());
    return all_ranks(st == want) && all[0] == -all[1];
}

/* ---- a generator all ranks run alike (splitmix64) ------------------------ */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t rng_below(uint64_t *s, size_t n)
{
    return (size_t)(rng_next(s) % n);
}

/* A dimension biased to the cases that break code: 1, 2, primes, odd sizes. */
static size_t rng_dim(uint64_t *s, size_t max)
{
    static const size_t picks[] = {1, 2, 3, 5, 7, 13, 31, 33, 63, 64, 65, 127, 129};
    if (rng_below(s, 3) == 0) {
        size_t v = picks[rng_below(s, sizeof picks / sizeof picks[0])];
        return v <= max ? v : max;
    }
    return 1 + rng_below(s, max);
}

/* ---- images ----------------------------------------------------------------- */

/* Fills a packed image of n samples with random values of `type`, a tenth of
 * them extremes of the type. Float images hold values whose sums are exact in
 * the output type (see the header of pixsum_mpi.h): f32 multiples of 2^-24 in
 * [0, 1) (exact in f64 below 2^29 pixels) or, with small > 0, multiples of
 * 1/16 below 16 (exact in f32 for the sizes used here). small < 0: every
 * sample is the type's largest (unsigned) or smallest (signed) value. */
static void fill(uint64_t *s, void *data, pixsum_type type, size_t n, int small)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rng_next(s);
        int extreme = small < 0 || rng_below(s, 10) == 0; /* small < 0: all extremes */
        if (small < 0)
            r = 0; /* signed types: their minimum, the largest magnitude */
        switch (type) {
        case PIXSUM_U8: ((uint8_t *)data)[i] = extreme ? 255 : (uint8_t)r; break;
        case PIXSUM_U16: ((uint16_t *)data)[i] = extreme ? 65535 : (uint16_t)r; break;
        case PIXSUM_I16:
            ((int16_t *)data)[i] = extreme ? (r & 1 ? INT16_MIN : INT16_MAX) : (int16_t)r;
            break;
        case PIXSUM_I32:
            ((int32_t *)data)[i] = extreme ? (r & 1 ? INT32_MIN : INT32_MAX) : (int32_t)r;
            break;
        case PIXSUM_U32: ((uint32_t *)data)[i] = extreme ? UINT32_MAX : (uint32_t)r; break;
        case PIXSUM_F32:
            ((float *)data)[i] = small ? (float)(r % 256) / 16.0f
                                       : (float)((double)(r >> 40) / 16777216.0);
            break;
        case PIXSUM_F64:
            ((double *)data)[i] = small ? (double)(r % 256) / 16.0
                                        : (double)(r >> 40) / 16777216.0 - 0.5;
            break;
        default: break;
        }
    }
}

/* How the rows are split over the ranks. */
enum split_mode {
    SPLIT_BALANCED,
    SPLIT_RANDOM,
    SPLIT_ZERO_FIRST, /* rank 0 holds no rows */
    SPLIT_ZERO_LAST,  /* the last rank holds no rows */
    SPLIT_ZERO_MIDDLE,
    SPLIT_ONE_RANK, /* one random rank holds everything */
    SPLIT_MODES
};

/* Row counts of every rank for `mode` (same on every rank: shared seed). */
static void split(uint64_t *s, enum split_mode mode, size_t height, size_t *rows)
{
    int p = g_size;
    memset(rows, 0, (size_t)p * sizeof *rows);
    if (mode == SPLIT_BALANCED || p == 1) {
        for (int r = 0; r < p; r++) {
            size_t first;
            pixsum_mpi_split_rows(height, p, r, &first, &rows[r]);
        }
        return;
    }
    if (mode == SPLIT_ONE_RANK) {
        rows[rng_below(s, (size_t)p)] = height;
        return;
    }
    int skip = mode == SPLIT_ZERO_FIRST  ? 0
               : mode == SPLIT_ZERO_LAST ? p - 1
               : mode == SPLIT_ZERO_MIDDLE ? p / 2
                                           : -1;
    /* Random cut points among the ranks that take rows. */
    size_t left = height;
    for (int r = 0; r < p; r++) {
        if (r == skip)
            continue;
        int last = r == p - 1 || (r == p - 2 && skip == p - 1);
        size_t take = last ? left : rng_below(s, left + 1);
        rows[r] = take;
        left -= take;
    }
}

/* One random configuration of the distributed integral, checked against the
 * single-process table. Returns 1 if this rank's strip matches. */
struct config {
    pixsum_type in, out, sq;      /* sq: PIXSUM_TYPE_NONE = plain table only */
    int plain;                    /* with sq: also the plain table */
    size_t width, height, channels;
    size_t stride_pad;            /* extra bytes per input and output row */
    int padded, wrap, small;
    int bottom_up;                /* input rows stored last-first (negative stride) */
    const char *method;
    enum split_mode mode;
};

static int rows_equal(const pixsum_view *a, size_t ay, const pixsum_view *b, size_t by,
                      size_t bytes)
{
    return memcmp((const char *)a->data + (ptrdiff_t)ay * a->row_stride,
                  (const char *)b->data + (ptrdiff_t)by * b->row_stride, bytes) == 0;
}

static int run_config(uint64_t *s, const struct config *c)
{
    size_t esz = pixsum_type_size(c->in), W = c->width, H = c->height, C = c->channels;
    size_t in_row = W * C * esz + c->stride_pad;
    unsigned char *whole = malloc(H * in_row + 1);
    for (size_t y = 0; y < H; y++)
        fill(s, whole + y * in_row, c->in, W * C, c->small);
    pixsum_view in = pixsum_view_2d(whole, c->in, W, H, C, (ptrdiff_t)in_row);
    if (c->bottom_up) {
        in.data = whole + (H - 1) * in_row;
        in.row_stride = -(ptrdiff_t)in_row;
    }

    pixsum_ctx *ctx = pixsum_ctx_new();
    pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, c->padded);
    pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, c->wrap);
    size_t pad = c->padded ? 1 : 0, TW = W + pad, TH = H + pad;

    /* The single-process tables (plain and/or squared). */
    pixsum_type types[2] = {c->sq == PIXSUM_TYPE_NONE || c->plain ? c->out : PIXSUM_TYPE_NONE,
                            c->sq};
    pixsum_view ref[2], strip_out[2];
    unsigned char *ref_data[2] = {NULL, NULL}, *strip_data[2] = {NULL, NULL};
    for (int t = 0; t < 2; t++) {
        if (types[t] == PIXSUM_TYPE_NONE)
            continue;
        size_t rb = TW * C * pixsum_type_size(types[t]);
        ref_data[t] = malloc(TH * rb);
        ref[t] = pixsum_view_2d(ref_data[t], types[t], TW, TH, C, (ptrdiff_t)rb);
    }
    /* A method may refuse some jobs its types allow (channels, sizes): then
     * the distributed call runs with auto, as a user would. The reference is
     * computed after this probe, with auto. */
    const char *method = c->method;
    if (c->sq == PIXSUM_TYPE_NONE) {
        pixsum_ctx *probe = pixsum_ctx_new();
        pixsum_ctx_set(probe, PIXSUM_PARAM_PADDED, c->padded);
        pixsum_ctx_set(probe, PIXSUM_PARAM_WRAP, c->wrap);
        pixsum_ctx_set_method(probe, method);
        if (pixsum_integral(probe, &in, &ref[0]) != PIXSUM_OK)
            method = "auto";
        pixsum_ctx_free(probe);
    } else {
        pixsum_ctx *probe = pixsum_ctx_new();
        pixsum_ctx_set(probe, PIXSUM_PARAM_PADDED, c->padded);
        pixsum_ctx_set(probe, PIXSUM_PARAM_WRAP, c->wrap);
        pixsum_ctx_set_method(probe, method);
        if (pixsum_integral_sq(probe, &in, c->plain ? &ref[0] : NULL, &ref[1]) != PIXSUM_OK)
            method = "auto";
        pixsum_ctx_free(probe);
    }
    int st = c->sq == PIXSUM_TYPE_NONE
                 ? pixsum_integral(ctx, &in, &ref[0])
                 : pixsum_integral_sq(ctx, &in, c->plain ? &ref[0] : NULL, &ref[1]);
    int ok = st == PIXSUM_OK;
    if (!ok)
        fprintf(stderr, "single-process reference failed: %s\n", pixsum_last_error());

    /* This rank's strip. */
    size_t *rows = calloc((size_t)g_size, sizeof *rows);
    split(s, c->mode, H, rows);
    size_t first = 0;
    for (int r = 0; r < g_rank; r++)
        first += rows[r];
    size_t h = rows[g_rank];
    pixsum_view strip = in;
    strip.height = h;
    strip.data = h ? (unsigned char *)in.data + (ptrdiff_t)first * in.row_stride : NULL;
    size_t out_first = first + (c->padded && g_rank > 0 ? 1 : 0);
    size_t out_h = h + (c->padded && g_rank == 0 ? 1 : 0);
    for (int t = 0; t < 2; t++) {
        if (types[t] == PIXSUM_TYPE_NONE)
            continue;
        size_t rb = TW * C * pixsum_type_size(types[t]) + c->stride_pad;
        strip_data[t] = malloc(out_h * rb + 1);
        memset(strip_data[t], 0xA5, out_h * rb + 1); /* garbage the call must overwrite */
        strip_out[t] = pixsum_view_2d(out_h ? strip_data[t] : NULL, types[t], TW, out_h, C,
                                      (ptrdiff_t)rb);
    }
    pixsum_ctx_set_method(ctx, method);
    /* Block sizes of the local pass: one row per block, a few rows, the whole
     * strip (then a separate offset pass) or the library's choice. */
    static const size_t blocks[] = {1, 3000, 0, PIXSUM_MPI_BLOCK_AUTO};
    pixsum_mpi_set_block_bytes(blocks[rng_below(s, 4)]);
    st = c->sq == PIXSUM_TYPE_NONE
             ? pixsum_mpi_integral(ctx, &strip, &strip_out[0], MPI_COMM_WORLD)
             : pixsum_mpi_integral_sq(ctx, &strip, c->plain ? &strip_out[0] : NULL,
                                      &strip_out[1], MPI_COMM_WORLD);
    if (st != PIXSUM_OK) {
        fprintf(stderr, "rank %d: pixsum_mpi_integral: %s\n", g_rank, pixsum_last_error());
        ok = 0;
    }
    for (int t = 0; t < 2 && ok; t++) {
        if (types[t] == PIXSUM_TYPE_NONE)
            continue;
        size_t bytes = TW * C * pixsum_type_size(types[t]);
        for (size_t y = 0; y < out_h && ok; y++) {
            if (!rows_equal(&strip_out[t], y, &ref[t], out_first + y, bytes)) {
                fprintf(stderr,
                        "rank %d: %s row %zu differs (%s->%s %zux%zux%zu padded %d wrap %d "
                        "method %s split %d, %zu rows from %zu; seed %llu)\n",
                        g_rank, t ? "squared" : "plain", out_first + y,
                        pixsum_type_name(c->in), pixsum_type_name(types[t]), W, H, C,
                        c->padded, c->wrap, c->method, (int)c->mode, h, first,
                        (unsigned long long)g_seed);
                ok = 0;
            }
        }
    }
    for (int t = 0; t < 2; t++) {
        free(ref_data[t]);
        free(strip_data[t]);
    }
    free(rows);
    free(whole);
    pixsum_ctx_free(ctx);
    return ok;
}

/* A method that can compute this pair, chosen at random (auto included). */
static const char *pick_method(uint64_t *s, pixsum_op op, pixsum_type in, pixsum_type out)
{
    size_t count;
    const pixsum_method_info *m = pixsum_methods(&count);
    const char *names[64];
    size_t n = 0;
    names[n++] = "auto";
    for (size_t i = 0; i < count && n < 64; i++)
        if (m[i].available && pixsum_method_supports(m[i].id, op, in, out))
            names[n++] = m[i].name;
    return names[rng_below(s, n)];
}

static const struct {
    pixsum_type in, out;
    int small;
} pairs[] = {
    {PIXSUM_U8, PIXSUM_U32, 0},  {PIXSUM_U8, PIXSUM_U64, 0},  {PIXSUM_U8, PIXSUM_I64, 0},
    {PIXSUM_U8, PIXSUM_F64, 0},  {PIXSUM_U16, PIXSUM_U32, 0}, {PIXSUM_U16, PIXSUM_U64, 0},
    {PIXSUM_I16, PIXSUM_I64, 0}, {PIXSUM_I32, PIXSUM_I64, 0}, {PIXSUM_U32, PIXSUM_U64, 0},
    {PIXSUM_F32, PIXSUM_F64, 0}, {PIXSUM_F32, PIXSUM_F32, 1}, {PIXSUM_F64, PIXSUM_F64, 0},
};

/* Random sizes, types, channels, strides, layouts, methods and splits. */
static void test_integral_matches_single_process(void **state)
{
    (void)state;
    uint64_t s = g_seed;
    for (int iter = 0; iter < 100; iter++) {
        struct config c;
        memset(&c, 0, sizeof c);
        size_t p = rng_below(&s, sizeof pairs / sizeof pairs[0]);
        c.in = pairs[p].in;
        c.out = pairs[p].out;
        c.small = pairs[p].small;
        c.sq = PIXSUM_TYPE_NONE;
        c.width = rng_dim(&s, 200);
        /* Often fewer rows than ranks, so some ranks hold none. */
        c.height = rng_below(&s, 4) == 0 ? 1 + rng_below(&s, (size_t)g_size + 1)
                                         : rng_dim(&s, 150);
        c.channels = 1 + rng_below(&s, 4);
        c.stride_pad = rng_below(&s, 2) ? 0 : 8 * (1 + rng_below(&s, 3));
        c.bottom_up = rng_below(&s, 4) == 0;
        c.padded = (int)rng_below(&s, 2);
        c.wrap = pixsum_integral_check(c.in, c.out, c.width * c.height, 0) != PIXSUM_OK ||
                 rng_below(&s, 2);
        c.method = pick_method(&s, PIXSUM_OP_INTEGRAL, c.in, c.out);
        c.mode = (enum split_mode)(iter % SPLIT_MODES);
        assert_true(all_ranks(run_config(&s, &c)));
    }
}

/* Squared tables, alone and with the plain one. */
static void test_integral_sq_matches_single_process(void **state)
{
    (void)state;
    static const struct {
        pixsum_type in, out, sq;
        int small;
    } sq_pairs[] = {
        {PIXSUM_U8, PIXSUM_U32, PIXSUM_U64, 0},
        {PIXSUM_U16, PIXSUM_U64, PIXSUM_U64, 0},
        {PIXSUM_I16, PIXSUM_I64, PIXSUM_U64, 0},
        {PIXSUM_F32, PIXSUM_F64, PIXSUM_F64, 1},
    };
    uint64_t s = g_seed ^ 0x5157;
    for (int iter = 0; iter < 30; iter++) {
        struct config c;
        memset(&c, 0, sizeof c);
        size_t p = rng_below(&s, sizeof sq_pairs / sizeof sq_pairs[0]);
        c.in = sq_pairs[p].in;
        c.out = sq_pairs[p].out;
        c.sq = sq_pairs[p].sq;
        c.small = sq_pairs[p].small;
        c.plain = (int)rng_below(&s, 2);
        c.width = rng_dim(&s, 120);
        c.height = rng_dim(&s, 90);
        c.channels = 1 + rng_below(&s, 4);
        c.stride_pad = rng_below(&s, 2) ? 0 : 16;
        c.padded = (int)rng_below(&s, 2);
        c.method = pick_method(&s, PIXSUM_OP_INTEGRAL_SQ, c.in, c.sq);
        c.mode = (enum split_mode)(iter % SPLIT_MODES);
        assert_true(all_ranks(run_config(&s, &c)));
    }
}

/* Tall strips of extreme values: the column sums of pass 1 are taken in 16-
 * and 32-bit lanes over chunks of 257 (u8) and 65535/65536 (u16, i16, u8
 * squared) rows; strips longer than a chunk must still give the exact table. */
static void test_tall_strips_of_extremes(void **state)
{
    (void)state;
    static const struct {
        pixsum_type in, out, sq;
        size_t width, height;
    } cases[] = {
        {PIXSUM_U8, PIXSUM_U32, PIXSUM_TYPE_NONE, 5, 1300},
        {PIXSUM_U8, PIXSUM_U64, PIXSUM_U64, 2, 65536 * 2 + 300},
        {PIXSUM_U16, PIXSUM_U64, PIXSUM_TYPE_NONE, 3, 65536 * 2 + 17},
        {PIXSUM_I16, PIXSUM_I64, PIXSUM_TYPE_NONE, 2, 65535 * 2 + 9},
    };
    uint64_t s = g_seed ^ 0x7a11;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct config c;
        memset(&c, 0, sizeof c);
        c.in = cases[k].in;
        c.out = cases[k].out;
        c.sq = cases[k].sq;
        c.plain = 1;
        c.small = -1;
        c.width = cases[k].width;
        c.height = cases[k].height;
        c.channels = 1 + k % 2;
        c.method = "auto";
        c.mode = SPLIT_BALANCED;
        assert_true(all_ranks(run_config(&s, &c)));
        c.mode = SPLIT_ZERO_FIRST;
        assert_true(all_ranks(run_config(&s, &c)));
    }
}

/* The overflow check uses the whole image: two rows of 9e6 u8 pixels fit u32
 * one at a time but not together. Without wrap every rank refuses; with wrap
 * the table is the exact modular one (an all-255 image: 255 (x+1)(y+1)). */
static void test_overflow_is_global(void **state)
{
    (void)state;
    const size_t W = 9000000, H = 2;
    size_t first, h;
    pixsum_mpi_split_rows(H, g_size, g_rank, &first, &h);
    uint8_t *in_data = h ? malloc(W * h) : NULL;
    uint32_t *out_data = h ? malloc(W * h * 4) : NULL;
    if (h)
        memset(in_data, 255, W * h);
    pixsum_view in = pixsum_view_2d(in_data, PIXSUM_U8, W, h, 1, 0);
    pixsum_view out = pixsum_view_2d(out_data, PIXSUM_U32, W, h, 1, 0);
    pixsum_ctx *ctx = pixsum_ctx_new();
    int st = pixsum_mpi_integral(ctx, &in, &out, MPI_COMM_WORLD);
    assert_true(same_status(st, PIXSUM_ERR_OVERFLOW));

    pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 1);
    st = pixsum_mpi_integral(ctx, &in, &out, MPI_COMM_WORLD);
    assert_true(same_status(st, PIXSUM_OK));
    /* What this rank put into the scan: one u32 row; at least one block of
     * local table where it holds rows. */
    pixsum_mpi_stats stats;
    pixsum_mpi_last_stats(&stats);
    assert_true(all_ranks(stats.bytes_scanned == W * 4 && (h == 0) == (stats.blocks == 0) &&
                          stats.wall[2] >= 0 && stats.cpu[0] >= 0));
    int ok = 1;
    for (size_t y = 0; y < h && ok; y++)
        for (size_t x = 0; x < W; x++)
            if (out_data[y * W + x] != (uint32_t)(255u * (uint64_t)(x + 1) * (first + y + 1))) {
                fprintf(stderr, "rank %d: wrong wrapped value at (%zu, %zu)\n", g_rank, x,
                        first + y);
                ok = 0;
                break;
            }
    assert_true(all_ranks(ok));
    pixsum_ctx_free(ctx);
    free(in_data);
    free(out_data);
}

/* Bad arguments on one rank make every rank fail with the same status, and
 * outputs stay untouched. */
static void test_errors_are_collective(void **state)
{
    (void)state;
    const size_t W = 17, H = 11;
    size_t first, h;
    pixsum_mpi_split_rows(H, g_size, g_rank, &first, &h);
    uint8_t in_data[17 * 11];
    uint32_t out_data[17 * 12];
    memset(in_data, 7, sizeof in_data);
    memset(out_data, 0xA5, sizeof out_data);
    pixsum_view in = pixsum_view_2d(h ? in_data : NULL, PIXSUM_U8, W, h, 1, 0);
    pixsum_view out = pixsum_view_2d(h ? out_data : NULL, PIXSUM_U32, W, h, 1, 0);
    int last = g_size - 1;

    /* The last rank describes another width. */
    pixsum_view in2 = in, out2 = out;
    if (g_rank == last && g_size > 1) {
        in2.width = out2.width = W - 1;
    }
    int st = pixsum_mpi_integral(NULL, &in2, &out2, MPI_COMM_WORLD);
    assert_true(same_status(st, g_size > 1 ? PIXSUM_ERR_BAD_SHAPE : PIXSUM_OK));
    memset(out_data, 0xA5, sizeof out_data);

    /* NULL output on the last rank only. */
    st = pixsum_mpi_integral(NULL, &in, g_rank == last ? NULL : &out, MPI_COMM_WORLD);
    assert_true(same_status(st, PIXSUM_ERR_NULL));
    int untouched = 1;
    for (size_t i = 0; i < sizeof out_data / 4; i++)
        untouched &= out_data[i] == 0xA5A5A5A5u;
    assert_true(all_ranks(untouched));

    /* An output strip of the wrong height on rank 0. */
    pixsum_view tall = out;
    if (g_rank == 0) {
        tall.data = out_data;
        tall.height = h + 1;
    }
    st = pixsum_mpi_integral(NULL, &in, &tall, MPI_COMM_WORLD);
    assert_true(same_status(st, PIXSUM_ERR_BAD_SHAPE));

    /* Unsupported pair (u8 -> u8 table). */
    pixsum_view bad_type = out;
    bad_type.type = PIXSUM_U8;
    st = pixsum_mpi_integral(NULL, &in, &bad_type, MPI_COMM_WORLD);
    assert_true(same_status(st, PIXSUM_ERR_BAD_TYPE));

    /* Output overlapping the input on the rank with rows. */
    pixsum_view overlap = out;
    if (h)
        overlap.data = in_data;
    st = pixsum_mpi_integral(NULL, &in, &overlap, MPI_COMM_WORLD);
    assert_true(same_status(st, PIXSUM_ERR_ALIASING));

    /* No rank holds a row. */
    pixsum_view none_in = pixsum_view_2d(NULL, PIXSUM_U8, W, 0, 1, 0);
    pixsum_view none_out = pixsum_view_2d(NULL, PIXSUM_U32, W, 0, 1, 0);
    st = pixsum_mpi_integral(NULL, &none_in, &none_out, MPI_COMM_WORLD);
    assert_true(same_status(st, PIXSUM_ERR_BAD_SHAPE));

    /* Different wrap settings. */
    pixsum_ctx *ctx = pixsum_ctx_new();
    pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, g_rank == last ? 1 : 0);
    st = pixsum_mpi_integral(ctx, &in, &out, MPI_COMM_WORLD);
    assert_true(same_status(st, g_size > 1 ? PIXSUM_ERR_BAD_SHAPE : PIXSUM_OK));
    pixsum_ctx_free(ctx);

    /* 3-D strips are refused. */
    pixsum_view vol = in;
    vol.depth = 2;
    vol.slice_stride = (ptrdiff_t)(W * H);
    st = pixsum_mpi_integral(NULL, &vol, &out, MPI_COMM_WORLD);
    assert_true(same_status(st, PIXSUM_ERR_BAD_SHAPE));

    /* The ctx's padded setting survives the call. */
    ctx = pixsum_ctx_new();
    pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, 1);
    uint32_t pout[18 * 12];
    pixsum_view pv = pixsum_view_2d(pout, PIXSUM_U32, W + 1, h + (g_rank == 0), 1, 0);
    st = pixsum_mpi_integral(ctx, &in, &pv, MPI_COMM_WORLD);
    assert_true(same_status(st, PIXSUM_OK));
    intptr_t padded = 0;
    pixsum_ctx_get(ctx, PIXSUM_PARAM_PADDED, &padded);
    assert_true(all_ranks(padded == 1));
    pixsum_ctx_free(ctx);
}

/* The balanced split covers the rows once, in order; the row offset agrees. */
static void test_split_and_offset(void **state)
{
    (void)state;
    for (size_t total = 0; total < 50; total += 7) {
        for (int p = 1; p <= 9; p++) {
            size_t next = 0, lo = (size_t)-1, hi = 0;
            for (int r = 0; r < p; r++) {
                size_t first, count;
                assert_int_equal(pixsum_mpi_split_rows(total, p, r, &first, &count), PIXSUM_OK);
                assert_int_equal(first, next);
                next += count;
                lo = count < lo ? count : lo;
                hi = count > hi ? count : hi;
            }
            assert_int_equal(next, total);
            assert_true(hi - lo <= 1);
        }
    }
    size_t first, count;
    assert_int_equal(pixsum_mpi_split_rows(10, 0, 0, &first, &count), PIXSUM_ERR_INVALID_ARG);
    assert_int_equal(pixsum_mpi_split_rows(10, 2, 2, &first, &count), PIXSUM_ERR_INVALID_ARG);
    assert_int_equal(pixsum_mpi_split_rows(10, 2, 1, NULL, &count), PIXSUM_ERR_NULL);

    size_t mine = (size_t)g_rank * 3 + 1, off = 0, total = 0;
    assert_true(same_status(pixsum_mpi_row_offset(mine, &off, &total, MPI_COMM_WORLD),
                            PIXSUM_OK));
    size_t want_off = 0;
    for (int r = 0; r < g_rank; r++)
        want_off += (size_t)r * 3 + 1;
    size_t want_total = 0;
    for (int r = 0; r < g_size; r++)
        want_total += (size_t)r * 3 + 1;
    assert_true(all_ranks(off == want_off && total == want_total));

    int lr = -1, ls = -1;
    assert_true(same_status(pixsum_mpi_local_rank(MPI_COMM_WORLD, &lr, &ls), PIXSUM_OK));
    assert_true(all_ranks(lr >= 0 && lr < ls && ls <= g_size));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    unsigned long long seed = 0;
    if (g_rank == 0) {
        const char *env = getenv("PIXSUM_TEST_SEED");
        seed = env ? strtoull(env, NULL, 10) : (unsigned long long)time(NULL);
        printf("test_mpi: %d ranks, seed %llu (replay with PIXSUM_TEST_SEED=%llu)\n", g_size,
               seed, seed);
        fflush(stdout);
    }
    MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    g_seed = seed;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_and_offset),
        cmocka_unit_test(test_integral_matches_single_process),
        cmocka_unit_test(test_integral_sq_matches_single_process),
        cmocka_unit_test(test_tall_strips_of_extremes),
        cmocka_unit_test(test_overflow_is_global),
        cmocka_unit_test(test_errors_are_collective),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return failed ? 1 : 0;
}
#endif

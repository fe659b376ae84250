/*
 * mpi_integral.c - distributed integral images (pixsum_mpi_integral,
 * pixsum_mpi_integral_sq).
 *
 * Each rank holds a strip of rows. After a collective agreement on shapes and
 * types (so every rank returns the same status), the work is two passes over
 * the strip:
 *   1. one read of the input gives the strip's column sums, prefix-summed along
 *      the row: the last row its inclusive table would have. An exclusive scan
 *      over the ranks (MPI_Exscan) gives each rank the sum of those rows over
 *      the ranks before it, its offset row, since
 *        I(x, y) = sum over earlier strips of their last row(x) + local(x, y);
 *   2. the local table is computed with pixsum_integral[_sq]() (the context's
 *      method) block by block, and each block, still in the cache, gets the
 *      offset row (first block) or the final last row of the block above added.
 * So the table is written once, not written and then read again to add the
 * offset, and only one row per rank and table travels.
 * The scan's operators are exact in the output type: modular unsigned adds for
 * integer tables (u32 in 32 bits, u64 and i64 in 64 bits) and double-double
 * adds for float tables, rounded once into the offset row.
 */
#define PIXSUM_EXPERIMENTAL /* defines pixsum_mpi_set_block_bytes() */
#include "mpi_internal.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- per-call statistics (pixsum_mpi_last_stats) ------------------------- */

static _Thread_local pixsum_mpi_stats last_stats;

void pixsum_mpi_last_stats(pixsum_mpi_stats *stats)
{
    if (stats)
        *stats = last_stats;
}

static double thread_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Closes phase `k` opened at (*wall, *cpu) and opens the next one. */
static void phase_end(int k, double *wall, double *cpu)
{
    double w = MPI_Wtime(), c = thread_cpu_seconds();
    last_stats.wall[k] += w - *wall;
    last_stats.cpu[k] += c - *cpu;
    *wall = w;
    *cpu = c;
}

/* ---- the scan's element kinds and operators ---------------------------- */

typedef enum scan_kind { SCAN_U32, SCAN_U64, SCAN_DD } scan_kind;

static scan_kind scan_kind_of(pixsum_type out)
{
    if (out == PIXSUM_U32)
        return SCAN_U32;
    if (out == PIXSUM_U64 || out == PIXSUM_I64)
        return SCAN_U64;
    return SCAN_DD;
}

static size_t scan_elem_bytes(scan_kind k)
{
    return k == SCAN_U32 ? 4 : k == SCAN_U64 ? 8 : 16;
}

/* The MPI user operators: inout[i] = in[i] + inout[i]. */
static void op_add_u32(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const uint32_t *a = in;
    uint32_t *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = a[i] + b[i]; /* unsigned: modular by definition */
}

static void op_add_u64(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const uint64_t *a = in;
    uint64_t *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = a[i] + b[i];
}

/* Double-double addition: (hi, lo) pairs whose sum hi + lo carries about 106
 * bits, so the offsets of float tables do not depend on how MPI associates
 * the scan. Non-finite sums keep their hi part and a zero lo. */
static void dd_add(const double *a, double *b)
{
    double s = a[0] + b[0];
    if (!isfinite(s)) {
        b[0] = s;
        b[1] = 0.0;
        return;
    }
    double bv = s - a[0];
    double err = (a[0] - (s - bv)) + (b[0] - bv); /* two-sum error term */
    err += a[1] + b[1];
    double hi = s + err;
    b[1] = err - (hi - s);
    b[0] = hi;
}

static void op_add_dd(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const double *a = in;
    double *b = inout;
    for (int i = 0; i < *len; i++)
        dd_add(a + 2 * i, b + 2 * i);
}

/* An exclusive scan of n elements of `kind`, in chunks of at most INT_MAX / 2
 * elements (every rank has the same n, so all make the same calls). */
static int exscan(const void *send, void *recv, size_t n, scan_kind kind, MPI_Comm comm)
{
    MPI_Datatype type = MPI_UINT32_T;
    MPI_Op op = MPI_OP_NULL;
    int rc, st = PIXSUM_OK;
    if (kind == SCAN_U64)
        type = MPI_UINT64_T;
    if (kind == SCAN_DD) {
        if ((rc = MPI_Type_contiguous(2, MPI_DOUBLE, &type)) != MPI_SUCCESS)
            return psm_mpi_fail(rc, "MPI_Type_contiguous");
        if ((rc = MPI_Type_commit(&type)) != MPI_SUCCESS) {
            MPI_Type_free(&type);
            return psm_mpi_fail(rc, "MPI_Type_commit");
        }
    }
    MPI_User_function *fn = kind == SCAN_U32   ? op_add_u32
                            : kind == SCAN_U64 ? op_add_u64
                                               : op_add_dd;
    /* Integer adds are commutative; the double-double one is declared
     * non-commutative so MPI keeps rank order. */
    if ((rc = MPI_Op_create(fn, kind != SCAN_DD, &op)) != MPI_SUCCESS) {
        st = psm_mpi_fail(rc, "MPI_Op_create");
        goto done;
    }
    size_t eb = scan_elem_bytes(kind), chunk = (size_t)INT_MAX / 2;
    for (size_t off = 0; off < n; off += chunk) {
        size_t cnt = n - off < chunk ? n - off : chunk;
        rc = MPI_Exscan((const char *)send + off * eb, (char *)recv + off * eb, (int)cnt, type,
                        op, comm);
        if (rc != MPI_SUCCESS) {
            st = psm_mpi_fail(rc, "MPI_Exscan");
            break;
        }
    }
    MPI_Op_free(&op);
done:
    if (kind == SCAN_DD)
        MPI_Type_free(&type);
    return st;
}

/* ---- pass 1: the scan vector from the input ------------------------------ */

/* Column sums of the strip's samples (squared = 1: of their squares), in
 * modular 64-bit integers (acc_u, integer tables) or doubles (acc_d, float
 * tables). One streaming read of the input. */
#define COLSUM_LOOP(T)                                                            \
    for (size_t y = 0; y < in->height; y++) {                                     \
        const T *restrict r = (const T *)psi_row(in, y, 0);                       \
        if (acc_u && squared)                                                     \
            for (size_t i = 0; i < n; i++) {                                      \
                uint64_t v = (uint64_t)(int64_t)r[i];                             \
                acc_u[i] += v * v;                                                \
            }                                                                     \
        else if (acc_u)                                                           \
            for (size_t i = 0; i < n; i++)                                        \
                acc_u[i] += (uint64_t)(int64_t)r[i];                              \
        else if (squared)                                                         \
            for (size_t i = 0; i < n; i++)                                        \
                acc_d[i] += (double)r[i] * (double)r[i];                          \
        else                                                                      \
            for (size_t i = 0; i < n; i++)                                        \
                acc_d[i] += (double)r[i];                                         \
    }

/* Narrow column sums for small integer samples: a chunk of rows is summed in
 * 16- or 32-bit lanes (more samples per vector register), chosen so that a
 * chunk cannot overflow them, then folded into the 64-bit sums. */
#define NARROW_LOOP(T, A, CHUNK, EXPR)                                            \
    for (size_t y0 = 0; y0 < in->height; y0 += (CHUNK)) {                         \
        A *restrict nacc = narrow;                                                \
        size_t y1 = in->height - y0 < (CHUNK) ? in->height : y0 + (CHUNK);        \
        memset(nacc, 0, n * sizeof(A));                                           \
        for (size_t y = y0; y < y1; y++) {                                        \
            const T *restrict r = (const T *)psi_row(in, y, 0);                   \
            for (size_t i = 0; i < n; i++) {                                      \
                A v = (A)r[i];                                                    \
                nacc[i] += (A)(EXPR);                                             \
            }                                                                     \
        }                                                                         \
        for (size_t i = 0; i < n; i++)                                            \
            acc_u[i] += (uint64_t)(int64_t)nacc[i];                               \
    }

/* Returns true if it summed the strip (integer tables of u8/u16/i16 input). */
static bool column_sums_narrow(const pixsum_view *in, int squared, uint64_t *restrict acc_u,
                               size_t n, void *restrict narrow)
{
    if (!acc_u)
        return false;
    if (in->type == PIXSUM_U8 && !squared) {
        NARROW_LOOP(uint8_t, uint16_t, 257, v) /* 257 x 255 < 2^16 */
    } else if (in->type == PIXSUM_U8) {
        NARROW_LOOP(uint8_t, uint32_t, 65536, v * v) /* 65536 x 255^2 < 2^32 */
    } else if (in->type == PIXSUM_U16 && !squared) {
        NARROW_LOOP(uint16_t, uint32_t, 65536, v) /* 65536 x 65535 < 2^32 */
    } else if (in->type == PIXSUM_I16 && !squared) {
        NARROW_LOOP(int16_t, int32_t, 65535, v) /* 65535 x 32768 < 2^31 */
    } else {
        return false;
    }
    return true;
}
#undef NARROW_LOOP

static void column_sums(const pixsum_view *in, int squared, uint64_t *restrict acc_u,
                        double *restrict acc_d, size_t n, void *restrict narrow)
{
    if (column_sums_narrow(in, squared, acc_u, n, narrow))
        return;
    switch (in->type) {
    case PIXSUM_U8: COLSUM_LOOP(uint8_t) break;
    case PIXSUM_U16: COLSUM_LOOP(uint16_t) break;
    case PIXSUM_I16: COLSUM_LOOP(int16_t) break;
    case PIXSUM_I32: COLSUM_LOOP(int32_t) break;
    case PIXSUM_U32: COLSUM_LOOP(uint32_t) break;
    case PIXSUM_F32: COLSUM_LOOP(float) break;
    case PIXSUM_F64: COLSUM_LOOP(double) break;
    default: break;
    }
}
#undef COLSUM_LOOP

/* The vector this rank contributes to the scan of a table of type `out`: the
 * last row of its strip's inclusive table, i.e. the column sums prefix-summed
 * along the row (per channel), in the scan's element kind; zeros for a strip
 * without rows. `scratch` holds n 8-byte and n 4-byte elements. */
static void scan_vector(const pixsum_view *in, int squared, pixsum_type out, void *vec,
                        size_t n, void *scratch)
{
    scan_kind kind = scan_kind_of(out);
    size_t ch = in->channels;
    uint64_t *acc_u = kind == SCAN_DD ? NULL : scratch;
    double *acc_d = kind == SCAN_DD ? scratch : NULL;
    memset(scratch, 0, n * 8);
    column_sums(in, squared, acc_u, acc_d, n, (char *)scratch + n * 8);
    for (size_t i = ch; i < n; i++) {
        if (acc_u)
            acc_u[i] += acc_u[i - ch];
        else
            acc_d[i] += acc_d[i - ch];
    }
    if (kind == SCAN_U32) {
        uint32_t *v = vec;
        for (size_t i = 0; i < n; i++)
            v[i] = (uint32_t)acc_u[i];
    } else if (kind == SCAN_U64) {
        memcpy(vec, acc_u, n * 8);
    } else {
        double *v = vec;
        for (size_t i = 0; i < n; i++) {
            v[2 * i] = acc_d[i];
            v[2 * i + 1] = 0.0;
        }
    }
}

/* Turns a scan result (kind of `type`) into a row of `type`, in place: float
 * offsets are rounded once, from the double-double sum. */
static void offset_row(void *vec, size_t n, pixsum_type type)
{
    if (type == PIXSUM_F64 || type == PIXSUM_F32) {
        double *d = vec;
        for (size_t i = 0; i < n; i++) {
            double v = d[2 * i] + d[2 * i + 1];
            if (type == PIXSUM_F64)
                d[i] = v;
            else
                ((float *)vec)[i] = (float)v; /* index i < 2i: never overwrites unread pairs */
        }
    }
}

/* ---- pass 2: local tables, block by block, plus the carried row ---------- */

/* Adds `carry` (a row of t's type) to each of the rows of t, in t's own
 * arithmetic (modular for integer tables). */
static void add_row(const pixsum_view *t, const void *carry)
{
    size_t n = psi_row_samples(t);
    for (size_t y = 0; y < t->height; y++) {
        void *row = psi_row(t, y, 0);
        switch (t->type) {
        case PIXSUM_U32: {
            uint32_t *restrict r = row;
            const uint32_t *restrict o = carry;
            for (size_t i = 0; i < n; i++)
                r[i] += o[i];
            break;
        }
        case PIXSUM_U64:
        case PIXSUM_I64: { /* i64 added as its unsigned twin: modular, never UB */
            uint64_t *restrict r = row;
            const uint64_t *restrict o = carry;
            for (size_t i = 0; i < n; i++)
                r[i] += o[i];
            break;
        }
        case PIXSUM_F32: {
            float *restrict r = row;
            const float *restrict o = carry;
            for (size_t i = 0; i < n; i++)
                r[i] += o[i];
            break;
        }
        case PIXSUM_F64: {
            double *restrict r = row;
            const double *restrict o = carry;
            for (size_t i = 0; i < n; i++)
                r[i] += o[i];
            break;
        }
        default:
            break;
        }
    }
}

/* Table bytes per block: small enough that a block is still in the cache when
 * the carried row is added to it (single-threaded CPU methods), larger where
 * threads or a GPU need more work per call. pixsum_mpi_set_block_bytes()
 * (experimental, for tests) overrides it (0 = the whole strip in one call, then
 * a separate pass for the offset). */
#define BLOCK_BYTES_SERIAL ((size_t)512 << 10)
#define BLOCK_BYTES_PARALLEL ((size_t)16 << 20)

static size_t forced_block_bytes = PIXSUM_MPI_BLOCK_AUTO;

void pixsum_mpi_set_block_bytes(size_t bytes)
{
    __atomic_store_n(&forced_block_bytes, bytes, __ATOMIC_RELAXED);
}

static size_t block_bytes(const pixsum_ctx *ctx)
{
    size_t forced = __atomic_load_n(&forced_block_bytes, __ATOMIC_RELAXED);
    if (forced != PIXSUM_MPI_BLOCK_AUTO)
        return forced ? forced : SIZE_MAX;
    intptr_t method = 0, threads = 0;
    if (ctx) {
        pixsum_ctx_get(ctx, PIXSUM_PARAM_METHOD, &method);
        pixsum_ctx_get(ctx, PIXSUM_PARAM_THREADS, &threads);
    }
    if (method > 0) {
        const pixsum_method_info *m = pixsum_method_get((int)method);
        return m && m->backend == PIXSUM_BACKEND_CPU ? BLOCK_BYTES_SERIAL
                                                     : BLOCK_BYTES_PARALLEL;
    }
    /* auto: threaded methods may be chosen unless one thread is asked for */
    return (threads > 0 ? threads : psi_cpu_count()) == 1 ? BLOCK_BYTES_SERIAL
                                                          : BLOCK_BYTES_PARALLEL;
}

/* Computes the local table(s) of the strip `in` into plain/squared (inner
 * regions, `rows` rows). Where the context's method adds a carry row while it
 * writes the table (PIXSUM_OP_CARRY, pixsum_integral_carry(): the CPU methods),
 * the offset row of the ranks before is that carry, in one call: the table is
 * written once, with streaming stores where it is large. Otherwise (GPU
 * methods, or a block size forced for tests) block after block: each block
 * gets the carried row added while it is in the cache: the offset row (block
 * 0; NULL on rank 0) or the final last row of the block before it. Returns a
 * pixsum status. */
static int local_tables(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *plain,
                        const pixsum_view *squared, const void *off_plain,
                        const void *off_sq)
{
    bool forced = __atomic_load_n(&forced_block_bytes, __ATOMIC_RELAXED) != PIXSUM_MPI_BLOCK_AUTO;
    if ((off_plain || off_sq) && !forced) {
        pixsum_view carry_plain, carry_sq;
        if (plain)
            carry_plain = pixsum_view_2d((void *)off_plain, plain->type, plain->width, 1,
                                         plain->channels, 0);
        if (squared)
            carry_sq = pixsum_view_2d((void *)off_sq, squared->type, squared->width, 1,
                                      squared->channels, 0);
        int st = pixsum_integral_carry(ctx, in, plain, plain ? &carry_plain : NULL, squared,
                                       squared ? &carry_sq : NULL);
        if (st != PIXSUM_ERR_UNSUPPORTED) {
            last_stats.blocks++;
            return st;
        }
        psi_clear_error(); /* the method has no carry: add it block by block */
    }
    size_t row_bytes = (plain ? psi_row_samples(plain) * pixsum_type_size(plain->type) : 0) +
                       (squared ? psi_row_samples(squared) * pixsum_type_size(squared->type)
                                : 0);
    size_t budget = block_bytes(ctx), rows = in->height;
    size_t step = budget / row_bytes > 0 ? budget / row_bytes : 1;
    if (!off_plain && !off_sq)
        step = rows; /* no offset to add (rank 0): one call, nothing to carry */
    for (size_t y0 = 0; y0 < rows; y0 += step) {
        size_t h = rows - y0 < step ? rows - y0 : step;
        pixsum_view bin, bp, bs;
        pixsum_view_roi(in, 0, y0, in->width, h, &bin);
        if (plain)
            pixsum_view_roi(plain, 0, y0, plain->width, h, &bp);
        if (squared)
            pixsum_view_roi(squared, 0, y0, squared->width, h, &bs);
        int st = squared ? pixsum_integral_sq(ctx, &bin, plain ? &bp : NULL, &bs)
                         : pixsum_integral(ctx, &bin, &bp);
        last_stats.blocks++;
        if (st != PIXSUM_OK)
            return st;
        const void *cp = y0 == 0 ? off_plain : (plain ? psi_row(plain, y0 - 1, 0) : NULL);
        const void *cs = y0 == 0 ? off_sq : (squared ? psi_row(squared, y0 - 1, 0) : NULL);
        if (plain && cp)
            add_row(&bp, cp);
        if (squared && cs)
            add_row(&bs, cs);
    }
    return PIXSUM_OK;
}

/* ---- validation -------------------------------------------------------- */

static bool views_overlap(const pixsum_view *a, const pixsum_view *b)
{
    uintptr_t alo, ahi, blo, bhi;
    psi_view_extent(a, &alo, &ahi);
    psi_view_extent(b, &blo, &bhi);
    return alo < bhi && blo < ahi;
}

/* Local checks of one output strip: shape (want_w x want_h), channels, type
 * pair, no overlap with the input. */
static int check_out_strip(const pixsum_view *in, const pixsum_view *out, size_t want_w,
                           size_t want_h, int squared, const char *what)
{
    int st = want_h == 0 ? psm_check_empty_view(out, what) : pixsum_view_check(out);
    if (st != PIXSUM_OK)
        return want_h == 0 ? st : psi_fail(st, "%s: %s", what, pixsum_last_error());
    if (out->depth != 1)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "%s: depth %zu (strips are 2-D)", what,
                        out->depth);
    if (out->channels != in->channels)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "%s has %zu channels, the input %zu", what,
                        out->channels, in->channels);
    if (out->width != want_w || out->height != want_h)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "%s strip is %zux%zu, expected %zux%zu", what,
                        out->width, out->height, want_w, want_h);
    if (!psi_pair_supported(in->type, out->type, squared))
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "%s: %s -> %s is not a supported pair", what,
                        pixsum_type_name(in->type), pixsum_type_name(out->type));
    if (in->height > 0 && views_overlap(in, out))
        return psi_fail(PIXSUM_ERR_ALIASING, "%s overlaps the input", what);
    return PIXSUM_OK;
}

/* Local checks of this rank's arguments. `plain` and `squared` are the two
 * output strips (either may be NULL, not both). */
static int check_local(const pixsum_view *in, const pixsum_view *plain,
                       const pixsum_view *squared, int padded, int rank)
{
    int st = in->height == 0 ? psm_check_empty_view(in, "input") : pixsum_view_check(in);
    if (st != PIXSUM_OK)
        return in->height == 0 ? st : psi_fail(st, "input: %s", pixsum_last_error());
    if (in->depth != 1)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE,
                        "input: depth %zu; distributed tables are 2-D (depth 1)", in->depth);
    size_t pad = padded ? 1 : 0;
    size_t want_w = in->width + pad, want_h = in->height + (padded && rank == 0 ? 1 : 0);
    if (plain && (st = check_out_strip(in, plain, want_w, want_h, 0, "output")) != PIXSUM_OK)
        return st;
    if (squared && (st = check_out_strip(in, squared, want_w, want_h, 1, "squared output")) !=
                       PIXSUM_OK)
        return st;
    if (plain && squared && want_h > 0 && views_overlap(plain, squared))
        return psi_fail(PIXSUM_ERR_ALIASING, "the output and the squared output overlap");
    return PIXSUM_OK;
}

/* Whole-image overflow check of one table (unless wrap mode makes integer
 * tables modular). */
static int check_global(pixsum_type in, pixsum_type out, size_t width, size_t rows,
                        int squared, int wrap)
{
    if (width != 0 && rows > SIZE_MAX / width)
        return psi_fail(PIXSUM_ERR_TOO_LARGE, "the image has more than SIZE_MAX pixels");
    if (wrap && psi_type_is_int(out))
        return PIXSUM_OK;
    int st = pixsum_integral_check(in, out, width * rows, squared);
    if (st != PIXSUM_OK)
        return psi_fail(st, "whole image of %zux%zu: %s", width, rows, pixsum_last_error());
    return PIXSUM_OK;
}

/* ---- the common body ----------------------------------------------------- */

/* Writes the zero border of a padded strip: column 0 of every row and, on
 * rank 0, the whole first row. */
static void zero_border(const pixsum_view *t, int rank)
{
    size_t px = t->channels * pixsum_type_size(t->type);
    for (size_t y = 0; y < t->height; y++)
        memset(psi_row(t, y, 0), 0, y == 0 && rank == 0 ? t->width * px : px);
}

/* The body of both entry points: `plain` and/or `squared` (NULL = not asked;
 * the entry points have checked that the one they require is given). */
static int integral_mpi(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *plain,
                        const pixsum_view *squared, const char *missing, MPI_Comm comm)
{
    memset(&last_stats, 0, sizeof last_stats);
    double t_wall = MPI_Wtime(), t_cpu = thread_cpu_seconds();
    int rank, size, st = psm_rank_size(comm, &rank, &size);
    if (st != PIXSUM_OK)
        return st;
    intptr_t padded = 0, wrap = 0;
    if (ctx) {
        pixsum_ctx_get(ctx, PIXSUM_PARAM_PADDED, &padded);
        pixsum_ctx_get(ctx, PIXSUM_PARAM_WRAP, &wrap);
    }
    /* A local failure must still reach the agreement, so every rank makes the
     * same collective calls. */
    int local = missing ? psi_fail(PIXSUM_ERR_NULL, "%s view is NULL", missing)
                : !in   ? psi_fail(PIXSUM_ERR_NULL, "input view is NULL")
                        : check_local(in, plain, squared, (int)padded, rank);
    psm_desc desc[] = {
        {"the width", local == PIXSUM_OK ? (int64_t)in->width : 0},
        {"the channel count", local == PIXSUM_OK ? (int64_t)in->channels : 0},
        {"the input type", local == PIXSUM_OK ? (int64_t)in->type : 0},
        {"the output type", local == PIXSUM_OK && plain ? (int64_t)plain->type : 0},
        {"the squared output type", local == PIXSUM_OK && squared ? (int64_t)squared->type : 0},
        {"the padded setting", (int64_t)padded},
        {"the wrap setting", (int64_t)wrap},
    };
    if ((st = psm_agree(comm, local, desc, (int)(sizeof desc / sizeof desc[0]))) != PIXSUM_OK)
        return st;

    size_t first_row = 0, total_rows = 0;
    if ((st = pixsum_mpi_row_offset(in->height, &first_row, &total_rows, comm)) != PIXSUM_OK)
        return st;
    if (total_rows == 0)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "no rank holds any row of the image");
    /* Same inputs on every rank, so the same verdict: no agreement needed. */
    if (plain && (st = check_global(in->type, plain->type, in->width, total_rows, 0,
                                    (int)wrap)) != PIXSUM_OK)
        return st;
    if (squared && (st = check_global(in->type, squared->type, in->width, total_rows, 1,
                                      (int)wrap)) != PIXSUM_OK)
        return st;

    /* Pass 1: each table's scan vector from the input (one read of the strip),
     * then the exclusive scan: only these vectors travel. */
    size_t pad = padded ? 1 : 0, top = padded && rank == 0 ? 1 : 0, rows = in->height;
    size_t n = in->width * in->channels;
    scan_kind kp = plain ? scan_kind_of(plain->type) : SCAN_U32;
    scan_kind ks = squared ? scan_kind_of(squared->type) : SCAN_U32;
    size_t bytes_p = plain ? n * scan_elem_bytes(kp) : 0;
    size_t bytes_s = squared ? n * scan_elem_bytes(ks) : 0;
    size_t total = 2 * (bytes_p + bytes_s) + n * 12;
    char *buf = malloc(total);
    local = buf ? PIXSUM_OK
                : psi_fail(PIXSUM_ERR_NO_MEMORY, "%zu bytes for the scan vectors", total);
    if ((st = psm_agree(comm, local, NULL, 0)) != PIXSUM_OK) {
        free(buf);
        return st;
    }
    char *send_p = buf, *recv_p = buf + bytes_p;
    char *send_s = buf + 2 * bytes_p, *recv_s = send_s + bytes_s, *scratch = recv_s + bytes_s;
    phase_end(1, &t_wall, &t_cpu); /* the agreements so far */
    /* The exclusive scan never delivers the last rank's vector: it skips the
     * pass (a single rank does no extra work at all). */
    bool needed = rank < size - 1;
    if (plain && needed)
        scan_vector(in, 0, plain->type, send_p, n, scratch);
    else if (plain)
        memset(send_p, 0, bytes_p);
    if (squared && needed)
        scan_vector(in, 1, squared->type, send_s, n, scratch);
    else if (squared)
        memset(send_s, 0, bytes_s);
    phase_end(0, &t_wall, &t_cpu);
    /* MPI leaves rank 0's result undefined; rank 0 never reads it. */
    if (plain) {
        st = exscan(send_p, recv_p, n, kp, comm);
        if (rank > 0)
            offset_row(recv_p, n, plain->type);
    }
    if (squared && st == PIXSUM_OK) {
        st = exscan(send_s, recv_s, n, ks, comm);
        if (rank > 0)
            offset_row(recv_s, n, squared->type);
    }
    last_stats.bytes_scanned = bytes_p + bytes_s;
    phase_end(1, &t_wall, &t_cpu);
    if (st != PIXSUM_OK) {
        free(buf);
        return st;
    }

    /* Pass 2: the local tables with the offsets added, in the inner (inclusive)
     * region of each output strip; rank 0 has no offset. */
    local = PIXSUM_OK;
    if (rows > 0) {
        pixsum_view roi_plain, roi_sq;
        if (plain)
            pixsum_view_roi(plain, pad, top, in->width, rows, &roi_plain);
        if (squared)
            pixsum_view_roi(squared, pad, top, in->width, rows, &roi_sq);
        if (padded)
            pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, 0);
        local = local_tables(ctx, in, plain ? &roi_plain : NULL, squared ? &roi_sq : NULL,
                             rank > 0 ? recv_p : NULL, rank > 0 ? recv_s : NULL);
        if (padded)
            pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, 1);
    }
    free(buf);
    phase_end(2, &t_wall, &t_cpu);
    st = psm_agree(comm, local, NULL, 0);
    phase_end(1, &t_wall, &t_cpu);
    if (st != PIXSUM_OK)
        return st;
    if (padded) {
        if (plain)
            zero_border(plain, rank);
        if (squared)
            zero_border(squared, rank);
    }
    return PIXSUM_OK;
}

int pixsum_mpi_integral(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                        MPI_Comm comm)
{
    psi_clear_error();
    return integral_mpi(ctx, in, out, NULL, out ? NULL : "output", comm);
}

int pixsum_mpi_integral_sq(pixsum_ctx *ctx, const pixsum_view *in, const pixsum_view *out,
                           const pixsum_view *out_sq, MPI_Comm comm)
{
    psi_clear_error();
    return integral_mpi(ctx, in, out, out_sq, out_sq ? NULL : "squared output", comm);
}

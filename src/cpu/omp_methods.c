/*
 * omp_methods.c - the multi-threaded CPU integral methods and their registry
 * table:
 *   omp.banded     the fast method: rows split into bands; band 0 starts its
 *                  final table at once while each other thread first sums the
 *                  columns of the band before its own (reads the input), the
 *                  column sums of the earlier bands give each band its first
 *                  row's offsets, and every band then writes its final table in
 *                  one pass with the SIMD row kernels (fast_driver.c). Input
 *                  read at most twice, output written once.
 *   omp.transpose  paper 000: OpenMP row prefix sums, transpose, row prefix
 *                  sums, transpose back.
 *   omp.chunks     paper 003: T threads over chunks of rows (row prefix sums),
 *                  then over chunks of columns (adding each row to the next).
 *   p001.*         paper 001 (POSIX threads, p001.c): t-1 workers + the main
 *                  thread, bound to cores; four row scans; column pass with
 *                  strided access eliminated.
 * The OpenMP methods exist only in builds with OpenMP (PIXSUM_HAVE_OPENMP);
 * thread counts come from the context (job->threads).
 */
#include "fast_kernels.h"

#include <stdlib.h>
#include <string.h>

#ifdef PIXSUM_HAVE_OPENMP
#include <omp.h>
#endif

int psi_p001_plain(const psi_job *job);
int psi_p001_unroll6(const psi_job *job);
int psi_p001_sse2(const psi_job *job);
int psi_p001_blelloch(const psi_job *job);
bool psi_p001_supports(const psi_job *job);

#ifdef PIXSUM_HAVE_OPENMP

/* ---------------------------------------------------------- omp.banded */

/* Cost of summing a band's columns relative to writing its table, used to
 * size the bands so that every thread finishes together: thread 0 only writes
 * band 0; thread t >= 1 sums band t-1's columns, then writes band t. */
#define BANDED_COLSUM_COST 0.3

/* Band boundaries for `t` threads over `h` rows into b[0..t]. */
static void banded_bounds(size_t h, int t, size_t *b)
{
    double share[256], total = 0;
    share[0] = 1.0;
    total = 1.0;
    for (int i = 1; i < t; i++) {
        share[i] = 1.0 - BANDED_COLSUM_COST * share[i - 1];
        if (share[i] < 0.05)
            share[i] = 0.05;
        total += share[i];
    }
    double acc = 0;
    b[0] = 0;
    for (int i = 0; i < t; i++) {
        acc += share[i];
        b[i + 1] = i + 1 == t ? h : (size_t)((double)h * acc / total);
    }
}

/* The job's tables: plain first, then squared. */
static int job_tables(const psi_job *job, const pixsum_view **tables, int *squared)
{
    int n = 0;
    if (job->out.data) {
        tables[n] = &job->out;
        squared[n++] = 0;
    }
    if (job->out_sq.data) {
        tables[n] = &job->out_sq;
        squared[n++] = 1;
    }
    return n;
}

/* The carry rows of the job's tables, in job_tables()' order. */
static void job_carries(const psi_job *job, const void **carries)
{
    int n = 0;
    if (job->out.data)
        carries[n++] = job->carry;
    if (job->out_sq.data)
        carries[n++] = job->carry_sq;
}

typedef void (*running_fn)(void *row, size_t w, size_t ch);
static running_fn running_for(pixsum_type t);

static int run_banded(const psi_job *job)
{
    const pixsum_view *in = &job->in;
    int t = job->threads < 1 ? 1 : (job->threads > 256 ? 256 : job->threads);
    if ((size_t)t > in->height / 8)
        t = (int)(in->height / 8);
    if (t <= 1 || in->depth > 1)
        return psi_fast_run(job); /* one band (3-D volumes run single-threaded) */

    size_t bounds[257];
    banded_bounds(in->height, t, bounds);
    const pixsum_view *tables[2];
    int squared[2];
    int nt = job_tables(job, tables, squared);
    size_t n = psi_row_samples(in);
    size_t row_bytes[2] = {0, 0};
    for (int k = 0; k < nt; k++)
        row_bytes[k] = (n * pixsum_type_size(tables[k]->type) + 63) / 64 * 64;
    size_t total_bytes = 0;
    for (int k = 0; k < nt; k++)
        total_bytes += pixsum_type_size(tables[k]->type) * n * in->height;
    /* Non-temporal stores from every thread, as from one: the 3-4x collapse
     * of two streaming threads on the Zen 3 VM came from the row-pair
     * kernel's alternating output rows, gone since the ninth session. */
    int stream = total_bytes > psi_stream_threshold();
    /* per band and table: its column sums, then (prefix over bands) its
     * offsets; then each band's streaming row buffers, allocated here so that
     * no band can fail after another has written its rows */
    size_t per_band = row_bytes[0] + row_bytes[1];
    size_t buffers = psi_fast_stream_buffer_bytes(job, stream);
    unsigned char *sums = aligned_alloc(64, per_band * (size_t)t * 2 + buffers * (size_t)t);
    if (!sums)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "omp.banded: no memory for %d x %zu bytes of "
                        "column sums and row buffers", t, 2 * per_band + buffers);
    memset(sums, 0, per_band * (size_t)t * 2);
    unsigned char *offsets = sums + per_band * (size_t)t;
    unsigned char *row_buffers = sums + per_band * (size_t)t * 2;
    int done[256];
    memset(done, 0, sizeof done);
    int status = PIXSUM_OK;

#pragma omp parallel num_threads(t)
    {
        int id = omp_get_thread_num(), nth = omp_get_num_threads();
        if (nth != t) {
            /* OpenMP gave fewer threads: one of them runs the whole job */
            if (id == 0) {
                __atomic_store_n(&status, psi_fast_run(job), __ATOMIC_RELAXED);
            }
        } else {
            if (id >= 1) {
                /* column sums of band id-1 */
                unsigned char *mine = sums + per_band * (size_t)(id - 1);
                for (int k = 0; k < nt; k++)
                    psi_fast_column_sums(in, bounds[id - 1], bounds[id], tables[k]->type,
                                         squared[k], mine + (k ? row_bytes[0] : 0));
                __atomic_store_n(&done[id - 1], 1, __ATOMIC_RELEASE);
                /* offsets of band id = sum of the column sums of bands < id */
                unsigned char *off = offsets + per_band * (size_t)id;
                for (int b = 0; b < id; b++) {
                    while (!__atomic_load_n(&done[b], __ATOMIC_ACQUIRE))
                        ; /* the bands before finish their sums at about the same time */
                    for (int k = 0; k < nt; k++) {
                        size_t o = k ? row_bytes[0] : 0;
                        psi_scalar_add(tables[k]->type)(off + o, sums + per_band * (size_t)b + o,
                                                        NULL, n);
                    }
                }
                /* the row above the band = running sums of those column sums,
                 * plus the carry row above the whole table */
                const void *carries[2];
                job_carries(job, carries);
                for (int k = 0; k < nt; k++) {
                    unsigned char *row = off + (k ? row_bytes[0] : 0);
                    running_for(tables[k]->type)(row, in->width, in->channels);
                    if (carries[k])
                        psi_scalar_add(tables[k]->type)(row, carries[k], NULL, n);
                }
            }
            const void *init = job->carry, *init_sq = job->carry_sq;
            if (id >= 1) {
                unsigned char *off = offsets + per_band * (size_t)id;
                if (job->out.data)
                    init = off;
                if (job->out_sq.data)
                    init_sq = off + (job->out.data ? row_bytes[0] : 0);
            }
            int st = psi_fast_rows(job, bounds[id], bounds[id + 1], init, init_sq, stream,
                                   buffers ? row_buffers + buffers * (size_t)id : NULL);
            if (st != PIXSUM_OK)
                __atomic_store_n(&status, st, __ATOMIC_RELAXED);
        }
    }
    free(sums);
    return status;
}

/* ---------------------------------------------------------- paper 003 */

/* Row chunks: each row's prefix sums (no row above); then column chunks:
 * row y += row y-1 over the chunk, for y = 1..H-1. */
static int run_chunks(const psi_job *job)
{
    const pixsum_view *in = &job->in;
    const pixsum_view *tables[2];
    int squared[2];
    int nt = job_tables(job, tables, squared);
    int t = job->threads < 1 ? 1 : job->threads;
    for (int k = 0; k < nt; k++) {
        const pixsum_view *tb = tables[k];
        const psi_row_kernels *rk = psi_scalar_kernels(in->type, tb->type);
        psi_row_fn row = squared[k] ? rk->row_sq : rk->row_sum;
        psi_add_fn add = psi_scalar_add(tb->type);
        size_t n = psi_row_samples(tb), es = pixsum_type_size(tb->type);
        long long h = (long long)in->height;
#pragma omp parallel num_threads(t)
        {
            int id = omp_get_thread_num(), nth = omp_get_num_threads();
            long long y0 = h * id / nth, y1 = h * (id + 1) / nth;
            for (long long y = y0; y < y1; y++)
                row(psi_row(in, (size_t)y, 0), psi_row(tb, (size_t)y, 0), NULL, in->width,
                    in->channels);
#pragma omp barrier
            size_t x0 = n * (size_t)id / (size_t)nth, x1 = n * (size_t)(id + 1) / (size_t)nth;
            if (x1 > x0)
                for (size_t y = 1; y < in->height; y++)
                    add((char *)psi_row(tb, y, 0) + x0 * es,
                        (char *)psi_row(tb, y - 1, 0) + x0 * es, NULL, x1 - x0);
        }
    }
    return PIXSUM_OK;
}

/* ---------------------------------------------------------- paper 000 */

/* In-place running sums along a row of `w` pixels of `ch` samples. */
#define RUNNING_SUM(SUF, T)                                               \
    static void running_##SUF(void *row_, size_t w, size_t ch)            \
    {                                                                     \
        T *row = row_;                                                    \
        for (size_t i = ch; i < w * ch; i++)                              \
            row[i] = (T)(row[i] + row[i - ch]);                           \
    }
RUNNING_SUM(u32, uint32_t)
RUNNING_SUM(u64, uint64_t)
RUNNING_SUM(f32, float)
RUNNING_SUM(f64, double)

static running_fn running_for(pixsum_type t)
{
    switch (t) {
    case PIXSUM_U32: return running_u32;
    case PIXSUM_U64:
    case PIXSUM_I64: return running_u64;
    case PIXSUM_F32: return running_f32;
    default: return running_f64;
    }
}

/* Copies the h x w matrix of `es`-byte pixels at src (row stride sstride) to
 * its transpose at dst (row stride dstride), through a 16 x 16 tile buffer:
 * the tile's 16 source row pieces are read whole, transposed in the buffer
 * (in L1) and written out as 16 whole destination row pieces, so no cache
 * line is visited twice even when the strides alias in the cache sets. Tile
 * rows are shared out over the threads. */
static void transpose(const unsigned char *src, ptrdiff_t sstride, unsigned char *dst,
                      ptrdiff_t dstride, size_t w, size_t h, size_t es, int t)
{
    enum { TILE = 16 };
    long long tiles_y = (long long)((h + TILE - 1) / TILE);
#pragma omp parallel for num_threads(t) schedule(static)
    for (long long ty = 0; ty < tiles_y; ty++) {
        unsigned char buf[TILE * TILE * 32]; /* es <= 32 bytes (4 channels x 8) */
        size_t y0 = (size_t)ty * TILE, ny = y0 + TILE < h ? TILE : h - y0;
        for (size_t x0 = 0; x0 < w; x0 += TILE) {
            size_t nx = x0 + TILE < w ? TILE : w - x0;
            /* buf[x][y] = src[y0 + y][x0 + x] */
            for (size_t y = 0; y < ny; y++) {
                const unsigned char *s = src + (ptrdiff_t)(y0 + y) * sstride + x0 * es;
                if (es == 4) /* fixed sizes so the copies are single moves */
                    for (size_t x = 0; x < nx; x++)
                        memcpy(buf + (x * TILE + y) * 4, s + x * 4, 4);
                else if (es == 8)
                    for (size_t x = 0; x < nx; x++)
                        memcpy(buf + (x * TILE + y) * 8, s + x * 8, 8);
                else
                    for (size_t x = 0; x < nx; x++)
                        memcpy(buf + (x * TILE + y) * es, s + x * es, es);
            }
            for (size_t x = 0; x < nx; x++)
                memcpy(dst + (ptrdiff_t)(x0 + x) * dstride + y0 * es, buf + x * TILE * es,
                       ny * es);
        }
    }
}

static int run_transpose(const psi_job *job)
{
    const pixsum_view *in = &job->in;
    const pixsum_view *tables[2];
    int squared[2];
    int nt = job_tables(job, tables, squared);
    int t = job->threads < 1 ? 1 : job->threads;
    size_t w = in->width, h = in->height, ch = in->channels;
    /* one scratch buffer for every table, allocated before any output is
     * written (a failed allocation leaves the outputs untouched); rows padded
     * by a cache line so that a tile's column does not map to one cache set */
    size_t max_es = 0;
    for (int k = 0; k < nt; k++)
        if (ch * pixsum_type_size(tables[k]->type) > max_es)
            max_es = ch * pixsum_type_size(tables[k]->type);
    size_t max_srow = h * max_es + 64;
    if (max_srow / max_es < h || w > SIZE_MAX / max_srow)
        return psi_fail(PIXSUM_ERR_TOO_LARGE, "omp.transpose: scratch size overflows");
    unsigned char *scratch = malloc(w * max_srow);
    if (!scratch)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "omp.transpose: no memory for a %zu-byte "
                        "transposed copy", w * max_srow);
    for (int k = 0; k < nt; k++) {
        const pixsum_view *tb = tables[k];
        size_t es = ch * pixsum_type_size(tb->type);
        size_t srow = h * es + 64;
        const psi_row_kernels *rk = psi_scalar_kernels(in->type, tb->type);
        psi_row_fn row = squared[k] ? rk->row_sq : rk->row_sum;
        running_fn run = running_for(tb->type);
        /* 1: row prefix sums */
#pragma omp parallel for num_threads(t) schedule(static)
        for (long long y = 0; y < (long long)h; y++)
            row(psi_row(in, (size_t)y, 0), psi_row(tb, (size_t)y, 0), NULL, w, ch);
        /* 2: transpose into scratch (w rows of h pixels) */
        transpose(tb->data, tb->row_stride, scratch, (ptrdiff_t)srow, w, h, es, t);
        /* 3: row prefix sums of the transposed rows (the columns) */
#pragma omp parallel for num_threads(t) schedule(static)
        for (long long x = 0; x < (long long)w; x++)
            run(scratch + (size_t)x * srow, h, ch);
        /* 4: transpose back */
        transpose(scratch, (ptrdiff_t)srow, tb->data, tb->row_stride, h, w, es, t);
    }
    free(scratch);
    return PIXSUM_OK;
}

static bool is_2d(const psi_job *job)
{
    return job->in.depth == 1;
}

#define OMP_ENTRIES                                                                          \
    {"omp.banded", PIXSUM_BACKEND_OMP,                                                       \
     PIXSUM_OP_INTEGRAL | PIXSUM_OP_INTEGRAL_SQ | PIXSUM_OP_INTEGRAL_3D | PIXSUM_OP_CARRY,   \
     "OpenMP bands: column sums of earlier bands, then each band's final table in one SIMD " \
     "pass (input read <= 2x, output written once); 3-D runs single-threaded",               \
     30, NULL, NULL, run_banded},                                                 \
    {"omp.transpose", PIXSUM_BACKEND_OMP, PIXSUM_OP_INTEGRAL | PIXSUM_OP_INTEGRAL_SQ,        \
     "OpenMP row prefix sums, transpose, row prefix sums, transpose back (paper 000)", 0,    \
     NULL, is_2d, run_transpose},                                                            \
    {"omp.chunks", PIXSUM_BACKEND_OMP, PIXSUM_OP_INTEGRAL | PIXSUM_OP_INTEGRAL_SQ,           \
     "OpenMP: T threads over row chunks, then over column chunks (paper 003)", 0, NULL,      \
     is_2d, run_chunks},
#else
#define OMP_ENTRIES
#endif /* PIXSUM_HAVE_OPENMP */

#define P001_DESC(scan)                                                                    \
    "paper 001: t-1 pthreads + main thread bound to cores i mod c; row pass with the " scan \
    " scan; column pass with strided access eliminated (2-D, 1 channel)"

const psi_method psi_methods_omp[] = {
    OMP_ENTRIES
    {"p001.plain", PIXSUM_BACKEND_OMP, PIXSUM_OP_INTEGRAL | PIXSUM_OP_INTEGRAL_SQ,
     P001_DESC("plain"), 0, NULL, psi_p001_supports, psi_p001_plain},
    {"p001.unroll6", PIXSUM_BACKEND_OMP, PIXSUM_OP_INTEGRAL | PIXSUM_OP_INTEGRAL_SQ,
     P001_DESC("unrolled-by-6 'enhanced parallelism'"), 0, NULL, psi_p001_supports,
     psi_p001_unroll6},
    {"p001.sse2", PIXSUM_BACKEND_OMP, PIXSUM_OP_INTEGRAL | PIXSUM_OP_INTEGRAL_SQ,
     P001_DESC("SSE2 shift-and-add by 4"), 0, NULL, psi_p001_supports, psi_p001_sse2},
    {"p001.blelloch", PIXSUM_BACKEND_OMP, PIXSUM_OP_INTEGRAL | PIXSUM_OP_INTEGRAL_SQ,
     P001_DESC("Blelloch up-sweep/down-sweep"), 0, NULL, psi_p001_supports,
     psi_p001_blelloch},
    {NULL, 0, 0, NULL, 0, NULL, NULL, NULL},
};

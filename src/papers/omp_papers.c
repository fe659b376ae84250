/*
 * omp_papers.c - the threaded integral methods of papers 000, 001 and 003 and
 * their registry table (never chosen by `auto`: they reproduce the papers'
 * tables, `pixsum methods` lists them):
 *   omp.transpose  paper 000: OpenMP row prefix sums, transpose, row prefix
 *                  sums, transpose back.
 *   omp.chunks     paper 003: T threads over chunks of rows (row prefix sums),
 *                  then over chunks of columns (adding each row to the next).
 *   p001.*         paper 001 (POSIX threads, p001.c): t-1 workers + the main
 *                  thread, bound to cores; four row scans; column pass with
 *                  strided access eliminated.
 * The OpenMP ones exist only in builds with OpenMP (PIXSUM_HAVE_OPENMP).
 */
#include "../cpu/kernels.h"

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

/* ---------------------------------------------------------- paper 003 */

/* Row chunks: each row's prefix sums (no row above); then column chunks:
 * row y += row y-1 over the chunk, for y = 1..H-1. */
static int run_chunks(const psi_job *job)
{
    const pixsum_view *in = &job->in;
    const pixsum_view *tables[2];
    int squared[2];
    int nt = psi_job_tables(job, tables, squared);
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
    int nt = psi_job_tables(job, tables, squared);
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
        psi_running_fn run = psi_scalar_running(tb->type);
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

#define OMP_PAPER_ENTRIES                                                                    \
    {"omp.transpose", PIXSUM_BACKEND_OMP, PIXSUM_OP_INTEGRAL | PIXSUM_OP_INTEGRAL_SQ,        \
     "OpenMP row prefix sums, transpose, row prefix sums, transpose back (paper 000)", 0,    \
     NULL, is_2d, run_transpose},                                                            \
    {"omp.chunks", PIXSUM_BACKEND_OMP, PIXSUM_OP_INTEGRAL | PIXSUM_OP_INTEGRAL_SQ,           \
     "OpenMP: T threads over row chunks, then over column chunks (paper 003)", 0, NULL,      \
     is_2d, run_chunks},
#else
#define OMP_PAPER_ENTRIES
#endif /* PIXSUM_HAVE_OPENMP */

#define P001_DESC(scan)                                                                    \
    "paper 001: t-1 pthreads + main thread bound to cores i mod c; row pass with the " scan \
    " scan; column pass with strided access eliminated (2-D, 1 channel)"

const psi_method psi_methods_papers_cpu[] = {
    OMP_PAPER_ENTRIES
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

/*
 * p001.c - the parallel integral image of paper 001, one named method per row
 * scan (p001.plain, p001.unroll6, p001.sse2, p001.blelloch):
 *   - t = job->threads threads: t - 1 POSIX worker threads plus the calling
 *     thread, which takes an equal share; thread i is bound to core i mod c
 *     (c = online cores) for the call and the caller's affinity is restored;
 *   - row pass: the rows are split into t bands; each thread widens its rows
 *     into the table and scans them in place with the chosen scan;
 *   - a barrier;
 *   - column pass with strided access eliminated: the columns are split into t
 *     chunks and each thread adds row y-1 to row y over its chunk, walking the
 *     table row by row (contiguous, vectorisable) instead of down columns.
 * The four scans: plain (a[i] += a[i-1]); unrolled by 6 with the additions
 * regrouped so three independent chains run at once; SSE2 shift-and-add by 4
 * (p001_sse2.c); Blelloch's up-sweep / down-sweep on a power-of-two buffer.
 * 2-D, one channel (the paper's grey images), every supported type pair.
 */
#include "p001.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "../cpu/kernels.h"

typedef enum p001_scan { SCAN_PLAIN, SCAN_UNROLL6, SCAN_SSE2, SCAN_BLELLOCH } p001_scan;

/* ---- widening copy: table row = input row converted to the table type ---- */

#define P001_WIDEN_LOOP(TIN, TOUT)                    \
    do {                                              \
        const TIN *s = in;                            \
        TOUT *d = out;                                \
        for (size_t i = 0; i < n; i++)                \
            d[i] = (TOUT)s[i];                        \
    } while (0)

#define P001_WIDEN_TO(TOUT)                                          \
    switch (tin) {                                                   \
    case PIXSUM_U8: P001_WIDEN_LOOP(uint8_t, TOUT); break;           \
    case PIXSUM_U16: P001_WIDEN_LOOP(uint16_t, TOUT); break;         \
    case PIXSUM_I16: P001_WIDEN_LOOP(int16_t, TOUT); break;          \
    case PIXSUM_I32: P001_WIDEN_LOOP(int32_t, TOUT); break;          \
    case PIXSUM_U32: P001_WIDEN_LOOP(uint32_t, TOUT); break;         \
    case PIXSUM_F32: P001_WIDEN_LOOP(float, TOUT); break;            \
    case PIXSUM_F64: P001_WIDEN_LOOP(double, TOUT); break;           \
    default: break;                                                  \
    }

/* Integer tables take the input's value modulo 2^bits (sign-extended first),
 * as the scalar reference does. */
static void widen(const void *in, pixsum_type tin, void *out, pixsum_type tout, size_t n)
{
    switch (tout) {
    case PIXSUM_U32:
        if (tin == PIXSUM_I16) {
            const int16_t *s = in;
            uint32_t *d = out;
            for (size_t i = 0; i < n; i++)
                d[i] = (uint32_t)(int32_t)s[i];
        } else {
            P001_WIDEN_TO(uint32_t)
        }
        break;
    case PIXSUM_U64:
    case PIXSUM_I64:
        switch (tin) {
        case PIXSUM_I16: P001_WIDEN_LOOP(int16_t, int64_t); break;
        case PIXSUM_I32: P001_WIDEN_LOOP(int32_t, int64_t); break;
        default: P001_WIDEN_TO(uint64_t)
        }
        break;
    case PIXSUM_F32: P001_WIDEN_TO(float) break;
    case PIXSUM_F64: P001_WIDEN_TO(double) break;
    default: break;
    }
}

/* ---- the scans, in place, per table type ---- */

#define P001_SCANS(SUF, T)                                                    \
    static void scan_plain_##SUF(T *a, size_t n)                              \
    {                                                                         \
        for (size_t i = 1; i < n; i++)                                        \
            a[i] = (T)(a[i] + a[i - 1]);                                      \
    }                                                                         \
    /* blocks of 6: (a1+=a0, a3+=a2, a5+=a4), (a2+=a1, a3+=a1),               \
     * (a4+=a3, a5+=a3); the block's first element first takes the total      \
     * of the block before */                                                 \
    static void scan_unroll6_##SUF(T *a, size_t n)                            \
    {                                                                         \
        size_t i = 0;                                                         \
        for (; i + 6 <= n; i += 6) {                                          \
            T *b = a + i;                                                     \
            if (i > 0)                                                        \
                b[0] = (T)(b[0] + b[-1]);                                     \
            b[1] = (T)(b[1] + b[0]);                                          \
            b[3] = (T)(b[3] + b[2]);                                          \
            b[5] = (T)(b[5] + b[4]);                                          \
            b[2] = (T)(b[2] + b[1]);                                          \
            b[3] = (T)(b[3] + b[1]);                                          \
            b[4] = (T)(b[4] + b[3]);                                          \
            b[5] = (T)(b[5] + b[3]);                                          \
        }                                                                     \
        for (; i < n; i++)                                                    \
            if (i > 0)                                                        \
                a[i] = (T)(a[i] + a[i - 1]);                                  \
    }                                                                         \
    /* work-efficient scan on a zero-padded power-of-two copy: up-sweep       \
     * builds partial sums in a tree, the root is cleared, the down-sweep     \
     * hands each left subtree's sum to its right sibling (exclusive scan);   \
     * adding the original element makes it inclusive */                      \
    static void scan_blelloch_##SUF(T *a, size_t n, T *buf, size_t m)         \
    {                                                                         \
        memcpy(buf, a, n * sizeof(T));                                        \
        memset(buf + n, 0, (m - n) * sizeof(T));                              \
        for (size_t step = 1; step < m; step *= 2)                            \
            for (size_t i = 2 * step - 1; i < m; i += 2 * step)               \
                buf[i] = (T)(buf[i] + buf[i - step]);                         \
        buf[m - 1] = 0;                                                       \
        for (size_t step = m / 2; step >= 1; step /= 2)                       \
            for (size_t i = 2 * step - 1; i < m; i += 2 * step) {             \
                T left = buf[i - step];                                       \
                buf[i - step] = buf[i];                                       \
                buf[i] = (T)(buf[i] + left);                                  \
            }                                                                 \
        for (size_t i = 0; i < n; i++)                                        \
            a[i] = (T)(a[i] + buf[i]);                                        \
    }

P001_SCANS(u32, uint32_t)
P001_SCANS(u64, uint64_t)
P001_SCANS(f32, float)
P001_SCANS(f64, double)

/* Scans one row in place; buf holds m >= n elements for Blelloch. */
static void scan_row(p001_scan scan, pixsum_type t, void *row, size_t n, void *buf, size_t m)
{
#define P001_DISPATCH(SUF, T)                                         \
    switch (scan) {                                                   \
    case SCAN_PLAIN: scan_plain_##SUF(row, n); break;                 \
    case SCAN_UNROLL6: scan_unroll6_##SUF(row, n); break;             \
    case SCAN_BLELLOCH: scan_blelloch_##SUF(row, n, buf, m); break;   \
    case SCAN_SSE2:                                                   \
        if (!psi_p001_scan_sse2(t, row, n))                           \
            scan_plain_##SUF(row, n);                                 \
        break;                                                        \
    }
    switch (t) {
    case PIXSUM_U32: P001_DISPATCH(u32, uint32_t) break;
    case PIXSUM_U64:
    case PIXSUM_I64: P001_DISPATCH(u64, uint64_t) break;
    case PIXSUM_F32: P001_DISPATCH(f32, float) break;
    case PIXSUM_F64: P001_DISPATCH(f64, double) break;
    default: break;
    }
#undef P001_DISPATCH
}

#if !(defined(__x86_64__) || defined(__i386__))
bool psi_p001_scan_sse2(pixsum_type t, void *row, size_t n)
{
    (void)t;
    (void)row;
    (void)n;
    return false;
}
#endif

/* ---- threads ---- */

typedef struct p001_shared {
    const psi_job *job;
    p001_scan scan;
    int threads; /* set before the gate opens */
    int cores;
    pthread_barrier_t barrier;
    pthread_mutex_t gate_lock;
    pthread_cond_t gate;
    int open;                 /* 1 = run, -1 = give up (under gate_lock) */
    unsigned char *scan_bufs; /* Blelloch buffers, `stride` bytes per thread */
    size_t stride, m;
} p001_shared;

typedef struct p001_worker {
    p001_shared *sh;
    int index;
    pthread_t tid;
} p001_worker;

static void bind_to_core(int index, int cores)
{
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(index % cores, &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set); /* best effort */
#else
    (void)index;
    (void)cores;
#endif
}

static size_t next_pow2(size_t n)
{
    size_t m = 1;
    while (m < n)
        m *= 2;
    return m;
}

/* One table's passes (plain or squared) for thread `index`. */
static void thread_table(p001_shared *sh, int index, const pixsum_view *t, int squared)
{
    const psi_job *job = sh->job;
    const pixsum_view *in = &job->in;
    size_t h = in->height, w = in->width, nt = (size_t)sh->threads;
    size_t es = pixsum_type_size(t->type);
    void *buf = sh->scan_bufs ? sh->scan_bufs + (size_t)index * sh->stride : NULL;
    size_t y0 = h * (size_t)index / nt, y1 = h * (size_t)(index + 1) / nt;
    for (size_t y = y0; y < y1; y++) {
        void *row = psi_row(t, y, 0);
        if (squared) { /* squared rows: the reference row kernel squares and scans */
            psi_scalar_kernels(in->type, t->type)->row_sq(psi_row(in, y, 0), row, NULL, w, 1);
        } else {
            widen(psi_row(in, y, 0), in->type, row, t->type, w);
            scan_row(sh->scan, t->type, row, w, buf, sh->m);
        }
    }
    pthread_barrier_wait(&sh->barrier);
    /* column pass, strided access eliminated: row after row over a column chunk */
    size_t x0 = w * (size_t)index / nt, x1 = w * (size_t)(index + 1) / nt;
    psi_add_fn add = psi_scalar_add(t->type);
    if (x1 > x0)
        for (size_t y = 1; y < h; y++)
            add((char *)psi_row(t, y, 0) + x0 * es, (char *)psi_row(t, y - 1, 0) + x0 * es,
                NULL, x1 - x0);
}

static void *thread_main(void *arg)
{
    p001_worker *wk = arg;
    p001_shared *sh = wk->sh;
    bind_to_core(wk->index, sh->cores);
    pthread_mutex_lock(&sh->gate_lock);
    while (sh->open == 0)
        pthread_cond_wait(&sh->gate, &sh->gate_lock);
    int go = sh->open > 0;
    pthread_mutex_unlock(&sh->gate_lock);
    if (!go)
        return NULL;
    if (sh->job->out.data)
        thread_table(sh, wk->index, &sh->job->out, 0);
    if (sh->job->out_sq.data) {
        pthread_barrier_wait(&sh->barrier); /* the plain table's column pass is done */
        thread_table(sh, wk->index, &sh->job->out_sq, 1);
    }
    return NULL;
}

static int run_p001(const psi_job *job, p001_scan scan)
{
    p001_shared sh;
    memset(&sh, 0, sizeof sh);
    sh.job = job;
    sh.scan = scan;
    sh.cores = psi_cpu_count();
    int want = job->threads < 1 ? 1 : job->threads;
    if (scan == SCAN_BLELLOCH) {
        sh.m = next_pow2(job->in.width);
        sh.stride = sh.m * sizeof(uint64_t);
        if (sh.stride / sizeof(uint64_t) != sh.m ||
            !(sh.scan_bufs = malloc(sh.stride * (size_t)want)))
            return psi_fail(PIXSUM_ERR_NO_MEMORY, "p001.blelloch: no memory for %d scan "
                            "buffers of %zu elements", want, sh.m);
    }
    p001_worker *wk = calloc((size_t)want, sizeof *wk);
    if (!wk) {
        free(sh.scan_bufs);
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "p001: no memory for %d threads", want);
    }
    pthread_mutex_init(&sh.gate_lock, NULL);
    pthread_cond_init(&sh.gate, NULL);
#ifdef __linux__
    cpu_set_t saved;
    int have_saved = pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) == 0;
#endif
    /* t - 1 workers; they wait at the gate until the thread count is final */
    int started = 1;
    for (int i = 1; i < want; i++) {
        wk[i].sh = &sh;
        wk[i].index = i;
        if (pthread_create(&wk[i].tid, NULL, thread_main, &wk[i]) != 0)
            break;
        started++;
    }
    sh.threads = started; /* fewer threads than asked if the system refused some */
    int ok = pthread_barrier_init(&sh.barrier, NULL, (unsigned)started) == 0;
    pthread_mutex_lock(&sh.gate_lock);
    sh.open = ok ? 1 : -1;
    pthread_cond_broadcast(&sh.gate);
    pthread_mutex_unlock(&sh.gate_lock);
    if (ok) {
        wk[0].sh = &sh;
        wk[0].index = 0;
        thread_main(&wk[0]); /* the main thread takes an equal share */
    }
    for (int i = 1; i < started; i++)
        pthread_join(wk[i].tid, NULL);
#ifdef __linux__
    if (have_saved)
        pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
#endif
    if (ok)
        pthread_barrier_destroy(&sh.barrier);
    pthread_cond_destroy(&sh.gate);
    pthread_mutex_destroy(&sh.gate_lock);
    free(wk);
    free(sh.scan_bufs);
    return ok ? PIXSUM_OK : psi_fail(PIXSUM_ERR_NO_MEMORY, "p001: cannot create a barrier");
}

int psi_p001_plain(const psi_job *job);
int psi_p001_unroll6(const psi_job *job);
int psi_p001_sse2(const psi_job *job);
int psi_p001_blelloch(const psi_job *job);
bool psi_p001_supports(const psi_job *job);

int psi_p001_plain(const psi_job *job) { return run_p001(job, SCAN_PLAIN); }
int psi_p001_unroll6(const psi_job *job) { return run_p001(job, SCAN_UNROLL6); }
int psi_p001_sse2(const psi_job *job) { return run_p001(job, SCAN_SSE2); }
int psi_p001_blelloch(const psi_job *job) { return run_p001(job, SCAN_BLELLOCH); }

bool psi_p001_supports(const psi_job *job)
{
    return job->in.depth == 1 && job->in.channels == 1;
}

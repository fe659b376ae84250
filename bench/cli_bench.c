/*
 * cli_bench.c - `pixsum bench`: times operations x methods x type pairs x sizes
 * x thread counts, and in the same run the memory floor for the same bytes and
 * the peers (peer.opencv = cv::integral through bench/peer_opencv.cpp, loaded
 * with dlopen()).
 *
 * Each measurement: warm-up runs, then up to M timed runs; reported are the
 * median and paper 001's K-best figure (the fastest run once the K fastest are
 * within eps of each other; M = 20, K = 5, eps = 0.001 by default, with a flag
 * saying whether they converged). The floor is a loop that reads the input's
 * bytes and writes the output's bytes (one or two tables) with the best stores
 * available: non-temporal and normal stores are both timed and the faster is
 * kept. Ratios are same-run: peer time / method time ("x peer", > 1 = faster
 * than the peer) and floor time / method time ("of floor", 1 = at the floor).
 *
 * Operations and peers are tables (bench_ops[], bench_peers[]): a new op adds
 * an entry with its setup/run/bytes functions, a new peer an entry naming the
 * op it serves, its module and its symbol.
 */
#include "bench_timing.h"
#include "cli_util.h"
#include "commands.h"
#define PIXSUM_EXPERIMENTAL /* pixsum_cpu_isa(), pixsum_cpu_force_isa() */
#include "pixsum.h"
#include "text_out.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define BENCH_X86 1
#else
#define BENCH_X86 0
#endif

#define MAX_LIST 32

/* ---------------------------------------------------------------- cases */

/* One benchmark case: an operation on one type pair, shape and thread count,
 * with its buffers. The op's setup fills what it needs. */
typedef struct bench_case {
    const struct bench_op *op;
    pixsum_type in_type, out_type;
    size_t width, height, channels;
    int threads;
    int padded;
    pixsum_view in, out, out_sq;   /* out_sq.data NULL unless the op has one */
    void *in_buf, *out_buf, *sq_buf;
    void *peer_out, *peer_sq;      /* padded (W+1) x (H+1) tables for peers */
    size_t peer_step, peer_sq_step;
} bench_case;

/* An operation: how to prepare a case, run a library method on it and count
 * its bytes. */
typedef struct bench_op {
    const char *name;
    unsigned ops;                 /* pixsum_op bits a method must have */
    pixsum_type default_out;      /* when the pair gives no output type */
    int (*setup)(bench_case *c);  /* returns 0 or -1 (message printed) */
    int (*run)(bench_case *c, pixsum_ctx *ctx);  /* a pixsum status */
    size_t (*bytes_in)(const bench_case *c);
    size_t (*bytes_out)(const bench_case *c);
} bench_op;

static void *alloc_aligned(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0)
        return NULL;
    return p;
}

/* Random bytes (xorshift64*), so sums are not trivially compressible. */
static void fill_random(void *buf, size_t bytes, uint64_t seed)
{
    uint64_t s = seed | 1;
    unsigned char *p = buf;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        uint64_t v = s * 0x2545F4914F6CDD1DULL;
        memcpy(p + i, &v, 8);
    }
    for (; i < bytes; i++)
        p[i] = (unsigned char)(i * 131u);
}

/* Random samples of the input type; floats get values in [0, 256). */
static void fill_input(bench_case *c)
{
    size_t n = c->width * c->height * c->channels;
    size_t es = pixsum_type_size(c->in_type);
    fill_random(c->in_buf, n * es, 0x9E3779B97F4A7C15ULL);
    if (c->in_type == PIXSUM_F32) {
        float *f = c->in_buf;
        for (size_t i = 0; i < n; i++)
            f[i] = (float)(((const uint8_t *)c->in_buf)[i * 4] & 0xFF);
    } else if (c->in_type == PIXSUM_F64) {
        double *f = c->in_buf;
        for (size_t i = 0; i < n; i++)
            f[i] = (double)(((const uint8_t *)c->in_buf)[i * 8] & 0xFF);
    }
}

static size_t table_bytes(const bench_case *c, pixsum_type t)
{
    size_t pad = c->padded ? 1 : 0;
    return (c->width + pad) * (c->height + pad) * c->channels * pixsum_type_size(t);
}

static int integral_setup_common(bench_case *c, int squared)
{
    size_t pad = c->padded ? 1 : 0;
    size_t in_bytes = c->width * c->height * c->channels * pixsum_type_size(c->in_type);
    c->in_buf = alloc_aligned(in_bytes);
    c->out_buf = alloc_aligned(table_bytes(c, c->out_type));
    size_t peer_es = pixsum_type_size(c->out_type);
    c->peer_step = (c->width + 1) * c->channels * peer_es;
    c->peer_out = alloc_aligned(c->peer_step * (c->height + 1));
    if (squared) {
        /* the squared table: u64 for integer inputs when it fits, else f64 */
        pixsum_type sq = pixsum_integral_type(c->in_type, c->width * c->height, 1);
        if (sq == PIXSUM_TYPE_NONE)
            sq = PIXSUM_F64;
        c->sq_buf = alloc_aligned(table_bytes(c, sq));
        c->out_sq = pixsum_view_2d(c->sq_buf, sq, c->width + pad, c->height + pad,
                                   c->channels, 0);
        /* OpenCV's squared sums are f64 */
        c->peer_sq_step = (c->width + 1) * c->channels * sizeof(double);
        c->peer_sq = alloc_aligned(c->peer_sq_step * (c->height + 1));
    }
    if (!c->in_buf || !c->out_buf || !c->peer_out || (squared && (!c->sq_buf || !c->peer_sq))) {
        fprintf(stderr, "pixsum bench: out of memory for %zux%zu\n", c->width, c->height);
        return -1;
    }
    c->in = pixsum_view_2d(c->in_buf, c->in_type, c->width, c->height, c->channels, 0);
    c->out = pixsum_view_2d(c->out_buf, c->out_type, c->width + pad, c->height + pad,
                            c->channels, 0);
    fill_input(c);
    /* touch the outputs once so page faults are not timed */
    memset(c->out_buf, 0, table_bytes(c, c->out_type));
    memset(c->peer_out, 0, c->peer_step * (c->height + 1));
    if (squared) {
        memset(c->sq_buf, 0, table_bytes(c, c->out_sq.type));
        memset(c->peer_sq, 0, c->peer_sq_step * (c->height + 1));
    }
    return 0;
}

static int integral_setup(bench_case *c)
{
    return integral_setup_common(c, 0);
}

static int integral_sq_setup(bench_case *c)
{
    return integral_setup_common(c, 1);
}

static int integral_run(bench_case *c, pixsum_ctx *ctx)
{
    return pixsum_integral(ctx, &c->in, &c->out);
}

static int integral_sq_run(bench_case *c, pixsum_ctx *ctx)
{
    return pixsum_integral_sq(ctx, &c->in, &c->out, &c->out_sq);
}

static size_t integral_bytes_in(const bench_case *c)
{
    return c->width * c->height * c->channels * pixsum_type_size(c->in_type);
}

static size_t integral_bytes_out(const bench_case *c)
{
    size_t b = table_bytes(c, c->out_type);
    if (c->out_sq.data)
        b += table_bytes(c, c->out_sq.type);
    return b;
}

#include "bench_hist.h" /* the hist / hist_const ops (histogram work) */

/* The operations `--op` accepts. */
static const bench_op bench_ops[] = {
    {"integral", PIXSUM_OP_INTEGRAL, PIXSUM_U32, integral_setup, integral_run,
     integral_bytes_in, integral_bytes_out},
    {"integral_sq", PIXSUM_OP_INTEGRAL_SQ, PIXSUM_U32, integral_sq_setup, integral_sq_run,
     integral_bytes_in, integral_bytes_out},
    BENCH_HIST_OPS
};
#define N_OPS (sizeof bench_ops / sizeof bench_ops[0])

static void case_free(bench_case *c)
{
    free(c->in_buf);
    free(c->out_buf);
    free(c->sq_buf);
    free(c->peer_out);
    free(c->peer_sq);
    memset(c, 0, sizeof *c);
}

/* ---------------------------------------------------------------- peers */

typedef int (*peer_integral_fn)(int, int, int, const void *, size_t, size_t, size_t, size_t,
                                void *, size_t, void *, size_t);

/* A peer: the op it serves, the module and symbol it lives in, and the call. */
typedef struct bench_peer {
    const char *name;
    const char *op;
    const char *env;       /* environment variable overriding the module path */
    const char *path;      /* module path known at build time (or NULL) */
    const char *symbol;
    int (*run)(bench_case *c, void *fn); /* 0, or -1 when it cannot do the case */
} bench_peer;

static int opencv_integral_run(bench_case *c, void *fn)
{
    peer_integral_fn f = (peer_integral_fn)(uintptr_t)fn;
    return f((int)c->in_type, (int)c->out_type, c->out_sq.data ? (int)PIXSUM_F64 : 0,
             c->in_buf, c->width, c->height, c->channels,
             c->width * c->channels * pixsum_type_size(c->in_type), c->peer_out, c->peer_step,
             c->out_sq.data ? c->peer_sq : NULL, c->peer_sq_step) == 0
               ? 0
               : -1;
}

#ifdef PIXSUM_PEER_OPENCV_PATH
#define OPENCV_PATH PIXSUM_PEER_OPENCV_PATH
#else
#define OPENCV_PATH NULL
#endif

static const bench_peer bench_peers[] = {
    {"peer.opencv", "integral", "PIXSUM_PEER_OPENCV", OPENCV_PATH,
     "pixsum_peer_opencv_integral", opencv_integral_run},
    {"peer.opencv", "integral_sq", "PIXSUM_PEER_OPENCV", OPENCV_PATH,
     "pixsum_peer_opencv_integral", opencv_integral_run},
    BENCH_HIST_PEERS
};
#define N_PEERS (sizeof bench_peers / sizeof bench_peers[0])

/* Resolves a peer's function (NULL when its module is missing). */
static void *peer_symbol(const bench_peer *p)
{
    const char *path = getenv(p->env);
    if (!path || !*path)
        path = p->path;
    if (!path)
        return NULL;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return NULL;
    return dlsym(h, p->symbol);
}

static const bench_peer *find_peer(const char *name, const char *op)
{
    for (size_t i = 0; i < N_PEERS; i++)
        if (strcmp(bench_peers[i].name, name) == 0 && strcmp(bench_peers[i].op, op) == 0)
            return &bench_peers[i];
    return NULL;
}

/* ---------------------------------------------------------------- floor */

/* Reads in_bytes from `in` and writes out_bytes to `out` (64-byte aligned),
 * interleaved in 4 KiB output chunks as a one-pass kernel would. */
#if BENCH_X86
__attribute__((target("avx512f"))) static void floor_avx512(const unsigned char *in,
                                                            size_t in_bytes, unsigned char *out,
                                                            size_t out_bytes, int stream)
{
    __m512i acc = _mm512_setzero_si512();
    size_t ip = 0;
    for (size_t op = 0; op < out_bytes; op += 4096) {
        size_t oe = op + 4096 < out_bytes ? op + 4096 : out_bytes;
        size_t ie = (size_t)((unsigned __int128)oe * in_bytes / out_bytes);
        for (; ip + 64 <= ie; ip += 64)
            acc = _mm512_xor_si512(acc, _mm512_loadu_si512((const void *)(in + ip)));
        size_t o = op;
        if (stream)
            for (; o + 64 <= oe; o += 64)
                _mm512_stream_si512((void *)(out + o), acc);
        else
            for (; o + 64 <= oe; o += 64)
                _mm512_store_si512((void *)(out + o), acc);
        for (; o < oe; o++)
            out[o] = (unsigned char)o;
    }
    _mm_sfence();
    volatile unsigned char sink = in[in_bytes - 1];
    (void)sink;
}

static void floor_sse2(const unsigned char *in, size_t in_bytes, unsigned char *out,
                       size_t out_bytes, int stream)
{
    __m128i acc = _mm_setzero_si128();
    size_t ip = 0;
    for (size_t op = 0; op < out_bytes; op += 4096) {
        size_t oe = op + 4096 < out_bytes ? op + 4096 : out_bytes;
        size_t ie = (size_t)((unsigned __int128)oe * in_bytes / out_bytes);
        for (; ip + 16 <= ie; ip += 16)
            acc = _mm_xor_si128(acc, _mm_loadu_si128((const __m128i *)(const void *)(in + ip)));
        size_t o = op;
        if (stream)
            for (; o + 16 <= oe; o += 16)
                _mm_stream_si128((__m128i *)(void *)(out + o), acc);
        else
            for (; o + 16 <= oe; o += 16)
                _mm_store_si128((__m128i *)(void *)(out + o), acc);
        for (; o < oe; o++)
            out[o] = (unsigned char)o;
    }
    _mm_sfence();
}
#endif

static void floor_portable(const unsigned char *in, size_t in_bytes, unsigned char *out,
                           size_t out_bytes, int stream)
{
    (void)stream;
    uint64_t acc = 0;
    size_t ip = 0;
    for (size_t op = 0; op < out_bytes; op += 4096) {
        size_t oe = op + 4096 < out_bytes ? op + 4096 : out_bytes;
        size_t ie = (size_t)((unsigned __int128)oe * in_bytes / out_bytes);
        for (; ip + 8 <= ie; ip += 8) {
            uint64_t v;
            memcpy(&v, in + ip, 8);
            acc ^= v;
        }
        for (size_t o = op; o + 8 <= oe; o += 8)
            memcpy(out + o, &acc, 8);
    }
}

typedef void (*floor_fn)(const unsigned char *, size_t, unsigned char *, size_t, int);

static floor_fn floor_kernel(void)
{
#if BENCH_X86
    /* the floor follows the library's active ISA, so --isa caps both */
    const char *isa = pixsum_cpu_isa();
    if (strcmp(isa, "avx512") == 0)
        return floor_avx512;
    if (strcmp(isa, "scalar") != 0)
        return floor_sse2;
#endif
    return floor_portable;
}

/* The floor of a case, split over `threads` threads by equal parts. */
typedef struct floor_part {
    const unsigned char *in;
    size_t in_bytes;
    unsigned char *out;
    size_t out_bytes;
    int stream;
    floor_fn fn;
} floor_part;

static void *floor_thread(void *arg)
{
    floor_part *p = arg;
    if (p->out_bytes)
        p->fn(p->in, p->in_bytes, p->out, p->out_bytes, p->stream);
    return NULL;
}

typedef struct floor_state {
    const unsigned char *in;
    size_t in_bytes;
    unsigned char *out;
    size_t out_bytes;
    int threads;
    int stream;
} floor_state;

static int floor_run(const floor_state *f)
{
    floor_fn fn = floor_kernel();
    int t = f->threads < 1 ? 1 : (f->threads > 64 ? 64 : f->threads);
    floor_part parts[64];
    pthread_t tids[64];
    for (int i = 0; i < t; i++) {
        /* 64-byte aligned output parts */
        size_t o0 = (f->out_bytes / 64 * (size_t)i / (size_t)t) * 64;
        size_t o1 = i + 1 == t ? f->out_bytes : (f->out_bytes / 64 * (size_t)(i + 1) / (size_t)t) * 64;
        size_t i0 = (size_t)((unsigned __int128)o0 * f->in_bytes / f->out_bytes);
        size_t i1 = (size_t)((unsigned __int128)o1 * f->in_bytes / f->out_bytes);
        parts[i] = (floor_part){f->in + i0, i1 - i0, f->out + o0, o1 - o0, f->stream, fn};
    }
    int started = 0;
    for (int i = 1; i < t; i++)
        if (pthread_create(&tids[i], NULL, floor_thread, &parts[i]) == 0)
            started = i;
        else
            floor_thread(&parts[i]);
    floor_thread(&parts[0]);
    for (int i = 1; i <= started; i++)
        pthread_join(tids[i], NULL);
    return 0;
}

/* ---------------------------------------------------------------- timing */

typedef struct bench_opts {
    int runs_max;      /* M */
    int kbest_k;       /* K */
    double kbest_eps;  /* eps */
    int runs_min;      /* at least this many timed runs for the median */
    int warmup;
    double max_seconds; /* per measurement, after runs_min */
} bench_opts;

typedef struct timing {
    double median_ms, kbest_ms, min_ms;
    int runs, converged;
} timing;

typedef int (*timed_fn)(void *arg);

/* Times fn: warm-up, then up to M runs; stops early once the K fastest agree
 * within eps and at least runs_min runs are in (or the time budget is spent). */
static int measure(const bench_opts *o, timed_fn fn, void *arg, timing *t)
{
    double samples[1024];
    int m = o->runs_max > 1024 ? 1024 : o->runs_max;
    for (int i = 0; i < o->warmup; i++)
        if (fn(arg) != 0)
            return -1;
    int n = 0, converged = 0;
    double start = now_ms();
    while (n < m) {
        double t0 = now_ms();
        if (fn(arg) != 0)
            return -1;
        samples[n++] = now_ms() - t0;
        if (n >= o->kbest_k) {
            double sorted[1024];
            memcpy(sorted, samples, (size_t)n * sizeof *sorted);
            qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
            converged = sorted[o->kbest_k - 1] <= sorted[0] * (1.0 + o->kbest_eps);
        }
        if (n >= o->runs_min && (converged || now_ms() - start > o->max_seconds * 1e3))
            break;
    }
    t->median_ms = sort_median(samples, n);
    t->runs = n;
    t->converged = converged;
    t->min_ms = samples[0];
    t->kbest_ms = samples[0];
    return 0;
}

typedef struct method_arg {
    bench_case *c;
    pixsum_ctx *ctx;
} method_arg;

static int time_method(void *arg)
{
    method_arg *a = arg;
    int st = a->c->op->run(a->c, a->ctx);
    if (st != PIXSUM_OK) {
        fprintf(stderr, "pixsum bench: %s\n", pixsum_last_error());
        return -1;
    }
    return 0;
}

typedef struct peer_arg {
    bench_case *c;
    const bench_peer *p;
    void *fn;
} peer_arg;

static int time_peer(void *arg)
{
    peer_arg *a = arg;
    return a->p->run(a->c, a->fn);
}

static int time_floor(void *arg)
{
    return floor_run(arg);
}

/* ---------------------------------------------------------------- output */

typedef struct record {
    char op[24], method[40], in_type[8], out_type[8], isa[8];
    size_t width, height, channels;
    int threads;
    timing t;
    double floor_ms, peer_ms;
    char peer[24];
    int floor_stream;
    double mbytes;
    /* CUDA methods on host memory: the last call's copies and kernels (ms,
     * from pixsum_cuda_last_transfer_ms); have_transfer 0 otherwise */
    int have_transfer;
    double h2d_ms, kernel_ms, d2h_ms, call_ms;
} record;

/* Present in a library built with CUDA only (pixsum_cuda.h). */
int pixsum_cuda_last_transfer_ms(const pixsum_ctx *ctx, double *h2d_ms, double *kernel_ms,
                                 double *d2h_ms, double *total_ms) __attribute__((weak));

/* Fills r's transfer fields when ctx's last call went through a CUDA method. */
static void read_transfer(const pixsum_ctx *ctx, record *r)
{
    r->have_transfer = pixsum_cuda_last_transfer_ms &&
                       pixsum_cuda_last_transfer_ms(ctx, &r->h2d_ms, &r->kernel_ms, &r->d2h_ms,
                                                    &r->call_ms) == PIXSUM_OK;
}

static void print_header(void)
{
    printf("%-11s %-15s %-8s %-11s %3s %3s %10s %10s %7s %8s %8s\n", "op", "method", "pair",
           "size", "ch", "thr", "median_ms", "kbest_ms", "px/ns", "x peer", "of floor");
}

static void print_record(const record *r)
{
    char pair[24], size[32], peer[16] = "-";
    snprintf(pair, sizeof pair, "%s>%s", r->in_type, r->out_type);
    snprintf(size, sizeof size, "%zux%zu", r->width, r->height);
    double px = (double)(r->width * r->height);
    if (r->peer_ms > 0)
        snprintf(peer, sizeof peer, "%.2f", r->peer_ms / r->t.median_ms);
    printf("%-11s %-15s %-8s %-11s %3zu %3d %10.4f %10.4f%s %7.2f %8s %8.2f\n", r->op,
           r->method, pair, size, r->channels, r->threads, r->t.median_ms, r->t.kbest_ms,
           r->t.converged ? " " : "*", px / (r->t.median_ms * 1e6), peer,
           r->floor_ms / r->t.median_ms);
    if (r->have_transfer)
        printf("%-11s   last call: host->device %.4f ms, kernels %.4f ms, device->host %.4f ms "
               "(overlapped in chunks), whole call %.4f ms\n",
               "", r->h2d_ms, r->kernel_ms, r->d2h_ms, r->call_ms);
    fflush(stdout);
}

static void json_record(FILE *f, const record *r, int first)
{
    fprintf(f,
            "%s\n  {\"op\": \"%s\", \"method\": \"%s\", \"in_type\": \"%s\", "
            "\"out_type\": \"%s\", \"width\": %zu, \"height\": %zu, \"channels\": %zu, "
            "\"threads\": %d, \"isa\": \"%s\", \"median_ms\": %.6f, \"kbest_ms\": %.6f, "
            "\"kbest_converged\": %s, \"runs\": %d, \"floor_ms\": %.6f, "
            "\"floor_stores\": \"%s\", \"bytes\": %.0f, \"px_per_ns\": %.4f, ",
            first ? "" : ",", r->op, r->method, r->in_type, r->out_type, r->width, r->height,
            r->channels, r->threads, r->isa, r->t.median_ms, r->t.kbest_ms,
            r->t.converged ? "true" : "false", r->t.runs, r->floor_ms,
            r->floor_stream ? "non-temporal" : "normal", r->mbytes * 1e6,
            (double)(r->width * r->height) / (r->t.median_ms * 1e6));
    if (r->peer_ms > 0)
        fprintf(f, "\"peer\": \"%s\", \"peer_median_ms\": %.6f, \"ratio_peer\": %.4f, ",
                r->peer, r->peer_ms, r->peer_ms / r->t.median_ms);
    else
        fprintf(f, "\"peer\": null, \"peer_median_ms\": null, \"ratio_peer\": null, ");
    if (r->have_transfer)
        fprintf(f, "\"h2d_ms\": %.6f, \"kernel_ms\": %.6f, \"d2h_ms\": %.6f, \"call_ms\": %.6f, ",
                r->h2d_ms, r->kernel_ms, r->d2h_ms, r->call_ms);
    fprintf(f, "\"ratio_floor\": %.4f}", r->floor_ms / r->t.median_ms);
}

/* ---------------------------------------------------------------- options */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: pixsum bench [options]\n"
            "  --op LIST          operations: integral, integral_sq (default integral)\n"
            "  --method LIST      method names, peers (peer.opencv) or 'all' (default\n"
            "                     auto,peer.opencv); 'all' = every available method of the op\n"
            "  --pair LIST        in:out type pairs, e.g. u8:u32,f32:f64 (default u8:u32)\n"
            "  --size LIST        N (N x N) or WxH, e.g. 1024,4096x2048 (default 1024)\n"
            "  --threads LIST     thread counts (default 1)\n"
            "  --channels N       interleaved channels, 1-4 (default 1)\n"
            "  --padded           zero-padded (W+1)x(H+1) tables like OpenCV (default: inclusive)\n"
            "  --runs M           most timed runs (default 20)\n"
            "  --kbest K,EPS      K-best scheme (default 5,0.001)\n"
            "  --min-runs N       fewest timed runs for the median (default 7)\n"
            "  --max-seconds S    time budget per measurement after --min-runs (default 4)\n"
            "  --isa NAME         cap the ISA: scalar, sse2, avx2, avx512\n"
            "  --no-floor         skip the memory floor\n"
            "  --json FILE        write one JSON record per measurement\n"
            "  --list             list the operations and peers\n");
}

/* Splits a comma list in place into out[] (at most MAX_LIST). */
static int split_list(char *s, char **out)
{
    int n = 0;
    for (char *tok = strtok(s, ","); tok && n < MAX_LIST; tok = strtok(NULL, ","))
        out[n++] = tok;
    return n;
}

static int parse_size(const char *s, size_t *w, size_t *h)
{
    char *end;
    errno = 0;
    unsigned long long a = strtoull(s, &end, 10);
    if (errno || end == s || a == 0)
        return -1;
    if (*end == 'x' || *end == 'X') {
        const char *p = end + 1;
        unsigned long long b = strtoull(p, &end, 10);
        if (errno || end == p || *end || b == 0)
            return -1;
        *w = (size_t)a;
        *h = (size_t)b;
        return 0;
    }
    if (*end)
        return -1;
    *w = *h = (size_t)a;
    return 0;
}

static const bench_op *find_op(const char *name)
{
    for (size_t i = 0; i < N_OPS; i++)
        if (strcmp(bench_ops[i].name, name) == 0)
            return &bench_ops[i];
    return NULL;
}

/* ---------------------------------------------------------------- main */

typedef struct run_state {
    bench_opts o;
    int do_floor;
    FILE *json;
    int json_first;
    int failures;
} run_state;

static void finish_record(run_state *rs, record *r)
{
    print_record(r);
    if (rs->json) {
        json_record(rs->json, r, rs->json_first);
        rs->json_first = 0;
    }
}

/* Benchmarks one case with every requested method. */
static void bench_one_case(run_state *rs, bench_case *c, char **methods, int nmethods)
{
    record base;
    memset(&base, 0, sizeof base);
    snprintf(base.op, sizeof base.op, "%s", c->op->name);
    snprintf(base.in_type, sizeof base.in_type, "%s", pixsum_type_name(c->in_type));
    snprintf(base.out_type, sizeof base.out_type, "%s", pixsum_type_name(c->out_type));
    snprintf(base.isa, sizeof base.isa, "%s", pixsum_cpu_isa());
    base.width = c->width;
    base.height = c->height;
    base.channels = c->channels;
    base.threads = c->threads;
    base.mbytes = (double)(c->op->bytes_in(c) + c->op->bytes_out(c)) / 1e6;

    /* memory floor for the same bytes: the faster of normal and streamed stores */
    if (rs->do_floor) {
        /* its own output buffer of the op's output size (all tables together) */
        size_t out_bytes = c->op->bytes_out(c);
        unsigned char *fbuf = alloc_aligned(out_bytes);
        if (fbuf) {
            memset(fbuf, 0, out_bytes);
            floor_state fs = {c->in_buf, c->op->bytes_in(c), fbuf, out_bytes, c->threads, 0};
            timing tn, ts;
            measure(&rs->o, time_floor, &fs, &tn);
            fs.stream = 1;
            measure(&rs->o, time_floor, &fs, &ts);
            base.floor_ms = tn.median_ms < ts.median_ms ? tn.median_ms : ts.median_ms;
            base.floor_stream = ts.median_ms <= tn.median_ms;
            free(fbuf);
        } else {
            fprintf(stderr, "pixsum bench: no memory for the floor's %zu-byte output\n",
                    out_bytes);
        }
    }

    /* the peer first (the same for every method of this case) */
    for (int m = 0; m < nmethods; m++) {
        if (strncmp(methods[m], "peer.", 5) != 0)
            continue;
        const bench_peer *p = find_peer(methods[m], c->op->name);
        void *fn = p ? peer_symbol(p) : NULL;
        if (!fn) {
            fprintf(stderr, "pixsum bench: %s is not available for %s (module not built "
                            "or not found; set %s)\n",
                    methods[m], c->op->name, p ? p->env : "its path");
            continue;
        }
        peer_arg pa = {c, p, fn};
        record r = base;
        snprintf(r.method, sizeof r.method, "%s", methods[m]);
        if (measure(&rs->o, time_peer, &pa, &r.t) != 0) {
            fprintf(stderr, "pixsum bench: %s cannot do %s %s->%s\n", methods[m], c->op->name,
                    base.in_type, base.out_type);
            continue;
        }
        base.peer_ms = r.t.median_ms;
        snprintf(base.peer, sizeof base.peer, "%s", methods[m]);
        r.peer_ms = r.t.median_ms;
        snprintf(r.peer, sizeof r.peer, "%s", methods[m]);
        finish_record(rs, &r);
    }

    for (int m = 0; m < nmethods; m++) {
        if (strncmp(methods[m], "peer.", 5) == 0)
            continue;
        pixsum_ctx *ctx = pixsum_ctx_new();
        if (!ctx)
            return;
        pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, c->threads);
        pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, c->padded);
        pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 1); /* time the arithmetic, not refusals */
        if (pixsum_ctx_set_method(ctx, methods[m]) != PIXSUM_OK) {
            fprintf(stderr, "pixsum bench: unknown method '%s'\n", methods[m]);
            rs->failures++;
            pixsum_ctx_free(ctx);
            continue;
        }
        method_arg ma = {c, ctx};
        record r = base;
        snprintf(r.method, sizeof r.method, "%s", methods[m]);
        int st = c->op->run(c, ctx); /* probe: unsupported cases are skipped quietly */
        if (st == PIXSUM_ERR_UNSUPPORTED || st == PIXSUM_ERR_UNAVAILABLE) {
            pixsum_ctx_free(ctx);
            continue;
        }
        if (st != PIXSUM_OK || measure(&rs->o, time_method, &ma, &r.t) != 0) {
            fprintf(stderr, "pixsum bench: %s failed: %s\n", methods[m], pixsum_last_error());
            rs->failures++;
            pixsum_ctx_free(ctx);
            continue;
        }
        read_transfer(ctx, &r);
        finish_record(rs, &r);
        pixsum_ctx_free(ctx);
    }
}

/* Expands 'all' into every available method that can do the op. */
static int expand_methods(char **in, int n, const bench_op *op, char **out)
{
    int k = 0;
    for (int i = 0; i < n && k < MAX_LIST; i++) {
        if (strcmp(in[i], "all") != 0) {
            out[k++] = in[i];
            continue;
        }
        size_t count;
        const pixsum_method_info *infos = pixsum_methods(&count);
        for (size_t j = 0; j < count && k < MAX_LIST; j++)
            if ((infos[j].ops & op->ops) && infos[j].available &&
                infos[j].backend != PIXSUM_BACKEND_CUDA && infos[j].backend != PIXSUM_BACKEND_GL)
                out[k++] = (char *)infos[j].name;
        for (size_t j = 0; j < N_PEERS && k < MAX_LIST; j++)
            if (strcmp(bench_peers[j].op, op->name) == 0)
                out[k++] = (char *)bench_peers[j].name;
    }
    return k;
}

int cmd_bench(int argc, char **argv)
{
    char op_s[256] = "integral", method_s[1024] = "auto,peer.opencv", pair_s[256] = "u8:u32",
         size_s[256] = "1024", thr_s[128] = "1";
    const char *json_path = NULL;
    size_t channels = 1;
    int padded = 0;
    run_state rs;
    memset(&rs, 0, sizeof rs);
    rs.o = (bench_opts){20, 5, 0.001, 7, 2, 4.0};
    rs.do_floor = 1;
    rs.json_first = 1;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE()                                                                 \
    do {                                                                             \
        if (!v) {                                                                    \
            fprintf(stderr, "pixsum bench: %s needs a value\n", a);                  \
            return 2;                                                                \
        }                                                                            \
        i++;                                                                         \
    } while (0)
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--op") == 0) {
            NEED_VALUE();
            snprintf(op_s, sizeof op_s, "%s", v);
        } else if (strcmp(a, "--method") == 0) {
            NEED_VALUE();
            snprintf(method_s, sizeof method_s, "%s", v);
        } else if (strcmp(a, "--pair") == 0) {
            NEED_VALUE();
            snprintf(pair_s, sizeof pair_s, "%s", v);
        } else if (strcmp(a, "--size") == 0) {
            NEED_VALUE();
            snprintf(size_s, sizeof size_s, "%s", v);
        } else if (strcmp(a, "--threads") == 0) {
            NEED_VALUE();
            snprintf(thr_s, sizeof thr_s, "%s", v);
        } else if (strcmp(a, "--channels") == 0) {
            NEED_VALUE();
            channels = (size_t)strtoul(v, NULL, 10);
            if (channels < 1 || channels > 4) {
                fprintf(stderr, "pixsum bench: --channels must be 1-4\n");
                return 2;
            }
        } else if (strcmp(a, "--padded") == 0) {
            padded = 1;
        } else if (strcmp(a, "--runs") == 0) {
            NEED_VALUE();
            rs.o.runs_max = atoi(v);
        } else if (strcmp(a, "--min-runs") == 0) {
            NEED_VALUE();
            rs.o.runs_min = atoi(v);
        } else if (strcmp(a, "--max-seconds") == 0) {
            NEED_VALUE();
            rs.o.max_seconds = atof(v);
        } else if (strcmp(a, "--kbest") == 0) {
            NEED_VALUE();
            if (sscanf(v, "%d,%lf", &rs.o.kbest_k, &rs.o.kbest_eps) != 2) {
                fprintf(stderr, "pixsum bench: --kbest wants K,EPS (e.g. 5,0.001)\n");
                return 2;
            }
        } else if (strcmp(a, "--isa") == 0) {
            NEED_VALUE();
            if (pixsum_cpu_force_isa(v) != PIXSUM_OK) {
                fprintf(stderr, "pixsum bench: unknown ISA '%s' (scalar, sse2, avx2, avx512)\n",
                        v);
                return 2;
            }
        } else if (strcmp(a, "--no-floor") == 0) {
            rs.do_floor = 0;
        } else if (strcmp(a, "--json") == 0) {
            NEED_VALUE();
            json_path = v;
        } else if (strcmp(a, "--list") == 0) {
            printf("operations:");
            for (size_t k = 0; k < N_OPS; k++)
                printf(" %s", bench_ops[k].name);
            printf("\npeers:\n");
            for (size_t k = 0; k < N_PEERS; k++)
                printf("  %s (%s): %s\n", bench_peers[k].name, bench_peers[k].op,
                       peer_symbol(&bench_peers[k]) ? "available" : "not built / not found");
            return 0;
        } else {
            fprintf(stderr, "pixsum bench: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
#undef NEED_VALUE
    }
    if (rs.o.runs_max < 1 || rs.o.kbest_k < 1 || rs.o.runs_min < 1 || rs.o.kbest_eps < 0) {
        fprintf(stderr, "pixsum bench: --runs, --min-runs and K must be >= 1\n");
        return 2;
    }
    if (rs.o.runs_min > rs.o.runs_max)
        rs.o.runs_min = rs.o.runs_max;

    char *ops[MAX_LIST], *methods_in[MAX_LIST], *pairs[MAX_LIST], *sizes[MAX_LIST],
        *thr[MAX_LIST];
    int nops = split_list(op_s, ops), nmeth = split_list(method_s, methods_in),
        npairs = split_list(pair_s, pairs), nsizes = split_list(size_s, sizes),
        nthr = split_list(thr_s, thr);

    /* Every name on the command line is checked before any timing: an unknown
     * op, method, type pair or size is a usage error (2) as in the other
     * commands, not a failure found halfway through the table. */
    unsigned first_ops = 0;
    for (int oi = 0; oi < nops; oi++) {
        const bench_op *op = find_op(ops[oi]);
        if (!op)
            return cli_usage_error("bench", "unknown op '%s' (try --list)", ops[oi]);
        if (!first_ops)
            first_ops = op->ops;
    }
    for (int mi = 0; mi < nmeth; mi++) {
        const char *name = methods_in[mi];
        if (!strcmp(name, "auto") || !strcmp(name, "all"))
            continue;
        if (!strncmp(name, "peer.", 5)) {
            int known = 0;
            for (size_t k = 0; k < N_PEERS; k++)
                known |= !strcmp(bench_peers[k].name, name);
            if (!known)
                return cli_usage_error("bench", "unknown peer '%s' (try --list)", name);
            continue;
        }
        int id = pixsum_method_find(name);
        const pixsum_method_info *info = id > 0 ? pixsum_method_get(id) : NULL;
        int does_one = 0;
        for (int oi = 0; info && oi < nops; oi++)
            does_one |= (info->ops & find_op(ops[oi])->ops) == find_op(ops[oi])->ops;
        if (!does_one)
            return cli_method_error("bench", name, first_ops);
    }
    for (int pi = 0; pi < npairs; pi++) {
        char pbuf[64];
        snprintf(pbuf, sizeof pbuf, "%s", pairs[pi]);
        char *colon = strchr(pbuf, ':');
        if (colon)
            *colon = 0;
        if (pixsum_type_from_name(pbuf) == PIXSUM_TYPE_NONE ||
            (colon && pixsum_type_from_name(colon + 1) == PIXSUM_TYPE_NONE))
            return cli_usage_error("bench", "bad type pair '%s' (want e.g. u8:u32)", pairs[pi]);
    }
    for (int si = 0; si < nsizes; si++) {
        size_t w, h;
        if (parse_size(sizes[si], &w, &h) != 0)
            return cli_usage_error("bench", "bad size '%s'", sizes[si]);
    }

    /* The JSON goes to a temporary put in place at the end (tools/out_file.h):
     * an interrupted or failed run leaves the previous file as it was. */
    text_out json_out = {0};
    if (json_path) {
        if (text_out_open(&json_out, "bench", json_path) != 0)
            return 1;
        rs.json = json_out.file;
        fprintf(rs.json, "[");
    }
    printf("# pixsum %s bench, isa %s, M=%d K=%d eps=%g; x peer = peer/method, "
           "of floor = floor/method (same run); * = K-best not converged\n",
           pixsum_version(), pixsum_cpu_isa(), rs.o.runs_max, rs.o.kbest_k,
           rs.o.kbest_eps);
    print_header();
    for (int oi = 0; oi < nops; oi++) {
        const bench_op *op = find_op(ops[oi]);
        if (!op) {
            fprintf(stderr, "pixsum bench: unknown op '%s' (try --list)\n", ops[oi]);
            rs.failures++;
            continue;
        }
        char *methods[MAX_LIST];
        int nm = expand_methods(methods_in, nmeth, op, methods);
        for (int pi = 0; pi < npairs; pi++) {
            char pbuf[64];
            snprintf(pbuf, sizeof pbuf, "%s", pairs[pi]);
            char *colon = strchr(pbuf, ':');
            if (colon)
                *colon = 0;
            pixsum_type tin = pixsum_type_from_name(pbuf);
            pixsum_type tout = colon ? pixsum_type_from_name(colon + 1) : op->default_out;
            if (tin == PIXSUM_TYPE_NONE || tout == PIXSUM_TYPE_NONE) {
                fprintf(stderr, "pixsum bench: bad type pair '%s' (want e.g. u8:u32)\n",
                        pairs[pi]);
                rs.failures++;
                continue;
            }
            for (int si = 0; si < nsizes; si++) {
                size_t w, h;
                if (parse_size(sizes[si], &w, &h) != 0) {
                    fprintf(stderr, "pixsum bench: bad size '%s'\n", sizes[si]);
                    rs.failures++;
                    continue;
                }
                for (int ti = 0; ti < nthr; ti++) {
                    bench_case c;
                    memset(&c, 0, sizeof c);
                    c.op = op;
                    c.in_type = tin;
                    c.out_type = tout;
                    c.width = w;
                    c.height = h;
                    c.channels = channels;
                    c.threads = atoi(thr[ti]) > 0 ? atoi(thr[ti]) : 1;
                    c.padded = padded;
                    if (op->setup(&c) != 0) {
                        case_free(&c);
                        rs.failures++;
                        continue;
                    }
                    bench_one_case(&rs, &c, methods, nm);
                    case_free(&c);
                }
            }
        }
    }
    if (rs.json) {
        fprintf(rs.json, "\n]\n");
        if (text_out_commit(&json_out, "bench") != 0)
            return 1;
    }
    return rs.failures ? 1 : 0;
}

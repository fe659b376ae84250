/*
 * test_core_threads.c - concurrency: several POSIX threads, each with its own
 * context, compute integral tables (plain, squared, tilted, 3-D, padded or
 * not, wrap or not, every method) and box sums at the same time, and must get
 * byte for byte the tables that serial calls produced beforehand. Each thread
 * also provokes failures and checks that the detail text it reads is its own
 * (the text is thread-local). Labelled `threads` (tests/core_labels.cmake) so
 * `make test-tsan` runs it under ThreadSanitizer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pixsum.h"
#include "testutil.h"

enum { NTHREADS = 4, JOBS_PER_THREAD = 6, ROUNDS = 4 };

typedef struct job {
    int kind; /* 0 plain, 1 squared + plain, 2 tilted */
    int method, padded, wrap;
    tu_image in;
    tu_image out, out_sq;        /* written by the thread */
    void *want, *want_sq;        /* serial results (whole blocks) */
    pixsum_box box;
    unsigned char want_box[32];
} job;

typedef struct worker {
    int index;
    job jobs[JOBS_PER_THREAD];
    pthread_barrier_t *start;
    char failure[512]; /* empty = all good */
} worker;

static int run_job(pixsum_ctx *ctx, job *j)
{
    switch (j->kind) {
    case 0: return pixsum_integral(ctx, &j->in.view, &j->out.view);
    case 1: return pixsum_integral_sq(ctx, &j->in.view, &j->out.view, &j->out_sq.view);
    default: return pixsum_integral_tilted(ctx, &j->in.view, &j->out.view);
    }
}

static pixsum_ctx *ctx_for(const job *j)
{
    pixsum_ctx *ctx = pixsum_ctx_new();
    if (!ctx)
        return NULL;
    if (pixsum_ctx_set(ctx, PIXSUM_PARAM_METHOD, j->method) != PIXSUM_OK ||
        pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, j->padded) != PIXSUM_OK ||
        pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, j->wrap) != PIXSUM_OK ||
        pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, 2) != PIXSUM_OK) {
        pixsum_ctx_free(ctx);
        return NULL;
    }
    return ctx;
}

/* Builds job j of worker w: a random image, outputs, and the serial result. */
static void make_job(tu_rng *r, job *j, int w, int k)
{
    memset(j, 0, sizeof *j);
    j->kind = (w + k) % 3;
    const pixsum_type ins[] = {PIXSUM_U8, PIXSUM_U16, PIXSUM_I16, PIXSUM_F32};
    const pixsum_type outs[] = {PIXSUM_U32, PIXSUM_U64, PIXSUM_I64, PIXSUM_F64};
    pixsum_type it = ins[(w + 2 * k) % 4];
    pixsum_type ot = outs[(w * 3 + k) % 4];
    if (it == PIXSUM_I16 && ot == PIXSUM_U32)
        ot = PIXSUM_I64;
    if (it == PIXSUM_I16 && ot == PIXSUM_U64)
        ot = PIXSUM_I64;
    if (it == PIXSUM_F32)
        ot = PIXSUM_F64;
    j->padded = (int)tu_below(r, 2);
    j->wrap = 1;
    size_t width = tu_between(r, 1, 300), height = tu_between(r, 1, 200);
    size_t depth = j->kind == 0 && k % 2 ? tu_between(r, 2, 4) : 1;
    size_t ch = tu_between(r, 1, 4);
    unsigned ops = j->kind == 2 ? PIXSUM_OP_TILTED
                   : j->kind == 1 ? PIXSUM_OP_INTEGRAL_SQ
                                  : (depth > 1 ? PIXSUM_OP_INTEGRAL_3D : PIXSUM_OP_INTEGRAL);
    if (j->kind == 1 && depth > 1)
        ops |= PIXSUM_OP_INTEGRAL_3D;
    int ids[64];
    size_t n = tu_methods_for(ops, ids, 64);
    j->method = ids[tu_below(r, n)];
    tu_layout l = tu_random_layout(r);
    assert_int_equal(tu_image_alloc(&j->in, it, width, height, depth, ch, &l), 0);
    tu_fill_random(r, &j->in.view, TU_FILL_MIXED);
    size_t tw = width + 1, th = height + 1, td = 1;
    pixsum_ctx *ctx = ctx_for(j);
    assert_non_null(ctx);
    if (j->kind != 2)
        pixsum_integral_shape(ctx, &j->in.view, &tw, &th, &td);
    assert_int_equal(tu_image_alloc(&j->out, ot, tw, th, td, ch, &l), 0);
    if (j->kind == 1)
        assert_int_equal(tu_image_alloc(&j->out_sq, it == PIXSUM_F32 ? PIXSUM_F64 : PIXSUM_U64,
                                        tw, th, td, ch, &l),
                         0);
    int st = run_job(ctx, j);
    if (st == PIXSUM_ERR_UNSUPPORTED && !tu_method_must_support(j->method)) {
        /* this optional method does not take this job: use the reference one */
        j->method = pixsum_method_find("serial.2wh");
        pixsum_ctx_free(ctx);
        ctx = ctx_for(j);
        st = run_job(ctx, j);
    }
    if (st != PIXSUM_OK)
        fail_msg("serial run of job %d/%d (%s): %s", w, k, tu_method_name(j->method),
                 pixsum_last_error());
    j->want = malloc(j->out.block_bytes);
    assert_non_null(j->want);
    memcpy(j->want, j->out.block, j->out.block_bytes);
    if (j->kind == 1) {
        j->want_sq = malloc(j->out_sq.block_bytes);
        assert_non_null(j->want_sq);
        memcpy(j->want_sq, j->out_sq.block, j->out_sq.block_bytes);
    }
    /* one box query on the table (not for the tilted table) */
    j->box = (pixsum_box){0, 0, 0, width, height, depth};
    if (j->kind != 2)
        assert_int_equal(pixsum_box_sum(ctx, &j->out.view, &j->box, j->want_box), PIXSUM_OK);
    pixsum_ctx_free(ctx);
}

/* Overwrites every row of a table (not the gaps between rows). */
static void scramble(const pixsum_view *v, int seed)
{
    size_t row = v->width * v->channels * pixsum_type_size(v->type);
    for (size_t z = 0; z < v->depth; z++)
        for (size_t y = 0; y < v->height; y++)
            memset(tu_elem(v, 0, y, z, 0), 0x41 + seed, row);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(w->start);
    char name[64];
    for (int round = 0; round < ROUNDS; round++)
        for (int k = 0; k < JOBS_PER_THREAD; k++) {
            job *j = &w->jobs[k];
            pixsum_ctx *ctx = ctx_for(j);
            if (!ctx) {
                snprintf(w->failure, sizeof w->failure, "thread %d: context setup failed",
                         w->index);
                return NULL;
            }
            /* garbage in every table row; the whole block must match the
             * serial run again afterwards (also the bytes between rows) */
            scramble(&j->out.view, round);
            if (j->kind == 1)
                scramble(&j->out_sq.view, round);
            int st = run_job(ctx, j);
            if (st != PIXSUM_OK ||
                memcmp(j->out.block, j->want, j->out.block_bytes) != 0 ||
                (j->kind == 1 && memcmp(j->out_sq.block, j->want_sq, j->out_sq.block_bytes))) {
                snprintf(w->failure, sizeof w->failure,
                         "thread %d round %d job %d (%s, kind %d): status %d (%s), table %s",
                         w->index, round, k, tu_method_name(j->method), j->kind, st,
                         pixsum_last_error(), st == PIXSUM_OK ? "differs from the serial run" : "-");
                pixsum_ctx_free(ctx);
                return NULL;
            }
            if (j->kind != 2) {
                unsigned char got[32];
                if (pixsum_box_sum(ctx, &j->out.view, &j->box, got) != PIXSUM_OK ||
                    memcmp(got, j->want_box, j->out.view.channels *
                                                 pixsum_type_size(j->out.view.type)) != 0) {
                    snprintf(w->failure, sizeof w->failure, "thread %d: box sum differs",
                             w->index);
                    pixsum_ctx_free(ctx);
                    return NULL;
                }
            }
            /* a failure whose text names this thread; no other thread's text
             * may show up here */
            snprintf(name, sizeof name, "no-such-method-of-thread-%d-round-%d", w->index, round);
            if (pixsum_ctx_set_method(ctx, name) != PIXSUM_ERR_UNKNOWN_METHOD ||
                !strstr(pixsum_last_error(), name)) {
                snprintf(w->failure, sizeof w->failure, "thread %d: detail text '%s' is not "
                         "its own ('%s')", w->index, pixsum_last_error(), name);
                pixsum_ctx_free(ctx);
                return NULL;
            }
            pixsum_ctx_free(ctx);
            if (pixsum_last_error()[0] == '\0') {
                snprintf(w->failure, sizeof w->failure, "thread %d: detail text lost", w->index);
                return NULL;
            }
        }
    return NULL;
}

static void test_threads_match_serial(void **state)
{
    (void)state;
    static worker workers[NTHREADS];
    pthread_barrier_t start;
    assert_int_equal(pthread_barrier_init(&start, NULL, NTHREADS), 0);
    tu_rng *r = tu_global_rng();
    for (int w = 0; w < NTHREADS; w++) {
        workers[w].index = w;
        workers[w].start = &start;
        workers[w].failure[0] = '\0';
        for (int k = 0; k < JOBS_PER_THREAD; k++)
            make_job(r, &workers[w].jobs[k], w, k);
    }
    pthread_t tid[NTHREADS];
    for (int w = 0; w < NTHREADS; w++)
        assert_int_equal(pthread_create(&tid[w], NULL, worker_main, &workers[w]), 0);
    for (int w = 0; w < NTHREADS; w++)
        assert_int_equal(pthread_join(tid[w], NULL), 0);
    pthread_barrier_destroy(&start);
    for (int w = 0; w < NTHREADS; w++) {
        if (workers[w].failure[0])
            fail_msg("%s (seed %llu)", workers[w].failure, (unsigned long long)tu_seed());
        for (int k = 0; k < JOBS_PER_THREAD; k++) {
            job *j = &workers[w].jobs[k];
            tu_image_free(&j->in);
            tu_image_free(&j->out);
            if (j->kind == 1)
                tu_image_free(&j->out_sq);
            free(j->want);
            free(j->want_sq);
        }
    }
}

/* The registry is built on first use: many threads racing to be first must
 * all see the same complete list. */
static void *registry_race(void *arg)
{
    size_t *count = arg;
    pixsum_methods(count);
    return NULL;
}

static void test_registry_first_use_race(void **state)
{
    (void)state;
    pthread_t tid[8];
    size_t counts[8];
    for (int i = 0; i < 8; i++)
        assert_int_equal(pthread_create(&tid[i], NULL, registry_race, &counts[i]), 0);
    for (int i = 0; i < 8; i++)
        assert_int_equal(pthread_join(tid[i], NULL), 0);
    size_t n = 0;
    pixsum_methods(&n);
    for (int i = 0; i < 8; i++)
        assert_int_equal(counts[i], n);
}

int main(void)
{
    /* The registry race must be the first use of the library in the process. */
    const struct CMUnitTest first[] = {cmocka_unit_test(test_registry_first_use_race)};
    int failed = cmocka_run_group_tests_name("registry", first, NULL, NULL);
    tu_init("test_core_threads");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_match_serial),
    };
    return failed + cmocka_run_group_tests_name("threads", tests, NULL, NULL);
}

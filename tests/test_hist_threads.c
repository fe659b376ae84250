/*
 * test_hist_threads.c - concurrency of the histogram functions: several POSIX
 * threads, each with its own contexts, compute histograms (every registered
 * histogram method: CPU, OpenMP and, where the build and machine have them, GL
 * and CUDA), joint histograms, integral-histogram queries and equalisations at
 * the same time, and must get exactly what serial calls produced beforehand
 * (counts, the below/above/NaN figures, equalised pixels). Labelled `threads`
 * (tests/hist_labels.cmake) so `make test-tsan` runs it under ThreadSanitizer.
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

enum { NTHREADS = 4, JOBS_PER_THREAD = 5, ROUNDS = 3 };

typedef struct hist_job {
    int method;
    tu_image in, mask, other;   /* other: second image of the joint histogram */
    pixsum_hist_spec spec;
    uint64_t *want, *got;       /* bins x channels counts */
    size_t counts_len;
    pixsum_hist_info want_info;
    uint64_t *want_joint, *got_joint;
    size_t joint_len;
    pixsum_joint_info want_joint_info;
    pixsum_hist_spec query_spec;      /* few bins: integral histograms are big */
    uint64_t *want_query, *got_query; /* integral-histogram query of a crop */
    size_t query_len, qx, qy, qw, qh;
    tu_image eq_out;            /* equalised image (u8/u16 jobs only) */
    void *want_eq;
} hist_job;

typedef struct worker {
    int index;
    hist_job jobs[JOBS_PER_THREAD];
    pthread_barrier_t *start;
    char failure[512]; /* empty = all good */
} worker;

static pixsum_ctx *ctx_with(int method)
{
    pixsum_ctx *ctx = pixsum_ctx_new();
    if (ctx && (pixsum_ctx_set(ctx, PIXSUM_PARAM_METHOD, method) != PIXSUM_OK ||
                pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, 2) != PIXSUM_OK)) {
        pixsum_ctx_free(ctx);
        return NULL;
    }
    return ctx;
}

static int is_small_int(pixsum_type t)
{
    return t == PIXSUM_U8 || t == PIXSUM_U16;
}

/* Builds job k of worker w and records the serial results. */
static void make_job(tu_rng *r, hist_job *j, int w, int k)
{
    memset(j, 0, sizeof *j);
    const pixsum_type types[] = {PIXSUM_U8, PIXSUM_U16, PIXSUM_I16,
                                 PIXSUM_I32, PIXSUM_F32, PIXSUM_F64};
    pixsum_type t = types[(size_t)(w * JOBS_PER_THREAD + k) % 6];
    size_t width = tu_between(r, 1, 260), height = tu_between(r, 1, 150);
    size_t ch = tu_between(r, 1, 4);
    tu_layout l = tu_random_layout(r);
    assert_int_equal(tu_image_alloc(&j->in, t, width, height, 1, ch, &l), 0);
    tu_fill_random(r, &j->in.view, tu_below(r, 4) ? TU_FILL_MIXED : TU_FILL_SMALL);
    if (tu_below(r, 2)) {
        assert_int_equal(tu_image_alloc(&j->mask, PIXSUM_U8, width, height, 1, 1, NULL), 0);
        tu_fill_random(r, &j->mask.view, TU_FILL_SMALL);
        j->spec.mask = &j->mask.view;
    }
    if (tu_below(r, 2))
        j->spec.bins = tu_between(r, 1, 300);
    if (tu_below(r, 2)) {
        j->spec.lo = -100.0 * (double)tu_below(r, 3);
        j->spec.hi = j->spec.lo + (double)tu_between(r, 1, 70000);
    }

    int ids[64];
    size_t n = tu_methods_for(PIXSUM_OP_HISTOGRAM, ids, 64);
    assert_true(n > 0);
    j->method = ids[tu_below(r, n)];
    pixsum_ctx *ctx = ctx_with(j->method);
    assert_non_null(ctx);
    pixsum_hist_info info;
    assert_int_equal(pixsum_hist_resolve(&j->in.view, &j->spec, &info), PIXSUM_OK);
    j->counts_len = info.bins * info.channels;
    j->want = calloc(j->counts_len, sizeof(uint64_t));
    j->got = calloc(j->counts_len, sizeof(uint64_t));
    assert_true(j->want && j->got);
    int st = pixsum_histogram(ctx, &j->in.view, &j->spec, j->want, j->counts_len,
                              &j->want_info);
    if (st == PIXSUM_ERR_UNSUPPORTED || st == PIXSUM_ERR_UNAVAILABLE) {
        /* this method does not take this job (e.g. a GL bin limit): use auto */
        pixsum_ctx_free(ctx);
        j->method = 0;
        ctx = ctx_with(0);
        st = pixsum_histogram(ctx, &j->in.view, &j->spec, j->want, j->counts_len,
                              &j->want_info);
    }
    if (st != PIXSUM_OK)
        fail_msg("serial histogram of job %d/%d (%s): %s", w, k, tu_method_name(j->method),
                 pixsum_last_error());

    /* joint histogram of channel-0-only images: the image against a copy
     * shifted by one pixel */
    assert_int_equal(tu_image_alloc(&j->other, t, width, height, 1, 1, NULL), 0);
    tu_fill_random(r, &j->other.view, TU_FILL_MIXED);
    tu_image first;
    assert_int_equal(tu_image_alloc(&first, t, width, height, 1, 1, NULL), 0);
    for (size_t y = 0; y < height; y++)
        for (size_t x = 0; x < width; x++)
            memcpy(tu_elem(&first.view, x, y, 0, 0), tu_elem(&j->in.view, x, y, 0, 0),
                   pixsum_type_size(t));
    tu_image_free(&j->other);
    j->other = first;
    pixsum_hist_spec ja = {0}, jb = {0};
    ja.bins = tu_between(r, 1, 64);
    jb.bins = tu_between(r, 1, 64);
    j->joint_len = ja.bins * jb.bins;
    j->want_joint = calloc(j->joint_len, sizeof(uint64_t));
    j->got_joint = calloc(j->joint_len, sizeof(uint64_t));
    assert_true(j->want_joint && j->got_joint);
    assert_int_equal(pixsum_histogram_joint(ctx, &j->other.view, &j->other.view, &ja, &jb,
                                            j->want_joint, j->joint_len, &j->want_joint_info),
                     PIXSUM_OK);

    /* one integral-histogram query */
    j->qx = tu_below(r, width);
    j->qy = tu_below(r, height);
    j->qw = tu_between(r, 1, width - j->qx);
    j->qh = tu_between(r, 1, height - j->qy);
    j->query_spec.bins = tu_between(r, 1, 32);
    j->query_spec.lo = j->want_info.lo;
    j->query_spec.hi = j->want_info.hi;
    j->query_spec.mask = j->spec.mask;
    j->query_len = j->query_spec.bins * ch;
    j->want_query = calloc(j->query_len, sizeof(uint64_t));
    j->got_query = calloc(j->query_len, sizeof(uint64_t));
    assert_true(j->want_query && j->got_query);
    pixsum_ihist *ih = NULL;
    assert_int_equal(pixsum_ihist_new(ctx, &j->in.view, &j->query_spec, 0, &ih), PIXSUM_OK);
    assert_int_equal(pixsum_ihist_query(ih, j->qx, j->qy, j->qw, j->qh, j->want_query),
                     PIXSUM_OK);
    pixsum_ihist_free(ih);

    if (is_small_int(t)) {
        assert_int_equal(tu_image_alloc(&j->eq_out, t, width, height, 1, ch, &l), 0);
        assert_int_equal(pixsum_equalize(ctx, &j->in.view, &j->eq_out.view, j->spec.mask),
                         PIXSUM_OK);
        j->want_eq = malloc(j->eq_out.block_bytes);
        assert_non_null(j->want_eq);
        memcpy(j->want_eq, j->eq_out.block, j->eq_out.block_bytes);
    }
    pixsum_ctx_free(ctx);
}

static void free_job(hist_job *j)
{
    tu_image_free(&j->in);
    tu_image_free(&j->mask);
    tu_image_free(&j->other);
    tu_image_free(&j->eq_out);
    free(j->want);
    free(j->got);
    free(j->want_joint);
    free(j->got_joint);
    free(j->want_query);
    free(j->got_query);
    free(j->want_eq);
}

/* Runs job j once more with a fresh context; returns NULL or what differs. */
static const char *rerun(hist_job *j, int round)
{
    pixsum_ctx *ctx = ctx_with(j->method);
    if (!ctx)
        return "context setup failed";
    const char *why = NULL;
    pixsum_hist_info info;
    memset(j->got, 0x5a + round, j->counts_len * sizeof(uint64_t));
    if (pixsum_histogram(ctx, &j->in.view, &j->spec, j->got, j->counts_len, &info) !=
        PIXSUM_OK)
        why = "histogram failed";
    else if (memcmp(j->got, j->want, j->counts_len * sizeof(uint64_t)) != 0)
        why = "histogram counts differ from the serial run";
    else if (memcmp(&info, &j->want_info, sizeof info) != 0)
        why = "histogram info differs from the serial run";
    pixsum_hist_spec ja = {0}, jb = {0};
    pixsum_joint_info jinfo;
    ja.bins = j->want_joint_info.bins_a;
    jb.bins = j->want_joint_info.bins_b;
    if (!why && (pixsum_histogram_joint(ctx, &j->other.view, &j->other.view, &ja, &jb,
                                        j->got_joint, j->joint_len, &jinfo) != PIXSUM_OK ||
                 memcmp(j->got_joint, j->want_joint, j->joint_len * sizeof(uint64_t)) ||
                 jinfo.pairs != j->want_joint_info.pairs))
        why = "joint histogram differs from the serial run";
    pixsum_ihist *ih = NULL;
    if (!why && (pixsum_ihist_new(ctx, &j->in.view, &j->query_spec, 0, &ih) != PIXSUM_OK ||
                 pixsum_ihist_query(ih, j->qx, j->qy, j->qw, j->qh, j->got_query) !=
                     PIXSUM_OK ||
                 memcmp(j->got_query, j->want_query, j->query_len * sizeof(uint64_t))))
        why = "integral-histogram query differs from the serial run";
    pixsum_ihist_free(ih);
    if (!why && j->want_eq) {
        /* garbage in every row of the view; the bytes around it must stay */
        const pixsum_view *v = &j->eq_out.view;
        for (size_t y = 0; y < v->height; y++)
            memset(tu_elem(v, 0, y, 0, 0), 0x33 + round,
                   v->width * v->channels * pixsum_type_size(v->type));
        if (pixsum_equalize(ctx, &j->in.view, &j->eq_out.view, j->spec.mask) != PIXSUM_OK ||
            memcmp(j->eq_out.block, j->want_eq, j->eq_out.block_bytes) != 0)
            why = "equalised image differs from the serial run";
    }
    pixsum_ctx_free(ctx);
    return why;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(w->start);
    for (int round = 0; round < ROUNDS; round++)
        for (int k = 0; k < JOBS_PER_THREAD; k++) {
            hist_job *j = &w->jobs[k];
            const char *why = rerun(j, round);
            if (why) {
                snprintf(w->failure, sizeof w->failure, "thread %d round %d job %d (%s, %s): %s",
                         w->index, round, k, tu_method_name(j->method),
                         pixsum_type_name(j->in.view.type), why);
                return NULL;
            }
        }
    return NULL;
}

static void test_concurrent_histograms_match_serial(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    static worker workers[NTHREADS];
    pthread_barrier_t start;
    assert_int_equal(pthread_barrier_init(&start, NULL, NTHREADS), 0);
    for (int w = 0; w < NTHREADS; w++) {
        memset(&workers[w], 0, sizeof workers[w]);
        workers[w].index = w;
        workers[w].start = &start;
        for (int k = 0; k < JOBS_PER_THREAD; k++)
            make_job(r, &workers[w].jobs[k], w, k);
    }
    pthread_t tids[NTHREADS];
    for (int w = 0; w < NTHREADS; w++)
        assert_int_equal(pthread_create(&tids[w], NULL, worker_main, &workers[w]), 0);
    for (int w = 0; w < NTHREADS; w++)
        assert_int_equal(pthread_join(tids[w], NULL), 0);
    pthread_barrier_destroy(&start);
    int failed = 0;
    for (int w = 0; w < NTHREADS; w++) {
        if (workers[w].failure[0]) {
            print_error("%s\n", workers[w].failure);
            failed = 1;
        }
        for (int k = 0; k < JOBS_PER_THREAD; k++)
            free_job(&workers[w].jobs[k]);
    }
    assert_false(failed);
}

int main(void)
{
    tu_init("test_hist_threads");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_histograms_match_serial),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

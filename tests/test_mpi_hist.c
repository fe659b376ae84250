/*
 * test_mpi_hist.c - the distributed histogram of pixsum_mpi.h against
 * pixsum_histogram() on the whole image in one process. Run under mpirun with
 * any number of ranks (ctest runs 1..4, see mpi.cmake); exits 77 (skipped)
 * without MPI in the build.
 *
 * Every rank builds the same image (and mask) from a seed shared by rank 0:
 * every input type, 1-4 channels, NaN and infinities in float images, strips
 * that are uneven or empty, default and given bins and ranges (the data-range
 * defaults of i32/f32/f64 must be resolved over the whole image), masks, and
 * the totals sent to every rank or to one root. Counts and the info tallies
 * must be identical; checks are collective so that no rank is left waiting.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "pixsum.h"

#ifndef PIXSUM_HAVE_MPI
int main(void)
{
    printf("test_mpi_hist: this build has no MPI; skipped\n");
    return 77;
}
#else
#include "pixsum_mpi.h"

#include <mpi.h>

static int g_rank, g_size;
static uint64_t g_seed;

static int all_ranks(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

static int same_status(int st, int want)
{
    if (st != want)
        fprintf(stderr, "rank %d: status %d (%s), expected %d: %s\n", g_rank, st,
                pixsum_strerror(st), want, pixsum_last_error());
    return all_ranks(st == want);
}

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

/* Random samples of `type`; `nonfinite` sets the share (in 1/16) of NaN and
 * infinities in float images (16 = none finite). */
static void fill(uint64_t *s, void *data, pixsum_type type, size_t n, int nonfinite)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rng_next(s);
        int odd = (int)rng_below(s, 16) < nonfinite;
        double special = r % 3 == 0 ? NAN : r % 3 == 1 ? INFINITY : -INFINITY;
        switch (type) {
        case PIXSUM_U8: ((uint8_t *)data)[i] = (uint8_t)r; break;
        case PIXSUM_U16: ((uint16_t *)data)[i] = (uint16_t)(r % 5 ? r % 300 : r); break;
        case PIXSUM_I16: ((int16_t *)data)[i] = (int16_t)r; break;
        case PIXSUM_I32: ((int32_t *)data)[i] = (int32_t)(r % 7 ? (int64_t)(r % 2001) - 1000 : (int32_t)r); break;
        case PIXSUM_U32: ((uint32_t *)data)[i] = (uint32_t)(r % 7 ? r % 3000 : r >> 32); break;
        case PIXSUM_F32:
            ((float *)data)[i] = odd ? (float)special : (float)((double)(r >> 40) / 65536.0 - 100);
            break;
        case PIXSUM_F64:
            ((double *)data)[i] = odd ? special : (double)(int64_t)(r >> 11) * 1e-9;
            break;
        default: break;
        }
    }
}

static const pixsum_type types[] = {PIXSUM_U8,  PIXSUM_U16, PIXSUM_I16, PIXSUM_I32,
                                    PIXSUM_U32, PIXSUM_F32, PIXSUM_F64};

/* Row counts of every rank: balanced, random cuts, or one rank empty. */
static void split(uint64_t *s, int mode, size_t height, size_t *rows)
{
    size_t left = height;
    int skip = mode == 1 ? 0 : mode == 2 ? g_size - 1 : -1;
    for (int r = 0; r < g_size; r++) {
        size_t first;
        if (mode == 0 || g_size == 1) {
            pixsum_mpi_split_rows(height, g_size, r, &first, &rows[r]);
            continue;
        }
        int last = r == g_size - 1 || (r == g_size - 2 && skip == g_size - 1);
        rows[r] = r == skip ? 0 : last ? left : rng_below(s, left + 1);
        left -= rows[r];
    }
}

static int same_info(const pixsum_hist_info *a, const pixsum_hist_info *b, int tallies)
{
    int ok = a->bins == b->bins && a->channels == b->channels &&
             memcmp(&a->lo, &b->lo, sizeof a->lo) == 0 &&
             memcmp(&a->hi, &b->hi, sizeof a->hi) == 0;
    if (tallies) {
        ok = ok && a->pixels == b->pixels;
        for (size_t c = 0; c < a->channels; c++)
            ok = ok && a->in_range[c] == b->in_range[c] && a->below[c] == b->below[c] &&
                 a->above[c] == b->above[c] && a->nan[c] == b->nan[c];
    }
    return ok;
}

static void test_histogram_matches_single_process(void **state)
{
    (void)state;
    uint64_t s = g_seed;
    for (int iter = 0; iter < 80; iter++) {
        pixsum_type type = types[rng_below(&s, sizeof types / sizeof types[0])];
        size_t W = 1 + rng_below(&s, 90), H = 1 + rng_below(&s, 70);
        if (rng_below(&s, 4) == 0)
            H = 1 + rng_below(&s, (size_t)g_size + 1); /* fewer rows than ranks */
        size_t C = 1 + rng_below(&s, 4), esz = pixsum_type_size(type);
        int nonfinite = rng_below(&s, 8) == 0 ? 16 : (int)rng_below(&s, 3);
        unsigned char *img = malloc(W * H * C * esz);
        fill(&s, img, type, W * H * C, nonfinite);
        uint8_t *mask = NULL;
        int use_mask = rng_below(&s, 3) == 0;
        if (use_mask) {
            mask = malloc(W * H);
            for (size_t i = 0; i < W * H; i++)
                mask[i] = rng_below(&s, 3) != 0;
        }
        pixsum_hist_spec spec;
        memset(&spec, 0, sizeof spec);
        int spec_kind = (int)rng_below(&s, 4); /* 0: NULL, 1: bins, 2: range, 3: both */
        if (spec_kind & 1)
            spec.bins = 1 + rng_below(&s, 700);
        if (spec_kind & 2) {
            spec.lo = -50.0 + (double)rng_below(&s, 100);
            spec.hi = spec.lo + 1.0 + (double)rng_below(&s, 500);
        }
        pixsum_view whole = pixsum_view_2d(img, type, W, H, C, 0);
        pixsum_view whole_mask = pixsum_view_2d(mask, PIXSUM_U8, W, H, 1, 0);
        spec.mask = use_mask ? &whole_mask : NULL;
        const pixsum_hist_spec *sp = spec_kind == 0 && !use_mask ? NULL : &spec;

        pixsum_hist_info ref_info;
        int st = pixsum_hist_resolve(&whole, sp, &ref_info);
        assert_true(all_ranks(st == PIXSUM_OK));
        size_t n = ref_info.bins * C;
        uint64_t *ref = calloc(n, sizeof *ref), *got = calloc(n + 1, sizeof *got);
        st = pixsum_histogram(NULL, &whole, sp, ref, n, &ref_info);
        assert_true(all_ranks(st == PIXSUM_OK));

        size_t *rows = calloc((size_t)g_size, sizeof *rows);
        split(&s, iter % 3, H, rows);
        size_t first = 0;
        for (int r = 0; r < g_rank; r++)
            first += rows[r];
        size_t h = rows[g_rank];
        pixsum_view strip = pixsum_view_2d(h ? img + first * W * C * esz : NULL, type, W, h,
                                           C, 0);
        pixsum_view strip_mask =
            pixsum_view_2d(h && mask ? mask + first * W : NULL, PIXSUM_U8, W, h, 1, 0);
        pixsum_hist_spec local_spec = spec;
        local_spec.mask = use_mask ? &strip_mask : NULL;
        const pixsum_hist_spec *lsp = sp ? &local_spec : NULL;
        int root = rng_below(&s, 3) == 0 ? (int)rng_below(&s, (size_t)g_size) : PIXSUM_MPI_ALL;
        int receiver = root == PIXSUM_MPI_ALL || root == g_rank;

        pixsum_hist_info info;
        memset(got, 0xA5, (n + 1) * sizeof *got);
        const char *method = rng_below(&s, 2) ? "auto" : "hist.scalar";
        pixsum_ctx *ctx = pixsum_ctx_new();
        if (pixsum_method_find(method) >= 0)
            pixsum_ctx_set_method(ctx, method);
        st = pixsum_mpi_histogram(ctx, &strip, lsp, receiver ? got : NULL, receiver ? n : 0,
                                  &info, root, MPI_COMM_WORLD);
        int ok = st == PIXSUM_OK;
        if (!ok)
            fprintf(stderr, "rank %d: %s\n", g_rank, pixsum_last_error());
        if (ok && receiver)
            ok = memcmp(got, ref, n * sizeof *got) == 0 && got[n] == 0xA5A5A5A5A5A5A5A5ull;
        if (ok)
            ok = same_info(&info, &ref_info, receiver);
        if (!ok)
            fprintf(stderr,
                    "rank %d: histogram differs (%s %zux%zux%zu spec %d mask %d root %d "
                    "nonfinite %d, %zu rows from %zu; seed %llu)\n",
                    g_rank, pixsum_type_name(type), W, H, C, spec_kind, use_mask, root,
                    nonfinite, h, first, (unsigned long long)g_seed);
        assert_true(all_ranks(ok));
        pixsum_ctx_free(ctx);
        free(rows);
        free(ref);
        free(got);
        free(mask);
        free(img);
    }
}

static void test_histogram_errors_are_collective(void **state)
{
    (void)state;
    const size_t W = 13, H = 9;
    size_t first, h;
    pixsum_mpi_split_rows(H, g_size, g_rank, &first, &h);
    uint8_t img[13 * 9];
    for (size_t i = 0; i < sizeof img; i++)
        img[i] = (uint8_t)i;
    pixsum_view strip = pixsum_view_2d(h ? img + first * W : NULL, PIXSUM_U8, W, h, 1, 0);
    uint64_t counts[256];
    int last = g_size - 1;

    /* counts too short on the last rank */
    int st = pixsum_mpi_histogram(NULL, &strip, NULL, counts, g_rank == last ? 255 : 256, NULL,
                                  PIXSUM_MPI_ALL, MPI_COMM_WORLD);
    assert_true(same_status(st, PIXSUM_ERR_BAD_SHAPE));

    /* a root that is not a rank */
    st = pixsum_mpi_histogram(NULL, &strip, NULL, counts, 256, NULL, g_size, MPI_COMM_WORLD);
    assert_true(same_status(st, PIXSUM_ERR_INVALID_ARG));

    /* bins that differ between ranks */
    pixsum_hist_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.bins = g_rank == last && g_size > 1 ? 16 : 32;
    st = pixsum_mpi_histogram(NULL, &strip, &spec, counts, 256, NULL, PIXSUM_MPI_ALL,
                              MPI_COMM_WORLD);
    assert_true(same_status(st, g_size > 1 ? PIXSUM_ERR_BAD_SHAPE : PIXSUM_OK));

    /* an unsupported input type (u64) */
    uint64_t wide[9] = {0};
    pixsum_view bad = pixsum_view_2d(h ? wide : NULL, PIXSUM_U64, 1, h, 1, 0);
    st = pixsum_mpi_histogram(NULL, &bad, NULL, counts, 256, NULL, PIXSUM_MPI_ALL,
                              MPI_COMM_WORLD);
    assert_true(same_status(st, PIXSUM_ERR_BAD_TYPE));

    /* a mask strip of the wrong height on rank 0 */
    uint8_t m[13 * 10];
    memset(m, 1, sizeof m);
    pixsum_view mask = pixsum_view_2d(h ? m : NULL, PIXSUM_U8, W, h + (g_rank == 0), 1, 0);
    if (g_rank == 0)
        mask.data = m;
    spec.bins = 0;
    spec.mask = &mask;
    st = pixsum_mpi_histogram(NULL, &strip, &spec, counts, 256, NULL, PIXSUM_MPI_ALL,
                              MPI_COMM_WORLD);
    assert_true(same_status(st, PIXSUM_ERR_BAD_SHAPE));

    /* the counts of 0..116 once each: every rank gets them */
    st = pixsum_mpi_histogram(NULL, &strip, NULL, counts, 256, NULL, PIXSUM_MPI_ALL,
                              MPI_COMM_WORLD);
    int ok = st == PIXSUM_OK;
    for (size_t i = 0; i < 256 && ok; i++)
        ok = counts[i] == (i < W * H ? 1u : 0u);
    assert_true(all_ranks(ok));
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
        printf("test_mpi_hist: %d ranks, seed %llu (replay with PIXSUM_TEST_SEED=%llu)\n",
               g_size, seed, seed);
        fflush(stdout);
    }
    MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    g_seed = seed;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_histogram_matches_single_process),
        cmocka_unit_test(test_histogram_errors_are_collective),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return failed ? 1 : 0;
}
#endif

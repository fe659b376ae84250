/*
 * test_cpu_methods.c - the fast and threaded CPU integral methods (issue 3)
 * against the scalar reference, once per ISA level this machine supports
 * (forced through psi_isa_force(), the setter behind PIXSUM_FORCE_ISA):
 *   - integer tables bit-exact with serial.2wh (same modular arithmetic, wrap
 *     mode included) on random shapes (1x1, 1xN, Nx1, odd widths), strides,
 *     bottom-up rows, ROIs, 1-4 channels, 3-D volumes, extreme values;
 *   - float tables within the summation bound of testutil's reference;
 *   - threaded methods with 1, 2, 3 and 7 threads;
 *   - no byte outside the output view written;
 *   - both store paths: PIXSUM_STREAM_BYTES is set low so larger cases take
 *     the non-temporal path and small ones the cached path.
 * Paper methods limited to some pairs/channels must answer
 * PIXSUM_ERR_UNSUPPORTED (never a wrong table) outside them.
 */
#include "cpu/fast_kernels.h"
#include "cpu/isa.h"
#include "internal.h"
#include "testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* The methods of issue 3 and whether they must handle every request. */
static const struct {
    const char *name;
    int threaded;
    int universal; /* every supported pair, channels, 2-D and 3-D */
} methods_under_test[] = {
    {"simd.2wh", 0, 1},      {"omp.banded", 1, 1},   {"omp.transpose", 1, 0},
    {"omp.chunks", 1, 0},    {"p001.plain", 1, 0},   {"p001.unroll6", 1, 0},
    {"p001.sse2", 1, 0},     {"p001.blelloch", 1, 0},
};
#define N_METHODS (sizeof methods_under_test / sizeof methods_under_test[0])

static const int thread_counts[] = {1, 2, 3, 7};

/* Byte-compares two tables of the same shape and type, row by row. */
static int same_table(const pixsum_view *a, const pixsum_view *b)
{
    size_t row = a->width * a->channels * pixsum_type_size(a->type);
    for (size_t z = 0; z < a->depth; z++)
        for (size_t y = 0; y < a->height; y++)
            if (memcmp(psi_row(a, y, z), psi_row(b, y, z), row) != 0) {
                for (size_t x = 0; x < a->width * a->channels; x++) {
                    uint64_t va = psi_load_u64(a->type, psi_row(a, y, z), x);
                    uint64_t vb = psi_load_u64(b->type, psi_row(b, y, z), x);
                    if (va != vb) {
                        fprintf(stderr, "  first difference at sample %zu of row %zu, slice "
                                        "%zu: %llu vs reference %llu\n",
                                x, y, z, (unsigned long long)va, (unsigned long long)vb);
                        break;
                    }
                }
                return 0;
            }
    return 1;
}

/* One random case: returns the number of failures. */
static int one_case(tu_rng *r, int method_id, const char *method, int universal,
                    int threads, int allow_3d)
{
    pixsum_type ins[64], outs[64];
    int squared = (int)tu_below(r, 3) == 0;
    size_t npairs = tu_supported_pairs(squared, ins, outs, 64);
    size_t pick = tu_below(r, npairs);
    pixsum_type tin = ins[pick], tout = outs[pick];
    size_t ch = tu_between(r, 1, 4);
    if (tu_below(r, 2))
        ch = 1;
    size_t w = tu_dim(r, 300), h = tu_dim(r, 40), d = 1;
    if (allow_3d && tu_below(r, 5) == 0)
        d = tu_between(r, 2, 4);
    tu_layout lay = tu_random_layout(r);
    tu_image in, out, ref;
    if (tu_image_alloc(&in, tin, w, h, d, ch, &lay) != 0)
        return 1;
    tu_fill fill = (tu_fill)tu_below(r, 4);
    tu_fill_random(r, &in.view, fill);
    tu_layout olay = tu_random_layout(r);
    olay.margin = 0;
    if (tu_image_alloc(&out, tout, w, h, d, ch, &olay) != 0 ||
        tu_image_alloc(&ref, tout, w, h, d, ch, NULL) != 0)
        return 1;
    tu_image_snapshot(&out);

    int fails = 0;
    pixsum_ctx *ctx = pixsum_ctx_new();
    int wrap = 0;
    if (pixsum_integral_check(tin, tout, w * h * d, squared) != PIXSUM_OK)
        wrap = 1;
    pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, wrap);
    pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, threads);
    pixsum_ctx_set(ctx, PIXSUM_PARAM_METHOD, method_id);
    int st = squared ? pixsum_integral_sq(ctx, &in.view, NULL, &out.view)
                     : pixsum_integral(ctx, &in.view, &out.view);
    char what[256];
    snprintf(what, sizeof what, "%s isa=%s threads=%d %s %s->%s %zux%zux%zu ch=%zu fill=%d",
             method, psi_isa_name(psi_isa_active()), threads, squared ? "squared" : "plain",
             pixsum_type_name(tin), pixsum_type_name(tout), w, h, d, ch, (int)fill);
    if (st == PIXSUM_ERR_UNSUPPORTED && !universal) {
        fails += tu_image_check_untouched(&out, 1, what) != 0;
        goto done;
    }
    if (st != PIXSUM_OK) {
        fprintf(stderr, "%s: status %d (%s)\n", what, st, pixsum_last_error());
        fails++;
        goto done;
    }
    fails += tu_image_check_untouched(&out, 0, what) != 0;
    if (psi_type_is_int(tout)) {
        /* bit-exact with the scalar reference method */
        pixsum_ctx_set_method(ctx, "serial.2wh");
        st = squared ? pixsum_integral_sq(ctx, &in.view, NULL, &ref.view)
                     : pixsum_integral(ctx, &in.view, &ref.view);
        if (st != PIXSUM_OK || !same_table(&out.view, &ref.view)) {
            fprintf(stderr, "%s: differs from serial.2wh (seed %llu)\n", what,
                    (unsigned long long)tu_seed());
            fails++;
        }
    } else {
        tu_ref fr;
        if (tu_ref_integral_fast(&fr, &in.view, squared) != 0)
            return fails + 1;
        fails += tu_check_table(&out.view, 0, &fr, wrap, what) != 0;
        tu_ref_free(&fr);
    }
done:
    pixsum_ctx_free(ctx);
    tu_image_free(&in);
    tu_image_free(&out);
    tu_image_free(&ref);
    return fails;
}

/* All my methods at one ISA level. */
static void check_isa(psi_isa isa, int cases)
{
    psi_isa got = psi_isa_force(isa);
    assert_int_equal(got, isa);
    tu_rng *r = tu_global_rng();
    int total_fails = 0, ran = 0;
    for (size_t m = 0; m < N_METHODS; m++) {
        int id = pixsum_method_find(methods_under_test[m].name);
        if (id <= 0 || !pixsum_method_get(id)->available)
            continue; /* e.g. OpenMP methods in a build without OpenMP */
        int allow_3d = (pixsum_method_get(id)->ops & PIXSUM_OP_INTEGRAL_3D) != 0;
        size_t nt = methods_under_test[m].threaded ? 4 : 1;
        for (size_t t = 0; t < nt; t++) {
            for (int c = 0; c < cases; c++) {
                total_fails += one_case(r, id, methods_under_test[m].name,
                                        methods_under_test[m].universal, thread_counts[t],
                                        allow_3d);
                ran++;
            }
        }
    }
    psi_isa_force(PSI_ISA_COUNT);
    printf("isa %s: %d cases, %d failures\n", psi_isa_name(isa), ran, total_fails);
    assert_int_equal(total_fails, 0);
}

static void test_scalar(void **state)
{
    (void)state;
    check_isa(PSI_ISA_SCALAR, 25);
}

static void test_sse2(void **state)
{
    (void)state;
    if (psi_isa_supported() < PSI_ISA_SSE2)
        skip();
    check_isa(PSI_ISA_SSE2, 40);
}

static void test_avx2(void **state)
{
    (void)state;
    if (psi_isa_supported() < PSI_ISA_AVX2)
        skip();
    check_isa(PSI_ISA_AVX2, 40);
}

static void test_avx512(void **state)
{
    (void)state;
    if (psi_isa_supported() < PSI_ISA_AVX512)
        skip();
    check_isa(PSI_ISA_AVX512, 40);
}

/* The environment variable caps the level chosen at detection. */
static void test_isa_names(void **state)
{
    (void)state;
    for (int i = 0; i < PSI_ISA_COUNT; i++)
        assert_int_equal(psi_isa_from_name(psi_isa_name((psi_isa)i)), i);
    assert_int_equal(psi_isa_from_name("mmx"), PSI_ISA_COUNT);
    const char *env = getenv("PIXSUM_FORCE_ISA");
    if (env && psi_isa_from_name(env) < PSI_ISA_COUNT)
        assert_true(psi_isa_active() <= psi_isa_from_name(env));
}

/* Extreme values that wrap a u32 table: the fast path must wrap like the
 * reference (wrap mode), on a row long enough for every vector width. */
static void test_wrap_exact(void **state)
{
    (void)state;
    size_t w = 4099, h = 1200;
    tu_image in, a, b;
    assert_int_equal(tu_image_alloc(&in, PIXSUM_U8, w, h, 1, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&a, PIXSUM_U32, w, h, 1, 1, NULL), 0);
    assert_int_equal(tu_image_alloc(&b, PIXSUM_U32, w, h, 1, 1, NULL), 0);
    tu_fill_random(tu_global_rng(), &in.view, TU_FILL_MAX);
    pixsum_ctx *ctx = pixsum_ctx_new();
    pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, 1);
    assert_int_equal(pixsum_ctx_set_method(ctx, "serial.2wh"), PIXSUM_OK);
    assert_int_equal(pixsum_integral(ctx, &in.view, &b.view), PIXSUM_OK);
    for (size_t m = 0; m < N_METHODS; m++) {
        if (!methods_under_test[m].universal)
            continue;
        int id = pixsum_method_find(methods_under_test[m].name);
        if (id <= 0 || !pixsum_method_get(id)->available)
            continue;
        pixsum_ctx_set(ctx, PIXSUM_PARAM_METHOD, id);
        pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, 2);
        assert_int_equal(pixsum_integral(ctx, &in.view, &a.view), PIXSUM_OK);
        assert_true(same_table(&a.view, &b.view));
    }
    pixsum_ctx_free(ctx);
    tu_image_free(&in);
    tu_image_free(&a);
    tu_image_free(&b);
}

/* The stream threshold taken from the cache size: a quarter of the L3, 8 MiB
 * when the size is unknown, never above 48 MiB (VMs that report their host's
 * whole L3, e.g. 480 MiB, would otherwise keep 64 MiB tables cached). */
static void test_stream_threshold(void **state)
{
    (void)state;
    const size_t mib = (size_t)1 << 20;
    assert_int_equal(psi_stream_threshold_for(32L << 20), 8 * mib);
    assert_int_equal(psi_stream_threshold_for(100L << 20), 25 * mib);
    assert_int_equal(psi_stream_threshold_for(192L << 20), 48 * mib);
    assert_int_equal(psi_stream_threshold_for(300L << 20), 48 * mib);
    assert_int_equal(psi_stream_threshold_for(480L << 20), 48 * mib);
    assert_int_equal(psi_stream_threshold_for(0), 8 * mib);
    assert_int_equal(psi_stream_threshold_for(-1), 8 * mib);
    /* PIXSUM_STREAM_BYTES (set by main) wins over the cache size */
    assert_int_equal(psi_stream_threshold(), 4096);
}

int main(void)
{
    tu_init("test_cpu_methods");
    /* tables above 4 KiB take the non-temporal path, smaller ones the cached one */
    setenv("PIXSUM_STREAM_BYTES", "4096", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_isa_names), cmocka_unit_test(test_scalar),
        cmocka_unit_test(test_sse2),      cmocka_unit_test(test_avx2),
        cmocka_unit_test(test_avx512),    cmocka_unit_test(test_wrap_exact),
        cmocka_unit_test(test_stream_threshold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

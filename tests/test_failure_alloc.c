/*
 * test_failure_alloc.c - allocation failure injected into the library.
 *
 * This executable is linked with -Wl,--wrap=malloc,--wrap=calloc,
 * --wrap=realloc,--wrap=posix_memalign,--wrap=aligned_alloc
 * (tests/reliability.cmake): every allocation the library's objects make
 * (pixsum_static) goes through the __wrap_ functions below, which can fail the
 * N-th one. Allocations made by shared libraries (libgomp, cmocka, libc's own)
 * are not affected.
 *
 * For each operation (integral with every available method, squared, tilted,
 * 3-D, histograms with every method, joint histograms, integral histograms,
 * equalisation, Otsu, box statistics on tables built under failure), the test
 * first runs it with no failure and counts the allocations K, then reruns it
 * K times failing allocation N = 1..K. Each run must either:
 *   - fail with PIXSUM_ERR_NO_MEMORY and leave the output untouched (as
 *     documented), or
 *   - succeed with the same result as the run without failure (a method may
 *     fall back to a path that allocates less).
 * It never crashes, and under `make test-sanitize` LeakSanitizer checks that
 * nothing leaks on any of these paths.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "pixsum.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the allocation wrappers ------------------------------------------ */

void *__real_malloc(size_t n);
void *__real_calloc(size_t m, size_t n);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t m, size_t n);
void *__wrap_realloc(void *p, size_t n);
int __wrap_posix_memalign(void **p, size_t a, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n);

static atomic_long alloc_count;    /* allocations seen since arm() */
static atomic_long fail_at;        /* fail the allocation with this number (1-based); 0 = none */
static atomic_int failures;        /* allocations failed since arm() */

/* Returns 1 if the allocation being made now must fail. */
static int should_fail(void)
{
    long n = atomic_fetch_add(&alloc_count, 1) + 1;
    long f = atomic_load(&fail_at);
    if (f != 0 && n == f) {
        atomic_fetch_add(&failures, 1);
        return 1;
    }
    return 0;
}

void *__wrap_malloc(size_t n)
{
    return should_fail() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t m, size_t n)
{
    return should_fail() ? NULL : __real_calloc(m, n);
}

void *__wrap_realloc(void *p, size_t n)
{
    return should_fail() ? NULL : __real_realloc(p, n);
}

int __wrap_posix_memalign(void **p, size_t a, size_t n)
{
    return should_fail() ? 12 /* ENOMEM */ : __real_posix_memalign(p, a, n);
}

void *__wrap_aligned_alloc(size_t a, size_t n)
{
    return should_fail() ? NULL : __real_aligned_alloc(a, n);
}

/* Starts counting, failing allocation number n (0 = none). */
static void arm(long n)
{
    atomic_store(&alloc_count, 0);
    atomic_store(&failures, 0);
    atomic_store(&fail_at, n);
}

/* Stops failing; returns the allocations counted since arm(). */
static long disarm(void)
{
    atomic_store(&fail_at, 0);
    return atomic_load(&alloc_count);
}

/* ---- the scenarios ----------------------------------------------------- */

#define FILL 0x5A
#define MAX_OUT (1u << 22)

/* One operation: runs with a fresh context (created under the injection too,
 * so the context allocation is covered) and writes its result to `out`
 * (out_bytes bytes, pre-filled with FILL by the driver). Returns a status;
 * may return -1 for "the context could not be created". */
typedef int (*scenario_fn)(const void *arg, unsigned char *out, size_t out_bytes);

typedef struct scenario {
    const char *name;
    scenario_fn run;
    const void *arg;
    size_t out_bytes;
} scenario;

static unsigned char *ref_out, *try_out;

/* Runs one scenario under every single allocation failure. */
static void check_scenario(const scenario *s)
{
    assert_true(s->out_bytes <= MAX_OUT);
    memset(ref_out, FILL, s->out_bytes);
    arm(0);
    int st = s->run(s->arg, ref_out, s->out_bytes);
    long k = disarm();
    if (st != PIXSUM_OK)
        fail_msg("%s: fails without injection: %d (%s)", s->name, st, pixsum_last_error());
    long fails_seen = 0;
    for (long n = 1; n <= k; n++) {
        memset(try_out, FILL, s->out_bytes);
        arm(n);
        st = s->run(s->arg, try_out, s->out_bytes);
        disarm();
        int injected = atomic_load(&failures) > 0;
        if (st == PIXSUM_OK) {
            if (memcmp(ref_out, try_out, s->out_bytes) != 0)
                fail_msg("%s: allocation %ld of %ld failed, call succeeded with a "
                         "different result", s->name, n, k);
            continue;
        }
        fails_seen++;
        if (!injected)
            fail_msg("%s: status %d without an injected failure", s->name, st);
        if (st != PIXSUM_ERR_NO_MEMORY && st != -1)
            fail_msg("%s: allocation %ld of %ld failed: status %d (%s), expected "
                     "PIXSUM_ERR_NO_MEMORY", s->name, n, k, st, pixsum_last_error());
        for (size_t i = 0; i < s->out_bytes; i++)
            if (try_out[i] != FILL)
                fail_msg("%s: allocation %ld of %ld failed: output byte %zu written",
                         s->name, n, k, i);
    }
    print_message("  %-34s %2ld allocations, %2ld injected failures reported\n", s->name, k,
                  fails_seen);
}

/* Test images: deterministic pseudo-random content. */
#define W 203
#define H 157
static uint8_t img_u8[H][W * 3];
static uint16_t img_u16[H][W];
static float img_f32[3][H / 4][W];
static uint8_t mask_u8[H][W];

static void fill_images(void)
{
    uint32_t s = 12345;
    for (size_t y = 0; y < H; y++)
        for (size_t x = 0; x < W * 3; x++) {
            s = s * 1664525u + 1013904223u;
            img_u8[y][x] = (uint8_t)(s >> 24);
            if (x < W) {
                img_u16[y][x] = (uint16_t)(s >> 12);
                mask_u8[y][x] = (uint8_t)((s >> 7) & 1);
            }
        }
    for (size_t z = 0; z < 3; z++)
        for (size_t y = 0; y < H / 4; y++)
            for (size_t x = 0; x < W; x++) {
                s = s * 1664525u + 1013904223u;
                img_f32[z][y][x] = (float)(s >> 8) / 65536.0f - 100.0f;
            }
}

/* Creates a context with a method (NULL = auto) and 2 threads. */
static int ctx_with(const char *method, pixsum_ctx **out)
{
    pixsum_ctx *ctx = pixsum_ctx_new();
    if (!ctx)
        return -1;
    if ((method && pixsum_ctx_set_method(ctx, method) != PIXSUM_OK) ||
        pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, 2) != PIXSUM_OK) {
        pixsum_ctx_free(ctx);
        fail_msg("cannot configure a context for %s", method ? method : "auto");
    }
    *out = ctx;
    return 0;
}

typedef struct integral_arg {
    const char *method;
    int kind;       /* 0 integral, 1 squared (+ plain), 2 tilted, 3 volume */
    size_t channels;
    pixsum_type out;
} integral_arg;

static int run_integral(const void *argp, unsigned char *out, size_t out_bytes)
{
    const integral_arg *a = argp;
    pixsum_ctx *ctx;
    if (ctx_with(a->method, &ctx) != 0)
        return -1;
    int st;
    if (a->kind == 3) {
        pixsum_view in = pixsum_view_3d(img_f32, PIXSUM_F32, W, H / 4, 3, 1, 0, 0);
        pixsum_view ov = pixsum_view_3d(out, a->out, W, H / 4, 3, 1, 0, 0);
        st = pixsum_integral(ctx, &in, &ov);
    } else if (a->kind == 2) {
        pixsum_view in = pixsum_view_2d(img_u8, PIXSUM_U8, W, H, a->channels, 0);
        pixsum_view ov = pixsum_view_2d(out, a->out, W + 1, H + 1, a->channels, 0);
        st = pixsum_integral_tilted(ctx, &in, &ov);
    } else {
        /* rows of the 3-channel buffer read with a stride (ROI-like) */
        pixsum_view in = pixsum_view_2d(img_u8, PIXSUM_U8, W, H, a->channels, W * 3);
        size_t half = out_bytes / 2;
        pixsum_view ov = pixsum_view_2d(out, a->out, W, H, a->channels, 0);
        if (a->kind == 1) {
            pixsum_view sv = pixsum_view_2d(out + half, a->out, W, H, a->channels, 0);
            st = pixsum_integral_sq(ctx, &in, &ov, &sv);
        } else
            st = pixsum_integral(ctx, &in, &ov);
    }
    pixsum_ctx_free(ctx);
    return st;
}

typedef struct hist_arg {
    const char *method;
    pixsum_type type;
    int masked;
    size_t bins;
} hist_arg;

static pixsum_view hist_input(pixsum_type type)
{
    if (type == PIXSUM_U8)
        return pixsum_view_2d(img_u8, PIXSUM_U8, W, H, 3, 0);
    if (type == PIXSUM_U16)
        return pixsum_view_2d(img_u16, PIXSUM_U16, W, H, 1, 0);
    return pixsum_view_2d(img_f32, PIXSUM_F32, W, H / 4, 1, 0);
}

static int run_hist(const void *argp, unsigned char *out, size_t out_bytes)
{
    const hist_arg *a = argp;
    pixsum_ctx *ctx;
    if (ctx_with(a->method, &ctx) != 0)
        return -1;
    pixsum_view in = hist_input(a->type);
    pixsum_view mask = pixsum_view_2d(mask_u8, PIXSUM_U8, W, a->type == PIXSUM_F32 ? H / 4 : H,
                                      1, 0);
    pixsum_hist_spec spec = {a->bins, 0, 0, a->masked ? &mask : NULL};
    pixsum_hist_info info;
    int st = pixsum_histogram(ctx, &in, &spec, (uint64_t *)out, out_bytes / 8, &info);
    pixsum_ctx_free(ctx);
    return st;
}

static int run_joint(const void *argp, unsigned char *out, size_t out_bytes)
{
    (void)argp;
    pixsum_ctx *ctx;
    if (ctx_with(NULL, &ctx) != 0)
        return -1;
    pixsum_view a = pixsum_view_2d(img_u8, PIXSUM_U8, W, H, 1, W * 3);
    pixsum_view b = pixsum_view_2d(img_u16, PIXSUM_U16, W, H, 1, 0);
    pixsum_joint_info info;
    int st = pixsum_histogram_joint(ctx, &a, &b, NULL, NULL, (uint64_t *)out, out_bytes / 8,
                                    &info);
    pixsum_ctx_free(ctx);
    return st;
}

/* Joint statistics of a fixed table (its own allocations only). */
static int run_joint_stats(const void *argp, unsigned char *out, size_t out_bytes)
{
    (void)argp;
    (void)out_bytes;
    static uint64_t table[37][53];
    for (size_t i = 0; i < 37; i++)
        for (size_t j = 0; j < 53; j++)
            table[i][j] = (i * 7 + j * 3) % 11;
    pixsum_joint_stats js;
    int st = pixsum_joint_stats_compute(&table[0][0], 37, 53, &js);
    if (st == PIXSUM_OK)
        memcpy(out, &js, sizeof js);
    return st;
}

/* Integral histogram: build, query the whole image, rebuild for a larger
 * image (a new table) and query two rectangles of it into out. A failed
 * rebuild must leave the first table answering as before. */
static int run_ihist(const void *argp, unsigned char *out, size_t out_bytes)
{
    (void)argp;
    (void)out_bytes;
    pixsum_ctx *ctx;
    if (ctx_with(NULL, &ctx) != 0)
        return -1;
    pixsum_view in = pixsum_view_2d(img_u8, PIXSUM_U8, W / 2, H / 2, 1, W * 3);
    pixsum_view larger = pixsum_view_2d(img_u8, PIXSUM_U8, W, H, 1, W * 3);
    pixsum_hist_spec spec = {16, 0, 256, NULL};
    pixsum_ihist *ih = NULL;
    int st = pixsum_ihist_new(ctx, &in, &spec, 0, &ih);
    if (st == PIXSUM_OK) {
        uint64_t q[3][16], again[16];
        st = pixsum_ihist_query(ih, 0, 0, W / 2, H / 2, q[0]);
        int rs = pixsum_ihist_rebuild(ctx, ih, &larger, &spec, 0);
        if (rs != PIXSUM_OK) {
            if (pixsum_ihist_query(ih, 0, 0, W / 2, H / 2, again) != PIXSUM_OK ||
                memcmp(again, q[0], sizeof again) != 0)
                fail_msg("pixsum_ihist_rebuild failed (%d) and changed the table", rs);
            st = rs;
        }
        if (st == PIXSUM_OK)
            st = pixsum_ihist_query(ih, 5, 7, W - 10, 11, q[1]);
        if (st == PIXSUM_OK)
            st = pixsum_ihist_query(ih, 50, 40, 1, 1, q[2]);
        if (st == PIXSUM_OK)
            memcpy(out, q, sizeof q);
    } else if (ih != NULL)
        fail_msg("pixsum_ihist_new failed (%d) but set *out", st);
    pixsum_ihist_free(ih);
    pixsum_ctx_free(ctx);
    return st;
}

static int run_equalize(const void *argp, unsigned char *out, size_t out_bytes)
{
    const hist_arg *a = argp;
    (void)out_bytes;
    pixsum_ctx *ctx;
    if (ctx_with(NULL, &ctx) != 0)
        return -1;
    pixsum_view in = hist_input(a->type);
    pixsum_view ov = pixsum_view_2d(out, in.type, in.width, in.height, in.channels, 0);
    pixsum_view mask = pixsum_view_2d(mask_u8, PIXSUM_U8, W, H, 1, 0);
    int st = pixsum_equalize(ctx, &in, &ov, a->masked ? &mask : NULL);
    pixsum_ctx_free(ctx);
    return st;
}

static int run_otsu(const void *argp, unsigned char *out, size_t out_bytes)
{
    (void)argp;
    (void)out_bytes;
    pixsum_ctx *ctx;
    if (ctx_with(NULL, &ctx) != 0)
        return -1;
    pixsum_view in = hist_input(PIXSUM_U16);
    double thr;
    size_t bin;
    int st = pixsum_otsu_threshold(ctx, &in, NULL, &thr, &bin);
    if (st == PIXSUM_OK) {
        memcpy(out, &thr, sizeof thr);
        memcpy(out + 8, &bin, sizeof bin);
    }
    pixsum_ctx_free(ctx);
    return st;
}

/* Sum and squared tables (built under the injection), then box statistics. */
static int run_box_stats(const void *argp, unsigned char *out, size_t out_bytes)
{
    (void)argp;
    (void)out_bytes;
    static uint64_t sum[H][W], sq[H][W];
    pixsum_ctx *ctx;
    if (ctx_with(NULL, &ctx) != 0)
        return -1;
    pixsum_view in = pixsum_view_2d(img_u16, PIXSUM_U16, W, H, 1, 0);
    pixsum_view sv = pixsum_view_2d(sum, PIXSUM_U64, W, H, 1, 0);
    pixsum_view qv = pixsum_view_2d(sq, PIXSUM_U64, W, H, 1, 0);
    int st = pixsum_integral_sq(ctx, &in, &sv, &qv);
    if (st == PIXSUM_OK) {
        pixsum_box boxes[3] = {{0, 0, 0, W, H, 1}, {3, 4, 0, 17, 9, 1}, {W - 1, H - 1, 0, 1, 1, 1}};
        double mean[3], var[3];
        st = pixsum_box_stats(ctx, &sv, &qv, boxes, 3, mean, var);
        if (st == PIXSUM_OK) {
            memcpy(out, mean, sizeof mean);
            memcpy(out + sizeof mean, var, sizeof var);
        }
    }
    pixsum_ctx_free(ctx);
    return st;
}

/* ---- tests ------------------------------------------------------------- */

static int setup(void **state)
{
    (void)state;
    fill_images();
    ref_out = malloc(MAX_OUT); /* the test's own buffers: not armed */
    try_out = malloc(MAX_OUT);
    return ref_out && try_out ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    free(ref_out);
    free(try_out);
    return 0;
}

/* Every available method that computes 2-D integral images, 1 and 3 channels
 * (methods limited to 1 channel are run with 1), plain and squared. */
static void test_integral_every_method(void **state)
{
    (void)state;
    size_t count = 0;
    const pixsum_method_info *m = pixsum_methods(&count);
    int ran = 0;
    for (size_t i = 0; i < count; i++) {
        if (!m[i].available || !(m[i].ops & PIXSUM_OP_INTEGRAL) ||
            m[i].backend == PIXSUM_BACKEND_CUDA || m[i].backend == PIXSUM_BACKEND_MPI)
            continue;
        for (int kind = 0; kind <= 1; kind++)
            for (size_t ch = 1; ch <= 3; ch += 2) {
                if (kind == 1 && !(m[i].ops & PIXSUM_OP_INTEGRAL_SQ))
                    continue;
                integral_arg a = {m[i].name, kind, ch, kind ? PIXSUM_U64 : PIXSUM_U32};
                if (!pixsum_method_supports(m[i].id, kind ? PIXSUM_OP_INTEGRAL_SQ
                                                          : PIXSUM_OP_INTEGRAL,
                                            PIXSUM_U8, a.out))
                    continue;
                /* 1-channel-only methods refuse 3 channels with a status:
                 * check that first, without injection */
                char name[96];
                snprintf(name, sizeof name, "%s %s c%zu", m[i].name,
                         kind ? "squared" : "integral", ch);
                size_t bytes = W * H * ch * 8 * (kind ? 2 : 1);
                memset(ref_out, FILL, bytes);
                if (run_integral(&a, ref_out, bytes) == PIXSUM_ERR_UNSUPPORTED)
                    continue;
                scenario s = {name, run_integral, &a, bytes};
                check_scenario(&s);
                ran++;
            }
    }
    assert_true(ran >= 4);
}

static void test_tilted_and_volume(void **state)
{
    (void)state;
    integral_arg t1 = {"serial.2wh", 2, 1, PIXSUM_U32};
    integral_arg t3 = {NULL, 2, 3, PIXSUM_F64};
    integral_arg v = {NULL, 3, 1, PIXSUM_F64};
    integral_arg v2 = {"omp.banded", 3, 1, PIXSUM_F64};
    scenario s[] = {
        {"tilted serial.2wh u8->u32 c1", run_integral, &t1, (W + 1) * (H + 1) * 4},
        {"tilted auto u8->f64 c3", run_integral, &t3, (W + 1) * (H + 1) * 3 * 8},
        {"volume auto f32->f64", run_integral, &v, W * (H / 4) * 3 * 8},
        {"volume omp.banded f32->f64", run_integral, &v2, W * (H / 4) * 3 * 8},
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        const integral_arg *a = s[i].arg;
        if (a->method && pixsum_method_find(a->method) < 0) {
            printf("  %-32s skipped: %s is not in this build (no OpenMP)\n", s[i].name,
                   a->method);
            continue;
        }
        check_scenario(&s[i]);
    }
}

static void test_histogram_every_method(void **state)
{
    (void)state;
    size_t count = 0;
    const pixsum_method_info *m = pixsum_methods(&count);
    const pixsum_type types[] = {PIXSUM_U8, PIXSUM_U16, PIXSUM_F32};
    int ran = 0;
    for (size_t i = 0; i < count; i++) {
        if (!m[i].available || !(m[i].ops & PIXSUM_OP_HISTOGRAM) ||
            m[i].backend == PIXSUM_BACKEND_CUDA || m[i].backend == PIXSUM_BACKEND_GL ||
            m[i].backend == PIXSUM_BACKEND_MPI)
            continue;
        for (size_t t = 0; t < 3; t++)
            for (int masked = 0; masked <= 1; masked++) {
                if (!pixsum_method_supports(m[i].id, PIXSUM_OP_HISTOGRAM, types[t],
                                            PIXSUM_TYPE_NONE))
                    continue;
                hist_arg a = {m[i].name, types[t], masked, types[t] == PIXSUM_F32 ? 100 : 0};
                char name[96];
                snprintf(name, sizeof name, "hist %s %s%s", m[i].name,
                         pixsum_type_name(types[t]), masked ? " masked" : "");
                size_t bins = types[t] == PIXSUM_U8 ? 256 * 3 : types[t] == PIXSUM_U16 ? 65536 : 100;
                memset(ref_out, FILL, bins * 8);
                if (run_hist(&a, ref_out, bins * 8) == PIXSUM_ERR_UNSUPPORTED)
                    continue; /* e.g. a SIMD method limited to some channel counts */
                scenario s = {name, run_hist, &a, bins * 8};
                check_scenario(&s);
                ran++;
            }
    }
    assert_true(ran >= 6);
}

static void test_hist_applications(void **state)
{
    (void)state;
    hist_arg eq8 = {NULL, PIXSUM_U8, 0, 0}, eq16 = {NULL, PIXSUM_U16, 1, 0};
    scenario s[] = {
        {"joint u8 x u16", run_joint, NULL, 256 * 256 * 8},
        {"joint stats", run_joint_stats, NULL, sizeof(pixsum_joint_stats)},
        {"integral histogram + rebuild + queries", run_ihist, NULL, 3 * 16 * 8},
        {"equalize u8 c3", run_equalize, &eq8, W * H * 3},
        {"equalize u16 masked", run_equalize, &eq16, W * H * 2},
        {"otsu u16", run_otsu, NULL, 16},
        {"box stats (tables built under failure)", run_box_stats, NULL, 48},
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        check_scenario(&s[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integral_every_method),
        cmocka_unit_test(test_tilted_and_volume),
        cmocka_unit_test(test_histogram_every_method),
        cmocka_unit_test(test_hist_applications),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

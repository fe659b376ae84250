/*
 * test_integral_limits.c - the overflow boundary and wrap mode on real images:
 *   - the largest all-255 u8 image whose sum fits u32 (16843009 = 65537 x 257
 *     pixels) is accepted and exact with every method; one pixel more is refused
 *     with PIXSUM_ERR_OVERFLOW and a detail text, and accepted in wrap mode,
 *   - the same for u16 -> u32, and for the squared table (u8 -> u32: 66051
 *     pixels; u16 -> u32: 1 pixel),
 *   - i32 -> i64 at 2^32 - 1 pixels against 2^32, on address space that is only
 *     reserved (the calls must decide before touching memory),
 *   - wrap mode: a 4200 x 4200 u8 image whose total passes 2^32 gives, with
 *     every method, a u32 table equal to the exact table modulo 2^32, and exact
 *     box sums for every sampled box whose true sum is below 2^32.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pixsum.h"
#include "testutil.h"

/* Runs pixsum_integral / _sq with method `id`, padded and wrap as given. */
static int run_with(int id, int padded, int wrap, const pixsum_view *in, const pixsum_view *out,
                    const pixsum_view *out_sq)
{
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_non_null(ctx);
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_METHOD, id), PIXSUM_OK);
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, padded), PIXSUM_OK);
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, wrap), PIXSUM_OK);
    int st = out_sq ? pixsum_integral_sq(ctx, in, out, out_sq) : pixsum_integral(ctx, in, out);
    pixsum_ctx_free(ctx);
    return st;
}

/* The tables here have some 17 million entries and are made by every
 * registered method. The first method ("auto") gets every entry checked; the
 * others the last row, the last column (where the sums are largest) and 2^16
 * random entries, which keeps the test fast under sanitizers while any wrong
 * row, column or block still shows. */
typedef struct sampler {
    size_t i, n; /* n = 0: every entry */
    size_t w, h;
} sampler;

static sampler make_sampler(size_t w, size_t h, int full)
{
    sampler s = {0, full ? 0 : w + h + 65536, w, h};
    return s;
}

/* Next (x, y) to check; returns 0 when done. */
static int next_entry(sampler *s, size_t *x, size_t *y)
{
    if (s->n == 0) {
        if (s->i >= s->w * s->h)
            return 0;
        *x = s->i % s->w;
        *y = s->i / s->w;
    } else {
        if (s->i >= s->n)
            return 0;
        if (s->i < s->w) {
            *x = s->i;
            *y = s->h - 1;
        } else if (s->i < s->w + s->h) {
            *x = s->w - 1;
            *y = s->i - s->w;
        } else {
            *x = tu_between(tu_global_rng(), 0, s->w - 1);
            *y = tu_between(tu_global_rng(), 0, s->h - 1);
        }
    }
    s->i++;
    return 1;
}

/* Entries of a u32 table of a constant image: value * (x+1) * (y+1), reduced
 * modulo 2^32. */
static void check_constant_table(const pixsum_view *t, uint64_t value, int full,
                                 const char *what)
{
    sampler s = make_sampler(t->width, t->height, full);
    size_t x, y;
    while (next_entry(&s, &x, &y)) {
        uint32_t got = *(const uint32_t *)tu_elem(t, x, y, 0, 0);
        uint32_t want = (uint32_t)(value * (uint64_t)(x + 1) * (uint64_t)(y + 1));
        if (got != want)
            fail_msg("%s: entry (%zu,%zu) = %u, expected %u", what, x, y, got, want);
    }
}

/* Accepts the `fits` shape and refuses `over` (one pixel more), with every
 * method; the refused output stays untouched; wrap mode accepts `over`. */
static void boundary_case(pixsum_type in_type, int64_t value, int squared, size_t fw, size_t fh,
                          size_t ow, size_t oh)
{
    uint64_t term = (uint64_t)value * (squared ? (uint64_t)value : 1u);
    int ids[64];
    size_t n = tu_methods_for(squared ? PIXSUM_OP_INTEGRAL_SQ : PIXSUM_OP_INTEGRAL, ids, 64);
    for (int over = 0; over < 2; over++) {
        size_t w = over ? ow : fw, h = over ? oh : fh;
        tu_image in, out;
        assert_int_equal(tu_image_alloc(&in, in_type, w, h, 1, 1, NULL), 0);
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w; x++)
                tu_set_i(&in.view, x, y, 0, 0, value);
        assert_int_equal(tu_image_alloc(&out, PIXSUM_U32, w, h, 1, 1, NULL), 0);
        for (size_t k = 0; k < n; k++) {
            char what[128];
            snprintf(what, sizeof what, "%s %s -> u32, %zux%zu = %zu pixels, method %s",
                     squared ? "squared" : "plain", pixsum_type_name(in_type), w, h, w * h,
                     tu_method_name(ids[k]));
            const pixsum_view *o = squared ? NULL : &out.view;
            const pixsum_view *osq = squared ? &out.view : NULL;
            memset(out.block, 0xA5, out.block_bytes);
            if (k == 0)
                tu_image_snapshot(&out);
            int st = run_with(ids[k], 0, 0, &in.view, o, osq);
            if (!over) {
                if (st == PIXSUM_ERR_UNSUPPORTED && !tu_method_must_support(ids[k]))
                    continue;
                if (st != PIXSUM_OK)
                    fail_msg("%s: refused (%s) although the worst case fits", what,
                             pixsum_last_error());
                check_constant_table(&out.view, term, k == 0, what);
                /* the last entry is the largest sum, right at the limit */
                const uint32_t *last = tu_elem(&out.view, w - 1, h - 1, 0, 0);
                assert_true((uint64_t)*last == term * w * h);
                assert_true(term * w * h <= UINT32_MAX);
            } else {
                if (st != PIXSUM_ERR_OVERFLOW)
                    fail_msg("%s: status %d, expected PIXSUM_ERR_OVERFLOW", what, st);
                const char *d = pixsum_last_error();
                if (!strstr(d, "u32") || !strstr(d, "overflow"))
                    fail_msg("%s: detail '%s' does not explain the overflow", what, d);
                if (k == 0) /* (test_errors checks this for every kind of refusal) */
                    assert_int_equal(tu_image_check_untouched(&out, 1, what), 0);
                /* wrap mode: accepted, every entry exact modulo 2^32 (for the
                 * 17-million-pixel image only with the first method here:
                 * test_wrap_mode_large_image runs every method on a larger one) */
                if (k > 0 && w * h > ((size_t)1 << 20))
                    continue;
                st = run_with(ids[k], 0, 1, &in.view, o, osq);
                if (st == PIXSUM_ERR_UNSUPPORTED && !tu_method_must_support(ids[k]))
                    continue;
                if (st != PIXSUM_OK)
                    fail_msg("%s, wrap mode: %s", what, pixsum_last_error());
                check_constant_table(&out.view, term, k == 0, what);
                assert_true(term * w * h > UINT32_MAX); /* it really wrapped */
            }
        }
        tu_image_free(&in);
        tu_image_free(&out);
    }
}

static void test_u8_u32_boundary(void **state)
{
    (void)state;
    /* 255 * 16843009 = 2^32 - 1 exactly; 16843009 = 65537 * 257, 16843010 = 8421505 * 2 */
    boundary_case(PIXSUM_U8, 255, 0, 65537, 257, 8421505, 2);
    assert_int_equal(pixsum_integral_type(PIXSUM_U8, 16843009, 0), PIXSUM_U32);
    assert_int_equal(pixsum_integral_type(PIXSUM_U8, 16843010, 0), PIXSUM_U64);
}

static void test_u16_u32_boundary(void **state)
{
    (void)state;
    /* 65535 * 65537 = 2^32 - 1: a single row and a single column */
    boundary_case(PIXSUM_U16, 65535, 0, 65537, 1, 2, 32769);
    boundary_case(PIXSUM_U16, 65535, 0, 1, 65537, 32769, 2);
}

static void test_squared_boundary(void **state)
{
    (void)state;
    /* 65025 * 66051 = 4294966275 <= 2^32 - 1 < 65025 * 66052; 66051 = 9 * 7339,
     * 66052 = 4 * 16513 */
    boundary_case(PIXSUM_U8, 255, 1, 7339, 9, 16513, 4);
    /* 65535^2 = 4294836225 fits once, not twice */
    boundary_case(PIXSUM_U16, 65535, 1, 1, 1, 2, 1);
}

/* i32 -> i64 refuses at 2^32 pixels and accepts 2^32 - 1. 16 GiB of input are
 * not allocated: the views lie on reserved, inaccessible address space and
 * share it (input and output overlap), so an accepted call stops at the
 * aliasing check, which comes after the overflow check, and a refused one at
 * the overflow check; neither may read or write a byte. */
static void test_i32_i64_boundary(void **state)
{
    (void)state;
    size_t bytes = ((size_t)1 << 32) * 8;
    void *mem = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) {
        print_message("cannot reserve 32 GiB of address space; skipped\n");
        skip();
    }
    /* 65535 x 65537 = 2^32 - 1 pixels; 65536 x 65536 = 2^32 */
    pixsum_view in = pixsum_view_2d(mem, PIXSUM_I32, 65535, 65537, 1, 0);
    pixsum_view out = pixsum_view_2d(mem, PIXSUM_I64, 65535, 65537, 1, 0);
    int st = pixsum_integral(NULL, &in, &out);
    if (st != PIXSUM_ERR_ALIASING)
        fail_msg("2^32 - 1 i32 pixels into i64: status %d (%s), expected to pass the overflow "
                 "check and stop at aliasing",
                 st, pixsum_last_error());
    in = pixsum_view_2d(mem, PIXSUM_I32, 65536, 65536, 1, 0);
    out = pixsum_view_2d(mem, PIXSUM_I64, 65536, 65536, 1, 0);
    st = pixsum_integral(NULL, &in, &out);
    if (st != PIXSUM_ERR_OVERFLOW)
        fail_msg("2^32 i32 pixels into i64: status %d (%s), expected OVERFLOW", st,
                 pixsum_last_error());
    assert_non_null(strstr(pixsum_last_error(), "i64"));
    munmap(mem, bytes);
}

/* The u8 image of the BRIEF: past 4104^2 pixels an all-bright image wraps u32. */
static void test_wrap_mode_large_image(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    const size_t W = 4200, H = 4200;
    tu_image in;
    assert_int_equal(tu_image_alloc(&in, PIXSUM_U8, W, H, 1, 1, NULL), 0);
    uint8_t *px = in.view.data;
    for (size_t i = 0; i < W * H; i++)
        px[i] = (uint8_t)(240 + (tu_next(r) & 15));
    /* The test's own exact table, by running sums in 64 bits (at most 4.5e9). */
    uint64_t *exact = malloc(W * H * sizeof *exact);
    assert_non_null(exact);
    for (size_t y = 0; y < H; y++) {
        uint64_t run = 0;
        for (size_t x = 0; x < W; x++) {
            run += px[y * W + x];
            exact[y * W + x] = run + (y ? exact[(y - 1) * W + x] : 0);
        }
    }
    assert_true(exact[W * H - 1] > UINT32_MAX);
    print_message("4200x4200 u8 image: total %llu = 2^32 + %llu\n",
                  (unsigned long long)exact[W * H - 1],
                  (unsigned long long)(exact[W * H - 1] - ((uint64_t)1 << 32)));
    /* Boxes with their exact sums (inclusion-exclusion on the exact table). */
    enum { NB = 1500 };
    pixsum_box *boxes = malloc(NB * sizeof *boxes);
    uint64_t *want = malloc(NB * sizeof *want);
    assert_non_null(boxes);
    assert_non_null(want);
    size_t fitting = 0;
    for (size_t k = 0; k < NB; k++) {
        pixsum_box b = {tu_between(r, 0, W - 1), tu_between(r, 0, H - 1), 0, 0, 0, 1};
        b.w = tu_between(r, 1, W - b.x);
        b.h = tu_between(r, 1, H - b.y);
        if (k < 40) { /* large boxes on both sides of the 2^32 limit */
            b.x = tu_between(r, 0, 40);
            b.y = tu_between(r, 0, 40);
            b.w = W - b.x - tu_between(r, 0, 40);
            b.h = H - b.y - tu_between(r, 0, 40);
        }
        size_t x1 = b.x + b.w - 1, y1 = b.y + b.h - 1;
        uint64_t s = exact[y1 * W + x1];
        if (b.x)
            s -= exact[y1 * W + b.x - 1];
        if (b.y)
            s -= exact[(b.y - 1) * W + x1];
        if (b.x && b.y)
            s += exact[(b.y - 1) * W + b.x - 1];
        boxes[k] = b;
        want[k] = s;
        fitting += s <= UINT32_MAX;
    }
    int ids[64];
    size_t n = tu_methods_for(PIXSUM_OP_INTEGRAL, ids, 64);
    tu_image out;
    assert_int_equal(tu_image_alloc(&out, PIXSUM_U32, W + 1, H + 1, 1, 1, NULL), 0);
    uint32_t *sums = malloc(NB * sizeof *sums);
    assert_non_null(sums);
    for (size_t k = 0; k < n; k++)
        for (int padded = 0; padded < 2; padded++) {
            /* both layouts for "auto", one (alternating) for the other methods */
            if (k > 0 && padded != (int)(k % 2))
                continue;
            pixsum_view ov = out.view;
            ov.width = W + (size_t)padded;
            ov.height = H + (size_t)padded;
            ov.row_stride = (ptrdiff_t)((W + 1) * 4);
            /* without wrap mode the request is refused */
            int st = run_with(ids[k], padded, 0, &in.view, &ov, NULL);
            assert_int_equal(st, PIXSUM_ERR_OVERFLOW);
            st = run_with(ids[k], padded, 1, &in.view, &ov, NULL);
            if (st == PIXSUM_ERR_UNSUPPORTED && !tu_method_must_support(ids[k]))
                continue;
            if (st != PIXSUM_OK)
                fail_msg("method %s wrap: %s", tu_method_name(ids[k]), pixsum_last_error());
            sampler s = make_sampler(W, H, k == 0);
            size_t x, y;
            while (next_entry(&s, &x, &y)) {
                uint32_t got = *(const uint32_t *)tu_elem(&ov, x + (size_t)padded,
                                                          y + (size_t)padded, 0, 0);
                if (got != (uint32_t)exact[y * W + x])
                    fail_msg("method %s padded %d: entry (%zu,%zu) = %u, expected %llu mod 2^32",
                             tu_method_name(ids[k]), padded, x, y, got,
                             (unsigned long long)exact[y * W + x]);
            }
            if (padded) /* the zero border */
                for (size_t i = 0; i <= W; i++)
                    assert_true(*(const uint32_t *)tu_elem(&ov, i, 0, 0, 0) == 0 &&
                                *(const uint32_t *)tu_elem(&ov, 0, i, 0, 0) == 0);
            pixsum_ctx *ctx = pixsum_ctx_new();
            assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, padded), PIXSUM_OK);
            assert_int_equal(pixsum_box_sums(ctx, &ov, boxes, NB, sums), PIXSUM_OK);
            pixsum_ctx_free(ctx);
            for (size_t b = 0; b < NB; b++)
                if (want[b] <= UINT32_MAX && sums[b] != want[b])
                    fail_msg("method %s padded %d: box %zu (%zu,%zu %zux%zu) sum %u, exact %llu",
                             tu_method_name(ids[k]), padded, b, boxes[b].x, boxes[b].y,
                             boxes[b].w, boxes[b].h, sums[b], (unsigned long long)want[b]);
        }
    print_message("%zu of %d boxes have a true sum below 2^32 and were exact with every "
                  "method\n",
                  fitting, NB);
    assert_true(fitting > NB / 2);
    free(sums);
    free(boxes);
    free(want);
    free(exact);
    tu_image_free(&out);
    tu_image_free(&in);
}

int main(void)
{
    tu_init("test_integral_limits");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u8_u32_boundary),
        cmocka_unit_test(test_u16_u32_boundary),
        cmocka_unit_test(test_squared_boundary),
        cmocka_unit_test(test_i32_i64_boundary),
        cmocka_unit_test(test_wrap_mode_large_image),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_integral_batch.c - pixsum_integral_batch(): each slice of a stack is
 * an image of its own, and each table slice must equal the reference table of
 * that image alone (tests/testutil.c, summed from the definition): random
 * sizes (1x1, 1xN, Nx1, odd), 1-4 channels, input layouts (row and slice
 * padding, ROI, bottom-up), every supported type pair, plain, squared and
 * both tables, padded and inclusive layouts, 1 and several threads, batches
 * smaller and larger than the thread count. Then the overflow rule, which
 * counts one image (the largest all-255 u8 image whose sum fits u32, in a
 * batch whose total does not; one pixel more refused), and the refusals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pixsum.h"
#include "testutil.h"

/* Checks slice z of `table` against the reference of slice z of `in`. */
static void check_slice(const pixsum_view *in, const pixsum_view *table, size_t z, int squared,
                        int padded, int wrap, const char *what)
{
    pixsum_view si, st;
    pixsum_view_roi3d(in, 0, 0, z, in->width, in->height, 1, &si);
    pixsum_view_roi3d(table, 0, 0, z, table->width, table->height, 1, &st);
    tu_ref ref;
    assert_int_equal(tu_ref_integral(&ref, &si, squared), 0);
    if (tu_check_table(&st, padded, &ref, wrap, what) != 0)
        fail_msg("%s: slice %zu differs from its own image's table", what, z);
    tu_ref_free(&ref);
}

static void test_batches_against_reference(void **state)
{
    (void)state;
    tu_rng *r = tu_global_rng();
    pixsum_type ins[16], outs[16];
    for (int round = 0; round < 160; round++) {
        int squared_only = round % 5 == 4, both = round % 5 == 3;
        size_t npairs = tu_supported_pairs(squared_only || both, ins, outs, 16);
        size_t k = (size_t)tu_below(r, npairs);
        pixsum_type tin = ins[k], tout = outs[k];
        size_t w = tu_dim(r, 23), h = tu_dim(r, 19), n = 1 + (size_t)tu_below(r, 6);
        size_t ch = 1 + (size_t)tu_below(r, 4);
        int padded = (int)tu_below(r, 2), threads = 1 + (int)tu_below(r, 3);
        int wrap = 1; /* any content: integer tables in wrap mode are exact mod 2^bits */
        tu_layout lay = tu_random_layout(r);
        lay.bottom_up = 0; /* a 3-D view with a slice stride: rows top-down */
        tu_image in, out, sq;
        assert_int_equal(tu_image_alloc(&in, tin, w, h, n, ch, &lay), 0);
        tu_fill_random(r, &in.view, (tu_fill)tu_below(r, 4));
        tu_image_snapshot(&in);
        size_t tw = w + (size_t)padded, th = h + (size_t)padded;
        assert_int_equal(tu_image_alloc(&out, tout, tw, th, n, ch, NULL), 0);
        assert_int_equal(tu_image_alloc(&sq, tout, tw, th, n, ch, NULL), 0);
        pixsum_ctx *ctx = pixsum_ctx_new();
        assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, threads), PIXSUM_OK);
        assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, padded), PIXSUM_OK);
        assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, wrap), PIXSUM_OK);
        const pixsum_view *po = squared_only ? NULL : &out.view;
        const pixsum_view *ps = squared_only || both ? &sq.view : NULL;
        int st = pixsum_integral_batch(ctx, &in.view, po, ps);
        if (st != PIXSUM_OK)
            fail_msg("%s -> %s %zux%zux%zu c%zu: %s", pixsum_type_name(tin),
                     pixsum_type_name(tout), w, h, n, ch, pixsum_last_error());
        char what[160];
        snprintf(what, sizeof what, "batch %s -> %s %zux%zu x%zu c%zu padded %d threads %d",
                 pixsum_type_name(tin), pixsum_type_name(tout), w, h, n, ch, padded, threads);
        for (size_t z = 0; z < n; z++) {
            if (po)
                check_slice(&in.view, &out.view, z, 0, padded, wrap, what);
            if (ps)
                check_slice(&in.view, &sq.view, z, 1, padded, wrap, what);
        }
        assert_int_equal(tu_image_check_untouched(&in, 1, "batch input"), 0);
        pixsum_ctx_free(ctx);
        tu_image_free(&in);
        tu_image_free(&out);
        tu_image_free(&sq);
    }
}

/* Images of 257 x 65537 = 16843009 all-255 u8 pixels sum to exactly
 * 2^32 - 1: a batch of two gets u32 tables (a volume of them would not), and
 * 2 x 8421505 (one pixel more per image) is refused. */
static void test_overflow_counts_one_image(void **state)
{
    (void)state;
    const size_t w = 65537, h = 257, n = 2, px = w * h;
    uint8_t *img = malloc(n * px + 64);
    uint32_t *tab = malloc((n * px + 64) * sizeof *tab);
    assert_non_null(img);
    assert_non_null(tab);
    memset(img, 0xFF, n * px + 64);
    pixsum_view in = pixsum_view_3d(img, PIXSUM_U8, w, h, n, 1, (ptrdiff_t)w, (ptrdiff_t)px);
    pixsum_view out = pixsum_view_3d(tab, PIXSUM_U32, w, h, n, 1, (ptrdiff_t)(w * 4),
                                     (ptrdiff_t)(px * 4));
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_int_equal(pixsum_integral_batch(ctx, &in, &out, NULL), PIXSUM_OK);
    assert_int_equal(tab[px - 1], UINT32_MAX);
    assert_int_equal(tab[2 * px - 1], UINT32_MAX);
    assert_int_equal(tab[px + w - 1], 255u * w); /* slice 1 starts over */
    assert_int_equal(pixsum_integral(ctx, &in, &out), PIXSUM_ERR_OVERFLOW);
    pixsum_view in1 = pixsum_view_3d(img, PIXSUM_U8, 8421505, 2, n, 1, 8421505, 16843010);
    pixsum_view out1 = pixsum_view_3d(tab, PIXSUM_U32, 8421505, 2, n, 1, 8421505 * 4,
                                      16843010 * 4);
    assert_int_equal(pixsum_integral_batch(ctx, &in1, &out1, NULL), PIXSUM_ERR_OVERFLOW);
    assert_non_null(strstr(pixsum_last_error(), "16843010"));
    pixsum_ctx_free(ctx);
    free(img);
    free(tab);
}

static void test_refusals(void **state)
{
    (void)state;
    uint8_t img[4 * 3 * 2] = {0};
    uint32_t tab[5 * 4 * 2];
    pixsum_view in = pixsum_view_3d(img, PIXSUM_U8, 4, 3, 2, 1, 4, 12);
    pixsum_view out = pixsum_view_3d(tab, PIXSUM_U32, 4, 3, 2, 1, 16, 48);
    pixsum_view bad = pixsum_view_3d(tab, PIXSUM_U32, 4, 3, 1, 1, 16, 48);
    assert_int_equal(pixsum_integral_batch(NULL, NULL, &out, NULL), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_integral_batch(NULL, &in, NULL, NULL), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_integral_batch(NULL, &in, &bad, NULL), PIXSUM_ERR_BAD_SHAPE);
    /* a padded context wants (W+1) x (H+1) x N, not a volume's extra slice */
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, 1), PIXSUM_OK);
    pixsum_view vol = pixsum_view_3d(tab, PIXSUM_U32, 5, 4, 3, 1, 20, 80);
    assert_int_equal(pixsum_integral_batch(ctx, &in, &vol, NULL), PIXSUM_ERR_BAD_SHAPE);
    pixsum_view padded = pixsum_view_3d(tab, PIXSUM_U32, 5, 4, 2, 1, 20, 80);
    assert_int_equal(pixsum_integral_batch(ctx, &in, &padded, NULL), PIXSUM_OK);
    /* the table over the input */
    pixsum_view over = pixsum_view_3d(img, PIXSUM_U8, 4, 3, 2, 1, 4, 12);
    assert_int_not_equal(pixsum_integral_batch(NULL, &in, &over, NULL), PIXSUM_OK);
    pixsum_ctx_free(ctx);
}

int main(void)
{
    tu_init("test_integral_batch");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batches_against_reference),
        cmocka_unit_test(test_overflow_counts_one_image),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

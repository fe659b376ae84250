/*
 * test_tile_order.c - the diagonal tile order of cuda.lookback's staged kernel
 * (src/cuda/tile_order.h), checked on the host in every build:
 *   - on small planes (1 x 1, 1 x N, N x 1, square, wide, tall, several
 *     planes), every ticket names a different tile and every tile is named;
 *   - the tiles left of and above a tile have earlier tickets (the property
 *     that keeps a block from waiting on a block not yet started);
 *   - tickets go diagonal by diagonal, each by increasing x;
 *   - on planes of up to 2^31 - 1 tiles (one tile high or wide, and square),
 *     sampled tickets map back to themselves through the closed-form inverse
 *     and keep the same ordering.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cuda/tile_order.h"

typedef unsigned long long u64;

/* The ticket of tile (x, y) of plane `plane` in diagonal order: the inverse of
 * psi_diagonal_tile(), from the count of tiles on earlier diagonals. */
static u64 ticket_of(u64 plane, unsigned x, unsigned y, unsigned w, unsigned h)
{
    const unsigned d = x + y, first_x = d + 1 > h ? d + 1 - h : 0;
    return plane * (u64)w * h + psi_tiles_before_diagonal(d, w, h) + (x - first_x);
}

/* Checks ticket t of w x h planes: its tile lies in range, maps back to t, and
 * its left and upper neighbours have earlier tickets. */
static void check_ticket(u64 t, unsigned w, unsigned h)
{
    const u64 per_plane = (u64)w * h, r = psi_diagonal_tile(t, w, h);
    const u64 plane = r / per_plane, rem = r % per_plane;
    const unsigned y = (unsigned)(rem / w), x = (unsigned)(rem % w);
    assert_true(x < w && y < h);
    assert_int_equal(plane, t / per_plane);
    assert_int_equal(ticket_of(plane, x, y, w, h), t);
    if (x > 0)
        assert_true(ticket_of(plane, x - 1, y, w, h) < t);
    if (y > 0)
        assert_true(ticket_of(plane, x, y - 1, w, h) < t);
}

static void test_tile_order_small_planes_exhaustive(void **state)
{
    (void)state;
    static const unsigned shapes[][2] = {{1, 1},  {1, 9},   {9, 1},   {2, 2},  {3, 5},
                                         {5, 3},  {7, 7},   {32, 64}, {64, 32}, {33, 17},
                                         {1, 300}, {300, 1}, {256, 255}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const unsigned w = shapes[s][0], h = shapes[s][1], planes = 3;
        const u64 total = (u64)w * h * planes;
        unsigned char *seen = calloc((size_t)total, 1);
        assert_non_null(seen);
        unsigned prev_d = 0, prev_x = 0;
        for (u64 t = 0; t < total; t++) {
            check_ticket(t, w, h);
            const u64 r = psi_diagonal_tile(t, w, h);
            assert_int_equal(seen[r], 0);
            seen[r] = 1;
            /* diagonal by diagonal, each by increasing x, within a plane */
            const u64 rem = r % ((u64)w * h);
            const unsigned x = (unsigned)(rem % w), d = x + (unsigned)(rem / w);
            if (t % ((u64)w * h) != 0)
                assert_true(d > prev_d || (d == prev_d && x > prev_x));
            prev_d = d;
            prev_x = x;
        }
        for (u64 r = 0; r < total; r++)
            assert_int_equal(seen[r], 1);
        free(seen);
    }
}

static void test_tile_order_diagonal_counts(void **state)
{
    (void)state;
    /* all tiles lie before diagonal w + h - 1; diagonal d holds min(d + 1, w,
     * h, w + h - 1 - d) tiles */
    static const unsigned shapes[][2] = {{1, 1}, {4, 9}, {9, 4}, {65536, 32768}, {2147483647u, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const unsigned w = shapes[s][0], h = shapes[s][1];
        assert_int_equal(psi_tiles_before_diagonal(w + h - 1, w, h), (u64)w * h);
        assert_int_equal(psi_tiles_before_diagonal(0, w, h), 0);
        for (unsigned d = 0; d + 1 < w + h && d < 1000; d++) {
            u64 n = d + 1;
            n = n < w ? n : w;
            n = n < h ? n : h;
            n = n < (u64)(w + h - 1 - d) ? n : (u64)(w + h - 1 - d);
            assert_int_equal(psi_tiles_before_diagonal(d + 1, w, h) -
                                 psi_tiles_before_diagonal(d, w, h),
                             n);
        }
    }
}

static void test_tile_order_huge_planes_sampled(void **state)
{
    (void)state;
    /* the largest planes a launch takes: under 2^31 tiles in all */
    static const unsigned shapes[][2] = {
        {2147483647u, 1}, {1, 2147483647u}, {46340, 46340}, {65536, 32767}, {3, 715827882}};
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const unsigned w = shapes[s][0], h = shapes[s][1];
        const u64 total = (u64)w * h;
        const u64 ends[] = {0, 1, total / 2, total - 2, total - 1};
        for (size_t e = 0; e < sizeof ends / sizeof ends[0]; e++)
            check_ticket(ends[e], w, h);
        for (int k = 0; k < 20000; k++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            check_ticket(rng % total, w, h);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tile_order_small_planes_exhaustive),
        cmocka_unit_test(test_tile_order_diagonal_counts),
        cmocka_unit_test(test_tile_order_huge_planes_sampled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

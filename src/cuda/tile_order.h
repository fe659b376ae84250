/*
 * tile_order.h - the diagonal tile order of cuda.lookback's staged kernel
 * (LB_ORDER_DIAGONAL in sat_lookback.cuh): ticket t of a plane of w x h tiles
 * names the t-th tile when the anti-diagonals x + y = 0, 1, ... are counted in
 * turn, each by increasing x, plane after plane. Every tile left of or above a
 * tile lies on an earlier diagonal, so it gets an earlier ticket: a block
 * never waits on a tile whose block has not started.
 * Plain C as well as CUDA, so that tests/test_tile_order.c checks the code the
 * kernel runs.
 */
#ifndef PIXSUM_TILE_ORDER_H
#define PIXSUM_TILE_ORDER_H

#ifdef __CUDACC__
#define PSI_TILE_ORDER_FN __host__ __device__ __forceinline__
#else
#define PSI_TILE_ORDER_FN static inline
#endif

/* Tiles of a w x h plane with x + y < d, for d < w + h: T(d) - T(d - w) -
 * T(d - h), where T(n) = n (n + 1) / 2 counts the cells of a triangle. */
PSI_TILE_ORDER_FN unsigned long long psi_tiles_before_diagonal(unsigned d, unsigned w,
                                                               unsigned h)
{
    const unsigned long long n = d, a = d > w ? (unsigned long long)(d - w) : 0,
                             b = d > h ? (unsigned long long)(d - h) : 0;
    return n * (n + 1) / 2 - a * (a + 1) / 2 - b * (b + 1) / 2;
}

/* The tile of ticket t in diagonal order over planes of w x h tiles (w, h >
 * 0, w h planes < 2^63): its row-by-row number plane w h + y w + x. */
PSI_TILE_ORDER_FN unsigned long long psi_diagonal_tile(unsigned long long t, unsigned w,
                                                       unsigned h)
{
    const unsigned long long per_plane = (unsigned long long)w * h, plane = t / per_plane,
                             rem = t - plane * per_plane;
    unsigned lo = 0, hi = w + h - 1; /* psi_tiles_before_diagonal(lo) <= rem < (hi) */
    while (hi - lo > 1) {
        const unsigned mid = lo + (hi - lo) / 2;
        if (psi_tiles_before_diagonal(mid, w, h) <= rem)
            lo = mid;
        else
            hi = mid;
    }
    const unsigned first_x = lo + 1 > h ? lo + 1 - h : 0;
    const unsigned x = first_x + (unsigned)(rem - psi_tiles_before_diagonal(lo, w, h));
    return plane * per_plane + (unsigned long long)(lo - x) * w + x;
}

#endif

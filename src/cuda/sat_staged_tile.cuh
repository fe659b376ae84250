/*
 * sat_staged_tile.cuh - the phases of one shared-memory tile that the staged
 * kernel (sat_lookback_staged.cu) and the pipelined kernel
 * (sat_lookback_pipe.cu) share: the tile layout in shared memory, the copy of
 * the tile's input (step 2), its column and row sums (step 3), its bottom row
 * and right column (step 4's inputs to the look-backs) and the scan and
 * write of its table rows (step 5). A tile is TW = 256 columns x TH = 8 R
 * rows, worked on by 8 warps (256 threads, thread tid < 256, warp tid / 32);
 * the functions take the barrier of those 256 threads as `sync`, so a kernel
 * with more warps can keep the others out of it.
 */
#ifndef PIXSUM_SAT_STAGED_TILE_CUH
#define PIXSUM_SAT_STAGED_TILE_CUH

#include "sat_lookback.cuh"

#include <type_traits>

namespace psi_cu {

constexpr int ST_WARPS = 8, ST_THREADS = 32 * ST_WARPS;
static_assert(ST_THREADS == LB_TW, "one thread per tile column in step 3");

/* An unsigned type of N bytes, for vector shared-memory accesses. */
template <int N> struct uint_of;
template <> struct uint_of<2> { typedef unsigned short T; };
template <> struct uint_of<4> { typedef unsigned T; };
template <> struct uint_of<8> { typedef uint2 T; };
template <> struct uint_of<16> { typedef uint4 T; };

/* Reads V adjacent input elements from shared memory and converts them. */
template <typename TIn, typename TAcc, int V>
__device__ __forceinline__ void read_group(const TIn *src, int squared, TAcc v[V])
{
    typedef typename uint_of<V * (int)sizeof(TIn)>::T vec;
    union {
        vec q;
        TIn e[V];
    } u;
    u.q = *(const vec *)src;
#pragma unroll
    for (int j = 0; j < V; j++)
        v[j] = sample<TAcc, TIn>(u.e[j], squared);
}

/* Inclusive scan along x of one row held as G groups of V values per lane
 * (group g covers 32 V columns): in-lane prefix, warp scan of the lane totals,
 * then each group's carry from the groups before it. */
template <typename TAcc, int G, int V>
__device__ __forceinline__ void scan_row(TAcc v[G][V], unsigned lane)
{
    TAcc carry = (TAcc)0;
#pragma unroll
    for (int g = 0; g < G; g++) {
#pragma unroll
        for (int j = 1; j < V; j++)
            v[g][j] += v[g][j - 1];
        TAcc incl = warp_inclusive(v[g][V - 1], lane);
        TAcc ex = warp_exclusive_from_inclusive(incl, lane);
        if (g > 0)
            ex += carry;
#pragma unroll
        for (int j = 0; j < V; j++)
            v[g][j] += ex;
        if (g + 1 < G)
            carry += __shfl_sync(0xffffffffu, incl, 31);
    }
}

/* Step 3 for u8 -> u32 without squares: the column and row sums of a warp's
 * R rows of 8-bit samples (lane l reads the 4 bytes of columns 128 g + 4 l ..
 * + 3 of each group g < G), with the bytes kept packed:
 *   - column sums in two words per group, bytes 0 and 2 in 16-bit halves of
 *     one, bytes 1 and 3 of the other (at most 16 x 255 = 4080 per half);
 *   - a lane's share of a row sum by __dp4a, and the warp sums of two rows at
 *     once, 16 bits each (a row of 256 samples sums to at most 65280).
 * Same results as the generic loop, with about half its instructions and
 * shuffles. Writes the R row sums to s_rowsum[row0..] and the column sums to
 * s_colw_warp[TW]. */
template <int R, int G>
__device__ __forceinline__ void sums_u8_packed(const uint8_t *s_tile, int row0, unsigned lane,
                                               unsigned *s_rowsum, unsigned *s_colw_warp)
{
    static_assert(R % 2 == 0 && R * 255 < 65536, "packed column sums need R even, R <= 257");
    static_assert(G * 128 == LB_TW, "4 bytes per lane and group");
    unsigned even[G], odd[G], first = 0;
#pragma unroll
    for (int gi = 0; gi < G; gi++)
        even[gi] = odd[gi] = 0;
#pragma unroll
    for (int i = 0; i < R; i++) {
        unsigned part = 0;
#pragma unroll
        for (int gi = 0; gi < G; gi++) {
            const unsigned wd =
                *(const unsigned *)(s_tile + (row0 + i) * LB_TW + gi * 128 + lane * 4);
            even[gi] += wd & 0x00ff00ffu;
            odd[gi] += (wd >> 8) & 0x00ff00ffu;
            part = __dp4a(wd, 0x01010101u, part);
        }
        if (i % 2 == 0) {
            first = part;
        } else {
            const unsigned both = warp_sum(first | part << 16);
            if (lane == 0) {
                s_rowsum[row0 + i - 1] = both & 0xffffu;
                s_rowsum[row0 + i] = both >> 16;
            }
        }
    }
#pragma unroll
    for (int gi = 0; gi < G; gi++) {
        unsigned *dst = s_colw_warp + gi * 128 + lane * 4;
        dst[0] = even[gi] & 0xffffu;
        dst[1] = odd[gi] & 0xffffu;
        dst[2] = even[gi] >> 16;
        dst[3] = odd[gi] >> 16;
    }
}

/* Phase trace (TRACE kernels): the global time and clock of point k (1 start,
 * 2 loaded, 3 sums done, 4 look-backs done, 5 end) into a tile's record. */
__device__ __forceinline__ void trace_point(u64 *rec, int k, u64 ns, u64 clk)
{
    rec[k] = ns;
    rec[k + 5] = clk;
}

template <typename TIn, typename TAcc, int R>
struct staged_layout {
    static constexpr int TW = LB_TW, TH = ST_WARPS * R;
    static constexpr size_t tile = (size_t)TH * TW * sizeof(TIn);
    static constexpr size_t colw = tile;                                 /* TAcc [8][TW] */
    static constexpr size_t top = colw + (size_t)ST_WARPS * TW * sizeof(TAcc);
    static constexpr size_t bottom = top + TW * sizeof(TAcc);
    static constexpr size_t rowsum = bottom + TW * sizeof(TAcc);         /* TAcc [TH] */
    static constexpr size_t rowcum = rowsum + TH * sizeof(TAcc);
    static constexpr size_t edge = rowcum + TH * sizeof(TAcc);
    static constexpr size_t bytes = edge + TH * sizeof(TAcc);
};


/* The barrier of a kernel whose every thread works on the tile. */
struct sync_block {
    __device__ __forceinline__ void operator()() const { __syncthreads(); }
};

/* Step 2: copies the tile's input (columns x0.., rows ytile.. of plane b)
 * into s_tile[TH][TW]: 16-byte loads for aligned, single-channel, full-width
 * tiles (g.vec_in && full), element loads otherwise; zero past the image. No
 * barrier: the caller syncs before reading s_tile. */
template <typename TIn, int R>
__device__ __forceinline__ void tile_load(const psi_cu_plan &p, const lb_geom &g,
                                          const plane_ptrs &b, i64 x0, i64 ytile, bool full,
                                          unsigned tid, TIn *s_tile)
{
    typedef staged_layout<TIn, unsigned, R> L;
    constexpr int TW = L::TW, TH = L::TH;
    const i64 w = p.width, ch = p.channels, rows = p.y1 - p.y0;
    if (g.vec_in && full) {
        constexpr int CPR = TW * (int)sizeof(TIn) / 16; /* 16-byte chunks per row */
        constexpr int PER = TH * CPR / ST_THREADS, BATCH = PER < 8 ? PER : 8;
        static_assert(PER % BATCH == 0, "chunk batches");
#pragma unroll
        for (int k0 = 0; k0 < PER; k0 += BATCH) {
            uint4 q[BATCH];
#pragma unroll
            for (int k = 0; k < BATCH; k++) {
                const int c = (k0 + k) * ST_THREADS + (int)tid, r = c / CPR, o = c % CPR;
                const i64 yl = ytile + r;
                if (yl < rows) {
                    const uint4 *src = (const uint4 *)(b.in + (p.y0 + yl) * p.in_row +
                                                       x0 * (i64)sizeof(TIn)) + o;
                    q[k] = (g.hints & 1) ? __ldcs(src) : *src;
                } else {
                    q[k] = make_uint4(0, 0, 0, 0);
                }
            }
#pragma unroll
            for (int k = 0; k < BATCH; k++)
                ((uint4 *)s_tile)[(k0 + k) * ST_THREADS + (int)tid] = q[k];
        }
    } else {
        for (int c = (int)tid; c < TH * TW; c += ST_THREADS) {
            const int r = c / TW, xo = c % TW;
            const i64 yl = ytile + r, x = x0 + xo;
            TIn v = (TIn)0;
            if (yl < rows && x < w)
                v = ((const TIn *)(b.in + (p.y0 + yl) * p.in_row))[x * ch];
            s_tile[c] = v;
        }
    }
}

/* Step 3, after the tile is in s_tile and synced: each warp's column sums of
 * its R rows and the row sums (s_rowsum[TH]); then, one thread per column,
 * s_colw[w][x] becomes the sum of the rows above warp w and s_bottom[x] the
 * column's total. Syncs after each half (the results are visible to the 256
 * threads on return). */
template <typename TIn, typename TAcc, int R, typename Sync>
__device__ __forceinline__ void tile_sums(const TIn *s_tile, int squared, unsigned tid,
                                          TAcc *s_colw, TAcc *s_rowsum, TAcc *s_bottom,
                                          Sync sync)
{
    constexpr int TW = LB_TW;
    constexpr int V = 16 / (int)sizeof(TAcc), G = TW / (32 * V);
    const unsigned warp = tid >> 5, lane = tid & 31;
    const int row0 = (int)warp * R;
    bool summed = false;
    if constexpr (std::is_same<TIn, uint8_t>::value && std::is_same<TAcc, unsigned>::value) {
        if (!squared) { /* u8 -> u32: packed sums */
            sums_u8_packed<R, G>(s_tile, row0, lane, s_rowsum, s_colw + warp * TW);
            summed = true;
        }
    }
    if (!summed) {
        TAcc col[G][V];
#pragma unroll
        for (int gi = 0; gi < G; gi++)
#pragma unroll
            for (int j = 0; j < V; j++)
                col[gi][j] = (TAcc)0;
#pragma unroll
        for (int i = 0; i < R; i++) {
            TAcc v[G][V], part = (TAcc)0;
#pragma unroll
            for (int gi = 0; gi < G; gi++) {
                read_group<TIn, TAcc, V>(s_tile + (row0 + i) * TW + gi * 32 * V + lane * V,
                                         squared, v[gi]);
#pragma unroll
                for (int j = 0; j < V; j++) {
                    col[gi][j] += v[gi][j];
                    part += v[gi][j];
                }
            }
            part = warp_sum(part);
            if (lane == 0)
                s_rowsum[row0 + i] = part;
        }
#pragma unroll
        for (int gi = 0; gi < G; gi++)
#pragma unroll
            for (int j = 0; j < V; j++)
                s_colw[warp * TW + gi * 32 * V + lane * V + j] = col[gi][j];
    }
    sync();
    { /* one thread per column: the sums of the rows above each warp */
        TAcc run = (TAcc)0;
#pragma unroll
        for (int wq = 0; wq < ST_WARPS; wq++) {
            TAcc c = s_colw[wq * TW + tid];
            s_colw[wq * TW + tid] = run;
            run += c;
        }
        s_bottom[tid] = run;
    }
    sync();
}

/* Step 4's inputs, by one warp: the bottom row P(x) = L(x, TH - 1) of the
 * lane's 8 columns x0 + 8 lane .. + 7 from the column totals s_bottom[TW];
 * returns the tile's total L(TW - 1, TH - 1) to every lane. */
template <typename TAcc>
__device__ __forceinline__ TAcc tile_bottom_row(const TAcc *s_bottom, unsigned lane, TAcc P[8])
{
#pragma unroll
    for (int k = 0; k < 8; k++)
        P[k] = s_bottom[lane * 8 + k];
#pragma unroll
    for (int k = 1; k < 8; k++)
        P[k] += P[k - 1];
    TAcc incl = warp_inclusive(P[7], lane);
    TAcc ex = warp_exclusive_from_inclusive(incl, lane);
#pragma unroll
    for (int k = 0; k < 8; k++)
        P[k] += ex;
    return __shfl_sync(0xffffffffu, P[7], 31);
}

/* Step 4's inputs, by one warp: the right column rowcum(r) = L(TW - 1, r) of
 * the tile from its row sums, into s_rowcum[TH] and a[m] = rowcum(lane + 32 m). */
template <typename TAcc, int TH>
__device__ __forceinline__ void tile_right_column(const TAcc *s_rowsum, unsigned lane,
                                                  TAcc *s_rowcum, TAcc a[TH / 32])
{
    TAcc carry = (TAcc)0;
#pragma unroll
    for (int m = 0; m < TH / 32; m++) {
        TAcc rc = warp_inclusive(s_rowsum[lane + 32 * m], lane);
        a[m] = m > 0 ? rc + carry : rc;
        s_rowcum[lane + 32 * m] = a[m];
        carry += __shfl_sync(0xffffffffu, rc, 31);
    }
    __syncwarp();
}

/* Step 5, by warp `warp` < 8 of the 256 threads: its R table rows. acc starts
 * at Top(x) + L(x, row0 - 1) (s_top plus s_colw), each row is scanned along x
 * from s_tile, and I(x, y) = acc + s_edge[row] + corner is written with
 * 16-byte stores that cover 512 contiguous bytes per warp instruction
 * (g.vec_out && full), element stores otherwise. */
template <typename TIn, typename TAcc, int R>
__device__ __forceinline__ void tile_write(const psi_cu_plan &p, const lb_geom &g,
                                           const plane_ptrs &b, i64 x0, i64 ytile, bool full,
                                           unsigned warp, unsigned lane, const TIn *s_tile,
                                           const TAcc *s_colw, const TAcc *s_top,
                                           const TAcc *s_edge, TAcc corner)
{
    constexpr int TW = LB_TW;
    constexpr int V = 16 / (int)sizeof(TAcc), G = TW / (32 * V);
    const i64 w = p.width, ch = p.channels, rows = p.y1 - p.y0;
    const int row0 = (int)warp * R;
    TAcc acc[G][V];
#pragma unroll
    for (int gi = 0; gi < G; gi++)
#pragma unroll
        for (int j = 0; j < V; j++)
            acc[gi][j] = s_colw[warp * TW + gi * 32 * V + lane * V + j];
    scan_row<TAcc, G, V>(acc, lane); /* zeros for warp 0 */
#pragma unroll
    for (int gi = 0; gi < G; gi++)
#pragma unroll
        for (int j = 0; j < V; j++)
            acc[gi][j] += s_top[gi * 32 * V + lane * V + j];
    const bool vec_out = g.vec_out && full;
#pragma unroll
    for (int i = 0; i < R; i++) {
        const i64 yl = ytile + row0 + i;
        TAcc v[G][V];
#pragma unroll
        for (int gi = 0; gi < G; gi++)
            read_group<TIn, TAcc, V>(s_tile + (row0 + i) * TW + gi * 32 * V + lane * V,
                                     p.squared, v[gi]);
        scan_row<TAcc, G, V>(v, lane);
        const TAcc e = s_edge[row0 + i] + corner;
        if (yl >= rows)
            continue;
        char *orow = b.out + (p.y0 + yl) * p.out_row;
#pragma unroll
        for (int gi = 0; gi < G; gi++) {
            union {
                uint4 q;
                TAcc e[V];
            } u;
#pragma unroll
            for (int j = 0; j < V; j++) {
                acc[gi][j] += v[gi][j];
                u.e[j] = acc[gi][j] + e;
            }
            const i64 x = x0 + gi * 32 * V + (i64)lane * V;
            if (vec_out) {
                uint4 *dst = (uint4 *)((TAcc *)orow + x);
                if (g.hints & 2)
                    __stcs(dst, u.q);
                else
                    *dst = u.q;
            } else {
#pragma unroll
                for (int j = 0; j < V; j++)
                    if (x + j < w)
                        ((TAcc *)orow)[(x + j) * ch] = u.e[j];
            }
        }
    }
}

} // namespace psi_cu

#endif /* PIXSUM_SAT_STAGED_TILE_CUH */

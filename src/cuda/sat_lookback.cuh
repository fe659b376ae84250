/*
 * sat_lookback.cuh - what the two cuda.lookback kernels share: the tile
 * geometry and workspace layout, the launch choice (lb_choice), the flag
 * publish/read helpers, and the two look-backs of a tile (vertical, then
 * horizontal) run by one warp.
 *
 * Both kernels cut a plane into tiles of LB_TW = 256 columns x TH rows (the
 * register kernel with aggregate-only look-backs also LB_TW_NARROW = 128) and
 * need, for each tile, from its own local table L (the inclusive 2-D prefix of
 * the tile's pixels alone):
 *   P(x) = L(x, TH - 1), the tile's bottom row, and
 *   rowcum(r) = L(TW - 1, r), its right column;
 * tile_lookbacks() turns them into
 *   Top(x) = sum of the pixels above the tile in columns x0..x, and
 *   E(r) = I(x0 - 1, y0 + r), the table column just left of the tile,
 * so that the table is I(x, y) = L(x, y) + Top(x) + E(y).
 * Small planes use direct_publish_wait() and direct_sums() instead, which
 * need no inclusive value.
 * Flags are 64-bit words (epoch << 2 | status) written with st.release.gpu
 * after the values and read with ld.acquire.gpu before them; the epoch is
 * advanced by the last block of every launch, so stale flags never match.
 * 4-byte tables publish tagged words instead (value, status and epoch in one
 * 64-bit word), with no flags and no fences.
 */
#ifndef PIXSUM_SAT_LOOKBACK_CUH
#define PIXSUM_SAT_LOOKBACK_CUH

#include "device_caps.cuh"
#include "sat_common.cuh"
#include "tile_order.h"

namespace psi_cu {

struct lb_geom {
    u64 tiles_x, tiles_y, total;
    u64 *vflags, *hflags;
    void *vagg, *vinc, *hagg, *hinc;
    int vec_in, vec_out;
    int hints;   /* bit 0: evict-first (streaming) loads, bit 1: streaming stores,
                  * bit 4 (LB_ORDER_DIAGONAL): staged tiles by anti-diagonals */
    int direct;  /* register kernel: look-backs over aggregates only (small planes) */
    int pdl;     /* programmatic dependent launch: wait for the stream's previous kernel */
    int tagged;  /* aggregate-only look-backs of 4-byte tables: tagged words, no flags
                  * (the chained look-backs of 4-byte tables always take them) */
    int async_copy; /* staged kernel, sm_80 and newer: the tile copied into shared
                     * memory by cp.async, all of it in flight at once */
    int stagger_ns; /* staged kernel: block b of the first wave (the first MINB x
                     * stagger_wave blocks) waits (b / stagger_wave) x stagger_ns ns
                     * before taking its ticket, so that an SM's blocks start apart
                     * (0: no wait) */
    unsigned stagger_wave; /* the device's multiprocessors */
};

constexpr int LB_TW = 256;

/* lb_geom::hints: both streaming hints (loads and stores), except that the
 * staged kernel's 4-byte tables keep the load hint only once the look-back
 * records (flags and edge values, lb_layout()) outgrow a share of L2
 * (psi_arch_policy::lb_hints_l2_share), where storing the table without the
 * hint is the faster; 8-byte tables keep both, the faster at every size. */
constexpr int LB_HINTS_DEFAULT = 3, LB_HINTS_LARGE = 1;

/* lb_geom::hints bit for the staged kernel's tiles by anti-diagonals
 * (psi_diagonal_tile() in tile_order.h) instead of row by row: a tile's
 * left and upper neighbours then started a diagonal earlier, so its
 * look-backs wait less, but the tiles in flight share fewer DRAM pages.
 * Diagonal for input wider than 8 bits or tables wider than 4 bytes
 * (shorter tiles, more look-backs per pixel), so only u8 -> u32 goes row by
 * row (lb_shapes[] in sat_lookback.cu). */
constexpr int LB_ORDER_DIAGONAL = 16;

/* The register kernel's narrow tiles, for small planes with aggregate-only
 * look-backs: twice as many tiles, so that a 1024^2 plane covers 128 SMs
 * instead of 64. */
constexpr int LB_TW_NARROW = 128;

/* An unsigned type of N bytes, for vector accesses of N bytes. */
template <int N> struct uint_of;
template <> struct uint_of<2> { typedef unsigned short T; };
template <> struct uint_of<4> { typedef unsigned T; };
template <> struct uint_of<8> { typedef uint2 T; };
template <> struct uint_of<16> { typedef uint4 T; };

/* Launch choice of cuda.lookback: the register kernel (sat_lookback.cu, rows
 * per warp R, NW warps) or the staged kernel (sat_lookback_staged.cu: the
 * tile kept in shared memory, many small blocks per SM), its tile shape and
 * look-backs. Resolved by lb_choose() in sat_lookback.cu from the plan's type
 * pair and size (lb_shapes[]) and its forced paths (psi_cu_force). */
struct lb_choice {
    int staged;
    int rows, warps;   /* tile height = rows x warps */
    int tw;            /* tile width: LB_TW, or LB_TW_NARROW (register, direct) */
    int direct;        /* register kernel: aggregate-only look-backs where the plane
                        * has at most LB_DIRECT_MAX_TILES tiles along each axis */
    int diagonal;      /* staged kernel: tiles by anti-diagonals (LB_ORDER_DIAGONAL) */
    int no_pdl;        /* forced: no programmatic dependent launch */
    int no_async_copy; /* forced: the staged kernel's tile loaded through registers */
};

lb_choice lb_choose(const psi_cu_plan *p);

/* Rows per warp of the staged kernel for plan p (its tiles are 8 warps high):
 * the tallest of the pair's tiles that still gives every SM of a large GPU
 * two tiles. */
int lb_staged_rows(const psi_cu_plan *p);

/* Fills g's tile counts, workspace pointers (layout: lb_layout() in
 * sat_lookback.cu), hints (LB_HINTS_DEFAULT) and vector-access flags for a
 * launch with tiles of tile_width (LB_TW or LB_TW_NARROW) x tile_height, and
 * *records with the bytes of the look-back records (the workspace's header,
 * flags and values); returns 0, or a cudaError_t when the tile count exceeds
 * the grid limit. */
int lb_geometry(const psi_cu_plan *p, size_t in_size, size_t acc_size, int tile_width,
                int tile_height, lb_geom *g, size_t *records);

/* Launches kernel(*p, g) on p's stream with `blocks` x `threads` and smem
 * bytes of dynamic shared memory; g comes from lb_geometry() (PDL and the
 * stagger off) with the kernel's own fields set. From the device's
 * architecture policy (device_caps.cuh): g.pdl (cudaLaunchKernelEx with
 * programmatic stream serialization, unless c.no_pdl), else a plain launch;
 * for the staged kernel, which passes the blocks an SM holds as
 * staged_blocks (0 for the register kernel), g's stagger_ns and stagger_wave
 * when the launch needs more than one wave; with records > 0 (the staged
 * kernel's 4-byte tables: lb_geometry()'s record bytes) the store hint off
 * when they outgrow the policy's share of L2; and LB_ORDER_DIAGONAL where
 * c.diagonal. Returns 0 or a cudaError_t. */
int lb_launch(void (*kernel)(psi_cu_plan, lb_geom), unsigned blocks, unsigned threads,
              size_t smem, const psi_cu_plan *p, const lb_choice &c, lb_geom &g,
              int staged_blocks, size_t records);

/* Entry of the staged kernel (sat_lookback_staged.cu). */
int lookback_staged_dispatch(const psi_cu_plan *p, const lb_choice &c);

/* Where a block's tile lies: its tile number t over all planes (row by row
 * within a plane, whatever order the tickets go in), the launch epoch, its
 * column tx and row ty within its plane, and the plane. */
struct tile_pos {
    u64 t, epoch, tx, ty;
    plane_ptrs b;
};

/* Programmatic dependent launch (launches with g.pdl set, sm_90 and newer):
 * waits until the previous kernel of the stream has finished and its writes
 * are visible (the workspace header, the input). Called by every thread
 * first thing; a no-op without PDL. */
__device__ __forceinline__ void pdl_begin(const lb_geom &g)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (g.pdl)
        psi_pdl_wait();
#else
    (void)g;
#endif
}

/* Called by every thread of the block at its start: thread 0 takes the next
 * ticket (so every tile the block waits for belongs to a block that already
 * runs) and turns it into a tile number (itself, or by diagonal order with
 * LB_ORDER_DIAGONAL in g.hints where `reorder`: the staged kernel; compiled
 * out of the register kernel, whose spills it changes), and after the barrier
 * all threads read where the tile lies. */
__device__ __forceinline__ tile_pos take_tile(const psi_cu_plan &p, const lb_geom &g,
                                              size_t in_size, size_t acc_size, u64 *s_ticket,
                                              u64 *s_epoch, bool reorder)
{
    if (threadIdx.x == 0) {
        u64 e;
        const u64 ticket = take_ticket((psi_cu_header *)p.ws, &e);
        *s_ticket = reorder && (g.hints & LB_ORDER_DIAGONAL)
                        ? psi_diagonal_tile(ticket, (unsigned)g.tiles_x, (unsigned)g.tiles_y)
                        : ticket;
        *s_epoch = e;
    }
    __syncthreads();
    /* Tile counts fit 31 bits (lb_geometry()): 32-bit divisions. */
    const unsigned ut = (unsigned)*s_ticket, per_plane = (unsigned)(g.tiles_x * g.tiles_y);
    const unsigned plane = ut / per_plane, rem = ut - plane * per_plane;
    const unsigned ty = rem / (unsigned)g.tiles_x;
    tile_pos tp;
    tp.t = ut;
    tp.epoch = *s_epoch;
    tp.ty = ty;
    tp.tx = rem - ty * (unsigned)g.tiles_x;
    tp.b = plane_base(p, (i64)plane, in_size, acc_size);
    return tp;
}

/* The status of a flag as the whole warp sees it: lane 0's reading, and every
 * lane re-reads until it has itself acquired at least that status (statuses
 * only grow within a launch), so each lane's value loads are ordered after an
 * acquire of the status it acts on. wait: spin until some status is set. */
__device__ __forceinline__ int warp_flag(const u64 *f, u64 epoch, bool wait)
{
    int mine = wait ? wait_flag(f, epoch) : peek_flag(f, epoch);
    int st = __shfl_sync(0xffffffffu, mine, 0);
    while (mine < st)
        mine = peek_flag(f, epoch);
    return st;
}

/* Tagged words (4-byte tables, lb_geom::tagged): a published value, its
 * status and the launch's tag share one 64-bit word, tag << 32 | value bits,
 * stored and loaded as relaxed GPU-scope 64-bit accesses. Such an access is
 * seen whole or not at all, so a reader that finds this launch's tag has the
 * value: no flag, no release and no acquire fence, and one L2 round trip
 * instead of two (flag, then values). The tag is the low
 * 30 bits of the epoch, shifted, with the status (FLAG_AGGREGATE or
 * FLAG_INCLUSIVE) in its low 2 bits: a zeroed workspace never matches, and
 * only a word left unwritten for 2^30 launches of the same workspace could pass
 * for a new one. A tile's words take one 8-byte slot per value, which fills
 * the aggregate and inclusive regions of the layout together (TW slots per
 * tile from vagg, TH from hagg); a chained look-back writes the aggregate and
 * later the inclusive value into the same slot. */
__device__ __forceinline__ unsigned lb_tag(u64 epoch, int status)
{
    return (unsigned)epoch << 2 | (unsigned)status;
}

template <typename TAcc>
__device__ __forceinline__ u64 tag_word(TAcc v, unsigned tag)
{
    static_assert(sizeof(TAcc) == 4, "tagged words hold 4-byte values");
    unsigned bits;
    memcpy(&bits, &v, 4);
    return (u64)tag << 32 | bits;
}

template <typename TAcc>
__device__ __forceinline__ TAcc word_value(u64 w)
{
    static_assert(sizeof(TAcc) == 4, "tagged words hold 4-byte values");
    const unsigned bits = (unsigned)w;
    TAcc v;
    memcpy(&v, &bits, 4);
    return v;
}

/* ---- chained look-backs ------------------------------------------------------
 * One axis of a tile's look-back is a chain over the tiles before it on that
 * axis: each publishes a vector (N values per lane of one warp) as its
 * aggregate, then as its inclusive value. chained_walk() runs the chain over
 * either way of publishing:
 *   flagged_chain: values in the aggregate / inclusive arrays and a flag word
 *     per tile (any table type);
 *   tagged_chain: tagged words (4-byte tables), the aggregate and then the
 *     inclusive value in one slot per value.
 * Both offer status(j, wait) (the warp's view of tile j: 0, FLAG_AGGREGATE or
 * FLAG_INCLUSIVE; wait: spin until it is not 0), add(j, st, sum) (adds the
 * values of that status into sum) and publish(t, v, st). */

/* Flags and values: lane l's value k of tile j at agg or inc +
 * j * per_tile + l * LANE_STEP + k * K_STEP. */
template <typename TAcc, int N, int LANE_STEP, int K_STEP>
struct flagged_chain {
    u64 *flags;
    TAcc *agg, *inc;
    u64 per_tile, epoch;
    unsigned lane;

    __device__ __forceinline__ int status(u64 j, bool wait) const
    {
        return warp_flag(&flags[j], epoch, wait);
    }
    __device__ __forceinline__ void add(u64 j, int st, TAcc sum[N]) const
    {
        const TAcc *src = (st == FLAG_INCLUSIVE ? inc : agg) + j * per_tile + lane * LANE_STEP;
#pragma unroll
        for (int k = 0; k < N; k++)
            sum[k] += ld_cg(src + k * K_STEP);
    }
    /* The values, then the flag: __syncwarp orders every lane's stores
     * before lane 0's release store (release is cumulative), and readers
     * acquire the flag before reading the values. */
    __device__ __forceinline__ void publish(u64 t, const TAcc v[N], int st) const
    {
        TAcc *dst = (st == FLAG_INCLUSIVE ? inc : agg) + t * per_tile + lane * LANE_STEP;
#pragma unroll
        for (int k = 0; k < N; k++)
            st_cg(dst + k * K_STEP, v[k]);
        __syncwarp();
        if (lane == 0)
            store_release(&flags[t], flag_value(epoch, st));
    }
};

/* Tagged words: lane l's value k of tile j in slot j * per_tile + l + 32 k
 * (32 lanes read 256 contiguous bytes per load). status() keeps the values
 * it read for add(). A tile is seen at a status only when every word of the warp
 * carries it; a reader that catches a tile between its aggregate and its
 * inclusive words reads again. */
template <typename TAcc, int N>
struct tagged_chain {
    u64 *words;
    u64 per_tile;
    u64 epoch;
    unsigned lane;
    TAcc seen[N];

    __device__ __forceinline__ int status(u64 j, bool wait)
    {
        const u64 *src = words + j * per_tile + lane;
        const unsigned agg = lb_tag(epoch, FLAG_AGGREGATE), inc = lb_tag(epoch, FLAG_INCLUSIVE);
        for (;;) {
            u64 w[N];
#pragma unroll
            for (int k = 0; k < N; k++)
                w[k] = load_relaxed(src + 32 * k);
            bool all_agg = true, all_inc = true;
#pragma unroll
            for (int k = 0; k < N; k++) {
                const unsigned tag = (unsigned)(w[k] >> 32);
                all_agg = all_agg && tag == agg;
                all_inc = all_inc && tag == inc;
                seen[k] = word_value<TAcc>(w[k]);
            }
            if (__all_sync(0xffffffffu, all_inc))
                return FLAG_INCLUSIVE;
            if (__all_sync(0xffffffffu, all_agg))
                return FLAG_AGGREGATE;
            if (!wait)
                return 0;
#if __CUDA_ARCH__ >= 700
            __nanosleep(32);
#endif
        }
    }
    __device__ __forceinline__ void add(u64, int, TAcc sum[N]) const
    {
#pragma unroll
        for (int k = 0; k < N; k++)
            sum[k] += seen[k];
    }
    __device__ __forceinline__ void publish(u64 t, const TAcc v[N], int st) const
    {
        const unsigned tag = lb_tag(epoch, st);
#pragma unroll
        for (int k = 0; k < N; k++)
            store_relaxed(words + t * per_tile + lane + 32 * k, tag_word(v[k], tag));
    }
};

/* The chain of tile t over the tiles t - back, t - 2 back, ..., run by one
 * whole warp. With a predecessor (pred): publishes `own` as the aggregate
 * unless the tile before is already inclusive or nothing follows (succ
 * false), then adds the published vectors of the tiles before into sum until
 * an inclusive one. With a successor: publishes sum + own as inclusive.
 * Returns the number of tiles read. */
template <typename TAcc, int N, class Chain>
__device__ __forceinline__ int chained_walk(Chain &ch, u64 t, u64 back, bool pred, bool succ,
                                            const TAcc own[N], TAcc sum[N])
{
    int steps = 0;
    if (pred) {
        u64 j = t - back;
        bool published = !succ;
        for (;;) {
            /* Publish the aggregate only when the look-back cannot end at
             * once (saves its bytes and a fence in the common case). */
            int st = ch.status(j, false);
            if (st != FLAG_INCLUSIVE && !published) {
                ch.publish(t, own, FLAG_AGGREGATE);
                published = true;
            }
            if (st == 0)
                st = ch.status(j, true);
            ch.add(j, st, sum);
            steps++;
            if (st == FLAG_INCLUSIVE)
                break;
            j -= back;
        }
    }
    if (succ) {
        TAcc inc[N];
#pragma unroll
        for (int k = 0; k < N; k++)
            inc[k] = sum[k] + own[k];
        ch.publish(t, inc, FLAG_INCLUSIVE);
    }
    return steps;
}

/* The tagged walk of a 4-byte table, out of line (see chained_lookback()). */
template <typename TAcc, int N>
__device__ __noinline__ int tagged_walk_call(u64 *words, u64 per_tile, u64 t, u64 back, bool pred,
                                             bool succ, u64 epoch, unsigned lane,
                                             const TAcc *own, TAcc *sum)
{
    tagged_chain<TAcc, N> ch{words, per_tile, epoch, lane, {}};
    return chained_walk<TAcc, N>(ch, t, back, pred, succ, own, sum);
}

/* chained_walk() over tagged words for 4-byte tables (in the agg region,
 * which they fill with inc), else over the flags and the values at agg / inc
 * (LANE_STEP, K_STEP as in flagged_chain); per_tile values per tile.
 * OUT_OF_LINE calls the tagged walk as a function: the register kernel, which
 * holds its tile in registers, spills less that way (and is faster); the
 * staged kernel, with few registers in use, is faster inlining it. */
template <typename TAcc, int N, int LANE_STEP, int K_STEP, bool OUT_OF_LINE>
__device__ __forceinline__ int chained_lookback(u64 *flags, void *agg, void *inc, u64 per_tile,
                                                u64 t, u64 back, bool pred, bool succ,
                                                u64 epoch, unsigned lane, const TAcc own[N],
                                                TAcc sum[N])
{
    if constexpr (sizeof(TAcc) == 4) {
        (void)flags, (void)inc;
        if constexpr (OUT_OF_LINE) {
            return tagged_walk_call<TAcc, N>((u64 *)agg, per_tile, t, back, pred, succ, epoch,
                                             lane, own, sum);
        } else {
            tagged_chain<TAcc, N> ch{(u64 *)agg, per_tile, epoch, lane, {}};
            return chained_walk<TAcc, N>(ch, t, back, pred, succ, own, sum);
        }
    } else {
        flagged_chain<TAcc, N, LANE_STEP, K_STEP> ch{flags, (TAcc *)agg, (TAcc *)inc, per_tile,
                                                     epoch, lane};
        return chained_walk<TAcc, N>(ch, t, back, pred, succ, own, sum);
    }
}

/* The vertical look-back of tile t (column tx, row ty of its plane), run by
 * one whole warp. P holds the tile's bottom row L(x, TH - 1) for the lane's
 * columns x0 + 8 lane .. + 7. Publishes P as an aggregate unless the tile
 * above already holds its inclusive value, adds the published rows of the
 * tiles above until one is inclusive, publishes Top + P as inclusive, and
 * writes Top(x) (the pixels above the tile in columns x0..x) to s_top[TW].
 * With p.y0 > 0 the first tile row takes Top from the carried table row
 * y0 - 1 instead: Top(x) = C(x) - C(x0 - 1). Returns the number of tiles
 * read. */
template <typename TAcc, bool OUT_OF_LINE = false>
__device__ __forceinline__ int vertical_lookback(const psi_cu_plan &p, const lb_geom &g,
                                                 const char *out_plane, u64 t, u64 tx, u64 ty,
                                                 u64 epoch, unsigned lane, const TAcc P[8],
                                                 TAcc *s_top)
{
    constexpr int TW = LB_TW;
    const i64 w = p.width, ch = p.channels;
    const i64 x0 = (i64)tx * TW, xs = x0 + (i64)lane * 8;
    TAcc top[8];
#pragma unroll
    for (int k = 0; k < 8; k++)
        top[k] = (TAcc)0;
    if (ty == 0 && p.y0 > 0) {
        const TAcc *crow = (const TAcc *)(out_plane + (p.y0 - 1) * p.out_row);
        TAcc base = x0 > 0 ? crow[(x0 - 1) * ch] : (TAcc)0;
#pragma unroll
        for (int k = 0; k < 8; k++)
            top[k] = xs + k < w ? (TAcc)(crow[(xs + k) * ch] - base) : (TAcc)0;
    }
    const int steps = chained_lookback<TAcc, 8, 8, 1, OUT_OF_LINE>(
        g.vflags, g.vagg, g.vinc, TW, t, g.tiles_x, ty > 0, ty + 1 < g.tiles_y, epoch, lane, P,
        top);
#pragma unroll
    for (int k = 0; k < 8; k++)
        s_top[lane * 8 + k] = top[k];
    return steps;
}

/* The horizontal look-back of tile t, run by one whole warp: a[m] is the
 * tile's share of the row sums of rows lane + 32 m that the tiles to its right
 * need. Publishes it as an aggregate (unless the left tile is already
 * inclusive), adds the shares of the tiles to the left until an inclusive one
 * into E(r), publishes E + a as inclusive and writes E to s_edge[TH].
 * Returns the number of tiles read. */
template <typename TAcc, int TH, bool OUT_OF_LINE = false>
__device__ __forceinline__ int horizontal_lookback(const lb_geom &g, u64 t, u64 tx, u64 epoch,
                                                   unsigned lane, const TAcc a[TH / 32],
                                                   TAcc *s_edge)
{
    constexpr int HR = TH / 32;
    static_assert(TH % 32 == 0, "tile height must be a multiple of 32");
    TAcc e[HR];
#pragma unroll
    for (int m = 0; m < HR; m++)
        e[m] = (TAcc)0;
    const int steps = chained_lookback<TAcc, HR, 1, 32, OUT_OF_LINE>(
        g.hflags, g.hagg, g.hinc, TH, t, 1, tx > 0, tx + 1 < g.tiles_x, epoch, lane, a, e);
#pragma unroll
    for (int m = 0; m < HR; m++)
        s_edge[lane + 32 * m] = e[m];
    return steps;
}

/* The two look-backs of tile t one after the other, by one warp: vertical,
 * then horizontal with a(r) = Top(x0 + TW - 1) + rowcum(r), the tile's share
 * of the table column at its right edge, so that E(r) = I(x0 - 1, y0 + r).
 * s_rowcum (shared) holds the tile's right column L(TW - 1, r). OUT_OF_LINE:
 * see chained_lookback(). */
template <typename TAcc, int TH, bool OUT_OF_LINE = false>
__device__ __forceinline__ void tile_lookbacks(const psi_cu_plan &p, const lb_geom &g,
                                               const char *out_plane, u64 t, u64 tx, u64 ty,
                                               u64 epoch, unsigned lane, const TAcc P[8],
                                               const TAcc *s_rowcum, TAcc *s_top, TAcc *s_edge)
{
    vertical_lookback<TAcc, OUT_OF_LINE>(p, g, out_plane, t, tx, ty, epoch, lane, P, s_top);
    __syncwarp();
    const TAcc top_last = s_top[LB_TW - 1];
    TAcc a[TH / 32];
#pragma unroll
    for (int m = 0; m < TH / 32; m++)
        a[m] = top_last + s_rowcum[lane + 32 * m];
    horizontal_lookback<TAcc, TH, OUT_OF_LINE>(g, t, tx, epoch, lane, a, s_edge);
}

/* Largest plane, in tiles along each axis, that the aggregate-only
 * look-backs below serve: a tile watches up to (ty + 1)(tx + 1) - 1 flags and
 * reads ty x TW + tx x TH + ty x tx published values. */
constexpr u64 LB_DIRECT_MAX_TILES = 32;

/* Aggregate-only look-backs of tile t, for planes of at most
 * LB_DIRECT_MAX_TILES tiles along each axis, where the chained look-backs
 * above are a chain of up to tiles_x + tiles_y dependent L2 round trips.
 * Each tile publishes its bottom row P(x) and right column rowcum(r) at once
 * (they depend on nothing), and the tables it needs are sums of what the
 * tiles (ty', tx') with ty' <= ty and tx' <= tx published:
 *   Top(x) = sum over ty' < ty of P_(ty', tx)(x),
 *   E(r)   = sum over tx' < tx of rowcum_(ty, tx')(r) + corner,
 *   corner = sum over ty' < ty, tx' < tx of the tile total rowcum_(ty', tx')(TH - 1).
 * No tile waits on a value that needs another tile's wait. With p.y0 > 0
 * every tile adds the carried table row C = I(., y0 - 1): C(x) - C(x0 - 1) to
 * Top and C(x0 - 1) to the corner. The flags and the values are spread over
 * all NT threads of the block, so that the latency is one publish, one round
 * of flag reads and one round of value reads (with a lane per flag or value
 * of one warp instead, the last tile of a 2048^2 plane read its 255 flags in
 * 8 rounds and its 217 corner values in 7).
 *
 * The values are read and written through one of two kinds of region:
 * plain_values (flags awaited first, by direct_publish_wait()) or
 * tagged_values (4-byte tables, lb_geom::tagged: no flags, each word awaited
 * where direct_sums() reads it). load(i) issues a read of value i, value(w, i)
 * returns the value from what load(i) returned, store(i, v) publishes. */
template <typename TAcc>
struct plain_values {
    typedef TAcc word;
    TAcc *base;

    __device__ __forceinline__ word load(u64 i) const { return ld_cg(base + i); }
    __device__ __forceinline__ TAcc value(word w, u64) const { return w; }
    __device__ __forceinline__ void store(u64 i, TAcc v) const { st_cg(base + i, v); }
};

template <typename TAcc>
struct tagged_values {
    typedef u64 word;
    u64 *base;
    unsigned tag; /* lb_tag(epoch, FLAG_AGGREGATE) */

    __device__ __forceinline__ word load(u64 i) const { return load_relaxed(base + i); }
    __device__ __forceinline__ TAcc value(word w, u64 i) const
    {
        while ((unsigned)(w >> 32) != tag) {
#if __CUDA_ARCH__ >= 700
            __nanosleep(32);
#endif
            w = load_relaxed(base + i);
        }
        return word_value<TAcc>(w);
    }
    __device__ __forceinline__ void store(u64 i, TAcc v) const
    {
        store_relaxed(base + i, tag_word(v, tag));
    }
};

/* The sum of the values first + k * stride, k < count, of region src,
 * loading up to 8 before it uses any. */
template <typename TAcc, class Values>
__device__ __forceinline__ TAcc published_sum(const Values &src, u64 first, unsigned count,
                                              u64 stride)
{
    TAcc sum = (TAcc)0;
    for (unsigned k0 = 0; k0 < count; k0 += 8) {
        typename Values::word w[8];
#pragma unroll
        for (unsigned k = 0; k < 8; k++)
            w[k] = k0 + k < count ? src.load(first + (k0 + k) * stride)
                                  : typename Values::word();
#pragma unroll
        for (unsigned k = 0; k < 8; k++)
            if (k0 + k < count)
                sum += src.value(w[k], first + (k0 + k) * stride);
    }
    return sum;
}

/* The same for plain values, whose flags were awaited before: loads in
 * flight as the compiler schedules them (holding 8 words at once raised
 * the 8-byte narrow kernels from 72 to 118 registers). */
template <typename TAcc>
__device__ __forceinline__ TAcc published_sum(const plain_values<TAcc> &src, u64 first,
                                              unsigned count, u64 stride)
{
    TAcc sum = (TAcc)0;
#pragma unroll 8
    for (unsigned k = 0; k < count; k++)
        sum += ld_cg(src.base + first + k * stride);
    return sum;
}

/* Warp 0's part of direct_publish_wait(): the tile's P(x) into region v,
 * its rowcum(r) into region h. */
template <typename TAcc, int TH, int TW, class Values>
__device__ __forceinline__ void direct_publish(const Values &v, const Values &h, u64 t,
                                               unsigned lane, const TAcc *s_bottom,
                                               const TAcc *s_rowcum)
{
#pragma unroll
    for (int k = 0; k < TW / 32; k++)
        v.store(t * TW + lane + 32 * k, s_bottom[lane + 32 * k]);
#pragma unroll
    for (int m = 0; m < TH / 32; m++)
        h.store(t * TH + lane + 32 * m, s_rowcum[lane + 32 * m]);
}

/* direct_publish_wait(), by every thread of the block: warp 0 publishes.
 * With flags, thread i then watches flags i, i + NT, ... of the rectangle,
 * read relaxed, then a fence (acquire by fence, shared with the block by the
 * barrier that the caller places next). */
template <typename TAcc, int TH, int TW, int NT>
__device__ __forceinline__ void direct_publish_wait(const lb_geom &g, u64 t, u64 tx, u64 ty,
                                                    u64 epoch, unsigned tid,
                                                    const TAcc *s_bottom,
                                                    const TAcc *s_rowcum)
{
    static_assert(TH % 32 == 0 && TW % 32 == 0, "tile sides must be multiples of 32");
    const unsigned lane = tid & 31;
    const bool publisher = tid < 32 && (ty + 1 < g.tiles_y || tx + 1 < g.tiles_x);
    if constexpr (sizeof(TAcc) == 4) {
        if (g.tagged) {
            const unsigned tag = lb_tag(epoch, FLAG_AGGREGATE);
            if (publisher)
                direct_publish<TAcc, TH, TW>(tagged_values<TAcc>{(u64 *)g.vagg, tag},
                                             tagged_values<TAcc>{(u64 *)g.hagg, tag}, t, lane,
                                             s_bottom, s_rowcum);
            return;
        }
    }
    if (publisher) {
        direct_publish<TAcc, TH, TW>(plain_values<TAcc>{(TAcc *)g.vagg},
                                     plain_values<TAcc>{(TAcc *)g.hagg}, t, lane, s_bottom,
                                     s_rowcum);
        __syncwarp();
        if (lane == 0)
            store_release(&g.vflags[t], flag_value(epoch, FLAG_AGGREGATE));
    }
    /* The rectangle (0..ty) x (0..tx) but this tile, its last entry (at most
     * 32 x 32 tiles: 32-bit indices). */
    const unsigned span = (unsigned)tx + 1, waits = ((unsigned)ty + 1) * span - 1;
    const u64 first = t - ty * g.tiles_x - tx;
    for (unsigned k = tid; k < waits; k += NT) {
        const unsigned ry = k / span, rx = k - ry * span;
        const u64 *f = &g.vflags[first + (u64)ry * g.tiles_x + rx];
        while (load_relaxed(f) != flag_value(epoch, FLAG_AGGREGATE)) {
#if __CUDA_ARCH__ >= 700
            __nanosleep(32);
#endif
        }
    }
    if (tid < waits)
        fence_acq_rel();
}

/* Step 1 of direct_sums() over regions v (the P rows) and h (the rowcum
 * columns) of plane tile row 0, column 0 = tile `first`. */
template <typename TAcc, int TH, int TW, int NT, class Values>
__device__ __forceinline__ void direct_partials_from(const Values &v, const Values &h, u64 tiles_x,
                                                u64 first, u64 t, unsigned utx, unsigned uty,
                                                unsigned tid, TAcc *s_part)
{
    constexpr unsigned GT = NT / TW, GE = NT / TH;
    const unsigned col = tid % TW, grp_t = tid / TW, row = tid % TH, grp_e = tid / TH;
    const u64 down = tiles_x * TW; /* one tile row down in v */
    const unsigned ntop = grp_t < uty ? (uty - grp_t + GT - 1) / GT : 0;
    const unsigned nedge = grp_e < utx ? (utx - grp_e + GE - 1) / GE : 0;
    s_part[tid] =
        published_sum<TAcc>(v, (first + utx) * TW + col + grp_t * down, ntop, GT * down);
    s_part[NT + tid] =
        published_sum<TAcc>(h, (t - utx) * TH + row + grp_e * TH, nedge, (u64)GE * TH);
    TAcc corner = (TAcc)0;
    for (unsigned k = tid; k < uty * utx; k += NT) {
        const unsigned ry = k / utx, rx = k - ry * utx;
        const u64 i = (first + (u64)ry * tiles_x + rx) * TH + TH - 1;
        corner += h.value(h.load(i), i);
    }
    corner = warp_sum(corner);
    if ((tid & 31) == 0)
        s_part[2 * NT + tid / 32] = corner;
}

/* Step 1 of direct_sums() on the regions of g: tagged words, or plain values. */
template <typename TAcc, int TH, int TW, int NT>
__device__ __forceinline__ void direct_partials(const lb_geom &g, u64 epoch, u64 first, u64 t,
                                                unsigned utx, unsigned uty, unsigned tid,
                                                TAcc *s_part)
{
    if constexpr (sizeof(TAcc) == 4) {
        if (g.tagged) {
            const unsigned tag = lb_tag(epoch, FLAG_AGGREGATE);
            direct_partials_from<TAcc, TH, TW, NT>(tagged_values<TAcc>{(u64 *)g.vagg, tag},
                                                   tagged_values<TAcc>{(u64 *)g.hagg, tag},
                                                   g.tiles_x, first, t, utx, uty, tid, s_part);
            return;
        }
    }
    direct_partials_from<TAcc, TH, TW, NT>(plain_values<TAcc>{(TAcc *)g.vagg},
                                           plain_values<TAcc>{(TAcc *)g.hagg}, g.tiles_x, first,
                                           t, utx, uty, tid, s_part);
}

/* direct_sums(), by the whole block of NT threads after the barrier that
 * follows direct_publish_wait(): writes Top(x0 + i) to s_top[i] (i < TW),
 * E(r) less the corner to s_edge[r] (r < TH) and the corner to *s_corner;
 * the caller places a barrier after it. Two steps with a barrier between:
 *   1. every thread reads its share in one round: NT / TW threads per column
 *      (rows g, g + NT / TW, ... of the tiles above), NT / TH per row of the
 *      edge, and the corner's tile totals spread over all threads (warp sums);
 *      the partial sums go to s_part (2 NT + NT / 32 values);
 *   2. thread i adds the partial sums of column i, of row i, and thread NT - 1
 *      those of the corner, always in the same order (float tables come out
 *      the same in every run). */
template <typename TAcc, int TH, int TW, int NT>
__device__ __forceinline__ void direct_sums(const psi_cu_plan &p, const lb_geom &g,
                                            const char *out_plane, u64 t, u64 tx, u64 ty,
                                            u64 epoch, unsigned tid, TAcc *s_part,
                                            TAcc *s_corner, TAcc *s_top, TAcc *s_edge)
{
    static_assert(NT % TW == 0 && NT % TH == 0 && NT >= TW && NT >= TH, "whole thread groups");
    constexpr unsigned GT = NT / TW, GE = NT / TH;
    const i64 x0 = (i64)tx * TW;
    const u64 first = t - ty * g.tiles_x - tx; /* the plane's first tile row, column 0 */
    direct_partials<TAcc, TH, TW, NT>(g, epoch, first, t, (unsigned)tx, (unsigned)ty, tid,
                                      s_part);
    __syncthreads();
    /* 2: the totals, and the carried row */
    const TAcc *crow =
        p.y0 > 0 ? (const TAcc *)(out_plane + (p.y0 - 1) * p.out_row) : (const TAcc *)nullptr;
    const TAcc cbase = crow && x0 > 0 ? crow[(x0 - 1) * p.channels] : (TAcc)0;
    if (tid < TW) {
        TAcc top = s_part[tid];
#pragma unroll
        for (unsigned q = 1; q < GT; q++)
            top += s_part[q * TW + tid];
        if (crow && x0 + tid < p.width)
            top += (TAcc)(crow[(x0 + tid) * p.channels] - cbase);
        s_top[tid] = top;
    }
    if (tid < TH) {
        TAcc e = s_part[NT + tid];
#pragma unroll
        for (unsigned q = 1; q < GE; q++)
            e += s_part[NT + q * TH + tid];
        s_edge[tid] = e;
    }
    if (tid == NT - 1) {
        TAcc corner = s_part[2 * NT];
#pragma unroll
        for (unsigned w = 1; w < NT / 32; w++)
            corner += s_part[2 * NT + w];
        *s_corner = corner + cbase;
    }
}

} // namespace psi_cu

#endif /* PIXSUM_SAT_LOOKBACK_CUH */

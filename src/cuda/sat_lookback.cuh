/*
 * sat_lookback.cuh - what the two cuda.lookback kernels share: the tile
 * geometry and workspace layout, the launch choice (PIXSUM_CUDA_LB), the
 * flag publish/read helpers, and the two look-backs of a tile (vertical, then
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
 */
#ifndef PIXSUM_SAT_LOOKBACK_CUH
#define PIXSUM_SAT_LOOKBACK_CUH

#include "device_caps.cuh"
#include "sat_common.cuh"

namespace psi_cu {

struct lb_geom {
    u64 tiles_x, tiles_y, total;
    u64 *vflags, *hflags;
    void *vagg, *vinc, *hagg, *hinc;
    int vec_in, vec_out;
    int hints; /* bit 0: evict-first (streaming) loads, bit 1: streaming stores;
                * measurements only: bit 2 skips the look-backs (wrong table),
                * bit 3 fences before the block's end (finish_block()) */
    int split; /* staged kernel: concurrent look-backs plus the corner term */
    u64 *cflags; /* per tile: its bottom-right table value published (split) */
    void *cval;
    int direct;  /* register kernel: look-backs over aggregates only (small planes) */
    u64 *trace;  /* staged kernel, PIXSUM_CUDA_LB=trace=1: LB_TRACE_WORDS per tile, else null */
    int pdl;     /* programmatic dependent launch: 1 wait, 2 wait and let the next launch start */
    int tagged;  /* aggregate-only look-backs of 4-byte tables: tagged words, no flags */
};

/* Words per tile of the phase trace (PIXSUM_CUDA_LB=trace=1, a diagnostic for
 * bench/cuda/gpu_bench's trace section): at the end of the workspace, tile t
 * at trace[LB_TRACE_WORDS t]:
 *   [0] SM id << 32 | horizontal walk length << 16 | vertical walk length
 *   [1..5] %globaltimer (ns) at the block's start, input loaded, sums done,
 *          look-backs done, last store issued by every warp (after a barrier)
 *   [6..10] clock64 at the same points, [11] clock64 after the vertical walk. */
constexpr int LB_TRACE_WORDS = 12;

constexpr int LB_TW = 256;
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
 * tile kept in shared memory, many small blocks per SM); tile height and
 * cache hints. Resolved by lb_choose() in sat_lookback.cu. */
struct lb_choice {
    int staged;
    int rows, warps, hints; /* tile height = rows x warps */
    int split;              /* concurrent look-backs (staged kernel) */
    int direct;             /* aggregate-only look-backs (register kernel, small planes) */
    int tw;                 /* tile width: LB_TW, or LB_TW_NARROW (register, direct) */
    int trace;              /* record the staged kernel's phase times (diagnostic) */
    int pdl;                /* lb_geom::pdl (sm_90 and newer only; default 1) */
    int tag;                /* lb_geom::tagged where it applies (default 1) */
};

lb_choice lb_choose(const psi_cu_plan *p);

/* Rows per warp of the staged kernel for plan p (its tiles are 8 warps high). */
int lb_staged_rows(const psi_cu_plan *p);

/* Fills g's tile counts, workspace pointers (layout: lb_layout() in
 * sat_lookback.cu) and vector-access flags for a launch with tiles of
 * tile_width (LB_TW or LB_TW_NARROW) x tile_height; returns 0, or a
 * cudaError_t when the tile count exceeds the grid limit. */
int lb_geometry(const psi_cu_plan *p, size_t in_size, size_t acc_size, int tile_width,
                int tile_height, int hints, lb_geom *g);

/* Launches kernel(*p, g) on p's stream with `blocks` x `threads` and smem
 * bytes of dynamic shared memory; sets g.pdl from c.pdl on devices of compute
 * capability 9 and newer (cudaLaunchKernelEx with programmatic stream
 * serialization), else a plain launch. Returns 0 or a cudaError_t. */
int lb_launch(void (*kernel)(psi_cu_plan, lb_geom), unsigned blocks, unsigned threads,
              size_t smem, const psi_cu_plan *p, const lb_choice &c, lb_geom &g);

/* Byte offset of the phase trace in the workspace (PIXSUM_CUDA_LB=trace=1,
 * staged kernel: LB_TW wide tiles): the end of the other regions, 8-byte
 * aligned. */
size_t lb_trace_offset(const psi_cu_plan *p, size_t acc_size, int tile_height);

/* Entry of the staged kernel (sat_lookback_staged.cu). */
int lookback_staged_dispatch(const psi_cu_plan *p, const lb_choice &c);

/* Where a block's tile lies: its ticket t (tile number over all planes), the
 * launch epoch, its column tx and row ty within its plane, and the plane. */
struct tile_pos {
    u64 t, epoch, tx, ty;
    plane_ptrs b;
};

/* Programmatic dependent launch (launches with g.pdl set, sm_90 and newer):
 * waits until the previous kernel of the stream has finished and its writes
 * are visible (the workspace header, the input), and with g.pdl == 2 lets the
 * next kernel of the stream be scheduled now: its blocks wait in their own
 * pdl_begin() until this launch ends. Called by every thread first thing; a
 * no-op without PDL. */
__device__ __forceinline__ void pdl_begin(const lb_geom &g)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (g.pdl) {
        psi_pdl_wait();
        if (g.pdl == 2)
            asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    }
#else
    (void)g;
#endif
}

/* Called by every thread of the block at its start: thread 0 takes the next
 * ticket (so every tile the block waits for belongs to a block that already
 * runs), and after the barrier all threads read where the tile lies. */
__device__ __forceinline__ tile_pos take_tile(const psi_cu_plan &p, const lb_geom &g,
                                              size_t in_size, size_t acc_size, u64 *s_ticket,
                                              u64 *s_epoch)
{
    if (threadIdx.x == 0) {
        u64 e;
        *s_ticket = take_ticket((psi_cu_header *)p.ws, &e);
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

/* Writes a lane's values, then the flag: __syncwarp orders every lane's
 * stores before lane 0's release store (release is cumulative), and readers
 * acquire the flag before reading the values. */
template <typename TAcc, int N>
__device__ __forceinline__ void publish(TAcc *dst, const TAcc *vals, u64 *flag, u64 fv,
                                        unsigned lane, int stride)
{
#pragma unroll
    for (int k = 0; k < N; k++)
        st_cg(dst + k * stride, vals[k]);
    __syncwarp();
    if (lane == 0)
        store_release(flag, fv);
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

/* The vertical look-back of tile t (column tx, row ty of its plane), run by
 * one whole warp. P holds the tile's bottom row L(x, TH - 1) for the lane's
 * columns x0 + 8 lane .. + 7. Publishes P as an aggregate unless the tile
 * above already holds its inclusive value, adds the published rows of the
 * tiles above until one is inclusive, publishes Top + P as inclusive, and
 * writes Top(x) (the pixels above the tile in columns x0..x) to s_top[TW].
 * With p.y0 > 0 the first tile row takes Top from the carried table row
 * y0 - 1 instead: Top(x) = C(x) - C(x0 - 1). Returns the number of tiles
 * read. */
template <typename TAcc>
__device__ __forceinline__ int vertical_lookback(const psi_cu_plan &p, const lb_geom &g,
                                                 const char *out_plane, u64 t, u64 tx, u64 ty,
                                                 u64 epoch, unsigned lane, const TAcc P[8],
                                                 TAcc *s_top)
{
    constexpr int TW = LB_TW;
    const i64 w = p.width, ch = p.channels;
    const i64 x0 = (i64)tx * TW, xs = x0 + (i64)lane * 8;
    TAcc *vagg = (TAcc *)g.vagg, *vinc = (TAcc *)g.vinc;
    int steps = 0;
    TAcc top[8];
#pragma unroll
    for (int k = 0; k < 8; k++)
        top[k] = (TAcc)0;
    if (ty == 0) {
        if (p.y0 > 0) {
            const TAcc *crow = (const TAcc *)(out_plane + (p.y0 - 1) * p.out_row);
            TAcc base = x0 > 0 ? crow[(x0 - 1) * ch] : (TAcc)0;
#pragma unroll
            for (int k = 0; k < 8; k++)
                top[k] = xs + k < w ? (TAcc)(crow[(xs + k) * ch] - base) : (TAcc)0;
        }
    } else {
        u64 j = t - g.tiles_x;
        bool published = false;
        for (;;) {
            /* Publish the aggregate only when the look-back cannot end at
             * once (saves its bytes and a fence in the common case). */
            int st = warp_flag(&g.vflags[j], epoch, false);
            if (st != FLAG_INCLUSIVE && !published) {
                publish<TAcc, 8>(vagg + t * TW + lane * 8, P, &g.vflags[t],
                                 flag_value(epoch, FLAG_AGGREGATE), lane, 1);
                published = true;
            }
            if (st == 0)
                st = warp_flag(&g.vflags[j], epoch, true);
            const TAcc *src = (st == FLAG_INCLUSIVE ? vinc : vagg) + j * TW + lane * 8;
#pragma unroll
            for (int k = 0; k < 8; k++)
                top[k] += ld_cg(src + k);
            steps++;
            if (st == FLAG_INCLUSIVE)
                break;
            j -= g.tiles_x;
        }
    }
    if (ty + 1 < g.tiles_y) {
        TAcc inc[8];
#pragma unroll
        for (int k = 0; k < 8; k++)
            inc[k] = top[k] + P[k];
        publish<TAcc, 8>(vinc + t * TW + lane * 8, inc, &g.vflags[t],
                         flag_value(epoch, FLAG_INCLUSIVE), lane, 1);
    }
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
template <typename TAcc, int TH>
__device__ __forceinline__ int horizontal_lookback(const lb_geom &g, u64 t, u64 tx, u64 epoch,
                                                   unsigned lane, const TAcc a[TH / 32],
                                                   TAcc *s_edge)
{
    constexpr int HR = TH / 32;
    static_assert(TH % 32 == 0, "tile height must be a multiple of 32");
    TAcc *hagg = (TAcc *)g.hagg, *hinc = (TAcc *)g.hinc;
    int steps = 0;
    TAcc e[HR];
#pragma unroll
    for (int m = 0; m < HR; m++)
        e[m] = (TAcc)0;
    if (tx > 0) {
        u64 j = t - 1;
        bool published = false;
        for (;;) {
            int st = warp_flag(&g.hflags[j], epoch, false);
            if (st != FLAG_INCLUSIVE && !published) {
                publish<TAcc, HR>(hagg + t * TH + lane, a, &g.hflags[t],
                                  flag_value(epoch, FLAG_AGGREGATE), lane, 32);
                published = true;
            }
            if (st == 0)
                st = warp_flag(&g.hflags[j], epoch, true);
            const TAcc *src = (st == FLAG_INCLUSIVE ? hinc : hagg) + j * TH + lane;
#pragma unroll
            for (int m = 0; m < HR; m++)
                e[m] += ld_cg(src + 32 * m);
            steps++;
            if (st == FLAG_INCLUSIVE)
                break;
            j -= 1;
        }
    }
    if (tx + 1 < g.tiles_x) {
        TAcc inc[HR];
#pragma unroll
        for (int m = 0; m < HR; m++)
            inc[m] = e[m] + a[m];
        publish<TAcc, HR>(hinc + t * TH + lane, inc, &g.hflags[t],
                          flag_value(epoch, FLAG_INCLUSIVE), lane, 32);
    }
#pragma unroll
    for (int m = 0; m < HR; m++)
        s_edge[lane + 32 * m] = e[m];
    return steps;
}

/* The two look-backs of tile t one after the other, by one warp: vertical,
 * then horizontal with a(r) = Top(x0 + TW - 1) + rowcum(r), the tile's share
 * of the table column at its right edge, so that E(r) = I(x0 - 1, y0 + r).
 * s_rowcum (shared) holds the tile's right column L(TW - 1, r). Returns the
 * walk lengths, horizontal << 16 | vertical; with a trace record `rec`, lane 0
 * writes clock64 after the vertical walk to rec[11]. */
template <typename TAcc, int TH>
__device__ __forceinline__ unsigned tile_lookbacks(const psi_cu_plan &p, const lb_geom &g,
                                                   const char *out_plane, u64 t, u64 tx, u64 ty,
                                                   u64 epoch, unsigned lane, const TAcc P[8],
                                                   const TAcc *s_rowcum, TAcc *s_top,
                                                   TAcc *s_edge, u64 *rec = nullptr)
{
    const int vs = vertical_lookback<TAcc>(p, g, out_plane, t, tx, ty, epoch, lane, P, s_top);
    if (rec && lane == 0)
        rec[11] = (u64)clock64();
    __syncwarp();
    const TAcc top_last = s_top[LB_TW - 1];
    TAcc a[TH / 32];
#pragma unroll
    for (int m = 0; m < TH / 32; m++)
        a[m] = top_last + s_rowcum[lane + 32 * m];
    const int hs = horizontal_lookback<TAcc, TH>(g, t, tx, epoch, lane, a, s_edge);
    return (unsigned)hs << 16 | (unsigned)vs;
}

/* The global nanosecond timer and the SM of the calling thread (trace). */
__device__ __forceinline__ u64 global_ns(void)
{
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ unsigned sm_id(void)
{
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

/* Tagged words (aggregate-only look-backs of 4-byte tables, lb_geom::tagged):
 * a published value and the launch's tag share one 64-bit word, tag << 32 |
 * value bits, stored and loaded as relaxed GPU-scope 64-bit accesses. Such an
 * access is seen whole or not at all, so a reader that finds this launch's
 * tag has the value: no flag, no release and no acquire fence (with the flags
 * a 1024^2 u8 -> u32 call took 10.1 us on the H200, with tagged words 8.5 us;
 * docs/benchmarks.md). The tag is odd (a zeroed workspace never matches) and
 * holds the low 31 bits of the epoch, so only a word left unwritten for 2^31
 * launches of the same workspace could pass for a new one. The words fill the
 * aggregate and inclusive regions of the layout together (these look-backs
 * use no inclusive values): TW words per tile from vagg, TH from hagg. */
__device__ __forceinline__ unsigned lb_tag(u64 epoch)
{
    return (unsigned)epoch << 1 | 1u;
}

template <typename TAcc>
__device__ __forceinline__ u64 tag_word(TAcc v, unsigned tag)
{
    static_assert(sizeof(TAcc) == 4, "tagged words hold 4-byte values");
    unsigned bits;
    memcpy(&bits, &v, 4);
    return (u64)tag << 32 | bits;
}

/* The value of word w, loaded from p, once p holds this launch's tag. */
template <typename TAcc>
__device__ __forceinline__ TAcc tagged_value(u64 w, const u64 *p, unsigned tag)
{
    while ((unsigned)(w >> 32) != tag) {
#if __CUDA_ARCH__ >= 700
        __nanosleep(32);
#endif
        w = load_relaxed(p);
    }
    const unsigned bits = (unsigned)w;
    TAcc v;
    memcpy(&v, &bits, 4);
    return v;
}

/* The sum of the published values base[first + k * stride], k < count, of
 * this launch, loading up to 8 before it waits on any. */
template <typename TAcc>
__device__ __forceinline__ TAcc tagged_sum(const u64 *base, unsigned first, unsigned count,
                                           unsigned stride, unsigned tag)
{
    TAcc sum = (TAcc)0;
    for (unsigned k0 = 0; k0 < count; k0 += 8) {
        u64 w[8];
#pragma unroll
        for (unsigned k = 0; k < 8; k++)
            w[k] = k0 + k < count ? load_relaxed(base + first + (u64)(k0 + k) * stride) : 0;
#pragma unroll
        for (unsigned k = 0; k < 8; k++)
            if (k0 + k < count)
                sum += tagged_value<TAcc>(w[k], base + first + (u64)(k0 + k) * stride, tag);
    }
    return sum;
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
 * direct_publish_wait(), by every thread of the block: warp 0 publishes;
 * thread i watches flags i, i + NT, ... of the rectangle, read relaxed, then
 * a fence (acquire by fence, shared with the block by the barrier that the
 * caller places next). */
template <typename TAcc, int TH, int TW, int NT>
__device__ __forceinline__ void direct_publish_wait(const lb_geom &g, u64 t, u64 tx, u64 ty,
                                                    u64 epoch, unsigned tid,
                                                    const TAcc *s_bottom,
                                                    const TAcc *s_rowcum)
{
    static_assert(TH % 32 == 0 && TW % 32 == 0, "tile sides must be multiples of 32");
    const unsigned lane = tid & 31;
    if constexpr (sizeof(TAcc) == 4) {
        if (g.tagged) { /* tagged words: published, and awaited by direct_sums() */
            if (tid < 32 && (ty + 1 < g.tiles_y || tx + 1 < g.tiles_x)) {
                const unsigned tag = lb_tag(epoch);
#pragma unroll
                for (int k = 0; k < TW / 32; k++)
                    store_relaxed((u64 *)g.vagg + t * TW + lane + 32 * k,
                                  tag_word(s_bottom[lane + 32 * k], tag));
#pragma unroll
                for (int m = 0; m < TH / 32; m++)
                    store_relaxed((u64 *)g.hagg + t * TH + lane + 32 * m,
                                  tag_word(s_rowcum[lane + 32 * m], tag));
            }
            return;
        }
    }
    TAcc *vagg = (TAcc *)g.vagg, *hagg = (TAcc *)g.hagg;
    if (tid < 32 && (ty + 1 < g.tiles_y || tx + 1 < g.tiles_x)) {
#pragma unroll
        for (int k = 0; k < TW / 32; k++)
            st_cg(vagg + t * TW + lane + 32 * k, s_bottom[lane + 32 * k]);
#pragma unroll
        for (int m = 0; m < TH / 32; m++)
            st_cg(hagg + t * TH + lane + 32 * m, s_rowcum[lane + 32 * m]);
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
    const unsigned lane = tid & 31, uty = (unsigned)ty, utx = (unsigned)tx;
    const i64 x0 = (i64)tx * TW;
    const u64 first = t - ty * g.tiles_x - tx; /* the plane's first tile row, column 0 */
    bool summed = false;
    if constexpr (sizeof(TAcc) == 4) {
        if (g.tagged) { /* 1, from tagged words (they are the waits too) */
            const unsigned tag = lb_tag(epoch), col = tid % TW, grp_t = tid / TW;
            const unsigned row = tid % TH, grp_e = tid / TH;
            const u64 *vw = (const u64 *)g.vagg + (first + tx) * TW + col;
            const u64 *hw = (const u64 *)g.hagg + (t - tx) * TH + row;
            const unsigned down = (unsigned)g.tiles_x * TW; /* one tile row down in vagg */
            const unsigned ntop = grp_t < uty ? (uty - grp_t + GT - 1) / GT : 0;
            const unsigned nedge = grp_e < utx ? (utx - grp_e + GE - 1) / GE : 0;
            s_part[tid] = tagged_sum<TAcc>(vw, grp_t * down, ntop, GT * down, tag);
            s_part[NT + tid] = tagged_sum<TAcc>(hw, grp_e * TH, nedge, GE * TH, tag);
            TAcc corner = (TAcc)0;
            for (unsigned k = tid; k < uty * utx; k += NT) {
                const unsigned ry = k / utx, rx = k - ry * utx;
                const u64 *cw =
                    (const u64 *)g.hagg + (first + (u64)ry * g.tiles_x + rx) * TH + TH - 1;
                corner += tagged_value<TAcc>(load_relaxed(cw), cw, tag);
            }
            corner = warp_sum(corner);
            if (lane == 0)
                s_part[2 * NT + tid / 32] = corner;
            summed = true;
        }
    }
    if (!summed) { /* 1: the partial sums */
        const unsigned col = tid % TW, grp_t = tid / TW;
        const TAcc *src = (const TAcc *)g.vagg + (first + tx) * TW + col;
        const u64 step = g.tiles_x * TW;
        TAcc top = (TAcc)0;
#pragma unroll 8
        for (unsigned r = grp_t; r < uty; r += GT)
            top += ld_cg(src + r * step);
        s_part[tid] = top;
        const unsigned row = tid % TH, grp_e = tid / TH;
        const TAcc *esrc = (const TAcc *)g.hagg + (t - tx) * TH + row;
        TAcc e = (TAcc)0;
#pragma unroll 8
        for (unsigned c = grp_e; c < utx; c += GE)
            e += ld_cg(esrc + c * TH);
        s_part[NT + tid] = e;
        TAcc corner = (TAcc)0;
        for (unsigned k = tid; k < uty * utx; k += NT) {
            const unsigned ry = k / utx, rx = k - ry * utx;
            corner += ld_cg((const TAcc *)g.hagg + (first + (u64)ry * g.tiles_x + rx) * TH +
                            TH - 1);
        }
        corner = warp_sum(corner);
        if (lane == 0)
            s_part[2 * NT + tid / 32] = corner;
    }
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

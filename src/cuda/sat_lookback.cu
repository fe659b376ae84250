/*
 * sat_lookback.cu - cuda.lookback: the integral image in one kernel that
 * reads every input element once and writes every output element once. This
 * file holds the launch choice, the workspace layout and the register kernel
 * described below; the staged kernel (sat_lookback_staged.cu), the default for
 * most type pairs, shares its look-backs (sat_lookback.cuh).
 *
 * Register kernel: tiles of TW = 256 columns x TH = NW * R rows; one block of NW warps per tile,
 * each lane holding 8 consecutive pixels of R rows in registers. A block
 *   1. takes its tile number from the workspace ticket (so every tile it waits
 *      for belongs to a block that already runs) and loads its pixels;
 *   2. builds the tile-local table L in registers (row scans by lane and warp
 *      shuffles, column sums down its R rows, offsets between warps through
 *      shared memory);
 *   3. vertical look-back (warp 0): publishes its bottom row P(x) = L(x, TH-1)
 *      as an aggregate, unless the tile above already holds its inclusive
 *      value, then adds the published rows of the tiles above until one is
 *      inclusive: Top(x) = sum of the pixels above the tile in columns
 *      x0..x; publishes Top + P as its inclusive value;
 *   4. horizontal look-back (warp 0): A(r) = Top(x0 + TW - 1) + L(TW-1, r) is
 *      the tile's share of the table column at its right edge; published as
 *      an aggregate (unless the left tile is already inclusive), then the
 *      shares of the tiles to the left are added until an inclusive one:
 *      E(r) = I(x0 - 1, y0 + r); publishes E + A;
 *   5. writes I(x, y) = L(x, y) + Top(x) + E(y).
 * On planes of at most 32 x 32 tiles (e.g. 1024^2), steps 3-4 are the
 * aggregate-only look-backs instead (direct_publish_wait / direct_sums in
 * sat_lookback.cuh): every tile publishes P and L(TW - 1, r) at once and sums
 * those of the tiles above and to its left, with no chain of waits.
 * Flags are 64-bit words (epoch << 2 | status) written with st.release.gpu
 * after the values and read with ld.acquire.gpu before them; the epoch is
 * advanced by the last block of every launch, so stale flags never match.
 * The look-backs of 4-byte tables need no flags: each value is published
 * with the launch's tag and its status in one 64-bit word (tagged words in
 * sat_lookback.cuh).
 * Integer tables use modular arithmetic in the output's width (bit-exact with
 * the CPU in any association order); float tables round differently from the
 * CPU's order (bound in docs/benchmarks.md).
 */
#include "device_caps.cuh"
#include "sat_lookback.cuh"

#include <stdlib.h>
#include <string.h>

namespace psi_cu {

/* Whether the pair has a staged kernel: not f64 -> f64, where the register
 * kernel is faster (H200, docs/benchmarks.md: by 1%). */
static bool lb_has_staged(const psi_cu_plan *p)
{
    return !(p->tin == PSI_CU_IN_F64 && p->acc == PSI_CU_F64);
}

/* The register kernel's default tile shape, measured on an H100
 * (docs/benchmarks.md): for 4-byte tables 16 warps of 4 rows (64-row tiles,
 * 64 registers) beat 8 warps of 8 rows and 8 warps of 4 rows at 1024^2 and
 * 8192^2; 8-byte tables take 8 warps of 4 rows. */
constexpr int LB_REG_ROWS = 4;
static int lb_register_warps(size_t acc_size)
{
    return acc_size == 4 ? 16 : 8;
}

/* Whether a plane of tiles_x x tiles_y tiles takes the aggregate-only
 * look-backs of the register kernel (when not turned off by direct=0). */
static bool lb_direct_fits(u64 tiles_x, u64 tiles_y)
{
    return tiles_x <= LB_DIRECT_MAX_TILES && tiles_y <= LB_DIRECT_MAX_TILES;
}

/* Whether cuda.lookback runs the staged kernel for plan p unless
 * PIXSUM_CUDA_LB says otherwise. H200, same run (docs/benchmarks.md): the
 * staged kernel reaches 0.67-0.70 of the copy floor at 8192^2-16384^2 for
 * u8 -> u32 (register kernel 0.36), 0.55 for f32 -> f64 (0.37), 0.68 for
 * f32 -> f32 (0.57-0.58 with tagged look-backs, run 98) and is
 * 1.4-2.0x faster for u8 -> u64, u16 -> u32/u64 and i32 -> i64 at 8192^2.
 * Small images are bound by latency, where the register kernel is faster:
 * those of fewer than 512 tiles of 256 x 32 (16.0 against 17.6 us at 1024^2
 * u8 -> u32 with chained look-backs), and single planes that its own tiles
 * cut into at most 32 x 32 (and 256 in all), where it takes the
 * aggregate-only look-backs (u8 -> u32 2048^2: 0.0192 against 0.0235 ms
 * staged, run 11). */
static int lb_staged_default(const psi_cu_plan *p)
{
    const u64 rows = (u64)(p->y1 - p->y0), planes = (u64)(p->depth * p->channels);
    const u64 tiles_x = ((u64)p->width + LB_TW - 1) / LB_TW;
    const u64 tiles32 = tiles_x * ((rows + 31) / 32) * planes;
    /* the register kernel's default tile height */
    const u64 reg_th = (u64)LB_REG_ROWS * (u64)lb_register_warps(psi_cu_acc_size(p->acc));
    const u64 reg_tiles_y = (rows + reg_th - 1) / reg_th;
    /* up to 256 tiles (2048^2 u8 -> u32, the largest size measured) */
    const bool reg_direct =
        planes == 1 && lb_direct_fits(tiles_x, reg_tiles_y) && tiles_x * reg_tiles_y <= 256;
    return lb_has_staged(p) && tiles32 >= 512 && !reg_direct;
}

/* Whether LB_TW-wide tiles of tile_height rows would leave SMs of the
 * register kernel without a tile: fewer than 128 of them (1024^2 makes 64). */
static bool lb_wide_leaves_sms_idle(const psi_cu_plan *p, int tile_height)
{
    const u64 rows = (u64)(p->y1 - p->y0), planes = (u64)(p->depth * p->channels);
    const u64 tiles_y = (rows + (u64)tile_height - 1) / (u64)tile_height;
    return ((u64)p->width + LB_TW - 1) / LB_TW * tiles_y * planes < 128;
}

/* Whether LB_TW_NARROW-wide tiles of tile_height rows fit the aggregate-only
 * look-backs, which the narrow tiles always take. */
static bool lb_narrow_fits(const psi_cu_plan *p, int tile_height)
{
    const u64 rows = (u64)(p->y1 - p->y0);
    return lb_direct_fits(((u64)p->width + LB_TW_NARROW - 1) / LB_TW_NARROW,
                          (rows + (u64)tile_height - 1) / (u64)tile_height);
}

/* Launch choices: the staged kernel (sat_lookback_staged.cu; the default but
 * for f64 -> f64 and small images) or this register kernel with
 * R rows per warp (tile height NW x R), cache hints, split look-backs (staged
 * kernel only; measured no faster), aggregate-only look-backs on planes of at
 * most LB_DIRECT_MAX_TILES tiles along each axis (register kernel; on unless
 * direct=0), narrow tiles (register kernel, aggregate-only look-backs, default
 * tile shape, where LB_TW-wide tiles leave SMs idle), programmatic dependent launch (pdl=1 by
 * default: the kernel's launch overlaps the end of the stream's previous
 * kernel; H200, 1024^2 u8 -> u32: 0.0113 against 0.0124 ms per call;
 * pdl=2 also lets the next kernel start early, measured no faster), the
 * staged kernel's tile copied by cp.async on sm_80 and newer (async=1 by
 * default; H200, run 100, f32 -> f32 8192^2: 0.717 against 0.679 of the
 * copy floor), the staged kernel's first wave spread over
 * LB_STAGGER_SPREAD_NS (stagger=NS; 0 turns it off), the staged kernel's
 * tiles by anti-diagonals for every pair but u8 -> u32 (LB_ORDER_AUTO;
 * order=1 for every pair, order=0 row by row), and its u8 -> u32 and
 * f32 -> f32 rows scanned two at a time (pairs=1; pairs=0 one by one),
 * the f32 -> f32 ones in step 4, during the look-backs (prescan=1; prescan=0
 * in step 5).
 * smempad=BYTES gives each staged block that much more shared memory, so
 * that fewer fit an SM (a timing experiment).
 * PIXSUM_CUDA_LB="staged=0,rows=4,hints=0,split=1,direct=0,tw=128,pdl=0,tag=0,
 * async=0,stagger=0,order=0,pairs=0,prescan=0" overrides them (tuning runs and tests
 * of every variant; tw=128 only where the narrow tiles can run; tag=0: flags
 * and fences instead of tagged words in the aggregate-only look-backs of
 * 4-byte tables, whose chained look-backs always take tagged words); trace=1 makes
 * the staged kernel record its phase times after the workspace's other
 * regions (LB_TRACE_WORDS per tile; lb_trace_offset()). */
lb_choice lb_choose(const psi_cu_plan *p)
{
    size_t acc_size = psi_cu_acc_size(p->acc);
    /* Streaming hints by the record size (LB_HINTS_AUTO; lb_launch()). */
    lb_choice c{}; /* split, trace and smem_pad stay 0 */
    c.staged = lb_staged_default(p);
    c.rows = LB_REG_ROWS;
    c.warps = lb_register_warps(acc_size);
    c.hints = LB_HINTS_AUTO;
    c.direct = 1;
    c.tw = LB_TW;
    c.pdl = 1;
    c.tag = 1;
    c.async_copy = 1;
    c.stagger = LB_STAGGER_SPREAD_NS;
    c.order = LB_ORDER_AUTO;
    c.row_pairs = 1;
    c.prescan = 1;
    c.row_sums_tree = 1;
    int want_tw = 0;
    const char *e = getenv("PIXSUM_CUDA_LB");
    if (e) {
        const char *r = strstr(e, "rows="), *h = strstr(e, "hints="), *wp = strstr(e, "warps=");
        const char *sg = strstr(e, "staged="), *sp = strstr(e, "split=");
        const char *dr = strstr(e, "direct="), *tr = strstr(e, "trace=");
        const char *tw = strstr(e, "tw="), *pd = strstr(e, "pdl=");
        const char *tg = strstr(e, "tag="), *ac = strstr(e, "async=");
        if (ac)
            c.async_copy = atoi(ac + 6) != 0;
        const char *st = strstr(e, "stagger=");
        if (st) {
            const int ns = atoi(st + 8);
            c.stagger = ns > 0 ? ns : 0;
        }
        const char *od = strstr(e, "order=");
        if (od)
            c.order = atoi(od + 6) == 1 ? 1 : 0;
        const char *pr = strstr(e, "pairs=");
        if (pr)
            c.row_pairs = atoi(pr + 6) != 0;
        const char *ps = strstr(e, "prescan=");
        if (ps)
            c.prescan = atoi(ps + 8) != 0;
        const char *bf = strstr(e, "rowtree=");
        if (bf)
            c.row_sums_tree = atoi(bf + 8) != 0;
        const char *pad = strstr(e, "smempad=");
        if (pad) {
            const int bytes = atoi(pad + 8);
            c.smem_pad = bytes > 0 && bytes <= (200 << 10) ? bytes : 0;
        }
        if (tg)
            c.tag = atoi(tg + 4) != 0;
        if (tw)
            want_tw = atoi(tw + 3);
        if (pd) {
            const int v = atoi(pd + 4);
            c.pdl = v == 1 || v == 2 ? v : 0;
        }
        if (tr)
            c.trace = atoi(tr + 6) != 0;
        if (sp)
            c.split = atoi(sp + 6) != 0;
        if (dr)
            c.direct = atoi(dr + 7) != 0;
        if (sg)
            c.staged = atoi(sg + 7) != 0;
        if (r && acc_size == 4 && (atoi(r + 5) == 4 || atoi(r + 5) == 8)) {
            c.rows = atoi(r + 5);
            c.warps = 8;
        }
        if (wp && acc_size == 4 && c.rows == 4 && atoi(wp + 6) == 16)
            c.warps = 16;
        if (h)
            c.hints = atoi(h + 6) & 15;
    }
    if (!lb_has_staged(p)) /* whatever PIXSUM_CUDA_LB asks */
        c.staged = 0;
    if (c.staged) { /* 8 warps; rows from the input width and size unless forced:
                     * 8-bit input 16 or 8, 16-bit and f32 input 8 or 4, else 4 */
        const char *r = e ? strstr(e, "rows=") : NULL;
        const size_t in_size = psi_cu_in_size(p->tin);
        const int want = r ? atoi(r + 5) : 0;
        const bool mid = in_size == 2 || p->tin == PSI_CU_IN_F32;
        c.warps = 8;
        c.rows = lb_staged_rows(p);
        if ((in_size == 1 && (want == 16 || want == 8)) || (mid && (want == 8 || want == 4)))
            c.rows = want;
    } else if (c.direct && c.rows == LB_REG_ROWS && c.warps == lb_register_warps(acc_size)) {
        const int th = c.rows * c.warps;
        const bool narrow =
            want_tw == LB_TW_NARROW || (want_tw == 0 && lb_wide_leaves_sms_idle(p, th));
        if (narrow && lb_narrow_fits(p, th))
            c.tw = LB_TW_NARROW;
    }
    return c;
}

/* The vector width of PX consecutive TIn pixels: their bytes, at most 16. */
template <typename TIn, int PX>
constexpr int lane_vec_bytes()
{
    return PX * (int)sizeof(TIn) >= 16 ? 16 : PX * (int)sizeof(TIn);
}

/* Loads PX (4 or 8) consecutive pixels (channel step ch) starting at pixel x
 * of a row, zero beyond the width, converted (and squared); vec: rows aligned
 * to lane_vec_bytes(), channel step 1. */
template <typename TIn, typename TAcc, int PX>
__device__ __forceinline__ void load_px(const char *row, i64 x, i64 w, i64 ch, bool vec,
                                        int squared, int hints, TAcc v[PX])
{
    const TIn *r = (const TIn *)row;
    if (vec && x + PX <= w) {
        constexpr int VB = lane_vec_bytes<TIn, PX>(), NV = PX * (int)sizeof(TIn) / VB;
        typedef typename uint_of<VB>::T vec_t;
        union {
            vec_t q[NV];
            TIn e[PX];
        } u;
#pragma unroll
        for (int j = 0; j < NV; j++)
            u.q[j] = (hints & 1) ? __ldcs((const vec_t *)(r + x) + j) : ((const vec_t *)(r + x))[j];
#pragma unroll
        for (int k = 0; k < PX; k++)
            v[k] = sample<TAcc, TIn>(u.e[k], squared);
    } else {
#pragma unroll
        for (int k = 0; k < PX; k++)
            v[k] = x + k < w ? sample<TAcc, TIn>(r[(x + k) * ch], squared) : (TAcc)0;
    }
}

/* Stores PX consecutive table values, skipping those beyond the width
 * (PX x sizeof(TAcc) is a multiple of 16). */
template <typename TAcc, int PX>
__device__ __forceinline__ void store_px(char *row, i64 x, i64 w, i64 ch, bool vec, int hints,
                                         const TAcc v[PX])
{
    static_assert(PX * sizeof(TAcc) % 16 == 0, "whole 16-byte vectors");
    TAcc *r = (TAcc *)row;
    if (vec && x + PX <= w) {
        union {
            uint4 q[PX * sizeof(TAcc) / 16];
            TAcc e[PX];
        } u;
#pragma unroll
        for (int k = 0; k < PX; k++)
            u.e[k] = v[k];
#pragma unroll
        for (int j = 0; j < (int)(PX * sizeof(TAcc) / 16); j++) {
            if (hints & 2)
                __stcs((uint4 *)(r + x) + j, u.q[j]);
            else
                ((uint4 *)(r + x))[j] = u.q[j];
        }
    } else {
#pragma unroll
        for (int k = 0; k < PX; k++)
            if (x + k < w)
                r[(x + k) * ch] = v[k];
    }
}

template <typename TIn, typename TAcc, int R, int NW, int MINB, int TW>
__global__ void __launch_bounds__(32 * NW, MINB) lookback_kernel(psi_cu_plan p, lb_geom g)
{
    constexpr int TH = NW * R, PX = TW / 32; /* PX pixels per lane and row */
    static_assert(TW == LB_TW || TW == LB_TW_NARROW, "tile widths");
    __shared__ __align__(16) TAcc s_col[NW][TW];
    __shared__ __align__(16) TAcc s_top[TW];
    __shared__ __align__(16) TAcc s_bottom[TW];
    __shared__ TAcc s_rowcum[TH];
    __shared__ TAcc s_edge[TH];
    __shared__ TAcc s_corner;
    __shared__ u64 s_ticket, s_epoch;

    psi_cu_header *hdr = (psi_cu_header *)p.ws;
    const unsigned tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    pdl_begin(g);
    const tile_pos tp = take_tile(p, g, sizeof(TIn), sizeof(TAcc), &s_ticket, &s_epoch, false);
    const u64 t = tp.t, epoch = tp.epoch, tx = tp.tx, ty = tp.ty;
    const plane_ptrs b = tp.b;
    const i64 w = p.width, ch = p.channels, rows = p.y1 - p.y0;
    const i64 x0 = (i64)tx * TW, xs = x0 + (i64)lane * PX;
    const i64 ybase = (i64)ty * TH + (i64)warp * R;

    /* 1-2: load and build the tile-local table. */
    TAcc v[R][PX];
#pragma unroll
    for (int i = 0; i < R; i++) {
        i64 yl = ybase + i;
        if (yl < rows) {
            load_px<TIn, TAcc, PX>(b.in + (p.y0 + yl) * p.in_row, xs, w, ch, g.vec_in,
                                   p.squared, g.hints, v[i]);
        } else {
#pragma unroll
            for (int k = 0; k < PX; k++)
                v[i][k] = (TAcc)0;
        }
    }
#pragma unroll
    for (int i = 0; i < R; i++) {
#pragma unroll
        for (int k = 1; k < PX; k++)
            v[i][k] += v[i][k - 1];
        TAcc incl = warp_inclusive(v[i][PX - 1], lane);
        TAcc ex = warp_exclusive_from_inclusive(incl, lane);
#pragma unroll
        for (int k = 0; k < PX; k++)
            v[i][k] += ex;
    }
#pragma unroll
    for (int i = 1; i < R; i++)
#pragma unroll
        for (int k = 0; k < PX; k++)
            v[i][k] += v[i - 1][k];
#pragma unroll
    for (int k = 0; k < PX; k++)
        s_col[warp][lane * PX + k] = v[R - 1][k];
    __syncthreads();
    if (tid < TW) { /* one thread per column: offsets between the warps' rows */
        TAcc run = (TAcc)0;
#pragma unroll
        for (int wq = 0; wq < NW; wq++) {
            TAcc c = s_col[wq][tid];
            s_col[wq][tid] = run;
            run += c;
        }
        s_bottom[tid] = run;
    }
    __syncthreads();
    if (warp > 0) {
        TAcc off[PX];
#pragma unroll
        for (int k = 0; k < PX; k++)
            off[k] = s_col[warp][lane * PX + k];
#pragma unroll
        for (int i = 0; i < R; i++)
#pragma unroll
            for (int k = 0; k < PX; k++)
                v[i][k] += off[k];
    }
    if (lane == 31) {
#pragma unroll
        for (int i = 0; i < R; i++)
            s_rowcum[warp * R + i] = v[i][PX - 1];
    }
    __syncthreads();

    /* 3-4: the two look-backs: chained, by warp 0, or (small planes; always
     * for narrow tiles) over aggregates only, published by warp 0, awaited and
     * summed by the whole block (bit 2 of hints skips them: a timing
     * experiment only, the table is then wrong). */
    if (TW != LB_TW || g.direct) {
        if (!(g.hints & 4))
            direct_publish_wait<TAcc, TH, TW, 32 * NW>(g, t, tx, ty, epoch, tid, s_bottom,
                                                       s_rowcum);
        __syncthreads();
        if (!(g.hints & 4)) /* s_col is free here: its offsets were read above */
            direct_sums<TAcc, TH, TW, 32 * NW>(p, g, b.out, t, tx, ty, epoch, tid,
                                               &s_col[0][0], &s_corner, s_top, s_edge);
    } else if constexpr (TW == LB_TW) {
        if (warp == 0 && !(g.hints & 4)) {
            TAcc P[8];
#pragma unroll
            for (int k = 0; k < 8; k++)
                P[k] = s_bottom[lane * 8 + k];
            if (lane == 0)
                s_corner = (TAcc)0; /* E is whole in s_edge */
            tile_lookbacks<TAcc, TH, true>(p, g, b.out, t, tx, ty, epoch, lane, P, s_rowcum,
                                           s_top, s_edge);
        }
    }
    __syncthreads();

    /* 5: add the offsets and write. Full-width tiles go through the warp's
     * row of s_col (free now) so that every store instruction of the warp
     * writes one contiguous 512-byte span. */
    TAcc top[PX];
    if (g.hints & 4) {
#pragma unroll
        for (int k = 0; k < PX; k++)
            top[k] = (TAcc)0;
    } else {
#pragma unroll
        for (int k = 0; k < PX; k++)
            top[k] = s_top[lane * PX + k];
    }
    const bool staged = g.vec_out && x0 + TW <= w;
    TAcc *stage = &s_col[warp][0];
    constexpr int CHUNKS = TW * (int)sizeof(TAcc) / 16 / 32; /* 16-byte chunks per lane */
#pragma unroll
    for (int i = 0; i < R; i++) {
        i64 yl = ybase + i;
        if (yl < rows) {
            TAcc e = (g.hints & 4) ? (TAcc)0 : s_edge[warp * R + i] + s_corner;
#pragma unroll
            for (int k = 0; k < PX; k++)
                v[i][k] += top[k] + e;
            char *orow = b.out + (p.y0 + yl) * p.out_row;
            if (staged) {
#pragma unroll
                for (int k = 0; k < PX; k++)
                    stage[lane * PX + k] = v[i][k];
                __syncwarp();
                uint4 *dst = (uint4 *)((TAcc *)orow + x0);
#pragma unroll
                for (int j = 0; j < CHUNKS; j++) {
                    uint4 q = ((const uint4 *)stage)[j * 32 + lane];
                    if (g.hints & 2)
                        __stcs(dst + j * 32 + lane, q);
                    else
                        dst[j * 32 + lane] = q;
                }
                __syncwarp();
            } else {
                store_px<TAcc, PX>(orow, xs, w, ch, g.vec_out, g.hints, v[i]);
            }
        }
    }
    if (tid == 0)
        finish_block(hdr, g.total, g.hints & 8);
}

/* Workspace layout after the header, for tiles of TW x TH: vflags[T],
 * hflags[T] (u64), then vagg[T][TW], vinc[T][TW], hagg[T][TH], hinc[T][TH] of
 * the accumulator, then cflags[T] (u64) and cval[T] (accumulator) for the
 * split look-backs. */
static void lb_layout(const psi_cu_plan *p, size_t acc_size, int tile_width, int tile_height,
                      u64 *tiles_x, u64 *tiles_y, u64 *total, size_t *bytes)
{
    const u64 tw = (u64)tile_width, th = (u64)tile_height;
    const u64 rows = (u64)(p->y1 - p->y0);
    *tiles_x = ((u64)p->width + tw - 1) / tw;
    *tiles_y = (rows + th - 1) / th;
    *total = *tiles_x * *tiles_y * (u64)(p->depth * p->channels);
    *bytes = sizeof(psi_cu_header) + 2 * *total * sizeof(u64) +
             *total * (2 * tw + 2 * th) * acc_size + *total * (sizeof(u64) + acc_size);
}

size_t lb_trace_offset(const psi_cu_plan *p, size_t acc_size, int tile_height)
{
    u64 tx, ty, total;
    size_t bytes;
    lb_layout(p, acc_size, LB_TW, tile_height, &tx, &ty, &total, &bytes);
    return (bytes + 7) & ~(size_t)7;
}

int lb_launch(void (*kernel)(psi_cu_plan, lb_geom), unsigned blocks, unsigned threads,
              size_t smem, const psi_cu_plan *p, const lb_choice &c, lb_geom &g,
              int staged_blocks, bool hints_by_records)
{
    /* g.pdl, stagger_ns and stagger_wave hold lb_geometry()'s "off" values */
    const bool stagger = c.stagger > 0 && staged_blocks > 1;
    const bool auto_hints = c.hints == LB_HINTS_AUTO && hints_by_records;
    if (c.pdl || stagger || auto_hints) {
        psi_device_caps caps;
        cudaError_t e = psi_current_device_caps(&caps);
        if (e != cudaSuccess)
            return (int)e;
        g.pdl = caps.cc_major >= 9 ? c.pdl : 0;
        /* The first wave's blocks start apart (lb_geom::stagger_ns), so that
         * while some of an SM's blocks wait on their look-backs others load or
         * store: only where there is more than one wave (run 105, 3500 ns
         * steps: a one-wave 2048^2 f32 -> f64 call took 0.0431 ms, 0.0354 in
         * run 101). */
        if (stagger && blocks > (u64)staged_blocks * (u64)caps.sm_count) {
            g.stagger_ns = c.stagger / (staged_blocks - 1);
            g.stagger_wave = (unsigned)caps.sm_count;
        }
        /* The look-back records lie from the workspace's start to cflags. */
        const size_t records = (size_t)((const char *)g.cflags - (const char *)p->ws);
        if (auto_hints && records > (size_t)caps.l2_bytes / LB_HINTS_L2_SHARE)
            g.hints = LB_HINTS_LARGE;
    }
    if (c.order == 1)
        g.hints |= LB_ORDER_DIAGONAL;
    return (int)psi_launch(g.pdl != 0, kernel, dim3(blocks), dim3(threads), smem,
                           (cudaStream_t)p->stream, *p, g);
}

int lb_geometry(const psi_cu_plan *p, size_t in_size, size_t acc_size, int tile_width,
                int tile_height, int hints, lb_geom *g)
{
    size_t bytes;
    const u64 tw = (u64)tile_width, th = (u64)tile_height;
    g->hints = hints == LB_HINTS_AUTO ? LB_HINTS_DEFAULT : hints;
    lb_layout(p, acc_size, tile_width, tile_height, &g->tiles_x, &g->tiles_y, &g->total, &bytes);
    char *base = (char *)p->ws + sizeof(psi_cu_header);
    g->vflags = (u64 *)base;
    g->hflags = g->vflags + g->total;
    char *vals = (char *)(g->hflags + g->total);
    g->vagg = vals;
    g->vinc = vals + g->total * tw * acc_size;
    g->hagg = vals + 2 * g->total * tw * acc_size;
    g->hinc = vals + (2 * g->total * tw + g->total * th) * acc_size;
    /* 2 TW + 2 TH values per tile: a multiple of 8 bytes, so cflags is aligned */
    g->cflags = (u64 *)(vals + g->total * (2 * tw + 2 * th) * acc_size);
    g->cval = g->cflags + g->total;
    g->split = 0;
    g->direct = 0;
    g->tagged = 0;
    g->async_copy = 0;
    g->stagger_ns = 0;
    g->stagger_wave = 1;
    g->trace = nullptr;
    g->pdl = 0;
    /* Vector accesses need channel step 1 and aligned rows and planes: the
     * register kernel loads tile_width / 32 pixels per lane, at most 16
     * bytes at a time (the staged kernel checks its own). */
    const size_t lane_bytes = (size_t)tile_width / 32 * in_size;
    const size_t ain = lane_bytes >= 16 ? 16 : lane_bytes;
    g->vec_in = p->channels == 1 && (uintptr_t)p->in % ain == 0 && p->in_row % (i64)ain == 0 &&
                (p->depth == 1 || p->in_slice % (i64)ain == 0);
    g->vec_out = p->channels == 1 && (uintptr_t)p->out % 16 == 0 && p->out_row % 16 == 0 &&
                 (p->depth == 1 || p->out_slice % 16 == 0);
    return g->total > 0x7fffffffull ? (int)cudaErrorInvalidConfiguration : 0;
}

size_t lookback_workspace(const psi_cu_plan *p)
{
    u64 tx, ty, total;
    size_t bytes;
    size_t as = psi_cu_acc_size(p->acc);
    lb_choice c = lb_choose(p);
    lb_layout(p, as, c.tw, c.rows * c.warps, &tx, &ty, &total, &bytes);
    if (c.staged && c.trace)
        return lb_trace_offset(p, as, c.rows * c.warps) + total * LB_TRACE_WORDS * sizeof(u64);
    return bytes;
}

template <typename TIn, typename TAcc, int R, int NW, int MINB, int TW = LB_TW>
static int lookback_launch(const psi_cu_plan *p, const lb_choice &c)
{
    lb_geom g;
    int err = lb_geometry(p, sizeof(TIn), sizeof(TAcc), TW, R * NW, c.hints, &g);
    if (err || g.total == 0)
        return err;
    g.direct = c.direct && lb_direct_fits(g.tiles_x, g.tiles_y);
    g.tagged = g.direct && c.tag && sizeof(TAcc) == 4;
    if (TW != LB_TW && !g.direct)
        return (int)cudaErrorInvalidConfiguration; /* lb_choose() never asks for it */
    return lb_launch(lookback_kernel<TIn, TAcc, R, NW, MINB, TW>, (unsigned)g.total, 32 * NW, 0,
                     p, c, g, 0, false);
}

template <typename TIn, typename TAcc>
static int lookback_pick(const psi_cu_plan *p)
{
    lb_choice c = lb_choose(p);
    if (c.staged)
        return lookback_staged_dispatch(p, c);
    /* Narrow tiles only in the default shape (lb_choose()). */
    if constexpr (sizeof(TAcc) == 4) {
        if (c.rows == 8)
            return lookback_launch<TIn, TAcc, 8, 8, 2>(p, c);
        if (c.warps == 16)
            return c.tw == LB_TW_NARROW ? lookback_launch<TIn, TAcc, 4, 16, 2, LB_TW_NARROW>(p, c)
                                        : lookback_launch<TIn, TAcc, 4, 16, 2>(p, c);
        return lookback_launch<TIn, TAcc, 4, 8, 4>(p, c);
    } else {
        return c.tw == LB_TW_NARROW ? lookback_launch<TIn, TAcc, 4, 8, 2, LB_TW_NARROW>(p, c)
                                    : lookback_launch<TIn, TAcc, 4, 8, 2>(p, c);
    }
}

int lookback_dispatch(const psi_cu_plan *p)
{
#define PSI_LB_CASE(TIN, ACC, CIN, CACC) \
    if (p->tin == TIN && p->acc == ACC)  \
        return lookback_pick<CIN, CACC>(p);
    PSI_CU_PAIRS(PSI_LB_CASE)
#undef PSI_LB_CASE
    return (int)cudaErrorInvalidValue;
}

} // namespace psi_cu

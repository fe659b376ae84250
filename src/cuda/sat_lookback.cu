/*
 * sat_lookback.cu - cuda.lookback: the integral image in one kernel that
 * reads every input element once and writes every output element once. This
 * file holds the launch policy (lb_shapes[]) and choice (lb_choose()), the
 * workspace layout and the register kernel described below; the staged kernel
 * (sat_lookback_staged.cu), the default for most type pairs from mid-sized
 * images up, shares its look-backs (sat_lookback.cuh).
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
 * CPU's order (within the bound the tests check).
 */
#include "device_caps.cuh"
#include "sat_lookback.cuh"

namespace psi_cu {

/* ---- launch policy ---------------------------------------------------------------
 * The launch shapes of cuda.lookback per type pair. They decide the
 * workspace's size, so they are one table for every architecture
 * (pixsum_cuda_workspace_size() takes no device); what follows the device
 * is in psi_arch_policy (device_caps.cuh). Tuned on sm_90 (132 SMs).
 *   staged       whether the pair has a staged kernel (sat_lookback_staged.cu):
 *                not f64 -> f64, where the register kernel is as fast;
 *   reg_warps    register kernel: warps of LB_REG_ROWS rows; 16 for 4-byte tables
 *                (64-row tiles at 64 registers beat 8 warps of 8 or 4 rows),
 *                8 for 8-byte tables;
 *   staged_rows  staged kernel: rows per warp of its tallest tile (8 warps), the
 *                fastest on large images (8-bit input 16, a 32 KB tile; 16-bit
 *                and f32 input 8; wider input 4), and
 *   staged_min   of its shortest tile (smaller images: more tiles, lb_staged_rows());
 *   diagonal     staged tiles by anti-diagonals (LB_ORDER_DIAGONAL): all but
 *                u8 -> u32, whose tall tiles have few look-backs per pixel. */
struct lb_shape {
    psi_cu_in tin;
    psi_cu_acc acc;
    bool staged;
    int reg_warps, staged_rows, staged_min;
    bool diagonal;
};

static const lb_shape lb_shapes[] = {
    {PSI_CU_IN_U8, PSI_CU_U32, true, 16, 16, 8, false},
    {PSI_CU_IN_U8, PSI_CU_U64, true, 8, 16, 8, true},
    {PSI_CU_IN_U16, PSI_CU_U32, true, 16, 8, 4, true},
    {PSI_CU_IN_U16, PSI_CU_U64, true, 8, 8, 4, true},
    {PSI_CU_IN_I16, PSI_CU_U64, true, 8, 8, 4, true},
    {PSI_CU_IN_I32, PSI_CU_U64, true, 8, 4, 4, true},
    {PSI_CU_IN_U32, PSI_CU_U64, true, 8, 4, 4, true},
    {PSI_CU_IN_F32, PSI_CU_F32, true, 16, 8, 4, true},
    {PSI_CU_IN_F32, PSI_CU_F64, true, 8, 8, 4, true},
    {PSI_CU_IN_F64, PSI_CU_F64, false, 8, 4, 4, true},
};

/* The size classes of the choice (tiles of each shape):
 *   - the staged kernel from LB_STAGED_MIN_TILES tiles of 256 x 32: smaller
 *     images are bound by latency, where the register kernel is faster, and
 *     so are single planes that its own tiles cut into at most 32 x 32 and
 *     LB_REG_DIRECT_MAX_TILES in all (aggregate-only look-backs, no chain);
 *   - the register kernel's narrow tiles where its wide ones number fewer
 *     than LB_NARROW_BELOW_TILES (every SM of a large GPU gets a tile);
 *   - the staged kernel's tiles halved in height (down to staged_min) while
 *     they number fewer than LB_STAGED_TILES (two per SM of a 132-SM GPU). */
constexpr int LB_REG_ROWS = 4;
constexpr u64 LB_STAGED_MIN_TILES = 512, LB_REG_DIRECT_MAX_TILES = 256;
constexpr u64 LB_NARROW_BELOW_TILES = 128, LB_STAGED_TILES = 264;

/* The pair's row of lb_shapes[] (every pair the kernels are built for has one). */
static const lb_shape &lb_shape_of(const psi_cu_plan *p)
{
    for (const lb_shape &s : lb_shapes)
        if (s.tin == p->tin && s.acc == p->acc)
            return s;
    return lb_shapes[sizeof lb_shapes / sizeof lb_shapes[0] - 1];
}

/* Whether a plane of tiles_x x tiles_y tiles takes the aggregate-only
 * look-backs of the register kernel. */
static bool lb_direct_fits(u64 tiles_x, u64 tiles_y)
{
    return tiles_x <= LB_DIRECT_MAX_TILES && tiles_y <= LB_DIRECT_MAX_TILES;
}

/* Whether the automatic choice takes the staged kernel for plan p. */
static bool lb_staged_default(const psi_cu_plan *p, const lb_shape &s)
{
    const u64 rows = (u64)(p->y1 - p->y0), planes = (u64)(p->depth * p->channels);
    const u64 tiles_x = ((u64)p->width + LB_TW - 1) / LB_TW;
    const u64 tiles32 = tiles_x * ((rows + 31) / 32) * planes;
    const u64 reg_th = (u64)LB_REG_ROWS * (u64)s.reg_warps; /* register tile height */
    const u64 reg_tiles_y = (rows + reg_th - 1) / reg_th;
    const bool reg_direct = planes == 1 && lb_direct_fits(tiles_x, reg_tiles_y) &&
                            tiles_x * reg_tiles_y <= LB_REG_DIRECT_MAX_TILES;
    return s.staged && tiles32 >= LB_STAGED_MIN_TILES && !reg_direct;
}

/* Whether LB_TW-wide tiles of tile_height rows would leave SMs of the
 * register kernel without a tile (1024^2 makes 64). */
static bool lb_wide_leaves_sms_idle(const psi_cu_plan *p, int tile_height)
{
    const u64 rows = (u64)(p->y1 - p->y0), planes = (u64)(p->depth * p->channels);
    const u64 tiles_y = (rows + (u64)tile_height - 1) / (u64)tile_height;
    return ((u64)p->width + LB_TW - 1) / LB_TW * tiles_y * planes < LB_NARROW_BELOW_TILES;
}

/* Whether LB_TW_NARROW-wide tiles of tile_height rows fit the aggregate-only
 * look-backs, which the narrow tiles always take. */
static bool lb_narrow_fits(const psi_cu_plan *p, int tile_height)
{
    const u64 rows = (u64)(p->y1 - p->y0);
    return lb_direct_fits(((u64)p->width + LB_TW_NARROW - 1) / LB_TW_NARROW,
                          (rows + (u64)tile_height - 1) / (u64)tile_height);
}

int lb_staged_rows(const psi_cu_plan *p)
{
    const lb_shape &s = lb_shape_of(p);
    const u64 cols = ((u64)p->width + LB_TW - 1) / LB_TW;
    const u64 planes = (u64)(p->depth * p->channels), rows = (u64)(p->y1 - p->y0);
    int r = s.staged_rows;
    for (; r > s.staged_min; r /= 2) {
        const u64 th = (u64)(8 * r);
        if (cols * ((rows + th - 1) / th) * planes >= LB_STAGED_TILES)
            break;
    }
    return r;
}

/* The launch of plan p: the automatic choice above, then the paths the plan
 * forces (psi_cu_force), where its pair and shape can take them: the kernel
 * (not the staged one for f64 -> f64), the staged kernel's rows (a height
 * staged_pick() builds for the pair), the register kernel's chained
 * look-backs on small planes and its tile width (narrow only where the
 * aggregate-only look-backs fit), PDL and cp.async off. */
lb_choice lb_choose(const psi_cu_plan *p)
{
    const lb_shape &s = lb_shape_of(p);
    const psi_cu_force &f = p->force;
    lb_choice c{};
    c.no_pdl = f.no_pdl != 0;
    c.no_async_copy = f.no_async_copy != 0;
    c.staged = f.kernel == 1 ? 0 : f.kernel == 2 ? s.staged : lb_staged_default(p, s);
    if (c.staged) {
        c.warps = 8;
        c.rows = lb_staged_rows(p);
        if (f.rows == s.staged_rows || f.rows == s.staged_min)
            c.rows = f.rows;
        c.tw = LB_TW;
        c.diagonal = s.diagonal;
        return c;
    }
    c.rows = LB_REG_ROWS;
    c.warps = s.reg_warps;
    c.direct = !f.chained;
    c.tw = LB_TW;
    const int th = c.rows * c.warps;
    if (c.direct && f.tile_width != LB_TW &&
        (f.tile_width == LB_TW_NARROW || lb_wide_leaves_sms_idle(p, th)) &&
        lb_narrow_fits(p, th))
        c.tw = LB_TW_NARROW;
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
     * summed by the whole block. */
    if (TW != LB_TW || g.direct) {
        /* A launch of one tile has nothing to publish or await. (The branch
         * also keeps the wide kernels' spills at their least: without it
         * the register allocator spills more of the tile's values.) */
        if (g.total > 1)
            direct_publish_wait<TAcc, TH, TW, 32 * NW>(g, t, tx, ty, epoch, tid, s_bottom,
                                                       s_rowcum);
        __syncthreads();
        /* s_col is free here: its offsets were read above */
        direct_sums<TAcc, TH, TW, 32 * NW>(p, g, b.out, t, tx, ty, epoch, tid, &s_col[0][0],
                                           &s_corner, s_top, s_edge);
    } else if constexpr (TW == LB_TW) {
        if (warp == 0) {
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
#pragma unroll
    for (int k = 0; k < PX; k++)
        top[k] = s_top[lane * PX + k];
    const bool staged = g.vec_out && x0 + TW <= w;
    TAcc *stage = &s_col[warp][0];
    constexpr int CHUNKS = TW * (int)sizeof(TAcc) / 16 / 32; /* 16-byte chunks per lane */
#pragma unroll
    for (int i = 0; i < R; i++) {
        i64 yl = ybase + i;
        if (yl < rows) {
            TAcc e = s_edge[warp * R + i] + s_corner;
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
        finish_block(hdr, g.total);
}

/* Workspace layout after the header, for tiles of TW x TH: vflags[T],
 * hflags[T] (u64), then vagg[T][TW], vinc[T][TW], hagg[T][TH], hinc[T][TH] of
 * the accumulator. */
static void lb_layout(const psi_cu_plan *p, size_t acc_size, int tile_width, int tile_height,
                      u64 *tiles_x, u64 *tiles_y, u64 *total, size_t *bytes)
{
    const u64 tw = (u64)tile_width, th = (u64)tile_height;
    const u64 rows = (u64)(p->y1 - p->y0);
    *tiles_x = ((u64)p->width + tw - 1) / tw;
    *tiles_y = (rows + th - 1) / th;
    *total = *tiles_x * *tiles_y * (u64)(p->depth * p->channels);
    *bytes = sizeof(psi_cu_header) + 2 * *total * sizeof(u64) +
             *total * (2 * tw + 2 * th) * acc_size;
}

int lb_launch(void (*kernel)(psi_cu_plan, lb_geom), unsigned blocks, unsigned threads,
              size_t smem, const psi_cu_plan *p, const lb_choice &c, lb_geom &g,
              int staged_blocks, size_t records)
{
    /* g.pdl, stagger_ns and stagger_wave hold lb_geometry()'s "off" values */
    psi_device_caps caps;
    cudaError_t e = psi_current_device_caps(&caps);
    if (e != cudaSuccess)
        return (int)e;
    const psi_arch_policy &a = *caps.policy;
    g.pdl = a.pdl && !c.no_pdl;
    g.async_copy = g.async_copy && a.async_copy;
    /* The first wave's blocks start apart (lb_geom::stagger_ns), so that
     * while some of an SM's blocks wait on their look-backs others load or
     * store: only where there is more than one wave (one wave has no later
     * blocks to fill the waits, and the delay would only add up). */
    if (a.lb_stagger_ns > 0 && staged_blocks > 1 &&
        blocks > (u64)staged_blocks * (u64)caps.sm_count) {
        g.stagger_ns = a.lb_stagger_ns / (staged_blocks - 1);
        g.stagger_wave = (unsigned)caps.sm_count;
    }
    if (records && records > (size_t)caps.l2_bytes / (size_t)a.lb_hints_l2_share)
        g.hints = LB_HINTS_LARGE;
    if (c.diagonal)
        g.hints |= LB_ORDER_DIAGONAL;
    return (int)psi_launch(g.pdl != 0, kernel, dim3(blocks), dim3(threads), smem,
                           (cudaStream_t)p->stream, *p, g);
}

int lb_geometry(const psi_cu_plan *p, size_t in_size, size_t acc_size, int tile_width,
                int tile_height, lb_geom *g, size_t *records)
{
    const u64 tw = (u64)tile_width, th = (u64)tile_height;
    g->hints = LB_HINTS_DEFAULT;
    lb_layout(p, acc_size, tile_width, tile_height, &g->tiles_x, &g->tiles_y, &g->total,
              records);
    char *base = (char *)p->ws + sizeof(psi_cu_header);
    g->vflags = (u64 *)base;
    g->hflags = g->vflags + g->total;
    char *vals = (char *)(g->hflags + g->total);
    g->vagg = vals;
    g->vinc = vals + g->total * tw * acc_size;
    g->hagg = vals + 2 * g->total * tw * acc_size;
    g->hinc = vals + (2 * g->total * tw + g->total * th) * acc_size;
    g->direct = 0;
    g->tagged = 0;
    g->async_copy = 0;
    g->stagger_ns = 0;
    g->stagger_wave = 1;
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
    const lb_choice c = lb_choose(p);
    lb_layout(p, psi_cu_acc_size(p->acc), c.tw, c.rows * c.warps, &tx, &ty, &total, &bytes);
    return bytes;
}

template <typename TIn, typename TAcc, int R, int NW, int MINB, int TW = LB_TW>
static int lookback_launch(const psi_cu_plan *p, const lb_choice &c)
{
    lb_geom g;
    size_t records;
    int err = lb_geometry(p, sizeof(TIn), sizeof(TAcc), TW, R * NW, &g, &records);
    if (err || g.total == 0)
        return err;
    g.direct = c.direct && lb_direct_fits(g.tiles_x, g.tiles_y);
    g.tagged = g.direct && sizeof(TAcc) == 4;
    if (TW != LB_TW && !g.direct)
        return (int)cudaErrorInvalidConfiguration; /* lb_choose() never asks for it */
    return lb_launch(lookback_kernel<TIn, TAcc, R, NW, MINB, TW>, (unsigned)g.total, 32 * NW, 0,
                     p, c, g, 0, 0);
}

/* The register kernel's instances: LB_REG_ROWS rows per warp, 16 warps for
 * 4-byte tables (two blocks per SM) and 8 for 8-byte tables, wide or narrow
 * (lb_shapes[], lb_choose()). */
template <typename TIn, typename TAcc>
static int lookback_pick(const psi_cu_plan *p)
{
    const lb_choice c = lb_choose(p);
    if (c.staged)
        return lookback_staged_dispatch(p, c);
    static_assert(LB_REG_ROWS == 4, "the instances below");
    if constexpr (sizeof(TAcc) == 4) {
        return c.tw == LB_TW_NARROW ? lookback_launch<TIn, TAcc, 4, 16, 2, LB_TW_NARROW>(p, c)
                                    : lookback_launch<TIn, TAcc, 4, 16, 2>(p, c);
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

/*
 * sat_lookback.cu - cuda.lookback: the integral image in one kernel that
 * reads every input element once and writes every output element once.
 *
 * Tiles of TW = 256 columns x TH = NW * R rows; one block of NW warps per tile,
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
 * Flags are 64-bit words (epoch << 2 | status) written with st.release.gpu
 * after the values and read with ld.acquire.gpu before them; the epoch is
 * advanced by the last block of every launch, so stale flags never match.
 * Integer tables use modular arithmetic in the output's width (bit-exact with
 * the CPU in any association order); float tables round differently from the
 * CPU's order (bound in docs/benchmarks.md).
 */
#include "sat_common.cuh"

#include <stdlib.h>
#include <string.h>

namespace psi_cu {

struct lb_geom {
    u64 tiles_x, tiles_y, total;
    u64 *vflags, *hflags;
    void *vagg, *vinc, *hagg, *hinc;
    int vec_in, vec_out;
    int hints; /* bit 0: evict-first (streaming) loads, bit 1: streaming stores */
};

constexpr int LB_TW = 256;

/* Launch choices: rows per warp R (tile height 8R) and cache hints. Defaults
 * below; PIXSUM_CUDA_LB="rows=4,hints=0" overrides them (for tuning runs). */
struct lb_choice {
    int rows, warps, hints; /* tile height = rows x warps */
};

static lb_choice lb_choose(const psi_cu_plan *p)
{
    size_t acc_size = psi_cu_acc_size(p->acc);
    /* Measured on an H100 (docs/benchmarks.md): streaming hints on; for
     * 4-byte tables 16 warps of 4 rows (64-row tiles, 64 registers) beat 8
     * warps of 8 rows and 8 warps of 4 rows at 1024^2 and 8192^2. */
    lb_choice c = {4, acc_size == 4 ? 16 : 8, 3};
    const char *e = getenv("PIXSUM_CUDA_LB");
    if (e) {
        const char *r = strstr(e, "rows="), *h = strstr(e, "hints="), *wp = strstr(e, "warps=");
        if (r && acc_size == 4 && (atoi(r + 5) == 4 || atoi(r + 5) == 8)) {
            c.rows = atoi(r + 5);
            c.warps = 8;
        }
        if (wp && acc_size == 4 && c.rows == 4 && atoi(wp + 6) == 16)
            c.warps = 16;
        if (h)
            c.hints = atoi(h + 6) & 7;
    }
    return c;
}

/* Loads 8 consecutive pixels (channel step ch) starting at pixel x of a row,
 * zero beyond the width, converted (and squared). */
template <typename TIn, typename TAcc>
__device__ __forceinline__ void load8(const char *row, i64 x, i64 w, i64 ch, bool vec,
                                     int squared, int hints, TAcc v[8])
{
    const TIn *r = (const TIn *)row;
    if (vec && x + 8 <= w) {
        union {
            uint4 q[(8 * sizeof(TIn) + 15) / 16];
            uint2 d;
            TIn e[8];
        } u;
        if (sizeof(TIn) == 1) {
            u.d = (hints & 1) ? __ldcs((const uint2 *)(r + x)) : *(const uint2 *)(r + x);
        } else {
#pragma unroll
            for (int j = 0; j < (int)(8 * sizeof(TIn) / 16); j++)
                u.q[j] = (hints & 1) ? __ldcs((const uint4 *)(r + x) + j)
                                     : ((const uint4 *)(r + x))[j];
        }
#pragma unroll
        for (int k = 0; k < 8; k++)
            v[k] = sample<TAcc, TIn>(u.e[k], squared);
    } else {
#pragma unroll
        for (int k = 0; k < 8; k++)
            v[k] = x + k < w ? sample<TAcc, TIn>(r[(x + k) * ch], squared) : (TAcc)0;
    }
}

/* Stores 8 consecutive table values, skipping those beyond the width. */
template <typename TAcc>
__device__ __forceinline__ void store8(char *row, i64 x, i64 w, i64 ch, bool vec, int hints,
                                       const TAcc v[8])
{
    TAcc *r = (TAcc *)row;
    if (vec && x + 8 <= w) {
        union {
            uint4 q[8 * sizeof(TAcc) / 16];
            TAcc e[8];
        } u;
#pragma unroll
        for (int k = 0; k < 8; k++)
            u.e[k] = v[k];
#pragma unroll
        for (int j = 0; j < (int)(8 * sizeof(TAcc) / 16); j++) {
            if (hints & 2)
                __stcs((uint4 *)(r + x) + j, u.q[j]);
            else
                ((uint4 *)(r + x))[j] = u.q[j];
        }
    } else {
#pragma unroll
        for (int k = 0; k < 8; k++)
            if (x + k < w)
                r[(x + k) * ch] = v[k];
    }
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

template <typename TIn, typename TAcc, int R, int NW, int MINB>
__global__ void __launch_bounds__(32 * NW, MINB) lookback_kernel(psi_cu_plan p, lb_geom g)
{
    constexpr int TW = LB_TW, TH = NW * R, HR = TH / 32;
    __shared__ __align__(16) TAcc s_col[NW][TW];
    __shared__ __align__(16) TAcc s_top[TW];
    __shared__ __align__(16) TAcc s_bottom[TW];
    __shared__ TAcc s_rowcum[TH];
    __shared__ TAcc s_edge[TH];
    __shared__ u64 s_ticket, s_epoch;

    psi_cu_header *hdr = (psi_cu_header *)p.ws;
    const unsigned tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    if (tid == 0) {
        u64 e;
        s_ticket = take_ticket(hdr, &e);
        s_epoch = e;
    }
    __syncthreads();
    const u64 t = s_ticket, epoch = s_epoch;
    const u64 per_plane = g.tiles_x * g.tiles_y;
    const i64 plane = (i64)(t / per_plane);
    const u64 rem = t % per_plane;
    const u64 ty = rem / g.tiles_x, tx = rem % g.tiles_x;
    const plane_ptrs b = plane_base(p, plane, sizeof(TIn), sizeof(TAcc));
    const i64 w = p.width, ch = p.channels, rows = p.y1 - p.y0;
    const i64 x0 = (i64)tx * TW, xs = x0 + (i64)lane * 8;
    const i64 ybase = (i64)ty * TH + (i64)warp * R;

    /* 1-2: load and build the tile-local table. */
    TAcc v[R][8];
#pragma unroll
    for (int i = 0; i < R; i++) {
        i64 yl = ybase + i;
        if (yl < rows) {
            load8<TIn, TAcc>(b.in + (p.y0 + yl) * p.in_row, xs, w, ch, g.vec_in, p.squared,
                             g.hints, v[i]);
        } else {
#pragma unroll
            for (int k = 0; k < 8; k++)
                v[i][k] = (TAcc)0;
        }
    }
#pragma unroll
    for (int i = 0; i < R; i++) {
#pragma unroll
        for (int k = 1; k < 8; k++)
            v[i][k] += v[i][k - 1];
        TAcc incl = warp_inclusive(v[i][7], lane);
        TAcc ex = warp_exclusive_from_inclusive(incl, lane);
#pragma unroll
        for (int k = 0; k < 8; k++)
            v[i][k] += ex;
    }
#pragma unroll
    for (int i = 1; i < R; i++)
#pragma unroll
        for (int k = 0; k < 8; k++)
            v[i][k] += v[i - 1][k];
#pragma unroll
    for (int k = 0; k < 8; k++)
        s_col[warp][lane * 8 + k] = v[R - 1][k];
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
        TAcc off[8];
#pragma unroll
        for (int k = 0; k < 8; k++)
            off[k] = s_col[warp][lane * 8 + k];
#pragma unroll
        for (int i = 0; i < R; i++)
#pragma unroll
            for (int k = 0; k < 8; k++)
                v[i][k] += off[k];
    }
    if (lane == 31) {
#pragma unroll
        for (int i = 0; i < R; i++)
            s_rowcum[warp * R + i] = v[i][7];
    }
    __syncthreads();

    /* 3-4: the two look-backs, by warp 0 (bit 2 of hints skips them: a
     * timing experiment only, the table is then wrong). */
    if (warp == 0 && !(g.hints & 4)) {
        TAcc *vagg = (TAcc *)g.vagg, *vinc = (TAcc *)g.vinc;
        TAcc *hagg = (TAcc *)g.hagg, *hinc = (TAcc *)g.hinc;
        TAcc P[8], top[8];
#pragma unroll
        for (int k = 0; k < 8; k++) {
            P[k] = s_bottom[lane * 8 + k];
            top[k] = (TAcc)0;
        }
        if (ty == 0) {
            if (p.y0 > 0) {
                /* Carried table row y0 - 1: Top(x) = C(x) - C(x0 - 1). */
                const TAcc *crow = (const TAcc *)(b.out + (p.y0 - 1) * p.out_row);
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
        __syncwarp();

        const TAcc top_last = s_top[TW - 1];
        TAcc a[HR], e[HR];
#pragma unroll
        for (int m = 0; m < HR; m++) {
            a[m] = top_last + s_rowcum[lane + 32 * m];
            e[m] = (TAcc)0;
        }
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
    }
    __syncthreads();

    /* 5: add the offsets and write. Full-width tiles go through the warp's
     * row of s_col (free now) so that every store instruction of the warp
     * writes one contiguous 512-byte span. */
    TAcc top[8];
    if (g.hints & 4) {
#pragma unroll
        for (int k = 0; k < 8; k++)
            top[k] = (TAcc)0;
    } else {
#pragma unroll
        for (int k = 0; k < 8; k++)
            top[k] = s_top[lane * 8 + k];
    }
    const bool staged = g.vec_out && x0 + TW <= w;
    TAcc *stage = &s_col[warp][0];
    constexpr int CHUNKS = TW * (int)sizeof(TAcc) / 16 / 32; /* 16-byte chunks per lane */
#pragma unroll
    for (int i = 0; i < R; i++) {
        i64 yl = ybase + i;
        if (yl < rows) {
            TAcc e = (g.hints & 4) ? (TAcc)0 : s_edge[warp * R + i];
#pragma unroll
            for (int k = 0; k < 8; k++)
                v[i][k] += top[k] + e;
            char *orow = b.out + (p.y0 + yl) * p.out_row;
            if (staged) {
#pragma unroll
                for (int k = 0; k < 8; k++)
                    stage[lane * 8 + k] = v[i][k];
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
                store8<TAcc>(orow, xs, w, ch, g.vec_out, g.hints, v[i]);
            }
        }
    }
    if (tid == 0)
        finish_block(hdr, g.total);
}

/* Workspace layout after the header: vflags[T], hflags[T] (u64), then
 * vagg[T][TW], vinc[T][TW], hagg[T][TH], hinc[T][TH] of the accumulator. */
static void lb_layout(const psi_cu_plan *p, size_t acc_size, int tile_height,
                      u64 *tiles_x, u64 *tiles_y, u64 *total, size_t *bytes)
{
    const u64 th = (u64)tile_height;
    const u64 rows = (u64)(p->y1 - p->y0);
    *tiles_x = ((u64)p->width + LB_TW - 1) / LB_TW;
    *tiles_y = (rows + th - 1) / th;
    *total = *tiles_x * *tiles_y * (u64)(p->depth * p->channels);
    *bytes = sizeof(psi_cu_header) + 2 * *total * sizeof(u64) +
             *total * (2 * LB_TW + 2 * th) * acc_size;
}

size_t lookback_workspace(const psi_cu_plan *p)
{
    u64 tx, ty, total;
    size_t bytes;
    size_t as = psi_cu_acc_size(p->acc);
    lb_choice c = lb_choose(p);
    lb_layout(p, as, c.rows * c.warps, &tx, &ty, &total, &bytes);
    return bytes;
}

template <typename TIn, typename TAcc, int R, int NW, int MINB>
static int lookback_launch(const psi_cu_plan *p, int hints)
{
    lb_geom g;
    g.hints = hints;
    size_t bytes;
    lb_layout(p, sizeof(TAcc), R * NW, &g.tiles_x, &g.tiles_y, &g.total, &bytes);
    if (g.total == 0)
        return 0;
    char *base = (char *)p->ws + sizeof(psi_cu_header);
    g.vflags = (u64 *)base;
    g.hflags = g.vflags + g.total;
    TAcc *vals = (TAcc *)(g.hflags + g.total);
    g.vagg = vals;
    g.vinc = vals + g.total * LB_TW;
    g.hagg = vals + 2 * g.total * LB_TW;
    g.hinc = vals + 2 * g.total * LB_TW + g.total * NW * R;
    /* Vector accesses need channel step 1 and aligned rows and planes. */
    const size_t ain = 8 * sizeof(TIn) >= 16 ? 16 : 8 * sizeof(TIn);
    g.vec_in = p->channels == 1 && (uintptr_t)p->in % ain == 0 && p->in_row % (i64)ain == 0 &&
               (p->depth == 1 || p->in_slice % (i64)ain == 0);
    g.vec_out = p->channels == 1 && (uintptr_t)p->out % 16 == 0 && p->out_row % 16 == 0 &&
                (p->depth == 1 || p->out_slice % 16 == 0);
    if (g.total > 0x7fffffffull)
        return (int)cudaErrorInvalidConfiguration;
    lookback_kernel<TIn, TAcc, R, NW, MINB>
        <<<(unsigned)g.total, 32 * NW, 0, (cudaStream_t)p->stream>>>(*p, g);
    return (int)cudaGetLastError();
}

template <typename TIn, typename TAcc>
static int lookback_pick(const psi_cu_plan *p)
{
    lb_choice c = lb_choose(p);
    if constexpr (sizeof(TAcc) == 4) {
        if (c.rows == 8)
            return lookback_launch<TIn, TAcc, 8, 8, 2>(p, c.hints);
        if (c.warps == 16)
            return lookback_launch<TIn, TAcc, 4, 16, 2>(p, c.hints);
        return lookback_launch<TIn, TAcc, 4, 8, 4>(p, c.hints);
    } else {
        return lookback_launch<TIn, TAcc, 4, 8, 2>(p, c.hints);
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

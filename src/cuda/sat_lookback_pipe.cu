/*
 * sat_lookback_pipe.cu - the pipelined kernel of cuda.lookback
 * (PIXSUM_CUDA_LB=pipe=1): the staged kernel's tile phases and split
 * look-backs, run by persistent blocks that keep memory busy while a tile's
 * look-backs wait.
 *
 * Why: in the staged kernel every block loads, sums, waits on its look-backs
 * and writes, in that order, and the blocks of a launch stay in step, so the
 * memory system idles while they all wait (docs/benchmarks.md, the phase
 * trace of 2026-11-24). Here a block owns two tile buffers in shared memory
 * and two kinds of warps:
 *   - 8 worker warps loop: take a ticket, load and sum that tile into one
 *     buffer, publish both its aggregates at once (bottom row and the row
 *     sums, which need no other tile), hand the buffer to the look-back
 *     warps, then write the previous tile from the other buffer as soon as
 *     its look-backs are done;
 *   - 3 look-back warps take the buffers in the same order and run the split
 *     look-backs of sat_lookback_staged.cu (vertical, horizontal over row
 *     sums, and the corner from the tile up and to the left), then publish
 *     the tile's bottom-right table value for its diagonal neighbour.
 * So one tile's wait overlaps the next tile's load and the previous tile's
 * stores. The handshakes are named barriers: BAR_FULL + b (workers arrive,
 * look-back warps wait) and BAR_DONE + b (the reverse) for buffer b.
 *
 * No deadlock: a tile's aggregates depend on nothing but its own pixels, and
 * its look-backs only on tiles of smaller tickets, all held by running
 * blocks; a block's workers take a new ticket only after writing the tile
 * before the one just handed over. Every block ends by taking one ticket past
 * the last tile; the last block to finish resets the ticket and advances the
 * epoch (finish_block() with the grid size), so no ticket is taken after
 * the reset.
 */
#include "sat_staged_tile.cuh"

#include <atomic>

namespace psi_cu {

constexpr int PIPE_LB_WARPS = 3, PIPE_THREADS = ST_THREADS + 32 * PIPE_LB_WARPS;

/* Named barrier ids (0 is __syncthreads): among the workers; buffer b full
 * (BAR_FULL + b) and its look-backs done (BAR_DONE + b); among the look-back
 * warps. */
enum { BAR_WORK = 1, BAR_FULL = 2, BAR_DONE = 4, BAR_LB = 6 };

__device__ __forceinline__ void bar_sync(int id, int n)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory");
}

__device__ __forceinline__ void bar_arrive(int id, int n)
{
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(n) : "memory");
}

struct sync_workers {
    __device__ __forceinline__ void operator()() const { bar_sync(BAR_WORK, ST_THREADS); }
};

/* Where ticket t lies: column tx and row ty in its plane, and the plane. */
struct pipe_tile {
    u64 tx, ty;
    plane_ptrs b;
};

__device__ __forceinline__ pipe_tile pipe_tile_of(const psi_cu_plan &p, const lb_geom &g, u64 t,
                                                  size_t in_size, size_t acc_size)
{
    const u64 per_plane = g.tiles_x * g.tiles_y, rem = t % per_plane;
    pipe_tile r;
    r.ty = rem / g.tiles_x;
    r.tx = rem % g.tiles_x;
    r.b = plane_base(p, (i64)(t / per_plane), in_size, acc_size);
    return r;
}

/* Turing (sm_75) runs at most 1024 threads per SM: 2 blocks of 352. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define PSI_PIPE_MINB(b) ((b) > 2 ? 2 : (b))
#else
#define PSI_PIPE_MINB(b) (b)
#endif

/* TRACE (a diagnostic, built with -DPIXSUM_CUDA_TRACE=ON and chosen by
 * PIXSUM_CUDA_LB=pipe=1,trace=1): per tile, in the LB_TRACE_WORDS record of
 * sat_lookback.cuh, [1] ticket taken, [2] loaded, [3] handed to the
 * look-back warps, [4] look-backs done, [5] written (every worker warp), all
 * %globaltimer ns; and [6] look-backs started, [7] write started. */
template <typename TIn, typename TAcc, int R, int MINB, bool TRACE>
__global__ void __launch_bounds__(PIPE_THREADS, PSI_PIPE_MINB(MINB)) pipe_kernel(psi_cu_plan p, lb_geom g)
{
    typedef staged_layout<TIn, TAcc, R> L;
    constexpr int TW = L::TW, TH = L::TH;
    extern __shared__ __align__(16) unsigned char smem[];
    __shared__ u64 s_ticket[2], s_epoch[2];
    __shared__ TAcc s_corner[2];

    psi_cu_header *hdr = (psi_cu_header *)p.ws;
    const unsigned tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const i64 w = p.width, ch = p.channels;

    if (tid < ST_THREADS) { /* the worker warps */
        bool have_prev = false;
        u64 prev_t = 0;
        for (int b = 0;; b ^= 1) {
            unsigned char *buf = smem + b * L::bytes;
            TIn *s_tile = (TIn *)buf;
            TAcc *s_colw = (TAcc *)(buf + L::colw);
            u64 *rec = nullptr;
            if (tid == 0) {
                u64 e;
                const u64 t0 = TRACE ? global_ns() : 0;
                const u64 tk = take_ticket(hdr, &e);
                s_ticket[b] = tk;
                s_epoch[b] = e;
                if (TRACE && tk < g.total) {
                    rec = g.trace + tk * LB_TRACE_WORDS;
                    rec[0] = (u64)sm_id() << 32;
                    rec[1] = t0;
                }
            }
            bar_sync(BAR_WORK, ST_THREADS); /* also: every warp done with buffer b */
            const u64 t = s_ticket[b];
            const bool have_cur = t < g.total;
            if (have_cur) {
                const u64 epoch = s_epoch[b];
                const pipe_tile tp = pipe_tile_of(p, g, t, sizeof(TIn), sizeof(TAcc));
                const i64 x0 = (i64)tp.tx * TW;
                tile_load<TIn, R>(p, g, tp.b, x0, (i64)tp.ty * TH, x0 + TW <= w, tid, s_tile);
                bar_sync(BAR_WORK, ST_THREADS);
                if (rec)
                    rec[2] = global_ns();
                tile_sums<TIn, TAcc, R>(s_tile, p.squared, tid, s_colw, (TAcc *)(buf + L::rowsum),
                                        (TAcc *)(buf + L::bottom), sync_workers());
                /* Both aggregates at once (tiles that a walk can pass over). */
                if (warp == 0 && tp.ty > 0 && tp.ty + 1 < g.tiles_y) {
                    TAcc P[8];
                    tile_bottom_row<TAcc>((const TAcc *)(buf + L::bottom), lane, P);
                    publish<TAcc, 8>((TAcc *)g.vagg + t * TW + lane * 8, P, &g.vflags[t],
                                     flag_value(epoch, FLAG_AGGREGATE), lane, 1);
                } else if (warp == 1) {
                    TAcc a[TH / 32];
                    tile_right_column<TAcc, TH>((const TAcc *)(buf + L::rowsum), lane,
                                                (TAcc *)(buf + L::rowcum), a);
                    if (tp.tx > 0 && tp.tx + 1 < g.tiles_x)
                        publish<TAcc, TH / 32>((TAcc *)g.hagg + t * TH + lane, a, &g.hflags[t],
                                               flag_value(epoch, FLAG_AGGREGATE), lane, 32);
                }
            }
            if (rec) /* thread 0 made warp 0's release store */
                rec[3] = global_ns();
            bar_arrive(BAR_FULL + b, PIPE_THREADS); /* a past-the-end ticket ends the others */
            if (have_prev) {                        /* the tile of the other buffer */
                const int pbuf = b ^ 1;
                bar_sync(BAR_DONE + pbuf, PIPE_THREADS);
                u64 *prec = TRACE && tid == 0 ? g.trace + prev_t * LB_TRACE_WORDS : nullptr;
                if (prec)
                    prec[7] = global_ns();
                const unsigned char *q = smem + pbuf * L::bytes;
                const pipe_tile tp = pipe_tile_of(p, g, prev_t, sizeof(TIn), sizeof(TAcc));
                const i64 x0 = (i64)tp.tx * TW;
                tile_write<TIn, TAcc, R>(p, g, tp.b, x0, (i64)tp.ty * TH, x0 + TW <= w, warp, lane,
                                         (const TIn *)q, (const TAcc *)(q + L::colw),
                                         (const TAcc *)(q + L::top), (const TAcc *)(q + L::edge),
                                         s_corner[pbuf]);
                if (TRACE) {
                    bar_sync(BAR_WORK, ST_THREADS); /* every warp's last store issued */
                    if (prec)
                        prec[5] = global_ns();
                }
            }
            if (!have_cur)
                break;
            have_prev = true;
            prev_t = t;
        }
    } else { /* the look-back warps: 0 vertical, 1 horizontal, 2 the corner */
        const unsigned lw = warp - ST_WARPS;
        for (int b = 0;; b ^= 1) {
            bar_sync(BAR_FULL + b, PIPE_THREADS);
            const u64 t = s_ticket[b];
            if (t >= g.total)
                break;
            const u64 epoch = s_epoch[b];
            u64 *rec = TRACE && lw == 0 && lane == 0 ? g.trace + t * LB_TRACE_WORDS : nullptr;
            if (rec)
                rec[6] = global_ns();
            unsigned char *buf = smem + b * L::bytes;
            TAcc *s_top = (TAcc *)(buf + L::top), *s_edge = (TAcc *)(buf + L::edge);
            const pipe_tile tp = pipe_tile_of(p, g, t, sizeof(TIn), sizeof(TAcc));
            const u64 tx = tp.tx, ty = tp.ty;
            const i64 x0 = (i64)tx * TW;
            TAcc total = (TAcc)0;
            if (g.hints & 4) { /* no look-backs: a timing experiment, the table is wrong */
                if (lw == 0) {
#pragma unroll
                    for (int k = 0; k < 8; k++)
                        s_top[lane * 8 + k] = (TAcc)0;
                } else if (lw == 1) {
#pragma unroll
                    for (int m = 0; m < TH / 32; m++)
                        s_edge[lane + 32 * m] = (TAcc)0;
                } else if (lane == 0) {
                    s_corner[b] = (TAcc)0;
                }
            } else if (lw == 0) {
                TAcc P[8];
                total = tile_bottom_row<TAcc>((const TAcc *)(buf + L::bottom), lane, P);
                const int steps =
                    vertical_lookback<TAcc>(p, g, tp.b.out, t, tx, ty, epoch, lane, P, s_top, true);
                if (rec)
                    atomicOr(&rec[0], (unsigned long long)steps);
            } else if (lw == 1) {
                TAcc a[TH / 32];
                const TAcc *s_rowcum = (const TAcc *)(buf + L::rowcum);
#pragma unroll
                for (int m = 0; m < TH / 32; m++)
                    a[m] = s_rowcum[lane + 32 * m];
                const int steps = horizontal_lookback<TAcc, TH>(g, t, tx, epoch, lane, a, s_edge, true);
                if (TRACE && lane == 0)
                    atomicOr(&g.trace[t * LB_TRACE_WORDS], (unsigned long long)steps << 16);
            } else if (lane == 0) {
                TAcc c = (TAcc)0;
                if (tx > 0 && ty == 0 && p.y0 > 0) { /* the carried table row y0 - 1 */
                    c = ((const TAcc *)(tp.b.out + (p.y0 - 1) * p.out_row))[(x0 - 1) * ch];
                } else if (tx > 0 && ty > 0) {
                    const u64 j = t - g.tiles_x - 1;
                    wait_flag(&g.cflags[j], epoch);
                    c = ld_cg((const TAcc *)g.cval + j);
                }
                s_corner[b] = c;
            }
            bar_sync(BAR_LB, 32 * PIPE_LB_WARPS);
            /* The tile's bottom-right table value, for the tile down and to
             * the right (interior tiles, which are full). */
            if (lw == 0 && lane == 0 && tx + 1 < g.tiles_x && ty + 1 < g.tiles_y &&
                !(g.hints & 4)) {
                st_cg((TAcc *)g.cval + t, (TAcc)(total + s_top[TW - 1] + s_edge[TH - 1] + s_corner[b]));
                store_release(&g.cflags[t], flag_value(epoch, FLAG_INCLUSIVE));
            }
            if (rec)
                rec[4] = global_ns();
            bar_arrive(BAR_DONE + b, PIPE_THREADS);
        }
    }
    __syncthreads();
    if (tid == 0)
        finish_block(hdr, gridDim.x);
}

/* Blocks of the pipelined kernel that fit the current device at once, cached
 * per device (0: it does not fit, e.g. too little shared memory). */
constexpr int PIPE_MAX_DEVICES = 64;

template <typename TIn, typename TAcc, int R, int MINB, bool TRACE>
static int pipe_resident_blocks(size_t smem_bytes, int *blocks)
{
    static std::atomic<int> cache[PIPE_MAX_DEVICES]; /* blocks + 1; 0 = not yet known */
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return (int)e;
    const int known = dev < PIPE_MAX_DEVICES ? cache[dev].load(std::memory_order_relaxed) : 0;
    if (known > 0) {
        *blocks = known - 1;
        return 0;
    }
    int sms = 0, optin = 0, per_sm = 0;
    e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (e != cudaSuccess)
        return (int)e;
    if (smem_bytes <= (size_t)optin) {
        e = cudaFuncSetAttribute(pipe_kernel<TIn, TAcc, R, MINB, TRACE>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_bytes);
        if (e == cudaSuccess)
            e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &per_sm, pipe_kernel<TIn, TAcc, R, MINB, TRACE>, PIPE_THREADS, smem_bytes);
        if (e != cudaSuccess)
            return (int)e;
    }
    *blocks = per_sm * sms;
    if (dev < PIPE_MAX_DEVICES)
        cache[dev].store(*blocks + 1, std::memory_order_relaxed);
    return 0;
}

/* Launches the pipelined kernel with R rows per warp; *ran = 0 when the
 * device cannot hold a block (the caller then takes the staged kernel). */
template <typename TIn, typename TAcc, int R, int MINB, bool TRACE>
static int pipe_launch(const psi_cu_plan *p, const lb_choice &c, int *ran)
{
    typedef staged_layout<TIn, TAcc, R> L;
    const size_t smem_bytes = 2 * L::bytes;
    int resident = 0;
    int err = pipe_resident_blocks<TIn, TAcc, R, MINB, TRACE>(smem_bytes, &resident);
    if (err || resident == 0)
        return err;
    lb_geom g;
    err = lb_geometry(p, sizeof(TIn), sizeof(TAcc), L::TH, c.hints, &g);
    if (err)
        return err;
    *ran = 1;
    if (g.total == 0)
        return 0;
    g.split = 1;
    if (TRACE)
        g.trace = (u64 *)((char *)p->ws + lb_trace_offset(p, sizeof(TAcc), L::TH));
    g.vec_in = p->channels == 1 && (uintptr_t)p->in % 16 == 0 && p->in_row % 16 == 0 &&
               (p->depth == 1 || p->in_slice % 16 == 0);
    const u64 grid = g.total < (u64)resident ? g.total : (u64)resident;
    pipe_kernel<TIn, TAcc, R, MINB, TRACE>
        <<<(unsigned)grid, PIPE_THREADS, smem_bytes, (cudaStream_t)p->stream>>>(*p, g);
    return (int)cudaGetLastError();
}

/* Launches with R rows per warp, traced or not. */
template <typename TIn, typename TAcc, int R, int MINB>
static int pipe_launch_rows(const psi_cu_plan *p, const lb_choice &c, int *ran)
{
    if (c.trace) {
#ifdef PIXSUM_CUDA_TRACE
        return pipe_launch<TIn, TAcc, R, MINB, true>(p, c, ran);
#else
        return (int)cudaErrorNotSupported; /* built without PIXSUM_CUDA_TRACE */
#endif
    }
    return pipe_launch<TIn, TAcc, R, MINB, false>(p, c, ran);
}

int lookback_pipe_dispatch(const psi_cu_plan *p, const lb_choice &c, int *ran)
{
    *ran = 0;
    if (p->tin == PSI_CU_IN_U8 && p->acc == PSI_CU_U32)
        return c.rows == 16 ? pipe_launch_rows<uint8_t, unsigned, 16, 2>(p, c, ran)
                            : pipe_launch_rows<uint8_t, unsigned, 8, 3>(p, c, ran);
    return 0;
}

} // namespace psi_cu

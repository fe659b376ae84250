/*
 * sat_lookback_lean.cu - the lean kernel of cuda.lookback (u8 -> u32, no
 * squares): the staged kernel's single pass and look-backs, but without the
 * tile in shared memory. The staged kernel keeps each 256 x 128 tile (32 KB)
 * in shared memory from its load to its write, which holds an SM to 5 blocks
 * while a block's look-backs wait 10-14 us (docs/benchmarks.md, fourth and
 * fifth sessions). Here a block
 *   1. takes its tile from the workspace ticket and loads it with 16-byte
 *      loads (kept in L2 with an evict-last policy), summing each warp's 16
 *      rows per column and each row straight from the registers;
 *   2. turns the column sums into the offsets of the rows above each warp and
 *      runs the serial look-backs (warp 0, tile_lookbacks()), as the staged
 *      kernel does;
 *   3. reads its rows again, from L2 (evict-first: last use), scans them
 *      along x and writes I(x, y) = L(x, y) + Top(x) + E(y) with 16-byte
 *      stores covering 512 contiguous bytes per warp instruction.
 * About 12 KB of shared memory per block, so the block count per SM is set by
 * the register budget (PIXSUM_CUDA_LB=lean=1: 8 blocks of 256 threads, 32
 * registers; lean=2: 6 blocks, 40 registers); the rest of the staged
 * kernel's launch choices (hints, pdl) apply. The second read moves 1 byte per
 * pixel from L2 to the SM, not from DRAM, as long as the tiles in flight
 * (8 x 132 x 32 KB = 33 MB on an H200) stay in L2.
 */
#include "sat_lookback.cuh"

namespace psi_cu {

constexpr int LN_WARPS = 8, LN_THREADS = 32 * LN_WARPS, LN_R = 16, LN_TH = LN_WARPS * LN_R;
static_assert(LN_THREADS == LB_TW, "one thread per tile column for the offsets");

/* Shared memory of a lean block (u32 table values). */
struct lean_smem {
    unsigned colw[LN_WARPS][LB_TW]; /* column sums per warp, then their offsets */
    unsigned top[LB_TW], bottom[LB_TW];
    unsigned rowsum[LN_TH], rowcum[LN_TH], edge[LN_TH];
};

/* An L2 policy that keeps lines (evict-last), for loads read again later. */
__device__ __forceinline__ u64 lean_keep_policy(void)
{
    u64 pol = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
#endif
    return pol;
}

/* 16 bytes from global memory, with L2 policy pol where keep is set. */
__device__ __forceinline__ uint4 lean_load16(const uint8_t *src, u64 pol, bool keep)
{
    uint4 q;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (keep) {
        asm("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
            : "=r"(q.x), "=r"(q.y), "=r"(q.z), "=r"(q.w)
            : "l"(src), "l"(pol));
        return q;
    }
#endif
    (void)pol, (void)keep;
    q = *(const uint4 *)src;
    return q;
}

/* Prefetches the line holding addr into L2 (evict-last) or L1; no register
 * is tied up waiting for it. */
__device__ __forceinline__ void lean_prefetch_l2(const void *addr)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(addr));
#else
    (void)addr;
#endif
}

__device__ __forceinline__ void lean_prefetch_l1(const void *addr)
{
    asm volatile("prefetch.global.L1 [%0];" ::"l"(addr));
}

/* N consecutive samples (channel step ch) from pixel x of a row packed into
 * bytes of N / 4 words, zero from the width w on. */
template <int N>
__device__ __forceinline__ void lean_gather(const uint8_t *row, i64 x, i64 w, i64 ch,
                                            unsigned out[N / 4])
{
#pragma unroll
    for (int k = 0; k < N / 4; k++) {
        unsigned wd = 0;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const i64 xi = x + 4 * k + j;
            if (xi < w)
                wd |= (unsigned)row[xi * ch] << (8 * j);
        }
        out[k] = wd;
    }
}

/* A lean tile's place: its first input byte and first table element (row y0
 * + its first row, column x0, the plane's channel), x0, the rows inside the
 * image (at most LN_TH), whether it is full width and loads 16-byte chunks. */
struct lean_tile {
    const uint8_t *in;
    char *out;
    i64 x0;
    int nrows;
    bool full, vec_in;
};

__device__ __forceinline__ lean_tile lean_locate(const psi_cu_plan &p, const lb_geom &g,
                                                 const tile_pos &tp)
{
    const i64 rows = p.y1 - p.y0, ytile = (i64)tp.ty * LN_TH;
    lean_tile lt;
    lt.x0 = (i64)tp.tx * LB_TW;
    lt.nrows = rows - ytile < LN_TH ? (int)(rows - ytile) : LN_TH;
    lt.in = (const uint8_t *)(tp.b.in + (p.y0 + ytile) * p.in_row) + lt.x0 * p.channels;
    lt.out = tp.b.out + (p.y0 + ytile) * p.out_row;
    lt.full = lt.x0 + LB_TW <= p.width;
    lt.vec_in = g.vec_in && lt.full;
    return lt;
}

/* Step 2 of a lean tile, by warp 0: the bottom row P(x) = L(x, TH - 1) and
 * right column L(TW - 1, r) of the local table from the column and row sums
 * in s, then the serial look-backs (tile_lookbacks()) into s->top and
 * s->edge. Out of line, so that its registers do not weigh on steps 1 and 3.
 * Bit 2 of hints skips the look-backs (a timing experiment only: the table
 * is then wrong). */
__device__ __noinline__ void lean_lookbacks(const psi_cu_plan &p, const lb_geom &g,
                                            lean_smem *s, u64 ticket, u64 epoch, unsigned lane)
{
    constexpr int TH = LN_TH;
    if (g.hints & 4) {
#pragma unroll
        for (int k = 0; k < 8; k++)
            s->top[lane * 8 + k] = 0;
#pragma unroll
        for (int m = 0; m < TH / 32; m++)
            s->edge[lane + 32 * m] = 0;
        return;
    }
    const tile_pos tp = tile_at(p, g, ticket, epoch, 1, sizeof(unsigned));
    unsigned P[8];
#pragma unroll
    for (int k = 0; k < 8; k++)
        P[k] = s->bottom[lane * 8 + k];
#pragma unroll
    for (int k = 1; k < 8; k++)
        P[k] += P[k - 1];
    const unsigned incl = warp_inclusive(P[7], lane);
    const unsigned ex = warp_exclusive_from_inclusive(incl, lane);
#pragma unroll
    for (int k = 0; k < 8; k++)
        P[k] += ex;
    unsigned carry = 0;
#pragma unroll
    for (int m = 0; m < TH / 32; m++) {
        const unsigned rc = warp_inclusive(s->rowsum[lane + 32 * m], lane);
        s->rowcum[lane + 32 * m] = rc + carry;
        carry += __shfl_sync(0xffffffffu, rc, 31);
    }
    __syncwarp();
    tile_lookbacks<unsigned, TH>(p, g, tp.b.out, tp.t, tp.tx, tp.ty, tp.epoch, lane, P,
                                 s->rowcum, s->top, s->edge);
}

/* Steps 1-3 of a lean tile, by the whole block. VEC: full-width tile with
 * 16-byte aligned input and output rows and one channel (16-byte loads,
 * 4-byte reloads, 16-byte stores); else element accesses with channel step
 * and the right image edge. */
template <bool VEC>
__device__ __forceinline__ void lean_tile_steps(const psi_cu_plan &p, const lb_geom &g,
                                                lean_smem *s, const u64 *s_ticket,
                                                const u64 *s_epoch)
{
    constexpr int R = LN_R, V = 4, G = 2;
    const unsigned tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int row0 = (int)warp * R;
    const i64 ch = VEC ? 1 : p.channels;

    /* 1: load and sum. Lane l reads bytes 16 (l & 15) .. + 15 of the warp's
     * rows 2k + (l >> 4), k < 8. Column sums stay packed (bytes 0 and 2 of
     * each word in the 16-bit halves of `even`, bytes 1 and 3 in `odd`: at
     * most 16 x 255 per half), row sums go through __dp4a and half-warp sums
     * of two rows at once (a row sums to at most 256 x 255 < 2^16). */
    {
        const lean_tile lt = lean_locate(p, g, tile_at(p, g, *s_ticket, *s_epoch, 1, 4));
        const unsigned half = lane >> 4, chunk = lane & 15;
        const u64 pol = lean_keep_policy();
        const bool keep = (g.lean & 4) == 0;
        unsigned even[4] = {0, 0, 0, 0}, odd[4] = {0, 0, 0, 0};
        if (VEC && (g.lean & 8) == 0) /* all of the lane's rows on their way to L2 */
#pragma unroll
            for (int k = 0; k < 8; k++) {
                const int r = row0 + 2 * k + (int)half;
                if (r < lt.nrows)
                    lean_prefetch_l2(lt.in + (i64)r * p.in_row + 16 * chunk);
            }
#pragma unroll
        for (int kb = 0; kb < 8; kb += 2) { /* two rows per lane in registers */
            unsigned q[2][4];
#pragma unroll
            for (int k = 0; k < 2; k++) {
                const int r = row0 + 2 * (kb + k) + (int)half;
                q[k][0] = q[k][1] = q[k][2] = q[k][3] = 0;
                if (r < lt.nrows) {
                    const uint8_t *row = lt.in + (i64)r * p.in_row;
                    if (VEC) {
                        const uint4 v = lean_load16(row + 16 * chunk, pol, keep);
                        q[k][0] = v.x, q[k][1] = v.y, q[k][2] = v.z, q[k][3] = v.w;
                    } else {
                        lean_gather<16>(row, 16 * chunk, p.width - lt.x0, ch, q[k]);
                    }
                }
            }
            unsigned part[2] = {0, 0};
#pragma unroll
            for (int k = 0; k < 2; k++)
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    even[j] += q[k][j] & 0x00ff00ffu;
                    odd[j] += (q[k][j] >> 8) & 0x00ff00ffu;
                    part[k] = __dp4a(q[k][j], 0x01010101u, part[k]);
                }
            unsigned both = part[0] | part[1] << 16;
#pragma unroll
            for (int d = 8; d > 0; d >>= 1)
                both += __shfl_xor_sync(0xffffffffu, both, d);
            if (chunk == 0) {
                s->rowsum[row0 + 2 * kb + half] = both & 0xffffu;
                s->rowsum[row0 + 2 * kb + 2 + half] = both >> 16;
            }
        }
#pragma unroll
        for (int j = 0; j < 4; j++) {
            even[j] += __shfl_xor_sync(0xffffffffu, even[j], 16);
            odd[j] += __shfl_xor_sync(0xffffffffu, odd[j], 16);
        }
        /* both halves hold the warp's sums: half 0 stores words 0-1, half 1
         * words 2-3 (columns 16 chunk + 4 j .. + 3) */
#pragma unroll
        for (int jj = 0; jj < 2; jj++) {
            const unsigned ev = half ? even[2 + jj] : even[jj];
            const unsigned od = half ? odd[2 + jj] : odd[jj];
            *(uint4 *)&s->colw[warp][16 * chunk + 4 * (2 * half + jj)] =
                make_uint4(ev & 0xffffu, od & 0xffffu, ev >> 16, od >> 16);
        }
    }
    __syncthreads();
    { /* one thread per column: the sums of the rows above each warp */
        unsigned run = 0;
#pragma unroll
        for (int wq = 0; wq < LN_WARPS; wq++) {
            const unsigned c = s->colw[wq][tid];
            s->colw[wq][tid] = run;
            run += c;
        }
        s->bottom[tid] = run;
    }
    __syncthreads();

    /* 2: the look-backs. */
    if (warp == 0)
        lean_lookbacks(p, g, s, *s_ticket, *s_epoch, lane);
    __syncthreads();

    /* 3: the table rows of this warp, the input read again (prefetched into
     * L1 AHEAD rows ahead). Lane l holds columns 128 gi + 4 l .. + 3 (gi < 2); acc
     * starts at Top(x) + L(x, row0 - 1). */
    const lean_tile lt = lean_locate(p, g, tile_at(p, g, *s_ticket, *s_epoch, 1, 4));
    unsigned acc[G][V];
#pragma unroll
    for (int gi = 0; gi < G; gi++)
#pragma unroll
        for (int j = 0; j < V; j++)
            acc[gi][j] = s->colw[warp][gi * 32 * V + lane * V + j];
    scan_row<unsigned, G, V>(acc, lane); /* zeros for warp 0 */
#pragma unroll
    for (int gi = 0; gi < G; gi++)
#pragma unroll
        for (int j = 0; j < V; j++)
            acc[gi][j] += s->top[gi * 32 * V + lane * V + j];
    const int my_rows = lt.nrows - row0; /* may be <= 0 */
    const uint8_t *irow = lt.in + (i64)row0 * p.in_row + (i64)lane * V * ch;
    unsigned *orow =
        (unsigned *)(lt.out + (i64)row0 * p.out_row) + (lt.x0 + (i64)lane * V) * ch;
    const i64 left = p.width - (lt.x0 + (i64)lane * V); /* columns from the lane's first */
    constexpr int AHEAD = 4; /* rows prefetched into L1 ahead of their reload */
    if (VEC && (g.lean & 8) == 0)
#pragma unroll
        for (int i = 0; i < AHEAD; i++)
            if (i < my_rows)
                lean_prefetch_l1(irow + (i64)i * p.in_row + (lane & 1) * 32 * V);
#pragma unroll 1 /* 32 registers; the other 63 warps of the SM hide the latency */
    for (int i = 0; i < R; i++) {
        if (i >= my_rows)
            break; /* the same for the whole warp */
        if (VEC && (g.lean & 8) == 0 && i + AHEAD < my_rows)
            lean_prefetch_l1(irow + (i64)AHEAD * p.in_row + (lane & 1) * 32 * V);
        unsigned v[G][V];
#pragma unroll
        for (int gi = 0; gi < G; gi++) {
            unsigned wd;
            if (VEC)
                wd = *(const unsigned *)(irow + gi * 32 * V);
            else
                lean_gather<4>(irow, gi * 32 * V, left, ch, &wd);
#pragma unroll
            for (int j = 0; j < V; j++)
                v[gi][j] = (wd >> (8 * j)) & 0xffu;
        }
        scan_row<unsigned, G, V>(v, lane);
        const unsigned e = s->edge[row0 + i];
#pragma unroll
        for (int gi = 0; gi < G; gi++) {
            unsigned u[V];
#pragma unroll
            for (int j = 0; j < V; j++) {
                acc[gi][j] += v[gi][j];
                u[j] = acc[gi][j] + e;
            }
            unsigned *dst = orow + gi * 32 * V * ch;
            if (VEC) {
                const uint4 q = make_uint4(u[0], u[1], u[2], u[3]);
                if (g.hints & 2)
                    __stcs((uint4 *)dst, q);
                else
                    *(uint4 *)dst = q;
            } else {
#pragma unroll
                for (int j = 0; j < V; j++)
                    if (gi * 32 * V + j < left)
                        dst[j * ch] = u[j];
            }
        }
        irow += p.in_row;
        orow = (unsigned *)((char *)orow + p.out_row);
    }
}

/* The slow path (partial, unaligned or multi-channel tiles), out of line. */
__device__ __noinline__ void lean_tile_slow(const psi_cu_plan &p, const lb_geom &g,
                                            lean_smem *s, const u64 *s_ticket,
                                            const u64 *s_epoch)
{
    lean_tile_steps<false>(p, g, s, s_ticket, s_epoch);
}

/* Blocks of 256 per SM that the architecture can hold: 4 on Turing (1024
 * threads per SM), 6 on sm_86 / sm_89 (1536), else as asked. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define PSI_LN_MINB(b) ((b) > 4 ? 4 : (b))
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ != 800 && __CUDA_ARCH__ < 900
#define PSI_LN_MINB(b) ((b) > 6 ? 6 : (b))
#else
#define PSI_LN_MINB(b) (b)
#endif

template <int MINB>
__global__ void __launch_bounds__(LN_THREADS, PSI_LN_MINB(MINB))
    lean_kernel(const __grid_constant__ psi_cu_plan p, const __grid_constant__ lb_geom g)
{
    __shared__ __align__(16) lean_smem s;
    __shared__ u64 s_ticket, s_epoch;
    pdl_begin(g);
    const tile_pos tp = take_tile(p, g, 1, sizeof(unsigned), &s_ticket, &s_epoch);
    const bool vec = g.vec_in && g.vec_out && ((i64)tp.tx + 1) * LB_TW <= p.width;
    if (vec)
        lean_tile_steps<true>(p, g, &s, &s_ticket, &s_epoch);
    else
        lean_tile_slow(p, g, &s, &s_ticket, &s_epoch);
    if (threadIdx.x == 0)
        finish_block((psi_cu_header *)p.ws, g.total, g.hints & 8);
}

template <int MINB>
static int lean_launch(const psi_cu_plan *p, const lb_choice &c)
{
    lb_geom g;
    int err = lb_geometry(p, 1, sizeof(unsigned), LB_TW, LN_TH, c.hints, &g);
    if (err || g.total == 0)
        return err;
    g.lean = c.lean;
    /* The tile load moves 16-byte chunks: rows and planes 16-byte aligned. */
    g.vec_in = p->channels == 1 && (uintptr_t)p->in % 16 == 0 && p->in_row % 16 == 0 &&
               (p->depth == 1 || p->in_slice % 16 == 0);
    return lb_launch(lean_kernel<MINB>, (unsigned)g.total, LN_THREADS, 0, p, c, g);
}

bool lean_applies(const psi_cu_plan *p, const lb_choice &c)
{
    return c.lean && c.staged && c.rows == LN_R && p->tin == PSI_CU_IN_U8 &&
           p->acc == PSI_CU_U32 && !p->squared;
}

int lookback_lean_dispatch(const psi_cu_plan *p, const lb_choice &c)
{
    return (c.lean & 2) ? lean_launch<6>(p, c) : lean_launch<8>(p, c);
}

} // namespace psi_cu

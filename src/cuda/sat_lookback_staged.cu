/*
 * sat_lookback_staged.cu - the staged kernel of cuda.lookback: the same
 * single pass as sat_lookback.cu (every input element read once, every table
 * element written once, decoupled look-back on both axes), but a block keeps
 * its tile in shared memory as raw input instead of holding the local table in
 * registers, so each block needs few registers and several blocks share an
 * SM. While one block waits on its look-backs, the others' loads and stores
 * keep the memory system busy (the register kernel fits 2 blocks per SM, whose
 * 16 warps all idle during the wait).
 *
 * A block of 8 warps takes a tile of TW = 256 columns x TH = 8 R rows (R 16 or
 * 8 for 8-bit input, 8 or 4 for 16-bit and f32 input, else 4; see
 * lb_staged_rows()); f64 -> f64 has no staged kernel:
 *   1. takes its tile number from the workspace ticket (in the first wave,
 *      after a wait that sets an SM's blocks apart: lb_geom::stagger_ns);
 *   2. copies the tile's input into shared memory (16-byte cp.async copies,
 *      or loads before sm_80, for aligned, single-channel full-width tiles;
 *      element loads otherwise, zero past the image);
 *   3. sums each warp's R rows per column and each row across the tile;
 *   4. warp 0 turns these into the bottom row P(x) = L(x, TH - 1) and the
 *      right column L(TW - 1, r) and runs tile_lookbacks() (Top and E);
 *      f32 -> f32 (ROW_PRESCAN): the other warps meanwhile scan the tile's
 *      rows along x in place, and warp 0 joins them when its look-backs end;
 *   5. each warp re-reads its rows from shared memory, scans them along x
 *      (ROWSCAN: u8 -> u32 without squares two rows per scan, packed in the
 *      halves of one word; f32 -> f32 already scanned in step 4),
 *      accumulates down its rows from the offset of the rows above it, and
 *      writes
 *      I(x, y) = L(x, y) + Top(x) + E(y) with 16-byte stores that cover 512
 *      contiguous bytes per warp instruction.
 * Lane l holds, per row, G groups of V = 16 / sizeof(accumulator) adjacent
 * columns: columns 32 V g + V l .. + V - 1 of group g.
 * Integer tables are modular (bit-exact in any order); float tables round in
 * a different order from the CPU's (within the bound the tests check).
 */
#include "sat_lookback.cuh"

#include <atomic>
#include <type_traits>

namespace psi_cu {

constexpr int ST_WARPS = 8, ST_THREADS = 32 * ST_WARPS;
static_assert(ST_THREADS == LB_TW, "one thread per tile column in step 3");

/* How step 5 scans a warp's rows along x (the kernel's ROWSCAN, by type pair:
 * staged_launch_rows()): ROW_PLAIN one row after the other (scan_row());
 * ROW_U8_PAIRS (u8 -> u32 without squares) two rows per scan, packed in the
 * halves of one word (scan_u8_row_pair()); ROW_PRESCAN (f32 -> f32) the rows
 * scanned in step 4 instead, two at a time (scan_two_rows()), in place in
 * shared memory while warp 0 waits on its look-backs, so that step 5 only
 * adds and stores (prescan_rows()). */
constexpr int ROW_PLAIN = 0, ROW_U8_PAIRS = 1, ROW_PRESCAN = 2;

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

/* Where lane `lane`'s V adjacent elements of group gi of tile row r start in
 * a tile of LB_TW columns: the layout of scan_row() (group g covers columns
 * 32 V g .., lane l columns 32 V g + V l .. + V - 1). */
template <int V, typename T>
__device__ __forceinline__ T *lane_group(T *tile, int r, int gi, unsigned lane)
{
    return tile + r * LB_TW + gi * 32 * V + lane * V;
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

/* scan_row() of two rows a and b at once, their shuffle chains interleaved
 * step by step (the same additions in the same order per row, so float
 * tables round exactly as with scan_row()): twice the independent shuffles
 * in flight. */
template <typename TAcc, int G, int V>
__device__ __forceinline__ void scan_two_rows(TAcc a[G][V], TAcc b[G][V], unsigned lane)
{
    TAcc carry_a = (TAcc)0, carry_b = (TAcc)0;
#pragma unroll
    for (int g = 0; g < G; g++) {
#pragma unroll
        for (int j = 1; j < V; j++) {
            a[g][j] += a[g][j - 1];
            b[g][j] += b[g][j - 1];
        }
        TAcc ia = a[g][V - 1], ib = b[g][V - 1];
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const TAcc oa = __shfl_up_sync(0xffffffffu, ia, d);
            const TAcc ob = __shfl_up_sync(0xffffffffu, ib, d);
            if (lane >= (unsigned)d) {
                ia += oa;
                ib += ob;
            }
        }
        TAcc ea = warp_exclusive_from_inclusive(ia, lane);
        TAcc eb = warp_exclusive_from_inclusive(ib, lane);
        if (g > 0) {
            ea += carry_a;
            eb += carry_b;
        }
#pragma unroll
        for (int j = 0; j < V; j++) {
            a[g][j] += ea;
            b[g][j] += eb;
        }
        if (g + 1 < G) {
            carry_a += __shfl_sync(0xffffffffu, ia, 31);
            carry_b += __shfl_sync(0xffffffffu, ib, 31);
        }
    }
}

/* The sums over the warp of R values per lane (R a power of 2 up to 32),
 * all rows in one butterfly: each step halves the values a lane holds by
 * trading half of them with the lane d apart, then the single value is
 * summed over the lanes left. Returns the sum of row (lane >> (5 - log2 R))
 * in every lane. Each row's sum meets its partial sums in the same pairs as
 * warp_sum() does, so floats round the same; R - 1 + 5 - log2 R shuffles
 * instead of 5 R (9 instead of 40 for R = 8). */
template <typename T, int R>
__device__ __forceinline__ T warp_row_sums(T v[R], unsigned lane)
{
    static_assert(R >= 1 && R <= 32 && (R & (R - 1)) == 0, "R a power of 2 up to 32");
    int d = 16;
#pragma unroll
    for (int n = R; n > 1; n >>= 1, d >>= 1) {
        const bool upper = (lane & (unsigned)d) != 0; /* keeps the upper half */
#pragma unroll
        for (int k = 0; k < n / 2; k++) {
            const T send = upper ? v[k] : v[k + n / 2];
            const T keep = upper ? v[k + n / 2] : v[k];
            v[k] = keep + __shfl_xor_sync(0xffffffffu, send, d);
        }
    }
    T s = v[0];
#pragma unroll
    for (; d > 0; d >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, d);
    return s;
}

/* Step 4 of ROW_PRESCAN (a table of the input's own type, TIn == TAcc):
 * the warp takes pairs of tile rows from the shared counter *next (lane 0,
 * atomicAdd) until none is left, scans each pair along x with
 * scan_two_rows() and stores the scanned rows back over the tile, in the
 * layout of scan_row(). Called by every warp once it has no look-back to
 * run, so the scans fill the time warp 0 waits on its neighbours, and warp 0
 * helps when its look-backs end early. The scanned values are those of
 * scan_row() row by row, so the table rounds exactly as there; step 5 is
 * then only additions and stores. */
template <typename TAcc, int TH, int G, int V>
__device__ __forceinline__ void prescan_rows(TAcc *s_tile, int *next, int squared,
                                             unsigned lane)
{
    __syncwarp(); /* warp 0's lanes come apart from its look-backs */
    for (;;) {
        int r = 0;
        if (lane == 0)
            r = atomicAdd(next, 2);
        r = __shfl_sync(0xffffffffu, r, 0);
        if (r >= TH)
            break;
        TAcc a[G][V], b[G][V];
#pragma unroll
        for (int gi = 0; gi < G; gi++) {
            read_group<TAcc, TAcc, V>(lane_group<V>(s_tile, r, gi, lane), squared, a[gi]);
            read_group<TAcc, TAcc, V>(lane_group<V>(s_tile, r + 1, gi, lane), squared, b[gi]);
        }
        scan_two_rows<TAcc, G, V>(a, b, lane);
#pragma unroll
        for (int gi = 0; gi < G; gi++) {
            union {
                uint4 q;
                TAcc e[V];
            } ua, ub;
#pragma unroll
            for (int j = 0; j < V; j++) {
                ua.e[j] = a[gi][j];
                ub.e[j] = b[gi][j];
            }
            *(uint4 *)lane_group<V>(s_tile, r, gi, lane) = ua.q;
            *(uint4 *)lane_group<V>(s_tile, r + 1, gi, lane) = ub.q;
        }
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

/* Step 5 for u8 -> u32 without squares: rows r and r + 1 of 8-bit samples
 * scanned along x at once, packed in the 16-bit halves of one word (row r in
 * bits 0-15), as scan_row() lays out a row: lane l's group g covers columns
 * 128 g + 4 l .. + 3. A row of 256 samples sums to at most 65280, so no half
 * carries into the other, and one scan serves two rows: half the shuffles
 * and adds of scanning them one by one. */
template <int G>
__device__ __forceinline__ void scan_u8_row_pair(const uint8_t *s_tile, int r, unsigned lane,
                                                 unsigned v[G][4])
{
    static_assert(G * 128 == LB_TW, "4 bytes per lane and group");
#pragma unroll
    for (int gi = 0; gi < G; gi++) {
        const unsigned a = *(const unsigned *)lane_group<4>(s_tile, r, gi, lane);
        const unsigned b = *(const unsigned *)lane_group<4>(s_tile, r + 1, gi, lane);
        const unsigned a02 = a & 0x00ff00ffu, a13 = (a >> 8) & 0x00ff00ffu;
        const unsigned b02 = b & 0x00ff00ffu, b13 = (b >> 8) & 0x00ff00ffu;
        v[gi][0] = (a02 & 0xffffu) | b02 << 16;
        v[gi][1] = (a13 & 0xffffu) | b13 << 16;
        v[gi][2] = a02 >> 16 | (b02 & 0xffff0000u);
        v[gi][3] = a13 >> 16 | (b13 & 0xffff0000u);
    }
    scan_row<unsigned, G, 4>(v, lane);
}

/* Copies 16 bytes from global to shared memory without registers
 * (cp.async, sm_80 and newer; a plain copy on older GPUs, whose kernels do
 * not call it); evict_first: an L2 policy that evicts the line first.
 * Completed by async_copy_wait(). */
__device__ __forceinline__ void async_copy16(void *dst, const void *src, bool evict_first)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    if (evict_first) {
        u64 policy;
        asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
        asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" ::"r"(d),
                     "l"(src), "l"(policy)
                     : "memory");
    } else {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
    }
#else
    *(uint4 *)dst = *(const uint4 *)src;
    (void)evict_first;
#endif
}

/* Waits for this thread's async_copy16() copies. */
__device__ __forceinline__ void async_copy_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

template <typename TIn, typename TAcc, int R>
struct staged_layout {
    static constexpr int TW = LB_TW, TH = ST_WARPS * R;
    static constexpr size_t tile = (size_t)TH * TW * sizeof(TIn);
    /* TAcc [7][TW]: warps 0-6's column sums, then the sums of the rows above
     * warps 1-7 (warp 7's column sums go to bottom) */
    static constexpr size_t colw = tile;
    static constexpr size_t top = colw + (size_t)(ST_WARPS - 1) * TW * sizeof(TAcc);
    static constexpr size_t bottom = top + TW * sizeof(TAcc);
    static constexpr size_t rowsum = bottom + TW * sizeof(TAcc);         /* TAcc [TH] */
    static constexpr size_t rowcum = rowsum + TH * sizeof(TAcc);
    static constexpr size_t edge = rowcum + TH * sizeof(TAcc);
    static constexpr size_t bytes = edge + TH * sizeof(TAcc);
};

/* Turing (sm_75) runs at most 1024 threads per SM: 4 blocks of 256. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define PSI_ST_MINB(b) ((b) > 4 ? 4 : (b))
#else
#define PSI_ST_MINB(b) (b)
#endif

/* Where a staged block's tile lies and what of it the image covers: the
 * plane's pointers, the image width and channels, the rows of this call, the
 * tile's first column x0 and first row ytile (within the call's rows), and
 * whether the tile's TW columns all lie in the image. */
struct staged_pos {
    plane_ptrs b;
    i64 w, ch, rows, x0, ytile;
    bool full;
};

/* First wave only: this block's share of the stagger that sets an SM's
 * blocks apart (lb_geom::stagger_ns), a countdown of sleeps by thread 0 (a
 * %globaltimer loop here made the u8 -> u32 kernel spill 16 bytes). */
template <int MINB>
__device__ __forceinline__ void stagger_first_wave(const lb_geom &g, unsigned tid)
{
    if (g.stagger_ns && tid == 0 && blockIdx.x < MINB * g.stagger_wave)
        for (unsigned k = blockIdx.x / g.stagger_wave * (unsigned)g.stagger_ns / 256; k; k--)
            __nanosleep(256);
}

/* Step 2: the tile's TH x TW input samples into s_tile (zeros past the
 * image), by all threads: by cp.async where it can (sm_80 and newer, aligned
 * single-channel full-width tiles), the whole tile in flight at once without
 * holding registers; else through registers, up to 8 16-byte chunks per
 * thread at a time; element by element for other tiles. The caller's
 * barrier follows. */
template <typename TIn, int TH, int TW>
__device__ __forceinline__ void load_tile(const psi_cu_plan &p, const lb_geom &g,
                                          const staged_pos &sp, unsigned tid, TIn *s_tile)
{
    const plane_ptrs &b = sp.b;
    const i64 w = sp.w, ch = sp.ch, rows = sp.rows, x0 = sp.x0, ytile = sp.ytile;
    const bool full = sp.full;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    constexpr bool can_async = true;
#else
    constexpr bool can_async = false;
#endif
    if (can_async && g.vec_in && full && g.async_copy) {
        constexpr int CPR = TW * (int)sizeof(TIn) / 16; /* 16-byte chunks per row */
        constexpr int PER = TH * CPR / ST_THREADS;
#pragma unroll
        for (int k = 0; k < PER; k++) {
            const int c = k * ST_THREADS + (int)tid, r = c / CPR, o = c % CPR;
            const i64 yl = ytile + r;
            uint4 *dst = (uint4 *)s_tile + c;
            if (yl < rows)
                async_copy16(dst,
                             (const uint4 *)(b.in + (p.y0 + yl) * p.in_row +
                                             x0 * (i64)sizeof(TIn)) + o,
                             g.hints & 1);
            else
                *dst = make_uint4(0, 0, 0, 0);
        }
        async_copy_wait();
    } else if (g.vec_in && full) {
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

/* Step 3, by each warp on its R rows from row0: the sums of its rows
 * (s_rowsum[row0 ..]) and of its columns (s_colsum[TW]): packed for
 * u8 -> u32 without squares (sums_u8_packed()), else one row after the
 * other, with the row sums by a butterfly over the warp for wider input. */
template <typename TIn, typename TAcc, int R, int G, int V>
__device__ __forceinline__ void warp_tile_sums(const psi_cu_plan &p, const TIn *s_tile, int row0,
                                               unsigned lane, TAcc *s_rowsum, TAcc *s_colsum)
{
    /* Where lane group gi of the warp's row i lies in the tile. */
    auto tile_group = [&](int i, int gi) { return lane_group<V>(s_tile, row0 + i, gi, lane); };
    bool summed = false;
    if constexpr (std::is_same<TIn, uint8_t>::value && std::is_same<TAcc, unsigned>::value) {
        if (!p.squared) { /* u8 -> u32: packed sums */
            sums_u8_packed<R, G>(s_tile, row0, lane, s_rowsum, s_colsum);
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
        /* Wider input sums a warp's rows in one butterfly (warp_row_sums());
         * 8-bit input keeps warp_sum(): with the tree the u8 -> u32 kernel of
         * 16 rows per warp spilled, and u8 -> u64 was slower */
        constexpr bool tree = sizeof(TIn) > 1;
        TAcc part[R];
#pragma unroll
        for (int i = 0; i < R; i++) {
            TAcc v[G][V];
            part[i] = (TAcc)0;
#pragma unroll
            for (int gi = 0; gi < G; gi++) {
                read_group<TIn, TAcc, V>(tile_group(i, gi), p.squared, v[gi]);
#pragma unroll
                for (int j = 0; j < V; j++) {
                    col[gi][j] += v[gi][j];
                    part[i] += v[gi][j];
                }
            }
            if (!tree) {
                const TAcc sum = warp_sum(part[i]);
                if (lane == 0)
                    s_rowsum[row0 + i] = sum;
            }
        }
        if constexpr (tree) { /* lanes 32 / R k .. 32 / R (k + 1) - 1 hold row k's sum */
            constexpr int LOG_R = R >= 32 ? 5 : R >= 16 ? 4 : R >= 8 ? 3 : R >= 4 ? 2
                                : R >= 2  ? 1 : 0;
            const TAcc sum = warp_row_sums<TAcc, R>(part, lane);
            if ((lane & (32u / R - 1)) == 0)
                s_rowsum[row0 + (int)(lane >> (5 - LOG_R))] = sum;
        }
#pragma unroll
        for (int gi = 0; gi < G; gi++)
#pragma unroll
            for (int j = 0; j < V; j++)
                s_colsum[gi * 32 * V + lane * V + j] = col[gi][j];
    }
}

/* Step 3's end, one thread per column (tid): slot wq of s_colw becomes the
 * sum of the rows of warps 0..wq, the offset of warp wq + 1; s_bottom (warp
 * 7's column sums) becomes the tile's bottom row. */
template <typename TAcc, int TW>
__device__ __forceinline__ void fold_column_sums(TAcc *s_colw, TAcc *s_bottom, unsigned tid)
{
    TAcc run = (TAcc)0;
#pragma unroll
    for (int wq = 0; wq + 1 < ST_WARPS; wq++) {
        run += s_colw[wq * TW + tid];
        s_colw[wq * TW + tid] = run;
    }
    s_bottom[tid] += run;
}

/* Step 4, by warp 0: the bottom row P(x) = L(x, TH - 1) and the right column
 * rowcum(r) = L(TW - 1, r) of the tile's local table, then the look-backs
 * (tile_lookbacks()): the horizontal one on the tile's share of the table
 * column at its right edge, so E(r) = I(x0 - 1, y0 + r) and the corner term
 * is 0. Leaves Top(x) in s_top and E(r) in s_edge. */
template <typename TAcc, int TH>
__device__ __forceinline__ void edge_lookbacks(const psi_cu_plan &p, const lb_geom &g,
                                               const tile_pos &tp, unsigned lane,
                                               const TAcc *s_bottom, const TAcc *s_rowsum,
                                               TAcc *s_rowcum, TAcc *s_top, TAcc *s_edge)
{
    TAcc P[8]; /* the bottom row P(x) = L(x, TH - 1) of the lane's 8 columns */
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
    TAcc carry = (TAcc)0; /* the right column rowcum(r) = L(TW - 1, r) */
#pragma unroll
    for (int m = 0; m < TH / 32; m++) {
        TAcc rc = warp_inclusive(s_rowsum[lane + 32 * m], lane);
        s_rowcum[lane + 32 * m] = m > 0 ? rc + carry : rc;
        carry += __shfl_sync(0xffffffffu, rc, 31);
    }
    __syncwarp();
    tile_lookbacks<TAcc, TH>(p, g, tp.b.out, tp.t, tp.tx, tp.ty, tp.epoch, lane, P, s_rowcum,
                             s_top, s_edge);
}

/* Step 5's start, by each warp: acc = Top(x) + L(x, row0 - 1), the table
 * row above the warp's first row less E, from the folded column sums of the
 * warps above it (zeros for warp 0) scanned along x. */
template <typename TAcc, int TW, int G, int V>
__device__ __forceinline__ void warp_carry_in(unsigned warp, unsigned lane, const TAcc *s_colw,
                                              const TAcc *s_top, TAcc acc[G][V])
{
#pragma unroll
    for (int gi = 0; gi < G; gi++)
#pragma unroll
        for (int j = 0; j < V; j++)
            acc[gi][j] =
                warp == 0 ? (TAcc)0 : s_colw[(warp - 1) * TW + gi * 32 * V + lane * V + j];
    scan_row<TAcc, G, V>(acc, lane); /* zeros for warp 0 */
#pragma unroll
    for (int gi = 0; gi < G; gi++)
#pragma unroll
        for (int j = 0; j < V; j++)
            acc[gi][j] += s_top[gi * 32 * V + lane * V + j];
}

/* Step 5, by each warp on its R rows from row0: each row scanned along x as
 * ROWSCAN says, added to acc, and written as I(x, y) = acc + E(row) + corner
 * with 16-byte stores where the table allows them (a warp instruction covers
 * 512 contiguous bytes), else sample by sample. */
template <typename TIn, typename TAcc, int R, int G, int V, int ROWSCAN>
__device__ __forceinline__ void store_rows(const psi_cu_plan &p, const lb_geom &g,
                                           const staged_pos &sp, int row0, unsigned lane,
                                           const TIn *s_tile, const TAcc *s_edge, TAcc corner,
                                           TAcc acc[G][V])
{
    const i64 w = sp.w, ch = sp.ch, rows = sp.rows, x0 = sp.x0, ytile = sp.ytile;
    const bool vec_out = g.vec_out && sp.full;
    /* Where lane group gi of the warp's row i lies in the tile. */
    auto tile_group = [&](int i, int gi) { return lane_group<V>(s_tile, row0 + i, gi, lane); };
    /* Row i of the warp: acc += its scanned samples v(gi, j), then the table
     * row acc + E(row) + corner (rows past the image: nothing, not even the
     * edge read, which keeps the u8 -> u32 kernels of 16 rows per warp within
     * their 48 registers). */
    auto write_row = [&](int i, auto &&v) {
        const i64 yl = ytile + row0 + i;
        if (yl >= rows)
            return;
        const TAcc e = s_edge[row0 + i] + corner;
        char *orow = sp.b.out + (p.y0 + yl) * p.out_row;
#pragma unroll
        for (int gi = 0; gi < G; gi++) {
            union {
                uint4 q;
                TAcc e[V];
            } u;
#pragma unroll
            for (int j = 0; j < V; j++) {
                acc[gi][j] += v(gi, j);
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
    };
    if constexpr (ROWSCAN == ROW_U8_PAIRS) { /* u8 -> u32 without squares */
        static_assert(std::is_same<TIn, uint8_t>::value && std::is_same<TAcc, unsigned>::value &&
                          R % 2 == 0,
                      "rows in pairs: u8 -> u32");
#pragma unroll
        for (int i = 0; i < R; i += 2) {
            TAcc v[G][V];
            scan_u8_row_pair<G>(s_tile, row0 + i, lane, v);
            write_row(i, [&](int gi, int j) { return v[gi][j] & 0xffffu; });
            write_row(i + 1, [&](int gi, int j) { return v[gi][j] >> 16; });
        }
    } else if constexpr (ROWSCAN == ROW_PRESCAN) { /* rows scanned in step 4 */
#pragma unroll
        for (int i = 0; i < R; i++) {
            TAcc v[G][V];
#pragma unroll
            for (int gi = 0; gi < G; gi++)
                read_group<TIn, TAcc, V>(tile_group(i, gi), 0, v[gi]);
            write_row(i, [&](int gi, int j) { return v[gi][j]; });
        }
    } else {
#pragma unroll
        for (int i = 0; i < R; i++) {
            TAcc v[G][V];
#pragma unroll
            for (int gi = 0; gi < G; gi++)
                read_group<TIn, TAcc, V>(tile_group(i, gi), p.squared, v[gi]);
            scan_row<TAcc, G, V>(v, lane);
            write_row(i, [&](int gi, int j) { return v[gi][j]; });
        }
    }
}

/* The staged kernel: the steps of the file's head comment in order, with the
 * block's barriers between them. */
template <typename TIn, typename TAcc, int R, int MINB, int ROWSCAN>
__global__ void __launch_bounds__(ST_THREADS, PSI_ST_MINB(MINB))
    staged_kernel(psi_cu_plan p, lb_geom g)
{
    typedef staged_layout<TIn, TAcc, R> L;
    constexpr int TW = L::TW, TH = L::TH;
    constexpr int V = 16 / (int)sizeof(TAcc), G = TW / (32 * V);
    extern __shared__ __align__(16) unsigned char smem[];
    TIn *s_tile = (TIn *)smem;
    TAcc *s_colw = (TAcc *)(smem + L::colw);
    TAcc *s_top = (TAcc *)(smem + L::top);
    TAcc *s_bottom = (TAcc *)(smem + L::bottom);
    TAcc *s_rowsum = (TAcc *)(smem + L::rowsum);
    TAcc *s_rowcum = (TAcc *)(smem + L::rowcum);
    TAcc *s_edge = (TAcc *)(smem + L::edge);
    __shared__ u64 s_ticket, s_epoch;
    __shared__ TAcc s_corner;
    __shared__ int s_next_pair; /* ROW_PRESCAN: the next tile row to scan */

    psi_cu_header *hdr = (psi_cu_header *)p.ws;
    const unsigned tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    pdl_begin(g);
    stagger_first_wave<MINB>(g, tid);
    /* 1: the tile */
    const tile_pos tp = take_tile(p, g, sizeof(TIn), sizeof(TAcc), &s_ticket, &s_epoch, true);
    const i64 w = p.width;
    const i64 x0 = (i64)tp.tx * TW;
    const staged_pos sp = {tp.b, w, p.channels, p.y1 - p.y0, x0, (i64)tp.ty * TH, x0 + TW <= w};

    /* 2: the tile's input into shared memory */
    load_tile<TIn, TH, TW>(p, g, sp, tid, s_tile);
    __syncthreads();

    /* 3: column sums of each warp's rows, and row sums (warp 7 leaves its
     * column sums in the bottom row's place, which the fold turns into the
     * tile's bottom row) */
    const int row0 = (int)warp * R;
    TAcc *const s_colsum = warp + 1 < ST_WARPS ? s_colw + warp * TW : s_bottom;
    warp_tile_sums<TIn, TAcc, R, G, V>(p, s_tile, row0, lane, s_rowsum, s_colsum);
    __syncthreads();
    fold_column_sums<TAcc, TW>(s_colw, s_bottom, tid);
    if (ROWSCAN == ROW_PRESCAN && tid == 0)
        s_next_pair = 0;
    __syncthreads();

    /* 4: warp 0 runs the look-backs; f32 -> f32 (ROW_PRESCAN): the other warps
     * meanwhile scan the tile's rows in place, and warp 0 joins them */
    if (warp == 0) {
        edge_lookbacks<TAcc, TH>(p, g, tp, lane, s_bottom, s_rowsum, s_rowcum, s_top, s_edge);
        if (lane == 0)
            s_corner = (TAcc)0;
    }
    if constexpr (ROWSCAN == ROW_PRESCAN) {
        static_assert(std::is_same<TIn, TAcc>::value && R % 2 == 0,
                      "rows scanned in place: a table of the input's type");
        prescan_rows<TAcc, TH, G, V>(s_tile, &s_next_pair, p.squared, lane);
    }
    __syncthreads();
    const TAcc corner = s_corner;

    /* 5: the table rows of this warp */
    TAcc acc[G][V];
    warp_carry_in<TAcc, TW, G, V>(warp, lane, s_colw, s_top, acc);
    store_rows<TIn, TAcc, R, G, V, ROWSCAN>(p, g, sp, row0, lane, s_tile, s_edge, corner, acc);
    if (tid == 0)
        finish_block(hdr, g.total);
}

/* Staged blocks of `smem` bytes of dynamic shared memory that an SM holds
 * (227 KB per SM, 1 KB reserved per block), at least 1 and at most `cap`. */
constexpr int staged_blocks_per_sm(size_t smem, int cap)
{
    const int fit = (int)((227u << 10) / (smem + 1024));
    return fit < cap ? (fit > 0 ? fit : 1) : cap;
}

template <typename TIn, typename TAcc, int R, int MINB, int ROWSCAN>
static int staged_launch(const psi_cu_plan *p, const lb_choice &c)
{
    typedef staged_layout<TIn, TAcc, R> L;
    lb_geom g;
    size_t records;
    int err = lb_geometry(p, sizeof(TIn), sizeof(TAcc), LB_TW, L::TH, &g, &records);
    if (err || g.total == 0)
        return err;
    g.async_copy = !c.no_async_copy; /* where the device has it (lb_launch()) */
    /* The tile copy moves 16-byte chunks: rows and planes 16-byte aligned. */
    g.vec_in = p->channels == 1 && (uintptr_t)p->in % 16 == 0 && p->in_row % 16 == 0 &&
               (p->depth == 1 || p->in_slice % 16 == 0);
    /* Above 48 KB a kernel must opt in to its dynamic shared memory, and the
     * opt-in holds for the current device only: once per device (a bit per
     * device ordinal; ordinals from 64 up opt in at every launch). */
    constexpr size_t smem = L::bytes;
    static std::atomic<unsigned long long> smem_opted(0);
    if (smem > 48 * 1024) {
        int dev = 0;
        cudaError_t e = cudaGetDevice(&dev);
        if (e != cudaSuccess)
            return (int)e;
        const unsigned long long bit = dev >= 0 && dev < 64 ? 1ull << dev : 0;
        if (!(smem_opted.load(std::memory_order_relaxed) & bit)) {
            e = cudaFuncSetAttribute(staged_kernel<TIn, TAcc, R, MINB, ROWSCAN>,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
            if (e != cudaSuccess)
                return (int)e;
            smem_opted.fetch_or(bit, std::memory_order_relaxed);
        }
    }
    /* The blocks an SM holds (for the stagger), and the look-back records for
     * the store hint of 4-byte tables. */
    return lb_launch(staged_kernel<TIn, TAcc, R, MINB, ROWSCAN>, (unsigned)g.total, ST_THREADS,
                     smem, p, c, g, staged_blocks_per_sm(smem, MINB),
                     sizeof(TAcc) == 4 ? records : 0);
}

/* Launches with R rows per warp; the register budget is cut for the blocks
 * that fit an SM: 6 (42 registers) for 4-byte tables of 1-2-byte input, 4
 * otherwise, and no more than the shared memory holds
 * (staged_blocks_per_sm()). u8 -> u32 without squares and f32 -> f32 take
 * kernels of their own that scan rows in pairs (ROWSCAN): a u8 -> u32 kernel
 * holding both loops spilled at R = 16, each alone does not. */
template <typename TIn, typename TAcc, int R>
static int staged_launch_rows(const psi_cu_plan *p, const lb_choice &c)
{
    constexpr int BASE = sizeof(TAcc) == 4 && sizeof(TIn) <= 2 ? 6 : 4;
    constexpr int MINB = staged_blocks_per_sm(staged_layout<TIn, TAcc, R>::bytes, BASE);
    if constexpr (std::is_same<TIn, uint8_t>::value && std::is_same<TAcc, unsigned>::value) {
        if (!p->squared) /* the kernel that scans rows in pairs */
            return staged_launch<TIn, TAcc, R, MINB, ROW_U8_PAIRS>(p, c);
    }
    if constexpr (std::is_same<TIn, float>::value && std::is_same<TAcc, float>::value)
        return staged_launch<TIn, TAcc, R, MINB, ROW_PRESCAN>(p, c); /* rows scanned in step 4 */
    return staged_launch<TIn, TAcc, R, MINB, ROW_PLAIN>(p, c);
}

/* The tile heights built per pair (each is a kernel for every architecture
 * built, so only those a choice can reach: staged_rows and staged_min of
 * lb_shapes[] in sat_lookback.cu): 8-bit input 128 or 64 rows, 16-bit and
 * f32 input 64 or 32, the rest 32; none for f64 -> f64, which always takes
 * the register kernel (lb_choose()). */
template <typename TIn, typename TAcc>
static int staged_pick(const psi_cu_plan *p, const lb_choice &c)
{
    if constexpr (std::is_same<TIn, double>::value && std::is_same<TAcc, double>::value) {
        (void)p, (void)c;
        return (int)cudaErrorInvalidValue; /* not reached: see lb_choose() */
    } else if constexpr (sizeof(TIn) == 1) {
        return c.rows == 16 ? staged_launch_rows<TIn, TAcc, 16>(p, c)
                            : staged_launch_rows<TIn, TAcc, 8>(p, c);
    } else if constexpr (sizeof(TIn) == 2 || std::is_same<TIn, float>::value) {
        return c.rows == 8 ? staged_launch_rows<TIn, TAcc, 8>(p, c)
                           : staged_launch_rows<TIn, TAcc, 4>(p, c);
    } else {
        return staged_launch_rows<TIn, TAcc, 4>(p, c);
    }
}

int lookback_staged_dispatch(const psi_cu_plan *p, const lb_choice &c)
{
#define PSI_ST_CASE(TIN, ACC, CIN, CACC) \
    if (p->tin == TIN && p->acc == ACC)  \
        return staged_pick<CIN, CACC>(p, c);
    PSI_CU_PAIRS(PSI_ST_CASE)
#undef PSI_ST_CASE
    return (int)cudaErrorInvalidValue;
}

} // namespace psi_cu

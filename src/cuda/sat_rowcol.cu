/*
 * sat_rowcol.cu - cuda.lookback's path for small integer tables: two kernels
 * with no look-back, for planes whose table fits well inside the L2 cache.
 *
 * A small table is bound by latency, not bandwidth: at 1024^2 u8 -> u32 the
 * single-pass kernel gives one SM in two a tile (64 tiles of 64 x 256) and its
 * tiles wait on each other's flags (13 us per call, against 3.9 us for a copy
 * of the same bytes). Here every SM works and nothing waits:
 *   1. rowcol_rows: a warp per row scans it in steps of 32 samples (a warp
 *      scan plus the carry of the steps before), 32 steps loaded and scanned
 *      at once, and writes the row prefix sums into the table;
 *   2. rowcol_cols: a block per 16 columns cuts the rows into 64 chunks; each
 *      thread adds up its chunk of one column, the chunk totals are scanned in
 *      shared memory, and each thread adds its chunk again from that offset
 *      (plus the carried table row y0 - 1 of a strip), writing the final
 *      values. The table is read twice and written twice, all in L2.
 * Integer accumulators only (u32, u64: modular, so bit-exact with the CPU in
 * any order); float tables keep the single-pass kernel, whose order of
 * additions has its documented bound.
 */
#include "sat_common.cuh"
#include "sat_lookback.cuh"

#include <type_traits>

namespace psi_cu {

constexpr int RC_ROW_WARPS = 8;    /* rows per block of rowcol_rows */
constexpr int RC_STEPS = 32;       /* 32-sample steps loaded ahead per batch */
constexpr int RC_COLS = 16;        /* columns per block of rowcol_cols */
constexpr int RC_CHUNKS = 64;      /* row chunks per column */
constexpr int RC_COL_THREADS = RC_COLS * RC_CHUNKS;

/* Row prefix sums of rows [y0, y1) of every plane: warp (plane, row). */
template <typename TIn, typename TAcc>
__global__ void __launch_bounds__(32 * RC_ROW_WARPS) rowcol_rows(psi_cu_plan p)
{
    const unsigned lane = threadIdx.x & 31u;
    const i64 rows = p.y1 - p.y0;
    const i64 id = (i64)blockIdx.x * RC_ROW_WARPS + (threadIdx.x >> 5);
    if (id >= rows * p.depth * p.channels)
        return; /* whole warps leave together */
    const i64 plane = id / rows, y = p.y0 + (id - plane * rows);
    const plane_ptrs b = plane_base(p, plane, sizeof(TIn), sizeof(TAcc));
    const TIn *in = (const TIn *)(b.in + y * p.in_row);
    TAcc *out = (TAcc *)(b.out + y * p.out_row);
    const i64 w = p.width, ch = p.channels;
    TAcc carry = 0;
    for (i64 x0 = 0; x0 < w; x0 += 32 * RC_STEPS) {
        TAcc v[RC_STEPS];
#pragma unroll
        for (int s = 0; s < RC_STEPS; s++) {
            const i64 x = x0 + 32 * s + lane;
            v[s] = x < w ? sample<TAcc, TIn>(in[x * ch], p.squared) : (TAcc)0;
        }
        /* The steps' scans are independent; only their carries chain. */
        TAcc step_total[RC_STEPS];
#pragma unroll
        for (int s = 0; s < RC_STEPS; s++) {
            v[s] = warp_inclusive(v[s], lane);
            step_total[s] = __shfl_sync(0xffffffffu, v[s], 31);
        }
#pragma unroll
        for (int s = 0; s < RC_STEPS; s++) {
            const i64 x = x0 + 32 * s + lane;
            if (x < w)
                out[x * ch] = v[s] + carry;
            carry += step_total[s];
        }
    }
}

/* Column prefix sums of the row sums: block (plane, group of RC_COLS
 * columns); thread t takes column t % RC_COLS and row chunk t / RC_COLS. */
template <typename TAcc>
__global__ void __launch_bounds__(RC_COL_THREADS) rowcol_cols(psi_cu_plan p, i64 groups)
{
    __shared__ TAcc s_tot[RC_CHUNKS][RC_COLS];
    const i64 plane = blockIdx.x / groups, group = blockIdx.x - plane * groups;
    const unsigned col = threadIdx.x % RC_COLS, chunk = threadIdx.x / RC_COLS;
    const i64 x = group * RC_COLS + col, w = p.width, ch = p.channels;
    const i64 rows = p.y1 - p.y0, per = (rows + RC_CHUNKS - 1) / RC_CHUNKS;
    const i64 r0 = p.y0 + (i64)chunk * per;
    const i64 r1 = r0 + per < p.y1 ? r0 + per : p.y1;
    const plane_ptrs b = plane_base(p, plane, 1, sizeof(TAcc));
    char *base = b.out + x * ch * (i64)sizeof(TAcc);
    const bool in = x < w;
    TAcc s = 0;
    if (in) {
        i64 r = r0;
        for (; r + 8 <= r1; r += 8) {
            TAcc t[8];
#pragma unroll
            for (int k = 0; k < 8; k++)
                t[k] = *(const TAcc *)(base + (r + k) * p.out_row);
#pragma unroll
            for (int k = 0; k < 8; k++)
                s += t[k];
        }
        for (; r < r1; r++)
            s += *(const TAcc *)(base + r * p.out_row);
    }
    s_tot[chunk][col] = s;
    __syncthreads();
    /* Warp c < RC_COLS scans column c's chunk totals, two per lane. */
    const unsigned warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
    static_assert(RC_CHUNKS == 64 && RC_COL_THREADS / 32 >= RC_COLS, "scan layout");
    if (warp < RC_COLS) {
        const TAcc a = s_tot[2 * lane][warp], c = s_tot[2 * lane + 1][warp];
        const TAcc pair = a + c;
        const TAcc excl = warp_inclusive(pair, lane) - pair;
        __syncwarp();
        s_tot[2 * lane][warp] = excl;
        s_tot[2 * lane + 1][warp] = excl + a;
    }
    __syncthreads();
    if (!in)
        return;
    /* The table row above the strip, carried in when y0 > 0. */
    TAcc run = s_tot[chunk][col];
    if (p.y0 > 0)
        run += *(const TAcc *)(base + (p.y0 - 1) * p.out_row);
    i64 r = r0;
    for (; r + 8 <= r1; r += 8) {
        TAcc t[8];
#pragma unroll
        for (int k = 0; k < 8; k++)
            t[k] = *(const TAcc *)(base + (r + k) * p.out_row);
#pragma unroll
        for (int k = 0; k < 8; k++) {
            run += t[k];
            *(TAcc *)(base + (r + k) * p.out_row) = run;
        }
    }
    for (; r < r1; r++) {
        run += *(const TAcc *)(base + r * p.out_row);
        *(TAcc *)(base + r * p.out_row) = run;
    }
}

template <typename TIn, typename TAcc> static int rowcol_launch(const psi_cu_plan *p)
{
    const i64 planes = p->depth * p->channels, rows = p->y1 - p->y0;
    if (rows <= 0 || p->width <= 0 || planes <= 0)
        return 0;
    const i64 row_blocks = (rows * planes + RC_ROW_WARPS - 1) / RC_ROW_WARPS;
    const i64 groups = (p->width + RC_COLS - 1) / RC_COLS;
    if (row_blocks > 0x7fffffffLL || groups * planes > 0x7fffffffLL)
        return (int)cudaErrorInvalidConfiguration;
    cudaStream_t s = (cudaStream_t)p->stream;
    rowcol_rows<TIn, TAcc><<<(unsigned)row_blocks, 32 * RC_ROW_WARPS, 0, s>>>(*p);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return (int)e;
    rowcol_cols<TAcc><<<(unsigned)(groups * planes), RC_COL_THREADS, 0, s>>>(*p, groups);
    return (int)cudaGetLastError();
}

template <typename TIn, typename TAcc> static int rowcol_try(const psi_cu_plan *p)
{
    if constexpr (std::is_integral<TAcc>::value)
        return rowcol_launch<TIn, TAcc>(p);
    else
        return (int)cudaErrorInvalidValue;
}

bool rowcol_fits(const psi_cu_plan *p)
{
    const u64 planes = (u64)(p->depth * p->channels), rows = (u64)(p->y1 - p->y0);
    const u64 bytes = planes * rows * (u64)p->width * psi_cu_acc_size(p->acc);
    return (p->acc == PSI_CU_U32 || p->acc == PSI_CU_U64) && bytes <= RC_MAX_BYTES;
}

int rowcol_dispatch(const psi_cu_plan *p)
{
#define PSI_RC_CASE(TIN, ACC, CIN, CACC) \
    if (p->tin == TIN && p->acc == ACC)  \
        return rowcol_try<CIN, CACC>(p);
    PSI_CU_PAIRS(PSI_RC_CASE)
#undef PSI_RC_CASE
    return (int)cudaErrorInvalidValue;
}

} // namespace psi_cu

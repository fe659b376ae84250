/*
 * sat_tilted.cu - OpenCV's 45-degree tilted integral on the GPU
 * (pixsum_cuda_integral_tilted()):
 *   T(X, Y) = sum of i(x, y) over y < Y and |x - X + 1| <= Y - y - 1,
 * a (W+1) x (H+1) table.
 *
 * The CPU's row recurrence (src/cpu/tilted.c) reads
 *   T(X, Y) = T(X, Y-1) + S(X-1, Y-1),  S = A + B - i,
 * with A the running sum along the down-right diagonal ending at a pixel and
 * B the one along the down-left diagonal; for X = 0 the apex lies left of the
 * image and S(-1, y) = B(0, y-1). So the table is a column prefix sum of S,
 * and S comes from independent diagonal scans. Three kernels:
 *   1. one thread per down-right diagonal (x - y constant) walks down it and
 *      writes S(x, y) = A(x-1, y-1) (its running sum before adding i);
 *   2. one thread per down-left diagonal (x + y constant) adds B(x, y) to
 *      S(x, y) and keeps B(0, y) in a column of its own;
 *   3. one thread per table column sums down the rows and writes T.
 * At every step neighbouring threads touch neighbouring pixels of one row, so
 * the accesses are coalesced; the walks are sequential (H or fewer steps per
 * thread), so this is a correct GPU path, not a bandwidth-bound one. Integer
 * tables are modular sums (bit-exact with the CPU in any order); float tables
 * round in another order than the CPU's recurrence.
 */
#include "sat_common.cuh"
#include "cuda_tilted.h"

namespace psi_cu {

template <typename TIn, typename TAcc>
__device__ __forceinline__ TAcc pixel(const psi_cu_plan &p, i64 x, i64 y, i64 c)
{
    const TIn *row = (const TIn *)((const char *)p.in + y * p.in_row);
    return sample<TAcc, TIn>(row[x * p.channels + c], 0);
}

/* S(x, y) = A(x-1, y-1): thread per (down-right diagonal, channel). */
template <typename TIn, typename TAcc>
__global__ void tilted_down_right(psi_cu_plan p, TAcc *s)
{
    const i64 W = p.width, H = p.height, C = p.channels;
    const i64 id = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= (W + H - 1) * C)
        return;
    const i64 c = id % C, k = id / C - (H - 1); /* k = x - y */
    TAcc run = (TAcc)0;
    for (i64 y = k < 0 ? -k : 0; y < H && y + k < W; y++) {
        const i64 x = y + k;
        s[(y * W + x) * C + c] = run;
        run += pixel<TIn, TAcc>(p, x, y, c);
    }
}

/* S(x, y) += B(x, y); bcol(y) = B(0, y): thread per (down-left diagonal,
 * channel). */
template <typename TIn, typename TAcc>
__global__ void tilted_down_left(psi_cu_plan p, TAcc *s, TAcc *bcol)
{
    const i64 W = p.width, H = p.height, C = p.channels;
    const i64 id = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= (W + H - 1) * C)
        return;
    const i64 c = id % C, k = id / C; /* k = x + y */
    TAcc run = (TAcc)0;
    for (i64 y = k - (W - 1) > 0 ? k - (W - 1) : 0; y < H && y <= k; y++) {
        const i64 x = k - y;
        run += pixel<TIn, TAcc>(p, x, y, c);
        s[(y * W + x) * C + c] += run;
        if (x == 0)
            bcol[y * C + c] = run;
    }
}

/* T(X, Y) = T(X, Y-1) + S(X-1, Y-1) (X >= 1), T(0, Y) = T(0, Y-1) + B(0, Y-2):
 * thread per (table column, channel). */
template <typename TAcc>
__global__ void tilted_columns(psi_cu_plan p, const TAcc *s, const TAcc *bcol)
{
    const i64 W = p.width, H = p.height, C = p.channels;
    const i64 id = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= (W + 1) * C)
        return;
    const i64 c = id % C, X = id / C;
    TAcc run = (TAcc)0;
    ((TAcc *)p.out)[X * C + c] = run;
    for (i64 Y = 1; Y <= H; Y++) {
        const i64 y = Y - 1;
        if (X > 0)
            run += s[(y * W + X - 1) * C + c];
        else if (y >= 1)
            run += bcol[(y - 1) * C + c];
        ((TAcc *)((char *)p.out + Y * p.out_row))[X * C + c] = run;
    }
}

static unsigned blocks_for(i64 threads, int per_block)
{
    return (unsigned)((threads + per_block - 1) / per_block);
}

template <typename TIn, typename TAcc>
static int tilted_launch(const psi_cu_plan *p)
{
    const i64 W = p->width, H = p->height, C = p->channels;
    TAcc *s = (TAcc *)((char *)p->ws + sizeof(psi_cu_header));
    TAcc *bcol = s + W * H * C;
    cudaStream_t st = (cudaStream_t)p->stream;
    const int tpb = 256;
    const i64 diagonals = (W + H - 1) * C, columns = (W + 1) * C;
    if (blocks_for(diagonals, tpb) > 0x7fffffffu)
        return (int)cudaErrorInvalidConfiguration;
    tilted_down_right<TIn, TAcc><<<blocks_for(diagonals, tpb), tpb, 0, st>>>(*p, s);
    tilted_down_left<TIn, TAcc><<<blocks_for(diagonals, tpb), tpb, 0, st>>>(*p, s, bcol);
    tilted_columns<TAcc><<<blocks_for(columns, tpb), tpb, 0, st>>>(*p, s, bcol);
    return (int)cudaGetLastError();
}

} // namespace psi_cu

extern "C" size_t psi_cu_tilted_workspace(const psi_cu_plan *p)
{
    return sizeof(psi_cu_header) +
           (size_t)(p->width * p->height + p->height) * (size_t)p->channels *
               psi_cu_acc_size(p->acc);
}

extern "C" int psi_cu_tilted(const psi_cu_plan *p)
{
    if (p->width == 0 || p->height == 0)
        return 0;
#define PSI_TILTED_CASE(TIN, ACC, CIN, CACC) \
    if (p->tin == TIN && p->acc == ACC)      \
        return psi_cu::tilted_launch<CIN, CACC>(p);
    PSI_CU_PAIRS(PSI_TILTED_CASE)
#undef PSI_TILTED_CASE
    return (int)cudaErrorInvalidValue;
}

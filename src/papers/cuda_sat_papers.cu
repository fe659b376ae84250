/*
 * cuda_sat_papers.cu - the GPU integral-image methods of the papers, written
 * anew over pixsum's plane layout (see src/cuda/cuda_plan.h), each a named
 * method, registered among the CUDA methods and dispatched from
 * src/cuda/sat_dispatch.cu:
 *
 *   cuda.rowthread  (paper 000; paper 003 "GPUv1") one thread per row runs a
 *                   prefix sum along it, then one thread per column down it.
 *   cuda.blockscan  (paper 003 "GPUv2") one block per row computes the row's
 *                   prefix sum with a block-wide scan; transpose; the same
 *                   again on the transposed rows; transpose back.
 *   cuda.naive004   (paper 004, naive) one thread per row (in place) +
 *                   tiled transpose (TILE_DIM x TILE_DIM+1 shared tile,
 *                   BLOCK_ROWS coarsening, diagonal block reordering), twice.
 *   cuda.kogge004   (paper 004, hierarchical) Kogge-Stone scan of
 *                   SECTION_SIZE-element row sections, a scan of the section
 *                   sums, a pass adding them; + transposes, twice.
 *   cuda.single004  (paper 004, optimized) single-pass row scan: Kogge-Stone
 *                   per section, block ids from an atomic counter, each
 *                   section waiting for the flag of the section to its left
 *                   (adjacent synchronisation); + transposes, twice.
 *
 * The transposed intermediate lives in the workspace, one packed H x W plane
 * per plane. Integer arithmetic is modular in the accumulator's width.
 */
#include "../cuda/sat_common.cuh"

namespace psi_cu {

/* A strided 2-D plane set: plane p starts at
 * base + (p / pch) * slice + (p % pch) * pstep, sample (x, y) at
 * + y * row + x * xstep (bytes). */
struct gview {
    char *base;
    i64 pch, slice, pstep, row, xstep;
};

__device__ __forceinline__ char *gv_at(const gview &v, i64 plane, i64 x, i64 y)
{
    return v.base + (plane / v.pch) * v.slice + (plane % v.pch) * v.pstep + y * v.row +
           x * v.xstep;
}

/* ---- one thread per row / per column (papers 000, 003 GPUv1, 004 naive) ---- */

template <typename TIn, typename TAcc>
__global__ void row_thread_kernel(gview src, gview dst, i64 width, i64 rows, i64 planes,
                                  int squared)
{
    i64 gid = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= rows * planes)
        return;
    i64 plane = gid / rows, y = gid % rows;
    TAcc run = (TAcc)0;
    for (i64 x = 0; x < width; x++) {
        run += sample<TAcc, TIn>(*(const TIn *)gv_at(src, plane, x, y), squared);
        *(TAcc *)gv_at(dst, plane, x, y) = run;
    }
}

template <typename TAcc>
__global__ void col_thread_kernel(gview v, i64 width, i64 rows, i64 planes)
{
    i64 gid = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= width * planes)
        return;
    i64 plane = gid / width, x = gid % width;
    TAcc run = (TAcc)0;
    for (i64 y = 0; y < rows; y++) {
        TAcc *e = (TAcc *)gv_at(v, plane, x, y);
        run += *e;
        *e = run;
    }
}

/* ---- block-wide row scan (paper 003 GPUv2) -------------------------------- */

template <typename T>
__device__ __forceinline__ T block_inclusive_256(T v, T *s_warp)
{
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    T incl = warp_inclusive(v, lane);
    if (lane == 31)
        s_warp[warp] = incl;
    __syncthreads();
    T off = (T)0;
    for (unsigned w = 0; w < warp; w++)
        off += s_warp[w];
    __syncthreads();
    return incl + off;
}

template <typename TIn, typename TAcc>
__global__ void __launch_bounds__(256)
    row_block_kernel(gview src, gview dst, i64 width, i64 rows, int squared)
{
    __shared__ TAcc s_warp[8];
    __shared__ TAcc s_carry;
    const i64 plane = blockIdx.y, y = blockIdx.x;
    if (y >= rows)
        return;
    if (threadIdx.x == 0)
        s_carry = (TAcc)0;
    __syncthreads();
    for (i64 x0 = 0; x0 < width; x0 += 256) {
        i64 x = x0 + threadIdx.x;
        TAcc v = x < width ? sample<TAcc, TIn>(*(const TIn *)gv_at(src, plane, x, y), squared)
                           : (TAcc)0;
        TAcc carry = s_carry;
        TAcc incl = block_inclusive_256(v, s_warp) + carry;
        if (x < width)
            *(TAcc *)gv_at(dst, plane, x, y) = incl;
        if (threadIdx.x == 255)
            s_carry = incl;
        __syncthreads();
    }
}

/* ---- tiled transpose (paper 004; also used by 003 GPUv2) ------------------- */

/* dst(y, x) = src(x, y) for a width x height source plane set. Block
 * (tile_dim, block_rows); each thread moves tile_dim / block_rows elements
 * each way through a tile_dim x (tile_dim + 1) shared tile; block indices are
 * reordered along diagonals. */
template <typename T>
__global__ void transpose_kernel(gview src, gview dst, i64 width, i64 height, int tile_dim)
{
    extern __shared__ __align__(16) unsigned char s_raw[];
    T *tile = (T *)s_raw;
    const int pitch = tile_dim + 1;
    unsigned bx, by;
    if (gridDim.x == gridDim.y) {
        by = blockIdx.x;
        bx = (blockIdx.x + blockIdx.y) % gridDim.x;
    } else {
        unsigned bid = blockIdx.x + gridDim.x * blockIdx.y;
        by = bid % gridDim.y;
        bx = ((bid / gridDim.y) + by) % gridDim.x;
    }
    const i64 plane = blockIdx.z;
    const int tx = threadIdx.x, ty = threadIdx.y, br = blockDim.y;
    i64 xin = (i64)bx * tile_dim + tx, yin = (i64)by * tile_dim + ty;
    for (int i = 0; i < tile_dim; i += br)
        if (xin < width && yin + i < height && ty + i < tile_dim)
            tile[(ty + i) * pitch + tx] = *(const T *)gv_at(src, plane, xin, yin + i);
    __syncthreads();
    i64 xout = (i64)by * tile_dim + tx, yout = (i64)bx * tile_dim + ty;
    for (int i = 0; i < tile_dim; i += br)
        if (xout < height && yout + i < width && ty + i < tile_dim)
            *(T *)gv_at(dst, plane, xout, yout + i) = tile[tx * pitch + ty + i];
}

/* ---- Kogge-Stone section scan (paper 004) ----------------------------------- */

/* In-place inclusive Kogge-Stone scan of blockDim.x values in shared memory. */
template <typename T>
__device__ __forceinline__ void kogge_stone(T *xy)
{
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        T tmp = threadIdx.x >= stride ? xy[threadIdx.x - stride] : (T)0;
        __syncthreads();
        if (threadIdx.x >= stride)
            xy[threadIdx.x] += tmp;
    }
    __syncthreads();
}

/* Hierarchical step 1: section scans; section totals to sums[row][section]. */
template <typename TIn, typename TAcc>
__global__ void kogge_section_kernel(gview src, gview dst, i64 width, i64 rows, int squared,
                                     TAcc *sums, i64 nsec)
{
    extern __shared__ __align__(16) unsigned char s_raw[];
    TAcc *xy = (TAcc *)s_raw;
    const i64 plane = blockIdx.z, y = blockIdx.y, sec = blockIdx.x;
    i64 x = sec * blockDim.x + threadIdx.x;
    xy[threadIdx.x] =
        x < width ? sample<TAcc, TIn>(*(const TIn *)gv_at(src, plane, x, y), squared) : (TAcc)0;
    kogge_stone(xy);
    if (x < width)
        *(TAcc *)gv_at(dst, plane, x, y) = xy[threadIdx.x];
    if (threadIdx.x == blockDim.x - 1)
        sums[(plane * rows + y) * nsec + sec] = xy[threadIdx.x];
}

/* Step 2: exclusive scan of each row's section totals (thread per row). */
template <typename TAcc>
__global__ void kogge_sums_kernel(TAcc *sums, i64 rows_total, i64 nsec)
{
    i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows_total)
        return;
    TAcc run = (TAcc)0;
    for (i64 s = 0; s < nsec; s++) {
        TAcc v = sums[r * nsec + s];
        sums[r * nsec + s] = run;
        run += v;
    }
}

/* Step 3: add each section's offset. */
template <typename TAcc>
__global__ void kogge_add_kernel(gview dst, i64 width, i64 rows, const TAcc *sums, i64 nsec)
{
    const i64 plane = blockIdx.z, y = blockIdx.y, sec = blockIdx.x;
    i64 x = sec * blockDim.x + threadIdx.x;
    if (sec == 0 || x >= width)
        return;
    *(TAcc *)gv_at(dst, plane, x, y) += sums[(plane * rows + y) * nsec + sec];
}

/* ---- single-pass row scan with adjacent synchronisation (paper 004) ------- */

template <typename TIn, typename TAcc>
__global__ void single_pass_kernel(gview src, gview dst, i64 width, i64 rows_total, i64 rows,
                                   int squared, psi_cu_header *hdr, u64 *flags, TAcc *carry,
                                   u64 nblocks)
{
    extern __shared__ __align__(16) unsigned char s_raw[];
    TAcc *xy = (TAcc *)s_raw;
    __shared__ u64 s_bid, s_epoch;
    __shared__ TAcc s_prev;
    if (threadIdx.x == 0) {
        u64 e;
        s_bid = take_ticket(hdr, &e);
        s_epoch = e;
    }
    __syncthreads();
    const u64 bid = s_bid, epoch = s_epoch;
    /* Dynamic ids run down the rows first: id = section * rows_total + row,
     * so a section's left neighbour always has a smaller id. */
    const i64 sec = (i64)(bid / (u64)rows_total), r = (i64)(bid % (u64)rows_total);
    const i64 plane = r / rows, y = r % rows;
    const i64 x = sec * blockDim.x + threadIdx.x;
    xy[threadIdx.x] =
        x < width ? sample<TAcc, TIn>(*(const TIn *)gv_at(src, plane, x, y), squared) : (TAcc)0;
    kogge_stone(xy);
    if (threadIdx.x == 0) {
        TAcc prev = (TAcc)0;
        if (sec > 0) {
            wait_flag(&flags[bid - rows_total], epoch);
            prev = ld_cg(&carry[bid - rows_total]);
        }
        s_prev = prev;
        st_cg(&carry[bid], prev + xy[blockDim.x - 1]);
        __threadfence();
        store_release(&flags[bid], flag_value(epoch, FLAG_INCLUSIVE));
    }
    __syncthreads();
    if (x < width)
        *(TAcc *)gv_at(dst, plane, x, y) = xy[threadIdx.x] + s_prev;
    if (threadIdx.x == 0)
        finish_block(hdr, nblocks);
}

/* ---- the pipelines ----------------------------------------------------------- */

static gview in_view(const psi_cu_plan *p)
{
    size_t es = psi_cu_in_size(p->tin);
    gview v = {(char *)p->in, p->channels, p->in_slice, (i64)es, p->in_row,
               p->channels * (i64)es};
    return v;
}

static gview out_view(const psi_cu_plan *p)
{
    size_t es = psi_cu_acc_size(p->acc);
    gview v = {(char *)p->out, p->channels, p->out_slice, (i64)es, p->out_row,
               p->channels * (i64)es};
    return v;
}

/* The transposed intermediate: plane p is a packed width-rows x height-cols
 * array (row = one source column). */
static gview tmp_view(const psi_cu_plan *p, void *base)
{
    i64 es = (i64)psi_cu_acc_size(p->acc);
    gview v = {(char *)base, 1, p->width * p->height * es, 0, p->height * es, es};
    return v;
}

static i64 plane_count(const psi_cu_plan *p)
{
    return p->depth * p->channels;
}

static size_t align_up(size_t v)
{
    return (v + 255) & ~(size_t)255;
}

static size_t tmp_bytes(const psi_cu_plan *p)
{
    return align_up((size_t)(p->width * p->height * plane_count(p)) * psi_cu_acc_size(p->acc));
}

static i64 sections(i64 n, int ss)
{
    return (n + ss - 1) / ss;
}

size_t papers_workspace(psi_cu_method m, const psi_cu_plan *p)
{
    size_t as = psi_cu_acc_size(p->acc), hdr = align_up(sizeof(psi_cu_header));
    i64 planes = plane_count(p), ss = p->section_size;
    i64 len = p->width > p->height ? p->width : p->height;
    switch (m) {
    case PSI_CU_ROWTHREAD:
        return hdr;
    case PSI_CU_BLOCKSCAN:
    case PSI_CU_NAIVE004:
        return hdr + tmp_bytes(p);
    case PSI_CU_KOGGE004:
        return hdr + tmp_bytes(p) + align_up((size_t)(planes * len * sections(len, (int)ss)) * as);
    case PSI_CU_SINGLE004:
        return hdr + tmp_bytes(p) +
               align_up((size_t)(planes * len * sections(len, (int)ss)) * (as + 8));
    default:
        return hdr;
    }
}

template <typename T>
static int launch_transpose(const psi_cu_plan *p, gview src, gview dst, i64 w, i64 h)
{
    const int td = p->tile_dim, br = p->block_rows;
    dim3 grid((unsigned)((w + td - 1) / td), (unsigned)((h + td - 1) / td),
              (unsigned)plane_count(p));
    size_t smem = (size_t)td * (size_t)(td + 1) * sizeof(T);
    transpose_kernel<T><<<grid, dim3((unsigned)td, (unsigned)br), smem,
                          (cudaStream_t)p->stream>>>(src, dst, w, h, td);
    return (int)cudaGetLastError();
}

/* One row-scan pass of method m over `rows` rows of length `width`, src -> dst
 * (src may be dst for the second pass, where TIn == TAcc). */
template <typename TIn, typename TAcc>
static int row_pass(psi_cu_method m, const psi_cu_plan *p, gview src, gview dst, i64 width,
                    i64 rows, int squared, char *extra)
{
    cudaStream_t s = (cudaStream_t)p->stream;
    const i64 planes = plane_count(p);
    const int ss = p->section_size;
    const i64 nsec = sections(width, ss);
    switch (m) {
    case PSI_CU_ROWTHREAD:
    case PSI_CU_NAIVE004: {
        i64 n = rows * planes;
        row_thread_kernel<TIn, TAcc>
            <<<(unsigned)((n + 127) / 128), 128, 0, s>>>(src, dst, width, rows, planes, squared);
        break;
    }
    case PSI_CU_BLOCKSCAN:
        row_block_kernel<TIn, TAcc>
            <<<dim3((unsigned)rows, (unsigned)planes), 256, 0, s>>>(src, dst, width, rows,
                                                                    squared);
        break;
    case PSI_CU_KOGGE004: {
        TAcc *sums = (TAcc *)extra;
        dim3 grid((unsigned)nsec, (unsigned)rows, (unsigned)planes);
        kogge_section_kernel<TIn, TAcc>
            <<<grid, ss, ss * sizeof(TAcc), s>>>(src, dst, width, rows, squared, sums, nsec);
        i64 rt = rows * planes;
        kogge_sums_kernel<TAcc><<<(unsigned)((rt + 127) / 128), 128, 0, s>>>(sums, rt, nsec);
        kogge_add_kernel<TAcc><<<grid, ss, 0, s>>>(dst, width, rows, sums, nsec);
        break;
    }
    case PSI_CU_SINGLE004: {
        i64 rt = rows * planes;
        u64 nb = (u64)(rt * nsec);
        u64 *flags = (u64 *)extra;
        TAcc *carry = (TAcc *)(flags + nb);
        single_pass_kernel<TIn, TAcc><<<(unsigned)nb, ss, ss * sizeof(TAcc), s>>>(
            src, dst, width, rt, rows, squared, (psi_cu_header *)p->ws, flags, carry, nb);
        break;
    }
    default:
        return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}

template <typename TIn, typename TAcc>
static int papers_launch(psi_cu_method m, const psi_cu_plan *p)
{
    const i64 w = p->width, h = p->height, planes = plane_count(p);
    gview in = in_view(p), out = out_view(p);
    int err;
    if (m == PSI_CU_ROWTHREAD) {
        if ((err = row_pass<TIn, TAcc>(m, p, in, out, w, h, p->squared, NULL)))
            return err;
        col_thread_kernel<TAcc><<<(unsigned)((w * planes + 127) / 128), 128, 0,
                                  (cudaStream_t)p->stream>>>(out, w, h, planes);
        return (int)cudaGetLastError();
    }
    char *ws = (char *)p->ws + align_up(sizeof(psi_cu_header));
    gview tmp = tmp_view(p, ws);
    char *extra = ws + tmp_bytes(p);
    if ((err = row_pass<TIn, TAcc>(m, p, in, out, w, h, p->squared, extra)))
        return err;
    if ((err = launch_transpose<TAcc>(p, out, tmp, w, h)))
        return err;
    if ((err = row_pass<TAcc, TAcc>(m, p, tmp, tmp, h, w, 0, extra)))
        return err;
    return launch_transpose<TAcc>(p, tmp, out, h, w);
}

int papers_dispatch(psi_cu_method m, const psi_cu_plan *p)
{
#define PSI_PP_CASE(TIN, ACC, CIN, CACC) \
    if (p->tin == TIN && p->acc == ACC)  \
        return papers_launch<CIN, CACC>(m, p);
    PSI_CU_PAIRS(PSI_PP_CASE)
#undef PSI_PP_CASE
    return (int)cudaErrorInvalidValue;
}

} // namespace psi_cu

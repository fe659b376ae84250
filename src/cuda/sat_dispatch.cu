/*
 * sat_dispatch.cu - the C entry points of the CUDA kernels (cuda_plan.h):
 * workspace sizes, method dispatch, and the slice pass that turns per-slice
 * tables into an integral volume (out(z) += out(z - 1), one thread per
 * table element of a slice, walking down the slices).
 */
#include "sat_common.cuh"

namespace psi_cu {

size_t lookback_workspace(const psi_cu_plan *p);
int lookback_dispatch(const psi_cu_plan *p);
size_t papers_workspace(psi_cu_method m, const psi_cu_plan *p);
int papers_dispatch(psi_cu_method m, const psi_cu_plan *p);

template <typename TAcc>
__global__ void slice_sum_kernel(char *out, i64 width, i64 height, i64 depth, i64 channels,
                                 i64 row, i64 slice)
{
    i64 n = width * channels;
    i64 gid = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= n * height)
        return;
    i64 y = gid / n, s = gid % n;
    char *e = out + y * row + s * (i64)sizeof(TAcc);
    TAcc run = *(TAcc *)e;
    for (i64 z = 1; z < depth; z++) {
        TAcc *q = (TAcc *)(e + z * slice);
        run += *q;
        *q = run;
    }
}

static int slice_sum(const psi_cu_plan *p)
{
    i64 n = p->width * p->channels * p->height;
    unsigned blocks = (unsigned)((n + 255) / 256);
    cudaStream_t s = (cudaStream_t)p->stream;
    char *o = (char *)p->out;
    switch (p->acc) {
    case PSI_CU_U32:
        slice_sum_kernel<unsigned><<<blocks, 256, 0, s>>>(o, p->width, p->height, p->depth,
                                                          p->channels, p->out_row, p->out_slice);
        break;
    case PSI_CU_U64:
        slice_sum_kernel<unsigned long long><<<blocks, 256, 0, s>>>(
            o, p->width, p->height, p->depth, p->channels, p->out_row, p->out_slice);
        break;
    case PSI_CU_F32:
        slice_sum_kernel<float><<<blocks, 256, 0, s>>>(o, p->width, p->height, p->depth,
                                                       p->channels, p->out_row, p->out_slice);
        break;
    case PSI_CU_F64:
        slice_sum_kernel<double><<<blocks, 256, 0, s>>>(o, p->width, p->height, p->depth,
                                                        p->channels, p->out_row, p->out_slice);
        break;
    }
    return (int)cudaGetLastError();
}

} // namespace psi_cu

extern "C" size_t psi_cu_acc_size(psi_cu_acc a)
{
    return a == PSI_CU_U32 || a == PSI_CU_F32 ? 4 : 8;
}

extern "C" size_t psi_cu_in_size(psi_cu_in t)
{
    switch (t) {
    case PSI_CU_IN_U8: return 1;
    case PSI_CU_IN_U16:
    case PSI_CU_IN_I16: return 2;
    case PSI_CU_IN_I32:
    case PSI_CU_IN_U32:
    case PSI_CU_IN_F32: return 4;
    case PSI_CU_IN_F64: return 8;
    }
    return 0;
}

extern "C" size_t psi_cu_workspace_bytes(psi_cu_method m, const psi_cu_plan *p)
{
    if (m == PSI_CU_LOOKBACK)
        return psi_cu::lookback_workspace(p);
    return psi_cu::papers_workspace(m, p);
}

extern "C" int psi_cu_launch(psi_cu_method m, const psi_cu_plan *p)
{
    int err = m == PSI_CU_LOOKBACK ? psi_cu::lookback_dispatch(p)
                                   : psi_cu::papers_dispatch(m, p);
    if (err == 0 && p->accumulate_z && p->depth > 1)
        err = psi_cu::slice_sum(p);
    return err;
}

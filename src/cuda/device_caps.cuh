/*
 * device_caps.cuh - what both CUDA halves (the integral kernels and the
 * histograms) need to know about the current device, read from the driver
 * once per device and cached with the tuning policy of the device's
 * architecture family, and the launch of a kernel with programmatic
 * dependent launch (PDL) where the device has it.
 */
#ifndef PIXSUM_DEVICE_CAPS_CUH
#define PIXSUM_DEVICE_CAPS_CUH

#include <cuda_runtime.h>

/* The kernels' tuning that follows the GPU's architecture: one compiled entry
 * per family (psi_arch_policies[] in device_caps.cu, as CUB's tuning
 * policies), picked by compute capability once per device. Nothing in it
 * changes a result, and nothing in it sizes a workspace: the launch shapes
 * that do (sat_lookback.cu, lb_shapes[]) are one table for every device, so
 * that pixsum_cuda_workspace_size() does not depend on which device runs the
 * call. */
struct psi_arch_policy {
    int min_cc_major;      /* the family: this compute capability major and newer */
    const char *family;    /* its name, for messages */
    bool pdl;              /* cuda.lookback and the flat and wide histogram kernels
                            * launched with programmatic dependent launch (sm_90 and
                            * newer: griddepcontrol) */
    bool async_copy;       /* cuda.lookback's staged kernel copies its tile into
                            * shared memory by cp.async (sm_80 and newer) */
    int lb_stagger_ns;     /* staged kernel: the blocks an SM holds in the first wave
                            * start this many ns apart in all (lb_launch()) */
    int lb_hints_l2_share; /* staged kernel, 4-byte tables: the streaming store hint
                            * is dropped once the look-back records outgrow
                            * L2 / lb_hints_l2_share (lb_launch()) */
};

struct psi_device_caps {
    int device;     /* the ordinal these values belong to */
    int cc_major;   /* compute capability, major */
    int smem_optin; /* largest dynamic shared memory a block may opt in to, bytes */
    int sm_count;   /* multiprocessors */
    int l2_bytes;   /* L2 cache size, bytes */
    const psi_arch_policy *policy; /* the tuning of the device's family */
};

/* Fills *caps for the calling thread's current device. The first call per
 * device asks the driver and picks the device's policy; later calls take a
 * lock and copy. Returns cudaSuccess, or the error of cudaGetDevice /
 * cudaDeviceGetAttribute (then *caps is untouched and nothing is cached).
 * Thread-safe. */
cudaError_t psi_current_device_caps(psi_device_caps *caps);

/* Waits, in a kernel launched by psi_launch() with pdl set, until the
 * stream's previous kernel has finished and its writes are visible. Every
 * thread must call it before its first global-memory access that another
 * kernel may have written or may still read. A no-op in launches without
 * PDL and on devices older than sm_90. */
__device__ __forceinline__ void psi_pdl_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* Launches kernel<<<grid, block, smem, stream>>>(args...), with programmatic
 * stream serialization when pdl is true: the launch may then begin while the
 * stream's previous kernel drains, so the kernel must call psi_pdl_wait()
 * first (see above). Pass pdl only on devices of compute capability 9 and
 * newer. Returns the launch's cudaError_t. */
template <typename... Params, typename... Args>
cudaError_t psi_launch(bool pdl, void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                       cudaStream_t stream, Args &&...args)
{
    if (!pdl) {
        kernel<<<grid, block, smem, stream>>>(static_cast<Args &&>(args)...);
        return cudaGetLastError();
    }
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, kernel, static_cast<Args &&>(args)...);
}

#endif

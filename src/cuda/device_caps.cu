/*
 * device_caps.cu - the per-device cache of psi_current_device_caps()
 * (device_caps.cuh): compute capability, shared memory opt-in limit,
 * multiprocessor count and L2 size, asked of the driver once per device, and
 * the compiled tuning policies per architecture family, one of which is
 * chosen for the device at the same time.
 */
#include "device_caps.cuh"

#include <mutex>

namespace {

/* The families, newest first; the first whose min_cc_major the device
 * reaches is its policy. PDL needs sm_90 (griddepcontrol) and cp.async
 * sm_80. The stagger (while some of an SM's blocks wait on their
 * look-backs, others load or store) and the hint threshold (a third of L2)
 * were tuned on sm_90 and are kept for the older families, which have not
 * been tuned apart. */
constexpr psi_arch_policy psi_arch_policies[] = {
    {9, "sm_90+", true, true, 4000, 3},
    {8, "sm_80-89", false, true, 4000, 3},
    {0, "before sm_80", false, false, 4000, 3},
};

const psi_arch_policy *policy_for(int cc_major)
{
    for (const psi_arch_policy &p : psi_arch_policies)
        if (cc_major >= p.min_cc_major)
            return &p;
    return &psi_arch_policies[sizeof psi_arch_policies / sizeof psi_arch_policies[0] - 1];
}

constexpr int kMaxDevices = 64;

std::mutex caps_mutex;
psi_device_caps caps_cache[kMaxDevices];
bool caps_known[kMaxDevices];

cudaError_t read_caps(int dev, psi_device_caps *c)
{
    cudaError_t e;
    c->device = dev;
    if ((e = cudaDeviceGetAttribute(&c->cc_major, cudaDevAttrComputeCapabilityMajor, dev)) !=
            cudaSuccess ||
        (e = cudaDeviceGetAttribute(&c->smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                    dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&c->sm_count, cudaDevAttrMultiProcessorCount, dev)) !=
            cudaSuccess ||
        (e = cudaDeviceGetAttribute(&c->l2_bytes, cudaDevAttrL2CacheSize, dev)) != cudaSuccess)
        return e;
    if (c->smem_optin <= 0)
        c->smem_optin = 48 << 10;
    c->policy = policy_for(c->cc_major);
    return cudaSuccess;
}

} // namespace

cudaError_t psi_current_device_caps(psi_device_caps *caps)
{
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    psi_device_caps c;
    if (dev < 0 || dev >= kMaxDevices) { /* beyond the cache: ask every time */
        if ((e = read_caps(dev, &c)) == cudaSuccess)
            *caps = c;
        return e;
    }
    std::lock_guard<std::mutex> lock(caps_mutex);
    if (!caps_known[dev]) {
        if ((e = read_caps(dev, &c)) != cudaSuccess)
            return e;
        caps_cache[dev] = c;
        caps_known[dev] = true;
    }
    *caps = caps_cache[dev];
    return cudaSuccess;
}

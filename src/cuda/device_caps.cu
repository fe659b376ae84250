/*
 * device_caps.cu - the per-device cache of psi_current_device_caps()
 * (device_caps.cuh): compute capability, shared memory opt-in limit and
 * multiprocessor count, asked of the driver once per device.
 */
#include "device_caps.cuh"

#include <mutex>

namespace {

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

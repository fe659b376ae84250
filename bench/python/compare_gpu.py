#!/usr/bin/env python3
"""compare_gpu.py - pixsum.integral on GPU arrays against torch.cumsum and
CuPy cumsum (two passes each), same process, same data, on the GPU machine.

Each row times the same operation with CUDA events on the current stream:
`--warmup` runs, then `--repeat` timed runs; median and best in ms. Results
are checked against each other before timing. pixsum's GPU path allocates its
result like the peers do (a new array per call) unless the row says out=.

Usage (needs a CUDA build of pixsum with the Python package):
    PYTHONPATH=<build>/python python3 bench/python/compare_gpu.py [--size 8192]
"""

import argparse
import statistics

import numpy as np

import pixsum


def time_cuda(fn, sync, event, warmup, repeat):
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeat):
        start, stop = event(), event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) if hasattr(start, "elapsed_time")
                     else _cupy_elapsed(start, stop))
    return statistics.median(times), min(times)


def _cupy_elapsed(start, stop):
    import cupy
    return cupy.cuda.get_elapsed_time(start, stop)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    a = ap.parse_args()
    n = a.size
    if not pixsum.HAVE_CUDA or pixsum.cuda_device_count() == 0:
        raise SystemExit("pixsum was built without CUDA or sees no device")
    rng = np.random.default_rng(4)
    host_u8 = rng.integers(0, 256, (n, n), dtype=np.uint8)
    host_f32 = rng.random((n, n), dtype=np.float32)
    rows = []
    try:
        import torch
        ev = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
        sync = torch.cuda.synchronize
        u8, f32 = torch.from_numpy(host_u8).cuda(), torch.from_numpy(host_f32).cuda()
        ref = pixsum.integral(u8, dtype=np.int64)
        want = u8.cumsum(0, dtype=torch.int64).cumsum(1)
        sync()
        assert torch.equal(ref, want), "pixsum and torch disagree"
        out32 = torch.empty((n, n), dtype=torch.int64, device="cuda")
        rows += [
            (f"SAT u8 {n}x{n}", "pixsum.integral(torch u8) -> int64",
             time_cuda(lambda: pixsum.integral(u8, dtype=np.int64), sync, ev, a.warmup, a.repeat)),
            (f"SAT u8 {n}x{n}", "pixsum.integral(torch u8, out=) -> int64",
             time_cuda(lambda: pixsum.integral(u8, out=out32), sync, ev, a.warmup, a.repeat)),
            (f"SAT u8 {n}x{n}", "torch cumsum(0).cumsum(1) int64",
             time_cuda(lambda: u8.cumsum(0, dtype=torch.int64).cumsum(1), sync, ev, a.warmup,
                       a.repeat)),
            (f"SAT f32 {n}x{n}", "pixsum.integral(torch f32) -> f32",
             time_cuda(lambda: pixsum.integral(f32, dtype=np.float32), sync, ev, a.warmup,
                       a.repeat)),
            (f"SAT f32 {n}x{n}", "torch cumsum(0).cumsum(1) f32",
             time_cuda(lambda: f32.cumsum(0).cumsum(1), sync, ev, a.warmup, a.repeat)),
        ]
    except ImportError:
        pass
    try:
        import cupy as cp
        ev = lambda: cp.cuda.Event()  # noqa: E731
        sync = cp.cuda.Device().synchronize
        u8 = cp.asarray(host_u8)
        ref = pixsum.integral(u8)
        want = u8.cumsum(0, dtype=cp.uint32).cumsum(1, dtype=cp.uint32)
        # pixsum's default table is u64 once the sum can pass 2^32 (8192^2 does);
        # CuPy's u32 cumsum wraps there, so the two agree modulo 2^32.
        assert bool((ref.astype(cp.uint32) == want).all()), "pixsum and CuPy disagree"
        rows += [
            (f"SAT u8 {n}x{n}", f"pixsum.integral(cupy u8) -> {ref.dtype} (default)",
             time_cuda(lambda: pixsum.integral(u8), sync, ev, a.warmup, a.repeat)),
            (f"SAT u8 {n}x{n}", "cupy cumsum(0).cumsum(1) u32",
             time_cuda(lambda: u8.cumsum(0, dtype=cp.uint32).cumsum(1, dtype=cp.uint32), sync,
                       ev, a.warmup, a.repeat)),
        ]
    except ImportError:
        pass
    print(f"pixsum {pixsum.__version__}, median/best of {a.repeat} after {a.warmup} warm-ups, "
          "CUDA events")
    print("| operation | implementation | median ms | best ms |")
    print("|---|---|---|---|")
    for op, impl, (med, best) in rows:
        print(f"| {op} | {impl} | {med:.3f} | {best:.3f} |")


if __name__ == "__main__":
    main()

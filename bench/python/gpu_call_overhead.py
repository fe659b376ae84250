#!/usr/bin/env python3
"""gpu_call_overhead.py - wall time of one pixsum.integral() call on a small
image from Python, where the binding, not the kernel, sets the pace.

For a 16x16 uint8 image (--size), median over many calls, each timed with
time.perf_counter_ns after a warm-up, in one process:
  - NumPy: pixsum.integral(x) on the CPU, beside the bare C cost of the same
    call (the call_cost program built from bench/python/call_cost.c, given
    with --c-cost; it times pixsum_integral() with a context made per call,
    as the binding does, and with one reused context);
  - CuPy and PyTorch (when installed, with a CUDA build and a device):
    pixsum.integral(x) from the call to its return, the kernel queued on the
    caller's stream and nothing synchronised (the device is synchronised
    every --block calls, outside the timed calls, so queues stay short),
    beside PyTorch's x.cumsum(0).cumsum(1) and, with --batch N, one
    integral(x, batch=True) of an (N, size, size) stack.
Prints a Markdown table: library, call, median us, 10th and 90th percentiles.
The figure before a change comes from the same command with PYTHONPATH at a
build of the earlier package (e.g. a `git worktree` of the earlier commit).

Usage: PYTHONPATH=<build>/python python3 bench/python/gpu_call_overhead.py
           [--size 16] [--calls 20000] [--batch 256] [--c-cost path/to/call_cost]
"""

import argparse
import statistics
import subprocess
import time

import numpy as np

import pixsum


def timed(fn, calls, block, sync):
    """Per-call wall times (ns) of fn(), from the call to its return (the
    result is freed outside the timed span), `calls` of them after a
    warm-up, with sync() (not timed) after every `block` calls."""
    for _ in range(min(calls // 10 + 10, 2000)):
        fn()
    sync()
    clock = time.perf_counter_ns
    times = []
    for start in range(0, calls, block):
        for _ in range(min(block, calls - start)):
            t0 = clock()
            r = fn()
            t1 = clock()
            r = None  # the result is freed after the clock stops
            times.append(t1 - t0)
        sync()
    del r
    return times


def row(lib, call, times):
    q = statistics.quantiles(times, n=10)
    print(f"| {lib} | {call} | {statistics.median(times) / 1e3:.2f} | {q[0] / 1e3:.2f} | "
          f"{q[-1] / 1e3:.2f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=16)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--block", type=int, default=100,
                    help="calls between two (untimed) synchronisations")
    ap.add_argument("--batch", type=int, default=0, help="also time a batch of N images")
    ap.add_argument("--c-cost", default=None, help="the call_cost program (bare C cost)")
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    host = rng.integers(0, 256, (a.size, a.size), dtype=np.uint8)
    print(f"pixsum {pixsum.__version__}, {a.size}x{a.size} uint8, median of {a.calls} calls")
    print()
    print("| library | call | median us | p10 us | p90 us |")
    print("|---|---|---|---|---|")

    def nothing():
        pass

    row("numpy", "pixsum.integral(x)", timed(lambda: pixsum.integral(host), a.calls, a.block,
                                             nothing))
    if a.c_cost:
        out = subprocess.run([a.c_cost, str(a.size)], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():  # "name median_ns p10_ns p90_ns"
            name, med, p10, p90 = line.split()
            print(f"| C | {name} | {float(med) / 1e3:.2f} | {float(p10) / 1e3:.2f} | "
                  f"{float(p90) / 1e3:.2f} |")
    if not (pixsum.HAVE_CUDA and pixsum.cuda_device_count() > 0):
        return
    try:
        import torch
        if torch.cuda.is_available():
            x = torch.from_numpy(host).cuda()
            sync = torch.cuda.synchronize
            row("torch", "pixsum.integral(x)",
                timed(lambda: pixsum.integral(x), a.calls, a.block, sync))
            row("torch", "x.cumsum(0).cumsum(1)",
                timed(lambda: x.cumsum(0).cumsum(1), a.calls, a.block, sync))
            if a.batch:
                xb = torch.from_numpy(rng.integers(0, 256, (a.batch, a.size, a.size),
                                                   dtype=np.uint8)).cuda()
                row("torch", f"pixsum.integral(x, batch=True), N={a.batch}",
                    timed(lambda: pixsum.integral(xb, batch=True), a.calls // 10, a.block,
                          sync))
                row("torch", f"x.cumsum(1).cumsum(2), N={a.batch}",
                    timed(lambda: xb.cumsum(1).cumsum(2), a.calls // 10, a.block, sync))
    except ImportError:
        pass
    try:
        import cupy as cp
        x = cp.asarray(host)
        sync = cp.cuda.Device().synchronize
        row("cupy", "pixsum.integral(x)", timed(lambda: pixsum.integral(x), a.calls, a.block,
                                                sync))
        row("cupy", "x.cumsum(0).cumsum(1)",
            timed(lambda: x.cumsum(0).cumsum(1), a.calls // 4, a.block, sync))
    except ImportError:
        pass


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""gpu_overhead.py - host time per call of pixsum's GPU-array functions on
small images, where the Python glue and the launches, not the GPU, set the
pace: histogram, box_filter and equalize of a 1024x1024 uint8 CuPy array and
PyTorch tensor, and histogram of a uint16 one (65536 bins).

Prints, per function and library: the host time to enqueue 200 calls
(nothing waits), the same plus the final synchronisation (per call), and one
call followed by a synchronisation (latency).

Usage: PYTHONPATH=<build>/python python3 bench/python/gpu_overhead.py [--size 1024]
"""

import argparse
import time

import numpy as np

import pixsum


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--calls", type=int, default=200)
    a = ap.parse_args()
    arrays, syncs = [], []
    rng = np.random.default_rng(1)
    u8 = rng.integers(0, 256, (a.size, a.size), dtype=np.uint8)
    u16 = rng.integers(0, 65536, (a.size, a.size), dtype=np.uint16)
    try:
        import torch
        t16 = torch.from_numpy(u16.view(np.int16)).cuda()
        arrays.append(("torch", torch.from_numpy(u8).cuda(),
                       t16.view(torch.uint16) if hasattr(torch, "uint16") else None))
        syncs.append(torch.cuda.synchronize)
    except ImportError:
        pass
    try:
        import cupy as cp
        arrays.append(("cupy", cp.asarray(u8), cp.asarray(u16)))
        syncs.append(cp.cuda.Device().synchronize)
    except ImportError:
        pass

    def sync():
        for s in syncs:
            s()

    print(f"pixsum {pixsum.__version__}, {a.size}x{a.size} uint8, {a.calls} calls")
    print("| library | function | enqueue us/call | enqueue + final sync us/call | "
          "call + sync us |")
    print("|---|---|---|---|---|")
    for lib, x8, x16 in arrays:
        for name, fn, x, args in (("histogram", "histogram", x8, ()),
                                  ("box_filter", "box_filter", x8, (5,)),
                                  ("equalize", "equalize", x8, ()),
                                  ("histogram u16", "histogram", x16, ())):
            if x is None:
                continue
            f = getattr(pixsum, fn)
            for _ in range(20):
                f(x, *args)
            sync()
            t0 = time.perf_counter()
            for _ in range(a.calls):
                f(x, *args)
            t1 = time.perf_counter()
            sync()
            t2 = time.perf_counter()
            for _ in range(50):
                f(x, *args)
                sync()
            t3 = time.perf_counter()
            print(f"| {lib} | {name} | {(t1 - t0) / a.calls * 1e6:.1f} | "
                  f"{(t2 - t0) / a.calls * 1e6:.1f} | {(t3 - t2) / 50 * 1e6:.1f} |")


if __name__ == "__main__":
    main()

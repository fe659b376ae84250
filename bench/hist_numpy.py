#!/usr/bin/python3
"""hist_numpy.py - same-run comparison of pixsum histograms with NumPy.

Times, in one run on this machine (1 thread):
  u16 4096^2, 65536 bins over [0, 65536): numpy.bincount(minlength=65536)
                                           and numpy.histogram(bins=65536)
  f32 4096^2, 1000 bins over [0, 256):    numpy.histogram(bins=1000, range)
then runs `pixsum bench --op hist` for the same cases (its own K-best timing)
and prints the ratios numpy / pixsum. The inputs have the same distribution
as the bench's (random u16 over the full range; f32 integers in [0, 256)).

usage: bench/hist_numpy.py [PATH/TO/pixsum] [--size N] [--methods LIST] [--threads LIST]
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def median_ms(fn, runs=9):
    fn()  # warm-up
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def main():
    args = sys.argv[1:]
    pixsum = "build/tools/pixsum"
    size, methods, threads = 4096, "auto,hist.sub,hist.scalar", "1"
    i = 0
    while i < len(args):
        if args[i] == "--size":
            size = int(args[i + 1]); i += 2
        elif args[i] == "--methods":
            methods = args[i + 1]; i += 2
        elif args[i] == "--threads":
            threads = args[i + 1]; i += 2
        else:
            pixsum = args[i]; i += 1
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    rng = np.random.default_rng(1)
    u16 = rng.integers(0, 65536, size=(size, size), dtype=np.uint16)
    f32 = rng.integers(0, 256, size=(size, size)).astype(np.float32)
    flat16 = u16.ravel()
    peers = {
        ("u16", "numpy.bincount"): median_ms(lambda: np.bincount(flat16, minlength=65536)),
        ("u16", "numpy.histogram"): median_ms(
            lambda: np.histogram(u16, bins=65536, range=(0, 65536)), runs=5),
        ("f32", "numpy.histogram"): median_ms(
            lambda: np.histogram(f32, bins=1000, range=(0, 256)), runs=5),
    }
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        out = tmp.name
    cmd = [pixsum, "bench", "--op", "hist", "--pair", "u16,f32", "--size", str(size),
           "--method", methods, "--threads", threads, "--no-floor", "--json", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        records = json.load(f)
    os.unlink(out)
    print(f"# numpy {np.__version__}, {size}x{size}, same run; ratio = numpy ms / pixsum ms")
    print(f"{'type':5} {'method':12} {'thr':>3} {'pixsum ms':>10}  {'peer':16} {'peer ms':>9} {'ratio':>7}")
    for r in records:
        t = r["in_type"]
        for (pt, name), ms in peers.items():
            if pt != t:
                continue
            print(f"{t:5} {r['method']:12} {r['threads']:>3} {r['median_ms']:10.3f}  "
                  f"{name:16} {ms:9.3f} {ms / r['median_ms']:7.2f}")


if __name__ == "__main__":
    main()

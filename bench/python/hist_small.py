#!/usr/bin/env python3
"""hist_small.py - CPU histograms of small images, where allocating and folding
the counting tables costs more than counting: pixsum.histogram() (method auto,
the context's default threads) of u16 images from 2 pixels to 2048^2, a 32x32
float32 image into 65536 bins and a 16x16 u8 image; best of 7 x 20 calls, in
microseconds per call, `out=` reused.

Usage: python3 bench/python/hist_small.py BUILD/python [BUILD2/python ...]
Each build's package runs in its own process, in turn, twice (alternated, so
two trees are compared on the same machine in the same minutes).
"""

import subprocess
import sys
import time

import numpy as np


def measure():
    import pixsum
    rng = np.random.default_rng(5)
    cases = [("u16 2 px", np.zeros(2, np.uint16), {})]
    for side in (64, 128, 256, 512, 1024, 2048):
        cases.append((f"u16 {side}x{side}",
                      rng.integers(0, 65536, (side, side), dtype=np.uint16), {}))
    cases += [("f32 32x32 65536 bins", rng.random((32, 32), dtype=np.float32),
               {"bins": 65536, "range": (0, 1)}),
              ("u8 16x16", rng.integers(0, 256, (16, 16), dtype=np.uint8), {})]
    for name, img, kw in cases:
        out = np.empty(pixsum.histogram(img, **kw).shape, np.uint64)
        best = 1e9
        for _ in range(7):
            t = time.perf_counter()
            for _ in range(20):
                pixsum.histogram(img, out=out, **kw)
            best = min(best, (time.perf_counter() - t) / 20 * 1e6)
        print(f"  {name:22s} {best:9.1f} us", flush=True)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--measure":
        sys.path.insert(0, sys.argv[2])
        measure()
        return
    for rnd in (1, 2):
        for path in sys.argv[1:]:
            print(f"== {path} (round {rnd})", flush=True)
            subprocess.run([sys.executable, __file__, "--measure", path], check=True)


if __name__ == "__main__":
    main()

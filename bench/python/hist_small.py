#!/usr/bin/env python3
"""hist_small.py - CPU histograms of small images, where allocating and folding
the counting tables costs more than counting: pixsum.histogram() (method auto,
the context's default threads), best of 7 x 20 calls, in microseconds per
call, `out=` reused. Two sequences, each in a fresh process:
  small-first  u16 images from 2 pixels to 2048^2, a 32x32 float32 image into
               65536 bins, a 16x16 u8 image;
  mid-first    u16 images from 128^2 to 1024^2 only, `out` allocated up front
               (no first call whose freed result raises malloc's mmap
               threshold). A process's allocation history decides whether
               malloc hands large tables out as fresh pages (page faults on
               every call) or from its heap, so the same call can differ by
               6x between the two sequences.

Usage: python3 bench/python/hist_small.py BUILD/python [BUILD2/python ...]
Each build's package runs in its own processes, in turn, twice (alternated, so
two trees are compared on the same machine in the same minutes).
"""

import subprocess
import sys
import time

import numpy as np


def measure(sequence):
    import pixsum
    rng = np.random.default_rng(5)

    def u16(side):
        return (f"u16 {side}x{side}", rng.integers(0, 65536, (side, side), dtype=np.uint16), {})

    if sequence == "mid-first":
        cases = [u16(side) for side in (128, 256, 512, 1024)]
    else:
        cases = [("u16 2 px", np.zeros(2, np.uint16), {})]
        cases += [u16(side) for side in (64, 128, 256, 512, 1024, 2048)]
        cases += [("f32 32x32 65536 bins", rng.random((32, 32), dtype=np.float32),
                   {"bins": 65536, "range": (0, 1)}),
                  ("u8 16x16", rng.integers(0, 256, (16, 16), dtype=np.uint8), {})]
    for name, img, kw in cases:
        if sequence == "mid-first":
            out = np.empty(65536, np.uint64)
        else:
            out = np.empty(pixsum.histogram(img, **kw).shape, np.uint64)
        best = 1e9
        for _ in range(7):
            t = time.perf_counter()
            for _ in range(20):
                pixsum.histogram(img, out=out, **kw)
            best = min(best, (time.perf_counter() - t) / 20 * 1e6)
        print(f"  {name:22s} {best:9.1f} us", flush=True)


def main():
    if len(sys.argv) > 3 and sys.argv[1] == "--measure":
        sys.path.insert(0, sys.argv[3])
        measure(sys.argv[2])
        return
    for rnd in (1, 2):
        for path in sys.argv[1:]:
            for sequence in ("small-first", "mid-first"):
                print(f"== {path}, {sequence} (round {rnd})", flush=True)
                subprocess.run([sys.executable, __file__, "--measure", sequence, path],
                               check=True)


if __name__ == "__main__":
    main()

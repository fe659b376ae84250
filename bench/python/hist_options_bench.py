#!/usr/bin/env python3
"""hist_options_bench.py - NumPy's and scikit-image's histogram options in
pixsum against NumPy / scikit-image on the same images, same process:
histogram over 65 given (non-uniform) edges vs np.histogram(bins=edges),
weighted 64-bin histogram vs np.histogram(weights=), and float equalisation
vs skimage.exposure.equalize_hist. Median of repeated runs, milliseconds.

Usage: PYTHONPATH=BUILD/python python3 bench/python/hist_options_bench.py [N]
"""

import sys
import time

import numpy as np

import pixsum


def med(f, reps=9):
    f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return 1e3 * sorted(ts)[len(ts) // 2]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2048
    rng = np.random.default_rng(7)
    f32 = rng.random((n, n), dtype=np.float32)
    u8 = rng.integers(0, 256, (n, n), dtype=np.uint8)
    edges = np.sort(rng.random(65)) * 1.2 - 0.1
    w = rng.random((n, n))
    rows = []
    for name, img in (("f32", f32), ("u8", u8)):
        e = edges if name == "f32" else np.sort(rng.integers(0, 256, 65)).astype(float)
        rows.append((f"{name} edges (64 bins)",
                     med(lambda: pixsum.histogram(img, bins=e, closed_last=True)),
                     med(lambda: np.histogram(img, bins=e))))
    rows.append(("f32 weights (64 bins)",
                 med(lambda: pixsum.histogram(f32, bins=64, range=(0, 1), weights=w,
                                              closed_last=True)),
                 med(lambda: np.histogram(f32, bins=64, range=(0, 1), weights=w))))
    try:
        from skimage.exposure import equalize_hist
        rows.append(("f32 equalize (256 bins)", med(lambda: pixsum.equalize(f32)),
                     med(lambda: equalize_hist(f32))))
    except ImportError:
        pass
    print(f"{n}x{n}; ms (median); pixsum vs NumPy/scikit-image")
    for name, a, b in rows:
        print(f"{name:26s} {a:9.2f} {b:9.2f}  x{b / a:.1f}")


if __name__ == "__main__":
    main()

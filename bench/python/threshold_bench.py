#!/usr/bin/env python3
"""threshold_bench.py - the local thresholds and local normalisation of
pixsum (pixsum.threshold_local / normalize_local, i.e. the library's
pixsum_threshold_local / pixsum_normalize_local on the streamed box filter)
against scikit-image in the same process, one thread (issues 41 and 43).

For a --size^2 uint8 image and each window it times, best of --reps runs:
  sauvola    pixsum.threshold_local(method='sauvola', threads=1) into a
             preallocated float64 map, against
             skimage.filters.threshold_sauvola (fewer repetitions: seconds)
  niblack    the same with method='niblack' / threshold_niblack
  mean       method='mean', border='reflect' / threshold_local(method='mean')
  mask       sauvola written as a uint8 mask only (output='mask')
  normalize  pixsum.normalize_local into a float32 image
  floor      pixsum.box_filter(stat='std', dtype=float64): the box filter
             that computes the same window sums, the cost the local
             operations add to
and prints a table (ms, and skimage / pixsum). Environment: OMP_NUM_THREADS
and the BLAS thread variables are set to 1 before NumPy is imported.

Usage: python3 bench/python/threshold_bench.py [--size 4096] [--windows 25]
       [--reps 5] [--sk-reps 1] [--json PATH]
"""
import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import pixsum  # noqa: E402

try:
    from skimage import filters as skf
except ImportError:  # the comparison column stays empty
    skf = None


def best_ms(fn, reps, warm=True):
    if warm:
        fn()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--windows", default="25")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sk-reps", type=int, default=1)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    n = args.size
    img = np.random.default_rng(0).integers(0, 256, (n, n), dtype=np.uint8)
    f64 = np.empty((n, n), np.float64)
    f32 = np.empty((n, n), np.float32)
    u8 = np.empty((n, n), np.uint8)
    rows = []
    print(f"{n}x{n} uint8, one thread, pixsum {pixsum.version()}, {platform.processor()}")
    print(f"{'case':10} {'window':>6} {'pixsum ms':>10} {'skimage ms':>11} {'ratio':>7}")
    for w in (int(x) for x in args.windows.split(",")):
        cases = [
            ("sauvola", lambda: pixsum.threshold_local(img, w, method="sauvola", out=f64,
                                                       threads=1),
             (lambda: skf.threshold_sauvola(img, window_size=w)) if skf else None),
            ("niblack", lambda: pixsum.threshold_local(img, w, method="niblack", k=-0.2,
                                                       out=f64, threads=1),
             (lambda: skf.threshold_niblack(img, window_size=w, k=0.2)) if skf else None),
            ("mean", lambda: pixsum.threshold_local(img, w, method="mean", border="reflect",
                                                    out=f64, threads=1),
             (lambda: skf.threshold_local(img, w, method="mean")) if skf else None),
            ("mask", lambda: pixsum.threshold_local(img, w, method="sauvola", output="mask",
                                                    out=u8, threads=1), None),
            ("normalize", lambda: pixsum.normalize_local(img, w, out=f32, threads=1), None),
            ("floor", lambda: pixsum.box_filter(img, w, border="reflect101", stat="std",
                                                out=f64, method="box.stream"), None),
        ]
        for name, ours, theirs in cases:
            ms = best_ms(ours, args.reps)
            sk = best_ms(theirs, args.sk_reps, warm=False) if theirs else None
            ratio = f"{sk / ms:7.1f}" if sk else "      -"
            print(f"{name:10} {w:6d} {ms:10.1f} {sk if sk else float('nan'):11.1f} {ratio}")
            rows.append({"case": name, "window": w, "pixsum_ms": ms, "skimage_ms": sk})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"size": n, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

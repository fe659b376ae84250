#!/usr/bin/env python3
"""box_filter_bench.py - the CPU box filter (pixsum.box_filter, i.e. the
library's pixsum_box_filter) against OpenCV and a memory floor, in one
process, one thread each (issue 43's targets).

For each case it times, best of --reps runs:
  pixsum   pixsum.box_filter(img, k, border='reflect101', stat, dtype)
  opencv   cv2.blur (u8 -> u8) or cv2.boxFilter of the same types
  floor    a kernel that reads the input once and writes an output of the
           output's type once (numpy's casting copy, np.copyto), the bytes any
           box filter must move; timed again before every window, the best
           time of the case so far used
All three write into the same preallocated output (out= / dst=), so no
timing includes the page faults of a fresh output array. The variance
filter of OpenCV is two calls plus the arithmetic (sqrBoxFilter - boxFilter^2).
and prints a table (ms, and the ratios floor/pixsum and opencv/pixsum).
--json PATH writes the raw figures there (nothing is written otherwise).

Usage: python3 bench/python/box_filter_bench.py [--size 4096] [--reps 7]
       [--windows 3,15,63,255] [--cases NAME,...] [--json build/box_filter_bench.json]
With PYTHONPATH at a build of a pixsum whose box_filter has no border=/stat=
(before the streamed operation), the legacy call is timed where it exists.
"""
import argparse
import json
import os
import platform
import time

import numpy as np

import pixsum

try:
    import cv2
except ImportError:  # the comparison columns stay empty
    cv2 = None


def best_ms(fn, reps):
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
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--windows", default="3,15,63,255")
    ap.add_argument("--json", default=None)
    ap.add_argument("--cases", default=None, help="comma-separated case names to run")
    args = ap.parse_args()
    if cv2 is not None:
        cv2.setNumThreads(1)
    n = args.size
    rng = np.random.default_rng(0)
    u8 = rng.integers(0, 256, (n, n), dtype=np.uint8)
    f32 = rng.random((n, n), dtype=np.float32)
    wins = [int(w) for w in args.windows.split(",")]
    # (name, image, stat, out dtype, opencv call)
    cases = [
        ("u8->u8 mean", u8, "mean", np.uint8,
         lambda img, k, d: cv2.blur(img, (k, k), dst=d)),
        ("u8->f32 mean", u8, "mean", np.float32,
         lambda img, k, d: cv2.boxFilter(img, cv2.CV_32F, (k, k), dst=d)),
        ("u8->u32 sum", u8, "sum", np.uint32,
         lambda img, k, d: cv2.boxFilter(img, cv2.CV_32S, (k, k), dst=d.view(np.int32),
                                         normalize=False)),
        ("f32->f32 mean", f32, "mean", np.float32,
         lambda img, k, d: cv2.boxFilter(img, cv2.CV_32F, (k, k), dst=d)),
        ("u8->f64 var", u8, "var", np.float64,
         lambda img, k, d: np.subtract(cv2.sqrBoxFilter(img, cv2.CV_64F, (k, k)),
                                       np.square(cv2.boxFilter(img, cv2.CV_64F, (k, k))),
                                       out=d)),
    ]
    # A pixsum without border=/stat= (before the streamed operation) runs its
    # own 'same' border (shrink) with normalize=; u8 means and variances n/a.
    try:
        pixsum.box_filter(u8[:8, :8], 3, border="reflect101", stat="mean")
        legacy = False
    except TypeError:
        legacy = True
        print("legacy pixsum.box_filter: border 'same' (shrink), no u8 output, no var")
    rows = []
    print(f"{n}x{n}, 1 thread, best of {args.reps}; border reflect101 "
          f"(OpenCV's default); {platform.processor() or platform.machine()}")
    print(f"{'case':<15} {'k':>4} {'floor ms':>9} {'pixsum ms':>10} {'opencv ms':>10} "
          f"{'floor/px':>9} {'cv/px':>6}")
    if args.cases:
        keep = set(args.cases.split(","))
        cases = [c for c in cases if c[0] in keep]
    for name, img, stat, dt, cvf in cases:
        dst = np.empty(img.shape, dt)
        floor = float("inf")
        for k in wins:
            # the floor is timed again before each window and the best so far
            # kept: load from other processes only ever slows a copy down
            floor = min(floor, best_ms(lambda: np.copyto(dst, img, casting="unsafe"),
                                       args.reps))
            if legacy and (stat == "var" or dt == np.uint8):
                px = float("nan")
            elif legacy:
                px = best_ms(lambda: pixsum.box_filter(img, k, normalize=stat == "mean",
                                                       dtype=dt, threads=1, out=dst), args.reps)
            else:
                px = best_ms(lambda: pixsum.box_filter(img, k, border="reflect101", stat=stat,
                                                       dtype=dt, threads=1, out=dst), args.reps)
            cv = best_ms(lambda: cvf(img, k, dst), args.reps) if cv2 is not None \
                else float("nan")
            rows.append(dict(case=name, k=k, floor_ms=floor, pixsum_ms=px, opencv_ms=cv,
                             legacy=legacy))
            print(f"{name:<15} {k:>4} {floor:>9.2f} {px:>10.2f} {cv:>10.2f} "
                  f"{floor / px:>9.2f} {cv / px:>6.2f}")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as fh:
            json.dump(dict(size=n, reps=args.reps, machine=platform.processor(), rows=rows),
                      fh, indent=1)


if __name__ == "__main__":
    main()

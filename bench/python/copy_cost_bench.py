#!/usr/bin/env python3
"""copy_cost_bench.py - what "any array in" (issue 41) costs: pixsum.integral
of one image given in layouts and dtypes that are read in place against
those that psb_input_array() (python/src/common.c) copies once into a packed
temporary, one thread, best of --reps runs.

Cases (an S x S image; the table type is the default for the input's type):
  c-order u8        the packed array, read in place (the baseline)
  crop u8           a[1:, 1:] of an (S+1)^2 array, read in place
  fortran u8        np.asfortranarray: read in place, as the transposed table
                    of its C-order memory (out= in Fortran order)
  transposed u8     a.T of a C-order array: the same
  fortran, C out    the Fortran image with a C-order out=: one transposing copy
                    of the image (NumPy's), the slowest kind of copy
  channel u8        rgb[..., 0] of an (S, S, 3) array: a strided copy
  big-endian u16    '>u2': a byte-swapping copy
  bool              viewed as uint8, no copy
  int8              a converting copy to int16
  float16           a converting copy to float32
  int64             a range check, then a narrowing copy to int32
Each row gives the time, and the time over the C-order uint8 baseline. The
tables are written into a preallocated out= array (in the layout integral()
returns for that input), so no timing includes the page faults of a fresh
result.

Usage: python3 bench/python/copy_cost_bench.py [--size 4096] [--reps 7]
       [--json build/copy_cost_bench.json]
Nothing is written unless --json is given.
"""
import argparse
import json
import platform
import time

import numpy as np

import pixsum


def best_ms(fn, reps):
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def cases(size, rng):
    u8 = rng.integers(0, 256, (size, size), dtype=np.uint8)
    big = rng.integers(0, 256, (size + 1, size + 1), dtype=np.uint8)
    rgb = rng.integers(0, 256, (size, size, 3), dtype=np.uint8)
    return [
        ("c-order u8", u8),
        ("crop u8", big[1:, 1:]),
        ("fortran u8", np.asfortranarray(u8)),
        ("transposed u8", np.ascontiguousarray(u8).T),
        ("fortran, C out", np.asfortranarray(u8)),
        ("channel u8", rgb[..., 0]),
        ("big-endian u16", u8.astype(">u2")),
        ("bool", u8 > 127),
        ("int8", u8.view(np.int8)),
        ("float16", u8.astype(np.float16)),
        ("int64", u8.astype(np.int64)),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--json", default=None, help="write the raw figures to this path")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    base = None
    for name, img in cases(args.size, rng):
        # out= in the layout integral() gives this input (a transposed image
        # gets the transposed table of its memory: Fortran order)
        out = np.empty_like(pixsum.integral(img, threads=1))
        if name == "fortran, C out":
            out = np.empty(img.shape, out.dtype)
        pixsum.integral(img, threads=1, out=out)  # warm: pages of out touched
        ms = best_ms(lambda: pixsum.integral(img, threads=1, out=out), args.reps)
        base = base or ms
        rows.append({"case": name, "dtype": str(img.dtype), "table": str(out.dtype),
                     "ms": ms, "ratio": ms / base})
    print(f"pixsum.integral, {args.size}x{args.size}, threads=1, best of {args.reps} "
          f"({platform.processor() or platform.machine()})")
    print(f"{'case':<16} {'dtype':<8} {'table':<7} {'ms':>9} {'x c-order':>10}")
    for r in rows:
        print(f"{r['case']:<16} {r['dtype']:<8} {r['table']:<7} {r['ms']:9.2f} "
              f"{r['ratio']:10.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"size": args.size, "reps": args.reps, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

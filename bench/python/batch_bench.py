#!/usr/bin/env python3
"""batch_bench.py - CPU batches against one large image of the same bytes.

Issue 39's CPU target: a batch of small images runs on all cores and moves
its bytes within 10% of the rate of one large image of the same total size.
For each case this times, in one process, best of --reps after a warm-up:
  - the batch call (integral / histogram / box_filter / equalize with
    batch=True; box filters: means of 5x5 windows, u8 -> u8 and u8 -> f32),
  - a Python loop of single-image calls over the same stack,
  - one image holding the same pixels (N*H x W: the same bytes in and out),
and prints the batch's rate relative to the large image (1.0 = the same
bytes per second). Threads: --threads (default: all cores).

Usage: PYTHONPATH=<build>/python python3 bench/python/batch_bench.py [--reps 7]
       [--threads 0] [--ops integral,histogram,box_u8,box_f32,equalize] [--json FILE]
"""

import argparse
import json
import os
import platform
import time

import numpy as np

import pixsum

CASES = [  # (op, N, H, W)
    ("integral", 256, 224, 224),
    ("integral", 64, 512, 512),
    ("integral", 16, 1080, 1920),
    ("histogram", 256, 224, 224),
    ("histogram", 64, 512, 512),
    ("histogram", 16, 1080, 1920),
    ("box_u8", 256, 224, 224),
    ("box_u8", 64, 512, 512),
    ("box_u8", 16, 1080, 1920),
    ("box_f32", 256, 224, 224),
    ("box_f32", 64, 512, 512),
    ("box_f32", 16, 1080, 1920),
    ("equalize", 256, 224, 224),
    ("equalize", 64, 512, 512),
    ("equalize", 16, 1080, 1920),
]


def best(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--ops", default=None,
                    help="comma-separated subset of the ops above (default: all)")
    ap.add_argument("--json", default=None, help="also write the rows here")
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    thr = a.threads
    print(f"# pixsum {pixsum.__version__ if hasattr(pixsum, '__version__') else ''} "
          f"python {platform.python_version()} numpy {np.__version__}, "
          f"{os.cpu_count()} cores, threads={thr or 'all'}, best of {a.reps}, u8 images")
    print(f"{'op':10} {'batch':>16} {'batch ms':>9} {'loop ms':>9} {'large ms':>9} "
          f"{'batch/large rate':>16} {'loop/batch':>10}")
    rows = []
    ops = set(a.ops.split(",")) if a.ops else None
    for op, n, h, w in CASES:
        if ops is not None and op not in ops:
            continue
        x = rng.integers(0, 256, (n, h, w), dtype=np.uint8)
        big = x.reshape(n * h, w)
        if op == "integral":
            out = np.empty((n, h, w), np.uint32)
            t_batch = best(lambda: pixsum.integral(x, batch=True, out=out, threads=thr), a.reps)
            t_loop = best(lambda: [pixsum.integral(x[i], out=out[i], threads=thr)
                                   for i in range(n)], a.reps)
            # the same bytes: u8 in, 4-byte tables out (the large image's own
            # rule would want u64; time the u32 table in wrap mode)
            big32 = np.empty((n * h, w), np.uint32)
            t_big = best(lambda: pixsum.integral(big, out=big32, dtype=np.uint32, wrap=True,
                                                 threads=thr), a.reps)
        elif op.startswith("box"):
            # mean of 5x5 windows (reflect101 borders), u8 -> u8 or u8 -> f32;
            # the large image's extra window rows at the seams cost nothing
            dt = np.uint8 if op == "box_u8" else np.float32
            out = np.empty((n, h, w), dt)
            big_out = out.reshape(n * h, w)
            kw = dict(stat="mean", mode="reflect101", dtype=dt, threads=thr)
            t_batch = best(lambda: pixsum.box_filter(x, 5, batch=True, out=out, **kw), a.reps)
            t_loop = best(lambda: [pixsum.box_filter(x[i], 5, out=out[i], **kw)
                                   for i in range(n)], a.reps)
            t_big = best(lambda: pixsum.box_filter(big, 5, out=big_out, **kw), a.reps)
        elif op == "equalize":
            out = np.empty((n, h, w), np.uint8)
            big_out = out.reshape(n * h, w)
            t_batch = best(lambda: pixsum.equalize(x, batch=True, out=out, threads=thr), a.reps)
            t_loop = best(lambda: [pixsum.equalize(x[i], out=out[i], threads=thr)
                                   for i in range(n)], a.reps)
            t_big = best(lambda: pixsum.equalize(big, out=big_out, threads=thr), a.reps)
        else:
            t_batch = best(lambda: pixsum.histogram(x, batch=True, threads=thr), a.reps)
            t_loop = best(lambda: [pixsum.histogram(x[i], threads=thr) for i in range(n)],
                          a.reps)
            t_big = best(lambda: pixsum.histogram(big, threads=thr), a.reps)
        ratio = t_big / t_batch
        print(f"{op:10} {f'{n} x {h}x{w}':>16} {t_batch * 1e3:9.3f} {t_loop * 1e3:9.3f} "
              f"{t_big * 1e3:9.3f} {ratio:16.2f} {t_loop / t_batch:10.2f}")
        rows.append({"op": op, "n": n, "h": h, "w": w, "batch_ms": t_batch * 1e3,
                     "loop_ms": t_loop * 1e3, "large_ms": t_big * 1e3,
                     "batch_rate_of_large": ratio})
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()

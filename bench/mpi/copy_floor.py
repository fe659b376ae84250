#!/usr/bin/env python3
"""copy_floor.py - the host's memory floor for a distributed integral image.

For N processes (one per rank, as `mpirun -np N pixsum integral --mpi
--threads 1` would run), each converts its strip of an H x W u8 image into a
u64 array of the same shape (np.copyto: one read of the input bytes, one write
of the table's bytes, the bytes the integral must move), all strips at once
behind a barrier. Prints, per N, the slowest process's best time of R repeats
and the aggregate bandwidth.

usage: copy_floor.py [--size 16384x16384] [--ranks 1,2,4,8,16] [--repeat 5]
"""
import argparse
import multiprocessing as mp
import time

import numpy as np


def worker(rows, width, repeat, barrier, results, index):
    src = np.random.default_rng(index).integers(0, 256, (rows, width), dtype=np.uint8)
    dst = np.empty((rows, width), dtype=np.uint64)
    np.copyto(dst, src)  # touch the pages before timing
    best = float("inf")
    for _ in range(repeat):
        barrier.wait()
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
    results[index] = best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="16384x16384", help="W x H")
    ap.add_argument("--ranks", default="1,2,4,8,16")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    print(f"copy floor: {width}x{height} u8 -> u64 (np.copyto), best of {args.repeat}, slowest process")
    print("ranks  ms      GB/s (read + write)")
    for n in (int(v) for v in args.ranks.split(",")):
        rows = [height // n + (1 if r < height % n else 0) for r in range(n)]
        barrier = mp.Barrier(n)
        results = mp.Array("d", n)
        procs = [mp.Process(target=worker, args=(rows[r], width, args.repeat, barrier, results, r))
                 for r in range(n)]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        slowest = max(results[:])
        print(f"{n:5d}  {slowest * 1e3:7.2f} {width * height * 9 / slowest / 1e9:7.1f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""copy_floor.py - the host's memory floor for a distributed integral image.

For N processes (one per rank, as `mpirun -np N pixsum integral --mpi
--threads 1` would run), each moves the bytes its strip of an H x W u8 image
must move into a u64 table: it writes the table's bytes once (glibc memset,
which streams large buffers past the cache) and reads the input's bytes once
(an XOR reduction over them as 64-bit words), all processes at once behind a
barrier. Prints, per N, the slowest process's best time of R repeats of each
part, their sum (the floor) and the aggregate bandwidth.

usage: copy_floor.py [--size 16384x16384] [--ranks 1,2,4,8,16] [--repeat 5]
"""
import argparse
import ctypes
import multiprocessing as mp
import time

import numpy as np

LIBC = ctypes.CDLL(None)
LIBC.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]


def worker(rows, width, repeat, barrier, results, index):
    src = np.random.default_rng(index).integers(0, 256, rows * width, dtype=np.uint8)
    words = src[: src.size // 8 * 8].view(np.uint64)
    dst = np.empty((rows, width), dtype=np.uint64)
    LIBC.memset(dst.ctypes.data, 1, dst.nbytes)  # touch the pages before timing
    write = read = float("inf")
    for _ in range(repeat):
        barrier.wait()
        t0 = time.perf_counter()
        LIBC.memset(dst.ctypes.data, 1, dst.nbytes)
        write = min(write, time.perf_counter() - t0)
        barrier.wait()
        t0 = time.perf_counter()
        np.bitwise_xor.reduce(words)
        read = min(read, time.perf_counter() - t0)
    results[2 * index] = write
    results[2 * index + 1] = read


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="16384x16384", help="W x H")
    ap.add_argument("--ranks", default="1,2,4,8,16")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    print(f"memory floor: {width}x{height} u8 -> u64 table: write 8 B/px (memset) + read "
          f"1 B/px; best of {args.repeat}, slowest process")
    print("ranks  write ms  read ms  floor ms  GB/s")
    for n in (int(v) for v in args.ranks.split(",")):
        rows = [height // n + (1 if r < height % n else 0) for r in range(n)]
        barrier = mp.Barrier(n)
        results = mp.Array("d", 2 * n)
        procs = [mp.Process(target=worker, args=(rows[r], width, args.repeat, barrier, results, r))
                 for r in range(n)]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        write, read = max(results[0::2]), max(results[1::2])
        floor = write + read
        print(f"{n:5d}  {write * 1e3:8.2f} {read * 1e3:8.2f} {floor * 1e3:9.2f} "
              f"{width * height * 9 / floor / 1e9:6.1f}")


if __name__ == "__main__":
    main()

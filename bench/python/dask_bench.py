#!/usr/bin/env python3
"""dask_bench.py - the integral table of a Zarr image written into a Zarr
array, three ways (issue #42's workload):

  pixsum.dask   pixsum.dask.integral_to_zarr() on a distributed cluster of
                worker processes: edge sums, carries, tables chunk by chunk,
                each worker writing its chunks (nothing gathered to the client)
  in memory     the whole image read into the client, one pixsum.integral()
                call, the table written into the same kind of Zarr array
  dask cumsum   da.from_zarr(img).cumsum(axis=0, dtype=uint64).cumsum(axis=1)
                stored into the same kind of Zarr array (da.store) through
                the same cluster

Default: a 16384 x 16384 uint8 image in 8 x 8 = 64 chunks, uint64 tables,
uncompressed Zarr arrays with the image's chunks, 2 worker processes of one
thread. Prints the wall time of each, the ratios, and the bytes the workers
sent each other (the workers' transfer logs), then checks that the three
tables are equal. Raw output goes to --out (default: build/dask_bench.txt).

    PYTHONPATH=build/python /usr/bin/python3 bench/python/dask_bench.py \
        --dir build/dask_bench
"""

import argparse
import os
import shutil
import sys
import time

import numpy as np


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dir", default=os.path.join("build", "dask_bench"),
                   help="folder for the Zarr arrays (local disk; removed and re-created)")
    p.add_argument("--size", type=int, default=16384, help="image side (pixels)")
    p.add_argument("--grid", type=int, default=8, help="chunks per side (8: 64 chunks)")
    p.add_argument("--workers", type=int, default=2, help="worker processes")
    p.add_argument("--repeat", type=int, default=1, help="runs of each (the best is kept)")
    p.add_argument("--out", default=os.path.join("build", "dask_bench.txt"),
                   help="raw output file")
    p.add_argument("--no-check", action="store_true", help="skip comparing the tables")
    return p.parse_args()


def transfer_bytes(client):
    """Bytes each worker received from other workers so far (distributed's
    incoming transfer log; its name changed between versions)."""
    def received(dask_worker):
        state = getattr(dask_worker, "state", None)
        for owner in (dask_worker, state):
            for name in ("transfer_incoming_log", "incoming_transfer_log"):
                log = getattr(owner, name, None) if owner is not None else None
                if log is not None:
                    return int(sum(e.get("total", 0) for e in log))
        return -1
    return sum(client.run(received).values())


def main():
    a = parse()
    import dask
    import dask.array as da
    import distributed
    import zarr
    import pixsum
    import pixsum.dask as pdask

    lines = []

    def say(text):
        print(text, flush=True)
        lines.append(text)

    n, chunk = a.size, a.size // a.grid
    shutil.rmtree(a.dir, ignore_errors=True)
    os.makedirs(a.dir)
    src_path = os.path.join(a.dir, "image.zarr")
    src = zarr.open(src_path, mode="w", shape=(n, n), dtype=np.uint8, chunks=(chunk, chunk),
                    compressor=None)
    rng = np.random.default_rng(1)
    for i in range(a.grid):  # written band by band: the image is never whole here
        src[i * chunk:(i + 1) * chunk] = rng.integers(0, 256, (chunk, n), dtype=np.uint8)
    say(f"image {n} x {n} uint8 in {a.grid} x {a.grid} chunks of {chunk} x {chunk}, "
        f"uint64 tables, uncompressed Zarr on {a.dir}; {a.workers} worker processes x 1 "
        f"thread; pixsum {pixsum.__version__}, dask {dask.__version__}, "
        f"distributed {distributed.__version__}, zarr {zarr.__version__}")

    def dest(name):
        path = os.path.join(a.dir, name)
        shutil.rmtree(path, ignore_errors=True)
        return zarr.open(path, mode="w", shape=(n, n), dtype=np.uint64, chunks=(chunk, chunk),
                         compressor=None)

    cluster = distributed.LocalCluster(n_workers=a.workers, threads_per_worker=1,
                                       processes=True, host="127.0.0.1",
                                       dashboard_address=None, silence_logs=40)
    client = distributed.Client(cluster)

    def run_pixsum_dask():
        pdask.integral_to_zarr(src_path, dest("sat_pixsum_dask.zarr"), dtype=np.uint64)

    def run_in_memory():
        img = zarr.open(src_path, mode="r")[...]
        table = pixsum.integral(img, dtype=np.uint64)
        dest("sat_in_memory.zarr")[...] = table

    def run_cumsum():
        x = da.from_zarr(src_path)
        t = x.cumsum(axis=0, dtype=np.uint64).cumsum(axis=1, dtype=np.uint64)
        da.store(t, dest("sat_dask_cumsum.zarr"), lock=False)  # as integral_to_zarr

    results = {}
    for name, fn, on_cluster in [("pixsum.dask", run_pixsum_dask, True),
                                 ("in memory", run_in_memory, False),
                                 ("dask cumsum", run_cumsum, True)]:
        best, moved = None, None
        for _ in range(a.repeat):
            before = transfer_bytes(client)
            t0 = time.perf_counter()
            fn()
            dt = time.perf_counter() - t0
            after = transfer_bytes(client)
            if best is None or dt < best:
                best, moved = dt, after - before
        results[name] = best
        extra = f", {moved} bytes between workers" if on_cluster else ""
        say(f"{name:12s} {best:8.2f} s{extra}")
    say(f"pixsum.dask / in memory   = {results['pixsum.dask'] / results['in memory']:.2f} "
        f"(target <= 2)")
    say(f"dask cumsum / pixsum.dask = {results['dask cumsum'] / results['pixsum.dask']:.2f} "
        f"(target >= 3)")
    if not a.no_check:
        z = [zarr.open(os.path.join(a.dir, f), mode="r") for f in
             ("sat_pixsum_dask.zarr", "sat_in_memory.zarr", "sat_dask_cumsum.zarr")]
        for i in range(a.grid):
            band = slice(i * chunk, (i + 1) * chunk)
            ref = z[1][band]
            if not (np.array_equal(z[0][band], ref) and np.array_equal(z[2][band], ref)):
                say(f"MISMATCH in rows {band.start}..{band.stop}")
                sys.exit(1)
        say("the three tables are equal")
    client.close()
    cluster.close()
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

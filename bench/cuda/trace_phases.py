#!/usr/bin/env python3
"""trace_phases.py - reads the phase traces of the staged cuda.lookback kernel
(files trace-<variant>-<size>[-padK].bin written by `gpu_bench trace` from a
library built with -DPIXSUM_CUDA_TRACE=ON) and prints, per file:

  * the median and 90th percentile of each phase per tile (us): load (input
    into shared memory), sums (column and row sums), lookback (both walks, up
    to the barrier after them), write (table rows, up to the block's end);
  * how many blocks are in each phase at 12 instants of the launch (shows
    whether the blocks move in lockstep);
  * the vertical and horizontal walk times and lengths by tile column tx;
  * the memory traffic over time implied by the phases (the tile's input read
    during its load, 4 B per pixel written during its write; u8 -> u32 tiles of
    256 x 128, f32 -> f32 tiles of 256 x 64 in files trace-f32-*);
  * with 14-word records (serial look-backs): the look-back phase split into
    the bottom-row and right-column sums, the vertical walk, the horizontal
    walk and the wait after it, and the vertical walk of the tiles whose tile
    above had published its inclusive row before the walk began (one read
    round trip and the publish, no waiting).

Record layout (14 u64 per tile, 12 in traces before 2026-11-25's seventeenth
session; see LB_TRACE_WORDS in src/cuda/sat_lookback.cuh): [0] SM << 32 |
horizontal steps << 16 | vertical steps, [1..5] %globaltimer ns at start,
loaded, sums done, look-backs done, end, [6..10] clock64 at the same points,
[11] clock64 after the vertical walk, [12] before it, [13] after the
horizontal walk.

usage: trace_phases.py FILE...   (numpy required)
"""
import re
import sys

import numpy as np

TILE_W, TILE_H = 256, 128
# f32 -> f32 traces (files trace-f32-*, gpu_bench with BENCH_TRACE_PAIR=f32):
# tiles of 256 x 64, 4 B per pixel read and written.
F32_TILE_H = 64


def load(path, tiles):
    """The records of a trace file: 14 words per tile, or 12 in older files
    (told apart by the tile count the file name implies, when it does)."""
    raw = np.fromfile(path, dtype=np.uint64)
    words = 14
    if tiles and raw.size == 12 * tiles:
        words = 12
    elif not tiles and raw.size % 14:
        words = 12
    return raw.reshape(-1, words).astype(np.int64)


def report(path):
    m = re.search(r"-(\d+)(?:-pad\d+)?\.bin$", path)
    side = int(m.group(1)) if m else 0
    tiles_x = max(side // TILE_W, 1)
    tile_h = F32_TILE_H if "trace-f32-" in path else TILE_H
    rec = load(path, tiles_x * max(side // tile_h, 1) if side else 0)
    t0 = rec[:, 1].min()
    at = (rec[:, 1:6] - t0) / 1000.0  # us: start, loaded, sums, lookback done, end
    span = at[:, 4].max()
    print(f"== {path}: {len(rec)} tiles, span {span:.1f} us")
    names = ["load", "sums", "lookback", "write"]
    for k, name in enumerate(names):
        d = at[:, k + 1] - at[:, k]
        print(f"   {name:9s} p50 {np.median(d):6.2f}  p90 {np.percentile(d, 90):6.2f}")
    print("   blocks per phase at 12 instants (load/sums/lookback/write):")
    for t in np.linspace(0, span, 12)[1:-1]:
        c = [int(((at[:, k] <= t) & (at[:, k + 1] > t)).sum()) for k in range(4)]
        print(f"     t={t:6.1f} us  {c[0]:4d} {c[1]:4d} {c[2]:4d} {c[3]:4d}")
    ghz = np.median((rec[:, 10] - rec[:, 6]) / np.maximum(rec[:, 5] - rec[:, 1], 1))
    vert = (rec[:, 11] - rec[:, 8]) / ghz / 1000.0
    horiz = (rec[:, 9] - rec[:, 11]) / ghz / 1000.0
    vsteps = rec[:, 0] & 0xFFFF
    hsteps = (rec[:, 0] >> 16) & 0xFFFF
    if vsteps.any() or hsteps.any():
        tx = np.arange(len(rec)) % tiles_x
        print("   walks by tile column (us and tiles read, medians):")
        for c in sorted({0, tiles_x // 4, tiles_x // 2, tiles_x - 1}):
            sel = tx == c
            print(f"     tx={c:3d}  vertical {np.median(vert[sel]):5.2f} us"
                  f" {np.median(vsteps[sel]):3.0f}  horizontal"
                  f" {np.median(horiz[sel]):5.2f} us {np.median(hsteps[sel]):3.0f}")
    if rec.shape[1] >= 14 and (rec[:, 12] > 0).any():
        walk_parts(rec, at, ghz, tiles_x)
    grid = np.linspace(0, span, 400)
    rd = np.zeros_like(grid)
    wr = np.zeros_like(grid)
    f32 = "trace-f32-" in path
    tile_px = TILE_W * (F32_TILE_H if f32 else TILE_H)
    in_bytes = 4 if f32 else 1
    for a in at:
        sel = (grid >= a[0]) & (grid < a[1])
        rd[sel] += in_bytes * tile_px / max(a[1] - a[0], 1e-3)
        sel = (grid >= a[3]) & (grid < a[4])
        wr[sel] += 4 * tile_px / max(a[4] - a[3], 1e-3)
    mid = (grid > 0.15 * span) & (grid < 0.85 * span)
    tot = (rd + wr) / 1e6  # bytes/us -> TB/s
    print(f"   traffic: mean {tot.mean():.2f} TB/s, middle 70% {tot[mid].mean():.2f}"
          f" (reads {rd[mid].mean() / 1e6:.2f}, writes {wr[mid].mean() / 1e6:.2f}),"
          f" p90 {np.percentile(tot[mid], 90):.2f}")


def walk_parts(rec, at, ghz, tiles_x):
    """The serial look-back phase in parts (p50 / p90, us), and the vertical
    walk of tiles whose tile above had published before the walk began."""
    ok = rec[:, 12] > 0
    # clock64 point k of each tile on the ns clock (us), from the sums-done point
    on_ns = lambda k: at[:, 2] + (rec[:, k] - rec[:, 8]) / ghz / 1000.0
    vstart, vend, hend = on_ns(12), on_ns(11), on_ns(13)
    parts = [("row and column sums", vstart - at[:, 2]), ("vertical walk", vend - vstart),
             ("horizontal walk", hend - vend), ("wait after the walks", at[:, 3] - hend)]
    print("   look-back phase in parts (us, p50 / p90):")
    for name, d in parts:
        print(f"     {name:22s} {np.median(d[ok]):5.2f} / {np.percentile(d[ok], 90):5.2f}")
    t = np.arange(len(rec))
    sel = ok & (t >= tiles_x)
    sel[sel] &= ok[t[sel] - tiles_x]
    idx = t[sel]
    slack = vend[idx - tiles_x] - vstart[idx]
    ready = idx[slack < -0.3]
    if len(ready):
        d = vend[ready] - vstart[ready]
        print(f"     vertical walk, tile above published > 0.3 us before: {len(ready)} tiles,"
              f" p25 {np.percentile(d, 25):.2f} p50 {np.median(d):.2f}"
              f" p90 {np.percentile(d, 90):.2f}")


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    for path in argv[1:]:
        report(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

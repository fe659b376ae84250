#!/usr/bin/env python3
"""compare_apps.py - the pixsum functions that compare_cpu.py does not time,
against the peer a Python user would reach for, on the CPU, in one process.

compare_cpu.py covers the headline operations (u8 integral, f32 integral, the
squared table, the u8 256-bin histogram, the valid box mean). This script
covers the rest of the public Python API with an obvious peer:

  - histogram of a 3-channel u8 image (cv2.calcHist per channel, np.bincount)
  - histogram of u8 under a random mask (cv2.calcHist with the mask, bincount)
  - histogram of u16 with 65536 bins (np.bincount, cv2.calcHist)
  - histogram of f32 with 256 bins over a range (np.histogram, cv2.calcHist)
  - histogram2d of two u8 images, 256 x 256 (np.histogram2d, cv2.calcHist), on
    random pairs and on a constant pair (every pixel in one cell)
  - integral_tilted of u8 (cv2.integral3's tilted table)
  - integral3d of a u8 volume (numpy cumsum on three axes)
  - box_filter 'same' with clipped windows (cv2.boxFilter sums / counts)
  - box_sum and box_var of a million random boxes (NumPy fancy indexing of the
    four corners)
  - IntegralHistogram of a 1024x1024 u8 image, 32 bins, built and queried for
    10^5 random boxes up to 64x64 (np.bincount and cv2.calcHist per crop)

Every peer result is compared with pixsum's before it is timed. Integer
results must be equal; where a peer bins floats differently the row says by
how many samples the counts differ, so the reader can judge the comparison.

Usage (from a build tree whose python/ holds the extension):
    PYTHONPATH=build-py/python /usr/bin/python3 bench/python/compare_apps.py \
        [--size 4096] [--repeat 15] [--threads 1]
"""

import argparse
import os
import platform

import numpy as np

import pixsum
from compare_cpu import Table, check_equal, cv2


def count_diff(a, b):
    """Sum of absolute count differences (0: identical)."""
    return int(np.abs(np.asarray(a, np.int64) - np.asarray(b, np.int64)).sum())


def bench_hist_channels(tab, n, threads, rng):
    img = rng.integers(0, 256, (n, n, 3), dtype=np.uint8)
    out = np.empty((3, 256), np.uint64)
    ref = pixsum.histogram(img, threads=threads)
    planes = [np.ascontiguousarray(img[..., c]).ravel() for c in range(3)]
    check_equal(ref, np.stack([np.bincount(p, minlength=256) for p in planes]), "bincount")
    peers = [("np.bincount per channel (contiguous planes)",
              lambda: [np.bincount(p, minlength=256) for p in planes])]
    if cv2 is not None:
        def calc():
            return [cv2.calcHist([img], [c], None, [256], [0, 256]) for c in range(3)]
        check_equal(ref, np.stack([h.ravel() for h in calc()]), "calcHist")
        peers.append(("cv2.calcHist x3 (interleaved)", calc))
    tab.group(f"histogram u8 3 channels 256 bins {n}x{n}",
              ("pixsum.histogram(out=)",
               lambda: pixsum.histogram(img, out=out, threads=threads)), peers, n * n * 3)


def bench_hist_masked(tab, n, threads, rng):
    img = rng.integers(0, 256, (n, n), dtype=np.uint8)
    mask = (rng.random((n, n)) < 0.5).astype(np.uint8)
    out = np.empty(256, np.uint64)
    ref = pixsum.histogram(img, mask=mask, threads=threads)
    sel = mask.astype(bool)
    check_equal(ref, np.bincount(img[sel], minlength=256), "bincount")
    peers = [("np.bincount(img[mask])", lambda: np.bincount(img[sel], minlength=256))]
    if cv2 is not None:
        def calc():
            return cv2.calcHist([img], [0], mask, [256], [0, 256])
        check_equal(ref, calc().ravel(), "calcHist with a mask")
        peers.append(("cv2.calcHist(mask=)", calc))
    tab.group(f"histogram u8 256 bins, random 50% mask {n}x{n}",
              ("pixsum.histogram(mask=, out=)",
               lambda: pixsum.histogram(img, mask=mask, out=out, threads=threads)), peers,
              n * n)


def bench_hist_u16(tab, n, threads, rng):
    img = rng.integers(0, 65536, (n, n), dtype=np.uint16)
    out = np.empty(65536, np.uint64)
    ref = pixsum.histogram(img, bins=65536, threads=threads)
    flat = img.ravel()
    check_equal(ref, np.bincount(flat, minlength=65536), "bincount")
    peers = [("np.bincount(minlength=65536)", lambda: np.bincount(flat, minlength=65536))]
    if cv2 is not None:
        def calc():
            return cv2.calcHist([img], [0], None, [65536], [0, 65536])
        check_equal(ref, calc().ravel(), "calcHist")
        peers.append(("cv2.calcHist 65536 bins", calc))
    tab.group(f"histogram u16 65536 bins {n}x{n}",
              ("pixsum.histogram(out=)",
               lambda: pixsum.histogram(img, bins=65536, out=out, threads=threads)), peers, n * n)


def bench_hist_f32(tab, n, threads, rng):
    img = rng.random((n, n), dtype=np.float32)
    out = np.empty(256, np.uint64)
    ref = pixsum.histogram(img, bins=256, range=(0.0, 1.0), threads=threads)
    peers = []
    d = count_diff(ref, np.histogram(img, bins=256, range=(0.0, 1.0))[0])
    peers.append((f"np.histogram(bins=256, range) [differs by {d}]",
                  lambda: np.histogram(img, bins=256, range=(0.0, 1.0))))
    if cv2 is not None:
        def calc():
            return cv2.calcHist([img], [0], None, [256], [0.0, 1.0])
        d = count_diff(ref, calc().ravel())
        peers.append((f"cv2.calcHist f32 [differs by {d}]", calc))
    tab.group(f"histogram f32 256 bins [0,1) {n}x{n}",
              ("pixsum.histogram(out=)",
               lambda: pixsum.histogram(img, bins=256, range=(0.0, 1.0), out=out,
                                        threads=threads)), peers, n * n)


def bench_hist2d(tab, n, threads, rng, constant=False):
    if constant:
        a = np.full((n, n), 77, np.uint8)
        b = np.full((n, n), 200, np.uint8)
    else:
        a = rng.integers(0, 256, (n, n), dtype=np.uint8)
        b = ((a.astype(np.uint16) + rng.integers(0, 32, (n, n))) % 256).astype(np.uint8)
    out = np.empty((256, 256), np.uint64)
    ref = pixsum.histogram2d(a, b, threads=threads)
    fa, fb = a.ravel(), b.ravel()

    def np2d():
        return np.histogram2d(fa, fb, bins=256, range=[[0, 256], [0, 256]])[0]

    def flat_bincount():
        return np.bincount(fa.astype(np.int32) * 256 + fb, minlength=65536)

    check_equal(ref, np2d(), "np.histogram2d")
    check_equal(ref.ravel(), flat_bincount(), "bincount of a*256+b")
    peers = [("np.histogram2d(bins=256)", np2d),
             ("np.bincount(a*256 + b)", flat_bincount)]
    if cv2 is not None:
        def calc():
            return cv2.calcHist([a, b], [0, 1], None, [256, 256], [0, 256, 0, 256])
        check_equal(ref, calc(), "calcHist 2-D")
        peers.append(("cv2.calcHist([a, b], 256 x 256)", calc))
    tab.group(f"histogram2d u8 256x256 bins {n}x{n} {'constant' if constant else 'random'}",
              ("pixsum.histogram2d(out=)",
               lambda: pixsum.histogram2d(a, b, out=out, threads=threads)), peers, n * n)


def bench_tilted(tab, n, threads, rng):
    img = rng.integers(0, 256, (n, n), dtype=np.uint8)
    ref = pixsum.integral_tilted(img, threads=threads)
    peers = []
    if cv2 is not None:
        def calc():
            return cv2.integral3(img, sdepth=cv2.CV_32S, sqdepth=cv2.CV_64F)
        check_equal(ref, calc()[2], "cv2.integral3 tilted")
        label = "cv2.integral3 (sum + squares + tilted)"
        peers.append((label, calc))
    tab.group(f"tilted SAT u8 {n}x{n}",
              ("pixsum.integral_tilted", lambda: pixsum.integral_tilted(img, threads=threads)),
              peers, n * n)


def bench_volume(tab, n, threads, rng):
    d = max(1, (n * n) // (512 * 512))
    vol = rng.integers(0, 256, (d, 512, 512), dtype=np.uint8)
    ref = pixsum.integral3d(vol, threads=threads)

    def np3():
        return vol.cumsum(0, dtype=ref.dtype).cumsum(1, dtype=ref.dtype).cumsum(2, dtype=ref.dtype)

    check_equal(ref, np3(), "numpy cumsum x3")
    tab.group(f"3-D SAT u8 {d}x512x512",
              ("pixsum.integral3d", lambda: pixsum.integral3d(vol, threads=threads)),
              [(f"numpy cumsum(0).cumsum(1).cumsum(2) {ref.dtype}", np3)], vol.size)


def bench_box_same(tab, n, threads, rng, k=15):
    img = rng.integers(0, 256, (n, n), dtype=np.uint8)
    ours = pixsum.box_filter(img, k, mode="same", threads=threads)
    peers = []
    if cv2 is not None:
        f = img.astype(np.float64)
        ones = np.ones_like(f)

        def clipped_mean():
            s = cv2.boxFilter(f, -1, (k, k), normalize=False, borderType=cv2.BORDER_CONSTANT)
            c = cv2.boxFilter(ones, -1, (k, k), normalize=False,
                              borderType=cv2.BORDER_CONSTANT)
            return s / c

        np.testing.assert_allclose(ours, clipped_mean(), rtol=1e-9)
        peers.append(("cv2.boxFilter sums / counts (f64)", clipped_mean))
    tab.group(f"box mean {k}x{k} 'same' (clipped) u8 {n}x{n}",
              ("pixsum.box_filter(mode='same')",
               lambda: pixsum.box_filter(img, k, mode="same", threads=threads)), peers, n * n)


def bench_box_queries(tab, n, threads, rng, count=1_000_000):
    img = rng.integers(0, 256, (n, n), dtype=np.uint8)
    table = pixsum.integral(img, padded=True)
    t2, sq = pixsum.integral_sq(img, padded=True)
    x, y = rng.integers(0, n - 64, count), rng.integers(0, n - 64, count)
    w, h = rng.integers(1, 64, count), rng.integers(1, 64, count)
    boxes = np.stack([x, y, w, h], axis=1)

    def corners(t):
        return t[y + h, x + w] - t[y, x + w] - t[y + h, x] + t[y, x]

    def np_var():
        area = (w * h).astype(np.float64)
        s = corners(t2).astype(np.float64)
        return corners(sq).astype(np.float64) / area - (s / area) ** 2

    check_equal(pixsum.box_sum(table, boxes, padded=True), corners(table), "numpy corners")
    np.testing.assert_allclose(pixsum.box_var(t2, sq, boxes, padded=True), np_var(),
                               rtol=1e-6, atol=1e-6)
    tab.group(f"box_sum, {count} random boxes up to 63x63, u32 table {n}x{n}",
              ("pixsum.box_sum", lambda: pixsum.box_sum(table, boxes, padded=True)),
              [("numpy corner gathers", lambda: corners(table))], count)
    tab.group(f"box_var, {count} random boxes, u32 + u64 tables {n}x{n}",
              ("pixsum.box_var (exact integer variance)",
               lambda: pixsum.box_var(t2, sq, boxes, padded=True)),
              [("numpy corners, float64 E[x^2] - E[x]^2", np_var)], count)


def bench_ihist(tab, n, threads, rng, count=100_000, size=1024, bins=32):
    img = rng.integers(0, 256, (size, size), dtype=np.uint8)
    x, y = rng.integers(0, size - 64, count), rng.integers(0, size - 64, count)
    w, h = rng.integers(1, 65, count), rng.integers(1, 65, count)
    boxes = np.stack([x, y, w, h], axis=1)
    shift = 8 - int(np.log2(bins))  # 256 / bins values per bin

    def ours():
        return pixsum.IntegralHistogram(img, bins=bins, threads=threads).query(
            boxes, threads=threads)

    def per_crop_bincount():
        return [np.bincount((img[b:b + d, a:a + c] >> shift).ravel(), minlength=bins)
                for a, b, c, d in boxes]

    ref = ours()
    check_equal(ref, np.stack(per_crop_bincount()), "bincount per crop")
    peers = [("np.bincount per crop", per_crop_bincount)]
    if cv2 is not None:
        def per_crop_calc():
            return [cv2.calcHist([img[b:b + d, a:a + c]], [0], None, [bins], [0, 256])
                    for a, b, c, d in boxes]
        check_equal(ref, np.stack([hh.ravel() for hh in per_crop_calc()]), "calcHist per crop")
        peers.append(("cv2.calcHist per crop", per_crop_calc))
    tab.group(f"IntegralHistogram u8 {size}x{size} {bins} bins, built + {count} boxes up to "
              f"64x64", ("pixsum.IntegralHistogram(...).query(boxes)", ours), peers, count)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1,
                    help="pixsum threads (OpenCV is limited to the same count)")
    args = ap.parse_args()
    if cv2 is not None:
        cv2.setNumThreads(args.threads)
    rng = np.random.default_rng(2026)
    tab = Table(args)
    n = args.size
    for bench in (bench_hist_channels, bench_hist_masked, bench_hist_u16, bench_hist_f32,
                  bench_hist2d, bench_tilted, bench_volume, bench_box_same, bench_box_queries,
                  bench_ihist):
        bench(tab, n, args.threads, rng)
    bench_hist2d(tab, n, args.threads, rng, constant=True)
    print(f"pixsum {pixsum.__version__}, numpy {np.__version__}, "
          f"opencv {cv2.__version__ if cv2 else 'absent'}, "
          f"python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"threads={args.threads}, median/best of {args.repeat} after {args.warmup} warm-ups")
    print()
    print(tab.markdown())


if __name__ == "__main__":
    main()

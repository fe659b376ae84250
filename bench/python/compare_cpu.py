#!/usr/bin/env python3
"""compare_cpu.py - pixsum's Python package against the Python tools people use
today, on the CPU, in one process (same run, same data, same machine state).

Peers: NumPy cumsum (x2), scikit-image integral_image, OpenCV cv2.integral /
integral2 / calcHist / blur, np.bincount and np.histogram. Each row times the
same operation on the same array; the last column is peer time / pixsum time
(> 1: pixsum is faster). Every result is checked against pixsum's before it
is timed, so no row compares different work.

Timing: each callable runs `--warmup` times, then `--repeat` times; the
table gives the median and the best (minimum) in milliseconds.

Usage (from the build tree, so that `import pixsum` finds the extension):
    PYTHONPATH=build-py/python /usr/bin/python3 bench/python/compare_cpu.py \
        [--sizes 1024 4096] [--repeat 15] [--threads 1]
Prints a Markdown table (and a GIL-release row: two Python threads running
pixsum calls at once against the same calls one after the other).
"""

import argparse
import os
import platform
import statistics
import threading
import time

import numpy as np

import pixsum

try:
    import cv2
except ImportError:  # pragma: no cover
    cv2 = None
try:
    from skimage.transform import integral_image as sk_integral_image
except ImportError:  # pragma: no cover
    sk_integral_image = None


def timeit(fn, warmup, repeat):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), min(times)


class Table:
    def __init__(self, args):
        self.args = args
        self.rows = []

    def group(self, title, ours, peers, pixels):
        """ours: (label, fn); peers: list of (label, fn) - all doing the same work."""
        a = self.args
        t_ours = timeit(ours[1], a.warmup, a.repeat)
        self.rows.append((title, ours[0], t_ours, pixels, None))
        for label, fn in peers:
            t = timeit(fn, a.warmup, a.repeat)
            self.rows.append((title, label, t, pixels, t[0] / t_ours[0]))

    def markdown(self):
        out = ["| operation | implementation | median ms | best ms | px/ns (median) | "
               "peer / pixsum |", "|---|---|---|---|---|---|"]
        for title, label, (med, best), px, ratio in self.rows:
            out.append(f"| {title} | {label} | {med:.3f} | {best:.3f} | "
                       f"{px / (med * 1e6):.2f} | {'' if ratio is None else f'{ratio:.2f}x'} |")
        return "\n".join(out)


def check_equal(a, b, what):
    if not np.array_equal(np.asarray(a), np.asarray(b)):
        raise SystemExit(f"result mismatch in {what}: the comparison would be unfair")


def bench_integral(tab, n, threads, rng):
    img = rng.integers(0, 256, (n, n), dtype=np.uint8)
    out = np.empty((n, n), np.uint32)
    ref = pixsum.integral(img, threads=threads)
    check_equal(ref, img.cumsum(0, dtype=np.uint32).cumsum(1, dtype=np.uint32), "numpy")
    peers = [("numpy cumsum(0).cumsum(1) u32",
              lambda: img.cumsum(0, dtype=np.uint32).cumsum(1, dtype=np.uint32))]
    if sk_integral_image is not None:
        check_equal(ref, sk_integral_image(img), "skimage")
        peers.append(("skimage integral_image (u64)", lambda: sk_integral_image(img)))
    if cv2 is not None:
        check_equal(ref, cv2.integral(img, sdepth=cv2.CV_32S)[1:, 1:], "cv2.integral")
        peers.append(("cv2.integral CV_32S (padded)",
                      lambda: cv2.integral(img, sdepth=cv2.CV_32S)))
    tab.group(f"SAT u8->u32 {n}x{n}",
              ("pixsum.integral(out=)", lambda: pixsum.integral(img, out=out, threads=threads)),
              [("pixsum.integral (new array)",
                lambda: pixsum.integral(img, threads=threads))] + peers, n * n)


def bench_integral_f32(tab, n, threads, rng):
    img = rng.random((n, n), dtype=np.float32)
    out = np.empty((n, n), np.float64)
    ref = pixsum.integral(img, threads=threads)
    peers = [("numpy cumsum(0).cumsum(1) f64",
              lambda: img.cumsum(0, dtype=np.float64).cumsum(1))]
    np.testing.assert_allclose(ref, peers[0][1](), rtol=1e-9)
    if cv2 is not None:
        np.testing.assert_allclose(ref, cv2.integral(img, sdepth=cv2.CV_64F)[1:, 1:], rtol=1e-9)
        peers.append(("cv2.integral CV_64F", lambda: cv2.integral(img, sdepth=cv2.CV_64F)))
    tab.group(f"SAT f32->f64 {n}x{n}",
              ("pixsum.integral(out=)", lambda: pixsum.integral(img, out=out, threads=threads)),
              peers, n * n)


def bench_integral_sq(tab, n, threads, rng):
    img = rng.integers(0, 256, (n, n), dtype=np.uint8)
    o1, o2 = np.empty((n, n), np.uint32), np.empty((n, n), np.uint64)
    t, q = pixsum.integral_sq(img, threads=threads)
    peers = []
    if cv2 is not None:
        s, sq = cv2.integral2(img, sdepth=cv2.CV_32S, sqdepth=cv2.CV_64F)
        check_equal(t, s[1:, 1:], "cv2.integral2 sum")
        check_equal(q.astype(np.float64), sq[1:, 1:], "cv2.integral2 sq")
        peers.append(("cv2.integral2 (CV_32S, CV_64F)",
                      lambda: cv2.integral2(img, sdepth=cv2.CV_32S, sqdepth=cv2.CV_64F)))
    wide = img.astype(np.uint64)
    peers.append(("numpy cumsums of x and x^2",
                  lambda: ((img.cumsum(0, dtype=np.uint32).cumsum(1, dtype=np.uint32)),
                           (wide * wide).cumsum(0).cumsum(1))))
    tab.group(f"SAT + squared SAT u8 {n}x{n}",
              ("pixsum.integral_sq(out=)",
               lambda: pixsum.integral_sq(img, out=o1, out_sq=o2, threads=threads)),
              peers, n * n)


def bench_hist(tab, n, threads, rng, constant=False):
    img = (np.full((n, n), 77, np.uint8) if constant
           else rng.integers(0, 256, (n, n), dtype=np.uint8))
    out = np.empty(256, np.uint64)
    ref = pixsum.histogram(img, threads=threads)
    flat = img.ravel()
    check_equal(ref, np.bincount(flat, minlength=256), "bincount")
    check_equal(ref, np.histogram(img, bins=256, range=(0, 256))[0], "np.histogram")
    peers = [("np.bincount", lambda: np.bincount(flat, minlength=256)),
             ("np.histogram(bins=256)", lambda: np.histogram(img, bins=256, range=(0, 256)))]
    if cv2 is not None:
        check_equal(ref, cv2.calcHist([img], [0], None, [256], [0, 256]).ravel(), "calcHist")
        peers.append(("cv2.calcHist", lambda: cv2.calcHist([img], [0], None, [256], [0, 256])))
    tab.group(f"histogram u8 256 bins {n}x{n} {'constant' if constant else 'random'}",
              ("pixsum.histogram(out=)",
               lambda: pixsum.histogram(img, out=out, threads=threads)), peers, n * n)


def bench_box_filter(tab, n, threads, rng, k=15):
    img = rng.integers(0, 256, (n, n), dtype=np.uint8)
    ours = pixsum.box_filter(img, k, mode="valid", threads=threads)
    peers = []
    if cv2 is not None:
        f = img.astype(np.float64)
        want = cv2.blur(f, (k, k), borderType=cv2.BORDER_CONSTANT)[k // 2:n - k // 2,
                                                                    k // 2:n - k // 2]
        np.testing.assert_allclose(ours, want, rtol=1e-9)
        peers.append(("cv2.blur on float64 (same output type)",
                      lambda: cv2.blur(f, (k, k), borderType=cv2.BORDER_CONSTANT)))
        peers.append(("cv2.blur on uint8 (u8 output, rounded)",
                      lambda: cv2.blur(img, (k, k), borderType=cv2.BORDER_CONSTANT)))
    tab.group(f"box mean {k}x{k} u8 {n}x{n}",
              ("pixsum.box_filter (f64 means)",
               lambda: pixsum.box_filter(img, k, mode="valid", threads=threads)), peers, n * n)


def bench_gil(n, repeat):
    """Two Python threads each computing pixsum integrals at once, against the
    same calls one after the other, in the same run."""
    rng = np.random.default_rng(5)
    imgs = [rng.random((n, n), dtype=np.float32) for _ in range(2)]
    outs = [np.empty((n, n), np.float64) for _ in range(2)]

    def work(i):
        for _ in range(repeat):
            pixsum.integral(imgs[i], out=outs[i], threads=1)

    def serial_run():
        work(0)
        work(1)

    def parallel_run():
        ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    work(0)  # touch every page of the inputs and outputs first
    work(1)
    serial, parallel = [], []
    for _ in range(3):  # alternate, keep the best of each
        for fn, acc in ((serial_run, serial), (parallel_run, parallel)):
            t0 = time.perf_counter()
            fn()
            acc.append((time.perf_counter() - t0) * 1e3)
    return min(serial), min(parallel)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1024, 4096])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1,
                    help="pixsum threads (OpenCV is limited to the same count)")
    args = ap.parse_args()
    if cv2 is not None:
        cv2.setNumThreads(args.threads)
    rng = np.random.default_rng(2026)
    tab = Table(args)
    for n in args.sizes:
        bench_integral(tab, n, args.threads, rng)
    n = max(args.sizes)
    bench_integral_f32(tab, n, args.threads, rng)
    bench_integral_sq(tab, n, args.threads, rng)
    bench_hist(tab, n, args.threads, rng)
    bench_hist(tab, n, args.threads, rng, constant=True)
    bench_box_filter(tab, n, args.threads, rng)
    print(f"pixsum {pixsum.__version__}, numpy {np.__version__}, "
          f"opencv {cv2.__version__ if cv2 else 'absent'}, "
          f"scikit-image {'present' if sk_integral_image else 'absent'}, "
          f"python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"threads={args.threads}, median/best of {args.repeat} after {args.warmup} warm-ups")
    print()
    print(tab.markdown())
    serial, parallel = bench_gil(n, 4)
    print()
    print(f"GIL released: 2 x 4 pixsum.integral f32->f64 {n}x{n} (threads=1 each): "
          f"one after the other {serial:.1f} ms, two Python threads at once {parallel:.1f} ms "
          f"({serial / parallel:.2f}x)")


if __name__ == "__main__":
    main()

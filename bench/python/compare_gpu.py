#!/usr/bin/env python3
"""compare_gpu.py - pixsum on GPU arrays against PyTorch and CuPy, same
process, same data, on the GPU machine: integral vs torch.cumsum / CuPy cumsum
(two passes each); histogram (u8 256 bins, u16 65536 bins, f32 1000 bins at
4096^2 and 8192^2) vs torch.bincount / torch.histc and cupy.bincount /
cupy.histogram; equalize (u8) vs the same exact mapping written with each
library's bincount, cumsum and a gather (and torchvision's equalize, where
installed: PIL's formula, timing only); box_filter vs a cumsum-based box filter
of each library (and torch avg_pool2d for window means).

Each row times the same operation with CUDA events on the current stream:
`--warmup` runs, then `--repeat` timed runs; median and best in ms. Results
are checked against each other before timing. pixsum's GPU path allocates its
result like the peers do (a new array per call) unless the row says out=.

Usage (needs a CUDA build of pixsum with the Python package):
    PYTHONPATH=<build>/python python3 bench/python/compare_gpu.py [--size 8192]
"""

import argparse
import statistics

import numpy as np

import pixsum


def time_cuda(fn, sync, event, warmup, repeat):
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeat):
        start, stop = event(), event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) if hasattr(start, "elapsed_time")
                     else _cupy_elapsed(start, stop))
    return statistics.median(times), min(times)


def _cupy_elapsed(start, stop):
    import cupy
    return cupy.cuda.get_elapsed_time(start, stop)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--hist-sizes", default="4096,8192",
                    help="comma-separated image sides of the histogram rows")
    ap.add_argument("--window", type=int, default=15, help="box_filter window side")
    ap.add_argument("--only", choices=["integral", "hist", "equalize", "box"], default=None)
    a = ap.parse_args()
    n = a.size
    if not pixsum.HAVE_CUDA or pixsum.cuda_device_count() == 0:
        raise SystemExit("pixsum was built without CUDA or sees no device")
    rng = np.random.default_rng(4)
    host_u8 = rng.integers(0, 256, (n, n), dtype=np.uint8)
    host_f32 = rng.random((n, n), dtype=np.float32)
    rows = []
    if a.only in (None, "hist"):
        rows += hist_rows(a, [int(v) for v in a.hist_sizes.split(",") if v])
    if a.only in (None, "equalize"):
        rows += eq_rows(a, n)
    if a.only in (None, "box"):
        rows += box_rows(a, n)
    if a.only not in (None, "integral"):
        return report(a, rows)
    try:
        import torch
        ev = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
        sync = torch.cuda.synchronize
        u8, f32 = torch.from_numpy(host_u8).cuda(), torch.from_numpy(host_f32).cuda()
        ref = pixsum.integral(u8, dtype=np.int64)
        want = u8.cumsum(0, dtype=torch.int64).cumsum(1)
        sync()
        assert torch.equal(ref, want), "pixsum and torch disagree"
        out32 = torch.empty((n, n), dtype=torch.int64, device="cuda")
        rows += [
            (f"SAT u8 {n}x{n}", "pixsum.integral(torch u8) -> int64",
             time_cuda(lambda: pixsum.integral(u8, dtype=np.int64), sync, ev, a.warmup, a.repeat)),
            (f"SAT u8 {n}x{n}", "pixsum.integral(torch u8, out=) -> int64",
             time_cuda(lambda: pixsum.integral(u8, out=out32), sync, ev, a.warmup, a.repeat)),
            (f"SAT u8 {n}x{n}", "torch cumsum(0).cumsum(1) int64",
             time_cuda(lambda: u8.cumsum(0, dtype=torch.int64).cumsum(1), sync, ev, a.warmup,
                       a.repeat)),
            (f"SAT f32 {n}x{n}", "pixsum.integral(torch f32) -> f32",
             time_cuda(lambda: pixsum.integral(f32, dtype=np.float32), sync, ev, a.warmup,
                       a.repeat)),
            (f"SAT f32 {n}x{n}", "torch cumsum(0).cumsum(1) f32",
             time_cuda(lambda: f32.cumsum(0).cumsum(1), sync, ev, a.warmup, a.repeat)),
        ]
    except ImportError:
        pass
    try:
        import cupy as cp
        ev = lambda: cp.cuda.Event()  # noqa: E731
        sync = cp.cuda.Device().synchronize
        u8 = cp.asarray(host_u8)
        ref = pixsum.integral(u8)
        want = u8.cumsum(0, dtype=cp.uint32).cumsum(1, dtype=cp.uint32)
        # pixsum's default table is u64 once the sum can pass 2^32 (8192^2 does);
        # CuPy's u32 cumsum wraps there, so the two agree modulo 2^32.
        assert bool((ref.astype(cp.uint32) == want).all()), "pixsum and CuPy disagree"
        rows += [
            (f"SAT u8 {n}x{n}", f"pixsum.integral(cupy u8) -> {ref.dtype} (default)",
             time_cuda(lambda: pixsum.integral(u8), sync, ev, a.warmup, a.repeat)),
            (f"SAT u8 {n}x{n}", "cupy cumsum(0).cumsum(1) u32",
             time_cuda(lambda: u8.cumsum(0, dtype=cp.uint32).cumsum(1, dtype=cp.uint32), sync,
                       ev, a.warmup, a.repeat)),
        ]
    except ImportError:
        pass
    report(a, rows)


def _lib_of(impl):
    return "torch" if "torch" in impl else ("cupy" if "cupy" in impl else "")


def report(a, rows):
    """Prints the rows grouped by operation and library, pixsum first, each
    with its time over pixsum's on the same library's arrays (same run)."""
    print(f"pixsum {pixsum.__version__}, median/best of {a.repeat} after {a.warmup} warm-ups, "
          "CUDA events")
    print("| operation | implementation | median ms | best ms | time / pixsum's (median) |")
    print("|---|---|---|---|---|")
    ops = []
    for r in rows:
        if r[0] not in ops:
            ops.append(r[0])
    rows = sorted(rows, key=lambda r: (ops.index(r[0]), _lib_of(r[1]),
                                       not r[1].startswith("pixsum")))
    base = {}
    for op, impl, (med, best) in rows:
        if impl.startswith("pixsum"):
            base.setdefault((op, _lib_of(impl)), med)
        ref = base.get((op, _lib_of(impl)))
        ratio = f"{med / ref:.2f}" if ref else "-"
        print(f"| {op} | {impl} | {med:.3f} | {best:.3f} | {ratio} |")


def _torch_events():
    import torch
    return (lambda: torch.cuda.Event(enable_timing=True)), torch.cuda.synchronize


def _cupy_events():
    import cupy
    return (lambda: cupy.cuda.Event()), cupy.cuda.Device().synchronize


def hist_rows(a, sizes):
    """Histogram rows: pixsum.histogram on torch and CuPy arrays against each
    library's bincount and histc/histogram, results checked first."""
    rows = []
    rng = np.random.default_rng(5)
    for n in sizes:
        u8 = rng.integers(0, 256, (n, n), dtype=np.uint8)
        u16 = rng.integers(0, 65536, (n, n), dtype=np.uint16)
        f32 = rng.random((n, n), dtype=np.float32)
        want = {"u8": np.bincount(u8.ravel(), minlength=256),
                "u16": np.bincount(u16.ravel(), minlength=65536),
                "f32": pixsum.histogram(f32, bins=1000, range=(0, 1))}
        tag = f"{n}x{n}"
        try:
            import torch
        except ImportError:
            torch = None
        if torch is not None:
            ev, sync = _torch_events()
            t8 = torch.from_numpy(u8).cuda()
            t16 = torch.from_numpy(u16.view(np.int16)).cuda()
            tf = torch.from_numpy(f32).cuda()
            if getattr(torch, "uint16", None) is not None:
                t16u = t16.view(torch.uint16)
            else:
                t16u = None
            p8 = pixsum.histogram(t8)
            sync()
            assert np.array_equal(p8.cpu().numpy().astype(np.int64), want["u8"]), "torch u8"
            b8 = torch.bincount(t8.view(-1), minlength=256)
            assert np.array_equal(b8.cpu().numpy(), want["u8"]), "torch.bincount u8"
            pf = pixsum.histogram(tf, bins=1000, range=(0, 1))
            sync()
            assert np.array_equal(pf.cpu().numpy().astype(np.int64), want["f32"].astype(np.int64))
            rows += [
                (f"hist u8 256 bins {tag}", "pixsum.histogram(torch u8)",
                 time_cuda(lambda: pixsum.histogram(t8), sync, ev, a.warmup, a.repeat)),
                (f"hist u8 256 bins {tag}", "torch.bincount(u8, minlength=256)",
                 time_cuda(lambda: torch.bincount(t8.view(-1), minlength=256), sync, ev,
                           a.warmup, a.repeat)),
                (f"hist u8 256 bins {tag}", "torch.histc(u8.float(), 256, 0, 256)",
                 time_cuda(lambda: torch.histc(t8.float(), 256, 0, 256), sync, ev, a.warmup,
                           a.repeat)),
            ]
            wide = lambda: torch.bincount((t16.view(-1).to(torch.int32) & 0xFFFF),  # noqa: E731
                                          minlength=65536)
            assert np.array_equal(wide().cpu().numpy(), want["u16"]), "torch.bincount u16"
            if t16u is not None:
                p16 = pixsum.histogram(t16u)
                sync()
                assert np.array_equal(p16.cpu().numpy().astype(np.int64), want["u16"])
                rows.append((f"hist u16 65536 bins {tag}", "pixsum.histogram(torch u16)",
                             time_cuda(lambda: pixsum.histogram(t16u), sync, ev, a.warmup,
                                       a.repeat)))
            rows += [
                (f"hist u16 65536 bins {tag}", "torch.bincount(u16 as int32, minlength=65536)",
                 time_cuda(wide, sync, ev, a.warmup, a.repeat)),
                (f"hist f32 1000 bins {tag}", "pixsum.histogram(torch f32, range=(0, 1))",
                 time_cuda(lambda: pixsum.histogram(tf, bins=1000, range=(0, 1)), sync, ev,
                           a.warmup, a.repeat)),
                (f"hist f32 1000 bins {tag}", "torch.histc(f32, 1000, 0, 1)",
                 time_cuda(lambda: torch.histc(tf, 1000, 0, 1), sync, ev, a.warmup, a.repeat)),
            ]
            del t8, t16, tf, t16u
        try:
            import cupy as cp
        except ImportError:
            cp = None
        if cp is not None:
            ev, sync = _cupy_events()
            c8, c16, cf = cp.asarray(u8), cp.asarray(u16), cp.asarray(f32)
            assert np.array_equal(cp.asnumpy(pixsum.histogram(c8)), want["u8"]), "cupy u8"
            assert np.array_equal(cp.asnumpy(pixsum.histogram(c16)), want["u16"]), "cupy u16"
            assert np.array_equal(cp.asnumpy(cp.bincount(c8.ravel(), minlength=256)),
                                  want["u8"]), "cupy.bincount u8"
            assert np.array_equal(cp.asnumpy(pixsum.histogram(cf, bins=1000, range=(0, 1))),
                                  want["f32"]), "cupy f32"
            rows += [
                (f"hist u8 256 bins {tag}", "pixsum.histogram(cupy u8)",
                 time_cuda(lambda: pixsum.histogram(c8), sync, ev, a.warmup, a.repeat)),
                (f"hist u8 256 bins {tag}", "cupy.bincount(u8, minlength=256)",
                 time_cuda(lambda: cp.bincount(c8.ravel(), minlength=256), sync, ev, a.warmup,
                           a.repeat)),
                (f"hist u8 256 bins {tag}", "cupy.histogram(u8, 256, (0, 256))",
                 time_cuda(lambda: cp.histogram(c8, 256, (0, 256)), sync, ev, a.warmup,
                           a.repeat)),
                (f"hist u16 65536 bins {tag}", "pixsum.histogram(cupy u16)",
                 time_cuda(lambda: pixsum.histogram(c16), sync, ev, a.warmup, a.repeat)),
                (f"hist u16 65536 bins {tag}", "cupy.bincount(u16, minlength=65536)",
                 time_cuda(lambda: cp.bincount(c16.ravel(), minlength=65536), sync, ev,
                           a.warmup, a.repeat)),
                (f"hist f32 1000 bins {tag}", "pixsum.histogram(cupy f32, range=(0, 1))",
                 time_cuda(lambda: pixsum.histogram(cf, bins=1000, range=(0, 1)), sync, ev,
                           a.warmup, a.repeat)),
                (f"hist f32 1000 bins {tag}", "cupy.histogram(f32, 1000, (0, 1))",
                 time_cuda(lambda: cp.histogram(cf, 1000, (0, 1)), sync, ev, a.warmup,
                           a.repeat)),
            ]
            del c8, c16, cf
    return rows


def _eq_by_ops(x, flat, cumsum, bincount, where, clamp_min, take, arange):
    """pixsum_equalize's mapping of a u8 image written with array operations:
    histogram, cdf, cdf_min without a synchronisation, the rounded integer
    table, the identity for one value, then one gather."""
    cdf = cumsum(bincount(flat, 256))
    n = cdf[-1]
    cmin = where(cdf > 0, cdf, n).min()
    d = n - cmin
    lut = where(cdf > cmin, ((cdf - cmin) * 510 + d) // clamp_min(2 * d, 2), 0)
    lut = where(d == 0, arange(256), lut)
    return take(lut, x)


def eq_rows(a, n):
    """equalize rows: pixsum.equalize (u8) against the exact mapping written
    with each library's own operations (checked equal), and torchvision's
    equalize (another rounding: timing only) where it is installed."""
    rows = []
    rng = np.random.default_rng(7)
    host = (rng.random((n, n), dtype=np.float32) ** 2 * 255).astype(np.uint8)
    want = pixsum.equalize(host)
    op = f"equalize u8 {n}x{n}"
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        ev, sync = _torch_events()
        x = torch.from_numpy(host).cuda()

        def torch_eq():
            return _eq_by_ops(
                x, x.reshape(-1), lambda h: h.cumsum(0),
                lambda f, m: torch.bincount(f, minlength=m), torch.where,
                lambda v, lo: torch.clamp(v, min=lo),
                lambda lut, img: lut.to(torch.uint8)[img.to(torch.int64)],
                lambda m: torch.arange(m, device=x.device))

        assert np.array_equal(pixsum.equalize(x).cpu().numpy(), want), "pixsum torch equalize"
        assert np.array_equal(torch_eq().cpu().numpy(), want), "torch equalize"
        rows += [
            (op, "pixsum.equalize(torch u8)",
             time_cuda(lambda: pixsum.equalize(x), sync, ev, a.warmup, a.repeat)),
            (op, "torch bincount + cumsum + int64 table + gather",
             time_cuda(torch_eq, sync, ev, a.warmup, a.repeat)),
        ]
        try:
            from torchvision.transforms.v2 import functional as tvf
            rows.append((op, "torchvision equalize (other rounding)",
                         time_cuda(lambda: tvf.equalize(x[None]), sync, ev, a.warmup,
                                   a.repeat)))
        except ImportError:
            pass
        del x
    try:
        import cupy as cp
    except ImportError:
        cp = None
    if cp is not None:
        ev, sync = _cupy_events()
        x = cp.asarray(host)

        def cupy_eq():
            return _eq_by_ops(
                x, x.ravel(), lambda h: h.cumsum(),
                lambda f, m: cp.bincount(f, minlength=m), cp.where,
                lambda v, lo: cp.maximum(v, lo),
                lambda lut, img: lut.astype(cp.uint8)[img], lambda m: cp.arange(m))

        assert np.array_equal(cp.asnumpy(pixsum.equalize(x)), want), "pixsum cupy equalize"
        assert np.array_equal(cp.asnumpy(cupy_eq()), want), "cupy equalize"
        rows += [
            (op, "pixsum.equalize(cupy u8)",
             time_cuda(lambda: pixsum.equalize(x), sync, ev, a.warmup, a.repeat)),
            (op, "cupy bincount + cumsum + int64 table + gather",
             time_cuda(cupy_eq, sync, ev, a.warmup, a.repeat)),
        ]
        del x
    return rows


def box_rows(a, n):
    """box_filter rows: pixsum.box_filter (window sums, 'valid'; window means,
    'same') against each library's padded two-pass cumsum box filter, and
    torch avg_pool2d for means (its borders differ: timing only)."""
    rows = []
    k = a.window
    rng = np.random.default_rng(6)
    host = rng.integers(0, 256, (n, n), dtype=np.uint8)
    want_sum = pixsum.box_filter(host, k, mode="valid", normalize=False)
    op_sum, op_mean = f"box sums u8 {k}x{k} valid {n}x{n}", f"box means u8 {k}x{k} {n}x{n}"
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        torch = None
    if torch is not None:
        ev, sync = _torch_events()
        x = torch.from_numpy(host).cuda()

        def cumsum_box():
            p = F.pad(x.to(torch.int64).cumsum(0).cumsum(1), (1, 0, 1, 0))
            return p[k:, k:] - p[:-k, k:] - p[k:, :-k] + p[:-k, :-k]

        got = pixsum.box_filter(x, k, mode="valid", normalize=False, dtype=np.int64)
        sync()
        assert np.array_equal(got.cpu().numpy(), want_sum.astype(np.int64)), "pixsum torch box"
        assert np.array_equal(cumsum_box().cpu().numpy(), want_sum.astype(np.int64)), "torch box"
        rows += [
            (op_sum, "pixsum.box_filter(torch u8, normalize=False) -> int64",
             time_cuda(lambda: pixsum.box_filter(x, k, mode="valid", normalize=False,
                                                 dtype=np.int64), sync, ev, a.warmup,
                       a.repeat)),
            (op_sum, "torch int64 cumsum(0).cumsum(1) + 4-corner slices",
             time_cuda(cumsum_box, sync, ev, a.warmup, a.repeat)),
            (op_mean, "pixsum.box_filter(torch u8) -> float64 means",
             time_cuda(lambda: pixsum.box_filter(x, k), sync, ev, a.warmup, a.repeat)),
            (op_mean, "torch avg_pool2d(float32, stride 1, zero pad) (other borders)",
             time_cuda(lambda: F.avg_pool2d(x.float()[None, None], k, stride=1,
                                            padding=k // 2), sync, ev, a.warmup, a.repeat)),
        ]
        del x
    try:
        import cupy as cp
    except ImportError:
        cp = None
    if cp is not None:
        ev, sync = _cupy_events()
        x = cp.asarray(host)

        def cumsum_box_cp():
            p = cp.pad(x.astype(cp.int64).cumsum(0).cumsum(1), ((1, 0), (1, 0)))
            return p[k:, k:] - p[:-k, k:] - p[k:, :-k] + p[:-k, :-k]

        got = pixsum.box_filter(x, k, mode="valid", normalize=False)
        assert np.array_equal(cp.asnumpy(got), want_sum), "pixsum cupy box"
        assert np.array_equal(cp.asnumpy(cumsum_box_cp()), want_sum.astype(np.int64))
        rows += [
            (op_sum, f"pixsum.box_filter(cupy u8, normalize=False) -> {got.dtype}",
             time_cuda(lambda: pixsum.box_filter(x, k, mode="valid", normalize=False), sync,
                       ev, a.warmup, a.repeat)),
            (op_sum, "cupy int64 cumsum(0).cumsum(1) + 4-corner slices",
             time_cuda(cumsum_box_cp, sync, ev, a.warmup, a.repeat)),
            (op_mean, "pixsum.box_filter(cupy u8) -> float64 means",
             time_cuda(lambda: pixsum.box_filter(x, k), sync, ev, a.warmup, a.repeat)),
        ]
        try:
            from cupyx.scipy import ndimage
            rows.append((op_mean, "cupyx uniform_filter(float64, mode='constant') "
                         "(other borders)",
                         time_cuda(lambda: ndimage.uniform_filter(x.astype(cp.float64), k,
                                                                  mode="constant"),
                                   sync, ev, a.warmup, a.repeat)))
        except ImportError:
            pass
        del x
    return rows


if __name__ == "__main__":
    main()

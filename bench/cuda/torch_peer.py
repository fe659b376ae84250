#!/usr/bin/env python3
"""torch_peer.py - the PyTorch peer of pixsum's GPU integral images, timed in
one process with pixsum itself: torch.cumsum applied twice (rows, then
columns) on device data, pixsum's cuda.lookback on the same tensors (through
the C library, loaded with ctypes, on torch's current stream), and a
same-process floor (a widening copy out.copy_(x) that moves the same bytes).

u8 input: cumsum(cumsum(x, 1, dtype=int32), 0) (PyTorch has no uint32 scan)
against pixsum u8 -> u32 in wrap mode (the same bits: both are the table
modulo 2^32); f32 input: cumsum(cumsum(x, 1), 0) against pixsum f32 -> f32.
Timing: CUDA events around batches of calls after warm-up, median over
batches; inputs rotated over enough buffers to exceed twice the L2 cache when
one input + output fits in it.

usage: torch_peer.py [--lib PATH/libpixsum.so] [sizes...]
Prints a table and "csv,torch,<pair>,<n>,<copy_ms>,<cumsum2_ms>,<pixsum_ms>"
rows (pixsum_ms is -1 without the library).
"""
import ctypes
import sys

import torch

PIXSUM_U8, PIXSUM_U32, PIXSUM_F32 = 1, 5, 6
PIXSUM_PARAM_WRAP = 3


class View(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("type", ctypes.c_int),
                ("width", ctypes.c_size_t), ("height", ctypes.c_size_t),
                ("depth", ctypes.c_size_t), ("channels", ctypes.c_size_t),
                ("row_stride", ctypes.c_ssize_t), ("slice_stride", ctypes.c_ssize_t)]


class Pixsum:
    """cuda.lookback through the C API on torch tensors (device pointers)."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.pixsum_ctx_new.restype = ctypes.c_void_p
        self.lib.pixsum_ctx_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_ssize_t]
        self.lib.pixsum_ctx_set_method.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        self.lib.pixsum_cuda_integral.argtypes = [ctypes.c_void_p, ctypes.POINTER(View),
                                                  ctypes.POINTER(View), ctypes.c_void_p]
        self.lib.pixsum_last_error.restype = ctypes.c_char_p
        self.ctx = self.lib.pixsum_ctx_new()
        self.check(self.lib.pixsum_ctx_set(self.ctx, PIXSUM_PARAM_WRAP, 1))
        self.check(self.lib.pixsum_ctx_set_method(self.ctx, b"cuda.lookback"))

    def check(self, st):
        if st != 0:
            raise RuntimeError(f"pixsum status {st}: {self.lib.pixsum_last_error().decode()}")

    @staticmethod
    def view(t, ptype):
        h, w = t.shape
        return View(t.data_ptr(), ptype, w, h, 1, 1, t.stride(0) * t.element_size(), 0)

    def integral(self, x, out, itype, otype):
        vi, vo = self.view(x, itype), self.view(out, otype)
        stream = torch.cuda.current_stream().cuda_stream
        self.check(self.lib.pixsum_cuda_integral(self.ctx, ctypes.byref(vi), ctypes.byref(vo),
                                                 ctypes.c_void_p(stream)))


def median_ms(fn, nbufs, reps=15, batch=5):
    for i in range(3):
        fn(i % nbufs)
    torch.cuda.synchronize()
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    times = []
    k = 0
    for _ in range(reps):
        a.record()
        for _ in range(batch):
            fn(k % nbufs)
            k += 1
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / batch)
    times.sort()
    return times[len(times) // 2]


def main(argv):
    lib = None
    if len(argv) >= 2 and argv[0] == "--lib":
        lib, argv = argv[1], argv[2:]
    if not torch.cuda.is_available():
        print("skipped: no CUDA device")
        return 77
    px = Pixsum(lib) if lib else None
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 << 20)
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}"
          f", pixsum {'from ' + lib if px else 'not loaded'}")
    print(f"{'pair':10} {'size':>6} {'copy_ms':>10} {'cumsum2_ms':>11} {'vs_copy':>8}"
          f" {'pixsum_ms':>10} {'pixsum_vs_copy':>15} {'torch/pixsum':>13}")
    sizes = [int(s) for s in argv] or [1024, 4096, 8192, 16384]
    status = 0
    for pair in ("u8->i32", "f32->f32"):
        for n in sizes:
            if pair == "u8->i32":
                make = lambda: torch.randint(0, 256, (n, n), dtype=torch.uint8, device="cuda")
                odt, types = torch.int32, (PIXSUM_U8, PIXSUM_U32)
            else:
                make = lambda: torch.rand((n, n), dtype=torch.float32, device="cuda")
                odt, types = torch.float32, (PIXSUM_F32, PIXSUM_F32)
            pair_bytes = n * n * (1 if pair == "u8->i32" else 4) + n * n * 4
            nb = 1 if pair_bytes >= 2 * l2 else min(32, (4 * l2 + pair_bytes - 1) // pair_bytes)
            xs = [make() for _ in range(nb)]
            outs = [torch.empty((n, n), dtype=odt, device="cuda") for _ in range(nb)]
            copy = median_ms(lambda i: outs[i].copy_(xs[i]), nb)
            if pair == "u8->i32":
                scan = median_ms(lambda i: torch.cumsum(torch.cumsum(xs[i], 1, dtype=torch.int32),
                                                        0, out=outs[i]), nb)
            else:
                scan = median_ms(lambda i: torch.cumsum(torch.cumsum(xs[i], 1), 0, out=outs[i]), nb)
            # Both tables against the exact one (int64 sums): bit-equal modulo
            # 2^32 for u8 (torch's int32 and pixsum's u32 both wrap), within
            # float rounding for f32.
            got = torch.cumsum(torch.cumsum(xs[0], 1, dtype=odt), 0)
            if pair == "u8->i32":
                exact = torch.cumsum(torch.cumsum(xs[0].long(), 1), 0) & 0xFFFFFFFF
                torch_bad = int(((got.long() & 0xFFFFFFFF) != exact).sum())
            else:
                exact = torch.cumsum(torch.cumsum(xs[0].double(), 1), 0)
                torch_err = (got.double() - exact).abs().max().item()
                torch_bad = int(torch_err > 1e-4 * float(exact[-1, -1]) + 1)
            mine = -1.0
            if px:
                mine = median_ms(lambda i: px.integral(xs[i], outs[i], *types), nb)
                outs[0].fill_(0)
                px.integral(xs[0], outs[0], *types)
                torch.cuda.synchronize()
                if pair == "u8->i32":
                    wrong = (outs[0].long() & 0xFFFFFFFF) != exact
                else:
                    err = (outs[0].double() - exact).abs()
                    wrong = err > (2 * n + 16) * 2.0 ** -23 * exact.abs() + 1e-30
                nbad = int(wrong.sum())
                if nbad:
                    r, c = [int(v) for v in wrong.nonzero()[0]]
                    print(f"check: pixsum {pair} {n}^2 table WRONG at {nbad} elements, first"
                          f" ({r}, {c}): {int(outs[0][r, c]) if pair == 'u8->i32' else float(outs[0][r, c])}"
                          f" against {int(exact[r, c]) if pair == 'u8->i32' else float(exact[r, c])}")
                    status = 1
                del wrong
            if torch_bad:
                print(f"check: torch's {pair} {n}^2 table is off the exact one ({torch_bad})")
            print(f"{pair:10} {n:6d} {copy:10.4f} {scan:11.4f} {copy / scan:8.3f}"
                  f" {mine:10.4f} {copy / mine if mine > 0 else 0:15.3f}"
                  f" {scan / mine if mine > 0 else 0:13.2f}")
            print(f"csv,torch,{pair},{n},{copy:.5f},{scan:.5f},{mine:.5f}")
            del xs, outs, got, exact
            torch.cuda.empty_cache()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

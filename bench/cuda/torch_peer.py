#!/usr/bin/env python3
"""torch_peer.py - the PyTorch peer of pixsum's GPU integral images:
torch.cumsum applied twice (rows, then columns) on device data, next to a
same-process floor (a widening copy out.copy_(x) that moves the same bytes).

u8 input: cumsum(cumsum(x, 1, dtype=int32), 0) (PyTorch has no uint32 scan);
f32 input: cumsum(cumsum(x, 1), 0). Timing: CUDA events around batches of
calls after warm-up, median over batches; inputs rotated over enough buffers
to exceed twice the L2 cache when one input + output fits in it.
Prints a table and "csv,torch,<pair>,<n>,<copy_ms>,<cumsum2_ms>" rows.
"""
import sys

import torch


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


def main():
    if not torch.cuda.is_available():
        print("skipped: no CUDA device")
        return 77
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 << 20)
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    print(f"{'pair':10} {'size':>6} {'copy_ms':>10} {'cumsum2_ms':>11} {'vs_copy':>8}")
    sizes = [int(s) for s in sys.argv[1:]] or [1024, 4096, 8192, 16384]
    for pair in ("u8->i32", "f32->f32"):
        for n in sizes:
            if pair == "u8->i32":
                make = lambda: torch.randint(0, 256, (n, n), dtype=torch.uint8, device="cuda")
                odt = torch.int32
            else:
                make = lambda: torch.rand((n, n), dtype=torch.float32, device="cuda")
                odt = torch.float32
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
            # spot check of the peer itself: the last table element
            got = torch.cumsum(torch.cumsum(xs[0], 1, dtype=odt), 0)[-1, -1]
            if pair == "u8->i32":  # int32 wraps: compare modulo 2^32
                ref = int(xs[0].long().sum())
                assert (ref - int(got)) % (1 << 32) == 0
            else:
                ref = float(xs[0].double().sum())
                assert abs(float(got) - ref) <= 1e-3 * ref + 1
            print(f"{pair:10} {n:6d} {copy:10.4f} {scan:11.4f} {copy / scan:8.3f}")
            print(f"csv,torch,{pair},{n},{copy:.5f},{scan:.5f}")
            del xs, outs
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())

# the first torch_peer.py sequence (whose check failed once at 8192^2), repeated
import sys, torch
sys.path.insert(0, "bench/cuda")
from torch_peer import Pixsum, median_ms, PIXSUM_U8, PIXSUM_U32
px = Pixsum(sys.argv[1])
l2 = 50 << 20
fails = 0
for rep in range(int(sys.argv[2])):
    for n in (1024, 4096, 8192):
        pair_bytes = n * n * 5
        nb = 1 if pair_bytes >= 2 * l2 else min(32, (4 * l2 + pair_bytes - 1) // pair_bytes)
        xs = [torch.randint(0, 256, (n, n), dtype=torch.uint8, device="cuda") for _ in range(nb)]
        outs = [torch.empty((n, n), dtype=torch.int32, device="cuda") for _ in range(nb)]
        median_ms(lambda i: outs[i].copy_(xs[i]), nb)
        median_ms(lambda i: torch.cumsum(torch.cumsum(xs[i], 1, dtype=torch.int32), 0, out=outs[i]), nb)
        got = torch.cumsum(torch.cumsum(xs[0], 1, dtype=torch.int32), 0)
        median_ms(lambda i: px.integral(xs[i], outs[i], PIXSUM_U8, PIXSUM_U32), nb)
        px.integral(xs[0], outs[0], PIXSUM_U8, PIXSUM_U32)
        torch.cuda.synchronize()
        if not torch.equal(outs[0], got):
            exact = torch.cumsum(torch.cumsum(xs[0].long(), 1), 0) & 0xFFFFFFFF
            wp = ((outs[0].long() & 0xFFFFFFFF) != exact)
            wt = ((got.long() & 0xFFFFFFFF) != exact)
            idx = wp.nonzero()[:3].tolist()
            print(f"rep {rep} n {n}: DIFFER; pixsum wrong {int(wp.sum())} at {idx}, torch wrong {int(wt.sum())} at {wt.nonzero()[:3].tolist()}", flush=True)
            fails += 1
        del xs, outs, got
        torch.cuda.empty_cache()
    print(f"rep {rep} done, fails so far {fails}", flush=True)
print("FAILS", fails)

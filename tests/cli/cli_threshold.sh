#!/bin/sh
# cli_threshold.sh - `pixsum threshold` (mean, niblack, sauvola; map and mask)
# and `pixsum normalize` against a direct NumPy window computation, with odd
# and even windows, several borders, a window larger than the image; and the
# refusals (no method, a 3-channel image, a bad --foreground), which leave no
# output file.
. "$2/lib.sh"
need_numpy

"$PY" - <<'PYEOF' || exit 1
import numpy as np
rng = np.random.default_rng(41)
np.save("a.npy", rng.integers(0, 256, (23, 31), dtype=np.uint8))
np.save("c.npy", rng.integers(0, 256, (9, 8, 3), dtype=np.uint8))
PYEOF
run "$PIXSUM" threshold a.npy -o t_sau.npy --method sauvola --window 15
run "$PIXSUM" threshold a.npy -o t_nib.npy --method niblack --k -0.2 --window 7x4 --border reflect
run "$PIXSUM" threshold a.npy -o t_mean.npy --method mean --offset 3 --window 41 --border replicate --type f32
run "$PIXSUM" threshold a.npy -o k_sau.npy --method sauvola --k 0.3 --r 100 --window 9 --output mask --foreground 1
run "$PIXSUM" normalize a.npy -o n.npy --window 5 --eps 0.5
run "$PIXSUM" normalize c.npy -o nc.npy --window 3x5 --type f64 --border replicate

"$PY" - <<'PYEOF' || exit 1
import sys
import numpy as np

def ms(img, ww, wh, mode):
    img = img.astype(np.float64)
    pads = ((wh // 2, wh - 1 - wh // 2), (ww // 2, ww - 1 - ww // 2))
    p = np.pad(img, pads, mode=mode)
    w = np.lib.stride_tricks.sliding_window_view(p, (wh, ww))
    return w.mean(axis=(-1, -2)), w.std(axis=(-1, -2))

a = np.load("a.npy")
bad = []
m, s = ms(a, 15, 15, "reflect")
want = m * (1 + 0.2 * (s / 127.5 - 1))
if not np.allclose(np.load("t_sau.npy"), want, rtol=0, atol=1e-9): bad.append("sauvola")
m, s = ms(a, 7, 4, "symmetric")
if not np.allclose(np.load("t_nib.npy"), m - 0.2 * s, rtol=0, atol=1e-9): bad.append("niblack")
m, s = ms(a, 41, 41, "edge")
t = np.load("t_mean.npy")
if t.dtype != np.float32 or not np.allclose(t, m - 3, rtol=1e-6): bad.append("mean")
m, s = ms(a, 9, 9, "reflect")
T = m * (1 + 0.3 * (s / 100 - 1))
k = np.load("k_sau.npy")
far = np.abs(a - T) > 1e-9
if k.dtype != np.uint8 or not np.array_equal((k == 1)[far], (a > T)[far]) or set(np.unique(k)) - {0, 1}:
    bad.append("mask")
m, s = ms(a, 5, 5, "reflect")
if not np.allclose(np.load("n.npy"), (a - m) / (s + 0.5), rtol=1e-6, atol=1e-6): bad.append("normalize")
c = np.load("c.npy")
nc = np.load("nc.npy")
for ch in range(3):
    m, s = ms(c[..., ch], 3, 5, "edge")
    want = np.divide(c[..., ch] - m, s + 1e-6)
    if not np.allclose(nc[..., ch], want, rtol=1e-9, atol=1e-9): bad.append("normalize rgb")
if bad:
    print("mismatches:", bad)
    sys.exit(1)
PYEOF

expect_fail() {
    out=$1
    shift
    if "$@" 2>err.txt; then fail "expected a failure: $*"; fi
    [ -s err.txt ] || fail "no message: $*"
    [ ! -e "$out" ] || fail "a failed run left $out"
}
expect_fail x1.npy "$PIXSUM" threshold a.npy -o x1.npy --window 3
expect_fail x2.npy "$PIXSUM" threshold c.npy -o x2.npy --method mean --window 3
expect_fail x3.npy "$PIXSUM" threshold a.npy -o x3.npy --method mean --window 3 --output mask --foreground 300
expect_fail x4.npy "$PIXSUM" threshold a.npy -o x4.npy --method sauvola --window 99 --border valid
expect_fail x5.npy "$PIXSUM" normalize a.npy -o x5.npy --window 3 --eps -1
exit 0

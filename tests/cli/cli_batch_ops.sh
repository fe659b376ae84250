#!/bin/sh
# cli_batch_ops.sh - `pixsum box --batch`, `pixsum equalize --batch`,
# `pixsum threshold --batch` and `pixsum normalize --batch`: the
# pages of a multi-page TIFF (written here by tifffile) and the first axis of
# a .npy stack (N, H, W[, C]) as N images, each filtered or equalised on its
# own, written as an (N, ...) .npy or a multi-page TIFF; box sums and means
# are checked against window sums computed here with NumPy from the
# definition, equalisation against the formula applied to each image's own
# histogram (with shared and per-image masks), local thresholds (map and
# mask) and normalisation against window means and deviations computed here
# from the same window sums; refusals name the option.
. "$2/lib.sh"
need_numpy

"$PY" - <<'PYEOF' || exit 1
import numpy as np
rng = np.random.default_rng(39)
np.save("g.npy", rng.integers(0, 256, (5, 13, 17), dtype=np.uint8))
np.save("c.npy", rng.integers(0, 65536, (3, 9, 11, 3), dtype=np.uint16))
np.save("m1.npy", (rng.random((13, 17)) < 0.7).astype(np.uint8))
np.save("mn.npy", (rng.random((5, 13, 17)) < 0.7).astype(np.uint8))
PYEOF

run "$PIXSUM" box g.npy -o bs.npy --batch --window 5x3 --border reflect101
run "$PIXSUM" box g.npy -o bm.npy --batch --window 5 --stat mean --type u8 --border constant --value 7
run "$PIXSUM" box c.npy -o bc.npy --batch --window 3 --border valid
run "$PIXSUM" equalize g.npy -o eq.npy --batch
run "$PIXSUM" equalize c.npy -o eqc.npy --batch
run "$PIXSUM" equalize g.npy -o eq1.npy --batch --mask m1.npy
run "$PIXSUM" equalize g.npy -o eqn.npy --batch --mask mn.npy
run "$PIXSUM" threshold g.npy -o tmap.npy --batch --method mean --window 5x3 --offset 2.5
run "$PIXSUM" threshold g.npy -o tmask.npy --batch --method mean --window 5x3 --offset 2.5 \
    --output mask --foreground 9
run "$PIXSUM" normalize c.npy -o nc.npy --batch --window 3 --eps 0.5 --type f64
TIFF=0
if has_format tiff && "$PY" -c 'import tifffile' 2>/dev/null; then
    TIFF=1
    "$PY" -c '
import numpy as np, tifffile
g = np.load("g.npy")
with tifffile.TiffWriter("g.tif") as t:
    for k in range(len(g)):
        t.write(g[k])' || exit 1
    run "$PIXSUM" box g.tif -o bt.tif --batch --window 5x3 --border reflect101
    run "$PIXSUM" convert bt.tif bt.npy --batch
    run "$PIXSUM" equalize g.tif -o et.tif --batch
    run "$PIXSUM" convert et.tif et.npy --batch
    run "$PIXSUM" threshold g.tif -o tt.tif --batch --method mean --window 5x3 --offset 2.5 \
        --output mask --foreground 9
    run "$PIXSUM" convert tt.tif tt.npy --batch
fi

TIFF=$TIFF "$PY" - <<'PYEOF' || FAILS=$((FAILS + 1))
import os
import sys
import numpy as np

bad = []
def check(ok, what):
    if not ok:
        bad.append(what)

g, c = np.load("g.npy"), np.load("c.npy")

def windows(img, kh, kw, mode, value=0, valid=False):
    """Window sums and counts of one image (H, W[, C]) from the definition."""
    img = img.astype(np.int64)
    if img.ndim == 2:
        img = img[..., None]
    h, w = img.shape[:2]
    ay, ax = kh // 2, kw // 2
    if valid:
        oh, ow, oy, ox = h - kh + 1, w - kw + 1, 0, 0
    else:
        oh, ow, oy, ox = h, w, -ay, -ax
    s = np.zeros((oh, ow, img.shape[2]), np.int64)
    n = np.zeros((oh, ow, 1), np.int64)
    for y in range(oh):
        for x in range(ow):
            for dy in range(kh):
                for dx in range(kw):
                    sy, sx = y + oy + dy, x + ox + dx
                    if mode == "reflect101":
                        sy = abs(sy) if sy < h else 2 * h - 2 - sy
                        sx = abs(sx) if sx < w else 2 * w - 2 - sx
                    if 0 <= sy < h and 0 <= sx < w:
                        s[y, x] += img[sy, sx]
                    else:
                        s[y, x] += value
                    n[y, x] += 1
    return s, n

bs = np.load("bs.npy")
check(bs.shape == g.shape, f"box sums shape {bs.shape}")
for k in range(len(g)):
    s, _ = windows(g[k], 3, 5, "reflect101")
    check(np.array_equal(bs[k], s[..., 0]), f"box sums of image {k}")
bm = np.load("bm.npy")
check(bm.dtype == np.uint8 and bm.shape == g.shape, "box means: u8 of the stack's shape")
for k in range(len(g)):
    s, n = windows(g[k], 5, 5, "constant", 7)
    q, r = np.divmod(s, n)
    q = q + ((2 * r > n) | ((2 * r == n) & (q % 2 == 1)))  # to nearest, ties to even
    check(np.array_equal(bm[k], q[..., 0]), f"box means of image {k}")
bc = np.load("bc.npy")
check(bc.shape == (3, 7, 9, 3), f"valid box sums of a colour stack: {bc.shape}")
for k in range(len(c)):
    s, _ = windows(c[k], 3, 3, "", valid=True)
    check(np.array_equal(bc[k], s), f"valid box sums of colour image {k}")

def equalize(img, mask=None):
    """Each channel from its own histogram: round((cdf - cmin)(L-1)/(n - cmin))."""
    levels = 256 if img.dtype == np.uint8 else 65536
    x = img if img.ndim == 3 else img[..., None]
    out = np.empty_like(x)
    for ch in range(x.shape[2]):
        sel = x[..., ch] if mask is None else x[..., ch][mask != 0]
        cdf = np.cumsum(np.bincount(sel.ravel(), minlength=levels)).astype(object)
        n, cmin = cdf[-1], next((v for v in cdf if v), 0)
        if n == cmin:
            out[..., ch] = x[..., ch]
            continue
        num = np.array([max(v - cmin, 0) * (levels - 1) for v in cdf], dtype=object)
        lut = np.array([(2 * a + (n - cmin)) // (2 * (n - cmin)) for a in num], np.int64)
        out[..., ch] = lut[x[..., ch]]
    return out if img.ndim == 3 else out[..., 0]

m1, mn = np.load("m1.npy"), np.load("mn.npy")
for name, src, masks in (("eq", g, None), ("eqc", c, None), ("eq1", g, [m1] * 5),
                         ("eqn", g, list(mn))):
    got = np.load(f"{name}.npy")
    check(got.shape == src.shape and got.dtype == src.dtype, f"{name}: shape and dtype")
    for k in range(len(src)):
        want = equalize(src[k], None if masks is None else masks[k])
        check(np.array_equal(got[k], want), f"{name}: image {k}")
# local thresholds: T = m - 2.5, m the window sum over its count (both exact
# in f64, one division, as the library's correctly rounded mean)
tmap, tmask = np.load("tmap.npy"), np.load("tmask.npy")
check(tmap.shape == g.shape and tmap.dtype == np.float64, f"threshold map {tmap.shape}")
check(tmask.shape == g.shape and tmask.dtype == np.uint8, f"threshold mask {tmask.shape}")
for k in range(len(g)):
    s, n = windows(g[k], 3, 5, "reflect101")
    t = s[..., 0] / n[..., 0] - 2.5
    check(np.array_equal(tmap[k], t), f"threshold map of image {k}")
    check(np.array_equal(tmask[k], np.where(g[k] > t, 9, 0)), f"threshold mask of image {k}")
# local normalisation of a colour stack, each channel its own windows
nc = np.load("nc.npy")
check(nc.shape == c.shape and nc.dtype == np.float64, f"normalize: {nc.shape} {nc.dtype}")
for k in range(len(c)):
    s, n = windows(c[k], 3, 3, "reflect101")
    q, _ = windows(c[k].astype(np.int64) ** 2, 3, 3, "reflect101")
    m = s / n
    sd = np.sqrt((n * q - s * s) / (n * n))
    want = (c[k] - m) / (sd + 0.5)
    check(np.allclose(nc[k], want, rtol=1e-12, atol=1e-12), f"normalize of image {k}")
if os.environ.get("TIFF") == "1":
    check(np.array_equal(np.load("tt.npy"), tmask),
          "threshold --batch through a multi-page TIFF")
    check(np.array_equal(np.load("bt.npy"), bs), "box --batch through a multi-page TIFF")
    check(np.array_equal(np.load("et.npy"), np.load("eq.npy")),
          "equalize --batch through a multi-page TIFF")
for b in bad:
    print("FAIL:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PYEOF

# refusals
expect_error 2 "--bins is for one image" "$PIXSUM" equalize g.npy -o x.npy --batch --bins 16
expect_error 1 "one-channel images" "$PIXSUM" threshold c.npy -o x.npy --batch --method mean \
    --window 3
expect_error 1 "--batch reads the pages" "$PIXSUM" normalize g.npy -o x.npy --window 3
[ ! -e x.npy ] || fail "a refused command left x.npy"
no_temporaries .
[ "$FAILS" -eq 0 ] || exit 1

#!/bin/sh
# cli_box.sh - `pixsum box` against a direct NumPy window computation: sum,
# mean, variance and std; shrink, replicate, valid, reflect101, reflect and
# constant borders; odd and even windows, windows larger than the image,
# multi-channel and signed input; u8 means in u8 (rounded half to even).
. "$2/lib.sh"
need_numpy

"$PY" - <<'PYEOF' || exit 1
import numpy as np
rng = np.random.default_rng(9)
np.save("a.npy", rng.integers(0, 256, (19, 23), dtype=np.uint8))
np.save("c.npy", rng.integers(0, 65536, (11, 9, 3), dtype=np.uint16))
np.save("s.npy", rng.integers(-30000, 30000, (8, 13), dtype=np.int16))
PYEOF
cases="a.npy:3x3 a.npy:4x7 a.npy:1x1 a.npy:30x2 c.npy:5x2 s.npy:6x6"
for c in $cases; do
    f=${c%%:*}
    w=${c#*:}
    for stat in sum mean var std; do
        for border in shrink replicate valid reflect101 reflect constant; do
            out="o_${f%.npy}_${w}_${stat}_${border}.npy"
            if ! "$PIXSUM" box "$f" -o "$out" --window "$w" --stat "$stat" --border "$border" 2>err.txt; then
                grep -q "does not fit" err.txt || fail "box $f $w $stat $border: $(cat err.txt)"
            fi
        done
    done
done
run "$PIXSUM" box a.npy -o o_f32.npy --window 5 --stat mean --type f32
run "$PIXSUM" box a.npy -o o_u8.npy --window 4x3 --stat mean --type u8 --border reflect101
run "$PIXSUM" box a.npy -o o_c7.npy --window 5x3 --stat sum --border constant --value 7

"$PY" - <<'PYEOF' || exit 1
import glob, sys
import numpy as np
bad = []

def ref(img, ww, wh, stat, border, cval=0):
    img = img.astype(np.float64)
    if img.ndim == 2:
        img = img[:, :, None]
    H, W, C = img.shape
    pads = ((wh // 2, wh - 1 - wh // 2), (ww // 2, ww - 1 - ww // 2), (0, 0))
    npmode = {"replicate": "edge", "reflect101": "reflect", "reflect": "symmetric",
              "constant": "constant"}.get(border)
    if npmode == "constant":
        img = np.pad(img, pads, mode="constant", constant_values=cval)
    elif npmode:
        img = np.pad(img, pads, mode=npmode)
    OH, OW = (H - wh + 1, W - ww + 1) if border == "valid" else (H, W)
    res = np.zeros((OH, OW, C))
    for y in range(OH):
        for x in range(OW):
            if border == "shrink":
                y0, y1 = max(0, y - wh // 2), min(H, y - wh // 2 + wh)
                x0, x1 = max(0, x - ww // 2), min(W, x - ww // 2 + ww)
            else:
                y0, y1, x0, x1 = y, y + wh, x, x + ww
            win = img[y0:y1, x0:x1].reshape(-1, C)
            res[y, x] = win.sum(0) if stat == "sum" else win.mean(0) if stat == "mean" else \
                win.var(0) if stat == "var" else np.sqrt(win.var(0))
    return res

n = 0
for f in glob.glob("o_*_*_*_*.npy"):
    _, src, w, stat, border = f[:-4].split("_")
    ww, wh = map(int, w.split("x"))
    r = ref(np.load(src + ".npy"), ww, wh, stat, border)
    o = np.load(f)
    n += 1
    if o.size != r.size:
        bad.append(f"{f}: shape {o.shape}, expected {r.shape}")
        continue
    o = o.reshape(r.shape)
    if stat == "sum":
        ok = o.dtype.kind in "iu" and (o == r).all()
    else:
        ok = o.dtype == np.float64 and np.allclose(o, r, rtol=1e-9, atol=1e-6) and (o >= 0).all() if stat in ("var", "std") else \
             o.dtype == np.float64 and np.allclose(o, r, rtol=1e-12, atol=1e-9)
    if not ok:
        bad.append(f)
o = np.load("o_f32.npy")
if o.dtype != np.float32 or not np.allclose(o, ref(np.load("a.npy"), 5, 5, "mean", "shrink")[:, :, 0], rtol=1e-6):
    bad.append("o_f32")
o = np.load("o_u8.npy")
r = ref(np.load("a.npy"), 4, 3, "sum", "reflect101")[:, :, 0]
q, rem = np.divmod(r.astype(np.int64), 12)
want = q + ((2 * rem > 12) | ((2 * rem == 12) & (q % 2 == 1)))
if o.dtype != np.uint8 or not (o == want).all():
    bad.append("o_u8")
o = np.load("o_c7.npy")
if not (o.reshape(19, 23) == ref(np.load("a.npy"), 5, 3, "sum", "constant", 7)[:, :, 0]).all():
    bad.append("o_c7")
if n < 100:
    bad.append(f"only {n} outputs")
if bad:
    print("mismatches:", bad)
    sys.exit(1)
PYEOF
[ $? -eq 0 ] || fail "NumPy reference checks"
expect_error 1 "does not fit" "$PIXSUM" box a.npy -o x.npy --window 24x2 --border valid
expect_error 2 "--stat mean/var write f32 or f64" "$PIXSUM" box a.npy -o x.npy --window 3 --stat mean --type u32
finish

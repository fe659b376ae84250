#!/bin/sh
# cli_integral.sh - `pixsum integral` against a NumPy reference: every input
# type, shapes 1x1 / 1xN / Nx1 / odd / multi-channel / 3-D volume, extreme
# values, the padded layout, the squared table, the tilted table, the type
# rules (u32 refused when it can overflow, --wrap then exact modulo 2^32, box
# sums below 2^32 exact), and every integral method giving the same bytes.
. "$2/lib.sh"
need_numpy

"$PY" - <<'PYEOF' || exit 1
import numpy as np
rng = np.random.default_rng(11)
shapes = [(1, 1), (1, 13), (17, 1), (23, 31), (9, 10, 3), (6, 5, 4), (3, 7, 2)]
for dt in ["u1", "u2", "i2", "i4", "u4", "f4", "f8"]:
    for k, shp in enumerate(shapes):
        if dt[0] == "f":
            a = (rng.standard_normal(shp) * 100).astype(dt)
        else:
            info = np.iinfo(dt)
            a = rng.integers(info.min, info.max, shp, dtype=dt, endpoint=True)
            a.flat[0] = info.max          # extreme values
            a.flat[-1] = info.min if dt[0] == "i" else info.max
        np.save(f"in_{dt}_{k}.npy", a)
vol = rng.integers(0, 65535, (4, 5, 6), dtype=np.uint16)   # (D,H,W): last axis > 4
np.save("vol.npy", vol)
np.save("big255.npy", np.full((4200, 4200), 255, np.uint8))  # total > 2^32
PYEOF

for f in in_*.npy; do
    b=${f%.npy}
    run "$PIXSUM" integral "$f" -o "$b.sat.npy"
    run "$PIXSUM" integral "$f" -o "$b.pad.npy" --padded
    run "$PIXSUM" integral "$f" -o "$b.sat2.npy" --squared "$b.sq.npy"
    case $f in
    in_u1_* | in_u2_*) run "$PIXSUM" integral "$f" -o "$b.f64.npy" --type f64 ;;
    esac
    case $f in
    in_u1_* | in_u2_* | in_i2_* | in_f4_*) run "$PIXSUM" integral "$f" -o "$b.tilt.npy" --tilted ;;
    esac
done
run "$PIXSUM" integral vol.npy -o vol.sat.npy
run "$PIXSUM" integral vol.npy -o vol.pad.npy --padded

# every available integral method, same bytes as the default
for m in $("$PIXSUM" methods --names --available --op integral); do
    for f in in_u1_3.npy in_u2_4.npy in_i4_3.npy in_f8_3.npy vol.npy; do
        b=${f%.npy}
        "$PIXSUM" integral "$f" -o "m.npy" --method "$m" 2>err.txt || {
            grep -q "not support\|unsupported\|cannot" err.txt || fail "method $m on $f: $(cat err.txt)"
            continue
        }
        case $f in
        in_f8_3.npy) ;; # float sums may round differently per method: checked below
        *) cmp -s m.npy "$b.sat.npy" || fail "method $m differs from the default on $f" ;;
        esac
        cp m.npy "$b.$m.npy"
    done
done

# overflow rules on an all-255 4200x4200 image (sum 4.5e9 > 2^32)
expect_error 1 "overflow" "$PIXSUM" integral big255.npy -o big32.npy --type u32
[ -e big32.npy ] && fail "refused u32 table was written"
run "$PIXSUM" integral big255.npy -o big32.npy --type u32 --wrap
run "$PIXSUM" integral big255.npy -o big64.npy

"$PY" - <<'PYEOF' || exit 1
import glob, sys
import numpy as np
bad = []

def ref_sat(a, padded=False, sq=False, dtype=None):
    if a.ndim == 2:
        a = a[:, :, None]
    x = a.astype(object) if a.dtype.kind in "iu" else a.astype(np.float64)
    if sq:
        x = x * x
    s = x.cumsum(0).cumsum(1)
    if padded:
        p = np.zeros((s.shape[0] + 1, s.shape[1] + 1, s.shape[2]), s.dtype)
        p[1:, 1:] = s
        s = p
    return s

def same(name, got, ref, exact):
    got = got.reshape(ref.shape)
    if got.dtype.kind == "f" and ref.dtype == object:
        # an f64 table of integers (e.g. the squared table of i32): exact up
        # to 2^53, then rounded
        ref = np.array([float(v) for v in ref.flat]).reshape(ref.shape)
        exact = False
    if exact:
        ok = (got.astype(object) == ref).all()
    else:
        ref = ref.astype(np.float64)
        ok = np.allclose(got.astype(np.float64), ref, rtol=1e-5, atol=1e-3 * (1 + np.abs(ref).max()))
    if not ok:
        bad.append(name)

def tilted(a):
    # OpenCV: T(X, Y) = sum of i(x, y) over y < Y and |x - X + 1| <= Y - y - 1
    if a.ndim == 2:
        a = a[:, :, None]
    H, W, C = a.shape
    x = a.astype(object) if a.dtype.kind in "iu" else a.astype(np.float64)
    T = np.zeros((H + 1, W + 1, C), x.dtype)
    for Y in range(H + 1):
        for X in range(W + 1):
            s = 0
            for y in range(Y):
                lo, hi = X - 1 - (Y - y - 1), X - 1 + (Y - y - 1)
                lo, hi = max(lo, 0), min(hi, W - 1)
                if lo <= hi:
                    s = s + x[y, lo:hi + 1].sum(0)
            T[Y, X] = s
    return T

for f in sorted(glob.glob("in_*.npy")):
    if ".sat" in f or ".pad" in f or ".sq" in f or ".f64" in f or ".tilt" in f or f.count(".") > 1:
        continue
    b = f[:-4]
    a = np.load(f)
    exact = a.dtype.kind in "iu"
    want_type = {"u1": "uint32", "u2": "uint32", "i2": "int64", "i4": "int64",
                 "u4": "uint64", "f4": "float64", "f8": "float64"}[b.split("_")[1]]
    sat = np.load(b + ".sat.npy")
    if str(sat.dtype) != want_type:
        bad.append(f"{b}: default type {sat.dtype}, expected {want_type}")
    same(b + ".sat", sat, ref_sat(a), exact)
    same(b + ".pad", np.load(b + ".pad.npy"), ref_sat(a, padded=True), exact)
    same(b + ".sat2", np.load(b + ".sat2.npy"), ref_sat(a), exact)
    same(b + ".sq", np.load(b + ".sq.npy"), ref_sat(a, sq=True), exact)
    try:
        same(b + ".f64", np.load(b + ".f64.npy"), ref_sat(a), True)
    except FileNotFoundError:
        pass
    try:
        same(b + ".tilt", np.load(b + ".tilt.npy"), tilted(a), exact)
    except FileNotFoundError:
        pass
for f in glob.glob("in_f8_3.*.npy"):
    if f.count(".") == 2 and not f.endswith((".sat.npy", ".pad.npy", ".sq.npy")):
        same(f, np.load(f), ref_sat(np.load("in_f8_3.npy")), False)

v = np.load("vol.npy").astype(object)
same("vol.sat", np.load("vol.sat.npy"), v.cumsum(0).cumsum(1).cumsum(2)[..., None], True)
vp = np.zeros((5, 6, 7), object)
vp[1:, 1:, 1:] = v.cumsum(0).cumsum(1).cumsum(2)
same("vol.pad", np.load("vol.pad.npy"), vp[..., None], True)

big = np.load("big255.npy").astype(np.uint64)
r64 = big.cumsum(0).cumsum(1)
b64 = np.load("big64.npy")
if b64.dtype != np.uint64 or not (b64 == r64).all():
    bad.append("big64: default u64 table")
b32 = np.load("big32.npy")
if b32.dtype != np.uint32 or not (b32 == (r64 % 2**32).astype(np.uint32)).all():
    bad.append("big32: --wrap table is not the true table modulo 2^32")
# a box whose true sum is below 2^32, read from the wrapped table, is exact
y0, x0, y1, x1 = 100, 200, 4199, 4000   # inclusive corners
s = (int(b32[y1, x1]) - int(b32[y0 - 1, x1]) - int(b32[y1, x0 - 1]) + int(b32[y0 - 1, x0 - 1])) % 2**32
true = 255 * (y1 - y0 + 1) * (x1 - x0 + 1)
if true >= 2**32 or s != true:
    bad.append(f"wrapped box sum {s} != {true}")
if bad:
    print("mismatches:", bad)
    sys.exit(1)
print("reference checks passed")
PYEOF
[ $? -eq 0 ] || fail "NumPy reference checks"
finish

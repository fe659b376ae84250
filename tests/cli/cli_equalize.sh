#!/bin/sh
# cli_equalize.sh - `pixsum equalize` options: --bins for 8/16-bit images
# against the documented integer mapping computed here with NumPy, float
# (.npy f32/f64) images against skimage.exposure.equalize_hist when it is
# installed (else against the same rule written here), --mask, and the
# refusals of bad bin counts.
. "$2/lib.sh"
need_numpy

"$PY" - <<'PYEOF' || exit 1
import numpy as np
rng = np.random.default_rng(41)
np.save("u8.npy", rng.integers(0, 256, (21, 17), dtype=np.uint8))
np.save("u16.npy", rng.integers(0, 65536, (9, 13, 3), dtype=np.uint16))
np.save("f32.npy", (rng.random((19, 23)) ** 2).astype(np.float32))
np.save("f64.npy", rng.random((8, 31)))
np.save("m.npy", (rng.random((19, 23)) < 0.6).astype(np.uint8))
PYEOF
run "$PIXSUM" equalize u8.npy -o u8_b16.npy --bins 16
run "$PIXSUM" equalize u8.npy -o u8_b256.npy
run "$PIXSUM" equalize u16.npy -o u16_b100.npy --bins 100
run "$PIXSUM" equalize f32.npy -o f32_e.npy
run "$PIXSUM" equalize f64.npy -o f64_b40.npy --bins 40
run "$PIXSUM" equalize f32.npy -o f32_m.npy --mask m.npy

"$PY" - <<'PYEOF'
import sys
import numpy as np

def ref_int(img, nbins, levels):
    out = np.empty_like(img)
    for c in range(img.shape[2] if img.ndim == 3 else 1):
        x = img[..., c] if img.ndim == 3 else img
        edges = np.linspace(0, levels, nbins + 1)
        b = np.minimum(np.searchsorted(edges, x.astype(np.float64), side="right") - 1, nbins - 1)
        cdf = np.cumsum(np.bincount(b.ravel(), minlength=nbins))
        n, cmin = int(cdf[-1]), int(cdf[cdf > 0][0])
        cb = cdf[b].astype(object)
        y = np.array([0 if v <= cmin else (2 * (v - cmin) * (levels - 1) + n - cmin) // (2 * (n - cmin))
                      for v in cb.ravel()], dtype=np.int64).reshape(x.shape)
        if n == cmin:
            y = x
        if img.ndim == 3:
            out[..., c] = y
        else:
            out[...] = y
    return out

def ref_float(img, nbins, mask=None):
    try:
        from skimage.exposure import equalize_hist
        return equalize_hist(img, nbins=nbins, mask=mask)
    except ImportError:
        sel = img[mask.astype(bool)] if mask is not None else img
        h, e = np.histogram(sel, bins=nbins, range=(sel.min(), sel.max()))
        cdf = np.cumsum(h) / float(np.sum(h))
        return np.interp(img.ravel(), (e[:-1] + e[1:]) / 2.0, cdf).reshape(img.shape).astype(img.dtype)

ok = True
def check(name, got, want):
    global ok
    if got.dtype != want.dtype or not np.array_equal(got, want):
        print(f"{name}: differs from the reference", file=sys.stderr)
        ok = False

u8, u16 = np.load("u8.npy"), np.load("u16.npy")
check("u8 --bins 16", np.load("u8_b16.npy"), ref_int(u8, 16, 256))
check("u8", np.load("u8_b256.npy"), ref_int(u8, 256, 256))
check("u16 --bins 100", np.load("u16_b100.npy"), ref_int(u16, 100, 65536))
f32, f64, m = np.load("f32.npy"), np.load("f64.npy"), np.load("m.npy")
check("f32", np.load("f32_e.npy"), ref_float(f32, 256))
check("f64 --bins 40", np.load("f64_b40.npy"), ref_float(f64, 40))
check("f32 --mask", np.load("f32_m.npy"), ref_float(f32, 256, m))
sys.exit(0 if ok else 1)
PYEOF
[ $? -eq 0 ] || fail "NumPy / scikit-image reference checks"
expect_error 2 "--bins takes a count from 1 to" "$PIXSUM" equalize u8.npy -o x.npy --bins 0
expect_error 2 "--bins takes a count from 1 to" "$PIXSUM" equalize u8.npy -o x.npy --bins 12x
finish

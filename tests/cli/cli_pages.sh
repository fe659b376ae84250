#!/bin/sh
# cli_pages.sh - stacks of images: multi-page TIFFs (written here by tifffile,
# striped and tiled, samples contiguous and in separate planes) and .npy
# stacks, read one page at a time (--page N; page 0 by default, with a note
# on stderr), as N images (--batch: integral and hist give one table or
# histogram per image, checked against NumPy) or as a volume (--volume); batch
# tables written as multi-page TIFFs read back equal; `pixsum info` shows the
# page count; pages of different shapes, a page out of range and
# contradicting options are refused with a message.
. "$2/lib.sh"
need_numpy
has_format tiff || { echo "SKIP: this pixsum reads no TIFF" >&2; exit 77; }
if ! "$PY" -c 'import tifffile' 2>/dev/null; then
    echo "SKIP: tifffile for $PY not found (Debian: python3-tifffile)" >&2
    exit 77
fi

"$PY" - <<'PYEOF' || exit 1
import numpy as np
import tifffile
rng = np.random.default_rng(5)
g = rng.integers(0, 256, (5, 13, 17), dtype=np.uint8)
c = rng.integers(0, 65536, (3, 9, 11, 3), dtype=np.uint16)
np.save("g.npy", g)
np.save("c.npy", c)
with tifffile.TiffWriter("g.tif") as t:
    for k in range(len(g)):
        t.write(g[k], rowsperstrip=5)
with tifffile.TiffWriter("gt.tif") as t:
    for k in range(len(g)):
        t.write(g[k], tile=(16, 16))
with tifffile.TiffWriter("sep.tif") as t:  # planar-separate RGB pages
    for k in range(len(c)):
        t.write(np.ascontiguousarray(c[k].transpose(2, 0, 1)), planarconfig="separate",
                photometric="rgb", rowsperstrip=4)
tifffile.imwrite("septile.tif", np.ascontiguousarray(c[1].transpose(2, 0, 1)),
                 planarconfig="separate", photometric="rgb", tile=(16, 16))
with tifffile.TiffWriter("mixed.tif") as t:
    t.write(g[0])
    t.write(g[1][:, :9])
PYEOF

# the page count, and the default: page 0 with a note
run "$PIXSUM" info g.tif
grep -q "pages     5 (page 0 read)" run_out.txt || fail "info g.tif: no page count: $(cat run_out.txt)"
if "$PIXSUM" convert g.tif p0.npy 2>err.txt; then
    grep -q "note: g.tif has 5 pages; page 0 is read" err.txt ||
        fail "reading page 0 of 5 without a note: $(cat err.txt)"
else
    fail "convert g.tif: $(cat err.txt)"
fi

for f in g.tif gt.tif sep.tif; do
    run "$PIXSUM" convert "$f" "all_${f%.tif}.npy" --batch
    run "$PIXSUM" convert "$f" "p2_${f%.tif}.npy" --page 2
    run "$PIXSUM" integral "$f" -o "tb_${f%.tif}.npy" --batch
    run "$PIXSUM" integral "$f" -o "tv_${f%.tif}.npy" --volume --type u64
    run "$PIXSUM" integral "$f" -o "tbp_${f%.tif}.tif" --batch --padded
    run "$PIXSUM" convert "tbp_${f%.tif}.tif" "tbp_${f%.tif}.npy" --batch
    run "$PIXSUM" hist "$f" --batch --bins 7 -o "h_${f%.tif}.csv"
    run "$PIXSUM" hist "$f" --batch --bins 7 --format json -o "h_${f%.tif}.json"
done
run "$PIXSUM" convert septile.tif septile.npy
run "$PIXSUM" integral g.npy -o tb_npy.npy --batch
run "$PIXSUM" integral c.npy -o tb_cnpy.tif --batch
run "$PIXSUM" convert tb_cnpy.tif tb_cnpy.npy --batch

"$PY" - <<'PYEOF' || FAILS=$((FAILS + 1))
import csv
import json
import sys
import numpy as np

bad = []
def check(ok, what):
    if not ok:
        bad.append(what)

g, c = np.load("g.npy"), np.load("c.npy")
def table(x, padded=False):  # from the definition, one image per slice
    t = x.astype(np.int64).cumsum(1).cumsum(2)
    if padded:
        t = np.pad(t, [(0, 0), (1, 0), (1, 0)] + [(0, 0)] * (x.ndim - 3))
    return t
for name, src in (("g", g), ("gt", g), ("sep", c)):
    check(np.array_equal(np.load(f"all_{name}.npy"), src), f"{name}: --batch pixels")
    check(np.array_equal(np.load(f"p2_{name}.npy"), src[2]), f"{name}: --page 2 pixels")
    tb = np.load(f"tb_{name}.npy")
    check(tb.shape == src.shape and np.array_equal(tb, table(src)), f"{name}: --batch tables")
    tv = np.load(f"tv_{name}.npy")
    check(np.array_equal(tv, src.astype(np.int64).cumsum(0).cumsum(1).cumsum(2)),
          f"{name}: --volume table")
    check(np.array_equal(np.load(f"tbp_{name}.npy"), table(src, True)),
          f"{name}: padded batch tables through a multi-page TIFF")
    bins, hi = 7, (256 if src.dtype == np.uint8 else 65536)
    rows = list(csv.DictReader(open(f"h_{name}.csv")))
    js = json.load(open(f"h_{name}.json"))
    check(len(js["images"]) == len(src), f"{name}: JSON images")
    for k in range(len(src)):
        img = src[k] if src.ndim == 3 else src[k][..., 0]
        want = np.histogram(img, bins=np.linspace(0, hi, bins + 1))[0]
        got = [int(r["c0"]) for r in rows if int(r["image"]) == k]
        check(got == want.tolist(), f"{name}: CSV histogram of image {k}")
        check(js["images"][k]["values"][0] == want.tolist(), f"{name}: JSON image {k}")
check(np.array_equal(np.load("septile.npy"), c[1]), "tiled planar-separate pixels")
check(np.array_equal(np.load("tb_npy.npy"), table(g)), ".npy stack --batch tables")
check(np.array_equal(np.load("tb_cnpy.npy"), table(c)), ".npy stack -> multi-page TIFF tables")
for b in bad:
    print("FAIL:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PYEOF

# refusals
expect_error 1 "this TIFF has 5 pages (0..4)" "$PIXSUM" integral g.tif -o x.npy --page 5
expect_error 1 "the pages of a batch must match" "$PIXSUM" integral mixed.tif -o x.npy --batch
expect_error 2 "--page N reads one page" "$PIXSUM" integral g.tif -o x.npy --page 1 --batch
expect_error 2 "contradict" "$PIXSUM" integral g.tif -o x.npy --batch --volume
expect_error 2 "--page N reads one page" "$PIXSUM" threshold g.tif -o x.npy --window 3 \
    --method mean --page 1 --batch
expect_error 1 "holds one image" "$PIXSUM" convert g.npy x.npy --page 1
[ ! -e x.npy ] || fail "a refused command left x.npy"
no_temporaries .
[ "$FAILS" -eq 0 ] || exit 1

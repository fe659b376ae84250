"""histogram / histogram2d / equalize / otsu against NumPy references (np.bincount,
np.histogram, np.histogram2d and the documented formulas): every input dtype,
channels, masks, NaN and out-of-range samples, relative and cumulative forms,
strided views, out=, and every histogram method; Otsu against a brute-force
search, OpenCV and scikit-image."""

import numpy as np
import pytest

import pixsum
from conftest import random_image

if not hasattr(pixsum, "histogram"):
    pytest.skip("the C library has no histograms yet", allow_module_level=True)


def ref_hist(values, bins, lo, hi):
    """Counts decided from the edges alone, as documented: bin i holds the
    samples with edges[i] <= v < edges[i + 1], edges = np.linspace(lo, hi,
    bins + 1) in float64 (found by a sorted search, not by a formula)."""
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[~np.isnan(v)]
    v = v[(v >= lo) & (v < hi)]
    edges = np.linspace(lo, hi, bins + 1)
    idx = np.searchsorted(edges, v, side="right") - 1
    return np.bincount(idx, minlength=bins).astype(np.uint64)


def on_edges(rng, n, bins, lo, hi, dtype):
    """n samples on the float64 edges of (bins, lo, hi), one double beside
    them, or anywhere in range, rounded into dtype."""
    edges = np.linspace(lo, hi, bins + 1)
    e = edges[rng.integers(0, bins + 1, n)]
    kind = rng.integers(0, 4, n)
    v = np.where(kind == 1, np.nextafter(e, -np.inf),
                 np.where(kind == 2, np.nextafter(e, np.inf),
                          np.where(kind == 3, rng.uniform(lo, hi, n), e)))
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        v = np.clip(np.round(v), info.min, info.max)
    return v.astype(dtype)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.int32, np.uint32,
                                   np.float32, np.float64])
def test_bins_are_their_reported_edges(rng, dtype):
    """On random ranges with samples on the edges: the counts are those of the
    edges pixsum reports (info['edges'] equal np.linspace's), and equal
    np.histogram's half-open bins on the same float64 edges."""
    for _ in range(40):
        bins = int(rng.integers(1, 300))
        if np.issubdtype(dtype, np.integer):
            lo = float(rng.integers(-300 if dtype != np.uint8 else 0, 200))
            hi = lo + float(rng.integers(1, 5000))
            if rng.integers(0, 4) == 0:
                hi = lo + bins * float(rng.integers(1, 6))  # integer edges
        else:
            lo = float(rng.integers(-1000, 1000)) / float(rng.integers(1, 17))
            hi = lo + float(rng.integers(1, 5000)) / float(rng.integers(1, 65))
        img = on_edges(rng, 3000, bins, lo, hi, dtype)
        h, info = pixsum.histogram(img, bins=bins, range=(lo, hi), info=True)
        np.testing.assert_array_equal(info["edges"], np.linspace(lo, hi, bins + 1))
        np.testing.assert_array_equal(h, ref_hist(img, bins, lo, hi))
        v = img.astype(np.float64)
        want, _ = np.histogram(v[v < hi], bins=info["edges"])
        np.testing.assert_array_equal(h, want)
        for m in pixsum.methods():
            if "histogram" in m["ops"] and m["available"] and m["backend"] != "cuda":
                try:
                    got = pixsum.histogram(img, bins=bins, range=(lo, hi), method=m["name"])
                except pixsum.UnsupportedError:
                    continue
                np.testing.assert_array_equal(got, h)


def test_edge_regressions():
    """A uint16 ramp 3496..8311 in 217 bins over [3496, 8312): edge 31 is 4184,
    and 4184 is in bin 31, as in np.histogram; float data with integer values
    and the automatic range: every bin is what its reported edges say."""
    ramp = np.arange(3496, 8312, dtype=np.uint16)
    h, info = pixsum.histogram(ramp, bins=217, range=(3496, 8312), info=True)
    assert info["edges"][31] == 4184.0
    want, _ = np.histogram(ramp, bins=217, range=(3496, 8312))
    np.testing.assert_array_equal(h, want)
    vals = np.arange(0, 101.0)
    h, info = pixsum.histogram(vals, bins=10, info=True)
    assert info["hi"] == np.nextafter(100.0, np.inf)
    np.testing.assert_array_equal(h, ref_hist(vals, 10, info["lo"], info["hi"]))
    want, _ = np.histogram(vals, bins=info["edges"])
    np.testing.assert_array_equal(h, want)


@pytest.mark.parametrize("shape", [(1, 1), (1, 999), (77, 1), (123, 457)])
def test_u8_default_equals_bincount(rng, shape):
    img = random_image(rng, shape, np.uint8)
    h = pixsum.histogram(img)
    assert h.dtype == np.uint64 and h.shape == (256,)
    np.testing.assert_array_equal(h, np.bincount(img.ravel(), minlength=256))


def test_u16_65536_bins(rng):
    img = random_image(rng, (200, 300), np.uint16)
    np.testing.assert_array_equal(pixsum.histogram(img),
                                  np.bincount(img.ravel(), minlength=65536))
    i16 = random_image(rng, (50, 60), np.int16)
    np.testing.assert_array_equal(pixsum.histogram(i16),
                                  np.bincount(i16.ravel().astype(np.int64) + 32768,
                                              minlength=65536))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.int32, np.float32,
                                   np.float64])
@pytest.mark.parametrize("bins,rng_", [(16, (0.0, 200.0)), (7, (-50.5, 100.25)), (1, (0, 1))])
def test_bins_and_range(rng, dtype, bins, rng_):
    img = random_image(rng, (61, 83), dtype)
    h, info = pixsum.histogram(img, bins=bins, range=rng_, info=True)
    np.testing.assert_array_equal(h, ref_hist(img, bins, *rng_))
    v = img.astype(np.float64).ravel()
    assert info["below"] == [int((v < rng_[0]).sum())]
    assert info["above"] == [int((v >= rng_[1]).sum())]
    assert info["in_range"] == [int(h.sum())]
    assert info["pixels"] == img.size
    np.testing.assert_allclose(info["edges"], np.linspace(rng_[0], rng_[1], bins + 1))


def test_matches_numpy_histogram_away_from_the_top_edge(rng):
    img = (rng.random((100, 100)) * 0.999).astype(np.float64)
    want, _ = np.histogram(img, bins=37, range=(0.0, 1.0))
    np.testing.assert_array_equal(pixsum.histogram(img, bins=37, range=(0.0, 1.0)), want)


def test_nan_inf_and_default_float_range(rng):
    img = random_image(rng, (40, 50), np.float32)
    img[0, :5] = np.nan
    img[1, 0] = np.inf
    img[1, 1] = -np.inf
    h, info = pixsum.histogram(img, info=True)
    assert info["nan"] == [5] and info["above"] == [1] and info["below"] == [1]
    finite = img[np.isfinite(img)]
    assert info["lo"] == float(finite.min())
    assert h.sum() == finite.size and info["bins"] == 256


@pytest.mark.parametrize("channels", [2, 3, 4])
def test_channels_and_strided(rng, channels):
    base = random_image(rng, (90, 70, channels), np.uint8)
    img = base[::-3, 5:60]
    h = pixsum.histogram(img)
    assert h.shape == (channels, 256)
    for c in range(channels):
        np.testing.assert_array_equal(h[c], np.bincount(img[..., c].ravel(), minlength=256))


def test_mask(rng):
    img = random_image(rng, (64, 48, 2), np.uint8)
    mask = rng.random((64, 48)) < 0.3
    h, info = pixsum.histogram(img, mask=mask, info=True)
    for c in range(2):
        np.testing.assert_array_equal(h[c], np.bincount(img[..., c][mask], minlength=256))
    assert info["pixels"] == int(mask.sum())
    h8 = pixsum.histogram(img, mask=mask.astype(np.uint8) * 7)
    np.testing.assert_array_equal(h, h8)
    with pytest.raises(pixsum.BadShapeError):
        pixsum.histogram(img, mask=mask[:-1])
    with pytest.raises(pixsum.BadTypeError):
        pixsum.histogram(img, mask=mask.astype(np.float32))


def test_relative_and_cumulative(rng):
    img = random_image(rng, (33, 44), np.uint8)
    counts = np.bincount(img.ravel(), minlength=256)
    np.testing.assert_array_equal(pixsum.histogram(img, cumulative=True), np.cumsum(counts))
    rel = pixsum.histogram(img, relative=True)
    assert rel.dtype == np.float64
    np.testing.assert_allclose(rel, counts / img.size, rtol=1e-15)
    crel = pixsum.histogram(img, relative=True, cumulative=True)
    assert crel[-1] == 1.0
    np.testing.assert_allclose(crel, np.cumsum(counts) / img.size, rtol=1e-12)
    part = pixsum.histogram(img, bins=4, range=(0, 128), relative=True, of_all_samples=True)
    assert part.sum() == pytest.approx((img < 128).sum() / img.size)


def test_out_and_volume(rng):
    img = random_image(rng, (20, 30), np.uint8)
    out = np.zeros(256, np.uint64)
    assert pixsum.histogram(img, out=out) is out
    np.testing.assert_array_equal(out, np.bincount(img.ravel(), minlength=256))
    with pytest.raises(pixsum.BadShapeError):
        pixsum.histogram(img, out=np.zeros(255, np.uint64))
    with pytest.raises(pixsum.BadTypeError):
        pixsum.histogram(img, out=np.zeros(256, np.int64))
    vol = random_image(rng, (4, 5, 6), np.uint16)
    assert pixsum.histogram(vol, channels=False, bins=8, range=(0, 65536)).sum() == vol.size
    assert pixsum.histogram(np.ascontiguousarray(vol[..., :3]), bins=8, range=(0, 65536)).shape == (3, 8)  # (H, W, C)
    with pytest.raises(pixsum.BadShapeError):
        pixsum.histogram(vol)  # read as (H, W, C): 6 channels


def ref_by_edges(values, edges):
    """Counts from the definition over given edges (the library's own,
    info['edges']): bin i holds v with edges[i] <= v < edges[i + 1], each
    sample compared as its exact float64."""
    v = np.asarray(values, dtype=np.float64).ravel()
    counts = np.zeros(len(edges) - 1, np.uint64)
    for i in range(len(edges) - 1):
        counts[i] = np.count_nonzero((v >= edges[i]) & (v < edges[i + 1]))
    return counts


U32_MAX = 2 ** 32 - 1


def uint32_samples(rng, shape, edges):
    """uint32 samples: 0, 2^32 - 1, 2^31, values on the given edges and one
    beside them, and random values of every size."""
    n = int(np.prod(shape))
    e = np.floor(edges[rng.integers(0, len(edges), n)]) + rng.integers(-1, 2, n)
    pick = rng.integers(0, 6, n)
    v = np.where(pick == 0, 0, np.where(pick == 1, U32_MAX, np.where(pick == 2, 2 ** 31, e)))
    v = np.where(pick == 5, rng.integers(0, U32_MAX, n, endpoint=True), v)
    return np.clip(v, 0, U32_MAX).astype(np.uint32).reshape(shape)


@pytest.mark.parametrize("bins,range_", [(256, (0, 2 ** 32)), (7, (1000.5, 3e9)),
                                         (1000, (0, U32_MAX)), (3, (2 ** 32 - 6, 2 ** 32)),
                                         (None, None), (17, None)])
def test_uint32(rng, bins, range_):
    """uint32 images (issue #41): counts equal the definition over the
    library's edges, with a given range or the data's [min, max + 1), for
    channels, masks, strided views, the batch form and every CPU method."""
    for shape in [(1, 1), (1, 37), (29, 1), (23, 31), (17, 13, 3)]:
        guess = np.linspace(range_[0], range_[1], (bins or 256) + 1) if range_ else \
            np.linspace(0, 2.0 ** 32, (bins or 256) + 1)
        img = uint32_samples(rng, shape, guess)
        kw = {"bins": bins} if bins else {}
        if range_:
            kw["range"] = range_
        h, info = pixsum.histogram(img, info=True, **kw)
        edges = info["edges"]
        if range_ is None:  # the data's range, as for int32
            assert (info["lo"], info["hi"]) == (float(img.min()), float(img.max()) + 1)
            assert info["below"] == [0] * len(info["below"]) == info["above"]
        else:
            np.testing.assert_array_equal(edges, np.linspace(range_[0], range_[1], bins + 1))
        planes = [img] if img.ndim == 2 else [img[..., c] for c in range(img.shape[2])]
        want = np.stack([ref_by_edges(p, edges) for p in planes])
        np.testing.assert_array_equal(h, want[0] if img.ndim == 2 else want)
        for m in pixsum.methods():
            if "histogram" in m["ops"] and m["available"] and m["backend"] in ("cpu", "omp"):
                try:
                    got = pixsum.histogram(img, method=m["name"], threads=2, **kw)
                except pixsum.UnsupportedError:
                    continue  # hist.avx512 has no uint32 kernel
                np.testing.assert_array_equal(got, h)
        mask = rng.integers(0, 2, shape[:2]).astype(bool)
        hm, im = pixsum.histogram(img, mask=mask, info=True, **kw)
        sel = img[mask]
        want = np.stack([ref_by_edges(sel if img.ndim == 2 else sel[:, c], im["edges"])
                         for c in range(1 if img.ndim == 2 else img.shape[2])])
        np.testing.assert_array_equal(hm, want[0] if img.ndim == 2 else want)
    big = uint32_samples(rng, (40, 60), np.array([0.0, 2.0 ** 32]))
    strided = big[::3, ::2]
    np.testing.assert_array_equal(pixsum.histogram(strided, **kw),
                                  pixsum.histogram(np.ascontiguousarray(strided), **kw))


def test_uint32_batch_and_2d(rng):
    stack = uint32_samples(rng, (4, 9, 11), np.linspace(0, 2.0 ** 32, 9))
    hb, ib = pixsum.histogram(stack, batch=True, info=True)
    assert (ib["lo"], ib["hi"]) == (float(stack.min()), float(stack.max()) + 1)
    for n in range(4):
        np.testing.assert_array_equal(hb[n],
                                      pixsum.histogram(stack[n], range=(ib["lo"], ib["hi"])))
    a = uint32_samples(rng, (30, 20), np.linspace(0, 2.0 ** 32, 5))
    b = rng.integers(0, 256, (30, 20), dtype=np.uint8)
    h = pixsum.histogram2d(a, b, bins=(4, 2), range=((0, 2 ** 32), (0, 256)))
    want, _, _ = np.histogram2d(a.ravel().astype(np.float64), b.ravel().astype(np.float64),
                                bins=(np.linspace(0, 2.0 ** 32, 5), np.linspace(0, 256, 3)))
    np.testing.assert_array_equal(h, want)  # no sample on the closed last edge 2^32


def test_uint32_gpu_refused():
    """The GPU histograms have no uint32 kernel: a CuPy uint32 image is refused
    with a clear error (the host array is counted)."""
    cupy = pytest.importorskip("cupy")
    if not pixsum.HAVE_CUDA or pixsum.cuda_device_count() == 0:
        pytest.skip("skipped: no CUDA device")
    img = np.array([[0, U32_MAX, 7]], np.uint32)
    with pytest.raises(pixsum.BadTypeError, match="u32"):
        pixsum.histogram(cupy.asarray(img), range=(0, 2 ** 32))


def test_every_histogram_method_agrees(rng):
    img = random_image(rng, (97, 131, 3), np.uint8)
    ref = pixsum.histogram(img, method="hist.scalar")
    ran = 0
    for m in pixsum.methods():
        if "histogram" in m["ops"] and m["available"] and m["backend"] in ("cpu", "omp"):
            for threads in (1, 2):
                try:
                    got = pixsum.histogram(img, method=m["name"], threads=threads)
                except pixsum.UnsupportedError:
                    continue
                np.testing.assert_array_equal(got, ref)
                ran += 1
    assert ran >= 2


def test_histogram2d(rng):
    a = random_image(rng, (70, 90), np.uint8)
    b = random_image(rng, (70, 90), np.float32)
    h, info = pixsum.histogram2d(a, b, bins=(8, 5), range=((0, 256), (-100, 100)), info=True)
    want, _, _ = np.histogram2d(a.ravel().astype(np.float64), b.ravel().astype(np.float64),
                                bins=(8, 5), range=((0, 256), (-100, 100)))
    inside = (b >= -100) & (b < 100)
    want2, _, _ = np.histogram2d(a[inside].astype(np.float64), b[inside].astype(np.float64),
                                 bins=(8, 5), range=((0, 256), (-100, 100)))
    np.testing.assert_array_equal(h, want2)
    assert info["pairs"] == int(inside.sum()) and info["excluded"] == int((~inside).sum())
    assert info["mutual_information"] >= 0
    same, si = pixsum.histogram2d(a, a, info=True)
    np.testing.assert_array_equal(np.diag(same), np.bincount(a.ravel(), minlength=256))
    assert si["mutual_information"] == pytest.approx(si["entropy_a"])
    with pytest.raises(pixsum.BadShapeError):
        pixsum.histogram2d(a, a[:-1])


def ref_equalize(img, levels):
    cdf = np.cumsum(np.bincount(img.ravel(), minlength=levels)).astype(np.int64)
    n, cmin = cdf[-1], cdf[cdf > 0][0]
    if n == cmin:
        return img.copy()
    num = (cdf - cmin) * (levels - 1)
    den = n - cmin
    lut = np.clip((2 * num + den) // (2 * den), 0, levels - 1)  # halves rounded up
    return lut[img].astype(img.dtype)


@pytest.mark.parametrize("dtype,levels", [(np.uint8, 256), (np.uint16, 65536)])
def test_equalize(rng, dtype, levels):
    img = (random_image(rng, (80, 60), dtype) // 3).astype(dtype)
    np.testing.assert_array_equal(pixsum.equalize(img), ref_equalize(img, levels))
    rgb = random_image(rng, (30, 40, 3), dtype)
    eq = pixsum.equalize(rgb)
    for c in range(3):
        np.testing.assert_array_equal(eq[..., c], ref_equalize(rgb[..., c], levels))
    inplace = img.copy()
    assert pixsum.equalize(inplace, out=inplace) is inplace
    np.testing.assert_array_equal(inplace, ref_equalize(img, levels))
    flat = np.full((5, 5), 9, dtype)
    np.testing.assert_array_equal(pixsum.equalize(flat), flat)
    with pytest.raises(pixsum.BadTypeError):
        pixsum.equalize(img.astype(np.int32))  # floats: see test_hist_options.py


def ref_otsu(counts):
    """Brute-force Otsu: the smallest t maximising w0 w1 (mu0 - mu1)^2, in
    exact integer arithmetic (bin indices as class values): with class sizes
    n0, n1 and sums s0, s1 that is (s0 n1 - s1 n0)^2 / (n0 n1), compared as
    cross products."""
    c = [int(v) for v in counts]
    n, s = sum(c), sum(i * v for i, v in enumerate(c))
    best_num, best_den, best_t = -1, 1, None
    n0 = s0 = 0
    for t in range(len(c) - 1):
        n0 += c[t]
        s0 += t * c[t]
        n1, s1 = n - n0, s - s0
        if n0 == 0 or n1 == 0:
            continue
        num, den = (s0 * n1 - s1 * n0) ** 2, n0 * n1
        if num * best_den > best_num * den:
            best_num, best_den, best_t = num, den, t
    return best_t


@pytest.mark.parametrize("bins", [2, 3, 17, 256])
def test_otsu_counts_against_brute_force(rng, bins):
    for _ in range(5):
        counts = rng.integers(0, 50, bins) * (rng.random(bins) < 0.7)
        counts[rng.integers(0, bins, 2)] += 1  # at least one value, usually two bins
        if np.count_nonzero(counts) < 2:
            with pytest.raises(pixsum.InvalidArgumentError):
                pixsum.otsu(counts)
            continue
        assert pixsum.otsu(counts) == ref_otsu(counts)
        assert pixsum.otsu(counts.astype(np.uint16)) == ref_otsu(counts)
        assert pixsum.otsu(list(counts)) == ref_otsu(counts)


def test_otsu_counts_refusals():
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.otsu(np.array([3, -1, 4]))
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.otsu(np.array([5]))
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.otsu(np.array([0, 7, 0]))
    with pytest.raises(pixsum.BadTypeError):
        pixsum.otsu(np.array([1.0, 2.0]))
    with pytest.raises(pixsum.BadShapeError):
        pixsum.otsu(np.ones((2, 2), np.uint64))


def bimodal(rng, shape, dtype, lo, hi):
    n = int(np.prod(shape))
    v = np.where(rng.random(n) < 0.4, rng.normal(lo, (hi - lo) / 8, n),
                 rng.normal(hi, (hi - lo) / 6, n))
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "ui" else None
    if info is not None:
        v = np.clip(np.rint(v), info.min, info.max)
    return v.astype(dtype).reshape(shape)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.float32])
@pytest.mark.parametrize("shape", [(1, 2), (3, 1), (61, 83), (4, 30, 20)])
def test_threshold_otsu_is_the_edge_after_the_otsu_bin(rng, dtype, shape):
    img = bimodal(rng, shape, dtype, 60, 180)
    mask = rng.random(shape) < 0.8
    for kw in ({}, {"bins": 64}, {"bins": 10, "range": (0, 250)}, {"mask": mask}):
        counts, hinfo = pixsum.histogram(img, channels=False, info=True, **kw)
        if np.count_nonzero(counts) < 2:
            selected = img[kw["mask"]] if "mask" in kw else img
            if selected.size and np.all(selected == selected.ravel()[0]):
                # a constant image gives its value, as scikit-image's
                assert pixsum.threshold_otsu(img, **kw) == selected.ravel()[0]
            else:
                with pytest.raises(pixsum.InvalidArgumentError):
                    pixsum.threshold_otsu(img, **kw)
            continue
        t = ref_otsu(counts)
        e, info = pixsum.threshold_otsu(img, info=True, **kw)
        assert info == {"bin": t, "bins": hinfo["bins"], "lo": hinfo["lo"], "hi": hinfo["hi"]}
        assert e == hinfo["edges"][t + 1]
        assert pixsum.threshold_otsu(img, threads=2, **kw) == e


def test_threshold_otsu_against_opencv_and_skimage(rng):
    img = bimodal(rng, (240, 320), np.uint8, 70, 170)
    e = pixsum.threshold_otsu(img)
    cv2 = pytest.importorskip("cv2")
    ret, _ = cv2.threshold(img, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    assert e - 1 == ret
    filters = pytest.importorskip("skimage.filters")
    assert e - 1 == filters.threshold_otsu(img)


def test_threshold_otsu_refusals(rng):
    assert pixsum.threshold_otsu(np.full((4, 4), 7, np.uint8)) == 7  # one value: itself
    with pytest.raises(pixsum.InvalidArgumentError):  # no finite sample
        pixsum.threshold_otsu(np.full((4, 4), np.nan))
    with pytest.raises(pixsum.BadShapeError):
        pixsum.threshold_otsu(np.zeros((2, 3, 4, 5), np.uint8))
    with pytest.raises(pixsum.BadShapeError):
        pixsum.threshold_otsu(random_image(rng, (5, 6), np.uint8), mask=np.ones((6, 5), bool))

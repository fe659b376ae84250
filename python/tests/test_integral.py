"""pixsum.integral / integral_sq / integral_tilted / integral3d against NumPy
references: every input dtype, 1x1 / 1xN / Nx1 / odd shapes, 1-4 channels,
strided views, extreme values, padded layout, wrap mode, every method."""

import numpy as np
import pytest

import pixsum
from conftest import INPUT_DTYPES, SHAPES, random_image, ref_integral, ref_tilted


def assert_table_equal(got, want):
    if got.dtype.kind == "f":
        tol = 1e-4 if got.dtype == np.float32 else 1e-9
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * (1 + np.abs(want).max()))
    else:
        # exact: compare as the table type (both are exact integers in range)
        np.testing.assert_array_equal(got, want.astype(got.dtype))


@pytest.mark.parametrize("dtype", INPUT_DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_integral_matches_numpy(rng, dtype, shape):
    img = random_image(rng, shape, dtype)
    got = pixsum.integral(img)
    assert got.shape == img.shape
    assert got.dtype == pixsum.integral_dtype(img.dtype, img.size)
    assert_table_equal(got, ref_integral(img))


@pytest.mark.parametrize("dtype", INPUT_DTYPES)
@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_channels_and_extremes(rng, dtype, channels):
    img = random_image(rng, (37, 29, channels), dtype, extreme=True)
    got = pixsum.integral(img)
    assert got.shape == img.shape
    assert_table_equal(got, ref_integral(img))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
def test_padded(rng, dtype):
    img = random_image(rng, (19, 31, 3), dtype)
    got = pixsum.integral(img, padded=True)
    assert got.shape == (20, 32, 3)
    assert not got[0].any() and not got[:, 0].any()
    assert_table_equal(got, ref_integral(img, padded=True))


@pytest.mark.parametrize("view", ["crop", "every_other_row", "flipped", "roi_channels"])
def test_strided_views(rng, view):
    base = random_image(rng, (60, 50, 3), np.uint8)
    img = {"crop": base[5:40, 7:33],
           "every_other_row": base[::2],
           "flipped": base[::-1, :, :],
           "roi_channels": base[10:11, 3:4]}[view]
    assert_table_equal(pixsum.integral(img), ref_integral(img))
    # and a strided output
    big = np.zeros((img.shape[0] * 2, img.shape[1] + 5, 3), np.uint32)
    out = big[::2, 2:2 + img.shape[1]]
    res = pixsum.integral(img, out=out)
    assert res is out
    assert_table_equal(big[::2, 2:2 + img.shape[1]], ref_integral(img))
    assert not big[1::2].any() and not big[:, :2].any()


@pytest.mark.parametrize("dtype,out", [(np.uint8, np.uint64), (np.uint8, np.float32),
                                       (np.uint16, np.int64), (np.int16, np.float64),
                                       (np.int32, np.float64), (np.uint32, np.uint64),
                                       (np.float32, np.float32)])
def test_dtype_argument(rng, dtype, out):
    img = random_image(rng, (21, 34), dtype)
    got = pixsum.integral(img, dtype=out)
    assert got.dtype == out
    assert_table_equal(got, ref_integral(img))


def test_overflow_is_refused_and_wrap_is_modular(rng):
    img = np.full((300, 300), 65535, np.uint16)  # sum reaches 5.9e9 > 2^32
    with pytest.raises(pixsum.OverflowError) as e:
        pixsum.integral(img, dtype=np.uint32)
    assert e.value.status == 6 and "overflow" in e.value.detail
    assert isinstance(e.value, OverflowError)  # the built-in one too
    wrapped = pixsum.integral(img, dtype=np.uint32, wrap=True)
    ref = ref_integral(img)
    np.testing.assert_array_equal(wrapped, (ref & 0xFFFFFFFF).astype(np.uint32))
    # every box whose true sum fits 32 bits is still exact
    box = (17, 40, 200, 250)  # 50000 pixels * 65535 < 2^32
    assert int(pixsum.box_sum(wrapped, box)) == int(img[40:290, 17:217].astype(np.uint64).sum())
    # the default type never overflows
    assert pixsum.integral(img).dtype == np.uint64


def test_integral_sq(rng):
    img = random_image(rng, (45, 38, 2), np.uint8)
    t, q = pixsum.integral_sq(img)
    assert t.dtype == np.uint32 and q.dtype == np.uint64
    assert_table_equal(t, ref_integral(img))
    assert_table_equal(q, ref_integral(img.astype(np.uint64) ** 2))
    f = random_image(rng, (9, 11), np.float32)
    t, q = pixsum.integral_sq(f, padded=True)
    assert t.shape == (10, 12) and q.dtype == np.float64
    assert_table_equal(q, ref_integral(f.astype(np.float64) ** 2, padded=True))
    # out and out_sq are written in place
    o, oq = np.empty((9, 11), np.float64), np.empty((9, 11), np.float64)
    r = pixsum.integral_sq(f, out=o, out_sq=oq)
    assert r[0] is o and r[1] is oq


@pytest.mark.parametrize("shape", [(1, 1), (1, 6), (5, 1), (6, 7), (9, 4, 3)])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float64])
def test_tilted(rng, shape, dtype):
    img = random_image(rng, shape, dtype)
    got = pixsum.integral_tilted(img)
    assert got.shape == (shape[0] + 1, shape[1] + 1) + shape[2:]
    assert_table_equal(got, ref_tilted(img))


def test_tilted_matches_opencv(rng):
    cv2 = pytest.importorskip("cv2")
    img = random_image(rng, (31, 40), np.uint8)
    _, _, tilted = cv2.integral3(img, sdepth=cv2.CV_64F, sqdepth=cv2.CV_64F)
    np.testing.assert_array_equal(pixsum.integral_tilted(img, dtype=np.float64), tilted)


@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 5, 7), (4, 1, 1), (5, 6, 7), (3, 4, 5, 2)])
@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float32])
def test_integral3d(rng, shape, dtype):
    vol = random_image(rng, shape, dtype)
    assert_table_equal(pixsum.integral3d(vol), ref_integral(vol, axes=3))
    got = pixsum.integral3d(vol, padded=True)
    assert got.shape[:3] == tuple(s + 1 for s in shape[:3])
    assert_table_equal(got, ref_integral(vol, axes=3, padded=True))


def test_integral3d_strided_slices(rng):
    base = random_image(rng, (10, 12, 14), np.uint16)
    vol = base[::3, 1:11:2 // 2, 2:9]
    assert_table_equal(pixsum.integral3d(vol), ref_integral(vol, axes=3))


def test_every_method_agrees(rng):
    img = random_image(rng, (67, 131, 2), np.uint8)
    ref = ref_integral(img)
    ran = 0
    for m in pixsum.methods():
        if "integral" not in m["ops"] or not m["available"] or m["backend"] == "cuda":
            continue
        for threads in (1, 2):
            try:
                got = pixsum.integral(img, method=m["name"], threads=threads)
            except pixsum.UnsupportedError:
                continue
            assert_table_equal(got, ref)
            ran += 1
    assert ran >= 2


def test_methods_listing():
    ms = pixsum.methods()
    assert ms and all({"name", "id", "backend", "ops", "description", "available"} <= set(m)
                      for m in ms)
    assert any(m["name"] == "serial.2wh" for m in ms)
    assert pixsum.integral(np.ones((3, 3), np.uint8), method="serial.2wh")[-1, -1] == 9


def test_non_array_inputs():
    assert pixsum.integral([[1.0, 2.0], [3.0, 4.0]]).tolist() == [[1, 3], [4, 10]]
    # a list of ints is int64: read as int32 when every value fits (issue 41)
    assert pixsum.integral([[1, 2], [3, 4]]).tolist() == [[1, 3], [4, 10]]
    with pytest.raises(pixsum.OverflowError, match="int64"):
        pixsum.integral([[1, 2], [3, 1 << 40]])
    buf = bytearray(range(12))
    mv = memoryview(buf).cast("B", (3, 4))
    assert int(pixsum.integral(mv)[-1, -1]) == sum(range(12))


def test_integral_dtype():
    assert pixsum.integral_dtype(np.uint8, 100) == np.uint32
    assert pixsum.integral_dtype(np.uint8, 5000 * 5000) == np.uint64
    assert pixsum.integral_dtype(np.int16, 10) == np.int64
    assert pixsum.integral_dtype(np.float32, 10) == np.float64
    assert pixsum.integral_dtype(np.uint8, 10, squared=True) == np.uint64


@pytest.mark.parametrize("shape", [(1, 1), (23, 1), (37, 19), (40, 17, 3)])
@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float32, np.float64])
def test_bands_with_carry_equal_whole(rng, shape, dtype):
    """An image cut into bands, each band's table continuing the row above
    (carry=), stacks into the whole image's table, bit for bit (one thread)."""
    img = random_image(rng, shape, dtype)
    whole = pixsum.integral(img, threads=1)
    whole_t, whole_q = pixsum.integral_sq(img, threads=1)
    inner = rng.integers(1, shape[0], size=3).tolist() if shape[0] > 1 else []
    cuts = sorted(set(inner) | {0, shape[0]})
    bands, bands_t, bands_q = [], [], []
    for a, b in zip(cuts, cuts[1:]):
        band = img[a:b]
        if not bands:
            bands.append(pixsum.integral(band, dtype=whole.dtype, threads=1))
            t, q = pixsum.integral_sq(band, dtype=whole_t.dtype, sq_dtype=whole_q.dtype,
                                      threads=1)
        else:
            bands.append(pixsum.integral(band, carry=bands[-1][-1], threads=1))
            t, q = pixsum.integral_sq(band, carry=bands_t[-1][-1], carry_sq=bands_q[-1][-1],
                                      threads=1)
        bands_t.append(t)
        bands_q.append(q)
    for got, want in ((bands, whole), (bands_t, whole_t), (bands_q, whole_q)):
        stacked = np.concatenate(got)
        assert stacked.dtype == want.dtype
        np.testing.assert_array_equal(stacked, want)


def test_carry_refusals(rng):
    img = random_image(rng, (6, 5), np.uint8)
    row = np.zeros(5, np.uint32)
    with pytest.raises(pixsum.BadShapeError):
        pixsum.integral(img, carry=np.zeros(4, np.uint32))
    with pytest.raises(pixsum.BadShapeError):
        pixsum.integral(img, carry=np.zeros((5, 1), np.uint32))
    with pytest.raises(pixsum.BadTypeError):
        pixsum.integral(img, dtype=np.uint64, carry=row)
    with pytest.raises(pixsum.UnsupportedError):
        pixsum.integral(img, carry=row, padded=True)
    with pytest.raises(pixsum.UnsupportedError):
        pixsum.integral(img, carry=row, method="serial.dual")
    with pytest.raises(pixsum.OverflowError):
        pixsum.integral(img, carry=np.full(5, 2**32 - 100, np.uint32))
    assert pixsum.integral(img, carry=np.full(5, 2**32 - 100, np.uint32), wrap=True).dtype \
        == np.uint32
    with pytest.raises(pixsum.NullError):  # a squared table without its carry
        pixsum.integral_sq(img, carry=row)
    with pytest.raises(TypeError):
        pixsum.integral3d(img[None], carry=row)
    # the carry's dtype is kept, and it may be any readable row (a strided one)
    t = pixsum.integral(img, carry=np.arange(10, dtype=np.int64)[::2])
    assert t.dtype == np.int64
    np.testing.assert_array_equal(t, np.arange(0, 10, 2) + ref_integral(img))

"""Box queries (box_sum, box_mean, box_var) and box_filter against NumPy
slices: random boxes, channels, 2-D and 3-D tables, padded tables, and the
errors for boxes outside the image."""

import numpy as np
import pytest

import pixsum
from conftest import random_image


def random_boxes(rng, h, w, n):
    y = rng.integers(0, h, n)
    x = rng.integers(0, w, n)
    bh = rng.integers(1, h - y + 1)
    bw = rng.integers(1, w - x + 1)
    return np.stack([x, y, bw, bh], axis=1)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.int32, np.float32])
@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("channels", [0, 3])
def test_box_sum_mean(rng, dtype, padded, channels):
    shape = (41, 57) + ((channels,) if channels else ())
    img = random_image(rng, shape, dtype)
    table = pixsum.integral(img, padded=padded)
    boxes = random_boxes(rng, 41, 57, 200)
    sums = pixsum.box_sum(table, boxes, padded=padded)
    means = pixsum.box_mean(table, boxes, padded=padded)
    assert sums.dtype == table.dtype
    assert sums.shape == (200,) + ((channels,) if channels else ())
    for k, (x, y, w, h) in enumerate(boxes):
        patch = img[y:y + h, x:x + w].astype(np.float64)
        want = patch.sum(axis=(0, 1))
        if table.dtype.kind == "f":
            np.testing.assert_allclose(sums[k], want, rtol=1e-9, atol=1e-6)
        else:
            np.testing.assert_array_equal(sums[k], want.astype(table.dtype))
        np.testing.assert_allclose(means[k], patch.mean(axis=(0, 1)), rtol=1e-9, atol=1e-9)


def test_single_box_returns_scalar(rng):
    img = random_image(rng, (10, 12), np.uint8)
    t = pixsum.integral(img)
    s = pixsum.box_sum(t, (2, 3, 4, 5))
    assert np.ndim(s) == 0 and int(s) == int(img[3:8, 2:6].sum())
    t3 = pixsum.integral(np.dstack([img, img]))
    assert pixsum.box_sum(t3, (2, 3, 4, 5)).shape == (2,)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.float64])
def test_box_var_never_negative_and_exact(rng, dtype):
    img = random_image(rng, (33, 47, 2), dtype)
    t, q = pixsum.integral_sq(img)
    boxes = random_boxes(rng, 33, 47, 150)
    var = pixsum.box_var(t, q, boxes)
    assert (var >= 0).all()
    for k, (x, y, w, h) in enumerate(boxes):
        want = img[y:y + h, x:x + w].astype(np.float64).var(axis=(0, 1))
        np.testing.assert_allclose(var[k], want, rtol=1e-9, atol=1e-6)
    # constant image: variance exactly 0, never a tiny negative number
    c = np.full((20, 20), 200, np.uint8)
    t, q = pixsum.integral_sq(c)
    assert (pixsum.box_var(t, q, random_boxes(rng, 20, 20, 50)) == 0).all()


def test_box_3d(rng):
    vol = random_image(rng, (9, 10, 11), np.uint16)
    for padded in (False, True):
        t = pixsum.integral3d(vol, padded=padded)
        boxes = [(1, 2, 3, 4, 5, 6), (0, 0, 0, 11, 10, 9), (10, 9, 8, 1, 1, 1)]
        got = pixsum.box_sum(t, boxes, padded=padded)
        for k, (x, y, z, w, h, d) in enumerate(boxes):
            assert int(got[k]) == int(vol[z:z + d, y:y + h, x:x + w].astype(np.int64).sum())


def test_box_errors(rng):
    t = pixsum.integral(random_image(rng, (10, 12), np.uint8))
    with pytest.raises(pixsum.OutOfRangeError) as e:
        pixsum.box_sum(t, (5, 5, 10, 2))
    assert isinstance(e.value, IndexError) and e.value.status == 12
    with pytest.raises(pixsum.OutOfRangeError):
        pixsum.box_sum(t, (-1, 0, 2, 2))
    with pytest.raises(pixsum.BadShapeError):
        pixsum.box_sum(t, (1, 1, 0, 2))
    with pytest.raises(pixsum.BadShapeError):
        pixsum.box_sum(t, [[1, 2, 3]])
    with pytest.raises(pixsum.BadTypeError):
        pixsum.box_sum(t, (1.5, 1, 2, 2))
    with pytest.raises(pixsum.BadTypeError):  # an image is not a table
        pixsum.box_sum(np.zeros((4, 4), np.uint8), (0, 0, 1, 1))


def ref_box_filter(img, kh, kw, mode, normalize):
    h, w = img.shape[:2]
    a = img.astype(np.float64)
    if mode == "valid":
        out = np.empty((h - kh + 1, w - kw + 1) + img.shape[2:])
        for y in range(out.shape[0]):
            for x in range(out.shape[1]):
                p = a[y:y + kh, x:x + kw]
                out[y, x] = p.mean(axis=(0, 1)) if normalize else p.sum(axis=(0, 1))
        return out
    out = np.empty(a.shape)
    for y in range(h):
        y0, y1 = max(0, y - kh // 2), min(h, y - kh // 2 + kh)
        for x in range(w):
            x0, x1 = max(0, x - kw // 2), min(w, x - kw // 2 + kw)
            p = a[y0:y1, x0:x1]
            out[y, x] = p.mean(axis=(0, 1)) if normalize else p.sum(axis=(0, 1))
    return out


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
@pytest.mark.parametrize("size", [1, 3, (4, 2), (7, 9), (13, 17), (20, 30)])
@pytest.mark.parametrize("mode", ["same", "valid"])
def test_box_filter(rng, dtype, size, mode):
    img = random_image(rng, (13, 17, 2), dtype)
    kh, kw = (size, size) if isinstance(size, int) else size
    if mode == "valid" and (kh > 13 or kw > 17):
        with pytest.raises(pixsum.BadShapeError):
            pixsum.box_filter(img, size, mode=mode)
        return
    for normalize in (True, False):
        got = pixsum.box_filter(img, size, mode=mode, normalize=normalize)
        want = ref_box_filter(img, kh, kw, mode, normalize)
        assert got.shape == want.shape
        if not normalize and img.dtype.kind != "f":
            assert got.dtype.kind in "iu"
            np.testing.assert_array_equal(got, want.astype(got.dtype))
        else:
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-6)


def test_box_filter_matches_opencv(rng):
    cv2 = pytest.importorskip("cv2")
    img = random_image(rng, (50, 60), np.uint8)
    got = pixsum.box_filter(img, (5, 5), mode="valid")
    want = cv2.boxFilter(img.astype(np.float64), -1, (5, 5), borderType=cv2.BORDER_CONSTANT)
    np.testing.assert_allclose(got, want[2:-2, 2:-2], rtol=1e-12)


def test_box_filter_large_window_stays_exact():
    # 300 x 300 window sums of 65535 exceed 2^32: the filter picks uint64
    img = np.full((300, 300), 65535, np.uint16)
    got = pixsum.box_filter(img, 300, normalize=False, mode="valid")
    assert got.dtype == np.uint64 and int(got[0, 0]) == 300 * 300 * 65535
    with pytest.raises(pixsum.OverflowError):
        pixsum.box_filter(img, 300, normalize=False, dtype=np.uint32)
    # smaller windows fit uint32 (computed modulo 2^32, still exact)
    small = pixsum.box_filter(img, 250, normalize=False, mode="valid")
    assert small.dtype == np.uint32 and (small == 250 * 250 * 65535).all()
    out = np.empty((300, 300), np.float32)
    assert pixsum.box_filter(img, 5, out=out) is out
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.box_filter(img, 0)
    with pytest.raises(pixsum.BadShapeError):
        pixsum.box_filter(img, 301, mode="valid")


@pytest.mark.parametrize("shape", [(1, 1), (1, 9), (9, 1), (5, 6, 3), (31, 64), (8, 41, 4)])
@pytest.mark.parametrize("size", [1, 2, 3, (5, 4)])
def test_box_filter_edge_shapes(rng, shape, size):
    img = random_image(rng, shape, np.uint16)
    kh, kw = (size, size) if isinstance(size, int) else size
    np.testing.assert_allclose(pixsum.box_filter(img, size),
                               ref_box_filter(img, kh, kw, "same", True), rtol=1e-12)
    np.testing.assert_array_equal(pixsum.box_filter(img, size, normalize=False),
                                  ref_box_filter(img, kh, kw, "same", False))


def ref_box_filter_fast(img, kh, kw, mode):
    """Window sums by NumPy (int64 padded cumulative sums, vectorised)."""
    h, w = img.shape[:2]
    p = np.zeros((h + 1, w + 1) + img.shape[2:], np.int64)
    p[1:, 1:] = img.astype(np.int64).cumsum(0).cumsum(1)
    if mode == "valid":
        y0, x0 = np.arange(h - kh + 1), np.arange(w - kw + 1)
        y1, x1 = y0 + kh, x0 + kw
    else:
        y0 = np.clip(np.arange(h) - kh // 2, 0, h)
        y1 = np.clip(np.arange(h) - kh // 2 + kh, 0, h)
        x0 = np.clip(np.arange(w) - kw // 2, 0, w)
        x1 = np.clip(np.arange(w) - kw // 2 + kw, 0, w)
    s = (p[y1][:, x1] - p[y0][:, x1] - p[y1][:, x0] + p[y0][:, x0])
    area = np.outer(y1 - y0, x1 - x0)
    if img.ndim == 3:
        area = area[..., None]
    return s, area


@pytest.mark.parametrize("mode", ["same", "valid"])
@pytest.mark.parametrize("size", [(7, 5), (40, 3), (1, 1)])
def test_box_filter_many_bands(rng, mode, size):
    # tall enough that the filter works in several row bands of its table
    img = random_image(rng, (2500, 301, 2), np.uint8)
    s, area = ref_box_filter_fast(img, *size, mode)
    np.testing.assert_array_equal(pixsum.box_filter(img, size, mode=mode, normalize=False), s)
    np.testing.assert_allclose(pixsum.box_filter(img[::-1], size, mode=mode),
                               ref_box_filter_fast(img[::-1], *size, mode)[0] / area,
                               rtol=1e-15)

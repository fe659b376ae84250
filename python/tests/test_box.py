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


# --- the streamed library box filter: borders, statistics, OpenCV -----------

NP_MODE = {"reflect101": "reflect", "reflect": "symmetric", "replicate": "edge",
           "constant": "constant"}


def ref_border_filter(img, kh, kw, border, stat, cval=0.0):
    """Sums/means/variances of every window from the definition (np.pad)."""
    a = img.astype(np.float64)
    if a.ndim == 2:
        a = a[:, :, None]
    h, w, c = a.shape
    if border in ("shrink", "same"):
        lo, sq = ref_box_filter(a, kh, kw, "same", False), ref_box_filter(a * a, kh, kw, "same", False)
        cnt = ref_box_filter(np.ones((h, w, 1)), kh, kw, "same", False)
    else:
        if border != "valid":
            pads = ((kh // 2, kh - 1 - kh // 2), (kw // 2, kw - 1 - kw // 2), (0, 0))
            kwargs = {"constant_values": cval} if border == "constant" else {}
            a = np.pad(a, pads, mode=NP_MODE[border], **kwargs)
        lo = ref_box_filter(a, kh, kw, "valid", False)
        sq = ref_box_filter(a * a, kh, kw, "valid", False)
        cnt = np.full(lo.shape[:2] + (1,), float(kh * kw))
    if stat == "sum":
        r = lo
    elif stat == "mean":
        r = lo / cnt
    else:
        r = np.maximum(sq / cnt - (lo / cnt) ** 2, 0)
        if stat == "std":
            r = np.sqrt(r)
    return r if img.ndim == 3 else r[:, :, 0]


@pytest.mark.parametrize("border", ["reflect101", "reflect", "replicate", "constant", "shrink",
                                    "valid"])
@pytest.mark.parametrize("stat", ["sum", "mean", "var", "std"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float64])
def test_box_filter_borders_and_stats(rng, border, stat, dtype):
    img = random_image(rng, (11, 14, 3), dtype)
    for size in [(3, 5), (4, 4), (1, 1), (13, 20)]:
        if border == "valid" and (size[0] > 11 or size[1] > 14):
            continue
        cval = 5 if border == "constant" else 0
        got = pixsum.box_filter(img, size, border=border, stat=stat, cval=cval)
        want = ref_border_filter(img, *size, border, stat, cval)
        assert got.shape == want.shape
        if stat == "sum" and img.dtype.kind != "f":
            np.testing.assert_array_equal(got, want.astype(got.dtype))
        elif stat in ("var", "std"):
            scale = float(np.abs(img.astype(np.float64)).max()) ** (2 if stat == "var" else 1)
            # the reference's E[x^2] - E[x]^2 cancels: rounding of about 1e-15 of
            # the squares, whose square root (std) is about 3e-8 of the values
            tol = 1e-12 * scale if stat == "var" else 1e-7 * scale
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=tol + 1e-9)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-6)


def test_box_filter_mode_names_and_defaults(rng):
    img = random_image(rng, (9, 12), np.uint8)
    same = pixsum.box_filter(img, 3)
    np.testing.assert_array_equal(same, pixsum.box_filter(img, 3, mode="shrink"))
    np.testing.assert_array_equal(same, pixsum.box_filter(img, 3, border="shrink"))
    np.testing.assert_array_equal(pixsum.box_filter(img, 3, mode="reflect101"),
                                  pixsum.box_filter(img, 3, border="reflect101"))
    assert same.dtype == np.float64
    assert pixsum.box_filter(img, 3, normalize=False).dtype == np.uint32
    assert pixsum.box_filter(img, 3, stat="var").dtype == np.float64
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.box_filter(img, 3, mode="wrap")
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.box_filter(img, 3, stat="median")
    with pytest.raises(pixsum.InvalidArgumentError):  # u8 constant border takes integers
        pixsum.box_filter(img, 3, border="constant", cval=0.5)
    with pytest.raises(pixsum.BadTypeError):  # means of u8 are u8, f32 or f64
        pixsum.box_filter(img, 3, dtype=np.uint16)


CV_BORDERS = {"reflect101": "BORDER_REFLECT_101", "reflect": "BORDER_REFLECT",
              "replicate": "BORDER_REPLICATE", "constant": "BORDER_CONSTANT"}


@pytest.mark.parametrize("border", sorted(CV_BORDERS))
@pytest.mark.parametrize("channels", [0, 3])
def test_box_filter_u8_equals_opencv(rng, border, channels):
    cv2 = pytest.importorskip("cv2")
    shape = (37, 53) + ((channels,) if channels else ())
    img = random_image(rng, shape, np.uint8)
    bt = getattr(cv2, CV_BORDERS[border])
    for kh, kw in [(3, 3), (5, 7), (15, 15), (1, 9), (31, 5)]:
        got = pixsum.box_filter(img, (kh, kw), border=border, dtype=np.uint8)
        np.testing.assert_array_equal(got, cv2.blur(img, (kw, kh), borderType=bt))
        np.testing.assert_array_equal(
            got, cv2.boxFilter(img, -1, (kw, kh), borderType=bt))
        f = pixsum.box_filter(img, (kh, kw), border=border, dtype=np.float32)
        np.testing.assert_allclose(f, cv2.boxFilter(img, cv2.CV_32F, (kw, kh), borderType=bt),
                                   rtol=1e-6, atol=1e-4)
        s = pixsum.box_filter(img, (kh, kw), border=border, stat="sum", dtype=np.int32)
        np.testing.assert_array_equal(
            s, cv2.boxFilter(img, cv2.CV_32S, (kw, kh), normalize=False, borderType=bt))


def test_box_filter_u8_mean_rounds_half_to_even():
    img = np.array([[1, 2, 3, 4]], np.uint8)
    got = pixsum.box_filter(img, (1, 2), mode="valid", dtype=np.uint8)
    np.testing.assert_array_equal(got, [[2, 2, 4]])  # 1.5, 2.5, 3.5


def test_box_filter_variance_of_large_offset():
    x = np.array([[1e8, 1e8 + 1, 1e8 + 2, 1e8 + 3]])
    assert pixsum.box_filter(x, (1, 4), mode="valid", stat="var")[0, 0] == 1.25
    assert pixsum.box_filter(x, (1, 4), mode="valid", stat="std")[0, 0] == np.sqrt(1.25)


def test_box_filter_strided_views(rng):
    big = random_image(rng, (40, 60, 4), np.uint16)
    view = big[3:35:2, 5:20]  # every other row: a row stride of 2 rows
    got = pixsum.box_filter(view, (5, 3), border="reflect", stat="sum")
    want = ref_border_filter(np.ascontiguousarray(view), 5, 3, "reflect", "sum")
    np.testing.assert_array_equal(got, want.astype(got.dtype))
    out = np.zeros((32, 15, 4), np.uint16)[::2]
    assert pixsum.box_filter(view, 3, border="replicate", dtype=np.uint16, out=out) is out

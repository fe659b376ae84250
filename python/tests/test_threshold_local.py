"""pixsum.threshold_local and pixsum.normalize_local against scikit-image
(threshold_sauvola, threshold_niblack, threshold_local(method='mean')) with the
matching border, and against a float64 NumPy reference from the definition.

Tolerance: the library's maps are within 2^-48 of the exact threshold
(relative to its terms); scikit-image's come from float64 integral images
(cancellation in the window sums), so they are compared within 1e-9 * the
image's magnitude; masks agree except where the sample lies within that
tolerance of T.
"""

import numpy as np
import pytest

import pixsum

skf = pytest.importorskip("skimage.filters")

RNG = np.random.default_rng(41)


def _windows(img, kh, kw, mode):
    """Every kh x kw window of img padded by numpy mode (same-size output)."""
    pt, pl = kh // 2, kw // 2
    pad = np.pad(img.astype(np.float64), ((pt, kh - 1 - pt), (pl, kw - 1 - pl)), mode=mode)
    return np.lib.stride_tricks.sliding_window_view(pad, (kh, kw))


def _ref_mean_std(img, kh, kw, mode):
    w = _windows(img, kh, kw, mode)
    return w.mean(axis=(-1, -2)), w.std(axis=(-1, -2))


@pytest.mark.parametrize("shape", [(1, 1), (1, 17), (23, 1), (31, 45), (64, 64)])
@pytest.mark.parametrize("window", [1, 3, 15, 25])
def test_sauvola_matches_skimage(shape, window):
    img = RNG.integers(0, 256, shape, dtype=np.uint8)
    want = skf.threshold_sauvola(img, window_size=window, k=0.2)
    got = pixsum.threshold_local(img, window, method="sauvola", k=0.2)
    assert got.dtype == np.float64 and got.shape == img.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * 255)
    mask = pixsum.threshold_local(img, window, method="sauvola", output="mask")
    far = np.abs(img - want) > 1e-9 * 255
    assert np.array_equal((mask == 255)[far], (img > want)[far])


@pytest.mark.parametrize("window", [3, 11, 51])
def test_niblack_sign_convention(window):
    img = RNG.integers(0, 65536, (40, 57), dtype=np.uint16)
    want = skf.threshold_niblack(img, window_size=window, k=0.3)  # m - 0.3 s
    got = pixsum.threshold_local(img, window, method="niblack", k=-0.3)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * 65535)


@pytest.mark.parametrize("window", [3, 9, 35])
def test_local_mean_matches_skimage(window):
    img = RNG.integers(0, 256, (37, 50), dtype=np.uint8)
    want = skf.threshold_local(img, window, method="mean", offset=3.5)  # scipy 'reflect'
    got = pixsum.threshold_local(img, window, method="mean", offset=3.5, border="reflect")
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * 255)


def test_float_image_and_r():
    img = RNG.random((30, 41)).astype(np.float32)
    want = skf.threshold_sauvola(img, window_size=7, k=0.4, r=0.3)
    got = pixsum.threshold_local(img, 7, method="sauvola", k=0.4, r=0.3)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    want = skf.threshold_sauvola(img.astype(np.float64), window_size=7)  # r = 1 for floats
    np.testing.assert_allclose(pixsum.threshold_local(img.astype(np.float64), 7,
                                                      method="sauvola"), want, atol=1e-12)


@pytest.mark.parametrize("border,mode", [("reflect101", "reflect"), ("reflect", "symmetric"),
                                         ("replicate", "edge")])
def test_even_windows_and_borders(border, mode):
    img = RNG.integers(0, 256, (19, 26), dtype=np.uint8)
    m, s = _ref_mean_std(img, 4, 6, mode)
    got = pixsum.threshold_local(img, (4, 6), method="niblack", k=0.5, border=border)
    np.testing.assert_allclose(got, m + 0.5 * s, rtol=0, atol=1e-9)


def test_valid_mask_both_and_strides():
    base = RNG.integers(0, 256, (50, 80), dtype=np.uint8)
    img = base[::2, 1::3]  # strided view, read in place
    t, k = pixsum.threshold_local(img, 5, method="sauvola", border="valid", output="both",
                                  foreground=1, dtype=np.float32)
    assert t.shape == (img.shape[0] - 4, img.shape[1] - 4) and t.dtype == np.float32
    assert set(np.unique(k)) <= {0, 1}
    w = np.lib.stride_tricks.sliding_window_view(img.astype(np.float64), (5, 5))
    m, s = w.mean(axis=(-1, -2)), w.std(axis=(-1, -2))
    want = m * (1 + 0.2 * (s / 127.5 - 1))
    np.testing.assert_allclose(t, want, rtol=2e-7)
    centre = img[2:-2, 2:-2]
    far = np.abs(centre - want) > 1e-6
    assert np.array_equal((k == 1)[far], (centre > want)[far])


def test_normalize_local():
    img = RNG.integers(0, 256, (33, 47, 3), dtype=np.uint8)
    got = pixsum.normalize_local(img, 7, eps=0.5)
    assert got.shape == img.shape and got.dtype == np.float64
    for c in range(3):
        m, s = _ref_mean_std(img[..., c], 7, 7, "reflect")
        np.testing.assert_allclose(got[..., c], (img[..., c] - m) / (s + 0.5), rtol=1e-12,
                                   atol=1e-12)
    flat = np.full((5, 5), 9, np.uint8)
    assert not pixsum.normalize_local(flat, 3, eps=0).any()  # 0 / 0 -> 0
    out = np.empty((33, 47, 3), np.float32)
    assert pixsum.normalize_local(img, 7, eps=0.5, out=out) is out


def test_refusals():
    img = np.zeros((8, 8), np.uint8)
    with pytest.raises(pixsum.BadShapeError):
        pixsum.threshold_local(np.zeros((8, 8, 3), np.uint8), 3)
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.threshold_local(img, 3, method="otsu")
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.threshold_local(img, 0)
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.threshold_local(img, 3, output="both", out=np.zeros((8, 8)))
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.threshold_local(img, 3, method="sauvola", r=-1)
    with pytest.raises(pixsum.BadShapeError):
        pixsum.threshold_local(img, 9, border="valid")
    with pytest.raises(pixsum.BadTypeError):
        pixsum.threshold_local(img, 3, dtype=np.int32)
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.normalize_local(img, 3, eps=-1)
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.normalize_local(img, 3, eps=float("nan"))


# Stacks (batch=True): each image equals the call on it alone, bit for bit.

_METHODS = [dict(method="mean", offset=1.5), dict(method="niblack", k=-0.3),
            dict(method="sauvola", k=0.25)]


@pytest.mark.parametrize("n", [1, 2, 5])
@pytest.mark.parametrize("shape", [(1, 1), (1, 13), (11, 1), (17, 23)])
@pytest.mark.parametrize("border", ["reflect101", "constant", "shrink", "valid"])
def test_threshold_batch_equals_per_image(n, shape, border):
    stack = RNG.integers(0, 256, (n,) + shape, dtype=np.uint8)
    window = (3, 1) if border == "valid" and shape[1] == 1 else (
        (1, 3) if border == "valid" and shape[0] == 1 else 3)
    if border == "valid" and shape == (1, 1):
        window = 1
    for kw in _METHODS:
        t, k = pixsum.threshold_local(stack, window, border=border, output="both",
                                      batch=True, cval=4, **kw)
        assert t.shape[0] == n and k.shape == t.shape and k.dtype == np.uint8
        for i in range(n):
            t1, k1 = pixsum.threshold_local(stack[i], window, border=border, output="both",
                                            cval=4, **kw)
            assert np.array_equal(t[i], t1) and np.array_equal(k[i], k1)


def test_threshold_batch_strides_out_and_threads():
    base = RNG.integers(0, 65536, (6, 40, 50), dtype=np.uint16)
    stack = base[::2, 1::3, ::2]  # strided on every axis, read in place
    out = np.empty((3,) + stack.shape[1:], np.float32)
    got = pixsum.threshold_local(stack, (5, 7), method="sauvola", batch=True, out=out,
                                 threads=2)
    assert got is out
    for i in range(3):
        one = pixsum.threshold_local(stack[i], (5, 7), method="sauvola", dtype=np.float32)
        assert np.array_equal(out[i], one)
    mask = pixsum.threshold_local(stack, 5, output="mask", batch=True, foreground=3)
    assert mask.shape == stack.shape and set(np.unique(mask)) <= {0, 3}


def test_threshold_batch_channels_first():
    nchw = RNG.integers(0, 256, (2, 3, 9, 14), dtype=np.uint8)
    got = pixsum.threshold_local(nchw, 5, method="niblack", k=0.2, batch=True, channel_axis=1)
    assert got.shape == nchw.shape
    for i in range(2):
        for c in range(3):
            one = pixsum.threshold_local(nchw[i, c], 5, method="niblack", k=0.2)
            assert np.array_equal(got[i, c], one)


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64])
def test_normalize_batch_equals_per_image(channels, dtype):
    shape = (4, 13, 10, channels)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        stack = RNG.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    else:
        stack = (RNG.random(shape) * 200 - 100).astype(dtype)
    got = pixsum.normalize_local(stack, (3, 5), eps=0.1, batch=True)
    assert got.shape == stack.shape
    for i in range(4):
        assert np.array_equal(got[i], pixsum.normalize_local(stack[i], (3, 5), eps=0.1))
    m, s = _ref_mean_std(stack[2][..., 0], 3, 5, "reflect")
    np.testing.assert_allclose(got[2][..., 0], (stack[2][..., 0] - m) / (s + 0.1),
                               rtol=1e-5 if dtype == np.float32 else 1e-9, atol=1e-5)


def test_normalize_batch_channels_first_and_valid():
    nchw = RNG.integers(0, 256, (3, 2, 12, 9), dtype=np.uint8)
    got = pixsum.normalize_local(nchw, 3, border="valid", batch=True, channel_axis=1)
    assert got.shape == (3, 2, 10, 7)
    for i in range(3):
        for c in range(2):
            one = pixsum.normalize_local(nchw[i, c], 3, border="valid")
            assert np.array_equal(got[i, c], one)


def test_batch_refusals():
    stack = np.zeros((6, 8, 8), np.uint8)
    with pytest.raises(pixsum.BadShapeError, match="batch=True"):
        pixsum.threshold_local(stack, 3)
    with pytest.raises(pixsum.BadShapeError, match="batch=True"):
        pixsum.threshold_local(stack[:, :, :3], 3)  # (6, 8, 3): colour or a stack
    with pytest.raises(pixsum.BadShapeError, match="batch=True"):
        pixsum.normalize_local(stack, 3)
    with pytest.raises(pixsum.BadShapeError, match="batch=True"):
        pixsum.normalize_local(np.zeros((2, 3, 8, 8), np.uint8), 3)
    with pytest.raises(pixsum.InvalidArgumentError, match="channel_axis"):
        pixsum.threshold_local(stack[0], 3, channel_axis=1)
    with pytest.raises(pixsum.InvalidArgumentError, match="channel_axis"):
        pixsum.normalize_local(stack, 3, batch=True, channel_axis=0)
    with pytest.raises(pixsum.BadShapeError):  # thresholds take one channel
        pixsum.threshold_local(np.zeros((2, 8, 8, 3), np.uint8), 3, batch=True)
    with pytest.raises(pixsum.BadShapeError):  # a batch is 3-D or 4-D
        pixsum.threshold_local(stack[0, 0], 3, batch=True)
    with pytest.raises(pixsum.BadShapeError):  # out= of another stack size
        pixsum.threshold_local(stack, 3, batch=True, out=np.zeros((5, 8, 8)))

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

"""pixsum.compat.skimage against scikit-image itself: same values, dtypes and
shapes for integral_image, integrate, histogram, cumulative_distribution,
equalize_hist, threshold_otsu, threshold_sauvola, threshold_niblack and
threshold_local(method='mean'), and clear errors where pixsum differs.
(scikit-image's own test files run against the compat module in the ctest
python_skimage_suite, tests/skimage_suite.)"""

import warnings

import numpy as np
import pytest

from pixsum.compat import skimage as ps

ski_transform = pytest.importorskip("skimage.transform")
ski_exposure = pytest.importorskip("skimage.exposure")
ski_filters = pytest.importorskip("skimage.filters")

RNG = np.random.default_rng(41)


def same(a, b, exact=True):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    if exact:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int32, np.int64,
                                   np.uint32, np.float16, np.float32, np.float64, np.bool_])
@pytest.mark.parametrize("shape", [(7,), (1, 1), (5, 9), (4, 5, 6), (3, 2, 4, 5)])
def test_integral_image(dtype, shape):
    img = (RNG.random(shape) * 100).astype(dtype)
    same(ps.integral_image(img), ski_transform.integral_image(img),
         exact=np.dtype(dtype).kind != "f")
    for out in (np.uint8, np.int32, np.float32):
        if np.dtype(dtype).kind in "iub" or out == np.float32:
            same(ps.integral_image(img, dtype=out), ski_transform.integral_image(img, dtype=out),
                 exact=np.dtype(out).kind != "f" and np.dtype(dtype).kind != "f")


@pytest.mark.parametrize("shape", [(30,), (20, 30), (6, 7, 8)])
def test_integrate(shape):
    img = RNG.integers(0, 255, shape).astype(np.uint8)
    ii = ski_transform.integral_image(img)
    lo = [tuple(RNG.integers(0, s // 2) for s in shape) for _ in range(5)]
    hi = [tuple(int(RNG.integers(a, s)) for a, s in zip(l, shape)) for l in lo]
    same(ps.integrate(ii, lo, hi), ski_transform.integrate(ii, lo, hi))
    same(ps.integrate(ii, lo[0], hi[0]), ski_transform.integrate(ii, lo[0], hi[0]))
    neg = tuple(-1 for _ in shape)
    same(ps.integrate(ii, lo[0], neg), ski_transform.integrate(ii, lo[0], neg))
    with pytest.raises(IndexError):
        ps.integrate(ii, hi[0], tuple(max(h - 1, 0) - 1 for h in hi[0]))


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16, np.int32,
                                   np.float16, np.float32, np.float64])
@pytest.mark.parametrize("source_range", ["image", "dtype"])
def test_histogram(dtype, source_range):
    if dtype == np.int32 and source_range == "dtype":
        pytest.skip("2^32 unit bins: too large for either library here")
    img = (RNG.random((20, 30)) * 90 - (40 if np.dtype(dtype).kind in "if" else 0))
    img = img.astype(dtype)
    if np.dtype(dtype).kind == "f":
        img = img / 100
    for nbins in (256, 7):
        for norm in (False, True):
            ref = ski_exposure.histogram(img, nbins, source_range, norm)
            got = ps.histogram(img, nbins, source_range, norm)
            same(got[0], ref[0])
            same(got[1], ref[1])


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64])
@pytest.mark.parametrize("channel_axis", [0, -1])
def test_histogram_channels(dtype, channel_axis):
    img = (RNG.random((3, 10, 12)) * 100).astype(dtype)
    img = np.moveaxis(img, 0, channel_axis)
    ref = ski_exposure.histogram(img, 50, channel_axis=channel_axis)
    got = ps.histogram(img, 50, channel_axis=channel_axis)
    same(got[0], ref[0])
    same(got[1], ref[1])


def test_histogram_warns_and_refuses():
    with pytest.warns(UserWarning, match="color image"):
        ps.histogram(np.zeros((4, 4, 3), np.uint8))
    with pytest.raises(ValueError):
        ps.histogram(np.zeros((4, 4)), source_range="bad")
    with pytest.raises(ValueError, match="not finite"):
        ps.histogram(np.array([0.0, np.nan]))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64])
def test_cumulative_distribution(dtype):
    img = (RNG.random((25, 17)) * 120).astype(dtype)
    for nbins in (256, 10):
        ref = ski_exposure.cumulative_distribution(img, nbins)
        got = ps.cumulative_distribution(img, nbins)
        same(got[0], ref[0])
        same(got[1], ref[1])


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int8, np.int16, np.int32,
                                   np.float16, np.float32, np.float64])
def test_equalize_hist(dtype):
    img = (RNG.random((3, 21, 19)) * 100).astype(dtype)
    mask = RNG.random(img.shape) < 0.5
    for kw in ({}, {"mask": mask}, {"nbins": 30}):
        ref = ski_exposure.equalize_hist(img, **kw)
        got = ps.equalize_hist(img, **kw)
        assert got.dtype == ref.dtype and got.shape == ref.shape
        # float16/float32 images: scikit-image's bin edges are in the
        # image's type, pixsum's in float64: a sample may change bins
        if dtype == np.float16:  # scikit-image's edges are float16 (3 digits)
            np.testing.assert_allclose(got, ref, atol=5e-3)
        elif dtype == np.float32:
            assert np.mean(np.abs(got - ref) > 1e-6) < 0.01
        else:
            np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int64, np.float32, np.float64])
def test_threshold_otsu(dtype):
    img = np.concatenate([RNG.normal(30, 5, 500), RNG.normal(70, 8, 700)]).reshape(30, 40)
    img = img.astype(dtype)
    for nbins in (256, 32):
        same(ps.threshold_otsu(img, nbins), ski_filters.threshold_otsu(img, nbins))
    counts, centers = ski_exposure.histogram(img)
    same(ps.threshold_otsu(hist=(counts, centers)), ski_filters.threshold_otsu(hist=(counts, centers)))
    same(ps.threshold_otsu(hist=counts), ski_filters.threshold_otsu(hist=counts))
    const = np.full((4, 4), 3, dtype)
    same(ps.threshold_otsu(const), ski_filters.threshold_otsu(const))


def test_threshold_otsu_errors():
    with pytest.raises(Exception):
        ps.threshold_otsu()
    with pytest.raises(ValueError, match="integer counts"):
        ps.threshold_otsu(hist=np.array([0.25, 0.5, 0.25]))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64])
@pytest.mark.parametrize("window", [3, 15, (5, 9), (1, 7)])
def test_niblack_sauvola_2d(dtype, window):
    img = (RNG.random((40, 33)) * 200).astype(dtype)
    if np.dtype(dtype).kind == "f":
        img = img / 200
    for k in (0.2, -0.5):
        ref = ski_filters.threshold_niblack(img, window, k)
        got = ps.threshold_niblack(img, window, k)
        assert got.dtype == ref.dtype
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
        for r in (None, 100):
            ref = ski_filters.threshold_sauvola(img, window, k, r)
            got = ps.threshold_sauvola(img, window, k, r)
            assert got.dtype == ref.dtype
            np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_niblack_sauvola_3d():
    img = RNG.random((6, 20, 15))
    for w in (3, (1, 5, 5), (3, 5, 7)):
        np.testing.assert_allclose(ps.threshold_niblack(img, w), ski_filters.threshold_niblack(img, w),
                                   rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(ps.threshold_sauvola(img, w), ski_filters.threshold_sauvola(img, w),
                                   rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError):
        ps.threshold_niblack(img, 4)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float16, np.float32, np.float64])
@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "constant"])
def test_threshold_local_mean(dtype, mode):
    img = (RNG.random((31, 26)) * 100).astype(dtype)
    for block in (3, 11, (5, 9)):
        ref = ski_filters.threshold_local(img, block, "mean", offset=2.5, mode=mode, cval=7)
        got = ps.threshold_local(img, block, "mean", offset=2.5, mode=mode, cval=7)
        assert got.dtype == ref.dtype and got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-4)
    vol = (RNG.random((5, 12, 9)) * 100).astype(dtype)
    ref = ski_filters.threshold_local(vol, (3, 5, 1), "mean", mode=mode, cval=7)
    got = ps.threshold_local(vol, (3, 5, 1), "mean", mode=mode, cval=7)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-4)


def test_threshold_local_refuses():
    img = np.zeros((8, 8))
    with pytest.raises(NotImplementedError, match="mean"):
        ps.threshold_local(img, 3)  # scikit-image's default method='gaussian'
    with pytest.raises(NotImplementedError):
        ps.threshold_local(img, 3, "mean", mode="wrap")
    with pytest.raises(ValueError):
        ps.threshold_local(img, 4, "mean")
    with pytest.raises(ValueError):
        ps.threshold_local(img, (3, 3, 3), "mean")
    with pytest.raises(TypeError):
        ps.integral_image(np.zeros((3, 3), np.complex128))

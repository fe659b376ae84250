"""histogram(x, batch=True): N histograms of a stack (N, H, W) or (N, H, W, C)
in one call (pixsum_histogram_batch()). Each must equal NumPy's histogram of
that image over the same float64 edges (np.histogram's closed last bin
avoided by ranges whose top edge no sample reaches), and equal the
single-image call with the same range bit for bit; the default range covers
the whole stack, or each image with range_per_image=True; masks shared or per
image; relative and cumulative forms; strided views; refusals."""

import numpy as np
import pytest

import pixsum

HIST_DTYPES = [np.uint8, np.uint16, np.int16, np.int32, np.float32, np.float64]


def stack(rng, n, h, w, c, dtype):
    shape = (n, h, w) + ((c,) if c else ())
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (rng.standard_normal(shape) * 50).astype(dt)
    info = np.iinfo(dt)
    lo, hi = max(info.min, -3000), min(info.max, 3000)
    return rng.integers(lo, hi, size=shape, dtype=dt, endpoint=True)


def numpy_counts(img, edges, mask=None):
    """Counts of a 2-D image (or each channel of (H, W, C)) on `edges`,
    half-open bins (the top edge is above every sample in these tests)."""
    chans = [img] if img.ndim == 2 else [img[..., k] for k in range(img.shape[-1])]
    out = []
    for ch in chans:
        v = ch[mask] if mask is not None else ch.ravel()
        v = v.astype(np.float64)
        v = v[(v >= edges[0]) & (v < edges[-1])]
        out.append(np.histogram(v, bins=edges)[0])
    return out[0] if img.ndim == 2 else np.stack(out)


@pytest.mark.parametrize("dtype", HIST_DTYPES)
@pytest.mark.parametrize("channels", [None, 1, 3])
def test_batch_against_numpy_and_single_calls(rng, dtype, channels):
    for hw in [(1, 1), (1, 9), (8, 1), (5, 7), (16, 13)]:
        n = int(rng.integers(1, 5))
        x = stack(rng, n, *hw, channels, dtype)
        counts, info = pixsum.histogram(x, batch=True, bins=37, info=True)
        assert counts.dtype == np.uint64
        assert counts.shape == (n,) + ((channels,) if channels else ()) + (37,)
        edges = np.asarray(info["edges"])
        for i in range(n):
            np.testing.assert_array_equal(counts[i], numpy_counts(x[i], edges))
            single = pixsum.histogram(x[i], bins=37, range=(info["lo"], info["hi"]))
            np.testing.assert_array_equal(counts[i], single)
        assert info["pixels"] == [hw[0] * hw[1]] * n


def test_shared_range_covers_the_stack(rng):
    x = (rng.standard_normal((3, 6, 5)) * [[[1.0]], [[10.0]], [[100.0]]]).astype(np.float32)
    _, info = pixsum.histogram(x, batch=True, info=True)
    assert info["lo"] == float(x.min())
    assert info["hi"] == np.nextafter(float(x.max()), np.inf)
    counts, pinfo = pixsum.histogram(x, batch=True, info=True, range_per_image=True)
    for i in range(3):
        assert pinfo["lo"][i] == float(x[i].min())
        assert pinfo["hi"][i] == np.nextafter(float(x[i].max()), np.inf)
        np.testing.assert_array_equal(counts[i], pixsum.histogram(x[i]))
    # int32: [min, max + 1) over the stack
    y = np.arange(2 * 4 * 4, dtype=np.int32).reshape(2, 4, 4) - 7
    _, yi = pixsum.histogram(y, batch=True, info=True)
    assert (yi["lo"], yi["hi"]) == (-7.0, 25.0)


def test_masks_shared_and_per_image(rng):
    x = stack(rng, 4, 9, 11, None, np.uint16)
    shared = rng.random((9, 11)) < 0.6
    per = rng.random((4, 9, 11)) < 0.4
    edges = np.linspace(-3000, 3001, 11)
    got = pixsum.histogram(x, batch=True, bins=10, range=(-3000, 3001), mask=shared)
    for i in range(4):
        np.testing.assert_array_equal(got[i], numpy_counts(x[i], edges, shared))
    got, info = pixsum.histogram(x, batch=True, bins=10, range=(-3000, 3001), mask=per,
                                 info=True)
    for i in range(4):
        np.testing.assert_array_equal(got[i], numpy_counts(x[i], edges, per[i]))
        assert info["pixels"][i] == int(per[i].sum())


def test_relative_cumulative_and_views(rng):
    base = stack(rng, 6, 20, 24, None, np.uint8)
    x = base[::2, 1::3, 3:21]  # every other image, every third row, a column window
    plain = pixsum.histogram(x, batch=True, bins=16)
    rel = pixsum.histogram(x, batch=True, bins=16, relative=True)
    cum = pixsum.histogram(x, batch=True, bins=16, cumulative=True)
    for i in range(x.shape[0]):
        want = numpy_counts(np.ascontiguousarray(x[i]), np.linspace(0, 256, 17))
        np.testing.assert_array_equal(plain[i], want)
        np.testing.assert_array_equal(cum[i], np.cumsum(want))
        np.testing.assert_allclose(rel[i], want / want.sum(), rtol=0, atol=1e-15)
    out = np.zeros((3, 16), np.uint64)
    assert pixsum.histogram(x, batch=True, bins=16, out=out) is out


def test_refusals():
    x = np.zeros((2, 3, 4), np.uint8)
    with pytest.raises(pixsum.BadShapeError, match="batch=True reads a stack"):
        pixsum.histogram(x[0], batch=True)
    with pytest.raises(pixsum.InvalidArgumentError, match="range_per_image"):
        pixsum.histogram(x, range_per_image=True)
    with pytest.raises(pixsum.BadShapeError):
        pixsum.histogram(x, batch=True, mask=np.ones((2, 3, 5), bool))
    with pytest.raises(pixsum.BadShapeError):
        pixsum.histogram(x, batch=True, mask=np.ones((3, 3, 4), bool))

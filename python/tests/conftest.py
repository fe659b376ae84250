"""Shared helpers of the pixsum pytest suite: NumPy reference implementations
and random test images."""

import numpy as np
import pytest

#: Input dtypes of integral tables and the (unsigned) wide type of their reference.
INPUT_DTYPES = [np.uint8, np.uint16, np.int16, np.int32, np.uint32, np.float32, np.float64]

#: Image shapes that catch edge cases: 1x1, 1xN, Nx1, odd widths, bigger ones.
SHAPES = [(1, 1), (1, 17), (23, 1), (3, 5), (7, 33), (64, 63), (129, 257)]


def random_image(rng, shape, dtype, extreme=False):
    """Random image of `dtype`; extreme=True fills it with the type's extremes."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        if extreme:
            return rng.choice(np.array([-1e6, 1e6, 0.0], dtype=dtype), size=shape)
        return (rng.standard_normal(shape) * 100).astype(dtype)
    info = np.iinfo(dtype)
    if extreme:
        return rng.choice(np.array([info.min, info.max], dtype=dtype), size=shape)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def ref_integral(img, axes=2, padded=False):
    """Inclusive (or padded) integral table by NumPy cumulative sums, exact:
    integers in Python-int-free int64/uint64 arithmetic, floats in float64."""
    a = np.asarray(img)
    if a.dtype.kind == "f":
        acc = a.astype(np.float64)
    elif a.dtype.kind == "u":
        acc = a.astype(np.uint64)
    else:
        acc = a.astype(np.int64)
    for ax in range(axes):
        acc = np.cumsum(acc, axis=ax, dtype=acc.dtype)
    if padded:
        pad = [(1, 0)] * axes + [(0, 0)] * (a.ndim - axes)
        acc = np.pad(acc, pad)
    return acc


def ref_tilted(img):
    """OpenCV's tilted integral by its definition (small images only):
    T[Y, X] = sum of img[y, x] over y < Y and |x - X + 1| <= Y - y - 1."""
    a = np.asarray(img)
    h, w = a.shape[:2]
    rest = a.shape[2:]
    wide = np.float64 if a.dtype.kind == "f" else np.int64
    t = np.zeros((h + 1, w + 1) + rest, dtype=wide)
    for Y in range(h + 1):
        for X in range(w + 1):
            s = np.zeros(rest, dtype=wide)
            for y in range(Y):
                r = Y - y - 1
                lo, hi = max(0, X - 1 - r), min(w - 1, X - 1 + r)
                if lo <= hi:
                    s = s + a[y, lo:hi + 1].astype(wide).sum(axis=0)
            t[Y, X] = s
    return t


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)

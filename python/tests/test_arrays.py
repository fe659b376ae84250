"""Any array in (issue 41): every entry point reads NumPy arrays of any layout
and the dtypes pixsum has no image type for, through one adaptation in
python/src/common.c (psb_input_array):

- views the library describes (crops, every other row, row flips) are read
  in place, also with copy=False;
- other layouts (transposed, Fortran order, column steps, channel views,
  column flips, broadcast, unaligned) and big-endian arrays are copied once
  into a packed native array; copy=False refuses them (BadStrideError /
  BadTypeError naming copy=False);
- bool is read as uint8 (in place), int8 as int16, float16 as float32,
  int64/uint64 as int32/uint32 when every value fits (checked), else
  OverflowError (or float64 where a float64 table is asked for); Python
  sequences are converted;
- box queries read a table with the layout it was made with, and refuse what
  is inconsistent (the padded-table trap);
- integral(channel_axis=k) reads a 3-D image whose channels are on axis k.

References decide from the definitions (sums of the image's boxes in Python
integers / float64), not from the binding's code path.
"""

import sys

import numpy as np
import pytest

import pixsum
from conftest import SHAPES, random_image, ref_integral

HAVE_HIST = hasattr(pixsum, "histogram")
INT_DTYPES = [np.uint8, np.uint16, np.int16, np.int32, np.uint32]


def box_sum_ref(img, x, y, w, h):
    """Sum of a box by its definition, in Python integers (exact)."""
    block = np.asarray(img)[y:y + h, x:x + w]
    if block.dtype.kind == "f":
        return float(block.astype(np.float64).sum())
    return sum(int(v) for v in block.ravel())


def layouts(a):
    """Views of a 2-D (or 3-D (H, W, C)) array that cannot be read in place,
    each with a name, and the array's values they hold."""
    base = np.empty(a.size * a.itemsize + 1, np.uint8)
    unaligned = np.frombuffer(base.data, dtype=a.dtype, count=a.size,
                              offset=1).reshape(a.shape)
    unaligned[...] = a
    swapped = a.astype(a.dtype.newbyteorder())
    flipped = np.ascontiguousarray(a[:, ::-1])[:, ::-1]  # a's values, columns backwards
    out = [("fortran", np.asfortranarray(a)), ("column flip", flipped),
           ("big-endian" if sys.byteorder == "little" else "little-endian", swapped)]
    if a.itemsize > 1:
        out.append(("unaligned", unaligned))
    wide = np.repeat(a, 2, axis=1)
    out.append(("every other column", wide[:, ::2]))
    tall = np.stack([a.T, a.T + 1], axis=-1) if a.ndim == 2 else None
    if tall is not None:
        out.append(("transposed channel view", tall[..., 0].T))
    return out


# ---- layouts -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", INT_DTYPES + [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (1, 9), (11, 1), (5, 7), (33, 20)])
def test_integral_of_any_layout(dtype, shape):
    rng = np.random.default_rng(hash((np.dtype(dtype).str, shape)) % 2**32)
    a = random_image(rng, shape, dtype, extreme=True)
    want = ref_integral(a)
    for name, view in layouts(a):
        t = pixsum.integral(view, threads=1)
        np.testing.assert_array_equal(t, want, err_msg=name)
        assert t.dtype == pixsum.integral(a).dtype, name
        t, q = pixsum.integral_sq(view, threads=1)
        np.testing.assert_array_equal(t, want, err_msg=name)


def test_in_place_views_need_no_copy():
    a = np.random.default_rng(1).integers(0, 256, (40, 30), dtype=np.uint8)
    for view in (a[3:30, 5:21], a[::2], a[::-3, 2:], a[::-1], a[7:8, :], a[:, 4:5]):
        np.testing.assert_array_equal(pixsum.integral(view, copy=False), ref_integral(view))
    rgb = np.random.default_rng(2).integers(0, 256, (9, 11, 3), dtype=np.uint8)
    for view in (rgb[1:8, 2:9], rgb[::2], rgb[::-1]):
        np.testing.assert_array_equal(pixsum.integral(view, copy=False), ref_integral(view))
    # transposed images and volumes (Fortran order): the transposed table of
    # their C-order memory, no copy either
    for view in (a.T, np.asfortranarray(a), a[2:, 3:].T, a[::-1].T):
        t = pixsum.integral(view, copy=False)
        np.testing.assert_array_equal(t, ref_integral(view))
        np.testing.assert_array_equal(pixsum.integral(view, padded=True, copy=False),
                                      ref_integral(view, padded=True))
        out = np.empty(view.shape, np.uint32, order="F")
        assert pixsum.integral(view, out=out, copy=False) is out
        np.testing.assert_array_equal(out, ref_integral(view))
        out = np.empty(view.shape, np.uint32)  # C order: a copy of the image instead
        assert pixsum.integral(view, out=out) is out
        np.testing.assert_array_equal(out, ref_integral(view))
        x = np.random.default_rng(4).integers(1, 9, view.shape, dtype=np.uint8)
        assert int(pixsum.box_sum(pixsum.integral(x.T, padded=True), (1, 2, 3, 4))) == \
            box_sum_ref(x.T, 1, 2, 3, 4)
    vol = np.arange(5 * 6 * 7, dtype=np.uint16).reshape(5, 6, 7)
    np.testing.assert_array_equal(pixsum.integral3d(vol.T, copy=False),
                                  ref_integral(vol.T, axes=3))
    np.testing.assert_array_equal(pixsum.integral3d(vol.T, padded=True),
                                  ref_integral(vol.T, axes=3, padded=True))
    for view in (vol[::2], vol[1:4, ::-1], vol[:, :, 2:5]):
        np.testing.assert_array_equal(pixsum.integral3d(view, copy=False),
                                      ref_integral(view, axes=3))
    # bool is read as its bytes (0/1): no copy either
    m = np.random.default_rng(3).random((13, 17)) > 0.5
    np.testing.assert_array_equal(pixsum.integral(m[::2], copy=False),
                                  ref_integral(m[::2].astype(np.uint8)))


def test_copy_false_refuses_what_needs_a_copy():
    a = np.arange(30, dtype=np.uint16).reshape(5, 6)
    for name, view in layouts(a):
        exc = pixsum.BadTypeError if "endian" in name else pixsum.BadStrideError
        calls = [lambda v: pixsum.integral_tilted(v, copy=False),
                 lambda v: pixsum.box_filter(v, 3, copy=False)]
        if name == "fortran":  # a transposed table of a.T's C-order memory: no copy
            np.testing.assert_array_equal(pixsum.integral(view, copy=False), ref_integral(a))
            np.testing.assert_array_equal(pixsum.integral_sq(view, copy=False)[0],
                                          ref_integral(a))
        else:
            calls += [lambda v: pixsum.integral(v, copy=False),
                      lambda v: pixsum.integral_sq(v, copy=False)]
        for call in calls:
            with pytest.raises(exc, match="copy=False"):
                call(view)
    for dtype in (np.int8, np.float16, np.int64, np.uint64):
        with pytest.raises(pixsum.BadTypeError, match="copy=False"):
            pixsum.integral(a.astype(dtype), copy=False)
    vol = np.zeros((3, 4, 5), np.uint8)
    with pytest.raises(pixsum.BadStrideError, match="copy=False"):
        pixsum.integral3d(vol.transpose(0, 2, 1), copy=False)
    t = pixsum.integral(a)
    with pytest.raises(pixsum.BadStrideError, match="copy=False"):
        pixsum.box_sum(np.asfortranarray(t), (0, 0, 2, 2), copy=False)


def test_tables_of_any_layout_are_read():
    img = np.random.default_rng(4).integers(0, 1000, (12, 9), dtype=np.uint16)
    t = pixsum.integral(img)
    boxes = [(0, 0, 9, 12), (2, 3, 4, 5), (8, 11, 1, 1)]
    want = [box_sum_ref(img, *b) for b in boxes]
    for view in (np.asfortranarray(t), t.astype(t.dtype.newbyteorder()), t.T.copy().T):
        np.testing.assert_array_equal(pixsum.box_sum(view, boxes, padded=False), want)
    t64 = t.astype(np.int64)  # 64-bit tables are kept, not narrowed
    assert pixsum.box_sum(t64, boxes, padded=False).dtype == np.int64


def test_channel_views_and_box_filter():
    rgb = np.random.default_rng(5).integers(0, 256, (21, 18, 3), dtype=np.uint8)
    for c in range(3):
        ch = rgb[..., c]
        np.testing.assert_array_equal(pixsum.integral(ch), ref_integral(ch))
        got = pixsum.box_filter(ch, (3, 5), normalize=False)
        np.testing.assert_array_equal(got, pixsum.box_filter(ch.copy(), (3, 5),
                                                             normalize=False))
        assert int(got[10, 9]) == box_sum_ref(ch, 7, 9, 5, 3)
    bgr = rgb[..., ::-1]  # a channel flip: pixels not packed in order
    np.testing.assert_array_equal(pixsum.integral(bgr), ref_integral(bgr))


@pytest.mark.skipif(not HAVE_HIST, reason="histograms not built")
def test_histograms_of_any_layout():
    rgb = np.random.default_rng(6).integers(0, 256, (31, 17, 3), dtype=np.uint8)
    r, g = rgb[..., 0], rgb[..., 1]
    np.testing.assert_array_equal(pixsum.histogram(r), np.bincount(r.ravel(), minlength=256))
    np.testing.assert_array_equal(pixsum.histogram(r.T), np.bincount(r.ravel(), minlength=256))
    joint = pixsum.histogram2d(r, g)
    want = np.zeros((256, 256), np.uint64)
    np.add.at(want, (r.ravel(), g.ravel()), 1)
    np.testing.assert_array_equal(joint, want)
    mask = (rgb[..., 2] > 100).T.copy().T  # a Fortran-order bool mask
    np.testing.assert_array_equal(pixsum.histogram(r, mask=mask),
                                  np.bincount(r[mask], minlength=256))
    assert pixsum.threshold_otsu(r[:, ::-1]) == pixsum.threshold_otsu(r.copy())
    np.testing.assert_array_equal(pixsum.equalize(r.T), pixsum.equalize(r.T.copy()))


# ---- dtypes ------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES[:6])
def test_bool_int8_float16(shape):
    rng = np.random.default_rng(7)
    m = rng.random(shape) > 0.3
    np.testing.assert_array_equal(pixsum.integral(m), ref_integral(m.astype(np.uint8)))
    i8 = random_image(rng, shape, np.int8, extreme=True)
    t = pixsum.integral(i8)
    np.testing.assert_array_equal(t, ref_integral(i8))
    assert t.dtype == pixsum.integral(i8.astype(np.int16)).dtype
    f16 = (rng.standard_normal(shape) * 1000).astype(np.float16)
    f16.flat[0] = np.float16(65504)
    t = pixsum.integral(f16, threads=1)
    assert t.dtype == pixsum.integral(f16.astype(np.float32)).dtype
    # float16 values span 2^-24..2^16: their float64 sums are exact
    if t.dtype == np.float64:
        np.testing.assert_array_equal(t, ref_integral(f16.astype(np.float64)))
    else:
        np.testing.assert_allclose(t, ref_integral(f16.astype(np.float64)), rtol=1e-5,
                                   atol=1e-2 * np.abs(f16.astype(np.float64)).sum())
    if HAVE_HIST:
        np.testing.assert_array_equal(pixsum.histogram(m), pixsum.histogram(m.astype(np.uint8)))
        np.testing.assert_array_equal(pixsum.histogram(i8),
                                      pixsum.histogram(i8.astype(np.int16)))


def test_int64_and_uint64_are_narrowed_when_every_value_fits():
    rng = np.random.default_rng(8)
    lo32, hi32 = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    for dtype in (np.int64, np.uint64):
        for shape in [(1, 1), (1, 7), (9, 1), (13, 6)]:
            a = rng.integers(0, 1000, shape).astype(dtype)
            np.testing.assert_array_equal(pixsum.integral(a), ref_integral(a))
            np.testing.assert_array_equal(pixsum.integral(a.T), ref_integral(a.T))
    ext = np.array([[lo32, hi32, 0], [hi32, lo32, -1]], np.int64)
    np.testing.assert_array_equal(pixsum.integral(ext), ref_integral(ext))
    big = np.array([[0, 2**32 - 1], [2**31, 5]], np.int64)  # fits uint32
    np.testing.assert_array_equal(pixsum.integral(big), ref_integral(big.astype(np.uint64)))
    np.testing.assert_array_equal(pixsum.integral(big.astype(np.uint64)),
                                  ref_integral(big.astype(np.uint64)))
    for bad in (np.array([[2**32, 0]], np.int64), np.array([[lo32 - 1, 1]], np.int64),
                np.array([[-1, 2**32]], np.int64), np.array([[2**64 - 1]], np.uint64)):
        with pytest.raises(pixsum.OverflowError, match="int32 and uint32") as e:
            pixsum.integral(bad)
        assert isinstance(e.value, OverflowError)
        with pytest.raises(pixsum.OverflowError):
            pixsum.box_filter(bad, 1)
        t = pixsum.integral(bad, dtype=np.float64)  # a float64 table takes them
        np.testing.assert_array_equal(t, ref_integral(bad.astype(np.float64)))
    if HAVE_HIST:
        a = rng.integers(-5, 5, (6, 7))
        np.testing.assert_array_equal(pixsum.histogram(a, bins=10, range=(-5, 5)),
                                      np.histogram(a, bins=10, range=(-5, 5))[0])


def test_python_sequences():
    rows = [[1, 2, 3], [4, 5, 6]]
    np.testing.assert_array_equal(pixsum.integral(rows), [[1, 3, 6], [5, 12, 21]])
    np.testing.assert_array_equal(pixsum.integral(((1.5, 2.0), (0.5, 1.0))),
                                  [[1.5, 3.5], [2.0, 5.0]])
    np.testing.assert_array_equal(pixsum.integral([[True, False], [True, True]]),
                                  [[1, 1], [2, 3]])
    assert int(pixsum.box_sum(pixsum.integral(rows), (1, 0, 2, 2))) == 2 + 3 + 5 + 6
    if HAVE_HIST:
        assert pixsum.histogram([1, 2, 2, 3], bins=3, range=(1, 4)).tolist() == [1, 2, 1]
    with pytest.raises(pixsum.BadTypeError):
        pixsum.integral([["a", "b"]])


def test_unreadable_dtypes_are_refused():
    for dtype in (np.complex64, object, "S3", "M8[s]"):
        with pytest.raises(pixsum.BadTypeError, match="pixsum reads bool, int8"):
            pixsum.integral(np.zeros((3, 3), dtype))
    with pytest.raises(pixsum.BadTypeError, match="tables are"):
        pixsum.box_sum(np.zeros((3, 3), np.complex64), (0, 0, 1, 1), padded=False)


# ---- the padded-table trap ----------------------------------------------------------------

def test_tables_remember_their_layout():
    img = np.random.default_rng(9).integers(1, 256, (10, 12), dtype=np.uint8)
    boxes = np.array([(0, 0, 12, 10), (3, 2, 5, 4), (11, 9, 1, 1)])
    want = [box_sum_ref(img, *b) for b in boxes]
    padded = pixsum.integral(img, padded=True)
    inclusive = pixsum.integral(img)
    for t in (padded, inclusive):
        np.testing.assert_array_equal(pixsum.box_sum(t, boxes), want)
        np.testing.assert_allclose(pixsum.box_mean(t, boxes),
                                   [w / (b[2] * b[3]) for w, b in zip(want, boxes)])
    np.testing.assert_array_equal(pixsum.box_sum(padded, boxes, padded=True), want)
    with pytest.raises(pixsum.InvalidArgumentError, match="made with padded=True"):
        pixsum.box_sum(padded, boxes, padded=False)
    with pytest.raises(pixsum.InvalidArgumentError, match="made with padded=False"):
        pixsum.box_mean(inclusive, boxes, padded=True)
    t, q = pixsum.integral_sq(img, padded=True)
    var = pixsum.box_var(t, q, boxes)
    ref = [img[y:y + h, x:x + w].astype(np.float64).var() for x, y, w, h in boxes]
    np.testing.assert_allclose(var, ref, rtol=1e-12, atol=1e-9)
    out = np.empty((11, 13), np.uint32)
    pixsum.integral(img, padded=True, out=out)
    np.testing.assert_array_equal(pixsum.box_sum(out, boxes), want)
    vol = np.random.default_rng(10).integers(1, 9, (4, 5, 6), dtype=np.uint8)
    tv = pixsum.integral3d(vol, padded=True)
    assert int(pixsum.box_sum(tv, (1, 2, 1, 3, 2, 2))) == int(vol[1:3, 2:4, 1:4].sum())


def test_tables_of_unknown_origin_are_checked():
    img = np.random.default_rng(11).integers(1, 256, (10, 12), dtype=np.uint8)
    boxes = [(0, 0, 12, 10), (3, 2, 5, 4)]
    want = [box_sum_ref(img, *b) for b in boxes]
    padded = pixsum.integral(img, padded=True).copy()   # a copy: not remembered
    inclusive = pixsum.integral(img).copy()
    # a padded table read as inclusive was the silent trap: now refused
    with pytest.raises(pixsum.InvalidArgumentError, match="ambiguous"):
        pixsum.box_sum(padded, boxes)
    np.testing.assert_array_equal(pixsum.box_sum(padded, boxes, padded=True), want)
    np.testing.assert_array_equal(pixsum.box_sum(inclusive, boxes), want)
    with pytest.raises(pixsum.InvalidArgumentError, match="not a padded table"):
        pixsum.box_sum(inclusive, boxes, padded=True)
    # an image with a zero first row and column: its inclusive table looks
    # padded, so the caller says which it is
    img[0, :] = 0
    img[:, 0] = 0
    t = pixsum.integral(img).copy()
    with pytest.raises(pixsum.InvalidArgumentError, match="ambiguous"):
        pixsum.box_sum(t, boxes)
    np.testing.assert_array_equal(pixsum.box_sum(t, boxes, padded=False),
                                  [box_sum_ref(img, *b) for b in boxes])


def test_cv2_padded_tables():
    cv2 = pytest.importorskip("cv2")
    img = np.random.default_rng(12).integers(0, 256, (15, 16), dtype=np.uint8)
    t = cv2.integral(img, sdepth=cv2.CV_64F)  # its default int32 is no pixsum table type
    boxes = [(1, 2, 3, 4), (0, 0, 16, 15)]
    with pytest.raises(pixsum.InvalidArgumentError, match="padded=True"):
        pixsum.box_sum(t, boxes)
    np.testing.assert_array_equal(pixsum.box_sum(t, boxes, padded=True),
                                  [box_sum_ref(img, *b) for b in boxes])


# ---- channel_axis ----------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, 2, -3, -2, -1])
@pytest.mark.parametrize("padded", [False, True])
def test_channel_axis_of_one_image(axis, padded):
    rng = np.random.default_rng(13)
    hwc = rng.integers(0, 65536, (7, 9, 3), dtype=np.uint16)
    moved = np.moveaxis(hwc, 2, axis)
    want = ref_integral(hwc, padded=padded)
    t = pixsum.integral(moved, channel_axis=axis, padded=padded)
    assert t.shape == np.moveaxis(want, 2, axis).shape
    np.testing.assert_array_equal(np.moveaxis(t, axis, 2), want)
    t, q = pixsum.integral_sq(moved, channel_axis=axis, padded=padded)
    np.testing.assert_array_equal(np.moveaxis(t, axis, 2), want)
    sq = ref_integral(hwc.astype(np.uint64) ** 2, padded=padded)
    np.testing.assert_array_equal(np.moveaxis(q, axis, 2), sq)
    out = np.empty(t.shape, t.dtype)
    assert pixsum.integral(moved, channel_axis=axis, padded=padded, out=out) is out
    np.testing.assert_array_equal(np.moveaxis(out, axis, 2), want)


def test_channel_axis_errors():
    with pytest.raises(pixsum.BadShapeError, match="3-D"):
        pixsum.integral(np.zeros((4, 5), np.uint8), channel_axis=0)
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.integral(np.zeros((3, 4, 5), np.uint8), channel_axis=3)
    with pytest.raises(pixsum.UnsupportedError):
        pixsum.integral(np.zeros((3, 4, 5), np.uint8), channel_axis=0,
                        carry=np.zeros((5, 3), np.uint32))


# ---- n-dimensional integrals ------------------------------------------------------------------

def nd_ref(a, channel_axis=None):
    """Each entry as the sum of the block its definition names, in Python
    integers (or float64): small arrays only."""
    a = np.asarray(a)
    exact = a.dtype.kind in "biu"
    out = np.empty(a.shape, dtype=object if exact else np.float64)
    for idx in np.ndindex(*a.shape):
        block = tuple(slice(i, i + 1) if k == channel_axis else slice(0, i + 1)
                      for k, i in enumerate(idx))
        vals = a[block].ravel()
        out[idx] = sum(int(v) for v in vals) if exact else float(vals.astype(np.float64).sum())
    return out


@pytest.mark.parametrize("shape", [(7,), (1, 1), (3, 5), (2, 3, 4), (1, 2, 1, 3),
                                   (2, 3, 2, 3), (2, 1, 3, 2, 2)])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint32, np.float64, np.int8, bool])
def test_integral_nd_matches_definition(shape, dtype):
    rng = np.random.default_rng(len(shape) * 31 + np.dtype(dtype).num)
    a = random_image(rng, shape, dtype, extreme=True) if dtype is not bool else \
        rng.random(shape) > 0.5
    t = pixsum.integral_nd(a)
    want = nd_ref(a)
    if t.dtype.kind == "f":
        np.testing.assert_array_equal(t, want.astype(np.float64))
    else:
        assert [int(v) for v in t.ravel()] == list(want.ravel())
    for axis in range(len(shape)):
        t = pixsum.integral_nd(a, channel_axis=axis)
        want = nd_ref(a, channel_axis=axis)
        if t.dtype.kind == "f":
            np.testing.assert_array_equal(t, want.astype(np.float64))
        else:
            assert [int(v) for v in t.ravel()] == list(want.ravel()), axis
    # any layout: a transposed or reversed view gives the table of its values
    view = a.T[::-1]
    want = nd_ref(view)
    got = pixsum.integral_nd(view)
    if got.dtype.kind == "f":
        np.testing.assert_array_equal(got, want.astype(np.float64))
    else:
        assert [int(v) for v in got.ravel()] == list(want.ravel())


def test_integral_nd_agrees_with_integral_and_skimage():
    rng = np.random.default_rng(14)
    img = rng.integers(0, 65536, (37, 29), dtype=np.uint16)
    np.testing.assert_array_equal(pixsum.integral_nd(img), pixsum.integral(img))
    vol = rng.integers(0, 256, (4, 9, 11), dtype=np.uint8)
    np.testing.assert_array_equal(pixsum.integral_nd(vol), pixsum.integral3d(vol))
    rgb = rng.integers(0, 256, (9, 11, 3), dtype=np.uint8)
    np.testing.assert_array_equal(pixsum.integral_nd(rgb, channel_axis=-1),
                                  pixsum.integral(rgb))
    x = rng.integers(0, 256, (3, 4, 5, 6), dtype=np.uint8)
    out = np.empty(x.shape, np.uint64)
    assert pixsum.integral_nd(x, out=out) is out
    np.testing.assert_array_equal(out, ref_integral(x, axes=4))
    with pytest.raises(pixsum.OverflowError):
        pixsum.integral_nd(np.full((300, 300, 2), 65535, np.uint16), dtype=np.uint32)
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.integral_nd(x, channel_axis=4)
    transform = pytest.importorskip("skimage.transform")
    np.testing.assert_array_equal(pixsum.integral_nd(x), transform.integral_image(x))
    per_channel = np.stack([transform.integral_image(x[:, c]) for c in range(x.shape[1])],
                           axis=1)
    np.testing.assert_array_equal(pixsum.integral_nd(x, channel_axis=1), per_channel)

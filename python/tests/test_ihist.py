"""pixsum.IntegralHistogram against pixsum.histogram() of the same crop (itself
tested against NumPy in test_hist.py) and against np.bincount: every dtype,
1-4 channels, shapes 1x1 / 1xN / Nx1 / odd, strided views, masks, NaN and
out-of-range samples; one box and N boxes; the refusals (boxes outside the
image or empty, 3-D boxes, volumes, tables over max_bytes, GPU arrays)."""

import numpy as np
import pytest

import pixsum
from conftest import SHAPES, random_image

if not hasattr(pixsum, "IntegralHistogram"):
    pytest.skip("the C library has no histograms yet", allow_module_level=True)

DTYPES = [np.uint8, np.uint16, np.int16, np.int32, np.float32, np.float64]


def random_boxes(rng, h, w, n):
    """n boxes (x, y, w, h) inside an h x w image, with the whole image and
    the last pixel among them."""
    x = rng.integers(0, w, n)
    y = rng.integers(0, h, n)
    bw = rng.integers(1, w - x + 1)
    bh = rng.integers(1, h - y + 1)
    boxes = np.stack([x, y, bw, bh], axis=1)
    return np.concatenate([boxes, [[0, 0, w, h], [w - 1, h - 1, 1, 1]]])


def check_boxes(ih, img, boxes, mask=None, channels=False):
    got = ih.query(boxes)
    assert got.dtype == np.uint64
    per_box = (ih.channels, ih.bins) if channels else (ih.bins,)
    assert got.shape == (len(boxes),) + per_box
    for k, (x, y, bw, bh) in enumerate(boxes):
        crop = img[y:y + bh, x:x + bw]
        m = None if mask is None else np.ascontiguousarray(mask[y:y + bh, x:x + bw])
        want = pixsum.histogram(crop, bins=ih.bins, range=(ih.lo, ih.hi), mask=m)
        np.testing.assert_array_equal(got[k], want, err_msg=f"box {k} {(x, y, bw, bh)}")
        np.testing.assert_array_equal(ih.query((x, y, bw, bh)), want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_boxes_equal_crop_histograms(rng, dtype, shape):
    img = random_image(rng, shape, dtype)
    bins = int(rng.integers(1, 40))
    kw = {} if np.dtype(dtype).itemsize == 1 else {"range": (-150.0, 170.0)}
    ih = pixsum.IntegralHistogram(img, bins=bins, **kw)
    assert (ih.height, ih.width, ih.channels, ih.bins) == shape + (1, bins)
    check_boxes(ih, img, random_boxes(rng, *shape, 12))


@pytest.mark.parametrize("channels", [2, 3, 4])
def test_channels_and_masks(rng, channels):
    img = random_image(rng, (37, 29, channels), np.uint8)
    mask = rng.random((37, 29)) < 0.6
    ih = pixsum.IntegralHistogram(img, bins=32, mask=mask)
    assert ih.channels == channels
    check_boxes(ih, img, random_boxes(rng, 37, 29, 10), mask=mask, channels=True)


def test_strided_views(rng):
    base = random_image(rng, (90, 70, 3), np.uint16)
    for view in (base[::2, 3:60], base[::-1], base[5:40, 7:50]):
        ih = pixsum.IntegralHistogram(view, bins=50, range=(0, 65536))
        check_boxes(ih, view, random_boxes(rng, view.shape[0], view.shape[1], 6),
                    channels=True)


def test_default_range_nan_and_outside(rng):
    img = (rng.standard_normal((40, 50)) * 10).astype(np.float32)
    img[3, 4] = np.nan
    img[5, 6] = np.inf
    ih = pixsum.IntegralHistogram(img, bins=20)
    h, info = pixsum.histogram(img, bins=20, info=True)
    assert (ih.lo, ih.hi) == (info["lo"], info["hi"])
    np.testing.assert_array_equal(ih.edges, info["edges"])
    np.testing.assert_array_equal(ih.query((0, 0, 50, 40)), h)
    # a narrower range leaves the outside samples in no bin
    ih = pixsum.IntegralHistogram(img, bins=7, range=(-5, 5))
    check_boxes(ih, img, random_boxes(rng, 40, 50, 8))


def test_u8_whole_image_equals_bincount(rng):
    img = random_image(rng, (64, 81), np.uint8)
    ih = pixsum.IntegralHistogram(img)
    assert ih.bins == 256 and ih.nbytes == 65 * 82 * 256 * 4
    np.testing.assert_array_equal(ih.query([0, 0, 81, 64]),
                                  np.bincount(img.ravel(), minlength=256))


def test_table_outlives_image(rng):
    img = random_image(rng, (20, 30), np.uint8)
    want = pixsum.histogram(img[2:9, 3:17], bins=8)
    ih = pixsum.IntegralHistogram(img, bins=8)
    del img
    np.testing.assert_array_equal(ih.query((3, 2, 14, 7)), want)
    assert "20x30" in repr(ih)


def test_refusals(rng):
    img = random_image(rng, (10, 12), np.uint8)
    ih = pixsum.IntegralHistogram(img, bins=4)
    with pytest.raises(pixsum.OutOfRangeError, match="box 1"):
        ih.query([[0, 0, 12, 10], [5, 0, 8, 1]])
    with pytest.raises(pixsum.BadShapeError):
        ih.query((0, 0, 0, 3))
    with pytest.raises(pixsum.BadShapeError, match=r"\(x, y, w, h\)"):
        ih.query((0, 0, 0, 1, 1, 1))
    with pytest.raises(pixsum.OutOfRangeError, match="negative"):
        ih.query((-1, 0, 1, 1))
    with pytest.raises(pixsum.BadShapeError):
        pixsum.IntegralHistogram(np.zeros((2, 3, 4, 1), np.uint8))
    with pytest.raises(pixsum.TooLargeError, match="max_bytes"):
        pixsum.IntegralHistogram(img, bins=256, max_bytes=1000)
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.IntegralHistogram(img, max_bytes=-1)
    with pytest.raises(pixsum.BadShapeError):
        pixsum.IntegralHistogram(img, mask=np.ones((10, 11), bool))

    class FakeGpuArray:
        __cuda_array_interface__ = {"shape": (2, 2), "typestr": "|u1", "data": (0, False),
                                    "version": 3}

    with pytest.raises(pixsum.UnsupportedError, match="host memory"):
        pixsum.IntegralHistogram(FakeGpuArray())


def test_batch_threads(rng):
    """A batch large enough to split between threads gives the counts of one
    thread and of np.bincount per crop; bad thread counts are refused."""
    img = random_image(rng, (97, 131), np.uint8)
    ih = pixsum.IntegralHistogram(img, bins=32, range=(0, 256))
    boxes = random_boxes(rng, 97, 131, 12000)  # 12002 x 32 counters: over one split
    one = ih.query(boxes, threads=1)
    for threads in (0, 2, 3):
        np.testing.assert_array_equal(ih.query(boxes, threads=threads), one)
    for k in range(0, len(boxes), 997):
        x, y, bw, bh = boxes[k]
        want = np.bincount((img[y:y + bh, x:x + bw] >> 3).ravel(), minlength=32)
        np.testing.assert_array_equal(one[k], want)
    with pytest.raises(pixsum.InvalidArgumentError):
        ih.query(boxes, threads=-1)
    bad = boxes.copy()
    bad[7000] = (130, 0, 2, 1)
    with pytest.raises(pixsum.OutOfRangeError, match="box 7000"):
        ih.query(bad, threads=2)


def test_rebuild_frames(rng):
    """rebuild() of a sequence of frames (same shape, smaller, larger with
    channels, masked) answers as a new IntegralHistogram with the first
    build's bins and range; a refused rebuild keeps the table."""
    first = random_image(rng, (40, 60), np.uint8)
    ih = pixsum.IntegralHistogram(first, bins=16, max_bytes=4 << 20)
    frames = [random_image(rng, (40, 60), np.uint8), random_image(rng, (7, 9), np.uint8),
              random_image(rng, (90, 70, 3), np.uint8), random_image(rng, (1, 1), np.uint8)]
    masks = [None, None, None, np.ones((1, 1), np.uint8)]
    for frame, mask in zip(frames, masks):
        assert ih.rebuild(frame, mask=mask) is ih
        fresh = pixsum.IntegralHistogram(frame, bins=16, range=(0, 256), mask=mask)
        assert (ih.width, ih.height, ih.channels, ih.nbytes) == \
            (fresh.width, fresh.height, fresh.channels, fresh.nbytes)
        h, w = frame.shape[:2]
        boxes = random_boxes(rng, h, w, 30)
        np.testing.assert_array_equal(ih.query(boxes), fresh.query(boxes))
    before = ih.query((0, 0, 1, 1))
    with pytest.raises(pixsum.TooLargeError):
        ih.rebuild(np.zeros((2000, 2000), np.uint8))  # over the first build's max_bytes
    with pytest.raises(pixsum.BadShapeError):
        ih.rebuild(np.zeros((2, 3, 4, 1), np.uint8))
    with pytest.raises(pixsum.BadShapeError):
        ih.rebuild(first, mask=np.ones((3, 3), np.uint8))
    np.testing.assert_array_equal(ih.query((0, 0, 1, 1)), before)
    assert (ih.width, ih.height) == (1, 1)


def test_rebuild_while_querying(rng):
    """Queries from other threads during rebuilds that grow the table: every
    answer is one frame's, never a crash or a mix."""
    import threading
    small = np.full((30, 40), 7, np.uint8)
    large = np.full((300, 400), 200, np.uint8)
    ih = pixsum.IntegralHistogram(small, bins=8, range=(0, 256))
    want = {1: 7 // 32, 0: 200 // 32}
    errors = []

    def reader():
        for _ in range(200):
            c = ih.query((0, 0, 1, 1))
            if c.sum() != 1 or int(np.argmax(c)) not in want.values():
                errors.append(c)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for k in range(20):
        ih.rebuild(large if k % 2 == 0 else small)
    for t in threads:
        t.join()
    assert not errors

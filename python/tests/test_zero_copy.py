"""Proofs that the binding copies nothing and releases the GIL:
strided inputs are read in place, out= arrays are written in place, the only
NumPy allocation of a call with out= is nothing at all (tracemalloc sees
NumPy's data allocations), layouts that cannot be read in place are refused
rather than copied, and another Python thread runs while the library computes."""

import sys
import threading
import tracemalloc

import numpy as np
import pytest

import pixsum
from conftest import ref_integral


def numpy_bytes_allocated_during(fn):
    """Peak bytes NumPy (and Python) allocated while fn() ran."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_strided_input_and_out_are_not_copied():
    base = np.random.default_rng(1).integers(0, 256, (2000, 1500), dtype=np.uint8)
    view = base[::-2, 100:1400]         # flipped, every other row, cropped columns
    assert not view.flags.c_contiguous
    out = np.empty(view.shape, np.uint32)
    peak = numpy_bytes_allocated_during(lambda: pixsum.integral(view, out=out))
    # a copy of the input alone would be view.nbytes = 1.3 MB
    assert peak < view.nbytes // 20, peak
    np.testing.assert_array_equal(out, ref_integral(view).astype(np.uint32))


def test_out_is_written_in_place_and_returned():
    img = np.arange(20, dtype=np.uint16).reshape(4, 5)
    out = np.full((4, 5), 7, np.uint64)
    addr = out.__array_interface__["data"][0]
    res = pixsum.integral(img, out=out)
    assert res is out and res.__array_interface__["data"][0] == addr
    assert int(out[-1, -1]) == int(img.sum())
    # a strided window of a bigger buffer: written through, neighbours untouched
    big = np.full((8, 12), 99, np.uint64)
    res = pixsum.integral(img, out=big[::2, 3:8])
    assert np.shares_memory(res, big)
    np.testing.assert_array_equal(big[::2, 3:8], ref_integral(img))
    assert (big[1::2] == 99).all() and (big[:, :3] == 99).all() and (big[:, 8:] == 99).all()


def test_input_is_read_from_its_own_memory():
    base = np.zeros((6, 8), np.uint8)
    view = base[1:5, 2:6]
    base[2, 3] = 5          # written through the base after the view was made
    assert int(pixsum.integral(view)[-1, -1]) == 5


def test_unreadable_layouts_are_copied_or_refused_with_copy_false():
    a = np.arange(30, dtype=np.float32).reshape(5, 6)
    # a.T alone is read in place (the transposed table of its memory)
    np.testing.assert_array_equal(pixsum.integral(a.T, copy=False), ref_integral(a.T))
    for bad in (a[:, ::-1].T, a[:, ::2], np.asfortranarray(np.ones((3, 4, 2), np.uint8))):
        np.testing.assert_array_equal(pixsum.integral(bad), ref_integral(bad))
        with pytest.raises(pixsum.BadStrideError) as e:
            pixsum.integral(bad, copy=False)
        assert "ascontiguousarray" in str(e.value) and "copy=False" in str(e.value)
    swapped = a.astype(">f4")  # non-native byte order: swapped in the copy
    np.testing.assert_array_equal(pixsum.integral(swapped), ref_integral(a))
    with pytest.raises(pixsum.BadTypeError, match="copy=False"):
        pixsum.integral(swapped, copy=False)
    ro = np.ones((3, 3), np.uint32)
    ro.flags.writeable = False
    with pytest.raises(pixsum.InvalidArgumentError, match="read-only"):
        pixsum.integral(np.ones((3, 3), np.uint8), out=ro)


def test_aliasing_is_refused():
    buf = np.zeros(64, np.float64)
    img = buf[:16].reshape(4, 4)
    with pytest.raises(pixsum.AliasingError):
        pixsum.integral(img, out=buf[8:24].reshape(4, 4))


def test_gil_is_released_during_compute():
    """With a huge switch interval, a waiting thread only runs when the running
    one releases the GIL itself. The main thread resumes while the worker is
    still inside pixsum.integral only if the binding released the GIL there."""
    img = np.random.default_rng(2).random((2500, 2500))
    state = {"done": False}
    started = threading.Event()

    def worker():
        started.set()
        for _ in range(4):
            pixsum.integral(img, threads=1)
        state["done"] = True

    old = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        t = threading.Thread(target=worker)
        t.start()
        started.wait()
        done_when_main_resumed = state["done"]
    finally:
        sys.setswitchinterval(old)
    t.join()
    assert state["done"]
    assert not done_when_main_resumed


def test_threads_compute_concurrently_and_correctly():
    rng = np.random.default_rng(3)
    imgs = [rng.integers(0, 65536, (300 + i, 200 + 3 * i), dtype=np.uint16) for i in range(8)]
    results = [None] * len(imgs)

    def run(i):
        for _ in range(5):
            results[i] = pixsum.integral(imgs[i], method="auto", threads=1)

    ts = [threading.Thread(target=run, args=(i,)) for i in range(len(imgs))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for img, r in zip(imgs, results):
        np.testing.assert_array_equal(r, ref_integral(img))


def test_broadcast_views_are_copied_never_read_out_of_bounds():
    """A NumPy stride of 0 (np.broadcast_to) is copied into a packed array
    (read as "packed" it would walk past the end of the buffer); with
    copy=False it reaches the library as 0 and is refused."""
    row = np.arange(1000, dtype=np.uint16).reshape(1, 1000) % 256
    rows = np.broadcast_to(row.astype(np.uint8), (50, 1000))
    np.testing.assert_array_equal(pixsum.integral(rows), ref_integral(rows))
    with pytest.raises(pixsum.BadStrideError):
        pixsum.integral(rows, copy=False)
    vol = np.broadcast_to(np.ones((1, 4, 5), np.uint8), (3, 4, 5))
    assert int(pixsum.integral3d(vol)[-1, -1, -1]) == 60
    with pytest.raises(pixsum.BadStrideError):
        pixsum.integral3d(vol, copy=False)
    np.testing.assert_array_equal(pixsum.box_filter(rows, 3, normalize=False),
                                  pixsum.box_filter(np.ascontiguousarray(rows), 3,
                                                    normalize=False))
    with pytest.raises(pixsum.BadStrideError):
        pixsum.box_filter(rows, 3, copy=False)
    if hasattr(pixsum, "histogram"):
        want = np.bincount(rows.ravel(), minlength=256)
        np.testing.assert_array_equal(pixsum.histogram(rows), want)
        mask = np.broadcast_to(np.ones((1, 1000), bool), (50, 1000))
        np.testing.assert_array_equal(
            pixsum.histogram(np.ascontiguousarray(rows), mask=mask), want)

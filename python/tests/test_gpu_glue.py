"""The Python side of GPU arrays (pixsum/_gpu.py and _gpu_base.py: the paths of
producers other than CuPy and PyTorch, box queries and histograms) without a
GPU: host memory dressed up as CUDA memory (__cuda_array_interface__ v3 over
NumPy buffers), the device entry point replaced by one that reads the same
descriptors and runs the CPU library. Checks what the glue decides: result kind, shape and dtype,
descriptors (pointers, byte strides of strided views), the stream taken from
the interface, out=, padded volumes of one slice, and the errors."""

import numpy as np
import pytest

import pixsum
from pixsum import _core, _gpu, _gpu_base
from conftest import random_image, ref_integral


class HostAsGpu:
    """A NumPy array exposed only through __cuda_array_interface__ v3."""

    def __init__(self, arr, stream=None):
        self.arr = arr
        self.__cuda_array_interface__ = {
            "shape": arr.shape, "typestr": arr.dtype.str,
            "data": (arr.__array_interface__["data"][0], not arr.flags.writeable),
            "strides": None if arr.flags.c_contiguous else arr.strides,
            "version": 3, "stream": stream}


class FakeDevice:
    """Stands in for _core._cuda_integral: resolves descriptors to NumPy views
    of the registered buffers and runs the CPU library on them."""

    def __init__(self):
        self.buffers, self.calls = [], []

    def register(self, arr):
        self.buffers.append(arr)
        return arr

    def view(self, desc):
        ptr, tname, shape, strides = desc
        for base in self.buffers:
            lo = base.__array_interface__["data"][0]
            if lo <= ptr < lo + base.nbytes:
                dt = {"u8": np.uint8, "u16": np.uint16, "i16": np.int16, "i32": np.int32,
                      "u32": np.uint32, "f32": np.float32, "f64": np.float64,
                      "u64": np.uint64, "i64": np.int64}[tname]
                return np.ndarray(shape, dt, buffer=base, offset=ptr - lo, strides=strides)
        raise AssertionError(f"descriptor {desc} points at no registered buffer")

    def __call__(self, spatial, image, out, out_sq=None, *, stream=0, device=0,
                 method="auto", wrap=False, padded=False, tilted=False):
        self.calls.append({"spatial": spatial, "stream": stream, "device": device,
                           "image": image, "out": out, "tilted": tilted})
        src = self.view(image)
        kw = dict(method=method, wrap=wrap, padded=padded)
        if tilted:
            assert spatial == 2 and out_sq is None and padded
            pixsum.integral_tilted(src, out=self.view(out), method=method, wrap=wrap)
        elif out_sq is not None:
            pixsum.integral_sq(src, out=self.view(out) if out else None,
                               out_sq=self.view(out_sq), **kw)
        elif spatial == 3 and src.shape[0] == 1:  # the library treats depth 1 as 2-D
            pixsum.integral(src[0], out=self.view(out)[0], **kw)
        elif spatial == 3:
            pixsum.integral3d(src, out=self.view(out), **kw)
        else:
            pixsum.integral(src, out=self.view(out), **kw)


@pytest.fixture
def device(monkeypatch):
    dev = FakeDevice()
    monkeypatch.setattr(_core, "HAVE_CUDA", 1)
    monkeypatch.setattr(_core, "_cuda_integral", dev)

    def alloc(src):
        def empty(shape, dtype):
            return HostAsGpu(dev.register(np.full(shape, 0xAB, dtype=dtype)))

        def zeros(shape, dtype):
            return HostAsGpu(dev.register(np.zeros(shape, dtype=dtype)))
        return None, empty, zeros

    monkeypatch.setattr(_gpu_base, "_allocator", alloc)
    return dev


def gpu(dev, arr, stream=None):
    dev.register(arr.base if arr.base is not None else arr)
    return HostAsGpu(arr, stream)


def test_strided_view_and_stream(device, rng):
    base = random_image(rng, (40, 30, 3), np.uint8)
    view = base[::-2, 4:25]
    res = pixsum.integral(gpu(device, view, stream=0x1234))
    assert isinstance(res, HostAsGpu) and res.arr.dtype == np.uint32
    np.testing.assert_array_equal(res.arr, ref_integral(view))
    call = device.calls[-1]
    assert call["stream"] == 0x1234 and call["spatial"] == 2
    # the image descriptor is the view itself: its pointer and byte strides
    assert call["image"][0] == view.__array_interface__["data"][0]
    assert call["image"][3] == view.strides


def test_dtype_out_padded_sq(device, rng):
    img = random_image(rng, (9, 11), np.int16)
    r = pixsum.integral(gpu(device, img), dtype=np.float64, padded=True)
    assert r.arr.shape == (10, 12) and r.arr.dtype == np.float64
    np.testing.assert_array_equal(r.arr, ref_integral(img, padded=True))
    out = gpu(device, np.empty((9, 11), np.int64))
    assert pixsum.integral(gpu(device, img), out=out) is out
    np.testing.assert_array_equal(out.arr, ref_integral(img))
    t, q = pixsum.integral_sq(gpu(device, img))
    assert t.arr.dtype == np.int64 and q.arr.dtype == np.uint64
    np.testing.assert_array_equal(q.arr, ref_integral(img.astype(np.int64) ** 2))
    assert device.calls[-1]["stream"] == 0  # no stream in the interface: default


def test_volume_and_lone_slice(device, rng):
    vol = random_image(rng, (4, 6, 5), np.uint16)
    np.testing.assert_array_equal(pixsum.integral3d(gpu(device, vol)).arr,
                                  ref_integral(vol, axes=3))
    one = random_image(rng, (1, 6, 5), np.uint16)
    r = pixsum.integral3d(gpu(device, one), padded=True)
    assert r.arr.shape == (2, 7, 6) and not r.arr[0].any()
    np.testing.assert_array_equal(r.arr, ref_integral(one, axes=3, padded=True))


def test_glue_errors(device, rng):
    img = random_image(rng, (5, 6), np.uint8)
    with pytest.raises(pixsum.BadShapeError):
        pixsum.integral(gpu(device, img), out=gpu(device, np.empty((5, 5), np.uint32)))
    with pytest.raises(pixsum.BadTypeError):
        pixsum.integral(gpu(device, img), dtype=np.uint64,
                        out=gpu(device, np.empty((5, 6), np.uint32)))
    with pytest.raises(pixsum.BadTypeError):
        pixsum.integral(gpu(device, img.astype(np.float16)))
    with pytest.raises(pixsum.BadShapeError):
        pixsum.integral3d(gpu(device, img))
    bad_stream = HostAsGpu(img, stream=0)
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.integral(bad_stream)
    with pytest.raises(pixsum.BadShapeError):
        pixsum.integral_tilted(gpu(device, img), out=gpu(device, np.empty((5, 6), np.uint32)))


# ---- box queries, box filter, histograms and equalisation, without a GPU ----------------
#
# DevArray is a NumPy array that also presents __cuda_array_interface__, so the
# glue of pixsum/_gpu_box.py and _gpu_hist.py runs its array arithmetic with
# NumPy (NumpyOps stands in for CuPy) and its C entry points are replaced by
# NumPyDevice, which reads the same descriptors and pointers and runs the CPU
# library. The results must equal the CPU functions bit for bit, which checks
# the glue's own arithmetic (corner order, modular sums, the equalisation
# table, proxies for ranges) and its argument checking and errors. Called
# through pixsum._gpu.dispatch, as the C extension does for GPU arrays (a
# DevArray is an ndarray, so the C functions would take the host path).

from pixsum import _gpu_box, _gpu_hist, _gpu_ops  # noqa: E402

_STREAM = 0x5151
_ALIVE = []  # every DevArray made, so descriptors can be resolved to memory


class DevArray(np.ndarray):
    """Host memory dressed up as device memory (NumPy operations still work)."""

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str,
                "data": (self.__array_interface__["data"][0], not self.flags.writeable),
                "strides": None if self.flags.c_contiguous else self.strides,
                "version": 3, "stream": _STREAM}


def dev(a):
    """A DevArray copy of a NumPy array (or a DevArray view keeping strides)."""
    d = np.array(a).view(DevArray)
    _ALIVE.append(d)
    return d


class NumpyOps(_gpu_ops.Ops):
    """_gpu_ops.Ops with NumPy as the array library."""

    def __init__(self):
        self.lib, self.name, self.device, self.torch = np, "numpy", 0, False

    def empty(self, shape, dtype):
        return dev(np.full(shape, 0xA5, dtype=np.dtype(dtype)))

    def zeros(self, shape, dtype):
        return dev(np.zeros(shape, dtype=np.dtype(dtype)))

    def from_host(self, a):
        return dev(a)

    def to_host(self, x):
        return np.array(x)


_TYPES = {"u8": np.uint8, "u16": np.uint16, "i16": np.int16, "i32": np.int32, "u32": np.uint32,
          "f32": np.float32, "f64": np.float64, "u64": np.uint64, "i64": np.int64}


def _view(desc):
    ptr, tname, shape, strides = desc
    for base in _ALIVE:
        b = base.base if isinstance(base.base, np.ndarray) else base
        lo = b.__array_interface__["data"][0]
        if lo <= ptr < lo + b.nbytes:
            return np.ndarray(shape, _TYPES[tname], buffer=b, offset=ptr - lo, strides=strides)
    raise AssertionError(f"descriptor {desc} points at no DevArray")


def _ptr_view(ptr, n, dtype=np.uint64):
    return _view((ptr, {np.uint64: "u64", np.float64: "f64"}[dtype], (n,),
                  (np.dtype(dtype).itemsize,)))


class NumpyDevice:
    """The C entry points of GPU arrays, run by the CPU library on the memory
    the descriptors point at. Records the calls."""

    def __init__(self):
        self.calls = []

    def integral(self, spatial, image, out, out_sq=None, *, stream=0, device=0, method="auto",
                 wrap=False, padded=False, tilted=False):
        self.calls.append(("integral", stream))
        src, dst = _view(image), _view(out)
        kw = dict(method="auto", wrap=wrap, padded=padded)
        if tilted:
            pixsum.integral_tilted(src, out=dst, wrap=wrap)
        elif spatial == 3:
            pixsum.integral3d(src, out=dst, **kw)
        else:
            pixsum.integral(src, out=dst, **kw)

    def histogram(self, spatial, image, counts, counts_len, bins, lo, hi, *, mask=None,
                  totals=0, stream=0, device=0):
        self.calls.append(("histogram", stream))
        img = _view(image)
        if img.dtype == np.uint32:  # as pixsum_cuda_histogram(): u32 is counted on the host only
            raise pixsum.BadTypeError("this histogram takes u8, u16, i16, i32, f32 or f64 "
                                      "images, got u32")
        m = _view(mask) if mask is not None else None
        channels = img.ndim == spatial + 1
        h, info = pixsum.histogram(img, bins=bins, range=(lo, hi), mask=m,
                                   channels=channels or img.ndim == 2, info=True)
        _ptr_view(counts, counts_len)[:h.size] = h.ravel()
        if totals:
            t = _ptr_view(totals, 17)
            t[:] = 0
            t[0] = info["pixels"]
            for i, key in enumerate(("in_range", "below", "above", "nan")):
                t[1 + 4 * i:1 + 4 * i + len(info[key])] = info[key]

    def hist_post(self, counts, channels, bins, out, *, relative=False, cumulative=False,
                  of_all_samples=False, totals=0, stream=0):
        self.calls.append(("hist_post", stream))
        c = _ptr_view(counts, channels * bins).reshape(channels, bins).copy()
        if cumulative or not relative:  # without relative=True: the cumulative histogram
            c = np.cumsum(c, axis=1, dtype=np.uint64)
        if not relative:
            _ptr_view(out, channels * bins)[:] = c.ravel()
            return
        t = _ptr_view(totals, 17)
        n = np.array([t[0]] * channels if of_all_samples else t[1:1 + channels], np.float64)
        r = np.where(n[:, None] > 0, c / np.maximum(n, 1)[:, None], 0.0)
        _ptr_view(out, channels * bins, np.float64)[:] = r.ravel()

    def histogram2d(self, spatial, a, b, counts, counts_len, bins_a, lo_a, hi_a, bins_b, lo_b,
                    hi_b, *, mask=None, pairs=0, stream=0, device=0):
        self.calls.append(("histogram2d", stream))
        h, info = pixsum.histogram2d(_view(a), _view(b), bins=(bins_a, bins_b),
                                     range=((lo_a, hi_a), (lo_b, hi_b)),
                                     mask=_view(mask) if mask is not None else None, info=True)
        _ptr_view(counts, counts_len)[:h.size] = h.ravel()
        if pairs:
            _ptr_view(pairs, 2)[:] = [info["pairs"], info["excluded"]]

    def equalize(self, spatial, image, out, *, mask=None, stream=0, device=0):
        self.calls.append(("equalize", stream))
        img = _view(image)
        pixsum.equalize(img, mask=_view(mask) if mask is not None else None,
                        channels=img.ndim == spatial + 1 or img.ndim == 2, out=_view(out))

    def box_filter_image(self, image, out, size, *, stream=0, device=0, **kw):
        """_core._cuda_box_filter_image: out=None plans (the real binding's
        keyword rules, which need no device); a launch runs the CPU
        box_filter on the same memory."""
        if out is None:
            return _REAL_BOX_FILTER_IMAGE(image, None, size, **kw)
        self.calls.append(("box_filter", stream))
        pixsum.box_filter(_view(image), size, out=_view(out), **kw)


_REAL_BOX_FILTER_IMAGE = getattr(_core, "_cuda_box_filter_image", None)


@pytest.fixture
def numdev(monkeypatch):
    d = NumpyDevice()
    monkeypatch.setattr(_core, "HAVE_CUDA", 1)
    monkeypatch.setattr(_core, "_cuda_integral", d.integral)
    monkeypatch.setattr(_core, "_cuda_histogram", d.histogram, raising=False)
    monkeypatch.setattr(_core, "_cuda_hist_post", d.hist_post, raising=False)
    monkeypatch.setattr(_core, "_cuda_histogram2d", d.histogram2d, raising=False)
    monkeypatch.setattr(_core, "_cuda_box_filter_image", d.box_filter_image, raising=False)
    monkeypatch.setattr(_core, "_cuda_equalize", d.equalize, raising=False)
    ops = NumpyOps()
    monkeypatch.setattr(_gpu_box, "ops_for", lambda src: ops)
    monkeypatch.setattr(_gpu_hist, "ops_for", lambda src: ops)

    def alloc(src):
        return np, ops.empty, ops.zeros
    monkeypatch.setattr(_gpu_base, "_allocator", alloc)
    yield d
    _ALIVE.clear()


def call(name, *args, **kwargs):
    return _gpu.dispatch(name, args, kwargs)


def same(got, want):
    got = np.asarray(got)
    assert got.dtype == np.asarray(want).dtype and got.shape == np.shape(want)
    np.testing.assert_array_equal(got, want)


def boxes_for(rng, h, w, n):
    y, x = rng.integers(0, h, n), rng.integers(0, w, n)
    return np.stack([x, y, rng.integers(1, w - x + 1), rng.integers(1, h - y + 1)], axis=1)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.int32, np.float32,
                                   np.float64])
@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("channels", [0, 3])
def test_glue_box_queries_equal_cpu(numdev, rng, dtype, padded, channels):
    shape = (37, 53) + ((channels,) if channels else ())
    img = random_image(rng, shape, dtype)
    t, q = pixsum.integral_sq(img, padded=padded)
    boxes = boxes_for(rng, 37, 53, 120)
    boxes[0] = (0, 0, 53, 37)  # the whole image: corners at the table's edges
    for name, args in (("box_sum", (t,)), ("box_mean", (t,)), ("box_var", (t, q))):
        want = getattr(pixsum, name)(*args, boxes, padded=padded)
        got = call(name, *[dev(a) for a in args], boxes, padded=padded)
        same(got, want)
        got = call(name, *[dev(a) for a in args], dev(boxes.astype(np.int32)), padded=padded)
        same(got, want)
        one = call(name, *[dev(a) for a in args], tuple(boxes[5]), padded=padded)
        same(np.asarray(one), getattr(pixsum, name)(*args, boxes[5], padded=padded))


def test_glue_box_wrapped_u32_table_and_3d(numdev, rng):
    img = np.full((300, 300), 255, np.uint8)
    t = pixsum.integral(img, dtype=np.uint32, wrap=True)  # the total wraps past 2^32
    boxes = boxes_for(rng, 300, 300, 60)
    same(call("box_sum", dev(t), boxes), pixsum.box_sum(t, boxes))
    vol = random_image(rng, (6, 9, 11, 2), np.uint16)
    for padded in (False, True):
        t3 = pixsum.integral3d(vol, padded=padded)
        b3 = np.array([[0, 0, 0, 11, 9, 6], [3, 2, 1, 4, 5, 2], [10, 8, 5, 1, 1, 1]])
        same(call("box_sum", dev(t3), b3, padded=padded), pixsum.box_sum(t3, b3, padded=padded))
        same(call("box_mean", dev(t3), b3, padded=padded),
             pixsum.box_mean(t3, b3, padded=padded))


def test_glue_box_var_falls_back_beyond_63_bits(numdev, rng):
    img = random_image(rng, (64, 64), np.int32, extreme=True)
    t, q = pixsum.integral_sq(img)  # int64 sums, float64 squares beyond uint64
    boxes = boxes_for(rng, 64, 64, 40)
    want = pixsum.box_var(t, q, boxes)
    got = np.asarray(call("box_var", dev(t), dev(q), boxes))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert (got >= 0).all()


def test_glue_box_errors(numdev, rng):
    t = dev(pixsum.integral(random_image(rng, (10, 12), np.uint8)))
    with pytest.raises(pixsum.OutOfRangeError, match="box 1"):
        call("box_sum", t, [(0, 0, 1, 1), (5, 5, 8, 1)])
    with pytest.raises(pixsum.OutOfRangeError, match="box 1"):
        call("box_sum", t, dev(np.array([(0, 0, 1, 1), (5, 5, 8, 1)])))
    with pytest.raises(pixsum.BadShapeError, match="empty"):
        call("box_sum", t, dev(np.array([(0, 0, 0, 1)])))
    with pytest.raises(pixsum.OutOfRangeError, match="negative"):
        call("box_mean", t, dev(np.array([(0, 0, 1, 1), (-1, 0, 1, 1)])))
    with pytest.raises(pixsum.BadShapeError):
        call("box_sum", t, [(0, 0, 1)])
    with pytest.raises(pixsum.BadTypeError):
        call("box_sum", t, [(0.5, 0, 1, 1)])
    with pytest.raises(pixsum.BadTypeError, match="tables are"):
        call("box_sum", dev(np.zeros((4, 4), np.uint8)), (0, 0, 1, 1))
    with pytest.raises(pixsum.BadShapeError, match="differ"):
        call("box_var", t, dev(np.zeros((10, 11), np.uint64)), (0, 0, 1, 1))
    with pytest.raises(pixsum.UnsupportedError, match="host"):
        call("box_var", t, np.zeros((10, 12), np.uint64), (0, 0, 1, 1))
    with pytest.raises(pixsum.BadShapeError, match="2x2"):
        call("box_sum", dev(np.zeros((1, 5), np.uint32)), (0, 0, 1, 1), padded=True)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.int32, np.uint32])
@pytest.mark.parametrize("shape", [(1, 1), (1, 40), (33, 1), (45, 61), (20, 31, 3)])
@pytest.mark.parametrize("size", [1, 3, (4, 7), 100])
def test_glue_box_filter_equals_cpu(numdev, rng, dtype, shape, size):
    img = random_image(rng, shape, dtype)
    for mode in ("same", "valid"):
        for normalize in (True, False):
            try:
                want = pixsum.box_filter(img, size, mode=mode, normalize=normalize)
            except pixsum.BadShapeError:
                with pytest.raises(pixsum.BadShapeError):
                    call("box_filter", dev(img), size, mode=mode, normalize=normalize)
                continue
            got = call("box_filter", dev(img), size, mode=mode, normalize=normalize)
            same(got, want)
    want = pixsum.box_filter(img, size, dtype=np.float32)
    same(call("box_filter", dev(img), size, dtype=np.float32), want)


@pytest.mark.parametrize("border", ["reflect101", "reflect", "replicate", "constant", "shrink",
                                    "valid"])
@pytest.mark.parametrize("stat", ["sum", "mean", "var", "std"])
def test_glue_box_filter_borders_and_stats(numdev, rng, border, stat):
    """border=, stat= and cval= reach the device call as the CPU reads them,
    with the CPU's default output type."""
    img = random_image(rng, (23, 31, 2), np.uint8)
    want = pixsum.box_filter(img, (5, 4), border=border, stat=stat, cval=7)
    got = call("box_filter", dev(img), (5, 4), border=border, stat=stat, cval=7)
    same(got, want)


def test_glue_box_filter_out_strided_float_and_errors(numdev, rng):
    base = random_image(rng, (50, 40, 2), np.uint8)
    view = dev(base)[::-2, 3:37]
    want = pixsum.box_filter(np.ascontiguousarray(base[::-2, 3:37]), (5, 3), normalize=False)
    out = dev(np.zeros(want.shape, want.dtype))
    assert call("box_filter", view, (5, 3), normalize=False, out=out) is out
    same(out, want)
    wide = dev(np.zeros((want.shape[0], 2 * want.shape[1], 2), want.dtype))
    gaps = wide[:, ::2]  # not C-contiguous: filtered into a temporary, then copied
    assert call("box_filter", view, (5, 3), normalize=False, out=gaps) is gaps
    same(gaps, want)
    f = random_image(rng, (30, 41), np.float32)
    np.testing.assert_allclose(np.asarray(call("box_filter", dev(f), 5)),
                               pixsum.box_filter(f, 5), rtol=1e-9, atol=1e-9)
    with pytest.raises(pixsum.BadTypeError, match="means"):
        call("box_filter", dev(f), 3, dtype=np.uint64)
    big = random_image(rng, (300, 300), np.uint16)
    with pytest.raises(pixsum.OverflowError):
        pixsum.box_filter(big, 300, normalize=False, dtype=np.uint32)
    with pytest.raises(pixsum.OverflowError):
        call("box_filter", dev(big), 300, normalize=False, dtype=np.uint32)
    with pytest.raises(pixsum.InvalidArgumentError):
        call("box_filter", dev(f), 0)
    with pytest.raises(pixsum.InvalidArgumentError):
        call("box_filter", dev(f), 3, mode="full")
    with pytest.raises(pixsum.BadShapeError):
        call("box_filter", dev(f), 50, mode="valid")
    with pytest.raises(pixsum.BadShapeError):
        call("box_filter", dev(f), 3, out=dev(np.zeros((30, 40))))


hist_only = pytest.mark.skipif(not hasattr(_core, "_joint_stats"),
                               reason="the library has no histograms")


@hist_only
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.int32, np.float32,
                                   np.float64])
def test_glue_histogram_equals_cpu(numdev, rng, dtype):
    img = random_image(rng, (47, 59, 3), dtype)
    if img.dtype.kind == "f":
        img[3, 4, 0], img[5, 6, 1], img[7, 8, 2] = np.nan, np.inf, -np.inf
    mask = rng.random((47, 59)) < 0.6
    for kw in ({}, {"bins": 17}, {"bins": 9, "range": (-20.5, 100)}, {"mask": mask},
               {"relative": True}, {"cumulative": True},
               {"relative": True, "cumulative": True, "of_all_samples": True},
               {"channels": False, "bins": 5}):
        dkw = dict(kw, mask=dev(mask)) if "mask" in kw else kw
        want, winfo = pixsum.histogram(img, info=True, **kw)
        got, ginfo = call("histogram", dev(img), info=True, **dkw)
        same(got, want)
        for key in winfo:
            same(ginfo[key], winfo[key]) if key == "edges" else \
                (ginfo[key] == winfo[key]) or pytest.fail(f"{key}: {ginfo[key]} {winfo[key]}")
        same(call("histogram", dev(img), **dkw), want)


@hist_only
def test_glue_histogram_views_out_masks_and_errors(numdev, rng):
    img = random_image(rng, (64, 80), np.float32)
    none = np.zeros((64, 80), bool)
    same(call("histogram", dev(img), mask=dev(none)), pixsum.histogram(img, mask=none))
    i32 = random_image(rng, (64, 80), np.int32)
    same(call("histogram", dev(i32), mask=dev(none.astype(np.uint8))),
         pixsum.histogram(i32, mask=none))
    strided = dev(img)[::-3, 5:70]
    same(call("histogram", strided, bins=33), pixsum.histogram(img[::-3, 5:70], bins=33))
    flat = random_image(rng, (1001,), np.uint16)
    same(call("histogram", dev(flat)), pixsum.histogram(flat))
    out = dev(np.zeros(256, np.uint64))
    assert call("histogram", dev(random_image(rng, (9, 9), np.uint8)), out=out) is out
    with pytest.raises(pixsum.BadShapeError):
        call("histogram", dev(img), bins=10, out=dev(np.zeros(9, np.uint64)))
    with pytest.raises(pixsum.BadTypeError):
        call("histogram", dev(img), bins=10, out=dev(np.zeros(10, np.int32)))
    with pytest.raises(pixsum.BadTypeError):
        call("histogram", dev(img), relative=True, bins=10, out=dev(np.zeros(10, np.uint64)))
    with pytest.raises(pixsum.UnsupportedError, match="host"):
        call("histogram", dev(img), mask=none)
    with pytest.raises(pixsum.BadShapeError, match="mask"):
        call("histogram", dev(img), mask=dev(none[:-1]))
    with pytest.raises(pixsum.BadTypeError, match="mask"):
        call("histogram", dev(img), mask=dev(none.astype(np.float32)))
    with pytest.raises(pixsum.BadTypeError):
        call("histogram", dev(img.astype(np.uint32)))
    with pytest.raises(pixsum.UnsupportedError, match="cuda.hist"):
        call("histogram", dev(img), method="hist.scalar")
    with pytest.raises(pixsum.UnknownMethodError):
        call("histogram", dev(img), method="no.such")
    with pytest.raises(pixsum.BadStrideError):
        call("histogram", dev(np.arange(10, dtype=np.uint8))[::2])


def _same_joint(a, b, kw, dkw):
    """histogram2d(info=True) of host a, b with kw and of their device copies
    with dkw: the same table and info; returns the table."""
    want, winfo = pixsum.histogram2d(a, b, info=True, **kw)
    got, ginfo = call("histogram2d", dev(a), dev(b), info=True, **dkw)
    same(got, want)
    for key in winfo:
        if key.startswith("edges"):
            same(ginfo[key], winfo[key])
        else:
            assert ginfo[key] == winfo[key], key
    return want


@hist_only
def test_glue_histogram2d_equals_cpu(numdev, rng):
    a = random_image(rng, (40, 50), np.uint8)
    b = random_image(rng, (40, 50), np.float32)
    b[0, 0] = np.nan
    mask = rng.random((40, 50)) < 0.5
    for kw in ({}, {"bins": (8, 5), "range": ((0, 256), (-100, 100))}, {"mask": mask},
               {"range": (None, (-50, 50))}):
        dkw = dict(kw, mask=dev(mask)) if "mask" in kw else kw
        want = _same_joint(a, b, kw, dkw)
        same(call("histogram2d", dev(a), dev(b), **dkw), want)
    with pytest.raises(pixsum.UnsupportedError, match="host"):
        call("histogram2d", dev(a), b)
    with pytest.raises(pixsum.BadShapeError):
        call("histogram2d", dev(a), dev(b[:-1]))


@hist_only
def test_glue_histogram2d_bins_ranges_and_limits(numdev, rng):
    """The joint's bins and ranges are resolved per axis (256 bins by default,
    16-bit types over their whole range), as the CPU's joint does; a table of
    more than 2^26 cells is refused before anything is allocated."""
    u16 = random_image(rng, (30, 41), np.uint16)
    i16 = random_image(rng, (30, 41), np.int16)
    nan = np.full((30, 41), np.nan, np.float32)
    for a, b, kw in ((u16, i16, {}), (u16, i16, {"bins": 33}), (i16, u16, {"bins": (None, 7)}),
                     (nan, u16, {}), (u16, nan, {"bins": (3, 4)}),
                     (i16, nan, {"range": ((-100, 100), None)})):
        _same_joint(a, b, kw, kw)
    with pytest.raises(pixsum.TooLargeError, match="2\\^26"):
        call("histogram2d", dev(u16), dev(i16), bins=(65536, 2048))
    with pytest.raises(pixsum.InvalidArgumentError, match="histogram2d: image b"):
        call("histogram2d", dev(u16), dev(i16), bins=(3, (1 << 24) + 1))


@hist_only
def test_hist_resolve_and_edges_match_histogram(rng):
    """_hist_resolve() and _hist_edges() (the GPU path's bins, range and
    edges) give exactly what histogram(info=True) reports, refusals included."""
    img = random_image(rng, (20, 30), np.float32)
    mask = rng.random((20, 30)) < 0.5
    for arr, kw in ((img, {}), (img, {"bins": 7}), (img, {"mask": mask}),
                    (img.astype(np.uint16), {}), (img.astype(np.int16), {"bins": 5}),
                    (img.astype(np.int32), {"range": (-3, 40.5)}),
                    (img.astype(np.uint8), {"bins": 1000, "range": (0, 1)})):
        _, info = pixsum.histogram(arr, info=True, **kw)
        got = _core._hist_resolve(arr, kw.get("bins"), kw.get("range"), kw.get("mask"))
        assert got == (info["bins"], info["lo"], info["hi"])
        same(_core._hist_edges(*got), info["edges"])
    with pytest.raises(pixsum.InvalidArgumentError, match="^where: "):
        _core._hist_resolve(img, (1 << 24) + 1, None, None, "where")
    with pytest.raises(pixsum.BadShapeError, match="mask"):
        _core._hist_resolve(img, None, None, mask[:-1])
    with pytest.raises(pixsum.InvalidArgumentError):
        _core._hist_edges(0, 0.0, 1.0)


@hist_only
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_glue_equalize_equals_cpu(numdev, rng, dtype):
    img = (random_image(rng, (60, 70, 3), dtype) // 5).astype(dtype)
    mask = rng.random((60, 70)) < 0.3
    same(call("equalize", dev(img)), pixsum.equalize(img))
    same(call("equalize", dev(img), mask=dev(mask)), pixsum.equalize(img, mask=mask))
    one = np.ascontiguousarray(img[..., 1])
    same(call("equalize", dev(one)), pixsum.equalize(one))
    vol = img[..., :2].copy()
    same(call("equalize", dev(vol), channels=False), pixsum.equalize(vol, channels=False))
    flat = np.full((5, 7), 9, dtype)
    same(call("equalize", dev(flat)), flat)
    same(call("equalize", dev(flat), mask=dev(np.zeros((5, 7), bool))), flat)
    inplace = dev(img)
    assert call("equalize", inplace, out=inplace) is inplace
    same(np.asarray(inplace), pixsum.equalize(img))
    with pytest.raises(pixsum.BadTypeError):
        call("equalize", dev(img.astype(np.int16)))
    with pytest.raises(pixsum.BadShapeError):
        call("equalize", dev(img), out=dev(img[:-1]))


@hist_only
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_glue_threshold_otsu_equals_cpu(numdev, rng, dtype):
    img = random_image(rng, (50, 64), dtype)
    img[:25] //= 3
    mask = rng.random((50, 64)) < 0.5
    for kw in ({}, {"bins": 40}, {"bins": 12, "range": (0, 200)}, {"mask": mask}):
        dkw = dict(kw, mask=dev(mask)) if "mask" in kw else kw
        want = pixsum.threshold_otsu(img, info=True, **kw)
        assert call("threshold_otsu", dev(img), info=True, **dkw) == want
        assert call("threshold_otsu", dev(img), **dkw) == want[0]
    vol = random_image(rng, (3, 20, 30), dtype)
    assert call("threshold_otsu", dev(vol)) == pixsum.threshold_otsu(vol)
    with pytest.raises(pixsum.InvalidArgumentError):
        call("threshold_otsu", dev(np.full((6, 7), 5, dtype)))
    with pytest.raises(pixsum.UnsupportedError):
        call("threshold_otsu", dev(img), method="hist.sub")
    with pytest.raises(pixsum.UnsupportedError):
        pixsum.otsu(HostAsGpu(np.array([1, 2, 3], np.uint64)))


def test_tilted(device, rng):
    """integral_tilted of a GPU array: the padded (H+1) x (W+1) table, the CPU's
    dtype rule, out= and strided views handed to the device entry point."""
    base = random_image(rng, (21, 17, 2), np.uint16)
    view = base[::-1, 3:]
    r = pixsum.integral_tilted(gpu(device, view, stream=0x99))
    want = pixsum.integral_tilted(np.ascontiguousarray(view))
    assert r.arr.shape == want.shape == (22, 15, 2) and r.arr.dtype == want.dtype
    np.testing.assert_array_equal(r.arr, want)
    call = device.calls[-1]
    assert call["tilted"] and call["stream"] == 0x99
    f = random_image(rng, (6, 9), np.float32)
    out = gpu(device, np.empty((7, 10), np.float64))
    assert pixsum.integral_tilted(gpu(device, f), out=out) is out
    np.testing.assert_array_equal(out.arr, pixsum.integral_tilted(f, dtype=np.float64))

"""The Python side of GPU arrays (pixsum/_gpu.py) without a GPU: host memory
dressed up as CUDA memory (__cuda_array_interface__ v3 over NumPy buffers),
the device entry point replaced by one that reads the same descriptors and runs
the CPU library. Checks what the glue decides: result kind, shape and dtype,
descriptors (pointers, byte strides of strided views), the stream taken from
the interface, out=, padded volumes of one slice, and the errors."""

import numpy as np
import pytest

import pixsum
from pixsum import _core, _gpu
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
                 method="auto", wrap=False, padded=False):
        self.calls.append({"spatial": spatial, "stream": stream, "device": device,
                           "image": image, "out": out})
        src = self.view(image)
        kw = dict(method=method, wrap=wrap, padded=padded)
        if out_sq is not None:
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

    monkeypatch.setattr(_gpu, "_allocator", alloc)
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
    with pytest.raises(pixsum.UnsupportedError):
        pixsum.integral_tilted(gpu(device, img))

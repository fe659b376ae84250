"""The C path of GPU arrays (python/src/gpu.c) without a GPU: stand-ins for
PyTorch and CuPy, installed as the modules `torch` and `cupy` where neither is
installed, whose arrays are host memory. integral(), integral_sq() and
integral3d() of them run gpu.c's whole path (reading the array, its dtype,
device and stream, choosing the table type, allocating the result with the
stand-in library, the shape rules and their errors) up to the library call,
which then refuses: no CUDA device (a CUDA build on a machine without one),
memory the GPU cannot reach, or a build without CUDA. Also checks that no call
leaves a reference behind. Skipped where the real PyTorch or CuPy is
installed (gpu.c keeps the first library it sees for the process)."""

import gc
import importlib.util
import sys
import types

import numpy as np
import pytest

import pixsum

_REAL = importlib.util.find_spec("torch") is not None or \
    importlib.util.find_spec("cupy") is not None
pytestmark = pytest.mark.skipif(_REAL, reason="the real PyTorch or CuPy is installed")

_NAMES = ["uint8", "uint16", "int16", "int32", "uint32", "float32", "float64", "uint64",
          "int64", "int8", "float16", "bool"]


def _fake_torch():
    torch = types.ModuleType("torch")

    class dtype:
        def __init__(self, name):
            self.name = name

        def __str__(self):
            return "torch." + self.name

    class device:
        def __init__(self, kind, index=None):
            self.type, self.index = kind, index

    class Tensor:
        allocated = []

        def __init__(self, arr, index=0):
            self.a, self.is_cuda, self.device = arr, True, device("cuda", index)

        @property
        def dtype(self):
            return getattr(torch, self.a.dtype.name)

        @property
        def shape(self):
            return tuple(self.a.shape)

        def stride(self):
            return tuple(s // self.a.itemsize for s in self.a.strides)

        def data_ptr(self):
            return self.a.__array_interface__["data"][0]

        def __setitem__(self, key, value):
            self.a[key] = value

    Tensor.__module__ = "torch"
    for n in _NAMES:
        setattr(torch, n, dtype(n))

    def empty(shape, dtype=None, device=None):
        t = Tensor(np.full(shape, 0xAB, np.dtype(dtype.name)), device.index)
        Tensor.allocated.append((shape, dtype.name, device.index))
        return t

    def zeros(shape, dtype=None, device=None):
        return Tensor(np.zeros(shape, np.dtype(dtype.name)), device.index)

    torch.Tensor, torch.empty, torch.zeros, torch.device = Tensor, empty, zeros, device
    torch.streams = []
    torch._C = types.SimpleNamespace(
        _cuda_getCurrentRawStream=lambda i: torch.streams.append(i) or 0x5000 + i)
    torch.cuda = types.SimpleNamespace(current_stream=None)
    return torch


def _fake_cupy():
    cupy = types.ModuleType("cupy")

    class Device:
        current = 0

        def __init__(self, id=0):
            self.id = id

        def __enter__(self):
            self.prev, Device.current = Device.current, self.id
            return self

        def __exit__(self, *exc):
            Device.current = self.prev

    class ndarray:
        def __init__(self, arr, stream=1, device_id=0):
            self.a, self.stream, self.device = arr, stream, Device(device_id)

        @property
        def __cuda_array_interface__(self):
            return {"shape": self.a.shape, "typestr": self.a.dtype.str,
                    "data": (self.a.__array_interface__["data"][0], False),
                    "strides": None if self.a.flags.c_contiguous else self.a.strides,
                    "version": 3, "stream": self.stream}

        @property
        def data(self):
            return types.SimpleNamespace(ptr=self.a.__array_interface__["data"][0])

    ndarray.__module__ = "cupy"
    cupy.ndarray = ndarray
    cupy.devices_seen = []

    def empty(shape, dtype):
        cupy.devices_seen.append(Device.current)
        return ndarray(np.empty(shape, dtype), device_id=Device.current)

    cupy.empty = empty
    cupy.zeros = lambda shape, dtype: ndarray(np.zeros(shape, dtype), device_id=Device.current)
    cupy.cuda = types.SimpleNamespace(Device=Device, runtime=types.SimpleNamespace(
        getDevice=lambda: Device.current))
    return cupy


@pytest.fixture(scope="module")
def libs():
    torch, cupy = _fake_torch(), _fake_cupy()
    saved = {k: sys.modules.get(k) for k in ("torch", "cupy")}
    sys.modules["torch"], sys.modules["cupy"] = torch, cupy
    yield torch, cupy
    for k, v in saved.items():
        if v is None:
            sys.modules.pop(k, None)
        else:
            sys.modules[k] = v


def _refused(fn):
    """fn() reaches the library, which refuses the host memory or the missing
    device (or the build has no CUDA at all)."""
    with pytest.raises((pixsum.UnavailableError, pixsum.InvalidArgumentError)) as e:
        fn()
    assert ("device" in str(e.value) or "built without" in str(e.value) or
            "GPU can reach" in str(e.value))
    return e.value


def test_torch_path_reaches_the_library(libs):
    torch, _ = libs
    x = torch.Tensor(np.ones((16, 16), np.uint8))
    torch.Tensor.allocated.clear()
    _refused(lambda: pixsum.integral(x))
    if pixsum.HAVE_CUDA:  # the result was made by torch.empty on the tensor's device
        assert torch.Tensor.allocated == [((16, 16), "uint32", 0)]
        torch.Tensor.allocated.clear()
        _refused(lambda: pixsum.integral_sq(torch.Tensor(np.ones((5, 6, 3), np.int16), 1),
                                            padded=True))
        assert torch.Tensor.allocated == [((6, 7, 3), "int64", 1), ((6, 7, 3), "uint64", 1)]
        assert torch.streams[-1] == 1  # the current stream of the tensor's device
        torch.Tensor.allocated.clear()
        _refused(lambda: pixsum.integral(torch.Tensor(np.ones((4, 9, 7), np.uint16)),
                                         batch=True, padded=True, dtype=np.float64))
        assert torch.Tensor.allocated == [((4, 10, 8), "float64", 0)]


@pytest.mark.skipif(not pixsum.HAVE_CUDA, reason="a build without CUDA refuses at once")
def test_torch_errors(libs):
    torch, _ = libs
    x = torch.Tensor(np.ones((16, 16), np.uint8))
    with pytest.raises(pixsum.BadTypeError, match="GPU dtype torch.int8 is not a pixsum"):
        pixsum.integral(torch.Tensor(np.ones((4, 4), np.int8)))
    with pytest.raises(pixsum.BadTypeError, match="uint64 is not an input type"):
        pixsum.integral(torch.Tensor(np.ones((4, 4), np.uint64)))
    with pytest.raises(pixsum.BadShapeError, match=r"out has shape \(16, 15\), expected"):
        pixsum.integral(x, out=torch.Tensor(np.ones((16, 15), np.uint32)))
    with pytest.raises(pixsum.BadTypeError, match="out has dtype uint32 but dtype=int64"):
        pixsum.integral(x, dtype=np.int64, out=torch.Tensor(np.ones((16, 16), np.uint32)))
    with pytest.raises(pixsum.BadShapeError, match="batch=True"):
        pixsum.integral(torch.Tensor(np.ones((8, 16, 16), np.uint8)))
    with pytest.raises(pixsum.BadShapeError, match="channel_axis=1"):
        pixsum.integral(torch.Tensor(np.ones((2, 3, 16, 16), np.uint8)))
    with pytest.raises(pixsum.BadShapeError, match="spatial axes"):
        pixsum.integral3d(x)
    # layouts a view cannot describe: copied once by the array's own library,
    # or refused with copy=False (this stand-in tensor cannot copy itself)
    with pytest.raises(pixsum.BadStrideError, match="batch and channel axes"):
        a = np.ones((2, 4, 5, 6), np.uint8)[:, :3]
        pixsum.integral(torch.Tensor(a), batch=True, channel_axis=1, copy=False)
    with pytest.raises(pixsum.BadStrideError, match="packed along a row"):
        pixsum.integral(torch.Tensor(np.ones((6, 5), np.uint8).T), copy=False)
    with pytest.raises(pixsum.UnsupportedError, match="carry"):
        pixsum.integral(x, carry=np.zeros(16, np.uint32))
    # out= given: used as is (its dtype), nothing allocated
    torch.Tensor.allocated.clear()
    _refused(lambda: pixsum.integral(x, out=torch.Tensor(np.ones((16, 16), np.int64))))
    assert torch.Tensor.allocated == []


@pytest.mark.skipif(not pixsum.HAVE_CUDA, reason="a build without CUDA refuses at once")
def test_cupy_path_stream_device_and_errors(libs):
    _, cupy = libs
    cupy.devices_seen.clear()
    _refused(lambda: pixsum.integral(cupy.ndarray(np.ones((7, 9), np.uint8), device_id=1)))
    assert cupy.devices_seen == [1] and cupy.cuda.Device.current == 0
    with pytest.raises(pixsum.InvalidArgumentError, match="stream 0 is disallowed"):
        pixsum.integral(cupy.ndarray(np.ones((7, 9), np.uint8), stream=0))
    with pytest.raises(pixsum.BadTypeError, match="GPU dtype <f2 is not a pixsum type"):
        pixsum.integral(cupy.ndarray(np.ones((7, 9), np.float16)))
    with pytest.raises(pixsum.BadShapeError, match="batch=True"):
        pixsum.integral_sq(cupy.ndarray(np.ones((2, 7, 9, 3), np.uint8)))
    base = np.ones((20, 30), np.uint8)
    _refused(lambda: pixsum.integral(cupy.ndarray(base[::-2, 3:]), padded=True))


def test_no_references_left(libs):
    torch, cupy = libs
    x = torch.Tensor(np.ones((16, 16), np.uint8))
    c = cupy.ndarray(np.ones((16, 16), np.uint8))
    out = torch.Tensor(np.ones((16, 16), np.int64))
    watched = (x, c, out, torch.uint32, torch.int64, np.dtype(np.uint32))
    gc.collect()  # garbage of earlier tests may hold the shared dtype
    before = [sys.getrefcount(o) for o in watched]
    for _ in range(100):
        for fn in (lambda: pixsum.integral(x), lambda: pixsum.integral_sq(x),
                   lambda: pixsum.integral(x, out=out), lambda: pixsum.integral(c),
                   lambda: pixsum.integral(x, batch=True, channel_axis=-1),
                   lambda: pixsum.integral(x, out=torch.Tensor(np.ones((3, 3), np.int64))),
                   lambda: pixsum.integral(torch.Tensor(np.ones((4, 4), np.int8)))):
            with pytest.raises(pixsum.Error):
                fn()
    gc.collect()
    assert [sys.getrefcount(o) for o in watched] == before

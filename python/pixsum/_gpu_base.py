"""pixsum._gpu_base - GPU arrays read and made in Python, for the GPU paths
written in Python (pixsum/_gpu_box.py, _gpu_hist.py) and for the integrals of
arrays the C extension leaves to Python.

integral(), integral_sq() and integral3d() of CuPy arrays and PyTorch tensors
run in the C extension (python/src/gpu.c) without coming here. This module
serves the rest:
  - `_Gpu` reads an array's memory description (pointer, dtype, shape, byte
    strides, stream, device, the library that made it), `adopt()` views a
    DLPack-only producer's memory as a CuPy array or a PyTorch tensor, and
    `_allocator()` gives results of the input's kind;
  - `dispatch()` runs the integrals the C extension hands over: DLPack-only
    producers (adopted, then computed by the C extension) and other producers
    of __cuda_array_interface__ (Numba and the like, and the tilted integral
    of any GPU array), through _core._cuda_integral() with raw descriptions.
It imports no other GPU module of the package.

Streams: the work is enqueued on the producer's stream and nothing waits for
it (no hidden synchronisation):
  - __cuda_array_interface__ v3 with a "stream" entry: that stream
    (1 = legacy default stream, 2 = per-thread default stream, else a
    cudaStream_t);
  - PyTorch tensors (whose interface has no stream): torch's current stream
    of the tensor's device;
  - no stream given: the legacy default stream.
The result is allocated on that same stream's device, so later work the caller
enqueues on the stream sees it complete.
"""

import sys

import numpy as np

from . import _core
from ._errors import BadShapeError, BadTypeError, InvalidArgumentError, UnavailableError, \
    UnsupportedError

INTEGRAL_FUNCTIONS = ("integral", "integral_sq", "integral3d", "integral_tilted")

# pixsum type names of NumPy dtypes (native order)
_TYPE_NAMES = {
    np.dtype(np.uint8): "u8", np.dtype(np.uint16): "u16", np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32", np.dtype(np.uint32): "u32", np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64", np.dtype(np.uint64): "u64", np.dtype(np.int64): "i64",
}


def _integral_args(image, *, dtype=None, sq_dtype=None, method="auto", threads=0, wrap=False,
                   padded=False, out=None, out_sq=None, batch=False, channel_axis=None,
                   copy=True):
    # copy: these producers' arrays are read in place or refused (BadStrideError)
    del copy
    if batch or channel_axis is not None:
        raise UnsupportedError("batch=True and channel_axis take CuPy arrays and PyTorch "
                               f"tensors; read this {type(image).__name__} with "
                               "cupy.asarray() or torch.as_tensor() first", 9, "")
    return image, dtype, sq_dtype, method, threads, wrap, padded, out, out_sq


_TORCH_DTYPES = {}  # torch dtype -> NumPy dtype, filled on first sight


def _tilted_args(image, *, dtype=None, method="auto", threads=0, wrap=False, out=None,
                 copy=True):
    del copy  # read in place or refused, as above
    return image, dtype, None, method, threads, wrap, True, out, None


def _root_module(obj):
    return sys.modules.get(type(obj).__module__.split(".")[0])


class _Gpu:
    """A GPU array as pixsum needs it: pointer, dtype, shape, byte strides,
    stream, device, and the library that made it."""

    def __init__(self, obj, what, allow_bool=False):
        self.obj = obj
        self.lib = _root_module(obj)
        self.lib_name = self.lib.__name__ if self.lib else ""
        self._stream_value = None
        if self.lib_name == "torch" and getattr(obj, "is_cuda", False):
            self._from_torch(obj, what, allow_bool)
            return
        if not hasattr(obj, "__cuda_array_interface__"):
            raise UnsupportedError(f"{what}: a GPU array must expose __cuda_array_interface__",
                                   9, "")
        cai = obj.__cuda_array_interface__
        if cai.get("mask") is not None:
            raise UnsupportedError(f"{what}: masked GPU arrays are not supported", 9, "")
        self.dtype = np.dtype(cai["typestr"])
        if allow_bool and self.dtype == np.bool_:
            pass  # masks: bool reads as u8 (0 / 1)
        elif self.dtype.byteorder == ">" or self.dtype not in _TYPE_NAMES:
            raise BadTypeError(f"{what}: GPU dtype {cai['typestr']} is not a pixsum type", 5,
                               "")
        self.shape = tuple(int(s) for s in cai["shape"])
        self.ptr, self.readonly = int(cai["data"][0]), bool(cai["data"][1])
        strides = cai.get("strides")
        if strides is None:  # C-contiguous
            strides, step = [], self.dtype.itemsize
            for s in reversed(self.shape):
                strides.insert(0, step)
                step *= max(s, 1)
        self.strides = tuple(int(s) for s in strides)
        self.device = self._device(obj)
        self._stream_value = self._stream(obj, cai)

    def _from_torch(self, t, what, allow_bool):
        """The same description read from a CUDA tensor's own attributes (its
        __cuda_array_interface__ costs about 10 us a read, a few per call)."""
        dt = _TORCH_DTYPES.get(t.dtype)
        if dt is None:
            name = str(t.dtype).replace("torch.", "")
            try:
                dt = _TORCH_DTYPES[t.dtype] = np.dtype(name)
            except TypeError:
                raise BadTypeError(f"{what}: GPU dtype {t.dtype} is not a pixsum type", 5,
                                   "") from None
        if not ((allow_bool and dt == np.bool_) or dt in _TYPE_NAMES):
            raise BadTypeError(f"{what}: GPU dtype {t.dtype} is not a pixsum type", 5, "")
        self.dtype = dt
        self.shape = tuple(t.shape)
        size = dt.itemsize
        self.strides = tuple(st * size for st in t.stride())
        self.ptr, self.readonly = t.data_ptr(), False
        index = t.device.index
        self.device = index if index is not None else 0

    @property
    def stream(self):
        """The producer's stream as a cudaStream_t int (0 = legacy default);
        PyTorch's current stream is looked up on first use."""
        if self._stream_value is None:
            self._stream_value = int(self.lib.cuda.current_stream(self.device).cuda_stream)
        return self._stream_value

    def _device(self, obj):
        dev = getattr(obj, "device", None)
        for attr in ("index", "id"):  # torch.device.index, cupy.cuda.Device.id
            v = getattr(dev, attr, None)
            if isinstance(v, int):
                return v
        return 0

    def _stream(self, obj, cai):
        s = cai.get("stream")
        if s is not None:
            if s == 0:
                raise InvalidArgumentError("__cuda_array_interface__ stream 0 is disallowed "
                                           "by the protocol (v3)", 2, "")
            return int(s)
        if self.lib_name == "torch":
            return None  # looked up when needed (the stream property)
        return 0  # the context's stream: the legacy default stream

    def desc(self):
        tname = "u8" if self.dtype == np.bool_ else _TYPE_NAMES[self.dtype]
        return (self.ptr, tname, self.shape, self.strides)


def _device_scope(lib, device):
    """A context manager making `device` current for allocations."""
    name = lib.__name__ if lib else ""
    if name == "cupy":
        return lib.cuda.Device(device)
    if name == "torch":
        return lib.cuda.device(device)
    import contextlib
    return contextlib.nullcontext()


def _allocator(src):
    """(library, empty(shape, dtype), zeros(shape, dtype)) for results of the
    kind of `src`."""
    lib = src.lib
    name = src.lib_name
    if name == "torch":
        torch = lib

        def tdtype(dt):
            t = getattr(torch, np.dtype(dt).name, None)
            if t is None:
                raise BadTypeError(f"PyTorch has no {np.dtype(dt).name} tensors", 5, "")
            return t

        dev = src.obj.device
        return (lib, lambda s, d: torch.empty(s, dtype=tdtype(d), device=dev),
                lambda s, d: torch.zeros(s, dtype=tdtype(d), device=dev))
    if name != "cupy":
        try:
            import cupy as lib  # noqa: F811 - results of other producers are CuPy arrays
        except ImportError:
            try:
                import torch
            except ImportError:
                raise UnavailableError("GPU results need CuPy or PyTorch to allocate them", 11,
                                       "") from None
            dev = torch.device("cuda", src.device)
            return (torch, lambda s, d: torch.empty(s, dtype=getattr(torch, np.dtype(d).name),
                                                    device=dev),
                    lambda s, d: torch.zeros(s, dtype=getattr(torch, np.dtype(d).name),
                                             device=dev))
    return lib, lib.empty, lib.zeros


def _torch_has(dt):
    import torch
    return getattr(torch, np.dtype(dt).name, None) is not None


def _choose_dtype(src, given, out, squared):
    if given is not None:
        return np.dtype(given)
    if out is not None:
        return np.dtype(_Gpu(out, "out").dtype)
    count = 1
    for s in src.shape[:src.spatial]:
        count *= s
    dt = np.dtype(_core.integral_dtype(src.dtype, max(count, 1), squared=squared))
    if src.lib_name == "torch" and dt.kind == "u" and not _torch_has(dt):
        dt = np.dtype(np.int64)  # an older PyTorch without unsigned tensors
    return dt


def _output(src, shape, dtype, given, zero_first_slice, alloc, what):
    if given is not None:
        g = _Gpu(given, what)
        if g.shape != shape:
            raise BadShapeError(f"{what} has shape {g.shape}, expected {shape}", 3, "")
        if g.dtype != dtype:
            raise BadTypeError(f"{what} has dtype {g.dtype} but dtype={dtype} was asked", 5, "")
        if g.readonly:
            raise InvalidArgumentError(f"{what} is read-only", 2, "")
        return given, g
    _, empty, zeros = alloc
    arr = zeros(shape, dtype) if zero_first_slice else empty(shape, dtype)
    return arr, _Gpu(arr, what)


def _first_slice_skipped(desc):
    """The descriptor of slices 1.. of a (2, ...) volume."""
    ptr, tname, shape, strides = desc
    return (ptr + strides[0], tname, (1,) + shape[1:], strides)


def is_device_array(obj):
    """True for a CUDA tensor of PyTorch, a CuPy array, or any object with
    __cuda_array_interface__ (the first two without reading the interface)."""
    lib = type(obj).__module__.split(".")[0]
    if lib == "torch" and hasattr(obj, "is_cuda"):
        return bool(obj.is_cuda)
    if lib == "cupy" and type(obj).__name__ == "ndarray":
        return True
    return hasattr(obj, "__cuda_array_interface__")


def is_cuda_dlpack(obj):
    """True if obj's __dlpack_device__ names CUDA (or CUDA managed) memory."""
    try:
        return int(obj.__dlpack_device__()[0]) in (2, 13)  # kDLCUDA, kDLCUDAManaged
    except Exception:  # noqa: BLE001 - no usable __dlpack_device__
        return False


def adopt(obj):
    """(array, back): a GPU array with __cuda_array_interface__ for `obj` (obj
    itself, or for a DLPack-only producer a CuPy/PyTorch view of its memory),
    and the function that turns results back into obj's kind (None when obj
    is used as is)."""
    if obj is None or is_device_array(obj):
        return obj, None
    if not (hasattr(obj, "__dlpack__") and is_cuda_dlpack(obj)):
        return obj, None  # host memory: the caller refuses it with its reason
    try:
        import cupy
        arr = cupy.from_dlpack(obj)
    except ImportError:
        try:
            import torch
        except ImportError:
            raise UnavailableError("GPU arrays without __cuda_array_interface__ are read "
                                   "through CuPy or PyTorch; neither is installed") from None
        arr = torch.from_dlpack(obj)
    back = getattr(_root_module(obj), "from_dlpack", None)
    return arr, back


def dispatch(name, args, kwargs):
    """Runs pixsum.<name>(*args, **kwargs), an integral of a GPU array that
    is not a CuPy array or a PyTorch tensor (or any GPU array for
    integral_tilted); see the module docstring."""
    if name not in INTEGRAL_FUNCTIONS:
        raise UnsupportedError(f"{name}: GPU arrays are not accepted; copy this one to the "
                               "host first", 9, "")
    if not _core.HAVE_CUDA:
        raise UnavailableError(f"{name}: GPU arrays need a pixsum library built with CUDA; this "
                               "one was built without it", 11, "")
    kwargs = kwargs or {}
    orig = args[0] if args else kwargs.get("image")
    image, back = adopt(orig)
    if image is not orig and name != "integral_tilted":
        # a DLPack-only producer: its CuPy/PyTorch view runs in the C extension
        rest = args[1:] if args else ()
        kw = {k: v for k, v in kwargs.items() if k != "image"}
        res = getattr(_core, name)(image, *rest, **kw)
        if back is None:
            return res
        return tuple(back(r) for r in res) if isinstance(res, tuple) else back(res)
    tilted = name == "integral_tilted"
    image, dtype, sq_dtype, method, _threads, wrap, padded, out, out_sq = \
        (_tilted_args if tilted else _integral_args)(*args, **kwargs)
    image, _ = adopt(image)
    src = _Gpu(image, "image")
    spatial = 3 if name == "integral3d" else 2
    if len(src.shape) not in (spatial, spatial + 1):
        raise BadShapeError(f"{name}: GPU image of shape {src.shape} must have {spatial} "
                            f"spatial axes and an optional channel axis", 3, "")
    src.spatial = spatial
    squared = name == "integral_sq"
    shape = tuple(s + (1 if padded and i < spatial else 0) for i, s in enumerate(src.shape))
    lone_slice = spatial == 3 and padded and src.shape[0] == 1
    if lone_slice:
        shape = (2,) + shape[1:]
    alloc = _allocator(src)
    with _device_scope(alloc[0], src.device):
        t_dtype = _choose_dtype(src, dtype, out, False)
        res, res_g = _output(src, shape, t_dtype, out, lone_slice, alloc, "out")
        res_sq = res_sq_g = None
        if squared:
            q_dtype = _choose_dtype(src, sq_dtype, out_sq, True)
            res_sq, res_sq_g = _output(src, shape, q_dtype, out_sq, False, alloc, "out_sq")
        out_desc = res_g.desc()
        if lone_slice:
            out_desc = _first_slice_skipped(out_desc)
        _core._cuda_integral(spatial, src.desc(), out_desc,
                             res_sq_g.desc() if squared else None, stream=src.stream,
                             device=src.device, method=method or "auto", wrap=bool(wrap),
                             padded=bool(padded), tilted=tilted)
    # a DLPack-only producer gets its own kind back when it can import one
    if orig is not image and back is not None:
        res = back(res)
    return (res, res_sq) if squared else res

"""pixsum._gpu_ops - the few array operations the GPU paths of pixsum need,
written once for CuPy and PyTorch.

pixsum/_gpu_box.py and _gpu_hist.py compute the parts that are not the C
library's own kernels (four-corner differences, equalisation tables, data
ranges) with the input's array library, on that library's current stream,
which is the stream the caller works on (the one the C entry points get too).

PyTorch's unsigned 32/64-bit tensors support few operations, so integer
arithmetic on them runs on a signed view of the same bits (`signed()`), which
wraps modulo 2^32 / 2^64 exactly like the unsigned type; `unsigned()` views the
result back. `f64()` converts such values to float64 as the unsigned number,
rounded once, as a C cast would.
"""

import numpy as np

from ._errors import BadTypeError, UnavailableError


class Ops:
    """Array operations of one library ('cupy' or 'torch') on one device."""

    _u32_to_f64 = True  # PyTorch converts uint32 tensors itself (else: int64 + mask)

    def __init__(self, lib, device):
        self.lib = lib
        self.name = lib.__name__
        self.device = device
        self.torch = self.name == "torch"
        if self.torch:
            self.dev = lib.device("cuda", device)

    # ---- dtypes --------------------------------------------------------------------
    def has(self, dtype):
        """True if the library has arrays of NumPy dtype `dtype`."""
        if not self.torch:
            return True
        return getattr(self.lib, np.dtype(dtype).name, None) is not None

    def dt(self, dtype):
        """The library's dtype object of a NumPy dtype."""
        dtype = np.dtype(dtype)
        if not self.torch:
            return dtype
        if dtype == np.bool_:
            return self.lib.bool
        t = getattr(self.lib, dtype.name, None)
        if t is None:
            raise BadTypeError(f"this PyTorch has no {dtype.name} tensors")
        return t

    def result_dtype(self, dtype):
        """`dtype`, or int64 where PyTorch lacks that unsigned type (the
        documented stand-in of GPU results; counts never reach 2^63)."""
        dtype = np.dtype(dtype)
        if self.torch and dtype.kind == "u" and not self.has(dtype):
            return np.dtype(np.int64)
        return dtype

    # ---- allocation and transfers ----------------------------------------------------
    def empty(self, shape, dtype):
        if self.torch:
            return self.lib.empty(tuple(shape), dtype=self.dt(dtype), device=self.dev)
        return self.lib.empty(tuple(shape), dtype=np.dtype(dtype))

    def zeros(self, shape, dtype):
        if self.torch:
            return self.lib.zeros(tuple(shape), dtype=self.dt(dtype), device=self.dev)
        return self.lib.zeros(tuple(shape), dtype=np.dtype(dtype))

    def arange(self, start, stop, dtype=np.int64):
        if self.torch:
            return self.lib.arange(start, stop, dtype=self.dt(dtype), device=self.dev)
        return self.lib.arange(start, stop, dtype=np.dtype(dtype))

    def from_host(self, a):
        """A device copy of NumPy array `a`, enqueued on the current stream
        from pinned memory, so the host does not wait for the stream (CuPy's
        asarray stages through its pinned pool and keeps the buffer until the
        copy is done; PyTorch's caching host allocator does the same)."""
        a = np.ascontiguousarray(a)
        if self.torch:
            return self.lib.from_numpy(a).pin_memory().to(self.dev, non_blocking=True)
        return self.lib.asarray(a)

    def to_host(self, x):
        """NumPy copy of x: waits for the work that produces it (a synchronisation)."""
        if self.torch:
            return x.cpu().numpy()
        return self.lib.asnumpy(x)

    def copy_into(self, out, x):
        """Writes x into the existing array `out` (converting the dtype)."""
        if self.torch:
            out.copy_(x)
        else:
            out[...] = x

    # ---- arithmetic helpers ----------------------------------------------------------
    def astype(self, x, dtype):
        if self.torch:
            return x.to(self.dt(dtype))
        return x.astype(np.dtype(dtype), copy=False)

    def signed(self, x):
        """x itself, or for PyTorch unsigned 32/64-bit tensors a signed view of the
        same bits (wrapping arithmetic modulo 2^32 / 2^64 is the same)."""
        if self.torch:
            if x.dtype == getattr(self.lib, "uint32", None):
                return x.view(self.lib.int32)
            if x.dtype == getattr(self.lib, "uint64", None):
                return x.view(self.lib.int64)
        return x

    def unsigned(self, x, dtype):
        """Undoes signed(): x viewed as NumPy dtype `dtype` (same item size)."""
        if self.torch and np.dtype(dtype).kind == "u" and np.dtype(dtype).itemsize >= 4:
            return x.view(self.dt(dtype))
        return x

    def f64(self, x, dtype):
        """float64 of x whose values are of NumPy dtype `dtype` (x possibly a
        signed() view), each rounded once as a C cast rounds it."""
        dtype = np.dtype(dtype)
        if not self.torch:
            return x.astype(np.float64)
        t = self.lib
        if dtype == np.uint32:
            if self._u32_to_f64:
                try:  # one conversion kernel where PyTorch converts uint32
                    return x.view(t.uint32).to(t.float64)
                except (RuntimeError, TypeError, AttributeError):
                    Ops._u32_to_f64 = False
            return (x.to(t.int64) & 0xFFFFFFFF).to(t.float64)
        if dtype == np.uint64:
            v = x.to(t.int64)
            hi = ((v >> 32) & 0xFFFFFFFF).to(t.float64)
            lo = (v & 0xFFFFFFFF).to(t.float64)
            return hi * 4294967296.0 + lo  # hi * 2^32 is exact: one rounding
        return x.to(t.float64)

    def as_int(self, x, dtype, out_dtype):
        """x (values of NumPy integer dtype `dtype`, possibly a signed() view)
        converted to integer dtype `out_dtype`, for values that fit it."""
        dtype, out_dtype = np.dtype(dtype), np.dtype(out_dtype)
        if not self.torch:
            return x.astype(out_dtype)
        t = self.lib
        if dtype == np.uint32:
            x = x.to(t.int64) & 0xFFFFFFFF
        if out_dtype.kind == "u" and out_dtype.itemsize >= 4:
            signed = np.dtype(f"i{out_dtype.itemsize}")
            return x.to(self.dt(signed)).view(self.dt(out_dtype))
        return x.to(self.dt(out_dtype))

    def where(self, cond, a, b):
        return self.lib.where(cond, a, b)

    def where0(self, cond, x):
        """x where cond holds, else 0 of x's dtype (cond broadcasts to x)."""
        if self.torch:
            return x.masked_fill(~cond, 0)
        return self.lib.where(cond, x, x.dtype.type(0))

    def clip_lo(self, x, lo):
        """max(x, lo) elementwise for an integer array x and a Python int lo."""
        if self.torch:
            return self.lib.clamp(x, min=lo)
        return self.lib.maximum(x, lo)

    def fill_where_not(self, x, cond, value):
        """x where cond holds, else the Python number `value` (x's dtype)."""
        if self.torch:
            return x.masked_fill(~cond, value)
        return self.lib.where(cond, x, x.dtype.type(value))

    def isfinite(self, x):
        return self.lib.isfinite(x)

    def minimum(self, a, b):
        return self.lib.minimum(a, b)

    def clip(self, x, lo, hi):
        if self.torch:
            return self.lib.clamp(x, lo, hi)
        return self.lib.clip(x, lo, hi)

    def stack(self, xs):
        return self.lib.stack(xs)


def ops_for(src):
    """Ops for the library that made GPU array `src` (a _gpu._Gpu)."""
    if src.lib_name in ("cupy", "torch"):
        return Ops(src.lib, src.device)
    raise UnavailableError(f"GPU arrays of {src.lib_name or 'this library'} need CuPy or "
                           "PyTorch for this function")

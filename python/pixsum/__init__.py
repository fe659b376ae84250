"""pixsum - integral images (summed-area tables), box statistics and histograms.

A zero-copy NumPy interface to the pixsum C library:

    >>> import numpy as np, pixsum
    >>> img = np.arange(12, dtype=np.uint8).reshape(3, 4)
    >>> pixsum.integral(img)[-1, -1] == img.sum()
    True

Functions: integral, integral_sq, integral_tilted, integral3d, integral_nd, box_sum,
box_mean,
box_var, box_filter, threshold_local, normalize_local, histogram, histogram2d,
equalize, otsu, threshold_otsu,
methods, integral_dtype, version, cuda_device_count; the class
IntegralHistogram (histograms of any box in O(bins)). Each has a docstring
(help(pixsum.integral)).

Any NumPy array of a supported dtype goes in: any row or slice stride (crops,
flips, every other row) is read in place, other layouts, big-endian arrays
and bool/int8/float16/int64/uint64 through one packed copy (copy=False
refuses them instead); out= arrays are filled in place.
A stack of images is one call: integral(x, batch=True) and integral_sq(x,
batch=True) read (N, H, W), (N, H, W, C) and, with channel_axis=1, PyTorch's
(N, C, H, W) as N independent images.
The GIL is released while the library computes, so threads run in parallel.
GPU arrays (CuPy, PyTorch: __cuda_array_interface__ or DLPack) given to any
of these functions run on the GPU (the CUDA backend and the array's own
library) on the caller's stream, without a host copy, and come back as GPU
arrays of the same kind.

Errors raise subclasses of pixsum.Error, one per C status code, carrying the
library's detail text in .detail (and .status). pixsum.OverflowError and
pixsum.IOError derive from the builtins of those names; "from pixsum import *"
leaves the builtins alone and exports them as PixsumOverflowError and
PixsumIOError.
"""

from ._errors import (Error, NullError, InvalidArgumentError, BadShapeError,
                      BadStrideError, BadTypeError, OverflowError, AliasingError,
                      UnknownMethodError, UnsupportedError, NoMemoryError,
                      UnavailableError, OutOfRangeError, TooLargeError, CudaError,
                      GLError, MPIError, IOError, InternalError, PixsumOverflowError,
                      PixsumIOError)
from . import _core
from ._core import (integral, integral_sq, integral_tilted, integral3d, integral_nd, box_sum,
                    box_mean, box_var, box_filter, methods, version, integral_dtype,
                    cuda_device_count)
from ._core import integral_tile  # a tile of a grid: pixsum.dask's chunks
from ._core import threshold_local, normalize_local  # streamed on the box filter

try:  # the histogram functions need section 8 of the C library
    from ._core import histogram, histogram2d, equalize, otsu, threshold_otsu
    from ._ihist import IntegralHistogram
except ImportError:  # pragma: no cover - a library built before histograms
    pass

__version__ = _core.__version__
HAVE_CUDA = bool(_core.HAVE_CUDA)

__all__ = [
    "integral", "integral_sq", "integral_tilted", "integral3d", "integral_nd", "box_sum",
    "box_mean",
    "box_var", "box_filter", "integral_tile", "histogram", "histogram2d", "equalize", "otsu",
    "threshold_otsu", "threshold_local", "normalize_local", "IntegralHistogram", "methods",
    "integral_dtype", "version", "cuda_device_count", "HAVE_CUDA",
    "Error", "NullError", "InvalidArgumentError", "BadShapeError", "BadStrideError",
    "BadTypeError", "AliasingError", "UnknownMethodError",
    "UnsupportedError", "NoMemoryError", "UnavailableError", "OutOfRangeError",
    "TooLargeError", "CudaError", "GLError", "MPIError", "InternalError",
    # pixsum.OverflowError and pixsum.IOError (subclasses of the builtins) are
    # not in __all__, so that "from pixsum import *" keeps the builtins; these
    # aliases name the same classes.
    "PixsumOverflowError", "PixsumIOError",
]

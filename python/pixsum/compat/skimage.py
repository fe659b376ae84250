"""pixsum.compat.skimage - scikit-image's integral, histogram and threshold
functions, computed by pixsum.

Same names, signatures, return types and semantics as scikit-image 0.19
(``skimage.transform.integral_image`` / ``integrate``,
``skimage.exposure.histogram`` / ``cumulative_distribution`` /
``equalize_hist``, ``skimage.filters.threshold_otsu`` / ``threshold_sauvola``
/ ``threshold_niblack`` / ``threshold_local(method='mean')``), so that

    from pixsum.compat.skimage import integral_image, threshold_otsu

replaces the scikit-image import. This module only adapts: it resolves
scikit-image's conventions (nD tables over every axis, unit bins for integer
images, NumPy's bin edges and closed last bin, value ranges, output dtypes)
into arguments of pixsum's native functions (``integral_nd``, ``box_sum``,
``histogram``, ``equalize``, ``otsu``, ``box_filter``) and shapes their
results as scikit-image returns them. scikit-image itself is not imported.

Differences (each function's docstring has the details):
- integer results are exact where scikit-image rounds through float64
  (integrate, local means and deviations of integer images);
- ``threshold_local`` computes ``method='mean'`` only (the other methods are
  not box statistics) and the borders 'reflect', 'mirror', 'nearest',
  'constant' (not 'wrap');
- ``threshold_otsu(hist=...)`` needs integer counts (not a normalised
  histogram);
- NumPy arrays (and array-likes such as Dask arrays, read with
  ``numpy.asarray``); GPU arrays are not read by this module yet.
"""

import numbers
import warnings
from collections.abc import Iterable

import numpy as np

import pixsum

__all__ = ["integral_image", "integrate", "histogram", "cumulative_distribution",
           "equalize_hist", "threshold_otsu", "threshold_sauvola", "threshold_niblack",
           "threshold_local"]


# --------------------------------------------------------------------------
# conventions shared by the functions below

def _supported_float_type(dtype):
    """scikit-image's float type for results derived from `dtype`: float32
    for float16/float32, float64 otherwise."""
    dtype = np.dtype(dtype)
    if dtype in (np.float16, np.float32):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def _host(image, name="image"):
    """`image` as a NumPy array (Dask and other array-likes are read with
    numpy.asarray). Complex and object arrays are refused with TypeError."""
    if hasattr(image, "__cuda_array_interface__"):
        raise TypeError(f"pixsum.compat.skimage: {name} is a GPU array; this module reads "
                        "host arrays (call pixsum's native functions for GPU arrays)")
    a = np.asarray(image)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"pixsum.compat.skimage: {name} of dtype {a.dtype} is not supported "
                        "(bool, integer or float arrays)")
    return a


def _dtype_limits(dtype):
    """scikit-image's dtype_limits(clip_negative=False): the value range of an
    integer type, (False, True) for bool, (-1, 1) for floats."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return False, True
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min), int(info.max)
    return -1, 1


def _native_hist_input(a):
    """`a` with the same values in a dtype pixsum.histogram() reads: unsigned
    32/64-bit integers are widened to int64 (exact; uint64 above 2^63-1 is
    refused)."""
    if a.dtype in (np.uint32, np.uint64):
        if a.dtype == np.uint64 and a.size and int(a.max()) > np.iinfo(np.int64).max:
            raise pixsum.BadTypeError("pixsum.compat.skimage: uint64 values above 2^63-1 "
                                      "cannot be counted")
        return a.astype(np.int64)
    return a


def _flat(a):
    """`a` as a 1-D array (a view when the memory allows, else a copy)."""
    return np.ravel(a)


def _unit_bin_counts(flat, lo, hi, cumulative=False):
    """Counts of the integer values lo..hi of the 1-D integer array `flat`,
    one bin per value (pixsum.histogram over [lo, hi + 1) with unit bins),
    as int64 (NumPy's bincount type)."""
    counts = pixsum.histogram(_native_hist_input(flat), bins=hi - lo + 1,
                              range=(lo, hi + 1), cumulative=cumulative)
    return counts.astype(np.int64)


def _edge_bin_counts(flat, edges, cumulative=False):
    """np.histogram(flat, bins=edges) computed by pixsum: bin i holds
    edges[i] <= v < edges[i+1], the last bin closed, NaN and values outside
    in no bin. int64 counts."""
    counts = pixsum.histogram(flat, bins=np.asarray(edges, dtype=np.float64),
                              closed_last=True, cumulative=cumulative)
    return counts.astype(np.int64)


def _numpy_edges(a, nbins, hist_range):
    """The bin edges np.histogram(a, bins=nbins, range=hist_range) uses:
    the range (or a's min and max, widened by 0.5 when equal) split by
    np.linspace in the type NumPy resolves for them and `a`."""
    if hist_range is not None:
        first, last = hist_range
        if first > last:
            raise ValueError("max must be larger than min in range parameter.")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"supplied range of [{first}, {last}] is not finite")
    elif a.size == 0:
        first, last = 0, 1
    else:
        first, last = a.min(), a.max()
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
    if first == last:
        first = first - 0.5
        last = last + 0.5
    bin_type = np.result_type(first, last, a)
    if np.issubdtype(bin_type, np.integer):
        bin_type = np.result_type(bin_type, float)
    if not isinstance(nbins, numbers.Integral) or nbins < 1:
        raise ValueError("`bins` must be positive, when an integer")
    return np.linspace(first, last, int(nbins) + 1, endpoint=True, dtype=bin_type)


def _centers(edges):
    """Bin centres as NumPy computes them from the edges (in their dtype)."""
    return (edges[:-1] + edges[1:]) / 2.


# --------------------------------------------------------------------------
# skimage.transform

def integral_image(image, *, dtype=None):
    """Integral image / summed-area table over every axis of `image`
    (skimage.transform.integral_image): S[i, j, ...] = image[:i+1, :j+1, ...].sum().

    image: an array of any number of axes (bool, integer or float).
    dtype: the table's dtype. None follows scikit-image (NumPy's cumsum):
      float images give float64, signed integers and bool int64, unsigned
      integers uint64. An integer dtype narrower than the sums gives NumPy's
      wrapped (modular) values, as scikit-image does; a float image with an
      integer dtype is cast element-wise first, as NumPy's cumsum does.

    Returns an array of the image's shape. Computed by pixsum.integral_nd():
    integer tables are exact (modulo 2^bits for a narrow dtype); float tables
    are summed in float64 (then rounded once to a float32 / float16 dtype,
    where NumPy accumulates in that type).
    """
    a = _host(image)
    if dtype is None:
        if a.dtype.kind == "f":
            dtype = np.promote_types(a.dtype, np.float64)
        elif a.dtype.kind == "u":
            dtype = np.dtype(np.uint64)
        else:
            dtype = np.dtype(np.int64)
    dtype = np.dtype(dtype)
    if dtype.kind not in "biuf" or (dtype.kind == "f" and dtype.itemsize > 8):
        raise TypeError(f"integral_image: dtype {dtype} is not supported")
    if a.dtype.kind == "f" and dtype.kind in "biu":
        a = a.astype(dtype)  # NumPy's cumsum casts each element first
    if a.ndim == 0 or a.size == 0:
        return a.astype(dtype)
    if dtype.kind == "f":
        table = pixsum.integral_nd(a, dtype=np.float64)
    else:
        native = np.uint64 if a.dtype.kind in "bu" else np.int64
        table = pixsum.integral_nd(a, dtype=native, wrap=True)
    return table if table.dtype == dtype else table.astype(dtype)


def integrate(ii, start, end):
    """Sums of windows read from an integral image
    (skimage.transform.integrate): the sum of the image over
    start[k] <= index <= end[k] (inclusive corners) for each window k.

    ii: an inclusive table from integral_image(), 1-D, 2-D or 3-D.
    start, end: one tuple of ii.ndim indices or a list of them; negative
      indices count from the end.

    Returns a float64 array of one sum per window. Raises IndexError when an
    end lies before its start or a corner lies outside the table. Computed
    by pixsum.box_sum() (integer tables exactly, then converted to float64);
    tables of 4 or more axes raise NotImplementedError (pixsum's box queries
    are 2-D and 3-D).
    """
    table = _host(ii, "ii")
    start = np.atleast_2d(np.array(start))
    end = np.atleast_2d(np.array(end))
    if start.shape != end.shape or start.ndim != 2 or start.shape[1] != table.ndim:
        raise ValueError(f"integrate: start and end must hold {table.ndim} coordinates per "
                         f"window, got shapes {start.shape} and {end.shape}")
    if table.ndim > 3:
        raise NotImplementedError("integrate: pixsum's box sums read 1-D, 2-D and 3-D tables")
    shape = np.array(table.shape)
    start = np.where(start < 0, start + shape, start).astype(np.int64)
    end = np.where(end < 0, end + shape, end).astype(np.int64)
    if np.any(end - start < 0):
        raise IndexError("end coordinates must be greater or equal to start")
    if np.any(start < 0) or np.any(end >= shape):
        raise IndexError(f"integrate: a window lies outside the table of shape {table.shape}")
    if table.dtype.kind == "f" and table.dtype not in (np.float32, np.float64):
        table = table.astype(np.float64)
    elif table.dtype.kind in "biu" and table.dtype not in (np.uint32, np.uint64, np.int64):
        table = table.astype(np.int64 if table.dtype.kind == "i" else np.uint64)
    size = end - start + 1
    if table.ndim == 1:
        table = table.reshape(1, -1)
        boxes = np.stack([start[:, 0], np.zeros_like(start[:, 0]), size[:, 0],
                          np.ones_like(size[:, 0])], axis=1)
    elif table.ndim == 2:  # (row, col) -> (x, y, w, h)
        boxes = np.stack([start[:, 1], start[:, 0], size[:, 1], size[:, 0]], axis=1)
    else:  # (plane, row, col) -> (x, y, z, w, h, d)
        boxes = np.stack([start[:, 2], start[:, 1], start[:, 0],
                          size[:, 2], size[:, 1], size[:, 0]], axis=1)
    sums = pixsum.box_sum(np.ascontiguousarray(table), boxes)
    return np.asarray(sums, dtype=np.float64).reshape(-1)


# --------------------------------------------------------------------------
# skimage.exposure

def _warn_color(image):
    if image.ndim == 3 and image.shape[-1] < 4:
        warnings.warn("This might be a color image. The histogram will be computed on the "
                      "flattened image. You can instead apply this function to each color "
                      "channel, or set channel_axis.", stacklevel=3)


def _histogram_one(a, nbins, source_range, cumulative=False):
    """(counts, centres) of one flattened channel, scikit-image's rules."""
    flat = _flat(a)
    if np.issubdtype(a.dtype, np.integer):
        if source_range == "image":
            lo, hi = (int(flat.min()), int(flat.max())) if flat.size else (0, 0)
        else:
            lo, hi = _dtype_limits(a.dtype)
        centers = np.arange(lo, hi + 1)
        if flat.size == 0:
            return np.zeros(centers.size, np.int64), centers
        return _unit_bin_counts(flat, lo, hi, cumulative), centers
    hist_range = None if source_range == "image" else _dtype_limits(a.dtype)
    edges = _numpy_edges(flat, nbins, hist_range)
    if flat.size == 0:
        return np.zeros(edges.size - 1, np.int64), _centers(edges)
    return _edge_bin_counts(flat, edges, cumulative), _centers(edges)


def histogram(image, nbins=256, source_range='image', normalize=False, *,
              channel_axis=None):
    """Histogram of an image and its bin centres (skimage.exposure.histogram).

    Integer images get one bin per integer value (nbins is ignored), from
    the image's minimum to its maximum (source_range='image') or over the
    dtype's whole range ('dtype'). Float images get nbins bins with NumPy's
    edges (np.histogram: over [min, max], or [-1, 1] for 'dtype'; the last
    bin closed). With channel_axis, every channel is counted with the same
    bins (from the whole image) and hist has one row per channel.

    Returns (hist, bin_centers): int64 counts (float64 with normalize=True,
    each channel divided by its own total) and the centres (integers for
    integer images; for float images in the edges' dtype). Counted by
    pixsum.histogram() (unit bins, or NumPy's edges with closed_last).
    Raises ValueError for an unknown source_range or a non-finite range.
    """
    if source_range not in ("image", "dtype"):
        raise ValueError(f"Incorrect value for `source_range` argument: {source_range}")
    a = _host(image)
    if a.dtype.kind == "b":
        raise TypeError("histogram: bool images are not supported (NumPy's histogram "
                        "refuses them too)")
    if channel_axis is None:
        _warn_color(a)
        hist, centers = _histogram_one(a, nbins, source_range)
        if normalize:
            hist = hist / np.sum(hist)
        return hist, centers
    a = np.moveaxis(a, channel_axis, -1)
    rows = []
    if np.issubdtype(a.dtype, np.integer):
        if source_range == "image":
            lo, hi = int(a.min()), int(a.max())
        else:
            lo, hi = _dtype_limits(a.dtype)
        centers = np.arange(lo, hi + 1)
        for c in range(a.shape[-1]):
            rows.append(_unit_bin_counts(_flat(a[..., c]), lo, hi))
    else:
        hist_range = None if source_range == "image" else _dtype_limits(a.dtype)
        edges = _numpy_edges(a, nbins, hist_range)
        centers = _centers(edges)
        for c in range(a.shape[-1]):
            rows.append(_edge_bin_counts(_flat(a[..., c]), edges))
    if normalize:
        rows = [r / np.sum(r) for r in rows]
    return np.stack(rows, axis=0), np.asarray(centers)


def cumulative_distribution(image, nbins=256):
    """Cumulative distribution of an image's values and the bin centres
    (skimage.exposure.cumulative_distribution): the cumulative histogram of
    histogram(image, nbins) divided by its last value, as float32 for
    float16/float32 images, else float64.

    Computed by pixsum.histogram(..., cumulative=True).
    """
    a = _host(image)
    _warn_color(a)
    if a.dtype.kind == "b":
        raise TypeError("cumulative_distribution: bool images are not supported")
    cum, centers = _histogram_one(a, nbins, "image", cumulative=True)
    cdf = cum / float(cum[-1])
    return cdf.astype(_supported_float_type(a.dtype), copy=False), centers


def _as_unsigned_levels(a):
    """An integer image as uint8/uint16 with the same order of values, for
    pixsum.equalize()'s unit bins: signed 8/16-bit images shifted by their
    type's minimum, wider ones by their own minimum when their values span
    at most 65536 integers."""
    if a.dtype in (np.uint8, np.uint16):
        return a
    if a.dtype == np.int8:
        return (a.astype(np.int16) + 128).astype(np.uint8)
    if a.dtype == np.int16:
        return (a.astype(np.int32) + 32768).astype(np.uint16)
    lo, hi = int(a.min()), int(a.max())
    if hi - lo > 65535:
        raise NotImplementedError("equalize_hist: pixsum equalises integer images whose "
                                  "values span at most 65536 integers")
    return (a - lo).astype(np.uint16) if a.dtype.kind == "i" or lo >= 0 else a


def equalize_hist(image, nbins=256, mask=None):
    """Histogram equalisation (skimage.exposure.equalize_hist): every pixel
    becomes the cumulative distribution of the selected pixels (all, or where
    `mask` is true), interpolated at its value between the bin centres.

    Integer images use one bin per integer (nbins is ignored), float images
    nbins bins over their [min, max]. The whole array is one channel.
    Returns float32 for float16/float32 images, else float64, of the image's
    shape. Computed by pixsum.equalize() (its scikit-image mode: float
    images with nbins, integer images with a float dtype). Differences: NaN
    samples are left out of the histogram (scikit-image raises ValueError);
    the bin edges are float64 where scikit-image's are in the image's float
    type, so a float32 sample next to an edge, or many float16 samples
    (scikit-image's float16 edges have 3 digits), can fall in a neighbouring
    bin (results within about 1e-3 for float16).
    """
    a = _host(image)
    out_type = _supported_float_type(a.dtype)
    shape = a.shape
    flat = np.ascontiguousarray(a).reshape(1, -1)
    m = None
    if mask is not None:
        m = np.array(mask, dtype=bool)
        if m.shape != shape:
            raise ValueError(f"equalize_hist: mask of shape {m.shape} for an image of "
                             f"shape {shape}")
        m = np.ascontiguousarray(m).reshape(1, -1)
    if a.dtype.kind == "f":
        src = flat if a.dtype != np.float16 else flat.astype(np.float32)
        out = pixsum.equalize(src, mask=m, nbins=nbins)
    else:
        src = _as_unsigned_levels(flat.astype(np.uint8) if a.dtype.kind == "b" else flat)
        out = pixsum.equalize(src, mask=m, dtype=out_type.name)
    return out.reshape(shape).astype(out_type, copy=False)


# --------------------------------------------------------------------------
# skimage.filters

def threshold_otsu(image=None, nbins=256, *, hist=None):
    """Otsu's threshold (skimage.filters.threshold_otsu): the bin centre that
    maximises the between-class variance; the foreground is image > value.

    image: a gray image of any number of axes (a warning for shapes that look
      like RGB(A)); integer images use one bin per integer, float images
      nbins bins over [min, max] (NumPy's edges). A constant image returns
      its value.
    hist: instead of the image, counts, or (counts, bin_centers); counts
      must hold integers (pixsum's Otsu is exact on counts; a normalised
      histogram raises ValueError). Without centres the bin index is returned.

    Returns the centre of the lower class's last bin, in the centres' type.
    Raises ValueError when neither image nor hist is given or fewer than two
    bins are non-empty. The counts come from pixsum.histogram(), the bin
    from pixsum.otsu() (ties: the lowest bin, as NumPy's argmax).
    """
    if image is None and hist is None:
        raise ValueError("Either image or hist must be provided.")
    if image is not None:
        a = _host(image)
        if a.ndim > 2 and a.shape[-1] in (3, 4):
            warnings.warn(f"threshold_otsu is expected to work correctly only for grayscale "
                          f"images; image shape {a.shape} looks like that of an RGB image.",
                          stacklevel=2)
        first = a.ravel()[0]
        if np.all(a == first):
            return first
    if hist is not None:
        if isinstance(hist, (tuple, list)):
            counts, centers = hist
        else:
            counts = hist
            centers = np.arange(np.asarray(counts).size)
        counts = np.asarray(counts)
        centers = np.asarray(centers)
    else:
        counts, centers = _histogram_one(_flat(a), nbins, "image")
    if counts.dtype.kind == "f":
        if not np.all(np.isfinite(counts)) or np.any(counts != np.round(counts)):
            raise ValueError("threshold_otsu: pixsum's Otsu reads integer counts; this "
                             "histogram holds fractions (give the counts, not normalize=True)")
    if np.any(counts < 0):
        raise ValueError("threshold_otsu: counts must not be negative")
    t = pixsum.otsu(np.ascontiguousarray(counts, dtype=np.uint64))
    return centers[t]


def _window(window_size, ndim, name="window_size"):
    """scikit-image's window: one odd size per axis."""
    if not isinstance(window_size, Iterable):
        window_size = (window_size,) * ndim
    window = tuple(int(w) for w in window_size)
    if len(window) != ndim:
        raise ValueError(f"len({name}) must equal image.ndim.")
    if any(w % 2 == 0 for w in window):
        raise ValueError(f"Window size for `threshold_sauvola` or `threshold_niblack` must "
                         f"not be even on any dimension. Got {window}")
    if any(w < 1 for w in window):
        raise ValueError(f"{name} must be positive, got {window}")
    return window


def _box_mean_nd(a, window, border, cval=0.0):
    """Window means of an array of any number of axes, one axis at a time
    (pixsum.box_filter over (n_axis, rest) views with a (k, 1) window), in
    float64. The box is separable, so this is the nD box mean with the
    border applied on each axis (scipy.ndimage.uniform_filter's order)."""
    out = a
    for axis, k in enumerate(window):
        if k == 1:
            continue
        moved = np.moveaxis(out, axis, 0)
        two_d = np.ascontiguousarray(moved).reshape(moved.shape[0], -1)
        kw = {"cval": cval} if border == "constant" else {}
        res = pixsum.box_filter(two_d, (k, 1), stat="mean", border=border,
                                dtype=np.float64, **kw)
        out = np.moveaxis(res.reshape(moved.shape), 0, axis)
    return out if out is not a else a.astype(np.float64)


def _mean_std(a, window):
    """Local mean and standard deviation over `window` with NumPy's 'reflect'
    border (OpenCV's reflect101), as scikit-image's _mean_std: float64."""
    if a.ndim == 2:
        m = pixsum.box_filter(a, window, stat="mean", border="reflect101", dtype=np.float64)
        s = pixsum.box_filter(a, window, stat="std", border="reflect101", dtype=np.float64)
        return m, s
    # nD: means of x and of x^2, one axis at a time
    x = a.astype(np.float64)
    m = _box_mean_nd(x, window, "reflect101")
    m2 = _box_mean_nd(x * x, window, "reflect101")
    return m, np.sqrt(np.clip(m2 - m * m, 0, None))


def _native_local(a, window, **kwargs):
    """The float64 map of pixsum.threshold_local() for a 2-D image, or None
    where it does not apply (other shapes, an input type it does not read:
    the callers then use pixsum.box_filter())."""
    fn = getattr(pixsum, "threshold_local", None)
    if fn is None or a.ndim != 2:
        return None
    try:
        return fn(a, window, dtype=np.float64, **kwargs)
    except pixsum.BadTypeError:
        return None


def threshold_niblack(image, window_size=15, k=0.2):
    """Niblack's local threshold (skimage.filters.threshold_niblack):
    T = m - k * s, with m and s the mean and standard deviation of the
    window around each pixel (odd window_size, one per axis or one for all),
    the image mirrored at its borders (NumPy's 'reflect', OpenCV's
    reflect101).

    Returns T, float32 for float16/float32 images, else float64. m and s
    come from pixsum's box filter (exact integer sums for integer images, so
    T can differ from scikit-image's float64 rounding by a few ulps);
    arrays of 3 or more axes are filtered one axis at a time.
    """
    a = _host(image)
    window = _window(window_size, a.ndim)
    out_type = _supported_float_type(a.dtype)
    t = _native_local(a, window, method="niblack", k=-k, border="reflect101")
    if t is None:
        m, s = _mean_std(a, window)
        t = m - k * s
    return t.astype(out_type, copy=False)


def threshold_sauvola(image, window_size=15, k=0.2, r=None):
    """Sauvola's local threshold (skimage.filters.threshold_sauvola):
    T = m * (1 + k * (s / r - 1)), with m and s as threshold_niblack's and
    r (None) half the range of the image's dtype (127.5 for uint8, 1 for
    floats).

    Returns T, float32 for float16/float32 images, else float64; computed as
    threshold_niblack's m and s.
    """
    a = _host(image)
    window = _window(window_size, a.ndim)
    out_type = _supported_float_type(a.dtype)
    if r is None:
        lo, hi = _dtype_limits(a.dtype)
        r = 0.5 * (float(hi) - float(lo))
    t = _native_local(a, window, method="sauvola", k=k, r=r, border="reflect101")
    if t is None:
        m, s = _mean_std(a, window)
        t = m * (1 + k * ((s / r) - 1))
    return t.astype(out_type, copy=False)


_SCIPY_BORDERS = {"reflect": "reflect", "grid-mirror": "reflect", "mirror": "reflect101",
                  "nearest": "replicate", "constant": "constant"}


def threshold_local(image, block_size=3, method='gaussian', offset=0, mode='reflect',
                    param=None, cval=0):
    """Local threshold (skimage.filters.threshold_local) with method='mean':
    T = the mean of the block around each pixel (scipy.ndimage.uniform_filter
    with `mode` and `cval`) minus offset. block_size: odd, one per axis or one
    for all.

    mode: 'reflect' (the default: cba|abc|cba, OpenCV's BORDER_REFLECT),
      'mirror' (reflect101), 'nearest', 'constant' (cval); 'wrap' raises
      NotImplementedError.
    method: only 'mean' is computed by pixsum; 'gaussian' (scikit-image's
      default), 'median' and 'generic' raise NotImplementedError: pass
      method='mean', or use scikit-image for those.

    Returns T, float32 for float16/float32 images, else float64. Means come
    from pixsum.box_filter (2-D images in one pass, other arrays one axis at
    a time). Raises ValueError for a block size of the wrong length or an
    even one, or an unknown method.
    """
    a = _host(image)
    if np.isscalar(block_size):
        block_size = (block_size,) * a.ndim
    elif len(block_size) != a.ndim:
        raise ValueError("len(block_size) must equal image.ndim.")
    block_size = tuple(int(b) for b in block_size)
    if any(b % 2 == 0 for b in block_size):
        raise ValueError(f"block_size must be odd! Given block_size {block_size} contains "
                         f"even values.")
    if method not in ("generic", "gaussian", "mean", "median"):
        raise ValueError("Invalid method specified. Please use `generic`, `gaussian`, "
                         "`mean`, or `median`.")
    if method != "mean":
        raise NotImplementedError(f"pixsum.compat.skimage.threshold_local computes "
                                  f"method='mean' (a box statistic), not {method!r}")
    if mode not in _SCIPY_BORDERS:
        raise NotImplementedError(f"threshold_local: mode {mode!r} is not a pixsum border "
                                  f"(reflect, mirror, nearest, constant)")
    border = _SCIPY_BORDERS[mode]
    out_type = _supported_float_type(a.dtype)
    a = a.astype(out_type, copy=False)  # scikit-image filters the float image
    t = None
    if border != "constant":
        t = _native_local(a, block_size, method="mean", offset=offset, border=border)
    if t is None:
        if a.ndim == 2:
            kw = {"cval": cval} if border == "constant" else {}
            m = pixsum.box_filter(a, block_size, stat="mean", border=border,
                                  dtype=np.float64, **kw)
        else:
            m = _box_mean_nd(a, block_size, border, cval)
        t = m - offset
    return t.astype(out_type, copy=False)

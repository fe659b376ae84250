"""pixsum.compat.cv2 - OpenCV's integral images, uniform histograms and
histogram equalisation, computed by pixsum.

Same names, arguments, layouts and result types as OpenCV 4's Python
functions ``cv2.integral``, ``cv2.integral2``, ``cv2.integral3``,
``cv2.calcHist`` (uniform ranges) and ``cv2.equalizeHist``, so that

    from pixsum.compat import cv2

replaces ``import cv2`` for these calls. The module only adapts: OpenCV's
depth codes and defaults (sdepth/sqdepth, CV_32S included), its (H+1, W+1[, C])
padded layout, its float32 ranges and (bins, 1) float32 histograms, and its
equalisation rounding are mapped onto pixsum's native functions
(``integral(padded=True)``, ``integral_sq``, ``integral_tilted``,
``histogram``, ``histogram2d``, ``histogram(cumulative=True)``). OpenCV itself
is not imported.

Deliberate differences (the functions' docstrings repeat them):
- an integer table that could overflow is refused (pixsum.OverflowError)
  where OpenCV silently wraps: CV_32S tables hold at most 2^31 - 1, so a
  uint8 image gets a CV_32S sum table up to 8 421 504 pixels and a CV_32S
  squared table up to 33 025 pixels;
- calcHist puts a value that lies on a bin edge into the bin the edges
  lo + i * (hi - lo) / bins define, where OpenCV's float formula
  floor(v * bins / (hi - lo) - lo * bins / (hi - lo)) can put it in the bin
  below; for 8-bit and 16-bit images with integer ranges that the bin count
  divides, both give the same counts;
- float tables (CV_32F, CV_64F sums of float images) are summed in another
  order than OpenCV's, so they agree within rounding, not bit for bit.
"""

import numpy as np

import pixsum

__all__ = ["integral", "integral2", "integral3", "calcHist", "equalizeHist",
           "CV_8U", "CV_8S", "CV_16U", "CV_16S", "CV_32S", "CV_32F", "CV_64F"]

CV_8U, CV_8S, CV_16U, CV_16S, CV_32S, CV_32F, CV_64F = range(7)

_DEPTH_OF = {np.dtype(np.uint8): CV_8U, np.dtype(np.int8): CV_8S,
             np.dtype(np.uint16): CV_16U, np.dtype(np.int16): CV_16S,
             np.dtype(np.int32): CV_32S, np.dtype(np.float32): CV_32F,
             np.dtype(np.float64): CV_64F}
_DTYPE_OF = {CV_32S: np.dtype(np.int32), CV_32F: np.dtype(np.float32),
             CV_64F: np.dtype(np.float64)}
_NAME = {CV_8U: "CV_8U", CV_8S: "CV_8S", CV_16U: "CV_16U", CV_16S: "CV_16S",
         CV_32S: "CV_32S", CV_32F: "CV_32F", CV_64F: "CV_64F"}

# (input depth) -> the (sdepth, sqdepth) pairs OpenCV 4's integral accepts
_PAIRS = {
    CV_8U: {(CV_32S, CV_64F), (CV_32S, CV_32S), (CV_32S, CV_32F), (CV_32F, CV_64F),
            (CV_32F, CV_32F), (CV_64F, CV_64F)},
    CV_16U: {(CV_64F, CV_64F)},
    CV_16S: {(CV_64F, CV_64F)},
    CV_32F: {(CV_32F, CV_64F), (CV_32F, CV_32F), (CV_64F, CV_64F)},
    CV_64F: {(CV_64F, CV_64F)},
}
_INT32_MAX = 2 ** 31 - 1


def _image(src, name="src"):
    """src as a NumPy array of shape (H, W) or (H, W, C); GPU arrays and
    other shapes are refused."""
    if hasattr(src, "__cuda_array_interface__"):
        raise TypeError(f"pixsum.compat.cv2: {name} is a GPU array; this module reads host "
                        "arrays (use pixsum.integral() for GPU arrays)")
    a = np.asarray(src)
    if a.ndim not in (2, 3) or a.size == 0:
        raise pixsum.BadShapeError(f"pixsum.compat.cv2: {name} must be a non-empty (H, W) or "
                                   f"(H, W, C) array, got shape {a.shape}")
    if a.dtype not in _DEPTH_OF:
        raise pixsum.BadTypeError(f"pixsum.compat.cv2: {name} of dtype {a.dtype} has no "
                                  "OpenCV depth")
    return a


def _depths(a, sdepth, sqdepth):
    """OpenCV's resolution of sdepth and sqdepth for image a: <= 0 picks the
    default (CV_32S for 8-bit images, else CV_64F; CV_64F for squares), a
    type code keeps its depth. Raises pixsum.BadTypeError for a pair OpenCV
    does not compute."""
    depth = _DEPTH_OF[a.dtype]
    sdepth = int(sdepth)
    sqdepth = int(sqdepth)
    if sdepth <= 0:
        sdepth = CV_32S if depth == CV_8U else CV_64F
    if sqdepth <= 0:
        sqdepth = CV_64F
    sdepth &= 7
    sqdepth &= 7
    if (sdepth, sqdepth) not in _PAIRS.get(depth, ()):
        raise pixsum.BadTypeError(
            f"pixsum.compat.cv2: OpenCV has no integral of {_NAME.get(depth)} images into "
            f"sum {_NAME.get(sdepth, sdepth)} and squares {_NAME.get(sqdepth, sqdepth)}")
    return sdepth, sqdepth


def _check_int32(a, squared):
    """Refuses a CV_32S table that could overflow for this image size."""
    pixels = a.shape[0] * a.shape[1]
    worst = pixels * (255 * 255 if squared else 255)
    if worst > _INT32_MAX:
        what = "squared" if squared else "sum"
        raise pixsum.OverflowError(
            f"pixsum.compat.cv2: a CV_32S {what} table of {pixels} uint8 pixels can reach "
            f"{worst} > 2^31 - 1 (OpenCV would wrap); ask for CV_64F")


def _per_channels(a, fn):
    """fn applied to a (at most 4 channels) or, for more channels, to each
    channel, the results stacked on the last axis (tuples element-wise)."""
    if a.ndim == 2 or a.shape[2] <= 4:
        return fn(a)
    parts = [fn(a[:, :, c]) for c in range(a.shape[2])]
    if isinstance(parts[0], tuple):
        return tuple(np.stack([p[i] for p in parts], axis=-1) for i in range(len(parts[0])))
    return np.stack(parts, axis=-1)


def _squeeze(table, a):
    """OpenCV returns (H+1, W+1) for one channel, (H+1, W+1, C) otherwise."""
    if a.ndim == 3 and a.shape[2] == 1:
        return table.reshape(table.shape[0], table.shape[1])
    return table


def _method(a, depth):
    """pixsum's method for a float table: 'serial.2wh' adds in OpenCV's order
    (each row's running sum added to the entry above), so float tables equal
    OpenCV's bit for bit; integer tables are exact with any method."""
    if depth == CV_32F or (depth == CV_64F and a.dtype.kind == "f"):
        return "serial.2wh"
    return "auto"


def _sum_table(a, sdepth):
    """The padded sum table of a in OpenCV's sdepth."""
    if sdepth == CV_32S:
        _check_int32(a, False)
        return pixsum.integral(a, dtype=np.uint32, padded=True).view(np.int32)
    return pixsum.integral(a, dtype=_DTYPE_OF[sdepth], padded=True,
                           method=_method(a, sdepth))


def _sq_table(a, sqdepth):
    """The padded table of squares of a in OpenCV's sqdepth."""
    if sqdepth == CV_32S:
        _check_int32(a, True)
        return pixsum.integral_sq(a, dtype=np.uint32, sq_dtype=np.uint32,
                                  padded=True)[1].view(np.int32)
    return pixsum.integral_sq(a, dtype=np.float64, sq_dtype=_DTYPE_OF[sqdepth],
                              padded=True, method=_method(a, sqdepth))[1]


def _tilted_table(a, sdepth):
    """OpenCV's padded 45-degree table of a in sdepth."""
    if sdepth == CV_32S:
        _check_int32(a, False)
        return pixsum.integral_tilted(a, dtype=np.uint32).view(np.int32)
    return pixsum.integral_tilted(a, dtype=_DTYPE_OF[sdepth], method=_method(a, sdepth))


def integral(src, sum=None, sdepth=-1):
    """cv2.integral(src[, sum[, sdepth]]) -> sum: the padded integral image,
    (H+1, W+1) or (H+1, W+1, C), with a leading row and column of zeros.

    src: uint8, uint16, int16, float32 or float64, (H, W) or (H, W, C).
    sdepth: -1 (CV_32S for uint8, else CV_64F), CV_32S (uint8 only), CV_32F
      (uint8, float32) or CV_64F; other pairs raise pixsum.BadTypeError.
    sum: an array to fill (OpenCV's output argument); the result is
      returned either way.

    Computed by pixsum.integral(padded=True). Integer tables are exact; a
    CV_32S table that could exceed 2^31 - 1 raises pixsum.OverflowError
    (OpenCV wraps).
    """
    a = _image(src)
    sdepth, _ = _depths(a, sdepth, -1)
    table = _squeeze(_per_channels(a, lambda x: _sum_table(x, sdepth)), a)
    return _into(sum, table)


def integral2(src, sum=None, sqsum=None, sdepth=-1, sqdepth=-1):
    """cv2.integral2(src[, sum[, sqsum[, sdepth[, sqdepth]]]]) -> sum, sqsum:
    the padded tables of src and of its squares.

    sqdepth: -1 (CV_64F), CV_32S or CV_32F (uint8 images, with a CV_32S or
      CV_32F sum as OpenCV allows) or CV_64F. Other arguments as integral().
    Computed by pixsum.integral() and pixsum.integral_sq(); a CV_32S table
    that could exceed 2^31 - 1 raises pixsum.OverflowError (OpenCV wraps).
    """
    a = _image(src)
    sdepth, sqdepth = _depths(a, sdepth, sqdepth)
    t = _per_channels(a, lambda x: (_sum_table(x, sdepth), _sq_table(x, sqdepth)))
    return _into(sum, _squeeze(t[0], a)), _into(sqsum, _squeeze(t[1], a))


def integral3(src, sum=None, sqsum=None, tilted=None, sdepth=-1, sqdepth=-1):
    """cv2.integral3(src[, sum[, sqsum[, tilted[, sdepth[, sqdepth]]]]])
    -> sum, sqsum, tilted: integral2()'s tables and OpenCV's 45-degree
    tilted table (in sdepth), computed by pixsum.integral_tilted().
    """
    a = _image(src)
    sdepth, sqdepth = _depths(a, sdepth, sqdepth)
    t = _per_channels(a, lambda x: (_sum_table(x, sdepth), _sq_table(x, sqdepth),
                                    _tilted_table(x, sdepth)))
    return (_into(sum, _squeeze(t[0], a)), _into(sqsum, _squeeze(t[1], a)),
            _into(tilted, _squeeze(t[2], a)))


def _into(dst, result):
    """OpenCV's output arguments: fill dst when it has the result's shape and
    dtype; the result is returned either way."""
    if isinstance(dst, np.ndarray) and dst.shape == result.shape and dst.dtype == result.dtype:
        dst[...] = result
        return dst
    return result


def _channel_plane(images, index):
    """The 2-D plane of channel `index` counted across the list of images,
    as calcHist numbers them (image 0's channels first)."""
    k = int(index)
    for img in images:
        c = 1 if img.ndim == 2 else img.shape[2]
        if k < c:
            return img if img.ndim == 2 else img[:, :, k]
        k -= c
    raise pixsum.InvalidArgumentError(f"calcHist: channel {index} is beyond the images' "
                                      "channels")


def calcHist(images, channels, mask, histSize, ranges, hist=None, accumulate=False):
    """cv2.calcHist(images, channels, mask, histSize, ranges[, hist[,
    accumulate]]) -> hist, for uniform bins (1-D and 2-D histograms).

    images: a list of uint8, uint16 or float32 arrays of one size, (H, W)
      or (H, W, C); channels numbers their channels in order.
    mask: None or a uint8/bool array (H, W); only non-zero pixels count.
    histSize: bins per dimension; ranges: [lo, hi] per dimension, read as
      OpenCV's float32 values; values outside [lo, hi) are not counted.
    hist, accumulate: with accumulate=True the counts are added to hist.

    Returns float32 counts, (histSize[0], 1) for one dimension, (h0, h1) for
    two. Counted by pixsum.histogram() / histogram2d(). Difference: a value
    on a bin edge lo + i * (hi - lo) / bins is counted in bin i, where
    OpenCV's float formula can count it in bin i - 1 (no difference for
    8/16-bit images with integer ranges that histSize divides).
    Non-uniform ranges and 3 or more dimensions raise NotImplementedError.
    """
    imgs = [_image(i, "images[k]") for i in images]
    for i in imgs:
        if i.dtype not in (np.uint8, np.uint16, np.float32):
            raise pixsum.BadTypeError(f"calcHist: images of dtype {i.dtype}; OpenCV counts "
                                      "uint8, uint16 and float32")
        if i.shape[:2] != imgs[0].shape[:2]:
            raise pixsum.BadShapeError("calcHist: the images must have one size")
    channels = [int(c) for c in channels]
    sizes = [int(s) for s in np.atleast_1d(histSize)]
    dims = len(channels)
    if dims != len(sizes) or dims < 1:
        raise pixsum.InvalidArgumentError("calcHist: one histSize per channel")
    if dims > 2:
        raise NotImplementedError("pixsum.compat.cv2.calcHist counts 1-D and 2-D histograms")
    flat = np.asarray(ranges, dtype=np.float64).reshape(-1)
    if flat.size != 2 * dims:
        raise NotImplementedError("calcHist: only uniform ranges ([lo, hi] per dimension)")
    lohi = [(float(np.float32(flat[2 * d])), float(np.float32(flat[2 * d + 1])))
            for d in range(dims)]
    planes = [_channel_plane(imgs, c) for c in channels]
    m = None
    if mask is not None:
        m = np.asarray(mask)
        if m.shape != imgs[0].shape[:2]:
            raise pixsum.BadShapeError("calcHist: the mask must have the images' size")
        m = m.astype(np.uint8, copy=False) if m.dtype != np.bool_ else m
    if dims == 1:
        counts = pixsum.histogram(np.ascontiguousarray(planes[0]), bins=sizes[0],
                                  range=lohi[0], mask=m)
        result = counts.astype(np.float32).reshape(sizes[0], 1)
    else:
        counts = pixsum.histogram2d(np.ascontiguousarray(planes[0]),
                                    np.ascontiguousarray(planes[1]), bins=tuple(sizes),
                                    range=tuple(lohi), mask=m)
        result = counts.astype(np.float32)
    if accumulate and hist is not None:
        prev = np.asarray(hist, dtype=np.float32).reshape(result.shape)
        result = result + prev
    if isinstance(hist, np.ndarray) and hist.shape == result.shape and hist.dtype == np.float32:
        hist[...] = result
        return hist
    return result


def equalizeHist(src, dst=None):
    """cv2.equalizeHist(src[, dst]) -> dst: histogram equalisation of a
    one-channel uint8 image, with OpenCV's arithmetic.

    With h the histogram, i0 its first non-empty bin and n the pixel count,
    value v maps to round(float32(cdf[v] - h[i0]) * float32(255 / (n - h[i0])))
    (float32 product, rounded half to even as cvRound), 0 for v <= i0; an
    image of one value is returned unchanged. The cumulative histogram is
    pixsum.histogram(cumulative=True); only the 256-entry table is built here.
    pixsum.equalize() itself rounds the exact quotient half up, which can
    differ from OpenCV by one level.
    """
    a = _image(src)
    if a.dtype != np.uint8 or a.ndim != 2:
        raise pixsum.BadTypeError("equalizeHist: OpenCV equalises one-channel uint8 images "
                                  f"(got {a.dtype}, shape {a.shape})")
    cdf = pixsum.histogram(a, bins=256, range=(0, 256), cumulative=True).astype(np.int64)
    total = int(cdf[-1])
    first = int(np.argmax(cdf > 0))
    lowest = int(cdf[first])
    if lowest == total:
        out = a.copy()
    else:
        scale = np.float32(255.0) / np.float32(total - lowest)
        lut = np.rint((cdf - lowest).astype(np.float32) * scale)
        lut[:first + 1] = 0
        out = np.clip(lut, 0, 255).astype(np.uint8)[a]
    return _into(dst, out)

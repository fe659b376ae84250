"""pixsum._gpu_hist - histogram, histogram2d, equalize and threshold_otsu of GPU arrays.

The C extension hands these calls here when the image is a GPU array (via
pixsum._gpu.dispatch). Counting runs in the library's CUDA kernels
(pixsum_cuda_histogram / _histogram_joint, then pixsum_cuda_hist_cumulative /
_relative) on the caller's stream, into result arrays allocated with the
input's own library; the counts equal the CPU's bit for bit.

Bins and ranges are resolved by the CPU library itself (pixsum_hist_resolve,
nothing counted), on a two-sample proxy image holding the data's extremes, so
every default and every refusal is the CPU's. Only the data-range default of
int32/float32/float64 images (no `range=` given) needs the data: its minimum
and maximum are reduced on the device and read back (one synchronisation).
uint8/uint16/int16 defaults and given ranges need none.

Synchronisations, all documented in the docstrings: info=True (the counts of
below/above/NaN samples, and for histogram2d the table's entropies, are
returned as Python numbers), GPU boxes aside, and the data-range default above.

equalize: pixsum_cuda_equalize() (histogram, cumulative sums, each channel's
table, mapping: four kernels on the stream, the CPU's values bit for bit), into
a new array of the input's library or into out= (which may be the image).
"""

import builtins
import operator

import numpy as np

from . import _core, _gpu_base as _gpu
from ._errors import BadShapeError, BadStrideError, BadTypeError, InvalidArgumentError, \
    TooLargeError, UnknownMethodError, UnsupportedError
from ._gpu_box import _c_contiguous, _check_layout, _gpu_array, _shape_text
from ._gpu_ops import ops_for

_DATA_RANGE_TYPES = tuple(np.dtype(t) for t in (np.int32, np.float32, np.float64))
_SCAN_TILE = 8192  # values per block of the device scan (hist_post.cu)
builtins_range = builtins.range  # `range` is a keyword argument's name here


def _hist_args(image, *, bins=None, range=None, mask=None, relative=False, cumulative=False,
               of_all_samples=False, channels=True, method="auto", threads=0, out=None,
               info=False, batch=False, range_per_image=False, channel_axis=None):
    return (image, bins, range, mask, bool(relative), bool(cumulative), bool(of_all_samples),
            bool(channels), method, out, bool(info), bool(batch), bool(range_per_image),
            channel_axis)


def _joint_args(a, b, *, bins=None, range=None, mask=None, method="auto", threads=0, out=None,
                info=False):
    return a, b, bins, range, mask, method, out, bool(info)


def _eq_args(image, *, mask=None, channels=True, method="auto", threads=0, out=None):
    return image, mask, bool(channels), method, out


def _otsu_args(image, *, bins=None, range=None, mask=None, method="auto", threads=0,
               info=False):
    return image, bins, range, mask, method, bool(info)


def dispatch(name, args, kwargs):
    """Runs pixsum.<name> for GPU arrays; called by pixsum._gpu.dispatch()."""
    if name == "histogram":
        return histogram(*_hist_args(*args, **kwargs))
    if name == "histogram2d":
        return histogram2d(*_joint_args(*args, **kwargs))
    if name == "threshold_otsu":
        return threshold_otsu(*_otsu_args(*args, **kwargs))
    return equalize(*_eq_args(*args, **kwargs))


def _check_method(name, method):
    """GPU arrays are counted by the CUDA histogram method: 'auto' or a CUDA
    method with the histogram operation; CPU methods are refused."""
    if method is None or method == "auto":
        return
    for m in _core.methods():
        if m["name"] == method:
            if m["backend"] == "cuda" and "histogram" in m["ops"]:
                return
            raise UnsupportedError(f"{name}: method '{method}' does not count device memory; "
                                   "GPU arrays are counted by the CUDA histogram method "
                                   "(method='auto' or 'cuda.hist')")
    raise UnknownMethodError(f"unknown method '{method}'; pixsum.methods() lists them")


class _Layout:
    """How a histogram reads an array: its descriptor for the C entry points,
    spatial axes (2 or 3), channel count, and (depth, height, width)."""

    def __init__(self, g, channels, what):
        nd = len(g.shape)
        self.g = g
        if nd == 1:
            n = g.shape[0]
            if n == 0:
                raise BadShapeError(f"{what} is empty")
            if n > 1 and g.strides[0] != g.dtype.itemsize:
                raise BadStrideError(f"{what}: a 1-D array must be contiguous to be read in "
                                     "place; pass a contiguous copy")
            self.spatial, self.has_channels, self.channels = 2, False, 1
            self.dims = (1, 1, n)
            self.desc = (g.ptr, g.desc()[1], (1, n), (n * g.dtype.itemsize, g.dtype.itemsize))
            self.spatial_shape = (n,)
            return
        self.spatial = 3 if nd == 4 or (nd == 3 and not channels) else 2
        _check_layout(g, self.spatial, what)
        self.has_channels = nd == self.spatial + 1
        self.channels = g.shape[-1] if self.has_channels else 1
        s = g.shape
        self.dims = (s[0], s[1], s[2]) if self.spatial == 3 else (1, s[0], s[1])
        self.desc = g.desc()
        self.spatial_shape = s[:-1] if self.has_channels else s


def _mask(ops, mask_obj, layout, name, selection=True):
    """(descriptor, bool device array of the image's spatial shape) of a GPU
    mask, with the CPU's rules (bool or uint8, the image's depth x height x
    width, columns contiguous), or (None, None). selection=False: the bool
    array is not made (None in its place)."""
    if mask_obj is None:
        return None, None
    arr, _ = _gpu.adopt(mask_obj)
    if arr is None or not _gpu.is_device_array(arr):
        raise UnsupportedError(f"{name}: the mask is a {type(mask_obj).__name__} in host "
                               "memory while the image is on the GPU; pass the mask as a GPU "
                               "array too")
    try:
        g = _gpu._Gpu(arr, "mask", allow_bool=True)
    except BadTypeError:
        raise BadTypeError("mask must be bool or uint8") from None
    if g.dtype not in (np.dtype(np.bool_), np.dtype(np.uint8)):
        raise BadTypeError("mask must be bool or uint8")
    nd = len(g.shape)
    w = g.shape[-1] if nd >= 1 else 0
    h = g.shape[-2] if nd >= 2 else 1
    d = g.shape[0] if nd == 3 else 1
    if not 1 <= nd <= 3 or (d, h, w) != layout.dims:
        ld, lh, lw = layout.dims
        raise BadShapeError(f"mask of shape {_shape_text(g.shape)} does not match the image's "
                            f"{ld}x{lh}x{lw} (depth x height x width)")
    st = g.strides
    if w > 1 and st[-1] != 1:
        raise BadStrideError("mask: its columns are not contiguous, so it cannot be read in "
                             "place; pass a contiguous copy")
    rs = st[-2] if nd >= 2 and h > 1 else w
    ss = st[0] if nd == 3 and d > 1 else h * abs(rs)
    if layout.spatial == 3:
        desc = (g.ptr, "u8", (d, h, w), (ss, rs, 1))
    else:
        desc = (g.ptr, "u8", (h, w), (rs, 1))
    sel = arr.reshape(layout.spatial_shape) != 0 if selection else None
    return desc, sel


def _data_range(ops, arr, layout, sel):
    """(min, max, any) of the finite samples the mask selects, over all
    channels, reduced on the device; reading them is one synchronisation."""
    x = arr
    dtype = layout.g.dtype
    valid = ops.isfinite(x) if dtype.kind == "f" else None
    if sel is not None:
        m = sel[..., None] if layout.has_channels else sel
        valid = m if valid is None else valid & m
    if valid is None:
        lo, hi, some = x.min(), x.max(), None
    else:
        big = np.inf if dtype.kind == "f" else np.iinfo(dtype).max
        small = -np.inf if dtype.kind == "f" else np.iinfo(dtype).min
        lo = ops.fill_where_not(x, valid, big).min()
        hi = ops.fill_where_not(x, valid, small).max()
        some = valid.any()
    parts = [ops.astype(lo, np.float64), ops.astype(hi, np.float64)]
    if some is not None:
        parts.append(ops.astype(some, np.float64))
    v = ops.to_host(ops.stack(parts))
    return float(v[0]), float(v[1]), bool(v[2]) if some is not None else True


def _proxy(ops, arr, layout, sel, needs_data):
    """A two-sample host image (and mask) whose default histogram range is the
    device image's: its extremes, or anything when no data range is needed."""
    dtype = layout.g.dtype
    if not needs_data:
        return np.zeros(2, dtype=dtype), None
    lo, hi, some = _data_range(ops, arr, layout, sel)
    if not some:
        fill = np.nan if dtype.kind == "f" else 0
        return np.full(2, fill, dtype=dtype), np.zeros(2, np.uint8)
    return np.array([lo, hi], dtype=dtype), None


def _counts_dtype(ops):
    return ops.result_dtype(np.uint64)


def _result(ops, out, shape, dtype, accepted, kind_text):
    """A new C-contiguous result, or `out` after the CPU's checks."""
    if out is None:
        arr = ops.empty(shape, dtype)
        return arr, _gpu._Gpu(arr, "out")
    arr, g, _ = _gpu_array(out, "out", "histogram")
    if g.shape != tuple(shape):
        raise BadShapeError(f"out has shape {_shape_text(g.shape)}, expected "
                            f"{_shape_text(shape)}")
    if g.dtype not in accepted or not _c_contiguous(g) or g.readonly:
        raise BadTypeError(f"out must be a writable C-contiguous {kind_text} array")
    return arr, g


def _stream_scope(ops, g):
    return _gpu._device_scope(ops.lib, g.device)


def histogram(image, bins, rng, mask, relative, cumulative, all_samples, channels, method,
              out, want_info, batch=False, per_image=False, channel_axis=None):
    """pixsum.histogram() of a GPU image (see the module docstring)."""
    _check_method("histogram", method)
    if batch:
        return _histogram_batch(image, bins, rng, mask, relative, cumulative, all_samples,
                                channels, out, want_info, per_image, channel_axis)
    arr, g, back = _gpu_array(image, "image", "histogram")
    ops = ops_for(g)
    layout = _Layout(g, channels, "image")
    with _stream_scope(ops, g):
        mdesc, sel = _mask(ops, mask, layout, "histogram")
        needs_data = rng is None and g.dtype in _DATA_RANGE_TYPES
        proxy, pmask = _proxy(ops, arr, layout, sel, needs_data)
        nbins, lo, hi = _core._hist_resolve(proxy, bins, rng, pmask)
        nch = layout.channels
        shape = (nch, nbins) if layout.has_channels else (nbins,)
        cdt = _counts_dtype(ops)
        if relative:
            res, res_g = _result(ops, out, shape, np.float64, (np.dtype(np.float64),),
                                 "float64")
        else:
            res, res_g = _result(ops, out, shape, cdt,
                                 (np.dtype(np.uint64), np.dtype(cdt)), "uint64")
        # Relative histograms, and cumulative ones of more bins than one tile of
        # the device scan (8192), count into a buffer of their own: a scan into
        # another array runs a block per tile, one in place a block per channel.
        if relative or (cumulative and nbins > _SCAN_TILE):
            counts = ops.empty((nch * nbins,), np.int64)
            counts_ptr = _gpu._Gpu(counts, "counts").ptr
        else:
            counts_ptr = res_g.ptr
        totals = ops.empty((17,), np.int64) if (relative or want_info) else None
        totals_ptr = _gpu._Gpu(totals, "totals").ptr if totals is not None else 0
        _core._cuda_histogram(layout.spatial, layout.desc, counts_ptr, nch * nbins,
                              bins=nbins, lo=lo, hi=hi, mask=mdesc, totals=totals_ptr,
                              stream=g.stream, device=g.device)
        if relative:
            _core._cuda_hist_post(counts_ptr, nch, nbins, res_g.ptr, relative=True,
                                  cumulative=cumulative, of_all_samples=all_samples,
                                  totals=totals_ptr, stream=g.stream)
        elif cumulative:
            _core._cuda_hist_post(counts_ptr, nch, nbins, res_g.ptr, stream=g.stream)
        if not want_info:
            return back(res) if back is not None and out is None else res
        t = ops.to_host(totals).view(np.uint64)  # waits for the counting: a synchronisation
        info = {"bins": nbins, "channels": nch, "lo": lo, "hi": hi,
                "edges": _core._hist_edges(nbins, lo, hi),
                "pixels": int(t[0]), "in_range": [int(v) for v in t[1:1 + nch]],
                "below": [int(v) for v in t[5:5 + nch]],
                "above": [int(v) for v in t[9:9 + nch]],
                "nan": [int(v) for v in t[13:13 + nch]]}
    if back is not None and out is None:
        res = back(res)
    return res, info


class _BatchLayout:
    """A stack of N images read as a batch: (N, H, W), (N, H, W, C), or with
    channel_axis=1 PyTorch's (N, C, H, W) as N x C one-channel images (its N
    and C axes must merge into one of uniform stride). desc describes the
    batch with the depth axis as its images; images/channels/dims (depth N x
    H x W of the library's view) and the counts' shape follow."""

    def __init__(self, g, channel_axis, channels):
        nd = len(g.shape)
        if channel_axis not in (None, -1, 1, nd - 1):
            raise InvalidArgumentError("histogram: with batch=True, channel_axis must be None, "
                                       f"-1 or 1, not {channel_axis}")
        if not channels:
            raise InvalidArgumentError("histogram: batch=True reads (N, H, W) or (N, H, W, C); "
                                       "channels=False does not apply")
        first = channel_axis == 1 and nd == 4
        if nd not in (3, 4) or (channel_axis == 1 and nd != 4):
            raise BadShapeError("histogram: batch=True reads (N, H, W), (N, H, W, C) or, with "
                                "channel_axis=1, (N, C, H, W); got shape "
                                f"{_shape_text(g.shape)}")
        if 0 in g.shape:
            raise BadShapeError(f"image of shape {_shape_text(g.shape)} is empty")
        ptr, tname, shape, st = g.desc()
        self.g = g
        if first:
            n, c, h, w = shape
            if not 1 <= c <= 4:
                raise BadShapeError(f"image has {c} channels on axis 1; pixsum handles 1..4")
            if n > 1 and c > 1 and st[0] != c * st[1]:
                raise BadStrideError("histogram: the (N, C, H, W) stack's images and channels "
                                     "cannot be read as one axis of N x C images (axis 0's "
                                     "stride is not C times axis 1's); pass a contiguous copy")
            self.images, self.channels = n, c
            step = st[1] if c > 1 else st[0]
            self.desc = (ptr, tname, (n * c, h, w), (step, st[2], st[3]))
            self.views = n * c  # one-channel images of the library's batch
            self.dims = (h, w)
            self.count_shape = (n, c)
        else:
            if nd == 4 and not 1 <= shape[3] <= 4:
                raise BadShapeError(f"image has {shape[3]} channels on its last axis; pixsum "
                                    "handles 1..4 interleaved channels")
            self.images, self.channels = shape[0], (shape[3] if nd == 4 else 1)
            self.desc = (ptr, tname, tuple(shape), tuple(st))
            self.views = self.images
            self.dims = (shape[1], shape[2])
            self.count_shape = (self.images, self.channels) if nd == 4 else (self.images,)
        self.first = first
        self.has_channels = nd == 4


def _batch_mask(mask_obj, lay):
    """The descriptor (spatial 3) of a batch's mask: (H, W) shared by every
    image, or (N, H, W) one per image; bool or uint8, columns contiguous."""
    if mask_obj is None:
        return None
    arr, _ = _gpu.adopt(mask_obj)
    if arr is None or not _gpu.is_device_array(arr):
        raise UnsupportedError(f"histogram: the mask is a {type(mask_obj).__name__} in host "
                               "memory while the image is on the GPU; pass the mask as a GPU "
                               "array too")
    try:
        g = _gpu._Gpu(arr, "mask", allow_bool=True)
    except BadTypeError:
        raise BadTypeError("mask must be bool or uint8") from None
    if g.dtype not in (np.dtype(np.bool_), np.dtype(np.uint8)):
        raise BadTypeError("mask must be bool or uint8")
    h, w = lay.dims
    shape, st = g.shape, g.strides
    if tuple(shape) not in ((h, w), (lay.images, h, w)):
        raise BadShapeError(f"mask of shape {_shape_text(shape)} does not match the batch: "
                            f"({h}, {w}) for every image or ({lay.images}, {h}, {w}), one per "
                            "image")
    if w > 1 and st[-1] != 1:
        raise BadStrideError("mask: its columns are not contiguous, so it cannot be read in "
                             "place; pass a contiguous copy")
    rs = st[-2] if h > 1 else w
    if len(shape) == 2:
        return (g.ptr, "u8", (1, h, w), (h * abs(rs), rs, 1))
    if lay.first and lay.channels > 1:
        raise UnsupportedError("histogram: a mask per image with channel_axis=1 is not "
                               "available; pass one (H, W) mask for every image, or the "
                               "(N, H, W, C) layout")
    ss = st[0] if lay.images > 1 else h * abs(rs)
    return (g.ptr, "u8", (lay.images, h, w), (ss, rs, 1))


def _histogram_batch(image, bins, rng, mask, relative, cumulative, all_samples, channels,
                     out, want_info, per_image, channel_axis):
    """histogram(batch=True) of a GPU stack: pixsum_cuda_histogram_batch(),
    one launch for uint8 (see pixsum_cuda.h), counts (N, bins) or (N, C,
    bins) in the input's library. One range for the batch; int32/float32/
    float64 stacks without range= get the stack's data range (reduced on the
    device and read back: a synchronisation), or with range_per_image=True
    are refused (each image's own range would read every image back)."""
    arr, g, back = _gpu_array(image, "image", "histogram")
    ops = ops_for(g)
    lay = _BatchLayout(g, channel_axis, channels)
    with _stream_scope(ops, g):
        mdesc = _batch_mask(mask, lay)
        needs_data = rng is None and g.dtype in _DATA_RANGE_TYPES
        if needs_data and per_image:
            raise UnsupportedError("histogram: range_per_image=True of a GPU stack of "
                                   f"{g.dtype} needs range=; each image's own data range "
                                   "would read every image back")
        if needs_data:
            # the whole stack's data range: the single-image rule over all samples
            # (and the mask's selection, broadcast over the stack)
            sel = None
            if mask is not None:
                marr, _ = _gpu.adopt(mask)
                sel = marr != 0
                if lay.first:
                    sel = sel.reshape(((lay.images, 1) if sel.ndim == 3 else (1, 1)) +
                                      tuple(lay.dims))
            flat = _Layout.__new__(_Layout)
            flat.g, flat.has_channels = g, lay.has_channels and not lay.first
            proxy, pmask = _proxy(ops, arr, flat, sel, True)
        else:
            proxy, pmask = np.zeros(2, dtype=g.dtype), None
        nbins, lo, hi = _core._hist_resolve(proxy, bins, rng, pmask)
        nch = lay.channels
        shape = lay.count_shape + (nbins,)
        total = lay.images * nch * nbins
        cdt = _counts_dtype(ops)
        if relative:
            res, res_g = _result(ops, out, shape, np.float64, (np.dtype(np.float64),),
                                 "float64")
        else:
            res, res_g = _result(ops, out, shape, cdt,
                                 (np.dtype(np.uint64), np.dtype(cdt)), "uint64")
        if relative or (cumulative and nbins > _SCAN_TILE):
            counts = ops.empty((total,), np.int64)
            counts_ptr = _gpu._Gpu(counts, "counts").ptr
        else:
            counts_ptr = res_g.ptr
        # totals: one record per image of the library's batch
        need_totals = relative or want_info
        totals = ops.empty((lay.views * 17,), np.int64) if need_totals else None
        totals_ptr = _gpu._Gpu(totals, "totals").ptr if totals is not None else 0
        _core._cuda_histogram(3, lay.desc, counts_ptr, total, bins=nbins, lo=lo, hi=hi,
                              mask=mdesc, totals=totals_ptr, stream=g.stream, device=g.device,
                              batch=True, range_per_image=per_image)
        if relative or cumulative:
            # per image: the rows of its channels (the device post-processing
            # takes 1-4 channels a call)
            rec = 17 * 8
            for n in builtins_range(lay.images):
                off = n * nch * nbins * 8
                if relative:
                    if lay.first:
                        # one record per (image, channel): post each channel alone
                        for c in builtins_range(nch):
                            o = off + c * nbins * 8
                            _core._cuda_hist_post(counts_ptr + o, 1, nbins, res_g.ptr + o,
                                                  relative=True, cumulative=cumulative,
                                                  of_all_samples=all_samples,
                                                  totals=totals_ptr + (n * nch + c) * rec,
                                                  stream=g.stream)
                    else:
                        _core._cuda_hist_post(counts_ptr + off, nch, nbins, res_g.ptr + off,
                                              relative=True, cumulative=cumulative,
                                              of_all_samples=all_samples,
                                              totals=totals_ptr + n * rec, stream=g.stream)
                else:
                    _core._cuda_hist_post(counts_ptr + off, nch, nbins, res_g.ptr + off,
                                          stream=g.stream)
        if not want_info:
            return back(res) if back is not None and out is None else res
        t = ops.to_host(totals).view(np.uint64).reshape(lay.views, 17)  # a synchronisation
        info = _batch_info(t, lay, nbins, lo, hi)
    if back is not None and out is None:
        res = back(res)
    return res, info


def _batch_info(t, lay, nbins, lo, hi):
    """histogram(batch=True, info=True)'s dict, as for NumPy stacks: a list per
    field with one entry per image; one range (lo, hi, edges) for the batch."""
    nch = lay.channels
    pixels, in_range, below, above, nan = [], [], [], [], []
    for n in builtins_range(lay.images):
        if lay.first:
            recs = t[n * nch:(n + 1) * nch]
            pixels.append(int(recs[0][0]))
            in_range.append([int(r[1]) for r in recs])
            below.append([int(r[5]) for r in recs])
            above.append([int(r[9]) for r in recs])
            nan.append([int(r[13]) for r in recs])
        else:
            r = t[n]
            pixels.append(int(r[0]))
            in_range.append([int(v) for v in r[1:1 + nch]])
            below.append([int(v) for v in r[5:5 + nch]])
            above.append([int(v) for v in r[9:9 + nch]])
            nan.append([int(v) for v in r[13:13 + nch]])
    return {"bins": nbins, "channels": nch, "lo": lo, "hi": hi,
            "edges": _core._hist_edges(nbins, lo, hi), "pixels": pixels,
            "in_range": in_range, "below": below, "above": above, "nan": nan}


def threshold_otsu(image, bins, rng, mask, method, want_info):
    """pixsum.threshold_otsu() of a GPU image: histogram() on the device (one
    channel: a 3-D array is a volume, as on the CPU), its counts copied to the
    host (a synchronisation), then the library's Otsu search; the threshold is
    the histogram's edge t + 1, the value the CPU computes."""
    arr, g, _ = _gpu_array(image, "image", "threshold_otsu")
    ops = ops_for(g)
    counts, info = histogram(arr, bins, rng, mask, False, False, False, False, method, None,
                             True)
    with _stream_scope(ops, g):
        host = ops.to_host(counts)
    t = _core.otsu(np.ascontiguousarray(host).view(np.uint64))
    threshold = float(info["edges"][t + 1])
    if not want_info:
        return threshold
    return threshold, {"bin": t, "bins": info["bins"], "lo": info["lo"], "hi": info["hi"]}


def _joint_layout(obj, what):
    arr, g, back = _gpu_array(obj, what, "histogram2d")
    return arr, g, back, _Layout(g, False, what)


def histogram2d(a, b, bins, rng, mask, method, out, want_info):
    """pixsum.histogram2d() of two GPU images (see the module docstring)."""
    _check_method("histogram2d", method)
    arr_a, ga, back, la = _joint_layout(a, "a")
    arr_b, gb, _, lb = _joint_layout(b, "b")
    ops = ops_for(ga)
    with _stream_scope(ops, ga):
        mdesc, sel = _mask(ops, mask, la, "histogram2d")
        ra, rb = (rng if rng is not None else (None, None))
        pa, pm = _proxy(ops, arr_a, la, sel, ra is None and ga.dtype in _DATA_RANGE_TYPES)
        pb, _ = _proxy(ops, arr_b, lb, None, rb is None and gb.dtype in _DATA_RANGE_TYPES)
        ba, bb = _joint_bins(bins)
        bins_a, lo_a, hi_a = _core._hist_resolve(pa, ba, ra, pm, "histogram2d: image a")
        bins_b, lo_b, hi_b = _core._hist_resolve(pb, bb, rb, None, "histogram2d: image b")
        if bins_a * bins_b > _core._HIST_JOINT_MAX_CELLS:
            raise TooLargeError(f"histogram2d: a {bins_a} x {bins_b} joint histogram has more "
                                "than 2^26 cells")
        cdt = _counts_dtype(ops)
        res, res_g = _result(ops, out, (bins_a, bins_b), cdt,
                             (np.dtype(np.uint64), np.dtype(cdt)), "uint64")
        pairs = ops.empty((2,), np.int64) if want_info else None
        pairs_ptr = _gpu._Gpu(pairs, "pairs").ptr if pairs is not None else 0
        _core._cuda_histogram2d(la.spatial, la.desc, lb.desc if lb.spatial == la.spatial
                                else _as_spatial(lb, la.spatial), res_g.ptr,
                                bins_a * bins_b, bins_a=bins_a, lo_a=lo_a, hi_a=hi_a,
                                bins_b=bins_b, lo_b=lo_b, hi_b=hi_b, mask=mdesc,
                                pairs=pairs_ptr, stream=ga.stream, device=ga.device)
        if not want_info:
            return back(res) if back is not None and out is None else res
        table = np.ascontiguousarray(ops.to_host(res).view(np.uint64))  # a synchronisation
        p = ops.to_host(pairs).view(np.uint64)
        info = {"range_a": (lo_a, hi_a), "range_b": (lo_b, hi_b),
                "edges_a": _core._hist_edges(bins_a, lo_a, hi_a),
                "edges_b": _core._hist_edges(bins_b, lo_b, hi_b),
                "pairs": int(p[0]), "excluded": int(p[1])}
        info.update(_core._joint_stats(table))
    if back is not None and out is None:
        res = back(res)
    return res, info


def _joint_bins(bins):
    """histogram2d's bins (None, an int, or a pair; checked by the C entry
    point before it handed the call here) as (bins_a, bins_b), 256 by default."""
    if bins is None:
        return 256, 256
    try:
        b = operator.index(bins)
        return b, b
    except TypeError:
        ba, bb = bins
        return (256 if ba is None else ba), (256 if bb is None else bb)


def _as_spatial(layout, spatial):
    """Image b's descriptor with `spatial` spatial axes (a 2-D (H, W) image
    read as a volume of depth 1, or the reverse), so the C side sees both
    images with the same number of axes; shapes are compared there."""
    ptr, tname, shape, strides = layout.desc
    if spatial == 3 and len(shape) == 2:
        return (ptr, tname, (1,) + tuple(shape), (strides[0] * max(shape[0], 1),) +
                tuple(strides))
    if spatial == 2 and len(shape) == 3 and shape[0] == 1:
        return (ptr, tname, tuple(shape[1:]), tuple(strides[1:]))
    return layout.desc


def equalize(image, mask, channels, method, out):
    """pixsum.equalize() of a GPU image (see the module docstring)."""
    _check_method("equalize", method)
    _, g, back = _gpu_array(image, "image", "equalize")
    ops = ops_for(g)
    layout = _Layout(g, channels, "image")
    if g.dtype not in (np.dtype(np.uint8), np.dtype(np.uint16)):
        raise BadTypeError(f"equalize: image must be uint8 or uint16, not {g.dtype}")
    if out is not None:
        res, out_g, _ = _gpu_array(out, "out", "equalize")
        if out_g.shape != g.shape:
            raise BadShapeError(f"out has shape {_shape_text(out_g.shape)}, expected "
                                f"{_shape_text(g.shape)}")
        if out_g.dtype != g.dtype:
            raise BadTypeError(f"out has dtype {out_g.dtype} but dtype={g.dtype} was asked")
        if out_g.readonly:
            raise InvalidArgumentError("out is read-only")
    else:
        res = ops.empty(g.shape, g.dtype)
        out_g = _gpu._Gpu(res, "out")
    out_layout = _Layout(out_g, channels, "out")
    with _stream_scope(ops, g):
        mdesc, _ = _mask(ops, mask, layout, "equalize", selection=False)
        _core._cuda_equalize(layout.spatial, layout.desc, out_layout.desc, mask=mdesc,
                             stream=g.stream, device=g.device)
    if out is not None:
        return out
    return back(res) if back is not None else res

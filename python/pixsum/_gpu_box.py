"""pixsum._gpu_box - box_sum, box_mean, box_var and box_filter of GPU arrays.

The C extension hands these calls here when the table (or image) is a GPU
array (via pixsum._gpu.dispatch). Nothing is copied to the host:

  - box queries gather the 4 (2-D) or 8 (3-D) corners of every box from the
    device table with the array library's indexing and combine them in the
    library's CPU order and arithmetic (integer tables modulo their width, so a
    wrapped table still gives exact sums; float tables in float64 starting from
    0), so sums and means are bit-identical to the CPU's;
  - box_var combines the two tables exactly in 64-bit integers wherever
    n * sum_sq and sum^2 fit in 63 bits (then bit-identical to the CPU's exact
    128-bit result), else with the float64 formula clamped at 0;
  - box_filter is the library's box filter operation on the device
    (pixsum_cuda_box_filter: streamed, no integral table, one launch), with
    the CPU binding's keywords (size, normalize, mode/border, stat, cval,
    dtype), resolved in C by _core._cuda_box_filter_image, and the CPU's
    results (integer outputs and means of integer images bit for bit).

Boxes may be host sequences/NumPy arrays (checked on the host, then copied to
the device: a small host-to-device copy of the box list) or GPU integer arrays
(checked on the device; reading the verdict back is one synchronisation).
Everything runs on the caller's stream (the array library's current stream).
"""

import numpy as np

from . import _core, _gpu_base as _gpu
from ._errors import BadShapeError, BadStrideError, BadTypeError, InvalidArgumentError, \
    OutOfRangeError, UnsupportedError
from ._gpu_ops import ops_for

_TABLE_TYPES = tuple(np.dtype(t) for t in (np.uint32, np.uint64, np.int64, np.float32,
                                             np.float64))

_SQRT_INT64_MAX = 3037000499  # floor(sqrt(2^63 - 1))
_INT64_MAX = (1 << 63) - 1


# copy=: box queries gather corners at any strides (nothing to copy); GPU
# box filters read their image in place or refuse it (BadStrideError).
def _box_args(table, boxes, *, padded=False, copy=True):
    del copy
    return table, None, boxes, padded


def _var_args(table, sq_table, boxes, *, padded=False, copy=True):
    del copy
    return table, sq_table, boxes, padded


def _filter_args(image, size, *, normalize=True, mode="same", dtype=None, method="auto",
                 threads=0, out=None, border=None, stat=None, cval=0.0, copy=True,
                 batch=False, channel_axis=None):
    del copy
    return (image, size, normalize, mode, dtype, method, out, border, stat, cval, bool(batch),
            channel_axis)


def dispatch(name, args, kwargs):
    """Runs pixsum.<name> for GPU arrays; called by pixsum._gpu.dispatch()."""
    if name == "box_filter":
        return box_filter(*_filter_args(*args, **kwargs))
    if name in ("threshold_local", "normalize_local"):
        return local_op(name, *args, **kwargs)
    if name == "box_var":
        table, sq, boxes, padded = _var_args(*args, **kwargs)
    else:
        table, sq, boxes, padded = _box_args(*args, **kwargs)
    return box_query(name, table, sq, boxes, bool(padded))


def _shape_text(shape):
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _gpu_array(obj, what, name):
    arr, back = _gpu.adopt(obj)
    if arr is None or not _gpu.is_device_array(arr):
        raise UnsupportedError(f"{name}: {what} is a {type(obj).__name__} in host memory "
                               "while the call's other array is on the GPU; pass both on "
                               "the GPU or both on the host")
    return arr, _gpu._Gpu(arr, what), back


def _check_layout(g, spatial, what):
    """The CPU's shape rules for a table or image: spatial axes, then an
    optional axis of 1..4 channels, none empty."""
    nd = len(g.shape)
    if nd not in (spatial, spatial + 1):
        want = "(H, W) or (H, W, C)" if spatial == 2 else "(D, H, W) or (D, H, W, C)"
        raise BadShapeError(f"{what} must be {want}, got shape {_shape_text(g.shape)}")
    if nd == spatial + 1 and not 1 <= g.shape[-1] <= 4:
        raise BadShapeError(f"{what} has {g.shape[-1]} channels on its last axis; pixsum "
                            "handles 1..4 interleaved channels")
    if 0 in g.shape:
        raise BadShapeError(f"{what} of shape {_shape_text(g.shape)} is empty")


# ---- boxes -------------------------------------------------------------------------------

def _box_shape_check(shape, what="boxes"):
    nd = len(shape)
    k = shape[-1] if nd else 0
    if nd not in (1, 2) or k not in (4, 6):
        raise BadShapeError(f"{what} must have shape (4,), (6,), (N, 4) or (N, 6), got "
                            f"{_shape_text(shape)}")
    return k


def _box_message(name, k, box, spatial, reason, image):
    if spatial == 3:
        x, y, z, w, h, d = (int(v) for v in box[:6])
    else:
        (x, y, w, h), z, d = (int(v) for v in box[:4]), 0, 1
    if reason == "empty":
        return BadShapeError(f"{name}: box {k} is empty ({w}x{h}x{d})")
    if reason == "padded":
        return BadShapeError(f"{name}: a padded table needs at least 2x2 entries")
    iw, ih, idd = image
    return OutOfRangeError(f"{name}: box {k} at ({x},{y},{z}) of size {w}x{h}x{d} is outside "
                           f"the {iw}x{ih}x{idd} image")


def _box_columns(b, spatial):
    """x, y, z, w, h, d columns of an (N, 4|6) int64 box array (z = 0, d = 1
    for 2-D boxes, as Python ints)."""
    if spatial == 2:
        return b[:, 0], b[:, 1], 0, b[:, 2], b[:, 3], 1
    return b[:, 0], b[:, 1], b[:, 2], b[:, 3], b[:, 4], b[:, 5]


def _bad_boxes(xp, b, spatial, padded, image, small_padded):
    """Per box: (empty, out of range) flags, evaluated with module xp on (N, k)
    int64 boxes without negative entries."""
    x, y, z, w, h, d = _box_columns(b, spatial)
    iw, ih, idd = image
    empty = (w == 0) | (h == 0)
    if spatial == 3:
        empty = empty | (d == 0)
    oob = (x > iw) | (w > iw - x) | (y > ih) | (h > ih - y)
    if spatial == 3:
        oob = oob | (z > idd) | (d > idd - z)
    if small_padded:
        oob = oob | True
    return empty, oob


def _host_boxes(boxes):
    """(int64 (N, k) NumPy array, single) from a host box argument, with the
    CPU's checks (integer dtype, shape, no negative entry)."""
    raw = np.asarray(boxes)
    if raw.dtype.kind not in "iu" and not (raw.dtype.kind == "b" and raw.size == 0):
        raise BadTypeError("boxes must be integers (x, y, w, h) or (x, y, z, w, h, d)")
    k = _box_shape_check(raw.shape)
    single = raw.ndim == 1
    b = raw.reshape(-1, k).astype(np.int64)  # uint64 above 2^63 turns negative: refused
    neg = (b < 0).any(axis=1)
    if neg.any():
        i = int(np.argmax(neg))
        v = int(b[i][b[i] < 0][0])
        raise OutOfRangeError(f"box {i} has a negative entry ({v})")
    return b, single


def _check_boxes_host(name, b, spatial, padded, image, small_padded):
    empty, oob = _bad_boxes(np, b, spatial, padded, image, small_padded)
    bad = empty | oob
    if bad.any():
        k = int(np.argmax(bad))
        reason = "empty" if empty[k] else ("padded" if small_padded else "range")
        raise _box_message(name, k, b[k], spatial, reason, image)


def _device_boxes(ops, name, obj, spatial_hint=None):
    """(int64 (N, k) device array, single, k) of GPU boxes; the negative-entry
    check is made later together with the others (one synchronisation)."""
    arr, g, _ = _gpu_array(obj, "boxes", name)
    if g.dtype.kind not in "iu":
        raise BadTypeError("boxes must be integers (x, y, w, h) or (x, y, z, w, h, d)")
    k = _box_shape_check(g.shape)
    single = len(g.shape) == 1
    b = ops.astype(arr, np.int64).reshape(-1, k)
    return b, single, k


def _check_boxes_device(ops, name, b, spatial, padded, image, small_padded):
    """The CPU's box checks on device boxes: one synchronisation reads the
    verdict (and, on failure, the failing box)."""
    lib = ops.lib
    if b.shape[0] == 0:
        return
    neg = ops.astype((b < 0).any(1) if ops.torch else (b < 0).any(axis=1), np.int64)
    empty, oob = _bad_boxes(lib, b, spatial, padded, image, small_padded)
    bad = ops.astype(empty | oob, np.int64)
    flags = ops.stack([neg.max(), neg.argmax(), bad.max(), bad.argmax()])
    has_neg, first_neg, has_bad, first_bad = (int(v) for v in ops.to_host(flags))
    if has_neg:
        row = ops.to_host(b[first_neg])
        raise OutOfRangeError(f"box {first_neg} has a negative entry ({int(row[row < 0][0])})")
    if has_bad:
        row = ops.to_host(b[first_bad])
        x, y, z, w, h, d = _box_columns(row[None, :], spatial)
        is_empty = int(np.asarray(w)[0]) == 0 or int(np.asarray(h)[0]) == 0 or \
            (spatial == 3 and int(np.asarray(d)[0]) == 0)
        reason = "empty" if is_empty else ("padded" if small_padded else "range")
        raise _box_message(name, first_bad, row, spatial, reason, image)


# ---- box queries ------------------------------------------------------------------------

def _corner_sums(ops, table, tdtype, b, spatial, padded, depth):
    """Per box and channel, the signed sum of the table's 4 or 8 box corners,
    in the CPU's corner order: float64 for float tables (from 0), the table's
    integer type (wrapping; a signed view for PyTorch) otherwise."""
    lib = ops.lib
    x, y, z, w, h, d = _box_columns(b, spatial)

    def axis(start, length):
        if padded:
            return start + length, start, None
        return start + length - 1, ops.clip_lo(start - 1, 0), start > 0

    ax = [axis(x, w), axis(y, h)]
    if spatial == 3 and depth > 1:
        ax.append(axis(z, d))
    else:
        ax.append(None)
    t = ops.signed(table)
    is_float = tdtype.kind == "f"
    channels = t.ndim == (3 if spatial == 2 else 4)
    acc = None
    for corner in range(8):
        lo_x, lo_y, lo_z = corner & 1, (corner >> 1) & 1, (corner >> 2) & 1
        if lo_z and ax[2] is None:
            continue
        xi = ax[0][1] if lo_x else ax[0][0]
        yi = ax[1][1] if lo_y else ax[1][0]
        if spatial == 3:
            zi = (ax[2][1] if lo_z else ax[2][0]) if ax[2] is not None else \
                ops.zeros(b.shape[:1], np.int64)
            v = t[zi, yi, xi]
        else:
            v = t[yi, xi]
        if is_float:
            v = ops.astype(v, np.float64)
        conds = [a[2] for a, lo in zip(ax, (lo_x, lo_y, lo_z)) if lo and a is not None and
                 a[2] is not None]
        if conds:
            cond = conds[0]
            for c in conds[1:]:
                cond = cond & c
            if channels:
                cond = cond[:, None]
            v = ops.where0(cond, v)
        negative = (lo_x + lo_y + lo_z) & 1
        if acc is None:
            acc = (v + 0.0) if is_float else v  # the CPU starts from 0
        else:
            acc = acc - v if negative else acc + v
    return acc


def box_query(name, table_obj, sq_obj, boxes, padded):
    """box_sum / box_mean / box_var of a GPU table (see the module docstring)."""
    table, tg, back = _gpu_array(table_obj, "table", name)
    ops = ops_for(tg)
    with _gpu._device_scope(ops.lib, tg.device):
        host = not (_gpu.is_device_array(boxes) or _gpu.is_cuda_dlpack(boxes))
        if host:
            b_host, single = _host_boxes(boxes)
            k = b_host.shape[1]
        else:
            b, single, k = _device_boxes(ops, name, boxes)
        spatial = 2 if k == 4 else 3
        _check_layout(tg, spatial, "table")
        tdtype = tg.dtype
        if tdtype not in _TABLE_TYPES:
            raise BadTypeError(f"{name}: table has type {tdtype}; tables are uint32, uint64, "
                               "int64, float32 or float64")
        sq = sqg = None
        if name == "box_var":
            sq, sqg, _ = _gpu_array(sq_obj, "sq_table", name)
            _check_layout(sqg, spatial, "sq_table")
            if sqg.dtype not in _TABLE_TYPES:
                raise BadTypeError(f"{name}: squared table has type {sqg.dtype}; tables are "
                                   "uint32, uint64, int64, float32 or float64")
            if sqg.shape != tg.shape:
                raise BadShapeError(f"{name}: sum and squared tables differ in shape")
        pad = 1 if padded else 0
        if spatial == 2:
            depth, height, width = 1, tg.shape[0], tg.shape[1]
        else:
            depth, height, width = tg.shape[0], tg.shape[1], tg.shape[2]
        image = (width - pad, height - pad, depth - pad if depth > 1 else 1)
        small_padded = bool(padded and (width < 2 or height < 2))
        if host:
            _check_boxes_host(name, b_host, spatial, padded, image, small_padded)
            b = ops.from_host(b_host)
        else:
            _check_boxes_device(ops, name, b, spatial, padded, image, small_padded)
        channels = len(tg.shape) == spatial + 1
        n = b.shape[0]
        if n == 0:
            shape = (0, tg.shape[-1]) if channels else (0,)
            res = ops.zeros(shape, ops.result_dtype(tdtype) if name == "box_sum"
                            else np.float64)
            return _finish(res, single, back)
        acc = _corner_sums(ops, table, tdtype, b, spatial, padded, depth)
        if name == "box_sum":
            if tdtype.kind == "f":
                res = ops.astype(acc, tdtype)
            else:
                res = ops.unsigned(acc, tdtype)
            return _finish(res, single, back)
        x, y, z, w, h, d = _box_columns(b, spatial)
        count = ops.f64(w, np.int64) * ops.f64(h, np.int64)
        if spatial == 3:
            count = count * ops.f64(d, np.int64)
        if channels:
            count = count[:, None]
        s = acc if tdtype.kind == "f" else ops.f64(acc, tdtype)
        mean = s / count
        if name == "box_mean":
            return _finish(mean, single, back)
        qacc = _corner_sums(ops, sq, sqg.dtype, b, spatial, padded, depth)
        var = _variance(ops, acc, tdtype, qacc, sqg.dtype, w, h, d, spatial, count, mean,
                        channels)
        return _finish(var, single, back)


def _finish(res, single, back):
    if single:
        res = res[0]
    return back(res) if back is not None else res


def _variance(ops, sacc, sdtype, qacc, qdtype, w, h, d, spatial, count, mean, channels):
    """Population variances of boxes as the CPU computes them: exactly when
    both tables are integer and the 64-bit products fit, else (and for float
    tables) q / n - mean^2 in float64 clamped at 0."""
    lib = ops.lib
    q_float = qacc if qdtype.kind == "f" else ops.f64(qacc, qdtype)
    approx = q_float / count - mean * mean
    approx = ops.where0(approx > 0, approx)  # !(v > 0), NaN included, becomes 0
    if sdtype.kind == "f" or qdtype.kind == "f":
        return approx
    n = w * h
    if spatial == 3:
        n = n * d
    if channels:
        n = n[:, None]
    s64 = _int64_value(ops, sacc, sdtype)
    q64 = _int64_value(ops, qacc, qdtype)
    mag = lib.abs(s64) if sdtype == np.int64 else s64
    limit = _INT64_MAX // n
    safe = (mag >= 0) & (mag <= _SQRT_INT64_MAX) & (q64 >= 0) & (q64 <= limit)
    diff = n * q64 - mag * mag          # exact where safe (wraps harmlessly elsewhere)
    nf = ops.f64(n, np.int64)
    exact = ops.f64(diff, np.int64) / nf / nf
    exact = ops.where0(diff > 0, exact)
    return ops.where(safe, exact, approx)


def _int64_value(ops, x, dtype):
    """The integer values of x (dtype u32/u64/i64, possibly a signed view) as
    int64; u64 values of 2^63 and above come out negative."""
    if dtype == np.uint32:
        return ops.as_int(x, dtype, np.int64)
    if ops.torch:
        return x.view(ops.lib.int64) if x.dtype != ops.lib.int64 else x
    return x.astype(np.int64, copy=False)


# ---- box filter -------------------------------------------------------------------------

def _box_batch_desc(g, channel_axis, what):
    """(descriptor of the library's batch view, output shape from (oh, ow)) of
    a GPU stack: (N, H, W) and (N, H, W, C) as they are, PyTorch's
    (N, C, H, W) with channel_axis=1 as N x C one-channel images (its N and
    C axes must merge into one axis of uniform stride)."""
    nd = len(g.shape)
    if channel_axis not in (None, -1, 1, nd - 1):
        raise InvalidArgumentError(f"box_filter: with batch=True, channel_axis must be None, -1 "
                                   f"or 1, not {channel_axis}")
    ptr, tname, shape, st = g.desc()
    if channel_axis == 1 and nd == 4:
        n, c, h, w = shape
        if 0 in shape:
            raise BadShapeError(f"{what} of shape {_shape_text(shape)} is empty")
        if n > 1 and c > 1 and st[0] != c * st[1]:
            raise BadStrideError(f"box_filter: the (N, C, H, W) {what}'s images and channels "
                                 "cannot be read as one axis of N x C images (axis 0's stride "
                                 "is not C times axis 1's); pass a contiguous copy")
        step = st[1] if c > 1 else st[0]
        return (ptr, tname, (n * c, h, w), (step, st[2], st[3])), \
            (lambda hw: (n, c) + tuple(hw))
    if nd not in (3, 4) or (channel_axis == 1 and nd != 4):
        raise BadShapeError("box_filter: batch=True reads (N, H, W), (N, H, W, C) or, with "
                            f"channel_axis=1, (N, C, H, W); got shape {_shape_text(shape)}")
    _check_layout(g, 3, what)
    return g.desc(), (lambda hw: (shape[0],) + tuple(hw) + tuple(shape[3:]))


def box_filter(image, size, normalize, mode, dtype, method, out, border=None, stat=None,
               cval=0.0, batch=False, channel_axis=None):
    """box_filter of a GPU image: the library's pixsum_cuda_box_filter (see the
    module docstring). The keywords are resolved in C (_core's
    _cuda_box_filter_image, the CPU binding's rules); `method` is the CPU's
    and has no GPU meaning. batch=True: a stack of N images filtered in one
    launch (the grid's z), each equal to the single-image call; (N, H, W),
    (N, H, W, C), or (N, C, H, W) with channel_axis=1."""
    del method
    if batch:
        return _box_filter_batch(image, size, normalize, mode, dtype, out, border, stat, cval,
                                 channel_axis)
    if channel_axis is not None:
        raise InvalidArgumentError("box_filter: channel_axis is read with batch=True only (1: "
                                   "channels-first (N, C, H, W) stacks); an image's channels "
                                   "are on its last axis")
    img, g, back = _gpu_array(image, "image", "box_filter")
    ops = ops_for(g)
    _check_layout(g, 2, "image")
    out_g = None
    if out is not None:
        out, out_g, _ = _gpu_array(out, "out", "box_filter")
    want = np.dtype(dtype) if dtype is not None else (out_g.dtype if out_g is not None
                                                       else None)
    kw = {"normalize": bool(normalize), "mode": mode, "border": border, "stat": stat,
          "cval": float(cval)}
    tname, hw = _core._cuda_box_filter_image(g.desc(), None, size,
                                             dtype=want.name if want is not None else None,
                                             **kw)
    out_type = np.dtype(tname)
    if want is None and ops.torch and out_type.kind == "u" and not ops.has(out_type):
        out_type = np.dtype(np.int64)  # the same sums, in the type PyTorch has
    shape = tuple(hw) + tuple(g.shape[2:])
    if out_g is not None:
        if out_g.shape != shape:
            raise BadShapeError(f"out has shape {_shape_text(out_g.shape)}, expected "
                                f"{_shape_text(shape)}")
        if out_g.dtype != out_type:
            raise BadTypeError(f"out has dtype {out_g.dtype} but dtype={out_type} was asked")
        if out_g.readonly:
            raise InvalidArgumentError("out is read-only")
    with _gpu._device_scope(ops.lib, g.device):
        res = out if out is not None and _c_contiguous(out_g) else ops.empty(shape, out_type)
        r = _gpu._Gpu(res, "out")
        _core._cuda_box_filter_image(g.desc(), r.desc(), size, dtype=out_type.name,
                                     stream=r.stream, device=g.device, **kw)
        if out is not None:
            if res is not out:
                ops.copy_into(out, res)
            return out
    return back(res) if back is not None else res


def _box_filter_batch(image, size, normalize, mode, dtype, out, border, stat, cval,
                      channel_axis):
    """box_filter(batch=True) of a GPU stack (see box_filter)."""
    img, g, back = _gpu_array(image, "image", "box_filter")
    ops = ops_for(g)
    desc, out_shape = _box_batch_desc(g, channel_axis, "image")
    out_g = None
    if out is not None:
        out, out_g, _ = _gpu_array(out, "out", "box_filter")
    want = np.dtype(dtype) if dtype is not None else (out_g.dtype if out_g is not None
                                                       else None)
    kw = {"normalize": bool(normalize), "mode": mode, "border": border, "stat": stat,
          "cval": float(cval)}
    tname, hw = _core._cuda_box_filter_image(desc, None, size,
                                             dtype=want.name if want is not None else None,
                                             batch=True, **kw)
    out_type = np.dtype(tname)
    if want is None and ops.torch and out_type.kind == "u" and not ops.has(out_type):
        out_type = np.dtype(np.int64)  # the same sums, in the type PyTorch has
    shape = out_shape(hw)
    if out_g is not None:
        if out_g.shape != shape:
            raise BadShapeError(f"out has shape {_shape_text(out_g.shape)}, expected "
                                f"{_shape_text(shape)}")
        if out_g.dtype != out_type:
            raise BadTypeError(f"out has dtype {out_g.dtype} but dtype={out_type} was asked")
        if out_g.readonly:
            raise InvalidArgumentError("out is read-only")
    with _gpu._device_scope(ops.lib, g.device):
        res = out if out is not None and _c_contiguous(out_g) else ops.empty(shape, out_type)
        r = _gpu._Gpu(res, "out")
        rdesc, _ = _box_batch_desc(r, channel_axis, "out")
        _core._cuda_box_filter_image(desc, rdesc, size, dtype=out_type.name, stream=r.stream,
                                     device=g.device, batch=True, **kw)
        if out is not None:
            if res is not out:
                ops.copy_into(out, res)
            return out
    return back(res) if back is not None else res


def local_op(name, image, window, method="mean", k=0.2, r=None, offset=0.0,
             border="reflect101", output="map", dtype=None, out=None, cval=0.0,
             foreground=255, threads=0, eps=1e-6):
    """threshold_local / normalize_local of a GPU image: the library's
    pixsum_cuda_threshold_local / pixsum_cuda_normalize_local (the keywords
    are checked in C, _core._cuda_local, as the CPU binding checks them);
    outputs allocated with the input's array library."""
    del threads
    normalize = name == "normalize_local"
    if normalize and not isinstance(method, str):  # normalize_local(image, window, eps)
        eps, method = float(method), "mean"
    img, g, back = _gpu_array(image, "image", name)
    ops = ops_for(g)
    _check_layout(g, 2, "image")
    if output not in ("map", "mask", "both"):
        raise InvalidArgumentError(f"output must be 'map', 'mask' or 'both', got {output!r}")
    if output == "both" and out is not None:
        raise InvalidArgumentError("out= takes one array: not with output='both'")
    kh, kw = (window, window) if isinstance(window, int) else tuple(window)
    h, w = g.shape[0], g.shape[1]
    if border == "valid":
        h, w = h - kh + 1, w - kw + 1
        if h < 1 or w < 1:
            raise BadShapeError(f"a {kw}x{kh} window does not fit a {g.shape[1]}x"
                                f"{g.shape[0]} image (border valid)")
    shape = (h, w) + (tuple(g.shape[2:]) if normalize else ())
    mtype = np.dtype(dtype) if dtype is not None else np.dtype(
        np.float32 if g.dtype == np.float32 else np.float64)
    with _gpu._device_scope(ops.lib, g.device):
        res_map = res_mask = None
        if normalize or output != "mask":
            res_map = out if out is not None else ops.empty(shape, mtype)
        if not normalize and output != "map":
            res_mask = out if out is not None and output == "mask" else ops.empty(shape, np.uint8)
        rm = _gpu._Gpu(res_map, "out") if res_map is not None else None
        rk = _gpu._Gpu(res_mask, "out") if res_mask is not None else None
        first = rm if rm is not None else rk
        _core._cuda_local(g.desc(), rm.desc() if rm else None, rk.desc() if rk else None,
                          window, normalize=normalize, method=method, k=float(k), r=r,
                          offset=float(offset), border=border, cval=float(cval),
                          foreground=int(foreground), eps=float(eps), stream=first.stream,
                          device=g.device)
    res = (res_map, res_mask) if output == "both" and not normalize else (
        res_map if res_map is not None else res_mask)
    if out is not None:
        return out
    if back is None:
        return res
    return tuple(back(x) for x in res) if isinstance(res, tuple) else back(res)


def _c_contiguous(g):
    """True if GPU array g is laid out row-major without gaps."""
    step = g.dtype.itemsize
    for n, st in zip(reversed(g.shape), reversed(g.strides)):
        if n > 1 and st != step:
            return False
        step *= max(n, 1)
    return True

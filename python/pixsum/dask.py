"""pixsum.dask - pixsum's operations on chunked arrays: Dask arrays of any
chunking, and Zarr arrays on disk in bounded memory.

Optional: ``import pixsum`` does not import Dask; ``import pixsum.dask`` needs
Dask (Debian's python3-dask; python3-distributed for a cluster), and the
Zarr helpers need Zarr (python3-zarr). Every chunk is computed by the
in-memory library (the C entry points behind ``pixsum.integral_tile``,
``pixsum.histogram``, ``pixsum.box_filter``, ``pixsum.otsu``, equalisation by
a given histogram); this module only plans the chunks and moves the few values
they exchange. Results equal the in-memory calls on the whole array: integer
results bit for bit, whatever the chunking.

- ``integral(x)``, ``integral_sq(x)``, ``integral3d(x)``: lazy Dask arrays of
  the integral tables, computed with carries as the MPI path does. Pass 1 reads
  each chunk once and keeps only its edge sums: the column sums (the last row of
  the chunk's own table) and the row sums (its last column), with NumPy
  ``sum`` in the table's accumulator type, in blocks of rows that stay in the
  cache (one read of the chunk from memory). One small task scans these sums
  across the chunk grid into each chunk's carries: the whole table's row just
  above the chunk, and for each of its rows the sum of the pixels left of it.
  Pass 2 computes each chunk's final table with ``pixsum.integral_tile``
  (``pixsum_integral_carry_tile()``), reading the chunk a second time and
  writing each table byte once. Only the edge sums and carries travel between
  workers (8 bytes x (W + H) x chunks along the other axis, for u64 tables).
  A volume's slice is its 2-D table with carries plus the 3-D table's slice
  below it, added as it is written: a chunk takes the slice below from the
  chunk below it (one plane per chunk), so a column of chunks runs in order
  along the depth.
- ``box_filter(x, size, ...)``: each output chunk is computed from its input
  chunk plus a halo of the window (clipped at the image, where the border mode
  applies, as in memory): windows larger than a chunk or the image work.
- ``histogram(x, ...)`` (computed: NumPy counts, as the in-memory call), with a
  range found in one pass of per-chunk minima and maxima when the data decide
  it; ``threshold_otsu(x)``; ``equalize(x)`` (lazy, mapped by the whole
  histogram).
- ``integral_to_zarr(src, dst)``: the table of a Zarr (or any chunked) image
  written chunk by chunk into a Zarr array: each input chunk read twice, never
  the whole image or table in memory.

CuPy-backed Dask arrays are computed on the GPU chunk by chunk, into CuPy
chunks (the results' meta is CuPy too): the chunk functions call the pixsum
functions that take GPU arrays, and the carries are made with the chunk's own
array module (the tables of GPU chunks are the GPU ``integral()`` of the chunk
plus the carries, added on the device). Only edge sums, carries, extremes and
counts are copied to the host.
"""

import functools
import numbers
import operator

import numpy as np

import dask
import dask.array as da
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from . import _core
from ._errors import BadShapeError, BadTypeError, InvalidArgumentError

__all__ = ["integral", "integral_sq", "integral3d", "box_filter", "histogram",
           "threshold_otsu", "equalize", "integral_to_zarr"]

# Bytes of a block of rows summed at once in pass 1: small enough to stay in
# the cache for the second reduction over the same rows.
_EDGE_BLOCK_BYTES = 256 << 10


# ---- array modules (NumPy or CuPy chunks) ----------------------------------

def _xp(a):
    """The array module of a chunk: CuPy for CuPy arrays, else NumPy."""
    if type(a).__module__.split(".")[0] == "cupy":
        import cupy
        return cupy
    return np


def _aligned(a):
    """`a`, or an aligned copy: the library reads aligned samples only, and
    arrays received from other processes may sit at any byte offset."""
    if isinstance(a, np.ndarray) and not a.flags.aligned:
        return np.array(a)
    return a


def _to_host(a):
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)


# ---- the integral table ----------------------------------------------------

def _as_dask(x, what="image"):
    if isinstance(x, da.Array):
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return da.from_array(x, chunks=getattr(x, "chunks", "auto"))
    raise BadTypeError(f"{what} must be a dask array (or an array dask can wrap), "
                       f"got {type(x).__name__}")


def _volume_of(x, volume):
    """x as (Z, H, W, C) with the channel axis in one chunk, and the function
    that gives a (Z, H, W, C) table back its caller's layout."""
    nd = x.ndim
    if volume:
        if nd not in (3, 4):
            raise BadShapeError(f"integral3d: a volume is (D, H, W) or (D, H, W, C), got "
                                f"{nd} axes")
        v = x[..., None] if nd == 3 else x
        back = (lambda t: t[..., 0]) if nd == 3 else (lambda t: t)
    else:
        if nd == 2:
            v, back = x[None, :, :, None], (lambda t: t[0, :, :, 0])
        elif nd == 3 and x.shape[2] <= 4:
            v, back = x[None], (lambda t: t[0])
        else:
            raise BadShapeError(f"integral: the image is (H, W) or (H, W, C) with C <= 4, got "
                                f"shape {x.shape}; use integral3d for volumes")
    if v.shape[3] < 1 or v.shape[3] > 4:
        raise BadShapeError(f"the channel axis holds {v.shape[3]} channels; pixsum reads 1-4")
    if len(v.chunks[3]) > 1:
        v = v.rechunk({3: -1})
    return v, back


def _table_dtype(img_dtype, count, squared, dtype, wrap, name):
    """The table dtype of the in-memory call for `count` pixels per channel,
    checked by the library's own rule (type pair, overflow unless wrap)."""
    if dtype is None:
        return np.dtype(_core.integral_dtype(img_dtype, count, squared=squared))
    dtype = np.dtype(dtype)
    # wrap: the pair must exist, overflow is allowed (one pixel never overflows)
    _core._integral_check(img_dtype, dtype, 1 if wrap else count, squared=squared, what=name)
    return dtype


def _acc_dtype(table_dtype):
    """The accumulator of edge sums: the table's own type for integers
    (modular, as the table), float64 for float tables."""
    return np.dtype(np.float64) if table_dtype.kind == "f" else table_dtype


def _sum_type(terms, n, acc):
    """The narrowest NumPy type that sums `n` terms of dtype `terms` exactly
    (never wider than `acc`, the table's accumulator; floats: float64):
    narrow sums of narrow samples run several times faster."""
    if acc.kind == "f" or terms.kind == "f":
        return acc
    info = np.iinfo(terms)
    most = max(info.max, -info.min) * n
    kinds = ("u2", "u4", "u8") if info.min >= 0 else ("i4", "i8")
    for k in kinds:
        t = np.dtype(k)
        if t.itemsize <= acc.itemsize and most <= np.iinfo(t).max:
            return t
    return acc


def _square_type(dtype, acc):
    """A type that holds every square of `dtype` exactly (the accumulator
    when nothing narrower does)."""
    narrow = {np.dtype(np.uint8): np.dtype(np.uint16), np.dtype(np.uint16): np.dtype(np.uint32),
              np.dtype(np.int16): np.dtype(np.int32)}
    t = narrow.get(np.dtype(dtype))
    return t if t is not None and acc.kind != "f" and t.itemsize <= acc.itemsize else acc


def _edge_sums(chunk, acc, squared):
    """Pass 1 of one (z, h, w, C) chunk: per slice its column sums (z, w, C)
    and row sums (z, h, C) in `acc`, of the samples or (squared) of their
    squares, by NumPy sums in the narrowest exact type. One read of the
    chunk from memory: a block of rows is summed both ways while it is in
    the cache."""
    xp = _xp(chunk)
    z, h, w, c = chunk.shape
    cols = xp.zeros((z, w, c), dtype=acc)
    rows = xp.empty((z, h, c), dtype=acc)
    terms = _square_type(chunk.dtype, acc) if squared else np.dtype(chunk.dtype)
    step = max(1, _EDGE_BLOCK_BYTES // max(1, w * c * terms.itemsize))
    if _sum_type(terms, step, acc).itemsize > _sum_type(terms, 257, acc).itemsize:
        step = min(step, 257)  # u8 columns: 16-bit sums of up to 257 rows
    col_t, row_t = _sum_type(terms, step, acc), _sum_type(terms, w, acc)
    for y0 in range(0, h, step):
        block = chunk[:, y0:y0 + step]
        if squared:
            block = block.astype(terms)
            block = block * block
        cols += block.sum(axis=1, dtype=col_t).astype(acc, copy=False)
        rows[:, y0:y0 + step] = block.sum(axis=2, dtype=row_t)
    return cols, rows


def _scan_carries(edge_list, nz, ny, nx, table_dtype):
    """The carries of every chunk from the edge sums (cols, rows) of all
    chunks, listed in (k, i, j) order: for chunk (k, i, j), the whole table's
    row above it over its columns (per slice) and, per row, the sum of the
    pixels left of it. Integer sums wrap modulo the table's width, as the
    table does. Returns a list, in the same order, of (carry_row, carry_col)
    in the table's type (None for zero carries)."""
    acc = _acc_dtype(table_dtype)
    edges = {}
    for n, (c, r) in enumerate(edge_list):
        edges[(n // (ny * nx), (n // nx) % ny, n % nx)] = (_to_host(c), _to_host(r))
    out = [None] * len(edge_list)
    with np.errstate(over="ignore"):
        for k in range(nz):
            # above[j]: column sums of the chunk rows so far, per chunk column
            above = [np.zeros_like(edges[(k, 0, j)][0]) for j in range(nx)]
            for i in range(ny):
                left = np.zeros_like(edges[(k, i, 0)][1])  # row sums left of chunk j
                corner = np.zeros(above[0].shape[::2], dtype=acc)  # (z, C) above-left
                for j in range(nx):
                    cols, rows = edges[(k, i, j)]
                    row = None
                    if i > 0:
                        row = (np.cumsum(above[j], axis=1, dtype=acc) +
                               corner[:, None, :]).astype(table_dtype)
                    col = left.astype(table_dtype) if j > 0 else None
                    out[(k * ny + i) * nx + j] = (row, col)
                    corner = corner + above[j].sum(axis=1, dtype=acc)
                    left = left + rows
                for j in range(nx):
                    above[j] = above[j] + edges[(k, i, j)][0]
    return out


def _tile(chunk, carries, table_dtype, squared_dtype, pad_top, pad_left, volume=False,
          pad_front=0, below=None):
    """Pass 2 of one (z, h, w, C) chunk: its final table(s) with its carries
    ((row, col) per table: plain first, then squared when squared_dtype), in
    a block with a leading zero row / column (and, for a volume, slice) when
    the padded table starts there. Returns one array, or a pair (plain,
    squared).

    A volume's table (`volume`) is the running sum of the slices' 2-D tables:
    slice s of the chunk is its 2-D table with carries, made in a scratch
    plane, plus the 3-D table's slice below it (the chunk's previous output
    slice, or for the first one `below`: the last slice of the chunk below,
    None at the bottom), added straight into the output, so that every output
    byte is written once."""
    xp = _xp(chunk)
    z, h, w, c = chunk.shape
    kinds = [table_dtype] + ([squared_dtype] if squared_dtype is not None else [])
    padded = pad_top or pad_left or pad_front
    outs = [xp.zeros((z + pad_front, h + pad_top, w + pad_left, c), dtype=t) if padded
            else xp.empty((z, h, w, c), dtype=t) for t in kinds]
    chunk = _aligned(chunk)
    prev = None if below is None else below[pad_top:, pad_left:]
    scratch = None
    for s in range(z):
        img = chunk[s]
        out_views = [o[pad_front + s, pad_top:, pad_left:] for o in outs]
        views = out_views
        if volume and prev is not None:
            if scratch is None:
                scratch = xp.empty((h, w, c), dtype=table_dtype)
            views = [scratch]
        if xp is np:
            kw = {}
            for n, (row, col) in enumerate(carries):
                suffix = "_sq" if n else ""
                if row is not None:
                    kw["carry_row" + suffix] = _aligned(row[s])
                if col is not None:
                    kw["carry_col" + suffix] = _aligned(col[s])
            _core.integral_tile(img, squared=squared_dtype is not None, dtype=kinds[0],
                                sq_dtype=squared_dtype, threads=1, wrap=True,
                                out=views[0], out_sq=views[1] if len(views) > 1 else None,
                                **kw)
        else:
            _gpu_tile(xp, img, views, kinds, carries, s)
        if volume:
            if prev is not None:
                with np.errstate(over="ignore"):  # integer tables wrap, as in memory
                    xp.add(scratch, prev, out=out_views[0])
            prev = out_views[0]
    return outs[0] if len(outs) == 1 else tuple(outs)


def _gpu_tile(xp, img, views, kinds, carries, s):
    """A GPU chunk's slice: pixsum's GPU table of the slice, then the carries
    added on the device (integer carries wrap as the table does)."""
    from . import integral as _integral, integral_sq as _integral_sq
    if len(views) == 1:
        tables = [_integral(img, dtype=kinds[0], wrap=True)]
    else:
        tables = list(_integral_sq(img, dtype=kinds[0], sq_dtype=kinds[1], wrap=True))
    for view, table, (row, col), t in zip(views, tables, carries, kinds):
        if row is not None:
            table += xp.asarray(row[s], dtype=t)[None]
        if col is not None:
            table += xp.cumsum(xp.asarray(col[s], dtype=t), axis=0, dtype=t)[:, None]
        view[...] = table


def _tables(x, *, volume, squared, dtype, sq_dtype, padded, wrap, name, store=None):
    """The graph of integral/integral_sq/integral3d: returns the (Z, H, W, C)
    dask table(s) (before the 3-D sum along Z) and the layout function.
    `store` (a Zarr array whose chunks are x's) makes every task read its
    chunk from the store itself."""
    x = _as_dask(x)
    v, back = _volume_of(x, volume)
    img = np.dtype(v.dtype)
    z, h, w, c = v.shape
    count = h * w * (z if volume else 1)
    tdt = _table_dtype(img, count, False, dtype, wrap, name)
    sdt = _table_dtype(img, count, True, sq_dtype, wrap, name) if squared else None
    nz, ny, nx = (len(v.chunks[a]) for a in range(3))
    tok = tokenize(v, tdt, sdt, padded, volume, store is not None, "pixsum-integral")
    edges_name, scan_name = "pixsum-edges-" + tok, "pixsum-scan-" + tok
    carry_name, tile_name = "pixsum-carry-" + tok, "pixsum-tile-" + tok
    below_name = "pixsum-below-" + tok
    starts = [np.concatenate([[0], np.cumsum(v.chunks[a])]).tolist() for a in range(3)]

    def chunk_task(k, i, j):
        """The task giving chunk (k, i, j): the Dask array's chunk, or a read
        of the store of its own (so pass 1 and pass 2 read the store apart
        instead of keeping the image in memory)."""
        if store is None:
            return (v.name, k, i, j, 0)
        region = tuple(slice(starts[a][n], starts[a][n + 1])
                       for a, n in ((0, k), (1, i), (2, j)))
        return (_read_chunk, store, region, volume)

    dsk = {}
    kinds = [tdt] + ([sdt] if squared else [])
    order = [(k, i, j) for k in range(nz) for i in range(ny) for j in range(nx)]
    for n, t in enumerate(kinds):
        for k, i, j in order:
            dsk[(edges_name, n, k, i, j)] = (_edge_sums, chunk_task(k, i, j), _acc_dtype(t),
                                             bool(n))
        dsk[(scan_name, n)] = (_scan_carries, [(edges_name, n) + o for o in order], nz, ny, nx,
                               t)
    for at, (k, i, j) in enumerate(order):
        dsk[(carry_name, k, i, j)] = (list, [(operator.getitem, (scan_name, n), at)
                                             for n in range(len(kinds))])
        top = 1 if padded and i == 0 else 0
        left = 1 if padded and j == 0 else 0
        front = 1 if padded and volume and k == 0 else 0
        below = None
        if volume and k > 0:
            # the 3-D table's slice under the chunk: the last slice of the
            # chunk below (the chunks of one column of the grid follow each
            # other along Z; the columns run in parallel)
            below = (below_name, k, i, j)
            dsk[below] = (operator.getitem, (tile_name, k - 1, i, j, 0), -1)
        dsk[(tile_name, k, i, j, 0)] = (_tile, chunk_task(k, i, j), (carry_name, k, i, j),
                                        tdt, sdt, top, left, volume, front, below)
    pad = 1 if padded else 0
    zpad = pad if volume else 0
    chunks = ((v.chunks[0][0] + zpad,) + v.chunks[0][1:],
              (v.chunks[1][0] + pad,) + v.chunks[1][1:],
              (v.chunks[2][0] + pad,) + v.chunks[2][1:], v.chunks[3])
    base = HighLevelGraph.from_collections(tile_name, dsk,
                                           dependencies=[v] if store is None else [])
    # the chunks' array type (NumPy, or CuPy for GPU chunks) for dask's meta
    like = getattr(v, "_meta", None)
    xp = _xp(like) if like is not None else np
    if not squared:
        return [da.Array(base, tile_name, chunks, meta=xp.empty((0,) * 4, dtype=tdt))], back
    outs = []
    for n, t in enumerate(kinds):  # the pair of tables of every chunk, taken apart
        name_n = f"pixsum-tile{n}-" + tok
        layers, deps = dict(base.layers), dict(base.dependencies)
        layers[name_n] = {(name_n,) + key[1:]: (operator.getitem, key, n)
                          for key in dsk if key[0] == tile_name}
        deps[name_n] = {tile_name}
        outs.append(da.Array(HighLevelGraph(layers, deps), name_n, chunks,
                             meta=xp.empty((0,) * 4, dtype=t)))
    return outs, back


def _read_chunk(store, region, volume):
    """One chunk read from a store, as (z, h, w, C)."""
    a = np.asarray(store[region[1:] if not volume else region])
    if not volume:
        a = a[None]
    return a if a.ndim == 4 else a[..., None]


def integral(image, *, dtype=None, padded=False, wrap=False):
    """Lazy integral table of a 2-D Dask image, (H, W) or (H, W, C) with
    C <= 4, of any chunking: equal to ``pixsum.integral`` of the whole image
    (integer tables bit for bit), with the same dtype rules (``dtype`` None:
    the narrowest table that cannot overflow for H x W pixels; an explicit
    integer dtype that could overflow is refused unless ``wrap``). ``padded``
    adds the leading zero row and column. Pass 1 sums each chunk's edges with
    NumPy (see the module docstring), pass 2 is ``pixsum.integral_tile``."""
    (t,), back = _tables(image, volume=False, squared=False, dtype=dtype, sq_dtype=None,
                         padded=padded, wrap=wrap, name="integral")
    return back(t)


def integral_sq(image, *, dtype=None, sq_dtype=None, padded=False, wrap=False):
    """Lazy (plain, squared) integral tables of a 2-D Dask image, as
    ``pixsum.integral_sq`` of the whole image (see ``integral``)."""
    (t, s), back = _tables(image, volume=False, squared=True, dtype=dtype, sq_dtype=sq_dtype,
                           padded=padded, wrap=wrap, name="integral_sq")
    return back(t), back(s)


def integral3d(volume, *, dtype=None, padded=False, wrap=False):
    """Lazy 3-D integral table of a Dask volume (D, H, W) or (D, H, W, C), as
    ``pixsum.integral3d`` (integer tables bit for bit, any chunking): each
    slice's 2-D table with its carries (``pixsum.integral_tile``) plus the 3-D
    table's slice below it, written once into the output chunk. A chunk
    takes the slice below it from the last slice of the chunk below, so the
    chunks of one column of the grid run one after another along D, the
    columns in parallel."""
    (t,), back = _tables(volume, volume=True, squared=False, dtype=dtype, sq_dtype=None,
                         padded=padded, wrap=wrap, name="integral3d")
    return back(t)


# ---- Zarr: tables of images on disk, chunk by chunk -------------------------

def integral_to_zarr(src, dst, *, dtype=None, chunks=None, compressor="default",
                     squared=False, sq_dst=None, compute=True, **zarr_kwargs):
    """Integral table of a 2-D image stored in Zarr (a ``zarr.Array``, a path
    or store that ``zarr.open`` reads, or any Dask array) written chunk by
    chunk into the Zarr array ``dst`` (a ``zarr.Array`` of the table's shape
    and dtype, or a path created with ``chunks`` (default: the image's) and
    ``compressor``). Each worker reads its chunk twice (edge sums, then the
    table) and writes its table chunk; nothing is gathered to the client and
    the memory in use is a few chunks per worker. ``squared=True`` also writes
    the squared table into ``sq_dst``. Runs on the current Dask scheduler
    (a ``distributed.Client`` if one is active). Returns the Zarr array(s), or
    the lazy store (``compute=False``)."""
    import zarr
    x, store = _zarr_image(src)
    if squared and sq_dst is None:
        raise InvalidArgumentError("integral_to_zarr: squared=True needs sq_dst")
    outs, back = _tables(x, volume=False, squared=squared, dtype=dtype, sq_dtype=None,
                         padded=False, wrap=False, name="integral_to_zarr", store=store)
    tables = [back(t) for t in outs]
    targets = [dst, sq_dst] if squared else [dst]
    arrays = []
    for t, target in zip(tables, targets):
        if not isinstance(target, zarr.Array):
            kw = dict(zarr_kwargs)
            if compressor != "default":
                kw["compressor"] = compressor
            target = zarr.open(target, mode="w", shape=t.shape, dtype=t.dtype,
                               chunks=chunks or tuple(c[0] for c in t.chunks), **kw)
        if target.shape != t.shape or np.dtype(target.dtype) != t.dtype:
            raise BadShapeError(f"integral_to_zarr: the destination is {target.shape} "
                                f"{target.dtype}, the table {t.shape} {t.dtype}")
        arrays.append(target)
    stores = [da.store(t, a, lock=False, compute=False) for t, a in zip(tables, arrays)]
    if not compute:
        return stores
    dask.compute(*stores)
    return arrays[0] if len(arrays) == 1 else tuple(arrays)


def _zarr_image(src):
    """A Dask array of an image in Zarr (a zarr.Array or what zarr.open
    reads) with the store's chunks, and the store (None for a Dask array): the
    tasks then read their chunk from the store, pass 1 and pass 2 apart,
    instead of keeping the image in memory between them."""
    if isinstance(src, da.Array):
        return src, None
    import zarr
    z = src if isinstance(src, zarr.Array) else zarr.open(src, mode="r")
    if z.ndim not in (2, 3):
        raise BadShapeError(f"integral_to_zarr: the image is (H, W) or (H, W, C), got shape "
                            f"{z.shape}")
    chunks = z.chunks if z.ndim == 2 else z.chunks[:2] + (z.shape[2],)
    return da.from_array(z, chunks=chunks), z


# ---- box filters -------------------------------------------------------------

def box_filter(image, size, *, stat=None, normalize=True, border=None, mode="same",
               cval=0.0, dtype=None):
    """Lazy box filter of a 2-D Dask image, (H, W) or (H, W, C), of any
    chunking: ``pixsum.box_filter`` with the same arguments (``size``,
    ``stat``, ``normalize``, ``border``/``mode``, ``cval``, ``dtype``) and the
    same result, integer outputs bit for bit. Each output chunk is computed by
    ``pixsum.box_filter`` on its input chunk grown by a full window on every
    side, clipped at the image (so the image's own border rule applies there,
    as in memory); windows larger than a chunk or than the image work. Float
    statistics of float images agree within the library's float bound."""
    x = _as_dask(image)
    if x.ndim not in (2, 3) or (x.ndim == 3 and x.shape[2] > 4):
        raise BadShapeError(f"box_filter: the image is (H, W) or (H, W, C) with C <= 4, got "
                            f"shape {x.shape}")
    kh, kw = (size, size) if isinstance(size, numbers.Integral) else tuple(size)
    kh, kw = int(kh), int(kw)
    bname = border if border is not None else mode
    valid = bname == "valid"
    kwargs = dict(stat=stat, normalize=normalize, border=None if valid else border,
                  mode="same" if valid else mode, cval=cval, dtype=dtype, threads=1)
    if x.ndim == 3 and len(x.chunks[2]) > 1:
        x = x.rechunk({2: -1})
    h, w = x.shape[:2]
    # the library's own checks and output dtype, on a stand-in of the image's
    # size near the window (the valid shape rule included)
    proxy = np.zeros((min(h, kh + 1), min(w, kw + 1)) + x.shape[2:], dtype=x.dtype)
    pkw = dict(kwargs, border=border, mode=mode)
    out_dtype = _core.box_filter(proxy, (kh, kw), **pkw).dtype  # a host stand-in
    meta = _xp(x._meta).empty((0,) * x.ndim, dtype=out_dtype)  # NumPy or CuPy chunks
    if valid:
        kwargs["border"] = "replicate"  # any: only windows fully inside are kept
    blocks = []
    r0 = 0
    for ch in x.chunks[0]:
        row, c0 = [], 0
        for cw in x.chunks[1]:
            a, b = max(0, r0 - kh), min(h, r0 + ch + kh)
            c, d = max(0, c0 - kw), min(w, c0 + cw + kw)
            region = x[a:b, c:d].rechunk(-1)
            fn = functools.partial(_box_part, y=r0 - a, hh=ch, x=c0 - c, ww=cw,
                                   size=(kh, kw), kwargs=kwargs)
            part = region.map_blocks(fn, chunks=(ch, cw) + x.shape[2:], dtype=out_dtype,
                                     meta=meta)
            row.append(part)
            c0 += cw
        blocks.append(row)
        r0 += ch
    out = da.concatenate([da.concatenate(row, axis=1) for row in blocks], axis=0)
    if valid:
        out = out[kh // 2:kh // 2 + h - kh + 1, kw // 2:kw // 2 + w - kw + 1]
    return out


def _box_part(region, y, hh, x, ww, size, kwargs):
    from . import box_filter as _box_filter
    res = _box_filter(_aligned(region), size, **kwargs)
    return res[y:y + hh, x:x + ww]


# ---- histograms ----------------------------------------------------------------

def _spatial_mask(mask, x, spatial):
    if mask is None:
        return None
    m = _as_dask(mask, "mask")
    if m.shape != x.shape[:spatial]:
        raise BadShapeError(f"mask has shape {m.shape}, the image's spatial shape is "
                            f"{x.shape[:spatial]}")
    return m.rechunk(x.chunks[:spatial])


def _layout(x, channels, name):
    """The number of spatial axes of an image for histograms: all but a
    trailing channel axis when channels=True and ndim >= 3, as the in-memory
    call reads it (which refuses more than 4 channels)."""
    nd = x.ndim
    if nd == 1:
        return 1
    has_ch = channels and nd >= 3
    if not channels and nd == 4:
        raise BadShapeError(f"{name}: a 4-D image needs channels=True")
    return nd - 1 if has_ch else nd


def _chunk_extremes(chunk, mask):
    """(min, max, any) of the finite samples a mask selects in one chunk."""
    xp = _xp(chunk)
    v = chunk
    if mask is not None:
        sel = mask != 0
        while sel.ndim < v.ndim:
            sel = sel[..., None]
        sel = xp.broadcast_to(sel, v.shape)
        v = v[sel]
    if v.dtype.kind == "f":
        v = v[xp.isfinite(v)]
    if v.size == 0:
        return None
    return _to_host(v.min()).item(), _to_host(v.max()).item()  # exact Python numbers


def _resolve(x, spatial, bins, range, mask, name):
    """bins, lo, hi the in-memory call would use for the whole image: the
    library's own resolution on a two-sample stand-in holding the image's
    extremes (found in one pass of per-chunk minima and maxima), as the GPU
    path resolves them."""
    dt = np.dtype(x.dtype)
    # whether the data decide the default range: two stand-ins of other
    # extremes resolve to other ranges (int32 and floats; u8, u16, i16 not)
    decides = range is None and (
        _core._hist_resolve(np.array([0, 0], dtype=dt), bins, None, None, name) !=
        _core._hist_resolve(np.array([0, 1], dtype=dt), bins, None, None, name))
    if decides:
        m = _spatial_mask(mask, x, spatial)
        xs = x.to_delayed().ravel()
        ms = _mask_per_chunk(x, m, spatial) if m is not None else [None] * len(xs)
        parts = dask.compute(*[dask.delayed(_chunk_extremes)(c, mm) for c, mm in zip(xs, ms)])
        found = [p for p in parts if p is not None]
        if not found:
            fill = np.nan if dt.kind == "f" else 0
            proxy, pmask = np.full(2, fill, dtype=dt), np.zeros(2, np.uint8)
        else:
            lo, hi = min(p[0] for p in found), max(p[1] for p in found)
            proxy, pmask = np.array([lo, hi], dtype=dt), None
    else:
        proxy, pmask = np.zeros(2, dtype=dt), None
    return _core._hist_resolve(proxy, bins, range, pmask, name)


def _mask_per_chunk(x, m, spatial):
    """The mask's delayed chunk for each of x's chunks (x.to_delayed() order;
    a channel axis of x is in one chunk)."""
    xs = x.to_delayed()
    md = m.to_delayed()
    out = []
    for idx in np.ndindex(xs.shape):
        out.append(md[idx[:spatial]])
    return out


def _chunk_hist(chunk, mask, bins, lo, hi, channels):
    from . import histogram as _histogram
    counts, info = _histogram(_aligned(chunk), bins=bins, range=(lo, hi), mask=_aligned(mask),
                              channels=channels, info=True, threads=1)
    return _to_host(counts).astype(np.uint64), info


def _sum_hists(parts):
    counts = parts[0][0].copy()
    info = dict(parts[0][1])
    keys = ("in_range", "below", "above", "nan")
    for c, inf in parts[1:]:
        counts += c
        info["pixels"] += inf["pixels"]
        for k in keys:
            info[k] = [a + b for a, b in zip(info[k], inf[k])]
    return counts, info


def histogram(image, *, bins=None, range=None, mask=None, relative=False, cumulative=False,
              of_all_samples=False, channels=True, info=False):
    """Histogram of a Dask image (any chunking; the layouts of
    ``pixsum.histogram``: (N,), (H, W), (H, W, C), (D, H, W, C), (D, H, W) with
    channels=False), computed: NumPy counts equal to the in-memory call's,
    with the same bins, range, mask, relative, cumulative and of_all_samples
    options and info dict. Every chunk is counted by ``pixsum.histogram`` over
    one shared range; where the data decide the range (int32, uint32, float images
    without ``range``) it is resolved by the library from the image's extremes,
    found in one pass of per-chunk minima and maxima."""
    x = _as_dask(image)
    spatial = _layout(x, channels, "histogram")
    if spatial < x.ndim and len(x.chunks[-1]) > 1:
        x = x.rechunk({x.ndim - 1: -1})
    nbins, lo, hi = _resolve(x, spatial, bins, range, mask, "histogram")
    m = _spatial_mask(mask, x, spatial)
    xs = x.to_delayed().ravel()
    ms = _mask_per_chunk(x, m, spatial) if m is not None else [None] * len(xs)
    parts = [dask.delayed(_chunk_hist)(c, mm, nbins, lo, hi, channels) for c, mm in zip(xs, ms)]
    counts, inf = dask.compute(dask.delayed(_sum_hists)(parts))[0]
    inf["edges"] = _core._hist_edges(nbins, lo, hi)
    if relative or cumulative:
        counts = _core._hist_finish(counts, inf["pixels"], inf["in_range"], relative=relative,
                                    cumulative=cumulative, of_all_samples=of_all_samples)
    return (counts, inf) if info else counts


def threshold_otsu(image, *, bins=None, range=None, mask=None, info=False):
    """Otsu's threshold of a one-channel Dask image ((N,), (H, W) or a volume
    (D, H, W)), as ``pixsum.threshold_otsu``: the histogram above, then the
    library's ``pixsum.otsu`` of its counts; the threshold is the upper edge
    of the lower class's last bin (the foreground is image >= it)."""
    x = _as_dask(image)
    counts, inf = histogram(x, bins=bins, range=range, mask=mask, channels=False, info=True)
    t = _core.otsu(counts)
    threshold = float(inf["edges"][t + 1])
    if info:
        return threshold, {"bin": t, "bins": inf["bins"], "lo": inf["lo"], "hi": inf["hi"]}
    return threshold


def equalize(image, *, mask=None, channels=True):
    """Lazy histogram equalisation of a uint8/uint16 Dask image, as
    ``pixsum.equalize`` of the whole image (bit for bit): the whole image's
    histogram is computed now (``histogram`` above), then every chunk is
    mapped by it (``pixsum_equalize_counts()``; on GPU chunks, the library's
    mapping of all levels gathered on the device)."""
    x = _as_dask(image)
    dt = np.dtype(x.dtype)
    if dt not in (np.dtype(np.uint8), np.dtype(np.uint16)):
        raise BadTypeError(f"equalize: image must be uint8 or uint16, not {dt}")
    spatial = _layout(x, channels, "equalize")
    if spatial < x.ndim and len(x.chunks[-1]) > 1:
        x = x.rechunk({x.ndim - 1: -1})
    counts = histogram(x, mask=mask, channels=channels)
    return x.map_blocks(_equalize_chunk, counts, channels, dtype=dt,
                        meta=_xp(x._meta).empty((0,) * x.ndim, dtype=dt))


def _equalize_chunk(chunk, counts, channels):
    xp = _xp(chunk)
    if xp is np:
        return _core._equalize_counts(_aligned(chunk), _aligned(counts), channels=channels,
                                      threads=1)
    levels = counts.shape[-1]
    nch = counts.shape[0] if counts.ndim == 2 else 1
    ramp = np.arange(levels, dtype=chunk.dtype)
    if counts.ndim == 2:
        ramp = np.repeat(ramp[:, None], nch, axis=1)
    lut = _core._equalize_counts(ramp, counts, channels=True, threads=1)  # the library's map
    lut = xp.asarray(lut)
    if counts.ndim == 2:
        return xp.stack([lut[:, c][chunk[..., c]] for c in range(nch)], axis=-1)
    return lut[chunk]

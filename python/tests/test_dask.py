"""test_dask.py - pixsum.dask and pixsum.integral_tile: every chunked result
equals the in-memory call on the whole array (integer results bit for bit),
on Dask's threaded scheduler and on a distributed cluster of two worker
processes on the loopback; uneven chunks, one chunk, one row of chunks, 3-D
volumes (whose tables are written once: test_integral3d_writes_once), every
input type of the in-memory call, squared and padded tables;
integral_tile against sums taken from the definition; the Zarr helper; GPU
(CuPy) chunks where a CUDA device is present, checked to stay on the GPU."""

import importlib.util

import numpy as np
import pytest

import pixsum

try:  # a Dask that is missing, or that fails to import (e.g. older than the NumPy)
    import dask
    import dask.array as da
    import pixsum.dask as pdask
except ImportError as exc:
    pytest.skip(f"skipped: Dask is not usable here ({exc})", allow_module_level=True)

RNG = np.random.default_rng(42)
INPUT_TYPES = [np.uint8, np.uint16, np.int16, np.int32, np.uint32, np.float32, np.float64]


def image(shape, dtype, rng=RNG):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return (rng.standard_normal(shape) * 100).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-9 if want.dtype == np.float64 else 1e-4,
                                   atol=1e-6 * (np.abs(want).max() + 1))
    else:
        np.testing.assert_array_equal(got, want)


@pytest.fixture(scope="module")
def cluster_client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None,
                                       silence_logs=40)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


# ---- integral_tile: the C entry point, from the definition ------------------

def definition_table(img, squared=False):
    """Entry (y, x) = the sum over the rectangle, each entry summed on its own
    (exact Python integers for integer images)."""
    a = img.astype(object) if img.dtype.kind in "iu" else img.astype(np.float64)
    if squared:
        a = a * a
    h, w = a.shape[:2]
    out = np.empty(a.shape, dtype=object)
    for y in range(h):
        for x in range(w):
            out[y, x] = a[:y + 1, :x + 1].sum(axis=(0, 1))
    return out


@pytest.mark.parametrize("dtype,tdt", [(np.uint8, np.uint32), (np.int16, np.int64),
                                       (np.uint32, np.uint64), (np.float32, np.float64)])
def test_integral_tile_from_definition(dtype, tdt):
    rng = np.random.default_rng(7)
    for shape in [(1, 1), (1, 9), (9, 1), (7, 11), (6, 5, 3)]:
        img = image(shape, dtype, rng)
        ref = definition_table(img)
        h, w = shape[:2]
        y0, x0 = h // 2, w // 3
        tile = img[y0:, x0:]
        row = np.array(list(ref[y0 - 1, x0:]), dtype=tdt) if y0 else None
        left = img[y0:, :x0].astype(object if tile.dtype.kind in "iu" else np.float64)
        col = np.array(list(left.sum(axis=1)), dtype=tdt) if x0 else None
        got = pixsum.integral_tile(tile, carry_row=row, carry_col=col, dtype=tdt)
        want = np.array(ref[y0:, x0:].tolist(), dtype=tdt)
        same(got, want)


def test_integral_tile_squared_and_refusals():
    img = image((8, 6), np.uint8)
    t, s = pixsum.integral_sq(img)
    row, row_s = t[3, 2:], s[3, 2:]
    col = img[4:, :2].astype(np.uint64).sum(axis=1).astype(t.dtype)
    col_s = (img[4:, :2].astype(np.uint64) ** 2).sum(axis=1).astype(s.dtype)
    got, got_s = pixsum.integral_tile(img[4:, 2:], carry_row=row, carry_col=col,
                                      carry_row_sq=row_s, carry_col_sq=col_s, squared=True)
    same(got, t[4:, 2:])
    same(got_s, s[4:, 2:])
    with pytest.raises(pixsum.BadShapeError):
        pixsum.integral_tile(img[4:, 2:], carry_col=col[:-1])
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.integral_tile(img, carry_row_sq=t[0])
    big = np.full(img[4:, 2:].shape[0], 2 ** 32 - 10, dtype=np.uint32)
    with pytest.raises(pixsum.OverflowError):  # the carries count in the overflow rule
        pixsum.integral_tile(img[4:, 2:], carry_col=big)
    pixsum.integral_tile(img[4:, 2:], carry_col=big, wrap=True)


# ---- integral tables of Dask arrays ----------------------------------------

CHUNKINGS = {
    "uneven": ((7, 13, 5, 12), (9, 1, 20, 11)),
    "one chunk": ((37,), (41,)),
    "one row of chunks": ((37,), (10, 10, 10, 11)),
    "one column of chunks": ((5, 30, 2), (41,)),
}


@pytest.mark.parametrize("dtype", INPUT_TYPES)
@pytest.mark.parametrize("chunking", list(CHUNKINGS))
def test_integral_threaded(dtype, chunking):
    img = image((37, 41), dtype)
    x = da.from_array(img, chunks=CHUNKINGS[chunking])
    t = pdask.integral(x)
    assert isinstance(t, da.Array)
    same(t.compute(scheduler="threads"), pixsum.integral(img))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
def test_integral_sq_padded_channels(dtype):
    img = image((23, 19, 3), dtype)
    x = da.from_array(img, chunks=((4, 11, 8), (10, 9), (2, 1)))
    t, s = pdask.integral_sq(x, padded=True)
    wt, ws = pixsum.integral_sq(img, padded=True)
    same(t.compute(scheduler="threads"), wt)
    same(s.compute(scheduler="threads"), ws)
    same(pdask.integral(x, padded=True, dtype=np.float64).compute(),
         pixsum.integral(img, padded=True, dtype=np.float64))


def test_integral_dtype_rules():
    img = np.full((300, 300), 255, np.uint8)
    x = da.from_array(img, chunks=70)
    same(pdask.integral(x, dtype=np.uint32).compute(), pixsum.integral(img, dtype=np.uint32))
    big = da.zeros((70000, 70000), dtype=np.uint8, chunks=10000)
    assert pdask.integral(big).dtype == pixsum.integral(np.zeros((1, 1), np.uint8)).dtype \
        or pdask.integral(big).dtype == np.uint64
    with pytest.raises(pixsum.OverflowError):  # the whole image's rule, from the shape
        pdask.integral(big, dtype=np.uint32)
    wrapped = pdask.integral(x[:100, :100], dtype=np.uint32, wrap=True).compute()
    same(wrapped, pixsum.integral(img[:100, :100], dtype=np.uint32, wrap=True))
    with pytest.raises(pixsum.BadShapeError):
        pdask.integral(da.zeros((5, 6, 7), dtype=np.uint8))


VOLUME_CHUNKINGS = [((2, 3, 1), (5, 8), (4, 4, 3)), ((1, 1, 4), (13,), (1, 10)),
                    ((6,), (6, 7), (11,)), ((6,), (13,), (11,)), ((3, 3), (1, 12), (2, 9))]


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.uint32, np.float64])
@pytest.mark.parametrize("chunks", VOLUME_CHUNKINGS)
def test_integral3d_volume(dtype, chunks):
    vol = image((6, 13, 11), dtype)
    x = da.from_array(vol, chunks=chunks)
    same(pdask.integral3d(x).compute(scheduler="threads"), pixsum.integral3d(vol))
    same(pdask.integral3d(x, padded=True).compute(), pixsum.integral3d(vol, padded=True))


def test_integral3d_channels_and_wrap():
    vol4 = image((5, 9, 7, 2), np.uint16)
    x4 = da.from_array(vol4, chunks=((2, 1, 2), (4, 5), (3, 4), 2))
    same(pdask.integral3d(x4).compute(), pixsum.integral3d(vol4))
    same(pdask.integral3d(x4, padded=True).compute(), pixsum.integral3d(vol4, padded=True))
    big = np.full((4, 300, 300), 255, np.uint8)  # 9e7 > 2^32: a u32 table wraps
    xb = da.from_array(big, chunks=(3, 170, 120))
    same(pdask.integral3d(xb, dtype=np.uint32, wrap=True).compute(),
         pixsum.integral3d(big, dtype=np.uint32, wrap=True))


def test_integral3d_writes_once():
    """The graph of integral3d: one task per output chunk writes it (the
    pixsum-tile layer), beside the small edge-sum, scan, carry and
    slice-below tasks; nothing else (no cumsum over the table afterwards)
    produces table data. Each tile task allocates its chunk once and fills
    it slice by slice."""
    vol = image((7, 10, 9), np.uint8)
    x = da.from_array(vol, chunks=((3, 4), (6, 4), (5, 4)))
    for padded in (False, True):
        t = pdask.integral3d(x, padded=padded)
        kinds = {name.split("-")[1] if name.startswith("pixsum-") else name.split("-")[0]
                 for name in (key[0] if isinstance(key, tuple) else key for key in dict(t.dask))}
        assert kinds <= {"edges", "scan", "carry", "below", "tile", "array", "getitem"}, kinds
        assert not any("cumsum" in name for name in t.dask.layers)
        tiles = [key for key in dict(t.dask) if key[0].startswith("pixsum-tile-")]
        assert len(tiles) == 2 * 2 * 2
        # the layer after the tiles is the view that drops the channel axis
        blocks = dask.compute(*t.to_delayed().ravel(), scheduler="sync")
        assert all(b.base is not None for b in blocks)  # views of the tiles' chunks
        same(t.compute(), pixsum.integral3d(vol, padded=padded))


def test_integral_distributed(cluster_client):
    img = image((203, 157), np.uint8)
    x = da.from_array(img, chunks=((50, 3, 100, 50), (60, 60, 37)))
    t = pdask.integral(x, dtype=np.uint64)
    same(cluster_client.compute(t).result(), pixsum.integral(img, dtype=np.uint64))
    t, s = pdask.integral_sq(x)
    wt, ws = pixsum.integral_sq(img)
    got_t, got_s = cluster_client.compute([t, s], sync=True)
    same(got_t, wt)
    same(got_s, ws)
    vol = image((5, 40, 30), np.int16)
    v = da.from_array(vol, chunks=(2, 15, 11))
    same(cluster_client.compute(pdask.integral3d(v)).result(), pixsum.integral3d(vol))


# ---- Zarr -----------------------------------------------------------------------

def test_integral_to_zarr(tmp_path, cluster_client):
    zarr = pytest.importorskip("zarr")
    img = image((300, 250), np.uint8)
    src = zarr.open(str(tmp_path / "img.zarr"), mode="w", shape=img.shape, dtype=img.dtype,
                    chunks=(64, 100))
    src[...] = img
    dst = pdask.integral_to_zarr(str(tmp_path / "img.zarr"), str(tmp_path / "sat.zarr"),
                                 dtype=np.uint64, compressor=None)
    same(zarr.open(str(tmp_path / "sat.zarr"), mode="r")[...],
         pixsum.integral(img, dtype=np.uint64))
    assert dst.chunks == (64, 100)
    t, s = pdask.integral_to_zarr(src, str(tmp_path / "t.zarr"), squared=True,
                                  sq_dst=str(tmp_path / "s.zarr"))
    wt, ws = pixsum.integral_sq(img)
    same(t[...], wt)
    same(s[...], ws)


# ---- box filters ---------------------------------------------------------------

BOX_CASES = [
    (np.uint8, 3, "reflect101", "mean"), (np.uint8, (5, 2), "reflect", "sum"),
    (np.uint16, (4, 7), "replicate", "mean"), (np.int16, 9, "constant", "sum"),
    (np.int32, (3, 3), "shrink", "sum"), (np.uint32, (2, 6), "valid", "sum"),
    (np.uint8, 31, "reflect101", "sum"),   # wider than the chunks
    (np.uint8, (80, 90), "reflect", "mean"),  # larger than the image
    (np.uint8, (60, 3), "replicate", "sum"),
    (np.float32, 5, "reflect101", "var"), (np.float64, (3, 4), "shrink", "mean"),
    (np.uint8, 4, "valid", "var"),
]


@pytest.mark.parametrize("dtype,size,border,stat", BOX_CASES)
def test_box_filter(dtype, size, border, stat):
    img = image((45, 52), dtype)
    if np.dtype(dtype).kind == "f":
        img = img / 10 + 3
    x = da.from_array(img, chunks=((10, 20, 15), (7, 30, 15)))
    kw = dict(stat=stat, border=border, cval=7)
    got = pdask.box_filter(x, size, **kw).compute(scheduler="threads")
    same(got, pixsum.box_filter(img, size, **kw))


def test_box_filter_channels_distributed(cluster_client):
    img = image((33, 40, 3), np.uint8)
    x = da.from_array(img, chunks=(9, 11, 3))
    got = cluster_client.compute(pdask.box_filter(x, (5, 7), border="reflect101")).result()
    same(got, pixsum.box_filter(img, (5, 7), border="reflect101"))
    got = pdask.box_filter(x, 3, stat="sum", mode="valid").compute()
    same(got, pixsum.box_filter(img, 3, stat="sum", mode="valid"))


# ---- histograms -------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.int32, np.uint32,
                                   np.float32, np.float64])
def test_histogram_default_range(dtype):
    img = image((40, 35), dtype)
    if np.dtype(dtype).kind == "f":
        img[3, 4] = np.nan
        img[5, 6] = np.inf
    x = da.from_array(img, chunks=((10, 25, 5), (20, 15)))
    got, info = pdask.histogram(x, info=True)
    want, winfo = pixsum.histogram(img, info=True)
    same(got, want)
    for k in ("bins", "lo", "hi", "pixels", "in_range", "below", "above", "nan"):
        assert info[k] == winfo[k], k
    np.testing.assert_array_equal(info["edges"], winfo["edges"])


def test_histogram_options():
    img = image((30, 28, 3), np.float32)
    mask = RNG.integers(0, 2, (30, 28)).astype(bool)
    x = da.from_array(img, chunks=(16, 15, 2))
    m = da.from_array(mask, chunks=(11, 14))
    for kw in [dict(bins=17), dict(bins=10, range=(-50, 50)), dict(relative=True),
               dict(cumulative=True, bins=5), dict(relative=True, cumulative=True,
                                                   of_all_samples=True, range=(0, 100))]:
        same(pdask.histogram(x, mask=m, **kw), pixsum.histogram(img, mask=mask, **kw))
    vol = image((4, 10, 9), np.int32)
    xv = da.from_array(vol, chunks=(3, 4, 5))
    same(pdask.histogram(xv, channels=False), pixsum.histogram(vol, channels=False))
    empty = da.from_array(np.zeros((4, 4), np.float64), chunks=2)
    same(pdask.histogram(empty, mask=np.zeros((4, 4), bool)),
         pixsum.histogram(np.zeros((4, 4)), mask=np.zeros((4, 4), bool)))


def test_histogram_otsu_equalize_distributed(cluster_client):
    img = image((64, 50), np.uint8)
    img[:32] //= 3
    x = da.from_array(img, chunks=((20, 44), (17, 33)))
    same(pdask.histogram(x), pixsum.histogram(img))
    assert pdask.threshold_otsu(x) == pixsum.threshold_otsu(img)
    assert pdask.threshold_otsu(x, info=True) == pixsum.threshold_otsu(img, info=True)
    same(pdask.equalize(x).compute(), pixsum.equalize(img))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_equalize_channels_mask(dtype):
    img = image((21, 30, 2), dtype)
    mask = RNG.integers(0, 2, (21, 30)).astype(np.uint8)
    x = da.from_array(img, chunks=(11, 17, 1))
    same(pdask.equalize(x, mask=da.from_array(mask, chunks=9)).compute(),
         pixsum.equalize(img, mask=mask))
    vol = image((3, 10, 12), dtype)
    same(pdask.equalize(da.from_array(vol, chunks=2), channels=False).compute(),
         pixsum.equalize(vol, channels=False))
    fl = image((30,), np.float64)
    assert pdask.threshold_otsu(da.from_array(fl, chunks=7), bins=16) == \
        pixsum.threshold_otsu(fl, bins=16)


# ---- GPU chunks (CuPy) -----------------------------------------------------

def _cuda_device():
    if importlib.util.find_spec("cupy") is None or not pixsum.HAVE_CUDA:
        return False
    try:
        return pixsum.cuda_device_count() > 0
    except pixsum.Error:
        return False


@pytest.mark.skipif(not _cuda_device(), reason="skipped: no CUDA device")
def test_cupy_chunks(monkeypatch):
    """CuPy chunks are computed on the GPU: every chunk reaches pixsum's
    functions as a CuPy array (so they take their GPU paths), the host-only
    carry entry point is never called, and every chunk of every result is a
    CuPy array; a chunk silently moved to the host fails here."""
    import cupy
    seen = []

    def on_gpu(fn):
        def wrapper(a, *args, **kwargs):
            seen.append((fn.__name__, type(a)))
            assert isinstance(a, cupy.ndarray), f"{fn.__name__} got a {type(a).__name__} chunk"
            return fn(a, *args, **kwargs)
        wrapper.__name__ = fn.__name__
        return wrapper

    def host_tile(*args, **kwargs):
        raise AssertionError("a GPU chunk went to the host's integral_tile")

    def blocks_on_gpu(arr):
        assert isinstance(arr._meta, cupy.ndarray)
        blocks = dask.compute(*arr.to_delayed().ravel(), scheduler="threads")
        assert all(isinstance(b, cupy.ndarray) for b in blocks)
        return cupy.asnumpy(arr.compute(scheduler="threads"))

    # the references, on the host, before the functions are watched
    img = image((300, 257), np.uint8)
    x = da.from_array(cupy.asarray(img), chunks=((100, 50, 150), (128, 129)), asarray=False)
    want = pixsum.integral(img, dtype=np.uint64)
    wt, ws = pixsum.integral_sq(img)
    wh, weq, wbox = pixsum.histogram(img), pixsum.equalize(img), pixsum.box_filter(img, 7)
    vol = image((5, 40, 30), np.uint16)
    wvol = pixsum.integral3d(vol)
    for name in ("integral", "integral_sq", "histogram", "box_filter"):
        monkeypatch.setattr(pixsum, name, on_gpu(getattr(pixsum, name)))
    monkeypatch.setattr(pdask._core, "integral_tile", host_tile)

    t = pdask.integral(x, dtype=np.uint64)
    got = t.compute(scheduler="threads")
    assert isinstance(got, cupy.ndarray)
    same(cupy.asnumpy(got), want)
    same(blocks_on_gpu(t), want)
    t, s = pdask.integral_sq(x)
    same(blocks_on_gpu(t), wt)
    same(blocks_on_gpu(s), ws)
    v = da.from_array(cupy.asarray(vol), chunks=((2, 3), (15, 25), (11, 19)), asarray=False)
    same(blocks_on_gpu(pdask.integral3d(v)), wvol)
    same(pdask.histogram(x), wh)
    same(blocks_on_gpu(pdask.equalize(x)), weq)
    same(blocks_on_gpu(pdask.box_filter(x, 7)), wbox)
    names = {n for n, _ in seen}
    assert {"integral", "integral_sq", "histogram", "box_filter"} <= names, names

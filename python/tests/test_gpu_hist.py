"""GPU arrays (CuPy and PyTorch) in histogram, histogram2d, equalize, box_sum,
box_mean, box_var and box_filter: every result equals the CPU/NumPy result of
the same data bit for bit (box_var where it is exact; float box filters
closely), for random, constant and odd-shaped arrays, strided views, channels,
masks, out=, and work on a non-default stream (checked after synchronising
it). The results are arrays of the input's library. Skipped without a CUDA
build of pixsum, a device, or the library."""

import numpy as np
import pytest

import pixsum
from conftest import random_image

if not hasattr(pixsum, "histogram"):
    pytest.skip("the C library has no histograms yet", allow_module_level=True)


def _device_ready():
    return pixsum.HAVE_CUDA and pixsum.cuda_device_count() > 0


class Lib:
    """What the tests need of one array library."""

    def __init__(self, name):
        self.name = name
        self.m = pytest.importorskip(name)
        if not _device_ready():
            pytest.skip("pixsum built without CUDA or no CUDA device")
        if name == "torch" and not self.m.cuda.is_available():
            pytest.skip("PyTorch sees no CUDA device")

    def has(self, dtype):
        return self.name == "cupy" or getattr(self.m, np.dtype(dtype).name, None) is not None

    def dev(self, a):
        a = np.ascontiguousarray(a)
        if self.name == "cupy":
            return self.m.asarray(a)
        t = self.m
        if a.dtype.kind == "u" and a.dtype.itemsize > 1:
            if not self.has(a.dtype):
                pytest.skip(f"this PyTorch has no {a.dtype} tensors")
            signed = np.dtype(f"i{a.dtype.itemsize}")
            return t.from_numpy(a.view(signed)).cuda().view(getattr(t, a.dtype.name))
        return t.from_numpy(a).cuda()

    def host(self, x):
        if self.name == "cupy":
            return self.m.asnumpy(x)
        t = self.m
        x = x.detach()
        name = str(x.dtype).replace("torch.", "")
        if name in ("uint16", "uint32", "uint64"):
            size = {"uint16": 2, "uint32": 4, "uint64": 8}[name]
            return x.view(getattr(t, f"int{size * 8}")).cpu().numpy().view(f"u{size}")
        return x.cpu().numpy()

    def step(self, k):
        """A row step for strided views: negative (rows read backwards) where
        the library has such views (CuPy), positive for PyTorch."""
        return -k if self.name == "cupy" else k

    def is_mine(self, x):
        return isinstance(x, self.m.ndarray if self.name == "cupy" else self.m.Tensor)

    def stream(self):
        if self.name == "cupy":
            return self.m.cuda.Stream(non_blocking=True)
        return self.m.cuda.Stream()

    def on(self, s):
        return s if self.name == "cupy" else self.m.cuda.stream(s)

    def sync(self):
        if self.name == "cupy":
            self.m.cuda.Device().synchronize()
        else:
            self.m.cuda.synchronize()

    def counts_dtype(self):
        if self.name == "torch" and not self.has(np.uint64):
            return np.dtype(np.int64)
        return np.dtype(np.uint64)


@pytest.fixture(params=["cupy", "torch"])
def lib(request):
    return Lib(request.param)


def same(lib, got, want):
    assert lib.is_mine(got), type(got)
    g = lib.host(got)
    want = np.asarray(want)
    if g.dtype != want.dtype and want.dtype == np.uint64 and g.dtype == np.int64:
        g = g.view(np.uint64)  # PyTorch without uint64: the documented int64 stand-in
    assert g.shape == want.shape, (g.shape, want.shape)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    np.testing.assert_array_equal(g, want)


HIST_SHAPES = [(1, 1), (1, 999), (77, 1), (123, 457), (64, 81, 3), (9, 10, 4)]


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.int32, np.float32,
                                   np.float64])
@pytest.mark.parametrize("shape", HIST_SHAPES)
def test_histogram_defaults_and_ranges(lib, rng, dtype, shape):
    img = random_image(rng, shape, dtype)
    if img.dtype.kind == "f" and img.size > 8:
        img.flat[3], img.flat[5], img.flat[7] = np.nan, np.inf, -np.inf
    d = lib.dev(img)
    for kw in ({}, {"bins": 13}, {"bins": 100, "range": (-60.5, 90.25)}, {"cumulative": True},
               {"relative": True}, {"relative": True, "cumulative": True,
                                    "of_all_samples": True}):
        same(lib, pixsum.histogram(d, **kw), pixsum.histogram(img, **kw))
    got, ginfo = pixsum.histogram(d, bins=7, range=(-10, 10), info=True)
    want, winfo = pixsum.histogram(img, bins=7, range=(-10, 10), info=True)
    same(lib, got, want)
    for key in winfo:
        if key == "edges":
            np.testing.assert_array_equal(ginfo[key], winfo[key])
        else:
            assert ginfo[key] == winfo[key], key


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_histogram_constant_masks_views_out(lib, rng, dtype):
    const = np.full((300, 301), 7, dtype)
    same(lib, pixsum.histogram(lib.dev(const)), pixsum.histogram(const))
    img = random_image(rng, (200, 150, 2), dtype)
    mask = rng.random((200, 150)) < 0.4
    d, dm = lib.dev(img), lib.dev(mask)
    same(lib, pixsum.histogram(d, mask=dm), pixsum.histogram(img, mask=mask))
    same(lib, pixsum.histogram(d, mask=lib.dev(mask.astype(np.uint8) * 5)),
         pixsum.histogram(img, mask=mask))
    none = np.zeros((200, 150), bool)
    same(lib, pixsum.histogram(d, mask=lib.dev(none)), pixsum.histogram(img, mask=none))
    step = lib.step(3)
    view = d[::step, 7:140]
    same(lib, pixsum.histogram(view, bins=50, range=(0, 1000)),
         pixsum.histogram(img[::step, 7:140], bins=50, range=(0, 1000)))
    vol = random_image(rng, (4, 30, 40), dtype)
    same(lib, pixsum.histogram(lib.dev(vol), channels=False, bins=9, range=(0, 200)),
         pixsum.histogram(vol, channels=False, bins=9, range=(0, 200)))
    want = pixsum.histogram(img, bins=64, range=(0, 256))
    out = lib.dev(np.zeros(want.shape, lib.counts_dtype()))
    assert pixsum.histogram(d, bins=64, range=(0, 256), out=out) is out
    same(lib, out, want)
    with pytest.raises(pixsum.BadShapeError):
        pixsum.histogram(d, bins=63, range=(0, 256), out=out)
    with pytest.raises(pixsum.UnsupportedError):
        pixsum.histogram(d, mask=mask)  # a host mask for a GPU image
    with pytest.raises(pixsum.UnsupportedError):
        pixsum.histogram(d, method="hist.scalar")


def test_histogram_result_kinds(lib, rng):
    img = random_image(rng, (50, 60), np.uint8)
    h = pixsum.histogram(lib.dev(img))
    assert lib.is_mine(h) and lib.host(h).dtype in (np.uint64, np.int64)
    assert lib.host(pixsum.histogram(lib.dev(img), relative=True)).dtype == np.float64
    assert lib.host(h).dtype == lib.counts_dtype()


def test_histogram_on_a_non_default_stream(lib, rng):
    img = random_image(rng, (2048, 2047), np.uint16)
    s = lib.stream()
    with lib.on(s):
        d = lib.dev(img)
        h = pixsum.histogram(d, bins=1000, range=(0, 65536), cumulative=True)
        e = pixsum.equalize(d)
        bs = pixsum.box_filter(d, 9, normalize=False)
    s.synchronize()
    same(lib, h, pixsum.histogram(img, bins=1000, range=(0, 65536), cumulative=True))
    same(lib, e, pixsum.equalize(img))
    same(lib, bs, pixsum.box_filter(img, 9, normalize=False))


@pytest.mark.parametrize("types", [(np.uint8, np.uint8), (np.uint16, np.float32),
                                   (np.int32, np.float64), (np.int16, np.uint8)])
def test_histogram2d(lib, rng, types):
    a = random_image(rng, (111, 97), types[0])
    b = random_image(rng, (111, 97), types[1])
    mask = rng.random((111, 97)) < 0.7
    da, db = lib.dev(a), lib.dev(b)
    for kw in ({}, {"bins": (8, 5), "range": ((0, 256), (-100, 100))}, {"bins": 33},
               {"range": (None, (-50, 50))}):
        same(lib, pixsum.histogram2d(da, db, **kw), pixsum.histogram2d(a, b, **kw))
    got, gi = pixsum.histogram2d(da, db, mask=lib.dev(mask), info=True)
    want, wi = pixsum.histogram2d(a, b, mask=mask, info=True)
    same(lib, got, want)
    for key in wi:
        if key.startswith("edges"):
            np.testing.assert_array_equal(gi[key], wi[key])
        else:
            assert gi[key] == wi[key], key
    with pytest.raises(pixsum.UnsupportedError):
        pixsum.histogram2d(da, b)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("shape", [(1, 1), (1, 500), (300, 1), (123, 457), (64, 81, 3),
                                   (20, 30, 4)])
def test_equalize(lib, rng, dtype, shape):
    img = (random_image(rng, shape, dtype) // 3).astype(dtype)
    d = lib.dev(img)
    same(lib, pixsum.equalize(d), pixsum.equalize(img))
    mask = rng.random(shape[:2]) < 0.5
    same(lib, pixsum.equalize(d, mask=lib.dev(mask)), pixsum.equalize(img, mask=mask))
    flat = np.full(shape, 9, dtype)
    same(lib, pixsum.equalize(lib.dev(flat)), flat)
    inplace = lib.dev(img)
    assert pixsum.equalize(inplace, out=inplace) is inplace
    same(lib, inplace, pixsum.equalize(img))
    if len(shape) == 2 and shape[0] > 2:
        view = d[::2]
        same(lib, pixsum.equalize(view), pixsum.equalize(img[::2]))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
@pytest.mark.parametrize("shape", [(1, 2), (123, 457), (5, 40, 60)])
def test_threshold_otsu(lib, rng, dtype, shape):
    img = random_image(rng, shape, dtype)
    d = lib.dev(img)
    mask = rng.random(shape) < 0.5
    for kw, dkw in (({}, {}), ({"bins": 33}, {"bins": 33}),
                    ({"mask": mask}, {"mask": lib.dev(mask)})):
        try:  # tiny images may have one value only: both sides must refuse
            want = pixsum.threshold_otsu(img, info=True, **kw)
        except pixsum.InvalidArgumentError:
            with pytest.raises(pixsum.InvalidArgumentError):
                pixsum.threshold_otsu(d, info=True, **dkw)
            continue
        assert pixsum.threshold_otsu(d, info=True, **dkw) == want
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.threshold_otsu(lib.dev(np.full(shape, 3, dtype)))


def boxes_for(rng, h, w, n):
    y, x = rng.integers(0, h, n), rng.integers(0, w, n)
    return np.stack([x, y, rng.integers(1, w - x + 1), rng.integers(1, h - y + 1)], axis=1)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.int32, np.float32])
@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("shape", [(1, 1), (1, 70), (65, 1), (131, 97), (40, 50, 3)])
def test_box_queries(lib, rng, dtype, padded, shape):
    img = random_image(rng, shape, dtype)
    # tables made on the host (the CUDA methods make no i32 -> f64 squared
    # table) and uploaded: the GPU box queries are what is tested here
    ht, hq = pixsum.integral_sq(img, padded=padded)
    t, q = lib.dev(ht), lib.dev(hq)
    boxes = boxes_for(rng, shape[0], shape[1], 300)
    boxes[0] = (0, 0, shape[1], shape[0])
    same(lib, pixsum.box_sum(t, boxes, padded=padded), pixsum.box_sum(ht, boxes, padded=padded))
    same(lib, pixsum.box_mean(t, boxes, padded=padded),
         pixsum.box_mean(ht, boxes, padded=padded))
    var = pixsum.box_var(t, q, lib.dev(boxes), padded=padded)
    want = pixsum.box_var(ht, hq, boxes, padded=padded)
    if img.dtype.kind == "f":
        np.testing.assert_allclose(lib.host(var), want, rtol=1e-9, atol=1e-9)
    else:
        same(lib, var, want)  # exact integer path: identical to the CPU's 128-bit result
    one = pixsum.box_sum(t, tuple(boxes[3]), padded=padded)
    assert lib.is_mine(one)
    same(lib, one, np.asarray(pixsum.box_sum(ht, boxes[3], padded=padded)))
    with pytest.raises(pixsum.OutOfRangeError):
        pixsum.box_sum(t, (0, 0, shape[1] + 1, 1), padded=padded)
    with pytest.raises(pixsum.OutOfRangeError):
        pixsum.box_sum(t, lib.dev(np.array([(0, 0, 1, 1), (0, 0, 1, shape[0] + 1)])),
                       padded=padded)


def test_box_sum_3d_and_wrapped(lib, rng):
    vol = random_image(rng, (7, 20, 30), np.uint16)
    t = pixsum.integral3d(lib.dev(vol), padded=True)
    b3 = np.array([[0, 0, 0, 30, 20, 7], [3, 2, 1, 4, 5, 2], [29, 19, 6, 1, 1, 1]])
    same(lib, pixsum.box_sum(t, b3, padded=True),
         pixsum.box_sum(lib.host(t), b3, padded=True))
    img = np.full((4200, 4200), 255, np.uint8)
    tw = pixsum.integral(lib.dev(img), dtype=np.int64 if lib.name == "torch" and
                         not lib.has(np.uint32) else np.uint32, wrap=True)
    boxes = boxes_for(rng, 4200, 4200, 100)
    same(lib, pixsum.box_sum(tw, boxes), pixsum.box_sum(lib.host(tw), boxes))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.int32, np.uint32])
@pytest.mark.parametrize("shape", [(1, 1), (1, 77), (45, 1), (99, 131), (40, 61, 3)])
@pytest.mark.parametrize("size", [1, (3, 5), 21, 200])
def test_box_filter(lib, rng, dtype, shape, size):
    img = random_image(rng, shape, dtype)
    d = lib.dev(img)
    for mode in ("same", "valid"):
        for normalize in (True, False):
            try:
                want = pixsum.box_filter(img, size, mode=mode, normalize=normalize)
            except pixsum.BadShapeError:
                with pytest.raises(pixsum.BadShapeError):
                    pixsum.box_filter(d, size, mode=mode, normalize=normalize)
                continue
            got = pixsum.box_filter(d, size, mode=mode, normalize=normalize)
            if lib.name == "torch" and not normalize and not lib.has(want.dtype):
                want = want.astype(np.int64)  # documented stand-in
            same(lib, got, want)
    same(lib, pixsum.box_filter(d, size, dtype=np.float32),
         pixsum.box_filter(img, size, dtype=np.float32))


def test_box_filter_float_views_out(lib, rng):
    img = random_image(rng, (300, 200, 2), np.float32)
    d = lib.dev(img)
    np.testing.assert_allclose(lib.host(pixsum.box_filter(d, 7)), pixsum.box_filter(img, 7),
                               rtol=1e-9, atol=1e-6)
    u8 = random_image(rng, (256, 300), np.uint8)
    step = lib.step(2)
    view = lib.dev(u8)[::step, 10:290]
    want = pixsum.box_filter(np.ascontiguousarray(u8[::step, 10:290]), (4, 9), normalize=False)
    out = lib.dev(np.zeros(want.shape, np.int64))
    assert pixsum.box_filter(view, (4, 9), normalize=False, dtype=np.int64, out=out) is out
    same(lib, out, want.astype(np.int64))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.float32])
def test_tilted(lib, rng, dtype):
    """integral_tilted on the GPU: integer tables equal the CPU's bit for bit,
    float tables within the summation-order bound; strided views, channels."""
    for shape in [(1, 1), (1, 40), (33, 1), (97, 130), (64, 50, 3)]:
        img = random_image(rng, shape, dtype)
        want = pixsum.integral_tilted(img)
        got = pixsum.integral_tilted(lib.dev(img))
        if np.dtype(dtype).kind == "f":
            g = lib.host(got)
            tol = (shape[0] + shape[1] + 16) * np.finfo(want.dtype).eps * np.abs(want) + 1e-30
            assert g.shape == want.shape and g.dtype == want.dtype
            assert np.all(np.abs(g - want) <= tol)
        else:
            same(lib, got, want)
    img = random_image(rng, (120, 90), dtype)
    same_or_close = pixsum.integral_tilted(np.ascontiguousarray(img[::2, 5:80]))
    got = lib.host(pixsum.integral_tilted(lib.dev(img)[::2, 5:80]))
    if np.dtype(dtype).kind == "f":
        assert np.allclose(got, same_or_close, rtol=1e-5, atol=1e-3)
    else:
        np.testing.assert_array_equal(got, same_or_close)


def test_dlpack_only_producer_and_streams(lib, rng):
    """A producer seen only through __dlpack__ is read in place; box queries
    and joint histograms on a non-default stream are right once it is synced."""
    img = random_image(rng, (70, 90), np.uint8)
    d = lib.dev(img)

    class OnlyDlpack:
        def __dlpack__(self, **kw):
            return d.__dlpack__(**kw)

        def __dlpack_device__(self):
            return d.__dlpack_device__()

    wrapped = OnlyDlpack()
    counts = _any_host(pixsum.histogram(wrapped)).astype(np.uint64)
    np.testing.assert_array_equal(counts, pixsum.histogram(img))
    got = pixsum.box_filter(wrapped, 5, normalize=False)
    np.testing.assert_array_equal(_any_host(got), pixsum.box_filter(img, 5, normalize=False))
    got = pixsum.equalize(wrapped)
    np.testing.assert_array_equal(_any_host(got), pixsum.equalize(img))
    table = pixsum.integral(img)
    boxes = boxes_for(rng, 70, 90, 500)
    s = lib.stream()
    with lib.on(s):
        t = lib.dev(table)
        sums = pixsum.box_sum(t, boxes)
        joint = pixsum.histogram2d(lib.dev(img), lib.dev(img[::-1].copy()), bins=16)
    s.synchronize()
    same(lib, sums, pixsum.box_sum(table, boxes))
    same(lib, joint, pixsum.histogram2d(img, img[::-1].copy(), bins=16))


def _any_host(x):
    """NumPy copy of a CuPy array or a PyTorch tensor (uint types read as
    their bits)."""
    if type(x).__module__.split(".")[0] == "cupy":
        import cupy
        return cupy.asnumpy(x)
    name = str(x.dtype).replace("torch.", "")
    if name in ("uint16", "uint32", "uint64"):
        import torch
        size = int(name[4:]) // 8
        return x.view(getattr(torch, f"int{size * 8}")).cpu().numpy().view(f"u{size}")
    return x.cpu().numpy()


# ---- batches: histogram(batch=True) and box_filter(batch=True) of GPU stacks ----------------

def _per_image_hist(img, **kw):
    """The histograms of a host stack one image at a time, with the batch's range
    (NumPy batch=True on the host is the reference; this checks it too)."""
    return np.stack([pixsum.histogram(np.ascontiguousarray(img[n]), **kw)
                     for n in range(img.shape[0])])


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
@pytest.mark.parametrize("shape", [(1, 1, 1), (3, 1, 999), (17, 77, 1), (3, 224, 224),
                                   (5, 31, 17, 3), (2, 9, 10, 4)])
def test_histogram_batch(lib, rng, dtype, shape):
    img = random_image(rng, shape, dtype)
    d = lib.dev(img)
    rng_kw = {"range": (-150.0, 170.5)} if np.dtype(dtype).kind == "f" else {}
    for kw in ({}, {"bins": 13}, {"bins": 100, "range": (-60.5, 90.25)}, {"cumulative": True},
               {"relative": True}, {"range_per_image": True}):
        kw = {**rng_kw, **kw}
        want = pixsum.histogram(img, batch=True, **kw)
        same(lib, pixsum.histogram(d, batch=True, **kw), want)
        if not kw.get("range_per_image") and not kw.get("relative"):
            one = {k: v for k, v in kw.items() if k != "range_per_image"}
            info = pixsum.histogram(img, batch=True, info=True, **kw)[1]
            one.setdefault("range", (info["lo"], info["hi"]))
            one["bins"] = info["bins"]
            np.testing.assert_array_equal(want, _per_image_hist(img, **one))
    got, ginfo = pixsum.histogram(d, batch=True, bins=7, range=(-10, 10), info=True)
    want, winfo = pixsum.histogram(img, batch=True, bins=7, range=(-10, 10), info=True)
    same(lib, got, want)
    for key in winfo:
        if key == "edges":
            np.testing.assert_array_equal(ginfo[key], winfo[key])
        else:
            assert ginfo[key] == winfo[key], key


def test_histogram_batch_data_range_masks(lib, rng):
    img = random_image(rng, (6, 40, 50), np.float32)
    d = lib.dev(img)
    # the stack's own data range (one synchronisation), as on the host
    same(lib, pixsum.histogram(d, batch=True), pixsum.histogram(img, batch=True))
    with pytest.raises(pixsum.UnsupportedError):
        pixsum.histogram(d, batch=True, range_per_image=True)
    u8 = random_image(rng, (6, 40, 50), np.uint8)
    du8 = lib.dev(u8)
    shared = rng.integers(0, 2, size=(40, 50)).astype(np.uint8)
    each = rng.integers(0, 2, size=(6, 40, 50)).astype(bool)
    for m in (shared, each):
        same(lib, pixsum.histogram(du8, batch=True, mask=lib.dev(m)),
             pixsum.histogram(u8, batch=True, mask=m))
        same(lib, pixsum.histogram(d, batch=True, mask=lib.dev(m)),
             pixsum.histogram(img, batch=True, mask=m))
    # a strided stack (every other row and image)
    big = random_image(rng, (8, 60, 70), np.uint8)
    view = lib.dev(big)[::2, ::2, 3:67]
    same(lib, pixsum.histogram(view, batch=True),
         pixsum.histogram(np.ascontiguousarray(big[::2, ::2, 3:67]), batch=True))


def test_histogram_batch_channels_first(lib, rng):
    if lib.name != "torch":
        pytest.skip("channel_axis=1 is PyTorch's (N, C, H, W)")
    img = random_image(rng, (5, 3, 33, 47), np.uint8)
    d = lib.dev(img)
    got = pixsum.histogram(d, batch=True, channel_axis=1, bins=64)
    # (N, C, bins): channel c of image n is the plane img[n, c]
    want = pixsum.histogram(np.ascontiguousarray(img.transpose(0, 2, 3, 1)), batch=True,
                            bins=64)
    same(lib, got, want)
    mask = rng.integers(0, 2, size=(33, 47)).astype(np.uint8)
    same(lib, pixsum.histogram(d, batch=True, channel_axis=1, mask=lib.dev(mask)),
         pixsum.histogram(np.ascontiguousarray(img.transpose(0, 2, 3, 1)), batch=True,
                          mask=mask))
    with pytest.raises(pixsum.BadShapeError):
        pixsum.histogram(lib.dev(img[0]), batch=True, channel_axis=1)
    with pytest.raises(pixsum.InvalidArgumentError):
        pixsum.histogram(img, batch=True, channel_axis=1)  # host stacks: (N, H, W, C)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.float32])
@pytest.mark.parametrize("shape", [(1, 1, 1), (3, 1, 77), (17, 45, 1), (3, 99, 131),
                                   (4, 40, 61, 3)])
@pytest.mark.parametrize("size", [1, (3, 5), 21])
def test_box_filter_batch(lib, rng, dtype, shape, size):
    img = random_image(rng, shape, dtype)
    d = lib.dev(img)
    for kw in ({"mode": "same"}, {"mode": "valid"}, {"normalize": False},
               {"border": "reflect101", "stat": "var"}, {"border": "constant", "cval": 3.0},
               {"border": "replicate", "dtype": np.float32}):
        try:
            want = pixsum.box_filter(img, size, batch=True, **kw)
        except pixsum.BadShapeError:
            with pytest.raises(pixsum.BadShapeError):
                pixsum.box_filter(d, size, batch=True, **kw)
            continue
        got = pixsum.box_filter(d, size, batch=True, **kw)
        if lib.name == "torch" and want.dtype.kind == "u" and not lib.has(want.dtype):
            want = want.astype(np.int64)  # documented stand-in
        # each image equals the single-image GPU call bit for bit
        single = np.stack([lib.host(pixsum.box_filter(lib.dev(img[n]), size, **kw))
                           for n in range(shape[0])])
        if single.dtype != lib.host(got).dtype:
            single = single.astype(lib.host(got).dtype)
        np.testing.assert_array_equal(lib.host(got), single)
        if want.dtype.kind == "f" and (np.dtype(dtype).kind == "f" or
                                       kw.get("stat") == "var"):
            # float images: f64 sums of shifted samples, within the CPU's bound
            # (float32 results: to float32's precision)
            tol = 1e-6 if want.dtype == np.float32 else 1e-9
            np.testing.assert_allclose(lib.host(got), want, rtol=tol, atol=1e-5)
        else:
            same(lib, got, want)


def test_box_filter_batch_channels_first_and_out(lib, rng):
    img = random_image(rng, (4, 2, 50, 70), np.uint8)
    d = lib.dev(img)
    if lib.name == "torch":
        got = pixsum.box_filter(d, 5, batch=True, channel_axis=1, normalize=False)
        want = pixsum.box_filter(img, 5, batch=True, channel_axis=1, normalize=False)
        if not lib.has(want.dtype):
            want = want.astype(np.int64)
        same(lib, got, want)
    stack = random_image(rng, (6, 30, 40), np.uint16)
    out = lib.dev(np.zeros((6, 30, 40), np.uint16))
    assert pixsum.box_filter(lib.dev(stack), 3, batch=True, dtype=np.uint16, out=out) is out
    same(lib, out, pixsum.box_filter(stack, 3, batch=True, dtype=np.uint16))
    with pytest.raises(pixsum.BadShapeError):
        pixsum.box_filter(lib.dev(stack[0]), 3, batch=True)

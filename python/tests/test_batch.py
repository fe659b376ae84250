"""integral(x, batch=True) and integral_sq(x, batch=True): a stack of images
(N, H, W) or (N, H, W, C), or PyTorch's channels-first (N, C, H, W) with
channel_axis=1, gives N (or N*C) independent tables in one call. Every
batched table must equal the per-image call bit for bit (integer tables; float
tables with one thread on the CPU, where the summation order is the same), on
random N, sizes (1x1, odd, tall, wide), types, channels and strided views,
on the CPU and (CuPy, PyTorch) on the GPU. Also: the shape rules and their
messages, out=, and the overflow rule counting one image. Then box_filter,
equalize, otsu and threshold_otsu with batch=True on NumPy stacks: each image
equal to its single call, and some cases against references from the
definitions (window sums, the equalisation formula, Otsu by trying every
split), masks shared and per image, shared and per-image ranges."""

import numpy as np
import pytest

import pixsum
from conftest import INPUT_DTYPES, random_image, ref_integral

SIZES = [(1, 1), (1, 17), (23, 1), (3, 5), (7, 33), (40, 9)]


def per_image(fn, stack, **kw):
    """fn applied to each image of `stack` (N first), results stacked."""
    res = [fn(stack[i], **kw) for i in range(stack.shape[0])]
    if isinstance(res[0], tuple):
        return tuple(np.stack([r[k] for r in res]) for k in range(len(res[0])))
    return np.stack(res)


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", INPUT_DTYPES)
@pytest.mark.parametrize("hw", SIZES)
@pytest.mark.parametrize("channels", [None, 1, 3, 4])
def test_batch_equals_per_image(rng, dtype, hw, channels):
    n = int(rng.integers(1, 6))
    shape = (n,) + hw + ((channels,) if channels else ())
    x = random_image(rng, shape, dtype)
    # float tables (float images, and squares beyond uint64) summed by one
    # thread on both sides, in the same order; integer tables by any threads
    floats = np.dtype(dtype).kind == "f" or pixsum.integral_dtype(
        dtype, hw[0] * hw[1], squared=True).kind == "f"
    kw = {"threads": 1} if floats else {}
    for padded in (False, True):
        same(pixsum.integral(x, batch=True, padded=padded, **kw),
             per_image(pixsum.integral, x, padded=padded, **kw))
        t, q = pixsum.integral_sq(x, batch=True, padded=padded, **kw)
        wt, wq = per_image(pixsum.integral_sq, x, padded=padded, **kw)
        same(t, wt)
        same(q, wq)
    # and the reference, for the integer types
    if np.dtype(dtype).kind != "f":
        got = pixsum.integral(x, batch=True)
        for i in range(n):
            np.testing.assert_array_equal(got[i], ref_integral(x[i]))


def test_batch_strided_views(rng):
    base = random_image(rng, (9, 30, 40, 3), np.uint8)
    for view in (base[::2], base[::-1, 3:20, 5:31], base[1:8:3, ::-2], base[:, :, :, :2],
                 base[4:5]):
        if view.shape[-1] == 2 and not view.flags.c_contiguous:
            pass  # pixels of 2 channels out of 3: refused below
        try:
            got = pixsum.integral(view, batch=True)
        except pixsum.BadStrideError:
            assert view.strides[2] != view.shape[3] * view.itemsize
            continue
        same(got, per_image(pixsum.integral, view))
    gray = random_image(rng, (6, 17, 13), np.uint16)
    same(pixsum.integral_sq(gray[::-3], batch=True)[1],
         per_image(pixsum.integral_sq, gray[::-3])[1])


def test_channels_first(rng):
    x = random_image(rng, (3, 4, 11, 7), np.uint8)      # (N, C, H, W)
    got = pixsum.integral(x, batch=True, channel_axis=1)
    assert got.shape == x.shape
    for n in range(3):
        for c in range(4):
            same(got[n, c], pixsum.integral(x[n, c]))
    p = pixsum.integral(x, batch=True, channel_axis=1, padded=True)
    assert p.shape == (3, 4, 12, 8)
    same(p[2, 1], pixsum.integral(x[2, 1], padded=True))
    t, q = pixsum.integral_sq(x[1:, :, ::-1], batch=True, channel_axis=1)
    for n in range(2):
        same(q[n, 0], pixsum.integral_sq(x[n + 1, 0, ::-1])[1])
        same(t[n, 3], pixsum.integral(x[n + 1, 3, ::-1]))
    # one image or one channel: any strides
    same(pixsum.integral(x[:1, ::2], batch=True, channel_axis=1)[0, 1],
         pixsum.integral(x[0, 2]))
    same(pixsum.integral(x[::2, 3:], batch=True, channel_axis=1)[1, 0],
         pixsum.integral(x[2, 3]))
    # channels-last memory seen as (N, C, H, W): pixels not packed along a row,
    # so copied once (issue 41), or refused with copy=False
    nhwc = random_image(rng, (2, 5, 6, 3), np.uint8)
    nchw = nhwc.transpose(0, 3, 1, 2)
    got = pixsum.integral(nchw, batch=True, channel_axis=1)
    same(got[1, 2], pixsum.integral(nhwc[1, :, :, 2].copy()))
    with pytest.raises(pixsum.BadStrideError, match="copy=False"):
        pixsum.integral(nchw, batch=True, channel_axis=1, copy=False)


def test_channels_first_unmergeable_strides_copied_or_refused(rng):
    big = random_image(rng, (3, 6, 8, 9), np.uint8)
    same(pixsum.integral(big[:, :3], batch=True, channel_axis=1)[2, 1],
         pixsum.integral(big[2, 1]))
    with pytest.raises(pixsum.BadStrideError, match="copy=False"):
        pixsum.integral(big[:, :3], batch=True, channel_axis=1, copy=False)
    # every other channel still merges (a step along N is 3 steps of 2 channels)
    got = pixsum.integral(big[:, ::2], batch=True, channel_axis=1)
    same(got[2, 1], pixsum.integral(big[2, 2]))


def test_out_and_dtype(rng):
    x = random_image(rng, (4, 10, 12), np.int16)
    out = np.empty((4, 11, 13), np.float64)
    assert pixsum.integral(x, batch=True, padded=True, out=out) is out
    same(out, per_image(pixsum.integral, x, padded=True, dtype=np.float64))
    with pytest.raises(pixsum.BadShapeError):
        pixsum.integral(x, batch=True, out=np.empty((4, 10, 11), np.int64))
    u8 = random_image(rng, (3, 300, 300), np.uint8)   # a chosen type with wrap=True
    same(pixsum.integral(u8, batch=True, dtype=np.uint32, wrap=True),
         per_image(pixsum.integral, u8, dtype=np.uint32, wrap=True))


def test_overflow_rule_counts_one_image():
    # 64 images of 64x64 uint8: one image fits uint32 by far; so does the batch
    # (the rule is per image, the type is the single image's)
    x = np.full((64, 64, 64), 255, np.uint8)
    got = pixsum.integral(x, batch=True)
    assert got.dtype == pixsum.integral(x[0]).dtype == np.uint32
    assert int(got[-1, -1, -1]) == 255 * 64 * 64
    # uint32 images: a batch of two images whose own tables fit uint64
    y = np.full((2, 3, 3), 2**32 - 1, np.uint32)
    assert pixsum.integral(y, batch=True).dtype == pixsum.integral(y[0]).dtype


def test_shape_rules_and_messages(rng):
    stack = random_image(rng, (8, 20, 30), np.uint8)
    with pytest.raises(pixsum.BadShapeError, match="batch=True"):
        pixsum.integral(stack)                       # 30 "channels": a stack
    with pytest.raises(pixsum.BadShapeError, match="channel_axis=1"):
        pixsum.integral(random_image(rng, (2, 3, 20, 30), np.uint8))
    with pytest.raises(pixsum.BadShapeError, match="batch=True"):
        pixsum.integral_sq(random_image(rng, (2, 20, 30, 3), np.uint8))
    # (H, W, C) with C <= 4 keeps its meaning: one image with channels
    hwc = random_image(rng, (20, 30, 3), np.uint8)
    same(pixsum.integral(hwc), ref_integral(hwc).astype(np.uint32))
    # batch=True reads the same array as 3 images of 30 x 3
    assert pixsum.integral(hwc, batch=True).shape == (20, 30, 3)
    with pytest.raises(pixsum.BadShapeError, match="batch=True"):
        pixsum.integral(stack[0], batch=True)      # 2-D: not a stack
    with pytest.raises(pixsum.BadShapeError, match="channel_axis=1"):
        pixsum.integral(stack, batch=True, channel_axis=1)   # 3-D: no channel axis
    # without batch=True, channel_axis names the channel axis of one image
    # (test_arrays.py); a 2-D image has none
    with pytest.raises(pixsum.BadShapeError, match="3-D"):
        pixsum.integral(hwc[..., 0], channel_axis=1)
    with pytest.raises(pixsum.InvalidArgumentError, match="channel_axis"):
        pixsum.integral(stack, batch=True, channel_axis=2)
    with pytest.raises(pixsum.UnsupportedError, match="carry"):
        pixsum.integral(stack, batch=True, carry=np.zeros(30, np.uint32))
    with pytest.raises(pixsum.BadShapeError):
        pixsum.integral(np.zeros((0, 4, 4), np.uint8), batch=True)
    # channel_axis=-1 is the default meaning
    same(pixsum.integral(stack, batch=True, channel_axis=-1),
         pixsum.integral(stack, batch=True))


def test_no_reference_leaks(rng):
    import sys
    x = random_image(rng, (3, 8, 9), np.uint8)
    out = np.empty((3, 8, 9), np.uint32)
    dt = np.dtype(np.uint32)
    before = [sys.getrefcount(o) for o in (x, out, dt)]
    for _ in range(200):
        pixsum.integral(x, batch=True, out=out, dtype=dt)
        pixsum.integral_sq(x, batch=True)
        pixsum.integral(x[0])
        with pytest.raises(pixsum.BadShapeError):
            pixsum.integral(x, batch=True, out=np.empty((3, 8, 8), np.uint32))
    assert [sys.getrefcount(o) for o in (x, out, dt)] == before


# ---- box_filter, equalize, otsu and threshold_otsu of stacks (CPU) -----------------------

BOX_DTYPES = [np.uint8, np.uint16, np.int16, np.int32, np.uint32, np.float32, np.float64]
BOX_MODES = ["same", "valid", "reflect101", "reflect", "replicate", "constant"]


@pytest.mark.parametrize("dtype", BOX_DTYPES)
@pytest.mark.parametrize("hw", SIZES)
@pytest.mark.parametrize("channels", [None, 1, 3, 4])
def test_box_filter_batch_equals_per_image(rng, dtype, hw, channels):
    n = int(rng.integers(1, 8))
    x = random_image(rng, (n,) + hw + ((channels,) if channels else ()), dtype)
    for mode in BOX_MODES:
        size = (int(rng.integers(1, hw[0] + 1)), int(rng.integers(1, hw[1] + 1))) \
            if mode == "valid" else (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
        for stat in ("sum", "mean", "var", "std"):
            kw = dict(mode=mode, stat=stat, cval=1)
            if stat == "mean" and dtype in (np.uint8, np.uint16) and rng.integers(2):
                kw["dtype"] = dtype
            same(pixsum.box_filter(x, size, batch=True, **kw),
                 per_image(pixsum.box_filter, x, size=size, **kw))


def test_box_filter_batch_against_window_sums(rng):
    """valid window sums of every image from the definition (all windows)."""
    from numpy.lib.stride_tricks import sliding_window_view
    for n, (h, w), k in [(1, (1, 1), (1, 1)), (2, (1, 17), (1, 4)), (7, (23, 1), (5, 1)),
                         (3, (9, 13), (3, 5))]:
        x = random_image(rng, (n, h, w), np.uint8)
        want = sliding_window_view(x.astype(np.int64), k, axis=(1, 2)).sum(axis=(-2, -1))
        got = pixsum.box_filter(x, k, batch=True, mode="valid", normalize=False)
        np.testing.assert_array_equal(got, want)


def test_box_filter_batch_layouts(rng):
    base = random_image(rng, (6, 30, 40, 3), np.uint8)
    strided = base[::2, 3:25, 5:33]                       # slices, rows and columns apart
    same(pixsum.box_filter(strided, 3, batch=True), per_image(pixsum.box_filter, strided,
                                                              size=3))
    nchw = random_image(rng, (3, 4, 20, 21), np.uint16)   # PyTorch (N, C, H, W)
    got = pixsum.box_filter(nchw, (3, 5), batch=True, channel_axis=1, mode="reflect",
                            stat="mean", dtype=np.uint16)
    assert got.shape == nchw.shape
    for i in range(3):
        for c in range(4):
            same(got[i, c], pixsum.box_filter(nchw[i, c], (3, 5), mode="reflect",
                                              stat="mean", dtype=np.uint16))
    # channels-first whose N and C axes do not merge: copied, or refused with copy=False
    odd = np.ascontiguousarray(nchw.transpose(1, 0, 2, 3)).transpose(1, 0, 2, 3)
    same(pixsum.box_filter(odd, 3, batch=True, channel_axis=1),
         pixsum.box_filter(np.ascontiguousarray(odd), 3, batch=True, channel_axis=1))
    with pytest.raises(pixsum.BadStrideError):
        pixsum.box_filter(odd, 3, batch=True, channel_axis=1, copy=False)
    out = np.empty((6, 30, 40, 3), np.float32)
    r = pixsum.box_filter(base, 5, batch=True, out=out)
    assert r is out
    same(out, per_image(pixsum.box_filter, base, size=5, dtype=np.float32))


def test_box_filter_batch_refusals(rng):
    stack = random_image(rng, (8, 20, 30), np.uint8)
    with pytest.raises(pixsum.BadShapeError, match="batch=True"):
        pixsum.box_filter(stack, 3)
    with pytest.raises(pixsum.BadShapeError, match="batch=True"):
        pixsum.box_filter(random_image(rng, (2, 3, 20, 30), np.uint8), 3)
    with pytest.raises(pixsum.InvalidArgumentError, match="channel_axis"):
        pixsum.box_filter(stack, 3, channel_axis=1)
    with pytest.raises(pixsum.InvalidArgumentError, match="channel_axis"):
        pixsum.box_filter(stack, 3, batch=True, channel_axis=2)
    with pytest.raises(pixsum.BadShapeError):
        pixsum.box_filter(stack, 3, batch=True, out=np.empty((7, 20, 30), np.float64))
    with pytest.raises(pixsum.BadShapeError, match="batch=True"):
        pixsum.box_filter(stack[0], 3, batch=True)


def ref_equalize(img, mask=None):
    """One channel equalised from the definition (exact integers, halves up)."""
    levels = 256 if img.dtype == np.uint8 else 65536
    sel = img if mask is None else img[mask != 0]
    cdf = np.cumsum(np.bincount(sel.ravel(), minlength=levels)).astype(np.int64)
    n, nz = cdf[-1], cdf[cdf > 0]
    cmin = int(nz[0]) if nz.size else 0
    if n == cmin:
        return img.copy()
    num = np.maximum(cdf - cmin, 0).astype(object) * (levels - 1)
    lut = np.array([(2 * a + (n - cmin)) // (2 * (n - cmin)) for a in num], np.int64)
    return lut[img].astype(img.dtype)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("hw", SIZES)
@pytest.mark.parametrize("channels", [None, 2, 3])
def test_equalize_batch(rng, dtype, hw, channels):
    n = int(rng.integers(1, 8))
    x = random_image(rng, (n,) + hw + ((channels,) if channels else ()), dtype)
    same(pixsum.equalize(x, batch=True), per_image(pixsum.equalize, x))
    shared = (rng.random(hw) < 0.6).astype(np.uint8)
    per = (rng.random((n,) + hw) < 0.6).astype(np.uint8)
    same(pixsum.equalize(x, batch=True, mask=shared),
         per_image(pixsum.equalize, x, mask=shared))
    same(pixsum.equalize(x, batch=True, mask=per),
         np.stack([pixsum.equalize(x[i], mask=per[i]) for i in range(n)]))
    if channels is None:
        got = pixsum.equalize(x, batch=True, mask=per)
        for i in range(n):
            same(got[i], ref_equalize(x[i], per[i]))


def test_equalize_batch_layouts_and_refusals(rng):
    x = random_image(rng, (5, 16, 18), np.uint8)
    y = x.copy()
    assert pixsum.equalize(y, batch=True, out=y) is y      # in place
    same(y, per_image(pixsum.equalize, x))
    nchw = random_image(rng, (2, 3, 9, 10), np.uint8)
    got = pixsum.equalize(nchw, batch=True, channel_axis=1)
    same(got, np.stack([[pixsum.equalize(nchw[i, c]) for c in range(3)] for i in range(2)]))
    # without batch=True a stack stays one volume with one histogram
    vol = pixsum.equalize(x, channels=False)
    same(vol, ref_equalize(x))
    with pytest.raises(pixsum.InvalidArgumentError, match="nbins"):
        pixsum.equalize(x, batch=True, nbins=16)
    with pytest.raises(pixsum.BadTypeError):
        pixsum.equalize(x.astype(np.float32), batch=True)
    with pytest.raises(pixsum.InvalidArgumentError, match="batch=True"):
        pixsum.equalize(x, channel_axis=1)
    with pytest.raises(pixsum.BadShapeError):
        pixsum.equalize(x, batch=True, mask=np.ones((3, 16, 18), np.uint8))


def ref_otsu_bin(counts):
    """The bin maximising the between-class variance, every split tried."""
    best, best_t = -1.0, 0
    idx = np.arange(len(counts), dtype=np.float64)
    for t in range(len(counts) - 1):
        w0, w1 = counts[:t + 1].sum(), counts[t + 1:].sum()
        if w0 == 0 or w1 == 0:
            continue
        m0 = (idx[:t + 1] * counts[:t + 1]).sum() / w0
        m1 = (idx[t + 1:] * counts[t + 1:]).sum() / w1
        v = float(w0) * float(w1) * (m0 - m1) ** 2
        if v > best * (1 + 1e-12):
            best, best_t = v, t
    return best_t


@pytest.mark.parametrize("n", [1, 2, 7])
def test_threshold_otsu_batch(rng, n):
    x = np.where(rng.random((n, 21, 19)) < 0.5, rng.integers(0, 90, (n, 21, 19)),
                 rng.integers(130, 256, (n, 21, 19))).astype(np.uint8)
    got = pixsum.threshold_otsu(x, batch=True)
    assert got.shape == (n,) and got.dtype == np.float64
    for i in range(n):
        assert got[i] == pixsum.threshold_otsu(x[i])
        assert got[i] == ref_otsu_bin(np.bincount(x[i].ravel(), minlength=256)) + 1
    same(pixsum.otsu(pixsum.histogram(x, batch=True), batch=True),
         np.array([pixsum.otsu(np.bincount(x[i].ravel(), minlength=256))
                   for i in range(n)], np.int64))
    # floats: one range for the batch by default, each image's with range_per_image
    f = rng.random((n, 12, 13)) * (1 + np.arange(n))[:, None, None]
    shared, info = pixsum.threshold_otsu(f, batch=True, info=True)
    for i in range(n):
        assert shared[i] == pixsum.threshold_otsu(f[i], bins=info["bins"],
                                                  range=(info["lo"][i], info["hi"][i]))
        assert info["lo"][i] == f.min()
    own = pixsum.threshold_otsu(f, batch=True, range_per_image=True)
    same(own, np.array([pixsum.threshold_otsu(f[i]) for i in range(n)]))
    for value in ("center", "lower"):
        same(pixsum.threshold_otsu(f, batch=True, range_per_image=True, value=value,
                                   closed_last=True),
             np.array([pixsum.threshold_otsu(f[i], value=value, closed_last=True)
                       for i in range(n)]))
    m = (rng.random((12, 13)) < 0.7).astype(np.uint8)
    same(pixsum.threshold_otsu(f, batch=True, range_per_image=True, mask=m),
         np.array([pixsum.threshold_otsu(f[i], mask=m) for i in range(n)]))


def test_threshold_otsu_batch_layouts_and_refusals(rng):
    nchw = random_image(rng, (2, 3, 9, 10), np.uint8)
    got = pixsum.threshold_otsu(nchw, batch=True, channel_axis=1)
    assert got.shape == (2, 3)
    for i in range(2):
        for c in range(3):
            assert got[i, c] == pixsum.threshold_otsu(nchw[i, c])
    with pytest.raises(pixsum.InvalidArgumentError, match="batch=True"):
        pixsum.threshold_otsu(nchw[0], range_per_image=True)
    with pytest.raises(pixsum.BadShapeError, match="channel_axis=1"):
        pixsum.threshold_otsu(random_image(rng, (2, 9, 10, 3), np.uint8), batch=True)
    with pytest.raises(pixsum.InvalidArgumentError, match="image 1"):
        pixsum.threshold_otsu(np.stack([nchw[0, 0], np.full((9, 10), np.nan)]), batch=True,
                              range_per_image=True)
    with pytest.raises(pixsum.BadShapeError, match="batch=True"):
        pixsum.otsu(np.ones((3, 8), np.int64))


# ---- GPU: CuPy arrays and PyTorch tensors -------------------------------------------------

def _device_ready():
    return pixsum.HAVE_CUDA and pixsum.cuda_device_count() > 0


@pytest.fixture
def cp():
    cupy = pytest.importorskip("cupy")
    if not _device_ready():
        pytest.skip("pixsum built without CUDA or no CUDA device")
    return cupy


@pytest.fixture
def torch():
    t = pytest.importorskip("torch")
    if not _device_ready() or not t.cuda.is_available():
        pytest.skip("pixsum built without CUDA or no CUDA device")
    return t


GPU_DTYPES = [np.uint8, np.uint16, np.int16, np.int32, np.float32]


def gpu_squares(dtype, pixels):
    """True when the CUDA methods compute the default squared table of an
    integer image of `pixels` pixels (integer squares; float squares of
    integer images are computed on the CPU only)."""
    return (np.dtype(dtype).kind != "f" and
            pixsum.integral_dtype(dtype, pixels, squared=True).kind != "f")


@pytest.mark.parametrize("dtype", GPU_DTYPES)
@pytest.mark.parametrize("hw", SIZES)
@pytest.mark.parametrize("channels", [None, 3])
def test_cupy_batch(cp, rng, dtype, hw, channels):
    n = int(rng.integers(1, 6))
    shape = (n,) + hw + ((channels,) if channels else ())
    host = random_image(rng, shape, dtype)
    x = cp.asarray(host)
    for padded in (False, True):
        got = pixsum.integral(x, batch=True, padded=padded)
        assert isinstance(got, cp.ndarray) and got.shape[0] == n
        want = np.stack([cp.asnumpy(pixsum.integral(x[i], padded=padded)) for i in range(n)])
        if np.dtype(dtype).kind == "f":
            np.testing.assert_allclose(cp.asnumpy(got), want, rtol=1e-6, atol=1e-3)
        else:
            same(cp.asnumpy(got), want)
            same(cp.asnumpy(got), per_image(pixsum.integral, host, padded=padded))
        if gpu_squares(dtype, hw[0] * hw[1]):
            t, q = pixsum.integral_sq(x, batch=True, padded=padded)
            wt, wq = per_image(pixsum.integral_sq, host, padded=padded)
            same(cp.asnumpy(t), wt)
            same(cp.asnumpy(q), wq)


def test_cupy_batch_strided(cp, rng):
    base = cp.asarray(random_image(rng, (9, 30, 40), np.uint8))
    view = base[::-2, 3:25, 5:31]
    got = pixsum.integral(view, batch=True)
    same(cp.asnumpy(got), per_image(pixsum.integral, cp.asnumpy(view)))


@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "float32"])
def test_torch_batch_channels_first(torch, rng, dtype):
    n, c, h, w = int(rng.integers(1, 5)), 3, 37, 29
    host = random_image(rng, (n, c, h, w), np.dtype(dtype))
    x = torch.from_numpy(host).cuda()
    got = pixsum.integral(x, batch=True, channel_axis=1)
    assert isinstance(got, torch.Tensor) and got.is_cuda and tuple(got.shape) == (n, c, h, w)
    res = got.cpu().numpy()
    for i in range(n):
        for k in range(c):
            one = pixsum.integral(x[i, k]).cpu().numpy()
            if np.dtype(dtype).kind == "f":
                np.testing.assert_allclose(res[i, k], one, rtol=1e-6, atol=1e-3)
            else:
                same(res[i, k], one)
                np.testing.assert_array_equal(res[i, k], ref_integral(host[i, k]))
    # (N, H, W, C) tensors too, and the squared tables
    nhwc = torch.from_numpy(np.ascontiguousarray(host.transpose(0, 2, 3, 1))).cuda()
    if not (gpu_squares(dtype, h * w) or np.dtype(dtype).kind == "f"):
        with pytest.raises(pixsum.UnsupportedError):  # as for one image
            pixsum.integral_sq(nhwc, batch=True)
        return
    t, q = pixsum.integral_sq(nhwc, batch=True)
    for i in range(n):
        t1, q1 = pixsum.integral_sq(nhwc[i])
        if np.dtype(dtype).kind == "f":
            np.testing.assert_allclose(q[i].cpu().numpy(), q1.cpu().numpy(), rtol=1e-6)
        else:
            same(t[i].cpu().numpy(), t1.cpu().numpy())
            same(q[i].cpu().numpy(), q1.cpu().numpy())
    # channels-last memory seen as (N, C, H, W): one contiguous copy (the same
    # tables), or refused with copy=False
    perm = nhwc.permute(0, 3, 1, 2)
    again = pixsum.integral(perm, batch=True, channel_axis=1).cpu().numpy()
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(again, res, rtol=1e-6, atol=1e-3)
    else:
        same(again, res)
    with pytest.raises(pixsum.BadStrideError):
        pixsum.integral(perm, batch=True, channel_axis=1, copy=False)


def test_torch_batch_stream_out_and_errors(torch, rng):
    host = random_image(rng, (5, 64, 48), np.uint8)
    x = torch.from_numpy(host).cuda()
    s = torch.cuda.Stream()
    out = torch.empty((5, 65, 49), dtype=torch.int64, device="cuda")
    with torch.cuda.stream(s):
        r = pixsum.integral(x, batch=True, padded=True, out=out)
    s.synchronize()
    assert r is out
    same(out.cpu().numpy(), per_image(pixsum.integral, host, padded=True, dtype=np.int64))
    with pytest.raises(pixsum.BadShapeError, match="batch=True"):
        pixsum.integral(x)
    with pytest.raises(pixsum.BadShapeError):
        pixsum.integral(x, batch=True, out=torch.empty((5, 64, 47), dtype=torch.int64,
                                                        device="cuda"))
    with pytest.raises(pixsum.BadTypeError):
        pixsum.integral(x, batch=True, dtype=np.uint64,
                        out=torch.empty((5, 64, 48), dtype=torch.int64, device="cuda"))


def test_gpu_no_reference_leaks(torch, rng):
    import sys
    x = torch.from_numpy(random_image(rng, (16, 16), np.uint8)).cuda()
    out = torch.empty((16, 16), dtype=torch.int64, device="cuda")
    before = [sys.getrefcount(o) for o in (x, out, torch.int64)]
    for _ in range(200):
        pixsum.integral(x)
        pixsum.integral(x, out=out)
        pixsum.integral_sq(x)
        with pytest.raises(pixsum.BadShapeError):
            pixsum.integral(x, out=torch.empty((16, 15), dtype=torch.int64, device="cuda"))
    torch.cuda.synchronize()
    assert [sys.getrefcount(o) for o in (x, out, torch.int64)] == before

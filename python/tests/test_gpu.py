"""GPU arrays: CuPy and PyTorch arrays (and DLPack-only producers) run on the
CUDA backend without a host copy, on the caller's stream, and come back as GPU
arrays of the same kind. The device tests skip without CuPy/PyTorch, a CUDA
build of pixsum or a device; the error paths run everywhere."""

import numpy as np
import pytest

import pixsum
from conftest import random_image, ref_integral


class FakeGpuArray:
    """An object that claims to be CUDA memory (never dereferenced)."""

    def __init__(self, shape=(4, 5), typestr="|u1"):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                         "data": (0x1000, False), "version": 3,
                                         "strides": None, "stream": 1}


def test_gpu_array_is_recognised_everywhere():
    fake = FakeGpuArray()
    integrals = [lambda: pixsum.integral(fake), lambda: pixsum.integral_tilted(fake)]
    for fn in integrals:
        if not pixsum.HAVE_CUDA:
            with pytest.raises(pixsum.UnavailableError, match="built without"):
                fn()
        else:
            # The integrals take any producer: without CuPy or PyTorch to
            # allocate the result they say so; with one, the library refuses
            # the fake pointer (memory the GPU cannot reach) before any launch.
            with pytest.raises((pixsum.UnavailableError, pixsum.InvalidArgumentError)) as err:
                fn()
            if isinstance(err.value, pixsum.InvalidArgumentError):
                assert "not memory the GPU can reach" in str(err.value)
    # Every other function takes GPU arrays to its GPU path; a producer that
    # is neither CuPy nor PyTorch (or a build without CUDA) is told what is
    # missing there, before any memory is touched.
    calls = [lambda: pixsum.box_sum(fake, (0, 0, 1, 1)),
             lambda: pixsum.box_mean(fake, (0, 0, 1, 1)),
             lambda: pixsum.box_var(fake, fake, (0, 0, 1, 1)),
             lambda: pixsum.box_filter(fake, 3)]
    if hasattr(pixsum, "histogram"):
        calls += [lambda: pixsum.histogram(fake), lambda: pixsum.histogram2d(fake, fake),
                  lambda: pixsum.equalize(fake)]
    for fn in calls:
        with pytest.raises(pixsum.UnavailableError):
            fn()
    # a GPU array beside a host image is refused with the reason
    host = np.zeros((4, 5), np.uint8)
    if hasattr(pixsum, "histogram"):
        with pytest.raises(pixsum.UnsupportedError, match="host memory"):
            pixsum.histogram(host, mask=fake)
    with pytest.raises(pixsum.UnsupportedError, match="host memory"):
        pixsum.box_sum(pixsum.integral(host), fake)


def _device_ready():
    return pixsum.HAVE_CUDA and pixsum.cuda_device_count() > 0


needs_device = pytest.mark.skipif(not _device_ready(),
                                  reason="pixsum built without CUDA or no CUDA device")


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


@needs_device
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (1, 300), (257, 1), (123, 517), (64, 80, 3)])
def test_cupy_integral(cp, rng, dtype, shape):
    img = random_image(rng, shape, dtype)
    d = cp.asarray(img)
    got = pixsum.integral(d)
    assert isinstance(got, cp.ndarray)
    want = ref_integral(img)
    if got.dtype.kind == "f":
        np.testing.assert_allclose(cp.asnumpy(got), want, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(cp.asnumpy(got), want.astype(got.dtype))


@needs_device
def test_cupy_strided_out_padded_sq_3d(cp, rng):
    base = cp.asarray(random_image(rng, (300, 260), np.uint8))
    view = base[::2, 10:250]                       # read in place, no copy
    out = cp.empty((150, 240), cp.uint32)
    res = pixsum.integral(view, out=out)
    assert res is out
    np.testing.assert_array_equal(cp.asnumpy(out), ref_integral(cp.asnumpy(view)))
    p = pixsum.integral(view, padded=True)
    assert p.shape == (151, 241) and int(p[0].sum()) == 0
    t, q = pixsum.integral_sq(view)
    np.testing.assert_array_equal(cp.asnumpy(q),
                                  ref_integral(cp.asnumpy(view).astype(np.uint64) ** 2))
    vol = random_image(rng, (5, 40, 30), np.uint16)
    np.testing.assert_array_equal(cp.asnumpy(pixsum.integral3d(cp.asarray(vol))),
                                  ref_integral(vol, axes=3))


@needs_device
def test_cupy_runs_on_the_callers_stream(cp, rng):
    img = random_image(rng, (2048, 2048), np.uint8)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        d = cp.asarray(img)
        got = pixsum.integral(d)
        total = got[-1, -1] + 0                      # ordered after it on s
    s.synchronize()
    assert int(total) == int(img.sum())
    np.testing.assert_array_equal(cp.asnumpy(got), ref_integral(img).astype(np.uint32))


@needs_device
def test_torch_integral(torch, rng):
    img = random_image(rng, (333, 444, 2), np.float32)
    d = torch.from_numpy(img).cuda()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        got = pixsum.integral(d)
        got_sq = pixsum.integral_sq(d[:, 1:])[1]
    s.synchronize()
    assert isinstance(got, torch.Tensor) and got.is_cuda and got.dtype == torch.float64
    np.testing.assert_allclose(got.cpu().numpy(), ref_integral(img), rtol=1e-6, atol=1e-3)
    np.testing.assert_allclose(got_sq.cpu().numpy(),
                               ref_integral(img[:, 1:].astype(np.float64) ** 2), rtol=1e-6)
    u8 = torch.from_numpy(random_image(rng, (100, 120), np.uint8)).cuda()
    default = pixsum.integral(u8)  # uint32 where PyTorch has it, else int64
    assert default.dtype in (getattr(torch, "uint32", torch.int64), torch.int64)
    r = pixsum.integral(u8, dtype=np.int64, padded=True)
    out = torch.empty((100, 120), dtype=torch.int64, device="cuda")
    assert pixsum.integral(u8, out=out) is out
    # The CUDA methods compute integer images into integer tables only: a float
    # table of u8 input is refused with a clear error, never computed on the host.
    with pytest.raises(pixsum.UnsupportedError):
        pixsum.integral(u8, out=torch.empty((100, 120), dtype=torch.float64, device="cuda"))
    torch.cuda.synchronize()
    ref = ref_integral(u8.cpu().numpy())
    np.testing.assert_array_equal(r.cpu().numpy(), np.pad(ref, ((1, 0), (1, 0))))
    np.testing.assert_array_equal(out.cpu().numpy(), ref)


@needs_device
def test_dlpack_only_producer(cp, rng):
    img = random_image(rng, (50, 70), np.int16)
    d = cp.asarray(img)

    class OnlyDlpack:
        def __dlpack__(self, **kw):
            return d.__dlpack__(**kw)

        def __dlpack_device__(self):
            return d.__dlpack_device__()

    got = pixsum.integral(OnlyDlpack())
    np.testing.assert_array_equal(cp.asnumpy(cp.asarray(got)), ref_integral(img))


@pytest.mark.skipif(not pixsum.HAVE_CUDA or pixsum.cuda_device_count() > 0,
                    reason="needs a CUDA build of pixsum on a machine without a device")
def test_cuda_build_without_device_reports_unavailable():
    a = np.ones((4, 5), np.uint8)
    o = np.zeros((4, 5), np.uint32)
    with pytest.raises(pixsum.UnavailableError) as e:
        pixsum._core._cuda_integral(2, (a.ctypes.data, "u8", (4, 5), (5, 1)),
                                    (o.ctypes.data, "u32", (4, 5), (20, 4)))
    assert "device" in str(e.value)
    assert not o.any()

"""The pixsum.Error hierarchy: one class per C status code, each also a
built-in exception, carrying .status and the library's .detail text."""

import numpy as np
import pytest

import pixsum
from pixsum import _errors


def test_hierarchy_covers_every_status():
    assert len(_errors.BY_STATUS) == 19
    for status, cls in enumerate(_errors.BY_STATUS):
        assert cls.status == status
        assert issubclass(cls, pixsum.Error)
    assert issubclass(pixsum.BadShapeError, ValueError)
    assert issubclass(pixsum.BadTypeError, TypeError)
    assert issubclass(pixsum.OverflowError, OverflowError)
    assert issubclass(pixsum.NoMemoryError, MemoryError)
    assert issubclass(pixsum.OutOfRangeError, IndexError)
    assert issubclass(pixsum.IOError, OSError)
    assert pixsum.PixsumOverflowError is pixsum.OverflowError
    assert pixsum.PixsumIOError is pixsum.IOError


def test_import_star_keeps_the_builtins():
    import builtins
    names = {}
    exec("from pixsum import *", names)
    assert "OverflowError" not in names and "IOError" not in names
    assert names["PixsumOverflowError"] is pixsum.OverflowError
    assert names["PixsumIOError"] is pixsum.IOError
    assert issubclass(names["PixsumOverflowError"], builtins.OverflowError)
    assert issubclass(names["PixsumIOError"], builtins.OSError)
    for name in pixsum.__all__:
        assert not hasattr(builtins, name), name
    star = {}
    exec("from pixsum._errors import *", star)
    assert "OverflowError" not in star and "IOError" not in star


def test_library_detail_text_is_carried():
    img = np.full((400, 400), 40000, np.uint16)
    with pytest.raises(pixsum.OverflowError) as e:
        pixsum.integral(img, dtype=np.uint32)
    err = e.value
    assert err.status == 6
    assert err.detail and err.detail in str(err)
    assert str(err).startswith("integral: ")


def test_binding_errors_use_the_hierarchy():
    img = np.ones((4, 4), np.uint8)
    cases = [
        (lambda: pixsum.integral(np.ones((4, 4, 5), np.uint8)), pixsum.BadShapeError),
        (lambda: pixsum.integral(np.ones((2, 2, 2, 2, 2), np.uint8)), pixsum.BadShapeError),
        (lambda: pixsum.integral(np.ones((0, 4), np.uint8)), pixsum.BadShapeError),
        (lambda: pixsum.integral(np.ones((4, 4), np.complex64)), pixsum.BadTypeError),
        (lambda: pixsum.integral(np.ones((4, 4), np.int8), copy=False), pixsum.BadTypeError),
        (lambda: pixsum.integral(np.full((4, 4), 1 << 40)), pixsum.OverflowError),
        (lambda: pixsum.integral(img, dtype=np.int8), pixsum.BadTypeError),
        (lambda: pixsum.integral(img, dtype=np.int16), pixsum.BadTypeError),
        (lambda: pixsum.integral(img, method="no.such"), pixsum.UnknownMethodError),
        (lambda: pixsum.integral(img, threads=-1), pixsum.InvalidArgumentError),
        (lambda: pixsum.integral(img, out=np.empty((3, 3), np.uint32)), pixsum.BadShapeError),
        (lambda: pixsum.integral(img, out=[[0]]), pixsum.BadTypeError),
        (lambda: pixsum.integral(img, dtype=np.uint64, out=np.empty((4, 4), np.uint32)),
         pixsum.BadTypeError),
        (lambda: pixsum.integral3d(img), pixsum.BadShapeError),
        (lambda: pixsum.integral(object()), pixsum.BadTypeError),
    ]
    for fn, cls in cases:
        with pytest.raises(cls) as e:
            fn()
        assert e.value.status == cls.status and str(e.value)


def test_method_that_cannot_do_the_job():
    hist_methods = [m["name"] for m in pixsum.methods() if m["ops"] == ["histogram"]]
    if not hist_methods:
        pytest.skip("no histogram-only method registered")
    with pytest.raises((pixsum.UnsupportedError, pixsum.UnavailableError)):
        pixsum.integral(np.ones((4, 4), np.uint8), method=hist_methods[0])


def test_keyword_only_arguments():
    with pytest.raises(TypeError):
        pixsum.integral(np.ones((2, 2), np.uint8), np.uint32)  # dtype is keyword-only
    for name in pixsum.__all__:
        obj = getattr(pixsum, name, None)
        if callable(obj) and not isinstance(obj, type):
            assert obj.__doc__ and len(obj.__doc__) > 40, name

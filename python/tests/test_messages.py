"""Messages that name what is wrong (issue 37, section 4): an array or dtype=
argument of a dtype pixsum does not read is named the way NumPy names it -
its name and its type string, e.g. "int8 ('|i1')", "object ('|O')",
"float32 ('>f4', non-native byte order)" - by every function (they share one
describing function, psb_descr_text), whatever the array's rank; and
images without integral tables (int64, uint64) are refused with a message,
never a crash."""

import subprocess
import sys

import numpy as np
import pytest

import pixsum

#: dtypes pixsum does not read, and the text that must name each.
UNSUPPORTED = [
    (np.dtype(np.int8), "int8 ('|i1')"),
    (np.dtype(np.float16), "float16 ('%s')" % np.dtype(np.float16).str),
    (np.dtype(object), "object ('|O')"),
    (np.dtype(bool), "bool ('|b1')"),
    (np.dtype(">f4") if sys.byteorder == "little" else np.dtype("<f4"),
     "float32 ('%s', non-native byte order)" % (">f4" if sys.byteorder == "little" else "<f4")),
    (np.dtype(">u2") if sys.byteorder == "little" else np.dtype("<u2"),
     "uint16 ('%s', non-native byte order)" % (">u2" if sys.byteorder == "little" else "<u2")),
]


def _array(dtype, shape):
    return np.zeros(shape, dtype=dtype)


@pytest.mark.parametrize("dtype,text", UNSUPPORTED, ids=[t for _, t in UNSUPPORTED])
@pytest.mark.parametrize("shape", [(6,), (4, 5)], ids=["1-D", "2-D"])
@pytest.mark.parametrize("fn", ["histogram", "threshold_otsu", "equalize"])
def test_histogram_functions_name_the_dtype(fn, shape, dtype, text):
    if fn == "equalize" and len(shape) == 1:
        pytest.skip("equalize takes images")
    with pytest.raises(pixsum.BadTypeError) as e:
        getattr(pixsum, fn)(_array(dtype, shape))
    msg = str(e.value)
    assert text in msg, msg
    assert "unsupported dtype" not in msg
    assert "uint8" in msg  # and what it reads instead


@pytest.mark.parametrize("dtype,text", UNSUPPORTED, ids=[t for _, t in UNSUPPORTED])
@pytest.mark.parametrize("fn", ["integral", "integral_sq", "box_filter"])
def test_table_functions_name_the_dtype(fn, dtype, text):
    args = (3,) if fn == "box_filter" else ()
    with pytest.raises(pixsum.BadTypeError) as e:
        getattr(pixsum, fn)(_array(dtype, (4, 5)), *args)
    assert text in str(e.value), str(e.value)


def test_out_and_dtype_arguments_name_the_dtype():
    img = np.arange(20, dtype=np.uint8).reshape(4, 5)
    with pytest.raises(pixsum.BadTypeError) as e:
        pixsum.histogram(img, out=np.zeros(256, np.int8))
    assert "out has dtype int8 ('|i1')" in str(e.value), str(e.value)
    with pytest.raises(pixsum.BadTypeError) as e:
        pixsum.integral(img, dtype=np.float16)
    assert "float16 ('%s')" % np.dtype(np.float16).str in str(e.value), str(e.value)
    with pytest.raises(pixsum.BadTypeError) as e:
        pixsum.integral(img, dtype=object)
    assert "object ('|O')" in str(e.value), str(e.value)


def test_box_filter_of_64_bit_images_is_refused_not_a_crash():
    # int64/uint64 images are no box filter input: box_filter used to divide by
    # the size of no type (SIGFPE, the interpreter dies), so run it apart
    code = (
        "import numpy as np, pixsum\n"
        "for t in (np.int64, np.uint64):\n"
        "    for kw in ({}, {'normalize': False}, {'dtype': np.float32}):\n"
        "        try:\n"
        "            pixsum.box_filter(np.zeros((4, 4), t), 3, **kw)\n"
        "            print('accepted', t.__name__)\n"
        "        except pixsum.BadTypeError as e:\n"
        "            print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, (r.returncode, r.stderr)
    lines = r.stdout.splitlines()
    assert len(lines) == 6, r.stdout
    for line, t in zip(lines, ["int64"] * 3 + ["uint64"] * 3):
        assert line.startswith("box_filter: image dtype %s is not an input type of "
                               "box filters" % t), line

"""Messages that name what is wrong (issue 37, section 4): an array or dtype=
argument of a dtype pixsum does not read is named the way NumPy names it -
its name and its type string, e.g. "int8 ('|i1')", "object ('|O')",
"complex64 ('<c8')" - by every function (they share one describing function,
psb_descr_text), whatever the array's rank; and int64/uint64 images whose
values do not fit 32 bits are refused with a message, never a crash. (bool,
int8, float16 and big-endian arrays are read through a converted copy since
issue 41; copy=False refuses them with a message naming the dtype, see
test_arrays.py.)"""

import subprocess
import sys

import numpy as np
import pytest

import pixsum

#: dtypes pixsum does not read, and the text that must name each.
UNSUPPORTED = [
    (np.dtype(object), "object ('|O')"),
    (np.dtype(np.complex64), "complex64 ('%s')" % np.dtype(np.complex64).str),
    (np.dtype("S2"), "bytes16 ('|S2')"),
    (np.dtype(">c16") if sys.byteorder == "little" else np.dtype("<c16"),
     "complex128 ('%s', non-native byte order)" % (">c16" if sys.byteorder == "little"
                                                   else "<c16")),
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


def test_box_filter_of_64_bit_images_is_read_or_refused_not_a_crash():
    # int64/uint64 images used to reach box_filter as a type with no box
    # filter (it divided by the size of no type: SIGFPE, the interpreter
    # dies), so run it apart. Now values within 32 bits are read as int32 /
    # uint32, and wider ones raise pixsum.OverflowError naming the range.
    code = (
        "import numpy as np, pixsum\n"
        "for t in (np.int64, np.uint64):\n"
        "    for v in (7, 1 << 40):\n"
        "        for kw in ({}, {'normalize': False}, {'dtype': np.float32}):\n"
        "            try:\n"
        "                r = pixsum.box_filter(np.full((4, 4), v, t), 3, **kw)\n"
        "                print('accepted', t.__name__, float(r[1, 1]))\n"
        "            except pixsum.OverflowError as e:\n"
        "                print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, (r.returncode, r.stderr)
    lines = r.stdout.splitlines()
    assert len(lines) == 12, r.stdout
    for k, line in enumerate(lines):
        t = "int64" if k < 6 else "uint64"
        if (k // 3) % 2 == 0:
            want = 63.0 if k % 3 == 1 else 7.0  # the sum of 9 sevens, else their mean
            assert line == "accepted %s %s" % (t, want), line
        else:
            assert line.startswith("image has dtype %s" % t), line
            assert "beyond int32 and uint32" in line, line

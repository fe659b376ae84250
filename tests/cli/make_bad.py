#!/usr/bin/python3
"""make_bad.py - regenerates tests/cli/bad/: a corpus of broken or unsupported
image files, and bad/expected.txt listing for each file the exit status and a
piece of the message `pixsum convert FILE OUT.npy` and `pixsum integral FILE
-o OUT.npy` must print (the message must also name the file). Run it with
/usr/bin/python3 tests/cli/make_bad.py; the files are committed."""
import io
import os
import struct
import zlib

import numpy as np
from PIL import Image

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bad")
os.makedirs(HERE, exist_ok=True)
rng = np.random.default_rng(7)
expected = []


def bad(name, data, message, status=1):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)
    expected.append(f"{name}|{status}|{message}")


def npy_bytes(header_dict, payload=b""):
    h = header_dict.encode()
    total = 10 + len(h) + 1
    pad = (64 - total % 64) % 64
    h = h + b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + payload


def good_npy(arr):
    b = io.BytesIO()
    np.save(b, arr)
    return b.getvalue()


u8 = rng.integers(0, 256, (100, 100), dtype=np.uint8)
bad("empty.npy", b"", "empty file")
bad("junk.bin", bytes(rng.integers(0, 256, 64, dtype=np.uint8)), "unknown file format")
bad("npy_truncated.npy", good_npy(u8)[:2000], "truncated .npy file")
bad("npy_bad_magic.npy", b"\x93NUMPX" + good_npy(u8)[6:], "unknown file format")
bad("npy_header_cut.npy", good_npy(u8)[:40], "truncated or corrupt .npy header")
bad("npy_version9.npy", b"\x93NUMPY\x09\x00" + good_npy(u8)[8:], "unsupported .npy version")
bad("npy_f2.npy", npy_bytes("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }", b"\0" * 8),
    "unsupported .npy dtype float16 ('<f2')")
bad("npy_i1.npy", npy_bytes("{'descr': '|i1', 'fortran_order': False, 'shape': (2, 2), }", b"\0" * 4),
    "unsupported .npy dtype int8 ('|i1')")
# NumPy's own header of an object array (np.save(..., allow_pickle=True)): named
# as NumPy names it, not as '|O0'
bad("npy_object.npy", npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (2, 2), }", b"\0" * 32),
    "unsupported .npy dtype object ('|O')")
bad("npy_datetime.npy", npy_bytes("{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (2, 2), }", b"\0" * 32),
    "unsupported .npy dtype datetime64 ('<M8[ns]')")
bad("npy_fortran.npy", npy_bytes("{'descr': '|u1', 'fortran_order': True, 'shape': (2, 2), }", b"\0" * 4),
    "Fortran-order")
bad("npy_overflow.npy",
    npy_bytes("{'descr': '<u8', 'fortran_order': False, 'shape': (4611686018427387904, 4611686018427387904), }"),
    "image dimensions overflow")
bad("npy_huge_dim.npy",
    npy_bytes("{'descr': '|u1', 'fortran_order': False, 'shape': (99999999999999999999999, 2), }"),
    "absurd .npy dimension")
bad("npy_absurd_size.npy", npy_bytes("{'descr': '|u1', 'fortran_order': False, 'shape': (1000000, 1000000), }"),
    "truncated .npy file")
bad("npy_rank5.npy", npy_bytes("{'descr': '|u1', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1), }", b"\0"),
    "unsupported .npy rank 5")
bad("npy_rank1.npy", npy_bytes("{'descr': '|u1', 'fortran_order': False, 'shape': (4,), }", b"\0" * 4),
    "unsupported .npy rank 1")
bad("npy_zero.npy", npy_bytes("{'descr': '|u1', 'fortran_order': False, 'shape': (0, 5), }"), "empty .npy array")
bad("npy_channels9.npy", npy_bytes("{'descr': '|u1', 'fortran_order': False, 'shape': (1, 2, 2, 9), }", b"\0" * 36),
    "needs 1..4 channels")
bad("npy_no_shape.npy", npy_bytes("{'descr': '|u1', 'fortran_order': False, }"), "corrupt .npy header")
bad("npy_struct.npy", npy_bytes("{'descr': [('a', '<u1')], 'fortran_order': False, 'shape': (1, 1), }", b"\0"),
    "corrupt .npy header")

bad("pgm_truncated.pgm", b"P5\n100 100\n255\n" + b"\0" * 10, "truncated file")
bad("pgm_p2_truncated.pgm", b"P2\n3 2\n255\n1 2 3\n4\n", "truncated file")
bad("pgm_maxval_70000.pgm", b"P5\n2 2\n70000\n" + b"\0" * 8, "unsupported bit depth")
bad("pgm_width_absurd.pgm", b"P5\n2000000000000 2\n255\n", "absurd width")
bad("pgm_overflow.pgm", b"P5\n1099511627776 1099511627776\n65535\n", "image dimensions overflow")
bad("pgm_zero_width.pgm", b"P5\n0 2\n255\n", "width is 0")
bad("pgm_not_number.pgm", b"P5\nwide 2\n255\n", "is not a number")
bad("pgm_sample_over_maxval.pgm", b"P2\n2 1\n10\n3 11\n", "exceeds maxval")
bad("pgm_corrupt_sample.pgm", b"P2\n2 1\n255\n3 x7\n", "corrupt sample")
bad("pbm_bitmap.pbm", b"P4\n8 1\n\xff", "PBM bitmaps")
bad("pam.pam", b"P7\nWIDTH 1\n", "PAM (P7)")
bad("pfm_truncated.pfm", b"Pf\n10 10\n-1.0\n" + b"\0" * 40, "truncated file")
bad("pfm_bad_scale.pfm", b"Pf\n1 1\nabc\n" + b"\0" * 4, "corrupt PFM scale")
bad("pfm_overflow.pfm", b"PF\n1099511627776 1099511627776\n-1.0\n", "image dimensions overflow")

png = io.BytesIO()
Image.fromarray(u8).save(png, format="PNG")
png = png.getvalue()
bad("png_truncated.png", png[: len(png) // 2], "PNG error")
crc = bytearray(png)
idat = crc.find(b"IDAT")
crc[idat + 10] ^= 0xFF
bad("png_bad_crc.png", bytes(crc), "PNG error")
bad("png_header_only.png", png[:16], "PNG error")


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


# A header claiming 2^31-1 x 2^31-1 RGBA (the format's largest): 2^64 - 2^34
# bytes, past what a buffer can hold. Said as such, naming this file - not as
# "out of memory: the image needs 0 bytes", nor blamed on the output.
bad("png_huge_dims.png", b"\x89PNG\r\n\x1a\n"
    + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 2**31 - 1, 2**31 - 1, 8, 6, 0, 0, 0))
    + png_chunk(b"IDAT", zlib.compress(b"\0" * 64)) + png_chunk(b"IEND", b""),
    "image dimensions overflow")

jpg = io.BytesIO()
Image.fromarray(np.add.outer(np.arange(64), np.arange(64)).astype(np.uint8)).save(jpg, format="JPEG")
jpg = jpg.getvalue()
bad("jpeg_truncated.jpg", jpg[: len(jpg) // 2], "JPEG error")
cmyk = io.BytesIO()
Image.new("CMYK", (4, 4)).save(cmyk, format="JPEG")
bad("jpeg_cmyk.jpg", cmyk.getvalue(), "CMYK JPEG")

tif = io.BytesIO()
Image.fromarray(u8).save(tif, format="TIFF")
tif = tif.getvalue()
bad("tiff_header_only.tif", tif[:8], "not a readable TIFF")
# PIL puts the pixel data after the header and the IFD at the end: cutting
# the file keeps a readable IFD? No - so rebuild: IFD first, then data.
bw = io.BytesIO()
Image.fromarray(u8 > 100).save(bw, format="TIFF")
bad("tiff_1bit.tif", bw.getvalue(), "unsupported TIFF bit depth")
pal = io.BytesIO()
Image.fromarray(np.stack([u8] * 3, 2)).convert("P").save(pal, format="TIFF")
bad("tiff_palette.tif", pal.getvalue(), "palette TIFF")
# strip data cut short: move the strip far beyond the end of the file
cut = bytearray(tif)
ifd = int.from_bytes(cut[4:8], "little")
n = int.from_bytes(cut[ifd:ifd + 2], "little")
for k in range(n):
    e = ifd + 2 + 12 * k
    tag = int.from_bytes(cut[e:e + 2], "little")
    if tag == 273:  # StripOffsets (one strip, value in the entry)
        cut[e + 8:e + 12] = (len(cut) + 5000).to_bytes(4, "little")
bad("tiff_strip_missing.tif", bytes(cut), "TIFF read failed")

with open(os.path.join(HERE, "expected.txt"), "w") as f:
    f.write("# file|exit status|message part (for convert and integral)\n")
    f.write("\n".join(expected) + "\n")
print(len(expected), "bad files written to", HERE)

#!/usr/bin/python3
"""make_golden.py - regenerates tests/cli/golden/: small image files in every
format and depth the tool reads, each written by an independent writer (NumPy,
Pillow, or by hand following the format's specification), next to the .npy
array it must decode to (NAME.expect.npy). The CLI test reads each file with
`pixsum convert` and compares the result with `cmp`, byte for byte.

Run it from anywhere: /usr/bin/python3 tests/cli/make_golden.py
Only needed when adding cases; the files are committed."""
import os
import struct

import numpy as np
from PIL import Image

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
os.makedirs(HERE, exist_ok=True)
rng = np.random.default_rng(20240601)


def expect(name, arr):
    np.save(os.path.join(HERE, name + ".expect.npy"), np.ascontiguousarray(arr))


def put(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


# --- NumPy .npy: every dtype, v1 and v2 headers, big-endian, channels, volume
for dt in ["u1", "u2", "i2", "i4", "u4", "f4", "f8", "u8", "i8"]:
    if dt[0] == "f":
        a = (rng.standard_normal((5, 7)) * 1e3).astype(dt)
    else:
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, (5, 7), dtype=dt, endpoint=True)
    np.save(os.path.join(HERE, f"npy_{dt}.npy"), a)
    expect(f"npy_{dt}.npy", a)
a = rng.integers(0, 65535, (4, 6, 3), dtype=np.uint16)
with open(os.path.join(HERE, "npy_v2_u2c3.npy"), "wb") as f:
    np.lib.format.write_array(f, a, version=(2, 0))
expect("npy_v2_u2c3.npy", a)
be = rng.integers(-30000, 30000, (3, 5), dtype=np.int16).astype(">i2")
np.save(os.path.join(HERE, "npy_bigendian_i2.npy"), be)
expect("npy_bigendian_i2.npy", be.astype("<i2"))
vol = rng.integers(0, 255, (3, 4, 6), dtype=np.uint8)  # last axis 6 > 4: a volume
np.save(os.path.join(HERE, "npy_volume_u1.npy"), vol)
expect("npy_volume_u1.npy", vol)
rgba = rng.integers(0, 255, (2, 3, 4), dtype=np.uint8)
np.save(os.path.join(HERE, "npy_rgba_u1.npy"), rgba)
expect("npy_rgba_u1.npy", rgba)

# --- PGM / PPM by hand: P2 P3 P5 P6, 8 and 16 bit, comments, maxval < 255
g8 = rng.integers(0, 256, (3, 4), dtype=np.uint8)
put("pgm_p5_8.pgm", b"P5\n# a comment\n4 3\n255\n" + g8.tobytes())
expect("pgm_p5_8.pgm", g8)
g16 = rng.integers(0, 65536, (3, 5), dtype=np.uint16)
put("pgm_p5_16.pgm", b"P5 5 3 65535\n" + g16.astype(">u2").tobytes())
expect("pgm_p5_16.pgm", g16)
g12 = rng.integers(0, 4096, (2, 3), dtype=np.uint16)
txt = "P2\n3 2\n# twelve bits\n4095\n" + "\n".join(" ".join(str(v) for v in row) for row in g12) + "\n"
put("pgm_p2_12bit.pgm", txt.encode())
expect("pgm_p2_12bit.pgm", g12)
c8 = rng.integers(0, 200, (2, 3, 3), dtype=np.uint8)
put("ppm_p6_8.ppm", b"P6\n3 2\n199\n" + c8.tobytes())
expect("ppm_p6_8.ppm", c8)
c16 = rng.integers(0, 65536, (2, 2, 3), dtype=np.uint16)
put("ppm_p6_16.ppm", b"P6\n2 2\n65535\n" + c16.astype(">u2").tobytes())
expect("ppm_p6_16.ppm", c16)
txt = "P3 2 2 255\n" + " ".join(str(v) for v in c8[:, :2].reshape(-1)) + "\n"
put("ppm_p3_8.ppm", txt.encode())
expect("ppm_p3_8.ppm", c8[:, :2])

# --- PFM by hand: rows stored bottom-up, both byte orders
f1 = rng.standard_normal((3, 4)).astype(np.float32)
put("pfm_gray_le.pfm", b"Pf\n4 3\n-1.0\n" + f1[::-1].astype("<f4").tobytes())
expect("pfm_gray_le.pfm", f1)
f3 = rng.standard_normal((2, 3, 3)).astype(np.float32)
put("pfm_rgb_be.pfm", b"PF\n3 2\n1.0\n" + f3[::-1].astype(">f4").tobytes())
expect("pfm_rgb_be.pfm", f3)

# --- PNG by Pillow: gray 8/16, RGB, RGBA, gray+alpha, palette, 1-bit
img8 = rng.integers(0, 256, (6, 5), dtype=np.uint8)
Image.fromarray(img8).save(os.path.join(HERE, "png_gray8.png"))
expect("png_gray8.png", img8)
img16 = rng.integers(0, 65536, (4, 3), dtype=np.uint16)
Image.fromarray(img16).save(os.path.join(HERE, "png_gray16.png"))
expect("png_gray16.png", img16)
rgb = rng.integers(0, 256, (5, 4, 3), dtype=np.uint8)
Image.fromarray(rgb).save(os.path.join(HERE, "png_rgb8.png"))
expect("png_rgb8.png", rgb)
rgba = rng.integers(0, 256, (3, 4, 4), dtype=np.uint8)
Image.fromarray(rgba).save(os.path.join(HERE, "png_rgba8.png"))
expect("png_rgba8.png", rgba)
la = rng.integers(0, 256, (3, 4, 2), dtype=np.uint8)
Image.fromarray(la, mode="LA").save(os.path.join(HERE, "png_gray_alpha8.png"))
expect("png_gray_alpha8.png", la)
pal = Image.fromarray(rgb).convert("P", palette=Image.ADAPTIVE, colors=8)
pal.save(os.path.join(HERE, "png_palette.png"))
expect("png_palette.png", np.asarray(pal.convert("RGB")))
bw = Image.fromarray((img8 > 128).astype(np.uint8) * 255).convert("1")
bw.save(os.path.join(HERE, "png_1bit.png"))
expect("png_1bit.png", np.asarray(bw.convert("L")))
Image.fromarray(rgb).save(os.path.join(HERE, "png_interlaced.png"), interlace=1)
expect("png_interlaced.png", rgb)

# --- JPEG by Pillow: the expected pixels are Pillow's own decoding (same
# libjpeg-turbo, default settings), so they must match exactly.
smooth = (np.add.outer(np.arange(16), np.arange(24)) * 5).astype(np.uint8)
Image.fromarray(smooth).save(os.path.join(HERE, "jpeg_gray.jpg"), quality=90)
expect("jpeg_gray.jpg", np.asarray(Image.open(os.path.join(HERE, "jpeg_gray.jpg"))))
col = np.stack([smooth, smooth[::-1], 255 - smooth], axis=2)
Image.fromarray(col).save(os.path.join(HERE, "jpeg_rgb.jpg"), quality=90)
expect("jpeg_rgb.jpg", np.asarray(Image.open(os.path.join(HERE, "jpeg_rgb.jpg"))))

# --- TIFF by Pillow: 8/16-bit gray, RGB, LZW, float32, int32, multi-strip
Image.fromarray(img8).save(os.path.join(HERE, "tiff_gray8.tif"))
expect("tiff_gray8.tif", img8)
Image.fromarray(img16).save(os.path.join(HERE, "tiff_gray16.tif"))
expect("tiff_gray16.tif", img16)
Image.fromarray(rgb).save(os.path.join(HERE, "tiff_rgb8_lzw.tif"), compression="tiff_lzw")
expect("tiff_rgb8_lzw.tif", rgb)
ff = rng.standard_normal((5, 6)).astype(np.float32)
Image.fromarray(ff).save(os.path.join(HERE, "tiff_f32.tif"))
expect("tiff_f32.tif", ff)
ii = rng.integers(-2**31, 2**31 - 1, (4, 5), dtype=np.int32)
Image.fromarray(ii).save(os.path.join(HERE, "tiff_i32.tif"))
expect("tiff_i32.tif", ii)
tall = rng.integers(0, 256, (40, 9), dtype=np.uint8)
Image.fromarray(tall).save(os.path.join(HERE, "tiff_deflate.tif"), compression="tiff_adobe_deflate")
expect("tiff_deflate.tif", tall)

# --- a tiled BigTIFF written by hand (little-endian, 1 channel u16, 2x2 tiles
# of 16x16 covering a 20x18 image; edge tiles zero-padded)
big = rng.integers(0, 65536, (18, 20), dtype=np.uint16)
tiles = []
for ty in range(0, 18, 16):
    for tx in range(0, 20, 16):
        t = np.zeros((16, 16), np.uint16)
        part = big[ty:ty + 16, tx:tx + 16]
        t[:part.shape[0], :part.shape[1]] = part
        tiles.append(t.astype("<u2").tobytes())
entries = []
data = b"".join(tiles)
data_off = 16
ifd_off = data_off + len(data)
ntiles = len(tiles)
# arrays stored after the IFD
n_entries = 10
ifd_size = 8 + n_entries * 20 + 8
arr_off = ifd_off + ifd_size
offsets = [data_off + i * 512 for i in range(ntiles)]
counts = [512] * ntiles
TYPE_SHORT, TYPE_LONG, TYPE_LONG8 = 3, 4, 16


def entry(tag, typ, count, value_bytes):
    return struct.pack("<HHQ", tag, typ, count) + value_bytes.ljust(8, b"\0")


ifd = struct.pack("<Q", n_entries)
ifd += entry(256, TYPE_LONG, 1, struct.pack("<I", 20))   # width
ifd += entry(257, TYPE_LONG, 1, struct.pack("<I", 18))   # length
ifd += entry(258, TYPE_SHORT, 1, struct.pack("<H", 16))  # bits
ifd += entry(259, TYPE_SHORT, 1, struct.pack("<H", 1))   # no compression
ifd += entry(262, TYPE_SHORT, 1, struct.pack("<H", 1))   # min-is-black
ifd += entry(277, TYPE_SHORT, 1, struct.pack("<H", 1))   # samples per pixel
ifd += entry(322, TYPE_LONG, 1, struct.pack("<I", 16))   # tile width
ifd += entry(323, TYPE_LONG, 1, struct.pack("<I", 16))   # tile length
ifd += entry(324, TYPE_LONG8, ntiles, struct.pack("<Q", arr_off))
ifd += entry(325, TYPE_LONG8, ntiles, struct.pack("<Q", arr_off + 8 * ntiles))
ifd += struct.pack("<Q", 0)
assert len(ifd) == ifd_size
arrays = struct.pack("<%dQ" % ntiles, *offsets) + struct.pack("<%dQ" % ntiles, *counts)
header = b"II" + struct.pack("<HHHQ", 43, 8, 0, ifd_off)
put("bigtiff_tiled_u16.tif", header + data + ifd + arrays)
expect("bigtiff_tiled_u16.tif", big)

print("golden files written to", HERE)

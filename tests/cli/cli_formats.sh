#!/bin/sh
# cli_formats.sh - golden files and round trips for every format and depth.
#  1. Each file in golden/ (written by NumPy, Pillow or by hand from the
#     format's specification: make_golden.py) must decode to the bytes of its
#     NAME.expect.npy (our .npy writer writes NumPy's exact header).
#  2. Each expected array goes through every writable format and back; the
#     lossless ones must give the same bytes, those that cannot hold the type
#     or channel count must refuse with a message saying what they hold.
. "$2/lib.sh"

G="$HERE/golden"
n=0
for expect in "$G"/*.expect.npy; do
    src=${expect%.expect.npy}
    name=$(basename "$src")
    usable "$name" || continue
    n=$((n + 1))
    if ! "$PIXSUM" convert "$src" got.npy 2>err.txt; then
        fail "reading golden $name: $(cat err.txt)"
        continue
    fi
    cmp -s got.npy "$expect" || fail "golden $name decodes to other pixels than $name.expect.npy"
    rm -f got.npy
done
if has_format png && has_format jpeg && has_format tiff; then
    [ "$n" -ge 38 ] || fail "only $n golden files found in $G"
fi

# Round trips through every writer.
for expect in "$G"/*.expect.npy; do
    name=$(basename "${expect%.expect.npy}")
    for ext in npy tif btf pgm ppm pnm pfm png jpg tiled.tif; do
        usable "x.$ext" || continue
        extra=
        [ "$ext" = tiled.tif ] && extra="--tile 16"
        # shellcheck disable=SC2086
        # a TIFF holds a volume as one page per slice: read them all back
        back=
        case "$ext" in *tif | btf) back=--volume ;; esac
        # shellcheck disable=SC2086
        if "$PIXSUM" convert "$expect" "rt.$ext" $extra 2>err.txt; then
            if ! "$PIXSUM" convert "rt.$ext" back.npy $back 2>err.txt; then
                fail "$name -> $ext -> npy: $(cat err.txt)"
            elif [ "$ext" != jpg ] && ! cmp -s back.npy "$expect"; then
                fail "$name -> $ext -> npy changed the pixels"
            fi
        else
            grep -q "holds\|needs .npy" err.txt ||
                fail "$name -> $ext refused without saying what the format holds: $(cat err.txt)"
        fi
        rm -f "rt.$ext" back.npy
    done
done

# Compressed TIFF outputs, striped and tiled, round-trip exactly.
if has_format tiff; then
    for c in deflate lzw zstd; do
        for e in npy_u2.npy npy_f8.npy ppm_p6_16.ppm png_rgba8.png tiff_deflate.tif; do
            for t in "" "--tile 16"; do
                # shellcheck disable=SC2086
                "$PIXSUM" convert "$G/$e.expect.npy" c.tif --compress $c $t 2>err.txt || {
                    grep -q "cannot write" err.txt || fail "--compress $c $t: $(cat err.txt)"
                    continue
                }
                run "$PIXSUM" convert c.tif back.npy
                cmp -s back.npy "$G/$e.expect.npy" || fail "$e through $c TIFF $t changed"
            done
        done
    done
    expect_error 1 "unknown TIFF compression 'bogus'" \
        "$PIXSUM" convert "$G/npy_u1.npy.expect.npy" c.tif --compress bogus
fi

# The refusals are specific.
has_format png && expect_error 1 "rt.png: PNG holds u8 or u16 samples, not f64" \
    "$PIXSUM" convert "$G/npy_f8.npy.expect.npy" rt.png
expect_error 1 "rt.pgm: pgm holds 1 channel, not 3 channels" \
    "$PIXSUM" convert "$G/ppm_p6_8.ppm.expect.npy" rt.pgm
has_format jpeg && expect_error 1 "rt.jpg: JPEG holds 1 or 3 channels, not 4" \
    "$PIXSUM" convert "$G/npy_rgba_u1.npy.expect.npy" rt.jpg
expect_error 1 "a volume or batch (depth 3) needs .npy or .tif" \
    "$PIXSUM" convert "$G/npy_volume_u1.npy.expect.npy" rt.pgm
expect_error 1 "cannot tell the output format from the extension 'xyz'" \
    "$PIXSUM" convert "$G/npy_u1.npy.expect.npy" rt.xyz

# info reads the headers.
if has_format tiff; then
    run "$PIXSUM" info "$G/bigtiff_tiled_u16.tif"
    grep -q "BigTIFF, tiled 16 x 16" run_out.txt || fail "info: BigTIFF tiling not reported"
    grep -q "shape *20 x 18" run_out.txt || fail "info: BigTIFF shape"
fi
run "$PIXSUM" info --stats "$G/pgm_p5_8.pgm"
grep -q "channel 0: min" run_out.txt || fail "info --stats"
run "$PIXSUM" info --volume "$G/npy_v2_u2c3.npy"
grep -q "3 x 6 x 4 (W x H x D)" run_out.txt || fail "info --volume: (4,6,3) is not read as a volume"
no_temporaries .
finish

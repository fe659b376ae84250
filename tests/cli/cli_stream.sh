#!/bin/sh
# cli_stream.sh - the streaming integral (strip by strip, carry row) against
# the in-memory one: integer tables bit for bit (cmp), for .npy, striped TIFF,
# tiled TIFF and BigTIFF inputs, .npy and TIFF outputs, plain / padded /
# squared tables, strips of 1, 7, 64 and more rows than the image; float
# tables too (same method on both paths: strips continued from the carry row by
# the methods with PIXSUM_OP_CARRY, one row at a time by the others).
# Also: --max-memory makes the choice automatically.
. "$2/lib.sh"
need_numpy

"$PY" - <<'PYEOF' || exit 1
import numpy as np
rng = np.random.default_rng(3)
np.save("s_u1.npy", rng.integers(0, 256, (131, 97), dtype=np.uint8))
np.save("s_u2c3.npy", rng.integers(0, 65536, (70, 45, 3), dtype=np.uint16))
np.save("s_i2c2.npy", rng.integers(-32768, 32768, (53, 61, 2), dtype=np.int16))
np.save("s_i4.npy", rng.integers(-2**31, 2**31, (40, 33), dtype=np.int32))
np.save("s_u1_row.npy", rng.integers(0, 256, (1, 500), dtype=np.uint8))
np.save("s_u1_col.npy", rng.integers(0, 256, (300, 1), dtype=np.uint8))
np.save("s_f4.npy", rng.standard_normal((66, 51)).astype(np.float32))
PYEOF

# Without libtiff the TIFF containers are .npy copies (the .npy path still
# runs; the TIFF ones cannot).
for f in s_*.npy; do
    b=${f%.npy}
    if has_format tiff; then
        run "$PIXSUM" convert "$f" "$b.tif"
        run "$PIXSUM" convert "$f" "$b.tiled.tif" --tile 32
        run "$PIXSUM" convert "$f" "$b.btf"
    fi
done
TOUT="npy tif"
has_format tiff || TOUT=npy

n=0
for f in s_u1 s_u2c3 s_i2c2 s_i4 s_u1_row s_u1_col; do
    # i32 has an f64 squared table: float tables match bit for bit when both
    # paths use the same row-recurrence method (auto may pick a banded
    # threaded method for the whole image, whose float rounding differs).
    meth=
    [ $f = s_i4 ] && meth="--method simd.2wh"
    for opts in "$meth" "--padded $meth" "--squared SQ $meth" "--padded --squared SQ $meth"; do
        # in-memory reference (from the .npy)
        o_mem=$(echo "$opts" | sed 's/SQ/mem_sq.npy/')
        # shellcheck disable=SC2086
        run "$PIXSUM" integral "$f.npy" -o mem.npy --no-stream $o_mem || continue
        for src in "$f.npy" "$f.tif" "$f.tiled.tif" "$f.btf"; do
            [ -e "$src" ] || continue
            for rows in 1 7 64 100000; do
                for ext in $TOUT; do
                    o=$(echo "$opts" | sed "s/SQ/st_sq.$ext/")
                    # shellcheck disable=SC2086
                    run "$PIXSUM" integral "$src" -o "st.$ext" --stream --strip-rows $rows $o || continue
                    n=$((n + 1))
                    if [ $ext = npy ]; then
                        cmp -s st.npy mem.npy || fail "$src $opts rows=$rows: stream != memory"
                        case "$opts" in *SQ*)
                            cmp -s st_sq.npy mem_sq.npy || fail "$src $opts rows=$rows: squared stream != memory" ;;
                        esac
                    else
                        run "$PIXSUM" convert st.tif back.npy
                        cmp -s back.npy mem.npy || fail "$src $opts rows=$rows -> tif: stream != memory"
                        case "$opts" in *SQ*)
                            run "$PIXSUM" convert st_sq.tif back_sq.npy
                            cmp -s back_sq.npy mem_sq.npy || fail "$src $opts rows=$rows -> tif: squared differs" ;;
                        esac
                    fi
                    rm -f st.* st_sq.* back.npy back_sq.npy
                done
            done
        done
    done
done
if has_format tiff; then
    [ "$n" -ge 500 ] || fail "only $n streaming runs"
fi

# float tables bit for bit as well, for every method whose rows add their
# prefix sums to the row above: those with PIXSUM_OP_CARRY continue each strip
# from the carry row, serial.dual (without it) streams them a row at a time
for m in serial.2wh serial.3wh serial.dual simd.2wh; do
    run "$PIXSUM" integral s_f4.npy -o fmem.npy --no-stream --method $m
    for src in s_f4.npy s_f4.tiled.tif; do
        [ -e "$src" ] || continue
        run "$PIXSUM" integral $src -o fst.npy --stream --strip-rows 5 --method $m
        cmp -s fst.npy fmem.npy || fail "float streaming ($src, $m) differs from memory"
    done
    run "$PIXSUM" integral s_u1.npy -o fmem.npy --no-stream --type f32 --padded --method $m
    run "$PIXSUM" integral s_u1.npy -o fst.npy --stream --type f32 --padded --method $m
    cmp -s fst.npy fmem.npy || fail "f32 table streaming ($m) differs from memory"
done
# with auto, within rounding
run "$PIXSUM" integral s_f4.npy -o fmem.npy --no-stream
run "$PIXSUM" integral s_f4.npy -o fst.npy --stream
"$PY" -c "
import numpy as np, sys
a, b = np.load('fmem.npy'), np.load('fst.npy')
sys.exit(0 if a.dtype == b.dtype == np.float64 and np.allclose(a, b, rtol=1e-12, atol=1e-9) else 1)
" || fail "float streaming (auto) differs beyond rounding"

# --max-memory chooses streaming by itself; the result is the same
run "$PIXSUM" integral s_u1.npy -o auto.npy --max-memory 10K -v
grep -q "streamed" run_out.txt || fail "--max-memory 10K did not stream: $(cat run_out.txt)"
run "$PIXSUM" integral s_u1.npy -o mem.npy
cmp -s auto.npy mem.npy || fail "automatic streaming differs"

# streaming refuses what it cannot do, clearly
expect_error 2 "--tilted goes with neither" "$PIXSUM" integral s_u1.npy -o t.npy --tilted --stream
"$PY" -c "import numpy as np; np.save('v.npy', np.ones((3, 4, 9), np.uint8))"
expect_error 1 "streaming handles 2-D images" "$PIXSUM" integral v.npy -o t.npy --stream
# a compressed TIFF table, streamed
if has_format tiff; then
    run "$PIXSUM" integral s_u2c3.npy -o mem.npy --no-stream --squared mem_sq.npy
    run "$PIXSUM" integral s_u2c3.tif -o z.tif --stream --strip-rows 9 --compress deflate \
        --squared z_sq.tif
    run "$PIXSUM" convert z.tif z.npy
    run "$PIXSUM" convert z_sq.tif z_sq.npy
    cmp -s z.npy mem.npy && cmp -s z_sq.npy mem_sq.npy || fail "deflate TIFF streaming differs"
fi

# the progress bar: drawn when stderr is a terminal (script(1) gives one),
# silent otherwise
"$PIXSUM" integral s_u1.npy -o p.npy --stream --strip-rows 3 2>err.txt
[ -s err.txt ] && fail "progress printed without a terminal: $(cat err.txt)"
if command -v script >/dev/null 2>&1; then
    script -qc "env -u PIXSUM_NO_PROGRESS '$PIXSUM' integral s_u1.npy -o p.npy --stream --strip-rows 3" \
        /dev/null >tty.txt 2>&1 </dev/null
    grep -q "100.0%" tty.txt || fail "no progress bar on a terminal: $(cat tty.txt)"
fi
no_temporaries .
finish

# cli_hist_files.sh - `pixsum hist` output files and streaming: -o writes
# through a temporary (same bytes as stdout, usual permissions, nothing left on
# failure), --plot draws .png/.svg with gnuplot and refuses other extensions up
# front, and --stream (strip by strip) gives the same output as in memory.
. "$(dirname "$0")/lib.sh"

printf 'P2\n4 2\n255\n0 1 2 255\n7 7 7 128\n' >img.pgm
run "$PIXSUM" hist img.pgm && cp run_out.txt stdout.csv
run "$PIXSUM" hist img.pgm -o out.csv
cmp -s stdout.csv out.csv || fail "-o output differs from stdout output"
[ "$(wc -l <out.csv)" -eq 257 ] || fail "expected a header and 256 bins"
grep -q '^7,7,8,3$' out.csv || fail "bin 7 should hold the three 7s"
case "$(ls -l out.csv)" in -rw-r--r--* | -rw-rw-r--* | -rw-rw-rw-*) ;; *) fail "out.csv mode: $(ls -l out.csv)" ;; esac

expect_error 1 "cannot create" "$PIXSUM" hist img.pgm -o missing-dir/out.csv
expect_error 2 "--plot writes .png or .svg" "$PIXSUM" hist img.pgm --plot h.gif
[ -e h.gif ] && fail "a refused plot left h.gif"

if "$PIXSUM" hist img.pgm --plot h.svg -o /dev/null 2>plot_err.txt; then
    grep -q '<svg' h.svg || fail "h.svg is not an SVG file"
    run "$PIXSUM" hist img.pgm --relative --cumulative --plot h.png -o /dev/null
    [ -s h.png ] || fail "h.png was not written"
    head -c 8 h.png | od -An -c | grep -q 'P   N   G' || fail "h.png is not a PNG file"
elif grep -q "gnuplot not found" plot_err.txt; then
    echo "gnuplot missing: plot checks skipped" >&2
else
    fail "--plot failed: $(cat plot_err.txt)"
fi
# Streaming: the same histogram, in every form, from .npy and PGM files whose
# strips are many (16-bit 3-channel image of 5000 x 700 = 21 MB, > one strip).
need_numpy
"$PY" - <<'PY' || fail "cannot make the streaming inputs"
import numpy as np
rng = np.random.default_rng(7)
np.save("rgb16.npy", rng.integers(0, 65536, size=(700, 5000, 3), dtype=np.uint16))
a = rng.normal(0.0, 3.0, size=(900, 3001)).astype(np.float32)
a[0, 0] = np.nan; a[1, 1] = np.inf; a[2, 2] = -np.inf
np.save("f32.npy", a)
PY
for args in "" "--bins 1000 --range 100:60000" "--cumulative" "--relative --channel 2" \
            "--format json"; do
    # shellcheck disable=SC2086
    run "$PIXSUM" hist rgb16.npy $args && cp run_out.txt mem.txt
    # shellcheck disable=SC2086
    run "$PIXSUM" hist rgb16.npy --stream $args && cp run_out.txt str.txt
    cmp -s mem.txt str.txt || fail "streamed histogram differs from in-memory ($args)"
done
run "$PIXSUM" hist f32.npy --range -8:8 --bins 333 --format json && cp run_out.txt mem.txt
run "$PIXSUM" hist f32.npy --range -8:8 --bins 333 --format json --stream && cp run_out.txt str.txt
cmp -s mem.txt str.txt || fail "streamed f32 histogram differs from in-memory"
grep -q '"nan": \[1\]' str.txt || fail "the NaN sample was not counted apart: $(cat str.txt | head -20)"
expect_error 2 "needs --range" "$PIXSUM" hist f32.npy --stream
expect_error 2 "--mask cannot be combined with --stream" "$PIXSUM" hist img.pgm --stream --mask img.pgm

ls | grep -q 'tmp' && fail "temporaries left: $(ls)"
finish

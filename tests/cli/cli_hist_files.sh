# cli_hist_files.sh - `pixsum hist` output files: -o writes through a
# temporary (same bytes as stdout, usual permissions, nothing left on failure),
# --plot draws .png/.svg with gnuplot and refuses other extensions up front.
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
ls | grep -q 'tmp' && fail "temporaries left: $(ls)"
finish

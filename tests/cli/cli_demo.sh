#!/bin/sh
# cli_demo.sh - `pixsum demo` (what `make run` runs) on a small sample: exits
# 0 with every check passing, lists the methods, writes its files, and fails
# cleanly when the output directory cannot be created.
. "$2/lib.sh"

run "$PIXSUM" demo --size 256 --runs 3 --out demo_out
for want in "direct sum of all pixels" "bit-exact" "serial.2wh" "Otsu threshold" \
    "All checks passed"; do
    grep -q "$want" run_out.txt || fail "demo output lacks '$want'"
done
grep -q "MISMATCH\|DIFFER" run_out.txt && fail "demo reports a mismatch"
sample=sample.png
has_format png || sample=sample.pgm
for f in $sample integral.npy histogram.csv; do
    [ -s "demo_out/$f" ] || fail "demo did not write $f"
done
[ "$(wc -l <demo_out/histogram.csv)" -eq 257 ] || fail "histogram.csv should have 256 rows + header"
if command -v gnuplot >/dev/null 2>&1; then
    [ -s demo_out/histogram.png ] || fail "gnuplot present but no histogram.png"
fi
run "$PIXSUM" info demo_out/integral.npy
grep -q "shape *256 x 256" run_out.txt || fail "demo integral.npy shape"
run "$PIXSUM" demo --size 64 --runs 1 --no-files
[ -e out ] && fail "--no-files wrote files"
: >afile
expect_error 1 "cannot create the output directory" "$PIXSUM" demo --size 64 --runs 1 --out afile/sub
finish

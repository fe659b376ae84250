#!/bin/sh
# cli_basic.sh - the tool's surface: --help of every command, version, exit
# statuses of usage errors (2) and runtime errors (1), methods, info.
. "$2/lib.sh"

run "$PIXSUM" --help && grep -q integral run_out.txt || fail "--help lists no commands"
run "$PIXSUM" --version && grep -q '^pixsum [0-9]' run_out.txt || fail "--version"
for c in integral box methods info demo convert; do
    run "$PIXSUM" "$c" --help
    grep -q "usage: pixsum $c" run_out.txt || fail "$c --help prints no usage"
done
expect_error 2 "unknown command 'frobnicate'" "$PIXSUM" frobnicate
expect_error 2 "pixsum integral: no input file" "$PIXSUM" integral
expect_error 2 "no output file" "$PIXSUM" integral x.npy
expect_error 2 "unknown option '--bogus'" "$PIXSUM" integral x.npy -o y.npy --bogus
expect_error 2 "unknown --type 'u7'" "$PIXSUM" integral x.npy -o y.npy --type u7
expect_error 2 "--threads takes" "$PIXSUM" integral x.npy -o y.npy --threads -3
expect_error 2 "unknown method 'nope'" "$PIXSUM" integral x.npy -o y.npy --method nope
expect_error 2 "--method needs a value" "$PIXSUM" integral x.npy -o y.npy --method
expect_error 2 "would overwrite the input" "$PIXSUM" integral x.npy -o x.npy
expect_error 2 "--tilted goes with neither" "$PIXSUM" integral x.npy -o y.npy --tilted --padded
expect_error 2 "--window takes" "$PIXSUM" box x.npy -o y.npy --window 0x3
expect_error 2 "--stat is sum, mean, var or std" "$PIXSUM" box x.npy -o y.npy --window 3 --stat max
expect_error 2 "no window" "$PIXSUM" box x.npy -o y.npy
expect_error 2 "unknown --op" "$PIXSUM" methods --op fly
expect_error 2 "needs IN and OUT" "$PIXSUM" convert x.npy
expect_error 1 "x.npy: cannot open: No such file or directory" "$PIXSUM" integral x.npy -o y.npy
expect_error 1 "x.npy: cannot open" "$PIXSUM" info x.npy

run "$PIXSUM" methods
grep -q '^serial.2wh *cpu *integral' run_out.txt || fail "methods table lacks serial.2wh"
run "$PIXSUM" methods --names --op integral
grep -qx 'serial.dual' run_out.txt || fail "methods --names lacks serial.dual"
grep -q '^hist' run_out.txt && fail "methods --op integral lists histogram methods"
run "$PIXSUM" info
grep -q '^formats *npy' run_out.txt || fail "info lists no formats"
finish

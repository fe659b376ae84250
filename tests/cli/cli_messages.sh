#!/bin/sh
# cli_messages.sh - messages and options that used to mislead (issue 37,
# section 4): a type the tool does not take is named as the file names it,
# options that would have no effect are usage errors (exit 2) instead of being
# ignored, an unsupported type pair named on the command line is a usage error
# whether the name is known or not, no command writes over its input (the one
# shared check), the unknown-method message lists the methods of the
# command's own operation, and oversized headers are said to overflow, naming
# the input. (The bad-file corpus, cli_badfiles.sh, covers the readers' own
# messages: dtypes, dimension overflow per format.)
. "$2/lib.sh"

# Files made without NumPy: a .npy of dtype DESCR, shape (2, 3), 8-byte items.
npy() {
    "$PY" - "$1" "$2" <<'EOF'
import sys
name, descr = sys.argv[1], sys.argv[2]
h = ("{'descr': '%s', 'fortran_order': False, 'shape': (2, 3), }" % descr).encode()
h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
size = int(descr[2:]) if descr[2:].isdigit() else 1
with open(name, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + bytes(6 * size))
EOF
}
npy i8.npy '<i8'
npy u64.npy '<u8'
npy u8.npy '|u1'
npy f32.npy '<f4'
run "$PIXSUM" info u8.npy || fail "hand-made u8.npy is not readable"

# 1. Pixel types without integral tables: named (pixsum's name and the .npy
#    dtype) with the types that work - never "none pixels".
for mode in "" --stream; do
    # shellcheck disable=SC2086
    expect_error 1 "i8.npy: integral images of i64 pixels (.npy dtype int64 ('<i8')) are not supported (they take u8 u16 i16 i32 u32 f32 f64 pixels)" \
        "$PIXSUM" integral i8.npy -o o.npy $mode
    # shellcheck disable=SC2086
    expect_error 1 "u64.npy: integral images of u64 pixels (.npy dtype uint64 ('<u8'))" \
        "$PIXSUM" integral u64.npy -o o.npy $mode
done
expect_error 1 "i8.npy: box filters of i64 pixels (.npy dtype int64 ('<i8')) are not supported" \
    "$PIXSUM" box i8.npy -o o.npy --window 3
expect_error 1 "equalisation takes u8, u16, f32 or f64 images, this one is i64 (.npy dtype int64 ('<i8'))" \
    "$PIXSUM" equalize i8.npy -o o.npy
run "$PIXSUM" info i8.npy
grep -q "type *i64 (.npy dtype int64 ('<i8'))" run_out.txt || fail "info i8.npy: $(cat run_out.txt)"
grep -q "integral *not supported for i64 pixels (integral images take u8" run_out.txt ||
    fail "info i8.npy: $(cat run_out.txt)"
[ -e o.npy ] && fail "a refused run left o.npy"

# 2. Options that would have no effect are usage errors, one line each.
expect_error 2 "--sq-type has no effect without --squared SQOUT" \
    "$PIXSUM" integral u8.npy -o o.npy --sq-type u64
expect_error 2 "--compress has no effect: only TIFF outputs (.tif .tiff .btf .tf8) are compressed, not 'o.npy'" \
    "$PIXSUM" integral u8.npy -o o.npy --compress deflate
expect_error 2 "--bigtiff has no effect" "$PIXSUM" integral u8.npy -o o.npy --bigtiff
expect_error 2 "--wrap has no effect without an integer --type or --sq-type" \
    "$PIXSUM" integral u8.npy -o o.npy --wrap
expect_error 2 "--wrap has no effect" "$PIXSUM" integral u8.npy -o o.npy --wrap --type f64
expect_error 2 "--strip-rows has no effect with --no-stream" \
    "$PIXSUM" integral u8.npy -o o.npy --no-stream --strip-rows 4
expect_error 2 "--strip-rows has no effect with --tilted" \
    "$PIXSUM" integral u8.npy -o o.npy --tilted --strip-rows 4
expect_error 2 "--max-memory has no effect with --stream" \
    "$PIXSUM" integral u8.npy -o o.npy --stream --max-memory 1G
expect_error 2 "--max-memory has no effect with --no-stream" \
    "$PIXSUM" integral u8.npy -o o.npy --max-memory 1G --no-stream
expect_error 2 "--compress has no effect: only TIFF outputs (.tif .tiff .btf .tf8) are compressed, not 'o.png'" \
    "$PIXSUM" convert u8.npy o.png --compress lzw
expect_error 2 "--tile has no effect" "$PIXSUM" convert u8.npy o.npy --tile 16
expect_error 2 "--bigtiff has no effect" "$PIXSUM" convert u8.npy o.pgm --bigtiff
expect_error 2 "--type has no effect on 'pixsum hist'" "$PIXSUM" hist u8.npy --type u32
expect_error 2 "--type has no effect on 'pixsum equalize'" "$PIXSUM" equalize u8.npy -o o.npy --type u32
expect_error 2 "--type has no effect on 'pixsum demo'" "$PIXSUM" demo --no-files --type f64
expect_error 2 "--out has no effect with --no-files" "$PIXSUM" demo --no-files --out d
expect_error 2 "--stats has no effect without a FILE" "$PIXSUM" info --stats
expect_error 2 "--volume has no effect without a FILE" "$PIXSUM" info --volume
expect_error 2 "--device has no effect with method 'serial.2wh'" \
    "$PIXSUM" integral u8.npy -o o.npy --method serial.2wh --device 0
[ -e o.npy ] || [ -e o.png ] || [ -e o.pgm ] || [ -e d ] && fail "a refused run wrote a file"
# ... and still work where they do have an effect
run "$PIXSUM" integral u8.npy -o o.npy --squared sq.npy --sq-type f64
run "$PIXSUM" integral u8.npy -o o.npy --type u32 --wrap
run "$PIXSUM" integral u8.npy -o o.npy --stream --strip-rows 1
if has_format tiff; then
    run "$PIXSUM" integral u8.npy -o o.npy --squared sq.tif --compress deflate
    run "$PIXSUM" convert u8.npy o.tif --tile 16 --bigtiff
fi
rm -f o.npy sq.npy sq.tif o.tif

# 3. One exit-code rule for --type/--sq-type: an unknown name and a known
#    name the input cannot have are both usage errors (2), in memory and
#    streaming; a refused overflow stays a runtime error (1, cli_integral.sh).
expect_error 2 "unknown --type 'u7'" "$PIXSUM" integral u8.npy -o o.npy --type u7
for mode in "" --stream; do
    # shellcheck disable=SC2086
    expect_error 2 "f32.npy: --type u32: f32 pixels give f32 f64 tables, not u32" \
        "$PIXSUM" integral f32.npy -o o.npy --type u32 $mode
    # shellcheck disable=SC2086
    expect_error 2 "u8.npy: --type u8: u8 pixels give u32 u64 i64 f32 f64 tables, not u8" \
        "$PIXSUM" integral u8.npy -o o.npy --type u8 $mode
    # shellcheck disable=SC2086
    expect_error 2 "f32.npy: --sq-type u64: f32 pixels give f32 f64 squared tables, not u64" \
        "$PIXSUM" integral f32.npy -o o.npy --squared sq.npy --sq-type u64 $mode
done
expect_error 2 "u8.npy: --type u8: u8 pixels give" "$PIXSUM" box u8.npy -o o.npy --window 3 --type u8
[ -e o.npy ] || [ -e sq.npy ] && fail "a refused type pair left a table"

# 4. No command writes over its input: the same rule (refused, exit 2) for
#    every command, whatever the spelling of the name (./IN, a symlink).
cp u8.npy keep.npy
ln -s u8.npy link.npy
for out in u8.npy ./u8.npy link.npy; do
    expect_error 2 "the output would overwrite the input 'u8.npy'" "$PIXSUM" integral u8.npy -o "$out"
    expect_error 2 "the output would overwrite the input 'u8.npy'" "$PIXSUM" equalize u8.npy -o "$out"
    expect_error 2 "the output would overwrite the input 'u8.npy'" "$PIXSUM" box u8.npy -o "$out" --window 3
    expect_error 2 "the output would overwrite the input 'u8.npy'" "$PIXSUM" convert u8.npy "$out"
    expect_error 2 "-o would overwrite the input 'u8.npy'" "$PIXSUM" hist u8.npy -o "$out"
    expect_error 2 "the --squared output would overwrite the input 'u8.npy'" \
        "$PIXSUM" integral u8.npy -o o.npy --squared "$out"
done
expect_error 2 "the output would overwrite the input 'u8.npy'" \
    "$PIXSUM" equalize keep.npy -o u8.npy --mask u8.npy
cmp -s u8.npy keep.npy || fail "the input was changed"

# 5. The unknown-method message lists the methods of the command's operation
#    (pixsum methods --op ...); a known method of another operation is refused
#    the same way, before any work.
has_methods() { # OP: the names `pixsum methods --op OP --names` prints, one a line
    "$PIXSUM" methods --names --op "$1"
}
check_list() { # CMD OP MSGPART ARGS...: message lists exactly the methods of OP
    _c=$1 _op=$2 _part=$3
    shift 3
    expect_error 2 "$_part" "$PIXSUM" "$_c" "$@"
    grep -qF "(see 'pixsum methods --op $_op')" err.txt || fail "$_c: no pointer to --op $_op"
    for m in $(has_methods "$_op"); do
        grep -q " $m\( \|$\)" err.txt || fail "$_c: method $m of $_op not listed: $(cat err.txt)"
    done
    for m in $("$PIXSUM" methods --names); do
        if ! has_methods "$_op" | grep -qx "$m"; then
            grep -q " $m\( \|$\)" err.txt && fail "$_c: lists $m, which does not do $_op"
        fi
    done
}
check_list integral integral "unknown method 'nosuch'; methods for integral images: auto" \
    u8.npy -o o.npy --method nosuch
check_list integral sq "unknown method 'nosuch'; methods for squared integral tables: auto" \
    u8.npy -o o.npy --squared sq.npy --method nosuch
check_list box box "unknown method 'nosuch'; methods for box filters: auto" \
    u8.npy -o o.npy --window 3 --method nosuch
check_list hist hist "unknown method 'nosuch'; methods for histograms: auto" u8.npy --method nosuch
check_list equalize hist "unknown method 'nosuch'; methods for histograms: auto" \
    u8.npy -o o.npy --method nosuch
hm=$(has_methods hist | head -n 1)
im=$(has_methods integral | head -n 1)
[ -n "$hm" ] && check_list integral integral "method '$hm' does not compute integral images; methods that do: auto" \
    u8.npy -o o.npy --method "$hm"
[ -n "$im" ] && check_list hist hist "method '$im' does not compute histograms; methods that do: auto" \
    u8.npy --method "$im"
[ -e o.npy ] && fail "a refused method left o.npy"

# 6. A header claiming more than memory arithmetic holds: every command says
#    the dimensions overflow and names the input (not "0 bytes", not the output).
if has_format png; then
    cp "$HERE/bad/png_huge_dims.png" huge.png
    for cmd in "info huge.png" "hist huge.png" "box huge.png -o o.npy --window 3" \
               "equalize huge.png -o o.png" "integral huge.png -o o.npy --tilted"; do
        # shellcheck disable=SC2086
        expect_error 1 "pixsum ${cmd%% *}: huge.png: image dimensions overflow: 2147483647 x 2147483647 pixels of 4 u8 sample(s)" \
            "$PIXSUM" $cmd
    done
fi
finish

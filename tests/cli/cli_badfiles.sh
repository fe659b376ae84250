#!/bin/sh
# cli_badfiles.sh - every broken or unsupported file in bad/ (make_bad.py)
# gives its expected message, naming the file, and exit status, through both
# `pixsum convert` and `pixsum integral` (in memory and streaming), and leaves
# no output and no temporary behind. Then the runtime failures around files:
# missing or unreadable input, unwritable output, a full disk.
. "$2/lib.sh"

B="$HERE/bad"
n=0
while IFS='|' read -r file status part; do
    case "$file" in '#'* | '') continue ;; esac
    n=$((n + 1))
    if ! usable "$file"; then
        # without its library the file is refused as such
        cp "$B/$file" "$file"
        expect_error 1 "this pixsum was built without" "$PIXSUM" convert "$file" out.npy
        rm -f "$file"
        continue
    fi
    [ -f "$B/$file" ] || { fail "corpus file $file missing"; continue; }
    cp "$B/$file" "$file"
    for cmd in "convert $file out.npy" "integral $file -o out.npy" \
               "integral $file -o out.npy --stream"; do
        # shellcheck disable=SC2086
        expect_error "$status" "$part" "$PIXSUM" $cmd
        name=${cmd%% *}
        grep -qF "pixsum $name: $file: " err.txt || fail "$cmd: message does not name the file"
    done
    [ -e out.npy ] && fail "$file: an output file was left behind"
    rm -f out.npy "$file"
done <"$B/expected.txt"
[ "$n" -ge 40 ] || fail "only $n corpus entries"
no_temporaries .

# A good input for the output-side failures.
cp "$HERE/golden/npy_u1.npy" in.npy
mkdir adir
expect_error 1 "adir: not a regular file" "$PIXSUM" integral adir -o out.npy
expect_error 1 "no/such/dir/out.npy: cannot create output: No such file or directory" \
    "$PIXSUM" integral in.npy -o no/such/dir/out.npy
if [ "$(id -u)" != 0 ]; then
    # Permission checks mean nothing to root.
    cp in.npy locked.npy && chmod 000 locked.npy
    expect_error 1 "locked.npy: cannot open: Permission denied" "$PIXSUM" integral locked.npy -o out.npy
    mkdir ro && chmod 555 ro
    expect_error 1 "ro/out.npy: cannot create output: Permission denied" \
        "$PIXSUM" integral in.npy -o ro/out.npy
    chmod 755 ro
fi

# A full disk: the file-size limit makes every write past 64 KiB fail (EFBIG),
# the way a full disk (ENOSPC) does. The output must not appear, nor a
# temporary. A 300x300 u8 image gives a 360 KB u32 table.
"$PIXSUM" convert "$HERE/golden/npy_u1.npy" small.npy
printf '\223NUMPY\001\000v\000{'"'"'descr'"'"': '"'"'|u1'"'"', '"'"'fortran_order'"'"': False, '"'"'shape'"'"': (300, 300), }' >big.npy
# pad the header to 128 bytes (10 + 118), then the pixels
hdr_len=$(wc -c <big.npy)
pad=$((127 - hdr_len))
i=0
while [ $i -lt $pad ]; do printf ' ' >>big.npy; i=$((i + 1)); done
printf '\n' >>big.npy
head -c 90000 /dev/zero | tr '\0' '\377' >>big.npy
run "$PIXSUM" info big.npy || fail "hand-made big.npy is not readable"
outs="full.npy full.pgm"
has_format tiff && outs="$outs full.tif"
for out in $outs; do
    (
        trap '' XFSZ
        ulimit -f 64
        "$PIXSUM" integral big.npy -o "$out" 2>err.txt
        echo $? >status.txt
    )
    if [ "$out" = full.pgm ]; then
        # PGM cannot hold u32: refused before writing.
        grep -q "PGM/PPM holds u8 or u16" err.txt || fail "pgm u32 refusal: $(cat err.txt)"
        continue
    fi
    [ "$(cat status.txt)" = 1 ] || fail "full disk ($out): exit $(cat status.txt), expected 1"
    grep -q "$out: .*\(File too large\|write failed\)" err.txt ||
        fail "full disk ($out): message '$(cat err.txt)'"
    [ -e "$out" ] && fail "full disk ($out): partial output left under the final name"
done
(
    trap '' XFSZ
    ulimit -f 64
    "$PIXSUM" integral big.npy -o full2.npy --stream --strip-rows 7 2>err.txt
    echo $? >status.txt
)
[ "$(cat status.txt)" = 1 ] || fail "full disk while streaming: exit $(cat status.txt)"
[ -e full2.npy ] && fail "full disk while streaming: partial output left"
no_temporaries .

# Overflow refused with the reason; --wrap accepted.
expect_error 1 "overflow" "$PIXSUM" integral big.npy -o t.npy --type u32 --squared sq.npy --sq-type u32
[ -e t.npy ] && fail "overflow refusal left t.npy"
finish

# cli_outputs.sh - the output-file rules (tools/out_file.c, docs/cli.md
# "Output files"): a symlink is followed and stays a link; a replaced file
# keeps its mode and owner (and one whose owner cannot be kept is refused);
# FIFOs, character devices and descriptors (/dev/stdout, /dev/fd/N) are
# written in place; directories, sockets and block devices are refused; a
# format that seeks refuses what cannot seek; SIGINT/SIGTERM/SIGXFSZ remove
# the temporaries; a command with several outputs replaces none until all
# are complete; messages name the user's paths; writing stdout to a full
# device fails. Nothing here waits forever: FIFO readers and runs that could
# block are bounded by timeout(1).
. "$(dirname "$0")/lib.sh"

printf 'P2\n4 2\n255\n0 1 2 255\n7 7 7 128\n' >img.pgm
run "$PIXSUM" hist img.pgm && cp run_out.txt want.csv
run "$PIXSUM" integral img.pgm -o want.npy
ROOT=0
[ "$(id -u)" = 0 ] && ROOT=1

# no_internal_names FILE: a message names no temporary (".NAME.pixsum-XXXXXX",
# "NAME.tmp-...", "NAME.data").
no_internal_names() {
    if grep -q 'pixsum-[A-Za-z0-9]\{6\}\|\.tmp\|\.data\|part-mpi' "$1"; then
        fail "a message names an internal temporary: $(cat "$1")"
    fi
}

# ---- symbolic links: followed, the link stays a link ------------------------
echo old >real.csv
ln -s real.csv link.csv
run "$PIXSUM" hist img.pgm -o link.csv
[ -L link.csv ] || fail "link.csv is no longer a symlink: $(ls -l link.csv)"
cmp -s real.csv want.csv || fail "the link's target real.csv was not replaced"
mkdir sub
echo old >sub/deep.npy
ln -s ../sub/deep.npy sub/rel.npy # relative to the link's own directory
ln -s sub/rel.npy chain.npy       # a chain of two links
run "$PIXSUM" integral img.pgm -o chain.npy
[ -L chain.npy ] && [ -L sub/rel.npy ] || fail "a link of the chain was replaced"
cmp -s sub/deep.npy want.npy || fail "the chain's final target was not written"
ln -s made.csv dangling.csv
run "$PIXSUM" hist img.pgm -o dangling.csv
[ -L dangling.csv ] || fail "dangling.csv is no longer a symlink"
cmp -s made.csv want.csv || fail "a dangling link's target was not created"
no_temporaries .
no_temporaries sub

# ---- mode and owner of a replaced file; new files get 0666 & ~umask --------
echo old >m640.csv
chmod 640 m640.csv
run "$PIXSUM" hist img.pgm -o m640.csv
[ "$(stat -c %a m640.csv)" = 640 ] || fail "mode 0640 not kept: $(stat -c %a m640.csv)"
echo old >m600.npy
chmod 600 m600.npy
run "$PIXSUM" integral img.pgm -o m600.npy
[ "$(stat -c %a m600.npy)" = 600 ] || fail "mode 0600 not kept (image): $(stat -c %a m600.npy)"
(umask 027 && "$PIXSUM" hist img.pgm -o new027.csv) || fail "writing new027.csv failed"
[ "$(stat -c %a new027.csv)" = 640 ] || fail "new file under umask 027: $(stat -c %a new027.csv)"
if [ "$ROOT" = 1 ]; then
    echo old >owned.csv
    chown 65534:65534 owned.csv
    run "$PIXSUM" hist img.pgm -o owned.csv
    [ "$(stat -c %u:%g owned.csv)" = 65534:65534 ] ||
        fail "owner not kept: $(stat -c %u:%g owned.csv)"
    echo old >owned.npy
    chown 65534:65534 owned.npy
    chmod 2644 owned.npy # chown clears set-id bits: they must come back
    run "$PIXSUM" integral img.pgm -o owned.npy
    [ "$(stat -c %u:%g:%a owned.npy)" = 65534:65534:2644 ] ||
        fail "owner/mode not kept (image): $(stat -c %u:%g:%a owned.npy)"
else
    echo "SKIP: owner kept by a replacement (needs root to chown)" >&2
fi

# As an ordinary user: its own file keeps its mode; a file it may write but
# does not own is refused (the new file could not keep the owner), untouched.
AS_USER=""
if [ "$ROOT" = 1 ] && command -v setpriv >/dev/null 2>&1; then
    AS_USER="setpriv --reuid=65534 --regid=65534 --clear-groups"
    chmod 755 "$WORK"
    mkdir -m 777 u
    cp img.pgm u/
    $AS_USER "$PIXSUM" --version >/dev/null 2>&1 || AS_USER=""
fi
if [ -n "$AS_USER" ]; then
    $AS_USER sh -c 'echo old >u/mine.csv && chmod 604 u/mine.csv' || fail "setpriv sh failed"
    $AS_USER "$PIXSUM" hist u/img.pgm -o u/mine.csv 2>err.txt || fail "nobody: $(cat err.txt)"
    [ "$(stat -c %U:%a u/mine.csv)" = nobody:604 ] ||
        fail "nobody's own file: $(stat -c %U:%a u/mine.csv)"
    echo rootold >u/root.csv
    chmod 666 u/root.csv
    expect_error 1 "cannot keep the owner" $AS_USER "$PIXSUM" hist u/img.pgm -o u/root.csv
    [ "$(cat u/root.csv)" = rootold ] && [ "$(stat -c %U u/root.csv)" = root ] ||
        fail "a file nobody could not keep the owner of was replaced: $(ls -l u/root.csv)"
    no_temporaries u
else
    echo "SKIP: the ordinary-user checks (needs root and setpriv to become nobody)" >&2
fi

# ---- FIFOs: written in place, streamed --------------------------------------
mkfifo fifo.csv fifo.npy
timeout 20 cat fifo.csv >got.csv &
reader=$!
timeout 20 "$PIXSUM" hist img.pgm -o fifo.csv 2>err.txt || fail "hist -o FIFO: $(cat err.txt)"
wait $reader
[ -p fifo.csv ] || fail "fifo.csv is no longer a FIFO: $(ls -l fifo.csv)"
cmp -s got.csv want.csv || fail "the FIFO's reader got other bytes than stdout"
timeout 20 cat fifo.npy >got.npy &
reader=$!
timeout 20 "$PIXSUM" integral img.pgm -o fifo.npy 2>err.txt || fail "integral -o FIFO: $(cat err.txt)"
wait $reader
[ -p fifo.npy ] || fail "fifo.npy is no longer a FIFO"
cmp -s got.npy want.npy || fail "the .npy FIFO's reader got other bytes"
# Formats that seek back refuse a FIFO before writing (or waiting for) anything.
seekers="fifo.pfm"
has_format tiff && seekers="$seekers fifo.tif"
for f in $seekers; do
    mkfifo "$f"
    expect_error 1 "$f: is a FIFO" timeout 20 "$PIXSUM" integral img.pgm --type f32 -o "$f"
    [ -p "$f" ] || fail "$f is no longer a FIFO"
done

# ---- descriptors: /dev/stdout, /dev/fd/N, /proc/self/fd/N -------------------
# (/dev/stdout through a link of our own: old writers renamed over the name.)
ln -s /dev/stdout so.csv
ln -s /dev/stdout so.npy
"$PIXSUM" hist img.pgm -o so.csv >via.csv 2>err.txt || fail "-o /dev/stdout: $(cat err.txt)"
cmp -s via.csv want.csv || fail "-o /dev/stdout > file: other bytes"
[ -L so.csv ] || fail "so.csv (-> /dev/stdout) was replaced"
"$PIXSUM" integral img.pgm -o so.npy | cat >via.npy || fail "-o /dev/stdout | cat failed"
cmp -s via.npy want.npy || fail "-o /dev/stdout | cat: other bytes"
echo head >app.csv
"$PIXSUM" hist img.pgm -o so.csv >>app.csv || fail "-o /dev/stdout >> file failed"
{ echo head && cat want.csv; } | cmp -s - app.csv || fail "-o /dev/stdout >> file did not append"
"$PIXSUM" hist img.pgm -o /dev/fd/3 3>fd3.csv || fail "-o /dev/fd/3 failed"
cmp -s fd3.csv want.csv || fail "-o /dev/fd/3: other bytes"
"$PIXSUM" hist img.pgm -o /proc/self/fd/4 4>fd4.csv || fail "-o /proc/self/fd/4 failed"
cmp -s fd4.csv want.csv || fail "-o /proc/self/fd/4: other bytes"
"$PIXSUM" hist img.pgm -o - >dash.csv || fail "-o - failed"
cmp -s dash.csv want.csv || fail "-o - is not stdout"
if has_format tiff; then
    ln -s /dev/stdout so.tif
    {
        "$PIXSUM" integral img.pgm -o so.tif 2>err.txt
        echo $? >status.txt
    } | cat >/dev/null
    [ "$(cat status.txt)" = 1 ] || fail "TIFF to a pipe: exit $(cat status.txt), expected 1"
    grep -q "so.tif: is a FIFO, and a TIFF file is written with seeks" err.txt ||
        fail "TIFF to a pipe: $(cat err.txt)"
    "$PIXSUM" integral img.pgm -o so.tif >std.tif || fail "TIFF to stdout as a file failed"
    run "$PIXSUM" info std.tif
fi

# ---- character devices stay devices -----------------------------------------
ln -s /dev/null null.csv
ln -s /dev/null null.npy
run "$PIXSUM" hist img.pgm -o null.csv
run "$PIXSUM" integral img.pgm -o null.npy
[ -L null.csv ] && [ -L null.npy ] || fail "a link to /dev/null was replaced"
ln -s /dev/null null.pfm # seeks on a device "succeed" and mean nothing: refused
expect_error 1 "null.pfm: is a character device, and a PFM file is written with seeks" \
    "$PIXSUM" integral img.pgm --type f32 -o null.pfm
[ -L null.pfm ] || fail "null.pfm (-> /dev/null) was replaced"
if [ "$ROOT" = 1 ] && mknod nulldev c 1 3 2>/dev/null; then
    run "$PIXSUM" hist img.pgm -o nulldev
    [ -c nulldev ] || fail "the character device nulldev was replaced: $(ls -l nulldev)"
    if mknod blk.csv b 7 0 2>/dev/null; then
        expect_error 1 "blk.csv: is a block device" "$PIXSUM" hist img.pgm -o blk.csv
        [ -b blk.csv ] || fail "the block device node was replaced"
    fi
else
    echo "SKIP: private device nodes (needs root and mknod)" >&2
fi
# /dev/null itself only once the private node above has shown that a device
# is not renamed over (as root, a writer that did would replace /dev/null).
if [ "$ROOT" = 0 ] || [ -c nulldev ]; then
    run "$PIXSUM" hist img.pgm -o /dev/null
    [ -c /dev/null ] || fail "/dev/null is no longer a character device"
fi
no_temporaries .

# ---- refused: directories, sockets ------------------------------------------
mkdir dir.csv
expect_error 1 "dir.csv: is a directory" "$PIXSUM" hist img.pgm -o dir.csv
[ -d dir.csv ] && [ -z "$(ls -A dir.csv)" ] || fail "dir.csv changed"
if "$PY" -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' sock.csv; then
    expect_error 1 "sock.csv: is a socket" "$PIXSUM" hist img.pgm -o sock.csv
    [ -S sock.csv ] || fail "the socket sock.csv was replaced"
else
    echo "SKIP: unix socket ($PY cannot make one)" >&2
fi
no_temporaries .

# ---- several outputs: none replaced unless all complete ---------------------
echo keep >F.csv
expect_error 1 "nodir/p.png" "$PIXSUM" hist img.pgm -o F.csv --plot nodir/p.png
no_internal_names err.txt
[ "$(cat F.csv)" = keep ] || fail "hist -o F --plot BAD replaced F"
echo keep >SQ.npy
expect_error 1 "nodir/x.npy" "$PIXSUM" integral img.pgm -o nodir/x.npy --squared SQ.npy
[ "$(cat SQ.npy 2>/dev/null)" = keep ] || fail "integral: a failed -o replaced or removed --squared"
expect_error 1 "nodir/sq.npy" "$PIXSUM" integral img.pgm -o F.npy --squared nodir/sq.npy --stream
[ -e F.npy ] && fail "integral --stream: -o written though --squared failed"
expect_error 1 "nodir/out.csv: cannot create output: No such file or directory" "$PIXSUM" hist img.pgm -o nodir/out.csv
no_internal_names err.txt
mkdir -p demo/histogram.png # the demo's last output cannot be written
"$PIXSUM" demo --out demo --size 64 --runs 1 >/dev/null 2>err.txt && fail "demo: a directory plot succeeded"
grep -q "demo/histogram.png: is a directory" err.txt || fail "demo: $(cat err.txt)"
[ -z "$(ls demo | grep -v histogram.png)" ] || fail "demo wrote files though one failed: $(ls demo)"
no_temporaries .
no_temporaries demo

# ---- MPI tables (rank 0 makes the temporary, every rank writes into it) ------
if command -v mpiexec >/dev/null 2>&1 &&
    ! "$PIXSUM" integral img.pgm -o mpi_probe.npy --mpi 2>&1 | grep -q "built without MPI"; then
    # detect_leaks=0 as tests/mpi.cmake: Open MPI's own allocations live to exit
    MPI="env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
         ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 mpiexec -n 2 --oversubscribe"
    echo old >mpi_real.npy
    chmod 640 mpi_real.npy
    ln -s mpi_real.npy mpi_link.npy
    $MPI "$PIXSUM" integral img.pgm -o mpi_link.npy --mpi >/dev/null 2>err.txt ||
        fail "MPI integral through a link: $(cat err.txt)"
    [ -L mpi_link.npy ] || fail "MPI: the link was replaced"
    [ "$(stat -c %a mpi_real.npy)" = 640 ] || fail "MPI: mode 0640 not kept"
    # (the two .npy writers may pad their headers differently: compare the data)
    [ "$(tail -c 32 mpi_real.npy | od -An -tx1)" = "$(tail -c 32 want.npy | od -An -tx1)" ] ||
        fail "MPI: the link's target holds other data"
    echo keep >mpi_out.npy
    $MPI "$PIXSUM" integral img.pgm -o mpi_out.npy --squared nodir/sq.npy --mpi >/dev/null \
        2>err.txt && fail "MPI: a failed --squared succeeded"
    grep -q "nodir/sq.npy: cannot create output" err.txt || fail "MPI --squared: $(cat err.txt)"
    [ "$(cat mpi_out.npy)" = keep ] || fail "MPI: -o replaced though --squared failed"
    mkfifo mpi_fifo.npy
    timeout 60 $MPI "$PIXSUM" integral img.pgm -o mpi_fifo.npy --mpi >/dev/null 2>err.txt &&
        fail "MPI: a FIFO output succeeded"
    grep -q "mpi_fifo.npy: is a FIFO; an MPI table must be a regular file" err.txt ||
        fail "MPI FIFO: $(cat err.txt)"
    [ -p mpi_fifo.npy ] || fail "MPI: the FIFO was replaced"
    no_temporaries .
else
    echo "SKIP: MPI tables (no mpiexec, or pixsum built without MPI)" >&2
fi

# ---- signals: temporaries removed, the old file kept, status 128+N ----------
# A run blocks (deterministically) with one output's temporary live: its other
# output is a FIFO that nobody reads. Then it is signalled. env resets the
# signal's disposition (a background job of a script starts with SIGINT
# ignored, which pixsum respects).
# signal_run SIG STATUS FILE ARGS...: run pixsum ARGS in the background, wait
# for FILE's temporary, send SIG; expect STATUS, no temporary, FILE as it was.
signal_run() {
    _sig=$1 _want=$2 _file=$3
    shift 3
    echo keep >"$_file"
    env --default-signal="$_sig" "$PIXSUM" "$@" 2>sig_err.txt &
    _pid=$!
    _seen=0
    for _i in $(seq 200); do
        if [ -n "$(find . -maxdepth 1 -name ".$_file.pixsum-*")" ]; then
            _seen=1
            break
        fi
        kill -0 $_pid 2>/dev/null || break
        sleep 0.05
    done
    if [ $_seen = 1 ]; then
        kill -"$_sig" $_pid
    else
        kill -KILL $_pid 2>/dev/null
        fail "SIG$_sig: no temporary of $_file appeared while pixsum $* ran"
    fi
    wait $_pid
    _got=$?
    [ $_seen = 0 ] || [ $_got = "$_want" ] || fail "SIG$_sig: exit $_got, expected $_want ($*)"
    [ "$(cat "$_file")" = keep ] || fail "SIG$_sig: $_file was replaced"
    no_temporaries .
}
if env --default-signal=INT true 2>/dev/null; then
    mkfifo never1.svg never2.npy never3.png
    signal_run INT 130 out1.csv hist img.pgm -o out1.csv --plot never1.svg
    signal_run TERM 143 out2.npy integral img.pgm -o out2.npy --squared never2.npy
    signal_run HUP 129 out3.csv hist img.pgm -o out3.csv --plot never3.png
    [ -p never1.svg ] && [ -p never2.npy ] && [ -p never3.png ] || fail "a FIFO was replaced"
else
    echo "SKIP: signal checks (env --default-signal missing: coreutils < 8.31)" >&2
fi
# SIGXFSZ: a file-size limit hit while writing; the default action kills.
echo keep >fsz.npy
"$PY" - <<'PY' || fail "cannot make big.pgm"
import sys
sys.stdout = open("big.pgm", "wb")
sys.stdout.write(b"P5\n512 512\n255\n" + bytes(range(256)) * 1024)
PY
(
    ulimit -f 256 # 128 KiB: the u32 table needs 1 MiB
    exec "$PIXSUM" integral big.pgm -o fsz.npy 2>/dev/null
)
got=$?
[ $got = 153 ] || fail "SIGXFSZ: exit $got, expected 153 (128 + SIGXFSZ)"
[ "$(cat fsz.npy)" = keep ] || fail "SIGXFSZ: fsz.npy was replaced"
no_temporaries .

# ---- stdout that cannot be written ------------------------------------------
if [ -c /dev/full ]; then
    for args in "info" "info img.pgm" "methods" "hist img.pgm" "--help" "--version" \
                "hist --help"; do
        # shellcheck disable=SC2086
        "$PIXSUM" $args >/dev/full 2>err.txt
        got=$?
        [ $got != 0 ] || fail "pixsum $args > /dev/full exited 0"
        grep -q "stdout: write failed: No space left on device" err.txt ||
            fail "pixsum $args > /dev/full: message '$(cat err.txt)'"
        [ "$(wc -l <err.txt)" = 1 ] || fail "pixsum $args > /dev/full: not one line: $(cat err.txt)"
    done
else
    echo "SKIP: /dev/full missing" >&2
fi
"$PIXSUM" methods >&- 2>err.txt && fail "pixsum methods with stdout closed exited 0"
grep -q "stdout: write failed" err.txt || fail "stdout closed: message '$(cat err.txt)'"
finish

# lib.sh - helpers shared by the CLI test scripts (sourced, not run).
# Each script is called by ctest as: sh SCRIPT PIXSUM_BINARY TESTS_CLI_DIR
# and exits 0 (pass), 1 (fail) or 77 (skipped: a needed tool is missing).
set -u
PIXSUM=${1:?usage: $0 PIXSUM_BINARY TESTS_CLI_DIR}
HERE=${2:?usage: $0 PIXSUM_BINARY TESTS_CLI_DIR}
# Absolute paths: the scripts work in a temporary directory.
PIXSUM=$(cd "$(dirname "$PIXSUM")" && pwd)/$(basename "$PIXSUM")
HERE=$(cd "$HERE" && pwd)
PY=${PIXSUM_TEST_PYTHON:-/usr/bin/python3}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pixsum-cli.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
cd "$WORK" || exit 1
export PIXSUM_NO_PROGRESS=1
FAILS=0

# has_format NAME: 1 if this build reads/writes NAME (png, jpeg, tiff, ...).
FORMATS=" $("$PIXSUM" info 2>/dev/null | sed -n 's/^formats *//p') "
has_format() {
    case "$FORMATS" in *" $1 "*) return 0 ;; esac
    return 1
}

# format_of_name FILE: the format a file name belongs to (by prefix/extension).
format_of_name() {
    case "$1" in
    png_* | *.png) echo png ;;
    jpeg_* | *.jpg | *.jpeg) echo jpeg ;;
    tiff_* | bigtiff_* | *.tif | *.tiff | *.btf) echo tiff ;;
    *) echo builtin ;;
    esac
}

# usable NAME: the format of NAME is built in (the library formats may not be).
usable() {
    f=$(format_of_name "$1")
    [ "$f" = builtin ] || has_format "$f"
}

fail() {
    echo "FAIL: $*" >&2
    FAILS=$((FAILS + 1))
}

# need_numpy: skip the whole script when NumPy is missing.
need_numpy() {
    if ! "$PY" -c 'import numpy' 2>/dev/null; then
        echo "SKIP: NumPy for $PY not found (Debian: python3-numpy)" >&2
        exit 77
    fi
}

# expect_error STATUS MESSAGE_PART CMD...: the command must exit with STATUS
# and print MESSAGE_PART on stderr, nothing on stdout.
expect_error() {
    _ee_want=$1
    _ee_part=$2
    shift 2
    "$@" >out.txt 2>err.txt
    _ee_got=$?
    if [ "$_ee_got" != "$_ee_want" ]; then
        fail "'$*' exited $_ee_got, expected $_ee_want (stderr: $(cat err.txt))"
    elif ! grep -qF -- "$_ee_part" err.txt; then
        fail "'$*' printed '$(cat err.txt)', expected it to contain '$_ee_part'"
    elif [ -s out.txt ]; then
        fail "'$*' printed on stdout: $(cat out.txt)"
    fi
}

# run CMD...: the command must succeed.
run() {
    if ! "$@" >run_out.txt 2>run_err.txt; then
        fail "'$*' failed: $(cat run_err.txt)"
        return 1
    fi
    return 0
}

# no_temporaries DIR: no writer temporaries (.NAME.pixsum-XXXXXX) left.
no_temporaries() {
    left=$(find "$1" -maxdepth 1 -name '.*.pixsum-*' | head -n 3)
    [ -z "$left" ] || fail "temporary files left behind: $left"
}

finish() {
    if [ "$FAILS" -ne 0 ]; then
        echo "$FAILS failure(s)" >&2
        exit 1
    fi
    echo "all passed"
    exit 0
}

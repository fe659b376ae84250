#!/bin/sh
# python_pip.sh PYTHON SOURCE_DIR WORK_DIR - checks that `pip install .` works
# from the root of a checkout without a package index: copies the files a
# source distribution carries (MANIFEST.in) to WORK_DIR/src, installs them with
# pip into WORK_DIR/target (no build isolation: setuptools, wheel and numpy come
# from the system), then runs the package's pytest suite against that install,
# from a directory where the CMake-built package cannot be imported instead.
set -eu
py=$1 src=$2 work=$3
if ! "$py" -m pip --version >/dev/null 2>&1; then
    echo "skipped: $py has no pip (install python3-pip)"
    exit 77
fi
rm -rf "$work"
mkdir -p "$work/src/python" "$work/run"
cp "$src/pyproject.toml" "$src/setup.py" "$src/MANIFEST.in" "$work/src/"
cp -R "$src/include" "$src/src" "$work/src/"
cp -R "$src/python/src" "$src/python/pixsum" "$src/python/README.md" "$work/src/python/"
# CFLAGS=-O1: setup.py then builds at -O1 instead of -O3 (half the compile
# time; this checks that the package installs and passes, not its speed)
CFLAGS="${CFLAGS:--O1}" "$py" -m pip install --no-build-isolation --no-index --no-deps --no-cache-dir \
    --disable-pip-version-check --target "$work/target" "$work/src"
cd "$work/run"
PYTHONPATH="$work/target" PYTHONDONTWRITEBYTECODE=1 \
    "$py" -c "import pixsum, sys; print('installed pixsum from', pixsum.__file__)" | grep -q "$work/target"
PYTHONPATH="$work/target" PYTHONDONTWRITEBYTECODE=1 \
    "$py" -m pytest -q -p no:cacheprovider "$src/python/tests"

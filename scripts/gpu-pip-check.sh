#!/usr/bin/env bash
# gpu-pip-check.sh - the "pip" step of scripts/gpu-check.sh: on a machine with
# an NVIDIA GPU and the CUDA toolkit, installs the Python package the way
# python/README.md says (`pip install --no-build-isolation --no-index --no-deps
# --target DIR .`; setup.py builds the CUDA backend in when it finds nvcc,
# PIXSUM_CUDA=ON makes that a requirement here), checks that the installed
# package sees the GPU, then runs the whole pytest suite (python/tests: the
# CuPy/PyTorch tests included, which skip elsewhere) against that install.
# Where `import dask.array` fails (no Dask, or one older than the NumPy),
# .gpu-deps/pydask (a pure-Python Dask and its dependencies, made by
# scripts/gpu-deps-dask.sh and carried with the tree) goes on PYTHONPATH, and
# test_dask.py's CuPy test must then run and pass (not skip). Logs:
# $OUT/pip-*.log.
#
# usage: scripts/gpu-pip-check.sh [OUT]   (PIXSUM_CUDA_ARCHS default 90-real;75-virtual)
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-$PWD/build/gpu-out}}
mkdir -p "$OUT"
PY=$(command -v python3)
T=/tmp/pixsum-pip
rm -rf "$T" && mkdir -p "$T"
extra=""
if [ -d .gpu-deps/pydask ] && ! "$PY" -c "import dask.array" 2>/dev/null; then
    extra=$PWD/.gpu-deps/pydask
fi
echo "python: $PY ($($PY -c 'import sys, numpy; print(sys.version.split()[0], "numpy", numpy.__version__)'))"
PIXSUM_CUDA=ON "$PY" -m pip install --no-build-isolation --no-index --no-deps --no-cache-dir \
    --disable-pip-version-check --target "$T" . >"$OUT/pip-install.log" 2>&1 ||
    { tail -30 "$OUT/pip-install.log"; exit 1; }
cd /tmp || exit 1
export PYTHONPATH="$T${extra:+:$extra}" PYTHONDONTWRITEBYTECODE=1
"$PY" -c "import pixsum; print('installed', pixsum.__file__, 'HAVE_CUDA', pixsum.HAVE_CUDA, 'devices', pixsum.cuda_device_count())" |
    tee "$OUT/pip-import.log"
"$PY" -c "import pixsum, sys; sys.exit(0 if pixsum.HAVE_CUDA and pixsum.cuda_device_count() > 0 else 1)" ||
    { echo "FAILED: the pip-installed package has no CUDA backend or sees no GPU"; exit 1; }
cd - >/dev/null || exit 1
"$PY" -m pytest -q -p no:cacheprovider -rs python/tests 2>&1 | tee "$OUT/pip-test.log" | tail -25
rc=${PIPESTATUS[0]}
# Dask arrays of CuPy chunks computed on the GPU: must pass, not skip
"$PY" -m pytest -q -p no:cacheprovider -rs python/tests/test_dask.py -k cupy 2>&1 |
    tee "$OUT/pip-dask.log" | tail -3
if ! grep -Eq "[0-9]+ passed" "$OUT/pip-dask.log" ||
    grep -Eq "[0-9]+ (failed|skipped|errors?)" "$OUT/pip-dask.log"; then
    echo "FAILED: test_dask.py's CuPy tests did not all pass"
    rc=1
fi
exit "$rc"

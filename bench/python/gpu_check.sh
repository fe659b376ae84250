#!/usr/bin/env bash
# gpu_check.sh - the Python part of scripts/gpu-check.sh, on the GPU machine:
# builds the extension with CUDA for that machine's python3 (the one holding
# PyTorch and CuPy), runs the whole pytest suite (python/tests, including the
# CuPy/PyTorch/DLPack tests of test_gpu.py and test_gpu_hist.py, which skip
# elsewhere), the GPU peer comparison (bench/python/compare_gpu.py: integral,
# histogram and box_filter rows) and the per-call host overhead on small images
# (bench/python/gpu_overhead.py; bench/python/gpu_call_overhead.py for one
# integral of a 16x16 image). Logs: $OUT/python-*.log.
#
# usage: bench/python/gpu_check.sh [OUT]     (CUDA_ARCH, JOBS as gpu-check.sh)
set -u -o pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-${OUT:-$PWD/gpu-out}}
mkdir -p "$OUT"
PY=$(command -v python3)
B=build-gpu-py
echo "python: $PY ($($PY -c 'import sys, numpy; print(sys.version.split()[0], "numpy", numpy.__version__)'))"
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DPIXSUM_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DPIXSUM_PYTHON=ON -DPython3_EXECUTABLE="$PY" \
    -DPIXSUM_GL=OFF -DPIXSUM_MPI=OFF -DPIXSUM_BUILD_TOOLS=OFF -DPIXSUM_BUILD_EXAMPLES=OFF \
    -DBUILD_TESTING=OFF -DPIXSUM_WERROR=OFF >"$OUT/python-build.log" 2>&1 &&
    cmake --build $B -j "${JOBS:-$(nproc)}" --target pixsum_python >>"$OUT/python-build.log" 2>&1 ||
    { tail -30 "$OUT/python-build.log"; exit 1; }
PYTHONPATH=$B/python $PY -m pytest -q -p no:cacheprovider -rs python/tests 2>&1 |
    tee "$OUT/python-test.log" | tail -20
rc=${PIPESTATUS[0]}
PYTHONPATH=$B/python $PY bench/python/compare_gpu.py 2>&1 | tee "$OUT/python-bench.log"
PYTHONPATH=$B/python $PY bench/python/gpu_overhead.py 2>&1 | tee "$OUT/python-overhead.log"
PYTHONPATH=$B/python $PY bench/python/gpu_call_overhead.py --batch 256 2>&1 |
    tee "$OUT/python-call-overhead.log"
exit "$rc"

#!/bin/sh
# python_pip.sh PYTHON SOURCE_DIR WORK_DIR - checks that the install commands
# of python/README.md work as written, without a package index: copies the
# files a source distribution carries (MANIFEST.in) to WORK_DIR/src, then runs,
# from there, each line of the README's block marked `install-commands`
# (`python3` read as PYTHON, ~/pixsum-env as WORK_DIR/env, DIR as
# WORK_DIR/target): a virtual environment with the system's site packages and
# a --target install, each followed by the README's import. Then it checks that
# both installs are the ones imported, runs a smoke test (pixsum.compat
# included) in the environment, and the package's pytest suite against the
# --target install, from a directory where the CMake-built package cannot be
# imported instead.
set -eu
py=$1 src=$2 work=$3
# setup.py builds the CUDA kernels in wherever it finds nvcc: about 30 minutes
# on 2 cores. This test checks the install, not the kernels (the GPU machine's
# scripts/gpu-pip-check.sh installs with them), so it builds without.
export PIXSUM_CUDA=OFF
if ! "$py" -m pip --version >/dev/null 2>&1; then
    echo "skipped: $py has no pip (install python3-pip)"
    exit 77
fi
if ! "$py" -c "import venv, ensurepip" >/dev/null 2>&1; then
    echo "skipped: $py cannot make virtual environments (install python3-venv)"
    exit 77
fi
rm -rf "$work"
mkdir -p "$work/src/python" "$work/run"
cp "$src/pyproject.toml" "$src/setup.py" "$src/MANIFEST.in" "$work/src/"
cp -R "$src/include" "$src/src" "$work/src/"
cp -R "$src/python/src" "$src/python/pixsum" "$src/python/README.md" "$work/src/python/"

# the README's commands, as written, with this test's folders
awk '/<!-- install-commands/ { f = 1; next }
     f && /^```/ { n++; if (n == 2) exit; next }
     f && n == 1' "$src/python/README.md" |
    sed -e 's/[[:space:]]*#.*$//' -e '/^[[:space:]]*$/d' \
        -e "s|~/pixsum-env|$work/env|g" -e "s|\\bDIR\\b|$work/target|g" \
        -e "s|^python3 |$py |" -e "s|\\([ =]\\)python3 |\\1$py |g" > "$work/commands.sh"
if [ "$(grep -c 'pip install' "$work/commands.sh")" -lt 2 ]; then
    echo "python/README.md: the install-commands block was not found or lost its pip lines"
    exit 1
fi
echo "running python/README.md's install commands:"
cat "$work/commands.sh"
# CFLAGS=-O1: setup.py then builds at -O1 instead of -O3 (half the compile
# time; this checks that the package installs and passes, not its speed).
# PIXSUM_CUDA=OFF (unless set): the two installs build setup.py's CPU part;
# with nvcc present each would also compile the CUDA kernels (many minutes).
(cd "$work/src" && CFLAGS="${CFLAGS:--O1}" PIXSUM_CUDA="${PIXSUM_CUDA:-OFF}" \
    PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1 sh -ex "$work/commands.sh")

cd "$work/run"
"$work/env/bin/python" -c "import pixsum; print('venv: pixsum from', pixsum.__file__)" |
    grep -q "$work/env/"
PYTHONPATH="$work/target" "$py" -c "import pixsum; print('target: pixsum from', pixsum.__file__)" |
    grep -q "$work/target/"
# smoke test in the virtual environment: a table, a histogram, the compat modules
PYTHONDONTWRITEBYTECODE=1 "$work/env/bin/python" - <<'EOF'
import numpy as np, pixsum
from pixsum.compat import skimage as ski, cv2 as pcv
img = np.arange(12, dtype=np.uint8).reshape(3, 4)
assert pixsum.integral(img)[-1, -1] == img.sum()
assert pixsum.histogram(img).sum() == img.size
assert ski.integral_image(img)[-1, -1] == img.sum()
assert pcv.integral(img).shape == (4, 5)
print("smoke test passed:", pixsum.__file__)
EOF
PYTHONPATH="$work/target" PYTHONDONTWRITEBYTECODE=1 \
    "$py" -m pytest -q -p no:cacheprovider "$src/python/tests"

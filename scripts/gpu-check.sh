#!/usr/bin/env bash
# gpu-check.sh - builds pixsum with CUDA on a machine with an NVIDIA GPU, runs
# the GPU tests (test_cuda: every CUDA method against the CPU reference), runs
# them again small under compute-sanitizer (memcheck, racecheck, synccheck),
# then the GPU benchmarks (bench/cuda/gpu_bench: fast method vs same-run copy
# floor and NPP, paper 004 sweep, paper 003 table) and the PyTorch peer
# (bench/cuda/torch_peer.py). Logs go to $OUT (default ./gpu-out).
#
# usage: scripts/gpu-check.sh [steps]   steps: any of build test sanitize bench
#                                       histtest histbench python torch (default:
#                                       all, in that order)
# Environment: OUT, JOBS, CUDA_ARCH (default 90), PIXSUM_TEST_NO_LARGE=1.
# Without cmocka installed, .gpu-deps/*.deb (libcmocka0, libcmocka-dev,
# fetched with `apt-get download`) are unpacked under /tmp/gpu-deps and the
# test is compiled directly.
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
JOBS=${JOBS:-$(nproc)}
ARCH=${CUDA_ARCH:-90}
BUILD=build-gpu
STEPS=${*:-build test sanitize bench histtest histbench python torch}
mkdir -p "$OUT"
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")}
export PATH="$CUDA_HOME/bin:$PATH"
status=0
has() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv 2>&1 | tee "$OUT/machine.txt"
nvcc --version | tail -2 | tee -a "$OUT/machine.txt"

# cmocka: system one, else the carried packages.
CMOCKA_DIR=""
if ! pkg-config --exists cmocka 2>/dev/null; then
    if ls .gpu-deps/libcmocka*.deb >/dev/null 2>&1; then
        mkdir -p /tmp/gpu-deps
        for f in .gpu-deps/libcmocka*.deb; do dpkg -x "$f" /tmp/gpu-deps; done
        CMOCKA_DIR=/tmp/gpu-deps/usr
    fi
fi

if has build; then
    step "build ($BUILD, sm_$ARCH)"
    TESTING=ON
    [ -n "$CMOCKA_DIR" ] && TESTING=OFF
    cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release -DPIXSUM_CUDA=ON \
        -DCMAKE_CUDA_ARCHITECTURES=$ARCH -DPIXSUM_PYTHON=OFF -DPIXSUM_GL=OFF \
        -DPIXSUM_BUILD_TOOLS=OFF -DPIXSUM_BUILD_EXAMPLES=OFF -DBUILD_TESTING=$TESTING \
        -DPIXSUM_WERROR=OFF >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
    cmake --build $BUILD -j "$JOBS" --target pixsum pixsum_static >>"$OUT/build.log" 2>&1 ||
        { tail -40 "$OUT/build.log"; exit 1; }
    if [ "$TESTING" = ON ]; then
        cmake --build $BUILD -j "$JOBS" --target test_cuda test_cuda_hist >>"$OUT/build.log" 2>&1 ||
            { tail -40 "$OUT/build.log"; exit 1; }
    else
        mkdir -p $BUILD/tests
        for t in test_cuda test_cuda_hist; do
        gcc -O2 -std=c11 -D_GNU_SOURCE -DPIXSUM_TEST_HAVE_CUDA=1 -Iinclude -Isrc -Itests \
            -I"$CMOCKA_DIR/include" -I"$CUDA_HOME/include" tests/$t.c \
            -o $BUILD/tests/$t -L$BUILD/src -lpixsum \
            -L"$CMOCKA_DIR/lib/x86_64-linux-gnu" -lcmocka -L"$CUDA_HOME/lib64" -lcudart -lm \
            -Wl,-rpath,"$PWD/$BUILD/src:$CMOCKA_DIR/lib/x86_64-linux-gnu:$CUDA_HOME/lib64" \
            >>"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
        done
    fi
    grep -E "warning" "$OUT/build.log" | head -20
    echo "build ok"
fi

if has test; then
    step "test_cuda (full)"
    $BUILD/tests/test_cuda 2>&1 | tee "$OUT/test.log" | tail -25
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    # The other cuda.lookback launch shapes (PIXSUM_CUDA_LB) must be exact too.
    for v in ${LB_VARIANTS:-rows=4,hints=3 rows=8,hints=0}; do
        step "test_cuda with PIXSUM_CUDA_LB=$v (no large case)"
        PIXSUM_CUDA_LB=$v PIXSUM_TEST_NO_LARGE=1 $BUILD/tests/test_cuda >"$OUT/test-variants.log" 2>&1
        rc=$?
        grep -E "PASSED|FAILED|ERROR" "$OUT/test-variants.log" | head -5
        [ $rc -eq 0 ] || status=1
    done
fi

if has sanitize; then
    CS=$(command -v compute-sanitizer || echo "$CUDA_HOME/bin/compute-sanitizer")
    for tool in memcheck racecheck synccheck; do
        step "compute-sanitizer --tool $tool (PIXSUM_TEST_QUICK=1)"
        PIXSUM_TEST_QUICK=1 timeout ${SAN_TIMEOUT:-200} "$CS" --tool $tool --report-api-errors no --error-exitcode 3 \
            $BUILD/tests/test_cuda >"$OUT/sanitize-$tool.log" 2>&1
        rc=$?
        tail -4 "$OUT/sanitize-$tool.log"
        echo "$tool exit code $rc"
        [ $rc -eq 0 ] || status=1
    done
fi

if has bench; then
    step "gpu_bench"
    NPP_LIBS=""
    for l in nppc nppif nppist nppial nppidei; do
        [ -e "$CUDA_HOME/lib64/lib$l.so" ] && NPP_LIBS="$NPP_LIBS -l$l"
    done
    BENCH_COMMON=(-std=c++17 -O3 -arch=sm_$ARCH --extended-lambda bench/cuda/gpu_bench.cu
                  -Iinclude -L$BUILD/src -lpixsum -Xlinker -rpath="$PWD/$BUILD/src"
                  -o $BUILD/gpu_bench)
    if ! nvcc "${BENCH_COMMON[@]}" -DPIXSUM_BENCH_NPP $NPP_LIBS >"$OUT/bench-build.log" 2>&1; then
        echo "NPP build failed (see bench-build.log); building without NPP"
        tail -5 "$OUT/bench-build.log"
        nvcc "${BENCH_COMMON[@]}" >>"$OUT/bench-build.log" 2>&1 || { tail -20 "$OUT/bench-build.log"; exit 1; }
    fi
    $BUILD/gpu_bench ${BENCH_SECTION:-all} ${BENCH_REPS:-15} 2>&1 | tee "$OUT/bench.log"
fi

if has histtest; then
    # GPU histograms (issue 6): bit-exact against the CPU, then small under
    # compute-sanitizer (memcheck, racecheck) unless HIST_SANITIZE=0.
    step "test_cuda_hist"
    $BUILD/tests/test_cuda_hist 2>&1 | tee "$OUT/test-hist.log" | tail -12
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    if [ "${HIST_SANITIZE:-1}" != 0 ]; then
        CS=$(command -v compute-sanitizer || echo "$CUDA_HOME/bin/compute-sanitizer")
        for tool in memcheck racecheck; do
            step "compute-sanitizer --tool $tool test_cuda_hist (PIXSUM_TEST_QUICK=1)"
            PIXSUM_TEST_QUICK=1 timeout ${SAN_TIMEOUT:-200} "$CS" --tool $tool --report-api-errors no \
                --error-exitcode 3 $BUILD/tests/test_cuda_hist >"$OUT/sanitize-hist-$tool.log" 2>&1
            rc=$?
            tail -3 "$OUT/sanitize-hist-$tool.log"
            echo "$tool exit code $rc"
            [ $rc -eq 0 ] || status=1
        done
    fi
fi

if has histbench; then
    step "hist_bench (cuda.hist vs CUB DeviceHistogram vs read floor)"
    nvcc -std=c++17 -O3 -arch=sm_$ARCH --extended-lambda bench/cuda/hist_bench.cu -Iinclude \
        -L$BUILD/src -lpixsum -Xlinker -rpath="$PWD/$BUILD/src" -o $BUILD/hist_bench \
        >"$OUT/hist-bench-build.log" 2>&1 || { tail -20 "$OUT/hist-bench-build.log"; exit 1; }
    $BUILD/hist_bench ${BENCH_REPS:-15} ${HIST_BENCH_SECTION:-all} 2>&1 | tee "$OUT/hist-bench.log"
fi

if has python; then step "python package: CuPy/PyTorch arrays"; bench/python/gpu_check.sh "$OUT" || status=1; fi

if has torch; then
    step "torch peer"
    PYTHONUNBUFFERED=1 python3 bench/cuda/torch_peer.py 2>&1 | tee "$OUT/torch.log"
fi

step "done (status $status)"
exit $status

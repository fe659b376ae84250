#!/usr/bin/env bash
# gpu-check.sh - builds pixsum with CUDA on a machine with an NVIDIA GPU, runs
# the GPU tests (test_cuda: every CUDA method against the CPU reference, and
# every code path of cuda.lookback forced through the experimental API), runs
# them again small under compute-sanitizer (memcheck, racecheck, synccheck),
# then the GPU benchmarks (bench/cuda/gpu_bench: fast method vs same-run copy
# floor and NPP, paper 004 sweep, paper 003 table) and the PyTorch peer
# (bench/cuda/torch_peer.py, pixsum in the same process). Every log and
# result file goes to $OUT (default build/gpu-out), never into the source
# tree.
#
# usage: scripts/gpu-check.sh [steps]   steps: any of build test sanitize bench gl
#                                       failtest leakcheck clibench histtest histbench python
#                                       torch mpi pip boxbench boxtest profile cpu (boxtest: the
#                                       box filter test alone, built on its own; profile:
#                                       ncu; cpu: the CPU kernels on the host's CPU; none of
#                                       these three in the default) (default: all, in the
#                                       order of this file)
# Environment: OUT, JOBS, CUDA_ARCH (default 90), PIXSUM_TEST_NO_LARGE=1.
# BENCH_SECTION (default all), BENCH_REPS, BENCH_SIZES, BENCH_PAIR_SIZES:
# gpu_bench's section and its settings (bench/cuda/gpu_bench.cu);
# BOX_BENCH_SIDES: box_bench's image sides (default 8192,1024).
# SAN_TIMEOUT (200 s per sanitizer run) ends a hung kernel; HIST_SANITIZE=0
# skips the histogram sanitizer runs.
# Without cmocka installed, .gpu-deps/*.deb (libcmocka0, libcmocka-dev,
# fetched with `apt-get download`) are unpacked under /tmp/gpu-deps and the
# test is compiled directly.
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/build/gpu-out}
JOBS=${JOBS:-$(nproc)}
ARCH=${CUDA_ARCH:-90}
BUILD=build-gpu
# BUILD_MPI=ON builds the tool of the build step with MPI too (for
# scripts/mpi-scaling.sh with PIXSUM=build-gpu/tools/pixsum)
BUILD_MPI=${BUILD_MPI:-OFF}
STEPS=${*:-build test failtest leakcheck sanitize bench boxbench clibench histtest histbench gl python pip torch mpi}
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

# Compiles CUDA tests straight with gcc against BUILD's libpixsum (when the
# carried cmocka is used, or for the sanitized build): compile_cuda_tests
# BUILD EXTRA_FLAGS TEST...
compile_cuda_tests() {
    local b=$1 extra=$2 t
    shift 2
    local cm_inc="" cm_lib=""
    if [ -n "$CMOCKA_DIR" ]; then
        cm_inc="-I$CMOCKA_DIR/include"
        cm_lib="-L$CMOCKA_DIR/lib/x86_64-linux-gnu -Wl,-rpath,$CMOCKA_DIR/lib/x86_64-linux-gnu"
    fi
    mkdir -p "$b/tests"
    for t in "$@"; do
        # shellcheck disable=SC2086
        gcc -O2 -g -std=c11 -D_GNU_SOURCE -DPIXSUM_TEST_HAVE_CUDA=1 $extra -Iinclude -Isrc -Itests \
            $cm_inc -I"$CUDA_HOME/include" tests/$t.c -o "$b/tests/$t" -L"$b/src" -lpixsum \
            $cm_lib -lcmocka -L"$CUDA_HOME/lib64" -lcudart -lm \
            -Wl,-rpath,"$PWD/$b/src:$CUDA_HOME/lib64" >>"$OUT/build.log" 2>&1 || return 1
    done
}

if has build; then
    step "build ($BUILD, sm_$ARCH)"
    TESTING=ON
    [ -n "$CMOCKA_DIR" ] && TESTING=OFF
    cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release -DPIXSUM_CUDA=ON \
        -DCMAKE_CUDA_ARCHITECTURES=$ARCH -DPIXSUM_PYTHON=OFF -DPIXSUM_GL=OFF -DPIXSUM_MPI=$BUILD_MPI \
        -DPIXSUM_BUILD_TOOLS=ON -DPIXSUM_BUILD_EXAMPLES=OFF -DBUILD_TESTING=$TESTING \
        -DPIXSUM_WERROR=OFF >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
    cmake --build $BUILD -j "$JOBS" --target pixsum pixsum_static pixsum_cli >>"$OUT/build.log" 2>&1 ||
        { tail -40 "$OUT/build.log"; exit 1; }
    if [ "$TESTING" = ON ]; then
        cmake --build $BUILD -j "$JOBS" --target test_cuda test_cuda_hist test_cuda_failure test_cuda_tilted \
            test_cuda_box test_cuda_threshold >>"$OUT/build.log" 2>&1 ||
            { tail -40 "$OUT/build.log"; exit 1; }
    else
        compile_cuda_tests $BUILD "" test_cuda test_cuda_hist test_cuda_failure test_cuda_tilted test_cuda_box \
            test_cuda_threshold ||
            { tail -40 "$OUT/build.log"; exit 1; }
    fi
    grep -E "warning" "$OUT/build.log" | head -20
    echo "build ok"
fi

if has test; then
    step "test_cuda (full)"
    $BUILD/tests/test_cuda 2>&1 | tee "$OUT/test.log" | tail -25
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    step "test_cuda_tilted"
    $BUILD/tests/test_cuda_tilted 2>&1 | tee "$OUT/test-tilted.log" | tail -8
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    step "test_cuda_box"
    $BUILD/tests/test_cuda_box 2>&1 | tee "$OUT/test-box.log" | tail -8
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    step "test_cuda_threshold"
    $BUILD/tests/test_cuda_threshold 2>&1 | tee "$OUT/test-threshold.log" | tail -8
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

# The CUDA box filter on its own (pixsum_cuda_box_filter() against the CPU's
# pixsum_box_filter()): builds only the library and test_cuda_box in $BUILD
# (configured as the build step does, if it is not yet), runs the test, then
# again small under compute-sanitizer memcheck.
box_build() {
    local testing=ON
    [ -n "$CMOCKA_DIR" ] && testing=OFF
    if [ ! -f $BUILD/CMakeCache.txt ]; then
        cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release -DPIXSUM_CUDA=ON \
            -DCMAKE_CUDA_ARCHITECTURES=$ARCH -DPIXSUM_PYTHON=OFF -DPIXSUM_GL=OFF -DPIXSUM_MPI=OFF \
            -DPIXSUM_BUILD_TOOLS=ON -DPIXSUM_BUILD_EXAMPLES=OFF -DBUILD_TESTING=$testing \
            -DPIXSUM_WERROR=OFF >>"$OUT/box-build.log" 2>&1 || return 1
    fi
    cmake --build $BUILD -j "$JOBS" --target pixsum >>"$OUT/box-build.log" 2>&1 || return 1
    [ "${1:-}" = test ] || return 0
    if [ "$testing" = ON ]; then
        cmake --build $BUILD -j "$JOBS" --target test_cuda_box >>"$OUT/box-build.log" 2>&1
    else
        compile_cuda_tests $BUILD "" test_cuda_box
    fi
}

if has boxtest; then
    step "boxtest: test_cuda_box, then memcheck (PIXSUM_TEST_QUICK=1)"
    if box_build test; then
        $BUILD/tests/test_cuda_box 2>&1 | tee "$OUT/test-box.log" | tail -12
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
        CS=$(command -v compute-sanitizer || echo "$CUDA_HOME/bin/compute-sanitizer")
        PIXSUM_TEST_QUICK=1 timeout ${SAN_TIMEOUT:-200} "$CS" --tool memcheck --report-api-errors no \
            --error-exitcode 3 $BUILD/tests/test_cuda_box >"$OUT/sanitize-memcheck-box.log" 2>&1
        rc=$?
        tail -4 "$OUT/sanitize-memcheck-box.log"
        echo "memcheck (box filter) exit code $rc"
        [ $rc -eq 0 ] || status=1
    else
        tail -30 "$OUT/box-build.log"
        status=1
    fi
fi

if has failtest; then
    # Failure paths and huge images (issue 9): unreachable memory, device memory
    # exhaustion, 50000^2 and 1 x (2^31 + 7) u8 -> u64 tables against the CPU.
    step "test_cuda_failure"
    $BUILD/tests/test_cuda_failure 2>&1 | tee "$OUT/test-failure.log" | tail -12
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if has leakcheck; then
    # Host-side leak and memory-error check of the CUDA failure paths (issue 9):
    # the library and the CUDA tests built with AddressSanitizer + UBSan (C code
    # only; nvcc objects are not instrumented), LeakSanitizer on at exit.
    # protect_shadow_gap=0 lets the CUDA driver map memory where ASan would
    # otherwise reserve it. tests/lsan-cuda.supp names the CUDA driver and
    # runtime, whose own caches live until exit.
    step "leakcheck: ASan + UBSan + LSan over test_cuda_failure, test_cuda_tilted, test_cuda_hist, test_cuda_box, test_cuda"
    AB=build-gpu-asan
    if cmake -S . -B $AB -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIXSUM_SANITIZE=ON -DPIXSUM_CUDA=ON \
           -DCMAKE_CUDA_ARCHITECTURES=$ARCH -DPIXSUM_PYTHON=OFF -DPIXSUM_GL=OFF -DPIXSUM_MPI=OFF \
           -DPIXSUM_BUILD_TOOLS=OFF -DPIXSUM_BUILD_EXAMPLES=OFF -DBUILD_TESTING=OFF \
           -DPIXSUM_WERROR=OFF >"$OUT/leak-build.log" 2>&1 &&
       cmake --build $AB -j "$JOBS" --target pixsum >>"$OUT/leak-build.log" 2>&1 &&
       compile_cuda_tests $AB "-fsanitize=address,undefined -fno-omit-frame-pointer" \
           test_cuda_failure test_cuda_tilted test_cuda_hist test_cuda_box test_cuda; then
        for t in test_cuda_failure test_cuda_tilted test_cuda_hist test_cuda_box test_cuda; do
            PIXSUM_TEST_NO_LARGE=1 PIXSUM_TEST_QUICK=1 \
            ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=1:allocator_may_return_null=1 \
            LSAN_OPTIONS=suppressions=$PWD/tests/lsan-cuda.supp:print_suppressions=1 \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
                $AB/tests/$t >"$OUT/leak-$t.log" 2>&1
            rc=$?
            grep -E "PASSED|FAILED|ERROR: (Leak|Address)|runtime error|SUMMARY" "$OUT/leak-$t.log" | head -8
            echo "$t under ASan+LSan: exit code $rc"
            [ $rc -eq 0 ] || status=1
        done
    else
        tail -30 "$OUT/leak-build.log"
        status=1
    fi
fi

if has sanitize; then
    CS=$(command -v compute-sanitizer || echo "$CUDA_HOME/bin/compute-sanitizer")
    # test_cuda runs each cuda.lookback kernel and look-back (its forced paths)
    # under each tool.
    for tool in memcheck racecheck synccheck; do
        step "compute-sanitizer --tool $tool (PIXSUM_TEST_QUICK=1)"
        PIXSUM_TEST_QUICK=1 timeout ${SAN_TIMEOUT:-200} "$CS" --tool $tool \
            --report-api-errors no --error-exitcode 3 \
            $BUILD/tests/test_cuda >"$OUT/sanitize-$tool.log" 2>&1
        rc=$?
        tail -4 "$OUT/sanitize-$tool.log"
        echo "$tool exit code $rc"
        [ $rc -eq 0 ] || status=1
    done
    step "compute-sanitizer --tool memcheck test_cuda_box (PIXSUM_TEST_QUICK=1)"
    PIXSUM_TEST_QUICK=1 timeout ${SAN_TIMEOUT:-200} "$CS" --tool memcheck --report-api-errors no \
        --error-exitcode 3 $BUILD/tests/test_cuda_box >"$OUT/sanitize-memcheck-box.log" 2>&1
    rc=$?
    tail -4 "$OUT/sanitize-memcheck-box.log"
    echo "memcheck (box filter) exit code $rc"
    [ $rc -eq 0 ] || status=1
fi

if has bench; then
    step "gpu_bench"
    NPP_LIBS=""
    for l in nppc nppif nppist nppial nppidei; do
        [ -e "$CUDA_HOME/lib64/lib$l.so" ] && NPP_LIBS="$NPP_LIBS -l$l"
    done
    BENCH_COMMON=(-std=c++17 -O3 -arch=sm_$ARCH --extended-lambda bench/cuda/gpu_bench.cu
                  -Iinclude -Isrc/cuda -L$BUILD/src -lpixsum -Xlinker -rpath="$PWD/$BUILD/src"
                  -o $BUILD/gpu_bench)
    if ! nvcc "${BENCH_COMMON[@]}" -DPIXSUM_BENCH_NPP $NPP_LIBS >"$OUT/bench-build.log" 2>&1; then
        echo "NPP build failed (see bench-build.log); building without NPP"
        tail -5 "$OUT/bench-build.log"
        nvcc "${BENCH_COMMON[@]}" >>"$OUT/bench-build.log" 2>&1 || { tail -20 "$OUT/bench-build.log"; exit 1; }
    fi
    $BUILD/gpu_bench ${BENCH_SECTION:-all} ${BENCH_REPS:-15} 2>&1 | tee "$OUT/bench.log"
fi

if has boxbench; then
    # bench/cuda/box_bench: the box filter against a same-run copy of its
    # bytes (and NPP's box filter where it has the type), 8192^2 and 1024^2.
    step "box_bench (streamed box filter vs copy floor and NPP)"
    if box_build; then
        NPP_LIBS=""
        for l in nppc nppif; do
            [ -e "$CUDA_HOME/lib64/lib$l.so" ] && NPP_LIBS="$NPP_LIBS -l$l"
        done
        BOX_COMMON=(-std=c++17 -O3 -arch=sm_$ARCH --extended-lambda bench/cuda/box_bench.cu
                    -Iinclude -Isrc/cuda -L$BUILD/src -lpixsum -Xlinker -rpath="$PWD/$BUILD/src"
                    -o $BUILD/box_bench)
        if ! nvcc "${BOX_COMMON[@]}" -DPIXSUM_BENCH_NPP $NPP_LIBS >"$OUT/box-bench-build.log" 2>&1; then
            echo "NPP build failed (see box-bench-build.log); building without NPP"
            tail -5 "$OUT/box-bench-build.log"
            nvcc "${BOX_COMMON[@]}" >>"$OUT/box-bench-build.log" 2>&1 ||
                { tail -20 "$OUT/box-bench-build.log"; status=1; }
        fi
        [ -x $BUILD/box_bench ] && $BUILD/box_bench ${BENCH_REPS:-15} ${BOX_BENCH_SIDES:-} 2>&1 |
            tee "$OUT/box-bench.log"
    else
        tail -30 "$OUT/box-build.log"
        status=1
    fi
fi

if has clibench; then
    # `pixsum bench` with CUDA methods on host memory: the call's host->device,
    # kernel and device->host times under each row (issue 5), next to the CPU.
    step "pixsum bench (CUDA methods on host memory: transfer vs kernel time)"
    $BUILD/tools/pixsum bench --op integral --pair u8:u32,f32:f64 --size 1024,4096,8192 \
        --method cuda.lookback,simd.2wh --threads 1 --json "$OUT/clibench.json" 2>&1 |
        tee "$OUT/clibench.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
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
    nvcc -std=c++17 -O3 -arch=sm_$ARCH --extended-lambda bench/cuda/hist_bench.cu -Iinclude -Isrc/cuda \
        -L$BUILD/src -lpixsum -Xlinker -rpath="$PWD/$BUILD/src" -o $BUILD/hist_bench \
        >"$OUT/hist-bench-build.log" 2>&1 || { tail -20 "$OUT/hist-bench-build.log"; exit 1; }
    $BUILD/hist_bench ${BENCH_REPS:-15} ${HIST_BENCH_SECTION:-all} 2>&1 | tee "$OUT/hist-bench.log"
fi

if has cpu; then
    # The CPU integral kernels on this host's CPU (issue 3; it has AVX-512, the
    # development VM does not): test_integral once per forced ISA, streamed and
    # not; store_patterns; simd.2wh and omp.banded under AVX-512 and AVX2. With
    # .snap/before.tar (a `git archive` of an earlier commit) the same figures
    # for that tree, alternated with this one's in one process each.
    step "cpu: test_integral per ISA, store_patterns, pixsum bench"
    lscpu >"$OUT/cpu.txt" 2>&1
    grep -E "Model name|^CPU\(s\)|L2|L3" "$OUT/cpu.txt"
    cpu_build() { # cpu_build SRC_DIR BUILD_DIR: the library, CLI and store_patterns
        cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DPIXSUM_CUDA=OFF -DPIXSUM_PYTHON=OFF \
            -DPIXSUM_GL=OFF -DPIXSUM_MPI=OFF -DBUILD_TESTING=OFF -DPIXSUM_WERROR=OFF \
            >>"$OUT/cpu-build.log" 2>&1 &&
            cmake --build "$2" -j "$JOBS" --target pixsum pixsum_static pixsum_cli \
                >>"$OUT/cpu-build.log" 2>&1
    }
    CB=$PWD/build-cpu-host
    if cpu_build . "$CB"; then
        cmake --build "$CB" -j "$JOBS" --target store_patterns >>"$OUT/cpu-build.log" 2>&1
        cm_inc="" cm_lib=""
        if [ -n "$CMOCKA_DIR" ]; then
            cm_inc="-I$CMOCKA_DIR/include"
            cm_lib="-L$CMOCKA_DIR/lib/x86_64-linux-gnu -Wl,-rpath,$CMOCKA_DIR/lib/x86_64-linux-gnu"
        fi
        # shellcheck disable=SC2086
        gcc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -Itests $cm_inc tests/test_integral.c \
            tests/testutil.c -o "$CB/test_integral" "$CB/src/libpixsum.a" $cm_lib -lcmocka -lm \
            -fopenmp >>"$OUT/cpu-build.log" 2>&1 || { tail -20 "$OUT/cpu-build.log"; status=1; }
        for isa in sse2 avx2 avx512; do
            for sb in "" 1; do
                echo "test_integral PIXSUM_FORCE_ISA=$isa PIXSUM_STREAM_BYTES=${sb:-unset}"
                OMP_WAIT_POLICY=passive PIXSUM_FORCE_ISA=$isa PIXSUM_STREAM_BYTES=$sb \
                    PIXSUM_TEST_METHODS=simd.,omp.,p001. "$CB/test_integral" \
                    >"$OUT/cpu-test-$isa${sb:+-streamed}.log" 2>&1
                rc=$?
                tail -1 "$OUT/cpu-test-$isa${sb:+-streamed}.log"
                [ $rc -eq 0 ] || status=1
            done
        done
        for isa in avx512 avx2; do
            PIXSUM_FORCE_ISA=$isa "$CB/bench/store_patterns" 7 | tee -a "$OUT/cpu-bench.log"
        done
        BEFORE=""
        if [ -f .snap/before.tar ]; then
            BT=/tmp/pixsum-before-tree
            rm -rf "$BT" && mkdir -p "$BT" && tar xf .snap/before.tar -C "$BT" &&
                cpu_build "$BT" "$BT/build" && BEFORE=$BT/build
        fi
        for round in 1 2 3; do
            for tree in $BEFORE "$CB"; do
                for isa in avx512 avx2; do
                    echo "## round $round, $tree, PIXSUM_FORCE_ISA=$isa" | tee -a "$OUT/cpu-bench.log"
                    PIXSUM_FORCE_ISA=$isa "$tree/tools/pixsum" bench --op integral --pair u8:u32 \
                        --size 8192 --method simd.2wh 2>&1 | tail -1 | tee -a "$OUT/cpu-bench.log"
                    PIXSUM_FORCE_ISA=$isa "$tree/tools/pixsum" bench --op integral --pair u8:u32 \
                        --size 4096 --threads 1,2,4 --method omp.banded 2>&1 | tail -3 |
                        tee -a "$OUT/cpu-bench.log"
                done
            done
        done
    else
        tail -30 "$OUT/cpu-build.log"
        status=1
    fi
fi

if has profile; then
    # Nsight Compute over one steady-state call of each kernel that misses a
    # figure (bench/cuda/profile_cases.cu; PROFILE_ONLY="a|b" picks cases by name):
    # the full section set, the details page as text and the per-instruction
    # source page (SASS with stall samples) as gzipped CSV (the report itself
    # stays in /tmp: tens of MB).
    step "profile (ncu over bench/cuda/profile_cases)"
    nvcc -std=c++17 -O3 -arch=sm_$ARCH bench/cuda/profile_cases.cu -Iinclude \
        -L$BUILD/src -lpixsum -Xlinker -rpath="$PWD/$BUILD/src" -o $BUILD/profile_cases \
        >"$OUT/profile-build.log" 2>&1 || { tail -20 "$OUT/profile-build.log"; exit 1; }
    ncu --version | tail -1
    if ncu --clock-control none --profile-from-start off --set full --import-source no \
           -f -o /tmp/pixsum-profile $BUILD/profile_cases ${PROFILE_ONLY:+"$PROFILE_ONLY"} >"$OUT/profile-run.log" 2>&1; then
        ncu --import /tmp/pixsum-profile.ncu-rep --page details >"$OUT/profile-details.txt" 2>&1
        ncu --import /tmp/pixsum-profile.ncu-rep --page source --csv --print-source sass \
            >"$OUT/profile-source.csv" 2>&1 || echo "(no source page)"
        gzip -f "$OUT/profile-source.csv"
        grep -c "" "$OUT/profile-details.txt"
    else
        status=1
        tail -20 "$OUT/profile-run.log"
    fi
fi

if has gl; then
    # OpenGL histograms (issue 6, paper 002) on the NVIDIA driver's EGL: its own
    # build (GL + CUDA, so the paper-002 bench has cuda.hist too), test_gl_hist,
    # then bench/bench_hist002 (Tables 1-4). Where the image lacks the glvnd
    # loaders (libEGL.so.1, libOpenGL.so.0) or their headers, the packages
    # carried in .gpu-deps/ (libegl1 libopengl0 libglvnd0 libgl1 libglx0 and
    # their -dev packages, from `apt-get download`) are unpacked to /tmp/gpu-gl.
    step "gl: test_gl_hist + bench_hist002 (EGL on the NVIDIA driver)"
    GLB=build-gpu-gl
    GL_HINTS=()
    # (GL_CARRIED=1 uses the carried packages even where the system has its own.)
    if [ -n "${GL_CARRIED:-}" ] || [ ! -e /usr/include/EGL/egl.h ] || ! ldconfig -p | grep -q 'libEGL.so.1 ' ||
       ! ldconfig -p | grep -q 'libOpenGL.so.0 '; then
        mkdir -p /tmp/gpu-gl
        for f in .gpu-deps/lib{egl1,opengl0,glvnd0,gl1,glx0,egl-dev,gl-dev,opengl-dev,glx-dev}_*.deb; do
            [ -e "$f" ] && dpkg -x "$f" /tmp/gpu-gl
        done
        GLL=/tmp/gpu-gl/usr/lib/x86_64-linux-gnu
        export LD_LIBRARY_PATH="$GLL${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        GL_HINTS=(-DOPENGL_INCLUDE_DIR=/tmp/gpu-gl/usr/include -DOPENGL_EGL_INCLUDE_DIR=/tmp/gpu-gl/usr/include
                  -DOPENGL_egl_LIBRARY=$GLL/libEGL.so -DOPENGL_opengl_LIBRARY=$GLL/libOpenGL.so
                  -DOPENGL_glx_LIBRARY=$GLL/libGLX.so -DOPENGL_gl_LIBRARY=$GLL/libGL.so)
        echo "using the carried glvnd loaders in $GLL"
    fi
    # glvnd finds NVIDIA's EGL through a vendor file; write one if the image has the
    # library (libEGL_nvidia.so.0, from the driver) but not the file.
    if ! ls /usr/share/glvnd/egl_vendor.d/*nvidia* /etc/glvnd/egl_vendor.d/*nvidia* >/dev/null 2>&1 &&
       ldconfig -p | grep -q libEGL_nvidia.so.0; then
        mkdir -p /tmp/gpu-gl
        echo '{"file_format_version": "1.0.0", "ICD": {"library_path": "libEGL_nvidia.so.0"}}' \
            >/tmp/gpu-gl/10_nvidia.json
        export __EGL_VENDOR_LIBRARY_FILENAMES=/tmp/gpu-gl/10_nvidia.json
    fi
    ldconfig -p | grep -E 'libEGL_nvidia|libEGL.so.1|libOpenGL.so.0' | tee "$OUT/gl-libs.txt"
    GL_TESTING=ON
    [ -n "$CMOCKA_DIR" ] && GL_TESTING=OFF
    # (GL_CUDA=OFF builds without CUDA: the step then runs on Mesa's llvmpipe too.)
    if cmake -S . -B $GLB -DCMAKE_BUILD_TYPE=Release -DPIXSUM_CUDA=${GL_CUDA:-ON} -DPIXSUM_GL=ON \
           -DCMAKE_CUDA_ARCHITECTURES=$ARCH -DPIXSUM_PYTHON=OFF -DPIXSUM_MPI=OFF \
           -DPIXSUM_BUILD_TOOLS=OFF -DPIXSUM_BUILD_EXAMPLES=OFF -DBUILD_TESTING=$GL_TESTING \
           -DPIXSUM_WERROR=OFF "${GL_HINTS[@]}" >"$OUT/gl-build.log" 2>&1 &&
       cmake --build $GLB -j "$JOBS" --target pixsum_static bench_hist002 \
           $([ $GL_TESTING = ON ] && echo test_gl_hist) >>"$OUT/gl-build.log" 2>&1; then
        if [ $GL_TESTING = OFF ]; then
            mkdir -p $GLB/tests
            gcc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -Itests -I"$CMOCKA_DIR/include" \
                tests/test_gl_hist.c tests/testutil.c -o $GLB/tests/test_gl_hist $GLB/src/libpixsum.a \
                -L"$CMOCKA_DIR/lib/x86_64-linux-gnu" -lcmocka ${GLL:+-L$GLL} -lEGL -lOpenGL \
                -L"$CUDA_HOME/lib64" -lcudart -lstdc++ -lm -lpthread -fopenmp \
                -Wl,-rpath,"$CMOCKA_DIR/lib/x86_64-linux-gnu:$CUDA_HOME/lib64" \
                >>"$OUT/gl-build.log" 2>&1 || { tail -20 "$OUT/gl-build.log"; status=1; }
        fi
        PIXSUM_GL_VERBOSE=1 $GLB/tests/test_gl_hist 2>&1 | tee "$OUT/gl-test.log" | tail -14
        rc=${PIPESTATUS[0]}
        [ $rc -eq 0 ] || status=1 # 77 (no EGL display) counts as a failure here
        # and, with CUDA, a context on anything but NVIDIA's driver (a fallback to Mesa) too
        if [ "${GL_CUDA:-ON}" != OFF ] && ! grep -q '^pixsum gl: NVIDIA' "$OUT/gl-test.log"; then
            echo "gl: the context was not made on the NVIDIA driver:"
            grep '^pixsum gl:' "$OUT/gl-test.log" | head -2
            status=1
        fi
        for v in nodisplay:PIXSUM_GL_PLATFORM=bogus nocontext:PIXSUM_GL_VERSION=9.9; do
            env PIXSUM_TEST_GL_EXPECT=unavailable "${v#*:}" $GLB/tests/test_gl_hist \
                >"$OUT/gl-test-${v%%:*}.log" 2>&1 || status=1
            grep -E "PASSED|FAILED" "$OUT/gl-test-${v%%:*}.log" | head -2
        done
        step "bench_hist002 (paper 002 Tables 1-4)"
        uptime | tee "$OUT/gl-bench-uptime.txt"
        PIXSUM_GL_VERBOSE=1 $GLB/bench/bench_hist002 --min-runs ${HIST002_RUNS:-20} \
            --max-seconds ${HIST002_SECONDS:-1} --json "$OUT/hist002.json" 2>&1 | tee "$OUT/hist002.log"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    else
        tail -30 "$OUT/gl-build.log"
        status=1
    fi
fi

if has python; then step "python package: CuPy/PyTorch arrays"; bench/python/gpu_check.sh "$OUT" || status=1; fi
# pip install with the CUDA backend, then the whole Python suite against it
if has pip; then step "pip install . (CUDA backend) + python tests"; scripts/gpu-pip-check.sh "$OUT" || status=1; fi

if has torch; then
    # torch.cumsum twice next to cuda.lookback (libpixsum through ctypes) and
    # a copy floor, all in one process.
    step "torch peer (same process as pixsum)"
    PYTHONUNBUFFERED=1 python3 bench/cuda/torch_peer.py --lib "$PWD/$BUILD/src/libpixsum.so" 2>&1 |
        tee "$OUT/torch.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

# integral/hist --mpi with one GPU per rank, against one process (skips itself without mpirun)
if has mpi; then step "mpirun -np 2 pixsum integral --mpi --method cuda.lookback"; scripts/gpu-mpi-check.sh "$OUT" || status=1; fi

step "done (status $status)"
exit $status

# Makefile - the two commands of the README, and a few more:
#   make run            install what the library and the CLI need, build only those
#                       (in build-run/; CUDA only where a GPU can run it, or with
#                       RUN_CUDA=ON), run the demo on a built-in sample
#   make test           install everything, build everything, run every test (ctest)
#   make test-sanitize  the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make test-tsan      the threaded tests under ThreadSanitizer
#   make fuzz           libFuzzer targets (clang), each for FUZZ_SECONDS from its seed corpus
#   make install        install into PREFIX (default /usr/local)
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
PREFIX ?= /usr/local

RUN_BUILD ?= build-run
# The demo's build: CUDA objects only when a GPU answers (nvidia-smi -L) unless
# RUN_CUDA=ON/OFF says otherwise; no tests, examples, benchmarks, Python, GL or MPI.
RUN_CUDA ?= $(shell nvidia-smi -L >/dev/null 2>&1 && echo AUTO || echo OFF)

.PHONY: all deps deps-run configure build run test test-sanitize test-tsan fuzz install clean

all: build

deps:
	@scripts/install-deps.sh all

deps-run:
	@scripts/install-deps.sh run

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: deps-run
	cmake -S . -B $(RUN_BUILD) -DBUILD_TESTING=OFF -DPIXSUM_BUILD_EXAMPLES=OFF \
	      -DPIXSUM_BUILD_BENCH=OFF -DPIXSUM_PYTHON=OFF -DPIXSUM_GL=OFF -DPIXSUM_MPI=OFF \
	      -DPIXSUM_CUDA=$(RUN_CUDA) $(CMAKE_FLAGS)
	cmake --build $(RUN_BUILD) -j $(JOBS) --target pixsum_cli
	$(RUN_BUILD)/tools/pixsum demo

test: build
	@PIXSUM_TEST_PROBE=1 $(BUILD)/tests/test_cuda || true
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# intercept_tls_get_addr=0: the __tls_get_addr interceptor of the sanitizer
# runtimes up to LLVM 16 / GCC 13 can take a dynamic TLS block (dlopen'ed
# Mesa, libomp) for a glibc 2.19 one by chance, and LeakSanitizer's tracer
# then dies with "Tracer caught signal 11" (google/sanitizers#1322); seen once
# in three `make fuzz` runs on this Debian 12 (clang 14) machine.
SAN_TLS = intercept_tls_get_addr=0

test-sanitize: deps
	cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DPIXSUM_SANITIZE=ON \
	      -DPIXSUM_CUDA=OFF -DPIXSUM_PYTHON=OFF $(CMAKE_FLAGS)
	cmake --build build-sanitize -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:$(SAN_TLS) \
	    UBSAN_OPTIONS=print_stacktrace=1 \
	    ctest --test-dir build-sanitize --output-on-failure -j $(JOBS) -LE nosanitize

# Builds only the executables of the `threads`-labelled tests (their test names
# are their target names), not the tools and the other tests: 109 s instead of
# 140 s on the 2-core VM, and .ci/run builds the tree four times in its 30
# minutes.
test-tsan: deps
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIXSUM_TSAN=ON \
	      -DPIXSUM_KERNEL_OPT=-O0 \
	      -DPIXSUM_CUDA=OFF -DPIXSUM_PYTHON=OFF -DPIXSUM_OPENMP=OFF $(CMAKE_FLAGS)
	targets=$$(ctest --test-dir build-tsan -L threads -N | sed -n 's/^ *Test *#[0-9]*: //p'); \
	    test -n "$$targets" && cmake --build build-tsan -j $(JOBS) $$(printf -- '--target %s ' $$targets)
	ctest --test-dir build-tsan --output-on-failure -j $(JOBS) -L threads

FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= fuzz_api fuzz_image
# -O1 (as OSS-Fuzz builds): at -O2 clang with ASan and coverage took about 4
# minutes for each of the AVX2 / AVX-512 kernel files on a 2-core machine, and
# still 80-100 s at -O1; those three kernel files are built at -O0 (20-30 s),
# as in the tsan tree (PIXSUM_KERNEL_OPT, src/CMakeLists.txt).
fuzz: deps
	CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIXSUM_FUZZ=ON \
	      -DPIXSUM_SANITIZE=ON -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link \
	      "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g" -DPIXSUM_KERNEL_OPT=-O0 \
	      -DPIXSUM_CUDA=OFF -DPIXSUM_PYTHON=OFF -DPIXSUM_MPI=OFF $(CMAKE_FLAGS)
	cmake --build build-fuzz -j $(JOBS) $(addprefix --target ,$(addsuffix _fuzzer,$(FUZZ_TARGETS)))
	set -e; for t in $(FUZZ_TARGETS); do \
	    mkdir -p build-fuzz/corpus/$$t build-fuzz/crashes/$$t; \
	    echo "== $$t: $(FUZZ_SECONDS) s"; \
	    OMP_WAIT_POLICY=passive ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:$(SAN_TLS) \
	    LSAN_OPTIONS=suppressions=$(CURDIR)/tests/fuzz/lsan.supp \
	    build-fuzz/tests/$${t}_fuzzer -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 \
	        -artifact_prefix=build-fuzz/crashes/$$t/ -print_final_stats=1 \
	        build-fuzz/corpus/$$t tests/fuzz/corpus/$$t; \
	done

install: build
	cmake --install $(BUILD)

clean:
	rm -rf build build-run build-sanitize build-tsan build-fuzz

# Makefile - the two commands of the README, and a few more:
#   make run            install what is missing, build, run the demo on a built-in sample
#   make test           install what is missing, build, run every test (ctest)
#   make test-sanitize  the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make test-tsan      the threaded tests under ThreadSanitizer
#   make install        install into PREFIX (default /usr/local)
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
PREFIX ?= /usr/local

.PHONY: all deps configure build run test test-sanitize test-tsan install clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/tools/pixsum demo

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-sanitize: deps
	cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DPIXSUM_SANITIZE=ON \
	      -DPIXSUM_CUDA=OFF -DPIXSUM_PYTHON=OFF $(CMAKE_FLAGS)
	cmake --build build-sanitize -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    ctest --test-dir build-sanitize --output-on-failure -j $(JOBS) -LE nosanitize

test-tsan: deps
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIXSUM_TSAN=ON \
	      -DPIXSUM_CUDA=OFF -DPIXSUM_PYTHON=OFF -DPIXSUM_OPENMP=OFF $(CMAKE_FLAGS)
	cmake --build build-tsan -j $(JOBS)
	ctest --test-dir build-tsan --output-on-failure -j $(JOBS) -L threads

install: build
	cmake --install $(BUILD)

clean:
	rm -rf build build-sanitize build-tsan

#!/usr/bin/env bash
# gpu-mpi-check.sh - the "mpi" step of scripts/gpu-check.sh: on a machine with
# NVIDIA GPUs and Open MPI, builds the tool with CUDA and MPI, then runs
#   mpirun -np 2 pixsum integral IN --mpi --method cuda.lookback -v
# (each rank on the GPU local rank % GPU count; -v prints the devices) on a
# PGM and a striped TIFF, and `pixsum hist --mpi` with a CUDA histogram method
# when the build has one, and compares each output with the single-process
# one (the table's data after the .npy header; the histogram byte for byte).
# Without mpirun or without MPI found by CMake it says so and exits 0.
#
# usage: scripts/gpu-mpi-check.sh [OUT]   (logs in OUT, default ./gpu-out)
# Environment: CUDA_ARCH (default 90), JOBS, NP (default 2); for a dry run on
# a machine without a GPU: PIXSUM=path/to/pixsum (no build) METHOD=simd.2wh.
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${1:-$PWD/gpu-out}
ARCH=${CUDA_ARCH:-90}
JOBS=${JOBS:-$(nproc)}
NP=${NP:-2}
METHOD=${METHOD:-cuda.lookback}
BUILD=build-gpu-mpi
mkdir -p "$OUT"
# shellcheck source=scripts/mpi-env.sh
if ! . scripts/mpi-env.sh; then
    echo "skipped: no mpirun on this machine (Debian: openmpi-bin libopenmpi-dev)"
    exit 0
fi
if [ -z "${PIXSUM:-}" ]; then
    cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release -DPIXSUM_CUDA=ON -DPIXSUM_MPI=ON \
        -DCMAKE_CUDA_ARCHITECTURES=$ARCH $PIXSUM_MPI_CMAKE -DPIXSUM_PYTHON=OFF -DPIXSUM_GL=OFF \
        -DPIXSUM_BUILD_EXAMPLES=OFF -DBUILD_TESTING=OFF -DPIXSUM_WERROR=OFF \
        >"$OUT/mpi-build.log" 2>&1 || { tail -20 "$OUT/mpi-build.log"; exit 1; }
    if ! grep -q "MPI=TRUE" "$OUT/mpi-build.log"; then
        echo "skipped: CMake found no MPI (Debian: libopenmpi-dev)"
        exit 0
    fi
    cmake --build $BUILD -j "$JOBS" --target pixsum_cli >>"$OUT/mpi-build.log" 2>&1 ||
        { tail -30 "$OUT/mpi-build.log"; exit 1; }
    PIXSUM=$PWD/$BUILD/tools/pixsum
fi
MPI=(mpirun --allow-run-as-root --oversubscribe -np "$NP")
W=4099 H=3001
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
{ printf 'P5\n%d %d\n255\n' $W $H; head -c $((W * H)) /dev/urandom; } >"$T/in.pgm"
INPUTS="in.pgm"
if "$PIXSUM" convert "$T/in.pgm" "$T/in.tif" >/dev/null 2>&1; then INPUTS="in.pgm in.tif"; else
    echo "this pixsum has no TIFF support (libtiff-dev missing): PGM input only"; fi
status=0
# same_table A B BYTES: the last BYTES of two .npy files (their data) agree.
same_table() {
    if [ ! -s "$1" ] || [ ! -s "$2" ]; then echo "  MISSING table: $1 $2"; status=1
    elif cmp -s <(tail -c "$3" "$1") <(tail -c "$3" "$2"); then echo "  same table"; else
        echo "  DIFFERENT tables: $1 $2"; status=1; fi
}
for in in $INPUTS; do
    for type in u64 u32; do
        echo "integral $in -> $type: 1 process (CPU, then $METHOD) vs $NP ranks ($METHOD)"
        rm -f "$T/ref_cpu.npy" "$T/ref_gpu.npy" "$T/mpi.npy"
        "$PIXSUM" integral "$T/$in" -o "$T/ref_cpu.npy" --type $type --method serial.2wh || status=1
        "$PIXSUM" integral "$T/$in" -o "$T/ref_gpu.npy" --type $type --method "$METHOD" ||
            status=1
        "${MPI[@]}" "$PIXSUM" integral "$T/$in" -o "$T/mpi.npy" --type $type --mpi \
            --method "$METHOD" -v 2>&1 | tee -a "$OUT/mpi.log" | sed 's/^/  /'
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
        [ $type = u64 ] && bytes=$((W * H * 8)) || bytes=$((W * H * 4))
        same_table "$T/ref_cpu.npy" "$T/mpi.npy" $bytes
        same_table "$T/ref_gpu.npy" "$T/mpi.npy" $bytes
    done
done
# A CUDA histogram method, if this build has one.
HM=${HIST_METHOD:-$("$PIXSUM" methods 2>/dev/null | grep -o 'cuda\.hist[a-z0-9_.]*' | head -1)}
if [ -n "$HM" ]; then
    last=${INPUTS##* }
    echo "hist $last --method $HM: 1 process vs $NP ranks"
    if ! "$PIXSUM" hist "$T/$last" --format json --method "$HM" >"$T/h_ref.json"; then
        echo "  FAILED in one process"; status=1
    elif ! "${MPI[@]}" "$PIXSUM" hist "$T/$last" --format json --method "$HM" --mpi -v \
        >"$T/h_mpi.json" 2>>"$OUT/mpi.log"; then
        echo "  FAILED on $NP ranks (see mpi.log)"; status=1
    elif cmp -s "$T/h_ref.json" "$T/h_mpi.json"; then echo "  same histogram"; else
        echo "  DIFFERENT histograms"; status=1; fi
else
    echo "no CUDA histogram method in this build: hist --mpi on the GPU not checked"
fi
# Time per rank and exchange time of the GPU table at a size that fills the
# GPUs: one rank, then NP ranks (the bench prints the slowest rank's phases).
BENCH_SIZE=${BENCH_SIZE:-16384x16384}
for n in 1 "$NP"; do
    echo "bench: $n rank(s), $BENCH_SIZE u8 -> u64, $METHOD (best of 5, slowest rank)"
    mpirun --allow-run-as-root --oversubscribe -np "$n" "$PIXSUM" integral --mpi \
        --bench "$BENCH_SIZE" --type u64 --method "$METHOD" --repeat 5 -v 2>&1 |
        tee -a "$OUT/mpi.log" | sed 's/^/  /'
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
echo "mpi step status $status"
exit $status

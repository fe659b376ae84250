#!/usr/bin/env bash
# mpi-scaling.sh - strong and weak scaling of the distributed integral image
# (`pixsum integral --mpi --bench`, one thread per rank) on one many-core
# host, with the host's memory floor for the same bytes measured in the same
# run (bench/mpi/copy_floor.py). Builds the CLI with MPI (no CUDA) unless
# PIXSUM names a built one. Results: the printed tables, and $OUT/scaling.log.
#
# usage: scripts/mpi-scaling.sh [OUT]       (default build/mpi-scaling)
# Environment: RANKS (default "1 2 4 8 16"), SIZE (default 16384: the strong
# scaling image is SIZE x SIZE, a weak-scaling rank holds SIZE x SIZE/16 rows),
# TYPE (table type, default u64), METHOD (each rank's local method, default
# simd.2wh: one CPU thread; in a CUDA build "auto" could move a host image to
# the GPU), REPEAT (default 5), PIXSUM, JOBS, PYTHON (an
# interpreter with NumPy for the floor; default: the first of python3 and
# /usr/bin/python3 that imports it).
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${1:-$PWD/build/mpi-scaling}
RANKS=${RANKS:-1 2 4 8 16}
SIZE=${SIZE:-16384}
TYPE=${TYPE:-u64}
METHOD=${METHOD:-simd.2wh}
REPEAT=${REPEAT:-5}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT"
# shellcheck source=scripts/mpi-env.sh
. scripts/mpi-env.sh || exit 1
if [ -z "${PIXSUM:-}" ]; then
    B=build-mpi-scaling
    cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DPIXSUM_CUDA=OFF -DPIXSUM_MPI=ON \
        $PIXSUM_MPI_CMAKE -DPIXSUM_PYTHON=OFF -DPIXSUM_GL=OFF -DBUILD_TESTING=OFF \
        -DPIXSUM_BUILD_EXAMPLES=OFF -DPIXSUM_BUILD_BENCH=OFF >"$OUT/build.log" 2>&1 &&
        cmake --build $B -j "$JOBS" --target pixsum_cli >>"$OUT/build.log" 2>&1 ||
        { tail -20 "$OUT/build.log"; exit 1; }
    PIXSUM=$PWD/$B/tools/pixsum
fi
log="$OUT/scaling.log"
: >"$log"
echo "host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" | tee -a "$log"
PY=${PYTHON:-}
for p in python3 /usr/bin/python3; do
    [ -z "$PY" ] && "$p" -c "import numpy" 2>/dev/null && PY=$p
done
"${PY:-python3}" bench/mpi/copy_floor.py --size ${SIZE}x${SIZE} \
    --ranks "$(echo $RANKS | tr ' ' ',')" --repeat "$REPEAT" | tee -a "$log"
status=0
run() { # label ranks W H
    echo "== $1: $2 rank(s), $3x$4 u8 -> $TYPE, $METHOD" | tee -a "$log"
    $PIXSUM_MPIRUN --bind-to core -np "$2" "$PIXSUM" integral --mpi --bench "$3x$4" \
        --type "$TYPE" --method "$METHOD" --threads 1 --repeat "$REPEAT" 2>&1 | tee -a "$log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
}
for n in $RANKS; do run strong "$n" "$SIZE" "$SIZE"; done
for n in $RANKS; do run weak "$n" "$SIZE" $((SIZE / 16 * n)); done
exit $status

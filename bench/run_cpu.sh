#!/bin/sh
# run_cpu.sh - the CPU integral-image measurements of docs/benchmarks.md
# Writes JSON records, terminal tables and the plots under OUT (default
# build/bench-cpu; raw outputs never go into the source tree). Usage:
#   bench/run_cpu.sh [BUILD_DIR] [OUT] [PARTS]
# PARTS: a space-separated subset of "headline threads sizes paper000 paper001
# paper003 sweep plots" (default all). Every table compares methods, the OpenCV
# peer and the memory floor measured in the same process, one case after the
# other. On a shared machine, PIXSUM_BENCH_NICE=1 runs every case at nice -20
# (root only) so that other processes rarely preempt the timed loops. Do not
# use real-time priority (chrt -f) instead: OpenMP threads spinning at FIFO
# priority with more threads than cores never yield, and starve the machine.
set -eu
BUILD=${1:-build}
OUT=${2:-build/bench-cpu}
PARTS=${3:-"headline threads sizes paper000 paper001 paper003 sweep plots"}
PIXSUM="$BUILD/tools/pixsum"
mkdir -p "$OUT"
PRIO=""
if [ "${PIXSUM_BENCH_NICE:-0}" = 1 ]; then PRIO="nice -n -20"; fi
want() { case " $PARTS " in *" $1 "*) return 0;; esac; return 1; }
run() { name=$1; shift; echo "## $name: $PRIO pixsum bench $*" | tee "$OUT/$name.txt";
        $PRIO "$PIXSUM" bench --json "$OUT/$name.json" "$@" | tee -a "$OUT/$name.txt"; }

# 1. headline figures, 1 thread
if want headline; then
run headline_u8 --op integral --pair u8:u32 --size 1024,8192 --method simd.2wh,peer.opencv
run headline_f32 --op integral --pair f32:f64 --size 4096 --method simd.2wh,peer.opencv
run headline_sq --op integral_sq --pair u8:u32 --size 4096 --method simd.2wh,peer.opencv
fi
# 2. 2 threads at 4096^2
want threads && run threads_4096 --op integral --pair u8:u32 --size 4096 --threads 1,2 \
    --method simd.2wh,omp.banded,omp.transpose,omp.chunks,p001.unroll6
# 3. time vs pixels, every single-threaded method (paper 001's three serial methods)
want sizes && run sizes --op integral --pair u8:u32 --size 256,512,1024,2048,4096,8192 --max-seconds 2 \
    --method serial.2wh,serial.3wh,serial.dual,simd.2wh,peer.opencv
# 4. paper 000: serial vs OpenMP transpose over sizes and threads
want paper000 && run paper000 --op integral --pair u8:u32 --size 1024,2048,4096,8192 --threads 1,2,4 \
    --max-seconds 1 --method serial.2wh,omp.transpose
# 5. paper 001: the four row scans in its threaded method, 1 and 2 threads
want paper001 && run paper001 --op integral --pair u8:u32 --size 1024,4096 --threads 1,2 --max-seconds 2 \
    --method serial.2wh,serial.3wh,serial.dual,p001.plain,p001.unroll6,p001.sse2,p001.blelloch
# 6. paper 003: CPU vs CPUxT at 4096^2 (f32 like the paper's images)
want paper003 && run paper003 --op integral --pair f32:f64 --size 4096 --threads 1,2,4 --max-seconds 2 \
    --method serial.dual,omp.chunks
# 7. thread sweep for the speed-up plot
want sweep && run sweep --op integral --pair u8:u32 --size 4096 --threads 1,2,3,4 --max-seconds 1 \
    --method omp.banded,omp.transpose,omp.chunks,p001.unroll6
want plots && /usr/bin/python3 bench/plot_cpu.py "$OUT/sizes.json" "$OUT/sweep.json" "$OUT"
exit 0

#!/bin/bash
# Short streaming launches and dependent pointer chases (src/stream_sizes.cu). Device call:
#   cd microbench && ./run_stream_sizes.sh "$OUT"
# Writes OUT/stream_sizes.csv (ncu raw CSV of every stream / page_touch launch, cold L2, clocks as found),
# OUT/stream_sizes_plan.txt (the launches in order), OUT/chase.txt (pointer chases, no profiler) and OUT/log.txt.
set -u
OUTDIR=$(readlink -f "${1:-out}")
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUTDIR" "$HERE/build"
LOG="$OUTDIR/log.txt"
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv
  nvcc --version | tail -2
  nvcc -O3 -arch=sm_90a -o "$HERE/build/stream_sizes" "$HERE/src/stream_sizes.cu" 2>&1
} > "$LOG" 2>&1 || exit 1
"$HERE/build/stream_sizes" chase > "$OUTDIR/chase.txt" 2>> "$LOG"
echo "chase rc=$?" >> "$LOG"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$LOG"
ncu --clock-control none --cache-control all \
    --metrics gpc__cycles_elapsed.max,sm__cycles_active.max,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,smsp__inst_executed.sum,launch__grid_size,launch__registers_per_thread \
    --csv --page raw "$HERE/build/stream_sizes" > "$OUTDIR/stream_sizes.csv" 2>> "$LOG"
echo "ncu rc=$?" >> "$LOG"
"$HERE/build/stream_sizes" > "$OUTDIR/stream_sizes_plan.txt" 2>> "$LOG"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$LOG"
date -u +%Y-%m-%dT%H:%M:%SZ >> "$LOG"

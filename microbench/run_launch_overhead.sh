#!/bin/bash
# Per-launch fixed cost under Nsight Compute (the calibration records' cycle metric). Device call:
#   cd microbench && ./run_launch_overhead.sh "$OUT"
# Writes OUT/launch_overhead.csv (ncu raw CSV) and OUT/launch_overhead_log.txt. Clocks are not touched.
set -u
OUTDIR=$(readlink -f "${1:-out}")
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUTDIR" "$HERE/build"
nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -o "$HERE/build/empty_kernel" "$HERE/src/empty_kernel.cu" > "$OUTDIR/launch_overhead_log.txt" 2>&1 || exit 1
date -u +%Y-%m-%dT%H:%M:%SZ >> "$OUTDIR/launch_overhead_log.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv >> "$OUTDIR/launch_overhead_log.txt"
ncu --clock-control none --cache-control all \
    --metrics gpc__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum,launch__grid_size,sm__cycles_active.avg,sm__cycles_active.max \
    --csv --page raw "$HERE/build/empty_kernel" > "$OUTDIR/launch_overhead.csv" 2>> "$OUTDIR/launch_overhead_log.txt"
echo "ncu rc=$?" >> "$OUTDIR/launch_overhead_log.txt"

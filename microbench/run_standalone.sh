#!/bin/bash
# Build and run one self-contained microbenchmark src/PROGRAM.cu (its own main) on the device; clocks are never
# touched. usage: microbench/run_standalone.sh PROGRAM OUTDIR RESULT_FILE
# OUTDIR gets RESULT_FILE (the program's stdout) and log.txt (date, GPU, clocks before and after, build output).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
P=${1:?program}
OUT=${2:?outdir}
RES=${3:?result file}
mkdir -p "$OUT"
{
  date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv
  nvcc -O3 -arch=sm_90a -o "$OUT/$P" "$HERE/src/$P.cu" 2>&1
  nvidia-smi --query-gpu=clocks.sm --format=csv
  "$OUT/$P" > "$OUT/$RES" 2>&1; echo "rc $?"
  nvidia-smi --query-gpu=clocks.sm --format=csv
  date -u
} > "$OUT/log.txt" 2>&1
rm -f "$OUT/$P"

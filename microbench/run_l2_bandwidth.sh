#!/bin/bash
# L2 read bandwidth from all SMs, L2-resident buffers of 4-24 MiB (src/l2_bandwidth.cu).
# usage (device): microbench/run_l2_bandwidth.sh OUTDIR      (~5 s). Clocks are never touched.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?outdir}
P=l2_bandwidth
mkdir -p "$OUT"
{
  date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv
  nvcc -O3 -arch=sm_90a -o "$OUT/$P" "$HERE/src/$P.cu" 2>&1
  "$OUT/$P" > "$OUT/l2_bandwidth.txt" 2>&1; echo "rc $?"
  nvidia-smi --query-gpu=clocks.sm --format=csv
  date -u
} > "$OUT/log.txt" 2>&1
rm -f "$OUT/$P"
cat "$OUT/l2_bandwidth.txt"

#!/bin/bash
# DRAM latency of a warp load over L lines (max of L), unloaded and under background load (src/dram_fanout.cu).
# usage (device): microbench/run_dram_fanout.sh OUTDIR      (~1 min). Clocks are never touched.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?outdir}
P=dram_fanout
mkdir -p "$OUT"
{
  date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv
  nvcc -O3 -arch=sm_90a -o "$OUT/$P" "$HERE/src/$P.cu" 2>&1
  nvidia-smi --query-gpu=clocks.sm --format=csv
  "$OUT/$P" > "$OUT/fanout.txt" 2>&1; echo "rc $?"
  nvidia-smi --query-gpu=clocks.sm --format=csv
  date -u
} > "$OUT/log.txt" 2>&1
rm -f "$OUT/$P"
tail -3 "$OUT/fanout.txt"

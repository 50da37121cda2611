#!/bin/bash
# Which SMs share L2 lookups, and where does the CTA scheduler put CTAs? (src/l2_coalesce_pairs.cu)
# usage (device): microbench/run_l2_pairs.sh OUTDIR      (~3 min: ~430 profiled launches)
# Clocks are never touched (--clock-control none); the L2 is flushed before every launch (--cache-control all).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?outdir}
P=l2_coalesce_pairs
mkdir -p "$OUT"
M=dram__bytes_read.sum,gpc__cycles_elapsed.max,lts__t_sectors_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
{
  date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv
  nvcc -O3 -arch=sm_90a -o "$OUT/$P" "$HERE/src/$P.cu" 2>&1
  "$OUT/$P" map > "$OUT/map.txt" 2>&1; echo "map rc $?"
  "$OUT/$P" > "$OUT/plan.txt" 2>&1; tail -1 "$OUT/plan.txt"
  ncu --clock-control none --cache-control all --kernel-name l2_pair_read --metrics $M --csv "$OUT/$P" > "$OUT/ncu.csv" 2> "$OUT/ncu.err"
  echo "ncu rc $?"; tail -3 "$OUT/ncu.err"
  nvidia-smi --query-gpu=clocks.sm --format=csv
  date -u
} > "$OUT/log.txt" 2>&1
rm -f "$OUT/$P"
grep -c l2_pair_read "$OUT/ncu.csv"

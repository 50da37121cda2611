#!/bin/bash
# Do TMA (cp.async.bulk) loads share L2 lookups across the SMs of a GPC as ld.global.cg reads do?
# (src/l2_tma_pairs.cu: 6 profiled launches, ~15 s). Parse with python3 microbench/parse_l2_tma_pairs.py OUTDIR.
# Clocks are never touched (--clock-control none); the L2 is flushed before every launch (--cache-control all).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?outdir}
P=l2_tma_pairs
mkdir -p "$OUT"
M=dram__bytes_read.sum,gpc__cycles_elapsed.max,lts__t_sectors_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
{
  date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv
  nvcc -O3 -arch=sm_90a -I"$HERE/src" -o "$OUT/$P" "$HERE/src/$P.cu" 2>&1
  cuobjdump -sass "$OUT/$P" | grep -E 'Function|UBLKCP|UTMA|SYNCS' > "$OUT/$P.sass" 2>&1
  "$OUT/$P" > "$OUT/plan.txt" 2>&1; tail -1 "$OUT/plan.txt"
  ncu --clock-control none --cache-control all --kernel-name regex:l2_tma_pair_read --metrics $M --csv "$OUT/$P" > "$OUT/ncu.csv" 2> "$OUT/ncu.err"
  echo "ncu rc $?"; tail -3 "$OUT/ncu.err"
  nvidia-smi --query-gpu=clocks.sm --format=csv
  date -u
} > "$OUT/log.txt" 2>&1
rm -f "$OUT/$P"
grep -c l2_tma_pair_read "$OUT/ncu.csv"

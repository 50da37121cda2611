#!/bin/bash
# Same-line reads from many SMs under Nsight Compute (src/l2_shared_read.cu): does a request that hits a line whose
# DRAM fill is in flight count as L2 tag traffic, and what does it cost? usage (device): microbench/run_l2_shared.sh OUTDIR [PROGRAM]
# PROGRAM: l2_shared_read (default: lock-step readers) or l2_coalesce_skew (readers skewed by a rotation offset)
# Clocks are never touched (--clock-control none); the L2 is flushed before every launch (--cache-control all).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?outdir}
P=${2:-l2_shared_read}
mkdir -p "$OUT"
M=dram__bytes_read.sum,gpc__cycles_elapsed.max,gpu__time_duration.sum,lts__t_sectors_op_read.sum,lts__t_sector_op_read_hit_rate.pct,lts__t_requests_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,sm__cycles_elapsed.avg.per_second
{
  date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv
  nvcc -O3 -arch=sm_90a -o "$OUT/$P" "$HERE/src/$P.cu" 2>&1
  "$OUT/$P" > "$OUT/plan.txt" 2>&1; cat "$OUT/plan.txt"
  ncu --clock-control none --cache-control all --metrics $M --csv "$OUT/$P" > "$OUT/ncu.csv" 2> "$OUT/ncu.err"
  echo "ncu rc $?"; tail -3 "$OUT/ncu.err"
  nvidia-smi --query-gpu=clocks.sm --format=csv
} > "$OUT/log.txt" 2>&1
grep -c "$P" "$OUT/ncu.csv"

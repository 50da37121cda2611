#!/bin/bash
# Build and run one self-contained microbenchmark src/PROGRAM.cu (its own main) on the device, keeping its SASS and
# the GPU's clocks / driver before and after; clocks are never touched.
# usage: microbench/run_with_sass.sh PROGRAM OUTDIR [TIMEOUT_S (default 120)]
# OUTDIR gets PROGRAM.txt (the program's output), log.txt (date, build, exit code), smi_before.txt /
# smi_after.txt and PROGRAM.sass (cuobjdump -sass of the binary). run_standalone.sh is the lighter variant.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
P=${1:?program}
OUT=${2:?outdir}
LIMIT=${3:-120}
mkdir -p "$OUT"
snap() {
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version,vbios_version,temperature.gpu,power.draw --format=csv
  nvidia-smi -q -d CLOCK
}
{
  date -u; nvcc --version | tail -2
  nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -o "$OUT/$P" "$HERE/src/$P.cu" 2>&1 | grep -v "^ptxas info *: Used\|Compiling entry\|bytes stack frame" | head -20
  cuobjdump -sass "$OUT/$P" > "$OUT/$P.sass" 2>&1
  snap > "$OUT/smi_before.txt" 2>&1
  timeout "$LIMIT" "$OUT/$P" > "$OUT/$P.txt" 2>&1; echo "rc $?"
  snap > "$OUT/smi_after.txt" 2>&1
  date -u
} > "$OUT/log.txt" 2>&1
rm -f "$OUT/$P"
grep -c . "$OUT/$P.txt"; grep -E "^(OCC|DEV|CUDAERR|DONE)" "$OUT/$P.txt"; tail -3 "$OUT/log.txt"

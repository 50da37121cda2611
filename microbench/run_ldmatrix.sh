#!/bin/bash
# ldmatrix latency and throughput on the H200 (src/ldmatrix.cu): build, run, snapshot clocks/driver
# before and after. Clocks are never touched. usage: microbench/run_ldmatrix.sh OUTDIR
# OUTDIR gets ldmatrix.txt (the program's output), log.txt (date, build, exit code), smi_before.txt /
# smi_after.txt, ldmatrix.sass (the SASS of the timed kernels). Parse here with
# python3 microbench/parse_ldmatrix.py OUTDIR.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?outdir}
mkdir -p "$OUT"
snap() {
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version,vbios_version,temperature.gpu,power.draw --format=csv
  nvidia-smi -q -d CLOCK
}
{
  date -u; nvcc --version | tail -2
  nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -o "$OUT/ldmatrix" "$HERE/src/ldmatrix.cu" 2>&1 | grep -v "^ptxas info *: Used\|Compiling entry\|bytes stack frame" | head -20
  cuobjdump -sass "$OUT/ldmatrix" > "$OUT/ldmatrix.sass" 2>&1
  snap > "$OUT/smi_before.txt" 2>&1
  timeout 120 "$OUT/ldmatrix" > "$OUT/ldmatrix.txt" 2>&1; echo "rc $?"
  snap > "$OUT/smi_after.txt" 2>&1
  date -u
} > "$OUT/log.txt" 2>&1
rm -f "$OUT/ldmatrix"
grep -c . "$OUT/ldmatrix.txt"; grep -E "^(OCC|DEV|CUDAERR|DONE)" "$OUT/ldmatrix.txt"; tail -3 "$OUT/log.txt"

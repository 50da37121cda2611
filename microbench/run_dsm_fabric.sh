#!/bin/bash
# DSM over the GPC fabric on the H200 (src/dsm_fabric.cu): build, run, snapshot clocks/driver before and after.
# Clocks are never touched. usage: microbench/run_dsm_fabric.sh OUTDIR
# OUTDIR gets dsm_fabric.txt (the program's output), log.txt (date, build, exit code), smi_before.txt /
# smi_after.txt (nvidia-smi -q -d CLOCK plus name/driver/clocks CSV). Parse here with
# python3 microbench/parse_dsm_fabric.py OUTDIR.
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
  nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -o "$OUT/dsm_fabric" "$HERE/src/dsm_fabric.cu" 2>&1
  snap > "$OUT/smi_before.txt" 2>&1
  timeout 180 "$OUT/dsm_fabric" > "$OUT/dsm_fabric.txt" 2>&1; echo "rc $?"
  snap > "$OUT/smi_after.txt" 2>&1
  date -u
} > "$OUT/log.txt" 2>&1
rm -f "$OUT/dsm_fabric"
grep -c . "$OUT/dsm_fabric.txt"; grep -E "^(OCC|DEV|CUDAERR|MAPERR|OCCERR|DONE)" "$OUT/dsm_fabric.txt"; tail -3 "$OUT/log.txt"

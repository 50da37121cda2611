#!/bin/bash
# mbarrier wake-up latency on the H200 (src/mbar_wakeup.cu): build, run, snapshot clocks/driver before and after.
# Clocks are never touched. usage: microbench/run_mbar_wakeup.sh OUTDIR
# OUTDIR gets mbar_wakeup.txt (the program's output), log.txt (date, build, exit code), smi_before.txt /
# smi_after.txt, mbar_wakeup.sass (the SASS of the timed kernel). Parse here with
# python3 microbench/parse_mbar_wakeup.py OUTDIR.
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
  nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -o "$OUT/mbar_wakeup" "$HERE/src/mbar_wakeup.cu" 2>&1 | grep -v "^ptxas info *: Used\|Compiling entry\|bytes stack frame" | head -20
  cuobjdump -sass "$OUT/mbar_wakeup" > "$OUT/mbar_wakeup.sass" 2>&1
  snap > "$OUT/smi_before.txt" 2>&1
  timeout 120 "$OUT/mbar_wakeup" > "$OUT/mbar_wakeup.txt" 2>&1; echo "rc $?"
  snap > "$OUT/smi_after.txt" 2>&1
  date -u
} > "$OUT/log.txt" 2>&1
rm -f "$OUT/mbar_wakeup"
grep -c . "$OUT/mbar_wakeup.txt"; grep -E "^(DEV|CUDAERR|DONE)" "$OUT/mbar_wakeup.txt"; tail -3 "$OUT/log.txt"

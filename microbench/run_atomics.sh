#!/bin/bash
# Global atomics at the L2 (src/atomics.cu): dependent atom/cas/exch/fence latency, red/atom throughput per
# address pattern, a Triton-style atom.cas spin-lock handoff between CTAs. ~10 s on the H200.
# usage (device): microbench/run_atomics.sh OUTDIR   -> OUTDIR/atomics.txt, log.txt, smi_before.txt, smi_after.txt
# Clocks are never touched.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?outdir}
mkdir -p "$OUT"
nvidia-smi -q -d CLOCK > "$OUT/smi_before.txt" 2>&1
"$HERE/run_standalone.sh" atomics "$OUT" atomics.txt
nvidia-smi -q -d CLOCK > "$OUT/smi_after.txt" 2>&1
nvcc --version | tail -2 >> "$OUT/log.txt"

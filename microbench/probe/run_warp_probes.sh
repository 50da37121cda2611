#!/bin/bash
# Per-warp probed launches of row kernels (probe_ptx.py per-warp mode, run_probes_gpu.py --per-warp): lane 0 of every
# warp records its start, each bar.sync arrive / return and its exit, cold L2 and warm, beside the launches unprobed.
# How far apart a CTA's warps reach a bar.sync is how unevenly their loads came back (ncu's `barrier` stall, 2-5 per
# issue on the card's row kernels, ~0.3 in the model). Clocks are never touched; nvidia-smi before and after.
# usage: microbench/probe/run_warp_probes.sh OUTDIR [RECORD_DIR ...]   Packs OUTDIR/../warp_probes.tgz. ~1 minute.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
R=$(cd "$HERE/../../workloads/records" && pwd)
OUT=${1:?outdir}
shift
DIRS=${*:-$R/h200/rmsnorm_rows4096_cols4096 $R/h200_heldout/rmsnorm_rows8192_cols2048 \
  $R/h200_heldout/rmsnorm_rows2048_cols8192 $R/h200_gallery/softmax_r32_c3000_full \
  $R/h200_gallery/colsum_atomic_r100_c200_full $R/h200_gallery/rmsnorm_bwd_r30_c256_full \
  $R/h200_heldout/swiglu_n4194304}
mkdir -p "$OUT"
snap() {
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version,vbios_version,temperature.gpu,power.draw --format=csv
  nvidia-smi -q -d CLOCK
}
snap > "$OUT/smi_before.txt" 2>&1
{ date -u; python3 "$HERE/run_probes_gpu.py" "$OUT" $DIRS --per-warp --max-probes 64 --reps 1; echo "rc $?"; date -u; } > "$OUT/log.txt" 2>&1
snap > "$OUT/smi_after.txt" 2>&1
tail -8 "$OUT/log.txt"
for f in "$OUT"/*.npz; do python3 "$HERE/compare.py" "$f" --warps > "${f%.npz}.summary.json" 2>&1; done
tar -czf "$OUT/../warp_probes.tgz" -C "$OUT" . && ls -la "$OUT/../warp_probes.tgz"

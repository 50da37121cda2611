#!/bin/bash
# Probed launches of the TMA GEMM records (probe_ptx.py, run_probes_gpu.py): every CTA's clock64 timeline of its
# mbarrier waits, TMA issues and wgmma waits, cold L2 and warm, beside the same launches unprobed. Clocks are never
# touched; nvidia-smi before and after. usage: microbench/probe/run_probes.sh OUTDIR [RECORD_DIR ...]
# (default: the lone-CTA held-out GEMM, the multi-wave held-out GEMM, two calibration TMA GEMMs, one cluster GEMM).
# Packs OUTDIR/../probes.tgz (a device call brings few files back). ~1 minute on an H200.
# PER_WARP=1 (run_warp_probes.sh): lane 0 of every warp records and each bar.sync is probed, one repetition, each
# result summarised by compare.py --warps, packed as OUTDIR/../warp_probes.tgz.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
R=$(cd "$HERE/../../workloads/records" && pwd)
OUT=${1:?outdir}
shift
DIRS=${*:-$R/h200_heldout/gemm_tma_M1024_N1024_K4096 $R/h200_heldout/gemm_tma_M3072_N3072_K1024 \
  $R/h200/gemm_tma_M2048_N2048_K2048 $R/h200/gemm_tma_M4096_N4096_K4096 \
  $R/h200_cluster/cluster_gemm_tma_mc2_M2048_N2048_K2048}
ARGS="" PACK=probes.tgz
if [ "${PER_WARP:-0}" = 1 ]; then ARGS="--per-warp --max-probes 64 --reps 1" PACK=warp_probes.tgz; fi
mkdir -p "$OUT"
snap() {
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version,vbios_version,temperature.gpu,power.draw --format=csv
  nvidia-smi -q -d CLOCK
}
snap > "$OUT/smi_before.txt" 2>&1
{ date -u; python3 "$HERE/run_probes_gpu.py" "$OUT" $DIRS $ARGS; echo "rc $?"; date -u; } > "$OUT/log.txt" 2>&1
snap > "$OUT/smi_after.txt" 2>&1
tail -8 "$OUT/log.txt"
if [ -n "$ARGS" ]; then
  for f in "$OUT"/*.npz; do [ -e "$f" ] || continue; python3 "$HERE/compare.py" "$f" --warps > "${f%.npz}.summary.json" 2>&1; done
fi
tar -czf "$OUT/../$PACK" -C "$OUT" . && ls -la "$OUT/../$PACK"

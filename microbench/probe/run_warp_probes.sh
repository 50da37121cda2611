#!/bin/bash
# Per-warp probed launches of row kernels (probe_ptx.py per-warp mode, run_probes_gpu.py --per-warp): lane 0 of every
# warp records its start, each bar.sync arrive / return and its exit, cold L2 and warm, beside the launches unprobed.
# How far apart a CTA's warps reach a bar.sync is how unevenly their loads came back (ncu's `barrier` stall, 2-5 per
# issue on the card's row kernels, ~0.3 in the model); each CTA's start on its SM times the CTA dispatch. Clocks are
# never touched. usage: microbench/probe/run_warp_probes.sh OUTDIR [RECORD_DIR ...]   run_probes.sh with PER_WARP=1:
# packs OUTDIR/../warp_probes.tgz. ~1 minute.
HERE=$(cd "$(dirname "$0")" && pwd)
R=$(cd "$HERE/../../workloads/records" && pwd)
OUT=${1:?outdir}
shift
DIRS=${*:-$R/h200/rmsnorm_rows4096_cols4096 $R/h200_heldout/rmsnorm_rows8192_cols2048 \
  $R/h200_heldout/rmsnorm_rows2048_cols8192 $R/h200_gallery/softmax_r32_c3000_full \
  $R/h200_gallery/colsum_atomic_r100_c200_full $R/h200_gallery/rmsnorm_bwd_r30_c256_full \
  $R/h200_heldout/swiglu_n4194304}
PER_WARP=1 exec bash "$HERE/run_probes.sh" "$OUT" $DIRS

#!/bin/bash
# Where the stall cycles sit: Nsight Compute's warp-state sampling per SASS instruction (SourceCounters section,
# the "Warp Stall Sampling" columns of the source page) for a few bundled launch records whose whole-kernel stall
# mix the model gets wrong (docs/accuracy.md): the cluster GEMM's `barrier` (H200 3.9 per issue in every variant,
# model 1.3), the column-sum atomics' `barrier` (11.65 vs 0.67), the causal attention's long_scoreboard, softmax
# r32 c3000's `wait`, two GEMMs, the mma.sync GEMM whose `barrier` / `short_scoreboard` the model over-counts
# (gemm80: 1.55 / 2.33 per issue vs 0.39 / 1.42) and the fp8 TMA GEMM that waits for its tiles on the card.
# Clocks as found (--clock-control none), cold L2 (--cache-control all); never changes clocks or resets the GPU. usage: OUT=DIR microbench/source_stalls/device_run.sh [RECORD_DIR ...]
# Writes $OUT/ss/<record>.csv (ncu --page source --csv --print-source sass), <record>.raw.csv (--page raw),
# <record>.pcsamp.json (per-PC samples through ncu_report: dump_pcsamp.py), smi_before/after, versions; parse with python3 microbench/source_stalls/parse_source_stalls.py $OUT/ss.
set -u
cd "$(dirname "$0")/../.."
D=$OUT/ss; mkdir -p $D
RECS=${*:-workloads/records/h200_cluster/cluster_gemm_tma_mc2_M2048_N2048_K2048
workloads/records/h200_cluster/cluster_gemm_tma_mc2_rlx_M2048_N2048_K2048
workloads/records/h200_gallery/colsum_atomic_r100_c200_full
workloads/records/h200_gallery/attn_bh2_s128_d64_causal_full
workloads/records/h200_gallery/attn_bh2_s100_d64_full
workloads/records/h200_gallery/softmax_r32_c3000_full
workloads/records/h200_gallery/gemm_f16_M256_N128_K256_64x128_s2_relu_full
workloads/records/h200_gallery/rmsnorm_bwd_r30_c256_full
workloads/records/h200/gemm_tma_M2048_N2048_K2048
workloads/records/h200/gemm80_M2048_N2048_K2048
workloads/records/h200_gallery/gemm_fp8_M128_N256_K128_full}
date -u +%Y-%m-%dT%H:%M:%SZ > $D/date.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv > $D/smi_before.csv 2>&1
{ python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"; ncu --version | tail -1; } > $D/versions.txt 2>&1
for r in $RECS; do
  n=$(basename $r)
  echo "== $n $(date -u +%H:%M:%S)"
  timeout 150 ncu --clock-control none --cache-control all --section SourceCounters --section WarpStateStats \
    --import-source no -o $D/$n -f python3 microbench/cluster_gemm/run_records_gpu.py --no-check --reps 1 $r \
    > $D/$n.log 2>&1
  echo "ncu rc=$?"; tail -2 $D/$n.log
  ncu -i $D/$n.ncu-rep --page source --csv --print-source sass > $D/$n.csv 2> $D/$n.err
  echo "source rc=$? lines=$(wc -l < $D/$n.csv)"; head -c 600 $D/$n.csv; echo
  ncu -i $D/$n.ncu-rep --page raw --csv > $D/$n.raw.csv 2>> $D/$n.err
  timeout 60 python3 microbench/source_stalls/dump_pcsamp.py $D/$n.ncu-rep > $D/$n.pcsamp.json 2>> $D/$n.err
  echo "pcsamp rc=$? bytes=$(wc -c < $D/$n.pcsamp.json)"
  gzip -f $D/$n.ncu-rep
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $D/smi_after.csv 2>&1
ls -la $D

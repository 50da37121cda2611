#!/bin/bash
# One device call: run + check every full-size gallery record from the record alone (event timing, 5 reps),
# then one Nsight Compute pass over all of them (clocks as found, L2 flushed: --clock-control none
# --cache-control all). Writes into $OUT/hw. Never changes clocks or resets the GPU.
# Provenance: adapted from /work/shared/calibration/measure/device_run.sh.
set -u
D=$OUT/hw; mkdir -p $D
cd "$(dirname "$0")/../.."
REC=workloads/records/h200_gallery
date -u +%Y-%m-%dT%H:%M:%SZ > $D/date.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv > $D/smi_before.csv 2>&1
{ python3 -c "import torch, numpy; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'numpy', numpy.__version__)";
  python3 -c "import triton; print('triton', triton.__version__)"; ncu --version | tail -1; } > $D/versions.txt 2>&1
PYTHONUNBUFFERED=1 timeout 240 python3 microbench/gallery/run_gallery_gpu.py --reps 5 --results $D/run.json $REC \
  > $D/run.log 2>&1
echo "run rc=$?"; tail -25 $D/run.log
MET=gpc__cycles_elapsed.max,sm__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,launch__grid_size,launch__block_size,launch__shared_mem_per_block_dynamic,launch__registers_per_thread
KRE='^(axpby|softmax_rows|layernorm_fwd|layernorm_bwd_dx|rmsnorm_bwd|col_sum_atomic|gemm_epilogue|gemm_splitk|gemm_persistent_tma|gemm_fp8|gemm_device_desc|gemm_warp_spec|grouped_gemm|attn_rowblock)$'
PYTHONUNBUFFERED=1 timeout 300 ncu --clock-control none --cache-control all --metrics $MET --section WarpStateStats \
  -k regex:"$KRE" --csv --page raw python3 microbench/gallery/run_gallery_gpu.py --no-check --reps 1 \
  --results $D/ncu_run.json $REC > $D/ncu.csv 2> $D/ncu.err
echo "ncu rc=$? lines=$(wc -l < $D/ncu.csv)"; tail -5 $D/ncu.err
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $D/smi_after.csv 2>&1
ls -la $D

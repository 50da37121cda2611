#!/bin/bash
# One device step (issue 19): the cluster GEMM timing records (make_timing_record.py: %clock64 sums around the
# stage-release fences, in situ), run from the record alone, 3 timed launches each, then summarised by
# parse_timing.py; the same launched on 2 / 16 / 66 / 132 CTAs (the fence against the SMs running it). Clocks are never touched. Writes $OUT/cg_timing.tgz (npy files, run.json, summary, smi). ~1 min.
# usage: OUT=DIR bash microbench/cluster_gemm/timing_device_run.sh
set -u
cd "$(dirname "$0")/../.."
W=$(mktemp -d)/cg_timing
mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $W/smi_before.csv 2>&1
date -u +%Y-%m-%dT%H:%M:%SZ > $W/date.txt
CG_GRIDS="${CG_GRIDS-2 16 66 132}" python3 microbench/cluster_gemm/make_timing_record.py $W/rec > $W/make.log 2>&1
timeout 240 python3 microbench/cluster_gemm/run_records_gpu.py --reps 3 --seeds 1 --dump tim:$W/npy \
  --results $W/run.json $W/rec/h200_cluster_timing > $W/run.log 2>&1
echo "run rc=$?" >> $W/run.log
timeout 120 python3 microbench/cluster_gemm/run_records_gpu.py --reps 3 --seeds 1 --no-check --dump tim:$W/npy \
  --results $W/run_grids.json $W/rec/h200_cluster_timing_grids >> $W/run.log 2>&1
echo "grids rc=$?" >> $W/run.log
python3 microbench/cluster_gemm/parse_timing.py $W/npy > $W/summary.json 2> $W/parse.err
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $W/smi_after.csv 2>&1
cp $W/rec/h200_cluster_timing/cluster_gemm_timing_rel_M2048/kernel.ptx $W/kernel_rel.ptx
rm -rf $W/rec
tar -czf $OUT/cg_timing.tgz -C $(dirname $W) cg_timing
cat $W/run.log
python3 -c "
import json, sys
for k, v in json.load(open(sys.argv[1])).items():
    a = v['all']; print(k, 'iter', a['iteration'], 'wait', a['stage_wait'], 'mma', a['wgmma_bar'], 'loc', a['local_release'], 'rem', a['remote_release'], 'empty', a['empty_wait'], 'issue', a['issue'], 'pend', a['pending_copies_at_local_release'])
" $W/summary.json

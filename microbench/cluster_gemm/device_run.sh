#!/bin/bash
# One device call (H200) for issue #19/#18 measurements: (1) the DSM fabric microbenchmarks
# (microbench/run_dsm_fabric.sh), (2) the TMA-multicast cluster GEMM records and (3) the full-size FlashAttention
# records, each run + checked against torch from the record alone (run_records_gpu.py: 5 timed reps, several
# fresh random inputs), then one Nsight Compute pass per family with the calibration records' metrics
# (--clock-control none --cache-control all: clocks as found, cold L2). Never changes clocks or resets the GPU.
# Writes $OUT/dsm.tar.gz, $OUT/hw_cluster.tar.gz, $OUT/hw_large.tar.gz. Turn them into files here with
# microbench/cluster_gemm/collect.sh (see microbench/README.md).
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
export PYTHONUNBUFFERED=1
MET=gpc__cycles_elapsed.max,sm__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,launch__grid_size,launch__block_size,launch__shared_mem_per_block_dynamic,launch__registers_per_thread
echo "== dsm"; microbench/run_dsm_fabric.sh $OUT/dsm
echo "== records"; R=/tmp/wgrec; rm -rf $R; mkdir -p $R
WG_RECORDS_OUT=$R python3 microbench/cluster_gemm/make_record.py 2048 4096
WG_RECORDS_OUT=$R python3 microbench/large_fa/make_record.py
for fam in cluster large; do
  D=$OUT/hw_$fam; mkdir -p $D
  cp -r $R/h200_$fam $D/records
  date -u +%Y-%m-%dT%H:%M:%SZ > $D/date.txt
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv > $D/smi_before.csv 2>&1
  { python3 -c "import torch, numpy; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'numpy', numpy.__version__)";
    python3 -c "import triton; print('triton', triton.__version__)"; nvcc --version | tail -2 | head -1; ncu --version | tail -1; } > $D/versions.txt 2>&1
  seeds=3; [ $fam = large ] && seeds=2
  timeout 150 python3 microbench/cluster_gemm/run_records_gpu.py --reps 5 --seeds $seeds --results $D/run.json $R/h200_$fam > $D/run.log 2>&1
  echo "$fam run rc=$?"; cat $D/run.log
  timeout 200 ncu --clock-control none --cache-control all --metrics $MET --section WarpStateStats \
    -k regex:'^(cluster_gemm|attn_fwd)$' --csv --page raw python3 microbench/cluster_gemm/run_records_gpu.py --no-check \
    --reps 1 --results $D/ncu_run.json $R/h200_$fam > $D/ncu.csv 2> $D/ncu.err
  echo "$fam ncu rc=$? lines=$(wc -l < $D/ncu.csv)"; tail -3 $D/ncu.err
  python3 - $D/ncu.csv <<'PY'
import csv, io, sys
ls = [l for l in open(sys.argv[1]).read().splitlines() if l.startswith('"')]
r = list(csv.reader(io.StringIO("\n".join(ls))))
for row in r[2:]:
    d = dict(zip(r[0], row)); print(d.get("Kernel Name"), d.get("Grid Size"), "cycles", d.get("gpc__cycles_elapsed.max"), "MHz", d.get("sm__cycles_elapsed.avg.per_second"), "ns", d.get("gpu__time_duration.sum"))
PY
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $D/smi_after.csv 2>&1
done
cd $OUT && for x in dsm hw_cluster hw_large; do tar czf $x.tar.gz $x && rm -rf $x; done; ls -la $OUT

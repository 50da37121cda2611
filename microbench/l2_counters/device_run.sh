#!/bin/bash
# One device call (H200), issue #15 "L2 bytes within 15 %": what Nsight Compute's lts__t_bytes counts. Runs the
# calibration and held-out launch records from the record alone (microbench/gallery/run_gallery_gpu.py, one launch
# each under ncu) with lts__t_sectors broken down by source unit (SM 'tex' vs the other L2 partition 'ltcfabric'),
# by operation and by lookup hit / miss, plus DRAM bytes. Clocks as found (--clock-control none), cold L2
# (--cache-control all), as the records' measured.json. Never changes clocks or resets the GPU.
# usage (on the device): OUT=dir bash microbench/l2_counters/device_run.sh [RECORD_DIR...]
# Writes $OUT/l2/{query.txt,metrics.txt,ncu.csv,ncu.err,date.txt,smi_*.csv,versions.txt}.
set -u
cd "$(dirname "$0")/../.."
D=$OUT/${L2_NAME:-l2}; mkdir -p $D
RECS="${*:-workloads/records/h200 workloads/records/h200_heldout}"
date -u +%Y-%m-%dT%H:%M:%SZ > $D/date.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv > $D/smi_before.csv 2>&1
{ python3 -c "import torch, numpy; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'numpy', numpy.__version__)";
  ncu --version | tail -1; } > $D/versions.txt 2>&1
ncu --query-metrics --chip gh100 > $D/query.txt 2>&1
WANT="lts__t_bytes lts__t_sectors lts__t_requests lts__t_sectors_srcunit_tex lts__t_sectors_srcunit_ltcfabric
lts__t_sectors_srcunit_tex_op_read lts__t_sectors_srcunit_tex_op_write lts__t_sectors_srcunit_tex_op_atom
lts__t_sectors_srcunit_tex_op_red lts__t_sectors_srcunit_tex_lookup_hit lts__t_sectors_srcunit_tex_lookup_miss
lts__t_sectors_srcunit_ltcfabric_lookup_hit lts__t_sectors_srcunit_ltcfabric_lookup_miss
lts__t_sectors_srcunit_ltcfabric_op_read lts__t_sectors_srcunit_ltcfabric_op_write
lts__t_sectors_srcnode_gpc lts__t_sectors_srcnode_fbp lts__t_sectors_srcunit_fbp lts__t_sectors_op_read
lts__t_sectors_op_write lts__t_sectors_lookup_hit lts__t_sectors_lookup_miss lts__t_requests_srcunit_tex
lts__t_requests_srcunit_ltcfabric lts__d_sectors_fill lts__t_sectors_srcunit_l1 lts__t_sectors_srcunit_tex_aperture_device
dram__bytes_read dram__bytes_write"
MET=gpc__cycles_elapsed.max
for m in $WANT; do
  if grep -qE "^ *$m( |$)" $D/query.txt; then MET="$MET,$m.sum"; else echo "absent: $m" >> $D/metrics.txt; fi
done
echo "$MET" >> $D/metrics.txt; cat $D/metrics.txt
KRE=${KRE:-'^(attn_fwd|gemm_ptr|gemm_tma|rmsnorm|swiglu)$'}
PYTHONUNBUFFERED=1 timeout ${L2_TIMEOUT:-270} ncu --clock-control none --cache-control all --metrics $MET \
  -k regex:"$KRE" --csv --page raw python3 microbench/gallery/run_gallery_gpu.py --no-check --reps 1 \
  --results $D/ncu_run.json $RECS > $D/ncu.csv 2> $D/ncu.err
echo "ncu rc=$? lines=$(wc -l < $D/ncu.csv)"; tail -5 $D/ncu.err
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $D/smi_after.csv 2>&1
ls -la $D

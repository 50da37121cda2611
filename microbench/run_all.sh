#!/bin/bash
# Build and run the whole warpgraph microbenchmark suite on one GPU, in one go.
# usage: microbench/run_all.sh OUTDIR      (on the device machine: microbench/run_all.sh "$OUT")
# Writes OUTDIR/results.json (merged, with provenance) and OUTDIR/raw.tar.gz (per-section logs and JSON,
# nvidia-smi clock snapshots before/after, a 0.5 s clock/power monitor, build log).
# Never touches clocks or GPU settings: the card is measured as found.
set -u
OUTDIR=$(readlink -f "${1:-${OUT:-out}}")
HERE=$(cd "$(dirname "$0")" && pwd)
RAW=$OUTDIR/raw
mkdir -p "$RAW" "$HERE/build"
cd "$HERE"
date -u +%Y-%m-%dT%H:%M:%SZ > "$RAW/date_utc.txt"
nvidia-smi > "$RAW/nvidia_smi.txt" 2>&1
nvidia-smi -q > "$RAW/nvidia_smi_q.txt" 2>&1
nvidia-smi -q -d CLOCK > "$RAW/clocks_before.txt" 2>&1
nvcc --version > "$RAW/nvcc_version.txt" 2>&1
echo "== build"
nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 -lineinfo -o build/bench src/bench.cu > "$RAW/build.log" 2>&1 \
  || { cat "$RAW/build.log"; exit 1; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 500 > "$RAW/smi_monitor.csv" 2>&1 &
MON=$!
for s in ${SECTIONS:-tma mbarrier mma_sync wgmma nontensor memory bandwidth dsm l1 launch loaded}; do
  echo "== $s"
  timeout 150 ./build/bench "$RAW/part_$s.json" x "$s" > "$RAW/log_$s.txt" 2>&1
  echo "rc=$?" >> "$RAW/log_$s.txt"
  tail -3 "$RAW/log_$s.txt"
done
# standalone programs whose results warpgraph calibrate reads too: wgmma rates by A/B type (src/wgmma_dtype.cu),
# unit latencies / intervals and bar.sync (src/alu_latency.cu), the SM store path (src/sm_store_rate.cu); their
# parsed results are sections (part_*.json)
# that collect.py merges into results.json like build/bench's
for P in wgmma_dtype alu_latency sm_store_rate; do
  if [ -z "${SECTIONS:-}" ] || [[ " $SECTIONS " == *" $P "* ]]; then
    echo "== $P"
    "$HERE/run_$P.sh" "$RAW/$P" | tail -3
    python3 "$HERE/parse_$P.py" "$RAW/$P" "$RAW/part_$P.json" || true
  fi
done
kill $MON 2>/dev/null
nvidia-smi -q -d CLOCK > "$RAW/clocks_after.txt" 2>&1
python3 "$HERE/collect.py" "$RAW" "$OUTDIR/results.json"
tar -C "$OUTDIR" -czf "$OUTDIR/raw.tar.gz" raw && rm -rf "$RAW"
python3 "$HERE/calibrate.py" "$OUTDIR/results.json" --out "$OUTDIR/h200_calibrated_params.yaml" || true
echo "next, where warpgraph is installed: warpgraph calibrate $OUTDIR --base h200 --out my_gpu.yaml"

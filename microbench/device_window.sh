#!/bin/bash
# Everything queued for the next device window, in one call, leaving few files in $OUT (a device call brings back at
# most 8 files, no more than two folders down): the pending microbenchmarks (run_pending.sh) as $OUT/pending.tgz and
# the per-SASS stall samples (source_stalls/device_run.sh, without the raw .ncu-rep files) as $OUT/source_stalls.tgz,
# plus $OUT/gpu.csv (card, driver, clocks as found). Clocks are never touched. ~6 minutes on an H200.
# usage: OUT=DIR microbench/device_window.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv > "$OUT/gpu.csv" 2>&1
date -u +%Y-%m-%dT%H:%M:%SZ >> "$OUT/gpu.csv"
bash "$HERE/run_pending.sh" "$W/p" > "$OUT/pending.log" 2>&1
mv "$W/p/pending.tgz" "$OUT/" 2>/dev/null
OUT=$W bash "$HERE/source_stalls/device_run.sh" > "$OUT/source_stalls.log" 2>&1
rm -f "$W"/ss/*.ncu-rep.gz
tar -czf "$OUT/source_stalls.tgz" -C "$W" ss
ls -la "$OUT"

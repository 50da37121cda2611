#!/bin/bash
# Arithmetic / SFU / conversion / shuffle latency and throughput and bar.sync cost on the H200
# (src/alu_latency.cu): build, run, snapshot clocks/driver before and after (run_with_sass.sh). Clocks are never
# touched. usage: microbench/run_alu_latency.sh OUTDIR; parse with python3 microbench/parse_alu_latency.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" alu_latency "${1:?outdir}" 120

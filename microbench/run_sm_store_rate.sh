#!/bin/bash
# Per-SM global store (and load) throughput on the H200 (src/sm_store_rate.cu): build, run, snapshot clocks/driver
# before and after (run_with_sass.sh). Clocks are never touched.
# usage: microbench/run_sm_store_rate.sh OUTDIR; parse with python3 microbench/parse_sm_store_rate.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" sm_store_rate "${1:?outdir}" 120

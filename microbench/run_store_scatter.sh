#!/bin/bash
# Per-SM throughput of scattered / partial-sector global stores (src/store_scatter.cu): build, run, snapshot
# clocks/driver before and after (run_with_sass.sh). Clocks are never touched.
# usage: microbench/run_store_scatter.sh OUTDIR; parse with python3 microbench/parse_store_scatter.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" store_scatter "${1:?outdir}" 120

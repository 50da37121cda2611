#!/bin/bash
# Spread of one DRAM miss's latency and the slowest of a warp's lanes' misses (src/dram_spread.cu): build, run,
# snapshot clocks/driver before and after (run_with_sass.sh). Clocks are never touched.
# usage: microbench/run_dram_spread.sh OUTDIR; parse with python3 microbench/parse_dram_spread.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" dram_spread "${1:?outdir}" 150

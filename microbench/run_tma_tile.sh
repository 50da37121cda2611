#!/bin/bash
# TMA tensor-tile loads against plain bulk copies (src/tma_tile.cu): build, run, snapshot clocks/driver before and
# after (run_with_sass.sh). Clocks are never touched. usage: microbench/run_tma_tile.sh OUTDIR; parse with
# python3 microbench/parse_tma_tile.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" tma_tile "${1:?outdir}" 300

#!/bin/bash
# Steady-state TMA streaming from an L2-resident tensor on 1-132 SMs at once (src/tma_stream.cu): build, run,
# snapshot clocks/driver before and after (run_with_sass.sh). Clocks are never touched. ~5 s.
# usage: microbench/run_tma_stream.sh OUTDIR; parse with python3 microbench/parse_tma_stream.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" tma_stream "${1:?outdir}" 120

#!/bin/bash
# Which 128-B lines share an L2 atomic unit (src/atomic_units.cu): build, run, snapshot clocks/driver before and
# after (run_with_sass.sh). Clocks are never touched. usage: microbench/run_atomic_units.sh OUTDIR; parse with
# python3 microbench/parse_atomic_units.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" atomic_units "${1:?outdir}" 120

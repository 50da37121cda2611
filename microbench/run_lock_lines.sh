#!/bin/bash
# Spin locks with many lock words on few L2 lines, and one-lane atomics on one line from many SMs
# (src/lock_lines.cu): build, run, snapshot clocks/driver before and after (run_with_sass.sh). Clocks are never
# touched. usage: microbench/run_lock_lines.sh OUTDIR; parse with python3 microbench/parse_lock_lines.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" lock_lines "${1:?outdir}" 150

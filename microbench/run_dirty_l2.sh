#!/bin/bash
# Row streams that write what they read, and DRAM misses with dirty L2 victims (src/dirty_l2.cu): build, run, snapshot
# clocks/driver before and after (run_with_sass.sh). Clocks are never touched. ~20 s.
# usage: microbench/run_dirty_l2.sh OUTDIR; parse with python3 microbench/parse_dirty_l2.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" dirty_l2 "${1:?outdir}" 300

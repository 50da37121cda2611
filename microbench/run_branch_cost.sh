#!/bin/bash
# The cost of a loop's back edge (src/branch_cost.cu): build, run, snapshot clocks/driver before and after
# (run_with_sass.sh). Clocks are never touched. usage: microbench/run_branch_cost.sh OUTDIR; parse with
# python3 microbench/parse_branch_cost.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" branch_cost "${1:?outdir}" 60

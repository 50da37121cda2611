#!/bin/bash
# The cost of a taken forward branch and of a predicated one (src/branch_fwd.cu): build, run, snapshot clocks/driver
# before and after (run_with_sass.sh). Clocks are never touched. usage: microbench/run_branch_fwd.sh OUTDIR; parse
# with python3 microbench/parse_branch_fwd.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" branch_fwd "${1:?outdir}" 60

#!/bin/bash
# A fence beside store warps that stop after a fixed number of batches, and store warps beside load warps of one
# SM (src/store_fence.cu): build, run, snapshot clocks/driver before and after (run_with_sass.sh). Clocks are never
# touched. usage: microbench/run_store_fence.sh OUTDIR; parse with python3 microbench/parse_store_fence.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" store_fence "${1:?outdir}" 150

#!/bin/bash
# Shared-memory reads (ldmatrix.x4) beside cp.async fills of shared memory on one SM (src/smem_fill.cu): do the
# fills take the readers' 128 B/cycle? Builds, runs, keeps SASS and clocks (run_with_sass.sh); ~5 s. Clocks are
# never touched. usage: microbench/run_smem_fill.sh OUTDIR; parse: python3 microbench/parse_smem_fill.py OUTDIR
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" smem_fill "${1:?outdir}" 120

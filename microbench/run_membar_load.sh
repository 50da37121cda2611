#!/bin/bash
# MEMBAR.GPU behind outstanding bulk copies vs load on the H200 (src/membar_load.cu): build, run, snapshot
# clocks/driver before and after (run_with_sass.sh). Clocks are never touched. usage: microbench/run_membar_load.sh OUTDIR
# OUTDIR gets membar_load.txt (the program's output), log.txt (date, build, exit code), smi_before.txt /
# smi_after.txt, membar_load.sass (the SASS of the timed kernels). Parse here with
# python3 microbench/parse_membar_load.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" membar_load "${1:?outdir}" 120

#!/bin/bash
# MEMBAR.GPU beside the SM's other warps' outstanding loads / stores on the H200 (src/membar_sm.cu): build, run,
# snapshot clocks/driver before and after (run_with_sass.sh). Clocks are never touched.
# usage: microbench/run_membar_sm.sh OUTDIR
# OUTDIR gets membar_sm.txt (the program's output), log.txt, smi_before.txt / smi_after.txt, membar_sm.sass.
# Parse here with python3 microbench/parse_membar_sm.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" membar_sm "${1:?outdir}" 120

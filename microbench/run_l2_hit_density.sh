#!/bin/bash
# L2 hits behind DRAM misses against the number of SMs streaming DRAM-missing copies (src/membar_load.cu, section
# hit_density): build, run, snapshot clocks/driver before and after (run_with_sass.sh). Clocks are never touched.
# usage: microbench/run_l2_hit_density.sh OUTDIR; OUTDIR gets membar_load.txt (only this section's MBL lines),
# log.txt, smi_before.txt / smi_after.txt, membar_load.sass. Parse with python3 microbench/parse_membar_load.py OUTDIR.
set -u
MBL_SECTION=hit_density "$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" membar_load "${1:?outdir}" 120

#!/bin/bash
# mbarrier wake-up latency on the H200 (src/mbar_wakeup.cu): build, run, snapshot clocks/driver before and after
# (run_with_sass.sh). Clocks are never touched. usage: microbench/run_mbar_wakeup.sh OUTDIR
# OUTDIR gets mbar_wakeup.txt (the program's output), log.txt (date, build, exit code), smi_before.txt /
# smi_after.txt, mbar_wakeup.sass (the SASS of the timed kernel). Parse here with
# python3 microbench/parse_mbar_wakeup.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" mbar_wakeup "${1:?outdir}" 120

#!/bin/bash
# ldmatrix latency and throughput on the H200 (src/ldmatrix.cu): build, run, snapshot clocks/driver before and
# after (run_with_sass.sh). Clocks are never touched. usage: microbench/run_ldmatrix.sh OUTDIR
# OUTDIR gets ldmatrix.txt (the program's output), log.txt (date, build, exit code), smi_before.txt /
# smi_after.txt, ldmatrix.sass (the SASS of the timed kernels). Parse here with
# python3 microbench/parse_ldmatrix.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" ldmatrix "${1:?outdir}" 120

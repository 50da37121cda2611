#!/bin/bash
# Cluster-scope synchronisation costs on the H200 (src/cluster_sync.cu): build, run, snapshot clocks/driver
# before and after (run_with_sass.sh). Clocks are never touched. usage: microbench/run_cluster_sync.sh OUTDIR
# OUTDIR gets cluster_sync.txt (the program's output), log.txt (date, build, exit code), smi_before.txt /
# smi_after.txt, cluster_sync.sass (the SASS of the timed kernels). Parse here with
# python3 microbench/parse_cluster_sync.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" cluster_sync "${1:?outdir}" 240

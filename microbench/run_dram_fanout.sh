#!/bin/bash
# DRAM latency of a warp load over L lines (max of L), unloaded and under background load (src/dram_fanout.cu).
# usage (device): microbench/run_dram_fanout.sh OUTDIR      (~5 s). Clocks are never touched.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
"$HERE/run_standalone.sh" dram_fanout "${1:?outdir}" fanout.txt
tail -3 "$1/fanout.txt"

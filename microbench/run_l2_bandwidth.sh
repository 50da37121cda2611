#!/bin/bash
# L2 read bandwidth from all SMs, L2-resident buffers of 4-24 MiB (src/l2_bandwidth.cu).
# usage (device): microbench/run_l2_bandwidth.sh OUTDIR      (~5 s). Clocks are never touched.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
"$HERE/run_standalone.sh" l2_bandwidth "${1:?outdir}" l2_bandwidth.txt
cat "$1/l2_bandwidth.txt"

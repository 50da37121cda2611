#!/bin/bash
# Non-bulk cp.async (LDGSTS) throughput and round trip of one SM on the H200 (src/ldgsts_rate.cu): build, run,
# snapshot clocks/driver before and after (run_with_sass.sh). Clocks are never touched.
# usage: microbench/run_ldgsts_rate.sh OUTDIR; parse with python3 microbench/parse_ldgsts_rate.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" ldgsts_rate "${1:?outdir}" 150

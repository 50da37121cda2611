#!/bin/bash
# Bulk (TMA) shared -> global store rate per SM on the H200 (src/bulk_store_rate.cu): build, run, snapshot
# clocks/driver before and after (run_with_sass.sh). Clocks are never touched.
# usage: microbench/run_bulk_store_rate.sh OUTDIR
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" bulk_store_rate "${1:?outdir}" 120

#!/bin/bash
# SHFL against shared-memory loads on the H200's MIO path (src/mio_mix.cu): build, run, snapshot clocks/driver
# before and after (run_with_sass.sh). Clocks are never touched.
# usage: microbench/run_mio_mix.sh OUTDIR; parse with python3 microbench/parse_mio_mix.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" mio_mix "${1:?outdir}" 120

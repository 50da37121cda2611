#!/bin/bash
# Dependent chains on the uniform datapath against the vector one (src/uniform_chain.cu): build, run, snapshot
# clocks/driver before and after (run_with_sass.sh). Clocks are never touched. usage:
# microbench/run_uniform_chain.sh OUTDIR; parse with python3 microbench/parse_uniform_chain.py OUTDIR.
set -u
"$(cd "$(dirname "$0")" && pwd)/run_with_sass.sh" uniform_chain "${1:?outdir}" 60

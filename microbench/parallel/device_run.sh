#!/bin/bash
# Device wrapper: install the carried wheels (.whl/) beside the device's own numpy / networkx / typer, expose the
# tree as the package ``warpgraph`` and run bench_partitioned.py for each "RECORD JOBS..." line of $1.
set -u
OUTDIR=${OUT:-/tmp/out}
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
mkdir -p /tmp/pk && ln -sfn "$PWD" /tmp/pk/warpgraph
export PYTHONPATH=/tmp/pk:/tmp/site
nproc; python -c "import numpy, networkx; print(numpy.__version__, networkx.__version__)"
i=0
while read -r rec jobs; do
  [ -z "$rec" ] && continue
  i=$((i+1))
  python microbench/parallel/bench_partitioned.py "$OUTDIR/run$i.json" "$rec" $jobs 2>&1 | tail -20
done < "$1"

#!/bin/bash
# Device wrapper for ab_pairs.py: install the carried wheels (.whl/) beside the device's own numpy / networkx /
# pandas, record the machine, run the paired comparison of BASE_TREE (default .bench_e8b05aa, a `git archive` of the
# base commit carried with the run) against this tree, and bring back the summary and the runs as $OUT/runs.tgz.
#   REPS=5 PAIRS=6 bash microbench/parallel/device_pairs.sh [BASE_TREE]
set -u
BASE=${1:-.bench_e8b05aa}
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
( python -V; python -c "import numpy, networkx, pandas; print(numpy.__version__, networkx.__version__, pandas.__version__)"
  lscpu | grep -E 'Model name|Thread|Core|Socket'; nproc; env | grep -E '^PYTHON'; date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv ) > "$OUT/machine.txt" 2>&1
AB_EXTRA_PATH=/tmp/site timeout 560 python microbench/parallel/ab_pairs.py "$BASE" . /tmp/runs "${REPS:-3}" "${PAIRS:-6}"
cp /tmp/runs/summary.txt "$OUT/" 2>/dev/null; tar czf "$OUT/runs.tgz" -C /tmp/runs .

#!/bin/bash
# Side-by-side speed of two trees on the bundled h200 launches, on one machine at the same time:
#   ab_commits.sh BASE_TREE NEW_TREE REPS PARALLEL
# For every bundled record, every rep and both trees one fresh process runs ab_case.py (process CPU seconds of
# simulate(), trace cache off); the (tree, case, rep) runs are shuffled together and run PARALLEL at a time, so
# both trees see the same machine load. Results: $OUT/<tree>_<case>_<rep>.json; summarise with ab_summary.py.
# CASES="a b" limits the records. On the device: carried wheels (.whl/) give pydantic / ruamel (see device_run.sh).
set -u
BASE=$1; NEW=$2; REPS=${3:-2}; PAR=${4:-8}
OUTDIR=${OUT:-/tmp/out}
if [ -d .whl ]; then pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1; fi
mkdir -p /tmp/ab_base /tmp/ab_new "$OUTDIR"
ln -sfn "$(cd "$BASE" && pwd)" /tmp/ab_base/warpgraph
ln -sfn "$(cd "$NEW" && pwd)" /tmp/ab_new/warpgraph
nproc > "$OUTDIR/machine.txt"; python -V >> "$OUTDIR/machine.txt" 2>&1; date -u >> "$OUTDIR/machine.txt"
jobs=()
for r in $(seq "$REPS"); do
  for d in "$NEW"/workloads/records/h200/*/; do
    c=$(basename "$d")
    if [ -n "${CASES:-}" ] && ! grep -qw "$c" <<< "$CASES"; then continue; fi
    jobs+=("base $c $r" "new $c $r")
  done
done
printf '%s\n' "${jobs[@]}" | shuf --random-source=<(yes) | \
  xargs -P "$PAR" -L 1 bash -c 'cd /tmp && PYTHONPATH=/tmp/ab_$0:/tmp/site python '"$PWD"'/microbench/parallel/ab_case.py '"$OUTDIR"'/$0_$1_$2.json /tmp/ab_$0/warpgraph/workloads/records/h200/$1 >/dev/null 2>>'"$OUTDIR"'/errors.txt'
ls "$OUTDIR" | wc -l

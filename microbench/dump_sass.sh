#!/bin/bash
# SASS listings of the bundled launch records (ptxas for sm_90a, cuobjdump -sass), to check the PTX->SASS
# expansion table (components/sass_cost.py). Device call: microbench/dump_sass.sh "$OUT" -> OUT/sass.tar.gz
set -u
OUTDIR=$(readlink -f "${1:-out}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d)
for d in "$ROOT"/workloads/records/h200/*/ "$ROOT"/workloads/records/h200_heldout/*/; do
  n=$(basename "$d")
  ptxas -arch=sm_90a "$d/kernel.ptx" -o "$W/$n.cubin" 2> "$W/$n.ptxas.txt" && cuobjdump -sass "$W/$n.cubin" > "$W/$n.sass"
done
(cd "$W" && tar czf "$OUTDIR/sass.tar.gz" *.sass *.ptxas.txt)
ls "$W" | wc -l

#!/bin/bash
# The microbenchmark programs written while no device was lent (microbench/README.md: "Not run yet"), in one device
# call: each runs into OUTDIR/<name>/, then every folder is parsed and the lot is packed into OUTDIR/pending.tgz
# (a device call brings few files back). Clocks are never touched. ~2 minutes on an H200.
# usage: microbench/run_pending.sh OUTDIR [NAME ...]  (default: what has not run on an H200 yet: tma_stream smem_fill atomic_units
# store_scatter dirty_l2 branch_fwd tma_tile l2_pairs_ca uniform_chain l2_tma_pairs, most of them run on an H100;
# store_fence ldgsts_rate lock_lines branch_cost ran on the H200 on 2026-12-05)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?outdir}
shift
NAMES=${*:-tma_stream smem_fill atomic_units store_scatter dirty_l2 branch_fwd tma_tile l2_pairs_ca uniform_chain l2_tma_pairs}
mkdir -p "$OUT"
for n in $NAMES; do
  echo "== $n $(date -u +%H:%M:%S)"
  bash "$HERE/run_$n.sh" "$OUT/$n" 2>&1 | tail -5
  case $n in
    l2_pairs_ca) python3 "$HERE/parse_l2_pairs.py" "$OUT/$n" > "$OUT/$n/parse.txt" 2>&1 ;;
    *) python3 "$HERE/parse_$n.py" "$OUT/$n" > "$OUT/$n/parse.txt" 2>&1 ;;
  esac
  echo "parse rc $?"
done
tar -czf "$OUT/pending.tgz" -C "$OUT" $NAMES
ls -la "$OUT/pending.tgz"

"""Parse microbench/src/sm_store_rate.cu's output (SSR lines) into a ``warpgraph-microbench/1`` document: per case
(grid, warps, width, op, region, reps) the mean over the launches (reps) of the CTA-median bytes per cycle and cycles per
round of 8 accesses. ``op`` is coded 0 = st.global.cg, 1 = ld.global.cg, 2 = plain st.global.
usage: python3 microbench/parse_sm_store_rate.py OUTDIR [OUT.json]"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import mean_over_reps, write  # noqa: E402

IDENT = ("grid", "warps", "width", "op", "region", "reps")
STATS = {"bytes_per_cycle": "bytes_per_cycle", "cyc_per_round": "cyc_per_round", "cycles": "cycles"}
OPS = {"st": 0, "ld": 1, "stw": 2}


def parse(text: str) -> dict:
    rows = mean_over_reps(text, "SSR", IDENT, STATS, "ssr", "bytes_per_cycle", reps_beside=True, codes={"op": OPS})
    return {"schema": "warpgraph-microbench/1", "op_codes": {str(v): k for k, v in OPS.items()}, "results": rows}


if __name__ == "__main__":
    write(sys.argv, "sm_store_rate", parse)

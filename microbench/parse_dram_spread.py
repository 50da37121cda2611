"""Parse microbench/src/dram_spread.cu's output into a ``warpgraph-microbench/1`` document: SPREAD lines (one
thread's dependent DRAM misses, per-load cycle percentiles; bench ``dram_spread``) and GATHER lines (one warp waiting
for the slowest of K lanes' misses, cycles per step; bench ``dram_gather``), means over the launches.
usage: python3 microbench/parse_dram_spread.py OUTDIR [OUT.json]"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import mean_over_reps, write  # noqa: E402

SP_STATS = {k: k for k in ("mean", "sd", "p01", "p10", "p25", "p50", "p75", "p90", "p99", "max")}


def parse(text: str) -> dict:
    return {"schema": "warpgraph-microbench/1",
            "results": mean_over_reps(text, "SPREAD", ("region", "order"), SP_STATS, "dram_spread", "mean",
                                      reps_beside=True, codes={"order": {"random": 0, "page": 1}})
            + mean_over_reps(text, "GATHER", ("lanes", "region", "steps"), {"cyc_per_step": "cyc_per_step"},
                             "dram_gather", "cyc_per_step", reps_beside=True)}


if __name__ == "__main__":
    write(sys.argv, "dram_spread", parse)

"""Parse microbench/src/branch_cost.cu's output into a ``warpgraph-microbench/1`` document: BRL lines (a dependent
chain of L fma links per loop iteration: cycles per iteration and per link, per warps) and BRS lines (the same L
links straight, no loop). The back edge's cost is the intercept of cycles per iteration against L.
usage: python3 microbench/parse_branch_cost.py OUTDIR [OUT.json]"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import mean_over_reps, write  # noqa: E402

BRL_IDENT = ("L", "warps", "iters")
BRL_STATS = {"cycles_per_iter": "cycles_per_iter", "cycles_per_link": "cycles_per_link"}
BRS_IDENT = ("L", "warps")
BRS_STATS = {"cycles": "cycles", "cycles_per_link": "cycles_per_link"}


def parse(text: str) -> dict:
    return {"schema": "warpgraph-microbench/1",
            "results": mean_over_reps(text, "BRL", BRL_IDENT, BRL_STATS, "branch_loop", "cycles_per_iter",
                                      reps_beside=True)
            + mean_over_reps(text, "BRS", BRS_IDENT, BRS_STATS, "branch_straight", "cycles", reps_beside=True)}


if __name__ == "__main__":
    write(sys.argv, "branch_cost", parse)

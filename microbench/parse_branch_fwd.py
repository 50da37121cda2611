"""Parse microbench/src/branch_fwd.cu's output into a ``warpgraph-microbench/1`` document: BRF lines (a loop of A
dependent fma links, a block of S links under ``if (i & mask)``, A more links: cycles per iteration, per warps).
usage: python3 microbench/parse_branch_fwd.py OUTDIR [OUT.json]"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import mean_over_reps, write  # noqa: E402

BRF_IDENT = ("A", "S", "warps", "iters", "mask")
BRF_STATS = {"cycles_per_iter": "cycles_per_iter"}


def parse(text: str) -> dict:
    return {"schema": "warpgraph-microbench/1",
            "results": mean_over_reps(text, "BRF", BRF_IDENT, BRF_STATS, "branch_forward", "cycles_per_iter",
                                      reps_beside=True)}


if __name__ == "__main__":
    write(sys.argv, "branch_fwd", parse)

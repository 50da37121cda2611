"""Parse microbench/src/ldgsts_rate.cu's output (LGS lines) into a ``warpgraph-microbench/1`` document: per case
(grid, warps, size, cg, depth, region) the mean over the launches of the CTA-median cycles, bytes per cycle,
cycles per round and cp.async instructions per cycle.
usage: python3 microbench/parse_ldgsts_rate.py OUTDIR [OUT.json]"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import mean_over_reps, write  # noqa: E402

IDENT = ("grid", "warps", "size", "cg", "depth", "region")
STATS = {"cycles": "cycles", "bytes_per_cycle": "bytes_per_cycle", "cyc_per_round": "cyc_per_round",
         "ins_per_cycle": "ins_per_cycle"}


def parse(text: str) -> dict:
    return {"schema": "warpgraph-microbench/1",
            "results": mean_over_reps(text, "LGS", IDENT, STATS, "ldgsts", "cycles", reps_beside=True)}


if __name__ == "__main__":
    write(sys.argv, "ldgsts_rate", parse)

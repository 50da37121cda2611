"""Parse microbench/src/lock_lines.cu's output into a ``warpgraph-microbench/1`` document: LKL lines (a Triton-style
lock per group of CTAs, lock words packed in lines or one per line; per case the mean over the launches of the
kernel cycles, cycles per acquisition of one lock and failed cas per CTA) and CLN lines (one-lane cas on one line
or word from many SMs; cycles and lane-operations per cycle).
usage: python3 microbench/parse_lock_lines.py OUTDIR [OUT.json]"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import mean_over_reps, write  # noqa: E402

LKL_IDENT = ("G", "locks", "stride", "cs")
LKL_STATS = {"kernel_cycles": "kernel_cycles", "per_acq": "per_acq", "spins": "spins"}
CLN_IDENT = ("acqrel", "G", "words", "K")
CLN_STATS = {"cycles": "cycles", "lane_ops_per_cycle": "lane_ops_per_cycle"}


def parse(text: str) -> dict:
    return {"schema": "warpgraph-microbench/1",
            "results": mean_over_reps(text, "LKL", LKL_IDENT, LKL_STATS, "lock_lines", "per_acq", reps_beside=True)
            + mean_over_reps(text, "CLN", CLN_IDENT, CLN_STATS, "cas_line", "cycles", reps_beside=True)}


if __name__ == "__main__":
    write(sys.argv, "lock_lines", parse)

"""Parse microbench/src/atomic_units.cu's output into a ``warpgraph-microbench/1`` document: AUN lines (one-lane
failing cas from one-warp CTAs on `lines` lines `stride` bytes apart; per case the mean over the launches of the
longest CTA's cycles and the requests per cycle) and AUF lines (32-lane reds, lane i word i, the same layouts: bench
``atomic_alus``), AUT lines (CTAs of W warps, a CTA's warps on one line: bench ``atomic_cta_lines``) and AUV lines
(vector and float reds: bench ``atomic_vector``, with elements_per_cycle).
usage: python3 microbench/parse_atomic_units.py OUTDIR [OUT.json]"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import mean_over_reps, write  # noqa: E402

AUN_IDENT = ("acqrel", "G", "lines", "stride", "K")
AUN_STATS = {"cycles": "cycles", "req_per_cycle": "req_per_cycle"}


AUF_IDENT = ("G", "lines", "stride", "K")
AUT_IDENT = ("G", "W", "lines", "stride", "K")
AUV_IDENT = ("op", "G", "regions", "K")
AUV_STATS = {**AUN_STATS, "elements_per_cycle": "elements_per_cycle"}


def parse(text: str) -> dict:
    return {"schema": "warpgraph-microbench/1",
            "results": mean_over_reps(text, "AUN", AUN_IDENT, AUN_STATS, "atomic_units", "cycles", reps_beside=True)
            + mean_over_reps(text, "AUF", AUF_IDENT, AUN_STATS, "atomic_alus", "cycles", reps_beside=True)
            + mean_over_reps(text, "AUT", AUT_IDENT, AUN_STATS, "atomic_cta_lines", "cycles", reps_beside=True)
            + mean_over_reps(text, "AUV", AUV_IDENT, AUV_STATS, "atomic_vector", "cycles", reps_beside=True)}


if __name__ == "__main__":
    write(sys.argv, "atomic_units", parse)

"""Parse microbench/src/store_fence.cu's output into a ``warpgraph-microbench/1`` document: FST lines (a fence beside
store / load warps that stop after ``batches`` batches; per case the mean over the launches of the CTA medians) and
SLM lines (store warps beside load warps of one SM; each role's cycles and bytes per cycle).
usage: python3 microbench/parse_store_fence.py OUTDIR [OUT.json]"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import mean_over_reps, write  # noqa: E402

FST_IDENT = ("grid", "warps", "batches", "delay", "flags")
FST_STATS = {"fence": "fence", "fence_start": "fence_start", "fence_end": "fence_end", "streams_end": "streams_end",
             "first_end": "first_end", "fence_cta0": "fence_cta0"}
SLM_IDENT = ("grid", "st", "ld", "reps", "flags")
SLM_STATS = {"st_cyc": "st_cyc", "ld_cyc": "ld_cyc", "st_bpc": "st_bpc", "ld_bpc": "ld_bpc"}


def parse(text: str) -> dict:
    return {"schema": "warpgraph-microbench/1",
            "results": mean_over_reps(text, "FST", FST_IDENT, FST_STATS, "fst", "fence", reps_beside=True)
            + mean_over_reps(text, "SLM", SLM_IDENT, SLM_STATS, "slm", "st_cyc", reps_beside=True)}


if __name__ == "__main__":
    write(sys.argv, "store_fence", parse)

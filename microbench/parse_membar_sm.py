"""Parse microbench/src/membar_sm.cu's output (MSM lines) into a ``warpgraph-microbench/1`` document: per case
(grid, loaders, flags) the mean over the launches (reps) of each per-launch median (fence: cycles of the fence or
of the acq_rel atomic, load: the loaders' cycles per 8-load batch) and the reps' fences.
usage: python3 microbench/parse_membar_sm.py OUTDIR [OUT.json]"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import mean_over_reps, write  # noqa: E402

IDENT = ("grid", "loaders", "flags")
STATS = {"fence_med": "fence", "fence_min": "fence_min", "fence_max": "fence_max", "fence_cta0": "fence_cta0",
         "load_med": "load"}


def parse(text: str) -> dict:
    return {"schema": "warpgraph-microbench/1", "results": mean_over_reps(text, "MSM", IDENT, STATS, "msm", "fence")}


if __name__ == "__main__":
    write(sys.argv, "membar_sm", parse)

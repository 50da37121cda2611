"""Parse microbench/src/store_scatter.cu's output into a ``warpgraph-microbench/1`` document: SCT lines (one SM's
or every SM's warps issuing plain st.global in five lane layouts; per case the mean over the launches of the
median CTA's cycles, cycles per warp instruction, bytes / sectors / lines per cycle): bench ``store_scatter``.
usage: python3 microbench/parse_store_scatter.py OUTDIR [OUT.json]"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import mean_over_reps, write  # noqa: E402

IDENT = ("grid", "warps", "layout", "width", "reps", "lines", "sectors")
STATS = {"cycles": "cycles", "cyc_per_inst": "cyc_per_inst", "bytes_per_cycle": "bytes_per_cycle",
         "sectors_per_cycle": "sectors_per_cycle", "lines_per_cycle": "lines_per_cycle"}


def parse(text: str) -> dict:
    return {"schema": "warpgraph-microbench/1",
            "results": mean_over_reps(text, "SCT", IDENT, STATS, "store_scatter", "cycles", reps_beside=True)}


if __name__ == "__main__":
    write(sys.argv, "store_scatter", parse)

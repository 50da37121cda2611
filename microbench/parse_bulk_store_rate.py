"""Parse microbench/src/bulk_store_rate.cu's output (BSR lines) into a ``warpgraph-microbench/1`` document: per case
(grid, bytes, copies, wait) the mean over the launches of the CTA-median cycles and bytes per cycle; ``wait`` is
coded 0 = wait_group.read (source read), 1 = wait_group (writes done).
usage: python3 microbench/parse_bulk_store_rate.py OUTDIR [OUT.json]"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import mean_over_reps, write  # noqa: E402

IDENT = ("grid", "bytes", "copies", "wait")
STATS = {"cycles": "cycles", "bytes_per_cycle": "bytes_per_cycle"}
WAITS = {"read": 0, "all": 1}


def parse(text: str) -> dict:
    rows = mean_over_reps(text, "BSR", IDENT, STATS, "bsr", "bytes_per_cycle", reps_beside=True,
                          codes={"wait": WAITS})
    return {"schema": "warpgraph-microbench/1", "wait_codes": {str(v): k for k, v in WAITS.items()}, "results": rows}


if __name__ == "__main__":
    write(sys.argv, "bulk_store_rate", parse)

"""Parse microbench/src/tma_tile.cu's output into a ``warpgraph-microbench/1`` document: TILE lines (boxes of
64 fp16 columns x R rows through cp.async.bulk.tensor.2d, 128-B swizzle) and BULK lines (plain cp.async.bulk copies
of the same bytes); per case the median issue span and completion (clock before the first issue to try_wait seeing
the phase) over CTAs and reps. Also prints, per kind, pitch and hot / fresh, the one-SM completion's least-squares
fit against bytes (base cycles and bytes per cycle).
usage: python3 microbench/parse_tma_tile.py OUTDIR [OUT.json]"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import mean_over_reps, write  # noqa: E402

IDENT = ("K", "n", "rows", "fresh", "ctas", "share")
STATS = {"issue_span": "issue_span", "completion": "completion"}


def parse(text: str) -> dict:
    rows = (mean_over_reps(text, "TILE", IDENT, STATS, "tma_tile", "completion", reps_beside=True)
            + mean_over_reps(text, "BULK", IDENT, STATS, "tma_bulk", "completion", reps_beside=True))
    return {"schema": "warpgraph-microbench/1", "results": rows, "fits": fits(rows)}


def fits(rows: list[dict]) -> list[dict]:
    """One SM: completion = base + bytes / rate, least squares over the sizes of each (kind, pitch, fresh)."""
    out = []
    groups: dict = {}
    for r in rows:
        p = r["params"]
        if p["ctas"] == 1:
            groups.setdefault((r["bench"], p["K"], p["fresh"]), []).append(
                (p["n"] * p["rows"] * 128, r["stats"]["completion"]))
    for (bench, k, fresh), pts in groups.items():
        if len(pts) < 2:
            continue
        x, y = np.array(pts, dtype=float).T
        slope, base = np.polyfit(x, y, 1)
        out.append({"bench": bench, "K": k, "fresh": fresh, "points": len(pts), "base_cycles": round(float(base), 1),
                    "bytes_per_cycle": round(float(1 / slope), 2) if slope > 0 else None})
    return out


if __name__ == "__main__":
    d = write(sys.argv, "tma_tile", parse)
    for f in d["fits"]:
        print(f)
    for r in d["results"]:
        print(r["bench"], r["params"], r["stats"])

"""Parse microbench/src/dirty_l2.cu's output into a ``warpgraph-microbench/1`` document: ROW lines (row streams that
write what they read; per case the mean over the launches of the CTA medians of total / early / late cycles, the
launch's event time, and the first launch's per-row curve) and CHASE lines (a one-thread DRAM pointer chase after an
L2 left clean or dirty; mean cycles per load). ``pre``: 0 clean, 1 dirty, 2 dirty then ~2 ms idle.
usage: python3 microbench/parse_dirty_l2.py OUTDIR [OUT.json]"""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import mean_over_reps, write  # noqa: E402

PRE = {"pre": {"clean": 0, "dirty": 1, "dirty_idle": 2}}
ROW_IDENT = ("grid", "cols", "rows", "flags", "pre")
ROW_STATS = {"total": "total", "early": "early", "late": "late", "us": "us"}


def parse(text: str) -> dict:
    rows = mean_over_reps(text, "ROW", ROW_IDENT, ROW_STATS, "row", "total", reps_beside=True, codes=PRE)
    curves = {}
    for line in text.splitlines():
        if line.startswith("ROW ") and " rep=0 " in line:
            kv = dict(re.findall(r"(\w+)=([^\s]+)", line))
            key = tuple(PRE["pre"][kv[k]] if k == "pre" else int(kv[k]) for k in ROW_IDENT)
            curves[key] = [float(x) for x in kv.get("curve", "").split(",") if x]
    for r in rows:
        r["curve"] = curves.get(tuple(r["params"][k] for k in ROW_IDENT), [])
    return {"schema": "warpgraph-microbench/1",
            "results": rows + mean_over_reps(text, "CHASE", ("pre", "steps"), {"cyc": "cyc"}, "chase", "cyc",
                                             reps_beside=True, codes=PRE)}


if __name__ == "__main__":
    write(sys.argv, "dirty_l2", parse)

"""Parse a run of run_smem_fill.sh (src/smem_fill.cu) into ``smem_fill.json`` next to it: per (readers, fillers)
the median over repetitions of the readers' ldmatrix bytes per SM cycle and the fillers' cp.async bytes per cycle,
and their sum (<= 128 if fills and reads share the shared-memory data path).

usage: python microbench/parse_smem_fill.py OUTDIR
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def parse(d: Path) -> dict:
    rows: dict[tuple[int, int], list[dict]] = {}
    for ln in (d / "smem_fill.txt").read_text().splitlines():
        if not ln.startswith("FILL "):
            continue
        kv = dict(x.split("=") for x in ln.split()[1:])
        rows.setdefault((int(kv["readers"]), int(kv["fillers"])), []).append(kv)
    cases = []
    for (r, f), reps in sorted(rows.items()):
        rb = statistics.median(float(x["ldsm_bytes_per_cycle"]) for x in reps)
        fb = statistics.median(float(x["fill_bytes_per_cycle"]) for x in reps)
        cases.append({"readers": r, "fillers": f, "ldsm_bytes_per_cycle": round(rb, 1),
                      "fill_bytes_per_cycle": round(fb, 1), "sum": round(rb + fb, 1), "reps": len(reps)})
    return {"provenance": {"script": "microbench/run_smem_fill.sh", "source": "microbench/src/smem_fill.cu",
                           "run": (d / "log.txt").read_text().splitlines()[:3] if (d / "log.txt").exists() else [],
                           "note": "clocks as found; medians over repetitions"}, "cases": cases}


if __name__ == "__main__":
    d = Path(sys.argv[1])
    res = parse(d)
    (d / "smem_fill.json").write_text(json.dumps(res, indent=1) + "\n")
    for c in res["cases"]:
        print(c)

"""Parse microbench/src/alu_latency.cu's output (ALU / BAR lines) into a ``warpgraph-microbench/1`` document: per
case, the median over the launches (reps) of its cycles (lat: per dependent link; tput: SM cycles per
warp-instruction; bar: per bar.sync). Written to OUTDIR/alu_latency.json, or to the path given second (the
committed copy: microbench/results/h200_alu_latency_2026-12-04.json, raw files in the folder of that name).
usage: python3 microbench/parse_alu_latency.py OUTDIR [OUT.json]"""
import json, re, statistics, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import write  # noqa: E402

IDENT = ("mode", "op", "warps")
#: cases whose SASS is not what they are named after (alu_latency.sass.gz): ptxas folds the rcp.approx chain
#: (rcp of rcp) away, so "mufu_rcp" timed an empty loop (0.31 cycles per link); kept in the raw output only
DROP = ("mufu_rcp",)


def parse(text: str) -> dict:
    rows: dict = {}
    for line in text.splitlines():
        tag, _, rest = line.partition(" ")
        if tag not in ("ALU", "BAR"):
            continue
        kv = dict(re.findall(r"(\w+)=([^\s]+)", rest))
        if kv.get("op") in DROP:
            continue
        ident = {"unit": tag.lower(), **{k: (int(kv[k]) if k == "warps" else kv[k]) for k in IDENT if k in kv}}
        r = rows.setdefault(json.dumps(ident, sort_keys=True), {"params": ident, "reps": []})
        r["reps"].append(float(kv["cycles"]))
    return {"schema": "warpgraph-microbench/1",
            "results": [{"bench": "alu_latency", "params": r["params"],
                         "stats": {"cycles": statistics.median(r["reps"])}, "raw": r["reps"]}
                        for r in rows.values()]}


if __name__ == "__main__":
    write(sys.argv, "alu_latency", parse)

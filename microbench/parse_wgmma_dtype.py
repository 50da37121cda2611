"""Parse microbench/src/wgmma_dtype.cu's output (WG lines) into wgmma_dtype.json: per case, the median over the
launches (reps) of its cycles (tput: SM cycles per wgmma; lat: cycles per fence + wgmma + commit + wait 0), and
for tput the FLOP per SM cycle. Written as a ``warpgraph-microbench/1`` document (what ``warpgraph calibrate``
reads) to OUTDIR/wgmma_dtype.json, or to the path given second (the committed copy:
microbench/results/h200_wgmma_dtype_2026-12-04.json, raw files in the folder of that name).
usage: python3 microbench/parse_wgmma_dtype.py OUTDIR [OUT.json]"""
import json, re, statistics, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import write  # noqa: E402

IDENT = ("mode", "dtype", "n", "k", "warpgroups", "grid")


def parse(text: str) -> dict:
    rows: dict = {}
    for line in text.splitlines():
        tag, _, rest = line.partition(" ")
        if tag != "WG":
            continue
        kv = dict(re.findall(r"(\w+)=([^\s]+)", rest))
        ident = {k: (kv[k] if k in ("mode", "dtype") else int(kv[k])) for k in IDENT if k in kv}
        r = rows.setdefault(json.dumps(ident, sort_keys=True), {"params": ident, "reps": []})
        r["reps"].append(float(kv["cycles"]))
    out = []
    for r in rows.values():
        p, c = r["params"], statistics.median(r["reps"])
        st = {"cycles": c}
        if p["mode"] == "tput":
            st["flop_per_cycle_per_sm"] = round(2 * 64 * p["n"] * p["k"] / c, 1)
        out.append({"bench": "wgmma_dtype", "params": p, "stats": st, "raw": r["reps"]})
    return {"schema": "warpgraph-microbench/1", "results": out}


if __name__ == "__main__":
    write(sys.argv, "wgmma_dtype", parse)

"""Parse microbench/src/membar_load.cu's output (MBL / CTA lines) into membar_load.json: per case (grid, fencers,
bytes, flags), the mean over the launches (reps) of each per-launch median (fence, done_f, done_o: cycles), the
reps' spread, and per fencing CTA the CTA lines of the two cases that print them.
usage: python3 microbench/parse_membar_load.py OUTDIR"""
import json, re, statistics, sys
from pathlib import Path

IDENT = ("grid", "fencers", "bytes", "flags")
STATS = {"fence_med": "fence", "done_f": "done_f", "done_o": "done_o", "fence_min": "fence_min",
         "fence_max": "fence_max"}


def parse(text: str) -> dict:
    rows: dict = {}
    ctas: dict = {}
    for line in text.splitlines():
        tag, _, rest = line.partition(" ")
        kv = dict(re.findall(r"(\w+)=([^\s]+)", rest))
        if tag == "CTA":
            key = " ".join(f"{k}={kv[k]}" for k in IDENT)
            ctas.setdefault(key, []).append({k: (float(kv[k]) if k in ("fence", "done") else int(kv[k]))
                                             for k in ("block", "smid", "fenced", "fence", "done")})
            continue
        if tag != "MBL":
            continue
        kv.setdefault("flags", "0")
        ident = {k: int(kv[k]) for k in IDENT}
        r = rows.setdefault(tuple(ident.items()), {"params": ident, "reps": []})
        r["reps"].append({v: float(kv[k]) for k, v in STATS.items()})
    out = []
    for r in rows.values():
        st = {k: statistics.fmean(x[k] for x in r["reps"]) for k in STATS.values()}
        st["fence_reps"] = [x["fence"] for x in r["reps"]]
        out.append({"bench": "mbl", "params": r["params"], "stats": st})
    return {"results": out, "ctas": ctas}


if __name__ == "__main__":
    d = Path(sys.argv[1])
    res = parse((d / "membar_load.txt").read_text())
    res["source"] = "microbench/src/membar_load.cu on an NVIDIA H200 (see log.txt, smi_before.txt / smi_after.txt)"
    (d / "membar_load.json").write_text(json.dumps(res, indent=1))

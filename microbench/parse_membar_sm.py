"""Parse microbench/src/membar_sm.cu's output (MSM lines) into membar_sm.json: per case (grid, loaders, flags) the
mean over the launches (reps) of each per-launch median (fence: cycles of the fence or of the acq_rel atomic,
load: the loaders' cycles per 8-load batch) and the reps' fences.
usage: python3 microbench/parse_membar_sm.py OUTDIR"""
import json, re, statistics, sys
from pathlib import Path

IDENT = ("grid", "loaders", "flags")
STATS = {"fence_med": "fence", "fence_min": "fence_min", "fence_max": "fence_max", "fence_cta0": "fence_cta0",
         "load_med": "load"}


def parse(text: str) -> dict:
    rows: dict = {}
    for line in text.splitlines():
        tag, _, rest = line.partition(" ")
        if tag != "MSM":
            continue
        kv = dict(re.findall(r"(\w+)=([^\s]+)", rest))
        ident = {k: int(kv[k]) for k in IDENT}
        r = rows.setdefault(tuple(ident.items()), {"params": ident, "reps": []})
        r["reps"].append({v: float(kv[k]) for k, v in STATS.items()})
    out = []
    for r in rows.values():
        st = {k: statistics.fmean(x[k] for x in r["reps"]) for k in STATS.values()}
        st["fence_reps"] = [x["fence"] for x in r["reps"]]
        out.append({"bench": "msm", "params": r["params"], "stats": st})
    return {"results": out}


if __name__ == "__main__":
    d = Path(sys.argv[1])
    res = parse((d / "membar_sm.txt").read_text())
    res["source"] = "microbench/src/membar_sm.cu on an NVIDIA H200 (see log.txt, smi_before.txt / smi_after.txt)"
    (d / "membar_sm.json").write_text(json.dumps(res, indent=1))

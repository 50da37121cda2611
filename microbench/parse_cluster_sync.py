"""Parse microbench/src/cluster_sync.cu's output (FENCE / PING / CBAR lines) into cluster_sync.json: the median
over repetitions of each configuration (the first launch of a configuration is a warm-up and is dropped when there
are later ones). usage: python3 microbench/parse_cluster_sync.py OUTDIR"""
import json, re, statistics, sys
from pathlib import Path


def parse(text: str) -> dict:
    rows: dict = {}
    for line in text.splitlines():
        tag, _, rest = line.partition(" ")
        if tag not in ("FENCE", "PING", "CBAR"):
            continue
        kv = dict(re.findall(r"(\w+)=([^\s]+)", rest))
        val = {"FENCE": "cycles_median", "PING": "cycles_per_round_trip", "CBAR": "cycles_per_iter"}[tag]
        ident = {k: v for k, v in kv.items() if k in ("op", "cond", "grid", "sem", "C", "threads")}
        key = (tag,) + tuple(sorted(ident.items()))
        r = rows.setdefault(key, {"bench": tag.lower(), "params": ident, "reps": [], "after": []})
        r["reps"].append((int(kv.get("rep", 0)), float(kv[val])))
        if "after_median" in kv:
            r["after"].append(float(kv["after_median"]))
    out = []
    for r in rows.values():
        reps = [v for rep, v in r["reps"] if rep > 0] or [v for _, v in r["reps"]]
        st = {"cycles": statistics.median(reps), "reps": [v for _, v in r["reps"]]}
        if r["after"]:
            st["after_cycles"] = statistics.median(r["after"][1:] or r["after"])
        out.append({"bench": r["bench"], "params": r["params"], "stats": st})
    return {"results": out}


if __name__ == "__main__":
    d = Path(sys.argv[1])
    res = parse((d / "cluster_sync.txt").read_text())
    res["source"] = "microbench/src/cluster_sync.cu on an NVIDIA H200 (see log.txt, smi_before.txt / smi_after.txt)"
    (d / "cluster_sync.json").write_text(json.dumps(res, indent=1))
    print(len(res["results"]), "results")

"""Parse microbench/src/mbar_wakeup.cu's output (WAKE / HIST lines) into mbar_wakeup.json: per mode, the median over
launches of each per-launch statistic (every statistic is itself a percentile over the launch's 512 repetitions).
usage: python3 microbench/parse_mbar_wakeup.py OUTDIR"""
import json, re, statistics, sys
from pathlib import Path

IDENT = ("mode", "D", "conv", "sleep")


def parse(text: str) -> dict:
    rows: dict = {}
    hists: dict = {}
    for line in text.splitlines():
        tag, _, rest = line.partition(" ")
        if tag == "HIST":
            head, _, bins = rest.partition("bin16:")
            kv = dict(re.findall(r"(\w+)=([^\s]+)", head))
            key = "{mode} D={D} conv={conv}".format(**kv)
            hists.setdefault(key, []).append({int(b): int(c) for b, c in (x.split(":") for x in bins.split())})
            continue
        if tag != "WAKE":
            continue
        kv = dict(re.findall(r"(\w+)=([^\s]+)", rest))
        ident = {k: kv[k] for k in IDENT}
        r = rows.setdefault(tuple(ident.items()), {"params": ident, "launches": []})
        r["launches"].append({k: float(v) for k, v in kv.items() if k not in IDENT and k != "launch"})
    out = []
    for r in rows.values():
        keys = r["launches"][0].keys()
        st = {k: statistics.median(l[k] for l in r["launches"]) for k in keys}
        st["launches"] = len(r["launches"])
        out.append({"bench": "mbar_wakeup", "params": r["params"], "stats": st})
    return {"results": out, "histograms_wake_go_bin16": hists}


if __name__ == "__main__":
    d = Path(sys.argv[1])
    res = parse((d / "mbar_wakeup.txt").read_text())
    res["source"] = "microbench/src/mbar_wakeup.cu on an NVIDIA H200 (see log.txt, smi_before.txt / smi_after.txt)"
    (d / "mbar_wakeup.json").write_text(json.dumps(res, indent=1))
    print(len(res["results"]), "results")

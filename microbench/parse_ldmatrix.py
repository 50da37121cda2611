"""Parse microbench/src/ldmatrix.cu's output (LDSM / LDS / CTRL lines) into ldmatrix.json: per case, the median over
the launches (reps) of its cycles (lat: per link; tput: SM cycles per instruction).
usage: python3 microbench/parse_ldmatrix.py OUTDIR"""
import json, re, statistics, sys
from pathlib import Path

IDENT = ("mode", "num", "trans", "warps", "vec")


def parse(text: str) -> dict:
    rows: dict = {}
    for line in text.splitlines():
        tag, _, rest = line.partition(" ")
        if tag not in ("LDSM", "LDS", "CTRL"):
            continue
        kv = dict(re.findall(r"(\w+)=([^\s]+)", rest))
        ident = {"tag": tag, **{k: (kv[k] if k == "mode" else int(kv[k])) for k in IDENT if k in kv}}
        val = float(kv.get("cycles", kv.get("cycles_per_inst_sm")))
        r = rows.setdefault(json.dumps(ident, sort_keys=True), {"params": ident, "reps": []})
        r["reps"].append(val)
    return {"results": [{"bench": "ldsm", "params": r["params"],
                         "stats": {"cycles": statistics.median(r["reps"]), "reps": r["reps"]}} for r in rows.values()]}


if __name__ == "__main__":
    d = Path(sys.argv[1])
    res = parse((d / "ldmatrix.txt").read_text())
    res["source"] = "microbench/src/ldmatrix.cu on an NVIDIA H200 (see log.txt, smi_before.txt / smi_after.txt)"
    (d / "ldmatrix.json").write_text(json.dumps(res, indent=1))

"""Per-SASS-instruction warp-state samples of the source_stalls run (device_run.sh), as tables.
For each record's <name>.pcsamp.json (dump_pcsamp.py: ncu_report's per-PC smsp__pcsamp_* metrics) prints the
sampled reasons in total and the instructions holding the most samples with their reasons; with --json OUT writes
{record: [{pc, sass, samples, reasons: {reason: n}}]} for comparison with the model's per-instruction profile
(warpgraph run RECORD --stall-profile). usage: python3 parse_source_stalls.py DIR [--top N] [--json OUT]"""
import argparse
import json
import re
from pathlib import Path

PREFIX = "smsp__pcsamp_warps_issue_stalled_"


def load(path: Path):
    data = json.loads(path.read_text())
    out = []
    for d in data if isinstance(data, list) else [data]:
        if "metrics" not in d:
            continue
        rows: dict[int, dict] = {}
        for name, vals in d["metrics"].items():
            if not name.startswith(PREFIX) or name.endswith("_not_issued"):
                continue
            reason = name[len(PREFIX):]
            for pc, v in vals.items():
                if v:
                    r = rows.setdefault(int(pc), {"pc": int(pc), "sass": d.get("sass", {}).get(str(pc), ""),
                                                  "reasons": {}})
                    r["reasons"][reason] = r["reasons"].get(reason, 0) + v
        for r in rows.values():
            r["samples"] = sum(r["reasons"].values())
        out.append({"kernel": d.get("kernel"), "rows": sorted(rows.values(), key=lambda r: r["pc"])})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    res = {}
    for f in sorted(Path(a.dir).glob("*.pcsamp.json")):
        name = f.name[: -len(".pcsamp.json")]
        ks = load(f)
        if not ks:
            print(f"== {name}: no per-PC samples ({f.read_text()[:200]})")
            continue
        # the record's kernel: ncu also sampled torch's buffer-initialisation kernels of the same process
        ks = [k for k in ks if "elementwise" not in str(k["kernel"])] or ks
        k0 = max(ks, key=lambda k: sum(r["samples"] for r in k["rows"]))
        rows = k0["rows"]
        res[name] = rows
        tot = sum(r["samples"] for r in rows) or 1
        by = {}
        for r in rows:
            for k, v in r["reasons"].items():
                by[k] = by.get(k, 0) + v
        print(f"== {name} ({k0['kernel']}): {tot:.0f} samples over {len(rows)} instructions")
        print("   " + ", ".join(f"{k} {v / tot:.1%}" for k, v in sorted(by.items(), key=lambda x: -x[1]) if v / tot > 0.005))
        for r in sorted(rows, key=lambda r: -r["samples"])[: a.top]:
            s = re.sub(r"\s+", " ", r["sass"])[:60]
            rs = ", ".join(f"{k} {v / tot:.1%}" for k, v in sorted(r["reasons"].items(), key=lambda x: -x[1])
                           if v / tot > 0.003)
            print(f"   {r['pc']:#07x} {s:60s} {r['samples'] / tot:6.1%}  {rs}")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=0))


if __name__ == "__main__":
    main()

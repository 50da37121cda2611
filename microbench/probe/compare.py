"""Per-iteration timelines of a TMA pipeline, from the card (run_probes_gpu.py's .npz) and from the model (a
`warpgraph run RECORD --trace T.json --trace-sms 0,1` trace), summarised the same way:

  period   cycles between successive completed mbarrier waits of one CTA (one K-iteration)
  lag      cycles from the issue of a stage's first TMA load to the completed wait on that stage
  compute  cycles from a completed wait to the CTA's next TMA issue (wgmma issue + wait_group + bar.syncs)
  span     first probe to last, per CTA

usage: python3 compare.py RESULT.npz [--trace T.json] [--mode cold|warm] [--rep K]
Reads numpy and json only (no GPU, no warpgraph import; the probe ids from probe_ptx.py).
"""
import argparse
import json
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_ptx import PROBES  # noqa: E402  (the probe ids the instrumented kernel stores)

WAIT, TMA, START = PROBES["wait"], PROBES["tma"], PROBES["start"]


def hw_ctas(npz, mode="cold", rep=0):
    """{cta: {'sm': id, 'wait': [...], 'tma': [...], 'start': t, 'end': t}} from the probes of one launch."""
    d = np.load(npz)
    p = d["probes"][("cold", "warm").index(mode), rep]
    out = {}
    for c in range(p.shape[0]):
        rows = p[c][p[c][:, 2] != 0]
        if not len(rows):
            continue
        t = rows[:, 0].astype(np.int64) | (rows[:, 1].astype(np.int64) << 32)
        ids = rows[:, 2]
        out[c] = {"sm": int(rows[0, 3]), "wait": t[ids == WAIT], "tma": t[ids == TMA],
                  "start": int(t[ids == START][0]) if (ids == START).any() else int(t[0]), "end": int(t[-1])}
    return out, {k: d[k] for k in ("plain_us", "probed_us")}


def model_ctas(trace):
    """The same per-CTA timelines from a model trace (mbarrier.wait ends of the bundle holding warp 0, TMA load
    issues)."""
    ev = json.load(open(trace))["traceEvents"]
    out = {}
    for e in ev:
        cat, a = e.get("cat"), e.get("args", {})
        if cat == "cta" and e.get("ph") == "b":
            c = out.setdefault(a["cta"], {"wait": [], "tma": [], "tma_done": []})
            c["start"], c["end"], c["sm"] = a["t_launch"], a["t_done"], e["pid"] - 1
        elif cat == "mbarrier.wait" and e.get("ph") == "b" and e["name"].startswith("wait warps 0-"):
            cta = int(re.search(r"CTA (\d+)", e["name"]).group(1))
            out.setdefault(cta, {"wait": [], "tma": [], "tma_done": []})["wait"].append(a["t1"])
        elif cat == "tma" and not a.get("store") and e.get("ph") == "b":
            cta = int(re.search(r"CTA (\d+)", a["warp"]).group(1))
            c = out.setdefault(cta, {"wait": [], "tma": [], "tma_done": []})
            c["tma"].append(a["t_issue"])
            c["tma_done"].append(a["t_done"])
    for c in out.values():
        for k in ("wait", "tma", "tma_done"):
            c[k] = np.sort(np.asarray(c[k], dtype=np.int64))
    return out


def summarise(ctas):
    per = {"period": [], "lag": [], "compute": [], "span": []}
    for c in ctas.values():
        w, t = c["wait"], c["tma"]
        if len(w) < 3 or not len(t):
            continue
        k = len(t) // len(w) if len(t) >= len(w) else 1
        per["period"] += list(np.diff(w))
        per["lag"] += [w[j] - t[k * j] for j in range(len(w)) if k * j < len(t)]
        per["compute"] += [t[np.searchsorted(t, x)] - x for x in w if np.searchsorted(t, x) < len(t)]
        per["span"].append(c["end"] - c["start"])
    return {k: {"median": float(np.median(v)), "p10": float(np.percentile(v, 10)), "p90": float(np.percentile(v, 90)),
                "n": len(v)} for k, v in per.items() if v}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("npz")
    ap.add_argument("--trace")
    ap.add_argument("--mode", default="cold")
    ap.add_argument("--rep", type=int, default=0)
    a = ap.parse_args()
    hw, times = hw_ctas(a.npz, a.mode, a.rep)
    print(f"card ({a.mode}, rep {a.rep}): plain {np.median(times['plain_us'], axis=1)} us, "
          f"probed {np.median(times['probed_us'], axis=1)} us (cold, warm medians)")
    rows = [("card", summarise(hw))]
    if a.trace:
        rows.append(("model", summarise(model_ctas(a.trace))))
    for name, s in rows:
        print(name, "  ".join(f"{k} {v['median']:.0f} [{v['p10']:.0f}-{v['p90']:.0f}] n={v['n']}" for k, v in s.items()))


if __name__ == "__main__":
    main()

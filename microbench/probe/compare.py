"""Per-iteration timelines of a TMA pipeline, from the card (run_probes_gpu.py's .npz) and from the model (a
`warpgraph run RECORD --trace T.json --trace-sms 0,1` trace), summarised the same way:

  period   cycles between successive completed mbarrier waits of one CTA (one K-iteration)
  lag      cycles from the issue of a stage's first TMA load to the completed wait on that stage
  compute  cycles from a completed wait to the CTA's next TMA issue (wgmma issue + wait_group + bar.syncs)
  span     first probe to last, per CTA

A per-warp result (run_probes_gpu.py --per-warp) is summarised per CTA instead (--warps):

  skew     cycles between the first and the last warp of a CTA reaching its k-th bar.sync
  wait     cycles from a warp's arrive clock to its next clock, mean over the CTA's warps: ptxas emits bar.sync as
           BAR.SYNC.DEFER_BLOCKING, so a warp that issues no barrier-dependent instruction next reads that clock
           before the barrier resolves (not the barrier wait; results/h100_warp_probes_2026-12-07/README.md)
  life     first warp's start to last warp's end, per CTA (with --trace: the model's CTA launch to retire)
  gap      cycles between successive CTA starts on one SM (its first 16 CTAs): the dispatch rate

usage: python3 compare.py RESULT.npz [--trace T.json] [--mode cold|warm] [--rep K] [--warps]
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
ARRIVE, BAR, END = PROBES["arrive"], PROBES["bar"], PROBES["end"]


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


def warp_summary(npz, mode="cold", rep=0):
    """Per-CTA barrier skew / wait and lifetime from a per-warp probe result (see the module docstring)."""
    d = np.load(npz)
    w = int(d["warps"]) if "warps" in d else 1
    p = d["probes"][("cold", "warm").index(mode), rep]
    ctas = p.shape[0] // w
    skew, wait, life, t0s, sm_starts = {}, {}, [], [], {}
    for c in range(ctas):
        arr, bar, st, en = [], [], [], []
        for j in range(w):
            rows = p[c * w + j]
            rows = rows[rows[:, 2] != 0]
            if not len(rows):
                continue
            t = rows[:, 0].astype(np.int64) | (rows[:, 1].astype(np.int64) << 32)
            ids = rows[:, 2]
            arr.append(t[ids == ARRIVE])
            bar.append(t[ids == BAR])
            st.append(t[ids == START][:1])
            en.append(t[ids == END][-1:])
        if not arr:
            continue
        nb = min(len(a) for a in arr)
        for k in range(nb):
            a = np.array([x[k] for x in arr])
            b = np.array([x[k] for x in bar if len(x) > k])
            skew.setdefault(k, []).append(int(a.max() - a.min()))
            if len(b) == len(a):
                wait.setdefault(k, []).append(float((b - a).mean()))
        s0 = min(int(x[0]) for x in st if len(x))
        t0s.append(s0)
        sm_starts.setdefault(int(p[c * w][0, 3]), []).append(s0)
        life.append(max(int(x[0]) for x in en if len(x)) - s0)
    q = lambda v: f"{np.median(v):.0f} [{np.percentile(v, 10):.0f}-{np.percentile(v, 90):.0f}]"
    out = {f"bar{k} skew": q(v) for k, v in skew.items()}
    out.update({f"bar{k} wait": q(v) for k, v in wait.items()})
    out["life"] = q(life)
    out["ctas"] = len(life)
    # the CTA dispatch: per SM, cycles between successive CTA starts of its first 16 (clock64 is per SM: only
    # differences on one SM are compared)
    gaps = [g for v in sm_starts.values() for g in np.diff(np.sort(v)[:16])]
    if gaps:
        out["sm start gap (first 16)"] = q(gaps)
        out["ctas per sm"] = q([len(v) for v in sm_starts.values()])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("npz")
    ap.add_argument("--trace")
    ap.add_argument("--mode", default="cold")
    ap.add_argument("--rep", type=int, default=0)
    ap.add_argument("--warps", action="store_true", help="a per-warp result: barrier skew / wait, CTA lifetimes")
    a = ap.parse_args()
    if a.warps:
        out = {"card": warp_summary(a.npz, a.mode, a.rep)}
        if a.trace:
            life = [c["end"] - c["start"] for c in model_ctas(a.trace).values() if "start" in c]
            out["model"] = {"life": f"{np.median(life):.0f} [{np.percentile(life, 10):.0f}-"
                                    f"{np.percentile(life, 90):.0f}]", "ctas": len(life)}
        print(json.dumps(out, indent=1))
        return
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

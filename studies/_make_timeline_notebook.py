"""Build ``studies/fa_timelines.ipynb`` reproducibly (no outputs stored): ``python studies/_make_timeline_notebook.py``.

The notebook uses the public API only (``warpgraph.simulate``, ``warpgraph.load_record``, ``warpgraph.scale_record``
for the CI sizes; ``warpgraph.analysis.validate_chrome_trace`` to check the traces it writes). Executed by ``tests/test_trace_notebook.py`` with
``WARPGRAPH_CI=1``.
"""
from pathlib import Path

import nbformat as nbf
from nbformat.v4 import new_code_cell as code
from nbformat.v4 import new_markdown_cell as md
from nbformat.v4 import new_notebook

OUT = Path(__file__).resolve().parent / "fa_timelines.ipynb"

CELLS = [
    md("""# One FlashAttention launch, through its timelines: sm_80 (mma.sync) vs sm_90a (wgmma)

The same Triton FlashAttention source compiled for sm_80 (`attn80_B4_H16_S1024_D64_causal0`: `mma.sync` +
`cp.async` + `ldmatrix`, FA-2 style) and for sm_90a (`attn_B4_H16_S1024_D64_causal0`: asynchronous `wgmma` +
`cp.async`), both run on the H200 model with event recording on. For each launch we

1. write a **Perfetto trace** (per SM: CTAs, TMA, mbarrier, tensor-core tracks and one track per warp bundle with
   its issue runs and stall slices named like Nsight Compute's stall reasons; GPU-wide L2/HBM bandwidth and
   backlog counters),
2. plot **utilisation over time** (issue slots, tensor cores, TMA, HBM, L2),
3. compare the **stall breakdowns** side by side,
4. put the simulated cycles against the **roofline bound**.

`WARPGRAPH_CI=1` runs small sizes (B1 H2 S256, `warpgraph.scale_record`) so the notebook executes in well under a minute;
unset, it runs the full calibration launches (minutes)."""),
    code("""%matplotlib inline
import os, tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import display

import warpgraph
from warpgraph import load_record, scale_record, simulate
from warpgraph.analysis import validate_chrome_trace

CI = os.environ.get("WARPGRAPH_CI", "") not in ("", "0")
OUT = Path(os.environ.get("WARPGRAPH_TRACE_DIR", Path(tempfile.gettempdir()) / "warpgraph_fa_timelines"))
OUT.mkdir(parents=True, exist_ok=True)
KERNELS = {"FA-2 style (sm_80, mma.sync)": "h200/attn80_B4_H16_S1024_D64_causal0",
           "FA-3 style (sm_90a, wgmma)": "h200/attn_B4_H16_S1024_D64_causal0"}
records = {}
for label, name in KERNELS.items():
    r = load_record(name)      # a bundled record by its short name
    records[label] = scale_record(r, B=1, H=2, S=256) if CI else r
print("CI sizes:" if CI else "full sizes:", {k: r.name for k, r in records.items()})"""),
    md("""## 1. Simulate with tracing on and write the Perfetto traces

`simulate(..., trace_path=...)` records SMs 0-3 by default (`trace_sms=[...]` or `"all"` to change it,
`trace_window=(t0, t1)` in cycles to cut a time slice). Tracing does not change the simulated cycles.

**To look at a trace**: open <https://ui.perfetto.dev>, click *Open trace file* and pick the `.json.gz` printed
below (or drag it onto the page). Each SM is a process: expand it to see the `CTAs`, `tensor core`, `TMA` and
`mbarrier` tracks and one track per warp bundle (`warps 0-3 (CTA 0, bundle of 4)`: warps with identical
instruction streams replayed together). Press `W`/`S` to zoom, click a slice for its cycles. The CLI equivalent is
`warpgraph run RECORD --trace out.json.gz [--trace-sms 0,1] [--trace-window 0:20000] --utilization util.png`."""),
    code("""runs = {}
for label, rec in records.items():
    path = OUT / f"{rec.name}.json.gz"
    runs[label] = simulate(rec, "h200", trace_path=path)
    info = runs[label].metrics["trace"]
    check = validate_chrome_trace(path)
    print(f"{label}: {runs[label].metrics['cycles']:,} cycles; trace {path} "
          f"({info['events']:,} events, SMs {info['sms']}, {check['tracks']} tracks)")"""),
    code("""rows = {}
for label, r in runs.items():
    m, ev = r.metrics, r.events
    rows[label] = {"cycles": m["cycles"], "warp instructions": m["warp_instructions"],
                   "tensor util % (GPU)": m["tensor_utilization_pct"],
                   "occupancy %": m["achieved_occupancy_pct"],
                   "traced warp tracks": len({row[1] for row in ev["issue"]}),
                   "tensor ops (traced SMs)": len(ev["tensor"]), "TMA transactions": len(ev["tma"]),
                   "mbarrier phases": len(ev["mbar_phase"])}
pd.DataFrame(rows)"""),
    md("""## 2. Utilisation over time

`RunResult.utilization(bucket_cycles)` buckets the recorded events: issue slots, tensor-core FLOPs (against the
per-SM dense FP16 peak) and TMA activity are averaged over the traced SMs; HBM and L2 bandwidth are GPU-wide
(`analysis.utilization`). Neither kernel uses TMA (both load K/V with `cp.async`), so `tma` stays at 0 here."""),
    code("""bucket = 500 if CI else 2000
util = {label: r.utilization(bucket) for label, r in runs.items()}
cols = ["issue_pct", "tensor_pct", "tma_pct", "hbm_pct", "l2_pct"]
fig, axes = plt.subplots(1, 2, figsize=(13, 3.8), sharey=True)
for ax, (label, df) in zip(axes, util.items()):
    for c in cols:
        if not df[c].isna().all():
            ax.step(df["t_start"], df[c], where="post", label=c.replace("_pct", ""))
    ax.set_title(label, fontsize=10)
    ax.set_xlabel("cycles")
    ax.grid(alpha=0.3)
axes[0].set_ylabel("% of peak")
axes[1].legend(fontsize="small")
fig.tight_layout()
display(fig)
plt.close(fig)
pd.DataFrame({label: df[cols].mean().round(1) for label, df in util.items()})"""),
    md("""## 3. Stall breakdown side by side

Left: the whole-GPU stall counters (cycles per issued instruction, Nsight Compute's
`smsp__average_warp_latency_issue_stalled_*` ratios). Right: the same reasons as recorded in the trace slices of
the traced SMs (cycles summed over the bundle tracks), i.e. what the warp tracks in Perfetto are made of."""),
    code("""ratios = pd.DataFrame({label: r.metrics["stall_ratios_per_issue"] for label, r in runs.items()}).fillna(0.0)
ratios = ratios.drop(index=["selected"], errors="ignore")
ratios = ratios[(ratios > 0.005).any(axis=1)]
traced = {}
for label, r in runs.items():
    st = r.events.frame("stall")
    st["reason"] = [r.events.reason_name(x) for x in st["reason"]]
    st["cycles"] = st["t1"] - st["t0"]
    traced[label] = st.groupby("reason")["cycles"].sum()
traced = pd.DataFrame(traced).fillna(0.0)
traced = traced / traced.sum()
fig, axes = plt.subplots(1, 2, figsize=(13, 4))
ratios.plot.barh(ax=axes[0])
axes[0].set_title("stall cycles per issued instruction (GPU)", fontsize=10)
traced.loc[traced.max(axis=1) > 0.005].plot.barh(ax=axes[1])
axes[1].set_title("share of stall time in the traced warp tracks", fontsize=10)
fig.tight_layout()
display(fig)
plt.close(fig)
ratios.round(3)"""),
    md("""## 4. Roofline bound vs simulated

Every `RunResult.metrics["roofline"]` carries the bound of `warpgraph.analysis.roofline` (useful FLOPs of the
reference computation at the tensor peak of the kernel's instruction family -- `mma.sync` is capped by its issue
rate -- against the minimum DRAM bytes at peak HBM bandwidth): `bound_cycles`, `bound_by` and
`sim_over_bound` = simulated / bound cycles (1.0 would be at the roofline)."""),
    code("""rf = pd.DataFrame({label: {k: r.metrics["roofline"].get(k) for k in
                            ("bound_by", "bound_cycles", "compute_bound_cycles", "memory_bound_cycles",
                             "tensor_path", "flops", "min_dram_bytes", "sim_over_bound")}
                   | {"simulated_cycles": r.metrics["cycles"]}
                   for label, r in runs.items()})
fig, ax = plt.subplots(figsize=(7, 3))
x = range(len(runs))
ax.bar([i - 0.2 for i in x], [r.metrics["roofline"]["bound_cycles"] for r in runs.values()], 0.4, label="roofline bound")
ax.bar([i + 0.2 for i in x], [r.metrics["cycles"] for r in runs.values()], 0.4, label="simulated")
ax.set_xticks(list(x), [k.split(" (")[0] for k in runs], fontsize=9)
ax.set_ylabel("cycles")
ax.set_yscale("log")
ax.legend(fontsize="small")
fig.tight_layout()
display(fig)
plt.close(fig)
rf"""),
    md("""## 5. Zoom: one warp bundle of SM 0

The first bundle track of SM 0 of each launch: where its time goes between launch and exit (the slices of the
Perfetto track `SM 0 / warps ...`)."""),
    code("""for label, r in runs.items():
    ev = r.events
    labels = ev.meta.get("warp_labels", {})
    iss = ev.frame("issue")
    g = int(iss[iss["sm"] == 0]["gwarp"].min())
    st = ev.frame("stall")
    st = st[st["gwarp"] == g]
    busy = iss[iss["gwarp"] == g]
    parts = {"issue": int((busy["t1"] - busy["t0"]).sum())}
    for reason, grp in st.groupby("reason"):
        parts[ev.reason_name(reason)] = int((grp["t1"] - grp["t0"]).sum())
    total = sum(parts.values())
    top = sorted(parts.items(), key=lambda kv: -kv[1])[:6]
    print(f"{label}: {labels.get(g, g)}: {total:,} cycles -> " +
          ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in top))"""),
]


def build(path: Path = OUT) -> Path:
    nb = new_notebook(cells=CELLS, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}})
    for i, c in enumerate(nb.cells):  # deterministic ids: rebuilding gives the same file
        c["id"] = f"cell-{i:02d}"
    nbf.write(nb, str(path))
    return path


if __name__ == "__main__":
    print(build())

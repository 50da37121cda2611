"""Helpers for the case-study notebooks (public API only: load_arch, load_record, simulate, UserError;
plus warpgraph.explore for the sweeps)."""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

import warpgraph

# CI switch: WARPGRAPH_CI=1 -> small records / few trials / sampled mode (minutes, not hours)
REDUCED = os.environ.get("WARPGRAPH_CI", "") not in ("", "0")
MODE = "sampled" if REDUCED else "timing"
HERE = Path(__file__).resolve().parent
RECORDS = Path(warpgraph.__file__).resolve().parent / "workloads" / "records"


def record(name: str) -> Path:
    """A bundled launch record, e.g. ``h200/gemm_tma_M2048_N2048_K2048``."""
    return RECORDS / name


def measured(name: str) -> dict | None:
    try:
        return warpgraph.load_record(record(name)).measured
    except Exception:
        return None


def arch_available(name: str) -> bool:
    try:
        warpgraph.load_arch(name)
        return True
    except Exception:
        return False


def simulate(name: str, arch: str = "h200", overrides: dict | None = None, mode: str | None = None) -> dict:
    """Metrics dict of one run, or {'error': message} (a what-if knob the model lacks is reported, not raised)."""
    try:
        res = warpgraph.simulate(record(name), arch=arch, mode=mode or MODE, overrides=overrides or None)
        m = dict(res.metrics)
        m.setdefault("instruction_mix", instruction_mix(res.stats))
        m.setdefault("tensor_core_stats", unit_stats(res.stats, "tensor"))
        return m
    except warpgraph.UserError as e:
        return {"error": str(e)}


def instruction_mix(stats) -> dict:
    """Issued warp instructions per op class (``gpu.ops`` rows of RunResult.stats), or {}."""
    try:
        ops = stats[stats.component == "gpu.ops"]
        return {str(k): float(v) for k, v in zip(ops.stat, ops.value)}
    except Exception:
        return {}


def unit_stats(stats, name: str) -> dict:
    """Counters of the components whose name contains ``name`` (e.g. ``tensor``), summed over instances."""
    try:
        sel = stats[stats.component.astype(str).str.contains(name)]
        return {str(k): float(v) for k, v in sel.groupby("stat").value.sum().items()}
    except Exception:
        return {}


def summary(runs: dict[str, dict], keys=("cycles", "warp_instructions", "achieved_occupancy_pct",
                                         "tensor_utilization_pct", "dram_read_bytes", "l2_bytes",
                                         "wall_seconds")) -> pd.DataFrame:
    rows = {}
    for label, m in runs.items():
        rows[label] = {k: m.get(k) for k in keys}
        if "error" in m:
            rows[label]["error"] = m["error"].splitlines()[0]
    return pd.DataFrame(rows).T


def stalls(runs: dict[str, dict], top: int = 10) -> pd.DataFrame:
    df = pd.DataFrame({k: (m.get("stall_ratios_per_issue") or {}) for k, m in runs.items()}).fillna(0.0)
    if df.empty:
        return df
    return df.loc[df.max(axis=1).sort_values(ascending=False).index[:top]]


def write_study(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path

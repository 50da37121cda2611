"""Cost proxies computed from an ArchSpec, and aggregation of per-workload metrics.

``sram_bytes`` = per-SM on-chip storage × SMs + L2 capacity, where per-SM storage is
``max(shared-memory capacity, L1 capacity)`` (Hopper's L1 and shared memory are one unified array; taking
the max avoids counting it twice) + register-file bytes.

``area_units`` (a documented *linear* proxy, not a layout estimate; coefficients can be changed per study
with ``area_coefficients:``)::

    area_units = sm        * n_sms
               + tensor    * n_sms * tensor_flop_per_cycle_per_sm / 1024
               + sram_mib  * sram_bytes / 2**20
               + tma_slot  * n_sms * tma_admission_depth

with defaults ``sm=1.0, tensor=0.5, sram_mib=2.0, tma_slot=0.05`` (H200 ≈ 132 + 264 + ~240 + 106 units).

The ArchSpec fields are found by name (the first field of the section whose name matches), so the proxies
keep working when sections gain fields; :func:`cost_inputs` returns the values *and* the paths it used.
"""
from __future__ import annotations

import math
import re
from typing import Any

AREA_DEFAULTS = {"sm": 1.0, "tensor": 0.5, "sram_mib": 2.0, "tma_slot": 0.05}

_EXCLUDE = ("per_cycle", "bank", "line", "sector", "latency", "cta", "per_block", "per_thread", "granule",
            "alignment", "mhz", "cycles", "width", "page", "assoc")


def _dump(arch) -> dict:
    if isinstance(arch, dict):
        return arch
    if hasattr(arch, "model_dump"):
        return arch.model_dump()
    return dict(vars(arch))


def _num(v) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    return None


def _find(d: dict, section_names, patterns, exclude=_EXCLUDE, prefix="") -> tuple[float | None, str | None]:
    """First numeric field (depth-first, in declaration order) in one of ``section_names`` whose key matches
    one of ``patterns`` (regexes, tried in order) and contains no ``exclude`` word."""
    secs = [(s, d.get(s)) for s in section_names if isinstance(d.get(s), dict)]
    for pat in patterns:
        rx = re.compile(pat)
        for sname, sec in secs:
            hit = _walk(sec, rx, exclude, f"{sname}")
            if hit[0] is not None:
                return hit
    return None, None


def _walk(sec: dict, rx, exclude, path):
    for k, v in sec.items():
        p = f"{path}.{k}"
        if isinstance(v, dict):
            continue
        if rx.search(k) and not any(x in k for x in exclude) and _num(v) is not None:
            return _num(v), p
    for k, v in sec.items():  # then nested sections
        if isinstance(v, dict):
            hit = _walk(v, rx, exclude, f"{path}.{k}")
            if hit[0] is not None:
                return hit
    return None, None


def cost_inputs(arch) -> dict[str, Any]:
    d = _dump(arch)
    out: dict[str, Any] = {}
    n, p = _find(d, ["sm", "chip", "gpu", "fabric", "cta_scheduler"],
                 [r"^(n_|num_)?sms?(_count)?$", r"^sm_count$", r"^count$", r"sms$"])
    if n is None:
        for k in ("n_sms", "num_sms", "sm_count", "sms"):
            if _num(d.get(k)) is not None:
                n, p = _num(d[k]), k
                break
    out["n_sms"], out["n_sms_path"] = n or 0.0, p
    cap = [r"capacity_bytes$", r"size_bytes$", r"^capacity", r"bytes_per_sm$", r"max.*_bytes$", r"_bytes$"]
    smem, ps = _find(d, ["shared_memory", "smem"], cap)
    l1, pl1 = _find(d, ["l1"], cap)
    l2, pl2 = _find(d, ["l2"], [r"capacity_bytes$", r"size_bytes$", r"^capacity", r"_bytes$"],
                    exclude=_EXCLUDE + ("slice", "per_slice"))
    if l2 is None:  # only per-slice capacity given
        per, pp = _find(d, ["l2"], [r"slice.*(capacity|size)_bytes$"])
        ns, pns = _find(d, ["l2"], [r"^(n_|num_)?slices$", r"slices_count"])
        if per is not None and ns is not None:
            l2, pl2 = per * ns, f"{pp}*{pns}"
    rf, prf = _find(d, ["sm", "subpartition", "register_file"], [r"register.*_bytes$", r"^regfile.*bytes",
                                                                   r"rf_bytes$"])
    if rf is not None and prf and prf.startswith("subpartition"):
        nsp, _ = _find(d, ["sm", "subpartition"], [r"^(n_|num_)?(sub_?partitions|sps)(_per_sm)?$"])
        rf *= nsp or 4
        prf += f"*{nsp or 4}"
    if rf is None:
        regs, prf = _find(d, ["sm", "subpartition"], [r"^(n_|num_)?registers(_per_sm)?$", r"regs_per_sm"])
        rf = regs * 4 if regs is not None else None
    out.update(smem_bytes_per_sm=smem or 0.0, smem_path=ps, l1_bytes_per_sm=l1 or 0.0, l1_path=pl1,
               l2_bytes=l2 or 0.0, l2_path=pl2, register_file_bytes_per_sm=rf or 0.0, register_file_path=prf)
    tc, ptc = _find(d, ["tensor_core", "tensor"], [r"fp16.*flop_per_cycle", r"f16.*flop_per_cycle",
                                                   r"flop_per_cycle"], exclude=("latency",))
    out["tensor_flop_per_cycle_per_sm"], out["tensor_path"] = tc or 0.0, ptc
    depth, pd = _find(d, ["tma"], [r"admission_depth", r"depth", r"in_flight", r"max_outstanding"])
    out["tma_admission_depth"], out["tma_depth_path"] = depth or 0.0, pd
    return out


def sram_bytes(arch, inputs: dict | None = None) -> float:
    c = inputs or cost_inputs(arch)
    per_sm = max(c["smem_bytes_per_sm"], c["l1_bytes_per_sm"]) + c["register_file_bytes_per_sm"]
    return float(per_sm * c["n_sms"] + c["l2_bytes"])


def area_units(arch, coefficients: dict | None = None, inputs: dict | None = None) -> float:
    c = inputs or cost_inputs(arch)
    k = {**AREA_DEFAULTS, **(coefficients or {})}
    n = c["n_sms"]
    return float(k["sm"] * n + k["tensor"] * n * c["tensor_flop_per_cycle_per_sm"] / 1024
                 + k["sram_mib"] * sram_bytes(arch, c) / 2 ** 20 + k["tma_slot"] * n * c["tma_admission_depth"])


def cost_metrics(arch, coefficients: dict | None = None) -> dict[str, float]:
    c = cost_inputs(arch)
    return {"sram_bytes": sram_bytes(arch, c), "area_units": area_units(arch, coefficients, c)}


# ------------------------------------------------------------------------------- aggregation
_MEAN_SUFFIXES = ("_pct", "_per_issue", "_per_second", "ratio", "_ratios", "_utilization", "_rate")


def _is_mean_key(k: str) -> bool:
    return any(s in k for s in _MEAN_SUFFIXES)


def aggregate(per_workload: dict[str, dict]) -> dict[str, Any]:
    """Combine the metrics of several workloads: extensive quantities (cycles, bytes, instructions, seconds)
    are summed; rates, percentages and ratios are averaged (unweighted). Nested dicts recurse."""
    ms = list(per_workload.values())
    if len(ms) == 1:
        return dict(ms[0])
    return _agg(ms, mean=False)


def _agg(ms: list[dict], mean: bool) -> dict:
    out: dict[str, Any] = {}
    keys: list[str] = []
    for m in ms:
        for k in m:
            if k not in keys:
                keys.append(k)
    for k in keys:
        vals = [m.get(k) for m in ms if k in m]
        if all(isinstance(v, dict) for v in vals):
            out[k] = _agg(vals, mean or _is_mean_key(k))
            continue
        nums = [_num(v) for v in vals]
        if any(x is None for x in nums):
            continue
        use_mean = mean or _is_mean_key(k)
        out[k] = sum(nums) / len(nums) if use_mean else sum(nums)
    return out


def jsonable(x):
    """Metrics -> JSON-serialisable plain data (numpy scalars/arrays, NaN, nested dicts)."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    if isinstance(x, int):
        return int(x)
    try:
        f = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(f) or math.isinf(f):
        return None
    return int(f) if hasattr(x, "dtype") and getattr(x.dtype, "kind", "") in "iu" else f


def lookup(metrics: dict, name: str):
    """``cycles`` or a dotted name into nested dicts (``stall_ratios_per_issue.long_scoreboard``)."""
    if name in metrics:
        return metrics[name]
    cur: Any = metrics
    for part in name.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur

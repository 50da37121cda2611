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

with defaults ``sm=1.0, tensor=0.5, sram_mib=2.0, tma_slot=0.05`` (H200 ≈ 132 + 264 + ~207 + 211 units).

The inputs are typed reads of the validated :class:`~warpgraph.topologies.schema.ArchSpec`
(:func:`cost_inputs` returns the values *and* the dotted field paths it read):

=============================  =====================================================================
``n_sms``                      ``sm.count``
``smem_bytes_per_sm``          ``sm.shared_memory_bytes`` (shared memory per SM, max carveout)
``l1_bytes_per_sm``            ``l1.size_bytes`` (the unified L1 array)
``register_file_bytes_per_sm`` ``sm.registers`` × 4 (32-bit registers)
``l2_bytes``                   ``l2.reuse_capacity_bytes``, or ``l2.size_bytes`` when that is None: the L2
                               capacity the simulator models (runner/simulate.py), so a study that sweeps
                               the L2 capacity changes cycles and cost together
``tensor_flop_per_cycle_per_sm`` ``tensor_core.dense_fp16_flop_per_cycle_per_sm`` (the variant's
                               ``dense_fp16_peak()``; 0 with path None for ``mma_sync``, which declares none)
``tma_admission_depth``        ``tma.admission_depth`` (0 with path None for a TMA variant without one)
=============================  =====================================================================

Any other object (e.g. the toy architecture of :mod:`warpgraph.explore.testing`, returned by a custom
``arch_loader:``) must provide a ``cost_inputs()`` method returning the same keys; anything else is a
``SpecError``.
"""
from __future__ import annotations

import math
from typing import Any

AREA_DEFAULTS = {"sm": 1.0, "tensor": 0.5, "sram_mib": 2.0, "tma_slot": 0.05}

#: the keys of :func:`cost_inputs` (values; each has a ``*_path`` companion below)
COST_INPUT_KEYS = {"n_sms": "n_sms_path", "smem_bytes_per_sm": "smem_path", "l1_bytes_per_sm": "l1_path",
                   "l2_bytes": "l2_path", "register_file_bytes_per_sm": "register_file_path",
                   "tensor_flop_per_cycle_per_sm": "tensor_path", "tma_admission_depth": "tma_depth_path"}


def _num(v) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    return None


def _arch_cost_inputs(a) -> dict[str, Any]:
    """Typed reads of a validated ArchSpec (see the module docstring for the fields)."""
    out: dict[str, Any] = {"n_sms": float(a.sm.count), "n_sms_path": "sm.count"}
    out["smem_bytes_per_sm"], out["smem_path"] = float(a.sm.shared_memory_bytes), "sm.shared_memory_bytes"
    out["l1_bytes_per_sm"], out["l1_path"] = float(a.l1.size_bytes), "l1.size_bytes"
    if a.l2.reuse_capacity_bytes is not None:
        out["l2_bytes"], out["l2_path"] = float(a.l2.reuse_capacity_bytes), "l2.reuse_capacity_bytes"
    else:
        out["l2_bytes"], out["l2_path"] = float(a.l2.size_bytes), "l2.size_bytes"
    out["register_file_bytes_per_sm"], out["register_file_path"] = 4.0 * a.sm.registers, "sm.registers"
    tc = a.tensor_core
    peak = tc.dense_fp16_peak()
    if peak is None:  # mma_sync: no per-SM dense peak (its rate is the per-shape issue gaps)
        out["tensor_flop_per_cycle_per_sm"], out["tensor_path"] = 0.0, None
    else:
        field = "dense_fp16_flop_per_cycle_per_sm"
        out["tensor_flop_per_cycle_per_sm"] = float(peak)
        out["tensor_path"] = (f"tensor_core.{field}" if field in type(tc).model_fields
                              else "tensor_core.dense_fp16_peak()")
    if "admission_depth" in type(a.tma).model_fields:
        out["tma_admission_depth"], out["tma_depth_path"] = float(a.tma.admission_depth), "tma.admission_depth"
    else:  # a registered TMA variant without an admission window
        out["tma_admission_depth"], out["tma_depth_path"] = 0.0, None
    return out


def cost_inputs(arch) -> dict[str, Any]:
    """The inputs of :func:`sram_bytes` / :func:`area_units`: ``{key: value, key_path: dotted field}``.

    ``arch`` is a validated ArchSpec (what ``warpgraph.load_arch`` returns), or an object with its own
    ``cost_inputs()`` method (a custom ``arch_loader:``'s spec, e.g. the toy architecture)."""
    from warpgraph.core.errors import SpecError
    from warpgraph.topologies.schema import ArchSpec

    if isinstance(arch, ArchSpec):
        return _arch_cost_inputs(arch)
    own = getattr(arch, "cost_inputs", None)
    if not callable(own):
        raise SpecError(f"cannot compute the cost proxies (sram_bytes, area_units) of a {type(arch).__name__}",
                        location="architecture",
                        hint="an ArchSpec (warpgraph.load_arch), or an architecture object with a cost_inputs() "
                             "method returning " + ", ".join(COST_INPUT_KEYS))
    out = dict(own())
    bad = [k for k in COST_INPUT_KEYS if _num(out.get(k)) is None]
    if bad:
        raise SpecError(f"{type(arch).__name__}.cost_inputs() gives no number for {', '.join(bad)}",
                        location="architecture",
                        hint="a number (0 when absent) for each of " + ", ".join(COST_INPUT_KEYS))
    for k, pk in COST_INPUT_KEYS.items():
        out[k] = float(out[k])
        out.setdefault(pk, None)
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

"""Contract 5: the result of one simulation (``RunResult``)."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RunResult", "METRIC_KEYS"]

#: the metric keys every timing RunResult carries (Contract 5)
METRIC_KEYS = ("cycles", "warp_instructions", "dram_read_bytes", "dram_write_bytes", "l2_bytes",
               "achieved_occupancy_pct", "stall_ratios_per_issue", "tensor_utilization_pct", "wall_seconds",
               "simulated_cycles_per_second", "warp_instructions_per_second", "roofline", "sampling")


def _plain(v):
    """JSON-safe plain Python values (numpy scalars/arrays, NaN -> None)."""
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if hasattr(v, "item") and not hasattr(v, "__len__"):
        v = v.item()
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if hasattr(v, "tolist"):
        return v.tolist()
    return str(v)


@dataclass
class RunResult:
    metrics: dict
    stats: Any = None                  # pandas DataFrame (component, stat, value)
    outputs: dict | None = None        # buffer name -> numpy array (want_outputs / check)
    check: Any = None                  # CheckResult or None
    record: str = ""
    arch: str = ""
    mode: str = "timing"
    measured: dict | None = field(default=None, repr=False)
    events: Any = field(default=None, repr=False)    # core.tracing.TraceEvents when events were recorded
    spec: Any = field(default=None, repr=False)      # the ArchSpec simulated (peaks for utilization())
    #: per PTX instruction: issue cycles and stall warp-cycles by reason (simulate(..., stall_profile=True);
    #: runner/stall_profile.py), else None
    instruction_stalls: Any = field(default=None, repr=False)

    def utilization(self, bucket_cycles: int = 1000, **kw):
        """Per-unit utilisation over time (pandas DataFrame: ``t_start, t_end, issue_pct, tensor_pct, tma_pct,
        hbm_pct, l2_pct`` and raw sums; analysis/utilization.py). Needs recorded events
        (``simulate(..., record_events=True)`` or ``trace_path=...``): issue / tensor / TMA are averaged over the
        traced SMs, HBM / L2 are GPU-wide. Without events: one row from the run's totals."""
        from warpgraph.analysis.utilization import utilization_frame

        src = self.events if self.events is not None else dict(self.metrics)
        return utilization_frame(src, bucket_cycles, spec=self.spec, **kw)

    def write_trace(self, path, *, sms=None, window=None) -> dict:
        """Write the recorded events as a Chrome/Perfetto trace (open in https://ui.perfetto.dev)."""
        from warpgraph.analysis.perfetto import write_chrome_trace

        if self.events is None:
            raise ValueError("no events recorded: simulate(..., record_events=True) or trace_path=...")
        mhz = self.events.meta.get("clock_mhz")
        return write_chrome_trace(self.events, path, clock_mhz=mhz, sms=sms, window=window)

    def comparison(self) -> dict:
        """Simulated vs measured (record's measured.json) for the headline metrics, when available."""
        if not self.measured:
            return {}
        out = {}
        for k, mk in (("cycles", "cycles"), ("warp_instructions", "sass_warp_instructions"),
                      ("dram_read_bytes", "dram_read_bytes"), ("dram_write_bytes", "dram_write_bytes"),
                      ("l2_bytes", "l2_bytes"), ("achieved_occupancy_pct", "achieved_occupancy_pct")):
            sim, meas = self.metrics.get(k), self.measured.get(mk)
            if isinstance(sim, (int, float)) and isinstance(meas, (int, float)) and meas:
                out[k] = {"simulated": sim, "measured": meas, "ratio": sim / meas}
        return out

    def to_dict(self, *, stats: bool = False) -> dict:
        d = {"record": self.record, "arch": self.arch, "mode": self.mode, "metrics": _plain(self.metrics)}
        if self.check is not None:
            c = self.check
            d["check"] = _plain({k: getattr(c, k, None) for k in ("ok", "rel_err", "max_rel_err", "message")})
        cmp_ = self.comparison()
        if cmp_:
            d["measured_comparison"] = _plain(cmp_)
        if stats and self.stats is not None:
            d["stats"] = [[c, s, _plain(v)] for c, s, v, *_ in self.stats.itertuples(index=False, name=None)]
        return d

    def to_json(self, *, stats: bool = False, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(stats=stats), indent=indent)

"""Utilisation over time from recorded events (or a run's totals), as a pandas DataFrame and a PNG plot.

``utilization_frame(src, bucket_cycles=1000, spec=...)`` buckets time into ``bucket_cycles`` windows and gives,
aggregated over the traced SMs (``n_sms``: the recorder's SM filter, else ``meta['n_sms']``, else
``spec.sm.count``, else the highest SM seen + 1):

=============  ==========================================================================================
t_start/t_end  bucket bounds (cycles)
issue_pct      issue slots used / (n_sms × subpartitions × bucket)                (``issue`` events; a
               bundle's run counts ``meta['issue_weight'][gwarp]`` sub-partitions, default 1)
tensor_pct     tensor FLOPs (each op's FLOPs spread uniformly over its [t0, t1)) / (peak FLOP/cycle/SM ×
               n_sms × bucket); without a peak: fraction of SM-time with >= 1 tensor op in flight
tma_pct        fraction of SM-time with >= 1 TMA transaction admitted and not complete
hbm_pct        ``traffic("hbm", ...)`` bytes / (peak HBM bytes/cycle × bucket)      (NaN without a peak;
               a sampled run's bytes × ``meta['gpu_traffic_scale']``, the whole GPU's share)
l2_pct         ``traffic("l2", ...)`` bytes / (peak L2 bytes/cycle × bucket)        (NaN without a peak)
=============  ==========================================================================================

plus the raw sums per bucket (``issue_cycles, tensor_flops, tma_busy_cycles, hbm_bytes, l2_bytes``) so totals
can be checked. Peaks come from ``spec`` (ArchSpec; missing fields fall back to None) or keyword overrides:
tensor = ``tensor_core.dense_fp16_flop_per_cycle_per_sm``; HBM = ``hbm.bandwidth_gb_per_s`` / ``clocks.sm_mhz``;
L2 = ``l2.slices × l2.bytes_per_cycle_per_slice × l2_mhz / sm_mhz``.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Sequence

import numpy as np

__all__ = ["utilization_frame", "plot_utilization", "spread_amounts", "union_busy", "peaks_from_spec"]

PCT_COLUMNS = ("issue_pct", "tensor_pct", "tma_pct", "hbm_pct", "l2_pct")


def spread_amounts(t0s: Sequence[float], t1s: Sequence[float], amounts: Sequence[float], start: float,
                   bucket: float, n: int) -> np.ndarray:
    """Each ``amount`` spread uniformly over its ``[t0, t1)``, summed per bucket ``[start + i·bucket, ...)``,
    ``i < n``. Zero-length intervals put their amount in the bucket holding ``t0``. Parts outside the
    buckets are dropped. O((M + n) log M)."""
    t0 = np.asarray(t0s, dtype=np.float64)
    t1 = np.asarray(t1s, dtype=np.float64)
    a = np.asarray(amounts, dtype=np.float64)
    out = np.zeros(n, dtype=np.float64)
    if len(t0) == 0 or n <= 0:
        return out
    t1 = np.maximum(t1, t0)
    zero = t1 <= t0
    if zero.any():
        idx = np.floor((t0[zero] - start) / bucket).astype(np.int64)
        ok = (idx >= 0) & (idx < n)
        np.add.at(out, idx[ok], a[zero][ok])
    pos = ~zero
    if pos.any():
        p0, p1, aa = t0[pos], t1[pos], a[pos]
        rate = aa / (p1 - p0)
        edges = start + bucket * np.arange(n + 1, dtype=np.float64)

        def G(p, r):
            # sum_i r_i * max(x - p_i, 0) at every edge x
            o = np.argsort(p, kind="stable")
            ps, rs = p[o], r[o]
            cr = np.concatenate(([0.0], np.cumsum(rs)))
            crp = np.concatenate(([0.0], np.cumsum(rs * ps)))
            k = np.searchsorted(ps, edges, side="left")
            return edges * cr[k] - crp[k]

        F = G(p0, rate) - G(p1, rate)
        out += np.diff(F)
    return out


def union_busy(intervals_by_key: dict, start: float, bucket: float, n: int) -> np.ndarray:
    """Per bucket, the summed (over keys) length of the union of each key's intervals ``[(t0, t1), ...]``."""
    t0s, t1s = [], []
    for key in sorted(intervals_by_key, key=repr):
        iv = sorted(intervals_by_key[key])
        cur0 = cur1 = None
        for a, b in iv:
            if b <= a:
                continue
            if cur0 is None:
                cur0, cur1 = a, b
            elif a <= cur1:
                if b > cur1:
                    cur1 = b
            else:
                t0s.append(cur0)
                t1s.append(cur1)
                cur0, cur1 = a, b
        if cur0 is not None:
            t0s.append(cur0)
            t1s.append(cur1)
    lens = np.asarray(t1s, dtype=np.float64) - np.asarray(t0s, dtype=np.float64)
    return spread_amounts(t0s, t1s, lens, start, bucket, n)


def _get(obj, path, default=None):
    cur = obj
    for p in path.split("."):
        if cur is None:
            return default
        cur = cur.get(p) if isinstance(cur, dict) else getattr(cur, p, None)
    return default if cur is None else cur


def peaks_from_spec(spec) -> dict:
    """``{n_sms, subpartitions, tensor_flop_per_cycle_per_sm, hbm_bytes_per_cycle, l2_bytes_per_cycle,
    clock_mhz}`` from an ArchSpec (None where a field is missing)."""
    if spec is None:
        return {}
    sm_mhz = _get(spec, "clocks.sm_mhz")
    l2_mhz = _get(spec, "clocks.l2_mhz", sm_mhz)
    bw = _get(spec, "hbm.bandwidth_gb_per_s")
    slices = _get(spec, "l2.slices")
    per_slice = _get(spec, "l2.bytes_per_cycle_per_slice")
    return {
        "n_sms": _get(spec, "sm.count"),
        "subpartitions": _get(spec, "sm.subpartitions"),
        "tensor_flop_per_cycle_per_sm": _get(spec, "tensor_core.dense_fp16_flop_per_cycle_per_sm"),
        "hbm_bytes_per_cycle": (bw * 1e3 / sm_mhz) if bw and sm_mhz else None,
        "l2_bytes_per_cycle": (slices * per_slice * (l2_mhz / sm_mhz)) if slices and per_slice and sm_mhz else None,
        "clock_mhz": sm_mhz,
    }


def _nan_if_none(v):
    """A metric that may be None (``tensor_utilization_pct`` of a variant with no dense tensor peak) as NaN."""
    return math.nan if v is None else v


def _frame_from_totals(src, spec, **kw):
    """One bucket [0, cycles) from a run's metrics (RunResult or metrics dict)."""
    import pandas as pd

    m = src.metrics if hasattr(src, "metrics") else dict(src)
    pk = {**peaks_from_spec(spec), **{k: v for k, v in kw.items() if v is not None}}
    cyc = float(m.get("cycles") or 0)
    n_sms = pk.get("n_sms") or 132
    nsp = pk.get("subpartitions") or 4
    hbm = pk.get("hbm_bytes_per_cycle")
    l2 = pk.get("l2_bytes_per_cycle")
    dram = float(m.get("dram_read_bytes", 0) or 0) + float(m.get("dram_write_bytes", 0) or 0)
    l2b = float(m.get("l2_bytes", 0) or 0)
    issued = float(m.get("warp_instructions", 0) or 0)
    row = {
        "t_start": 0.0, "t_end": cyc,
        "issue_pct": 100.0 * issued / (n_sms * nsp * cyc) if cyc else math.nan,
        "tensor_pct": float(_nan_if_none(m.get("tensor_utilization_pct"))),
        "tma_pct": math.nan,
        "hbm_pct": 100.0 * dram / (hbm * cyc) if hbm and cyc else math.nan,
        "l2_pct": 100.0 * l2b / (l2 * cyc) if l2 and cyc else math.nan,
        "issue_cycles": issued, "tensor_flops": math.nan, "tma_busy_cycles": math.nan,
        "hbm_bytes": dram, "l2_bytes": l2b,
    }
    return pd.DataFrame([row])


def utilization_frame(src, bucket_cycles: int = 1000, *, spec=None, n_sms: int | None = None,
                      subpartitions: int | None = None, tensor_flop_per_cycle_per_sm: float | None = None,
                      hbm_bytes_per_cycle: float | None = None, l2_bytes_per_cycle: float | None = None,
                      t_start: float | None = None, t_end: float | None = None):
    """See module docstring. ``src``: a TraceRecorder, TraceEvents, or a RunResult / metrics dict (one row)."""
    import pandas as pd

    over = dict(n_sms=n_sms, subpartitions=subpartitions, tensor_flop_per_cycle_per_sm=tensor_flop_per_cycle_per_sm,
                hbm_bytes_per_cycle=hbm_bytes_per_cycle, l2_bytes_per_cycle=l2_bytes_per_cycle)
    if not (hasattr(src, "events") or hasattr(src, "tables")):
        return _frame_from_totals(src, spec, **over)
    ev = src if hasattr(src, "tables") else src.events()
    pk = {**peaks_from_spec(spec), **{k: v for k, v in over.items() if v is not None}}
    T = ev.tables
    if ev.sms is not None and n_sms is None:
        nsm = len(ev.sms)
    else:
        nsm = n_sms or ev.meta.get("n_sms") or pk.get("n_sms")
        if not nsm:
            seen = [r[0] for k in ("issue", "stall", "tma", "tensor", "cta") for r in T.get(k, ())]
            nsm = (max(seen) + 1) if seen else 1
    nsp = subpartitions or ev.meta.get("subpartitions") or pk.get("subpartitions") or 4
    b = float(bucket_cycles)
    if b <= 0:
        raise ValueError("bucket_cycles must be > 0")
    lo = t_start if t_start is not None else (ev.window[0] if ev.window is not None else 0.0)
    hi = t_end if t_end is not None else (ev.window[1] if ev.window is not None else
                                          (ev.meta.get("t_end") or ev.t_end()))
    lo = math.floor(lo / b) * b
    n = max(1, int(math.ceil((hi - lo) / b)))
    starts = lo + b * np.arange(n)

    iss = T.get("issue", ())
    # a bundle track (meta['issue_weight'][g] sub-partitions) occupies each of its sub-partitions while it issues
    wts = ev.meta.get("issue_weight") or {}
    issue = spread_amounts([r[2] for r in iss], [r[3] for r in iss],
                           [(r[3] - r[2]) * wts.get(r[1], 1) for r in iss], lo, b, n)
    ten = T.get("tensor", ())
    tflops = spread_amounts([r[3] for r in ten], [r[4] for r in ten], [r[5] for r in ten], lo, b, n)
    peak_t = pk.get("tensor_flop_per_cycle_per_sm")
    if peak_t:
        tensor_pct = 100.0 * tflops / (peak_t * nsm * b)
    else:
        by = defaultdict(list)
        for r in ten:
            by[r[0]].append((r[3], r[4]))
        tensor_pct = 100.0 * union_busy(by, lo, b, n) / (nsm * b)
    by = defaultdict(list)
    for r in T.get("tma", ()):
        by[r[0]].append((r[3], r[4]))
    tma_busy = union_busy(by, lo, b, n)

    def level(name):
        rows = [r for r in T.get("traffic", ()) if r[0] == name]
        return spread_amounts([r[2] for r in rows], [r[3] for r in rows], [r[4] for r in rows], lo, b, n)

    # a sampled run records its sampled SMs' traffic; the GPU-wide levels carry the whole GPU's
    # (meta['gpu_traffic_scale'] = n_sms / sampled SMs, runner/simulate.py)
    gs = float(ev.meta.get("gpu_traffic_scale") or 1.0)
    hbm_b, l2_b = level("hbm") * gs, level("l2") * gs
    hbm_pk, l2_pk = pk.get("hbm_bytes_per_cycle"), pk.get("l2_bytes_per_cycle")
    df = pd.DataFrame({
        "t_start": starts,
        "t_end": starts + b,
        "issue_pct": 100.0 * issue / (nsm * nsp * b),
        "tensor_pct": tensor_pct,
        "tma_pct": 100.0 * tma_busy / (nsm * b),
        "hbm_pct": 100.0 * hbm_b / (hbm_pk * b) if hbm_pk else np.full(n, np.nan),
        "l2_pct": 100.0 * l2_b / (l2_pk * b) if l2_pk else np.full(n, np.nan),
        "issue_cycles": issue,
        "tensor_flops": tflops,
        "tma_busy_cycles": tma_busy,
        "hbm_bytes": hbm_b,
        "l2_bytes": l2_b,
    })
    df.attrs.update(bucket_cycles=b, n_sms=nsm, subpartitions=nsp, peaks=pk)
    return df


def plot_utilization(df, path, *, title: str | None = None, clock_mhz: float | None = None,
                     columns: Sequence[str] = PCT_COLUMNS):
    """Multi-line plot of the ``*_pct`` columns over time (µs when ``clock_mhz`` is given, else cycles); PNG."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    x = df["t_start"].to_numpy(dtype=float)
    xlabel = "cycles"
    if clock_mhz:
        x = x / clock_mhz
        xlabel = "µs"
    fig, ax = plt.subplots(figsize=(10, 4), dpi=100)
    try:
        for c in columns:
            if c in df and not df[c].isna().all():
                ax.step(x, df[c].to_numpy(dtype=float), where="post", label=c.replace("_pct", ""))
        ax.set_xlabel(xlabel)
        ax.set_ylabel("% of peak")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper right", fontsize="small")
        if title:
            ax.set_title(title)
        fig.tight_layout()
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)
    return path

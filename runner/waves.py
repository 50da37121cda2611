"""Kernel-level wave sampling: simulate the first ``k`` waves of a long grid in detail, extrapolate the rest.

``simulate(..., mode="waves", waves=k)`` (CLI ``warpgraph run --waves K``). A grid of ``n`` CTAs runs in
``n / (n_sms · ctas_per_sm)`` waves; when its CTAs are alike (element-wise kernels, norms, GEMM tiles), every wave
after the first repeats the one before: the GPU retires CTAs at a steady rate. In the spirit of PKA (Avalos Baddouh
et al., MICRO 2021: simulate the first stable stretch of a kernel and project the rest) and Photon (Liu et al.,
MICRO 2023: stop once the per-wave behaviour has converged), this mode

1. executes functionally and times in full detail only the first ``m = k · n_sms · ctas_per_sm`` CTAs (the prefix:
   a prefix of the launch order, so the functional L2 model sees exactly the accesses it sees in the full run,
   and every SM runs as in detailed mode);
2. fits the steady retire rate ``s`` (cycles per CTA) by least squares on the retire cycles from 1.5 waves on
   up to the prefix's drain (retires ``1.5 slots .. m - slots / 2``; the first waves are a transient);
3. reports ``cycles = T_prefix + (n - m) · s``: the full run's last CTA retires ``(n - m)`` retire slots after
   the prefix's last, and both end with a drain of the same shape.

Counters (instructions, bytes) are scaled by ``n / m``. ``simulate(mode="sampled", waves=k)`` (``run --mode sampled
--waves K``) combines both: the SM sample (runner/sampling.py) runs the prefix's CTAs, the rate comes from the
mini-GPU's retires scaled by the share of CTAs it runs, and the two error estimates add in quadrature
(``mode: "sampled+waves"``). ``metrics["sampling"]``: ``mode: "waves"``, the waves
simulated and in all, ``cycles_per_cta``, ``cycles_prefix`` and the 1-sigma ``cycles_error_pct``: the standard error
of the rate from batch means (the fitted period in 8 contiguous chunks, a line through their means) times
``n - m``, plus in quadrature the spread of single retire cycles around the line (how far the last CTA's end may
sit from the rate) and the drift of the rate from the period before times ``n - m`` (a prefix still in its
transient). It does not contain the model error of later waves that differ from the prefix's; grids of fewer than ``k + 1`` waves, or whose CTAs communicate
(workloads/functional/subset.py), run in detail (``fallback`` says why).
"""
from __future__ import annotations

import math

from warpgraph.core.errors import UserError

__all__ = ["WavePlan", "plan_waves", "DEFAULT_WAVES"]

#: waves simulated in detail by default
DEFAULT_WAVES = 3
_CHUNKS = 8


class WavePlan:
    def __init__(self, n_ctas: int, n_sms: int, ctas_per_sm: int, k: int, cluster: int = 1):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise UserError(f"waves={k!r}: the waves to simulate must be a positive integer", location="--waves",
                            hint="e.g. --waves 2")
        self.n, self.k = int(n_ctas), int(k)
        self.slots = max(1, int(n_sms) * max(1, int(ctas_per_sm)))
        cl = max(1, int(cluster))
        self.m = min(self.n, -(-(self.k * self.slots) // cl) * cl)
        self.total_waves = self.n / self.slots
        self.fallback: str | None = None
        if self.n < (self.k + 1) * self.slots:
            self.fallback = (f"short grid: {self.n} CTAs are {self.total_waves:.2f} waves of {self.slots} "
                             f"(n_sms x ctas_per_sm); wave sampling needs more than {self.k + 1}")
        self.retire: list[int] = []
        self.reason: str | None = None

    def ctas(self) -> list[int]:
        return list(range(self.m))

    def progress_hook(self, user=None):
        """``on_progress(done, n, cycle)`` for run_timing: records the prefix's retire cycles (in retire order)."""
        rec = self.retire

        def hook(done, n, cycle, _user=user):
            rec.append(int(cycle))
            if _user is not None:
                _user(done, n, cycle)

        return hook

    @staticmethod
    def _line(xs, ys) -> tuple[float, float]:
        n = len(xs)
        mx, my = sum(xs) / n, sum(ys) / n
        sxx = sum((x - mx) ** 2 for x in xs)
        s = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else 0.0
        return s, my - s * mx

    def fit(self) -> tuple[float, float, float, float]:
        """(cycles per CTA, its standard error, spread of single retire cycles around the line, drift: how much
        the rate of the wave period before differs). The rate is fitted on the retires from 1.5 waves on (at
        least the last wave period) up to the prefix's drain (``m - slots / 2``): the first waves are a transient
        (swiglu_n16777216 in detail: 1.86 cycles per CTA over the first wave, 2.2 over the second, 2.31-2.34 from
        the third on)."""
        r = sorted(self.retire)
        S = getattr(self, "fit_slots", None) or self.slots
        hi = len(r) - S // 2
        lo = max(S // 2, min(len(r) - (3 * S) // 2, (3 * S) // 2))
        if hi - lo < 2 * _CHUNKS:
            lo, hi = 0, len(r)
        xs = list(range(lo, hi))
        ys = r[lo:hi]
        n = len(xs)
        s, a = self._line(xs, ys)
        resid = [y - (a + s * x) for x, y in zip(xs, ys)]
        sd = math.sqrt(sum(e * e for e in resid) / max(1, n - 2))
        # batch means: the retire cycles are autocorrelated (a wave's CTAs end together), so the rate's error
        # comes from the scatter of chunk means about a line, not from the single points
        g = _CHUNKS
        cx, cy = [], []
        for i in range(g):
            a0, a1 = (i * n) // g, ((i + 1) * n) // g
            if a1 > a0:
                cx.append(sum(xs[a0:a1]) / (a1 - a0))
                cy.append(sum(ys[a0:a1]) / (a1 - a0))
        se = 0.0
        if len(cx) > 2:
            cs, ca = self._line(cx, cy)
            mcx = sum(cx) / len(cx)
            cxx = sum((x - mcx) ** 2 for x in cx)
            rs = sum((y - (ca + cs * x)) ** 2 for x, y in zip(cx, cy)) / (len(cx) - 2)
            se = math.sqrt(rs / cxx) if cxx > 0 else 0.0
        # convergence (Photon's stopping rule in reverse): the rate of the period before; a prefix still in its
        # transient shows a drift, which bounds how far the extrapolated rate may be from the steady one
        p0 = max(0, lo - S)
        drift = 0.0
        if lo - p0 >= 2 * _CHUNKS:
            sp, _ = self._line(list(range(p0, lo)), r[p0:lo])
            drift = abs(s - sp)
        return s, se, sd, drift

    def finish_sampled(self, out, smp) -> None:
        """Sampled mode on the prefix (``simulate(mode="sampled", waves=k)``): ``out`` is the sample's outcome for
        the ``m`` prefix CTAs (runner/sampling.py already scaled it to the full GPU); the rate comes from the
        mini-GPU's retires (``len(sms) · ctas_per_sm`` slots), which retire ``ctas_simulated / m`` of the full
        GPU's CTAs per cycle; the error adds the sample's and the extrapolation's in quadrature."""
        sm = dict(out.metrics.get("sampling") or {})
        self.fit_slots = max(1, len(smp.sms) * smp.ctas_per_sm)
        share = sm.get("ctas_simulated", self.m) / self.m
        self._finish(out, rate_scale=share)
        w = out.metrics["sampling"]
        err = math.hypot(w["cycles_error_pct"], sm.get("cycles_error_pct", 0.0))
        sm.update({"mode": "sampled+waves", "waves": w, "cycles_error_pct": round(err, 3),
                   "ctas_total": self.n, "outputs": w["outputs"]})
        out.metrics["sampling"] = sm
        out.stats.group("sampling").set("cycles_error_pct", round(err, 3))

    def finish(self, out) -> None:
        """Extrapolate ``out`` (the prefix's TimingOutcome) to the whole grid; ``metrics["sampling"]``."""
        self._finish(out)

    def _finish(self, out, rate_scale: float = 1.0) -> None:
        m = out.metrics
        raw = int(m.get("cycles", 0))
        s, se, sd, drift = self.fit()
        s, se, drift = s * rate_scale, se * rate_scale, drift * rate_scale
        rest = self.n - self.m
        cycles = int(round(raw + rest * s))
        err = math.sqrt((se * rest) ** 2 + sd ** 2 + (drift * rest) ** 2)
        sf = self.n / self.m if self.m else 0.0
        for key in ("warp_instructions", "ptx_warp_instructions", "dram_read_bytes", "dram_write_bytes", "l2_bytes"):
            if key in m:
                m[key] = int(round(m[key] * sf))
        if m.get("tensor_utilization_pct") is not None:     # None: the variant declares no dense peak
            m["tensor_utilization_pct"] = round(m["tensor_utilization_pct"] * sf * raw / max(1, cycles), 3)
        m["cycles"] = cycles
        out.stats.group("gpu").set("cycles", cycles)
        pct = round(100.0 * err / max(1, cycles), 3)
        m["sampling"] = {
            "mode": "waves", "waves_simulated": self.k, "waves_total": round(self.total_waves, 3),
            "ctas_simulated": self.m, "ctas_total": self.n, "functional_ctas": self.m, "scale": round(sf, 6),
            "cycles_prefix": raw, "cycles_per_cta": round(s, 4), "cycles_per_cta_se": round(se, 4),
            "retire_spread_cycles": round(sd, 1), "rate_drift_cycles_per_cta": round(drift, 4),
            "cycles_error_pct": pct,
            "write_back_ratio": round(float(getattr(self, "write_back_ratio", 1.0)), 4),
            "write_back_ratio_prefix": round(float(getattr(self, "write_back_ratio_prefix", 1.0)), 4),
            "bound_cycles": [int(round(cycles - err)), int(round(cycles + err))],
            "outputs": f"not checkable: only the first {self.m} CTAs of {self.n} were executed",
            "sms": None, "seed": None, "fraction": round(self.m / self.n, 4),
        }
        g = out.stats.group("sampling")
        g.set("waves_simulated", self.k)
        g.set("ctas_simulated", self.m)
        g.set("scale", sf)
        g.set("cycles_error_pct", pct)

    def fallback_info(self) -> dict:
        return {"mode": "detailed", "requested": "waves", "fallback": self.fallback or self.reason, "sms": None,
                "seed": None, "fraction": 1.0, "ctas_simulated": self.n, "ctas_total": self.n, "scale": 1.0,
                "cycles_error_pct": 0.0}


def plan_waves(k, record, program, spec, knobs) -> WavePlan:
    """The wave plan of ``record`` on ``spec`` (the SM count and occupancy the timing pass uses); a plan with
    ``fallback`` set when the grid is short or its CTAs communicate (then the run is a detailed one)."""
    from warpgraph.runner.timing import core_config, sm_occupancy
    from warpgraph.workloads.functional.subset import cta_communication

    cfg = core_config(spec, n_sms=knobs.get("n_sms"), policy=knobs.get("policy"))
    occ = sm_occupancy(spec, program, record, threads_per_cta=int(math.prod(record.block)),
                       registers=knobs.get("registers"), shared_bytes=knobs.get("shared_bytes"))
    cluster = int((getattr(record, "cluster", None) or (1, 1, 1))[0])
    plan = WavePlan(int(math.prod(record.grid)), cfg.n_sms, occ.ctas_per_sm,
                    DEFAULT_WAVES if k is None else k, cluster)
    if plan.fallback is None:
        why = cta_communication(program)
        if why:
            plan.fallback = f"CTAs communicate: {why}"
    return plan


def truncate_trace(trace, m: int, n: int | None = None):
    """The prefix trace as a launch of ``m`` CTAs (the timing pass schedules ``trace.n_ctas``), with the L2
    write-back ratio of the whole grid of ``n`` CTAs (:func:`full_write_back_ratio`)."""
    trace.n_ctas = int(m)
    trace.n_warps = int(m) * trace.warps_per_cta
    st = getattr(trace, "l2_stats", None)
    if n is not None and st:
        trace.write_back_ratio_prefix = getattr(trace, "write_back_ratio", 1.0)
        trace.write_back_ratio = full_write_back_ratio(st, int(n) / max(1, int(m)))
        # the prefix's write-backs are charged at the whole grid's ratio, spread evenly (the prefix's own curve
        # places them where a launch of m CTAs would have them)
        trace.write_back_curve = None
    return trace


def full_write_back_ratio(st: dict, scale: float) -> float:
    """Write-back sectors per dirtied sector of a grid ``scale`` times the prefix whose functional L2 totals are
    ``st`` (workloads/functional/run.py ``l2_stats``). The timing pass charges every store this launch-wide ratio
    (components/memory.py ``write_back_ratio``); a prefix of a streaming kernel writes less than the L2 holds, so
    its own ratio is near 0 where the whole grid's is not (swiglu_n16777216: 2 of 7.8 waves ran 11 % fast with
    it). The grid dirties ``scale`` times the prefix's sectors; what stays dirty at its end is the dirty share of
    the last ``capacity`` insertions (LRU: the prefix's share of dirtied per inserted sector), at most what the
    prefix left dirty times ``scale``; the rest is written back."""
    cap = st.get("capacity")
    dirtied = st.get("dirtied", 0) * scale
    if not cap or dirtied <= 0:
        return 1.0
    inserted = max(1, st.get("inserted", 0))
    left_p = st.get("dirtied", 0) - st.get("writeback", 0)
    resident = min(cap * min(1.0, st.get("dirtied", 0) / inserted), left_p * scale, dirtied)
    return max(0.0, min(1.0, 1.0 - resident / dirtied))

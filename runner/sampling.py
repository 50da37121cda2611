"""Sampled timing mode: a few SMs in full detail, the rest of the GPU accounted for statistically.

``simulate(..., mode="sampled", sample=None | k | {"sms": k or [ids], "seed": s})`` replays only ``k`` SMs
(default :data:`DEFAULT_SMS`) through the same SM core and units as detailed mode:

* **Which SMs**: ``k`` SMs evenly spaced over the SM index range, starting at SM 0 for seed 0 and at a
  seed-chosen offset otherwise (``random.Random(seed)``), so both L2 partitions (near partition = ``sm * partitions // n_sms``) and every
  CTA-count class of the round-robin placement are represented; deterministic for a seed.
* **Which CTAs**: SM ``s`` runs CTAs ``s, s + n_sms, s + 2·n_sms, ...`` in launch order, ``ctas_per_sm`` at a
  time — exactly the first wave of the full round-robin schedule (slot-major over SMs), and the later waves as
  the dynamic schedule gives them when SMs progress evenly (the usual case for these kernels).
* **The rest of the GPU**: the shared L2 partition and HBM servers get ``k / n_sms`` of their bandwidth, so
  the sampled SMs see the contention of a fully loaded GPU (each SM keeps its own L1/LSU, crossbar port, TMA,
  tensor and shared-memory units unscaled). Units without such servers (stand-ins) are left as they are.
* **Result**: ``cycles`` = the last sampled SM's completion (the GPU finishes with its slowest SM); counters
  (instructions, bytes, FLOP-based utilisation) are scaled by ``n_ctas / ctas_simulated``; ratios (stalls,
  occupancy) come from the sampled SMs. ``metrics["sampling"]``: ``sms, seed, fraction, ctas_simulated,
  ctas_total, scale, cycles_error_pct`` (error estimate: the spread of completion times among the sampled
  SMs that carry the most CTAs — the unsampled SMs of that class may finish that much later or earlier —
  plus one CTA launch latency, in % of cycles).
"""
from __future__ import annotations

import random

from warpgraph.core.errors import UserError

__all__ = ["Sample", "DEFAULT_SMS", "make_sample"]

#: SMs simulated in detail by default
DEFAULT_SMS = 16


class Sample:
    def __init__(self, sms=DEFAULT_SMS, seed: int = 0):
        if isinstance(sms, int):
            if sms < 1:
                raise UserError(f"sampled mode needs at least one SM, got {sms}", hint="sample=16")
            self.k, self.ids = sms, None
        else:
            ids = sorted({int(s) for s in sms})
            if not ids:
                raise UserError("sampled mode: empty SM list", hint="sample={'sms': [0, 33, 66, 99]}")
            self.k, self.ids = len(ids), ids
        self.seed = int(seed)
        self.sms: list[int] = []
        self.n_sms = 0

    def choose(self, n_sms: int) -> list[int]:
        if self.ids is not None:
            bad = [s for s in self.ids if not 0 <= s < n_sms]
            if bad:
                raise UserError(f"sampled SMs {bad} out of range", hint=f"SM ids 0..{n_sms - 1}")
            return list(self.ids)
        k = min(self.k, n_sms)
        stride = n_sms / k
        # seed 0: start at SM 0 (it carries the first CTA and, with grouped tile orders, the heaviest class)
        off = random.Random(self.seed).randrange(max(1, int(stride))) if self.seed else 0
        return sorted({(off + int(i * stride)) % n_sms for i in range(k)})

    def assign(self, n_ctas: int, n_sms: int, ctas_per_sm: int) -> dict[int, list[int]]:
        self.n_sms = n_sms
        self.sms = self.choose(n_sms)
        return {s: list(range(s, n_ctas, n_sms)) for s in self.sms if s < n_ctas}

    def scale_units(self, mem, n_sms: int) -> None:
        """Give the sampled SMs their share of the GPU-wide L2 / HBM bandwidth servers."""
        f = len(self.sms) / n_sms
        for attr in ("l2_srv", "hbm_srv"):
            for srv in getattr(mem, attr, None) or ():
                if hasattr(srv, "rate") and hasattr(srv, "inv"):
                    srv.rate *= f
                    srv.inv = 1.0 / srv.rate

    def finish(self, out, n_ctas: int, n_ctas_run: int, n_sms: int) -> None:
        """Scale counters of a sampled run to the whole GPU and add ``metrics["sampling"]``."""
        m = out.metrics
        core = out.core
        sf = n_ctas / n_ctas_run if n_ctas_run else 0.0
        for key in ("warp_instructions", "ptx_warp_instructions", "dram_read_bytes", "dram_write_bytes", "l2_bytes"):
            if key in m:
                m[key] = int(round(m[key] * sf))
        if "tensor_utilization_pct" in m:
            m["tensor_utilization_pct"] = round(m["tensor_utilization_pct"] * sf, 3)
        ends = {s: core.sm_end[s] for s in self.sms}
        counts = {s: len(range(s, n_ctas, n_sms)) for s in self.sms}
        top = max(counts.values()) if counts else 0
        cls = [ends[s] for s in self.sms if counts[s] == top and ends[s] > 0]
        cyc = m.get("cycles", 0) or 1
        spread = (max(cls) - min(cls)) if len(cls) > 1 else 0
        err = 100.0 * (spread + core.cfg.launch_latency * (1 if top > 1 else 0)) / cyc
        m["sampling"] = {
            "mode": "sampled", "sms": list(self.sms), "seed": self.seed, "fraction": round(len(self.sms) / n_sms, 4),
            "ctas_simulated": n_ctas_run, "ctas_total": n_ctas, "scale": round(sf, 6),
            "cycles_error_pct": round(err, 3), "sm_end_cycles": [ends[s] for s in self.sms],
        }
        g = out.stats.group("sampling")
        g.set("sms", len(self.sms))
        g.set("seed", self.seed)
        g.set("ctas_simulated", n_ctas_run)
        g.set("scale", sf)
        g.set("cycles_error_pct", err)


def make_sample(sample, seed: int = 0) -> Sample:
    """``None`` -> default, an int -> that many SMs, a list -> those SMs, a dict ``{"sms": ..., "seed": ...}``,
    or a :class:`Sample`."""
    if isinstance(sample, Sample):
        return sample
    if sample is None:
        return Sample(DEFAULT_SMS, seed)
    if isinstance(sample, dict):
        return Sample(sample.get("sms", DEFAULT_SMS), int(sample.get("seed", seed)))
    if isinstance(sample, (int, list, tuple)):
        return Sample(sample if isinstance(sample, int) else list(sample), seed)
    raise UserError(f"bad sample spec {sample!r}", hint="an SM count, a list of SM ids or {'sms': 16, 'seed': 0}")

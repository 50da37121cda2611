"""Sampled timing mode: a mini-GPU of a few SMs in full detail runs a stratified sample of the CTAs; the rest of the
GPU is accounted for statistically.

``simulate(..., mode="sampled", sample=None | k | [sm ids] | {"sms": k or [ids], "seed": s})`` replays ``k`` SMs
(default :data:`DEFAULT_SMS`) through the same SM core and units as detailed mode:

* **Whole GPCs** (when ``l2.coalesce_scope`` is ``gpc``, as in every bundled YAML, and the kernel has cp.async or
  TMA loads, the reads that share lookups; runner/simulate.py ``_plan_sample``): reads of one GPC
  share L2 lookups (components/memory.py, microbench ``l2_coalesce_pairs``), so a sample of scattered SMs sees a
  quarter of the sharing a GPC has (TMA GEMMs then ran 9-10 % off detailed mode). The sample is
  ``round(k / mean GPC size)`` whole GPCs, always with GPC 0, evenly spaced over the GPC indices (k = 33 on
  h200: GPCs 0 and 4, SMs 0-15 and 64-79); other seeds draw the GPCs beside GPC 0 at random. GPC 0 runs the
  first CTAs of every row: in a one-wave launch those take the grid's DRAM first touches and finish last
  (gemm_tma_M2048: GPCs 1 and 5 end 18 % early), and in the last, partial wave they are the ones that run.
  The sample is the CTAs they run on the full GPU: the first wave places CTA ``c`` on SM ``c mod n_sms``
  (slot-major; the hardware fills it GPC by GPC in the same order, microbench ``map.txt``), so the sample is every CTA
  whose ``c mod n_sms`` is a sampled SM. That keeps the wave structure and puts each CTA next to the neighbours it has
  on the full GPU. Each unsampled CTA of a row of ``n_sms`` stands behind a sampled CTA of the row (its ghost, for
  DRAM fills). The paragraphs below describe the other case (an explicit SM list, clusters, or another scope).
* **Which SMs**: ``k`` SMs evenly spaced over the SM index range (seed-chosen offset, ``random.Random(seed)``),
  so both L2 partitions (near partition = ``sm * partitions // n_sms``) are represented equally.
* **Which CTAs** (stratified by launch position): the launch order ``0 .. n_ctas-1`` is cut into ``n_sub``
  equal strata and one CTA is drawn at random (seeded) from each (the last stratum: always the last CTA, which
  starts last on the full GPU), so the sample covers every wave, the tail and
  every kind of CTA of a periodic grid (e.g. the causal-attention query blocks) without aliasing with the SM
  stride. ``n_sub`` keeps the full GPU's wave structure on the mini-GPU: ``waves · k · ctas_per_sm`` for the full
  waves plus ``k / n_sms`` of the CTAs of the last, partial wave (at least one). Clusters are sampled whole.
* **Scheduling**: the mini-GPU schedules its CTAs exactly like the full GPU does (:class:`SubsetScheduler`): the
  first ``k · ctas_per_sm`` slot-major over the sampled SMs, then each to whichever sampled SM retires a CTA, in
  launch order — so load imbalance and the tail are resolved dynamically, as in detailed mode.
* **The rest of the GPU**: the shared L2 partition and HBM servers get ``k / n_sms`` of their bandwidth, so the
  sampled SMs see the contention of a fully loaded GPU (each SM keeps its own L1/LSU, crossbar port, TMA, tensor
  and shared-memory units unscaled).
* **Fallback**: when the sample would be most of the grid (``n_sub > n_ctas / 2``, ``k >= n_sms``) or cannot stand
  for it (fewer than ``2 k`` CTAs, fewer CTAs than SMs — the end is then the slowest of *all* CTAs, e.g.
  gemm_ptr_M512_N3000 with 96 CTAs on 132 SMs — or fewer than ``max(4, k / 2)`` CTAs in the sample), the run is
  a detailed one; ``metrics["sampling"]`` says so (``mode: "detailed"``, ``fallback``).
* **Result**: the full GPU ends with the slowest of its ``n_sms`` SMs, the sample with the slowest of its ``k``,
  which is low on average (by 0.5 sigma for 33 of 132 iid SMs: rmsnorm ran 2-3 % short of detailed mode). So
  ``cycles`` = the last sampled SM's completion (``cycles_sampled_sms``) plus the expected gap between the two
  maxima (``tail_shift_cycles`` ~ ``sigma * (E[M_N] - E[M_k])``: ``sigma`` the spread of the end cycles of the
  sampled SMs that were busy to the end, within groups of SMs that ran as many CTAs and net of what their issued
  instructions explain, ``E[M_n]`` the expected maximum of ``n`` standard normals, ``N`` the full GPU's SMs of
  the group; :meth:`Sample.tail_shift`). Counters (instructions, bytes, FLOP-based
  utilisation) are scaled by ``n_ctas / n_sub``, except DRAM read bytes, which the functional pass knows for the
  whole grid (its first touches: a stratum's first CTA reads shared tiles from DRAM, its others hit, so scaling
  the sampled CTA's reads over-counted GEMMs by up to 25 %); ratios (stalls, occupancy) come from the sampled SMs.
  ``metrics["sampling"]``: ``sms, seed, fraction, ctas_simulated, ctas_total, scale, cycles_error_pct`` and its
  parts, ``functional_ctas``, ``functional`` ("sample" / "all"), ``functional_reason``, ``calibration_ctas``,
  ``first_touch_ratio``, ``outputs``. Error estimate (1 sigma, % of cycles), two independent terms added in quadrature:
  *tail*: the spread of the two maxima, ``sigma * sqrt(Var M_N + Var M_k)``, plus one CTA launch latency when
  the last wave is partial; *work*: the relative spread of the sampled SMs' busy cycles per CTA, over
  ``sqrt(k)``, with the finite-population factor ``sqrt(1 - n_sub / n_ctas)`` (how far the sample's mean CTA
  cost may be from the grid's). The tail shift assumes the unsampled SMs are like the sampled ones; where the
  sample holds the slowest SMs by construction (GPC 0 in a one-wave launch) it overshoots (gemm_tma_M2048:
  +2.4 / +2.7 % vs detailed mode at measured / YAML clocks, 2026-12-03).
* **Functional pass** (issue 18), with ``sample={"functional": "sample"}`` (the default ``"all"`` executes every
  CTA: the subset's first-touch estimate put gemm_tma_M3072_N3072_K1024 12.6 % above detailed mode with a 1.8 %
  estimate, 2026-12-03): only the sampled CTAs (and the first and last CTA, whose warp groups the timing
  pass probes) are executed functionally and traced (``run_functional(ctas=...)``); the others are neither
  executed nor kept, so the functional pass costs the sample's share and memory no longer grows with the grid. The
  functional L2 model then sees only the sample's accesses: a sampled CTA is the first to read lines that an
  unsampled neighbour fetched before it on the full grid. :meth:`Sample.calibrate_first_touches` estimates that
  share from one full-order row of ``n_sms`` CTAs (a small extra functional pass without values) and scales the
  unsampled SMs' HBM background and the reported DRAM reads with it. Outputs are not checkable (``--check`` is an
  error; ``metrics["sampling"]["outputs"]`` says so). Kernels whose CTAs communicate through global memory (an
  atomic whose result is read, ``ld.volatile`` / ``.acquire``: workloads/functional/subset.py) execute every
  CTA, with ``functional_reason``; so does ``sample={"functional": "all"}`` (checkable outputs, ghost fills).
* **Ghost fills** (runner/ghost_fills.py, only with ``functional: "all"``: they read the ghosts' own traces):
  each sampled CTA stands for the other CTAs of its stratum. Cross-SM
  coupling through the L2 (components/memory.py ``l2.coalesce_scope``: reads of the same lines from SMs of one
  GPC share a lookup; a lookup of lines being filled from DRAM waits for the fill) would otherwise only happen
  among sampled CTAs. When a sampled CTA issues a cp.async, the same dynamic cp.async of its ghosts registers
  their lookups and DRAM fills at that time moved by their launch skew; nothing is reserved for them (the scaled
  servers carry their bandwidth). ``sample={"ghost_fills": False}`` turns it off, ``"all"`` adds TMA boxes.
  With a GPC sample, lookup sharing happens among the sampled SMs themselves and ghosts add DRAM fills only.
"""
from __future__ import annotations

import math
import random

from warpgraph.core.errors import SimulationError, UserError

__all__ = ["Sample", "SubsetScheduler", "DEFAULT_SMS", "make_sample"]

#: SMs simulated in detail by default
DEFAULT_SMS = 33


class SubsetScheduler:
    """Dynamic CTA scheduler of the mini-GPU (the interface of components.cta_scheduler.CtaScheduler that the SM
    core uses): ``ctas`` in launch order over ``sms``, ``ctas_per_sm`` at a time."""

    def __init__(self, ctas, sms, ctas_per_sm: int):
        self.ctas = list(ctas)
        self.sms = list(sms)
        self.ctas_per_sm = int(ctas_per_sm)
        self.next = 0
        self.resident = {s: 0 for s in self.sms}
        self.count = {s: 0 for s in self.sms}          # CTAs each sampled SM ran

    def _take(self, sm: int) -> int:
        c = self.ctas[self.next]
        self.next += 1
        self.resident[sm] += 1
        self.count[sm] += 1
        return c

    def initial(self) -> list[tuple[int, int]]:
        out = []
        for _slot in range(self.ctas_per_sm):
            for sm in self.sms:
                if self.next >= len(self.ctas):
                    return out
                out.append((self._take(sm), sm))
        return out

    def on_retire(self, sm: int) -> int | None:
        self.resident[sm] -= 1
        if self.next >= len(self.ctas):
            return None
        return self._take(sm)


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
        self.ctas: list[int] = []
        self.n_sms = 0
        self.n_ctas = 0
        self.ctas_per_sm = 1
        self.fallback: str | None = None
        self.cluster = 1
        self.sched: SubsetScheduler | None = None
        self.ghosts: dict[int, list[int]] = {}   # sampled CTA -> the unsampled CTAs of its stratum
        self.ghost_fills: bool | str = True      # replay the ghosts' cp.async fills ("all": TMA too; ghost_fills.py)
        self.functional: str = "all"             # "sample": execute only the sampled CTAs functionally; "all"
        self.subset: list[int] | None = None     # the CTAs executed functionally (None: every CTA)
        self.functional_reason: str | None = None  # why every CTA was executed

    # -- the sample --------------------------------------------------------------------------------------
    def choose(self, n_sms: int) -> list[int]:
        if self.ids is not None:
            bad = [s for s in self.ids if not 0 <= s < n_sms]
            if bad:
                raise UserError(f"sampled SMs {bad} out of range", hint=f"SM ids 0..{n_sms - 1}")
            return list(self.ids)
        k = min(self.k, n_sms)
        stride = n_sms / k
        off = random.Random(self.seed).randrange(max(1, int(stride))) if self.seed else 0
        return sorted({(off + int(i * stride)) % n_sms for i in range(k)})

    @staticmethod
    def sample_size(n_ctas: int, n_sms: int, k: int, ctas_per_sm: int, cluster: int = 1) -> int:
        """CTAs of the mini-GPU: its full waves plus ``k / n_sms`` of the last partial wave (whole clusters)."""
        cl = max(1, int(cluster))
        units, slots_full, slots_sub = n_ctas // cl, max(1, n_sms * ctas_per_sm // cl), max(1, k * ctas_per_sm // cl)
        waves, rem = divmod(units, slots_full)
        n = waves * slots_sub + (max(1, int(math.floor(rem * k / n_sms + 0.5))) if rem else 0)
        return min(units, n) * cl

    def choose_gpcs(self, gpc_of: list[int]) -> list[int]:
        """Whole GPCs (``gpc_of[sm]``): ``round(k / mean GPC size)`` of them (at least one, not all), always
        with GPC 0; seed 0 spaces them evenly from GPC 0, another seed draws the others at random
        (``random.Random(seed)``); their SMs in id order."""
        n, n_g = len(gpc_of), max(gpc_of) + 1
        m = min(n_g - 1, max(1, int(math.floor(self.k * n_g / n + 0.5))))
        # GPC 0 runs the first CTAs of every row (launch position 0..): in a one-wave launch those take the
        # grid's DRAM first touches and finish last (gemm_tma_M2048 without GPC 0: 18 % early), and they start
        # the last partial wave
        if self.seed == 0:
            stride = n_g / m
            chosen = {int(i * stride) % n_g for i in range(m)}
        else:
            chosen = {0, *random.Random(f"warpgraph-gpcs-{self.seed}").sample(range(1, n_g), m - 1)}
        return [sm for sm, g in enumerate(gpc_of) if g in chosen]

    def plan(self, n_ctas: int, n_sms: int, ctas_per_sm: int, cluster: int = 1,
             gpc_of: list[int] | None = None) -> "Sample":
        """Choose the SMs and the CTA sample (or decide to fall back to a detailed run). ``gpc_of`` (the GPC of
        each SM, given when reads of one GPC share L2 lookups): sample whole GPCs and the CTAs they run on the
        full GPU (:meth:`_plan_gpcs`)."""
        self.n_ctas, self.n_sms, self.ctas_per_sm = int(n_ctas), int(n_sms), max(1, int(ctas_per_sm))
        cl = self.cluster = max(1, int(cluster))
        by_gpc = (gpc_of is not None and self.ids is None and cl == 1 and len(gpc_of) == n_sms
                  and max(gpc_of) > 0 and self.k < n_sms)
        self.sms = self.choose_gpcs(gpc_of) if by_gpc else self.choose(n_sms)
        k = len(self.sms)
        if by_gpc:   # every CTA c with c mod n_sms in the sampled SMs
            rows, rem = divmod(n_ctas, n_sms)
            n_sub = rows * k + sum(1 for sm in self.sms if sm < rem)
        else:
            n_sub = self.sample_size(n_ctas, n_sms, k, self.ctas_per_sm, cl)
        self.fallback = None
        if k >= n_sms:
            self.fallback = f"the sample ({k} SMs) is the whole GPU ({n_sms} SMs)"
        elif n_ctas < 2 * k:
            self.fallback = f"small grid: {n_ctas} CTAs < 2 x {k} sampled SMs"
        elif n_ctas < n_sms:
            self.fallback = (f"small grid: {n_ctas} CTAs on {n_sms} SMs (less than one each); the end is the slowest "
                             f"of all of them, which a sample cannot bound")
        elif n_sub < max(4, k // 2):
            self.fallback = f"small grid: the sample would have only {n_sub} of {n_ctas} CTAs"
        elif 2 * n_sub > n_ctas:
            self.fallback = f"the sample would be most of the grid ({n_sub} of {n_ctas} CTAs)"
        if self.fallback:
            self.ctas = list(range(n_ctas))
            return self
        if by_gpc:
            return self._plan_gpcs()
        rng = random.Random(f"warpgraph-sample-{self.seed}")
        units = n_ctas // cl
        m = n_sub // cl
        picks, bounds = [], []
        for i in range(m):
            lo, hi = (i * units) // m, ((i + 1) * units) // m
            picks.append(rng.randrange(lo, max(lo + 1, hi)))
            bounds.append((lo, max(lo + 1, hi)))
        # the tail: the last CTA of the launch order starts last on the full GPU (and with grids ordered by work,
        # e.g. causal attention, is among the longest): the last stratum always contributes it
        picks[-1] = units - 1
        self.ctas = [u * cl + j for u in picks for j in range(cl)]
        # each sampled CTA stands for the other CTAs of its stratum (its ghosts: runner/ghost_fills.py)
        self.ghosts = {}
        for u, (lo, hi) in zip(picks, bounds):
            for j in range(cl):
                self.ghosts[u * cl + j] = [v * cl + j for v in range(lo, hi) if v != u]
        return self

    def _plan_gpcs(self) -> "Sample":
        """GPC sample: the full GPU runs CTA ``c`` on SM ``c mod n_sms`` in its first wave (slot-major; later waves
        follow the retire order, which for uniform CTAs repeats it), so the sampled GPCs run the CTAs at their SMs'
        positions of every row of ``n_sms`` CTAs, next to the same neighbours as on the full GPU (L2 lookups are
        shared within a GPC: components/memory.py). Ghosts: each unsampled CTA of a row stands behind the sampled
        CTA of that row at the same rank (round robin), for its DRAM fills (runner/ghost_fills.py)."""
        n, N = self.n_sms, self.n_ctas
        pos = list(self.sms)
        inset = set(pos)
        self.ctas = [c for c in range(N) if (c % n) in inset]
        self.ghosts = {c: [] for c in self.ctas}
        for r0 in range(0, N, n):
            twins = [r0 + j for j in pos if r0 + j < N]
            if not twins:
                twins = [max(c for c in self.ctas if c < r0)]
            others = [r0 + j for j in range(n) if j not in inset and r0 + j < N]
            for i, c in enumerate(others):
                self.ghosts[twins[i % len(twins)]].append(c)
        return self

    def functional_subset(self, program) -> list[int] | None:
        """The CTAs the functional pass executes: only the sampled ones (the others are neither executed nor
        traced), or None (every CTA) when ``sample={"functional": "all"}`` or when the kernel's CTAs communicate
        through global memory (workloads/functional/subset.py; the reason goes to ``metrics["sampling"]``).
        Ghost fills need the ghosts' own traces, so they are off with a subset."""
        from warpgraph.workloads.functional.subset import cta_communication

        self.subset = None
        if self.fallback:
            return None
        if self.functional == "all":
            self.functional_reason = "sample option functional='all'"
            return None
        why = cta_communication(program)
        if why:
            self.functional_reason = why
            return None
        # the timing pass reads the first and the last CTA's warp groups to decide the sub-partition merge
        # (runner/timing.py BundleBuilder.balanced): they are executed too (whole clusters)
        cl = max(1, self.cluster)
        probe = {j for c in (0, self.n_ctas - 1) for j in range(c // cl * cl, c // cl * cl + cl)}
        self.subset = sorted(set(self.ctas) | probe)
        self.ghosts = {}
        return self.subset

    def subset_l1_caches(self, n_ctas: int):
        """The functional pass's L1 per CTA for the :meth:`functional_subset` trace (``l1_sms`` as an array,
        workloads/functional/run.py): one cache per sampled SM, dealt over the subset in launch order, as the
        sampled SMs run it. Keyed by ``c % sm.count`` instead, a sampled CTA met only the few sampled CTAs of its
        residue class in its cache, not its full-grid predecessors on that SM, and re-read a shared weight row from
        L2 (scaled rmsnorm on 8 SMs, 2 sampled: +2.4 % cycles against detailed, 1.15x the L2 reads)."""
        import numpy as np

        m = np.zeros(n_ctas, dtype=np.int64)
        m[np.asarray(self.subset, dtype=np.int64)] = np.arange(len(self.subset)) % max(1, len(self.sms))
        return m

    def calibration_block(self) -> list[int]:
        """The CTAs ``0 .. B-1`` whose full-order functional pass calibrates the first touches of a subset
        trace: the first row of ``n_sms`` CTAs (the first wave's, one per SM: sampled and unsampled neighbours in
        the proportion of the sample); whole clusters, at most the grid."""
        cl = max(1, self.cluster)
        b = min(self.n_ctas, -(-max(self.n_sms, 1) // cl) * cl)
        return list(range(b))

    def calibrate_first_touches(self, trace, run_block) -> None:
        """Correct a subset trace's DRAM first touches for the unsampled CTAs (ghost statistics from a small
        subset). A sampled CTA is the first of the subset to read lines that, on the full grid, an unsampled
        neighbour launched before it already fetched (GEMM operand tiles; gemm_tma_M2048 with GPCs 0 and 4:
        2.75x the grid's DRAM reads before this correction, +5.3 % cycles vs detailed). ``run_block(ctas)``
        executes :meth:`calibration_block` in launch order (every CTA of it) and returns its trace; the ratio
        ``first_touch_ratio`` (at most 1) of its first-touch bytes per CTA to the first-touch bytes per sampled
        CTA of the block in the subset trace scales the DRAM reads that the unsampled SMs add to the HBM servers
        (:meth:`scale_units`) and the reported ``dram_read_bytes``. The sampled CTAs keep their own first
        touches: the sample holds GPC 0, which on the full GPU runs the first CTA of every row and does fetch
        them (thinning the sampled CTAs' own first touches instead made gemm_tma_M2048 8 % fast). Kernels whose
        CTAs read disjoint data get ratio 1. The block is the start of the launch, where the L2 is cold: on
        grids of several waves the later waves reuse more, so the correction is partial there."""
        from warpgraph.workloads.functional.subset import first_touch_bytes_by_cta

        self.first_touch_ratio, self.calibration_ctas = 1.0, 0
        if self.subset is None:
            return
        block = self.calibration_block()
        inset = set(self.subset)
        mine = [c for c in block if c in inset]
        if not mine or len(mine) == len(block):
            return
        cal = run_block(block)
        self.calibration_ctas = len(block)
        full, sub = first_touch_bytes_by_cta(cal), first_touch_bytes_by_cta(trace)
        num = sum(full.get(c, 0) for c in block) / len(block)       # per CTA of the full order
        # per sampled CTA of the whole subset trace: its first touches are what the HBM background scales. Over
        # the block's sampled CTAs alone, data every CTA reads once (a weight vector) counted once per
        # len(mine) CTAs where the full order counts it once per len(block): a row kernel with disjoint rows got
        # 0.84 instead of 1 (scaled rmsnorm, 8 SMs)
        timed = [c for c in self.ctas if c in sub] or mine
        den = sum(sub.get(c, 0) for c in timed) / len(timed)
        ratio = min(1.0, num / den) if den > 0 else 1.0
        self.first_touch_ratio = ratio

    def assign(self, n_ctas: int, n_sms: int, ctas_per_sm: int) -> dict[int, list[int]]:
        """A nominal ``{sm: [cta, ...]}`` of the sample (round robin; the run itself schedules dynamically with
        :meth:`scheduler`)."""
        if not self.sms or self.n_ctas != n_ctas or self.n_sms != n_sms or self.ctas_per_sm != max(1, ctas_per_sm):
            self.plan(n_ctas, n_sms, ctas_per_sm)
        k = len(self.sms)
        return {s: self.ctas[i::k] for i, s in enumerate(self.sms)}

    def scheduler(self, default=None) -> SubsetScheduler:
        self.sched = SubsetScheduler(self.ctas, self.sms, self.ctas_per_sm)
        return self.sched

    def scale_units(self, mem, n_sms: int) -> None:
        """Give the sampled SMs their share of the GPU-wide L2 / HBM bandwidth servers: every request of the
        sampled SMs brings the matching requests of the unsampled SMs (``n_sms / k - 1`` times its amount) as
        background work (:class:`_SharedServer`)."""
        f = len(self.sms) / n_sms
        rho = getattr(self, "first_touch_ratio", 1.0) if self.subset is not None else 1.0
        servers = mem.bandwidth_servers()   # the memory model's lists (components/interfaces.py MemoryModel)
        for attr in ("l2", "hbm", "fill"):
            srvs = servers[attr]
            # a subset trace: the unsampled SMs' DRAM reads are ``first_touch_ratio`` of what the sampled
            # CTAs' first touches would make them (calibrate_first_touches), so the HBM background is too
            fa = min(1.0, f / rho) if (attr == "hbm" and rho > 0) else f
            for i, srv in enumerate(srvs):
                if not (hasattr(srv, "rate") and hasattr(srv, "inv") and hasattr(srv, "free")):
                    # (was skipped silently: that partition's unsampled SMs would bring no background load)
                    raise SimulationError(f"sampled mode: the memory model's {attr} server {i} "
                                          f"({type(srv).__name__}) is not a bandwidth server",
                                          hint="bandwidth_servers() lists of FluidServer-like objects "
                                               "(rate, inv, free: components/memory.py)")
                srvs[i] = _SharedServer.wrap(srv, fa)

    # -- the result --------------------------------------------------------------------------------------
    def _tail_margin(self) -> int:
        """An SM that ran at least ``top - margin + 1`` CTAs was busy to the end. When every CTA starts at launch
        (one wave: ``n_ctas <= n_sms * ctas_per_sm``) the counts are fixed by position and only the SMs with the
        most CTAs are alike (gemm_ptr_M1536: 144 CTAs at 2 per SM, SMs with 2 end far later than SMs with 1);
        with later waves scheduled dynamically an SM one slot-round short was still busy (rmsnorm: 30-33 CTAs)."""
        return 1 if self.n_ctas <= self.n_sms * self.ctas_per_sm else self.ctas_per_sm

    def tail_groups(self, core) -> dict[int, list[tuple[int, int]]]:
        """(end cycle, warp instructions issued) of the sampled SMs that were busy until the work ran out, by the
        number of CTAs each ran: those that ran more than ``top - margin`` (``top`` = the most any sampled SM
        ran, :meth:`_tail_margin`). SMs of one count are alike; a count group ends later than the next lower one
        by about a CTA's share."""
        cnt = self.sched.count if self.sched is not None else {}
        top = max(cnt.values()) if cnt else 0
        m = self._tail_margin()
        out: dict[int, list[tuple[int, int]]] = {}
        for s in self.sms:
            c = cnt.get(s, 0) if cnt else 0
            if core.sm_end[s] > 0 and (not cnt or c > top - m):
                out.setdefault(c, []).append((core.sm_end[s], core.sm_issued[s]))
        return out

    def tail_sample(self, core) -> list[int]:
        """The end cycles of :meth:`tail_groups`."""
        return [e for g in self.tail_groups(core).values() for e, _ in g]

    def full_group_size(self, count: int, k: int, top: int) -> int:
        """SMs of the full GPU that run ``count`` CTAs, for ``k`` sampled ones. One wave: CTA ``c`` starts on SM
        ``c mod n_sms``, so the full GPU's SMs run ``n_ctas // n_sms`` or one more CTA, the partial row's
        ``n_ctas mod n_sms`` SMs the more (gemm_ptr_M1536: 144 CTAs, 12 SMs with 2, all of them in the GPC
        sample: nothing to extrapolate). Later waves are scheduled dynamically: the sample's proportions,
        ``k * n_sms / sampled SMs``."""
        if self.n_ctas <= self.n_sms * self.ctas_per_sm and self.sms:
            rem = self.n_ctas % self.n_sms
            if rem and count == top:
                return rem
            if count == top or (rem and count == top - 1):
                return self.n_sms - rem if rem else self.n_sms
        return int(round(k * self.n_sms / max(1, len(self.sms))))

    def tail_shift(self, core) -> tuple[float, float]:
        """(expected gap, its 1-sigma spread), in cycles, between the full GPU's last SM and the sample's last.

        The full GPU ends with the slowest of its busy SMs, the sample with the slowest of its own
        (:meth:`tail_groups`). Within a count group the end cycles are taken as normal with the pooled within-group
        standard deviation ``sigma`` of what the SMs' issued instructions do not explain (differences between groups,
        or from work, are structure, not noise: SMs with 5 CTAs against SMs with 4; causal attention's heavy and light
        CTAs). The expected last end of a group of ``n`` is ``mean + sigma * E[M_n]`` (``E[M_n]``: expected maximum of
        ``n`` standard normals, :func:`normal_max_moments`), of the GPU the largest over its groups; the shift is that
        for the full GPU's group sizes (:meth:`full_group_size`) minus that for the sample's. The spread is ``sigma *
        sqrt(Var M_N + Var M_k)`` of the group that ends last on the full GPU."""
        groups = self.tail_groups(core)
        if not groups or not self.sms:
            return 0.0, 0.0
        # the part of the spread that the SMs' own work explains is structure too (causal attention: CTAs of
        # one grid differ several-fold in work): remove a pooled within-group linear fit on issued instructions
        sxx = sxy = syy = 0.0
        dof = 0
        for g in groups.values():
            if len(g) > 1:
                my = sum(e for e, _ in g) / len(g)
                mx = sum(w for _, w in g) / len(g)
                sxx += sum((w - mx) ** 2 for _, w in g)
                sxy += sum((w - mx) * (e - my) for e, w in g)
                syy += sum((e - my) ** 2 for e, _ in g)
                dof += len(g) - 1
        if sxx > 0 and dof > 1:
            num, dof = max(0.0, syy - sxy * sxy / sxx), dof - 1
        else:
            num = syy
        if dof <= 0:
            return 0.0, 0.0
        sig = math.sqrt(num / dof)
        top = max(groups)
        best_full, best_smp, spread = -math.inf, -math.inf, 0.0
        for c, g in sorted(groups.items()):
            k = len(g)
            mu = sum(e for e, _ in g) / k
            n_full = max(k, self.full_group_size(c, k, top))
            e_n, v_n = normal_max_moments(n_full)
            e_k, v_k = normal_max_moments(k)
            if mu + sig * e_n > best_full:
                best_full, spread = mu + sig * e_n, sig * math.sqrt(v_n + v_k)
            best_smp = max(best_smp, mu + sig * e_k)
        return max(0.0, best_full - best_smp), spread

    def error_terms(self, core, cycles: int, tail: tuple[float, float]) -> dict:
        """1-sigma error of ``cycles`` (% parts): ``tail`` is :meth:`tail_shift`'s (shift, spread)."""
        N = self.n_sms
        cnt = self.sched.count if self.sched is not None else {}
        cyc = max(1, int(cycles))
        shift, spread = tail
        slots = N * self.ctas_per_sm
        partial = self.n_ctas > slots and self.n_ctas % slots != 0
        tail_err = spread + (core.cfg.launch_latency if partial else 0)
        per = [core.sm_active_cycles[s] * min(self.ctas_per_sm, max(1, cnt.get(s, 1))) / cnt[s]
               for s in self.sms if cnt.get(s)]
        mean = sum(per) / len(per) if per else 0.0
        fpc = math.sqrt(max(0.0, 1.0 - len(self.ctas) / max(1, self.n_ctas)))
        work = (_std(per) / mean / math.sqrt(len(per)) * fpc * cyc) if mean > 0 and len(per) > 1 else 0.0
        return {"tail_shift_cycles": int(round(shift)), "tail_pct": round(100.0 * tail_err / cyc, 3),
                "work_pct": round(100.0 * work / cyc, 3),
                "cycles_error_pct": round(100.0 * math.hypot(tail_err, work) / cyc, 3)}

    def finish(self, out, n_ctas: int, n_ctas_run: int, n_sms: int, exact: dict | None = None) -> None:
        """Scale counters of a sampled run to the whole GPU and add ``metrics["sampling"]``. ``exact``: counters
        known for the whole grid without timing (the functional pass's DRAM first-touch reads), used as they are."""
        m = out.metrics
        core = out.core
        sf = n_ctas / n_ctas_run if n_ctas_run else 0.0
        for key in ("warp_instructions", "ptx_warp_instructions", "dram_read_bytes", "dram_write_bytes", "l2_bytes"):
            if key in m:
                m[key] = int(round(m[key] * sf))
        if self.subset is not None:
            # the functional pass saw only the sample: its first touches are scaled like the rest, with the
            # unsampled CTAs' share from the calibration block (calibrate_first_touches)
            exact = None
            if "dram_read_bytes" in m:
                m["dram_read_bytes"] = int(round(m["dram_read_bytes"] * getattr(self, "first_touch_ratio", 1.0)))
        for key, v in (exact or {}).items():
            if key in m and v is not None:
                m[key] = int(v)
        # the full GPU ends with the slowest of all its SMs: the sample's last SM plus the expected gap between
        # the maxima of n_sms and of k SMs (tail_shift)
        tail = self.tail_shift(core)
        raw = int(m.get("cycles", 0))
        cycles = raw + int(round(tail[0]))
        m["cycles"] = cycles
        out.stats.group("gpu").set("cycles", cycles)
        if m.get("tensor_utilization_pct") is not None:     # None: the variant declares no dense peak
            m["tensor_utilization_pct"] = round(m["tensor_utilization_pct"] * sf * raw / max(1, cycles), 3)
        err = self.error_terms(core, cycles, tail)
        m["sampling"] = {
            "mode": "sampled", "sms": list(self.sms), "seed": self.seed, "fraction": round(len(self.sms) / n_sms, 4),
            "ctas_simulated": n_ctas_run, "ctas_total": n_ctas, "scale": round(sf, 6),
            "ctas_per_sm": self.ctas_per_sm, "strata": len(self.ctas), "cycles_sampled_sms": raw,
            **err, "sm_end_cycles": [core.sm_end[s] for s in self.sms],
            "sm_ctas": [self.sched.count.get(s, 0) for s in self.sms] if self.sched is not None else None,
            "functional_ctas": len(self.subset) if self.subset is not None else n_ctas,
            "functional": "sample" if self.subset is not None else "all",
            "functional_reason": self.functional_reason,
            "calibration_ctas": getattr(self, "calibration_ctas", 0),
            "first_touch_ratio": round(getattr(self, "first_touch_ratio", 1.0), 4),
            "outputs": (f"not checkable: only the {len(self.subset)} sampled CTAs of {n_ctas} were executed"
                        if self.subset is not None else "every CTA executed"),
        }
        g = out.stats.group("sampling")
        g.set("sms", len(self.sms))
        g.set("seed", self.seed)
        g.set("ctas_simulated", n_ctas_run)
        g.set("scale", sf)
        g.set("cycles_error_pct", err["cycles_error_pct"])

    def fallback_info(self) -> dict:
        """``metrics["sampling"]`` of a run that fell back to detailed mode."""
        return {"mode": "detailed", "requested": "sampled", "fallback": self.fallback, "sms": None,
                "requested_sms": len(self.sms), "seed": self.seed, "fraction": 1.0, "ctas_simulated": self.n_ctas,
                "ctas_total": self.n_ctas, "scale": 1.0, "cycles_error_pct": 0.0}


class _SharedServer:
    """A GPU-wide bandwidth server (components.memory.FluidServer interface: ``reserve``, ``reserve_stream``,
    ``rate``, ``inv``, ``free``, ``busy``, ``amount``, ``hist``) seen from ``k`` of ``n_sms`` SMs. A request of
    ``b`` units stands for ``b / f`` units of the whole GPU (the same request of every SM, ``f = k / n_sms``):
    the server is occupied for ``b / (f · rate)``, as a ``f · rate`` server would be (so throughput and queueing
    delay match the full GPU), but the request itself is served at the full rate in the middle of its peers'
    work (half of the background before it, half after) instead of last, as the full GPU's FIFO would place it
    on average."""

    __slots__ = ("rate", "inv", "free", "busy", "amount", "hist", "bg", "pre")

    @classmethod
    def wrap(cls, srv, f: float, position: float = 0.5):
        s = cls()
        s.rate, s.inv, s.free, s.busy, s.amount, s.hist = srv.rate, srv.inv, srv.free, srv.busy, srv.amount, srv.hist
        s.bg = (1.0 / f - 1.0) if f > 0 else 0.0
        s.pre = position
        return s

    def reserve(self, t: float, amount: float) -> float:
        start = self.free if self.free > t else t
        own = amount * self.inv
        bg = own * self.bg
        self.free = start + own + bg
        self.busy += own + bg
        self.amount += amount
        b = int(start) // 1000
        h = self.hist
        if b >= len(h):
            h.extend([0.0] * (b + 1 - len(h)))
        h[b] += own + bg
        return start + bg * self.pre + own

    def occupancy(self, amount: float) -> float:
        """Busy cycles of ``amount`` units with the unsampled SMs' matching work (the HBM loaded-latency
        utilisation of components/memory.py counts the whole GPU's load, not the sample's share)."""
        return amount * self.inv * (1.0 + self.bg)

    def peek(self, t: float, amount: float) -> float:
        start = self.free if self.free > t else t
        own = amount * self.inv
        return start + own * self.bg * self.pre + own

    def reserve_stream(self, t0: float, t1: float, amount: float) -> float:
        end = self.reserve(t0, amount)
        tail = t1 + self.inv * (32 if amount >= 32 else amount)
        if tail > end:
            if tail > self.free:
                self.free = tail
            end = tail
        return end


_MAX_MOMENTS: dict[int, tuple[float, float]] = {}


def normal_max_moments(n: int) -> tuple[float, float]:
    """(mean, variance) of the maximum of ``n`` independent standard normal variables, by numerical
    integration of its density ``n phi(x) Phi(x)^(n-1)`` (E = 0 for n = 1; E ~ 2.04 for 33, 2.58 for 132)."""
    n = max(1, int(n))
    r = _MAX_MOMENTS.get(n)
    if r is None:
        import numpy as np
        from math import erf, sqrt

        x = np.linspace(-9.0, 9.0, 18001)
        cdf = 0.5 * (1.0 + np.vectorize(erf)(x / sqrt(2.0)))
        pdf = n * cdf ** (n - 1) * np.exp(-0.5 * x * x) / sqrt(2.0 * math.pi)
        w = pdf * (x[1] - x[0])
        m1 = float((x * w).sum())
        r = _MAX_MOMENTS[n] = (m1, max(0.0, float((x * x * w).sum()) - m1 * m1))
    return r


def _std(xs) -> float:
    n = len(xs)
    if n < 2:
        return 0.0
    mu = sum(xs) / n
    return math.sqrt(sum((x - mu) ** 2 for x in xs) / (n - 1))


def make_sample(sample, seed: int = 0) -> Sample:
    """``None`` -> default, an int -> that many SMs, a list -> those SMs, a dict ``{"sms": ..., "seed": ...}``,
    or a :class:`Sample`."""
    if isinstance(sample, Sample):
        return sample
    if sample is None:
        return Sample(DEFAULT_SMS, seed)
    if isinstance(sample, dict):
        bad = set(sample) - {"sms", "seed", "ghost_fills", "functional"}
        if bad:
            raise UserError(f"unknown sample option(s) {sorted(bad)}", hint="keys: sms, seed, ghost_fills, functional")
        fn = sample.get("functional", "all")
        if fn not in ("sample", "all"):
            raise UserError(f"sample option functional={fn!r}", hint="'all' (every CTA: outputs checkable, ghost "
                            "fills; the default) or 'sample' (only the sampled CTAs are executed functionally)")
        smp = Sample(sample.get("sms", DEFAULT_SMS), int(sample.get("seed", seed)))
        gf = sample.get("ghost_fills", True)
        if gf not in (True, False, "all"):
            raise UserError(f"sample option ghost_fills={gf!r}", hint="true, false or 'all' (cp.async and TMA)")
        smp.ghost_fills = gf
        smp.functional = fn
        return smp
    if isinstance(sample, (int, list, tuple)):
        return Sample(sample if isinstance(sample, int) else list(sample), seed)
    raise UserError(f"bad sample spec {sample!r}", hint="an SM count, a list of SM ids or {'sms': 16, 'seed': 0}")

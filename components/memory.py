"""Global memory timing: per-SM L1/LSU + crossbar port, L2 in two partitions (near/far), HBM as bandwidth servers.

Contract 6 of docs/design.md (timestamp style): callers pass non-decreasing ``t`` (SM cycles); every server is
a "next-free" fluid server (float time, no ticking) and a call returns the completion cycle (int, rounded up).

Model (paper III, hopper-blackwell-facts.md 2.2):

* **Per SM**: an L1/LSU data port (``l1.bytes_per_cycle``, at least one cycle per 128-B line for the tag stage)
  and a crossbar response port (``fabric.xbar_bytes_per_cycle_per_sm``). An MSHR window bounds the lines in
  flight per SM (``l1.mshrs``): a request that does not fit waits for the earliest outstanding completion.
  The trace carries no L1-hit information, so sectors that are not first-touch are modelled as **L2 hits**.
* **L2**: ``l2.slices`` slices in ``l2.partitions`` partitions. The trace has no per-request addresses, so no
  address hash is modelled (``l2.hash`` is ``rotation``): a request touching one or a few 128-B lines maps each
  line to a partition by a multiplicative hash of a per-SM counter; larger requests spread their sectors evenly
  over the partitions. The slices of a partition are served by one aggregate fluid server of capacity
  ``slices_per_partition × bytes_per_cycle_per_slice`` (converted from the L2 clock to SM cycles); traffic and
  busy cycles are counted per partition (``l2_part_read`` / ``l2_part_write``), not per slice (bytes per slice by
  address are the functional pass's statistics, workloads/functional/addrmap.py). An SM's near
  partition is the one whose index equals ``sm * partitions // sm.count``; a line in the other partition pays
  ``far_latency_cycles`` instead of ``near_latency_cycles``. A line the CTA read before (the trace marks it:
  workloads/functional/memops.py ``_warm_lines``) has a copy in the near partition (H200 pointer chases: near / far
  only on an SM's first touch, every warm line a near hit).
* **HBM**: ``hbm.channels`` channels, split evenly between the partitions (one server per partition; DRAM bytes
  counted per partition, ``hbm_part_read`` / ``hbm_part_write``); aggregate bandwidth
  ``hbm.bandwidth_gb_per_s × efficiency`` converted to bytes per SM cycle; DRAM (first-touch) sectors pay the
  L2 latency of their partition plus ``hbm.latency_cycles``. Stores write their first-touch sectors back to
  DRAM (``dram_write_bytes``; the write-back consumes HBM bandwidth at store time).
* **Lookup coalescing** (cp.async and ld.global; ``l2.coalesce_scope``). ``gpc`` (H200 microbench ``l2_coalesce_pairs``,
  2026-12-03): reads of the same lines (payload a1 bits 32+, ``memops._line_key``) from SMs of one GPC share one
  L2 lookup while the first one is outstanding (until its data is back), at most ``l2.requests_per_lookup_max`` (4)
  reads per lookup: a shared read costs no slice bandwidth and no lts__t traffic and returns with the first. SMs of
  different GPCs never share a lookup (SM pairs: 2.00 reads per lookup within a GPC, 1.00 across; 132 SMs: 3.8). A
  lookup of lines whose DRAM fill is outstanding (another GPC's request) waits for the fill but costs its lookup
  (hit-on-miss; DRAM is read once). ``gpu``: any two SMs may share. ``fill`` (the model before 2026-12-03): a read
  reaching the slices while another SM's DRAM fill of its lines is outstanding (issue < fill done - mean L2 round
  trip) merges into it for free, any SM, hits never share. ``none``: every read looks up. ``components/tma.py``
  applies the same scopes to TMA boxes (without the hit-on-miss wait; reason there). Model SM ids are GPC-major
  (``fabric.sms_per_gpc``), the order in which the hardware's CTA scheduler fills the first wave (same
  microbenchmark, ``map.txt``).
* Loads complete when their last sector returns. Utilisation: busy cycles per 1k-cycle bucket for every L2 and
  HBM partition server (``utilisation()``).
"""
from __future__ import annotations

import math

from heapq import heappop, heappush

from warpgraph.components.atomics import AtomicUnits, LockTable
from warpgraph.components.structural import gpc_of_sms
from warpgraph.core.registry import register_component
from warpgraph.core.tracing import NULL_RECORDER

__all__ = ["MemorySystem", "FluidServer"]

SECTOR = 32


def _curve_at(wb: list, stored: float, x: float) -> float:
    """The write-back curve ``wb`` (``len(wb) - 1`` equal steps over ``stored`` sectors) at ``x``, linear between its
    points, its last value past the end."""
    if x >= stored:
        return wb[-1]
    f = x * (len(wb) - 1) / stored
    j = int(f)
    return wb[j] + (f - j) * (wb[j + 1] - wb[j])


BUCKET = 1000  # cycles per utilisation bucket


def _ceil(x: float) -> int:
    i = int(x)
    return i if i >= x else i + 1


class FluidServer:
    """A bandwidth server: ``reserve(t, amount)`` queues ``amount`` units behind earlier work and returns the
    (float) cycle the last unit is served. Keeps busy time and a per-1k-cycle busy histogram."""

    __slots__ = ("rate", "inv", "free", "busy", "amount", "hist")

    def __init__(self, rate_per_cycle: float):
        self.rate = float(rate_per_cycle)
        self.inv = 1.0 / self.rate
        self.free = 0.0
        self.busy = 0.0
        self.amount = 0
        self.hist: list[float] = []

    def reserve(self, t: float, amount: float) -> float:
        start = self.free if self.free > t else t
        d = amount * self.inv
        end = start + d
        self.free = end
        self.busy += d
        self.amount += amount
        b = int(start) // BUCKET
        h = self.hist
        if b >= len(h):
            h.extend([0.0] * (b + 1 - len(h)))
        h[b] += d  # a reservation is charged to the bucket it starts in (durations are << 1k cycles)
        return end

    def occupancy(self, amount: float) -> float:
        """Cycles ``amount`` units keep the server busy (a sampled run's shared server adds the unsampled SMs'
        matching work: runner/sampling.py ``_SharedServer``)."""
        return amount * self.inv

    def peek(self, t: float, amount: float) -> float:
        """What :meth:`reserve` would return now, without reserving."""
        return (self.free if self.free > t else t) + amount * self.inv

    def reserve_stream(self, t0: float, t1: float, amount: float) -> float:
        """``amount`` units arriving uniformly over [t0, t1]: done no earlier than the last arrival is served."""
        end = self.reserve(t0, amount)
        tail = t1 + self.inv * (SECTOR if amount >= SECTOR else amount)
        if tail > end:
            self.free = tail
            end = tail
        return end


@register_component(role="memory", kind="default")
class MemorySystem:
    """One object for the whole GPU (Contract 6): ``global_access``, ``bulk``, ``stats``."""

    role = "memory"
    kind = "default"

    def __init__(self, spec, engine=None, *, l1=None, xbar=None, l2=None, hbm=None):
        """``l1`` / ``xbar`` / ``l2`` / ``hbm``: the path's parts (components/memory_parts.py), as the machine
        builder instantiates them from the graph; built from ``spec``'s sections when not given (unit tests)."""
        from warpgraph.components import memory_parts as mp

        self.spec = spec
        self.engine = engine
        self.write_back_ratio = 1.0   # set by the runner from the functional pass's L2 residency model
        self._wb_curve = None         # set_write_back_curve: when the write-backs happen, against the stores
        self._wb_stored = 0.0
        clocks, l2s, hbms, fab = spec.clocks, spec.l2, spec.hbm, spec.fabric
        sm_mhz = float(clocks.sm_mhz)
        l2_mhz = float(clocks.l2_mhz)
        self.n_sm = n_sm = int(spec.sm.count)
        if l1 is None:
            l1 = mp.L1Port(spec.l1, n_sm)
        if xbar is None:
            xbar = mp.Crossbar(fab, n_sm)
        if l2 is None:
            l2 = mp.L2Slices(l2s, n_sm, sm_mhz, l2_mhz)
        if hbm is None:
            hbm = mp.HbmChannels(hbms, l2.parts, sm_mhz)
        self.l1, self.xbar, self.l2, self.hbm = l1, xbar, l2, hbm
        self.parts = P = l2.parts
        self.slices = l2.slices
        self.slices_per_part = l2.slices_per_part
        self.near_lat = l2.near_latency
        _tl = spec.tma.l2_latency_cycles if hasattr(spec.tma, "l2_latency_cycles") else None
        self.tma_l2_lat = None if _tl is None else int(_tl)   # TMA request path to L2 (None: as ld.global)
        self.far_lat = l2.far_latency
        self.dram_lat = hbm.latency
        self.hbm_wcost = float(hbms.write_cost_factor)
        self.line = int(l2s.line_bytes)
        self.l2_bpc = l2.slice_bpc * l2.slices
        self.hbm_peak_bpc = hbm.peak_bpc
        self.hbm_bpc = hbm.bpc
        self.channels = hbm.enabled
        self.l2_srv = l2.servers
        self.hbm_srv = hbm.servers
        self._split = l2.split
        self._xbar = xbar.response
        # L2 fill + store write path (microbench stream_sizes, H200 2026-12-03): DRAM fills and SM stores that
        # allocate in L2 share one data-array write throughput; a copy whose output stays in L2 takes as long as
        # reading twice the bytes from DRAM. None: not modelled (every store is free of it)
        fsg = l2s.fill_store_gb_per_s
        self.fill_bpc = float(fsg) * 1e3 / sm_mhz if fsg else 0.0
        self.fill_srv = [FluidServer(self.fill_bpc / P) for _ in range(P)] if fsg else []
        # DRAM latency under load below saturation (microbench loaded_latency): + a * u / (1 - u), u = the
        # partition's recent busy fraction (EWMA over hbm.utilization_window_cycles), capped at
        # hbm.loaded_latency_max_util (beyond it the fluid server's own backlog is the queue)
        self.hbm_qa = float(hbms.loaded_latency_cycles) * hbms.dram_scale(sm_mhz)   # (hbm.latency_clock_mhz)
        self.hbm_umax = float(hbms.loaded_latency_max_util)
        self.hbm_tau = float(hbms.utilization_window_cycles)
        self.hbm_u = [0.0] * P
        # DRAM line latencies spread (microbench dram_fanout): a read of n DRAM lines waits for the slowest,
        # min + spread * H_n (iid exponential excess) instead of the single-line mean min + spread
        self.hbm_spread = float(hbms.latency_spread_cycles) * hbms.dram_scale(sm_mhz)
        # hbm.latency_spread_mode "sampled": each read draws its slowest line's excess (a hash of the SM and its
        # count of DRAM reads, so every partitioning of the launch draws the same); "expected": its mean
        self.hbm_spread_sampled = hbms.latency_spread_mode == "sampled"
        self.spread_ctr = [0] * max(1, n_sm)
        self.spread_seed = int(hbms.latency_spread_seed)
        self.hbm_ut = [0.0] * P
        self.l1_bpc = l1.bytes_per_cycle
        self.xbar_bpc = xbar.bpc
        self.mshrs = l1.mshrs
        self.small_lines = l2.small_lines
        self.near_part = l2.near_part
        self.l1_free = l1.free
        self.inflight = l1.inflight
        self.inflight_lines = l1.inflight_lines
        self.ctr = l2.ctr
        # counters
        self.l2_read_bytes = 0
        self.l2_write_bytes = 0
        # per partition: bytes through its slices (atomics once, as reads) and DRAM bytes through its channels
        self.l2_part_read = [0.0] * P
        self.l2_part_write = [0.0] * P
        self.hbm_part_read = [0.0] * P
        self.hbm_part_write = [0.0] * P
        self.dram_read_bytes = 0
        self.dram_write_bytes = 0
        self.requests = 0
        self.merge_fills = True            # in-flight fill merging (switched off only to compare)
        self.scope = str(l2s.coalesce_scope)                             # none | fill | gpc | gpu
        self.lookup_cap = int(l2s.requests_per_lookup_max or 0)          # 0 (None in the spec): no limit
        self.share_lookups = self.scope in ("gpc", "gpu")    # lookups (hits too) absorb reads of the same lines
        if self.scope == "none":
            self.merge_fills = False                          # every read looks up on its own
        self.gpc_of = gpc_of_sms(fab, n_sm) if self.scope == "gpc" else [0] * n_sm
        # global atomics (H200 microbench atomics.cu, components/atomics.py): the slice's read-modify-write beyond
        # an L2 hit, the acquire side of .acquire / .acq_rel atomics, .gpu-scope fences (also an atomic's release
        # side), spin-lock exclusion
        self.atom_extra = float(l2s.atomic_extra_latency_cycles)
        self.atom_acquire = float(l2s.atomic_acquire_cycles)
        self.fence_gpu = float(l2s.fence_gpu_cycles)
        _lp = float(l2s.lock_retry_period_cycles)
        self.locks = LockTable(_lp) if _lp > 0 else None
        # the L2's atomic units (H200 microbench atomics.cu TPUT): one read-modify-write per 128-B line at a time
        self.atom_word_int = float(l2s.atomic_word_cycles)
        self.atom_word_float = float(l2s.atomic_word_float_cycles)
        self.atom_line_lane = float(l2s.atomic_line_lane_cycles)
        self.atom_line_req = float(l2s.atomic_line_request_cycles)
        # per line unit and per word: busy calendars (components/atomics.py), with each unit's least occupancy of a
        # request
        wmin = min(self.atom_word_int, self.atom_word_float)
        self.atom_units = AtomicUnits(self.atom_line_req, wmin if wmin > 0 else 0.0,
                                      float(l2s.atomic_alu_switch_window_cycles))
        self.atom_line_req_ordered = float(l2s.atomic_line_request_ordered_cycles) or self.atom_line_req
        # lines per line unit, 2**shift (key = line << 1 | 1: the unit is (line >> shift) << 1 | 1, never 0)
        self.atom_unit_shift = (int(l2s.atomic_unit_bytes) // int(l2s.line_bytes)).bit_length() - 1
        # the atomic ALUs (H200 atomics.cu TPUT, 132 SMs: the GPU-wide lane-operation rate grows with the lines in
        # use, 2.34 / 4.80 / 8.33 full-line reds per cycle on 132 / 528 / 2,112 lines)
        self.atom_alus = int(l2s.atomic_lane_units)
        self.atom_alu_bits = max(1, (self.atom_alus - 1).bit_length())
        self.atom_alu_lane = float(l2s.atomic_alu_lane_cycles)
        self.atom_alu_ret = float(l2s.atomic_alu_return_lane_cycles) or self.atom_alu_lane
        _ab = int(l2s.atomic_lane_unit_bytes)
        self.atom_alu_shift = (_ab // int(l2s.line_bytes)).bit_length() - 1 if _ab else 0
        # spin-lock waiters retry on their line's units while they wait (components/atomics.py AtomicUnits.park)
        self.lock_spin = self.locks is not None and bool(l2s.lock_waiters_spin)
        # line key -> [merge window end, done, mergeable bytes, reads] (cp.async; scope "fill"), or
        # line key * 256 + gpc -> [window end, done, bytes, reads] (open lookups; scopes "gpc" / "gpu") and
        # line key * 256 + 255 -> [done, done, DRAM bytes, 1] (outstanding DRAM fills, for hit-on-miss)
        self.fills: dict[int, list] = {}
        self._prune_at = 8192
        self.merged_bytes = 0      # read bytes merged into an outstanding L2 fill (no slice traffic; components/tma.py)
        self.mshr_stall_cycles = 0
        self.on_share = None       # runner/partitioned.py: called (key, count index, t) when a read shares a lookup
        self.far_lines = 0
        # event recording (core/tracing.py): served bytes per level aggregated between samples, backlogs sampled
        self.rec = NULL_RECORDER
        self.trace_sample_cycles = 100
        self._tnext = 0.0
        self._tacc: dict[tuple[str, bool], list] = {}
        self.near_lines = 0
        self._ack = None          # _l2: the acknowledgement cycle of the last request (global_access)
        self._hit_done = 0.0      # _l2: when the last read would be back had all its lines hit
        self.last_ack = 0         # global_access: the last request's acknowledgement cycle
        #: per SM: the latest completion of any global request it issued (a load answered by L2 as a hit would be,
        #: without its DRAM part; a store / atomic acknowledged): what a MEMBAR.ALL.GPU waits for with
        #: ``latencies.membar_drains: sm``
        self.sm_outstanding = [0] * n_sm

    # ------------------------------------------------------------------------------------------------
    @property
    def l2_rt(self) -> float:
        """Mean L2-hit round trip (near and far equally likely)."""
        return (self.near_lat + self.far_lat) * 0.5

    @property
    def dram_rt(self) -> float:
        """Mean DRAM round trip: the mean L2 round trip plus ``hbm.latency_cycles``."""
        return self.l2_rt + self.dram_lat

    def _l2(self, t: float, sm: int, nbytes: int, dram_bytes: int, lines: int, write: bool, t_end=None,
            lat_all: int | None = None, warm: int = 0) -> float:
        """Reserve L2 (and HBM) capacity for a request; return the float cycle its last sector is back.
        ``lat_all`` replaces the near/far hit latencies (the TMA engine's own L2 path). ``warm`` of the ``lines``
        have a copy in the SM's near partition (the CTA read them before: workloads/functional/memops.py
        ``_warm_lines``); the others hash to a partition."""
        P = self.parts
        if lines < 1:
            lines = 1
        if warm:
            if warm > lines:
                warm = lines
            near = warm + (self._split(sm, lines - warm)[0] if lines > warm else 0)
        else:
            near = self._split(sm, lines)[0]
        me = self.near_part[sm]
        rec_on = self.rec.enabled
        if rec_on and t >= self._tnext:
            self._trace_sample(t)
        done = 0.0
        ack = 0.0
        hdone = 0.0
        self.near_lines += near
        self.far_lines += lines - near
        for p in range(P):
            if P == 1:
                frac = 1.0
                lat = self.near_lat
            elif p == me:
                if near == 0:
                    continue
                frac = near / lines
                lat = self.near_lat
            else:
                far = lines - near
                if far == 0:
                    continue
                frac = far / lines / (P - 1)
                lat = self.far_lat
            b = nbytes * frac
            if write:
                self.l2_part_write[p] += b
            else:
                self.l2_part_read[p] += b
            if t_end is None:
                e = self.l2_srv[p].reserve(t, b)
            else:
                e = self.l2_srv[p].reserve_stream(t, t_end, b)
            if rec_on:
                self._trace_note("l2", write, e - b * self.l2_srv[p].inv, e, b)
            fsrv = self.fill_srv[p] if self.fill_srv else None
            if write and fsrv is not None and b:
                # the store's bytes are written into the L2 data array (allocated there, whether or not they
                # are later written back)
                # The path books DRAM fills when their read reaches the L2 (``t_in`` below), hbm.latency_cycles
                # before their data is written: a store, written on arrival, books in that frame too (at t - the
                # DRAM latency), or it would hold up fills whose data comes after it
                # (no earlier than cycle 0, where the path's bookings start)
                dl = self.dram_lat if t >= self.dram_lat else t
                ew = (fsrv.reserve(t - dl, b) if t_end is None else fsrv.reserve_stream(t - dl, t_end - dl, b)) + dl
                if ew > e:
                    e = ew
            if e + self.near_lat > ack:      # acknowledged by the SM's near partition (global_access)
                ack = e + self.near_lat
            if dram_bytes:
                db = dram_bytes * frac
                if write:
                    self.hbm_part_write[p] += db
                else:
                    self.hbm_part_read[p] += db
                # DRAM writes cost hbm.write_cost_factor read-equivalents of channel time (bus turnaround)
                t_in = e - (b * self.l2_srv[p].inv)
                hs = self.hbm_srv[p]
                amt = db * self.hbm_wcost if write else db
                e2 = hs.reserve(t_in, amt) + self.dram_lat
                if not write and fsrv is not None:
                    # the fill writes the DRAM data into the L2 data array
                    ef = fsrv.reserve(t_in, db) + self.dram_lat
                    if ef > e2:
                        e2 = ef
                ql = 0.0
                if self.hbm_qa:
                    u = self._hbm_util(p, t_in)
                    if t_in > self.hbm_ut[p]:
                        self.hbm_ut[p] = t_in
                    ql = self._loaded_latency(u)
                    e2 += ql
                    self.hbm_u[p] = u + hs.occupancy(amt) / self.hbm_tau
                if self.hbm_spread and not write:
                    e2 += self._fanout(lines, dram_bytes, ql, t, t_end, sm if self.hbm_spread_sampled else -1)
                if rec_on:
                    self._trace_note("hbm", write, e2 - self.dram_lat - db * self.hbm_srv[p].inv,
                                     e2 - self.dram_lat, db)
                if not write and e + lat > hdone:
                    hdone = e + lat          # as if the lines had hit (a fence orders a load without its DRAM part)
                if e2 > e:
                    e = e2
            if lat_all is not None:
                # the TMA engine's own L2 path (tma.l2_latency_cycles, measured on lines the SM re-reads: near).
                # Lines it fills from DRAM come through their home partition, which for the far share pays the far
                # penalty as an ld.global does (H200 tma_dram_round_trip 128 B / 1 KiB: 739 / 811 cycles = the
                # hot copy + hbm.latency_cycles + the near / far mix / the far line of 8)
                lat = lat_all if (p == me or write or not dram_bytes) else lat_all + self.far_lat - self.near_lat
            if not write:
                e += lat
            else:
                e += lat  # acknowledgement from the slice
            if e > done:
                done = e
            if e > hdone and not dram_bytes:
                hdone = e
        self._ack = ack
        self._hit_done = hdone
        return done

    # -- event recording ------------------------------------------------------------------------------
    def _trace_note(self, level: str, write: bool, t0: float, t1: float, nbytes: float) -> None:
        a = self._tacc.get((level, write))
        if a is None:
            self._tacc[(level, write)] = [nbytes, t0, t1]
            return
        a[0] += nbytes
        if t0 < a[1]:
            a[1] = t0
        if t1 > a[2]:
            a[2] = t1

    def _trace_sample(self, t: float) -> None:
        """Flush the served bytes since the last sample as ``traffic`` events (one per level and direction,
        spread over the span of their reservations) and sample each server's backlog (cycles of queued work)
        as a GPU-wide counter; at most once per ``trace_sample_cycles``."""
        rec = self.rec
        for (level, write) in sorted(self._tacc):
            nb, t0, t1 = self._tacc[(level, write)]
            if nb > 0:
                rec.traffic(level, t0, t1, int(round(nb)), write=write)
        self._tacc.clear()
        ti = int(t)
        for p in range(self.parts):
            rec.counter(f"L2 p{p} backlog (cycles)", ti, max(0.0, round(self.l2_srv[p].free - t, 1)))
            rec.counter(f"HBM p{p} backlog (cycles)", ti, max(0.0, round(self.hbm_srv[p].free - t, 1)))
        self._tnext = t + self.trace_sample_cycles

    def trace_finish(self, t_end=None) -> None:
        """Flush the last traffic and a final backlog sample (the runner calls this after the run)."""
        if self.rec.enabled:
            self._trace_sample(float(t_end) if t_end is not None else self._tnext)

    # ------------------------------------------------------------------------------------------------
    def set_write_back_curve(self, curve, scale: float = 1.0) -> None:
        """Charge the launch's write-backs where the functional pass's L2 model puts them instead of spreading
        ``write_back_ratio`` over every store: ``curve = (stored, wb)`` from ``L2Residency.write_back_curve`` (``wb``:
        sectors written back by each of ``len(wb) - 1`` equal steps of the ``stored`` sectors stored). A store that
        brings this run's stored sectors (times ``scale``: the share of the launch's stores one partition or a
        sample sees is 1 / scale) from x0 to x1 causes ``wb(x1) - wb(x0)`` sectors of HBM write traffic: none while
        the L2 absorbs the writes, about one per stored sector once it is full (microbench/src/dirty_l2.cu: a row
        stream that writes 98 MB runs ~35 % slower per row from the row at which ~50 MB have passed through the
        H100's L2). ``None``: the uniform ratio."""
        if curve is None:
            self._wb_curve = None
            return
        stored, wb = curve
        self._wb_curve = (float(stored), [float(v) for v in wb], float(scale))
        self._wb_stored = 0.0

    def _write_back_bytes(self, sbytes: float) -> float:
        """HBM write bytes of a store of ``sbytes`` under the write-back curve (:meth:`set_write_back_curve`)."""
        stored, wb, scale = self._wb_curve
        x0 = self._wb_stored
        x1 = self._wb_stored = x0 + sbytes * scale / SECTOR
        return (_curve_at(wb, stored, x1) - _curve_at(wb, stored, x0)) * SECTOR / scale

    def global_access(self, t: int, sm: int, op: str, sectors: int, dram_sectors: int, lines: int,
                      nbytes: int, warps: int = 1) -> int:
        """ld / st / atom / cp_async of one warp: returns when the load data is in registers (or smem for
        cp_async) / the store is acknowledged by L2. ``dram_sectors`` counts read misses; a store's DRAM traffic
        is its sectors times ``write_back_ratio`` (the write-back L2: dirty data reaches DRAM only when evicted)."""
        if sectors <= 0:
            self.last_ack = t + 1
            return t + 1
        self.requests += 1
        warm = (nbytes >> 24) & 0xFFFF   # a2 bits 24-39: lines with a near-partition copy (memops.WARM_SHIFT)
        if lines <= 0:
            lines = (sectors + 3) >> 2
        key = dram_sectors >> 32          # cp.async, ld.global: identity of the requested lines (memops._line_key)
        if key:
            dram_sectors &= 0xFFFFFFFF
            if not self.merge_fills:
                key = 0
        sbytes = sectors * SECTOR
        dbytes = dram_sectors * SECTOR
        # MSHR window (lines in flight per SM). cp.async (LDGSTS, .cg/.ca) lands in shared memory and is not
        # tracked by L1 miss-status registers (PTX ISA cp.async: the L1 is bypassed for .cg); it is bounded by
        # the crossbar response port and the L2 instead, so it neither waits for nor holds L1 MSHRs.
        fl = self.inflight[sm]
        start = t
        n = self.inflight_lines[sm]
        cpa = op == "cp_async"
        while fl and fl[0][0] <= start:
            n -= heappop(fl)[1]
        # a bundle request carries ``warps`` warps' lines: it enters as soon as one warp's share fits (the
        # hardware's warps would enter one after the other), then holds all of its lines
        share = -(-lines // warps) if warps > 1 else lines
        while not cpa and fl and n + share > self.mshrs:
            d, k = heappop(fl)
            n -= k
            if d > start:
                start = d
        # A request that waits for a free miss-status register cannot return before start + its unloaded
        # latency; it still enters the L1/L2/HBM servers at its issue time: they are FIFO free-pointers fed in
        # engine time order, and reserving them at a future start would push every other SM's requests behind
        # it (a positive feedback: later requests wait for MSHRs longer and reserve further ahead). Bandwidth
        # queueing and MSHR waiting overlap: done = max(server path at t, start + unloaded latency).
        wait = start - t
        if wait > 0:
            self.mshr_stall_cycles += wait
        # L1/LSU data port: one cycle per line (tag stage) or bytes / l1 rate
        l1c = sbytes / self.l1_bpc
        if l1c < lines:
            l1c = lines
        s1 = self.l1_free[sm]
        if s1 < t:
            s1 = t
        self.l1_free[sm] = s1 + l1c
        write = op == "st"
        if write:
            # write-back L2: a store's HBM traffic is the launch's measured-model write-back share
            # (workloads/functional/l2model.py: evicted dirty sectors per dirtied sector)
            dbytes = sbytes * self.write_back_ratio if self._wb_curve is None else self._write_back_bytes(sbytes)
            self.l2_write_bytes += sbytes
            self.dram_write_bytes += dbytes
        else:
            self.l2_read_bytes += sbytes
            self.dram_read_bytes += dbytes
            if op == "atom":
                self.l2_write_bytes += sbytes
        self._ack = None
        if self.share_lookups:
            done = self._lookup(s1, sm, key, sbytes, dbytes, lines, write, warm)
        else:
            done = self._fill_merge(s1, sm, key, sbytes, dbytes, lines, write, warm)
        if not write:
            # crossbar response port of the SM
            d0 = done
            done = self._xbar(sm, t, done, sbytes)
            port = done - d0
        ack = self._ack if self._ack is not None and (write or op == "atom") else done
        if wait > 0:
            x = start + self.near_lat + (self.dram_lat if dbytes > 0 and not write else 0)
            if x > done:
                done = x
            if start + self.near_lat > ack:
                ack = start + self.near_lat
        #: the cycle the SM has this request's acknowledgement (what a MEMBAR.GPU / release waits for). A store
        #: (and a red, acknowledged as a store) is acknowledged once its bytes are through its slices' servers
        #: plus ``near_latency_cycles``, whichever partition is the lines' home: H200 fence.acq_rel.gpu after one
        #: st.global 567.9 cycles = fence 271.9 + ~296 (microbench/results/h200_cluster_sync_2026-12-03, own_store,
        #: grid 2), st.global+fence chain 596.2 = 271.5 + ~325 per link (h200_atomics_2026-12-03 LAT st_fence, ~
        #: ld_cg 319.3), and with every SM's own lines (grid 132) the fence stays within 385-612 cycles: no far
        #: mode (a far-homed line would take ~271.5 + 461). ``done`` (MSHR occupancy, drains) keeps the home
        #: partition's latency. Loads: ``last_ack`` = ``done``.
        self.last_ack = la = _ceil(ack)
        di = _ceil(done)
        so = self.sm_outstanding
        if write or op == "atom" or self._ack is None:
            if di > so[sm]:
                so[sm] = di
        else:
            # a load is ordered for a fence once L2 has looked it up and answered, not when DRAM data is back: H200
            # microbench membar_sm (2026-12-05), a fence beside 8 loader warps of its SM takes ~700 cycles whether
            # their loads hit L2 (batch 505) or miss to DRAM (batch 1,313): a miss counts as the hit it would be
            # (its slices' service and L2 latency, and the response port's delay)
            la = self._hit_done + port
            if la > done:
                la = done
            la = _ceil(la)
        if la > so[sm]:
            so[sm] = la
        if not cpa:
            heappush(fl, (di, lines))
            n += lines
        self.inflight_lines[sm] = n
        return di

    def _fill_merge(self, s1: float, sm: int, key: int, sbytes: int, dbytes: int, lines: int, write: bool,
                    warm: int = 0) -> float:
        """Scope ``fill``: a read whose lines another SM is filling from DRAM merges into that fill."""
        fill = self.fills.get(key) if key else None
        if (fill is not None and not dbytes and not write and s1 < fill[0]
                and (not self.lookup_cap or fill[3] < self.lookup_cap)):
            # the lines' DRAM fill (another SM's request) is still outstanding at the slices: the sectors that
            # miss there merge into its miss-status entry (no second slice pass, no lts__t traffic); the rest
            # are L2 hits; merged data returns with the fill
            fill[3] += 1
            mb = fill[2] if fill[2] < sbytes else sbytes
            self.merged_bytes += mb
            self.l2_read_bytes -= mb
            rest = sbytes - mb
            done = self._l2(s1, sm, rest, 0, lines, False, warm=warm) if rest > 0 else s1
            if fill[1] > done:
                done = fill[1]
            return done
        done = self._l2(s1, sm, sbytes, dbytes, lines, write, warm=warm)
        if key and dbytes and not write:
            self.note_fill(key, s1, done, dbytes)
        return done

    def _lookup(self, s1: float, sm: int, key: int, sbytes: int, dbytes: int, lines: int, write: bool,
                warm: int = 0) -> float:
        """Scopes ``gpc`` / ``gpu``: a read shares an outstanding lookup of its lines from its group, or looks up
        (waiting for an outstanding DRAM fill of the lines: hit-on-miss) and opens a lookup the group can share."""
        if not key or write:
            return self._l2(s1, sm, sbytes, dbytes, lines, write, warm=warm)
        ck = (key << 8) | self.gpc_of[sm]
        fills = self.fills
        ent = fills.get(ck)
        if (ent is not None and not dbytes and s1 < ent[0]
                and (not self.lookup_cap or ent[3] < self.lookup_cap)):
            ent[3] += 1
            if self.on_share is not None:   # partitioned timing: other views of the GPC count the share too
                self.on_share(ck, 3, s1)
            self.merged_bytes += sbytes
            self.l2_read_bytes -= sbytes
            return ent[1]
        done = self._l2(s1, sm, sbytes, dbytes, lines, False, warm=warm)
        fk = key << 8 | 255
        if dbytes:
            self.note_fill(fk, s1, done, dbytes, done)
        else:
            f = fills.get(fk)
            if f is not None and f[1] > done:
                done = f[1]
        self.note_fill(ck, s1, done, sbytes, done)
        return done

    def note_fill(self, key: int, t: float, done: float, dram_bytes: int, window_end=None) -> None:
        """An outstanding lookup of the lines ``key`` (scope ``fill``: a DRAM fill; ``gpc`` / ``gpu``: any lookup,
        key = line key * 256 + group, and DRAM fills at group 255): a request reaching the slices before
        ``window_end`` (default: before a fill's data leaves them, ``done`` - the mean L2 round trip) merges into it
        (:meth:`global_access`), at most ``requests_per_lookup_max`` in all. Entry: [window end, done, mergeable
        bytes, requests]."""
        fills = self.fills
        if len(fills) > self._prune_at:   # drop fills long completed (calls arrive in near time order)
            for k in [k for k, f in fills.items() if f[1] < t - 4096]:
                del fills[k]
            self._prune_at = max(8192, 2 * len(fills))   # amortised: never a scan per call
        fills[key] = [done - self.l2_rt if window_end is None else window_end, done, dram_bytes, 1]

    def _fanout(self, lines: float, dram_bytes: float, queue: float, t: float, t_end, sm: int = -1) -> float:
        """Extra cycles until the slowest of a read's DRAM lines is back (microbench ``dram_fanout``, H200
        2026-12-03: L lock-step random lines take min + spread * H_L, spread 157 cycles unloaded, rms 7.9 over
        L = 1..128; up to 3.5 TB/s of background the spread is 0.21-0.27 of the mean latency, so it is scaled
        with the loaded latency). ``n`` = DRAM lines of the whole request (at most one per missing sector; the
        request is done when its slowest line in any partition is); a TMA stream issued over ``[t, t_end]`` hides
        the spread of its earlier lines: only those issued in the last spread count. ``sm`` >= 0
        (``hbm.latency_spread_mode: sampled``): the slowest of the n lines' excesses is drawn, F(x) = (1 - e^(-x /
        theta))^n, less the single-line mean theta (a read of one line keeps the measured mean latency); the
        uniform variate is a hash of (``hbm.latency_spread_seed``, sm, that SM's count of sampled reads):
        deterministic, and the same for any partitioning of the launch (an SM's reads keep their order)."""
        n = dram_bytes / SECTOR
        if lines < n:
            n = lines
        theta = self.hbm_spread * (1.0 + queue / self.dram_rt)
        if t_end is not None and t_end - t > theta:
            n *= theta / (t_end - t)
        if sm >= 0:
            c = self.spread_ctr[sm]
            self.spread_ctr[sm] = c + 1
            h = ((sm * 0x9E3779B1 + c * 0x85EBCA77 + self.spread_seed * 0x27220A95 + 0x165667B1)
                 * 0xC2B2AE3D) & 0xFFFFFFFF
            h ^= h >> 15
            h = (h * 0x27D4EB2F) & 0xFFFFFFFF
            h ^= h >> 13
            u = (h + 0.5) / 4294967296.0
            m = n if n > 1.0 else 1.0
            return -theta * math.log(1.0 - u ** (1.0 / m)) - theta
        if n <= 1.0:
            return 0.0
        # H_n - 1 (harmonic number, asymptotic series; n may be fractional)
        return theta * (math.log(n) + 0.5772156649 + 0.5 / n - 1.0 / (12.0 * n * n) - 1.0)

    def note_hbm_load(self, p: int, t: float, busy: float) -> None:
        """``busy`` cycles of HBM partition ``p``'s server reserved at ``t`` elsewhere (runner/partitioned.py: another
        view's request, replayed late) join the partition's load estimate (the EWMA behind the loaded latency,
        :meth:`_l2`). A reservation older than the estimate's last update joins it decayed by its age (the EWMA
        is linear), so replaying it late neither inflates nor loses it. Nothing without a loaded latency."""
        if not self.hbm_qa:
            return
        tau = self.hbm_tau
        ut = self.hbm_ut[p]
        occ = busy / tau
        if t >= ut:
            self.hbm_u[p] = self._hbm_util(p, t) + occ
            self.hbm_ut[p] = t
        else:
            self.hbm_u[p] += occ * math.exp((t - ut) / tau)

    def bandwidth_servers(self) -> dict[str, list]:
        """The GPU-wide bandwidth servers (:class:`FluidServer`), per partition: ``l2`` (slices), ``fill`` (the L2
        fill / store write path; empty when ``l2.fill_store_gb_per_s`` is not set) and ``hbm``. The lists
        themselves: sampled mode (runner/sampling.py) and partitioned timing (runner/partitioned.py) replace their
        elements in place by wrappers."""
        return {"l2": self.l2_srv, "fill": self.fill_srv, "hbm": self.hbm_srv}

    def _hbm_util(self, p: int, t: float) -> float:
        """Partition ``p``'s recent HBM busy fraction (EWMA over hbm.utilization_window_cycles) decayed to ``t``."""
        dt = t - self.hbm_ut[p]
        return self.hbm_u[p] * math.exp(-dt / self.hbm_tau) if dt > 0 else self.hbm_u[p]

    def _loaded_latency(self, u: float) -> float:
        """DRAM latency added at busy fraction ``u`` (microbench loaded_latency: a * u / (1 - u), u capped)."""
        uc = u if u < self.hbm_umax else self.hbm_umax
        return self.hbm_qa * uc / (1.0 - uc)

    def fill_estimate(self, t: float, nbytes: float, dram_bytes: float, lines: int, t_end=None,
                      lat_all: int | None = None) -> float:
        """When a read of ``nbytes`` (``dram_bytes`` of them missing to DRAM) requested at ``t`` (streamed until
        ``t_end``) would be back, from the current L2 / HBM backlogs, reserving nothing: the fills of requests
        that are accounted for but not simulated (sampled mode's unsampled CTAs, runner/ghost_fills.py)."""
        P = self.parts
        lat = lat_all if lat_all is not None else (self.far_lat if lines >= P > 1 else self.l2_rt)
        if lat_all is not None and dram_bytes and lines >= P > 1:
            lat += self.far_lat - self.near_lat          # as _l2: a DRAM fill of the far share
        done = 0.0
        for p in range(P):
            b = nbytes / P
            srv = self.l2_srv[p]
            e = srv.peek(t, b)
            if t_end is not None:
                tail = t_end + srv.inv * (SECTOR if b >= SECTOR else b)
                if tail > e:
                    e = tail
            if dram_bytes:
                db = dram_bytes / P
                e2 = self.hbm_srv[p].peek(e - b * srv.inv, db) + self.dram_lat
                if self.fill_srv:
                    ef = self.fill_srv[p].peek(e - b * srv.inv, db) + self.dram_lat
                    if ef > e2:
                        e2 = ef
                ql = self._loaded_latency(self._hbm_util(p, t)) if self.hbm_qa else 0.0
                e2 += ql
                if self.hbm_spread:
                    e2 += self._fanout(lines, dram_bytes, ql, t, t_end)
                if e2 > e:
                    e = e2
            if e + lat > done:
                done = e + lat
        return done

    def bulk(self, t: int, sm: int, l2_bytes: int, dram_bytes: int, write: bool, t_end=None) -> int:
        """A TMA request stream: ``l2_bytes`` of 32-B requests injected uniformly over ``[t, t_end]`` (``t_end``
        defaults to ``t``), ``dram_bytes`` of them missing to DRAM (reads; writes use ``write_back_ratio`` of
        ``l2_bytes`` instead, like :meth:`global_access`). Returns
        the cycle the last response (read data / write ack) is back at the SM."""
        if l2_bytes <= 0:
            return t if t_end is None else _ceil(t_end)
        if write:
            dram_bytes = (l2_bytes * self.write_back_ratio if self._wb_curve is None
                          else self._write_back_bytes(l2_bytes))
            self.l2_write_bytes += l2_bytes
            self.dram_write_bytes += dram_bytes
        else:
            self.l2_read_bytes += l2_bytes
            self.dram_read_bytes += dram_bytes
        lines = (l2_bytes + self.line - 1) // self.line
        return _ceil(self._l2(t, sm, l2_bytes, dram_bytes, lines, write, t_end, self.tma_l2_lat))

    # ------------------------------------------------------------------------------------------------
    def atomic_perform(self, t: float, key: int, word: int, ops: int, same: int, is_float: bool,
                       ordered: bool = False, lines: int = 1, elems: int = 0, returns: bool = False) -> float:
        """When the L2 takes an atomic request that left its SM at ``t``: the unit of its lowest 128-B line (``key``:
        memops._atom_line_index; lines grouped by ``l2.atomic_unit_bytes``, :meth:`atomic_unit_keys`) serves one request at a time for ``ops * l2.atomic_line_lane_cycles`` (the lane-operations
        on its busiest line, ~0.15 cycles each, and at least ``l2.atomic_line_request_cycles``: microbench
        lock_lines CLN, one-lane requests on one line ~1.4 cycles each), and the read-modify-write of its busiest word (4-B index ``word``
        in that line) one lane-operation at a time, ``same * l2.atomic_word_cycles`` (``atomic_word_float_cycles``
        for float ops). H200 atomics.cu TPUT, 132 SMs: every lane on one word 0.69 integer / 0.29 float lane-ops per
        cycle, every warp on one line (lane i word i) 6.7 lane-ops per cycle; one-lane requests to different words
        of a line (lock words, per-CTA counters) queue only for the line's share. The units keep busy calendars in
        departure time (components/atomics.py ``AtomicUnits``: departures reach them out of order, after each
        atomic's fence); the caller adds the way to the slice; a request's other lines are served by their own
        units alongside. Units that are 0 in the spec: ``t``. An ``ordered`` (.release / .acquire / .acq_rel) request
        holds its line at least ``l2.atomic_line_request_ordered_cycles`` (lock_lines CLN acq_rel: ~1.6 cycles)."""
        ol, ow = self.atomic_occupancy(ops, same, is_float, ordered)
        if (ol <= 0 and ow <= 0) or not key:
            return t
        unit, wkey = self.atomic_unit_keys(key, word)
        if self.atom_alus:
            return self.atom_units.perform(t, unit, wkey, ol, ow, None,
                                           self._alu_work(key, lines, elems or ops, same, returns))
        return self.atom_units.perform(t, unit, wkey, ol, ow)

    def _alu_work(self, key: int, lines: int, elems: int, same: int, returns: bool) -> list:
        """[(ALU, cycles)] an atomic request's element operations give the atomic ALUs of the spans its ``lines``
        cover (taken as contiguous from its lowest line ``key``), shared evenly, ``l2.atomic_alu_lane_cycles`` each
        (``atomic_alu_return_lane_cycles`` when old values go back); its busiest word's lanes, one at a time
        (``atomic_word_cycles`` each, the difference for a return added), go to the first ALU."""
        lane = self.atom_alu_ret if returns else self.atom_alu_lane
        line0 = key >> 1
        sh = self.atom_alu_shift
        c0 = line0 >> sh
        n = ((line0 + max(1, lines) - 1) >> sh) - c0 + 1
        if n > self.atom_alus:
            n = self.atom_alus
        each = elems * lane / n
        first = same * (self.atom_word_int + lane - self.atom_alu_lane)
        out = [(self._span_alu(c0), first if first > each else each)]
        for j in range(1, n):
            out.append((self._span_alu(c0 + j), each))
        return out

    def atomic_alu(self, key: int) -> int:
        """The atomic ALU (1 .. ``l2.atomic_lane_units``) of the span holding line ``key`` (memops._atom_line_index)."""
        return self._span_alu((key >> 1) >> self.atom_alu_shift)

    def _span_alu(self, c: int) -> int:
        """The ALU of span ``c`` (spans of ``l2.atomic_lane_unit_bytes``): its index XOR-folded so that any run of
        ``atomic_lane_units`` (a power of two) aligned consecutive spans takes every ALU once (TPUT: 132 adjacent lines
        never put two spans on one ALU); the L2's own hash is not public."""
        b = self.atom_alu_bits
        return (c ^ (c >> b) ^ (c >> 2 * b) ^ (c >> 3 * b)) % self.atom_alus + 1

    def atomic_unit_keys(self, key: int, word: int) -> tuple[int, int]:
        """The line unit (lines grouped by ``l2.atomic_unit_bytes``) and the word unit of an atomic whose lowest line
        is ``key`` (memops._atom_line_index) and busiest word ``word`` (4-B index in that line)."""
        return (((key >> 1) >> self.atom_unit_shift) << 1) | 1, (key << 5) | word

    def atomic_occupancy(self, ops: int, same: int, is_float: bool, ordered: bool = False) -> tuple[float, float]:
        """Cycles an atomic request holds its line's unit and its busiest word's unit (:meth:`atomic_perform`)."""
        ol = ops * self.atom_line_lane
        least = self.atom_line_req_ordered if ordered else self.atom_line_req
        if ops and ol < least:
            ol = least
        return ol, same * (self.atom_word_float if is_float else self.atom_word_int)

    def stats(self) -> dict:
        S = self.slices_per_part
        C = self.channels // self.parts if self.channels >= self.parts else 1
        d = {
            "l2_bytes": self.l2_read_bytes + self.l2_write_bytes,
            "l2_read_bytes": self.l2_read_bytes,
            "l2_write_bytes": self.l2_write_bytes,
            "dram_read_bytes": self.dram_read_bytes,
            "dram_write_bytes": self.dram_write_bytes,
            "requests": self.requests,
            "l2_merged_bytes": self.merged_bytes,
            "mshr_stall_cycles": self.mshr_stall_cycles,
            "atomic_line_queue_cycles": round(self.atom_units.queue_cycles, 3),
            "near_lines": self.near_lines,
            "far_lines": self.far_lines,
        }
        for p in range(self.parts):
            d[f"l2.p{p}.busy_cycles"] = self.l2_srv[p].busy
            d[f"hbm.p{p}.busy_cycles"] = self.hbm_srv[p].busy
        d["l2.slices_per_partition"] = S
        d["hbm.channels_per_partition"] = C
        return d

    def utilisation(self) -> dict[str, list[float]]:
        """Busy fraction per 1k-cycle bucket of each partition's L2 and HBM server (for plots)."""
        out = {}
        for p in range(self.parts):
            out[f"l2.p{p}"] = [b / BUCKET for b in self.l2_srv[p].hist]
            out[f"hbm.p{p}"] = [b / BUCKET for b in self.hbm_srv[p].hist]
        return out

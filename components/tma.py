"""TMA unit (paper III-A, Fig. 4): one object for all SMs, per-SM state in lists (Contract 6).

Per SM:

* **Front end / transaction queue**: a ``cp.async.bulk`` issued by a warp at ``t`` is accepted by the SM's TMA
  front end no earlier than ``frontend_accept_cycles`` after the previous acceptance (4 sub-partitions issuing
  together: span = 1 + 44 + 3·4 = 57 ≈ the paper's 58 cycles), and only when fewer than ``admission_depth``
  (16) transactions are active; otherwise it waits for the earliest active transaction to complete (the 17th
  back-pressures). The issuing warp is released ``issue_gap_cycles`` (44) after acceptance, so N same-warp
  issues between two clock reads take T(N) = 1 + 44·N (the 1 is the issue slot of the first instruction).
* **Request generator**: FIFO over accepted transactions, streaming each as ``request_granularity_bytes``
  requests at ``request_bytes_per_cycle`` (32 B/cycle Hopper/RTX 5090, 128 B200), starting
  ``issue_latency_cycles`` after acceptance. The in-flight tracker (``inflight_requests``) caps the stream by
  Little's law: rate <= inflight × granularity / round-trip (unloaded L2 or DRAM round trip of the memory
  system) — e.g. 814 requests over 845.7 cycles = 0.963 requests/cycle (paper III-A).
* **Memory**: the stream is one ``mem.bulk`` reservation (L2 partitions, HBM for the DRAM first-touch bytes).
  Reads: all box bytes are requested from L2 when ``oob_reads_reach_l2`` (paper: OOB reads reach L2), only
  in-bounds bytes otherwise; OOB bytes never reach DRAM (the trace's DRAM bytes are in-bounds only). Writes:
  only in-bounds bytes make traffic; they are read from smem at ``store_source_bytes_per_cycle`` and counted as
  written back to DRAM once.
* **Lookup coalescing** (``l2.coalesce_scope``, components/memory.py): ``gpc`` (default): a load of a box (payload
  a3 bits 32+, ``tma_ops.box_key``) that SMs of its GPC have an outstanding lookup of (from that load's start until
  its data is back, less its stream length) shares it, at most ``l2.requests_per_lookup_max`` loads per lookup: no
  slice bandwidth, no L2 traffic, data with the first; otherwise it looks up (without the cp.async path's
  hit-on-miss wait: ``_lookup``). ``fill``: a load whose stream reaches the slices while another SM's DRAM fill of
  the box is outstanding (start < fill done - L2 round trip - stream length) merges into it (Nsight
  ``lts__t_bytes`` of the TMA GEMMs is 65-82 % of the bytes the tiles request). FlashGPU-sim:
  ``-gpgpu_l2_tma_request_coalescing``.
* **Completion**: last response + ``completion_latency_cycles``; loads schedule an engine event that calls
  ``mbar.complete_tx(key, nbytes, t_done)``; stores retire their bulk group (``bulk_commit`` /
  ``bulk_group_done`` for ``cp.async.bulk.commit_group`` / ``wait_group``).
"""
from __future__ import annotations

from heapq import heappop, heappush

from warpgraph.components.memory import _ceil
from warpgraph.core.registry import register_component
from warpgraph.core.tracing import NULL_RECORDER

BOX_KEY_SHIFT = 32  # TMA_LOAD payload a3 = in-bounds bytes | box key << 32 (workloads/functional/tma_ops.box_key)

__all__ = ["TmaUnit"]


@register_component(role="tma", kind="default")
class TmaUnit:
    role = "tma"
    kind = "default"

    def __init__(self, spec, engine, mem, mbar):
        self.engine, self.mem, self.mbar = engine, mem, mbar
        p = self.params = spec.tma      # the validated tma section (topologies/schema.py DefaultTma or a variant)
        self.depth = int(p.admission_depth)
        self.gap = int(p.issue_gap_cycles)
        self.lat = int(p.issue_latency_cycles)
        self.bpc = float(p.request_bytes_per_cycle)
        self.gran = int(p.request_granularity_bytes)
        self.inflight = int(p.inflight_requests)
        self.done_lat = int(p.completion_latency_cycles)
        self.oob_l2 = bool(p.oob_reads_reach_l2)
        self.store_bpc = float(p.store_source_bytes_per_cycle)
        self.accept = int(p.frontend_accept_cycles)
        n = int(spec.sm.count)
        self.fe_free = [0] * n
        self.gen_free = [0.0] * n
        self.active = [[] for _ in range(n)]  # heap of completion cycles of admitted transactions
        # Little's-law caps on the generator rate (bytes/cycle) for L2-hit and DRAM streams
        rt_l2 = float(mem.l2_rt)
        rt_dram = float(mem.dram_rt)
        tl = mem.tma_l2_lat   # the TMA engine's own L2 round trip (measured on H200), or None
        if tl is not None:
            rt_dram = rt_dram - rt_l2 + tl
            rt_l2 = float(tl)
        cap = self.inflight * self.gran
        self.rate_l2 = min(self.bpc, cap / rt_l2) if rt_l2 > 0 else self.bpc
        self.rate_dram = min(self.bpc, cap / rt_dram) if rt_dram > 0 else self.bpc
        # L2 in-flight fills (miss-status entries of the L2 slices): box key -> (window end, completion, DRAM
        # bytes of the fill). A load of the same box that reaches the slices while the fill is outstanding merges
        # into it: no second tag/data pass, no slice bandwidth; its data returns with the fill.
        self.fills: dict[int, tuple] = {}
        self._prune_at = 4096
        self.merge = True          # tests switch it off to compare
        self.on_share = None       # runner/partitioned.py: called (key, count index, t) when a load shares a lookup
        self.merged_bytes = 0
        self.last_done = 0         # completion cycle of the last transaction issued (the SM core's multicast)
        self.groups: dict[tuple[int, int], list] = {}  # (sm, warp) -> [committed group done..., open group done]
        self.rec = NULL_RECORDER  # event recorder (core/tracing.py); the runner swaps in a real one
        # stats
        self.n_loads = 0
        self.n_stores = 0
        self.bytes_loaded = 0
        self.bytes_stored = 0
        self.admission_stall_cycles = 0
        self.gen_busy = 0.0

    # ------------------------------------------------------------------------------------------------
    def issue(self, t: int, sm: int, warp: int, nbytes: int, inb_bytes: int, dram_bytes: int, mbar_key: int,
              store: bool) -> int:
        """A cp.async.bulk(.tensor) issued by ``warp`` of ``sm`` at ``t``; returns the cycle the warp may issue
        its next instruction."""
        ta = self.fe_free[sm]
        if ta < t:
            ta = t
        ta = self.admit(sm, warp, ta, nbytes)
        self.fe_free[sm] = ta + self.accept
        release = ta + self.gap
        # request generator (FIFO over admitted transactions)
        g0 = self.gen_free[sm]
        ts = ta + self.lat
        if g0 < ts:
            g0 = ts
        mem = self.mem
        if store:
            self.n_stores += 1
            self.bytes_stored += nbytes
            traffic = inb_bytes
            rate = self.store_bpc if self.store_bpc < self.bpc else self.bpc
            g1 = g0 + traffic / rate
            done = mem.bulk(g0, sm, traffic, traffic, True, g1) if traffic > 0 else int(g1) + 1
        else:
            self.n_loads += 1
            self.bytes_loaded += nbytes
            key = inb_bytes >> BOX_KEY_SHIFT
            inb_bytes &= (1 << BOX_KEY_SHIFT) - 1
            traffic = nbytes if self.oob_l2 else inb_bytes
            if key and self.merge and mem.share_lookups:
                g1, done = self._lookup(sm, key, g0, traffic, dram_bytes)
            else:
                g1, done = self._fill_merge(sm, key, g0, traffic, dram_bytes)
        self.gen_free[sm] = g1
        self.gen_busy += g1 - g0
        t_done = done + self.done_lat
        self.admitted(sm, warp, t_done, nbytes)
        if self.rec.enabled:  # one transaction: issued at t, admitted at ta, complete at t_done
            self.rec.tma_transaction(sm, None, t, ta, t_done, nbytes, store, warp)
        if store:
            g = self.groups.get((sm, warp))
            if g is None:
                g = self.groups[(sm, warp)] = [0]
            if t_done > g[-1]:
                g[-1] = t_done
        elif mbar_key is not None and mbar_key >= 0 and self.mbar is not None:
            self.engine.schedule(t_done, self.mbar.complete_tx, mbar_key, nbytes, t_done)
        self.last_done = t_done
        return release

    # -- admission policy (a variant overrides these two; examples/plugin_tma_policy) ---------------------------
    def admit(self, sm: int, warp: int, t: int, nbytes: int) -> int:
        """The cycle a transaction reaching the front end at ``t`` is admitted: at most ``admission_depth``
        transactions active per SM (paper III-A: the 17th back-pressures until the oldest completes)."""
        act = self.active[sm]
        while act and act[0] <= t:
            heappop(act)
        if len(act) >= self.depth:
            c = heappop(act)
            if c > t:
                self.admission_stall_cycles += c - t
                t = c
        return t

    def admitted(self, sm: int, warp: int, t_done: int, nbytes: int) -> None:
        """Book the admitted transaction completing at ``t_done``."""
        heappush(self.active[sm], t_done)

    def stream_end(self, g0: float, traffic: int, dram_bytes: int) -> float:
        """End of a box load's request stream started at ``g0``: Little's law per request kind, the DRAM-missing
        share of the box streams at the DRAM-latency rate, the rest at the L2-hit rate."""
        fd = min(1.0, dram_bytes / traffic) if traffic > 0 else 0.0
        return g0 + traffic * ((1.0 - fd) / self.rate_l2 + fd / self.rate_dram)

    def _fill_merge(self, sm: int, key: int, g0: float, traffic: int, dram_bytes: int):
        """Scope ``fill`` (components/memory.py): a box load meeting another SM's outstanding DRAM fill of the box
        merges into it. Returns (request stream end, completion)."""
        mem = self.mem
        merge = self.merge and mem.merge_fills   # False for l2.coalesce_scope none
        fill = self.fills.get(key) if (key and merge) else None
        cap = mem.lookup_cap
        if fill is not None and g0 < fill[0] and not dram_bytes and (not cap or fill[4] < cap):
            fill[4] += 1
            # the box's DRAM fill (another SM's load) is still outstanding at the slices: the sectors that
            # miss there merge into it (no slice bandwidth, no lts__t traffic); the rest are L2 hits
            mb = min(traffic, fill[2])
            self.merged_bytes += mb
            mem.merged_bytes += mb
            rest = traffic - mb
            # the request stream runs at the L2-hit rate (a hit-on-miss holds its slot only until the fill,
            # already under way, returns); merged sectors arrive no earlier than the fill completes
            g1 = g0 + traffic / self.rate_l2
            done = mem.bulk(g0, sm, rest, 0, False, g1) if rest > 0 else _ceil(g1)
            if fill[1] > done:
                done = _ceil(fill[1])
            return g1, done
        g1 = self.stream_end(g0, traffic, dram_bytes)
        done = mem.bulk(g0, sm, traffic, dram_bytes, False, g1) if traffic > 0 else int(g1) + 1
        if key and dram_bytes and merge:
            # the fill is outstanding at the slices until its last sector's data leaves for the SM: a request
            # stream that starts before (done - L2 round trip - stream length) meets it there
            self.note_fill(key, g0, g1, done, dram_bytes)
        return g1, done

    def _lookup(self, sm: int, key: int, g0: float, traffic: int, dram_bytes: int):
        """Scopes ``gpc`` / ``gpu`` (components/memory.py): a box load shares the outstanding lookups of the same
        box from its group (their requests are in flight from the leader's start until its data is back, less
        the stream length), at most ``l2.requests_per_lookup_max``; else it looks up (no hit-on-miss wait: see
        below). Returns (request stream end, completion)."""
        mem = self.mem
        fills = self.fills
        ck = (key << 8) | mem.gpc_of[sm]
        ent = fills.get(ck)
        cap = mem.lookup_cap
        if ent is not None and not dram_bytes and g0 < ent[0] and (not cap or ent[4] < cap):
            ent[4] += 1
            if self.on_share is not None:   # partitioned timing: other views of the GPC count the share too
                self.on_share(ck, 4, g0)
            self.merged_bytes += traffic
            mem.merged_bytes += traffic
            g1 = g0 + traffic / self.rate_l2
            done = _ceil(g1)
            return g1, (done if done > ent[1] else ent[1])
        g1 = self.stream_end(g0, traffic, dram_bytes)
        done = mem.bulk(g0, sm, traffic, dram_bytes, False, g1) if traffic > 0 else int(g1) + 1
        if dram_bytes:
            self.note_fill((key << 8) | 255, g0, g1, done, dram_bytes, done)
        # No hit-on-miss wait for boxes (unlike cp.async, components/memory.py): the DRAM first touch is fixed by
        # the functional pass (lowest CTA), so only readers later than that CTA would wait and earlier ones would
        # hit; with admission_depth 2 that made gemm_tma_M2048 9 % slower at 96 than at 32 request bytes/cycle
        # (studies/tma_sweep.ipynb). Without the wait: monotonic, calibration / held-out TMA GEMMs +8.5 / -1.8 /
        # -16.3 / -16.9 % vs +7.9 / -4.2 / -16.2 / -16.3 % with it (2026-12-03).
        self.note_fill(ck, g0, g1, done, traffic, done - (g1 - g0))
        return g1, done

    def _rt(self) -> float:
        tl = self.mem.tma_l2_lat
        return tl if tl is not None else self.mem.l2_rt

    def note_fill(self, key: int, g0: float, g1: float, done: int, dram_bytes: int, window_end=None) -> None:
        """Register an outstanding lookup / fill of ``key``. Entry: [window end, done, mergeable bytes, stream end,
        requests] (components/memory.py); runner/ghost_fills.py registers ghost loads with it, runner/partitioned.py
        wraps it."""
        fills = self.fills
        if len(fills) > self._prune_at:   # drop fills long completed (calls arrive in near time order)
            for k in [k for k, f in fills.items() if f[1] < g0 - 4096]:
                del fills[k]
            self._prune_at = max(4096, 2 * len(fills))   # amortised: never a scan per call
        we = done - self._rt() - (g1 - g0) if window_end is None else window_end
        fills[key] = [we, done, dram_bytes, g1, 1]

    def bulk_commit(self, sm: int, warp: int) -> None:
        """cp.async.bulk.commit_group: close the warp's open bulk-store group."""
        g = self.groups.get((sm, warp))
        if g is None:
            self.groups[(sm, warp)] = [0, 0]
        else:
            g.append(0)

    def bulk_group_done(self, sm: int, warp: int, n_pending_allowed: int) -> int | None:
        """cp.async.bulk.wait_group N: the cycle at which at most N committed groups are still pending
        (max over the older groups' completions); None when nothing needs waiting for."""
        g = self.groups.get((sm, warp))
        if g is None or len(g) < 2:
            return None
        committed = g[:-1]
        k = len(committed) - int(n_pending_allowed)
        if k <= 0:
            return None
        done = max(committed[:k])
        # groups fully waited for are dropped (keep the allowed ones and the open group)
        del g[:k]
        return done

    def stats(self) -> dict:
        return {"loads": self.n_loads, "stores": self.n_stores, "bytes_loaded": self.bytes_loaded,
                "bytes_stored": self.bytes_stored, "admission_stall_cycles": self.admission_stall_cycles,
                "generator_busy_cycles": self.gen_busy, "merged_bytes": self.merged_bytes}

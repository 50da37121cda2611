"""Ghost fills of sampled mode: the DRAM fills of the CTAs a sampled CTA stands for.

They read the ghosts' own functional traces, so they run only with ``sample={"functional": "all"}`` (every CTA
executed, as before issue 18); the default sampled mode executes only the sampled CTAs (runner/sampling.py) and
represents the unsampled CTAs' DRAM traffic statistically instead (``Sample.calibrate_first_touches``).

On the full GPU the CTAs of one stratum of the launch order (runner/sampling.py: a sampled CTA and the
``n_ctas / n_sub - 1`` unsampled CTAs next to it) run at the same time on neighbouring SMs and execute the same
code. When they read lines that other CTAs read too (GEMM operand tiles), one request fetches the line from DRAM
and the others merge into that in-flight fill (components/memory.py and components/tma.py ``fills``); in
detailed mode that merging removes 19 % of gemm_ptr_M4096's L2 slice traffic. A mini-GPU of sampled CTAs only
merges into its own fills, so it sees more slice traffic, which the scaled L2 servers multiply by
``n_sms / k`` (+12.9 % cycles on gemm_ptr_M4096 before this module).

Here every cp.async / TMA load a sampled CTA issues also registers the fills of its ghosts' *same* dynamic
instruction (same bundle, same stream position, same pc; payloads from the functional trace, aggregated like the
bundle's), shifted by the ghost's launch skew: a ghost load that the functional L2 model marks as a DRAM first
touch becomes an outstanding fill, with its completion estimated from the current L2 / HBM backlogs
(``MemorySystem.fill_estimate``) and nothing reserved (the scaled servers already carry the unsampled SMs'
bandwidth). Later loads of the same lines by sampled CTAs merge into it as they would on the full GPU.

**Lookup coalescing** (``l2.coalesce_scope: gpc``, the default since 2026-12-03): a ghost cp.async that ran in
its twin's GPC on the full GPU (first wave: CTA i on SM i) also takes part in the GPC's lookup sharing: it shares
an open lookup of the same lines in the twin's GPC (taking one of the ``requests_per_lookup_max`` places), or
opens one (completion from ``fill_estimate``) that later reads of sampled SMs of that GPC share. Every ghost DRAM
first touch is an outstanding fill for hit-on-miss. gemm_ptr_M2048 at 1601 / 1775 MHz: -3.1 / -2.2 % vs detailed
with ghost lookups, +4.1 / +3.7 % without.

**Launch skew.** The ghost's request is its twin's, moved by the difference of their launch times on the full
GPU. Those are read off the mini-GPU's own schedule, which keeps the full GPU's wave structure: the launch time
of CTA ``g`` is interpolated between the launches of the sampled CTAs around it in launch order (all equal in the
first wave; in later waves consecutive CTAs launch ``CTA duration / (n_sms · ctas per SM)`` apart). Without the
skew the stratum's CTAs fetch their shared tiles in lock step (gemm_ptr_M4096 at its measured clock: +1.7 % vs
detailed without, -0.2 % with).
``sample={"ghost_fills": False}`` turns it off.

By default only cp.async fills are replayed. ``sample={"ghost_fills": "all"}`` adds TMA box fills, which
over-correct: gemm_tma_M2048 (one wave, all 256 CTAs resident, lock step) runs 14 % faster than detailed mode with
them (-1.7 % without), although its sampled SMs then merge fewer of their loads than detailed mode's SMs (37 %
vs 44 %). The latency of every TMA load falls (L2 hits 1,308 vs 1,875 cycles), a queueing effect of the scaled
L2 servers that is not understood yet (session 3 notes on issue #6).

Known limit: the detailed model's fill merging is bistable on lock-step pointer GEMMs (docs/accuracy.md, "Sampled
mode"); at the YAML clock gemm_ptr_M2048 / M4096 sampled differ from detailed by +19 % / -13 %.
"""
from __future__ import annotations

import numpy as np

from warpgraph.components import sm_core as C

__all__ = ["GhostFills"]

_MASK32 = 0xFFFFFFFF
_BOX_SHIFT = 32


class GhostFills:
    """``ghost(W, k, t, late)``: called by the SM core just before (``late=False``) and just after (``late=True``)
    bundle ``W`` issues the cp.async / TMA load at stream position ``k`` at cycle ``t``; registers (or schedules)
    the matching fills of ``W``'s ghost CTAs: those launched earlier than ``W``'s CTA before its request (equal
    launch times: lower CTA index first, the engine's tie order), the later ones after it."""

    def __init__(self, trace, tables, builder, ghosts: dict, sampled, mem, tma, engine, tma_loads: bool = False):
        self.trace, self.builder, self.ghosts = trace, builder, ghosts
        self.mem, self.tma, self.eng = mem, tma, engine
        self.wpc = trace.warps_per_cta
        ops = (C.OP_CP_ASYNC, C.OP_TMA_LD) if tma_loads else (C.OP_CP_ASYNC,)
        self.is_op = np.array([o in ops for o in tables.op] or [False])
        self.op = list(tables.op)
        self.order = sorted(sampled)                     # the sampled CTAs in launch order
        self.pos = {c: i for i, c in enumerate(self.order)}
        self.launch: dict[int, int] = {}                 # sampled CTA -> its launch cycle on the mini-GPU
        self.cache: dict = {}     # (twin cta, warp tuple) -> [(ghost cta, {k: payload})]
        self.registered = 0       # fills registered

    def _entries(self, W) -> list:
        key = (W.cta, tuple(W.ws))
        ent = self.cache.get(key)
        if ent is not None:
            return ent
        pcs = np.asarray(W.pcs, dtype=np.int64)
        cols = np.flatnonzero(self.is_op[pcs]) if len(pcs) else np.zeros(0, np.int64)
        ent = []
        for gc in self.ghosts.get(W.cta, ()):
            ss = [self.builder.warp_stream(gc * self.wpc + w) for w in W.ws]   # in issue order, as W's
            n = min(len(s.pc) for s in ss)
            c = cols[cols < n]
            d = {}
            if len(c):
                gpc = np.asarray(ss[0].pc)
                same = (gpc[c] == pcs[c])
                for s in ss[1:]:
                    same &= np.asarray(s.pc)[c] == gpc[c]
                c = c[same]
                agg = self.builder.aggregate(ss, gpc, c) if len(c) else None
                if agg is not None:
                    R, nact = agg
                    for j in np.flatnonzero(nact > 0):
                        d[int(c[j])] = (int(R[0, j]), int(R[1, j]), int(R[2, j]), int(R[3, j]))
            ent.append((gc, d))
        self.cache[key] = ent
        return ent

    def _slope(self, cta: int, t_launch: int, later: bool) -> float:
        """Launch cycles per launch position around ``cta``: from its sampled neighbour on the ghost's side when
        that one has launched, else from the other one; 0 when neither is known."""
        i = self.pos.get(cta)
        if i is None:
            return 0.0
        nbs = (i + 1, i - 1) if later else (i - 1, i + 1)
        for j in nbs:
            if 0 <= j < len(self.order):
                nb = self.order[j]
                tl = self.launch.get(nb)
                if tl is not None:
                    return (tl - t_launch) / (nb - cta)
        return 0.0

    def __call__(self, W, k: int, t: int, late: bool) -> None:
        cta = W.cta
        self.launch[cta] = W.launch
        ent = self._entries(W)
        op = self.op[W.pcs[k]]
        backlog = 0.0
        if op != C.OP_CP_ASYNC and self.tma is not None and not late:
            backlog = max(0.0, self.tma.gen_free[W.sm] - t - self.tma.lat)
        lookups = self.mem.share_lookups
        n = self.mem.n_sm
        gpc_of = self.mem.gpc_of
        for gc, d in ent:
            p = d.get(k)
            if p is None:
                continue
            dt = int(round((gc - cta) * self._slope(cta, W.launch, gc > cta)))
            after = dt > 0 or (dt == 0 and gc > cta)
            if after != late:
                continue
            # l2.coalesce_scope gpc / gpu: the ghost shares (or opens) lookups with its twin's group when it ran in
            # the twin's GPC on the full GPU (first-wave placement: CTA i on SM i mod n_sms)
            grp = gpc_of[W.sm] if lookups and gpc_of[gc % n] == gpc_of[cta % n] else None
            if dt > 0:
                now = self.eng.now
                self.eng.schedule(t + dt if t + dt > now else now, self._register, op, p, t + dt, backlog, grp)
            else:
                self._register(op, p, t + dt, backlog, grp)

    def _register(self, op: int, p: tuple, t: int, backlog: float, grp=None) -> None:
        """The ghost request ``p`` (bundle payloads) at cycle ``t``: an outstanding DRAM fill unless the lines are
        being filled already; with lookup coalescing (``l2.coalesce_scope`` gpc / gpu) also a lookup of group
        ``grp`` that later reads of the group share, or a share of that group's open lookup."""
        mem, tma = self.mem, self.tma
        a0, a1, a2, a3 = p
        if op == C.OP_CP_ASYNC:
            key, dsec = a1 >> 32, a1 & _MASK32
            if not key or not mem.merge_fills:
                return
            if mem.share_lookups:
                self._lookup(key, dsec, a0, a3 & _MASK32, t, grp)
                return
            if not dsec:
                return
            f = mem.fills.get(key)
            if f is not None and f[1] > t:
                return
            done = mem.fill_estimate(t, a0 * 32, dsec * 32, a3 & _MASK32)
            mem.note_fill(key, t, done, dsec * 32)
        else:
            if tma is None or not tma.merge:
                return
            key, inb, dram = a3 >> _BOX_SHIFT, a3 & ((1 << _BOX_SHIFT) - 1), a2
            traffic = a0 if tma.oob_l2 else inb
            if not key or traffic <= 0:
                return
            lookups = mem.share_lookups
            if not dram and not lookups:
                return
            g0 = t + tma.lat + backlog    # the twin's request generator backlog stands for the ghost's
            ck = (key << 8) | grp if (lookups and grp is not None) else None
            if ck is not None:
                ent = tma.fills.get(ck)
                cap = mem.lookup_cap
                if ent is not None and not dram and g0 < ent[0] and (not cap or ent[4] < cap):
                    ent[4] += 1       # shares its group's open lookup of the box
                    return
            fk = (key << 8) | 255 if lookups else key
            f = tma.fills.get(fk)
            if dram and f is not None and f[1] > t and ck is None:
                return
            g1 = tma.stream_end(g0, traffic, dram)
            done = int(mem.fill_estimate(g0, traffic, dram, (traffic + 127) // 128, g1, mem.tma_l2_lat)) + 1
            if dram:
                if f is None or f[1] <= t:
                    tma.note_fill(fk, g0, g1, done, dram, done - (g1 - g0) if lookups else None)
            elif f is not None and f[1] > done:
                done = int(f[1])
            if ck is not None:
                tma.note_fill(ck, g0, g1, done, traffic, done - (g1 - g0))
        self.registered += 1

    def _lookup(self, key: int, dsec: int, sectors: int, lines: int, t: int, grp) -> None:
        """A ghost cp.async under lookup coalescing (components/memory.py ``_lookup``), reserving nothing."""
        mem = self.mem
        fills = mem.fills
        cap = mem.lookup_cap
        ck = (key << 8) | grp if grp is not None else None
        ent = fills.get(ck) if ck is not None else None
        if ent is not None and not dsec and t < ent[0] and (not cap or ent[3] < cap):
            ent[3] += 1           # the ghost's read shares its group's open lookup
            return
        fk = (key << 8) | 255
        f = fills.get(fk)
        done = mem.fill_estimate(t, sectors * 32, dsec * 32, lines)
        if dsec:
            if f is None or f[1] <= t:
                mem.note_fill(fk, t, done, dsec * 32, done)
        elif f is not None and f[1] > done:
            done = f[1]
        if ck is not None:
            mem.note_fill(ck, t, done, sectors * 32, done)
        self.registered += 1

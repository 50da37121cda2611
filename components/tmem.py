"""Tensor memory (TMEM) of a Blackwell SM (sm_100a): capacity in columns, allocation, ld/st bandwidth.

TMEM is 128 lanes x 512 columns x 32 bit per SM (jarmusch25; PTX ISA 8.7 §9.7.16.2). Warp w of a CTA reaches
the 32 lanes of its sub-partition (w % 4), so every sub-partition has its own lane quadrant: ``tcgen05.ld`` /
``tcgen05.st`` of a warp are served by that quadrant's port, a FIFO bandwidth server of
``ld_bytes_per_cycle / 4`` (``st_bytes_per_cycle / 4``) bytes per cycle, after ``ld_latency_cycles``
(``st_latency_cycles``). ``tcgen05.alloc`` takes columns of the SM's 512 shared by its resident CTAs; when they
do not fit, the allocating warp waits (``alloc`` returns None and calls ``wake(cycle)`` once a ``dealloc``
frees enough columns, oldest request first), as the hardware's blocking allocation does. ``tcgen05.cp`` /
``tcgen05.shift`` (shared memory -> TMEM, TMEM -> TMEM) are charged to the store ports of all four quadrants.

Unverified: the paper leaves TMEM timing out and no Blackwell GPU was measured here; the read bandwidth is
jarmusch25's 16 TB/s per SM, write bandwidth, latencies and the allocation cost are estimates
(topologies/b200.yaml names each source).
"""
from __future__ import annotations

from collections import deque

from warpgraph.core.errors import SimulationError, SpecError
from warpgraph.core.registry import register_component
from warpgraph.topologies.schema import Tcgen05TensorCore

__all__ = ["TmemModel"]


@register_component(role="tmem", kind="default")
class TmemModel:
    """Per-SM TMEM: column allocation and four lane-quadrant ports (see module docstring)."""

    role = "tmem"
    kind = "default"

    def __init__(self, spec, engine=None):
        """``spec``: the ArchSpec (its ``tensor_core.tmem`` section and ``sm.count``)."""
        self.engine = engine
        tc = spec.tensor_core
        if not isinstance(tc, Tcgen05TensorCore):   # TMEM belongs to the tcgen05 tensor core (tensor_core.tmem)
            raise SpecError(f"{spec.name}: tensor_core.kind={tc.kind!r} has no TMEM (tensor_core.tmem)",
                            hint="an architecture whose tensor_core.kind is tcgen05 (e.g. b200)")
        tm = tc.tmem
        self.n_sm = int(spec.sm.count)
        self.lanes = int(tm.lanes)
        self.columns = int(tm.columns)
        self.ld_bpc = float(tm.ld_bytes_per_cycle)
        self.st_bpc = float(tm.st_bytes_per_cycle)
        self.ld_lat = int(tm.ld_latency_cycles)
        self.st_lat = int(tm.st_latency_cycles)
        self.alloc_cycles = int(tm.alloc_cycles)
        self.quadrants = 4
        n = self.n_sm * self.quadrants
        self.rd = [0.0] * n                       # next-free cycle of each quadrant's read / write port
        self.wr = [0.0] * n
        self.free_cols = [self.columns] * self.n_sm
        self.waiting: list[deque] = [deque() for _ in range(self.n_sm)]
        self.n_ld = self.n_st = 0
        self.ld_bytes = self.st_bytes = 0
        self.allocs = 0
        self.alloc_wait_cycles = 0
        self.peak_cols = [0] * self.n_sm

    def _port(self, ports, i: int, t: int, nbytes: float, bpc: float) -> float:
        s = ports[i]
        if s < t:
            s = t
        e = s + nbytes / bpc
        ports[i] = e
        return e

    def ld(self, t: int, sm: int, quadrants, nbytes: int) -> int:
        """TMEM -> registers of the warps on ``quadrants`` (bytes split evenly); the cycle the data is in the
        registers."""
        qs = list(quadrants) or [0]
        bpc = self.ld_bpc / self.quadrants
        per = nbytes / len(qs)
        done = t
        for q in qs:
            e = self._port(self.rd, sm * self.quadrants + (q % self.quadrants), t, per, bpc)
            if e > done:
                done = e
        self.n_ld += 1
        self.ld_bytes += nbytes
        return _ceil(done) + self.ld_lat

    def st(self, t: int, sm: int, quadrants, nbytes: int) -> int:
        """registers (or shared memory for ``quadrants=None``: all four) -> TMEM; the cycle the data is written."""
        qs = list(range(self.quadrants)) if quadrants is None else (list(quadrants) or [0])
        bpc = self.st_bpc / self.quadrants
        per = nbytes / len(qs)
        done = t
        for q in qs:
            e = self._port(self.wr, sm * self.quadrants + (q % self.quadrants), t, per, bpc)
            if e > done:
                done = e
        self.n_st += 1
        self.st_bytes += nbytes
        return _ceil(done) + self.st_lat

    def alloc(self, t: int, sm: int, ncols: int, wake=None):
        """Take ``ncols`` columns of SM ``sm``: the cycle the allocation completes, or None when the columns are
        not free (``wake(cycle)`` is called when a dealloc frees them)."""
        if ncols > self.columns:
            raise SimulationError(f"tcgen05.alloc of {ncols} columns exceeds the SM's {self.columns}",
                                  hint="tmem.columns of the architecture")
        q = self.waiting[sm]
        self.allocs += 1
        if not q and self.free_cols[sm] >= ncols:
            self._take(sm, ncols)
            return t + self.alloc_cycles
        if wake is None:
            raise SimulationError(f"tcgen05.alloc of {ncols} columns on SM {sm}: only {self.free_cols[sm]} free",
                                  hint="a wake-up callback (the SM core passes one)")
        q.append((ncols, t, wake))
        return None

    def _take(self, sm, ncols):
        self.free_cols[sm] -= ncols
        used = self.columns - self.free_cols[sm]
        if used > self.peak_cols[sm]:
            self.peak_cols[sm] = used

    def dealloc(self, t: int, sm: int, ncols: int) -> int:
        """Return ``ncols`` columns; waiting allocations that now fit complete (oldest first)."""
        self.free_cols[sm] += ncols
        if self.free_cols[sm] > self.columns:
            raise SimulationError(f"tcgen05.dealloc on SM {sm} frees more columns than were allocated")
        q = self.waiting[sm]
        while q and q[0][0] <= self.free_cols[sm]:
            n, t0, wake = q.popleft()
            self._take(sm, n)
            c = t + self.alloc_cycles
            self.alloc_wait_cycles += c - t0
            if self.engine is not None:
                self.engine.schedule(max(c, self.engine.now), wake, c)
            else:
                wake(c)
        return t + 1

    def stats(self) -> dict:
        return {"ld.count": self.n_ld, "ld.bytes": self.ld_bytes, "st.count": self.n_st, "st.bytes": self.st_bytes,
                "allocs": self.allocs, "alloc_wait_cycles": self.alloc_wait_cycles,
                "peak_columns": max(self.peak_cols) if self.peak_cols else 0}


def _ceil(x: float) -> int:
    i = int(x)
    return i + 1 if i < x else i

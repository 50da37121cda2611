"""L2 residency during the functional pass: which 32-B sectors miss to DRAM, and which dirty sectors are written back.

Model (fitted to the L2 microbenchmark ``microbench/results/h200_l2_2026-12-02.json``, run on an H200 under
Nsight Compute ``--cache-control all``): an LRU cache of ``capacity_bytes`` (H200: 37.5 MiB usable for reuse),
write-back, write-allocate. Dirty sectors reach DRAM only when evicted; dirty data still resident at the end of the
launch is *not* counted, exactly as ``dram__bytes_write.sum`` of a single profiled launch does not count it (the
measured rmsnorm writes 11.3 MB of its 33.5 MB output; swiglu 17.8 of 33.5 MB).

LRU is approximated by *insertion distance*: a sector accessed when the miss clock read ``L`` is resident while
fewer than ``C`` sectors have been inserted (missed) since, i.e. ``clock - L < C``. Hits refresh ``L``. Dirty
write-backs are counted when the miss clock sweeps past a dirty sector's slot (``dslot`` holds the number of dirty
sectors whose last access is each clock value). Accesses arrive in functional order (CTA batches in launch order,
all CTAs of a batch in lockstep), which approximates the hardware's time order as long as a batch is no larger than
the resident wave (runner/simulate.py ``_batch_lanes``; larger batches turn reuse between waves into reuse within
one lock-step step).

The object keeps the interface of the boolean ``touched``/``written`` arrays it replaces:
``resident = l2[sectors]`` (refreshes hits), ``l2[sectors] = True`` (access; misses are inserted),
``l2.dirty_view[sectors] = True`` (a write).
"""
from __future__ import annotations

import numpy as np

__all__ = ["L2Residency"]


class _DirtyView:
    __slots__ = ("l2",)

    def __init__(self, l2):
        self.l2 = l2

    def __setitem__(self, idx, value):
        if value:
            self.l2.mark_dirty(idx)


class L2Residency:
    def __init__(self, n_sectors: int, capacity_bytes: int | None = None, sector_bytes: int = 32):
        self.n = int(n_sectors)
        self.C = None if not capacity_bytes else max(1, int(capacity_bytes) // sector_bytes)
        self.last = np.full(self.n, -1, dtype=np.int64)
        self.dirty = np.zeros(self.n, dtype=bool)
        self.clock = 0
        self.dslot = np.zeros(max(1024, self.n + 1), dtype=np.int64)
        self.writeback_sectors = 0
        self.dirtied_sectors = 0             # sectors that turned dirty (a store into a clean or new sector)
        self.stored_sectors = 0              # sectors written, each store counted (the timing pass's count)
        self._wb_at = [(0, 0)]               # (stored_sectors, writeback_sectors) when write-backs moved
        self._swept = 0                      # slots below this have been swept into writeback_sectors
        self._evicted_dirty = []             # sectors written back and accessed again since (writeback_sector_ids)
        self.dirty_view = _DirtyView(self)

    # -- helpers ---------------------------------------------------------------------------------------
    def _idx(self, idx) -> np.ndarray:
        if isinstance(idx, slice):
            return np.arange(*idx.indices(self.n), dtype=np.int64)
        return np.asarray(idx, dtype=np.int64).reshape(-1)

    def _resident(self, s: np.ndarray) -> np.ndarray:
        L = self.last[s]
        if self.C is None:
            return L >= 0
        return (L >= 0) & (self.clock - L < self.C)

    def _grow(self, need: int) -> None:
        if need >= len(self.dslot):
            n = len(self.dslot)
            while n <= need:
                n *= 2
            d = np.zeros(n, dtype=np.int64)
            d[: len(self.dslot)] = self.dslot
            self.dslot = d

    def _move(self, s: np.ndarray, new_last: int) -> None:
        """Set last[s] = new_last (s unique), keeping dslot consistent for dirty sectors."""
        if len(s) == 0:
            return
        d = s[self.dirty[s]]
        if len(d):
            old = self.last[d]
            old = old[old >= 0]
            if len(old):
                u, c = np.unique(old, return_counts=True)
                self.dslot[u] -= c
            self._grow(new_last)
            self.dslot[new_last] += len(d)
        self.last[s] = new_last

    def _advance(self, m: int) -> None:
        self.clock += m
        if self.C is None:
            return
        hi = self.clock - self.C
        if hi > self._swept:
            self._grow(hi)
            self.writeback_sectors += int(self.dslot[self._swept:hi].sum())
            self._swept = hi

    # -- the boolean-array interface ------------------------------------------------------------------
    def __getitem__(self, idx) -> np.ndarray:
        s = self._idx(idx)
        res = self._resident(s)
        if res.any():
            h = np.unique(s[res])
            self._move(h, self.clock)
        return res

    def __setitem__(self, idx, value) -> None:
        if not value:
            return
        s = np.unique(self._idx(idx))
        if len(s) == 0:
            return
        res = self._resident(s)
        miss = s[~res]
        if len(miss):
            # an evicted dirty sector was counted when the clock swept past it: its DRAM copy is current now
            ev = miss[(self.last[miss] >= 0) & self.dirty[miss]]
            if len(ev):
                self.dirty[ev] = False
                self._evicted_dirty.append(ev)
            lo, wb = self._swept, self.writeback_sectors
            self._advance(len(miss))
            if self.writeback_sectors > wb:
                if self._wb_at[-1][0] == self.stored_sectors:
                    self._wb_at[-1] = (self.stored_sectors, self.writeback_sectors)
                else:
                    self._wb_at.append((self.stored_sectors, self.writeback_sectors))
                # the sweep may pass a dirty sector this access hits (its slot at the LRU edge): it is counted as
                # written back, then refreshed (still dirty) below
                h = s[res]
                h = h[self.dirty[h]]
                if len(h):
                    L = self.last[h]
                    h = h[(L >= lo) & (L < self._swept)]
                    if len(h):
                        self._evicted_dirty.append(h)
        self._move(s, self.clock)

    def mark_dirty(self, idx) -> None:
        s = self._idx(idx)
        self.stored_sectors += len(s)
        s = np.unique(s)
        if len(s) == 0:
            return
        untouched = s[self.last[s] < 0]
        if len(untouched):
            self[untouched] = True
        new = s[~self.dirty[s]]
        if len(new):
            self.dirtied_sectors += len(new)
            self.dirty[new] = True
            L = self.last[new]
            u, c = np.unique(L, return_counts=True)
            self._grow(int(u.max()))
            self.dslot[u] += c

    def write_back_ratio(self) -> float:
        """DRAM write-back sectors per dirtied sector over the launch (the timing pass charges each store's
        sectors with this ratio of HBM write traffic)."""
        if self.C is None or not self.dirtied_sectors:
            return 1.0
        return self.writeback_sectors / self.dirtied_sectors

    def write_back_curve(self, points: int = 256) -> tuple[int, np.ndarray] | None:
        """When the launch's write-backs happen, against its stores: ``(stored, wb)`` with ``wb[j]`` the dirty sectors
        written back by the time ``j * stored / points`` sectors had been stored (``points + 1`` values, float64,
        ``wb[-1]`` = :attr:`writeback_sectors`). A streaming kernel writes nothing back until its reads and writes
        have filled the L2, then one sector per sector it dirties (microbench/src/dirty_l2.cu: the per-row time of
        a row stream that writes 98 MB steps up when ~50 MB have passed through the H100's L2). None when nothing
        was stored or the capacity is unbounded."""
        if self.C is None or not self.stored_sectors:
            return None
        at = np.asarray(self._wb_at + [(self.stored_sectors, self.writeback_sectors)], dtype=np.float64)
        x = np.linspace(0.0, float(self.stored_sectors), points + 1)
        # the write-backs counted at a store count: the last value reached there (a step, not an interpolation)
        k = np.searchsorted(at[:, 0], x, side="right") - 1
        return self.stored_sectors, at[np.maximum(k, 0), 1]

    def dram_write_bytes(self, sector_bytes: int = 32) -> int:
        """Write-back bytes of the launch: evicted dirty sectors (finite capacity), or every written sector
        (capacity unknown: the conservative write-through count)."""
        if self.C is None:
            return int(self.dirty.sum()) * sector_bytes
        return self.writeback_sectors * sector_bytes

    def writeback_sector_ids(self) -> np.ndarray:
        """The sectors :meth:`dram_write_bytes` counts, one entry per write-back (a sector written back twice is
        listed twice): dirty sectors the clock swept past that were accessed again (their dirty bit cleared then),
        and those still dirty and swept at the end; with unbounded capacity, every dirty sector. Its length is
        ``writeback_sectors`` (finite capacity) or ``dirty.sum()``: per-channel DRAM write counts
        (workloads/functional/addrmap.py)."""
        if self.C is None:
            return np.flatnonzero(self.dirty)
        left = np.flatnonzero(self.dirty & (self.last >= 0) & (self.last < self._swept))
        return np.concatenate(self._evicted_dirty + [left]) if self._evicted_dirty else left

"""The L1 data caches (one per SM, or one per CTA) for plain ``ld.global`` during the functional pass (Hopper unified L1/shared array).

Without it, a kernel whose loads are not vectorised (e.g. Triton with N = 3000, not a multiple of 16: one 2-byte
``ld.global.b16`` per thread, each warp touching 32 different 128-B lines) would send 16x its useful bytes to L2,
where the hardware's L1 catches the re-reads of neighbouring elements (measured ``lts__t_bytes`` of
gemm_ptr_M512_N3000_K1536 equals its useful bytes). Model: LRU by insertion distance over 32-B sectors (Hopper's
L1 fills sectors, not whole 128-B lines: a line's other sectors miss to L2 on their first use), one cache per
SM of ``capacity_bytes`` = the L1 array - the SM's shared-memory carveout, which the CTAs that run on the SM share
(the functional pass keys the cache by ``cta % n_sm``, the first wave's placement: runner/simulate.py; H200 ncu
shows a weight row every CTA re-reads reaching L2 once per SM, microbench/results/h200_l2_counters_2026-12-04),
or, keyed by the CTA, one per CTA of a resident CTA's share. ``.cg``/``.cv``/volatile loads, stores, atomics and
cp.async bypass it.

Storage: sorted ``(cache << 40) | sector`` keys with their insertion stamps (a vectorised hash map); entries older
than the capacity are dropped when the table has grown past twice its live size.
"""
from __future__ import annotations

import numpy as np

__all__ = ["L1Caches"]

_LINE_MASK = (1 << 40) - 1


class L1Caches:
    """``n_caches`` LRU caches of ``capacity_bytes`` each, addressed by cache index (an SM or a CTA)."""

    def __init__(self, n_caches: int, capacity_bytes: int, unit_bytes: int = 32):
        self.cap = max(1, int(capacity_bytes) // unit_bytes)
        self.keys = np.zeros(0, dtype=np.int64)
        self.stamps = np.zeros(0, dtype=np.int64)
        self.clock = np.zeros(int(n_caches), dtype=np.int64)
        self._compact_at = 1 << 16
        self.hits = 0
        self.misses = 0

    def access(self, cache: np.ndarray, line: np.ndarray) -> np.ndarray:
        """``(cache, sector)`` pairs, unique, one request's sectors; returns the hit mask and inserts the misses."""
        n = len(line)
        if n == 0:
            return np.zeros(0, dtype=bool)
        cache = np.asarray(cache, dtype=np.int64)
        q = (cache << 40) | np.asarray(line, dtype=np.int64)
        K, S = self.keys, self.stamps
        pos = np.searchsorted(K, q)
        inb = pos < len(K)
        found = np.zeros(n, dtype=bool)
        found[inb] = K[pos[inb]] == q[inb]
        hit = found.copy()
        hit[found] = self.clock[cache[found]] - S[pos[found]] < self.cap
        miss = ~hit
        if miss.any():
            u, cnt = np.unique(cache[miss], return_counts=True)
            self.clock[u] += cnt
        # every accessed sector becomes most recent in its cache
        stamp = self.clock[cache]
        S[pos[found]] = stamp[found]
        new = ~found
        if new.any():
            qn = q[new]
            order = np.argsort(qn, kind="stable")
            qn = qn[order]
            at = pos[new][order]
            self.keys = np.insert(K, at, qn)
            self.stamps = np.insert(S, at, stamp[new][order])
            if len(self.keys) > self._compact_at:
                self._compact()
        n_hit = int(hit.sum())
        self.hits += n_hit
        self.misses += n - n_hit
        return hit

    def _compact(self) -> None:
        """Drop sectors that have fallen out of their cache's LRU window (they can only miss again)."""
        live = self.clock[self.keys >> 40] - self.stamps < self.cap
        self.keys = self.keys[live]
        self.stamps = self.stamps[live]
        self._compact_at = max(1 << 16, 2 * len(self.keys))

"""Per-CTA L1 data cache for plain ``ld.global`` during the functional pass (Hopper unified L1/shared array).

Without it, a kernel whose loads are not vectorised (e.g. Triton with N = 3000, not a multiple of 16: one 2-byte
``ld.global.b16`` per thread, each warp touching 32 different 128-B lines) would send 16x its useful bytes to L2,
where the hardware's L1 catches the re-reads of neighbouring elements (measured ``lts__t_bytes`` of
gemm_ptr_M512_N3000_K1536 equals its useful bytes). Model: LRU by insertion distance over 128-B lines, one cache
per CTA of ``capacity_bytes`` = (L1 array - the SM's shared-memory carveout) / resident CTAs per SM (sharing of
lines between CTAs of one SM is ignored). ``.cg``/``.cv``/volatile loads, stores, atomics and cp.async bypass it.
"""
from __future__ import annotations

import numpy as np

__all__ = ["L1PerCta"]


class L1PerCta:
    def __init__(self, n_lines: int, n_ctas: int, capacity_bytes: int, line_bytes: int = 128):
        self.cap = max(1, int(capacity_bytes) // line_bytes)
        self.owner = np.full(int(n_lines), -1, dtype=np.int64)
        self.stamp = np.zeros(int(n_lines), dtype=np.int64)
        self.clock = np.zeros(int(n_ctas), dtype=np.int64)
        self.hits = 0
        self.misses = 0

    def access(self, cta: np.ndarray, line: np.ndarray) -> np.ndarray:
        """``(cta, line)`` pairs, unique, one request's lines; returns the hit mask and inserts the misses."""
        if len(line) == 0:
            return np.zeros(0, dtype=bool)
        own = self.owner[line]
        hit = (own == cta) & (self.clock[cta] - self.stamp[line] < self.cap)
        miss = ~hit
        if miss.any():
            mc = cta[miss]
            u, cnt = np.unique(mc, return_counts=True)
            self.clock[u] += cnt
        # every accessed line becomes most recent for its CTA
        self.owner[line] = cta
        self.stamp[line] = self.clock[cta]
        n_hit = int(hit.sum())
        self.hits += n_hit
        self.misses += len(line) - n_hit
        return hit

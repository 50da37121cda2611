"""Spin locks on global memory words: mutual exclusion of the CTAs that take a lock with ``atom.cas``.

The timing pass replays each warp's functional trace, so the number of failed ``atom.cas`` attempts of a spin
loop is the functional pass's, and without more the timing would let every CTA hold a lock at once. This table
restores the exclusion (H200 microbench ``src/atomics.cu`` LOCK, 2026-12-03): an ``atom.cas`` whose functional
result took the word (payload flag ``ACQUIRE``) is performed at the L2 no earlier than the holder's release (the
same CTA's next atomic on that word, flag ``WRITE``, e.g. Triton's ``atom.exch`` unlock) plus the wait for a
spinning waiter's next attempt, ``l2.lock_retry_period_cycles / (waiters + 1)`` (the first of ``waiters``
uniformly phased retries). Waiters are served in the order they arrive (deterministic). Times are L2 *perform*
times; callers add the response's way back.

Words are identified by a 24-bit hash of their address (payload a1 bits 32-55, workloads/functional/memops.py
``_atom_lock_bits``); flags in bits 56 (ACQUIRE) and 57 (WRITE).
"""
from __future__ import annotations

from collections import deque

ACQUIRE = 1 << 24   # in (a1 >> 32): this cas took the lock word (functional result == compare value)
WRITE = 2 << 24     # in (a1 >> 32): a cas / exch that writes the word (a release candidate)
KEY_MASK = (1 << 24) - 1


class LockTable:
    """Lock words: holder CTA, release time and the FIFO of waiting acquirers."""

    def __init__(self, retry_period: float):
        self.period = float(retry_period)
        self.holder: dict[int, int] = {}          # key -> CTA holding it
        self.free_at: dict[int, float] = {}       # key -> L2 perform time of the last release
        self.waiters: dict[int, deque] = {}       # key -> deque of (arrival, cta, grant callback)
        self.handoffs = 0
        self.wait_cycles = 0.0

    def acquire(self, key: int, cta: int, t: float, grant) -> float | None:
        """A taking ``atom.cas`` of ``cta`` reaching the L2 at ``t``: its perform time, or None when another CTA
        holds the word (``grant(perform_time)`` is called at the release)."""
        h = self.holder.get(key)
        if h is not None and h != cta:
            self.waiters.setdefault(key, deque()).append((t, cta, grant))
            return None
        self.holder[key] = cta
        f = self.free_at.get(key)
        if f is not None and f > t:
            self.wait_cycles += f - t
            return f
        return t

    def release_all(self, cta: int, t: float) -> None:
        """``cta`` retired at ``t``: words it still holds (unlocked by a plain store, which carries no lock bits)
        are released then, so their waiters never wait for ever."""
        for key in [k for k, h in self.holder.items() if h == cta]:
            self.release(key, cta, t)

    def release(self, key: int, cta: int, t: float) -> None:
        """``cta``'s write of a word it holds, performed at ``t``: the next waiter takes it."""
        if self.holder.get(key) != cta:
            return
        q = self.waiters.get(key)
        if not q:
            del self.holder[key]
            self.free_at[key] = t
            return
        arr, nxt, grant = q.popleft()
        g = t + self.period / (len(q) + 2)        # waiters at the release: the one served and len(q) others
        if arr > g:
            g = arr
        self.holder[key] = nxt
        self.handoffs += 1
        self.wait_cycles += g - arr
        grant(g)

"""Spin locks on global memory words (mutual exclusion of the CTAs that take a lock with ``atom.cas``), and the L2's
atomic units (:class:`AtomicUnits`, at the end).

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

import heapq
from bisect import bisect_left, bisect_right
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

    def acquire(self, key: int, cta: int, t: float, grant, spin: tuple | None = None) -> float | None:
        """A taking ``atom.cas`` of ``cta`` reaching the L2 at ``t``: its perform time, or None when another CTA
        holds the word (``grant(perform_time)`` is called at the release). ``spin`` = (units, line unit, word unit,
        back, line occupancy, word occupancy): the waiter keeps retrying on those atomic units while it waits
        (:meth:`AtomicUnits.park`; ``back`` = the way from its SM to the slice, units keep departure times)."""
        h = self.holder.get(key)
        if h is not None and h != cta:
            tok = None
            if spin is not None:
                units, line, word, back, lo, wo = spin
                tok = units.park(t - back + self.period, line, word, self.period, lo, wo)
            self.waiters.setdefault(key, deque()).append((t, cta, grant, tok, spin))
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

    def release(self, key: int, cta: int, t: float, dep: float | None = None) -> None:
        """``cta``'s write of a word it holds, performed at ``t`` (it left its SM at ``dep``): the next waiter takes
        it, with its next attempt (which, when it spins on the atomic units, waits there behind the other waiters'
        attempts that left before the release)."""
        if self.holder.get(key) != cta:
            return
        q = self.waiters.get(key)
        if not q:
            del self.holder[key]
            self.free_at[key] = t
            return
        spinning = q[0][4] is not None
        j = 0
        if spinning:
            # the first attempt on the line's units after the release takes the word (attempts may be booked ahead
            # of the release: requests reach the units out of time order)
            units, td = q[0][4][0], t - q[0][4][3]
            j = min(range(len(q)), key=lambda i: units.first_attempt(q[i][3], td))
        arr, nxt, grant, tok, spin = q[j]
        del q[j]
        phased = self.period / (len(q) + 2)      # uniformly phased retries: the one served and len(q) others
        if spinning:
            units, line, word, back, lo, wo = spin
            s = units.first_attempt(tok, td)
            booked = s < units.next_dep[tok]
            units.unpark(tok)
            u = td + phased
            if u < s:
                s = units.perform(u, line, word, lo, wo, dep)
            elif not booked:
                s = units.perform(s, line, word, lo, wo, dep)
            g = s + back
            if g < t:
                g = t
        else:
            g = t + phased
            if arr > g:
                g = arr
        self.holder[key] = nxt
        self.handoffs += 1
        self.wait_cycles += g - arr
        grant(g)


class BusyCalendar:
    """One unit's busy intervals (sorted, disjoint, merged when they touch): a request that may start at ``t`` takes
    the first gap of its length from ``t`` on. Unlike a FIFO free pointer, requests may be booked out of time order
    (the engine feeds an atomic's unit when the atomic issues, and the atomic leaves its SM after its fence, so
    departure times reach the unit out of order); intervals that ended long before the request are dropped."""

    __slots__ = ("starts", "ends", "min_gap")
    HORIZON = 1 << 16     # intervals that ended this long before a request are forgotten

    def __init__(self, min_gap: float = 0.0):
        self.starts: list[float] = []
        self.ends: list[float] = []
        # the unit's least occupancy of a request: a gap shorter than it can never be used, so booking closes it
        # (exact; without it a unit served at two nearby rates keeps one fragment per request and fit() scans them)
        self.min_gap = min_gap

    def fit(self, t: float, occ: float) -> float:
        """The earliest start >= ``t`` of a gap of ``occ`` cycles (nothing booked; ``t`` when ``occ`` is 0)."""
        if occ <= 0:
            return t
        ends, starts = self.ends, self.starts
        i = bisect_right(ends, t)
        s = t
        while i < len(ends):
            if s + occ <= starts[i]:
                return s
            if ends[i] > s:
                s = ends[i]
            i += 1
        return s

    def book(self, s: float, occ: float) -> None:
        """Book ``[s, s + occ)`` (a gap :meth:`fit` returned), merging with the intervals it touches."""
        if occ <= 0:
            return
        starts, ends = self.starts, self.ends
        e = s + occ
        g = self.min_gap
        # the intervals it touches (or leaves a gap shorter than the least occupancy to) merge into one
        i = bisect_right(ends, s - g) if g > 0.0 else bisect_left(ends, s)
        j = i
        while j < len(starts) and (starts[j] < e + g if g > 0.0 else starts[j] <= e):
            if starts[j] < s:
                s = starts[j]
            if ends[j] > e:
                e = ends[j]
            j += 1
        starts[i:j] = [s]
        ends[i:j] = [e]
        if len(ends) > 64 and ends[0] < s - self.HORIZON:
            k = bisect_left(ends, s - self.HORIZON)
            del starts[:k], ends[:k]


class AtomicUnits:
    """The L2's atomic units (components/memory.py ``MemorySystem.atomic_perform``): per group of lines
    (``l2.atomic_unit_bytes``; key ``line``) a unit that serves one request at a time for its lane-operations, and
    per word (key ``word``, unique across lines) its read-modify-write, one lane-operation at a time, and (when the
    caller passes them) the atomic ALUs of the request's spans. A request starts when all of its units are free."""

    def __init__(self, line_min: float = 0.0, word_min: float = 0.0, alu_window: float = 512.0):
        self.lines: dict[int, BusyCalendar] = {}
        self.words: dict[int, BusyCalendar] = {}
        self.alus: dict[int, BusyCalendar] = {}
        self.alu_last: dict[int, dict] = {}      # ALU -> {line: its last request's departure}
        self.alu_window = float(alu_window)
        self.queue_cycles = 0.0
        self.line_min, self.word_min = line_min, word_min    # each unit's least occupancy of a request
        # spinning lock waiters (LockTable): per line unit a heap of (next departure, token, word unit, period, line
        # and word occupancy); the live tokens
        self.spinners: dict[int, list] = {}
        self.live: set[int] = set()
        self.next_dep: dict[int, float] = {}     # token -> its next attempt's departure
        self.starts: dict[int, list] = {}        # token -> the starts of its booked attempts (increasing)
        self._tok = 0

    def park(self, t: float, line: int, word: int, period: float, line_occ: float, word_occ: float) -> int:
        """A lock waiter that retries a one-lane ``atom.cas`` on ``word`` of ``line`` every ``period`` cycles from
        ``t`` on (departure times), until :meth:`unpark`. Its attempts are booked on the units lazily, when a request
        reaches the line (:meth:`perform`), so they delay the release and the other requests behind them."""
        self._tok += 1
        tok = self._tok
        self.live.add(tok)
        self.next_dep[tok] = t
        heapq.heappush(self.spinners.setdefault(line, []), (t, tok, word, period, line_occ, word_occ))
        return tok

    def unpark(self, tok) -> None:
        self.live.discard(tok)
        self.next_dep.pop(tok, None)
        self.starts.pop(tok, None)

    def first_attempt(self, tok: int, t: float) -> float:
        """The start of waiter ``tok``'s first attempt at or after ``t``: a booked one, or its next departure."""
        st = self.starts.get(tok)
        if st:
            i = bisect_left(st, t)
            if i < len(st):
                v = st[i]
                if i > 64:
                    del st[:i]
                return v
        return self.next_dep[tok]

    def _spin(self, line: int, t: float) -> None:
        """Book the attempts of ``line``'s spinning waiters that leave their SMs before ``t`` (each holding the units
        as its parked request did); a waiter's next attempt leaves ``period`` after its last started."""
        h = self.spinners[line]
        live = self.live
        while h and h[0][0] < t:
            ts, tok, word, period, lo, wo = heapq.heappop(h)
            if tok not in live:
                continue
            s = self._book(ts, line, word, lo, wo)
            self.next_dep[tok] = s + period
            st = self.starts.get(tok)
            if st is None:
                self.starts[tok] = [s]
            else:
                st.append(s)
            heapq.heappush(h, (s + period, tok, word, period, lo, wo))
        if not h:
            del self.spinners[line]

    def perform(self, t: float, line: int, word: int, line_occ: float, word_occ: float, upto: float | None = None,
                alus: list | None = None) -> float:
        """Book a request that leaves its SM at ``t``, behind the waiters' attempts that left before it (before
        ``upto`` if sooner: a lock's next holder, whose attempt the release it follows decides, see no attempt that
        left after that release)."""
        if line in self.spinners:
            self._spin(line, t if upto is None or upto > t else upto)
        s = self._book(t, line, word, line_occ, word_occ, alus)
        self.queue_cycles += s - t
        return s

    def _book(self, t: float, line: int, word: int, line_occ: float, word_occ: float, alus: list | None = None
              ) -> float:
        lc = self.lines.get(line)
        if lc is None:
            lc = self.lines[line] = BusyCalendar(self.line_min)
        wc = self.words.get(word)
        if wc is None:
            wc = self.words[word] = BusyCalendar(self.word_min)
        acs = []
        if alus:
            for j, (alu, occ) in enumerate(alus):
                if occ <= 0:
                    continue
                ac = self.alus.get(alu)
                if ac is None:
                    ac = self.alus[alu] = BusyCalendar(0.0)
                if j == 0:
                    seen = self.alu_last.get(alu)
                    if seen is None:
                        seen = self.alu_last[alu] = {}
                    if line_occ < occ and all(v < t - self.alu_window for k, v in seen.items() if k != line):
                        occ = line_occ          # the ALU's only line: at the line unit's pace (no switch)
                    seen[line] = t
                    if len(seen) > 16:
                        for k in [k for k, v in seen.items() if v < t - self.alu_window]:
                            del seen[k]
                acs.append((ac, occ))
        s = t
        while True:       # the first start at which every unit has room (times only grow: ends)
            a = lc.fit(s, line_occ)
            for ac, occ in acs:
                a = ac.fit(a, occ)
            a = wc.fit(a, word_occ)
            if a == s:
                break
            s = a
        lc.book(s, line_occ)
        wc.book(s, word_occ)
        for ac, occ in acs:
            ac.book(s, occ)
        return s

"""The shared clock: a discrete-event engine over integer cycles of one base (SM) clock domain.

Contract 0 of docs/design.md. Events live in a ``heapq`` of plain tuples ``(time, prio, seq, fn, args)``;
``seq`` is a global insertion counter, so ``(time, prio, seq)`` is a total order and runs are deterministic
(design-anchors.md §1, determinism caveat of SST threaded PDES). Idle time is skipped: the engine jumps to the
next event, components that have nothing to do schedule nothing (Akita "don't tick idle components",
design-anchors.md §4; performance-notes.md).
"""
from __future__ import annotations

from fractions import Fraction
from heapq import heappop, heappush
from itertools import count
from typing import Callable

from warpgraph.core.errors import SimulationError

__all__ = ["ClockDomain", "Engine", "CycleLimitExceeded"]


class CycleLimitExceeded(SimulationError):
    """The simulation ran past ``max_cycles`` (a hang or a too-small limit). The message carries the report of
    the engine's ``report`` callback, e.g. the stuck warps and what they wait on."""


def _exact(mhz) -> Fraction:
    if isinstance(mhz, Fraction):
        return mhz
    if isinstance(mhz, float):
        return Fraction(repr(mhz))  # 1755.5 -> 3511/2, decimal intent, not binary noise
    return Fraction(mhz)


class ClockDomain:
    """A clock domain; conversions to/from the base domain are exact (``Fraction``) and round up.

    ``period`` is the length of one cycle of this domain in base cycles (``base_mhz / mhz``). A domain created
    without ``base_mhz`` is its own base until :meth:`Engine.add_domain` binds it.
    """

    __slots__ = ("name", "mhz", "base_mhz", "period")

    def __init__(self, name: str, mhz, base_mhz=None):
        if _exact(mhz) <= 0:
            raise ValueError(f"clock domain {name!r}: mhz must be > 0, got {mhz}")
        self.name = name
        self.mhz = _exact(mhz)
        self.bind(self.mhz if base_mhz is None else base_mhz)

    def bind(self, base_mhz) -> "ClockDomain":
        """Measure this domain in cycles of a base domain running at ``base_mhz``."""
        self.base_mhz = _exact(base_mhz)
        self.period = self.base_mhz / self.mhz
        return self

    def to_base(self, n_cycles) -> int:
        """Base cycles spanned by ``n_cycles`` of this domain, rounded up (exact)."""
        v = self.period * n_cycles
        return -((-v.numerator) // v.denominator)

    def from_base(self, n_base_cycles) -> int:
        """Whole cycles of this domain completed within ``n_base_cycles`` base cycles (rounded down)."""
        v = Fraction(n_base_cycles) / self.period
        return v.numerator // v.denominator

    def __repr__(self) -> str:
        return f"ClockDomain({self.name!r}, mhz={self.mhz}, period={self.period})"


class Engine:
    """Event queue over integer base cycles.

    ``schedule(time, fn, *args, prio=0)`` runs ``fn(*args)`` at ``time``; ties are broken by ``(prio, seq)``.
    ``run(until=None, max_cycles=None)`` processes events and returns the final cycle. ``report`` (optional
    callable returning text) is called to explain a :class:`CycleLimitExceeded`.
    """

    __slots__ = ("base", "now", "events_processed", "report", "domains", "_q", "_seq", "_stop")

    def __init__(self, base: ClockDomain | None = None, *, report: Callable[[], str] | None = None):
        self.base = base if base is not None else ClockDomain("sm", 1000)
        self.base.bind(self.base.mhz)
        self.domains: dict[str, ClockDomain] = {self.base.name: self.base}
        self.now = 0
        self.events_processed = 0
        self.report = report
        self._q: list = []
        self._seq = count()
        self._stop = False

    # -- clock domains ----------------------------------------------------------------------------------
    def add_domain(self, domain: ClockDomain) -> ClockDomain:
        """Bind ``domain`` to this engine's base clock and remember it by name."""
        self.domains[domain.name] = domain.bind(self.base.mhz)
        return domain

    def domain(self, name: str, mhz=None) -> ClockDomain:
        """The domain called ``name``; created (and bound) when ``mhz`` is given and it does not exist."""
        d = self.domains.get(name)
        if d is None:
            if mhz is None:
                raise KeyError(f"unknown clock domain {name!r}; known: {sorted(self.domains)}")
            d = self.add_domain(ClockDomain(name, mhz))
        return d

    # -- events -----------------------------------------------------------------------------------------
    def schedule(self, time: int, fn: Callable, *args, prio: int = 0) -> None:
        """Run ``fn(*args)`` at cycle ``time`` (>= now). Lower ``prio`` runs first among same-time events."""
        if time < self.now:
            raise SimulationError(
                f"event scheduled in the past: t={time} < now={self.now} ({getattr(fn, '__qualname__', fn)})",
                hint="components must schedule at or after engine.now",
            )
        heappush(self._q, (time, prio, next(self._seq), fn, args))

    def stop(self) -> None:
        """Stop :meth:`run` after the current event (pending events stay queued)."""
        self._stop = True

    @property
    def pending(self) -> int:
        return len(self._q)

    def next_time(self) -> int | None:
        """Cycle of the next pending event, or None."""
        return self._q[0][0] if self._q else None

    def run(self, until: int | None = None, max_cycles: int | None = None) -> int:
        """Process events in ``(time, prio, seq)`` order.

        Stops when the queue is empty, after :meth:`stop`, or before the first event later than ``until``
        (then ``now`` advances to ``until``). Raises :class:`CycleLimitExceeded` if an event lies beyond
        ``max_cycles``. Returns ``now``.
        """
        q = self._q
        pop = heappop
        n = 0
        self._stop = False
        bounds = [b for b in (until, max_cycles) if b is not None]
        lim = min(bounds) if bounds else None
        reached_until = False
        try:
            while q:
                t = q[0][0]
                if lim is not None and t > lim:
                    if until is not None and t > until:
                        reached_until = True
                        break
                    raise self._limit_error(t, max_cycles)
                t, _, _, fn, args = pop(q)
                self.now = t
                fn(*args)
                n += 1
                if self._stop:
                    break
        finally:
            self.events_processed += n
        if until is not None and (reached_until or not q) and until > self.now and not self._stop:
            self.now = until
        return self.now

    def _limit_error(self, t_next: int, max_cycles) -> CycleLimitExceeded:
        text = ""
        if self.report is not None:
            try:
                text = str(self.report())
            except Exception as exc:  # the report must never hide the limit error itself
                text = f"(report callback failed: {exc!r})"
        msg = f"simulation exceeded max_cycles={max_cycles} (next event at cycle {t_next}, now={self.now})"
        if text:
            msg += "\n" + text
        return CycleLimitExceeded(msg, hint="a larger max_cycles, or find what the listed warps wait on")

"""Event recording for the timing pass (observability hooks; consumers live in ``warpgraph.analysis``).

The timing model holds one *recorder* and guards every hook with one attribute test::

    rec = self.rec                      # NullRecorder() unless tracing was asked for
    if rec.enabled:
        rec.warp_stall(W.sm, W.g, c0, x, reason)

so disabled tracing costs one bool test on the hot path. Two implementations:

* :class:`NullRecorder` -- ``enabled = False``, every method a no-op, :meth:`events` empty.
* :class:`TraceRecorder` -- buffers events as plain tuples in one list per kind (compact, append-only),
  filtered at record time by a cycle ``window`` ``(t0, t1)`` (events overlapping ``[t0, t1)`` are kept, unclipped)
  and an SM set ``sms``; stops after ``max_events`` (``truncated`` / ``dropped`` say so).

All times are SM cycles (ints; floats are accepted and kept). Intervals are half-open ``[t0, t1)``: a stall
charged for cycles ``c0 .. x-1`` is ``warp_stall(sm, g, c0, x, reason)``; an instruction issued at ``tt``
occupying ``c`` issue slots is ``warp_issue(sm, g, tt, c)``. Recording is deterministic: the tables keep call
order and :meth:`TraceRecorder.events` sorts them by time with total-order keys.

Event kinds (field names in :data:`FIELDS`; ``events().frame(kind)`` gives a DataFrame)::

    issue       sm, gwarp, t0, t1                  merged runs of issue cycles of one warp
    stall       sm, gwarp, t0, t1, reason          reason: Nsight name (str) or index into reason_names
    tma         sm, txn, t_issue, t_admit, t_done, nbytes, store, gwarp
    mbar_phase  sm, key, phase, t                  sm -1: resolved from key >> 32 (the CTA) and the cta table
    mbar_wait   sm, gwarp, key, t0, t1
    tensor      sm, kind, unit, t0, t1, flops      kind "wgmma" | "mma_sync" | "tcgen05"; unit: warp / group key
    traffic     level, sm, t0, t1, nbytes, write   a bandwidth-server reservation ("hbm", "l2", "xbar", ...)
    counter     name, sm, t, value                 sampled level (queue depth ...); sm -1 = GPU-wide
    cta         sm, cta, t0, t1                    launch .. retire

This module imports nothing else of warpgraph (core layer).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Protocol, Sequence, runtime_checkable

__all__ = ["EventRecorder", "NullRecorder", "TraceRecorder", "TraceEvents", "FIELDS", "NULL_RECORDER"]

#: field names of the tuples of each event kind (order = tuple order)
FIELDS: dict[str, tuple[str, ...]] = {
    "issue": ("sm", "gwarp", "t0", "t1"),
    "stall": ("sm", "gwarp", "t0", "t1", "reason"),
    "tma": ("sm", "txn", "t_issue", "t_admit", "t_done", "nbytes", "store", "gwarp"),
    "mbar_phase": ("sm", "key", "phase", "t"),
    "mbar_wait": ("sm", "gwarp", "key", "t0", "t1"),
    "tensor": ("sm", "kind", "unit", "t0", "t1", "flops"),
    "traffic": ("level", "sm", "t0", "t1", "nbytes", "write"),
    "counter": ("name", "sm", "t", "value"),
    "cta": ("sm", "cta", "t0", "t1"),
}

# sort keys (numeric fields only, then call order) -> deterministic, no comparisons of mixed types
_SORT = {
    "issue": lambda e: (e[2], e[0], e[1], e[3]),
    "stall": lambda e: (e[2], e[0], e[1], e[3]),
    "tma": lambda e: (e[2], e[0], e[1]),
    "mbar_phase": lambda e: (e[3], e[0], e[1], e[2]),
    "mbar_wait": lambda e: (e[3], e[0], e[1], e[2], e[4]),
    "tensor": lambda e: (e[3], e[0], e[4], e[5]),
    "traffic": lambda e: (e[2], e[1], e[3], e[4]),
    "counter": lambda e: (e[2], e[1]),
    "cta": lambda e: (e[2], e[0], e[1], e[3]),
}


@runtime_checkable
class EventRecorder(Protocol):
    """What the timing model calls (all times SM cycles). Check ``enabled`` before calling on hot paths."""

    enabled: bool

    def begin_launch(self, *, name: str = "", n_ctas: int = 0, warps_per_cta: int = 0, n_sms: int = 0,
                     subpartitions: int = 4, clock_mhz: float | None = None,
                     reason_names: Sequence[str] | None = None, **extra: Any) -> None: ...
    def warp_issue(self, sm: int, gwarp: int, t: int, cycles: int = 1) -> None: ...
    def warp_active(self, sm: int, gwarp: int, t0: int, t1: int) -> None: ...
    def warp_stall(self, sm: int, gwarp: int, t0: int, t1: int, reason: int | str) -> None: ...
    def warp_exit(self, sm: int, gwarp: int, t: int) -> None: ...
    def tma_transaction(self, sm: int, txn_id: int | None, t_issue: int, t_admit: int, t_done: int,
                        nbytes: int, store: bool, gwarp: int = -1) -> None: ...
    def mbarrier_phase(self, sm: int, key: int, phase: int, t_complete: int) -> None: ...
    def mbarrier_wait(self, sm: int, gwarp: int, key: int, t0: int, t1: int) -> None: ...
    def tensor_op(self, sm: int, kind: str, gwarp_or_group: Any, t0: int, t1: int, flops: int) -> None: ...
    def traffic(self, level: str, t0: float, t1: float, nbytes: int, *, sm: int = -1, write: bool = False) -> None: ...
    def counter(self, name: str, t: int, value: float, *, sm: int = -1) -> None: ...
    def cta(self, sm: int, cta: int, t_launch: int, t_done: int) -> None: ...
    def finish(self, t_end: int | None = None) -> None: ...
    def events(self) -> "TraceEvents": ...


@dataclass
class TraceEvents:
    """What a recorder collected: ``tables[kind]`` = list of tuples (fields in :data:`FIELDS`), time-sorted."""

    tables: dict[str, list[tuple]]
    meta: dict[str, Any] = field(default_factory=dict)
    window: tuple[float, float] | None = None
    sms: frozenset[int] | None = None
    truncated: bool = False
    dropped: int = 0

    def __getitem__(self, kind: str) -> list[tuple]:
        return self.tables[kind]

    def __len__(self) -> int:
        return sum(len(v) for v in self.tables.values())

    def count(self) -> dict[str, int]:
        return {k: len(v) for k, v in self.tables.items()}

    def frame(self, kind: str):
        """One kind as a pandas DataFrame (columns = :data:`FIELDS` [kind])."""
        import pandas as pd

        return pd.DataFrame.from_records(self.tables[kind], columns=list(FIELDS[kind]))

    def reason_name(self, reason) -> str:
        """Stall reason as a name (ints are looked up in ``meta['reason_names']``)."""
        if isinstance(reason, str):
            return reason
        names = self.meta.get("reason_names")
        if names is not None and 0 <= int(reason) < len(names):
            return str(names[int(reason)])
        return f"reason{int(reason)}"

    def cta_sm(self) -> dict[int, int]:
        """CTA -> SM from the cta table (last placement wins)."""
        return {c: s for s, c, _t0, _t1 in self.tables.get("cta", ())}

    def t_end(self) -> float:
        """Latest end time of any event (0 if none)."""
        end = 0
        for kind, rows in self.tables.items():
            if not rows:
                continue
            if kind in ("mbar_phase", "counter"):
                i = FIELDS[kind].index("t")
            elif kind == "tma":
                i = 4
            else:
                i = FIELDS[kind].index("t1")
            m = max(r[i] for r in rows)
            if m > end:
                end = m
        return end


def _empty_tables() -> dict[str, list[tuple]]:
    return {k: [] for k in FIELDS}


class NullRecorder:
    """Tracing off: ``enabled`` is False and every method does nothing."""

    __slots__ = ()
    enabled = False

    def begin_launch(self, **kw) -> None:
        pass

    def warp_issue(self, sm, gwarp, t, cycles=1) -> None:
        pass

    def warp_active(self, sm, gwarp, t0, t1) -> None:
        pass

    def warp_stall(self, sm, gwarp, t0, t1, reason) -> None:
        pass

    def warp_exit(self, sm, gwarp, t) -> None:
        pass

    def tma_transaction(self, sm, txn_id, t_issue, t_admit, t_done, nbytes, store, gwarp=-1) -> None:
        pass

    def mbarrier_phase(self, sm, key, phase, t_complete) -> None:
        pass

    def mbarrier_wait(self, sm, gwarp, key, t0, t1) -> None:
        pass

    def tensor_op(self, sm, kind, gwarp_or_group, t0, t1, flops) -> None:
        pass

    def traffic(self, level, t0, t1, nbytes, *, sm=-1, write=False) -> None:
        pass

    def counter(self, name, t, value, *, sm=-1) -> None:
        pass

    def cta(self, sm, cta, t_launch, t_done) -> None:
        pass

    def finish(self, t_end=None) -> None:
        pass

    def events(self) -> TraceEvents:
        return TraceEvents(_empty_tables())


#: a shared instance (stateless)
NULL_RECORDER = NullRecorder()


class TraceRecorder:
    """Buffers events (see module docstring).

    ``window``: ``(t0, t1)`` cycles; events that do not overlap ``[t0, t1)`` (instants: ``t`` outside it) are
    dropped at record time. ``sms``: SMs to keep (events with ``sm == -1`` -- GPU-wide counters/traffic, and
    mbarrier phases whose SM is resolved later -- are kept). ``max_events``: total cap; later events are counted
    in ``dropped``. ``coarsen_cycles``: issue runs of one warp merge across gaps of at most this many cycles and
    stalls shorter than or equal to it are not recorded (0 = exact; use e.g. 8 to shrink traces of long runs;
    then stall slices no longer sum to the stall counters).
    """

    enabled = True

    def __init__(self, window: tuple[float, float] | None = None, sms: Iterable[int] | None = None,
                 max_events: int = 2_000_000, *, coarsen_cycles: int = 0,
                 reason_names: Sequence[str] | None = None):
        if window is not None:
            w0, w1 = window
            if w1 <= w0:
                raise ValueError(f"trace window {window!r}: end must be after start")
            window = (w0, w1)
        self.window = window
        self.sms = frozenset(int(s) for s in sms) if sms is not None else None
        self.max_events = int(max_events)
        self.coarsen = int(coarsen_cycles)
        self.meta: dict[str, Any] = {}
        if reason_names is not None:
            self.meta["reason_names"] = tuple(reason_names)
        self.tables = _empty_tables()
        self.n = 0
        self.dropped = 0
        self._runs: dict[int, list] = {}  # gwarp -> [sm, t0, t1] open issue run
        self._txn = 0

    # -- filtering ---------------------------------------------------------------------------------------
    def _keep(self, sm, t0, t1) -> bool:
        if self.sms is not None and sm != -1 and sm not in self.sms:
            return False
        w = self.window
        if w is not None and (t1 <= w[0] or t0 >= w[1]):
            # zero-length events at t0 inside the window are kept
            if not (t0 == t1 and w[0] <= t0 < w[1]):
                return False
        if self.n >= self.max_events:
            self.dropped += 1
            return False
        self.n += 1
        return True

    def _keep_instant(self, sm, t) -> bool:
        if self.sms is not None and sm != -1 and sm not in self.sms:
            return False
        w = self.window
        if w is not None and not (w[0] <= t < w[1]):
            return False
        if self.n >= self.max_events:
            self.dropped += 1
            return False
        self.n += 1
        return True

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    # -- launch ------------------------------------------------------------------------------------------
    def begin_launch(self, *, name: str = "", n_ctas: int = 0, warps_per_cta: int = 0, n_sms: int = 0,
                     subpartitions: int = 4, clock_mhz: float | None = None,
                     reason_names: Sequence[str] | None = None, **extra: Any) -> None:
        self.meta.update(name=name, n_ctas=int(n_ctas), warps_per_cta=int(warps_per_cta), n_sms=int(n_sms),
                         subpartitions=int(subpartitions), clock_mhz=clock_mhz, **extra)
        if reason_names is not None:
            self.meta["reason_names"] = tuple(reason_names)

    # -- warps -------------------------------------------------------------------------------------------
    def _flush(self, g: int) -> None:
        r = self._runs.pop(g, None)
        if r is not None and self._keep(r[0], r[1], r[2]):
            self.tables["issue"].append((r[0], g, r[1], r[2]))

    def warp_issue(self, sm: int, gwarp: int, t: int, cycles: int = 1) -> None:
        """``cycles`` issue slots starting at ``t``; consecutive issues of one warp merge into one run."""
        if cycles <= 0:
            return
        r = self._runs.get(gwarp)
        if r is not None:
            if r[0] == sm and t <= r[2] + self.coarsen:
                e = t + cycles
                if e > r[2]:
                    r[2] = e
                return
            self._flush(gwarp)
        self._runs[gwarp] = [sm, t, t + cycles]

    def warp_active(self, sm: int, gwarp: int, t0: int, t1: int) -> None:
        """A run of issue cycles ``[t0, t1)`` already merged by the caller."""
        if t1 > t0:
            self.warp_issue(sm, gwarp, t0, t1 - t0)

    def warp_stall(self, sm: int, gwarp: int, t0: int, t1: int, reason) -> None:
        if t1 - t0 <= self.coarsen or t1 <= t0:
            return
        if gwarp in self._runs:
            self._flush(gwarp)
        if self._keep(sm, t0, t1):
            self.tables["stall"].append((sm, gwarp, t0, t1, reason))

    def warp_exit(self, sm: int, gwarp: int, t: int) -> None:
        self._flush(gwarp)

    # -- units -------------------------------------------------------------------------------------------
    def tma_transaction(self, sm: int, txn_id: int | None, t_issue: int, t_admit: int, t_done: int,
                        nbytes: int, store: bool, gwarp: int = -1) -> None:
        """One cp.async.bulk(.tensor): issued by the warp at ``t_issue``, admitted to the SM's active set at
        ``t_admit`` (>= t_issue; the gap is queueing / back-pressure), complete at ``t_done``. ``txn_id``
        None: numbered by the recorder (in call order)."""
        if txn_id is None:
            txn_id = self._txn
        self._txn = max(self._txn, int(txn_id)) + 1
        if self._keep(sm, t_issue, t_done):
            self.tables["tma"].append((sm, int(txn_id), t_issue, t_admit, t_done, int(nbytes), bool(store),
                                       int(gwarp)))

    def mbarrier_phase(self, sm: int, key: int, phase: int, t_complete: int) -> None:
        """Phase ``phase`` (ordinal) of barrier ``key`` completed at ``t_complete``; ``sm`` -1 if unknown."""
        if self._keep_instant(sm, t_complete):
            self.tables["mbar_phase"].append((sm, int(key), int(phase), t_complete))

    def mbarrier_wait(self, sm: int, gwarp: int, key: int, t0: int, t1: int) -> None:
        """A warp's wait (first poll start .. success) on barrier ``key``."""
        if self._keep(sm, t0, t1):
            self.tables["mbar_wait"].append((sm, gwarp, int(key), t0, t1))

    def tensor_op(self, sm: int, kind: str, gwarp_or_group, t0: int, t1: int, flops: int) -> None:
        """A tensor-core operation in flight over ``[t0, t1)`` (issue .. result/completion)."""
        if self._keep(sm, t0, t1):
            unit = gwarp_or_group if isinstance(gwarp_or_group, (int, str)) else tuple(gwarp_or_group)
            self.tables["tensor"].append((sm, kind, unit, t0, t1, int(flops)))

    def traffic(self, level: str, t0: float, t1: float, nbytes: int, *, sm: int = -1, write: bool = False) -> None:
        """``nbytes`` served by a bandwidth server of ``level`` ("hbm", "l2", ...) over ``[t0, t1)``."""
        if self._keep(sm, t0, t1 if t1 > t0 else t0):
            self.tables["traffic"].append((level, sm, t0, t1, int(nbytes), bool(write)))

    def counter(self, name: str, t: int, value: float, *, sm: int = -1) -> None:
        """A sampled level that holds from ``t`` until the next sample of ``name`` (queue depth ...)."""
        if self._keep_instant(sm, t):
            self.tables["counter"].append((name, sm, t, value))

    def cta(self, sm: int, cta: int, t_launch: int, t_done: int) -> None:
        if self._keep(sm, t_launch, t_done):
            self.tables["cta"].append((sm, int(cta), t_launch, t_done))

    # -- results -----------------------------------------------------------------------------------------
    def finish(self, t_end: int | None = None) -> None:
        """Close the open issue runs (call once at the end of the run)."""
        for g in sorted(self._runs):
            self._flush(g)
        if t_end is not None:
            self.meta["t_end"] = t_end

    def events(self) -> TraceEvents:
        """Time-sorted copy of everything recorded (open issue runs included, not closed)."""
        tables = {k: list(v) for k, v in self.tables.items()}
        for g in sorted(self._runs):
            sm, t0, t1 = self._runs[g]
            w = self.window
            if (self.sms is None or sm in self.sms) and (w is None or not (t1 <= w[0] or t0 >= w[1])):
                tables["issue"].append((sm, g, t0, t1))
        for k, rows in tables.items():
            rows.sort(key=_SORT[k])
        return TraceEvents(tables, dict(self.meta), self.window, self.sms, self.dropped > 0, self.dropped)

"""Hierarchical statistics: ``Stats`` holds one :class:`StatGroup` per component name (``sm17.tma``), each with
counters and accumulators; ``to_frame()`` gives a pandas DataFrame ``(component, stat, value)`` in a
deterministic (natural) order. Modelled on SST Accumulator statistics and gem5 stat groups
(design-anchors.md §1, §2, §8.4). Hot paths should bump plain ints and publish them at the end, or use
:meth:`StatGroup.inc`, which is one dict update.
"""
from __future__ import annotations

import functools
import re
from typing import Iterable, Iterator

__all__ = ["Accumulator", "StatGroup", "Stats", "natural_key"]

_NUM = re.compile(r"(\d+)")


@functools.lru_cache(maxsize=1 << 16)
def natural_key(name: str) -> tuple:
    """Sort key that orders ``sm2`` before ``sm10`` (numbers compare as numbers). Cached: the statistics table
    sorts the same few hundred stat names once per component (~11 k calls per launch)."""
    return tuple(int(p) if p.isdigit() else p for p in _NUM.split(name))


class Accumulator:
    """Count, sum, min, max of sampled values (SST AccumulatorStatistic)."""

    __slots__ = ("count", "total", "min", "max")

    def __init__(self):
        self.count = 0
        self.total = 0
        self.min = None
        self.max = None

    def add(self, v) -> None:
        self.count += 1
        self.total += v
        if self.min is None or v < self.min:
            self.min = v
        if self.max is None or v > self.max:
            self.max = v

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0

    def items(self) -> Iterator[tuple[str, float]]:
        yield "count", self.count
        yield "sum", self.total
        yield "mean", self.mean
        yield "min", self.min if self.min is not None else 0
        yield "max", self.max if self.max is not None else 0


class StatGroup:
    """The stats of one component: named counters (numbers) and accumulators."""

    __slots__ = ("name", "counters", "accumulators")

    def __init__(self, name: str):
        self.name = name
        self.counters: dict[str, float] = {}
        self.accumulators: dict[str, Accumulator] = {}

    def inc(self, stat: str, n=1) -> None:
        c = self.counters
        c[stat] = c.get(stat, 0) + n

    def set(self, stat: str, value) -> None:
        self.counters[stat] = value

    def sample(self, stat: str, value) -> None:
        acc = self.accumulators.get(stat)
        if acc is None:
            acc = self.accumulators[stat] = Accumulator()
        acc.add(value)

    def get(self, stat: str, default=0):
        return self.counters.get(stat, default)

    def update(self, values: dict) -> None:
        """Add a dict of counters (e.g. a unit's ``stats()``) into this group."""
        for k, v in values.items():
            self.inc(k, v)

    def rows(self) -> Iterator[tuple[str, float]]:
        """``(stat, value)`` pairs; an accumulator ``lat`` yields ``lat.count``, ``lat.sum``, ``lat.mean``..."""
        for k in sorted(self.counters, key=natural_key):
            yield k, self.counters[k]
        for k in sorted(self.accumulators, key=natural_key):
            for sub, v in self.accumulators[k].items():
                yield f"{k}.{sub}", v


class Stats:
    """All stat groups of a simulation, by hierarchical component name."""

    def __init__(self):
        self._groups: dict[str, StatGroup] = {}
        self.info: dict[tuple[str, str], tuple[str, str]] = {}   # (component, stat) -> (unit, description)

    def annotate(self, component: str, stat: str, unit: str, description: str) -> None:
        """Unit and description of a statistic (``to_frame(annotated=True)`` adds them as columns)."""
        self.info[(component, stat)] = (unit, description)

    def group(self, component: str) -> StatGroup:
        g = self._groups.get(component)
        if g is None:
            g = self._groups[component] = StatGroup(component)
        return g

    __getitem__ = group

    def inc(self, component: str, stat: str, n=1) -> None:
        self.group(component).inc(stat, n)

    def set(self, component: str, stat: str, value) -> None:
        self.group(component).set(stat, value)

    def add_dict(self, component: str, values: dict) -> None:
        """Merge a possibly nested dict (``{"l2": {"hits": 3}}``) under ``component`` (dots join levels)."""
        for k, v in values.items():
            if isinstance(v, dict):
                self.add_dict(f"{component}.{k}" if component else str(k), v)
            else:
                self.group(component).inc(str(k), v)

    def components(self) -> list[str]:
        return sorted(self._groups, key=natural_key)

    def rows(self) -> Iterator[tuple[str, str, float]]:
        for c in self.components():
            for s, v in self._groups[c].rows():
                yield c, s, v

    def total(self, stat: str, prefix: str = "") -> float:
        """Sum of ``stat`` over components whose name starts with ``prefix``."""
        return sum(g.counters.get(stat, 0) for n, g in self._groups.items() if n.startswith(prefix))

    def to_dict(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for c, s, v in self.rows():
            out.setdefault(c, {})[s] = v
        return out

    def to_frame(self, annotated: bool = False):
        """pandas DataFrame with columns ``component, stat, value`` (deterministic row order); with ``annotated``
        also ``unit, description`` (empty where not annotated)."""
        import pandas as pd

        if not annotated:
            return pd.DataFrame(list(self.rows()), columns=["component", "stat", "value"])
        info = self.info
        rows = [(c, s, v) + info.get((c, s), ("", "")) for c, s, v in self.rows()]
        return pd.DataFrame(rows, columns=["component", "stat", "value", "unit", "description"])

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, str, float]]) -> "Stats":
        st = cls()
        for c, s, v in rows:
            st.set(c, s, v)
        return st

    def __len__(self) -> int:
        return len(self._groups)

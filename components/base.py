"""The small base class of every component placed in the architecture graph.

A component has a hierarchical ``name`` (``sm17.tma``), the ``params`` of its YAML section (a pydantic model
or dict), the whole ``spec`` (ArchSpec) and a :class:`~warpgraph.core.stats.StatGroup`. Timing models with
other constructors (e.g. one ``TmaUnit(spec, engine, mem, mbar)`` for all SMs, Contract 6) can still register;
the builder then places a :class:`Slot` describing them (see topologies/builder.py).
"""
from __future__ import annotations

from typing import Any

from warpgraph.core.stats import StatGroup

__all__ = ["Component", "Slot"]


class Component:
    """Base class: ``Component(name, params=None, spec=None)``; override :meth:`from_spec` if needed."""

    role: str = ""
    kind: str = "default"

    def __init__(self, name: str, params: Any = None, spec: Any = None):
        self.name = name
        self.params = params
        self.spec = spec
        self.stats = StatGroup(name)

    @classmethod
    def from_spec(cls, name: str, params: Any, spec: Any) -> "Component":
        """How the graph builder instantiates a registered component."""
        return cls(name, params, spec)

    def param(self, key: str, default=None):
        """A parameter of this component's YAML section (attribute of a model, or key of a dict)."""
        p = self.params
        if p is None:
            return default
        if isinstance(p, dict):
            return p.get(key, default)
        return getattr(p, key, default)

    def describe(self) -> dict:
        return {"name": self.name, "role": self.role, "kind": self.kind, "class": type(self).__qualname__}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} ({self.role}/{self.kind})>"


class Slot(Component):
    """Stands in the graph for a registered class that is not a :class:`Component` (its constructor takes
    the engine and other units); the runner instantiates ``cls`` itself."""

    def __init__(self, name: str, params: Any, spec: Any, cls: type, role: str, kind: str):
        super().__init__(name, params, spec)
        self.cls = cls
        self.role = role
        self.kind = kind

    def describe(self) -> dict:
        d = super().describe()
        d["class"] = f"{self.cls.__module__}.{self.cls.__qualname__}"
        return d

"""Core: errors, the shared event-driven clock (engine), statistics and the component registry.

Imports nothing else of warpgraph (layering, docs/design.md)."""
from warpgraph.core.engine import ClockDomain, CycleLimitExceeded, Engine
from warpgraph.core.errors import PTXError, RecordError, SimulationError, SpecError, UserError
from warpgraph.core.registry import get_component, known_kinds, known_roles, register_component
from warpgraph.core.stats import Accumulator, StatGroup, Stats

__all__ = [
    "ClockDomain", "CycleLimitExceeded", "Engine", "UserError", "SpecError", "PTXError", "RecordError",
    "SimulationError", "register_component", "get_component", "known_kinds", "known_roles", "Stats",
    "StatGroup", "Accumulator",
]

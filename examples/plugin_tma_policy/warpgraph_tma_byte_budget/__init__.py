"""A TMA admission policy as a warpgraph plugin: admit a transaction only while the SM's active transactions hold
fewer than ``inflight_bytes_max`` bytes (a byte budget, e.g. a response buffer), instead of the default's
``admission_depth`` transactions whatever their size.

One file: the parameter section (a pydantic model whose ``kind`` names the variant) and the model (a subclass of
the default TMA unit overriding its two admission hooks), joined by one ``register_component`` call, which also
adds the section to the architecture schema. Select it with ``tma: {kind: byte_budget}`` in a YAML (or
``--set tma.kind=byte_budget``). The entry point in pyproject.toml makes warpgraph import this module before it
validates any architecture.
"""
from __future__ import annotations

from heapq import heappop, heappush
from typing import Literal

from pydantic import Field

from warpgraph.components.tma import TmaUnit
from warpgraph.core.registry import register_component
from warpgraph.topologies.schema import DefaultTma


class ByteBudgetTmaSpec(DefaultTma):
    """The default TMA's parameters plus the byte budget."""

    kind: Literal["byte_budget"] = "byte_budget"
    inflight_bytes_max: int = Field(32768, gt=0, description="bytes of active TMA transactions per SM (a "
                                    "transaction larger than the budget is admitted alone)")


@register_component(role="tma", kind="byte_budget", spec=ByteBudgetTmaSpec)
class ByteBudgetTma(TmaUnit):
    """TMA unit whose admission waits until the SM's active bytes fit the budget."""

    def __init__(self, spec, engine, mem, mbar):
        super().__init__(spec, engine, mem, mbar)
        self.budget = int(self.params.inflight_bytes_max)
        self.held = [[] for _ in self.active]      # per SM: heap of (completion, bytes)
        self.held_bytes = [0] * len(self.active)

    def admit(self, sm: int, warp: int, t: int, nbytes: int) -> int:
        act = self.active[sm]                     # the interface's outstanding completions (a MEMBAR.GPU waits
        while act and act[0] <= t:                # for them): drop those done by now
            heappop(act)
        held = self.held[sm]
        while held and held[0][0] <= t:
            self.held_bytes[sm] -= heappop(held)[1]
        while held and self.held_bytes[sm] + nbytes > self.budget:
            c, b = heappop(held)
            self.held_bytes[sm] -= b
            if c > t:
                self.admission_stall_cycles += c - t
                t = c
        return t

    def admitted(self, sm: int, warp: int, t_done: int, nbytes: int) -> None:
        super().admitted(sm, warp, t_done, nbytes)    # books it in ``active`` (TmaModel: what a MEMBAR waits for)
        heappush(self.held[sm], (t_done, nbytes))
        self.held_bytes[sm] += nbytes

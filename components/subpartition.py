"""Sub-partition (warp scheduler quadrant) of an SM and its warp-scheduler issue policy.

The SM core (components/sm_core.py) keeps the per-sub-partition issue-slot and pipe state in arrays for speed;
these components are what the graph selects: ``subpartition.kind`` the sub-partition model and
``subpartition.scheduler.policy`` the warp-scheduler variant (role ``warp_scheduler``), whose ``policy`` the core
applies. GTO: greedy-then-oldest (GPGPU-Sim ``gto``: keep issuing from the last warp until it stalls, then the
oldest ready); LRR: loose round-robin over ready warps (GPGPU-Sim ``lrr``)."""
from __future__ import annotations

from warpgraph.components.base import Component
from warpgraph.core.registry import get_component, register_component

__all__ = ["Subpartition", "GtoWarpScheduler", "LrrWarpScheduler"]


class _WarpScheduler(Component):
    policy = ""


@register_component(role="warp_scheduler", kind="gto")
class GtoWarpScheduler(_WarpScheduler):
    """Greedy-then-oldest issue."""

    policy = "gto"


@register_component(role="warp_scheduler", kind="lrr")
class LrrWarpScheduler(_WarpScheduler):
    """Loose round-robin issue."""

    policy = "lrr"


@register_component(role="subpartition", kind="default")
class Subpartition(Component):
    """One warp scheduler with its dispatch unit and pipes (modelled inside the SM core's arrays); ``scheduler``
    is the warp-scheduler component of ``subpartition.scheduler``."""

    def __init__(self, name: str, params=None, spec=None, scheduler=None):
        super().__init__(name, params, spec)
        self.scheduler = scheduler
        self.issue_per_cycle = int(params.issue_per_cycle) if params is not None else 1

    @classmethod
    def from_spec(cls, name: str, params, spec) -> "Subpartition":
        """With the warp-scheduler component ``subpartition.scheduler.policy`` selects (registry role
        ``warp_scheduler``)."""
        pol = params.scheduler.policy
        sched = get_component("warp_scheduler", pol, location=f"{getattr(spec, 'name', '?')} "
                              "(subpartition.scheduler.policy)")(f"{name}.scheduler", params.scheduler, spec)
        return cls(name, params, spec, scheduler=sched)

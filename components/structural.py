"""Structural roles of the graph: ``gpc`` and ``cpc`` group SMs (paper III-D: GPC -> CPCs of 6 SM slots -> SMs);
they have no timing of their own (the SM-to-SM traffic they carry is modelled by the DSM fabric over the GX
planes, components/dsm.py; the near/far L2 partition of a GPC by components/memory_parts.py). Also the SM
placement helpers used by the builder and the models."""
from __future__ import annotations

from warpgraph.components.base import Component
from warpgraph.core.registry import register_component

__all__ = ["StructuralComponent", "Gpc", "Cpc", "sms_per_gpc", "gpc_of_sms"]


def sms_per_gpc(fabric, n_sm: int) -> list[int]:
    """Enabled SMs per GPC: ``fabric.sms_per_gpc``, else ``n_sm`` spread evenly over ``fabric.gpcs``."""
    per = getattr(fabric, "sms_per_gpc", None)
    if per:
        return list(per)
    g = int(getattr(fabric, "gpcs", 1) or 1)
    return [n_sm // g + (1 if i < n_sm % g else 0) for i in range(g)]


def gpc_of_sms(fabric, n_sm: int) -> list[int]:
    """GPC of each SM id (ids are GPC-major, as in topologies.builder.sm_layout); SMs beyond the listed ones
    belong to the last GPC."""
    per = sms_per_gpc(fabric, n_sm)
    out = [i for i, n in enumerate(per) for _ in range(n)]
    return (out + [len(per) - 1] * n_sm)[:n_sm]


class StructuralComponent(Component):
    """A node that only groups others; it has no timing of its own."""


@register_component(role="gpc", kind="default")
class Gpc(StructuralComponent):
    """Graphics processing cluster: its CPCs, its SMs' near L2 partition (node attribute ``near_partition``)."""


@register_component(role="cpc", kind="default")
class Cpc(StructuralComponent):
    """CPC: up to ``fabric.sms_per_cpc`` SMs sharing ``dsm_links_per_cpc`` links to each GX plane."""

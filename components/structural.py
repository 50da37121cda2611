"""Default models for pure-structure roles (``gpc``, ``cpc``, ``sm``, ``xbar``, ``gx_plane``, ``l1``,
``cta_scheduler``) and generic fallbacks for the timing roles (``subpartition``, ``tma``, ``mbarrier``,
``tensor_core``, ``shared_memory``, ``l2_slice``, ``hbm_channel``) so the graph builds before (or without) the
timing models. Every registration here is ``fallback=True``: a real model registered for the same
``(role, kind)`` in another module replaces it (core/registry.py)."""
from __future__ import annotations

from warpgraph.components.base import Component
from warpgraph.core.registry import register_component

__all__ = ["StructuralComponent", "GenericUnit", "FALLBACKS", "sms_per_gpc", "gpc_of_sms"]


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
    """A node that only groups others (GPC, CPC, SM, crossbar, GX plane); it has no timing of its own."""


class GenericUnit(Component):
    """Placeholder for a timing unit whose model is not registered (yet); it carries its params only."""


_STRUCTURE = ["gpc", "cpc", "sm", "xbar", "gx_plane"]
_UNITS = {
    "l1": ["default"],
    "cta_scheduler": ["round_robin"],
    "subpartition": ["default"],
    "tma": ["default"],
    "mbarrier": ["default"],
    "tensor_core": ["mma_sync", "wgmma", "tcgen05"],
    "shared_memory": ["default"],
    "l2_slice": ["default"],
    "hbm_channel": ["default"],
}


def _make(role: str, kind: str, base: type) -> type:
    name = "".join(p.capitalize() for p in f"{role}_{kind}".split("_")) + ("" if base is StructuralComponent else "Fallback")
    cls = type(name, (base,), {"role": role, "kind": kind, "__module__": __name__, "__doc__": base.__doc__})
    cls.__qualname__ = name
    return register_component(role=role, kind=kind, fallback=True)(cls)


FALLBACKS: dict[tuple[str, str], type] = {}
for _role in _STRUCTURE:
    FALLBACKS[(_role, "default")] = _make(_role, "default", StructuralComponent)
for _role, _kinds in _UNITS.items():
    for _kind in _kinds:
        FALLBACKS[(_role, _kind)] = _make(_role, _kind, GenericUnit)

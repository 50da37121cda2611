"""The timing machine of a run, built from the component graph (Contract 4 -> Contract 6).

``build_machine(spec, engine)`` builds ``topologies.build_graph(spec)``, resolves each role's class through the
registry from the ``(role, kind)`` of its nodes, instantiates it with its validated spec section and joins the
objects along the graph's links: ``sm*.l1 -> xbar -> l2.s* -> hbm.c*`` compose the memory path (role ``memory``),
``sm*.tma -> xbar`` gives the TMA its memory path, ``sm*.tma`` / ``sm*.mbarrier`` of one SM the TMA its barrier
unit, ``gpc*.cpc* -> gx*`` the DSM fabric its planes, ``cta_scheduler -> sm*`` the dispatcher, ``sm*.sp*`` the
warp-scheduler policy. One object models all nodes of a role (their state is indexed by SM: the hot path stays
array-based); nodes of one role must therefore select one kind. Every object is checked against its role's
interface (components/interfaces.py): no stand-ins, no silent fallbacks.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from warpgraph.components.interfaces import check_interface
from warpgraph.core.errors import SpecError
from warpgraph.core.registry import get_component
from warpgraph.topologies.builder import role_kind

__all__ = ["Machine", "build_machine", "graph_of", "UNIT_ROLES"]

#: the Contract-6 units the SM core calls, in the order run_timing passes them
UNIT_ROLES = ("memory", "shared_memory", "tma", "mbarrier", "tensor_core")

_GRAPHS: dict[str, object] = {}


def graph_of(spec):
    """``build_graph(spec)``, cached by the spec's content (the graph's node components are stateless
    descriptors; the timing objects are built per run by :func:`build_machine`)."""
    from warpgraph.topologies import build_graph

    key = spec.model_dump_json()
    g = _GRAPHS.get(key)
    if g is None:
        if len(_GRAPHS) >= 8:
            _GRAPHS.pop(next(iter(_GRAPHS)))
        g = _GRAPHS[key] = build_graph(spec)
    return g


@dataclass
class Machine:
    """The instantiated components of one run: ``units`` (role -> object), the classes of the per-launch roles
    (``sm``, ``cta_scheduler``), the warp-scheduler policy, the graph."""

    units: dict
    sm_class: type
    cta_scheduler_class: type
    policy: str
    graph: object = None
    parts: dict = field(default_factory=dict)    # memory parts and fabric: l1, xbar, l2_slice, hbm_channel, dsm

    def names(self) -> dict:
        return {r: type(u).__name__ for r, u in self.units.items()}


def _kind_of(g, role: str) -> tuple[str, list[str]]:
    idx = g.graph.get("nodes_by_role")
    nodes = list(idx.get(role, ())) if idx is not None else [n for n, d in g.nodes(data=True) if d["role"] == role]
    kinds = sorted({g.nodes[n]["kind"] for n in nodes})
    if len(kinds) > 1:
        raise SpecError(f"the {role} nodes select different kinds ({', '.join(kinds)})",
                        hint=f"one {role} kind per GPU: one model object serves every {role} node")
    if not kinds:
        raise SpecError(f"the graph has no {role} node", hint=f"a spec with at least one {role}")
    return kinds[0], nodes


def _cls(g, role: str, where: str):
    kind, nodes = _kind_of(g, role)
    cls = get_component(role, kind, location=f"{g.graph.get('name')} ({where})")
    check_interface(role, kind, cls, location=f"{g.graph.get('name')} ({where})")
    return kind, cls, nodes


def _linked(g, src: str, role: str) -> list[str]:
    return [b for b in g.successors(src) if g.edges[src, b].get("relation") == "link" and g.nodes[b]["role"] == role]


def _checked(role: str, kind: str, obj, where: str):
    check_interface(role, kind, obj, location=where)
    return obj


def build_machine(spec, engine, graph=None) -> Machine:
    """The timing objects of ``spec``'s graph (see module docstring)."""
    g = graph if graph is not None else graph_of(spec)
    name = spec.name
    n_sm = int(spec.sm.count)
    sm_mhz, l2_mhz = float(spec.clocks.sm_mhz), float(spec.clocks.l2_mhz)
    # memory path, along the links sm0.l1 -> xbar -> l2.s* -> hbm.c*
    k_l1, L1, _ = _cls(g, "l1", "l1.kind")
    xb = _linked(g, "sm0.l1", "xbar")
    if not xb:
        raise SpecError("sm0.l1 has no link to a crossbar", location=name)
    k_x, X, _ = _cls(g, "xbar", "fabric (crossbar)")
    slices = _linked(g, xb[0], "l2_slice")
    k_l2, L2, _ = _cls(g, "l2_slice", "l2.kind")
    k_h, H, hnodes = _cls(g, "hbm_channel", "hbm.kind")
    if not slices or not _linked(g, slices[0], "hbm_channel"):
        raise SpecError("the crossbar reaches no L2 slice backed by an HBM channel", location=name)
    l1 = _checked("l1", k_l1, L1(spec.l1, n_sm), f"{name} (l1.kind)")
    xbar = _checked("xbar", k_x, X(spec.fabric, n_sm), f"{name} (fabric)")
    l2 = _checked("l2_slice", k_l2, L2(spec.l2, n_sm, sm_mhz, l2_mhz), f"{name} (l2.kind)")
    if int(getattr(spec.hbm, "channels_enabled", None) or spec.hbm.channels) > spec.hbm.channels:
        raise SpecError(f"hbm.channels_enabled={spec.hbm.channels_enabled} exceeds hbm.channels={spec.hbm.channels}",
                        location=f"{name} (hbm.channels_enabled)", hint=f"at most {spec.hbm.channels}")
    hbm = _checked("hbm_channel", k_h, H(spec.hbm, l2.parts, sm_mhz), f"{name} (hbm.kind)")
    k_mem = role_kind(spec, "memory")
    M = get_component("memory", k_mem, location=f"{name} (components.memory)")
    mem = _checked("memory", k_mem, M(spec, engine, l1=l1, xbar=xbar, l2=l2, hbm=hbm), f"{name} (components.memory)")
    # SM-local units
    k_s, SMEM, _ = _cls(g, "shared_memory", "shared_memory.kind")
    smem = _checked("shared_memory", k_s, SMEM(spec, engine), f"{name} (shared_memory.kind)")
    k_m, MB, _ = _cls(g, "mbarrier", "mbarrier.kind")
    mbar = _checked("mbarrier", k_m, MB(spec, engine), f"{name} (mbarrier.kind)")
    k_t, TM, _ = _cls(g, "tma", "tma.kind")
    if not _linked(g, "sm0.tma", "xbar"):
        raise SpecError("sm0.tma has no link to the crossbar", location=name)
    tma = _checked("tma", k_t, TM(spec, engine, mem, mbar), f"{name} (tma.kind)")
    k_c, TC, _ = _cls(g, "tensor_core", "tensor_core.kind")
    tc = _checked("tensor_core", k_c, TC(spec, engine), f"{name} (tensor_core.kind)")
    tmem = None
    if (g.graph.get("nodes_by_role") or {}).get("tmem"):   # Blackwell: the TMEM of each SM, behind the tensor core
        k_tm, TMM, _ = _cls(g, "tmem", "tensor_core.tmem.kind")
        tmem = _checked("tmem", k_tm, TMM(spec, engine), f"{name} (tensor_core.tmem.kind)")
        tc.tmem = tmem
    # fabric: the DSM fabric over the enabled GX planes
    k_g, GX, gx_nodes = _cls(g, "gx_plane", "fabric (gx planes)")
    planes = [_checked("gx_plane", k_g, GX(spec.fabric, g.nodes[n]["plane"]), f"{name} (fabric)") for n in gx_nodes]
    k_dsm = role_kind(spec, "dsm")
    D = get_component("dsm", k_dsm, location=f"{name} (components.dsm)")
    dsm = _checked("dsm", k_dsm, D(spec, engine, planes=planes), f"{name} (components.dsm)")
    # per-launch roles: the SM core, the CTA scheduler, the warp-scheduler policy of the sub-partitions
    _, SM, _ = _cls(g, "sm", "sm")
    _, CS, _ = _cls(g, "cta_scheduler", "cta_scheduler.kind")
    _cls(g, "gpc", "fabric")
    _cls(g, "cpc", "fabric")
    k_sp, _, sp_nodes = _cls(g, "subpartition", "subpartition.kind")
    sched = g.nodes[sp_nodes[0]]["component"].scheduler
    check_interface("warp_scheduler", sched.kind, sched, location=f"{name} (subpartition.scheduler.policy)")
    units = {"memory": mem, "shared_memory": smem, "tma": tma, "mbarrier": mbar, "tensor_core": tc}
    parts = {"l1": l1, "xbar": xbar, "l2_slice": l2, "hbm_channel": hbm, "dsm": dsm}
    if tmem is not None:
        parts["tmem"] = tmem
    return Machine(units, SM, CS, sched.policy, g, parts)

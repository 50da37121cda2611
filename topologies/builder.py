"""ArchSpec -> ``networkx.DiGraph`` of component instances (Contract 4 of docs/design.md).

Nodes: ``gpc0``, ``gpc0.cpc0``, ``sm17``, ``sm17.sp2``, ``sm17.tma``, ``sm17.mbarrier``, ``sm17.tensor``,
``sm17.smem``, ``sm17.l1``, ``gx0`` (a GX switch plane, shared by all GPCs' CPCs), ``xbar``, ``l2.s31``,
``hbm.c4``, ``cta_scheduler``. Node attributes: ``role``, ``kind``, ``component`` (an instance from the
registry, built with its YAML section as params) plus placement (``gpc``, ``cpc``, ``sm``, ``partition``...).
Edges carry ``relation`` ("contains" | "link" | "dispatch"), ``latency_cycles`` and
``bandwidth_bytes_per_cycle`` (None for containment); ``link`` edges also carry a typed :class:`Link`
(``edge["link"]``). Memory links exist in both directions. runner/machine.py builds the timing model from this
graph: it instantiates each role's registered class (one object models all nodes of a role) and joins them along
the links.
SM placement follows the FlashGPU-sim / patent topology (paper III-D: GPC -> CPCs of 6 SM slots -> SMs).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import networkx as nx

import warpgraph.components  # noqa: F401  (registers the bundled models)
from warpgraph.components.base import Component, Slot
from warpgraph.components.structural import sms_per_gpc
from warpgraph.core.errors import SpecError
from warpgraph.core.registry import get_component
from warpgraph.topologies.schema import ArchSpec

__all__ = ["build_graph", "graph_summary", "sm_layout", "section_roles", "check_component_kinds",
           "to_graphml", "to_dot", "Link"]


@dataclass(frozen=True)
class Link:
    """A typed port-to-port link (SST link / gem5 port pair): one-way latency in SM cycles and bandwidth in bytes
    per SM cycle (None: not a bandwidth limit of its own)."""

    src: str
    dst: str
    latency_cycles: int
    bandwidth_bytes_per_cycle: float | None

# YAML section -> (registry role, how to read its kind)
SECTION_ROLES = {
    "subpartition": "subpartition", "cta_scheduler": "cta_scheduler", "tensor_core": "tensor_core",
    "tma": "tma", "mbarrier": "mbarrier", "shared_memory": "shared_memory", "l1": "l1", "l2": "l2_slice",
    "hbm": "hbm_channel", "subpartition.scheduler": "warp_scheduler",
}


def _section(spec, section: str):
    cur = spec
    for part in section.split("."):
        cur = getattr(cur, part)
    return cur


#: roles whose kind comes from ``ArchSpec.components`` (their sections have no kind of their own)
MAPPED_ROLES = ("sm", "gpc", "cpc", "xbar", "gx_plane", "memory", "dsm")


def role_kind(spec, role: str) -> str:
    """Kind of a role without a section kind (``components: {role: kind}``; default ``default``)."""
    return str((getattr(spec, "components", None) or {}).get(role, "default"))


def section_kind(spec, section: str) -> str:
    """The ``kind`` (``policy`` for the warp scheduler) a section selects."""
    sec = _section(spec, section)
    return str(getattr(sec, "policy" if section == "subpartition.scheduler" else "kind", "default"))


def section_roles() -> dict[str, str]:
    return dict(SECTION_ROLES)


def check_component_kinds(spec: ArchSpec, locate=None) -> None:
    """Every section's ``kind`` must name a registered component (SpecError listing known kinds)."""
    for section, role in SECTION_ROLES.items():
        kind = section_kind(spec, section)
        key = "policy" if section == "subpartition.scheduler" else "kind"
        path = tuple(section.split(".")) + (key,)
        loc = locate(path) if locate else f"{spec.name} ({section}.{key})"
        get_component(role, kind, location=loc)
    for role, kind in (getattr(spec, "components", None) or {}).items():
        loc = locate(("components", role)) if locate else f"{spec.name} (components.{role})"
        if role not in MAPPED_ROLES:
            raise SpecError(f"components.{role}: {role!r} is not a role selected here", location=loc,
                            hint=f"one of: {', '.join(MAPPED_ROLES)} (other roles: their section's kind)")
        get_component(role, kind, location=loc)


def sm_layout(spec: ArchSpec) -> list[tuple[int, int]]:
    """``[(gpc, cpc)]`` per SM id: SMs numbered GPC by GPC, spread evenly over the CPCs of a GPC."""
    f = spec.fabric
    per_gpc = sms_per_gpc(f, spec.sm.count)
    out: list[tuple[int, int]] = []
    for g, n in enumerate(per_gpc):
        for c in range(f.cpcs_per_gpc):
            out += [(g, c)] * (n // f.cpcs_per_gpc + (1 if c < n % f.cpcs_per_gpc else 0))
    return out


def _instantiate(role: str, kind: str, name: str, params: Any, spec: ArchSpec, cache: dict) -> Component:
    key = (role, kind)
    cls = cache.get(key)
    if cls is None:
        cls = cache[key] = get_component(role, kind, location=f"{spec.name} ({role} kind)")
    if isinstance(cls, type) and issubclass(cls, Component):
        return cls.from_spec(name, params, spec)
    if hasattr(cls, "from_spec"):
        return cls.from_spec(name, params, spec)
    return Slot(name, params, spec, cls, role, kind)


def build_graph(spec: ArchSpec) -> nx.DiGraph:
    """The component graph of ``spec``; node and edge counts follow from the spec (h200: 132 SMs x 4 sp)."""
    g = nx.DiGraph(name=spec.name, sm_mhz=spec.clocks.sm_mhz)
    cache: dict = {}
    nodes: list = []   # added in bulk at the end (networkx is several times faster that way)
    edges: list = []
    by_role: dict[str, list[str]] = {}

    def node(name: str, role: str, kind: str, params: Any, **attrs) -> None:
        nodes.append((name, dict(role=role, kind=kind, component=_instantiate(role, kind, name, params, spec, cache),
                                 **attrs)))
        by_role.setdefault(role, []).append(name)

    def link(a: str, b: str, latency: int, bw: float | None, both: bool = True, **attrs) -> None:
        edges.append((a, b, dict(relation="link", latency_cycles=latency, bandwidth_bytes_per_cycle=bw,
                                 link=Link(a, b, latency, bw), **attrs)))
        if both:
            edges.append((b, a, dict(relation="link", latency_cycles=latency, bandwidth_bytes_per_cycle=bw,
                                     link=Link(b, a, latency, bw), **attrs)))

    def contains(a: str, b: str) -> None:
        edges.append((a, b, dict(relation="contains", latency_cycles=0, bandwidth_bytes_per_cycle=None)))

    f, l2, hbm = spec.fabric, spec.l2, spec.hbm
    near = [gi * l2.partitions // f.gpcs for gi in range(f.gpcs)]

    node("cta_scheduler", "cta_scheduler", spec.cta_scheduler.kind, spec.cta_scheduler)
    node("xbar", "xbar", role_kind(spec, "xbar"), f)
    for p in range(f.gx_planes):
        node(f"gx{p}", "gx_plane", role_kind(spec, "gx_plane"), f, plane=p,
             enabled=p < (f.gx_planes if f.gx_planes_enabled is None else f.gx_planes_enabled))
    for gi in range(f.gpcs):
        node(f"gpc{gi}", "gpc", role_kind(spec, "gpc"), f, gpc=gi, near_partition=near[gi])
        for c in range(f.cpcs_per_gpc):
            cpc = f"gpc{gi}.cpc{c}"
            node(cpc, "cpc", role_kind(spec, "cpc"), f, gpc=gi, cpc=c)
            contains(f"gpc{gi}", cpc)
            for p in range(f.gx_planes):
                link(cpc, f"gx{p}", f.dsm_latency_cycles, f.dsm_links_per_cpc * f.dsm_link_bytes_per_cycle / f.gx_planes)

    units = [("tma", "tma", spec.tma), ("mbarrier", "mbarrier", spec.mbarrier),
             ("tensor", "tensor_core", spec.tensor_core), ("smem", "shared_memory", spec.shared_memory),
             ("l1", "l1", spec.l1)]
    for s, (gi, c) in enumerate(sm_layout(spec)):
        sm = f"sm{s}"
        node(sm, "sm", role_kind(spec, "sm"), spec.sm, sm=s, gpc=gi, cpc=c, near_partition=near[gi])
        contains(f"gpc{gi}.cpc{c}", sm)
        edges.append(("cta_scheduler", sm, dict(relation="dispatch",
                                                latency_cycles=spec.cta_scheduler.launch_latency_cycles,
                                                bandwidth_bytes_per_cycle=None)))
        for j in range(spec.sm.subpartitions):
            node(f"{sm}.sp{j}", "subpartition", spec.subpartition.kind, spec.subpartition, sm=s, sp=j,
                 scheduler=spec.subpartition.scheduler.policy)
            contains(sm, f"{sm}.sp{j}")
        for suffix, role, params in units:
            node(f"{sm}.{suffix}", role, params.kind, params, sm=s)
            contains(sm, f"{sm}.{suffix}")
        tm = getattr(spec.tensor_core, "tmem", None)
        if tm is not None:   # Blackwell tensor memory: one TMEM per SM, the tensor core's accumulator store
            node(f"{sm}.tmem", "tmem", tm.kind, tm, sm=s)
            contains(sm, f"{sm}.tmem")
            link(f"{sm}.tensor", f"{sm}.tmem", tm.ld_latency_cycles, tm.ld_bytes_per_cycle)
        link(f"{sm}.l1", "xbar", f.xbar_latency_cycles, f.xbar_bytes_per_cycle_per_sm)
        link(f"{sm}.tma", "xbar", f.xbar_latency_cycles, spec.tma.request_bytes_per_cycle)

    ch_bw = hbm.bandwidth_gb_per_s * 1e3 / spec.clocks.sm_mhz / hbm.channels  # bytes per SM cycle per channel
    for c in range(hbm.channels):
        node(f"hbm.c{c}", "hbm_channel", hbm.kind, hbm, channel=c,
             enabled=c < (hbm.channels if hbm.channels_enabled is None else hbm.channels_enabled))
    for s in range(l2.slices):
        part = s * l2.partitions // l2.slices
        node(f"l2.s{s}", "l2_slice", l2.kind, l2, slice=s, partition=part)
        link("xbar", f"l2.s{s}", l2.near_latency_cycles, l2.bytes_per_cycle_per_slice,
             far_extra_cycles=l2.far_latency_cycles - l2.near_latency_cycles)
        link(f"l2.s{s}", f"hbm.c{s * hbm.channels // l2.slices}", hbm.latency_at(spec.clocks.sm_mhz), ch_bw)
    g.add_nodes_from(nodes)
    g.add_edges_from(edges)
    g.graph["nodes_by_role"] = by_role   # role -> node names, in creation order
    return g


def graph_summary(g: nx.DiGraph) -> dict:
    """Counts per role and per edge relation, plus totals (deterministic order)."""
    roles = Counter(d["role"] for _, d in g.nodes(data=True))
    rel = Counter(d.get("relation", "?") for _, _, d in g.edges(data=True))
    kinds = Counter(f"{d['role']}/{d['kind']}" for _, d in g.nodes(data=True))
    classes = Counter(f"{d['role']}: {d['component'].describe()['class']}" for _, d in g.nodes(data=True))
    return {
        "name": g.graph.get("name"),
        "nodes": g.number_of_nodes(),
        "edges": g.number_of_edges(),
        "roles": dict(sorted(roles.items())),
        "relations": dict(sorted(rel.items())),
        "kinds": dict(sorted(kinds.items())),
        "classes": dict(sorted(classes.items())),
    }


def _export_copy(g: nx.DiGraph) -> nx.DiGraph:
    h = nx.DiGraph()
    h.graph.update({k: v for k, v in g.graph.items() if isinstance(v, (str, int, float, bool))})
    for n, d in g.nodes(data=True):
        attrs = {k: v for k, v in d.items() if k != "component" and isinstance(v, (str, int, float, bool))}
        attrs["class"] = d["component"].describe()["class"]
        h.add_node(n, **attrs)
    for a, b, d in g.edges(data=True):
        h.add_edge(a, b, **{k: v for k, v in d.items() if isinstance(v, (str, int, float, bool))})
    return h


def to_graphml(g: nx.DiGraph) -> str:
    return "\n".join(nx.generate_graphml(_export_copy(g)))


def to_dot(g: nx.DiGraph) -> str:
    """Graphviz DOT text (no pydot needed)."""
    lines = [f'digraph "{g.graph.get("name", "arch")}" {{', "  rankdir=LR;"]
    for n, d in g.nodes(data=True):
        lines.append(f'  "{n}" [label="{n}\\n{d["role"]}/{d["kind"]}"];')
    for a, b, d in g.edges(data=True):
        lab = "" if d.get("relation") == "contains" else f' [label="{d.get("latency_cycles")}cy"]'
        lines.append(f'  "{a}" -> "{b}"{lab};')
    lines.append("}")
    return "\n".join(lines) + "\n"

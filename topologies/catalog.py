"""The component catalogue (as SST's ``sst-info``): every registered ``(role, kind)`` with its class, where it
comes from, its interface, its parameters (type, default, unit, description, the model class that declares the
field), its ports (the graph's links of a node of that role on a reference architecture) and the statistics it
emits. ``warpgraph components`` prints it (cli/components_cmd.py)."""
from __future__ import annotations

import typing

from pydantic import BaseModel

import warpgraph.components  # noqa: F401  (registers the bundled models)
from warpgraph.components.interfaces import ROLE_INTERFACES, ROLE_SECTIONS, ROLE_STATS, interface_members
from warpgraph.core.registry import registrations
from warpgraph.topologies.schema import spec_model

__all__ = ["component_catalog", "unit_of"]

_UNITS = [("_bytes_per_cycle_per_slice", "bytes/cycle"), ("_bytes_per_cycle_per_sm", "bytes/cycle"),
          ("_bytes_per_cycle_per_subpartition", "bytes/cycle"), ("_bytes_per_cycle", "bytes/cycle"),
          ("_flop_per_cycle_per_sm", "flop/cycle"), ("_gb_per_s", "GB/s"), ("_mhz", "MHz"), ("_cycles", "cycles"),
          ("_bytes", "bytes"), ("_kib", "KiB"), ("_factor", "ratio"), ("_util", "fraction")]

#: ports of the roles that are not graph nodes of their own
_COMPOSED_PORTS = {
    "memory": [{"port": "parts", "peer": "l1, xbar, l2_slice, hbm_channel", "relation": "composes",
                "latency_cycles": None, "bandwidth_bytes_per_cycle": None}],
    "dsm": [{"port": "planes", "peer": "gx_plane", "relation": "composes", "latency_cycles": None,
             "bandwidth_bytes_per_cycle": None}],
    "warp_scheduler": [{"port": "subpartition", "peer": "subpartition", "relation": "inside", "latency_cycles": None,
                        "bandwidth_bytes_per_cycle": None}],
}


def unit_of(field: str) -> str:
    """The unit a field name says (Section convention: units in field names)."""
    for suf, unit in _UNITS:
        if field.endswith(suf):
            return unit
    return ""


def _type_name(ann) -> str:
    """``int``, ``int | None``, ``Literal['gto']``, ``dict[str, MmaTiming]`` (constraints dropped)."""
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is typing.Union or type(ann).__name__ == "UnionType":
        return " | ".join(_type_name(a) for a in args)
    if origin is typing.Literal:
        return f"Literal[{', '.join(repr(a) for a in args)}]"
    if origin is not None:
        return f"{getattr(origin, '__name__', str(origin))}[{', '.join(_type_name(a) for a in args)}]"
    if ann is type(None):
        return "None"
    if isinstance(ann, type):
        return ann.__name__
    return str(ann).replace("typing.", "")


def _default(f):
    if f.default_factory is not None:
        try:
            v = f.default_factory()
        except Exception:
            return "<factory>"
    else:
        v = f.default
    if isinstance(v, BaseModel):
        return v.model_dump(mode="json")
    if isinstance(v, dict):
        return {k: (x.model_dump(mode="json") if isinstance(x, BaseModel) else x) for k, x in v.items()}
    if v is ... or type(v).__name__ == "PydanticUndefinedType":
        return None
    return v


def _declared_by(model, name: str) -> str:
    for cls in reversed(model.__mro__):
        if name in getattr(cls, "__annotations__", {}):
            owner = cls
    for cls in model.__mro__:
        if name in getattr(cls, "__annotations__", {}):
            owner = cls
            break
    return f"{owner.__module__}.{owner.__qualname__}"


def _parameters(model) -> list[dict]:
    if model is None:
        return []
    out = []
    for name, f in model.model_fields.items():
        out.append({"name": name, "type": _type_name(f.annotation), "default": _default(f), "unit": unit_of(name),
                    "description": f.description or "", "source": _declared_by(model, name)})
    return out


def _ports(g, role: str) -> list[dict]:
    if role in _COMPOSED_PORTS:
        return _COMPOSED_PORTS[role]
    node = next((n for n, d in g.nodes(data=True) if d["role"] == role), None)
    if node is None:
        return []
    seen, out = set(), []
    for a, b, d in list(g.out_edges(node, data=True)) + list(g.in_edges(node, data=True)):
        out_dir = a == node
        peer = g.nodes[b if out_dir else a]["role"]
        rel = d.get("relation")
        if rel == "contains":
            port, rel = ("child" if out_dir else "parent"), "contains"
        else:
            port = f"{'to' if out_dir else 'from'}_{peer}"
        key = (port, peer, rel)
        if key in seen:
            continue
        seen.add(key)
        out.append({"port": port, "peer": peer, "relation": rel, "latency_cycles": d.get("latency_cycles"),
                    "bandwidth_bytes_per_cycle": d.get("bandwidth_bytes_per_cycle")})
    return sorted(out, key=lambda p: (p["relation"], p["port"]))


def _statistics(role: str) -> list[dict]:
    out = []
    for group, stats in ROLE_STATS.get(role, {}).items():
        for name, (unit, desc) in stats.items():
            out.append({"group": group, "name": name, "unit": unit, "description": desc})
    return out


def component_catalog(arch: str = "h200", role: str | None = None) -> list[dict]:
    """One entry per registered ``(role, kind)`` (sorted), ports taken from ``arch``'s graph."""
    from warpgraph.runner.machine import graph_of
    from warpgraph.topologies.loader import load_arch

    g = graph_of(load_arch(arch))
    out = []
    for reg in registrations():
        if role is not None and reg.role != role:
            continue
        cls = reg.cls
        doc = (cls.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        model = reg.spec or spec_model(reg.role, reg.kind)
        proto = ROLE_INTERFACES.get(reg.role)
        out.append({
            "role": reg.role, "kind": reg.kind, "class": reg.qualname, "source": reg.source, "description": doc,
            "section": ROLE_SECTIONS.get(reg.role), "spec": f"{model.__module__}.{model.__qualname__}" if model else None,
            "interface": {"name": proto.__name__ if proto else None, "members": interface_members(reg.role)},
            "parameters": _parameters(model), "ports": _ports(g, reg.role), "statistics": _statistics(reg.role),
        })
    return out

"""Component registry: timing-model classes registered by ``(role, kind)``.

``@register_component("tma", "fifo", spec=FifoTmaSpec)`` on a class makes it the model of ``tma: {kind: fifo}``
in an architecture YAML; ``spec`` (a pydantic section whose ``kind`` field is a ``Literal`` default) is its typed
parameter section and is added to the arch schema's variant union in the same step (topologies/schema.py listens
through :func:`on_spec_registered`; core imports nothing of ours). A new variant is one module in
``warpgraph/components/`` (the package imports all its modules) or one module of another package named by an entry
point in group ``warpgraph.components`` (SST ELI / Vidur registries, design-anchors.md §0). Entry points are
loaded before any spec is validated (topologies/loader.py). There are no fallbacks: a ``(role, kind)`` without a
class is a :class:`~warpgraph.core.errors.SpecError` naming the role, the kind and the kinds that exist; a class
missing part of its role's interface is one at build time (components/interfaces.py).
"""
from __future__ import annotations

from typing import Callable

from warpgraph.core.errors import SpecError

__all__ = ["register_component", "get_component", "known_kinds", "known_roles", "load_entry_points",
           "Registration", "registration", "registrations", "on_spec_registered", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "warpgraph.components"


class Registration:
    __slots__ = ("role", "kind", "cls", "spec", "source")

    def __init__(self, role: str, kind: str, cls, spec=None, source: str = "warpgraph"):
        self.role, self.kind, self.cls, self.spec, self.source = role, kind, cls, spec, source

    @property
    def qualname(self) -> str:
        return _qual(self.cls)

    def __repr__(self) -> str:
        sp = f", spec={self.spec.__name__}" if self.spec is not None else ""
        return f"Registration({self.role}/{self.kind} -> {_qual(self.cls)}{sp})"


_REGISTRY: dict[tuple[str, str], Registration] = {}
_SPEC_LISTENERS: list[Callable] = []
_EP_LOADED = False
_EP_LOADING: list[str] = []   # entry point being imported (registrations it makes are credited to it)


def _qual(cls) -> str:
    return f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', repr(cls))}"


def register_component(role: str, kind: str = "default", *, spec=None) -> Callable:
    """Class decorator: register ``cls`` as the model for ``(role, kind)``, with ``spec`` its parameter section
    (optional: a role whose section has no variants, e.g. ``gpc``, reads the common section).

    Two different classes for the same key are an error (re-registering the same qualified class, e.g. on
    module reload, is allowed)."""

    def deco(cls):
        key = (role, kind)
        old = _REGISTRY.get(key)
        if old is not None and _qual(old.cls) != _qual(cls):
            raise ValueError(f"component {role}/{kind} registered twice: {_qual(old.cls)} and {_qual(cls)}")
        source = _EP_LOADING[-1] if _EP_LOADING else (getattr(cls, "__module__", "") or "").split(".")[0]
        reg = _REGISTRY[key] = Registration(role, kind, cls, spec, source)
        try:
            if not getattr(cls, "role", None):
                cls.role = role
            if "kind" not in cls.__dict__:
                cls.kind = kind
        except (AttributeError, TypeError):
            pass
        if spec is not None:
            for fn in list(_SPEC_LISTENERS):
                fn(reg)
        return cls

    return deco


def on_spec_registered(fn: Callable) -> None:
    """Call ``fn(registration)`` for every registration with a spec, past and future (the arch schema adds the
    spec to its variant union)."""
    _SPEC_LISTENERS.append(fn)
    for reg in list(_REGISTRY.values()):
        if reg.spec is not None:
            fn(reg)


def get_component(role: str, kind: str = "default", *, location: str | None = None):
    """The class registered for ``(role, kind)``; SpecError naming role, kind and the known kinds otherwise."""
    _ensure_loaded()
    reg = _REGISTRY.get((role, kind))
    if reg is None:
        kinds = known_kinds(role)
        if kinds:
            hint = f"{role} kind one of: {', '.join(kinds)}"
        else:
            hint = f"a known component role: {', '.join(known_roles())}"
        raise SpecError(f"no component model for role {role!r} kind {kind!r}", location=location, hint=hint)
    return reg.cls


def registration(role: str, kind: str = "default") -> Registration | None:
    _ensure_loaded()
    return _REGISTRY.get((role, kind))


def registrations() -> list[Registration]:
    """Every registration, sorted by role then kind."""
    _ensure_loaded()
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def known_kinds(role: str) -> list[str]:
    _ensure_loaded()
    return sorted(k for r, k in _REGISTRY if r == role)


def known_roles() -> list[str]:
    _ensure_loaded()
    return sorted({r for r, _ in _REGISTRY})


def _ensure_loaded() -> None:
    # core imports nothing of ours (layering); the bundled models register when ``warpgraph.components`` is
    # imported, which ``warpgraph.topologies`` does. Third-party plugins are loaded here.
    load_entry_points()


def load_entry_points() -> list[str]:
    """Import third-party component modules (entry point group ``warpgraph.components``) once, in name order."""
    global _EP_LOADED
    if _EP_LOADED:
        return []
    _EP_LOADED = True
    from importlib.metadata import entry_points

    names = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        dist = getattr(getattr(ep, "dist", None), "name", None) or ep.name
        _EP_LOADING.append(f"{dist} (entry point {ep.name})")
        try:
            ep.load()  # import errors propagate: a broken plugin must not be silently skipped
        finally:
            _EP_LOADING.pop()
        names.append(ep.name)
    return names

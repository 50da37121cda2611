"""Component registry: timing-model classes registered by ``(role, kind)``.

``@register_component(role="tma", kind="default")`` on a class makes it buildable from an architecture YAML
(``tma: {kind: default}``). A new variant is one new module in ``warpgraph/components/`` plus one YAML line
(the package imports all its modules). Third-party packages can register theirs from a module named by an
entry point in group ``warpgraph.components`` (SST ELI / Vidur registries, design-anchors.md §0).
``fallback=True`` marks generic placeholders (components/structural.py) that a real model replaces.
"""
from __future__ import annotations

from typing import Callable

from warpgraph.core.errors import SpecError

__all__ = ["register_component", "get_component", "known_kinds", "known_roles", "load_entry_points", "Registration"]

ENTRY_POINT_GROUP = "warpgraph.components"


class Registration:
    __slots__ = ("role", "kind", "cls", "fallback")

    def __init__(self, role: str, kind: str, cls, fallback: bool):
        self.role, self.kind, self.cls, self.fallback = role, kind, cls, fallback

    def __repr__(self) -> str:
        return f"Registration({self.role}/{self.kind} -> {_qual(self.cls)}{', fallback' if self.fallback else ''})"


_REGISTRY: dict[tuple[str, str], Registration] = {}
_EP_LOADED = False


def _qual(cls) -> str:
    return f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', repr(cls))}"


def register_component(role: str, kind: str = "default", *, fallback: bool = False) -> Callable:
    """Class decorator: register ``cls`` as the model for ``(role, kind)``.

    A real (non-fallback) registration replaces a fallback one; two different real classes for the same key
    are an error (re-registering the same qualified class, e.g. on module reload, is allowed).
    """

    def deco(cls):
        key = (role, kind)
        old = _REGISTRY.get(key)
        if old is not None and not old.fallback and not fallback and _qual(old.cls) != _qual(cls):
            raise ValueError(f"component {role}/{kind} registered twice: {_qual(old.cls)} and {_qual(cls)}")
        if old is None or old.fallback or not fallback:
            _REGISTRY[key] = Registration(role, kind, cls, fallback)
        if getattr(cls, "role", None) in (None, ""):
            try:
                cls.role = role
            except (AttributeError, TypeError):
                pass
        return cls

    return deco


def get_component(role: str, kind: str = "default", *, location: str | None = None):
    """The class registered for ``(role, kind)``; SpecError listing the known kinds otherwise."""
    _ensure_loaded()
    reg = _REGISTRY.get((role, kind))
    if reg is None:
        kinds = known_kinds(role)
        if kinds:
            hint = f"{role} kind one of: {', '.join(kinds)}"
        else:
            hint = f"a known component role: {', '.join(known_roles())}"
        raise SpecError(f"unknown component {role} kind {kind!r}", location=location, hint=hint)
    return reg.cls


def registration(role: str, kind: str = "default") -> Registration | None:
    _ensure_loaded()
    return _REGISTRY.get((role, kind))


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
    """Import third-party component modules (entry point group ``warpgraph.components``) once."""
    global _EP_LOADED
    if _EP_LOADED:
        return []
    _EP_LOADED = True
    from importlib.metadata import entry_points

    names = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        ep.load()  # import errors propagate: a broken plugin must not be silently skipped
        names.append(ep.name)
    return names

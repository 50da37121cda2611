"""Hardware timing models. Every module of this package is imported here (sorted, via pkgutil) so that its
``@register_component`` decorators run: a new variant is one new file plus one YAML line. Import errors
propagate on purpose (a broken model must not silently disappear)."""
from __future__ import annotations

import importlib
import pkgutil

from warpgraph.components.base import Component, Slot

__all__ = ["Component", "Slot", "imported_modules"]

imported_modules: list[str] = []
for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name.startswith("_"):
        continue
    importlib.import_module(f"{__name__}.{_info.name}")
    imported_modules.append(_info.name)
del _info

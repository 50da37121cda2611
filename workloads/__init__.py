"""warpgraph.workloads: launch records, device memory, references, PTX front end, functional executor.

Exports (lazy): ``load_record``, ``save_record``, ``LaunchRecord``, ``DeviceMemory``, ``TensorMap``, ``check``,
``CheckResult``, ``scale_record``, ``small_variant``.
"""
from __future__ import annotations

_EXPORTS = {
    "load_record": "warpgraph.workloads.record", "save_record": "warpgraph.workloads.record",
    "LaunchRecord": "warpgraph.workloads.record", "record_from_dict": "warpgraph.workloads.record",
    "DeviceMemory": "warpgraph.workloads.memory", "TensorMap": "warpgraph.workloads.memory",
    "check": "warpgraph.workloads.references", "CheckResult": "warpgraph.workloads.references",
    "scale_record": "warpgraph.workloads.scale", "small_variant": "warpgraph.workloads.scale",
}

__all__ = list(_EXPORTS)


def __getattr__(name):
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(mod), name)

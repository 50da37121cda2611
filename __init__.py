"""warpgraph: a cycle-level, execution-driven model of NVIDIA GPUs as a graph of pluggable components.

Public API (stable; ``explore`` and ``studies`` use only this):

    load_arch(name_or_path, overrides=None) -> ArchSpec
    load_record(path) -> LaunchRecord
    simulate(record, arch="h200", *, mode="timing", overrides=None, ...) -> RunResult
"""
from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "load_arch", "load_record", "simulate", "UserError"]


def __getattr__(name):  # lazy: keep `import warpgraph` cheap and the layers independent
    if name == "load_arch":
        from warpgraph.topologies.loader import load_arch

        return load_arch
    if name == "load_record":
        from warpgraph.workloads.record import load_record

        return load_record
    if name == "simulate":
        from warpgraph.runner.simulate import simulate

        return simulate
    if name == "UserError":
        from warpgraph.core.errors import UserError

        return UserError
    raise AttributeError(name)

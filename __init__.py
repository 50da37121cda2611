"""warpgraph: a cycle-level, execution-driven model of NVIDIA GPUs as a graph of pluggable components.

Public API (stable; ``explore`` and ``studies`` use only this):

    load_arch(name_or_path, overrides=None) -> ArchSpec
    load_record(path_or_short_name) -> LaunchRecord      # "h200/gemm_tma_M2048_N2048_K2048" names a bundled one
    list_records() -> list[str]                          # short names of the bundled launch records
    scale_record(record, factor=None, **sizes) -> LaunchRecord
    simulate(record, arch="h200", *, mode="timing", overrides=None, ...) -> RunResult
    metric_names() / known_metric(name) / metric_unit(name)   # metric names (and ``stat:COMPONENT:STAT``)
    stat_value(stats_frame, component, stat) -> float | None  # one component statistic of RunResult.stats
"""

#: the one source of the version (pyproject.toml reads it: [tool.setuptools.dynamic])
__version__ = "0.1.0"

__all__ = ["__version__", "load_arch", "load_record", "list_records", "scale_record", "simulate", "UserError",
           "metric_names", "known_metric", "metric_unit", "stat_value"]

_LAZY = {
    "load_arch": "warpgraph.topologies.loader",
    "load_record": "warpgraph.workloads.record",
    "list_records": "warpgraph.workloads.bundled",
    "scale_record": "warpgraph.workloads.scale",
    "simulate": "warpgraph.runner.simulate",
    "UserError": "warpgraph.core.errors",
    "metric_names": "warpgraph.analysis.stat_units",
    "known_metric": "warpgraph.analysis.stat_units",
    "metric_unit": "warpgraph.analysis.stat_units",
    "stat_value": "warpgraph.analysis.stat_units",
}


def __getattr__(name):  # lazy: keep `import warpgraph` cheap and the layers independent
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'warpgraph' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(mod), name)


def __dir__():
    return sorted(set(globals()) | set(__all__))

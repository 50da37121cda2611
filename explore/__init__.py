"""warpgraph.explore: design-space exploration with Optuna.

    from warpgraph import explore
    spec = explore.load_study("explore/examples/tma_depth_bw.yaml")
    study = explore.run_study(spec, workers=1)            # or: warpgraph explore STUDY.yaml
    df = explore.results(study)                           # pandas, one row per trial
    explore.export(df, "tma.parquet"); explore.report(spec)

Uses only the public API of warpgraph (load_arch, load_record, simulate, UserError).
"""
from __future__ import annotations

__all__ = ["load_study", "parse_study", "StudySpec", "StudyError", "run_study", "run_worker", "prepare",
           "results", "export", "report", "plot_pareto", "plot_metric_vs_params", "plot_importance",
           "param_importances", "pareto_mask", "cost_metrics", "open_storage", "counts", "best_trials",
           "plot_optuna", "importance_undefined", "ImportanceUndefined", "check_study", "cost_inputs"]

_WHERE = {
    "load_study": "spec", "parse_study": "spec", "StudySpec": "spec", "StudyError": "spec",
    "run_study": "study", "run_worker": "study", "prepare": "study", "open_storage": "study", "counts": "study",
    "results": "analysis", "export": "analysis", "report": "analysis", "plot_pareto": "analysis",
    "plot_metric_vs_params": "analysis", "plot_importance": "analysis", "param_importances": "analysis",
    "pareto_mask": "analysis", "cost_metrics": "metrics", "best_trials": "analysis", "plot_optuna": "analysis",
    "importance_undefined": "analysis", "ImportanceUndefined": "analysis", "check_study": "spec", "cost_inputs": "metrics",
}


def __getattr__(name):  # lazy: importing warpgraph.explore does not import optuna/pandas
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(f"warpgraph.explore.{_WHERE[name]}"), name)
    raise AttributeError(name)


def __dir__():
    return sorted(set(globals()) | set(__all__))

"""Evaluators: turn one design point into a metrics dict.

* ``warpgraph`` (default): ``warpgraph.simulate`` on every workload of the study with the trial's overrides;
  per-workload metrics are kept (``workloads`` key) and combined with :func:`metrics.aggregate`.
* ``python:package.module:function``: a user function ``f(arch, workloads) -> dict`` (``arch`` = the
  ArchSpec with the trial's overrides applied, ``workloads`` = list of :class:`spec.Workload`). If the
  function accepts keyword arguments ``overrides``, ``mode``, ``seed`` or ``params`` they are passed too.
  Return a flat metrics dict, optionally with ``workloads: {name: metrics}``. A ``metric_names`` attribute on
  the function (a list) lets ``warpgraph explore --check`` reject unknown objective names before any trial.

Objectives of the ``warpgraph`` evaluator: any numeric key of ``RunResult.metrics`` (dotted into nested
groups: ``stall_ratios_per_issue.long_scoreboard``), the cost proxies ``sram_bytes`` / ``area_units``, and any
component statistic ``stat:COMPONENT:STAT`` of ``RunResult.stats`` (``stat:tma:admission_stall_cycles``,
``stat:sm*:active_cycles`` sums over SMs); ``warpgraph.known_metric`` checks a name.
"""
from __future__ import annotations

import inspect
import time
from functools import lru_cache
from typing import Any, Callable

import warpgraph

from .metrics import aggregate, jsonable
from .spec import StudySpec, Workload, _spec_error, import_object, resolve_base


@lru_cache(maxsize=64)
def _record(path: str, scale: float | None):
    """The workload's launch record; ``scale`` (0 < scale <= 1) shrinks every size by that factor
    (``warpgraph.scale_record``; only records of the calibration kernel families can be scaled)."""
    rec = warpgraph.load_record(path)
    if scale is not None and scale != 1:
        rec = warpgraph.scale_record(rec, factor=1.0 / scale)
    return rec


def stat_metric_names(spec: StudySpec) -> list[str]:
    """The ``stat:COMPONENT:STAT`` names the study's objectives and constraints use."""
    names = [o.metric for o in spec.objectives] + [c.metric for c in spec.constraints]
    return [n for n in dict.fromkeys(names) if n.startswith("stat:")]


def warpgraph_evaluator(spec: StudySpec) -> Callable[..., dict]:
    base = resolve_base(spec)
    wanted = stat_metric_names(spec)
    waves_kw = {} if spec.waves is None or spec.mode == "timing" else {"waves": spec.waves}

    def evaluate(arch, workloads: list[Workload], *, overrides: dict, mode: str, seed: int, trace_cache=None, **_):
        per: dict[str, dict] = {}
        t0 = time.perf_counter()
        for w in workloads:
            res = warpgraph.simulate(_record(w.path, w.scale), arch=base, mode=mode, overrides=dict(overrides),
                                     seed=seed, **waves_kw, **_trace_cache_kw(trace_cache))
            m = jsonable(dict(res.metrics))
            for name in wanted:          # component statistics as metrics (RunResult.stats rows)
                _, comp, stat = name.split(":", 2)
                v = warpgraph.stat_value(res.stats, comp, stat) if res.stats is not None else None
                if v is not None:
                    m[name] = v
            per[w.name] = m
        out = aggregate(per)
        out.setdefault("wall_seconds", time.perf_counter() - t0)
        out["workloads"] = per
        return out

    evaluate.metric_check = warpgraph.known_metric      # spec.check_metrics: names are known before any trial
    evaluate.metric_options = warpgraph.metric_names()
    return evaluate


def _trace_cache_kw(trace_cache) -> dict:
    """``trace_cache=`` for simulate (runner/trace_cache.py): False, a folder, or nothing (simulate's default)."""
    return {} if trace_cache is None else {"trace_cache": trace_cache}


def make_evaluator(spec: StudySpec) -> Callable[..., dict]:
    """A callable ``(arch, workloads, *, overrides, mode, seed, params, trace_cache) -> metrics``
    (``trace_cache``: False or the study's trace folder; a user function gets it when it accepts it)."""
    if spec.evaluator == "warpgraph":
        return warpgraph_evaluator(spec)
    fn = import_object(spec.evaluator, "evaluator", spec.loc("evaluator"))
    try:
        sig = inspect.signature(fn)
        names = set(sig.parameters)
        var_kw = any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
    except (TypeError, ValueError):
        names, var_kw = set(), False

    def evaluate(arch, workloads, **kw: Any):
        extra = {k: v for k, v in kw.items() if var_kw or k in names}
        out = fn(arch, workloads, **extra)
        if not isinstance(out, dict):
            raise _spec_error(f"evaluator {spec.evaluator} returned {type(out).__name__}, not a dict",
                              spec.loc("evaluator"))
        return jsonable(out)

    declared = getattr(fn, "metric_names", None)   # optional: the metric names the function returns
    if declared is not None:
        known = set(declared)
        evaluate.metric_check = lambda name: name in known or name.split(".", 1)[0] in known
        evaluate.metric_options = sorted(known)
    return evaluate

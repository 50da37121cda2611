"""Evaluators: turn one design point into a metrics dict.

* ``warpgraph`` (default): ``warpgraph.simulate`` on every workload of the study with the trial's overrides;
  per-workload metrics are kept (``workloads`` key) and combined with :func:`metrics.aggregate`.
* ``python:package.module:function``: a user function ``f(arch, workloads) -> dict`` (``arch`` = the
  ArchSpec with the trial's overrides applied, ``workloads`` = list of :class:`spec.Workload`). If the
  function accepts keyword arguments ``overrides``, ``mode``, ``seed`` or ``params`` they are passed too.
  Return a flat metrics dict, optionally with ``workloads: {name: metrics}``.
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
    rec = warpgraph.load_record(path)
    if scale is not None and scale != 1:
        scaler = getattr(warpgraph, "scale_record", None)
        if scaler is None:
            raise _spec_error(f"workload {path}: `scale:` needs warpgraph.scale_record in the public API",
                              hint="drop `scale:` or use a smaller record")
        rec = scaler(rec, scale)
    return rec


def warpgraph_evaluator(spec: StudySpec) -> Callable[..., dict]:
    base = resolve_base(spec)

    def evaluate(arch, workloads: list[Workload], *, overrides: dict, mode: str, seed: int, **_):
        per: dict[str, dict] = {}
        t0 = time.perf_counter()
        for w in workloads:
            res = warpgraph.simulate(_record(w.path, w.scale), arch=base, mode=mode, overrides=dict(overrides),
                                     seed=seed)
            per[w.name] = jsonable(dict(res.metrics))
        out = aggregate(per)
        out.setdefault("wall_seconds", time.perf_counter() - t0)
        out["workloads"] = per
        return out

    return evaluate


def make_evaluator(spec: StudySpec) -> Callable[..., dict]:
    """A callable ``(arch, workloads, *, overrides, mode, seed, params) -> metrics``."""
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

    return evaluate

"""Study results as a pandas DataFrame, export, and matplotlib plots (PNG).

``results(x)`` accepts an ``optuna.Study``, a study YAML path / :class:`StudySpec` (its default or given
storage), or a storage (journal file path or RDB URL) plus ``study_name``.
Columns: ``number, state, <one per design-space parameter (dotted name)>, <one per objective metric>,
feasible, sram_bytes, area_units, <key simulator metrics>, duration_s, error``; ``df.attrs`` holds
``params``, ``objectives``, ``directions``, ``study_name``. Integer parameters stay integers (nullable ``Int64``
when some trials lack them).

Plots (``report``) use ``optuna.visualization.matplotlib``: Pareto front (two or more objectives), slice (each
objective against each parameter, no fitted lines), contour (two or more parameters) and parameter
importances; axis labels carry the metric's unit, titles the workloads and the base architecture. Importance
is undefined when an objective is constant or no parameter varies: ``report`` then warns
(:class:`ImportanceUndefined`) instead of drawing made-up equal shares.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import optuna
import pandas as pd
from optuna.trial import TrialState

class ImportanceUndefined(UserWarning):
    """Parameter importance cannot be computed (constant objective, a single trial, or no parameter varies)."""


KEY_METRICS = ("cycles", "warp_instructions", "dram_read_bytes", "dram_write_bytes", "l2_bytes",
               "achieved_occupancy_pct", "tensor_utilization_pct", "sram_bytes", "area_units", "wall_seconds")


def _open(x, storage: str | None = None, study_name: str | None = None) -> optuna.Study:
    from .spec import StudySpec, load_study
    from .study import open_storage, storage_of

    if isinstance(x, optuna.Study):
        return x
    if isinstance(x, StudySpec) or (isinstance(x, (str, Path)) and str(x).endswith((".yaml", ".yml"))):
        spec = x if isinstance(x, StudySpec) else load_study(x)
        return optuna.load_study(study_name=spec.name, storage=open_storage(storage_of(spec, storage)))
    st = open_storage(str(x))
    if study_name is None:
        names = [s.study_name for s in optuna.get_all_study_summaries(st, include_best_trial=False)]
        if len(names) != 1:
            raise ValueError(f"storage holds studies {names}: pass study_name=")
        study_name = names[0]
    return optuna.load_study(study_name=study_name, storage=st)


def results(x, *, storage: str | None = None, study_name: str | None = None,
            include_all: bool = False) -> pd.DataFrame:
    """One row per trial. Retried (abandoned) and over-budget (spurious) trials are left out unless
    ``include_all``."""
    from .study import _kind

    study = _open(x, storage, study_name)
    ua = study.user_attrs
    objectives = list(ua.get("wg_objectives") or [f"value_{i}" for i in range(len(study.directions))])
    directions = [d.name.lower() for d in study.directions]
    trials = study.get_trials(deepcopy=False)
    params: list[str] = list(ua.get("wg_params") or [])
    for t in trials:
        for k in t.params:
            if k not in params:
                params.append(k)
    rows = []
    for t in trials:
        kind = _kind(t)
        if not include_all and kind in ("spurious", "abandoned"):
            continue
        m = t.user_attrs.get("metrics", {}) or {}
        row: dict[str, Any] = {"number": t.number, "state": kind}
        for p in params:
            row[p] = t.params.get(p, (t.user_attrs.get("wg_params") or {}).get(p))
        vals = t.values if t.state == TrialState.COMPLETE and t.values else [None] * len(objectives)
        for name, v in zip(objectives, vals):
            row[name] = v
        cons = t.user_attrs.get("wg_constraints")
        row["feasible"] = (all(c <= 0 for c in cons) if cons is not None else True) \
            if t.state == TrialState.COMPLETE else None
        for k in KEY_METRICS:
            if k not in row:
                row[k] = m.get(k)
        d = (t.datetime_complete - t.datetime_start).total_seconds() \
            if t.datetime_complete and t.datetime_start else None
        row["duration_s"] = d
        row["error"] = t.user_attrs.get("wg_error")
        rows.append(row)
    cols = ["number", "state", *params, *[o for o in objectives if o not in params], "feasible",
            *[k for k in KEY_METRICS if k not in objectives], "duration_s", "error"]
    df = pd.DataFrame(rows, columns=cols)
    space = ua.get("wg_space") or {}
    for p in params:
        if _int_dimension(space.get(p)) or _all_ints(df[p]):
            vals = df[p].dropna()
            if len(vals) and all(float(v).is_integer() for v in vals):
                df[p] = df[p].astype("Int64" if df[p].isna().any() else "int64")
    df.attrs.update(params=params, objectives=objectives, directions=directions, study_name=study.study_name)
    return df


def _int_dimension(d) -> bool:
    if not isinstance(d, dict):
        return False
    if "int" in d:
        return True
    ch = d.get("choices")
    return bool(ch) and all(isinstance(v, int) and not isinstance(v, bool) for v in ch)


def _all_ints(col) -> bool:
    vals = [v for v in col if v is not None and not (isinstance(v, float) and v != v)]
    return bool(vals) and all(isinstance(v, int) and not isinstance(v, bool) for v in vals)


def best_trials(study_or_x) -> list[dict]:
    """The best trial (one objective) or the Pareto set (several; feasible trials only when the study has
    constraints), each ``{"number", "params", "values", "objectives"}``, sorted by the first objective."""
    study = _open(study_or_x)
    names = list(study.user_attrs.get("wg_objectives") or [f"value_{i}" for i in range(len(study.directions))])
    done = [t for t in study.get_trials(deepcopy=False) if t.state == TrialState.COMPLETE and t.values]
    if not done:
        return []
    if len(study.directions) == 1:
        feas = [t for t in done if all(c <= 0 for c in t.user_attrs.get("wg_constraints", [0.0]))] or []
        if not feas:
            return []
        sign = -1.0 if study.directions[0] == optuna.study.StudyDirection.MAXIMIZE else 1.0
        best = [min(feas, key=lambda t: (sign * t.values[0], t.number))]
    else:
        best = sorted(study.best_trials, key=lambda t: (t.values[0], t.number))
    return [{"number": t.number, "params": dict(t.params or t.user_attrs.get("wg_params") or {}),
             "values": list(t.values), "objectives": names} for t in best]


def export(df: pd.DataFrame, path: str | Path) -> Path:
    """Write ``.parquet`` or ``.csv`` (by suffix)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.suffix == ".parquet":
        out = df.copy()
        out.attrs = {}
        out.to_parquet(p, index=False)
    elif p.suffix == ".csv":
        df.to_csv(p, index=False)
    else:
        raise ValueError(f"export: unknown format {p.suffix!r} (use .parquet or .csv)")
    return p


def pareto_mask(df: pd.DataFrame, objectives: list[str] | None = None,
                directions: list[str] | None = None) -> pd.Series:
    """True for complete, feasible rows not dominated by another such row."""
    objectives = objectives or df.attrs["objectives"]
    directions = directions or df.attrs.get("directions") or ["minimize"] * len(objectives)
    ok = (df["state"] == "complete") & (df["feasible"] != False)  # noqa: E712
    sub = df.loc[ok, objectives].astype(float)
    sign = [1.0 if d == "minimize" else -1.0 for d in directions]
    v = sub.values * sign
    mask = pd.Series(False, index=df.index)
    for i, idx in enumerate(sub.index):
        dominated = ((v <= v[i]).all(axis=1) & (v < v[i]).any(axis=1)).any()
        mask[idx] = not dominated
    return mask


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def plot_pareto(df: pd.DataFrame, path: str | Path, objectives: list[str] | None = None,
                directions: list[str] | None = None, title: str | None = None) -> Path:
    """Scatter of two objectives, Pareto front highlighted (infeasible points hollow)."""
    plt = _plt()
    objectives = objectives or df.attrs["objectives"][:2]
    if len(objectives) < 2:
        raise ValueError("a Pareto plot needs two objectives")
    dirs = directions or (df.attrs.get("directions") or ["minimize"] * 2)[:2]
    done = df[df["state"] == "complete"]
    front = pareto_mask(df, objectives, dirs)
    fig, ax = plt.subplots(figsize=(6, 4.5))
    feas = done[done["feasible"] != False]  # noqa: E712
    infeas = done[done["feasible"] == False]  # noqa: E712
    ax.scatter(feas[objectives[0]], feas[objectives[1]], s=18, c="tab:blue", alpha=0.6, label="trials")
    if len(infeas):
        ax.scatter(infeas[objectives[0]], infeas[objectives[1]], s=18, facecolors="none", edgecolors="grey",
                   label="infeasible")
    f = df[front].sort_values(objectives[0])
    ax.plot(f[objectives[0]], f[objectives[1]], "o-", c="tab:red", ms=6, label="Pareto front")
    ax.set_xlabel(f"{objectives[0]} ({dirs[0]})")
    ax.set_ylabel(f"{objectives[1]} ({dirs[1]})")
    ax.set_title(title or df.attrs.get("study_name", ""))
    ax.grid(alpha=0.3)
    ax.legend()
    return _save(fig, path)


def plot_metric_vs_params(df: pd.DataFrame, path: str | Path, metric: str | None = None) -> Path:
    """One panel per design-space parameter: ``metric`` (default: first objective) against it."""
    plt = _plt()
    params = df.attrs["params"]
    metric = metric or df.attrs["objectives"][0]
    done = df[df["state"] == "complete"]
    n = max(1, len(params))
    fig, axes = plt.subplots(1, n, figsize=(4 * n, 3.5), squeeze=False)
    for ax, p in zip(axes[0], params):
        x = done[p]
        if x.map(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)).all():
            ax.scatter(x.astype(float), done[metric].astype(float), s=16)   # samples only: no fitted trend
        else:
            labels = [str(v) for v in x]
            cats = sorted(set(labels))
            ax.scatter([cats.index(s) for s in labels], done[metric].astype(float), s=16)
            ax.set_xticks(range(len(cats)), cats, rotation=30)
        ax.set_xlabel(p)
        ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return _save(fig, path)


def param_importances(study_or_x, objective: int = 0, seed: int = 0) -> dict[str, float]:
    """Parameter importances for one objective: fANOVA with a fixed seed when scikit-learn is installed,
    else PED-ANOVA (numpy only; deterministic). Both deterministic for a given set of trials."""
    study = _open(study_or_x)
    import optuna.importance as oi

    try:
        import sklearn  # noqa: F401

        ev = oi.FanovaImportanceEvaluator(seed=seed)
    except ImportError:
        ev = oi.PedAnovaImportanceEvaluator()
    sign = -1.0 if study.directions[objective] == optuna.study.StudyDirection.MAXIMIZE else 1.0
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return oi.get_param_importances(study, evaluator=ev, target=lambda t: sign * t.values[objective])


def plot_importance(study_or_x, path: str | Path, objective: int = 0, seed: int = 0) -> Path:
    plt = _plt()
    study = _open(study_or_x)
    imp = param_importances(study, objective, seed)
    names = study.user_attrs.get("wg_objectives") or ["value"]
    fig, ax = plt.subplots(figsize=(6, 0.5 + 0.5 * max(1, len(imp))))
    ks = list(imp)[::-1]
    ax.barh(ks, [imp[k] for k in ks], color="tab:green")
    ax.set_xlabel(f"importance for {names[objective] if objective < len(names) else objective}")
    fig.tight_layout()
    return _save(fig, path)


def _save(fig, path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, dpi=110)
    _plt().close(fig)
    return p


def _labels(study) -> tuple[list[str], list[str], str]:
    """(objective names, axis labels with units, title suffix "workloads on base")."""
    import warpgraph

    ua = study.user_attrs
    names = list(ua.get("wg_objectives") or [f"value_{i}" for i in range(len(study.directions))])
    labels = []
    for n in names:
        u = warpgraph.metric_unit(n)
        labels.append(f"{n} [{u}]" if u else n)
    wl = ua.get("wg_workloads") or []
    base = ua.get("wg_base")
    ctx = ", ".join(wl[:3]) + (f" +{len(wl) - 3}" if len(wl) > 3 else "")
    ctx = (f"{ctx} on {base}" if ctx and base else ctx or (f"on {base}" if base else ""))
    return names, labels, ctx


def _title(ax, text: str) -> None:
    """One axes: its title; a grid of axes (slice, contour): the figure's title."""
    if hasattr(ax, "set_title"):
        ax.set_title(text, fontsize=10)
    else:
        _fig_of(ax).suptitle(text, fontsize=10)


def _fig_of(ax):
    import numpy as np

    a = np.ravel(ax)[0] if not hasattr(ax, "figure") else ax
    return a.figure


def _has_scipy() -> bool:
    import importlib.util

    return importlib.util.find_spec("scipy") is not None


def importance_undefined(study_or_x, objective: int = 0) -> str | None:
    """Why parameter importance is undefined for ``objective`` (constant objective, fewer than two complete
    trials, no parameter with two values), or None when it can be computed."""
    study = _open(study_or_x)
    done = [t for t in study.get_trials(deepcopy=False) if t.state == TrialState.COMPLETE and t.values]
    names, _, _ = _labels(study)
    name = names[objective] if objective < len(names) else f"objective {objective}"
    if len(done) < 2:
        return f"{name}: {len(done)} complete trial(s)"
    vals = {t.values[objective] for t in done}
    if len(vals) == 1:
        return f"{name} is constant ({next(iter(vals)):g}) over {len(done)} trials"
    varying = [p for p in (done[0].params or {}) if len({repr(t.params.get(p)) for t in done}) > 1]
    if not varying:
        return f"no parameter takes two values in the {len(done)} complete trials"
    return None


def plot_optuna(study_or_x, out_dir: str | Path, *, objective: int | None = None) -> dict[str, Path]:
    """optuna.visualization.matplotlib plots of a study into ``out_dir``: ``pareto`` (two or more objectives),
    ``vs_params_<objective>`` (slice), ``contour_<objective>`` (two or more parameters), ``importance``
    (first objective; skipped with an :class:`ImportanceUndefined` warning when undefined). Labels carry
    units; titles the workloads and the base architecture."""
    import warnings

    import optuna.visualization.matplotlib as ovm

    plt = _plt()
    study = _open(study_or_x)
    out = Path(out_dir)
    names, labels, ctx = _labels(study)
    files: dict[str, Path] = {}
    done = [t for t in study.get_trials(deepcopy=False) if t.state == TrialState.COMPLETE and t.values]
    if not done:
        return files
    params = sorted({p for t in done for p in (t.params or {})})
    suffix = f" — {ctx}" if ctx else ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        if len(names) >= 2:
            cf = {}
            if not hasattr(optuna.Trial, "set_constraint") and any("wg_constraints" in t.user_attrs for t in done):
                cf = {"constraints_func": lambda t: t.user_attrs.get("wg_constraints", [0.0])}  # Optuna < 4
            ax = ovm.plot_pareto_front(study, target_names=labels, **cf)
            _title(ax, f"Pareto front{suffix}")
            files["pareto"] = _save(_fig_of(ax), out / "pareto.png")
        for i, n in enumerate(names):
            if objective is not None and i != objective:
                continue
            kw = dict(target=(lambda t, i=i: t.values[i]), target_name=labels[i])
            if params:
                ax = ovm.plot_slice(study, **kw)
                _title(ax, f"{n} against each parameter{suffix}")
                files[f"vs_params_{n}"] = _save(_fig_of(ax), out / f"{n}_vs_params.png")
            if len(params) >= 2 and _has_scipy():     # Optuna's matplotlib contour interpolates with scipy
                ax = ovm.plot_contour(study, params=params[:4], **kw)
                _title(ax, f"{n}: contour{suffix}")
                files[f"contour_{n}"] = _save(_fig_of(ax), out / f"{n}_contour.png")
        why = importance_undefined(study, 0)
        if why:
            warnings.warn(f"parameter importance undefined ({why}): importance plot not written",
                          ImportanceUndefined, stacklevel=2)
        else:
            imp = param_importances(study, 0)
            fig, ax = plt.subplots(figsize=(6, 0.9 + 0.45 * max(1, len(imp))))
            ks = list(imp)[::-1]
            ax.barh(ks, [imp[k] for k in ks], color="tab:green")
            ax.set_xlabel(f"importance for {labels[0]} (share of variance)")
            ax.set_xlim(0, 1)
            ax.set_title(f"parameter importance{suffix}", fontsize=9)
            fig.tight_layout()
            files["importance"] = _save(fig, out / "importance.png")
    return files


def report(x, out_dir: str | Path | None = None, *, storage: str | None = None) -> dict[str, Path]:
    """Write results.csv/.parquet and the plots (:func:`plot_optuna`: Pareto front, slice, contour,
    importance) into ``out_dir`` (default: the study's output folder / report). Returns the files."""
    from .spec import StudySpec, load_study

    spec = None
    if isinstance(x, StudySpec):
        spec = x
    elif isinstance(x, (str, Path)) and str(x).endswith((".yaml", ".yml")):
        spec = load_study(x)
    study = _open(spec if spec is not None else x, storage)
    df = results(study)
    if out_dir is None:
        out_dir = (spec.output_dir if spec else Path.cwd() / f"{study.study_name}_out") / "report"
    out = Path(out_dir)
    files = {"csv": export(df, out / "results.csv")}
    try:
        files["parquet"] = export(df, out / "results.parquet")
    except ImportError:
        pass
    files.update(plot_optuna(study, out))
    return files

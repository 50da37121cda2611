"""Study specification: a YAML file describing one design-space exploration.

Example (see ``explore/examples/*.yaml``)::

    name: tma_depth_x_bw
    base: h200                      # architecture name or path (relative to this file)
    overrides: {}                   # fixed overrides applied to every trial (dotted arch paths)
    workloads:
      - h200/gemm_tma_M2048_N2048_K2048          # bundled record, or a path relative to this file
      - {record: my_records/gemm_small, scale: 0.25}
    space:
      tma.admission_depth: [4, 8, 16, 32]        # categorical
      tma.bytes_per_cycle: {int: [16, 128], step: 16}
      l2.hit_latency_cycles: {float: [150, 300], log: true, points: 4}   # `points`: grid resolution
    objectives:
      - {metric: cycles, direction: minimize}
      - {metric: sram_bytes, direction: minimize}
    constraints:
      - {metric: sram_bytes, max: 60000000}
    sampler: nsga2                  # grid | tpe | nsga2 | random, or {type: nsga2, population_size: 16}
    trials: 40
    seed: 0
    timeout_s: 3600
    mode: timing                    # timing | sampled
    evaluator: warpgraph            # or python:package.module:function

Every problem raises :class:`warpgraph.UserError` (``SpecError``) naming ``study.yaml:LINE (yaml.path)``.
"""
from __future__ import annotations

import importlib
import io
import math
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import (BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError, field_validator,
                      model_validator)

import warpgraph

SAMPLERS = ("grid", "tpe", "nsga2", "random")
COST_METRICS = ("sram_bytes", "area_units")


class StudyError(warpgraph.UserError):
    """An invalid study file (or a study that cannot run as specified). A ``UserError``: the CLI prints it
    without a traceback and exits 2."""


def _spec_error(message: str, location: str | None = None, hint: str | None = None) -> StudyError:
    return StudyError(message, location=location, hint=hint)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class IntRange(_Strict):
    bounds: tuple[int, int] = Field(alias="int")
    step: int | None = None
    log: bool = False

    @model_validator(mode="after")
    def _check(self):
        lo, hi = self.bounds
        if lo > hi:
            raise ValueError(f"empty range [{lo}, {hi}]: lo must be <= hi")
        if self.step is not None and self.step <= 0:
            raise ValueError("step must be > 0")
        if self.log and lo <= 0:
            raise ValueError("log range needs lo > 0")
        if self.log and self.step not in (None, 1):
            raise ValueError("log and step cannot be combined")
        return self

    def grid(self) -> list[int]:
        lo, hi = self.bounds
        if self.log:  # powers of two times lo
            out, v = [], lo
            while v <= hi:
                out.append(v)
                v *= 2
            return out
        return list(range(lo, hi + 1, self.step or 1))


class FloatRange(_Strict):
    bounds: tuple[float, float] = Field(alias="float")
    log: bool = False
    step: float | None = None
    points: int | None = Field(default=None, ge=2)

    @model_validator(mode="after")
    def _check(self):
        lo, hi = self.bounds
        if not lo < hi:
            raise ValueError(f"empty range [{lo}, {hi}]: lo must be < hi")
        if self.step is not None and self.step <= 0:
            raise ValueError("step must be > 0")
        if self.log and lo <= 0:
            raise ValueError("log range needs lo > 0")
        if self.log and self.step is not None:
            raise ValueError("log and step cannot be combined")
        return self

    def grid(self) -> list[float] | None:
        lo, hi = self.bounds
        if self.step is not None:
            n = int(math.floor((hi - lo) / self.step + 1e-9)) + 1
            return [lo + i * self.step for i in range(n)]
        if self.points is None:
            return None
        n = self.points
        if self.log:
            a, b = math.log(lo), math.log(hi)
            return [math.exp(a + (b - a) * i / (n - 1)) for i in range(n)]
        return [lo + (hi - lo) * i / (n - 1) for i in range(n)]


Categorical = list[Union[bool, int, float, str, None]]


def _dim_tag(v):
    if isinstance(v, list):
        return "Categorical"
    if isinstance(v, dict):
        if "int" in v:
            return "IntRange"
        if "float" in v:
            return "FloatRange"
    if isinstance(v, (IntRange, FloatRange)):
        return type(v).__name__
    return None


Dimension = Annotated[Union[Annotated[Categorical, Tag("Categorical")], Annotated[IntRange, Tag("IntRange")],
                            Annotated[FloatRange, Tag("FloatRange")]],
                      Discriminator(_dim_tag, custom_error_type="dimension",
                                    custom_error_message="expected a list of values, {int: [lo, hi]} or "
                                                         "{float: [lo, hi]}")]


class Objective(_Strict):
    metric: str
    direction: Literal["minimize", "maximize"] = "minimize"
    workload: str | None = None       # a workload name: use that workload's metric instead of the aggregate


class Constraint(_Strict):
    metric: str
    max: float | None = None
    min: float | None = None
    workload: str | None = None

    @model_validator(mode="after")
    def _check(self):
        if self.max is None and self.min is None:
            raise ValueError("a constraint needs `max` and/or `min`")
        return self


class SamplerSpec(_Strict):
    type: Literal["grid", "tpe", "nsga2", "random"]
    model_config = ConfigDict(extra="allow")  # remaining keys are passed to the Optuna sampler

    def kwargs(self) -> dict:
        return dict(self.model_extra or {})


class WorkloadSpec(_Strict):
    record: str
    scale: float | None = Field(default=None, gt=0, le=1)
    name: str | None = None


class StudySpec(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    base: str = "h200"
    overrides: dict[str, Any] = Field(default_factory=dict)
    workloads: list[Union[str, WorkloadSpec]] = Field(min_length=1)
    space: dict[str, Dimension] = Field(min_length=1)
    objectives: list[Objective] = Field(min_length=1)
    constraints: list[Constraint] = Field(default_factory=list)
    sampler: Union[Literal["grid", "tpe", "nsga2", "random"], SamplerSpec] = "tpe"
    trials: int | None = Field(default=None, gt=0)
    seed: int = 0
    timeout_s: float | None = Field(default=None, gt=0)
    mode: Literal["timing", "sampled", "waves"] = "timing"
    # mode waves (or sampled): how many waves run in detail, the rest extrapolated (runner/waves.py; its
    # default when left out). With mode sampled, setting it samples the first waves only.
    waves: int | None = Field(default=None, gt=0)
    evaluator: str = "warpgraph"
    # advanced: replaces warpgraph.load_arch (python:module:function taking (base, overrides) -> spec);
    # used by tests and by users with their own architecture models
    arch_loader: str = "warpgraph"
    output: str | None = None           # results folder; default: <study file stem>_out next to the file
    area_coefficients: dict[str, float] = Field(default_factory=dict)
    # reuse one functional pass for trials that cannot change it (runner/trace_cache.py); the traces live in
    # <storage folder>/traces for a journal storage (shared by the study's workers)
    trace_cache: bool = True

    @field_validator("space")
    @classmethod
    def _space(cls, v):
        for k, d in v.items():
            if isinstance(d, list) and not d:
                raise ValueError(f"{k}: empty list of choices")
        return v

    @model_validator(mode="after")
    def _waves_need_a_mode(self):
        if self.waves is not None and self.mode == "timing":
            raise ValueError("`waves` applies to mode waves or sampled, not timing")
        return self

    @field_validator("evaluator", "arch_loader")
    @classmethod
    def _evaluator(cls, v):
        if v != "warpgraph" and not (v.startswith("python:") and v.count(":") == 2):
            raise ValueError("expected `warpgraph` or `python:package.module:function`")
        return v

    # --------------------------------------------------------------------------------- helpers
    _file: Path | None = None
    _lines: dict | None = None

    @property
    def sampler_type(self) -> str:
        return self.sampler if isinstance(self.sampler, str) else self.sampler.type

    @property
    def sampler_kwargs(self) -> dict:
        return {} if isinstance(self.sampler, str) else self.sampler.kwargs()

    @property
    def directions(self) -> list[str]:
        return [o.direction for o in self.objectives]

    @property
    def file(self) -> Path | None:
        return self._file

    @property
    def output_dir(self) -> Path:
        root = self._file.parent if self._file else Path.cwd()
        if self.output:
            return (root / self.output).resolve()
        stem = self._file.stem if self._file else self.name
        return (root / f"{stem}_out").resolve()

    @property
    def default_storage(self) -> str:
        return str(self.output_dir / "study.journal")

    def loc(self, *path) -> str:
        """``study.yaml:LINE (yaml.path)`` for a YAML path (best effort)."""
        return _location(self._file, self._lines, path)

    def grid_points(self) -> list[dict]:
        """All grid points (cartesian product, in a fixed order) or a StudyError for an infinite space."""
        axes = []
        for k, d in self.space.items():
            if isinstance(d, list):
                vals = list(d)
            else:
                vals = d.grid()
                if vals is None:
                    raise _spec_error("the grid sampler needs a finite space", self.loc("space", k),
                                      "a list of values, {int: [lo, hi]}, or {float: [lo, hi], step|points: ...}")
            axes.append((k, vals))
        pts: list[dict] = [{}]
        for k, vals in axes:
            pts = [{**p, k: v} for p in pts for v in vals]
        return pts

    def budget(self) -> int:
        if self.sampler_type == "grid":
            n = len(self.grid_points())
            return min(n, self.trials) if self.trials else n
        return int(self.trials)  # validated non-None for other samplers


def _location(file: Path | None, data, path) -> str:
    fname = file.name if file else "<study>"
    line = _find_line(data, path)
    yp = ""
    for p in path:
        if isinstance(p, int):
            yp += f"[{p}]"
        elif isinstance(p, str) and "." in p:
            yp += f"[{p}]"
        else:
            yp += ("." if yp else "") + str(p)
    s = f"{fname}:{line}" if line else fname
    return f"{s} ({yp})" if yp else s


def _find_line(data, path) -> int | None:
    """1-based line of the deepest node of ``path`` found in a ruamel round-trip tree."""
    node, line = data, None
    for p in path:
        try:
            if hasattr(node, "lc") and isinstance(node, dict) and p in node:
                line = node.lc.key(p)[0] + 1
                node = node[p]
            elif hasattr(node, "lc") and isinstance(node, list) and isinstance(p, int) and 0 <= p < len(node):
                line = node.lc.item(p)[0] + 1
                node = node[p]
            else:
                break
        except Exception:
            break
    if line is None and hasattr(data, "lc"):
        line = data.lc.line + 1
    return line


_MAX_NODES, _MAX_DEPTH = 100_000, 32   # alias expansion / nesting limits of a study file (issue 21)


def _plain(x, _budget=None, _depth=0):
    """ruamel round-trip objects -> plain python (aliases expanded within limits: an alias bomb is refused)."""
    if _budget is None:
        _budget = [_MAX_NODES]
    _budget[0] -= 1
    if _budget[0] < 0 or _depth > _MAX_DEPTH:
        raise _spec_error(f"study YAML expands to more than {_MAX_NODES:,} values or nests deeper than "
                          f"{_MAX_DEPTH} levels (aliases / anchors)", None, "a plain study file")
    if isinstance(x, dict):
        return {str(k): _plain(v, _budget, _depth + 1) for k, v in x.items()}
    if isinstance(x, list):
        return [_plain(v, _budget, _depth + 1) for v in x]
    if isinstance(x, bool) or x is None:
        return x
    if isinstance(x, int):
        return int(x)
    if isinstance(x, float):
        return float(x)
    if isinstance(x, str):
        return str(x)
    return x


def _loc_from_pydantic(loc: tuple) -> tuple:
    """Drop pydantic's union-member tags (``list[...]``, ``IntRange``, ``function-after[...]``) from a loc."""
    out = []
    for p in loc:
        if isinstance(p, str) and (p in ("IntRange", "FloatRange", "Categorical", "SamplerSpec", "WorkloadSpec",
                                         "str")
                                   or "[" in p or p.startswith("literal")):
            continue
        out.append(p)
    return tuple(out)


def parse_study(text: str, file: str | Path | None = None) -> StudySpec:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    fpath = Path(file).resolve() if file else None
    fname = fpath.name if fpath else "<study>"
    try:
        data = YAML(typ="rt").load(io.StringIO(text))
    except RecursionError:
        raise _spec_error("study YAML nested too deeply", fname, "a plain study file") from None
    except YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{fname}:{mark.line + 1}" if mark else fname
        raise _spec_error(f"invalid YAML: {getattr(e, 'problem', e)}", where) from None
    if not isinstance(data, dict):
        raise _spec_error("a study file must be a YAML mapping", fname, "keys name, base, workloads, space, ...")
    try:
        spec = StudySpec.model_validate(_plain(data))
    except ValidationError as e:
        err = e.errors()[0]
        # choose the most specific error: for unions pydantic reports one per member; prefer the deepest loc
        best = max(e.errors(), key=lambda er: len(_loc_from_pydantic(er["loc"])))
        err = best
        path = _loc_from_pydantic(err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        hint = _hint_for(path)
        raise _spec_error(f"{msg} (got {err.get('input')!r})" if err["type"] != "missing" else msg,
                          _location(fpath, data, path), hint) from None
    spec._file = fpath
    spec._lines = data
    if spec.sampler_type != "grid" and spec.trials is None:
        raise _spec_error(f"sampler {spec.sampler_type!r} needs a trial budget", spec.loc("sampler"),
                          "trials: N")
    if spec.sampler_type == "grid":
        spec.grid_points()  # raises for infinite spaces
    return spec


def _hint_for(path: tuple) -> str | None:
    if not path:
        return None
    top = path[0]
    return {
        "sampler": "one of grid, tpe, nsga2, random (or {type: ..., <optuna sampler kwargs>})",
        "space": "a list of values, {int: [lo, hi], step?, log?} or {float: [lo, hi], log?, step?, points?}",
        "objectives": "a list of {metric: NAME, direction: minimize|maximize}",
        "constraints": "a list of {metric: NAME, max: X, min: Y}",
        "workloads": "a list of record names/paths or {record: ..., scale: 0.25}",
        "mode": "timing, sampled or waves",
        "waves": "a positive number of waves run in detail (mode waves or sampled)",
    }.get(top)


def load_study(path: str | Path) -> StudySpec:
    p = Path(path)
    if not p.is_file():
        raise _spec_error(f"study file not found: {path}")
    from warpgraph.core.errors import read_user_text

    return parse_study(read_user_text(p, what="study file", max_bytes=4 << 20, error=StudyError), p)


# ------------------------------------------------------------------------------------ resolution
def import_object(ref: str, what: str, location: str | None = None):
    """``python:package.module:function`` -> the function."""
    _, mod, fn = ref.split(":")
    try:
        return getattr(importlib.import_module(mod), fn)
    except (ImportError, AttributeError) as e:
        raise _spec_error(f"cannot import {what} {ref!r}: {e}", location) from None


def bundled_records_dir() -> Path:
    return Path(warpgraph.__file__).resolve().parent / "workloads" / "records"


def resolve_workloads(spec: StudySpec) -> list["Workload"]:
    out = []
    root = spec.file.parent if spec.file else Path.cwd()
    for i, w in enumerate(spec.workloads):
        ws = WorkloadSpec(record=w) if isinstance(w, str) else w
        cand = [root / ws.record, bundled_records_dir() / ws.record, Path(ws.record),
                bundled_records_dir().parent / ws.record]          # microbench/<name>
        path = next((c for c in cand if (c / "launch.json").is_file() or (c.is_file() and c.suffix == ".json")),
                    None)
        if path is None:
            raise _spec_error(f"workload {ws.record!r} not found", spec.loc("workloads", i),
                              f"a launch-record folder relative to the study file, or a bundled name under "
                              f"{bundled_records_dir()} (e.g. h200/gemm_tma_M2048_N2048_K2048)")
        name = ws.name or Path(ws.record).name
        out.append(Workload(name=name, path=str(path.resolve()), scale=ws.scale))
    names = [w.name for w in out]
    if len(set(names)) != len(names):
        raise _spec_error("two workloads have the same name", spec.loc("workloads"), "give them `name:`")
    return out


class Workload(BaseModel):
    """What an evaluator gets per workload: ``name``, ``path`` (launch-record folder), ``scale`` (or None)."""

    model_config = ConfigDict(frozen=True)
    name: str
    path: str
    scale: float | None = None


def arch_loader(spec: StudySpec):
    if spec.arch_loader == "warpgraph":
        return warpgraph.load_arch
    return import_object(spec.arch_loader, "arch loader", spec.loc("arch_loader"))


def resolve_base(spec: StudySpec) -> str:
    root = spec.file.parent if spec.file else Path.cwd()
    b = spec.base
    if b.endswith((".yaml", ".yml")) and (root / b).is_file():
        return str((root / b).resolve())
    return b


def validate_paths(spec: StudySpec):
    """Apply the fixed overrides, then each space dimension's candidate values (all choices of a categorical,
    both ends of a range) to the base architecture once; report a bad path/value with the study file line.
    Returns the base ArchSpec with the fixed overrides."""
    load = arch_loader(spec)
    base = resolve_base(spec)
    UserError = warpgraph.UserError
    try:
        arch = load(base, overrides=dict(spec.overrides))
    except UserError as e:
        key = next(iter(spec.overrides), None)
        where = spec.loc("overrides") if spec.overrides else spec.loc("base")
        raise _spec_error(f"cannot apply base/overrides: {e.message}", where, e.hint) from None
    from .metrics import cost_inputs

    try:  # the cost proxies (sram_bytes, area_units) of every trial read these typed fields
        cost_inputs(arch)
    except UserError as e:
        raise _spec_error(e.message, spec.loc("arch_loader") if spec.arch_loader != "warpgraph" else spec.loc("base"),
                          e.hint) from None
    for k, d in spec.space.items():
        vals = d if isinstance(d, list) else list(d.bounds)
        for v in vals:
            try:
                load(base, overrides={**spec.overrides, k: v})
            except UserError as e:
                raise _spec_error(f"bad design-space dimension {k!r} = {v!r}: {e.message}",
                                  spec.loc("space", k), e.hint or "a dotted path the architecture loader accepts")
                
    return arch


def _close(name: str, options) -> str:
    import difflib

    near = difflib.get_close_matches(name, list(options), n=3, cutoff=0.6)
    return f"did you mean {', '.join(near)}?" if near else ""


def check_metrics(spec: StudySpec, metric_check=None, options=()) -> list[str]:
    """Every objective and constraint names a metric the evaluator produces and, with ``workload:``, a workload
    of the study; raises :class:`StudyError` at the YAML line otherwise. ``metric_check(name) -> bool`` is the
    evaluator's (``make_evaluator(spec).metric_check``); without one (a python evaluator that declares no
    ``metric_names``) only workload names are checked. Returns notes on what could not be checked."""
    names = {w.name for w in resolve_workloads(spec)}
    notes = []
    items = [("objectives", i, o) for i, o in enumerate(spec.objectives)]
    items += [("constraints", i, c) for i, c in enumerate(spec.constraints)]
    for section, i, o in items:
        if o.workload is not None and o.workload not in names:
            raise _spec_error(f"{section[:-1]} workload {o.workload!r} is not a workload of the study",
                              spec.loc(section, i, "workload"), "one of: " + ", ".join(sorted(names)))
        if o.metric in COST_METRICS:
            continue
        if metric_check is None:
            continue
        if not metric_check(o.metric):
            near = _close(o.metric, [*options, *COST_METRICS])
            hint = (near + " " if near else "") + (
                "a metric of RunResult.metrics (e.g. cycles, dram_read_bytes, stall_ratios_per_issue.wait), "
                "sram_bytes / area_units, or a component statistic stat:COMPONENT:STAT "
                "(e.g. stat:tma:admission_stall_cycles, stat:sm*:active_cycles)"
                if spec.evaluator == "warpgraph" else "one of: " + ", ".join([*options, *COST_METRICS]))
            raise _spec_error(f"unknown metric {o.metric!r}", spec.loc(section, i, "metric"), hint)
    if metric_check is None:
        notes.append(f"metric names not checked: evaluator {spec.evaluator} declares no metric_names")
    return notes


def check_workloads(spec: StudySpec) -> list["Workload"]:
    """Resolve every workload and, for the ``warpgraph`` evaluator, load its launch record (and scale it when
    the study says ``scale:``), so a bad record fails before any trial."""
    out = resolve_workloads(spec)
    if spec.evaluator != "warpgraph":
        return out
    from .evaluators import _record

    for i, w in enumerate(out):
        try:
            _record(w.path, w.scale)
        except warpgraph.UserError as e:
            raise _spec_error(f"workload {w.name!r}: {e.message}", spec.loc("workloads", i), e.hint) from None
    return out


def check_study(spec: StudySpec) -> list[str]:
    """Everything ``warpgraph explore --check`` validates without simulating: architecture paths and values of
    the space, workloads (records load; ``scale:`` applies), objective and constraint metric names. Returns
    notes on what could not be checked."""
    from .evaluators import make_evaluator

    validate_paths(spec)
    check_workloads(spec)
    ev = make_evaluator(spec)
    return check_metrics(spec, getattr(ev, "metric_check", None), getattr(ev, "metric_options", ()))

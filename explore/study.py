"""Running a study: Optuna storage, samplers, the trial budget, workers, stale-trial recovery.

Budget accounting (the same in every worker, so N workers on M machines run exactly ``budget`` trials):
a trial *uses* the budget when it is WAITING, RUNNING, COMPLETE, PRUNED, or FAIL with an evaluation error
(``user_attrs["wg_error"]``). A FAIL without an error is *abandoned* (its worker was killed or interrupted)
and a retry with the same parameters is enqueued by whoever marked it failed (exactly one process: the
state transition is atomic in the storage). A trial created by the sampler when the budget is already used
(a race between workers) is marked FAIL with ``wg_spurious`` and not evaluated. The grid sampler enqueues
every grid point once (in a fixed order) when the study is created or resumed by the coordinating process,
so workers only pop queued points: no duplicates.

Stale trials: on an RDB storage (PostgreSQL, MySQL, SQLite) Optuna's heartbeat marks a trial of a dead
worker FAIL after ``grace_period`` seconds; on every storage a worker on the same host whose process is gone
(pid + start time recorded in ``user_attrs["wg_worker"]``) is detected at once.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any, Callable

import optuna
from optuna.trial import TrialState

import warpgraph

from .evaluators import make_evaluator
from .metrics import cost_metrics, lookup
from .spec import (FloatRange, IntRange, StudySpec, _spec_error, arch_loader, check_study, load_study,
                   resolve_base, resolve_workloads)

HEARTBEAT_INTERVAL_S = int(os.environ.get("WARPGRAPH_EXPLORE_HEARTBEAT_S", "10"))
GRACE_PERIOD_S = int(os.environ.get("WARPGRAPH_EXPLORE_GRACE_S", "30"))
MAX_RETRIES = 3
_HAS_SET_CONSTRAINT = hasattr(optuna.Trial, "set_constraint")
STATE_NAMES = {s: s.name for s in TrialState}


# ------------------------------------------------------------------------------------------ storage
def is_rdb_url(s: str) -> bool:
    return "://" in s and not s.startswith("file://")


def open_storage(url_or_path: str | Path):
    """An Optuna storage: an RDB URL (``postgresql://…``, ``sqlite:///…``) or a journal file path."""
    s = str(url_or_path)
    if is_rdb_url(s):
        s = _pg_driver(s)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            return optuna.storages.RDBStorage(
            s, engine_kwargs={"pool_pre_ping": True} if not s.startswith("sqlite") else None,
            heartbeat_interval=HEARTBEAT_INTERVAL_S, grace_period=GRACE_PERIOD_S,
            heartbeat_stale_trial_callback=_retry_stale)
    from optuna.storages.journal import JournalFileBackend

    s = s.removeprefix("file://")
    Path(s).parent.mkdir(parents=True, exist_ok=True)
    repair_journal(s)
    return optuna.storages.JournalStorage(JournalFileBackend(s))


def repair_journal(path: str | Path) -> str | None:
    """Make a journal file safe to read and append to (under Optuna's own journal lock, so no live writer is cut).

    A torn last line (a write interrupted by ``kill -9`` or a full disk) is moved to ``<journal>.torn`` and the
    file truncated to its last complete line (a complete JSON record that only lacks its newline gets one), so
    resuming never appends to it. A corrupt line before the end is refused with its line number and a repair
    command. Returns a note of what was repaired (None when nothing was)."""
    from optuna.storages.journal import JournalFileSymlinkLock

    p = Path(path)
    if not p.is_file() or p.stat().st_size == 0:
        return None
    lock = JournalFileSymlinkLock(str(p))
    lock.acquire()
    try:
        data = p.read_bytes()
        end = data.rfind(b"\n") + 1          # bytes up to the last newline are complete lines
        body, tail = data[:end], data[end:]
        import json

        lines = body.splitlines()
        first = 1 if len(body) <= 16 << 20 else max(1, len(lines))  # big journals: check the last line only
        for i, line in enumerate(lines[first - 1:], start=first):
            try:
                json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise warpgraph.UserError(
                    "study journal is corrupt (not a JSON record)", location=f"{p}:{i}",
                    hint=f"keep its first {i - 1} lines (trials recorded after them are lost): "
                         f"head -n {i - 1} {p} > {p}.fixed && mv {p}.fixed {p}") from None
        if not tail:
            return None
        n = body.count(b"\n") + 1
        try:
            json.loads(tail)
            complete = True
        except (json.JSONDecodeError, UnicodeDecodeError):
            complete = False
        if complete:
            with open(p, "ab") as f:
                f.write(b"\n")
                f.flush()
                os.fsync(f.fileno())
            note = f"study journal {p}: line {n} lacked its newline (added)"
        else:
            with open(f"{p}.torn", "ab") as f:
                f.write(tail + b"\n")
            with open(p, "r+b") as f:
                f.truncate(end)
                f.flush()
                os.fsync(f.fileno())
            note = (f"study journal {p}: torn last line {n} ({len(tail)} bytes, an interrupted write) moved to "
                    f"{p}.torn; the study resumes from line {n - 1}")
        print(f"warning: {note}", file=sys.stderr)
        return note
    finally:
        lock.release()


def _pg_driver(url: str) -> str:
    """SQLAlchemy >= 2.1 maps ``postgresql://`` to psycopg 3; use psycopg2 when only that is installed."""
    if url.startswith(("postgresql://", "postgres://")):
        import importlib.util

        if importlib.util.find_spec("psycopg") is None and importlib.util.find_spec("psycopg2") is not None:
            return "postgresql+psycopg2://" + url.split("://", 1)[1]
    return url


def storage_of(spec: StudySpec, storage: str | None) -> str:
    return storage or spec.default_storage


# ------------------------------------------------------------------------------------------ samplers
def _constraints(trial: optuna.trial.FrozenTrial):
    return trial.user_attrs.get("wg_constraints", [0.0])


def make_sampler(spec: StudySpec, worker_index: int = 0) -> optuna.samplers.BaseSampler:
    seed = spec.seed + 7919 * worker_index
    kw = spec.sampler_kwargs
    t = spec.sampler_type
    # Optuna >= 5: constraints are set on the trial (Trial.set_constraint); older: constraints_func
    cf = {"constraints_func": _constraints} if spec.constraints and not _HAS_SET_CONSTRAINT else {}
    try:
        if t == "tpe":
            return optuna.samplers.TPESampler(seed=seed, **cf, **kw)
        if t == "nsga2":
            kw.setdefault("population_size", min(50, max(4, (spec.trials or 20) // 4)))
            return optuna.samplers.NSGAIISampler(seed=seed, **cf, **kw)
        if t == "random":
            return optuna.samplers.RandomSampler(seed=seed, **kw)
        return optuna.samplers.RandomSampler(seed=seed)  # grid: points are enqueued; never really sampled
    except TypeError as e:
        raise _spec_error(f"bad sampler option: {e}", spec.loc("sampler"), "keyword arguments of the Optuna "
                          f"{t} sampler") from None


# ------------------------------------------------------------------------------------------ accounting
def _kind(t: optuna.trial.FrozenTrial) -> str:
    ua = t.user_attrs
    if ua.get("wg_spurious"):
        return "spurious"
    if t.state == TrialState.FAIL:
        return "error" if "wg_error" in ua else "abandoned"
    return STATE_NAMES[t.state].lower()


def _uses_budget(t) -> bool:
    return _kind(t) in ("waiting", "running", "complete", "pruned", "error")


def counts(study: optuna.Study) -> dict[str, int]:
    c: dict[str, int] = {}
    for t in study.get_trials(deepcopy=False):
        k = _kind(t)
        c[k] = c.get(k, 0) + 1
    c["used"] = sum(v for k, v in c.items() if k in ("waiting", "running", "complete", "pruned", "error"))
    c["finished"] = c.get("complete", 0) + c.get("pruned", 0) + c.get("error", 0)
    return c


def _param_key(params: dict) -> tuple:
    return tuple(sorted((k, repr(v)) for k, v in params.items()))


def _enqueue_retry(study: optuna.Study, t: optuna.trial.FrozenTrial):
    n_retry = int(t.user_attrs.get("wg_retries", 0))
    if n_retry >= MAX_RETRIES:
        return
    params = t.user_attrs.get("wg_params") or t.params or {}
    names = t.user_attrs.get("wg_space")
    if not params or (names and set(params) != set(names)):
        return  # killed before all parameters were chosen: let the sampler fill the slot instead
    study.enqueue_trial(params, user_attrs={"wg_queued": True, "wg_params": params, "wg_retry_of": t.number,
                                            "wg_retries": n_retry + 1})


def _retry_stale(study: optuna.Study, t: optuna.trial.FrozenTrial):
    """Optuna heartbeat callback (RDB storages): called once, by the process that failed the stale trial."""
    _enqueue_retry(study, t)


def _proc_start(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        if fields[0] in ("Z", "X"):
            return None
        return fields[19]
    except (OSError, IndexError):
        return None


def _owner() -> dict:
    return {"host": socket.gethostname(), "pid": os.getpid(), "start": _proc_start(os.getpid())}


def reap_stale(study: optuna.Study) -> int:
    """Fail RUNNING trials whose worker is gone (same host: pid check; any host: Optuna heartbeat on RDB)
    and enqueue their retries. Returns the number of trials reaped by the pid check."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        optuna.storages.fail_stale_trials(study)
    host, n = socket.gethostname(), 0
    orphans_ok = None   # computed once: may RUNNING trials without an owner be reaped?
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        w = t.user_attrs.get("wg_worker")
        if not w:
            # a worker killed between taking the trial and recording itself as its owner: reap it once no
            # registered worker of the study can still own it (all registered on this host and gone)
            if orphans_ok is None:
                orphans_ok = _no_live_workers(study, host)
            if not orphans_ok:
                continue
        elif w.get("host") != host or w.get("pid") == os.getpid():
            continue
        else:
            start = _proc_start(int(w["pid"]))
            if start is not None and start == w.get("start"):
                continue  # alive
        try:
            study.tell(t.number, state=TrialState.FAIL)
        except Exception:  # another process got there first
            continue
        _enqueue_retry(study, t)
        n += 1
    return n


def register_worker(study: optuna.Study) -> None:
    """Record this process as a worker of ``study`` before it takes any trial (study user attribute
    ``wg_workers.<host>.<pid>``), so a trial left RUNNING without an owner can be told from one being started."""
    o = _owner()
    study.set_user_attr(f"wg_workers.{o['host']}.{o['pid']}", o)


def _no_live_workers(study: optuna.Study, host: str) -> bool:
    """True when every worker registered for ``study`` ran on this host and is gone (this process excepted)."""
    for k, o in study.user_attrs.items():
        if not k.startswith("wg_workers.") or not isinstance(o, dict):
            continue
        if o.get("host") != host:
            return False
        if o.get("pid") == os.getpid():
            continue
        start = _proc_start(int(o["pid"]))
        if start is not None and start == o.get("start"):
            return False
    return True




# ------------------------------------------------------------------------------------------ setup
def _space_of(spec: StudySpec) -> dict:
    """The search space as plain data (choices, or range bounds with step / log / points)."""
    return {k: ({"choices": list(d)} if isinstance(d, list) else d.model_dump(by_alias=True, exclude_none=True))
            for k, d in spec.space.items()}


def _jsonish(x):
    import json

    return json.loads(json.dumps(x))


def _snapshot(spec: StudySpec) -> dict:
    return {"params": list(spec.space), "space": _jsonish(_space_of(spec)),
            "objectives": [o.metric for o in spec.objectives],
            "directions": spec.directions, "sampler": spec.sampler_type, "seed": spec.seed,
            "study_file": str(spec.file) if spec.file else None, "base": spec.base,
            "workloads": [w if isinstance(w, str) else (w.name or w.record) for w in spec.workloads]}


def _changes(study: optuna.Study, spec: StudySpec) -> list[str]:
    """What differs between the stored study and ``spec`` in ways that would mix incomparable trials: the
    parameters, their ranges / choices, the objectives. Empty for a new study."""
    ua = study.user_attrs
    if "wg_params" not in ua:
        return []
    out = []
    snap = _snapshot(spec)
    if list(ua.get("wg_params") or []) != snap["params"]:
        out.append(f"parameters {ua.get('wg_params')} -> {snap['params']}")
    elif "wg_space" in ua and ua["wg_space"] != snap["space"]:
        for k in snap["params"]:
            if ua["wg_space"].get(k) != snap["space"].get(k):
                out.append(f"{k}: {ua['wg_space'].get(k)} -> {snap['space'].get(k)}")
    if list(ua.get("wg_objectives") or []) != snap["objectives"]:
        out.append(f"objectives {ua.get('wg_objectives')} -> {snap['objectives']}")
    return out


def prepare(spec: StudySpec, storage: str | None = None, *, trials: int | None = None,
            validate: bool = True, new_study: bool = False) -> optuna.Study:
    """Coordinator step: validate the study, create (or load) it in the storage, record its budget, reap
    stale trials and enqueue grid points. Safe to call again to resume. A stored study whose search space or
    objectives differ from ``spec`` is refused (its trials would mix with the new ones) unless ``new_study``,
    which deletes the stored study of that name and starts again."""
    if validate:
        check_study(spec)
    st = open_storage(storage_of(spec, storage))
    if new_study:
        try:
            optuna.delete_study(study_name=spec.name, storage=st)
        except KeyError:
            pass
    study = optuna.create_study(study_name=spec.name, storage=st, directions=spec.directions,
                                sampler=make_sampler(spec), load_if_exists=True)
    if [d.name.lower() for d in study.directions] != spec.directions:
        raise _spec_error(f"study {spec.name!r} already exists in the storage with other objectives",
                          spec.loc("objectives"), "--new-study (discards the stored trials), a new `name:` or "
                          "another storage")
    changed = _changes(study, spec)
    if changed:
        raise _spec_error(f"study {spec.name!r} already exists in {storage_of(spec, storage)} with another search "
                          f"space: " + "; ".join(changed), spec.loc("space"),
                          "--new-study (discards the stored trials), a new `name:` or another --storage")
    with warnings.catch_warnings():   # experimental in Optuna: the dashboard's objective names
        warnings.simplefilter("ignore")
        study.set_metric_names([o.metric for o in spec.objectives])
    budget = trials or spec.budget()
    if spec.sampler_type == "grid":
        budget = min(budget, len(spec.grid_points()))
    for k, v in {**_snapshot(spec), "budget": budget}.items():
        study.set_user_attr(f"wg_{k}", v)
    reap_stale(study)
    # abandoned trials (killed / interrupted) without a retry get one (coordinator only: single process)
    all_t = study.get_trials(deepcopy=False)
    retried = {t.user_attrs.get("wg_retry_of") for t in all_t}
    for t in all_t:
        if _kind(t) == "abandoned" and t.number not in retried and spec.sampler_type != "grid":
            _enqueue_retry(study, t)
    if spec.sampler_type == "grid":
        _enqueue_grid(study, spec, budget)
    return study


def _enqueue_grid(study: optuna.Study, spec: StudySpec, budget: int):
    have = {_param_key(t.params or t.user_attrs.get("wg_params", {}))
            for t in study.get_trials(deepcopy=False) if _uses_budget(t)}
    for p in spec.grid_points()[:budget]:
        if _param_key(p) not in have:
            study.enqueue_trial(p, user_attrs={"wg_queued": True, "wg_params": p})
            have.add(_param_key(p))


def load(spec: StudySpec, storage: str | None = None, worker_index: int = 0) -> optuna.Study:
    st = open_storage(storage_of(spec, storage))
    try:
        return optuna.load_study(study_name=spec.name, storage=st, sampler=make_sampler(spec, worker_index))
    except KeyError:
        raise _spec_error(f"no study {spec.name!r} in {storage_of(spec, storage)}",
                          hint="start it first with `warpgraph explore STUDY.yaml` (without --worker)") from None


# ------------------------------------------------------------------------------------------ trials
class _Handled(Exception):
    """Raised inside the objective after the reason was recorded; the trial becomes FAIL."""


def _suggest(trial: optuna.Trial, name: str, dim) -> Any:
    if isinstance(dim, list):
        return trial.suggest_categorical(name, dim)
    if isinstance(dim, IntRange):
        lo, hi = dim.bounds
        return trial.suggest_int(name, lo, hi, step=dim.step or 1, log=dim.log)
    assert isinstance(dim, FloatRange)
    lo, hi = dim.bounds
    return trial.suggest_float(name, lo, hi, step=dim.step, log=dim.log)


class Runner:
    """Evaluates trials of one study in this process."""

    def __init__(self, spec: StudySpec, study: optuna.Study, budget: int, worker_index: int = 0,
                 trace_cache=None):
        self.spec, self.study, self.budget = spec, study, budget
        #: False, or the folder of the functional traces this study's workers share (None: simulate's default)
        self.trace_cache = trace_cache
        self.worker_index = worker_index
        self.workloads = resolve_workloads(spec)
        self.evaluate = make_evaluator(spec)
        self.load_arch = arch_loader(spec)
        self.base = resolve_base(spec)
        self.fatal: BaseException | None = None
        self.current: int | None = None

    # the Optuna objective
    def objective(self, trial: optuna.Trial):
        spec = self.spec
        self.current = trial.number
        trial.set_user_attr("wg_worker", _owner())
        if not trial.user_attrs.get("wg_queued"):
            if spec.sampler_type == "grid" or self._over_budget(trial.number):
                trial.set_user_attr("wg_spurious", True)
                raise _Handled("over budget")
        params = {k: _suggest(trial, k, d) for k, d in spec.space.items()}
        if not trial.user_attrs.get("wg_params"):
            trial.set_user_attr("wg_params", params)
        overrides = {**spec.overrides, **params}
        try:
            arch = self.load_arch(self.base, overrides=overrides)
            costs = cost_metrics(arch, spec.area_coefficients)
            metrics = self.evaluate(arch, self.workloads, overrides=overrides, mode=spec.mode, seed=spec.seed,
                                    params=params, trace_cache=self.trace_cache)
        except warpgraph.UserError as e:
            trial.set_user_attr("wg_error", e.format())
            raise _Handled(str(e)) from None
        except Exception as e:  # a bug in an evaluator: record it, keep exploring
            trial.set_user_attr("wg_error", f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=8)}")
            raise _Handled(str(e)) from None
        for k, v in costs.items():
            metrics.setdefault(k, v)
        per = metrics.pop("workloads", None)
        values = [self._metric(metrics, per, o.metric, o.workload, ("objectives", i))
                  for i, o in enumerate(spec.objectives)]
        cons = []
        for i, c in enumerate(spec.constraints):
            v = self._metric(metrics, per, c.metric, c.workload, ("constraints", i))
            if c.max is not None:
                cons.append(float(v - c.max))
            if c.min is not None:
                cons.append(float(c.min - v))
        trial.set_user_attr("metrics", metrics)
        if per is not None:
            trial.set_user_attr("workloads", per)
        if cons:
            trial.set_user_attr("wg_constraints", cons)
            if _HAS_SET_CONSTRAINT:
                for i, v in enumerate(cons):
                    trial.set_constraint(f"c{i}", v)
        return values[0] if len(values) == 1 else values

    def _metric(self, metrics, per, name, workload, where) -> float:
        src = metrics if workload is None else (per or {}).get(workload, {})
        v = lookup(src, name)
        if v is None or isinstance(v, (dict, list, str)):
            avail = ", ".join(sorted(k for k, x in src.items() if not isinstance(x, (dict, list, str))))
            self.fatal = _spec_error(f"metric {name!r} not produced by the evaluator"
                                     + (f" for workload {workload!r}" if workload else ""),
                                     self.spec.loc(*where, "metric"), f"one of: {avail}")
            raise _Handled(str(self.fatal))
        return float(v)

    def _over_budget(self, number: int) -> bool:
        used = 0
        for t in self.study.get_trials(deepcopy=False):
            if t.number == number or not _uses_budget(t):
                continue
            if t.number < number or t.state == TrialState.WAITING:
                used += 1
        return used >= self.budget

    def run(self, *, timeout_s: float | None = None, on_trial: Callable[[dict], None] | None = None,
            max_trials: int | None = None) -> dict:
        """Run trials until the budget is used (or timeout / max_trials in this process)."""
        t0 = time.monotonic()
        done_here = 0
        timeout_s = timeout_s if timeout_s is not None else self.spec.timeout_s
        register_worker(self.study)
        while True:
            reap_stale(self.study)
            c = counts(self.study)
            if c.get("waiting", 0) == 0 and c["used"] >= self.budget:
                break
            if timeout_s is not None and time.monotonic() - t0 > timeout_s:
                break
            if max_trials is not None and done_here >= max_trials:
                break
            self.current = None
            try:
                self.study.optimize(self.objective, n_trials=1, catch=(_Handled,), gc_after_trial=False)
            except KeyboardInterrupt:
                if self.current is not None:  # optimize() marked it FAIL: we are its only owner
                    t = self.study.get_trials(deepcopy=False)[self.current]
                    if _kind(t) == "abandoned":
                        _enqueue_retry(self.study, t)
                raise
            if self.fatal is not None:
                raise self.fatal
            done_here += 1
            if on_trial:
                on_trial(counts(self.study))
        return counts(self.study)


# ------------------------------------------------------------------------------------------ entry points
def trace_cache_of(spec: StudySpec, url: str, enabled: bool | None = None):
    """Where the study's workers share functional traces (runner/trace_cache.py): ``<journal folder>/traces``
    for a journal storage; simulate's default (``traces/`` under ``$WARPGRAPH_CACHE_DIR``) for an
    RDB storage (its workers may be on other machines); False when off (``trace_cache: false`` in the study or
    ``--no-trace-cache``)."""
    if enabled is False or (enabled is None and not spec.trace_cache):
        return False
    if is_rdb_url(url):
        return None
    return str(Path(url.removeprefix("file://")).resolve().parent / "traces")


def budget_of(study: optuna.Study, spec: StudySpec, trials: int | None) -> int:
    if trials:
        return trials
    return int(study.user_attrs.get("wg_budget") or spec.budget())


def run_study(spec: StudySpec | str | Path, storage: str | None = None, *, workers: int = 1,
              trials: int | None = None, progress: bool = False, timeout_s: float | None = None,
              worker_timeout_s: float | None = None, new_study: bool = False,
              trace_cache: bool | None = None) -> optuna.Study:
    """Coordinator: prepare (create/resume), then run ``workers`` local worker processes (1 = in this
    process). Returns the study. ``new_study``: discard a stored study of the same name first.
    ``trace_cache=False`` (``--no-trace-cache``): every trial runs its own functional pass."""
    if not isinstance(spec, StudySpec):
        spec = load_study(spec)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    url = storage_of(spec, storage)
    study = prepare(spec, url, trials=trials, new_study=new_study)
    budget = budget_of(study, spec, trials)
    tcache = trace_cache_of(spec, url, trace_cache)
    bar = _Progress(budget, spec.name) if progress else None
    try:
        if bar:
            bar.update(counts(study))
        if workers <= 1:
            Runner(spec, study, budget, trace_cache=tcache).run(timeout_s=timeout_s,
                                                                on_trial=bar.update if bar else None)
        else:
            procs = spawn_workers(spec, url, workers, trials=budget, timeout_s=timeout_s,
                                  trace_cache=tcache is not False)
            try:
                while any(p.poll() is None for p in procs):
                    if bar:
                        bar.update(counts(study))
                    time.sleep(0.5)
            except KeyboardInterrupt:
                for p in procs:
                    if p.poll() is None:
                        p.send_signal(signal.SIGINT)
                for p in procs:
                    p.wait()
                raise
            bad = [p.returncode for p in procs if p.returncode not in (0, None)]
            # a worker that died leaves abandoned trials: finish them here
            c = counts(study)
            if c.get("waiting", 0) or c["used"] < budget or c.get("running", 0):
                Runner(spec, study, budget, trace_cache=tcache).run(timeout_s=timeout_s,
                                                                    on_trial=bar.update if bar else None)
            if bad and counts(study)["finished"] < budget:
                raise _spec_error(f"{len(bad)} worker(s) failed (exit codes {bad})")
        if bar:
            bar.update(counts(study))
    finally:
        if bar:
            bar.close()
    return study


_SAFE_PATH_FLAGS = ("-P",) if sys.version_info >= (3, 11) else ()


def spawn_workers(spec: StudySpec, url: str, n: int, *, trials: int | None = None,
                  timeout_s: float | None = None, first_index: int = 1,
                  trace_cache: bool = True) -> list[subprocess.Popen]:
    if spec.file is None:
        raise _spec_error("--workers needs a study file (workers re-read it)")
    procs = []
    for i in range(n):
        # -P: the current directory is not put on the workers' import path (as in the coordinating process,
        # `python:mod:fn` names import the same modules with 1 or N workers); PYTHONSAFEPATH for the same on
        # interpreters that pass it on
        cmd = [sys.executable, *_SAFE_PATH_FLAGS, "-m", "warpgraph.explore.worker", str(spec.file), "--storage", url,
               "--worker-index", str(first_index + i)]
        if trials:
            cmd += ["--trials", str(trials)]
        if timeout_s:
            cmd += ["--timeout", str(timeout_s)]
        if not trace_cache:
            cmd += ["--no-trace-cache"]
        procs.append(subprocess.Popen(cmd, stdin=subprocess.DEVNULL))
    return procs


def run_worker(spec: StudySpec | str | Path, storage: str | None = None, *, worker_index: int | None = None,
               trials: int | None = None, timeout_s: float | None = None, max_trials: int | None = None,
               trace_cache: bool | None = None) -> dict:
    """Join a running study (``--worker``): load it, run trials until its budget is used."""
    if not isinstance(spec, StudySpec):
        spec = load_study(spec)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    if worker_index is None:
        worker_index = 1 + os.getpid() % 100_003
    study = load(spec, storage, worker_index)
    tcache = trace_cache_of(spec, storage_of(spec, storage), trace_cache)
    return Runner(spec, study, budget_of(study, spec, trials), worker_index, trace_cache=tcache).run(
        timeout_s=timeout_s, max_trials=max_trials)


class _Progress:
    def __init__(self, total: int, name: str):
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                   TimeRemainingColumn)

        from rich.console import Console

        self.p = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                          TextColumn("{task.fields[info]}"), TimeElapsedColumn(), TimeRemainingColumn(),
                          console=Console(stderr=True))
        self.task = self.p.add_task(name, total=total, info="")
        self.p.start()

    def update(self, c: dict):
        info = f"running {c.get('running', 0)}  failed {c.get('error', 0)}"
        self.p.update(self.task, completed=c.get("finished", 0), info=info)

    def close(self):
        self.p.stop()

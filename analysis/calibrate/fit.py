"""Fitted values: an Optuna study per parameter replays bundled microbenchmark records
(``workloads/microbench/``, the PTX of microbench/src) through ``warpgraph.simulate`` with candidate values and
minimises the relative error of the simulated statistic against the measured one. Only microbenchmark errors,
never a kernel launch.

Each fitted statistic is a *slope or a difference* of replays, so the benchmark's own loop and address
arithmetic cancel and the fit moves only the stage it names (an absolute per-link latency would also absorb
the model's cost of the chain's ALU ops). Replays take ~0.1 s. The study's first trial is the closed-form
reading of the same measurement; the next ones are enqueued secant steps on the replays' response and then the
grid neighbours of the best value (the seeded TPE sampler fills in only when nothing is proposed); it stops at
that local optimum or after ``trials``. Candidates are cached: same inputs, same values."""
from __future__ import annotations

import statistics as st
from dataclasses import dataclass
from typing import Callable

import numpy as np

from warpgraph.analysis.calibrate.closed_form import Param
from warpgraph.analysis.calibrate.results import MissingResult, Results

__all__ = ["FitSpec", "FITS", "fit_all", "fit_one"]


@dataclass
class FitSpec:
    """One fitted parameter: ``target(R) -> (measured statistic, its noise or None, file, how)``;
    ``simulate(run) -> simulated statistic`` where ``run(record_name) -> out buffer`` replays one record with
    the candidate value; candidates from ``lo``..``hi`` around the measured guess in steps of ``step``."""
    name: str
    key: tuple[str, ...]
    bench: str
    records: tuple[str, ...]
    target: Callable
    guess: Callable                # (measured statistic, closed-form params) -> first candidate
    simulate: Callable
    integer: bool = True
    step: float = 1.0
    window: float = 0.25           # candidates: guess x (1 -/+ window), at least 4 steps either side


# ------------------------------------------------------------------------------------------- statistics
def _slope(xs, ys) -> float:
    return float(np.polyfit(np.asarray(xs, float), np.asarray(ys, float), 1)[0])


_TMA_N = (1, 12, 24)


def _tma_target(R: Results):
    rows = {r["params"]["n"]: r for r in R.find("tma_issue", bytes=1024, level="l2") if r["params"]["n"] <= 24}
    if len(rows) < 4:
        raise MissingResult("needs tma_issue 1 KiB L2 results for at least 4 N <= 24")
    ns = sorted(rows)
    slope = _slope(ns, [rows[n]["stats"]["issue_span_median"] for n in ns])
    raws = [rows[n].get("raw") or [] for n in ns]
    k = min(len(r) for r in raws)
    noise = _spread([_slope(ns, [r[i] for r in raws]) for i in range(k)]) if k else None
    return slope, noise, rows[ns[0]]["file"], f"least-squares slope of the median issue span T(N), N={ns[0]}..{ns[-1]}"


def _tma_sim(run) -> float:
    # k_tma.cu: out[3r] = issue span of rep r; rep 0 cold, reps 1-3 L2-hot (the host takes the hot reps)
    return _slope(_TMA_N, [float(np.median([run(f"tma_issue_n{n:02d}")[3 * r] for r in (1, 2, 3)])) for n in _TMA_N])


def _smem_target(R: Results):
    lat = {r["params"]["ways"]: float(r["stats"]["latency_cycles"]) for r in R.find("smem_bank")
           if r["params"].get("stride_words", 1) > 0}
    if 1 not in lat or 32 not in lat:
        raise MissingResult("needs smem_bank results at 1 and 32 ways")
    per_way = [(lat[w] - lat[1]) / (w - 1) for w in sorted(lat) if w > 1]
    return ((lat[32] - lat[1]) / 31, _spread(per_way) if len(per_way) > 1 else None,
            R.file_of("smem_bank", ways=32), "(dependent ld.shared chain latency at 32 ways - 1 way) / 31")


def _smem_sim(run) -> float:
    # k_mem.cu smem_bank_lat: one warp, 256 dependent ld.shared; out[0] = cycles
    return (float(run("smem_bank_32way")[0]) - float(run("smem_bank_01way")[0])) / 256 / 31


def _hint_target(R: Results):
    hints = [float(h["stats"]["cycles_per_link"]) for h in R.find("mbarrier_wait", form="try_wait_hint", complete=1)]
    if not hints:
        raise MissingResult("needs mbarrier_wait try_wait_hint results (phase complete)")
    plain = R.stat("mbarrier_wait", "cycles_per_link", form="try_wait", complete=1)
    return (st.median(hints) - plain, _spread(hints) if len(hints) > 1 else None,
            R.file_of("mbarrier_wait", form="try_wait", complete=1),
            "try_wait+hint minus try_wait chain cycles per link (phase complete; the link's ALU part cancels)")


def _hint_sim(run) -> float:
    def link(name):
        out = run(name)
        return float(out[0]) / float(out[1])
    return link("mbarrier_try_wait_hint") - link("mbarrier_try_wait")


def _hint_guess(target: float, fixed: dict) -> float:
    if "try_wait" not in fixed:
        raise MissingResult("needs mbarrier.try_wait_cycles (closed form, mbarrier_wait try_wait)")
    return target + fixed["try_wait"].value


def _one_stat(R: Results, bench: str, stat: str, how: str, **params):
    """A target read off one result: (its statistic, the spread of its raw repeats or None, its file, ``how``)."""
    r = R.one(bench, **params)
    raw = r.get("raw") or []
    return float(r["stats"][stat]), _spread(raw) if len(raw) > 1 else None, r["file"], how


def _wgmma_tail_target(R: Results):
    return _one_stat(R, "wgmma_latency", "latency_cycles",
                     "fence + wgmma m64n128k16 SS + commit + wait_group 0, cycles per iteration", n=128, ab="ss")


def _wgmma_tail_guess(target: float, fixed: dict) -> float:
    if "wgmma_tail" not in fixed:
        raise MissingResult("needs the closed-form wgmma completion tail (wgmma_latency and wgmma_throughput)")
    return fixed["wgmma_tail"].value


def _wgmma_tail_sim(run) -> float:
    # k_wgmma.cu wgmma_lat_ss_n128: 16 iterations; out[0] = cycles (the loop's own instructions are in both)
    return float(run("wgmma_lat_ss_m64n128k16_wg1")[0]) / 16


def _bar_target(R: Results):
    return _one_stat(R, "alu_latency", "cycles", "one warp's back-to-back bar.sync, cycles per barrier",
                     unit="bar", warps=1)


def _bar_guess(target: float, fixed: dict) -> float:
    if "bar_per_warp" not in fixed:
        raise MissingResult("needs latencies.bar_sync_cycles_per_warp (closed form, alu_latency bar)")
    return max(0.0, target - fixed["bar_per_warp"].value - 1)


def _bar_sim(run) -> float:
    # alu_latency.cu k_bar: out[0] = 100 x cycles per bar.sync
    return float(run("alu_bar_w1")[0]) / 100


def _spread(xs) -> float:
    xs = [float(x) for x in xs]
    return max(xs) - min(xs)


FITS: list[FitSpec] = [
    FitSpec("tma issue gap", ("tma", "issue_gap_cycles"), "tma_issue", tuple(f"tma_issue_n{n:02d}" for n in _TMA_N),
            _tma_target, lambda t, cf: t, _tma_sim),
    FitSpec("shared-memory conflict latency", ("shared_memory", "conflict_latency_cycles_per_extra_way"), "smem_bank",
            ("smem_bank_01way", "smem_bank_32way"), _smem_target, lambda t, cf: t, _smem_sim,
            integer=False, step=0.25),
    FitSpec("mbarrier try_wait hint", ("mbarrier", "try_wait_hint_complete_cycles"), "mbarrier_wait",
            ("mbarrier_try_wait_hint", "mbarrier_try_wait"), _hint_target,
            _hint_guess, _hint_sim),
    # the tail is what the latency leaves after everything else the model charges for the loop (issue latency,
    # service, fence / commit / wait and the loop's branch), so it is fitted on the replay, not read off
    FitSpec("wgmma completion tail", ("tensor_core", "completion_latency_cycles"), "wgmma_latency",
            ("wgmma_lat_ss_m64n128k16_wg1",), _wgmma_tail_target, _wgmma_tail_guess, _wgmma_tail_sim),
    FitSpec("bar.sync release", ("latencies", "bar_sync_release_cycles"), "alu_latency", ("alu_bar_w1",),
            _bar_target, _bar_guess, _bar_sim),
]


# ------------------------------------------------------------------------------------------------ study
_CONVERGED = object()


def _next_candidate(cache: dict, target: float, clip, step: float, lo, hi):
    """The study's next enqueued candidate: a secant step on the replays' (linear) response towards the target,
    then the grid neighbours of the best value; ``_CONVERGED`` once the best value's neighbours are all
    evaluated (a local optimum on the value's grid); None: nothing to propose (TPE samples the next trial)."""
    pts = sorted(cache.items())
    if len(pts) == 1:
        v0 = pts[0][0]
        probe = clip(v0 + 2 * step) if v0 + 2 * step <= hi else clip(v0 - 2 * step)
        return probe if probe not in cache else None
    sens = _slope([p for p, _ in pts], [s for _, s in pts])
    if sens != 0:
        best = min(pts, key=lambda p: abs(p[1] - target))
        v = clip(best[0] + (target - best[1]) / sens)
        if v not in cache:
            return v
    best = min(cache, key=lambda v: abs(cache[v] - target))
    for v in (clip(best - step), clip(best + step)):
        if v not in cache:
            return v
    return _CONVERGED


def fit_one(spec: FitSpec, R: Results, base: str, fixed: dict[str, Param], *, trials: int, seed: int) -> Param:
    """Run one study; the returned Param's ``how`` names the statistic, the trials and the residual."""
    import optuna
    import warpgraph

    target, noise, file, how = spec.target(R)
    scale = max(abs(target), spec.step)          # relative error; a zero measurement (no conflicts) in steps
    guess = spec.guess(target, fixed)
    span = max(abs(guess) * spec.window, 4 * spec.step)
    q = (lambda v: int(round(v))) if spec.integer else (lambda v: round(round(v / spec.step) * spec.step, 6))
    lo, hi = q(max(0.0, guess - span)), q(guess + span)
    fixed_ov = {p.dotted: p.value for p in fixed.values() if p.key != spec.key}
    records = {n: warpgraph.load_record(f"microbench/{n}") for n in spec.records}
    cache: dict[float, float] = {}

    def sim_at(v) -> float:
        if v not in cache:
            ov = {**fixed_ov, ".".join(spec.key): v}

            def run(name):
                res = warpgraph.simulate(records[name], base, want_outputs=True, overrides=ov, trace_cache="memory")
                return res.outputs["out"].astype(np.int64)
            cache[v] = spec.simulate(run)
        return cache[v]

    def objective(trial) -> float:
        if spec.integer:
            v = trial.suggest_int("v", lo, hi)
        else:
            v = q(trial.suggest_float("v", lo, hi, step=spec.step))
        return abs(sim_at(v) - target) / scale

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=max(1, min(5, trials // 2)))
    study = optuna.create_study(direction="minimize", sampler=sampler)
    clip = lambda v: min(max(q(v), lo), hi)      # noqa: E731
    study.enqueue_trial({"v": clip(guess)})
    converged = False
    for _ in range(max(1, trials)):
        study.optimize(objective, n_trials=1)
        nxt = _next_candidate(cache, target, clip, spec.step, lo, hi)
        if nxt is _CONVERGED:
            converged = True
            break
        if nxt is not None:
            study.enqueue_trial({"v": nxt})
    best = min(cache, key=lambda v: (abs(cache[v] - target), abs(v - guess)))   # ties: nearest the measurement
    err = abs(cache[best] - target) / scale
    # noise in the parameter's units: the statistic's repeat spread over the replay's sensitivity to the value
    pts = sorted(cache.items())
    sens = _slope([p for p, _ in pts], [s for _, s in pts]) if len(pts) > 1 else 1.0
    pnoise = None if noise is None or sens == 0 else round(abs(noise / sens), 4)
    value = int(best) if spec.integer else float(best)
    return Param(spec.key, value, float(best), spec.bench, file, "fit",
                 f"{how} = {target:.3f} measured; replays {', '.join(spec.records)}: {cache[best]:.3f} "
                 f"({100 * err:.2f} % off; Optuna study, {len(study.trials)} trials over {lo}..{hi}, seed {seed}, "
                 + ("a local optimum on the value's grid)" if converged else "stopped at the trial limit)"),
                 noise=pnoise, integer=spec.integer, converged=converged)


def fit_all(R: Results, base: str, fixed: dict[str, Param], *, trials: int, seed: int = 0,
            on_fit: Callable | None = None) -> tuple[dict[str, Param], list[str]]:
    """Every fit the results allow; one line per fit skipped (what was missing)."""
    out, skipped = {}, []
    for spec in FITS:
        try:
            spec.guess(spec.target(R)[0], fixed)
        except (MissingResult, KeyError, ValueError, ZeroDivisionError) as e:
            skipped.append(f"{spec.name} (fit): {e}")
            continue
        if on_fit:
            on_fit(spec.name)
        out[spec.name] = fit_one(spec, R, base, fixed, trials=trials, seed=seed)
    return out, skipped

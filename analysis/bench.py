"""Simulator speed benchmark on a fixed set of bundled calibration launches.

    results = run_bench(cases=None, arch="h200", quick=False)   # list of dicts (one per case)
    info = machine_info()                                        # CPU, cores, python, numpy, date, git commit

Each (case, mode) runs in a fresh subprocess (``python -m warpgraph.analysis.bench --worker JSON``) so the
peak resident memory (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) is that run's alone. Modes: detailed
``timing``, detailed with ``jobs=N`` for N in ``jobs_list`` (default 2, 4, 8, 16; only N <= the cores of the
machine: parallel simulation of one launch, when ``simulate`` has a ``jobs`` parameter, else skipped "not
supported"; each reports whether its cycles and statistics are bit-identical to the single-process run and its
speed-up), and ``sampled`` (skipped, with the reason, when the simulator rejects it). The trace cache
(runner/trace_cache.py) is off in every run: each measures its own functional pass. ``--quick``: only the
smallest default launch, scaled down with ``warpgraph.workloads.scale.small_variant``.

Injection for tests: ``simulate_target="module:function"`` names the simulate function the worker imports
(default ``warpgraph:simulate``); ``isolate=False`` runs in-process (peak memory then is the process's).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

__all__ = ["DEFAULT_CASES", "QUICK_CASE", "DEFAULT_JOBS", "run_bench", "run_case", "machine_info", "resolve_case",
           "jobs_plan", "parse_jobs_list", "stats_digest", "main"]

DEFAULT_CASES = ("gemm_tma_M2048_N2048_K2048", "attn_B4_H16_S1024_D64_causal0", "rmsnorm_rows4096_cols4096",
                 "gemm_ptr_M1024_N1024_K1024")
#: ``--quick``: the smallest default GEMM, shrunk with small_variant
QUICK_CASE = "gemm_ptr_M1024_N1024_K1024@small"
_SAMPLED_REJECTED = ("sampled",)
#: process counts of the parallel detailed runs (those above the machine's cores are skipped)
DEFAULT_JOBS = (2, 4, 8, 16)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        return os.cpu_count() or 1


def parse_jobs_list(text) -> list[int]:
    """``"2,4"`` -> ``[2, 4]`` (``--jobs-list``); a bad entry is a UserError."""
    from warpgraph.core.errors import UserError

    if isinstance(text, (list, tuple)):
        items = list(text)
    else:
        items = [x.strip() for x in str(text).split(",") if x.strip()]
    out = []
    for x in items:
        try:
            n = int(x)
        except (TypeError, ValueError):
            n = 0
        if n < 2:
            raise UserError(f"--jobs-list entry {x!r} is not a process count >= 2", location="--jobs-list",
                            hint="e.g. --jobs-list 2,4 (jobs 1 is the detailed run itself)")
        if n not in out:
            out.append(n)
    return out


def jobs_plan(jobs_list=None, cores: int | None = None) -> tuple[list[int], list[int]]:
    """(process counts to run, those skipped because the machine has fewer cores)."""
    cores = _cores() if cores is None else cores
    wanted = list(DEFAULT_JOBS) if jobs_list is None else parse_jobs_list(jobs_list)
    return [n for n in wanted if n <= cores], [n for n in wanted if n > cores]


def _accepts(fn: Callable, name: str) -> bool:
    """Whether ``fn`` has a parameter called ``name`` (explicitly: ``**kw`` does not count)."""
    import inspect

    try:
        p = inspect.signature(fn).parameters.get(name)
    except (TypeError, ValueError):
        return False
    return p is not None and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)


def stats_digest(stats) -> tuple[str | None, dict]:
    """(sha256 of every simulated statistic, per-component digests) of a RunResult.stats frame; wall-clock
    rows (``*wall*``) are left out: they differ between any two runs."""
    import hashlib

    if stats is None or not hasattr(stats, "itertuples"):
        return None, {}
    total = hashlib.sha256()
    per: dict[str, Any] = {}
    for row in stats.itertuples(index=False):
        comp, stat, value = str(getattr(row, "component")), str(getattr(row, "stat")), getattr(row, "value")
        if "wall" in stat:
            continue
        line = f"{comp}\t{stat}\t{value!r}\n".encode()
        total.update(line)
        per.setdefault(comp, hashlib.sha256()).update(line)
    return total.hexdigest()[:20], {k: h.hexdigest()[:12] for k, h in per.items()}


def _records_dir(arch: str = "h200") -> Path:
    import warpgraph.workloads as wl

    return Path(wl.__file__).resolve().parent / "records" / arch


def resolve_case(case: str, arch: str = "h200") -> tuple[Path, bool]:
    """(record directory, shrink with small_variant?) of a case: a bundled record name or a path, with an
    optional ``@small`` suffix. Raises ``UserError`` if it does not exist."""
    from warpgraph.core.errors import UserError

    small = case.endswith("@small")
    base = case[: -len("@small")] if small else case
    p = Path(base)
    for cand in (p, _records_dir(arch) / base, _records_dir("h200") / base):
        if (cand / "launch.json").is_file():
            return cand, small
    raise UserError(f"unknown bench case {case!r}", location="--cases",
                    hint="a bundled record name (" + ", ".join(DEFAULT_CASES) + ") or a launch-record folder")


def _import_target(target: str) -> Callable:
    mod, _, fn = target.partition(":")
    import importlib

    obj = importlib.import_module(mod)
    return getattr(obj, fn or "simulate")


def _peak_rss_bytes() -> int:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(r if sys.platform == "darwin" else r * 1024)  # Linux reports KiB


def _run_here(spec: dict, simulate_fn: Callable | None = None) -> dict:
    """Run one (case, mode) in this process; returns a JSON-ready dict (never raises)."""
    out: dict[str, Any] = {"case": spec["case"], "mode": spec["mode"]}
    try:
        d, small = Path(spec["dir"]), bool(spec.get("small"))
        target: Any = d
        if small:
            from warpgraph import load_record
            from warpgraph.workloads.scale import small_variant

            target = small_variant(load_record(d))
        fn = simulate_fn or _import_target(spec.get("simulate_target") or "warpgraph:simulate")
        kw: dict[str, Any] = {}
        jobs = spec.get("jobs")
        if jobs is not None:
            if not _accepts(fn, "jobs"):
                out.update({"status": "skipped", "jobs": jobs, "error": "not supported: simulate() has no "
                            "per-launch jobs parameter", "peak_rss_bytes": None})
                return out
            kw["jobs"] = int(jobs)
            out["jobs"] = int(jobs)
        if _accepts(fn, "trace_cache"):
            kw["trace_cache"] = False       # measure the functional pass, never a cached trace
        import resource

        ch0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        c0 = time.process_time()
        res = fn(target, spec["arch"], mode=spec["mode"], overrides=spec.get("overrides") or None, **kw)
        cpu = time.process_time() - c0      # process CPU time: less noisy than wall time on a shared machine
        wall = time.perf_counter() - t0
        ch1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        child_cpu = (ch1.ru_utime - ch0.ru_utime) + (ch1.ru_stime - ch0.ru_stime)
        m = dict(getattr(res, "metrics", None) or {})
        cyc = m.get("cycles")
        wi = m.get("warp_instructions")
        w = float(m.get("wall_seconds") or wall)
        out.update({
            "status": "ok",
            "cycles": float(cyc) if cyc is not None else None,
            "warp_instructions": float(wi) if wi is not None else None,
            "wall_seconds": w,
            "simulated_cycles_per_second": float(m.get("simulated_cycles_per_second") or
                                                 ((cyc or 0) / w if w > 0 else 0.0)),
            "warp_instructions_per_second": float(m.get("warp_instructions_per_second") or
                                                  ((wi or 0) / w if w > 0 else 0.0)),
            "cpu_seconds": cpu,
            "simulated_cycles_per_cpu_second": float(cyc or 0) / cpu if cpu > 0 else 0.0,
            "sampling": m.get("sampling") if isinstance(m.get("sampling"), dict) else None,
        })
        if jobs is not None:    # worker processes: their CPU time and the largest one's peak memory
            out["children_cpu_seconds"] = child_cpu
            out["peak_rss_children_bytes"] = _peak_rss_children_bytes()
        digest, per = stats_digest(getattr(res, "stats", None))
        if digest is not None:
            out["stats_digest"] = digest
            out["stats_digest_by_component"] = per
    except Exception as e:  # noqa: BLE001 -- reported per case
        msg = e.format() if hasattr(e, "format") and callable(e.format) else str(e)
        from warpgraph.core.errors import UserError

        rejected = spec["mode"] == "sampled" and isinstance(e, UserError) and "sampled" in msg
        out.update({"status": "skipped" if rejected else "error", "error": f"{type(e).__name__}: {msg}"})
    out["peak_rss_bytes"] = _peak_rss_bytes()
    return out


def _peak_rss_children_bytes() -> int:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return int(r if sys.platform == "darwin" else r * 1024)


def run_case(case: str, arch: str = "h200", mode: str = "timing", *, overrides=None, isolate: bool = True,
             simulate_fn: Callable | None = None, simulate_target: str | None = None,
             timeout_s: float | None = None, jobs: int | None = None) -> dict:
    """Benchmark one case in one mode (in a fresh subprocess when ``isolate``); ``jobs``: detailed mode with
    that many processes for the one launch."""
    d, small = resolve_case(case, arch)
    spec = {"case": case, "dir": str(d), "small": small, "arch": arch, "mode": mode, "overrides": overrides,
            "simulate_target": simulate_target, "jobs": jobs}
    if not isolate or simulate_fn is not None:
        r = _run_here(spec, simulate_fn)
        r["peak_rss_scope"] = "process"
        return r
    cmd = [sys.executable, "-m", "warpgraph.analysis.bench", "--worker", json.dumps(spec)]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"case": case, "mode": mode, "status": "error", "error": f"timed out after {timeout_s} s",
                "wall_seconds": time.perf_counter() - t0, "peak_rss_bytes": None}
    line = next((ln for ln in reversed(p.stdout.splitlines()) if ln.startswith("{")), None)
    if p.returncode != 0 or line is None:
        tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
        return {"case": case, "mode": mode, "status": "error",
                "error": f"worker exited {p.returncode}: " + " | ".join(tail), "peak_rss_bytes": None}
    r = json.loads(line)
    r["peak_rss_scope"] = "subprocess"
    return r


def _compare_jobs(det: dict, par: dict) -> None:
    """Add ``identical_to_jobs1`` (cycles and every statistic), the differing components, and the speed-up."""
    if par.get("status") != "ok" or det.get("status") != "ok":
        return
    same_cycles = par.get("cycles") == det.get("cycles")
    d1, dn = det.get("stats_digest"), par.get("stats_digest")
    par["cycles_identical_to_jobs1"] = same_cycles
    par["stats_identical_to_jobs1"] = (d1 == dn) if d1 is not None and dn is not None else None
    par["identical_to_jobs1"] = bool(same_cycles and par["stats_identical_to_jobs1"])
    a, b = det.get("stats_digest_by_component") or {}, par.get("stats_digest_by_component") or {}
    diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    if diff:
        par["components_differing"] = diff[:20]
    if par.get("wall_seconds"):
        par["speedup_vs_jobs1"] = det["wall_seconds"] / par["wall_seconds"]


def run_bench(cases: Sequence[str] | None = None, arch: str = "h200", *, quick: bool = False, sampled: bool = True,
              overrides=None, isolate: bool = True, simulate_fn: Callable | None = None,
              simulate_target: str | None = None, timeout_s: float | None = None,
              progress: Callable[[dict], None] | None = None, jobs_list=None) -> list[dict]:
    """One entry per case: ``{"case", "detailed": {...}, "jobs": {"2": {...}, ...}, "sampled": {...} | None,
    "sampled_cycle_diff_pct", "sampled_speedup"}``. ``jobs_list``: process counts of the parallel detailed
    runs (default :data:`DEFAULT_JOBS`; those above the machine's cores are recorded as skipped; ``[]``: none)."""
    if cases is None:
        cases = [QUICK_CASE] if quick else list(DEFAULT_CASES)
    for c in cases:  # fail early on unknown names
        resolve_case(c, arch)
    run_jobs, too_many = jobs_plan(jobs_list)
    out = []
    kw = dict(overrides=overrides, isolate=isolate, simulate_fn=simulate_fn, simulate_target=simulate_target,
              timeout_s=timeout_s)
    for c in cases:
        det = run_case(c, arch, "timing", **kw)
        par: dict[str, dict] = {}
        if run_jobs:
            # the partitioned model (runner/partitioned.py) in one process: what every jobs=N must reproduce
            # bit for bit; its cycles against the single engine's say what partitioning costs in fidelity
            one = par["1"] = run_case(c, arch, "timing", jobs=1, **kw)
            if one.get("status") == "ok" and det.get("status") == "ok" and det.get("cycles"):
                one["cycles_vs_single_engine_pct"] = (one["cycles"] - det["cycles"]) / det["cycles"] * 100.0
                one["speedup_vs_single_engine"] = det["wall_seconds"] / one["wall_seconds"]
        for n in run_jobs:
            par[str(n)] = run_case(c, arch, "timing", jobs=n, **kw)
            _compare_jobs(par["1"], par[str(n)])
            if par[str(n)].get("wall_seconds") and det.get("wall_seconds"):
                par[str(n)]["speedup_vs_single_engine"] = det["wall_seconds"] / par[str(n)]["wall_seconds"]
        for n in too_many:
            par[str(n)] = {"case": c, "mode": "timing", "jobs": n, "status": "skipped",
                           "error": f"not run: {n} jobs > {_cores()} cores", "peak_rss_bytes": None}
        smp = run_case(c, arch, "sampled", **kw) if sampled else None
        diff = None
        if (smp and smp.get("status") == "ok" and det.get("status") == "ok" and det.get("cycles")
                and smp.get("cycles") is not None):
            diff = (smp["cycles"] - det["cycles"]) / det["cycles"] * 100.0
        entry = {"case": c, "detailed": det, "jobs": par, "sampled": smp, "sampled_cycle_diff_pct": diff,
                 "sampled_speedup": (det["wall_seconds"] / smp["wall_seconds"])
                 if diff is not None and smp.get("wall_seconds") else None}
        out.append(entry)
        if progress:
            progress(entry)
    return out


def _git_commit() -> str | None:
    here = Path(__file__).resolve().parent.parent
    try:
        p = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout.strip() or None if p.returncode == 0 else None


def _cpu_model() -> str:
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.lower().startswith("model name"):
                return ln.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info() -> dict[str, Any]:
    import numpy

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        cores = os.cpu_count()
    try:
        from warpgraph import __version__ as wv
    except ImportError:  # pragma: no cover
        wv = None
    return {"cpu_model": _cpu_model(), "cores": cores, "cpu_count": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "numpy": numpy.__version__, "warpgraph": wv,
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "git_commit": _git_commit()}


def main(argv: Sequence[str] | None = None) -> int:
    """Worker entry: ``python -m warpgraph.analysis.bench --worker '<json spec>'`` prints one JSON line."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) != 2 or argv[0] != "--worker":
        print("usage: python -m warpgraph.analysis.bench --worker JSON (internal; use `warpgraph bench`)",
              file=sys.stderr)
        return 2
    r = _run_here(json.loads(argv[1]))
    sys.stdout.write("\n" + json.dumps(r) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())

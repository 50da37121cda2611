"""Side-by-side timing of one study on this checkout and on another (a base commit): the speed of sweeps.

    python -m warpgraph.explore.reuse_bench --base-src /tmp/base47 --trials 20 --workers 2 \\
        --out docs/results/sweep_reuse_2026-12-03.json

Writes the same study YAML (one timing parameter, TPE, one workload) for both checkouts, runs
``warpgraph explore STUDY --workers N`` for each in a fresh folder (the base with ``PYTHONPATH`` pointing at a
``warpgraph`` link to its source), and records wall seconds, CPU seconds of all processes, trials finished, the
distinct parameter values, how many trials hit the trace cache (this checkout) and the cycles of each trial
(both commits, by parameter value). Nothing here is a unit test; the numbers go to ``docs/results/``.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent.parent
FA = "h200/attn_B4_H16_S1024_D64_causal0"


def _git(src: Path, *args) -> str | None:
    p = subprocess.run(["git", "-C", str(src), *args], capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def study_yaml(name: str, workload: str, scale: float | None, param: str, lo: int, hi: int, trials: int,
               sampler: str, seed: int) -> str:
    w = f"{{record: {workload}, scale: {scale}}}" if scale else workload
    return (f"name: {name}\nbase: h200\nworkloads: [{w}]\nspace:\n  {param}: {{int: [{lo}, {hi}]}}\n"
            f"objectives: [{{metric: cycles, direction: minimize}}]\nsampler: {sampler}\ntrials: {trials}\n"
            f"seed: {seed}\nmode: timing\n")


def run_side(label: str, src: Path, folder: Path, yaml_text: str, workers: int, extra_args=()) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    study = folder / "study.yaml"
    study.write_text(yaml_text)
    env = dict(os.environ)
    if src.resolve() != _HERE:
        link_dir = folder / "pkg"
        link_dir.mkdir(exist_ok=True)
        link = link_dir / "warpgraph"
        if not link.exists():
            link.symlink_to(src.resolve())
        env["PYTHONPATH"] = str(link_dir) + os.pathsep + env.get("PYTHONPATH", "")
    env["WARPGRAPH_CACHE_DIR"] = str(folder / "user_cache")   # never the user's ~/.cache
    cmd = [sys.executable, "-c", "import sys; from warpgraph.cli.main import main; main(sys.argv[1:])",
           "explore", str(study), "--workers", str(workers), *extra_args]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, cwd=str(folder), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = {"label": label, "src": str(src), "commit": _git(src, "rev-parse", "HEAD"), "exit_code": p.returncode,
           "wall_seconds": round(wall, 2),
           "cpu_seconds": round((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), 2),
           "command": " ".join(cmd[:1] + ["-m warpgraph"] + cmd[4:])}
    if p.returncode != 0:
        out["stderr_tail"] = p.stderr[-2000:]
    out.update(_read_trials(folder / "study_out" / "study.journal", yaml_text.split("\n", 1)[0].split(": ")[1]))
    return out


def _read_trials(journal: Path, name: str) -> dict:
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    if not journal.is_file():
        return {"trials": []}
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    st = optuna.load_study(study_name=name, storage=JournalStorage(JournalFileBackend(str(journal))))
    rows = []
    for t in st.get_trials():
        m = t.user_attrs.get("metrics") or {}
        per = t.user_attrs.get("workloads") or {}
        cache = sorted({str(v.get("trace_cache")) for v in per.values() if isinstance(v, dict)})
        fw = [v.get("functional_wall_seconds") for v in per.values() if isinstance(v, dict)]
        tw = [v.get("timing_wall_seconds") for v in per.values() if isinstance(v, dict)]
        rows.append({"number": t.number, "state": t.state.name, "params": t.params, "cycles": m.get("cycles"),
                     "functional_wall_seconds": sum(x for x in fw if x is not None) if fw else None,
                     "timing_wall_seconds": sum(x for x in tw if x is not None) if tw else None,
                     "duration_s": t.duration.total_seconds() if t.duration else None,
                     "trace_cache": cache[0] if len(cache) == 1 else (cache or None),
                     **({"error": str(t.user_attrs["wg_error"])[:300]} if "wg_error" in t.user_attrs else {})})
    complete = [r for r in rows if r["state"] == "COMPLETE"]
    hits = sum(1 for r in complete if r["trace_cache"] == "hit")
    return {"trials_complete": len(complete),
            "distinct_params": len({json.dumps(r["params"], sort_keys=True) for r in complete}),
            "trace_cache_hits": hits, "trace_cache_misses": sum(1 for r in complete if r["trace_cache"] == "miss"),
            "mean_trial_seconds": round(sum(r["duration_s"] or 0 for r in complete) / max(1, len(complete)), 3),
            "sum_functional_wall_seconds": round(sum(r["functional_wall_seconds"] or 0 for r in complete), 2),
            "sum_timing_wall_seconds": round(sum(r["timing_wall_seconds"] or 0 for r in complete), 2),
            "trials": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m warpgraph.explore.reuse_bench")
    ap.add_argument("--base-src", required=True, help="source folder of the base checkout (git worktree)")
    ap.add_argument("--workload", default=FA)
    ap.add_argument("--scale", type=float, default=None)
    ap.add_argument("--param", default="hbm.latency_cycles")
    ap.add_argument("--lo", type=int, default=200)
    ap.add_argument("--hi", type=int, default=800)
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sampler", default="tpe")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="JSON file (appends this run to its 'runs' list)")
    ap.add_argument("--order", default="base,this", help="sides in the order they run: base, this, and "
                    "this_nocache (this checkout with --no-trace-cache)")
    a = ap.parse_args(argv)
    sides = {"base": Path(a.base_src), "this": _HERE, "this_nocache": _HERE}
    res = {}
    with tempfile.TemporaryDirectory(prefix="wg-reuse-bench-") as tmp:
        workload = a.workload
        if a.scale:
            # the same scaled record (made here) for both sides: an older base may not have scale_record
            import warpgraph
            from warpgraph.workloads.record import save_record

            rec = warpgraph.scale_record(warpgraph.load_record(a.workload), factor=1.0 / a.scale)
            rec = rec.model_copy(update={"compiled": {}})     # an older base refuses the newer `compiled` block
            workload = str(save_record(rec, Path(tmp) / rec.name).dir)
        text = study_yaml("sweep_reuse", workload, None, a.param, a.lo, a.hi, a.trials, a.sampler, a.seed)
        for label in a.order.split(","):
            res[label] = run_side(label, sides[label], Path(tmp) / label, text, a.workers,
                                  ["--no-trace-cache"] if label == "this_nocache" else [])
            print(f"{label}: {res[label]['wall_seconds']} s wall, {res[label]['cpu_seconds']} s CPU, "
                  f"{res[label].get('trials_complete')} trials", file=sys.stderr, flush=True)
    if not {"base", "this"} <= set(res):
        print(json.dumps(res, indent=1))
        return 0
    b, t = res["base"], res["this"]
    same = [(x["params"], x["cycles"], y["cycles"]) for x in b["trials"] for y in t["trials"]
            if x["params"] == y["params"] and x["cycles"] is not None and y["cycles"] is not None]
    import platform

    run = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "study_yaml": text,
           "workload": a.workload, "scale": a.scale,
           "workers": a.workers, "cores": len(os.sched_getaffinity(0)), "cpu": platform.processor() or platform.machine(),
           "load_average_at_end": list(os.getloadavg()),
           "speedup_wall": round(b["wall_seconds"] / t["wall_seconds"], 3) if t["wall_seconds"] else None,
           "speedup_cpu": round(b["cpu_seconds"] / t["cpu_seconds"], 3) if t["cpu_seconds"] else None,
           "cycles_same_params": [{"params": p, "base": cb, "this": ct,
                                   "diff_pct": round(100 * (ct - cb) / cb, 3)} for p, cb, ct in same][:20],
           "base": b, "this": t}
    if "this_nocache" in res:
        n = res["this_nocache"]
        run["this_nocache"] = n
        run["cache_speedup_wall"] = round(n["wall_seconds"] / t["wall_seconds"], 3) if t["wall_seconds"] else None
        run["cache_speedup_cpu"] = round(n["cpu_seconds"] / t["cpu_seconds"], 3) if t["cpu_seconds"] else None
    print(json.dumps({k: v for k, v in run.items() if k not in ("base", "this", "this_nocache")}, indent=1))
    if a.out is not None:
        doc = json.loads(a.out.read_text()) if a.out.is_file() else {"runs": []}
        doc["runs"].append(run)
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(doc, indent=1) + "\n")
    return 0 if b["exit_code"] == 0 and t["exit_code"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

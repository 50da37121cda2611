"""``warpgraph bench``: parallel detailed runs (``jobs=N``) with fake simulate functions: skipped when simulate has
no per-launch ``jobs``, compared with the single-process run (cycles and every statistic), --jobs-list."""
import json
from types import SimpleNamespace

import pandas as pd
import pytest
from typer.testing import CliRunner

from warpgraph.analysis import bench as B
from warpgraph.cli.main import app
from warpgraph.core.errors import UserError

CASE = "rmsnorm_rows4096_cols4096"
calls: list = []


def _stats(extra=0.0, wall=0.1):
    return pd.DataFrame({"component": ["sm0", "sm0", "run"], "stat": ["active_cycles", "issued", "wall_seconds"],
                         "value": [100.0 + extra, 7.0, wall], "unit": ["", "", "s"], "description": ["", "", ""]})


def sim_no_jobs(rec, arch="h200", *, mode="timing", overrides=None, **kw):
    calls.append(kw)
    return SimpleNamespace(metrics={"cycles": 1000.0, "warp_instructions": 5000.0, "wall_seconds": 0.5},
                           stats=_stats())


def sim_jobs(rec, arch="h200", *, mode="timing", overrides=None, jobs=1, trace_cache=None):
    calls.append({"jobs": jobs, "trace_cache": trace_cache})
    # wall-clock rows differ between runs; the simulated statistics do not
    return SimpleNamespace(metrics={"cycles": 1000.0, "warp_instructions": 5000.0, "wall_seconds": 1.0 / jobs},
                           stats=_stats(wall=1.0 / jobs))


def sim_jobs_differs(rec, arch="h200", *, mode="timing", overrides=None, jobs=1):
    return SimpleNamespace(metrics={"cycles": 1000.0, "warp_instructions": 5000.0, "wall_seconds": 0.5},
                           stats=_stats(extra=1.0 if jobs > 1 else 0.0))


def test_jobs_plan_keeps_counts_up_to_the_cores():
    assert B.jobs_plan(None, cores=2) == ([2], [4, 8, 16])
    assert B.jobs_plan(None, cores=16) == ([2, 4, 8, 16], [])
    assert B.jobs_plan("2,4", cores=3) == ([2], [4])
    assert B.parse_jobs_list("4, 2,4") == [4, 2]
    for bad in ("1", "x", "2,-3"):
        with pytest.raises(UserError):
            B.parse_jobs_list(bad)


def test_simulate_without_per_launch_jobs_is_skipped(monkeypatch):
    monkeypatch.setattr(B, "_cores", lambda: 4)
    calls.clear()
    (e,) = B.run_bench([CASE], simulate_fn=sim_no_jobs, sampled=False, jobs_list=[2, 4, 8])
    assert e["detailed"]["status"] == "ok"
    for n in ("2", "4"):
        assert e["jobs"][n]["status"] == "skipped" and e["jobs"][n]["error"].startswith("not supported")
    assert e["jobs"]["8"]["status"] == "skipped" and "> 4 cores" in e["jobs"]["8"]["error"]
    assert calls == [{}]        # **kw is not a jobs parameter: only the detailed run was called


def test_parallel_runs_are_compared_with_jobs1(monkeypatch):
    monkeypatch.setattr(B, "_cores", lambda: 4)
    calls.clear()
    (e,) = B.run_bench([CASE], simulate_fn=sim_jobs, sampled=False, jobs_list=[2, 4])
    # the single engine (no jobs: the fake's default 1), the partitioned model in one process, then 2 and 4; the
    # trace cache is off: each run pays its functional pass
    assert calls == [{"jobs": 1, "trace_cache": False}, {"jobs": 1, "trace_cache": False},
                     {"jobs": 2, "trace_cache": False}, {"jobs": 4, "trace_cache": False}]
    assert e["jobs"]["1"]["cycles_vs_single_engine_pct"] == 0.0
    for n in (2, 4):
        r = e["jobs"][str(n)]
        assert r["status"] == "ok" and r["jobs"] == n
        assert r["identical_to_jobs1"] is True and r["stats_identical_to_jobs1"] is True
        assert r["speedup_vs_jobs1"] == pytest.approx(float(n))
    (e,) = B.run_bench([CASE], simulate_fn=sim_jobs_differs, sampled=False, jobs_list=[2])
    r = e["jobs"]["2"]
    assert r["cycles_identical_to_jobs1"] is True and r["identical_to_jobs1"] is False
    assert r["components_differing"] == ["sm0"]


def test_stats_digest_ignores_wall_clock_rows():
    assert B.stats_digest(_stats(wall=1.0))[0] == B.stats_digest(_stats(wall=2.0))[0]
    assert B.stats_digest(_stats(extra=1.0))[0] != B.stats_digest(_stats())[0]


def test_cli_jobs_list_and_json(tmp_path, monkeypatch):
    from warpgraph.cli import bench_cmd

    monkeypatch.setattr(B, "_cores", lambda: 2)
    orig = bench_cmd.run_bench_cli
    monkeypatch.setattr(bench_cmd, "run_bench_cli", lambda *a, **k: orig(*a, **{**k, "simulate_fn": sim_jobs}))
    out = tmp_path / "b.json"
    r = CliRunner().invoke(app, ["bench", "--cases", CASE, "--jobs-list", "2,4", "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert "detailed -j 2" in r.output and "identical" in r.output
    d = json.loads(out.read_text())
    assert d["git_commit"] == d["machine"]["git_commit"]
    jobs = d["results"][0]["jobs"]
    assert jobs["2"]["identical_to_jobs1"] is True and jobs["4"]["status"] == "skipped"
    r = CliRunner().invoke(app, ["bench", "--cases", CASE, "--jobs-list", "1"])
    assert r.exit_code == 2
    monkeypatch.setattr(bench_cmd, "run_bench_cli",
                        lambda *a, **k: orig(*a, **{**k, "simulate_fn": sim_jobs_differs}))
    r = CliRunner().invoke(app, ["bench", "--cases", CASE, "--jobs-list", "2", "--format", "csv"])
    assert r.exit_code == 1                 # statistics that differ from jobs 1 fail the bench
    assert "case,mode,jobs,status" in r.output

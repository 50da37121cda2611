"""Exploration machinery with the analytic evaluator (explore/testing.py): samplers, budget, resume,
results, plots, CLI. Journal-file storage (no server)."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from warpgraph import explore
from warpgraph.explore.spec import load_study

HEAD = """\
base: toy
arch_loader: python:warpgraph.explore.testing:toy_arch
evaluator: python:warpgraph.explore.testing:analytic
workloads: [h200/gemm_tma_M2048_N2048_K2048]
"""
GRID = """\
space:
  tma.admission_depth: [4, 8, 16, 32]
  tma.bytes_per_cycle: {int: [16, 64], step: 16}
  tensor_core.kind: [wgmma, mma_sync]
objectives: [{metric: cycles}]
sampler: grid
"""
MO = """\
space:
  tma.admission_depth: {int: [2, 32], log: true}
  tma.bytes_per_cycle: {int: [8, 128]}
  l2.capacity_bytes: {int: [10000000, 60000000]}
objectives:
  - {metric: cycles, direction: minimize}
  - {metric: sram_bytes, direction: minimize}
constraints: [{metric: sram_bytes, max: 100000000}]
sampler: {type: nsga2, population_size: 6}
trials: 18
seed: 3
"""


def study_file(tmp_path, body, name="s"):
    p = tmp_path / f"{name}.yaml"
    p.write_text(f"name: {name}\n" + HEAD + textwrap.dedent(body))
    return p


def test_grid_covers_space_exactly(tmp_path):
    spec = load_study(study_file(tmp_path, GRID))
    st = explore.run_study(spec)
    df = explore.results(st)
    assert len(df) == 4 * 4 * 2 and (df.state == "complete").all()
    got = {tuple(r) for r in df[["tma.admission_depth", "tma.bytes_per_cycle", "tensor_core.kind"]].values}
    want = {(d, b, k) for d in (4, 8, 16, 32) for b in (16, 32, 48, 64) for k in ("wgmma", "mma_sync")}
    assert got == want
    # running again does nothing (budget used), same storage
    st2 = explore.run_study(spec)
    assert len(st2.trials) == 32


def test_results_columns_and_plots(tmp_path):
    spec = load_study(study_file(tmp_path, MO, "mo"))
    st = explore.run_study(spec)
    df = explore.results(spec)
    assert len(df) == 18
    for c in ("number", "state", "tma.admission_depth", "tma.bytes_per_cycle", "l2.capacity_bytes", "cycles",
              "sram_bytes", "area_units", "feasible", "tensor_utilization_pct", "dram_read_bytes", "duration_s"):
        assert c in df.columns, c
    assert df.attrs["objectives"] == ["cycles", "sram_bytes"]
    assert df["cycles"].notna().all() and (df["cycles"] > 0).all()
    t = st.trials[0]
    assert "metrics" in t.user_attrs and "cycles" in t.user_attrs["metrics"]
    assert "workloads" in t.user_attrs
    front = explore.pareto_mask(df)
    assert 1 <= front.sum() <= len(df)
    png = explore.plot_pareto(df, tmp_path / "pareto.png")
    assert png.stat().st_size > 1000
    files = explore.report(spec)
    for k in ("csv", "parquet", "pareto", "importance", "vs_params_cycles"):
        assert files[k].exists(), k
    import pandas as pd

    back = pd.read_parquet(files["parquet"])
    assert len(back) == 18 and list(back.columns) == list(df.columns)
    assert explore.export(df, tmp_path / "x.csv").exists()


def test_seed_makes_runs_deterministic(tmp_path):
    dfs = []
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        dfs.append(explore.results(explore.run_study(load_study(study_file(tmp_path / d, MO, "mo")))))
    a, b = dfs
    cols = ["tma.admission_depth", "tma.bytes_per_cycle", "l2.capacity_bytes", "cycles"]
    assert a[cols].equals(b[cols])


def test_resume_keeps_finished_trials(tmp_path):
    from warpgraph.explore.study import prepare, run_worker

    spec = load_study(study_file(tmp_path, MO, "mo"))
    prepare(spec)
    c = run_worker(spec, worker_index=0, max_trials=7)          # "interrupted" after 7 trials
    assert c["complete"] == 7
    before = explore.results(spec).set_index("number")
    st = explore.run_study(spec)                                   # resume
    after = explore.results(st).set_index("number")
    assert len(after) == 18 and (after.state == "complete").all()
    assert after.loc[before.index, "cycles"].equals(before["cycles"])


def test_evaluation_error_is_recorded_and_counts(tmp_path):
    p = study_file(tmp_path, """\
        space:
          tma.admission_depth: [4, -1]
        objectives: [{metric: cycles}]
        sampler: grid
        """)
    # the toy loader accepts -1; the analytic evaluator raises a UserError for it (like a SimulationError)
    st = explore.run_study(load_study(p))
    df = explore.results(st).set_index("tma.admission_depth")
    assert len(df) == 2 and df.loc[4, "state"] == "complete"
    assert df.loc[-1, "state"] == "error" and "admission_depth" in df.loc[-1, "error"]


def test_missing_objective_metric_is_a_user_error(tmp_path):
    import warpgraph

    spec = load_study(study_file(tmp_path, """\
        space: {tma.admission_depth: [4, 8]}
        objectives: [{metric: no_such_metric}]
        sampler: grid
        """))
    with pytest.raises(warpgraph.UserError) as ei:
        explore.run_study(spec)
    assert "no_such_metric" in str(ei.value) and "s.yaml:7" in ei.value.location


def test_killed_worker_is_resumed(tmp_path):
    """SIGKILL a worker process mid-trial (journal storage); resuming finishes the budget, no duplicates."""
    from warpgraph.explore.study import prepare

    spec = load_study(study_file(tmp_path, GRID))
    prepare(spec)
    env = {**os.environ, "WARPGRAPH_TOY_SLEEP_S": "0.3"}
    p = subprocess.Popen([sys.executable, "-m", "warpgraph.explore.worker", str(spec.file)], env=env)
    deadline = time.time() + 60
    while time.time() < deadline:
        c = _counts(spec)
        if c.get("complete", 0) >= 3 and c.get("running", 0) == 1:
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert _counts(spec).get("running", 0) == 1
    st = explore.run_study(spec)
    df = explore.results(st)
    assert len(df) == 32 and (df.state == "complete").all()
    assert not df[["tma.admission_depth", "tma.bytes_per_cycle", "tensor_core.kind"]].duplicated().any()
    alltr = explore.results(st, include_all=True)
    assert (alltr.state == "abandoned").sum() == 1


def _counts(spec):
    import optuna

    from warpgraph.explore.study import counts, open_storage

    return counts(optuna.load_study(study_name=spec.name, storage=open_storage(spec.default_storage)))


def test_two_local_workers_journal(tmp_path):
    spec = load_study(study_file(tmp_path, GRID))
    st = explore.run_study(spec, workers=2)
    df = explore.results(st)
    assert len(df) == 32 and (df.state == "complete").all()
    assert not df[["tma.admission_depth", "tma.bytes_per_cycle", "tensor_core.kind"]].duplicated().any()
    assert df["duration_s"].notna().all()


def test_cli_explore_and_report(tmp_path):
    import typer
    from typer.testing import CliRunner

    from warpgraph.cli.explore_cmd import register

    app = typer.Typer()
    register(app)
    p = study_file(tmp_path, MO, "mo")
    r = CliRunner().invoke(app, ["explore", str(p), "--trials", "8"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(app, ["explore-report", str(p)])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "mo_out" / "report" / "pareto.png").exists()
    assert len(explore.results(p)) == 8

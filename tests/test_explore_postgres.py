"""Distributed exploration against a PostgreSQL server (RDB storage, heartbeat). Skipped unless
WARPGRAPH_TEST_PG_URL is set (.ci/services.sh starts a server and sets it)."""
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from warpgraph import explore
from warpgraph.explore.spec import load_study

PG = os.environ.get("WARPGRAPH_TEST_PG_URL")
pytestmark = [pytest.mark.postgres, pytest.mark.skipif(not PG, reason="WARPGRAPH_TEST_PG_URL not set")]

BODY = """\
base: toy
arch_loader: python:warpgraph.explore.testing:toy_arch
evaluator: python:warpgraph.explore.testing:analytic
workloads: [h200/gemm_tma_M2048_N2048_K2048]
space:
  tma.admission_depth: [4, 8, 16, 32]
  tma.bytes_per_cycle: [16, 32, 64]
objectives: [{metric: cycles}]
sampler: grid
"""
TPE = BODY.replace("sampler: grid", "sampler: tpe\ntrials: 14\n").replace(
    "[16, 32, 64]", "{int: [8, 128]}")
KEYS = ["tma.admission_depth", "tma.bytes_per_cycle"]


def _study(tmp_path, body):
    name = "pg_" + uuid.uuid4().hex[:10]  # fresh study per test run; the database is shared
    p = tmp_path / f"{name}.yaml"
    p.write_text(f"name: {name}\n" + textwrap.dedent(body))
    return load_study(p)


def _counts(spec):
    import optuna

    from warpgraph.explore.study import counts, open_storage

    return counts(optuna.load_study(study_name=spec.name, storage=open_storage(PG)))


def test_two_workers_no_trial_lost_or_duplicated(tmp_path, monkeypatch):
    monkeypatch.setenv("WARPGRAPH_TOY_SLEEP_S", "0.05")
    spec = _study(tmp_path, BODY)
    st = explore.run_study(spec, PG, workers=2)
    df = explore.results(st)
    assert len(df) == 12 and (df.state == "complete").all()
    assert not df[KEYS].duplicated().any()
    every = explore.results(st, include_all=True)
    # a worker that asked while the last queued point was being taken gets a sampler trial, which is marked
    # spurious (FAIL, never evaluated): it does not count
    assert (every.state != "spurious").sum() == 12
    workers = {t.user_attrs["wg_worker"]["pid"] for t in st.trials}
    assert len(workers) == 2  # both worker processes did work


def test_two_workers_sampler_budget_exact(tmp_path, monkeypatch):
    monkeypatch.setenv("WARPGRAPH_TOY_SLEEP_S", "0.02")
    spec = _study(tmp_path, TPE)
    st = explore.run_study(spec, PG, workers=2)
    df = explore.results(st)
    assert len(df) == 14 and (df.state == "complete").all()


def _running_owned_by(spec, pid):
    import optuna

    from warpgraph.explore.study import open_storage

    st = optuna.load_study(study_name=spec.name, storage=open_storage(PG))
    return [t for t in st.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,))
            if (t.user_attrs.get("wg_worker") or {}).get("pid") == pid]


def test_killed_worker_resumes_to_completion(tmp_path):
    from warpgraph.explore.study import prepare

    spec = _study(tmp_path, BODY)
    prepare(spec, PG)
    cmd = [sys.executable, "-m", "warpgraph.explore.worker", str(spec.file), "--storage", PG]
    # the worker to be killed evaluates slowly (60 s a trial), so it is certainly mid-trial when the kill comes;
    # killing a 0.4 s trial at a polled moment raced with its completion (CI saw no abandoned trial)
    a = subprocess.Popen(cmd + ["--worker-index", "1"], env={**os.environ, "WARPGRAPH_TOY_SLEEP_S": "60"})
    b = subprocess.Popen(cmd + ["--worker-index", "2"], env={**os.environ, "WARPGRAPH_TOY_SLEEP_S": "0.4"})
    deadline = time.time() + 90
    while time.time() < deadline:
        if _counts(spec).get("complete", 0) >= 3 and _running_owned_by(spec, a.pid):
            break
        time.sleep(0.05)
    else:
        a.kill(); b.kill()
        pytest.fail("the slow worker never held a running trial while three trials were complete")
    a.send_signal(signal.SIGKILL)
    a.wait()
    assert b.wait(timeout=120) == 0  # the survivor reaps the dead worker's trial and finishes the budget
    st = explore.run_study(spec, PG)  # resume: nothing left to do, or finishes the remainder
    df = explore.results(st)
    assert len(df) == 12 and (df.state == "complete").all()
    assert not df[KEYS].duplicated().any()
    assert (explore.results(st, include_all=True).state == "abandoned").sum() == 1

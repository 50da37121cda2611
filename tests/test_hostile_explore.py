"""Durable studies (issue 21): a torn journal line is repaired (or refused with its line number and a repair
command), never appended to; worker processes never import modules from the current directory."""
import json
import textwrap

import pytest

import warpgraph
from warpgraph import explore
from warpgraph.explore.spec import load_study
from warpgraph.explore.study import repair_journal

STUDY = """\
name: {name}
base: toy
arch_loader: python:warpgraph.explore.testing:toy_arch
evaluator: {evaluator}
workloads: [h200/gemm_tma_M2048_N2048_K2048]
space:
  tma.admission_depth: [4, 8, 16, 32]
objectives: [{{metric: cycles}}]
sampler: grid
"""


def study(tmp_path, name="s", evaluator="python:warpgraph.explore.testing:analytic"):
    p = tmp_path / f"{name}.yaml"
    p.write_text(textwrap.dedent(STUDY.format(name=name, evaluator=evaluator)))
    return load_study(p)


def test_torn_last_journal_line_is_repaired_on_resume(tmp_path, capsys):
    from warpgraph.explore.study import prepare, run_worker

    spec = study(tmp_path)
    prepare(spec)
    run_worker(spec, worker_index=0, max_trials=2)
    journal = spec.default_storage
    good = open(journal, "rb").read()
    n_lines = good.count(b"\n")
    with open(journal, "ab") as f:            # an interrupted write: half a JSON record, no newline
        f.write(b'{"op_code": 6, "worker_id": "x", "trial_id": 2, "sta')
    st = explore.run_study(spec)               # resumes: repairs, then appends on a clean line
    df = explore.results(st)
    assert len(df) == 4 and (df.state == "complete").all()
    assert "torn last line" in capsys.readouterr().err
    text = open(journal, "rb").read()
    assert text.startswith(good) and text.endswith(b"\n")
    for line in text.splitlines():
        json.loads(line)                        # every line readable again
    assert open(journal + ".torn", "rb").read().startswith(b'{"op_code": 6')
    assert text.count(b"\n") > n_lines


def test_complete_last_record_without_newline_is_kept(tmp_path):
    j = tmp_path / "j.log"
    j.write_bytes(b'{"a": 1}\n{"b": 2}')
    note = repair_journal(j)
    assert "newline" in note and j.read_bytes() == b'{"a": 1}\n{"b": 2}\n'
    assert repair_journal(j) is None


def test_corrupt_middle_line_is_refused_with_line_and_repair_command(tmp_path):
    j = tmp_path / "j.log"
    j.write_bytes(b'{"a": 1}\n{"b": 2}\n{"c": \n{"d": 4}\n')
    with pytest.raises(warpgraph.UserError) as ei:
        repair_journal(j)
    assert ei.value.location == f"{j}:3" and "head -n 2" in ei.value.hint
    assert j.read_bytes() == b'{"a": 1}\n{"b": 2}\n{"c": \n{"d": 4}\n'     # untouched


def test_workers_never_import_from_the_working_directory(tmp_path, monkeypatch):
    from warpgraph.explore.study import prepare, spawn_workers

    marker = tmp_path / "imported"
    (tmp_path / "wg_cwd_mod.py").write_text(
        f"open({str(marker)!r}, 'w').write('x')\n"
        "def f(arch, workloads, **kw):\n    return {'cycles': 1.0}\n")
    spec = study(tmp_path, "cwd", evaluator="python:wg_cwd_mod:f")
    prepare(spec, validate=False)                     # the coordinator's part without the evaluator check
    monkeypatch.chdir(tmp_path)
    procs = spawn_workers(spec, spec.default_storage, 1)
    for p in procs:
        p.wait(timeout=120)
    assert not marker.exists()
    assert all(p.returncode != 0 for p in procs)     # the module is not importable: a user error, as with 1 worker


@pytest.mark.timeout(30)
def test_study_yaml_alias_bomb_and_bad_bytes(tmp_path):
    lines = ["name: b", 'a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, cur in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    p = tmp_path / "b.yaml"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(warpgraph.UserError, match="aliases"):
        load_study(p)
    p.write_bytes(b"name: x\nbase: \xff\n")
    with pytest.raises(warpgraph.UserError, match="byte offset 14"):
        load_study(p)


def test_owner_less_running_trial_is_reaped_once_its_workers_are_gone(tmp_path):
    """A worker killed between taking a trial and recording its owner leaves a RUNNING trial without one: it is
    reaped (failed, its grid point retried) once every registered worker of the study is gone, and kept while a
    registered worker still lives (issue 21: no trial lost after kill -9)."""
    import socket
    import subprocess
    import sys

    import optuna

    from warpgraph.explore.study import _proc_start, reap_stale

    st = optuna.create_study(storage=optuna.storages.JournalStorage(
        optuna.storages.journal.JournalFileBackend(str(tmp_path / "j.log"))), study_name="s")
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        host = socket.gethostname()
        st.set_user_attr(f"wg_workers.{host}.{dead.pid}", {"host": host, "pid": dead.pid, "start": "1"})
        st.set_user_attr(f"wg_workers.{host}.{live.pid}",
                         {"host": host, "pid": live.pid, "start": _proc_start(live.pid)})
        orphan = st.ask()                                  # RUNNING, no wg_worker owner
        assert reap_stale(st) == 0                         # a registered worker is alive: it may own it
        live.kill()
        live.wait()
        assert reap_stale(st) == 1
        assert st.get_trials(deepcopy=False)[orphan.number].state == optuna.trial.TrialState.FAIL
    finally:
        if live.poll() is None:
            live.kill()

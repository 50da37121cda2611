"""Exploration that fails fast and reports well: --check validates metrics and workloads, a study whose trials
all fail exits 1, ``scale:`` workloads, component statistics as objectives, a changed search space is refused
unless --new-study, int parameters stay ints, best trial / Pareto set printed, metric names for the dashboard,
optuna.visualization plots and the undefined-importance warning."""
import textwrap
import warnings

import optuna
import pytest
from typer.testing import CliRunner

import warpgraph
from warpgraph import explore
from warpgraph.cli.main import app

TOY = """\
base: toy
arch_loader: python:warpgraph.explore.testing:toy_arch
evaluator: python:warpgraph.explore.testing:analytic
workloads: [h200/gemm_tma_M2048_N2048_K2048]
"""


def study_file(tmp_path, body, name="s", head=TOY):
    p = tmp_path / f"{name}.yaml"
    p.write_text(f"name: {name}\n" + head + textwrap.dedent(body))
    return p


SO = """\
space:
  tma.admission_depth: {int: [2, 32]}
  tma.bytes_per_cycle: [16, 32, 64]
objectives: [{metric: cycles}]
sampler: random
trials: 6
"""


def test_check_rejects_an_objective_typo_before_any_trial(tmp_path):
    p = study_file(tmp_path, SO.replace("metric: cycles", "metric: cycels"))
    r = CliRunner().invoke(app, ["explore", str(p), "--check"])
    assert r.exit_code == 2
    assert "unknown metric 'cycels'" in r.output and "s.yaml:" in r.output and "cycles" in r.output
    r = CliRunner().invoke(app, ["explore", str(p)])            # a real run fails the same way, first
    assert r.exit_code == 2 and "cycels" in r.output
    assert not (tmp_path / "s_out" / "study.journal").exists()


def test_check_rejects_a_constraint_typo_and_an_unknown_workload(tmp_path):
    p = study_file(tmp_path, SO + "constraints: [{metric: dram_bytes, max: 1}]\n")
    r = CliRunner().invoke(app, ["explore", str(p), "--check"])
    assert r.exit_code == 2 and "unknown metric 'dram_bytes'" in r.output
    p = study_file(tmp_path, SO.replace("[{metric: cycles}]", "[{metric: cycles, workload: nope}]"))
    r = CliRunner().invoke(app, ["explore", str(p), "--check"])
    assert r.exit_code == 2 and "'nope'" in r.output and "gemm_tma_M2048_N2048_K2048" in r.output


REAL = """\
base: h200
workloads:
  - {record: h200/gemm_tma_M2048_N2048_K2048, scale: 0.125, name: gemm_small}
"""


def test_check_with_the_simulator_evaluator(tmp_path):
    body = """\
    space:
      tma.admission_depth: [2, 32]
    objectives: [{metric: stat:tma:admission_stall_cycles}, {metric: cycles}]
    sampler: grid
    """
    r = CliRunner().invoke(app, ["explore", str(study_file(tmp_path, body, head=REAL)), "--check"])
    assert r.exit_code == 0, r.output
    bad = body.replace("admission_stall_cycles", "admision_stall_cycles")
    r = CliRunner().invoke(app, ["explore", str(study_file(tmp_path, bad, name="b", head=REAL)), "--check"])
    assert r.exit_code == 2 and "stat:tma:admision_stall_cycles" in r.output
    bad = body.replace("metric: cycles", "metric: stall_ratios_per_issue.long_scorebord")
    r = CliRunner().invoke(app, ["explore", str(study_file(tmp_path, bad, name="c", head=REAL)), "--check"])
    assert r.exit_code == 2 and "long_scoreboard" in r.output          # the hint names the close match


def test_scale_workload_and_component_stat_objective(tmp_path):
    """One real (scaled-down) simulation: ``scale:`` works and a RunResult.stats row is an objective."""
    body = """\
    space:
      tma.admission_depth: [2]
    objectives: [{metric: "stat:tma:bytes_loaded"}, {metric: "stat:sm*:active_cycles"}]
    sampler: grid
    """
    spec = explore.load_study(study_file(tmp_path, body, head=REAL))
    st = explore.run_study(spec)
    (t,) = st.trials
    assert t.state == optuna.trial.TrialState.COMPLETE, t.user_attrs.get("wg_error")
    rec = warpgraph.scale_record(warpgraph.load_record("h200/gemm_tma_M2048_N2048_K2048"), factor=8)
    res = warpgraph.simulate(rec, "h200", overrides={"tma.admission_depth": 2})
    assert t.values[0] == warpgraph.stat_value(res.stats, "tma", "bytes_loaded") > 0
    sm_rows = res.stats[(res.stats.stat == "active_cycles") & res.stats.component.str.match(r"sm\d+$")]
    assert t.values[1] == float(sm_rows.value.sum()) > 0
    assert st.metric_names == ["stat:tma:bytes_loaded", "stat:sm*:active_cycles"]


def test_all_trials_failing_exits_nonzero(tmp_path):
    p = study_file(tmp_path, """\
    space:
      tma.admission_depth: [0]
    objectives: [{metric: cycles}]
    sampler: grid
    """)
    r = CliRunner().invoke(app, ["explore", str(p), "-q"])
    assert r.exit_code == 1, r.output
    assert "every trial failed" in r.output and "deadlock" in r.output


def test_changed_space_is_refused_unless_new_study(tmp_path):
    p = study_file(tmp_path, SO)
    assert CliRunner().invoke(app, ["explore", str(p), "-q"]).exit_code == 0
    p.write_text(p.read_text().replace("[16, 32, 64]", "[16, 32, 128]"))
    r = CliRunner().invoke(app, ["explore", str(p), "-q"])
    assert r.exit_code == 2 and "another search space" in r.output and "--new-study" in r.output
    assert "tma.bytes_per_cycle" in r.output
    r = CliRunner().invoke(app, ["explore", str(p), "-q", "--new-study"])
    assert r.exit_code == 0, r.output
    df = explore.results(explore.load_study(p))
    assert len(df) == 6 and set(df["tma.bytes_per_cycle"]) <= {16, 32, 128}
    # objectives changed: refused as well
    p.write_text(p.read_text().replace("metric: cycles", "metric: dram_read_bytes"))
    r = CliRunner().invoke(app, ["explore", str(p), "-q"])
    assert r.exit_code == 2 and "objectives" in r.output


def test_int_params_are_ints(tmp_path):
    st = explore.run_study(explore.load_study(study_file(tmp_path, SO)))
    df = explore.results(st)
    assert str(df["tma.admission_depth"].dtype) == "int64" and str(df["tma.bytes_per_cycle"].dtype) == "int64"
    assert all(isinstance(t.params["tma.admission_depth"], int) for t in st.trials)


def test_best_trial_and_pareto_set_printed(tmp_path):
    r = CliRunner().invoke(app, ["explore", str(study_file(tmp_path, SO)), "-q"])
    assert r.exit_code == 0, r.output
    st = optuna.load_study(study_name="s", storage=explore.open_storage(tmp_path / "s_out" / "study.journal"))
    assert "best trial" in r.output and f"#{st.best_trial.number}:" in r.output
    assert st.metric_names == ["cycles"]
    mo = SO.replace("objectives: [{metric: cycles}]", "objectives: [{metric: cycles}, {metric: sram_bytes}]")
    r = CliRunner().invoke(app, ["explore", str(study_file(tmp_path, mo, name="m")), "-q"])
    assert r.exit_code == 0, r.output
    best = explore.best_trials(explore.load_study(tmp_path / "m.yaml"))
    assert f"Pareto set ({len(best)} trial(s))" in r.output
    for b in best:
        assert f"#{b['number']}:" in r.output


def test_report_plots_and_titles(tmp_path):
    mo = SO.replace("objectives: [{metric: cycles}]", "objectives: [{metric: cycles}, {metric: sram_bytes}]")
    mo = mo.replace("{int: [2, 32]}", "{int: [2, 8]}").replace("trials: 6", "trials: 10")
    mo = mo.replace("tma.bytes_per_cycle: [16, 32, 64]\n",
                    "tma.bytes_per_cycle: [16, 32, 64]\n  l2.capacity_bytes: {int: [10000000, 60000000]}\n")
    spec = explore.load_study(study_file(tmp_path, mo))
    explore.run_study(spec)
    files = explore.report(spec)
    # contour plots (scipy is a dependency: Optuna's matplotlib contour interpolates with it)
    for k in ("csv", "pareto", "vs_params_cycles", "vs_params_sram_bytes", "importance", "contour_cycles"):
        assert files[k].exists() and files[k].stat().st_size > 1000, k
    import matplotlib.pyplot as plt

    assert plt.get_fignums() == []      # every figure closed
    _, labels, ctx = explore.analysis._labels(optuna.load_study(study_name="s", storage=explore.open_storage(
        spec.default_storage)))
    assert labels == ["cycles [cycles]", "sram_bytes [bytes]"] and ctx == "h200/gemm_tma_M2048_N2048_K2048 on toy"


def test_importance_undefined_for_a_constant_objective(tmp_path):
    body = """\
    space:
      tma.admission_depth: [4, 8, 16]
    objectives: [{metric: achieved_occupancy_pct}]
    sampler: grid
    """
    spec = explore.load_study(study_file(tmp_path, body))
    explore.run_study(spec)
    with pytest.warns(explore.ImportanceUndefined, match="constant"):
        files = explore.report(spec)
    assert "importance" not in files and files["vs_params_achieved_occupancy_pct"].exists()
    r = CliRunner().invoke(app, ["explore-report", str(spec.file)])
    assert r.exit_code == 0 and "importance undefined" in r.output


def test_metric_catalog_matches_a_real_run():
    """The names --check accepts are the ones a timing run produces (the catalog cannot drift silently)."""
    from warpgraph.analysis.stat_units import METRICS, known_stat

    rec = warpgraph.scale_record(warpgraph.load_record("h200/gemm_tma_M2048_N2048_K2048"), factor=8)
    res = warpgraph.simulate(rec, "h200")
    produced = set(res.metrics)
    catalog = set(METRICS) - {"sram_bytes", "area_units"}
    assert produced == catalog, (produced - catalog, catalog - produced)
    for k, v in res.metrics.items():
        numeric = isinstance(v, (int, float)) and not isinstance(v, bool)
        assert warpgraph.known_metric(k) == numeric, k
    for k in res.metrics["stall_ratios_per_issue"]:
        assert warpgraph.known_metric(f"stall_ratios_per_issue.{k}")
    unknown = [(c, s) for c, s in zip(res.stats.component, res.stats.stat) if not known_stat(c, s)]
    assert unknown == []
    assert warpgraph.metric_unit("stat:sm*:active_cycles") == "cycles"

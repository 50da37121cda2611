"""Command-line conventions: ``python -m warpgraph``, ``-h`` everywhere, choices, completion, typed package,
``dir(warpgraph)``, one version, LICENSE, bundled records by short name."""
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

import warpgraph
from warpgraph.cli.main import app

ROOT = Path(warpgraph.__file__).resolve().parent


def _commands(typer_app, prefix=()):
    """Every command path of the app (groups and leaves)."""
    import typer.main

    cmd = typer.main.get_command(typer_app)
    out = []

    def walk(c, path):
        out.append(path)
        for name, sub in (getattr(c, "commands", None) or {}).items():
            walk(sub, path + (name,))

    walk(cmd, tuple(prefix))
    return out


def test_python_dash_m():
    r = subprocess.run([sys.executable, "-m", "warpgraph", "--version"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"warpgraph {warpgraph.__version__}"


def test_dash_h_on_every_command():
    paths = _commands(app)
    assert ("records", "list") in paths and ("arch", "show") in paths and ("run",) in paths
    for path in paths:
        r = CliRunner().invoke(app, [*path, "-h"])
        assert r.exit_code == 0, (path, r.output)
        assert "Usage" in r.output and "--help" in r.output, path


@pytest.mark.parametrize("argv", [["run", "--mode", "bogus"], ["validate", "--mode", "functional"],
                                  ["validate", "--format", "xml"], ["bench", "--format", "xml"],
                                  ["arch", "graph", "--format", "png"]])
def test_choices_are_enforced_by_the_parser(argv):
    r = CliRunner().invoke(app, argv)
    assert r.exit_code == 2
    assert "Invalid value" in r.output or "is not one of" in r.output, r.output


def test_choices_are_listed_in_help():
    r = CliRunner().invoke(app, ["run", "-h"], env={"COLUMNS": "200"})
    assert "timing" in r.output and "sampled" in r.output and "functional" in r.output
    r = CliRunner().invoke(app, ["validate", "-h"], env={"COLUMNS": "200"})
    assert "table" in r.output and "csv" in r.output and "json" in r.output


def test_shell_completion_enabled():
    r = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert "--install-completion" in r.output and "--show-completion" in r.output


def test_typed_package_and_package_data():
    assert (ROOT / "py.typed").is_file()
    pp = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in pp["tool"]["setuptools"]["package-data"]["warpgraph"]


def test_single_sourced_version():
    pp = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in pp["project"] and "version" in pp["project"]["dynamic"]
    assert pp["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "warpgraph.__version__"}
    from importlib.metadata import version

    assert version("warpgraph") == warpgraph.__version__


def test_dir_lists_the_lazy_api():
    names = dir(warpgraph)
    for n in warpgraph.__all__:
        assert n in names
        assert getattr(warpgraph, n) is not None
    with pytest.raises(AttributeError):
        warpgraph.no_such_thing  # noqa: B018


def test_license_and_changelog():
    lic = (ROOT / "LICENSE").read_text()
    assert "Apache License" in lic and "Version 2.0, January 2004" in lic and "END OF TERMS AND CONDITIONS" in lic
    pp = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pp["project"]["license"] == "Apache-2.0"
    ch = (ROOT / "CHANGELOG.md").read_text()
    assert f"## {warpgraph.__version__}" in ch


def test_bundled_records_by_short_name():
    names = warpgraph.list_records()
    assert "h200/gemm_tma_M2048_N2048_K2048" in names
    assert any(n.startswith("h200_heldout/") for n in names) and any(n.startswith("microbench/") for n in names)
    rec = warpgraph.load_record("h200/gemm_tma_M2048_N2048_K2048")
    assert rec.name == "gemm_tma_M2048_N2048_K2048"
    assert warpgraph.load_record("microbench/pchase_l1").name == "pchase_l1"
    with pytest.raises(warpgraph.UserError, match="records list"):
        warpgraph.load_record("h200/no_such_record")


def test_records_list_command():
    r = CliRunner().invoke(app, ["records", "list", "h200/gemm*"])
    assert r.exit_code == 0, r.output
    lines = r.output.strip().splitlines()
    assert lines and all(ln.startswith("h200/gemm") for ln in lines)
    assert any("measured" in ln for ln in lines)
    r = CliRunner().invoke(app, ["records", "list", "zzz*"])
    assert r.exit_code == 1


def test_run_accepts_a_short_name_error_path():
    r = CliRunner().invoke(app, ["run", "h200/no_such_record"])
    assert r.exit_code != 0 and "no launch record" in (r.output + str(r.exception))


@pytest.mark.parametrize("cmd", ["run", "validate", "bench", "explore"])
def test_quiet_flag(cmd):
    r = CliRunner().invoke(app, [cmd, "-h"], env={"COLUMNS": "200"})
    assert "--quiet" in r.output and "-q" in r.output


def test_run_progress_phases_reach_the_callback(tmp_path):
    """simulate(on_phase=...) names the phases the spinner of `warpgraph run` shows; cycles are unchanged."""
    rec = warpgraph.scale_record(warpgraph.load_record("h200/gemm_tma_M2048_N2048_K2048"), factor=8)
    seen = []
    a = warpgraph.simulate(rec, "h200", on_phase=seen.append)
    b = warpgraph.simulate(rec, "h200")
    assert seen == ["loading", "functional pass", "timing pass"]
    assert a.metrics["cycles"] == b.metrics["cycles"]

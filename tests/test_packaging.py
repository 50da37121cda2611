"""Packaging: every sub-package is listed in pyproject, YAMLs ship as package data, CLI modules register."""
import importlib.resources
import tomllib
from pathlib import Path

import warpgraph

ROOT = Path(warpgraph.__file__).resolve().parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_subpackage_is_listed():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    found = {"warpgraph"}
    for init in ROOT.rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT)
        if any(part.startswith(".") or part in ("tests", "build", "dist", "examples") or part.endswith(".egg-info")
               for part in rel.parts):
            continue
        if rel.parts:
            found.add("warpgraph." + ".".join(rel.parts))
    assert found <= listed, f"sub-packages missing from pyproject [tool.setuptools] packages: {sorted(found - listed)}"


def test_yaml_package_data():
    assert "*.yaml" in PYPROJECT["tool"]["setuptools"]["package-data"]["warpgraph.topologies"]
    res = importlib.resources.files("warpgraph.topologies")
    for name in ("h100", "h200", "b200", "rtx5090"):
        assert res.joinpath(f"{name}.yaml").is_file()


def test_entry_point_and_cli_modules():
    assert PYPROJECT["project"]["scripts"]["warpgraph"] == "warpgraph.cli.main:main"
    from warpgraph.cli import main as m

    present = [n for n in m.COMMAND_MODULES if (ROOT / "cli" / f"{n}.py").is_file()]
    assert m.REGISTERED == present and "arch_cmd" in present


def test_ci_script_runs_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "set -euo pipefail" in ci and ".venv/bin/pytest" in ci
    readme = (ROOT / "README.md").read_text()
    assert ".venv/bin/pytest" in readme and ".venv/bin/warpgraph run" in readme

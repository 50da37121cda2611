"""Execute the case-study notebooks top to bottom with nbclient (WARPGRAPH_CI=1: small records, few trials).
Marked `slow` (they call the real simulator): `pytest -m slow tests/test_explore_notebooks.py`; also
selectable with `-m notebooks`."""
import os
from pathlib import Path

import pytest

import warpgraph

STUDIES = Path(warpgraph.__file__).resolve().parent / "studies"
NOTEBOOKS = sorted(STUDIES.glob("*.ipynb"))


def run_notebook(path: Path, timeout: int = 1800):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    os.environ.setdefault("WARPGRAPH_CI", "1")
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    return nb


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch):
    monkeypatch.setenv("WARPGRAPH_CI", "1")
    run_notebook(path)


def test_notebooks_present_and_valid():
    import nbformat

    names = {p.name for p in NOTEBOOKS}
    assert {"fa_sm80_vs_sm90.ipynb", "tma_sweep.ipynb", "pareto_sram.ipynb"} <= names
    for p in NOTEBOOKS:
        nbformat.validate(nbformat.read(p, as_version=4))

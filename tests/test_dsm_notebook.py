"""``studies/dsm_gx_planes.ipynb`` (DSM what-if: GX planes, cluster size) runs top to bottom in CI mode
(WARPGRAPH_CI=1) and is what ``studies/_make_dsm_notebook.py`` builds. Its cells assert the physically expected
directions (one GX plane never speeds DSM traffic up, and slows it by about what the fabric model predicts)."""
from pathlib import Path

import warpgraph

STUDIES = Path(warpgraph.__file__).resolve().parent / "studies"
NB = STUDIES / "dsm_gx_planes.ipynb"


def test_notebook_is_built_by_its_script(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("_make_dsm_notebook", STUDIES / "_make_dsm_notebook.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.build(tmp_path / "nb.ipynb")
    assert out.read_text() == NB.read_text(), "rebuild: python studies/_make_dsm_notebook.py"


def test_dsm_notebook_runs_ci(monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("WARPGRAPH_CI", "1")
    nb = nbformat.read(NB, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(STUDIES)}}).execute()
    text = "".join(str(o.get("data", {}).get("text/markdown", "")) + str(o.get("text", ""))
                   for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "Disabling one GX plane slows" in text and "Across cluster sizes" in text
    first = nb.cells[0].source
    assert "Full size" in first and "CI" in first

"""``studies/fa_timelines.ipynb`` runs top to bottom (WARPGRAPH_CI=1: small_variant sizes) and is what
``studies/_make_timeline_notebook.py`` builds."""
import time
from pathlib import Path

import warpgraph

STUDIES = Path(warpgraph.__file__).resolve().parent / "studies"
NB = STUDIES / "fa_timelines.ipynb"


def test_notebook_is_built_by_its_script(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("_make_timeline_notebook", STUDIES / "_make_timeline_notebook.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.build(tmp_path / "nb.ipynb")
    assert out.read_text() == NB.read_text(), "rebuild: python studies/_make_timeline_notebook.py"


def test_fa_timelines_notebook_runs(tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("WARPGRAPH_CI", "1")
    monkeypatch.setenv("WARPGRAPH_TRACE_DIR", str(tmp_path))
    nb = nbformat.read(NB, as_version=4)
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(STUDIES)}}).execute()
    wall = time.perf_counter() - t0
    assert wall < 150, f"notebook took {wall:.0f} s"
    traces = sorted(p.name for p in tmp_path.glob("*.json.gz"))
    assert traces == ["attn80_B1_H2_S256_D64_causal0.json.gz", "attn_B1_H2_S256_D64_causal0.json.gz"]
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "ui.perfetto.dev" in "".join(c.source for c in nb.cells) and "cycles; trace" in text
    images = sum(1 for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                 if "image/png" in o.get("data", {}))
    assert images >= 3

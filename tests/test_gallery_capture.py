"""Every gallery case (workloads/gallery/cases.py) re-captured with `capture` gives exactly the committed record's
PTX and launch (issue 17: capture succeeds on every gallery kernel; the PTX comparisons against a direct
triton.compile for each argument style are in test_capture_any_kernel.py)."""
import json
from pathlib import Path

import pytest

pytest.importorskip("triton")

from warpgraph.workloads.gallery.cases import CASES, capture_case  # noqa: E402

REC = Path(__file__).resolve().parent.parent / "workloads" / "gallery" / "records"


def _code(ptx: str) -> list[str]:
    return [ln for ln in ptx.splitlines() if not ln.lstrip().startswith((".file", ".loc", "//"))]


@pytest.mark.parametrize("name", sorted(CASES))
def test_capture_reproduces_the_committed_gallery_record(name, tmp_path):
    out = tmp_path / name
    rec = capture_case(name, "small", out)
    ref = json.loads((REC / name / "launch.json").read_text())
    got = json.loads((out / "launch.json").read_text())
    assert _code((out / "kernel.ptx").read_text()) == _code((REC / name / "kernel.ptx").read_text())
    for k in ("entry", "grid", "block", "shared_bytes", "params", "buffers"):
        assert got[k] == ref[k], k
    assert rec.compiled["sm_90a"].registers_per_thread == ref["compiled"]["sm_90a"]["registers_per_thread"]

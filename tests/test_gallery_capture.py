"""Every gallery case (workloads/gallery/cases.py) re-captured with `capture` gives exactly the committed record's
PTX and launch (issue 17: capture succeeds on every gallery kernel; the PTX comparisons against a direct
triton.compile for each argument style are in test_capture_any_kernel.py). Code lines compare as in
_ptx_compare.same_code: without DWARF (it holds the checkout's path), barrier offsets that Triton's
warp-specialization pass permutes between fresh compiles allowed."""
import json
from pathlib import Path

import pytest

pytest.importorskip("triton")

from _ptx_compare import same_code  # noqa: E402
from warpgraph.workloads.gallery.cases import CASES, capture_case  # noqa: E402

REC = Path(__file__).resolve().parent.parent / "workloads" / "gallery" / "records"


@pytest.mark.parametrize("name", sorted(CASES))
def test_capture_reproduces_the_committed_gallery_record(name, tmp_path):
    out = tmp_path / name
    rec = capture_case(name, "small", out)
    ref = json.loads((REC / name / "launch.json").read_text())
    got = json.loads((out / "launch.json").read_text())
    assert same_code((out / "kernel.ptx").read_text(), (REC / name / "kernel.ptx").read_text())
    for k in ("entry", "grid", "block", "shared_bytes", "params", "buffers"):
        assert got[k] == ref[k], k
    assert rec.compiled["sm_90a"].registers_per_thread == ref["compiled"]["sm_90a"]["registers_per_thread"]

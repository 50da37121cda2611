"""Every gallery record (workloads/gallery/records, captured from workloads/gallery/kernels.py at reduced size)
runs functionally and matches its golden outputs (check.expected)."""
from pathlib import Path

import numpy as np
import pytest

import warpgraph
from warpgraph.workloads.functional import run_functional
from warpgraph.workloads.record import load_record
from warpgraph.workloads.references import check

REC = Path(warpgraph.__file__).parent / "workloads" / "gallery" / "records"
CASES = sorted(p.name for p in REC.iterdir() if (p / "launch.json").is_file())


def test_gallery_is_broad():
    styles = {load_record(REC / c).source["gallery_style"] for c in CASES}
    assert len(CASES) >= 30 and len(styles) >= 10


@pytest.mark.parametrize("case", CASES)
def test_gallery_record_passes_its_check(case):
    rec = load_record(REC / case)
    rec.validate_against(rec.program())
    assert rec.check is not None and rec.check.expected
    res = run_functional(rec, want_trace=False)
    c = check(rec, res.outputs)
    assert c.ok, c.message


def test_golden_check_fails_on_a_wrong_output():
    rec = load_record(REC / "layernorm_fwd_r16_c700")
    res = run_functional(rec, want_trace=False)
    out = dict(res.outputs)
    out["rstd"] = out["rstd"] * np.float32(1.001)      # 1e-3 relative error > the 1e-4 tolerance
    c = check(rec, out)
    assert not c.ok and "rstd" in c.message and "FAIL" in c.message
    out = dict(res.outputs)
    out["y"] = np.full_like(out["y"], np.nan)
    assert not check(rec, out).ok


@pytest.mark.parametrize("case", CASES)
def test_gallery_timing_runs_and_checks(case):
    """The timing pass lowers every style (named barriers, tensormap.replace / cp_fenceproxy, atom.cas spin
    locks, pointer-table loads, ...), and the run's outputs pass the check."""
    from warpgraph.runner.simulate import simulate

    r = simulate(REC / case, "h200", check=True)
    assert r.check.ok, r.check.message
    assert r.metrics["cycles"] > 1000

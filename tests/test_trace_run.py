"""``simulate(..., trace_path=...)`` / ``warpgraph run --trace``: real Perfetto traces of the timing model.

Scaled-down calibration launches (``small_variant``): FA sm_90a (wgmma + cp.async) and gemm_tma (TMA + mbarrier
+ wgmma). Tracing must not change the simulated cycles; the trace must validate and hold warp, TMA, tensor and
mbarrier tracks; every run carries the roofline fields.
"""
import gzip
import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from warpgraph import load_record, simulate
from warpgraph.analysis import validate_chrome_trace
from warpgraph.components.stalls import STALL_NAMES
from warpgraph.workloads.scale import small_variant

ROOT = Path(__file__).resolve().parent.parent
REC = ROOT / "workloads" / "records" / "h200"


@pytest.fixture(scope="module")
def fa():
    return small_variant(load_record(REC / "attn_B4_H16_S1024_D64_causal0"))


@pytest.fixture(scope="module")
def gemm():
    return small_variant(load_record(REC / "gemm_tma_M2048_N2048_K2048"))


def _load(path):
    path = Path(path)
    raw = gzip.open(path, "rt").read() if path.suffix == ".gz" else path.read_text()
    return json.loads(raw)


def _thread_names(doc):
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == "thread_name"}


@pytest.fixture(scope="module")
def fa_runs(fa, tmp_path_factory):
    d = tmp_path_factory.mktemp("fa")
    plain = simulate(fa)
    traced = simulate(fa, trace_path=d / "fa.json")
    return plain, traced, d / "fa.json"


@pytest.fixture(scope="module")
def gemm_runs(gemm, tmp_path_factory):
    d = tmp_path_factory.mktemp("gemm")
    plain = simulate(gemm)
    traced = simulate(gemm, trace_path=d / "gemm.json.gz", trace_sms="all")
    return plain, traced, d / "gemm.json.gz"


def test_tracing_does_not_change_cycles(fa_runs, gemm_runs):
    for plain, traced, _ in (fa_runs, gemm_runs):
        assert traced.metrics["cycles"] == plain.metrics["cycles"]
        assert traced.metrics["warp_instructions"] == plain.metrics["warp_instructions"]
        assert traced.metrics["stall_ratios_per_issue"] == plain.metrics["stall_ratios_per_issue"]
        assert plain.events is None and traced.events is not None


def test_fa_trace_validates_with_warp_and_tensor_tracks(fa_runs):
    _, traced, path = fa_runs
    summary = validate_chrome_trace(path)
    assert summary["events"] == traced.metrics["trace"]["events"] > 0
    doc = _load(path)
    names = _thread_names(doc)
    assert any(n.startswith("warp") for n in names.values())
    assert "tensor core" in names.values()
    assert "CTAs" in names.values()
    # default: the first 4 SMs that run CTAs
    assert traced.metrics["trace"]["sms"] == [0, 1, 2, 3]
    pids = {e["pid"] for e in doc["traceEvents"] if e.get("ph") != "M" and e["pid"] > 0}
    assert pids <= {1, 2, 3, 4}
    slices = Counter(e["name"] for e in doc["traceEvents"] if e.get("ph") == "X")
    assert slices["issue"] > 0
    assert set(slices) - {"issue"} <= set(STALL_NAMES)  # stall slices carry Nsight reason names
    wg = [e for e in doc["traceEvents"] if e.get("ph") == "b" and e.get("cat") == "tensor"]
    assert wg and all(e["name"].startswith("wgmma") for e in wg)


def test_gemm_trace_has_tma_mbarrier_and_matching_pairs(gemm_runs):
    _, traced, path = gemm_runs
    validate_chrome_trace(path)
    doc = _load(path)
    names = set(_thread_names(doc).values())
    assert {"TMA", "mbarrier", "tensor core", "CTAs"} <= names
    assert any(n.startswith("warp") for n in names)
    ev = doc["traceEvents"]
    b = Counter((e["cat"], e["id"]) for e in ev if e.get("ph") == "b")
    e_ = Counter((e["cat"], e["id"]) for e in ev if e.get("ph") == "e")
    assert b == e_
    tma_b = [e for e in ev if e.get("ph") == "b" and e["cat"] == "tma"]
    assert tma_b and len(tma_b) == len(traced.events["tma"])
    for e in ev:  # each TMA transaction: begin at admission, end at completion
        if e.get("ph") == "b" and e["cat"] == "tma":
            a = e["args"]
            assert a["t_issue"] <= a["t_admit"] <= a["t_done"]
    assert any(e.get("ph") == "i" and e["cat"] == "mbarrier" for e in ev)     # phase completions
    assert any(e.get("ph") == "b" and e["cat"] == "mbarrier.wait" for e in ev)
    assert any(e.get("ph") == "C" for e in ev)                                   # L2/HBM counters


def test_all_sm_trace_accounts_every_issue_slot(gemm_runs):
    _, traced, _ = gemm_runs
    df = traced.utilization(500)
    assert {"issue_pct", "tensor_pct", "tma_pct", "hbm_pct", "l2_pct"} <= set(df.columns)
    assert df["issue_cycles"].sum() == pytest.approx(traced.metrics["warp_instructions"], rel=1e-9)
    assert df["tma_pct"].max() > 0 and df["tensor_pct"].max() > 0 and df["l2_pct"].max() > 0
    assert (df[["issue_pct", "tma_pct"]] <= 100.0 + 1e-6).all().all()


def test_utilization_without_events_is_one_row(fa_runs):
    plain, _, _ = fa_runs
    df = plain.utilization()
    assert len(df) == 1 and df["t_end"].iloc[0] == plain.metrics["cycles"]


def test_roofline_fields(fa_runs, gemm_runs, gemm):
    for plain, traced, _ in (fa_runs, gemm_runs):
        for r in (plain, traced):
            rf = r.metrics["roofline"]
            assert rf["bound_cycles"] > 0
            assert rf["bound_by"] in ("compute", "memory")
            assert rf["sim_over_bound"] == pytest.approx(r.metrics["cycles"] / rf["bound_cycles"])
            assert rf["sim_over_bound"] >= 1.0
    assert simulate(gemm, mode="functional").metrics["roofline"]["bound_cycles"] > 0


def test_trace_window_and_sms(gemm, tmp_path):
    res = simulate(gemm, trace_path=tmp_path / "w.json", trace_sms=[1], trace_window=(1000, 3000))
    validate_chrome_trace(tmp_path / "w.json")
    ev = res.events
    assert ev.sms == frozenset({1}) and ev.window == (1000, 3000)
    for kind in ("issue", "stall", "tensor", "tma", "cta"):
        for row in ev[kind]:
            assert row[0] == 1
    for row in ev["issue"] + ev["stall"]:
        assert row[3] > 1000 and row[2] < 3000


def test_cli_run_trace_and_utilization(gemm, tmp_path):
    from warpgraph.cli.main import app
    from warpgraph.workloads.record import save_record

    d = tmp_path / "gemm_small"
    save_record(gemm, d)
    out, png = tmp_path / "t.json", tmp_path / "u.png"
    r = CliRunner().invoke(app, ["run", str(d), "--json", "--trace", str(out), "--trace-sms", "0,1",
                                 "--trace-window", "0:20000", "--utilization", str(png)])
    assert r.exit_code == 0, r.output
    m = json.loads(r.stdout)["metrics"]
    assert m["trace"]["sms"] == [0, 1] and m["trace"]["window"] == [0, 20000]
    assert {"bound_cycles", "bound_by", "sim_over_bound"} <= set(m["roofline"])
    validate_chrome_trace(out)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = CliRunner().invoke(app, ["run", str(d), "--trace", str(out), "--trace-window", "5:1"])
    from warpgraph.core.errors import UserError

    assert isinstance(bad.exception, UserError) and "END must be after START" in str(bad.exception)

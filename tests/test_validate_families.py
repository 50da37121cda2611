"""``warpgraph validate``: per-family summary and the stall top-3 agreement per launch (issue 15)."""
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from warpgraph.analysis import validate as V
from warpgraph.cli import validate_cmd
from warpgraph.cli.main import app

BUNDLED = Path(__file__).resolve().parent.parent / "workloads" / "records" / "h200"


@pytest.mark.parametrize("name,path,fam", [
    ("gemm_tma_M2048_N2048_K2048", None, "gemm_tma"),
    ("attn80_B4_H16_S1024_D64_causal0", None, "attn80"),
    ("axpby_f32_n777_relu_full", None, "axpby"),
    ("gemm_persistent_tma_bn64_M256_N192_K64_full", None, "gemm_persistent_tma"),
    ("rmsnorm_rows4096_cols4096", "rmsnorm_rows4096_cols4096", "rmsnorm"),
    ("softmax_r64_c300_full", "gallery/softmax_r64_c300_full", "gallery/softmax"),
])
def test_family_of(name, path, fam):
    assert V.family_of(name, path) == fam


def test_stall_agreement_counts_measured_top3_in_simulated_top3():
    hw = {"barrier": 6.9, "long_scoreboard": 1.6, "wait": 1.5, "selected": 1.0, "math_pipe_throttle": 0.2}
    sim = {"long_scoreboard": 5.7, "math_pipe_throttle": 2.6, "barrier": 2.0, "wait": 0.8, "selected": 1.0}
    assert V.stall_agreement(sim, hw) == 2
    assert V.stall_agreement(hw, hw) == 3
    assert V.stall_agreement(sim, {}) is None and V.stall_agreement(sim, None) is None


def test_family_summary_mape_bias_worst():
    rows = [{"name": "gemm_tma_M1", "path": "gemm_tma_M1", "status": "ok", "error_pct": 10.0, "sass_ratio": 1.0,
             "stall_top3_agreement": 2},
            {"name": "gemm_tma_M2", "path": "gemm_tma_M2", "status": "ok", "error_pct": -20.0, "sass_ratio": 0.9,
             "stall_top3_agreement": 1},
            {"name": "swiglu_n4", "path": "swiglu_n4", "status": "error", "error_pct": None}]
    fams = {f["family"]: f for f in V.family_summary(rows)}
    g = fams["gemm_tma"]
    assert g["n"] == 2 and g["mape_pct"] == pytest.approx(15.0) and g["bias_pct"] == pytest.approx(-5.0)
    assert g["worst_error_pct"] == -20.0 and g["worst_record"] == "gemm_tma_M2"
    assert g["mean_sass_ratio"] == pytest.approx(0.95) and g["mean_stall_top3_agreement"] == pytest.approx(1.5)
    assert fams["swiglu"]["n"] == 1 and fams["swiglu"]["n_compared"] == 0 and fams["swiglu"]["mape_pct"] is None
    assert [f["family"] for f in V.summarize(rows)["families"]] == ["gemm_tma", "swiglu"]


def _fake_sim(path, arch="h200", *, mode="timing", overrides=None, **kw):
    m = json.loads((Path(path) / "measured.json").read_text())
    f = 1.1 if "gemm" in Path(path).name else 0.9
    return SimpleNamespace(metrics={"cycles": m["cycles"] * f, "warp_instructions": 1.0,
                                    "stall_ratios_per_issue": {"long_scoreboard": 3.0, "wait": 1.0, "barrier": 0.5},
                                    "wall_seconds": 0.01})


def test_cli_prints_family_table_and_agreement(tmp_path, monkeypatch):
    orig = validate_cmd.run_validate
    monkeypatch.setattr(validate_cmd, "run_validate",
                        lambda *a, **k: orig(*a, **{**k, "simulate_fn": _fake_sim, "roofline_fn": lambda *x: None}))
    root = tmp_path / "recs"
    for src in ("gemm_ptr_M1024_N1024_K1024", "gemm_ptr_M2048_N2048_K2048", "swiglu_n16777216"):
        shutil.copytree(BUNDLED / src, root / src)
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["validate", str(root), "--out", str(out)], terminal_width=250)
    assert r.exit_code == 0, r.output
    assert "per family" in r.output and "gemm_ptr" in r.output and "+10.0%" in r.output
    s = json.loads((out / "summary.json").read_text())
    fams = {f["family"]: f for f in s["families"]}
    assert fams["gemm_ptr"]["n"] == 2 and fams["gemm_ptr"]["bias_pct"] == pytest.approx(10.0)
    assert fams["swiglu"]["bias_pct"] == pytest.approx(-10.0)
    hw = json.loads((root / "swiglu_n16777216" / "measured.json").read_text())["stall_ratios_per_issue"]
    want = V.stall_agreement({"long_scoreboard": 3.0, "wait": 1.0, "barrier": 0.5}, hw)
    import csv

    got = {x["name"]: x for x in csv.DictReader(open(out / "validation.csv"))}
    assert got["swiglu_n16777216"]["stall_top3_agreement"] == str(want)
    assert got["swiglu_n16777216"]["family"] == "swiglu"

"""``warpgraph validate`` via typer's CliRunner on a temp folder of two tiny fake records."""
import csv
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from warpgraph.cli import validate_cmd
from warpgraph.cli.main import app

BUNDLED = Path(__file__).resolve().parent.parent / "workloads" / "records" / "h200"


def fake_sim(path, arch="h200", *, mode="timing", overrides=None, **kw):
    p = Path(path)
    if "bad" in p.name:
        raise RuntimeError("stuck warps: cta 0 warp 3 waits on mbarrier")
    m = json.loads((p / "measured.json").read_text()) if (p / "measured.json").exists() else {}
    return SimpleNamespace(metrics={"cycles": m.get("cycles", 500.0) * 0.95, "warp_instructions": 1.0,
                                    "dram_read_bytes": 1.0, "dram_write_bytes": 0.0, "l2_bytes": 1.0,
                                    "achieved_occupancy_pct": 50.0, "stall_ratios_per_issue": {"wait": 1.0},
                                    "wall_seconds": 0.01})


def fake_roofline(d, arch, overrides, clock_mhz):
    return {"bound_cycles": 100.0, "bound_by": "memory"}


@pytest.fixture
def recs(tmp_path, monkeypatch):
    orig = validate_cmd.run_validate
    monkeypatch.setattr(validate_cmd, "run_validate",
                        lambda *a, **k: orig(*a, **{**k, "simulate_fn": fake_sim, "roofline_fn": fake_roofline}))
    root = tmp_path / "recs"
    for name, src, cyc in (("attn80_T", "attn80_B4_H16_S1024_D64_causal0", 3000.0),
                           ("attn_T", "attn_B4_H16_S1024_D64_causal0", 2000.0)):
        d = root / "nested" / name
        shutil.copytree(BUNDLED / src, d)
        m = json.loads((d / "measured.json").read_text())
        m["cycles"] = cyc
        (d / "measured.json").write_text(json.dumps(m))
        lj = json.loads((d / "launch.json").read_text())
        lj["name"] = name
        (d / "launch.json").write_text(json.dumps(lj))
    return root


def test_cli_validate_ok(recs, tmp_path):
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["validate", str(recs), "--out", str(out), "--jobs", "2"])
    assert r.exit_code == 0, r.output
    assert "MAPE 5.00%" in r.output and "attn_T over attn80_T" in r.output
    rows = list(csv.DictReader(open(out / "validation.csv")))
    assert [x["name"] for x in rows] == ["attn80_T", "attn_T"]
    s = json.loads((out / "summary.json").read_text())
    assert s["cycles"]["n"] == 2 and s["cycles"]["within_10_pct"] == 1.0
    (p,) = s["speedup_pairs"]
    assert p["hw_speedup"] == pytest.approx(1.5) and p["error_pct"] == pytest.approx(0.0)
    assert (out / "scatter.png").stat().st_size > 1000


def test_cli_validate_failure_and_filter(recs, tmp_path):
    shutil.copytree(recs / "nested" / "attn_T", recs / "bad_one")
    (recs / "bad_one" / "measured.json").unlink()
    out = tmp_path / "o2"
    r = CliRunner().invoke(app, ["validate", str(recs), "--out", str(out)])
    assert r.exit_code == 1, r.output
    assert "stuck warps" in r.output
    rows = list(csv.DictReader(open(out / "validation.csv")))
    assert len(rows) == 3 and rows[0]["path"] == "bad_one" and rows[0]["status"] == "error"
    r = CliRunner().invoke(app, ["validate", str(recs), "--out", str(out), "--filter", "attn_*"])
    assert r.exit_code == 0, r.output
    assert len(list(csv.DictReader(open(out / "validation.csv")))) == 1


def test_cli_validate_user_errors(recs, tmp_path):
    r = CliRunner().invoke(app, ["validate", str(tmp_path / "missing")])
    assert r.exit_code == 2
    r = CliRunner().invoke(app, ["validate", str(recs), "--filter", "zzz*", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2
    r = CliRunner().invoke(app, ["validate", str(recs), "--mode", "bogus"])
    assert r.exit_code == 2


def test_cli_validate_against_an_earlier_run(recs, tmp_path):
    base = tmp_path / "base"
    assert CliRunner().invoke(app, ["validate", str(recs), "--out", str(base)]).exit_code == 0
    rows = list(csv.DictReader(open(base / "validation.csv")))
    rows[0]["sim_cycles"] = str(float(rows[0]["sim_cycles"]) * 0.9)          # the baseline ran 10 % faster
    with open(base / "validation.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    out = tmp_path / "new"
    r = CliRunner().invoke(app, ["validate", str(recs), "--out", str(out), "--against", str(base)])
    assert r.exit_code == 0, r.output
    cmp = json.loads((out / "comparison.json").read_text())
    d = {x["name"]: x["diff_pct"] for x in cmp["launches"]}
    assert d["attn80_T"] == pytest.approx(100 / 0.9 - 100) and d["attn_T"] == pytest.approx(0.0)
    assert cmp["within_tol"] == 1 and "max |diff| 11.11%" in r.output
    r = CliRunner().invoke(app, ["validate", str(recs), "--out", str(out), "--against", str(tmp_path / "nope")])
    assert r.exit_code == 2 and "--against" in r.output

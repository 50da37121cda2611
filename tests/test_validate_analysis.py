"""``warpgraph.analysis.validate`` with an injected fake simulate (no real simulation)."""
import csv
import json
import math
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from warpgraph.analysis import validate as V

BUNDLED = Path(__file__).resolve().parent.parent / "workloads" / "records" / "h200"


def fake_sim(path, arch="h200", *, mode="timing", overrides=None, **kw):
    """Simulated cycles = 1.1 × measured (or 1000 without measurements); fails for names containing 'bad'."""
    p = Path(path)
    if "bad" in p.name:
        raise RuntimeError("kernel fault at kernel.ptx:12")
    mp = p / "measured.json"
    m = json.loads(mp.read_text()) if mp.exists() else {}
    hw = m.get("cycles", 1000.0)
    return SimpleNamespace(metrics={
        "cycles": hw * 1.1, "warp_instructions": m.get("sass_warp_instructions", 10.0) * 0.9,
        "dram_read_bytes": m.get("dram_read_bytes", 0.0), "dram_write_bytes": m.get("dram_write_bytes", 0.0),
        "l2_bytes": 2.0 * m.get("l2_bytes", 1.0), "achieved_occupancy_pct": 10.0,
        "stall_ratios_per_issue": {"long_scoreboard": 0.5, "wait": 0.2, "barrier": 0.1, "selected": 1.0},
        "wall_seconds": 0.01})


def fake_roofline(d, arch, overrides, clock_mhz):
    return {"bound_cycles": 500.0, "bound_by": "memory" if "rms" in Path(d).name else "compute"}


def _mk(root: Path, rel: str, src="rmsnorm_rows4096_cols4096", measured=True, cycles=None):
    d = root / rel
    shutil.copytree(BUNDLED / src, d)
    if not measured:
        (d / "measured.json").unlink()
    elif cycles is not None:
        m = json.loads((d / "measured.json").read_text())
        m["cycles"] = cycles
        (d / "measured.json").write_text(json.dumps(m))
    lj = json.loads((d / "launch.json").read_text())
    lj["name"] = Path(rel).name
    (d / "launch.json").write_text(json.dumps(lj))
    return d


def test_discovery_nested_and_filter(tmp_path):
    _mk(tmp_path, "a/rms1")
    _mk(tmp_path, "b/c/rms2", measured=False)
    _mk(tmp_path, "zz")
    (tmp_path / "empty").mkdir()
    found = V.discover_records(tmp_path)
    assert [d.relative_to(tmp_path).as_posix() for d in found] == ["a/rms1", "b/c/rms2", "zz"]
    assert [d.name for d in V.discover_records(tmp_path, "rms*")] == ["rms1", "rms2"]
    assert [d.name for d in V.discover_records(tmp_path, "b/*/*")] == ["rms2"]
    assert V.discover_records(tmp_path / "zz") == [tmp_path / "zz"]  # a record folder itself
    assert len(V.discover_records(V.default_records_dir())) >= 10


def test_cycle_error_stats_known_numbers():
    st = V.cycle_error_stats([(110, 100), (90, 100), (250, 200), (100, 100)])
    # errors +10, -10, +25, 0
    assert st["n"] == 4
    assert st["mape_pct"] == pytest.approx(11.25)
    assert st["bias_pct"] == pytest.approx(6.25)
    assert st["max_abs_error_pct"] == pytest.approx(25.0)
    assert st["within_10_pct"] == pytest.approx(0.75)
    assert st["within_20_pct"] == pytest.approx(0.75)
    x, y = [110, 90, 250, 100], [100, 100, 200, 100]
    mx, my = sum(x) / 4, sum(y) / 4
    r = sum((a - mx) * (b - my) for a, b in zip(x, y)) / math.sqrt(
        sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y))
    assert st["pearson_r"] == pytest.approx(r)
    assert -1 <= st["pearson_r_log"] <= 1
    perfect = V.cycle_error_stats([(10, 10), (1000, 1000), (1e5, 1e5)])
    assert perfect["pearson_r"] == pytest.approx(1.0) and perfect["pearson_r_log"] == pytest.approx(1.0)
    assert perfect["mape_pct"] == 0
    assert V.cycle_error_stats([])["mape_pct"] is None
    assert V.cycle_error_stats([(5, 10)])["pearson_r"] is None


def test_rows_missing_measured_and_failure(tmp_path):
    _mk(tmp_path, "rms_ok", cycles=1000.0)
    _mk(tmp_path, "rms_nomeas", measured=False)
    _mk(tmp_path, "rms_bad", cycles=2000.0)
    rows = V.validate_records(V.discover_records(tmp_path), simulate_fn=fake_sim, roofline_fn=fake_roofline,
                              root=tmp_path)
    by = {r["name"]: r for r in rows}
    ok = by["rms_ok"]
    assert ok["status"] == "ok" and ok["error_pct"] == pytest.approx(10.0)
    assert ok["sass_ratio"] == pytest.approx(0.9) and ok["dram_ratio"] == pytest.approx(1.0)
    assert ok["l2_ratio"] == pytest.approx(2.0)
    assert ok["sim_top_stalls"].startswith("long_scoreboard 0.50 (hw ")
    assert "selected" not in ok["sim_top_stalls"].split(" (")[0]
    assert ok["hw_top_stalls"] and ok["bound_by"] == "memory" and ok["hw_over_bound"] == pytest.approx(2.0)
    nm = by["rms_nomeas"]
    assert nm["status"] == "ok" and nm["hw_cycles"] is None and nm["error_pct"] is None and nm["sass_ratio"] is None
    bad = by["rms_bad"]
    assert bad["status"] == "error" and "kernel.ptx:12" in bad["error"] and bad["sim_cycles"] is None
    assert bad["hw_cycles"] == 2000.0
    s = V.summarize(rows, arch="h200", mode="timing")
    assert s["n_records"] == 3 and s["n_ok"] == 2 and s["n_failed"] == 1 and s["cycles"]["n"] == 1
    assert s["failed"][0]["name"] == "rms_bad"
    assert s["dram_memory_bound"]["checks"][0]["name"] == "rms_bad"  # failed memory-bound: unknown
    assert s["dram_memory_bound"]["fraction_within"] == 1.0


def test_fa_speedup_pairing():
    rows = [
        {"name": "attn80_X1", "status": "ok", "hw_cycles": 150.0, "sim_cycles": 160.0},
        {"name": "attn_X1", "status": "ok", "hw_cycles": 100.0, "sim_cycles": 100.0},
        {"name": "attn80_lonely", "status": "ok", "hw_cycles": 1.0, "sim_cycles": 1.0},
        {"name": "attn80_X2", "status": "error", "hw_cycles": 300.0, "sim_cycles": None},
        {"name": "attn_X2", "status": "ok", "hw_cycles": 100.0, "sim_cycles": 100.0},
    ]
    pairs = V.pair_speedups(rows)
    assert [(p["old"], p["new"]) for p in pairs] == [("attn80_X1", "attn_X1"), ("attn80_X2", "attn_X2")]
    p1, p2 = pairs
    assert p1["hw_speedup"] == pytest.approx(1.5) and p1["sim_speedup"] == pytest.approx(1.6)
    assert p1["error_pct"] == pytest.approx((1.6 - 1.5) / 1.5 * 100)
    assert p2["hw_speedup"] == pytest.approx(3.0) and p2["sim_speedup"] is None and p2["error_pct"] is None


def test_outputs_written(tmp_path):
    recs = tmp_path / "recs"
    _mk(recs, "rms_a", cycles=1000.0)
    _mk(recs, "rms_b", cycles=50000.0)
    _mk(recs, "rms_bad")
    rows = V.validate_records(V.discover_records(recs), simulate_fn=fake_sim, roofline_fn=fake_roofline, root=recs)
    s = V.summarize(rows, arch="h200", mode="timing")
    paths = V.write_outputs(rows, s, tmp_path / "out")
    with open(paths["csv"]) as f:
        got = list(csv.DictReader(f))
    assert [r["name"] for r in got] == ["rms_a", "rms_b", "rms_bad"]
    assert tuple(got[0].keys()) == V.ROW_COLUMNS
    assert float(got[0]["error_pct"]) == pytest.approx(10.0) and got[2]["status"] == "error"
    js = json.loads(paths["summary"].read_text())
    assert js["cycles"]["mape_pct"] == pytest.approx(10.0) and len(js["rows"]) == 3
    png = paths["scatter"].read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000


def test_jobs_keeps_order(tmp_path):
    for i in range(4):
        _mk(tmp_path, f"rms_{i}", cycles=1000.0 * (i + 1))
    dirs = V.discover_records(tmp_path)
    one = V.validate_records(dirs, simulate_fn=fake_sim, roofline_fn=fake_roofline, jobs=1)
    two = V.validate_records(dirs, simulate_fn=fake_sim, roofline_fn=fake_roofline, jobs=2)
    strip = lambda rows: [{k: v for k, v in r.items() if k != "wall_seconds"} for r in rows]  # noqa: E731
    assert strip(one) == strip(two)


def test_default_roofline_on_bundled_record():
    """The real analysis.roofline path (no simulation): rmsnorm is memory bound."""
    row = V.validate_one(BUNDLED / "rmsnorm_rows4096_cols4096", simulate_fn=fake_sim)
    assert row["bound_by"] == "memory" and row["bound_cycles"] > 0
    assert row["hw_over_bound"] > 0.5


def test_compare_runs_checks_the_sampled_error_estimate(tmp_path):
    # sampled mode reports a 1-sigma estimate of its own cycle error; --against counts how often the difference
    # to detailed mode stays within 1 and 2 estimates
    base = tmp_path / "validation.csv"
    with open(base, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["name", "sim_cycles"])
        w.writerows([["a", 1000], ["b", 1000], ["c", 1000], ["d", 1000]])
    rows = [{"name": "a", "sim_cycles": 1010, "sim_cycles_error_estimate_pct": 2.0},    # 1 % <= 1 estimate
            {"name": "b", "sim_cycles": 975, "sim_cycles_error_estimate_pct": 2.0},     # 2.5 % <= 2 estimates
            {"name": "c", "sim_cycles": 1100, "sim_cycles_error_estimate_pct": 2.0},    # 10 %: outside
            {"name": "d", "sim_cycles": 1000, "sim_cycles_error_estimate_pct": None}]   # fell back to detailed
    cmp = V.compare_runs(rows, base)
    assert cmp["with_estimate"] == 3 and cmp["within_1_estimate"] == 1 and cmp["within_2_estimate"] == 2
    assert cmp["launches"][0]["estimate_pct"] == 2.0 and "estimate_pct" not in cmp["launches"][3]
    assert cmp["within_tol"] == 3 and cmp["max_abs_diff_pct"] == pytest.approx(10.0)


def test_sampled_rows_carry_the_error_estimate():
    def sampled(path, arch="h200", **kw):
        r = fake_sim(path, arch, **kw)
        r.metrics["sampling"] = {"mode": "sampled", "cycles_error_pct": 1.25}
        return r

    row = V.validate_one(BUNDLED / "gemm_tma_M2048_N2048_K2048", simulate_fn=sampled, with_roofline=False)
    assert row["sim_cycles_error_estimate_pct"] == 1.25
    plain = V.validate_one(BUNDLED / "gemm_tma_M2048_N2048_K2048", simulate_fn=fake_sim, with_roofline=False)
    assert plain["sim_cycles_error_estimate_pct"] is None

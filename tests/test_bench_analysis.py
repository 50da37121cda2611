"""``warpgraph.analysis.bench`` and ``warpgraph bench`` with fake simulate functions (no real simulation)."""
import json
import os
import sys
import textwrap
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from warpgraph.analysis import bench as B
from warpgraph.cli.main import app
from warpgraph.core.errors import UserError


def fake_sim(rec, arch="h200", *, mode="timing", overrides=None, **kw):
    if mode == "sampled":
        raise UserError("mode 'sampled' is not implemented yet", hint="timing or functional")
    return SimpleNamespace(metrics={"cycles": 1000.0, "warp_instructions": 5000.0, "wall_seconds": 0.5})


def fake_sim_sampled(rec, arch="h200", *, mode="timing", overrides=None, **kw):
    c = 1100.0 if mode == "sampled" else 1000.0
    return SimpleNamespace(metrics={"cycles": c, "warp_instructions": 5000.0, "wall_seconds": 0.25 if mode == "sampled" else 0.5})


def test_resolve_cases():
    d, small = B.resolve_case("rmsnorm_rows4096_cols4096")
    assert (d / "launch.json").is_file() and not small
    d, small = B.resolve_case(B.QUICK_CASE)
    assert small and d.name == "gemm_ptr_M1024_N1024_K1024"
    with pytest.raises(UserError):
        B.resolve_case("no_such_case")


def test_bench_in_process_sampled_rejected():
    res = B.run_bench(["rmsnorm_rows4096_cols4096"], simulate_fn=fake_sim)
    (e,) = res
    det = e["detailed"]
    assert det["status"] == "ok" and det["cycles"] == 1000.0
    assert det["simulated_cycles_per_second"] == pytest.approx(2000.0)
    assert det["warp_instructions_per_second"] == pytest.approx(10000.0)
    assert det["peak_rss_bytes"] > 10 * 2**20
    assert e["sampled"]["status"] == "skipped" and "sampled" in e["sampled"]["error"]
    assert e["sampled_cycle_diff_pct"] is None


def test_bench_sampled_diff():
    (e,) = B.run_bench(["rmsnorm_rows4096_cols4096"], simulate_fn=fake_sim_sampled)
    assert e["sampled_cycle_diff_pct"] == pytest.approx(10.0)
    assert e["sampled_speedup"] == pytest.approx(2.0)
    for mode in ("detailed", "sampled"):                 # process CPU time next to wall time (shared machines)
        r = e[mode]
        assert r["cpu_seconds"] >= 0.0
        assert r["simulated_cycles_per_cpu_second"] == (pytest.approx(r["cycles"] / r["cpu_seconds"])
                                                        if r["cpu_seconds"] > 0 else 0.0)


def test_bench_subprocess_worker(tmp_path, monkeypatch):
    """Each case runs in a fresh subprocess that imports the simulate target by name."""
    (tmp_path / "fakesim_mod.py").write_text(textwrap.dedent('''
        from types import SimpleNamespace
        def simulate(rec, arch="h200", *, mode="timing", overrides=None, **kw):
            if mode == "sampled":
                raise RuntimeError("boom")
            big = bytearray(64 * 2**20)  # raise this process's peak RSS
            big[::4096] = b"x" * len(big[::4096])
            n = getattr(rec, "name", str(rec))
            return SimpleNamespace(metrics={"cycles": 42.0, "warp_instructions": 7.0, "wall_seconds": 0.1,
                                            "note": n})
    '''))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    (e,) = B.run_bench(["rmsnorm_rows4096_cols4096"], simulate_target="fakesim_mod:simulate", timeout_s=120)
    d = e["detailed"]
    assert d["status"] == "ok" and d["cycles"] == 42.0 and d["peak_rss_scope"] == "subprocess"
    assert d["peak_rss_bytes"] >= 64 * 2**20
    assert e["sampled"]["status"] == "error" and "boom" in e["sampled"]["error"]


def test_machine_info():
    info = B.machine_info()
    for k in ("cpu_model", "cores", "python", "numpy", "date", "git_commit"):
        assert k in info
    assert info["python"] == ".".join(map(str, sys.version_info[:3]))


def test_bench_cli_json(tmp_path, monkeypatch):
    from warpgraph.cli import bench_cmd

    orig = bench_cmd.run_bench_cli
    monkeypatch.setattr(bench_cmd, "run_bench_cli",
                        lambda *a, **k: orig(*a, **{**k, "simulate_fn": fake_sim}))
    out = tmp_path / "b.json"
    r = CliRunner().invoke(app, ["bench", "--cases", "rmsnorm_rows4096_cols4096", "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert "rmsnorm_rows4096_cols4096" in r.output and "skipped" in r.output
    d = json.loads(out.read_text())
    assert d["machine"]["cores"] >= 1 and d["results"][0]["detailed"]["cycles"] == 1000.0
    r = CliRunner().invoke(app, ["bench", "--cases", "nope"])
    assert r.exit_code == 2

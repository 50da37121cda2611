"""Microbenchmark launch records and H200 results: well-formed, self-consistent, with provenance (no GPU needed)."""
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REC_DIR = ROOT / "workloads" / "microbench"
RES_DIR = ROOT / "microbench" / "results"
RECORDS = sorted(p.parent for p in REC_DIR.glob("*/launch.json"))
RESULTS = sorted(f for f in RES_DIR.glob("h200_*.json") if not f.name.startswith("h200_l2_"))  # warpgraph-microbench/1
L2_RESULTS = sorted(RES_DIR.glob("h200_l2_*.json"))  # warpgraph-microbench-l2/1 (run_l2.sh), a different schema
KINDS = {"u32", "s32", "u64", "ptr", "f32", "tensormap"}


def test_records_exist():
    names = {p.name for p in RECORDS}
    assert len(RECORDS) >= 40
    for n in range(1, 25):
        assert f"tma_issue_n{n:02d}" in names
    for must in ("tma_4tx_serial", "tma_4tx_pipelined", "mbarrier_test_wait", "mbarrier_try_wait", "mma_f16_m16n8k16_c1_w1",
                 "mma_bf16_m16n8k8_c8_w4", "mma_tf32_m16n8k8_c1_w1", "mma_s8_m16n8k32_c8_w1", "wgmma_tput_ss_m64n128k16_wg1",
                 "smem_bank_32way", "hbm_stream_read_32MiB", "pchase_l1", "pchase_l2"):
        assert must in names, must


@pytest.mark.parametrize("d", RECORDS, ids=lambda d: d.name)
def test_record_well_formed(d):
    rec = json.loads((d / "launch.json").read_text())
    assert rec["format"] == "launch-record/1" and rec["name"] == d.name
    assert "check" not in rec
    ptx = (d / rec["ptx"]).read_text()
    assert ".target sm_90a" in ptx and f".entry {rec['entry']}(" in ptx
    assert ptx.count(".entry") == 1
    n_params = ptx.split(f".entry {rec['entry']}(", 1)[1].split(")", 1)[0].count(".param")
    assert n_params == len(rec["params"])
    for p in rec["params"]:
        (kind, v), = p.items()
        assert kind in KINDS
        if kind == "ptr":
            assert v is None or v in rec["buffers"]
    # an output buffer receives clock deltas (poisoned), or zeros that the kernel's atomics accumulate into (as the
    # host's cudaMemset leaves them: smem_fill's atomicMax / atomicAdd)
    assert (any(b["init"] == "poison" for b in rec["buffers"].values())
            or ("atom.global" in ptx and any(b["init"] == "zeros" for b in rec["buffers"].values())))
    assert len(rec["grid"]) == 3 and len(rec["block"]) == 3 and len(rec["cluster"]) == 3
    assert rec["shared_bytes"] <= 227 * 1024
    hw = rec["source"]["hardware"]
    assert hw["results"].startswith("microbench/results/") and "bench" in hw


@pytest.mark.parametrize("d", RECORDS[:8], ids=lambda d: d.name)
def test_record_loads_with_project_loader(d):
    rec_mod = pytest.importorskip("warpgraph.workloads.record")
    r = rec_mod.load_record(d)
    r.validate_self()


def test_results_present():
    assert RESULTS, "no results file under microbench/results"


@pytest.mark.parametrize("f", RESULTS, ids=lambda f: f.name)
def test_results_schema_and_provenance(f):
    d = json.loads(f.read_text())
    assert d["schema"] == "warpgraph-microbench/1"
    p = d["provenance"]
    for k in ("date_utc", "gpu_name", "driver_version", "nvcc", "clock_control", "sm_clock_probe_mhz", "device", "sections"):
        assert p.get(k), k
    assert "H200" in p["gpu_name"] and p["device"]["sm_count"] == 132
    assert all(v == "ok" for v in p["sections"].values())
    benches = {r["bench"] for r in d["results"]}
    if set(p["sections"]) != {"tma", "mbarrier", "mma_sync", "wgmma", "nontensor", "memory", "bandwidth", "dsm"} and \
            not {"tma", "memory"} <= set(p["sections"]):
        # a partial run (SECTIONS=...): its own section's benches only
        assert benches - {"clock_probe"}, "no results"
        return
    for b in ("tma_issue", "tma_size", "tma_4tx", "tma_stream", "mbarrier_wait", "mma_sync", "wgmma_latency",
              "wgmma_throughput", "nontensor_under_wgmma", "pchase", "smem_bank", "hbm_read", "dsm_bandwidth"):
        assert b in benches, b
    for r in d["results"]:
        assert set(r) >= {"bench", "params", "stats", "section"}
        assert all(isinstance(v, (int, float)) for v in r["stats"].values())
    # T(N) for the issue-gap fit covers N = 1..24
    ns = {r["params"]["n"] for r in d["results"] if r["bench"] == "tma_issue" and r["params"]["level"] == "l2"}
    assert set(range(1, 25)) <= ns


@pytest.mark.parametrize("f", L2_RESULTS, ids=lambda f: f.name)
def test_l2_results_schema_and_provenance(f):
    d = json.loads(f.read_text())
    assert d["schema"] == "warpgraph-microbench-l2/1"
    p = d["provenance"]
    for k in ("date_utc", "gpu", "driver", "nvcc", "ncu_flags"):
        assert p.get(k), k
    assert "H200" in p["gpu"]
    assert d["results"] and d["model_fit"]
    for r in d["results"]:
        assert {"experiment", "kernel", "dram_read_bytes", "dram_write_bytes"} <= set(r)


def test_calibrated_params_file():
    y = RES_DIR / "h200_calibrated_params.yaml"
    assert y.is_file()
    text = y.read_text()
    for k in ("tma.issue_gap_cycles", "mbarrier.test_wait_cycles", "shared_memory.latency_cycles", "l2.near_latency_cycles",
              "l2.far_latency_cycles", "hbm.latency_cycles", "hbm.bandwidth_gb_per_s", "l1.hit_latency_cycles",
              "tensor_core.mma_sync.f16.m16n8k16.issue_gap_cycles", "tensor_core.mma_sync.f16.m16n8k16.latency_cycles",
              "tensor_core.wgmma.f16.m64n128k16.issue_interval_cycles"):
        assert f"\n  {k}:\n    value: " in text, k
    assert text.count("source:") == text.count("value:")


def test_calibrate_reproduces_yaml(tmp_path):
    import subprocess, sys
    out = tmp_path / "p.yaml"
    subprocess.run([sys.executable, str(ROOT / "microbench" / "calibrate.py"), str(RESULTS[0]), "--out", str(out)],
                   check=True, capture_output=True)
    strip = lambda t: [l for l in t.splitlines() if not l.startswith("# from:")]
    assert strip(out.read_text()) == strip((RES_DIR / "h200_calibrated_params.yaml").read_text())

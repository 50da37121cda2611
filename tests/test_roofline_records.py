"""analysis.roofline on every bundled H200 calibration record: basic physics against measured.json."""
from pathlib import Path

import pytest

import warpgraph
from warpgraph.analysis.roofline import (min_dram_bytes, peak_rates, reference_flops, roofline,
                                         roofline_from_counts, tensor_instructions, with_simulated)
from warpgraph.topologies import load_arch
from warpgraph.workloads.record import load_record

RECORDS = sorted(p for p in (Path(warpgraph.__file__).parent / "workloads" / "records" / "h200").iterdir()
                 if (p / "launch.json").is_file())


@pytest.fixture(scope="module")
def spec():
    return load_arch("h200")


def test_records_found():
    assert len(RECORDS) >= 12


@pytest.mark.parametrize("path", RECORDS, ids=[p.name for p in RECORDS])
def test_record_roofline_physics(path, spec):
    rec = load_record(path)
    m = rec.measured
    # the hardware clock of that launch (clocks were not locked), so memory bounds compare in time
    rf = roofline(rec, rec.program(), spec, clock_mhz=m["sm_clock_hz"] / 1e6)
    assert rf["flops_source"].startswith("reference:")
    assert rf["bound_cycles"] == max(rf["compute_bound_cycles"], rf["memory_bound_cycles"]) > 0
    assert m["cycles"] >= 0.9 * rf["bound_cycles"], rf
    assert 0 < with_simulated(rf, m["cycles"]) <= 1.0 / 0.9
    # measured DRAM reads cover at least the compulsory input bytes (cold L2), within 10 %
    assert m["dram_read_bytes"] >= 0.9 * rf["min_dram_read_bytes"]
    name = rec.name
    if name.startswith(("rmsnorm", "swiglu")):
        assert rf["bound_by"] == "memory" and rf["tensor_path"] == "none"
    else:
        assert rf["bound_by"] == "compute" and rf["tensor_flops"] > 0
        assert rf["tensor_path"] == ("mma_sync" if "80_" in name else "wgmma")
        assert rf["arithmetic_intensity"] > rf["ridge_flop_per_byte"]


def test_gemm_numbers(spec):
    rec = load_record(next(p for p in RECORDS if p.name == "gemm_tma_M2048_N2048_K2048"))
    rf = roofline(rec, spec=spec)
    assert rf["flops"] == 2 * 2048**3
    assert rf["min_dram_bytes"] == 3 * 2048 * 2048 * 2 and rf["outputs"] == ["c"] and rf["inputs"] == ["a", "b"]
    n = spec.sm.count
    assert rf["compute_bound_cycles"] == pytest.approx(2 * 2048**3 / (4096 * n))
    assert rf["memory_bound_cycles"] == pytest.approx(rf["min_dram_bytes"] / spec.hbm_bytes_per_cycle)
    assert rf["clock_mhz"] == spec.clocks.sm_mhz
    assert {d["dtype_class"] for d in tensor_instructions(rec.program())} == {"fp16"}


def test_mma_sync_rate_capped_by_issue_gap(spec):
    rec = load_record(next(p for p in RECORDS if p.name.startswith("gemm80")))
    pk = peak_rates(spec, tensor_instrs=tensor_instructions(rec.program()))
    gap = spec.tensor_core.mma_sync["f16.m16n8k16"].issue_gap_cycles
    assert pk["tensor_flop_per_cycle_per_sm"]["fp16"] == pytest.approx(4 * 4096 / gap)
    assert "mma.sync" in pk["sources"]["tensor.fp16"]


def test_causal_attention_counts_half(spec):
    rec = load_record(next(p for p in RECORDS if "causal1" in p.name))
    (counts, src) = reference_flops(rec)
    b, h, s, d = rec.buffers["q"].shape
    assert counts["tensor"] == b * h * (s * (s + 1) // 2) * 4 * d and src == "reference:attention"


def test_generic_counts_and_fallbacks(spec):
    rate = spec.tensor_core.dense_fp8_flop_per_cycle_per_sm      # 8189 on the H200 (wgmma_dtype microbench)
    rf = roofline_from_counts({"fp8": rate * 132 * 1000, "simt_fp32": 0}, 0, spec)
    assert rf["bound_by"] == "compute" and rf["compute_bound_cycles"] == pytest.approx(1000)
    mem = roofline_from_counts({}, spec.hbm_bytes_per_cycle * 500, spec)
    assert mem["bound_by"] == "memory" and mem["memory_bound_cycles"] == pytest.approx(500)
    # a spec without the fields degrades to documented fallbacks
    bare = roofline_from_counts({"fp16": 1e9}, 1e6, {"sm": {"count": 10}})
    assert bare["unbounded_dtypes"] == ["fp16"] and bare["sources"]["hbm"] == "fallback"
    assert bare["bound_by"] == "memory"
    with pytest.raises(ValueError):
        with_simulated(rf, 0)


def test_rtx5090_mma_sync_only_spec():
    spec = load_arch("rtx5090")
    rec = load_record(next(p for p in RECORDS if p.name.startswith("gemm80")))
    rf = roofline(rec, spec=spec)
    assert rf["bound_by"] == "compute" and rf["compute_bound_cycles"] > 0 and not rf["unbounded_dtypes"]


def test_trace_counts_match_reference():
    """Dynamic wgmma FLOPs of a (scaled) functional run equal the reference count of the GEMM."""
    from warpgraph.workloads.functional import run_functional
    from warpgraph.workloads.scale import scale_record

    rec = scale_record(load_record(next(p for p in RECORDS if p.name == "gemm_tma_M2048_N2048_K2048")), 8)
    res = run_functional(rec, rec.program(), want_trace=True, compute_values=False)
    a = roofline(rec, trace=res)
    b = roofline(rec)
    assert a["flops_source"] == "trace" and a["flops"] == b["flops"] > 0
    assert min_dram_bytes(rec)["total"] == a["min_dram_bytes"]


@pytest.mark.parametrize("name,cls", [("gemm_tma_s_M256_N256_K256", "fp16"), ("gemm_tma_s_fp8_M256_N256_K256", "fp8"),
                                      ("gemm_tma_s_tf32_M256_N256_K256", "tf32")])
def test_tcgen05_tensor_path(name, cls):
    """Blackwell records: tcgen05.mma is the tensor path, its dtype class from .kind::, and the dynamic FLOPs of
    a functional run (M, N from the runtime instruction descriptor) equal the GEMM reference's 2MNK."""
    from warpgraph.workloads.functional import run_functional

    spec = load_arch("b200")
    rec = load_record(Path(warpgraph.__file__).parent / "workloads" / "records" / "b200" / name)
    b = roofline(rec, spec=spec)
    assert b["tensor_path"] == "tcgen05" and b["flops_source"] == "reference:gemm_nt"
    assert set(b["flops_by_dtype"]) == {cls} and b["compute_bound_cycles"] > 0
    res = run_functional(rec, rec.program(), want_trace=True, compute_values=False)
    a = roofline(rec, trace=res, spec=spec)
    assert a["flops_source"] == "trace" and a["flops_by_dtype"] == b["flops_by_dtype"]
    assert a["flops"] == 2 * 256 * 256 * 256

"""Scaled-down versions of all 12 calibration records run functionally and pass references.check."""
import time
from pathlib import Path

import numpy as np
import pytest

from warpgraph.workloads.functional import run_functional
from warpgraph.workloads.ptx import Kind
from warpgraph.workloads.record import load_record
from warpgraph.workloads.references import check
from warpgraph.workloads.scale import small_variant

REC = Path(__file__).resolve().parent.parent / "workloads" / "records" / "h200"
CASES = sorted(p.name for p in REC.iterdir() if (p / "launch.json").is_file())


@pytest.mark.parametrize("case", CASES)
def test_small_variant_passes_check(case):
    rec = small_variant(load_record(REC / case))
    t0 = time.perf_counter()
    res = run_functional(rec)
    dt = time.perf_counter() - t0
    c = check(rec, res.outputs)
    assert c.ok, c.message
    assert dt < 20
    tr = res.trace
    assert tr.n_ctas == int(np.prod(rec.grid)) and tr.threads_per_cta == int(np.prod(rec.block))
    # the per-warp streams add up to the dynamic count
    total = sum(len(tr.warp_stream(g)) for g in range(tr.n_warps))
    assert total == res.dynamic_warp_instructions > 0
    ws = tr.warp_stream(tr.n_warps - 1)
    assert ws.pc.dtype == np.int32 and ws.active.dtype == np.uint8 and len(ws.a0) == len(ws.pc)
    assert tr.program.instructions[ws.pc[-1]].kind == Kind.EXIT


def test_compute_values_false_keeps_the_trace():
    rec = small_variant(load_record(REC / "gemm_tma_M2048_N2048_K2048"))
    a = run_functional(rec, compute_values=True)
    b = run_functional(rec, compute_values=False)
    assert a.dynamic_warp_instructions == b.dynamic_warp_instructions
    for g in (0, 5, a.trace.n_warps - 1):
        x, y = a.trace.warp_stream(g), b.trace.warp_stream(g)
        assert (x.pc == y.pc).all() and (x.a0 == y.a0).all() and (x.a2 == y.a2).all() and (x.active == y.active).all()
    assert a.trace.dram_first_touch_bytes == b.trace.dram_first_touch_bytes


def test_exact_tensor_path_agrees():
    rec = small_variant(load_record(REC / "gemm_tma_M2048_N2048_K2048"))
    a = run_functional(rec, want_trace=False)
    b = run_functional(rec, want_trace=False, exact_tensor=True, fast_tma=False)
    x = a.outputs["c"].astype(np.float32)
    y = b.outputs["c"].astype(np.float32)
    assert np.abs(x - y).max() <= 2e-3 * np.abs(y).max()
    assert a.trace is None and a.dynamic_warp_instructions == b.dynamic_warp_instructions


def test_gemm_tma_trace_payloads():
    rec = small_variant(load_record(REC / "gemm_tma_M2048_N2048_K2048"))     # M=N=K=256, 4 CTAs
    res = run_functional(rec)
    tr = res.trace
    prog = tr.program
    M = N = K = 256
    tma_bytes = dram = inb = 0
    wg_flops = 0
    waits = 0
    for g in range(tr.n_warps):
        ws = tr.warp_stream(g)
        kinds = np.array([prog.instructions[p].kind for p in ws.pc])
        t = kinds == Kind.TMA_LOAD
        tma_bytes += ws.a0[t].sum()
        dram += ws.a2[t].sum()
        inb += (ws.a3[t] & 0xFFFFFFFF).sum()            # a3 bits 32+: the box key (L2 fill merging)
        wg_flops += ws.a0[kinds == Kind.WGMMA].sum()
        w = kinds == Kind.MBAR_WAIT
        waits += w.sum()
        assert (ws.a3[w] == 1).all()                        # data lands at issue: first poll succeeds
        issued = t & (ws.active > 0)
        assert issued.any() == (g % tr.warps_per_cta == 0)     # only warp 0 of each CTA issues (tid < 32)
        assert ((ws.a1[issued] >> 32) == g // tr.warps_per_cta).all()    # mbarrier key names this CTA
        assert (ws.a1[t & (ws.active == 0)] == -1).all()
    ctas = 4
    assert tma_bytes == ctas * (K // 64) * 2 * 128 * 64 * 2
    assert inb == tma_bytes
    assert dram == (M * K + N * K) * 2                       # each input read from DRAM exactly once
    assert tr.dram_first_touch_bytes == dram and tr.dram_write_bytes == M * N * 2
    assert wg_flops == 2 * M * N * K                         # 4 warps x (warpgroup FLOPs / 4)
    assert waits == tr.n_warps * (K // 64)


def test_batching_does_not_change_results():
    rec = small_variant(load_record(REC / "rmsnorm_rows4096_cols4096"))
    a = run_functional(rec)
    b = run_functional(rec, max_lanes=512)                   # 2 CTAs per batch
    np.testing.assert_array_equal(a.outputs["y"], b.outputs["y"])
    assert a.dynamic_warp_instructions == b.dynamic_warp_instructions
    assert len(b.trace.batches) == 4
    for g in range(a.trace.n_warps):
        x, y = a.trace.warp_stream(g), b.trace.warp_stream(g)
        assert (x.pc == y.pc).all() and (x.a0 == y.a0).all() and (x.a1 == y.a1).all()


@pytest.mark.parametrize("case", ["attn80_B4_H16_S1024_D64_causal0", "gemm_tma_M2048_N2048_K2048",
                                  "gemm80_M2048_N2048_K2048",
                                  "attn_B4_H16_S1024_D128_causal1"])
def test_fast_paths_match_tensor_ops(case):
    """The fast ldmatrix/stmatrix/wgmma/TMA paths reproduce tensor_ops/tma_ops (reference semantics)."""
    rec = small_variant(load_record(REC / case))
    a = run_functional(rec, want_trace=False)
    b = run_functional(rec, want_trace=False, exact_tensor=True, fast_tma=False)
    out = rec.check.output
    x = a.outputs[out].astype(np.float32)
    y = b.outputs[out].astype(np.float32)
    assert np.abs(x - y).max() <= 2e-3 * np.abs(y).max()


@pytest.mark.slow
def test_full_size_gemm_tma_functional():
    rec = load_record(REC / "gemm_tma_M2048_N2048_K2048")
    t0 = time.perf_counter()
    res = run_functional(rec, compute_values=True)
    assert check(rec, res.outputs).ok
    assert time.perf_counter() - t0 < 120
    assert res.trace.nbytes() < 200e6
    assert res.trace.dram_first_touch_bytes == 2 * 2048 * 2048 * 2       # a and b read once
    assert res.trace.dram_write_bytes == 2048 * 2048 * 2


FULL_SIZE_PER_FAMILY = ["gemm_ptr_M1024_N1024_K1024", "gemm80_M2048_N2048_K2048", "attn_B4_H16_S1024_D64_causal0",
                        "attn80_B4_H16_S1024_D64_causal0", "rmsnorm_rows4096_cols4096", "swiglu_n16777216"]


@pytest.mark.slow
@pytest.mark.parametrize("name", FULL_SIZE_PER_FAMILY)
def test_full_size_record_per_family_passes_check(name):
    """One record of every calibration family at its full shared size (gemm_tma is the test above)."""
    rec = load_record(REC / name)
    res = run_functional(rec, compute_values=True, want_trace=False)
    c = check(rec, res.outputs)
    assert c.ok, c.message

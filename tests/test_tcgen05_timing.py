"""tcgen05 timing on b200.yaml: the TMEM component on the graph, its allocation and port model, and the Triton
sm_100a records completing in timing mode with the tensor core and TMEM doing the work."""
from pathlib import Path

import pytest

from warpgraph import load_arch, simulate
from warpgraph.components.tmem import TmemModel
from warpgraph.core.engine import Engine
from warpgraph.core.errors import SimulationError, UserError
from warpgraph.runner.machine import build_machine
from warpgraph.topologies import build_graph

RECORDS = Path(__file__).resolve().parents[1] / "workloads" / "records"
GEMM = RECORDS / "b200" / "gemm_tma_s_M256_N256_K256"
ATTN = RECORDS / "b200" / "attn_tma_s_BH2_S256_D64"


def test_tmem_is_a_graph_node_of_blackwell_only():
    g = build_graph(load_arch("b200"))
    tm = [n for n, d in g.nodes(data=True) if d["role"] == "tmem"]
    assert len(tm) == load_arch("b200").sm.count and "sm0.tmem" in tm
    assert g.edges["sm0.tensor", "sm0.tmem"]["relation"] == "link"
    assert not [n for n, d in build_graph(load_arch("h200")).nodes(data=True) if d["role"] == "tmem"]
    m = build_machine(load_arch("b200"), Engine())
    assert isinstance(m.units["tensor_core"].tmem, TmemModel) and m.parts["tmem"] is m.units["tensor_core"].tmem


def test_tmem_spec_columns_must_be_a_power_of_two():
    with pytest.raises(UserError, match="power of 2"):
        load_arch("b200", overrides={"tensor_core.tmem.columns": 384})


def test_tmem_alloc_waits_for_dealloc_and_ports_are_per_quadrant():
    eng = Engine()
    tm = TmemModel(load_arch("b200"), eng)
    woke = []
    assert tm.alloc(0, 0, 256) == tm.alloc_cycles
    assert tm.alloc(0, 0, 256) == tm.alloc_cycles
    assert tm.alloc(5, 0, 32, wake=woke.append) is None           # SM 0 full: waits
    assert tm.alloc(5, 1, 512) == 5 + tm.alloc_cycles              # another SM is independent
    tm.dealloc(100, 0, 256)
    eng.run()
    assert woke == [100 + tm.alloc_cycles]
    # one quadrant's port carries a quarter of the SM's bandwidth: 4 warps on 4 quadrants finish 4x sooner
    one = tm.ld(0, 2, [0, 0, 0, 0], 65536)
    tm2 = TmemModel(load_arch("b200"), Engine())
    four = tm2.ld(0, 2, [0, 1, 2, 3], 65536)
    assert one - tm.ld_lat > 3.5 * (four - tm2.ld_lat)


def test_sm100a_gemm_completes_on_b200_with_tcgen05_and_tmem():
    r = simulate(GEMM, "b200", check=True)
    assert r.check.ok
    df = r.stats
    tc = {s: v for c, s, v in zip(df["component"], df["stat"], df["value"]) if c == "tensor_core"}
    # 4 CTAs x 4 k-steps x 4 MMAs of 128x128x16; each CTA reads its 128 x 128 f32 accumulator once
    assert tc["async.count"] == 4 * 4 * 4
    assert tc["async.flops"] == 2 * 256 ** 3
    assert tc["tmem.ld.bytes"] == 4 * 128 * 128 * 4
    assert tc["tmem.allocs"] == 4
    # the tensor work bounds the run from below: 4 SMs' worth of FP16 at 8192 FLOP/cycle
    spec = load_arch("b200")
    per_sm = 2 * 256 ** 3 / 4 / spec.tensor_core.dense_fp16_flop_per_cycle_per_sm
    assert r.metrics["cycles"] > per_sm + spec.tensor_core.completion_tail_latency_cycles
    assert r.metrics["tensor_utilization_pct"] > 0


def test_tcgen05_rate_and_tail_move_the_cycles_in_the_right_direction():
    base = simulate(GEMM, "b200").metrics["cycles"]
    slow = simulate(GEMM, "b200", overrides={"tensor_core.dense_fp16_flop_per_cycle_per_sm": 2048}).metrics["cycles"]
    tail = simulate(GEMM, "b200", overrides={"tensor_core.completion_tail_latency_cycles": 1000}).metrics["cycles"]
    assert slow > base and tail > base
    # the epilogue's tcgen05.ld waits for the last MMA's commit: at least the extra tail once
    assert tail - base >= 1000 - load_arch("b200").tensor_core.completion_tail_latency_cycles


def test_sm100a_attention_completes_on_b200():
    r = simulate(ATTN, "b200", check=True)
    assert r.check.ok and r.metrics["cycles"] > 0


@pytest.mark.filterwarnings("ignore:.*registers per thread estimated:UserWarning")   # sm_100a PTX: no sm_90a ptxas
def test_tcgen05_on_a_hopper_architecture_is_a_clear_error():
    with pytest.raises(SimulationError, match="tcgen05"):
        simulate(GEMM, "h200")


def test_tmem_allocation_waits_across_ctas_of_one_sm():
    """Two CTAs resident on one SM each take all 512 TMEM columns: the second tcgen05.alloc waits (parked) until
    the first CTA's dealloc, then both finish with correct outputs."""
    import numpy as np

    from test_tcgen05_functional import _case
    from warpgraph.workloads.record import record_from_dict

    rec, av, bv = _case("f16")

    def two_ctas(cols):
        ptx = rec.ptx_text().replace("[%r6], 64;", f"[%r6], {cols};").replace("%r7, 64;", f"%r7, {cols};")
        d = rec.to_json_dict()
        d["grid"] = [2, 1, 1]
        return record_from_dict(d, ptx_text=ptx)

    # a long completion tail keeps each CTA's columns allocated well past the other CTA's start
    ov = {"sm.count": 1, "tensor_core.completion_tail_latency_cycles": 5000}
    fit = simulate(two_ctas(256), "b200", overrides=ov)            # 2 x 256 columns fit: no waiting
    full = simulate(two_ctas(512), "b200", overrides=ov, want_outputs=True)

    def tstats(r):
        df = r.stats
        return {s: v for c, s, v in zip(df["component"], df["stat"], df["value"]) if c == "tensor_core"}
    tf, tc = tstats(fit), tstats(full)
    assert full.metrics["ctas_per_sm"] >= 2
    assert tf["tmem.alloc_wait_cycles"] == 0 and tf["tmem.peak_columns"] == 512
    assert tc["tmem.allocs"] == 2 and tc["tmem.alloc_wait_cycles"] > 0 and tc["tmem.peak_columns"] == 512
    assert np.allclose(full.outputs["out"].view(np.float32), 2 * (av @ bv.T), rtol=1e-5, atol=1e-5)
    assert full.metrics["cycles"] > fit.metrics["cycles"]        # the serialised allocation costs time


def test_commits_of_a_warp_bundle_all_arrive():
    """Lane 0 of each of the 4 warps commits to one mbarrier of count 4: the bundled warps' arrivals add up (the
    timing pass completes the phase; with one arrival counted it would wait forever)."""
    import numpy as np

    from test_tcgen05_functional import _case
    from warpgraph.workloads.record import record_from_dict

    rec, av, bv = _case("f16")
    ptx = rec.ptx_text()
    for old, new in (("mbarrier.init.shared::cta.b64 [%r9], 1;", "mbarrier.init.shared::cta.b64 [%r9], 4;"),
                     ("@%p3 tcgen05.commit", "and.b32 %r30, %r1, 31;\n setp.eq.u32 %p7, %r30, 0;\n"
                                             " @%p7 tcgen05.commit")):
        assert old in ptx
        ptx = ptx.replace(old, new)
    r = simulate(record_from_dict(rec.to_json_dict(), ptx_text=ptx), "b200", want_outputs=True)
    assert np.allclose(r.outputs["out"].view(np.float32), 2 * (av @ bv.T), rtol=1e-5, atol=1e-5)
    assert r.metrics["cycles"] > load_arch("b200").tensor_core.completion_tail_latency_cycles

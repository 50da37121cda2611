"""Graph what-ifs written in YAML alone (``extends: h200`` plus one section), each moving the cycles of a small
bundled record in the physically expected direction. The TMA admission-policy what-if is the template plugin's
test (tests/test_plugin_tma_policy.py)."""
from pathlib import Path

import pytest

from warpgraph.runner.simulate import simulate

ROOT = Path(__file__).resolve().parent.parent
MB = ROOT / "workloads" / "microbench"
# (gemm_ptr_M1024 no longer binds on the L2 slices once its warps issue in ptxas's order: 19,434 -> 19,371 cycles
# with half the slices; M2048 +18 %)
GEMM = ROOT / "workloads" / "records" / "h200" / "gemm_ptr_M2048_N2048_K2048"


def _arch(tmp_path, name, body):
    p = tmp_path / f"{name}.yaml"
    p.write_text(f"name: {name}\nextends: h200\n{body}\n")
    return p


def _stat(res, comp, stat):
    df = res.stats
    return float(df[(df.component == comp) & (df.stat == stat)].value.iloc[0])


@pytest.fixture(scope="module")
def gemm_base():
    return simulate(GEMM, "h200")


def test_fewer_hbm_channels_slow_a_dram_stream(tmp_path):
    """Half the HBM channels (half the bandwidth) slow the 32 MiB DRAM read stream; each channel carries more."""
    rec = MB / "hbm_stream_read_32MiB"
    base = simulate(rec, "h200")
    half = simulate(rec, _arch(tmp_path, "hbm40", "hbm: {channels_enabled: 40}"))
    assert half.metrics["cycles"] > 1.15 * base.metrics["cycles"]
    assert half.metrics["dram_read_bytes"] == base.metrics["dram_read_bytes"]
    # the same DRAM bytes per partition, each partition's channels busy longer (no per-channel counts exist)
    assert _stat(half, "hbm.p0", "read_bytes") == pytest.approx(_stat(base, "hbm.p0", "read_bytes"), rel=0.02)
    assert _stat(half, "hbm.p0", "busy_cycles") > 1.5 * _stat(base, "hbm.p0", "busy_cycles")
    assert _stat(half, "hbm.p0", "channels") + _stat(half, "hbm.p1", "channels") == 40


def test_half_the_l2_slices_slow_a_gemm(tmp_path, gemm_base):
    """Half the L2 slices (half the slice bandwidth): the GEMM's L2 traffic queues longer; each partition's slice
    server is busy twice as long for the same bytes."""
    half = simulate(GEMM, _arch(tmp_path, "l2half", "l2: {slices: 94}"))
    assert half.metrics["cycles"] > gemm_base.metrics["cycles"]
    # the same traffic (up to the reads that share an outstanding lookup, which depends on timing)
    assert half.metrics["l2_bytes"] == pytest.approx(gemm_base.metrics["l2_bytes"], rel=0.05)  # 3.2 % on 2026-12-03
    r = _stat(half, "l2.p0", "busy_cycles") / _stat(gemm_base, "l2.p0", "busy_cycles")
    assert 1.8 < r < 2.2
    assert _stat(half, "l2.p0", "slices") == 47


def test_lrr_is_slower_than_gto_on_a_latency_bound_scatter(tmp_path):
    """Loose round-robin keeps all warps in lock step, so their misses go out together and nothing is left to
    overlap them; greedy-then-oldest staggers the warps (Rogers et al., MICRO 2012: GTO beats LRR)."""
    rec = MB / "l1_scatter_miss_s6000_w8"
    mhz = {"clocks.sm_mhz": 1980.0}   # the microbenchmark's clock (microbench/results/h200_l1_2026-12-02.json)
    gto = simulate(rec, "h200", overrides=mhz)
    lrr = simulate(rec, _arch(tmp_path, "lrr", "subpartition: {scheduler: {policy: lrr}}"), overrides=mhz)
    assert lrr.metrics["cycles"] > gto.metrics["cycles"]
    assert lrr.metrics["warp_instructions"] == gto.metrics["warp_instructions"]


def test_one_gx_plane_disabled_halves_dsm_bandwidth(tmp_path):
    """One GX plane disabled in YAML: the graph's plane node is disabled and the DSM fabric built from the graph
    moves SM-to-SM traffic at half the rate. (No bundled record's PTX reaches the DSM model yet: the SM core does
    not route ld/st.shared::cluster through it, so this what-if is checked on the fabric the machine builds.)"""
    from warpgraph.core.engine import ClockDomain, Engine
    from warpgraph.runner.machine import build_machine
    from warpgraph.topologies import load_arch

    def stream(spec):
        m = build_machine(spec, Engine(ClockDomain("sm", spec.clocks.sm_mhz)))
        dsm = m.parts["dsm"]
        end = 0
        for i in range(64):
            end = dsm.transfer(i, 0, 1, 4096)
        return end, m

    both, mb = stream(load_arch("h200"))
    one, m1 = stream(load_arch(_arch(tmp_path, "gx1", "fabric: {gx_planes_enabled: 1}")))
    assert [p.enabled for p in m1.parts["dsm"].planes] == [True, False]
    assert m1.graph.nodes["gx1"]["enabled"] is False
    assert one > 1.8 * both - 400

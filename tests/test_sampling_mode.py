"""Sampled mode (runner/sampling.py): stratified CTA sample on a mini-GPU, dynamic scheduling, fallback."""
import math
from pathlib import Path

import pytest

from warpgraph import simulate
from warpgraph.components.memory import FluidServer
from warpgraph.core.errors import UserError
from warpgraph.runner.sampling import Sample, SubsetScheduler, _SharedServer, make_sample
from warpgraph.workloads.record import load_record
from warpgraph.workloads.scale import scale_record

ROOT = Path(__file__).resolve().parent.parent / "workloads" / "records" / "h200"


@pytest.fixture(scope="module")
def rec():
    return scale_record(load_record(ROOT / "gemm_tma_M2048_N2048_K2048"), M=512, N=512, K=256)


def test_sample_choice_is_deterministic_and_spread():
    a = Sample(16, seed=3).choose(132)
    assert a == Sample(16, seed=3).choose(132) and len(a) == 16
    assert Sample(16, 0).choose(132)[0] == 0
    assert min(a) < 132 // 16 and max(a) > 132 - 2 * (132 // 16)
    assert Sample([5, 1, 5]).choose(132) == [1, 5]
    with pytest.raises(UserError):
        Sample([200]).choose(132)
    assert make_sample({"sms": 8, "seed": 2}).k == 8


@pytest.mark.parametrize("n_ctas,cps", [(256, 1), (4096, 8), (512, 2), (16384, 16), (140, 1), (1000, 3)])
def test_sample_size_keeps_the_wave_structure(n_ctas, cps):
    n = Sample.sample_size(n_ctas, 132, 16, cps)
    assert math.ceil(n / (16 * cps)) == math.ceil(n_ctas / (132 * cps))       # same number of waves
    assert abs(n / n_ctas - 16 / 132) < 0.02 + 16 * cps / n_ctas                 # about the SM fraction


def test_gpc_sample_always_holds_gpc0():
    # runner/sampling.py: GPC 0 runs the first CTAs of every row (the grid's DRAM first touches in a one-wave
    # launch); without it gemm_tma_M2048 ran 18 % short of detailed mode. Seeds only draw the other GPCs.
    gpc_of = [g for g, n in enumerate([16] * 6 + [18] * 2) for _ in range(n)]
    picks = []
    for seed in range(6):
        sms = Sample(33, seed).choose_gpcs(gpc_of)
        gpcs = sorted({gpc_of[s] for s in sms})
        assert gpcs[0] == 0 and len(gpcs) == 2 and sms == sorted(sms)
        assert sms == Sample(33, seed).choose_gpcs(gpc_of)               # deterministic per seed
        picks.append(gpcs[1])
    assert picks[0] == 4 and len(set(picks)) > 2                           # seed 0: evenly spaced; others vary


def test_stratified_cta_sample():
    s = Sample(16, seed=0).plan(4096, 132, 8)
    n = len(s.ctas)
    assert s.fallback is None and n == Sample.sample_size(4096, 132, 16, 8)
    assert s.ctas == sorted(set(s.ctas))
    for i, c in enumerate(s.ctas):                          # exactly one CTA per stratum of the launch order
        assert (i * 4096) // n <= c < ((i + 1) * 4096) // n
    assert s.ctas == Sample(16, seed=0).plan(4096, 132, 8).ctas          # deterministic per seed
    assert s.ctas != Sample(16, seed=1).plan(4096, 132, 8).ctas
    # a periodic grid (8 query blocks per head) is covered evenly, not aliased with the SM stride
    t = Sample(16, seed=0).plan(512, 132, 1)
    kinds = [c % 8 for c in t.ctas]
    assert len(set(kinds)) == 8 and max(kinds.count(x) for x in range(8)) <= 3 * len(kinds) / 8


def test_fallback_for_small_grids():
    assert Sample(16).plan(20, 132, 1).fallback                      # fewer CTAs than 2 per sampled SM
    assert Sample(132).plan(1000, 132, 1).fallback                   # the whole GPU
    assert Sample(100).plan(300, 132, 1).fallback                    # most of the grid
    assert "less than one" in Sample(16).plan(96, 132, 1).fallback   # gemm_ptr_M512_N3000: 96 CTAs on 132 SMs
    assert Sample(16).plan(256, 132, 1).fallback is None             # two waves: 31 sampled
    assert Sample(16).plan(256, 132, 2).fallback is None             # one wave, about 2 per SM: 31 sampled
    assert Sample(8).plan(16, 132, 1).fallback                       # a one-CTA sample of a 16-CTA wave


def test_subset_scheduler_is_dynamic():
    sch = SubsetScheduler([3, 9, 17, 30, 41], [0, 66], 2)
    assert sch.initial() == [(3, 0), (9, 66), (17, 0), (30, 66)]
    assert sch.on_retire(66) == 41                                   # the next CTA goes to the SM that freed up
    assert sch.on_retire(0) is None
    assert sch.count == {0: 2, 66: 3}


def test_shared_server_matches_a_scaled_server_in_throughput():
    full, scaled = FluidServer(100.0), FluidServer(10.0)
    sh = _SharedServer.wrap(FluidServer(100.0), 0.1)
    ends = []
    for t in range(0, 2000, 7):
        scaled.reserve(t, 64)
        ends.append((sh.reserve(t, 64), t))
    assert sh.free == pytest.approx(scaled.free) and sh.busy == pytest.approx(scaled.busy)
    # an idle server serves the request itself at the full rate, after half of its peers' work
    s2 = _SharedServer.wrap(FluidServer(100.0), 0.1)
    assert s2.reserve(0, 100) == pytest.approx(0.5 * 9 + 1)
    del full, ends


def test_sampled_vs_detailed():
    # 256 CTAs in two waves (31 in the sample); ld.global operands, short K so that detailed mode stays quick
    rec = scale_record(load_record(ROOT / "gemm_ptr_M2048_N2048_K2048"), M=2048, N=2048, K=128)
    det = simulate(rec, "h200")
    sub = {"sms": 16, "functional": "sample"}      # the option that skips the unsampled CTAs
    smp = simulate(rec, "h200", mode="sampled", sample=sub)
    again = simulate(rec, "h200", mode="sampled", sample=sub)
    s = smp.metrics["sampling"]
    assert s["mode"] == "sampled" and len(s["sms"]) == 16 and s["fraction"] == pytest.approx(16 / 132, abs=1e-3)
    assert smp.metrics["cycles"] == again.metrics["cycles"]                       # deterministic for a seed
    assert smp.metrics["sampling"] == again.metrics["sampling"]
    assert smp.metrics["cycles"] == pytest.approx(det.metrics["cycles"], rel=0.10)
    assert smp.metrics["warp_instructions"] == pytest.approx(det.metrics["warp_instructions"], rel=0.05)
    # only the sampled CTAs (and the first and last, which the timing pass probes) ran functionally; their DRAM
    # first touches, scaled with the calibration block's ratio, estimate the grid's (measured 2026-12-03: 1.69 MB
    # vs 1.05 MB detailed; the sample's own first touches scaled up would be 4.98 MB)
    assert s["functional"] == "sample" and s["functional_ctas"] <= s["ctas_simulated"] + 2
    assert 0 < s["first_touch_ratio"] < 1 and s["calibration_ctas"] == 132
    assert det.metrics["dram_read_bytes"] <= smp.metrics["dram_read_bytes"] < 2 * det.metrics["dram_read_bytes"]
    assert det.metrics["sampling"]["mode"] == "detailed"
    assert s["cycles_error_pct"] >= 0 and s["ctas_simulated"] < s["ctas_total"]
    assert sum(s["sm_ctas"]) == s["ctas_simulated"]
    # every CTA executed (the default, sample option functional="all"): the DRAM reads are the whole grid's
    full = simulate(rec, "h200", mode="sampled", sample=16)
    assert full.metrics["dram_read_bytes"] == det.metrics["dram_read_bytes"] > 0
    assert full.metrics["sampling"]["functional_ctas"] == 256


def test_small_grid_falls_back_to_detailed(rec):
    small = scale_record(rec, M=128, N=256, K=64)
    r = simulate(small, "h200", mode="sampled")
    s = r.metrics["sampling"]
    assert s["mode"] == "detailed" and s["requested"] == "sampled" and "grid" in s["fallback"]
    assert r.metrics["cycles"] == simulate(small, "h200").metrics["cycles"]


def _merged_fraction(r) -> float:
    s = r.stats
    g = lambda n: float(s[(s.component == "memory") & (s.stat == n)].value.iloc[0])  # noqa: E731
    return g("l2_merged_bytes") / (g("l2_merged_bytes") + g("l2_read_bytes"))


def test_gpc_sample_keeps_lookup_sharing():
    # runner/sampling.py: with l2.coalesce_scope gpc (h200), the sample is whole GPCs running the CTAs they run on
    # the full GPU, so reads of a GPC share L2 lookups as in detailed mode. Measured 2026-12-03 (K=128): detailed
    # 0.61 of the read bytes shared, one-GPC sample 0.55 with ptxas's 126 registers (0.59 with the PTX estimate
    # that scaled records used before the record-alone fix); a sample without sharing would show about 0.02.
    # Since only the sampled CTAs run functionally (their own first touches: more of their reads are DRAM fills,
    # which the GPC's other reads share less) the sample shares 0.53.
    rec = scale_record(load_record(ROOT / "gemm_ptr_M2048_N2048_K2048"), M=2048, N=2048, K=128)
    det = simulate(rec, "h200")
    smp = simulate(rec, "h200", mode="sampled", sample=16)
    s = smp.metrics["sampling"]
    assert s["sms"] == list(range(16))                        # fabric.sms_per_gpc: GPC 0 is SMs 0-15
    assert s["ctas_simulated"] == sum(1 for c in range(256) if c % 132 < 16)
    assert abs(_merged_fraction(smp) - _merged_fraction(det)) < 0.1


def test_ghost_fills_restore_cross_sm_merging():
    # runner/ghost_fills.py: a sample of SMs spread over the GPCs (an explicit list) sees few of the reads that
    # share its lookups on the full GPU unless the unsampled CTAs' lookups are replayed. Measured 2026-12-03
    # (K=128, 17 SMs): detailed 0.61 of the read bytes shared, ghosts 0.44, no ghosts 0.02.
    rec = scale_record(load_record(ROOT / "gemm_ptr_M2048_N2048_K2048"), M=2048, N=2048, K=128)
    ids = list(range(0, 132, 8))
    det = simulate(rec, "h200")
    # ghosts need their own traces: every CTA executed (sample option functional="all")
    on = simulate(rec, "h200", mode="sampled", sample={"sms": ids, "functional": "all"})
    off = simulate(rec, "h200", mode="sampled", sample={"sms": ids, "ghost_fills": False, "functional": "all"})
    assert on.metrics["sampling"]["ghost_fills"] > 0 and "ghost_fills" not in off.metrics["sampling"]
    f_det, f_on, f_off = (_merged_fraction(r) for r in (det, on, off))
    assert f_on > 0.6 * f_det, (f_det, f_on)
    assert f_off < 0.1 * f_det, (f_det, f_off)


def test_ghost_fills_option(rec):
    with pytest.raises(UserError, match="ghost_fills"):
        make_sample({"sms": 16, "ghost_fills": "sometimes"})
    with pytest.raises(UserError, match="unknown sample option"):
        make_sample({"sms": 16, "ghosts": True})
    # TMA box fills on request ("all"); the default replays cp.async fills only (a TMA kernel has none)
    big = scale_record(rec, M=2048, N=2048, K=128)
    assert simulate(big, "h200", mode="sampled", sample=16).metrics["sampling"].get("ghost_fills", 0) == 0
    r = simulate(big, "h200", mode="sampled", sample={"sms": 16, "ghost_fills": "all", "functional": "all"})
    assert r.metrics["sampling"]["ghost_fills"] > 0


@pytest.mark.parametrize("make", [lambda: FluidServer(4.0), lambda: _SharedServer.wrap(FluidServer(4.0), 0.25)])
def test_peek_is_reserve_without_the_reservation(make):
    # ghost fills estimate their completion from the backlogs without reserving (MemorySystem.fill_estimate)
    a, b = make(), make()
    for t, amt in ((0, 64), (3, 128), (40, 32)):
        p = a.peek(t, amt)
        assert p == b.reserve(t, amt)
        a.reserve(t, amt)
        assert a.free == b.free


def test_ghost_launch_skew_is_interpolated_from_the_sampled_schedule():
    from warpgraph.runner.ghost_fills import GhostFills

    g = GhostFills.__new__(GhostFills)
    g.order = [0, 4, 8, 12]
    g.pos = {c: i for i, c in enumerate(g.order)}
    g.launch = {0: 1000, 4: 1000}           # first wave: launched together -> no skew
    assert g._slope(4, 1000, True) == 0.0 and g._slope(4, 1000, False) == 0.0
    g.launch = {4: 5000, 8: 5800}           # later wave: 800 cycles per 4 launch positions
    assert g._slope(4, 5000, True) == pytest.approx(200.0)      # ghost 6 of CTA 4: +400 cycles
    assert g._slope(8, 5800, False) == pytest.approx(200.0)     # ghost 6 of CTA 8: -400 cycles
    assert g._slope(8, 5800, True) == pytest.approx(200.0)      # CTA 12 not launched yet: the other side's


def test_normal_max_moments_match_closed_forms():
    from warpgraph.runner.sampling import normal_max_moments

    assert normal_max_moments(1) == pytest.approx((0.0, 1.0), abs=1e-6)
    # max of two standard normals: mean 1/sqrt(pi), variance 1 - 1/pi
    assert normal_max_moments(2) == pytest.approx((1 / math.sqrt(math.pi), 1 - 1 / math.pi), abs=1e-6)
    e = [normal_max_moments(n)[0] for n in (4, 16, 33, 132)]
    assert e == sorted(e) and 2.5 < e[-1] < 2.7


class _Core:
    """The parts of components.sm_core.SmCore that Sample.tail_shift reads."""

    def __init__(self, ends, issued=None):
        self.sm_end = ends
        self.sm_issued = issued if issued is not None else [1000] * len(ends)


def _sample_with_ends(ends, counts, n_sms, cps=1, n_ctas=None):
    s = Sample(len(ends))
    s.sms, s.n_sms, s.ctas_per_sm = list(range(len(ends))), n_sms, cps
    s.n_ctas = n_ctas if n_ctas is not None else 10 * n_sms * cps + 1     # several waves, scheduled dynamically
    s.sched = SubsetScheduler([], s.sms, cps)
    s.sched.count = dict(enumerate(counts))
    return s, _Core(list(ends) + [0] * (n_sms - len(ends)))


def test_tail_shift_uses_the_busy_sms_and_the_expected_maxima():
    from warpgraph.runner.sampling import normal_max_moments

    ends = [1000, 1100, 900, 1050, 400, 300]
    s, core = _sample_with_ends(ends, [4, 4, 4, 4, 3, 3], 24)     # two SMs idled through the last wave
    shift, spread = s.tail_shift(core)
    busy = ends[:4]
    mu = sum(busy) / 4
    sig = math.sqrt(sum((x - mu) ** 2 for x in busy) / 3)
    (e16, v16), (e4, v4) = normal_max_moments(16), normal_max_moments(4)   # 4 of 6 busy -> 16 of 24
    assert shift == pytest.approx(sig * (e16 - e4)) and spread == pytest.approx(sig * math.sqrt(v16 + v4))
    # several CTAs per SM, later waves dynamic: an SM one CTA short was still busy at the end (all count)
    s8, core8 = _sample_with_ends(ends, [30, 31, 31, 32, 31, 30], 24, cps=8)
    assert len(s8.tail_sample(core8)) == 6 and sorted(s8.tail_groups(core8)) == [30, 31, 32]
    # identical ends: nothing to extrapolate
    s0, core0 = _sample_with_ends([500] * 6, [2] * 6, 24)
    assert s0.tail_shift(core0) == (0.0, 0.0)
    # one wave (every CTA starts at launch): only the SMs with the most CTAs are alike, and on the full GPU the
    # partial row's SMs are those (gemm_ptr_M1536: 144 CTAs at 2 per SM on 132 SMs, 12 with 2 CTAs)
    s1, core1 = _sample_with_ends(ends, [2, 2, 1, 1, 1, 1], 24, cps=2, n_ctas=26)
    assert len(s1.tail_sample(core1)) == 2
    assert s1.full_group_size(2, 2, 2) == 2                      # 26 CTAs on 24 SMs: 2 SMs run a second CTA
    assert s1.tail_shift(core1)[0] == 0.0                        # both of them sampled: nothing to extrapolate


def test_tail_shift_keeps_count_groups_apart():
    # SMs that ran one CTA more end later by structure, not by chance: the spread is pooled within the groups
    # (a spread over both would extrapolate the gap between them)
    hi = [2000, 2010, 1990, 2005]
    lo = [1000, 1010, 990, 1005]
    s, core = _sample_with_ends(hi + lo, [5] * 4 + [4] * 4, 32, cps=2)
    shift, _ = s.tail_shift(core)
    assert 0 < shift < 30                                      # pooled sd ~9, not the ~530 of all eight


def test_tail_shift_ignores_spread_that_the_work_explains():
    # causal attention: SMs that got heavier CTAs end later by construction; only the residual is noise
    ends = [1000, 1500, 2000, 2500, 1010, 1490, 2005, 2495]
    work = [100, 150, 200, 250, 100, 150, 200, 250]
    s, _ = _sample_with_ends(ends, [3] * 8, 32, cps=2)
    core = _Core(ends + [0] * 24, work + [0] * 24)
    shift, _ = s.tail_shift(core)
    assert 0 < shift < 10                                      # residual sd ~8, not the ~570 of the ends


def test_tail_shift_removes_the_bias_of_the_sample_maximum():
    # the full GPU ends with the slowest of n SMs; a sample of k sees the slowest of k. Monte Carlo over iid
    # normal end cycles: the raw sample maximum is low by ~0.5 sigma (k=33 of 132), the shifted one is not.
    import numpy as np

    rng = np.random.default_rng(7)
    raw, est, full = [], [], []
    for _ in range(400):
        ends = 100_000 + 400 * rng.standard_normal(132)
        sub = [int(x) for x in ends[::4]]
        s, core = _sample_with_ends(sub, [4] * len(sub), 132)
        raw.append(max(sub))
        est.append(max(sub) + s.tail_shift(core)[0])
        full.append(ends.max())
    bias_raw, bias_est = np.mean(raw) - np.mean(full), np.mean(est) - np.mean(full)
    assert bias_raw < -150 and abs(bias_est) < 40


def test_shared_server_occupancy_counts_the_whole_gpu():
    # components/memory.py's HBM loaded latency reads the busy time a request adds: in a sampled run it is the
    # request plus the unsampled SMs' matching ones (else a sample of 1/4 of the SMs sees 1/4 of the load)
    sh = _SharedServer.wrap(FluidServer(100.0), 0.25)
    assert sh.occupancy(100) == pytest.approx(4.0) and FluidServer(100.0).occupancy(100) == pytest.approx(1.0)


def test_sampled_hbm_loaded_latency_sees_the_full_load():
    from warpgraph.components.memory import MemorySystem
    from warpgraph.topologies import load_arch

    spec = load_arch("h200")
    full, smp = MemorySystem(spec), MemorySystem(spec)
    sample = Sample(33)
    sample.sms = list(range(0, 132, 4))                       # 33 of 132 SMs: each request stands for 4
    sample.scale_units(smp, 132)
    # the same 4 requests per 10 cycles GPU-wide: all 4 on the full GPU, one (with its 3 peers as background) on
    # the mini-GPU
    for t in range(0, 5000, 10):
        for sm in range(4):
            full.global_access(t, sm * 33, "ld", 32, 32, 8, 1024)
        smp.global_access(t, 0, "ld", 32, 32, 8, 1024)
    uf, us = sum(full.hbm_u), sum(smp.hbm_u)
    assert uf > 0.1 and us == pytest.approx(uf, rel=0.15)

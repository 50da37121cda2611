"""Sampling that skips work (issue 18): sampled mode executes only the sampled CTAs functionally, wave sampling
simulates the first waves and extrapolates, and CTAs that communicate run whole or fail clearly."""
from pathlib import Path

import numpy as np
import pytest

from warpgraph import simulate
from warpgraph.core.errors import SimulationError, UserError
from warpgraph.runner.sampling import Sample
from warpgraph.runner.waves import WavePlan, full_write_back_ratio
from warpgraph.workloads.functional import run_functional
from warpgraph.workloads.functional import run as frun
from warpgraph.workloads.functional.subset import cta_communication
from warpgraph.workloads.record import load_record
from warpgraph.workloads.scale import scale_record

ROOT = Path(__file__).resolve().parent.parent / "workloads"
EIGHT = ["timing.n_sms=8"]   # a mini-GPU: many waves from a small grid


@pytest.fixture(scope="module")
def rms():
    # 1024 CTAs, 8 per SM: 16 waves on 8 SMs
    return scale_record(load_record(ROOT / "records/h200/rmsnorm_rows4096_cols4096"), rows=1024, cols=512)


@pytest.fixture(scope="module")
def detailed(rms):
    return simulate(rms, "h200", overrides=EIGHT)


def _count_batches(mp):
    """Patch the functional executor's Batch through ``mp``; the list of CTAs it really runs (every Batch built)."""
    seen = []
    real = frun.Batch

    def counting(ex, ctas):
        seen.extend(int(c) for c in ctas)
        return real(ex, ctas)

    mp.setattr(frun, "Batch", counting)
    return seen


@pytest.fixture()
def count_ctas(monkeypatch):
    """CTAs the functional executor really runs (every Batch built)."""
    return _count_batches(monkeypatch)


def test_subset_trace_holds_only_its_ctas_with_the_full_runs_streams(rms):
    small = scale_record(rms, rows=256)
    full = run_functional(small, compute_values=False)
    pick = [3, 17, 100, 255]
    sub = run_functional(small, compute_values=False, ctas=pick)
    assert sub.ctas_executed == 4 and sub.trace.executed_ctas == 4 and full.ctas_executed == 256
    wpc = sub.trace.warps_per_cta
    for c in pick:
        for w in (0, wpc - 1):
            a, b = full.trace.warp_stream(c * wpc + w), sub.trace.warp_stream(c * wpc + w)
            assert np.array_equal(a.pc, b.pc) and np.array_equal(a.a0, b.a0) and np.array_equal(a.active, b.active)
    with pytest.raises(SimulationError, match="not executed"):
        sub.trace.warp_stream(5 * wpc)
    with pytest.raises(UserError, match="out of range"):
        run_functional(small, compute_values=False, ctas=[0, 256])


@pytest.fixture(scope="module")
def sampled(rms):
    """The 8-SM rmsnorm sampled on 2 SMs with only the sample executed, and the CTAs the executor really ran."""
    with pytest.MonkeyPatch.context() as mp:
        seen = _count_batches(mp)
        r = simulate(rms, "h200", mode="sampled", sample={"sms": 2, "functional": "sample"}, overrides=EIGHT)
    return r, seen


def test_sampled_mode_executes_only_the_sample(rms, detailed, sampled):
    r, count_ctas = sampled
    s = r.metrics["sampling"]
    assert s["mode"] == "sampled" and s["functional"] == "sample"
    # the sample, the first and last CTA (probed by the timing pass) and the calibration row of 8 CTAs
    assert len(count_ctas) == s["functional_ctas"] + s["calibration_ctas"]
    assert s["functional_ctas"] <= s["ctas_simulated"] + 2 and s["calibration_ctas"] == 8
    assert len(set(count_ctas)) < 1024 // 3
    assert "not checkable" in s["outputs"] and r.outputs is None
    # the unsampled CTAs' DRAM reads: every CTA reads its own rows and one shared weight row, so the grid's first
    # touches are the sample's per CTA (first_touch_ratio 1; it was 0.84 when the ratio's denominator was the
    # calibration block's sampled CTAs only, where the weight row's one first touch weighed 4x)
    assert s["first_touch_ratio"] == 1.0
    assert r.metrics["dram_read_bytes"] == pytest.approx(detailed.metrics["dram_read_bytes"], rel=0.01)
    d = detailed.metrics["cycles"]
    assert abs(r.metrics["cycles"] - d) / d * 100 < 5
    with pytest.raises(UserError, match="cannot be checked"):
        simulate(rms, "h200", mode="sampled", sample={"sms": 2, "functional": "sample"}, overrides=EIGHT, check=True)


@pytest.mark.xfail(strict=True, reason=(
    "sampled mode misses the first wave's wait for a shared row's DRAM fill (components/sm_core.py l1_pending, "
    "2026-12-07): -1.07 % vs detailed with a 0.18 % estimate, outside 3 sigma + 0.5 (docs/accuracy.md, 'An L1 hit "
    "on lines still in flight')"))
def test_sampled_error_estimate_covers_detailed(detailed, sampled):
    # the 1-sigma estimate is honest (within 3 sigma). Measured 2026-12-05: -0.52 % with a 0.32 % estimate (+2.35 %
    # before the subset's CTAs shared L1s as the sampled SMs run them: runner/simulate.py)
    r, _ = sampled
    s = r.metrics["sampling"]
    d = detailed.metrics["cycles"]
    diff = abs(r.metrics["cycles"] - d) / d * 100
    assert diff <= 3 * s["cycles_error_pct"] + 0.5, (r.metrics["cycles"], d, s["cycles_error_pct"])


def test_communicating_ctas_run_whole_with_the_reason():
    lock = load_record(ROOT / "gallery/records/layernorm_bwd_r32_c200_g4")      # atom.cas spin lock
    why = cta_communication(lock.program())
    assert why and "cas" in why and "kernel.ptx:" in why
    s = Sample(2).plan(4096, 8, 1)
    s.functional = "sample"
    assert s.functional_subset(lock.program()) is None and s.functional_reason == why
    # an atomic whose result is never read only accumulates (split-K, column sums): a subset is fine
    acc = load_record(ROOT / "gallery/records/colsum_atomic_r100_c200")
    assert cta_communication(acc.program()) is None
    s = Sample(2).plan(4096, 8, 1)
    s.functional = "sample"
    assert s.functional_subset(acc.program()) is not None
    assert Sample(2).plan(4096, 8, 1).functional_subset(acc.program()) is None    # the default executes every CTA
    with pytest.raises(UserError, match="waves"):
        WavePlan(100, 8, 1, 0)


def test_wave_sampling_extrapolates_within_its_bound(rms, detailed, count_ctas):
    r = simulate(rms, "h200", mode="waves", waves=3, overrides=EIGHT)
    s = r.metrics["sampling"]
    assert s["mode"] == "waves" and s["ctas_simulated"] == 3 * 8 * 8 == len(count_ctas) == s["functional_ctas"]
    assert s["waves_total"] == pytest.approx(16.0)
    lo, hi = s["bound_cycles"]
    assert lo < r.metrics["cycles"] < hi and s["cycles_error_pct"] > 0
    d = detailed.metrics["cycles"]
    diff = abs(r.metrics["cycles"] - d) / d * 100
    # the bound is honest: within 3 sigma. On 8 SMs a wave has only 64 CTAs and its period varies by ~10 %, so
    # one fitted period (3 waves) is coarse: measured 2026-12-03 -5.6 % with a 7.0 % estimate (4 waves: -1.0 / 5.1)
    assert diff < 10 and diff <= 3 * s["cycles_error_pct"], (r.metrics["cycles"], d, s)
    assert r.metrics["warp_instructions"] == pytest.approx(detailed.metrics["warp_instructions"], rel=0.01)
    short = simulate(scale_record(rms, rows=128), "h200", mode="waves", waves=3, overrides=EIGHT)
    assert short.metrics["sampling"]["mode"] == "detailed" and "short grid" in short.metrics["sampling"]["fallback"]


def test_prefix_write_back_ratio_is_the_whole_grids():
    # a prefix that fits in the L2 writes nothing back; the grid writes back all but what stays dirty at its end
    st = {"inserted": 1500, "dirtied": 500, "writeback": 0, "capacity": 2000}
    assert full_write_back_ratio(st, 1.0) == 0.0              # the prefix itself: its own ratio
    r = full_write_back_ratio(st, 8.0)          # 4000 dirtied; a third of the 2000 resident sectors dirty at the end
    assert r == pytest.approx(1 - (2000 / 3) / 4000)
    assert full_write_back_ratio({**st, "capacity": None}, 8.0) == 1.0


def test_sampled_mode_on_the_first_waves(rms, detailed, count_ctas):
    # simulate(mode="sampled", waves=k): the SM sample runs only the first k waves' CTAs, the rest extrapolated
    # from the mini-GPU's retire rate. Measured 2026-12-03 (4 of 8 SMs, 4 of 16 waves): -1.9 %, estimate 5.5 %
    r = simulate(rms, "h200", mode="sampled", waves=4, sample={"sms": 4, "functional": "sample"}, overrides=EIGHT)
    s = r.metrics["sampling"]
    assert s["mode"] == "sampled+waves" and s["ctas_total"] == 1024 and s["waves"]["waves_simulated"] == 4
    assert s["functional_ctas"] <= 4 * 64 // 2 + 2      # half the SMs, 4 waves of 64 CTAs, + the probes
    assert len(count_ctas) == s["functional_ctas"] + s["calibration_ctas"] < 1024 // 4
    d = detailed.metrics["cycles"]
    diff = abs(r.metrics["cycles"] - d) / d * 100
    assert diff < 10 and diff <= 3 * s["cycles_error_pct"], (r.metrics["cycles"], d, s["cycles_error_pct"])
    assert r.metrics["warp_instructions"] == pytest.approx(detailed.metrics["warp_instructions"], rel=0.02)


def test_an_explicit_l1_map_is_the_modulo_one_when_it_says_the_same(rms):
    """workloads/functional/run.py: ``l1_sms`` as one cache index per CTA (sampled mode's subset) gives the trace
    that ``l1_sms=n`` gives when the map is ``c % n``; another map changes which loads hit the L1."""
    small = scale_record(rms, rows=64)
    kw = {"compute_values": False, "l1_capacity_bytes": 64 << 10}
    a = run_functional(small, l1_sms=8, **kw).trace
    b = run_functional(small, l1_sms=np.arange(64) % 8, **kw).trace
    c = run_functional(small, l1_sms=np.zeros(64, dtype=np.int64), **kw).trace
    hits = []
    for t in (a, b, c):
        hits.append(sum(int((np.asarray(t.warp_stream(w).a3) >> 32).sum()) for w in range(64 * t.warps_per_cta)))
    assert hits[0] == hits[1] and hits[2] > hits[0]
    with pytest.raises(ValueError, match="one cache index"):
        run_functional(small, l1_sms=np.arange(10), **kw)

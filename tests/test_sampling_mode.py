"""Sampled mode (runner/sampling.py)."""
from pathlib import Path

import pytest

from warpgraph import simulate
from warpgraph.core.errors import UserError
from warpgraph.runner.sampling import Sample, make_sample
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


def test_assignment_is_the_round_robin_first_wave():
    s = Sample([0, 7])
    asg = s.assign(300, 132, 2)
    assert asg == {0: [0, 132, 264], 7: [7, 139, 271]}


def test_sampled_vs_detailed(rec):
    det = simulate(rec, "h200")
    smp = simulate(rec, "h200", mode="sampled", sample=8)
    again = simulate(rec, "h200", mode="sampled", sample=8)
    s = smp.metrics["sampling"]
    assert s["mode"] == "sampled" and len(s["sms"]) == 8 and s["fraction"] == pytest.approx(8 / 132, abs=1e-3)
    assert smp.metrics["cycles"] == again.metrics["cycles"]                       # deterministic for a seed
    assert smp.metrics["cycles"] == pytest.approx(det.metrics["cycles"], rel=0.10)
    assert smp.metrics["warp_instructions"] == pytest.approx(det.metrics["warp_instructions"], rel=0.02)
    assert det.metrics["sampling"]["mode"] == "detailed"
    assert s["cycles_error_pct"] >= 0

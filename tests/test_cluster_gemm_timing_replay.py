"""The cluster GEMM's k loop phase by phase (issue 19): thread 0 of each CTA sums %clock64 intervals of its loop
(microbench/src/cluster_gemm.cu built with -DCG_TIMING, make_timing_record.py), launched on 16 CTAs (8 clusters of 2);
measured on an H100 at 1980 MHz on 2026-12-08 (microbench/results/h100_cluster_gemm_timing_2026-12-08/, the same
GH100 SM as the H200 the cluster records ran on) and replayed on h100.yaml with the kernel's own clock reads."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest

import warpgraph as wg
from warpgraph.microbench.cluster_gemm.parse_timing import summary

ROOT = Path(wg.__file__).parent
MB = ROOT / "workloads" / "microbench"


def _hw(rec: str) -> dict:
    src = json.loads((MB / rec / "launch.json").read_text())["source"]["hardware"]
    return json.loads((ROOT / src["results"]).read_text())[src["params"]["record"]]["all"]


@lru_cache(maxsize=None)
def _sim(rec: str, floor: bool = True) -> dict:
    """The model's clock sums, reduced as the device's are (parse_timing.summary)."""
    r = wg.simulate(MB / rec, "h100", want_outputs=True,
                    overrides=None if floor else {"latencies.membar_after_tma_cycles": 0})
    return summary(r.outputs["tim"])


def test_relaxed_loop_matches_the_h100():
    """Without fences (both stage releases .relaxed) an iteration is the wgmma, the stage hand-offs and the refill:
    H100 1,050.9 cycles (wgmma + bar.sync 624.0)."""
    hw, sim = _hw("cgt_rlx_M2048_g16"), _sim("cgt_rlx_M2048_g16")
    assert sim["iteration"] == pytest.approx(hw["iteration"], rel=0.05)
    assert sim["wgmma_bar"] == pytest.approx(hw["wgmma_bar"], rel=0.05)
    assert sim["local_release"] < 10 and sim["remote_release"] < 10


def test_release_fences_cost_what_they_cost_the_h100():
    """In this loop a .release.cluster arrive (MEMBAR.ALL.GPU) costs the H100 629-705 cycles with every copy of the
    ring landed (0.00-0.13 pending), on 2-256 CTAs, one fence an iteration or two: the floor of a warp that did TMA
    work since its last fence (latencies.membar_after_tma_cycles); without it the model charged the idle fence's 270."""
    hw, sim = _hw("cgt_rel_M2048_g16"), _sim("cgt_rel_M2048_g16")
    assert sim["local_release"] == pytest.approx(hw["local_release"], rel=0.10)
    assert sim["remote_release"] == pytest.approx(hw["remote_release"], rel=0.10)
    assert sim["iteration"] == pytest.approx(hw["iteration"], rel=0.10)


def test_the_fences_are_the_whole_difference():
    """Both loops share everything but the two fences: the H100's rel - rlx difference is its two fences (within
    5 %), and so is the model's (whatever each fence costs)."""
    hr, hx = _hw("cgt_rel_M2048_g16"), _hw("cgt_rlx_M2048_g16")
    sr, sx = _sim("cgt_rel_M2048_g16"), _sim("cgt_rlx_M2048_g16")
    for r, x in ((hr, hx), (sr, sx)):
        fences = r["local_release"] + r["remote_release"] - x["local_release"] - x["remote_release"]
        assert r["iteration"] - x["iteration"] == pytest.approx(fences, rel=0.05)


def test_without_the_floor_the_fence_is_the_idle_one():
    sim = _sim("cgt_rel_M2048_g16", False)
    assert sim["local_release"] < 300 and sim["remote_release"] < 300

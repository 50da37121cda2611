"""MEMBAR.ALL.GPU beside the SM's other warps (microbench/src/membar_sm.cu through the real pipeline) against the
H200 (microbench/results/h200_membar_sm_2026-12-05/membar_sm.json; records workloads/microbench/msm_*, made by
microbench/make_membar_sm_records.py with 4 fences and 32 loader batches instead of 16 / 256).

* A warp whose other lanes exited early (``if (lane != 0) return;``) keeps running: the functional pass emits those
  lanes' EXIT in the middle of the warp's stream (it runs a diverged path to its end first), and the SM core used
  to retire the whole warp there, dropping the fences of the loop's later iterations.
* ``latencies.membar_drains: sm``: a fence waits for every request its SM has outstanding, a load counting as
  ordered once L2 has answered it as a hit would (the H200's fence takes ~700 cycles beside 8 loader warps whether
  their loads hit L2 or miss to DRAM; 283 alone). ``warp`` ignores the other warps' requests (~280 in every case).
Compared: CTA 0's fence (one SM, or the only CTA with loaders: flag 8), else the median over the CTAs. Tolerance
10 % (issue 15)."""
from __future__ import annotations

import statistics

import numpy as np
import pytest

import warpgraph as wg
from _replay_helpers import MB, hardware_params, results, stats_of

RES = results("h200_membar_sm_2026-12-05/membar_sm.json")

_STORES = pytest.mark.xfail(strict=True, reason=(
    "beside 8 warps streaming 16-B stores the H200's fence takes 1,110 cycles; the model's stores are acknowledged "
    "~300 cycles after they leave the SM's 32 B/cycle store path, so its fence ends after ~670 (issue 15)"))
_EVERY_SM = pytest.mark.xfail(strict=True, reason=(
    "every SM with 4 loader warps whose loads miss: the H200's fence takes 663 cycles, the model's 489 (hits: 695, "
    "replayed within 10 % since the SASS issue order): "
    "its loads, spread evenly over the loaders' batch, have less outstanding at the fence than the H200's bursts "
    "(issue 15)"))
_PHASE = pytest.mark.xfail(strict=True, reason=(
    "loader warps whose loads hit or miss beside the fence: the model's fence waits only for the requests "
    "outstanding when it issues, so it depends on where the loaders are in their batch then; the taken-branch hold "
    "(latencies.branch, from the SASS) moved that phase and the fence from 664 / 644 to 593 / 590 cycles "
    "(msm_g1_l8_x1 / msm_g132_l4; H200 700 / 695; ~600-665 under either branch rule alone): the H200's fence "
    "(~700 in every loader case) looks like a wait for the SM's queue to go idle, which the model lacks (issue 15)"))
CASES = [
    "msm_g1_l0",             # nothing outstanding (283)
    "msm_g1_l0_x4",          # an acq_rel atomic, nothing outstanding (1,161)
    "msm_g1_l8",             # beside 8 loader warps, L2 hits (701)
    pytest.param("msm_g1_l8_x1", marks=_PHASE),   # ... their loads miss to DRAM (700)
    pytest.param("msm_g1_l8_x3", marks=_STORES),
    "msm_g132_l8_x8",        # CTA 0 with 8 loaders among 131 idle SMs, hits (682)
    pytest.param("msm_g132_l8_x9", marks=_PHASE),  # ... misses (675)
    pytest.param("msm_g132_l4", marks=_PHASE),     # every SM with 4 loaders, hits (695; the PTX order gave 585)
    pytest.param("msm_g132_l4_x1", marks=_EVERY_SM),
    "msm_g132_l4_x4",        # the acq_rel atomic beside 4 loaders on every SM, hits (1,328)
    "msm_g132_l4_x5",        # ... misses (1,367)
]


def _fence(name: str, drains: str = "sm") -> tuple[float, float]:
    """(simulated fence cycles as the H200 run reports them, the H200's) at the run's 1980 MHz."""
    d = MB / name
    p = hardware_params(d)
    r = wg.simulate(d, "h200", want_outputs=True,
                    overrides={"latencies.membar_drains": drains, "clocks.sm_mhz": 1980.0})
    o = np.asarray(r.outputs["out"]).astype(np.int64).reshape(-1, 4)
    hw = stats_of(RES, p)
    if p["grid"] == 1 or p["flags"] & 8:
        return o[0, 0] / 100, hw["fence_cta0"]
    return statistics.median(o[:, 0] / 100), hw["fence"]


def test_every_fence_of_a_warp_with_exited_lanes_is_timed():
    """4 fences in a loop of lane 0 (lanes 1-31 returned at the top): each costs the H200's idle fence (2 of 4
    were timed before only the stream's last EXIT retired a warp: mean 140)."""
    sim, want = _fence("msm_g1_l0", "warp")
    assert sim == pytest.approx(want, rel=0.05)


@pytest.mark.parametrize("name", CASES)
def test_membar_sm_replay_matches_the_h200(name):
    sim, want = _fence(name)
    assert sim == pytest.approx(want, rel=0.10), (sim, want)


def test_the_warp_rule_ignores_the_other_warps():
    """With ``warp`` the fence beside 8 loader warps costs what it costs alone (the H200: 2.5 x as much)."""
    alone, _ = _fence("msm_g1_l0", "warp")
    beside, want = _fence("msm_g1_l8", "warp")
    assert beside == pytest.approx(alone, abs=5) and want > 2 * alone

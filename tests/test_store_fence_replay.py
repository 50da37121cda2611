"""A fence beside store warps of its SM (microbench/src/store_fence.cu section FST through the real pipeline) against
the H200 measurements in microbench/results/h200_pending_2026-12-05/store_fence/store_fence.json: records
workloads/microbench/fst_* (microbench/make_store_fence_records.py). Warps 1-8 of each CTA issue B batches of 8
``st.global.cg.v4`` into the CTA's own 1 MiB and stop; warp 0's lane 0 waits 500 dependent IMADs and times one
``fence.acq_rel.gpu`` (MEMBAR.ALL.GPU). Compared: the median over the CTAs of the fence's cycles. What it pins: the
idle fence (``latencies.membar_gpu_cycles``) and that a fence waits for its SM's stores issued before it, not after
(``latencies.membar_drains: sm``: 64 batches cost no more than 4 on the card). Tolerance 10 %."""
from __future__ import annotations

import numpy as np
import pytest

import warpgraph as wg
from _replay_helpers import MB, record_stats

MHZ = ["clocks.sm_mhz=1980"]


def fence(d) -> float:
    res = wg.simulate(d, "h200", want_outputs=True, overrides=MHZ)
    o = np.asarray(res.outputs["out"]).astype(np.int64).reshape(-1, 8)
    return float(np.median(o[:, 1] - o[:, 0]))


def hw(d) -> float:
    return record_stats(d)["fence"]


_LATE_ACKS = pytest.mark.xfail(strict=True, reason=(
    "one SM's 8 warps streaming 16-B stores at its 32 B/cycle: a fence issued while they store takes 1,154 / 1,159 "
    "cycles on the H200 (4 / 64 batches), and 669 when their last store issued ~700 cycles before it; the model "
    "gives 659 / 654 / 272: its store acknowledgements under a store stream come back ~500 cycles sooner than the "
    "card's (the idle store + fence, atomics.cu st_fence 596, is right)"))

CASES = [
    "fst_g1_b0",                 # no stores: the idle fence, 264
    "fst_g132_b4",               # every SM storing to DRAM: 2,854
    pytest.param("fst_g1_b2", marks=_LATE_ACKS),
    pytest.param("fst_g1_b4", marks=_LATE_ACKS),
    pytest.param("fst_g1_b64", marks=_LATE_ACKS),
]


@pytest.mark.parametrize("name", CASES)
def test_fence_beside_store_warps_matches_the_h200(name):
    d = MB / name
    assert fence(d) == pytest.approx(hw(d), rel=0.10)


def test_a_fence_does_not_wait_for_stores_issued_after_it():
    """The snapshot rule, on the card and in the model: 64 batches (stores until ~66k cycles) cost the fence no more
    than 4 (until ~4k); a drain to zero would wait ~60k more."""
    f4, f64 = fence(MB / "fst_g1_b4"), fence(MB / "fst_g1_b64")
    assert f64 < 1.1 * f4
    assert hw(MB / "fst_g1_b64") < 1.1 * hw(MB / "fst_g1_b4")

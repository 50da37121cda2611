"""MEMBAR.ALL.GPU beside the SM's other warps (microbench/src/membar_sm.cu through the real pipeline; records
workloads/microbench/msm_*, made by microbench/make_membar_sm_records.py with 4 fences and 32 loader batches).

* A warp whose other lanes exited early (``if (lane != 0) return;``) keeps running: the functional pass emits those
  lanes' EXIT in the middle of the warp's stream (it runs a diverged path to its end first), and the SM core used
  to retire the whole warp there, dropping the fences of the loop's later iterations. Pinned against the H200's
  fence with nothing outstanding (277 cycles, microbench/results/h200_membar_load_2026-12-04, every SM fencing).
* ``latencies.membar_drains``: ``warp`` (default) -- the fence does not wait for the other warps' loads; ``sm`` --
  it waits for every request the SM has outstanding. membar_sm.cu is the experiment that decides between them on
  an H200 (not run yet: issue #15); until then only the two rules' behaviour is pinned here.
"""
from __future__ import annotations

import numpy as np
import pytest

import warpgraph as wg
from _replay_helpers import MB, results, stats_of

IDLE_FENCE = stats_of(results("h200_membar_load_2026-12-04/membar_load.json"),
                      {"grid": 132, "fencers": 132, "bytes": 16384, "flags": 1})["fence"]


def _fence(name: str, drains: str = "warp") -> tuple[float, float]:
    """(mean fence cycles of CTA 0, its loaders' mean cycles per 8-load batch) at the H200 run's 1980 MHz."""
    r = wg.simulate(MB / name, "h200", want_outputs=True,
                    overrides={"latencies.membar_drains": drains, "clocks.sm_mhz": 1980.0})
    o = np.asarray(r.outputs["out"]).astype(np.int64).reshape(-1, 4)
    return o[0, 0] / 100, (o[0, 1] / o[0, 3] if o[0, 3] else 0.0)


def test_every_fence_of_a_warp_with_exited_lanes_is_timed():
    """4 fences in a loop of lane 0 (lanes 1-31 returned at the top): each costs the H200's idle fence."""
    fence, _ = _fence("msm_g1_l0")
    assert fence == pytest.approx(IDLE_FENCE, rel=0.05)


def test_the_warp_rule_ignores_other_warps_loads_and_the_sm_rule_waits_for_them():
    idle, _ = _fence("msm_g1_l0")
    beside, batch = _fence("msm_g1_l4_x1")                  # 4 warps streaming DRAM-missing loads
    assert beside == pytest.approx(idle, abs=5)
    drained, batch_sm = _fence("msm_g1_l4_x1", "sm")
    assert batch_sm == pytest.approx(batch, rel=0.05)        # the fences do not slow the loaders
    assert drained > idle + 0.3 * batch                      # ~ the rest of an outstanding batch, then the drain
    # the acq_rel atomic's release side follows the same rule
    atom, _ = _fence("msm_g1_l4_x5")
    atom_sm, _ = _fence("msm_g1_l4_x5", "sm")
    assert atom_sm > atom + 0.3 * batch


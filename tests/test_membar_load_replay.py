"""MEMBAR.GPU under load (microbench/src/membar_load.cu through the real pipeline) against the H200 measurements in
microbench/results/h200_membar_load_2026-12-04/membar_load.json and h200_l2_hit_density_2026-12-05/ (each record
names its file; records workloads/microbench/mbl_*, made by
microbench/make_membar_load_records.py, 64 timed iterations instead of 256; the copy source is L2-resident as the
host's cudaMemset leaves it: ``l2_resident``). Each CTA's thread 0 issues a bulk copy, then (if it is a fencer)
``fence.acq_rel.gpu``, and writes 100 x the mean fence cycles and 100 x the mean cycles until the copy is seen
complete. Compared: the median over the fencing CTAs' fence, or over the others' copy (no fencer). Tolerance 10 %
(issue 19)."""
from __future__ import annotations

import statistics

import numpy as np
import pytest

import warpgraph as wg
from _replay_helpers import MB, hardware_params, record_stats

MHZ = {"clocks.sm_mhz": 1980.0}   # the runs' SM clock (README of each results folder: 1980 MHz as found)


_LOCKSTEP = pytest.mark.xfail(strict=True, reason=(
    "132 SMs issue their copies in lock-step, then fence: the H200 takes 863 / 1,236 cycles (16 / 32 KiB; every "
    "fencer of a GPC done within 1 cycle of the others) where the same copies without the fence are seen "
    "complete at 476 (mbl_g132_f132_b16k_x64): the fence costs ~430 cycles after its copy, ~250 for one SM alone. "
    "The model charges membar_drain_cycles (202) after the copy whatever the load: 601 / 727 (issue 19)"))
_WARM_AMONG_COLD = pytest.mark.xfail(strict=True, reason=(
    "an L2-resident 16 KiB copy among 99 SMs streaming DRAM-missing copies is seen complete 1,051 cycles after "
    "issue on the H200 (476 among L2-resident copies): hits queue behind the misses at the L2 slices. The model "
    "serves hits apart from the DRAM queue (563), and the fence behind such a copy likewise (731 vs 1,076; "
    "issue 15 / 19)"))
_SMALL_COPY = pytest.mark.xfail(strict=True, reason=(
    "behind a 4 KiB copy the H200's fence takes 534 cycles, 118 less than behind 16 KiB where the model's copy "
    "time difference is 128 and its drain a constant 202 (fitted behind 16 KiB): the replay gives 464 (issue 19)"))
_HITS_AMONG_MISSES = pytest.mark.xfail(strict=True, reason=(
    "33 SMs copying L2-resident 16 KiB among N SMs streaming DRAM-missing copies: the H200 sees them complete after "
    "440-448 cycles for N <= 16 and 673 / 804 for N = 33 / 66 (microbench h200_l2_hit_density_2026-12-05): hits "
    "queue behind misses once ~1 TB/s of them stream. The model serves hits apart from the DRAM queue (479 / 536); "
    "a wait behind every earlier miss of the partition overshoots at N = 4 (650 vs 437), one for outstanding miss "
    "bytes beyond a buffer undershoots (the model's streamed misses are outstanding too briefly), issue 15"))
_SHARED_LOOKUPS = pytest.mark.xfail(strict=True, reason=(
    "132 SMs copying the same L2-resident 32 KiB at once: seen complete after 620 cycles on the H200, 149 more than "
    "16 KiB (~14.5 KB per cycle delivered: GPC-shared lookups). The model shares fewer of the copies' lookups "
    "(tma_stream on one shared region: card 58.8 B/cycle per SM, model 31.7) and, with the measured slice rate "
    "(l2.bytes_per_cycle_per_slice 28, tests/test_tma_stream_replay.py), the extra lookups queue: 768. The former "
    "estimate 32 hid it (619)"))
CASES = [
    "mbl_g41_f33_b16k_x100",     # L2-resident copies among 8 DRAM streams: not slowed (447)
    pytest.param("mbl_g66_f33_b16k_x100", marks=_HITS_AMONG_MISSES),
    pytest.param("mbl_g99_f33_b16k_x100", marks=_HITS_AMONG_MISSES),
    "mbl_g2_f2_b16k",            # one SM, fence behind its own 16 KiB copy (H200 652)
    "mbl_g2_f2_b32k",            # 32 KiB (674)
    pytest.param("mbl_g2_f2_b4k", marks=_SMALL_COPY),
    "mbl_g66_f66_b16k",          # 66 SMs (one per TPC on the H200) fencing (657)
    "mbl_g132_f0_b16k",          # copies alone, every SM (471)
    pytest.param("mbl_g132_f0_b32k", marks=_SHARED_LOOKUPS),   # (620)
    "mbl_g132_f132_b16k_x64",    # copies in lock-step, no fence (476)
    "mbl_g132_f0_b16k_x32",      # DRAM-missing copies alone, every SM (1,259)
    "mbl_g132_f132_b16k_x1",     # fences with nothing outstanding among fencers (277)
    "mbl_g132_f132_b16k_x16",    # every SM fencing behind its own DRAM-missing copy (1,234)
    "mbl_g132_f1_b16k_x32",      # one fencer (own copy L2-resident) among 131 SMs streaming from DRAM (1,218)
    "mbl_g132_f1_b16k_x48",      # the same with its own copy from DRAM too (1,233)
    pytest.param("mbl_g132_f132_b16k", marks=_LOCKSTEP),
    pytest.param("mbl_g132_f132_b32k", marks=_LOCKSTEP),
    pytest.param("mbl_g132_f33_b16k_x100", marks=_WARM_AMONG_COLD),
    pytest.param("mbl_g132_f33_b16k_x36", marks=_WARM_AMONG_COLD),
]


def _replay(name: str, overrides=None) -> tuple[float, float]:
    """(sim, H200): the fencers' median fence; the median copy time of the fencers' role when they skip the
    fence (flag 64), or of the copiers when nothing fences."""
    d = MB / name
    p = hardware_params(d)
    res = wg.simulate(d, "h200", want_outputs=True, overrides={**MHZ, **(overrides or {})})
    o = np.asarray(res.outputs["out"]).astype(np.int64).reshape(-1, 4)
    hw = record_stats(d)      # the run the record names (membar_load or its hit_density section)
    if p["fencers"] and p["flags"] & 64:
        return statistics.median(o[o[:, 3] == 1, 1] / 100), hw["done_f"]
    if p["fencers"]:
        return statistics.median(o[o[:, 3] == 1, 0] / 100), hw["fence"]
    return statistics.median(o[o[:, 3] == 0, 1] / 100), hw["done_o"]


@pytest.mark.parametrize("name", CASES)
def test_membar_load_replay_matches_the_h200(name):
    sim, want = _replay(name)
    assert sim == pytest.approx(want, rel=0.10), (sim, want)


def test_a_fence_behind_its_own_copy_costs_the_drain_and_one_with_nothing_outstanding_does_not():
    """Behind its own 16 KiB copy a fence ends ``membar_drain_cycles`` after the copy (H200: 652 vs 277 idle);
    with nothing outstanding it costs ``membar_gpu_cycles`` even while every SM fences (H200 277)."""
    busy, _ = _replay("mbl_g2_f2_b16k")
    idle, _ = _replay("mbl_g132_f132_b16k_x1")
    assert idle < 300 < 2 * idle < busy
    # the drain alone (without the floor of a warp that did TMA work since its last fence, latencies.membar_after_tma_cycles)
    nofloor = {"latencies.membar_after_tma_cycles": 0}
    drained, _ = _replay("mbl_g2_f2_b16k", nofloor)
    shorter, _ = _replay("mbl_g2_f2_b16k", {**nofloor, "latencies.membar_drain_cycles": 100})
    assert shorter == pytest.approx(drained - 102, abs=2)


def test_the_tma_floor_applies_only_after_tma_work():
    """latencies.membar_after_tma_cycles (661, H100 in situ): behind the warp's own copy the fence takes at least that
    long (H200 652); fencers that issued no copy keep membar_gpu_cycles (H200 277)."""
    busy, hw_busy = _replay("mbl_g2_f2_b16k")
    assert busy == pytest.approx(661 + 2, abs=20) and busy == pytest.approx(hw_busy, rel=0.05)
    idle, hw_idle = _replay("mbl_g132_f132_b16k_x1")
    assert idle < 300 and hw_idle < 300
    floor_off, _ = _replay("mbl_g2_f2_b16k", {"latencies.membar_after_tma_cycles": 0})
    assert floor_off < busy - 40

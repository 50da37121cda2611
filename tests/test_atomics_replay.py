"""Replay of the global-atomics microbenchmark (microbench/src/atomics.cu, H200 2026-12-03, 1980 MHz as found;
results in microbench/results/h200_atomics_2026-12-03/atomics.txt) through the real pipeline: the simulated
%clock64 deltas (clock oracle, ``want_outputs``) read as the host code reads them, at the run's 1980 MHz.

What is pinned, with the H200 value each test compares against:
* the atomic stages the model adds (components/sm_core.py ``_atomg``, l2.atomic_* / fence_gpu_cycles): a .gpu
  fence, the atom round trip beyond an L2 hit, the acq_rel cost, a red acknowledged as a store;
* spin locks (components/atomics.py): Triton's cas / exch lock loop of one CTA, and exclusion between CTAs.
The atom latencies are compared above the ld.cg chain of the same run (model 306 vs H200 319 cycles per link: the
chain re-reads one word, a near-partition hit in the model, components/memory.py).
"""
from functools import lru_cache

import pytest

from warpgraph import simulate
from warpgraph.microbench import atomics_replay as A

MHZ = {"clocks.sm_mhz": 1980.0}    # the run's SM clock (CLK section)


@lru_cache(maxsize=None)
def lat(mode: str, tmp: str) -> float:
    from pathlib import Path

    r = A.lat_record(Path(tmp) / f"lat_{mode}", mode, 64)
    return float(simulate(r, "h200", want_outputs=True, overrides=MHZ).outputs["out"][0]) / 64


def hw_lat(mode: str) -> float:
    return A.hw("LAT", mode=mode)["cycles_per_link"]


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return str(tmp_path_factory.mktemp("atomics"))


def test_gpu_fence_alone(tmp):
    """fence.acq_rel.gpu with nothing outstanding: H200 271.5 cycles per fence."""
    assert lat("fence", tmp) == pytest.approx(hw_lat("fence"), rel=0.05)


@pytest.mark.parametrize("mode", ["atom_relaxed", "cas_relaxed"])
def test_atomic_round_trip_beyond_an_l2_hit(tmp, mode):
    """A dependent relaxed atom.add / atom.cas on an L2-resident word: H200 +205 cycles over ld.global.cg."""
    assert lat(mode, tmp) - lat("ld_cg", tmp) == pytest.approx(hw_lat(mode) - hw_lat("ld_cg"), rel=0.05)


@pytest.mark.parametrize("mode", ["atom_acqrel", "cas_acqrel", "exch_acqrel"])
def test_acq_rel_atomic_cost(tmp, mode):
    """Triton's atom.global.gpu.acq_rel (MEMBAR.ALL.GPU; ERRBAR; CGAERRBAR; ATOMG; CCTL.IVALL): H200 +570-573
    cycles over the relaxed atom, in a dependent chain."""
    assert lat(mode, tmp) - lat("atom_relaxed", tmp) == pytest.approx(
        hw_lat(mode) - hw_lat("atom_relaxed"), rel=0.05)


def test_red_is_acknowledged_as_a_store(tmp):
    """red.add then fence.acq_rel.gpu costs what st + fence does (H200 614.7 / 596.2), not an atom's round
    trip + fence (H200 524.8 + 271.5 = 796)."""
    assert lat("red_fence", tmp) / lat("st_fence", tmp) == pytest.approx(
        hw_lat("red_fence") / hw_lat("st_fence"), rel=0.05)


@lru_cache(maxsize=None)
def lock(G: int, n: int, cs: int, tmp: str, period=None) -> float:
    """Cycles per acquisition: the longest CTA's %clock64 span / all acquisitions (the host's cta_cycles_max /
    acquisitions)."""
    from pathlib import Path

    ov = dict(MHZ)
    if period is not None:
        ov["l2.lock_retry_period_cycles"] = period
        if not period:
            ov["l2.lock_waiters_spin"] = False       # no lock table: nobody waits
    r = A.lock_record(Path(tmp) / f"lock_{G}_{n}_{cs}_{period}", G, n, cs)
    return float(simulate(r, "h200", want_outputs=True, overrides=ov).outputs["cyc"].max()) / (G * n)


def hw_lock(G: int, cs: int) -> float:
    h = A.hw("LOCK", G=G, cs=cs)
    return h["cta_cycles_max"] / h["acquisitions"]


@pytest.mark.xfail(strict=True, reason=(
    "model 765 vs H200 814 cycles per atomic (-6 %): the model's atom round trip is the home-partition L2 mix (mean "
    "371.5) + l2.atomic_extra_latency_cycles 116, derived against the ld.cg chain of the same word, whose re-reads "
    "the model serves at the near latency (282, the pointer-chase chains). The H200's same-word ld.cg chain (319.3 "
    "per link, ~308 beyond its two ALU ops) is ~26 cycles slower than that near hit, a same-line re-read cost the "
    "model lacks; the dependent chains hide it (the model's PTX-order ALU charges ~24 per link where ptxas's SASS "
    "takes ~11), this chain of fences does not"))
def test_acq_rel_atomics_to_rz_serialise(tmp):
    """16 back-to-back acq_rel atom.add whose results are discarded (SASS ATOMG ... RZ, as Triton's split-K and
    RMSNorm-backward atomics): each MEMBAR.ALL.GPU waits for the previous atomic, H200 814 cycles per atomic
    (microbench/src/atomics_rz.cu)."""
    from pathlib import Path

    r = simulate(A.rz_record(Path(tmp) / "rz", "acqrel_rz"), "h200", want_outputs=True, overrides=MHZ)
    assert float(r.outputs["o"][0]) / 16 == pytest.approx(A.hw_rz("acqrel_rz"), rel=0.05)


def test_spin_lock_loop_of_one_cta(tmp):
    """One CTA takes and releases the lock 32 times with a 2 KiB load/add/store critical section (H200: 2367
    cycles per acquisition over 4096). Known gap, +23 %: the model's next cas waits for the unlock exch's round
    trip (as the back-to-back RZ atomics show MEMBAR does) and the H200 hides about one round trip of this loop
    that the model does not."""
    assert lock(1, 32, 1, tmp) == pytest.approx(hw_lock(1, 1), rel=0.25)


def test_spin_lock_excludes_other_ctas(tmp):
    """8 CTAs contend for one lock (H200: 1806 cycles per acquisition, 12 failed cas each). The functional
    trace holds ~4 failed attempts per acquisition; replaying them with no lock table lets CTAs hold the lock
    at once and runs short (1504); with it the acquisitions are sequential. Known gap: the model's contended
    handoff is +34 % (2414): its chain cas result -> loads -> store acks -> exch is longer than the H200's (L2
    hit +59 cycles per step, a waiter's retry phase)."""
    with_locks = lock(8, 8, 1, tmp)
    without = lock(8, 8, 1, tmp, period=0.0)
    assert without < 0.9 * hw_lock(8, 1) <= with_locks < 1.4 * hw_lock(8, 1)


def test_lock_table_hands_over_in_arrival_order():
    """components/atomics.py: a held word queues later acquirers; a release hands it to the oldest one no earlier
    than period / (waiters + 1) after the release; a CTA's exit releases what it still holds."""
    from warpgraph.components.atomics import LockTable

    lt = LockTable(1000.0)
    got = []
    assert lt.acquire(7, 1, 100.0, got.append) == 100.0
    assert lt.acquire(7, 2, 150.0, lambda c: got.append(("b", c))) is None
    assert lt.acquire(7, 3, 160.0, lambda c: got.append(("c", c))) is None
    lt.release(7, 2, 500.0)                # not the holder: ignored
    assert got == []
    lt.release(7, 1, 500.0)                # two waiters: the first is served 1000 / 3 later
    assert got == [("b", pytest.approx(500.0 + 1000.0 / 3))]
    lt.release_all(2, 900.0)               # CTA 2 retires holding it: CTA 3 is served 1000 / 2 later
    assert got[-1] == ("c", pytest.approx(1400.0))
    lt.release(7, 3, 2000.0)
    assert lt.acquire(7, 4, 1500.0, got.append) == 2000.0   # free again, but not before its last release

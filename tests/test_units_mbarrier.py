"""mbarrier unit (paper III-B, Table II)."""
from __future__ import annotations

import functools

import pytest

import warpgraph as wg
from warpgraph.components.mbarrier import MbarrierUnit, quantize_hint
from warpgraph.core.engine import ClockDomain, Engine


@functools.lru_cache(maxsize=None)
def _spec(arch="rtx5090"):
    return wg.load_arch(arch)


def make():
    spec = _spec()
    eng = Engine(ClockDomain("sm", spec.clocks.sm_mhz))
    return spec, eng, MbarrierUnit(spec, eng)


@pytest.mark.parametrize("complete", [True, False])
@pytest.mark.parametrize("op", ["test_wait", "try_wait"])
def test_poll_latency_42_independent_of_state(op, complete):
    spec, eng, mb = make()
    mb.init(1, 1, 0)
    if complete:
        mb.arrive(1, 0, 1, 0)
    got = []
    r = mb.wait(1, 0, 100, op, None, got.append)
    if complete:
        assert r == 100 + 42
    else:  # the failed poll also takes 42; success is seen by a later poll
        assert r is None
        eng.schedule(500, mb.arrive, 1, 500, 1, 0)
        eng.run()
        period = 42 + mb.loop
        k = -(-(500 - 100) // period)
        assert got == [100 + k * period + 42]


@pytest.mark.parametrize("hint", [0, 1, 100, 1000, 10**6])
def test_try_wait_hint_on_complete_barrier_150(hint):
    spec, eng, mb = make()
    mb.init(1, 2, 0)
    mb.arrive(1, 0, 2, 0)
    assert mb.wait(1, 0, 10, "try_wait", hint, None) == 10 + spec.mbarrier.try_wait_hint_complete_cycles


def test_hint_quantised_to_power_of_two():
    assert [quantize_hint(h) for h in (0, 1, 2, 3, 64, 65, 128, 129)] == [0, 1, 2, 4, 64, 128, 128, 256]

    def return_time(hint, tc=1000):
        spec, eng, mb = make()
        mb.init(1, 1, 0)
        got = []
        assert mb.wait(1, 0, 0, "try_wait", hint, got.append) is None
        eng.schedule(tc, mb.arrive, 1, tc, 1, 0)
        eng.run()
        return got[0]

    # hints within one power-of-two interval behave the same, the next interval differs
    assert return_time(65) == return_time(100) == return_time(128)
    assert return_time(129) != return_time(128)
    # a completion during the suspension is seen only by the next poll: later than the completion itself
    assert return_time(1000) >= 1000 + 150


def test_completion_visibility_staircase():
    """Completion times spread over one poll period map to one observed cycle."""
    obs = set()
    t0, period = 251, 42 + 7
    for tc in range(t0 + period + 1, t0 + 2 * period + 1):
        spec, eng, mb = make()
        mb.init(1, 1, 0)
        got = []
        assert mb.loop + 42 == period
        mb.wait(1, 0, t0, "try_wait", None, got.append)
        eng.schedule(tc, mb.arrive, 1, tc, 1, 0)
        eng.run()
        obs.add(got[0])
    assert obs == {t0 + 2 * period + 42}


def test_phases_tx_and_arrivals():
    spec, eng, mb = make()
    mb.init(5, 2, 0)
    mb.complete_tx(5, 256, 1)  # complete_tx may precede expect_tx
    mb.arrive(5, 2, 1, 512)
    assert mb.phases_completed(5) == 0
    mb.complete_tx(5, 256, 3)
    assert mb.phases_completed(5) == 0  # one arrival still pending
    mb.arrive(5, 4, 1, 0)
    assert mb.phases_completed(5) == 1 and mb.bars[5].times == [4]
    # phase 1 (ordinal 1) not yet complete; phase 0 is
    assert mb.wait(5, 0, 10, "test_wait", None, None) == 10 + 42
    assert mb.wait(5, 1, 10, "test_wait", None, lambda c: None) is None


def test_h200_try_wait_suspends_and_sees_the_completion():
    """H200 (microbench mbarrier.try_wait_suspend_cycles 7765.5): a no-hint try_wait on an incomplete phase
    suspends instead of polling every 47 cycles; a completion during the suspension is seen try_wait_cycles
    later, whenever it falls; one after the suspension ran out is seen by the next poll. test_wait still polls."""
    spec = _spec("h200")
    lat, sus = spec.mbarrier.try_wait_cycles, spec.mbarrier.try_wait_max_suspend_cycles
    assert sus == 7726

    def seen(tc, op="try_wait", t0=100):
        eng = Engine(ClockDomain("sm", spec.clocks.sm_mhz))
        mb = MbarrierUnit(spec, eng)
        mb.init(1, 1, 0)
        got = []
        assert mb.wait(1, 0, t0, op, None, got.append) is None
        eng.schedule(tc, mb.arrive, 1, tc, 1, 0)
        eng.run()
        return got[0]

    for tc in (101, 147, 500, 100 + lat + sus):
        assert seen(tc) == tc + lat
    period = lat + sus + spec.mbarrier.poll_loop_cycles
    assert seen(100 + lat + sus + 1) == 100 + period + lat          # the next poll finds it complete
    assert seen(100 + period + 5) == 100 + period + 5 + lat         # ... or suspends again and sees it
    # test_wait returns at once: the staircase of polls
    p = spec.mbarrier.test_wait_cycles + spec.mbarrier.poll_loop_cycles
    assert seen(500, "test_wait") == 100 + -(-(500 - 100) // p) * p + spec.mbarrier.test_wait_cycles

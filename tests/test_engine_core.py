"""Engine (Contract 0): deterministic ordering, idle skipping, limits, clock domains."""
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warpgraph.core.engine import ClockDomain, CycleLimitExceeded, Engine
from warpgraph.core.errors import SimulationError, UserError


def test_simultaneous_events_ordered_by_prio_then_insertion():
    eng = Engine(ClockDomain("sm", 1755))
    out = []
    eng.schedule(5, out.append, "b", prio=1)
    eng.schedule(5, out.append, "a0", prio=0)
    eng.schedule(3, out.append, "first")
    eng.schedule(5, out.append, "a1", prio=0)
    eng.schedule(5, out.append, "c", prio=1)
    assert eng.run() == 5
    assert out == ["first", "a0", "a1", "b", "c"]
    assert eng.events_processed == 5


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(-2, 2)), min_size=1, max_size=60))
def test_order_is_total_time_prio_seq(events):
    eng = Engine()
    seen = []
    for i, (t, p) in enumerate(events):
        eng.schedule(t, seen.append, (t, p, i), prio=p)
    eng.run()
    assert seen == sorted((t, p, i) for i, (t, p) in enumerate(events))


def test_idle_time_is_skipped():
    eng = Engine()
    hits = []
    eng.schedule(10, hits.append, 10)
    eng.schedule(10**9, hits.append, 10**9)
    assert eng.run() == 10**9
    assert hits == [10, 10**9]
    assert eng.events_processed == 2  # two events, not 10^9 ticks


def test_events_scheduled_from_handlers_and_now():
    eng = Engine()
    log = []

    def tick(n):
        log.append(eng.now)
        if n:
            eng.schedule(eng.now + 7, tick, n - 1)

    eng.schedule(0, tick, 3)
    eng.run()
    assert log == [0, 7, 14, 21]


def test_schedule_in_the_past_is_an_error():
    eng = Engine()
    eng.schedule(5, lambda: None)
    eng.run()
    with pytest.raises(SimulationError):
        eng.schedule(4, lambda: None)


def test_cycle_limit_raises_with_report():
    eng = Engine(report=lambda: "warp 3 of CTA 0 waits on mbarrier 0x10 phase 1")
    eng.schedule(10, lambda: None)
    eng.schedule(5000, lambda: None)
    with pytest.raises(CycleLimitExceeded) as ei:
        eng.run(max_cycles=1000)
    assert isinstance(ei.value, SimulationError) and isinstance(ei.value, UserError)
    assert "max_cycles=1000" in str(ei.value) and "waits on mbarrier" in str(ei.value)
    assert eng.now == 10 and eng.events_processed == 1


def test_run_until_stops_and_resumes():
    eng = Engine()
    hits = []
    for t in (5, 10, 20):
        eng.schedule(t, hits.append, t)
    assert eng.run(until=12) == 12
    assert hits == [5, 10] and eng.pending == 1 and eng.next_time() == 20
    assert eng.run() == 20 and hits == [5, 10, 20]


def test_stop():
    eng = Engine()
    eng.schedule(1, eng.stop)
    eng.schedule(2, lambda: None)
    assert eng.run() == 1 and eng.pending == 1


def test_clock_domain_exact_conversion():
    eng = Engine(ClockDomain("sm", mhz=1775))
    l2 = eng.add_domain(ClockDomain("l2", mhz=1700))
    assert l2.period == Fraction(1775, 1700)
    assert l2.to_base(1700) == 1775          # exact, no float drift
    assert l2.to_base(1) == 2                # rounded up
    assert l2.to_base(0) == 0
    assert l2.from_base(1775) == 1700 and l2.from_base(1774) == 1699
    hbm = eng.domain("hbm", mhz=3201)
    assert hbm.to_base(3201 * 7) == 1775 * 7
    half = ClockDomain("x", mhz=1755.5).bind(1755.5 * 2)
    assert half.period == 2 and half.to_base(3) == 6
    with pytest.raises(ValueError):
        ClockDomain("bad", mhz=0)

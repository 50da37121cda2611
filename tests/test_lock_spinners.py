"""Spin-lock waiters that keep retrying on their lock word's line (components/atomics.py ``AtomicUnits.park``,
``l2.lock_waiters_spin``): their attempts load the line's unit, so a release behind many of them waits, and the
word goes to the waiter whose attempt comes first after the release. Replays against the H200 in
tests/test_lock_lines_replay.py (8 lock words in one line: -48 % with parked waiters, within 10 % now)."""
import pytest

from warpgraph.components.atomics import AtomicUnits, LockTable

OCC, WORD, PERIOD = 1.6, 1.449, 1000.0


def _spinning(n: int, line: int = 5, back: float = 300.0):
    """A lock word held by CTA 0 and ``n`` CTAs waiting on it, spinning on ``line`` (one word per 32 waiters)."""
    units, lt, got = AtomicUnits(OCC, WORD), LockTable(PERIOD), {}
    assert lt.acquire(1, 0, 0.0, None) == 0.0
    for c in range(1, n + 1):
        # waiters whose failed attempts reached the L2 over the first period
        spin = (units, line, c % 32, back, OCC, WORD)
        assert lt.acquire(1, c, back + (c * PERIOD) / n, lambda g, c=c: got.__setitem__(c, g), spin) is None
    return units, lt, got


def test_a_release_behind_many_spinners_waits_for_their_queue():
    """2,000 spinners at 1.6 cycles each offer 3,200 cycles of work per 1,000-cycle period: the line is saturated,
    and a request leaving at 20,000 queues behind the attempts that left before it (a closed queue: about
    n * occupancy - period = 2,200 cycles); 200 spinners (320 cycles a period) leave it a short wait."""
    units, _, _ = _spinning(2000)
    wait = units.perform(20_000.0, 5, 40, OCC, WORD) - 20_000.0
    assert 1_500 < wait < 3_000
    units, _, _ = _spinning(200)
    assert units.perform(20_000.0, 5, 40, OCC, WORD) - 20_000.0 < 20
    units, _, _ = _spinning(2000)                    # other lines are not loaded
    assert units.perform(20_000.0, 6, 0, OCC, WORD) == 20_000.0


def test_the_word_goes_to_the_first_attempt_after_the_release_and_the_winner_stops_spinning():
    units, lt, got = _spinning(3)
    # the waiters' next attempts leave at 1,333 / 1,667 / 2,000 (their failed attempts' times - back + period);
    # the release leaves at 1,600 and is performed at once (it books the attempt that left before it first)
    assert units.perform(1_600.0, 5, 0, OCC, WORD) == 1_600.0
    lt.release(1, 0, 1_600.0 + 300.0)
    assert list(got) == [2]                          # the first attempt after the release (not the oldest waiter)
    assert got[2] == pytest.approx(1_667.0 + 300.0, abs=1.0)
    assert len(units.live) == 2
    lt.release(1, 2, 2_500.0)
    lt.release(1, 1, 4_000.0)
    lt.release(1, 3, 6_000.0)
    assert not units.live and set(got) == {1, 2, 3}
    assert units.perform(50_000.0, 5, 0, OCC, WORD) == 50_000.0     # nobody spins any more


def test_spinning_without_retry_period_is_refused():
    from warpgraph.topologies import load_arch

    with pytest.raises(Exception, match="lock_waiters_spin needs lock_retry_period_cycles"):
        load_arch("h200", overrides=["l2.lock_retry_period_cycles=0"])


def test_adjacent_lines_share_a_line_unit_by_atomic_unit_bytes():
    """memops._atom_line_index gives line << 1 | 1; MemorySystem.atomic_unit_keys groups aligned lines into one line
    unit (l2.atomic_unit_bytes) and keeps a word unit per word of each line."""
    import warpgraph as wg
    from warpgraph.components.memory import MemorySystem

    def keys(unit_bytes, line, word=3):
        mem = MemorySystem(wg.load_arch("h200", overrides=[f"l2.atomic_unit_bytes={unit_bytes}"]))
        return mem.atomic_unit_keys((line << 1) | 1, word)

    assert keys(256, 10)[0] == keys(256, 11)[0] != keys(256, 12)[0]        # lines 10, 11 one unit; 12 the next
    assert keys(128, 10)[0] != keys(128, 11)[0]
    assert keys(1024, 8)[0] == keys(1024, 15)[0] != keys(1024, 16)[0]
    assert keys(256, 10)[1] != keys(256, 11)[1] and keys(256, 10, 3) != keys(256, 10, 4)
    assert all(k[0] & 1 for k in (keys(256, 0), keys(128, 0)))             # never 0 (0: no unit)


@pytest.mark.parametrize("bad", ["192", "64", "384"])
def test_atomic_unit_bytes_must_be_a_power_of_two_lines(bad):
    from warpgraph.topologies import load_arch

    with pytest.raises(Exception, match="atomic_unit_bytes"):
        load_arch("h200", overrides=[f"l2.atomic_unit_bytes={bad}"])


def test_consecutive_spans_get_distinct_atomic_alus():
    """MemorySystem.atomic_alu: 1 KiB spans (8 lines) hashed over the 64 ALUs so that 64 consecutive spans take 64
    different ALUs (TPUT: 132 adjacent lines from 132 SMs never put two spans on one ALU); a request's element
    operations are shared by the ALUs of the spans its lines cover."""
    import warpgraph as wg
    from warpgraph.components.memory import MemorySystem

    mem = MemorySystem(wg.load_arch("h200"))
    alu = lambda line: mem.atomic_alu((line << 1) | 1)
    assert alu(0) == alu(7) != alu(8)
    assert len({alu(8 * s) for s in range(64)}) == 64
    assert len({alu(8 * s) for s in range(64, 128)}) == 64
    assert all(1 <= alu(8 * s) <= 64 for s in range(1000))
    w = mem._alu_work((3 << 1) | 1, 16, 512, 1, False)           # 16 lines from line 3: spans 0, 1, 2
    assert [a for a, _ in w] == [alu(3), alu(8), alu(16)]
    assert sum(o for _, o in w) == pytest.approx(512 * 0.1875)
    r = mem._alu_work((3 << 1) | 1, 1, 32, 1, True)               # returning: the return rate
    assert r == [(alu(3), pytest.approx(32 * 0.3284))]


@pytest.mark.parametrize("bad", [["l2.atomic_lane_unit_bytes=1000"], ["l2.atomic_lane_units=0"],
                                 ["l2.atomic_alu_lane_cycles=0"]])
def test_atomic_alu_spec_refuses_half_settings(bad):
    from warpgraph.topologies import load_arch

    with pytest.raises(Exception, match="atomic_"):
        load_arch("h200", overrides=bad)


def test_alu_values_without_the_alus_are_refused():
    from warpgraph.topologies import load_arch

    with pytest.raises(Exception, match="atomic_alu_switch_window_cycles set with atomic_lane_unit_bytes=0"):
        load_arch("h100", overrides=["l2.atomic_alu_switch_window_cycles=100"])
    with pytest.raises(Exception, match="atomic_alu_lane_cycles, atomic_alu_return_lane_cycles set with"):
        load_arch("h200", overrides=["l2.atomic_lane_unit_bytes=0", "l2.atomic_lane_units=0"])
    load_arch("h100")                                   # off, nothing set: fine

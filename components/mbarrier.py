"""mbarrier timing (paper III-B, Table II): phases, pending arrivals, transaction bytes, polling visibility.

State per barrier key (``cta_global_index << 32 | shared_address``): expected arrival count, pending arrivals,
pending tx bytes (may go negative when ``complete_tx`` precedes ``expect_tx``), and the completion cycle of
every finished phase. A phase completes when pending arrivals and pending tx bytes are both zero; the barrier
then re-arms (pending = expected, tx = 0).

Waiting (``wait``) models the polling loop of one warp without ticking:

* ``test_wait`` / no-hint ``try_wait``: a poll returns its predicate ``test_wait_cycles`` /
  ``try_wait_cycles`` (42 on RTX 5090) after it starts, independent of the barrier state; the state is sampled
  when the poll starts. A failed poll (plus ``try_wait_max_suspend_cycles`` of suspension) is followed by the
  loop's own instructions (``poll_loop_cycles``: predicate branch back; 7 = 49-cycle staircase step of paper
  Fig. 5b minus the 42-cycle poll) and the next poll. A completion is therefore seen only by the first poll
  that *starts* after it (the staircase of paper Fig. 5b).
* ``try_wait`` with a suspend-time hint: on a complete barrier the result is ready after
  ``try_wait_hint_complete_cycles`` (150) regardless of the hint; on an incomplete one the thread sleeps for
  the hint quantised up to a power of two (``hint_quantization``) and the poll returns false after
  ``150 + Q(hint)``; as above the completion is only visible to the next poll (no early wake-up).
* no-hint ``try_wait`` with ``try_wait_max_suspend_cycles`` > 0 (H200): a try_wait that finds the phase
  incomplete suspends the thread for up to that long and returns true ``try_wait_cycles`` after the phase
  completes during the suspension (no poll staircase); only a suspension that runs out returns false (after
  ``try_wait_cycles + try_wait_max_suspend_cycles``) and the loop polls again. H200 evidence
  (microbench/results/h200_calibrated_params.yaml ``mbarrier.try_wait_suspend_cycles``): a no-hint try_wait on a
  phase that never completes returns false after 7765 cycles, not after one 40-cycle check; the remote-arrive
  ping-pong (microbench/results/h200_cluster_sync_2026-12-03, PING rlx 450 cycles per round trip, two one-way
  trips) is then replayed at 477 (+6 %) instead of 524 (+16 %) with the 47-cycle poll staircase
  (tests/test_cluster_sync_replay.py). 0 (H100 / RTX 5090 / B200 YAMLs, paper III-B) keeps the staircase.
* ``phase_wakeup_cycles`` is added to every observation that needed more than one poll.

``wait`` returns the success cycle when the first poll succeeds, else ``None`` and later schedules
``wake(cycle)`` on the engine at the success cycle.
"""
from __future__ import annotations

from warpgraph.core.errors import SimulationError
from warpgraph.core.registry import register_component
from warpgraph.core.tracing import NULL_RECORDER

__all__ = ["MbarrierUnit", "quantize_hint"]


def quantize_hint(hint: int, mode: str = "power_of_two") -> int:
    """Suspension time for a try_wait hint: the next power of two >= hint (0 stays 0)."""
    if hint <= 0:
        return 0
    if mode == "power_of_two":
        return 1 << (int(hint) - 1).bit_length()
    return int(hint)


class _Bar:
    __slots__ = ("expected", "pending", "tx", "times", "waiters")

    def __init__(self, count: int):
        self.expected = count
        self.pending = count
        self.tx = 0
        self.times: list[int] = []  # completion cycle of phase i
        self.waiters: list = []  # [phase, t0, op, hint, wake]


@register_component(role="mbarrier", kind="default")
class MbarrierUnit:
    role = "mbarrier"
    kind = "default"

    def __init__(self, spec, engine):
        self.engine = engine
        mb = self.params = spec.mbarrier   # the validated mbarrier section (topologies/schema.py MbarrierSpec)
        self.test_wait = int(mb.test_wait_cycles)
        self.try_wait = int(mb.try_wait_cycles)
        self.hint_complete = int(mb.try_wait_hint_complete_cycles)
        self.max_suspend = int(mb.try_wait_max_suspend_cycles)
        self.quant = str(mb.hint_quantization)
        self.wakeup = int(mb.phase_wakeup_cycles)
        self.loop = int(mb.poll_loop_cycles)
        self.bars: dict[int, _Bar] = {}
        self.rec = NULL_RECORDER  # event recorder (core/tracing.py); the runner swaps in a real one
        self.sm_of_key = None     # optional: barrier key -> SM (for the recorder; else -1, resolved later)
        self.n_polls = 0
        self.n_waits = 0
        self.n_phases = 0
        self.wait_cycles = 0

    # ------------------------------------------------------------------------------------------------
    def _bar(self, key: int) -> _Bar:
        b = self.bars.get(key)
        if b is None:
            raise SimulationError(f"mbarrier 0x{key:x} used before mbarrier.init",
                                  hint="mbarrier.init before arrive / expect_tx / wait")
        return b

    def init(self, key: int, count: int, t: int) -> None:
        self.bars[key] = _Bar(int(count))

    def arrive(self, key: int, t: int, arrivals: int = 1, tx_bytes: int = 0) -> None:
        """arrive / arrive.expect_tx (expect_tx is applied before the arrival)."""
        b = self._bar(key)
        b.tx += tx_bytes
        b.pending -= arrivals
        if b.pending < 0:
            raise SimulationError(f"mbarrier 0x{key:x}: more arrivals than the expected count {b.expected}",
                                  hint="arrival count of mbarrier.init")
        if b.pending == 0 and b.tx == 0:
            self._complete(b, t, key)

    def arrive_drop(self, key: int, t: int, arrivals: int = 1, tx_bytes: int = 0) -> None:
        """mbarrier.arrive_drop: the expected count of this and every later phase drops by ``arrivals``, then
        those arrivals count for the current phase (PTX ISA, mbarrier.arrive_drop)."""
        b = self._bar(key)
        b.expected -= arrivals
        if b.expected < 0:
            raise SimulationError(f"mbarrier 0x{key:x}: arrive_drop below an expected count of 0",
                                  hint="arrival count of mbarrier.init")
        self.arrive(key, t, arrivals, tx_bytes)

    def expect_tx(self, key: int, t: int, tx_bytes: int) -> None:
        self._bar(key).tx += tx_bytes

    def complete_tx(self, key: int, nbytes: int, t: int) -> None:
        """Called by the TMA unit (an engine event at ``t``) when a transaction's bytes have landed."""
        b = self.bars.get(key)
        if b is None:  # barrier not initialised in the timing model (e.g. key -1): nothing to signal
            return
        b.tx -= nbytes
        if b.pending == 0 and b.tx == 0:
            self._complete(b, t, key)

    def _complete(self, b: _Bar, t: int, key: int = -1) -> None:
        b.times.append(t)
        if self.rec.enabled:
            f = self.sm_of_key
            self.rec.mbarrier_phase(f(key) if f is not None else -1, key, len(b.times) - 1, t)
        self.n_phases += 1
        b.pending = b.expected
        b.tx = 0
        if b.waiters:
            done = len(b.times)
            keep = []
            for w in b.waiters:
                if w[0] < done:
                    c = self._observe(w[1], w[2], w[3], t) + self.wakeup
                    self.wait_cycles += c - w[1]
                    self.engine.schedule(c, w[4], c)
                else:
                    keep.append(w)
            b.waiters = keep

    def phases_completed(self, key: int) -> int:
        b = self.bars.get(key)
        return len(b.times) if b is not None else 0

    # ------------------------------------------------------------------------------------------------
    def _observe(self, t0: int, op: str, hint: int, tc: int) -> int:
        """Cycle the polling loop started at ``t0`` returns success for a phase completed at ``tc`` (> t0)."""
        if op == "try_wait" and hint is not None and hint >= 0:
            fail = self.hint_complete + quantize_hint(hint, self.quant) + self.loop
            k = -((t0 - tc) // fail)  # ceil((tc - t0) / fail): first poll starting at or after tc
            self.n_polls += k + 1
            return t0 + k * fail + self.hint_complete
        lat = self.test_wait if op == "test_wait" else self.try_wait
        period = lat + (self.max_suspend if op == "try_wait" else 0) + self.loop   # test_wait never suspends
        if op == "try_wait" and self.max_suspend > 0:
            # suspended try_wait (module docstring): the poll that started at ts sees a completion at
            # tc <= ts + lat + max_suspend when it happens, returning lat later; else the next poll finds it
            j = (tc - t0) // period
            ts = t0 + j * period
            self.n_polls += j + 1
            if tc - ts <= lat + self.max_suspend:
                return (tc if tc > ts else ts) + lat
            self.n_polls += 1
            return ts + period + lat
        k = -((t0 - tc) // period)
        self.n_polls += k + 1
        return t0 + k * period + lat

    def wait(self, key: int, phase: int, t: int, op: str = "try_wait", hint: int | None = None, wake=None):
        """Poll for completion of phase ordinal ``phase`` (succeeds once more than ``phase`` phases completed).
        Returns the success cycle, or ``None`` and later ``engine.schedule(c, wake, c)``."""
        b = self._bar(key)
        self.n_waits += 1
        times = b.times
        hinted = op == "try_wait" and hint is not None and hint >= 0
        if phase < 0 or (len(times) > phase and times[phase] <= t):  # phase -1: the one before init (a
            # parity-1 wait on a fresh barrier, as warp-specialized producers do on their empty slots)
            self.n_polls += 1
            return t + (self.hint_complete if hinted else (self.test_wait if op == "test_wait" else self.try_wait))
        if wake is None:
            raise SimulationError("mbarrier wait on an incomplete phase without a wake callback")
        if len(times) > phase:  # completed, but after t (caller ran ahead of the engine)
            c = self._observe(t, op, hint if hinted else None, times[phase]) + self.wakeup
            self.engine.schedule(max(c, self.engine.now), wake, c)
            return None
        if wake is None:
            raise SimulationError("mbarrier wait on an incomplete phase without a wake callback")
        b.waiters.append([phase, t, op, hint if hinted else None, wake])
        return None

    def stats(self) -> dict:
        return {"waits": self.n_waits, "polls": self.n_polls, "phases": self.n_phases,
                "wait_cycles": self.wait_cycles, "barriers": len(self.bars)}

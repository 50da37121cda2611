"""An ld.global that the trace's L1 model calls a hit cannot have its lines before another load's outstanding miss
of the same lines brings them (components/sm_core.py ``l1_pending``: the L1's miss-under-miss). The functional
pass knows which access came first, not when its data arrives: rmsnorm's first-wave CTAs all read the weight row
while the first CTA's DRAM fill of it is still queued behind the whole wave's row reads."""
import pytest

from warpgraph.runner.synthetic import I, Kind, Unit, kernel, trace
from warpgraph.runner.timing import run_timing
from warpgraph.topologies import load_arch

SPEC = load_arch("h200", overrides={"cta_scheduler.kernel_launch_latency_cycles": 0,
                                    "cta_scheduler.dispatch_cycles_per_cta": 0,
                                    "cta_scheduler.dispatch_cycles_per_warp": 0,
                                    "cta_scheduler.dispatch_burst_warps": 0})
KEY = 0x5A5A5
TAIL = 100   # dependent adds after the load's use: the warp's end follows its load's return


def fadd(d, s=()):
    return I("add", ("f32",), Kind.ALU, Unit.FP32, dsts=(d,), srcs=tuple(s))


def _run(hit_key):
    """Warp 0 misses to DRAM on one line (key KEY), uses it and exits; warp 1, 20 adds later, reads a line the L1
    model calls a hit (key ``hit_key``), then runs a dependent tail of TAIL adds."""
    ld = I("ld", ("global", "f32"), Kind.LD_GLOBAL, Unit.LSU, dsts=(5,), srcs=(0,))
    prog = kernel([fadd(1), ld, fadd(6, (5,))] + [fadd(6, (6,)) for _ in range(TAIL)]
                  + [I("ret", (), Kind.EXIT, Unit.BRANCH)], nregs=8)
    n = len(prog.instructions)

    def stream(g):
        return [1, 2, n - 1] if g == 0 else [0] * 20 + list(range(1, n))

    def pay(g, pos, ins):
        if ins.kind != Kind.LD_GLOBAL:
            return None
        if g == 0:   # one line, 4 sectors, all missing to DRAM
            return (4, 4 | KEY << 32, 128 | 1 << 40, 1)
        return (0, hit_key << 32, 128 | 1 << 40, 1 << 32)   # no sector leaves the SM: one L1-hit line

    return run_timing(trace(prog, 1, 2, stream=stream, payload=pay), SPEC, registers=32, n_sms=1)


def test_a_hit_on_lines_still_in_flight_waits_for_their_fill():
    same, other = _run(KEY), _run(KEY + 2)
    assert same.stats.to_dict()["l1"]["pending_hit_waits"] == 1
    assert other.stats.to_dict()["l1"]["pending_hit_waits"] == 0
    # with other lines warp 1's tail follows an L1 hit and ends within warp 0's DRAM round trip (the run's length);
    # with the lines in flight the tail starts only when that fill is back: the round trip plus the whole tail
    c_same, c_other = same.metrics["cycles"], other.metrics["cycles"]
    tail = TAIL * SPEC.latencies.fp32.latency_cycles
    assert c_other > 20 * 4 + SPEC.l1.hit_latency_cycles + tail
    assert c_same - c_other == pytest.approx(tail, abs=60)

"""Stall attribution follows Nsight Compute's definitions (components/stalls.py): one synthetic kernel per reason,
checking which reason dominates, and that the counters sum to the resident warp-cycles in every bundling."""
import pytest

from warpgraph.components.stalls import STALL_NAMES
from warpgraph.runner.synthetic import I, Kind, Unit, kernel, trace
from warpgraph.runner.timing import run_timing
from warpgraph.topologies import load_arch

SPEC = load_arch("h200", overrides={"cta_scheduler.kernel_launch_latency_cycles": 0,
                                    "cta_scheduler.dispatch_cycles_per_cta": 0,
                                    "cta_scheduler.dispatch_cycles_per_warp": 0,
                                    "cta_scheduler.dispatch_burst_warps": 0})
N = 64


def _run(tr, **kw):
    import standin_units  # tests/conftest.py puts tests/ on the path

    kw.setdefault("units", standin_units.units)
    kw.setdefault("registers", 32)
    return run_timing(tr, SPEC, **kw)


def _ret():
    return I("ret", (), Kind.EXIT, Unit.BRANCH)


def _ffma(d, s):
    return I("fma", ("rn", "f32"), Kind.ALU, Unit.FP32, dsts=(d,), srcs=tuple(s))


def _iadd(d, s=()):
    return I("add", ("s32",), Kind.ALU, Unit.INT, dsts=(d,), srcs=tuple(s))


def _ratios(out):
    r = dict(out.metrics["stall_ratios_per_issue"])
    r.pop("selected")
    return r


def _top(r):
    return max(r, key=r.get)


def _sums(out):
    core = out.core
    return sum(out.metrics["stall_ratios_per_issue"].values()), core.warp_resident_cycles / core.issued


@pytest.mark.parametrize("warps", [1, 4, 8, 16])
def test_dependent_ffma_chain_is_wait_not_math_pipe_throttle(warps):
    # each FFMA needs the previous one's result: the fixed-latency dependency (stall count ~4) is `wait`, for
    # one warp and for 2 or 4 warps per sub-partition, bundled (interleaved) or per warp (GTO)
    prog = kernel([_ffma(0, (0, 1)) for _ in range(N)] + [_ret()])
    for bundle in (True, False):
        r = _ratios(_run(trace(prog, 1, warps), bundle=bundle))
        assert _top(r) == "wait", (bundle, r)
        assert r["math_pipe_throttle"] == 0.0
        assert r["wait"] == pytest.approx(SPEC.latencies.fp32.latency_cycles - 1, rel=0.1)


def test_one_warp_back_to_back_on_a_half_rate_pipe_is_wait():
    # independent integer adds on the ALU pipe (a warp every interval_cycles): ptxas's stall count covers the
    # warp's own reuse of the pipe, so Nsight reports `wait` (G. Smith, stackoverflow 66625537), not a throttle
    ii = SPEC.latencies.int.interval_cycles
    assert ii > 1
    prog = kernel([_iadd(k % 16) for k in range(N)] + [_ret()], nregs=16)
    r = _ratios(_run(trace(prog, 1, 1)))
    assert _top(r) == "wait" and r["math_pipe_throttle"] == 0.0
    assert r["wait"] == pytest.approx(ii - 1, rel=0.1)


def test_another_warp_holding_the_pipe_is_math_pipe_throttle():
    # a bundle of 16 warps (4 per sub-partition) issuing independent integer adds: of the 4 x interval_cycles a
    # warp waits per add, its own interval is `wait`, the 3 other warps' occupancy of the ALU pipe a throttle.
    # (The per-warp model (bundle=False) charges a whole wait by its final constraint: GTO runs warp 0 to its
    # EXIT first, so the others see the issue slot bind last, not_selected.)
    ii = SPEC.latencies.int.interval_cycles
    prog = kernel([_iadd(k % 16) for k in range(N)] + [_ret()], nregs=16)
    r = _ratios(_run(trace(prog, 1, 16), bundle=True))
    assert _top(r) == "math_pipe_throttle", r
    assert r["wait"] == pytest.approx(ii - 1, rel=0.1)
    assert r["math_pipe_throttle"] == pytest.approx(3 * ii, rel=0.1)


def test_mufu_pipe_held_by_another_warp_is_mio_throttle():
    # MUFU goes through the MIO queue: a busy XU is mio_throttle (Kernel Profiling Guide), not math_pipe_throttle
    prog = kernel([I("ex2", ("approx", "f32"), Kind.ALU, Unit.SFU, dsts=(k % 8,)) for k in range(N)] + [_ret()],
                  nregs=8)
    r = _ratios(_run(trace(prog, 1, 16), bundle=True))
    assert _top(r) == "mio_throttle", r
    assert r["math_pipe_throttle"] == 0.0


def test_global_pointer_chase_is_long_scoreboard():
    prog = kernel([I("ld", ("global", "u64"), Kind.LD_GLOBAL, Unit.LSU, dsts=(0,), srcs=(0,)) for _ in range(16)]
                  + [_ret()])
    pay = lambda g, pos, ins: (4, 4, 128, 1) if ins.kind == Kind.LD_GLOBAL else None
    r = _ratios(_run(trace(prog, 1, 1, payload=pay)))
    assert _top(r) == "long_scoreboard", r
    assert r["long_scoreboard"] > 10 * max(v for k, v in r.items() if k != "long_scoreboard")


def test_shared_memory_chase_is_short_scoreboard():
    prog = kernel([I("ld", ("shared", "u32"), Kind.LD_SHARED, Unit.MIO, dsts=(0,), srcs=(0,)) for _ in range(N)]
                  + [_ret()])
    pay = lambda g, pos, ins: (1, 0, 128, 0) if ins.kind == Kind.LD_SHARED else None
    r = _ratios(_run(trace(prog, 1, 1, payload=pay)))
    assert _top(r) == "short_scoreboard", r
    assert r["short_scoreboard"] == pytest.approx(SPEC.shared_memory.latency_cycles, rel=0.15)


def test_ready_warps_sharing_the_issue_slot_are_not_selected():
    # independent FFMAs (full-rate pipe), 2 warps per sub-partition: each waits one slot per issue
    prog = kernel([_ffma(k % 32, ()) for k in range(N)] + [_ret()], nregs=32)
    for bundle in (True, False):
        r = _ratios(_run(trace(prog, 1, 8), bundle=bundle))
        assert _top(r) == "not_selected", (bundle, r)
        assert r["wait"] + r["math_pipe_throttle"] < 0.05


@pytest.mark.parametrize("bundle", [True, False])
def test_stall_counts_sum_to_resident_warp_cycles(bundle):
    # a mix of every path: multi-slot SASS (cost 2: 64-bit add), own-pipe waits, loads, shared, MUFU, stores
    # (drain after EXIT), 3 CTAs of 8 warps on 2 SMs
    prog = kernel([_iadd(k % 3, (k % 3,)) for k in range(12)]
                  + [I("add", ("s64",), Kind.ALU, Unit.INT, dsts=(4,), srcs=(4,)) for _ in range(6)]
                  + [I("ld", ("global", "f32"), Kind.LD_GLOBAL, Unit.LSU, dsts=(5,), srcs=(0,)),
                     I("ld", ("shared", "u32"), Kind.LD_SHARED, Unit.MIO, dsts=(6,), srcs=(5,)),
                     I("ex2", ("approx", "f32"), Kind.ALU, Unit.SFU, dsts=(7,), srcs=(6,)),
                     _ffma(8, (7, 5)),
                     I("st", ("global", "f32"), Kind.ST_GLOBAL, Unit.LSU, srcs=(0, 8)), _ret()])

    def pay(g, pos, ins):
        return {Kind.LD_GLOBAL: (4, 4, 128, 1), Kind.ST_GLOBAL: (4, 4, 128, 1),
                Kind.LD_SHARED: (1, 0, 128, 0)}.get(ins.kind)

    out = _run(trace(prog, 3, 8, payload=pay), n_sms=2, bundle=bundle)
    got, expect = _sums(out)
    assert got == pytest.approx(expect, rel=1e-3)
    assert set(out.metrics["stall_ratios_per_issue"]) == set(STALL_NAMES)
    assert out.metrics["stall_ratios_per_issue"]["selected"] == 1.0

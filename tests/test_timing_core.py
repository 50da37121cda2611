"""SM-core behaviours on synthetic traces (stand-in units, so these pin the core, not the units)."""
import pytest

from warpgraph.core.errors import SimulationError
from warpgraph.runner.synthetic import I, Kind, Unit, kernel, trace
from warpgraph.runner.timing import run_timing
from warpgraph.topologies import load_arch

# the core's pipeline, not the per-launch cost Nsight counts (cta_scheduler.kernel_launch_latency_cycles)
SPEC = load_arch("h200", overrides={"cta_scheduler.kernel_launch_latency_cycles": 0,
                                    "cta_scheduler.dispatch_cycles_per_cta": 0,
                                    "cta_scheduler.dispatch_cycles_per_warp": 0,
                                    "cta_scheduler.dispatch_burst_warps": 0})
START = 4  # warp_start_latency (no_instruction) before a warp's first issue


def _standins():
    """The unit test doubles (tests/standin_units.py; tests/conftest.py puts tests/ on the path)."""
    import standin_units

    return standin_units


STANDINS = _standins()


def run(tr, **kw):
    kw.setdefault("units", STANDINS.units)
    kw.setdefault("registers", 32)
    return run_timing(tr, SPEC, **kw)


def fadd(d, s=()):
    return I("add", ("f32",), Kind.ALU, Unit.FP32, dsts=(d,), srcs=tuple(s))


def ret():
    return I("ret", (), Kind.EXIT, Unit.BRANCH)


def clk(d):
    return I("mov", ("u32",), Kind.CLOCK, Unit.MISC, dsts=(d,), text="mov.u32 %r, %clock;")


def test_issue_rate_one_per_cycle_per_subpartition():
    n = 200
    prog = kernel([fadd(k % 50) for k in range(n)] + [ret()], nregs=64)
    one = run(trace(prog, 1, 4)).metrics          # 4 warps -> 4 sub-partitions
    two = run(trace(prog, 1, 8)).metrics          # 2 warps per sub-partition
    assert one["cycles"] == START + n + 1         # n adds + ret, one per cycle
    assert abs(two["cycles"] - (START + 2 * (n + 1))) <= 2
    # per-warp GTO: warp 4 waits for warp 0 (201 of 402 issues); a bundle interleaves its 2 warps per
    # sub-partition perfectly, so each waits one cycle per issue (same cycles, same issue count)
    assert two["stall_ratios_per_issue"]["not_selected"] == pytest.approx(1.0, abs=0.05)
    per_warp = run(trace(prog, 1, 8), bundle=False).metrics
    assert per_warp["cycles"] == two["cycles"]
    assert per_warp["stall_ratios_per_issue"]["not_selected"] == pytest.approx(0.5, abs=0.05)


def test_dependent_chain_is_sum_of_latencies():
    n = 10
    lat = SPEC.latencies.fp32.latency_cycles
    prog = kernel([fadd(0, (0,)) for _ in range(n)] + [ret()])
    m = run(trace(prog, 1, 1)).metrics
    assert m["cycles"] == START + (n - 1) * lat + 1 + 1
    assert m["stall_ratios_per_issue"]["wait"] == pytest.approx((n - 1) * (lat - 1) / (n + 1), abs=1e-3)


def test_independent_instructions_overlap():
    prog = kernel([I("ex2", ("approx", "ftz", "f32"), Kind.ALU, Unit.SFU, dsts=(k,)) for k in range(4)]
                  + [fadd(10, (0, 1, 2, 3)), ret()])
    m = run(trace(prog, 1, 1)).metrics
    sfu = SPEC.latencies.sfu
    # 4 MUFU at the SFU initiation interval (the XU is an MIO pipe: mio_throttle), then the consumer waits for the last
    expect_last = START + 3 * sfu.interval_cycles
    assert m["cycles"] == expect_last + sfu.latency_cycles + 1 + 1
    r = m["stall_ratios_per_issue"]
    assert r["mio_throttle"] > 0 and r["short_scoreboard"] > 0


def _two_warps_same_sp(policy):
    prog = kernel([clk(k) for k in range(5)] + [ret()])
    pay = lambda g, pos, ins: (pos, 0, 0, 0) if ins.kind == Kind.CLOCK else None
    tr = trace(prog, 1, 8, stream=lambda g: list(range(6)) if g in (0, 4) else [5], payload=pay)
    out = run(tr, policy=policy)
    ci = out.clock_issue
    return [ci[(0, k)] for k in range(5)], [ci[(4, k)] for k in range(5)]


def test_gto_keeps_the_oldest_warp_lrr_alternates():
    a, b = _two_warps_same_sp("gto")
    assert a == list(range(a[0], a[0] + 5)) and min(b) > max(a)       # greedy: warp 0 first, then warp 4
    a, b = _two_warps_same_sp("lrr")
    assert sorted(a + b) == list(range(min(a + b), min(a + b) + 10))
    assert max(a) > min(b)                                              # interleaved


def test_bar_sync_waits_for_all_warps():
    chain = [fadd(0, (0,)) for _ in range(20)]
    bar = I("bar", ("sync",), Kind.BAR_SYNC, Unit.SYNC)
    prog = kernel(chain + [bar, clk(1), ret()])
    nc = len(chain)
    pay = lambda g, pos, ins: (0, 64, 0, 0) if ins.kind == Kind.BAR_SYNC else None
    tr = trace(prog, 1, 2, stream=lambda g: list(range(nc + 3)) if g == 0 else [nc, nc + 1, nc + 2], payload=pay)
    out = run(tr)
    ci = out.clock_issue
    lat = SPEC.latencies.fp32.latency_cycles
    t_bar0 = START + (nc - 1) * lat + 1            # warp 0's bar.sync issue
    # the barrier takes warp 0's (the last) arrival bar_sync_cycles_per_warp after it issues (warp 1's came long
    # before), then releases bar_sync_release_cycles later
    rel = t_bar0 + SPEC.latencies.bar_sync_cycles_per_warp + SPEC.latencies.bar_sync_release_cycles
    assert ci[(0, 0)] == rel and ci[(1, 0)] == rel
    assert out.metrics["stall_ratios_per_issue"]["barrier"] > 0


def test_waves_two_x_ctas_two_x_cycles():
    prog = kernel([fadd(0, (0,)) for _ in range(200)] + [ret()])
    # 1 SM, 2 CTAs fit (shared memory limit) -> 2 CTAs = 1 wave, 4 CTAs = 2 waves
    kw = dict(n_sms=1, shared_bytes=100 * 1024)
    one = run(trace(prog, 2, 4), **kw)
    two = run(trace(prog, 4, 4), **kw)
    assert one.occupancy.ctas_per_sm == 2 and one.occupancy.limiter == "shared_memory"
    # the second wave starts cta_scheduler.launch_latency_cycles after the first retires
    lat = SPEC.cta_scheduler.launch_latency_cycles
    ratio = (two.metrics["cycles"] - lat) / one.metrics["cycles"]
    assert 1.9 < ratio < 2.3


def test_stall_attribution_sums_to_resident_warp_cycles():
    prog = kernel([fadd(k % 3, (k % 3,)) for k in range(60)]
                  + [I("ld", ("global", "f32"), Kind.LD_GLOBAL, Unit.LSU, dsts=(5,), srcs=(0,)), fadd(6, (5,)), ret()])
    pay = lambda g, pos, ins: (4, 4, 128, 1) if ins.kind == Kind.LD_GLOBAL else None
    out = run(trace(prog, 3, 8, payload=pay), n_sms=2)
    m = out.metrics
    r = m["stall_ratios_per_issue"]
    core = out.core
    expect = core.warp_resident_cycles / core.issued
    assert sum(r.values()) == pytest.approx(expect, rel=1e-3)
    assert r["long_scoreboard"] > 0 and r["selected"] == 1.0


def test_determinism_identical_stats():
    prog = kernel([fadd(k % 7, (k % 5,)) for k in range(100)] + [ret()])
    f1 = run(trace(prog, 40, 4), n_sms=8).stats.to_frame()
    f2 = run(trace(prog, 40, 4), n_sms=8).stats.to_frame()
    assert f1.equals(f2)


def test_cycle_limit_names_stuck_warps():
    prog = kernel([fadd(0, (0,)) for _ in range(100)] + [ret()])
    with pytest.raises(SimulationError) as e:
        run(trace(prog, 2, 2), max_cycles=50, n_sms=1)
    msg = str(e.value)
    assert "max_cycles=50" in msg and "sm 0 cta 0 warp 0" in msg and "kernel.ptx:" in msg


def test_barrier_counts_only_live_warps():
    bar = I("bar", ("sync",), Kind.BAR_SYNC, Unit.SYNC)
    prog = kernel([fadd(0, (0,)) for _ in range(5)] + [bar, fadd(1), ret()])
    pay = lambda g, pos, ins: (0, 96, 0, 0) if ins.kind == Kind.BAR_SYNC else None  # expects 3 warps
    # warp 2 exits without reaching the barrier: the barrier completes with the 2 live warps
    tr = trace(prog, 1, 3, payload=pay, stream=lambda g: list(range(8)) if g < 2 else [7])
    out = run(tr)
    assert out.metrics["cycles"] > 0 and out.core.finished()


def test_deadlock_is_reported_not_hung():
    b0 = I("bar", ("sync",), Kind.BAR_SYNC, Unit.SYNC)
    b1 = I("bar", ("sync",), Kind.BAR_SYNC, Unit.SYNC)
    prog = kernel([b0, b1, ret()])
    pay = lambda g, pos, ins: (ins.index, 64, 0, 0) if ins.kind == Kind.BAR_SYNC else None
    tr = trace(prog, 1, 2, payload=pay, stream=lambda g: [0, 2] if g == 0 else [1, 2])
    with pytest.raises(SimulationError) as e:
        run(tr)
    msg = str(e.value)
    assert "deadlock" in msg and "bar.sync" in msg and "cta 0 warp 1" in msg


def test_mbarrier_wait_until_tma_completes():
    key = (0 << 32) | 0x100
    init = I("mbarrier", ("init", "shared", "b64"), Kind.MBAR_INIT, Unit.SYNC)
    arrive = I("mbarrier", ("arrive", "expect_tx"), Kind.MBAR_ARRIVE, Unit.SYNC)
    tma = I("cp", ("async", "bulk", "tensor"), Kind.TMA_LOAD, Unit.TMA)
    wait = I("mbarrier", ("try_wait",), Kind.MBAR_WAIT, Unit.SYNC, dsts=(1,))
    br = I("bra", (), Kind.BRANCH, Unit.BRANCH, srcs=(1,))
    prog = kernel([init, arrive, tma, wait, br, clk(2), ret()])

    def pay(g, pos, ins):
        return {Kind.MBAR_INIT: (1, key, 0, 0), Kind.MBAR_ARRIVE: (32768, key, 1, 0),
                Kind.TMA_LOAD: (32768, key, 32768, 32768), Kind.MBAR_WAIT: (0, key, -1, 1)}.get(ins.kind)

    out = run(trace(prog, 1, 1, payload=pay))
    t_clock = out.clock_issue[(0, 0)]
    # 32 KiB at 32 B/cycle of TMA request generation + DRAM latency: far beyond the ~10 issue cycles
    assert t_clock > 1000
    r = out.metrics["stall_ratios_per_issue"]
    assert r["long_scoreboard"] * out.metrics["warp_instructions"] > 900
    assert out.metrics["dram_read_bytes"] == 32768


def _dispatch_run(**rule):
    """CTA launch cycles on one SM running CTAs of 4 warps (200 dependent adds each) under a dispatch rule."""
    from warpgraph.core.tracing import TraceRecorder

    prog = kernel([fadd(0, (0,)) for _ in range(200)] + [ret()])
    over = {"cta_scheduler.kernel_launch_latency_cycles": 0, "cta_scheduler.dispatch_cycles_per_cta": 0,
            "cta_scheduler.dispatch_cycles_per_warp": 0, "cta_scheduler.dispatch_burst_warps": 0}
    over.update({f"cta_scheduler.{k}": v for k, v in rule.items()})
    spec = load_arch("h200", overrides=over)

    def launches(n):
        rec = TraceRecorder()
        out = run_timing(trace(prog, n, 4), spec, n_sms=1, registers=32, recorder=rec)
        return out.metrics["cycles"], sorted(int(e[2]) for e in rec.events().tables.get("cta", []))
    return launches


def test_sm_dispatches_its_ctas_one_at_a_time():
    # cta_scheduler.dispatch_cycles_per_cta (ncu empty kernels: ~140 cycles per CTA per SM): two CTAs that fit on
    # one SM together start that far apart, so the one-wave run is longer by about the interval
    d = 140
    (base, _), (stag, starts) = _dispatch_run()(2), _dispatch_run(dispatch_cycles_per_cta=d)(2)
    assert starts[1] - starts[0] == d
    assert abs((stag - base) - d) <= 0.2 * d, (stag, base, d)


def test_sm_dispatches_a_burst_of_warps_then_one_warp_at_a_time():
    # cta_scheduler.dispatch_cycles_per_warp / dispatch_burst_warps (H100 per-warp probes: an SM's first 32 warps
    # start together, then ~18-20 cycles per warp): 8 CTAs of 4 warps fit the burst and start as one; the 9th to
    # 12th follow 4 warps' worth apart
    per, burst = 19, 32
    _, base = _dispatch_run()(12)
    _, starts = _dispatch_run(dispatch_cycles_per_warp=per, dispatch_burst_warps=burst)(12)
    t0 = base[0]
    assert base == [t0] * 12
    assert starts[:8] == [t0] * 8
    assert [s - t0 for s in starts[8:]] == [4 * per * k for k in range(1, 5)]


@pytest.mark.parametrize("over, msg", [({"dispatch_cycles_per_cta": 140, "dispatch_cycles_per_warp": 19}, "not both"),
                                       ({"dispatch_cycles_per_warp": 0, "dispatch_burst_warps": 32}, "needs")])
def test_dispatch_rules_reject_ignored_settings(over, msg):
    from warpgraph.core.errors import UserError
    with pytest.raises((UserError, ValueError), match=msg):
        load_arch("h200", overrides={f"cta_scheduler.{k}": v for k, v in over.items()})

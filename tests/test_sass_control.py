"""Control-code stall counts (``sass.control_stalls``): the control field of each SASS instruction
(workloads/sass.py ``decode_control``) and the timing rule built on it (runner/timing.py ``control_stalls``,
components/sm_core.py)."""
from pathlib import Path

import pytest

from warpgraph.runner import timing as TM
from warpgraph.runner.synthetic import I, Kind, Unit, kernel, trace
from warpgraph.topologies import load_arch
from warpgraph.workloads import sass as SS
from warpgraph.workloads.compiled import find_ptxas

ROOT = Path(__file__).resolve().parent.parent / "workloads" / "records"


def _tools():
    f = find_ptxas("sm_90a")
    return f is not None and SS.find_nvdisasm(f[0]) is not None


needs_tools = pytest.mark.skipif(not _tools(), reason="no ptxas / nvdisasm (install the 'triton' extra)")


# hand-checked encodings (ptxas 12.x, sm_90a, softmax_rows of the gallery): high 64-bit word -> fields
@pytest.mark.parametrize("hi, stall, yld, wbar, rbar, wait", [
    (0x000E620000000800, 1, 1, 1, 7, 0),         # LDC R1, c[0x0][0x28]: sets scoreboard 1
    (0x000EAE0000002100, 7, 1, 2, 7, 0),         # S2R R29, SR_TID.X: stall 7, sets scoreboard 2
    (0x000EE20000002500, 1, 1, 3, 7, 0),         # S2UR UR7, SR_CTAID.X: sets scoreboard 3
    (0x008FE4000BF06270, 2, 1, 7, 7, 0b001000),  # UISETP ... UR7 ...: waits on scoreboard 3 (UR7), stall 2
    (0x000FC8000F8E023F, 4, 0, 7, 7, 0),         # UIMAD UR5 (read by the ULEA 2 later): stall 4, no yield
    (0x044FE200078EC0FF, 1, 1, 7, 7, 0b000100),  # LOP3.LUT R3, R29.reuse: waits on scoreboard 2 (R29), reuse
])
def test_decode_control_hand_checked(hi, stall, yld, wbar, rbar, wait):
    c = SS.decode_control(SS.control_field(hi))
    assert (c.stall, c.yield_, c.wbar, c.rbar, c.wait) == (stall, yld, wbar, rbar, wait)


def test_decode_control_reuse_flag():
    # LOP3.LUT R3, R29.reuse, ...: operand a's reuse flag (bit 58 of the high word)
    assert SS.decode_control(SS.control_field(0x044FE200078EC0FF)).reuse == 0b0001


HEX_LISTING = """
//--------------------- .text.k                  --------------------------
k:
.text.k:
\t//## File "kernel.ptx", line 11
        /*0000*/                   LDC R1, c[0x0][0x28] ;                           /* 0x00000a00ff017b82 */
                                                                                    /* 0x000e620000000800 */
\t//## File "kernel.ptx", line 12
        /*0010*/                   S2R R29, SR_TID.X ;                              /* 0x00000000001d7919 */
                                                                                    /* 0x000eae0000002100 */
        /*0020*/                   EXIT ;                                           /* 0x000000000000794d */
                                                                                    /* 0x000fea0003800000 */
//--------------------- .nv.info                 --------------------------
"""


def test_parse_nvdisasm_hex_control_fields():
    s = SS.parse_nvdisasm(HEX_LISTING, "k")
    assert [x.op for x in s] == ["LDC", "S2R", "EXIT"]
    assert [x.line for x in s] == [11, 12, 12]
    assert [SS.decode_control(x.ctrl).stall for x in s] == [1, 7, 5]
    # a listing without encodings: no control fields
    plain = SS.parse_nvdisasm(HEX_LISTING.replace("/* 0x", "// "), "k")
    assert [x.ctrl for x in plain] == [-1, -1, -1]


def test_control_extra_spreads_a_blocks_mean_by_cost():
    # block 0: 4 SASS, stall counts summing to 6 beyond issue (mean 1.5) over instructions of cost 1, 2, 0, 1
    out = SS.control_extra([[0, 1, 2, 3]], [1, 2, 0, 1], {0: 6}, {0: 4})
    # no classes: the block mean; cumulative 1.5, 4.5, 4.5, 6 -> rounded 2, 5, 5, 6 (half up): 2, 3, 0, 1
    assert out == {0: 2, 1: 3, 2: 0, 3: 1}


def test_control_extra_conserves_a_class_stall_total():
    # block 0, one class (alu): instruction 0 has 1 SASS of its own with stall 13 (12 beyond issue) and takes 2
    # more from the pool; instruction 1 has 1 of its own, stall 1 (0 beyond); the pool's 2 SASS stall 3 (2 each)
    sums = {0: 12 + 0 + 4, ("i", 0): 12, ("i", 1): 0, (0, "alu"): 4}
    ns = {0: 4, ("i", 0): 1, ("i", 1): 1, (0, "alu"): 2}
    out = SS.control_extra([[0, 1]], [3, 1], sums, ns, ["alu", "alu"])
    # instruction 0: its own 12 + 2 pool SASS at the pool's mean 2 = 16; instruction 1: its own 0 (the old rule,
    # cost x own mean, gave 36 and 0: the pool's stalls were valued at the 13-cycle compare's)
    assert out == {0: 16, 1: 0}
    assert sum(out.values()) == sums[0]
    # an unrolled loop (cost a quarter of the SASS charged): a quarter of the total, in the same proportions
    q = SS.control_extra([[0, 1]], [1, 0], {0: 16, ("i", 0): 12, (0, "alu"): 4}, {0: 4, ("i", 0): 2, (0, "alu"): 2},
                         ["alu", "alu"])
    assert q == {0: 4, 1: 0}


# ------------------------------------------------------------------------------------- the timing rule
SPEC = load_arch("h200", overrides={"cta_scheduler.kernel_launch_latency_cycles": 0,
                                    "cta_scheduler.dispatch_cycles_per_cta": 0,
                                    "cta_scheduler.dispatch_cycles_per_warp": 0,
                                    "cta_scheduler.dispatch_burst_warps": 0})
N = 64


def _run(tr, xs, monkeypatch, **kw):
    import standin_units  # tests/conftest.py puts tests/ on the path

    monkeypatch.setattr(TM, "control_stalls", lambda *a, **k: xs)
    kw.setdefault("units", standin_units.units)
    kw.setdefault("registers", 32)
    return TM.run_timing(tr, SPEC, **kw)


def _ffma(d, s):
    return I("fma", ("rn", "f32"), Kind.ALU, Unit.FP32, dsts=(d,), srcs=tuple(s))


def _ret():
    return I("ret", (), Kind.EXIT, Unit.BRANCH)


@pytest.mark.parametrize("xs_per, warps", [(0, 1), (2, 1), (5, 1), (5, 8)])
def test_control_stalls_replace_fixed_latency_dependences(monkeypatch, xs_per, warps):
    # a dependent FFMA chain: with control stalls the unit latency no longer spaces the chain (ptxas's stall
    # counts do): the wait per issue is the stall count beyond issue, not latency - 1, for any bundling
    prog = kernel([_ffma(0, (0, 1)) for _ in range(N)] + [_ret()])
    xs = [xs_per] * N + [0]
    for bundle in (True, False):
        out = _run(trace(prog, 1, warps), xs, monkeypatch, bundle=bundle)
        r = out.metrics["stall_ratios_per_issue"]
        cs = out.metrics["control_stalls"]
        # N - 1 spacings of xs_per cycles among N + 1 issues (the last FFMA's stall runs into the EXIT)
        assert r["wait"] == pytest.approx(xs_per * N / (N + 1), abs=0.05), (bundle, r)
        assert cs["charged_per_issue"] == pytest.approx(r["wait"], abs=1e-3)
        assert cs["scheduled_per_issue"] == pytest.approx(xs_per * N / (N + 1), abs=1e-3)
        # the counters still sum to the resident warp-cycles
        assert sum(r.values()) == pytest.approx(out.core.warp_resident_cycles / out.core.issued, abs=2e-3)


def test_control_stalls_off_keeps_the_unit_latency(monkeypatch):
    prog = kernel([_ffma(0, (0, 1)) for _ in range(N)] + [_ret()])
    out = _run(trace(prog, 1, 1), None, monkeypatch)
    assert "control_stalls" not in out.metrics
    assert out.metrics["stall_ratios_per_issue"]["wait"] == pytest.approx(
        SPEC.latencies.fp32.latency_cycles - 1, rel=0.1)


@needs_tools
def test_control_stalls_on_a_small_record():
    # axpby (f32, 777 elements): the stall counts ptxas set are the wait the warps see; off, the tables are the
    # same as before the option existed (no control stalls)
    from warpgraph.runner.simulate import simulate

    rec = ROOT / "h200_gallery" / "axpby_f32_n777_relu_full"
    on = simulate(rec, "h200", overrides=["sass.control_stalls=1"]).metrics
    off = simulate(rec, "h200", overrides=["sass.control_stalls=0"]).metrics
    assert "control_stalls" not in off
    cs = on["control_stalls"]
    assert 0.3 < cs["scheduled_per_issue"] < 1.5
    assert on["stall_ratios_per_issue"]["wait"] >= cs["charged_per_issue"] - 1e-3
    assert cs["charged_per_issue"] <= cs["scheduled_per_issue"] + 1e-3
    # the static listing: mean stall - 1 per charged SASS
    from warpgraph.workloads.record import load_record

    r = load_record(rec)
    att, _tool = SS.record_sass_costs(r, r.program())
    assert att.extra is not None and att.stall_n > 0
    assert sum(att.extra.values()) > 0


def test_control_stalls_switch_is_checked():
    from warpgraph.core.errors import UserError
    from warpgraph.runner.simulate import split_overrides

    assert split_overrides(["sass.control_stalls=1"])[2] == {"control_stalls": 1}
    with pytest.raises(UserError):
        split_overrides(["sass.control_stalls=2"])

"""Warp-specialized producer / consumer synchronisation (the pattern of Triton's ``warp_specialize=True`` loops,
workloads/gallery/kernels.py:gemm_warp_spec): a producer warp and a consumer warp hand a shared-memory slot
back and forth through a "full" and an "empty" mbarrier whose parity flips every round. One elected consumer
thread releases the slot with ``mbarrier.arrive [empty], 32`` (an arrival *count*), the barrier being
initialised with 32. The timing pass must replay that as 32 arrivals: counting it as one arrival left the
empty barrier's phase 0 incomplete forever and the producer's second-round wait deadlocked (the full-size
gallery launch gemm_warp_spec_M256_N256_K192_full stopped with "simulation deadlocked")."""
import json
from pathlib import Path

import numpy as np
import pytest

from warpgraph.runner.simulate import simulate
from warpgraph.workloads.functional import run_functional
from warpgraph.workloads.record import load_record

ROUNDS = 6   # parity flips several times: the producer waits on phases 0, 1, 2... of the empty barrier

PTX = r"""
.version 8.3
.target sm_90a
.address_size 64
.visible .entry ws(.param .u64 out, .param .u32 rounds)
.reqntid 64
{
 .reg .b64 %rd<4>;
 .reg .b32 %r<24>;
 .reg .pred %p<8>;
 .shared .align 8 .b8 smem[64];
 ld.param.u64 %rd1, [out];
 ld.param.u32 %r20, [rounds];
 mov.u32 %r1, %tid.x;
 shr.u32 %r2, %r1, 5;
 and.b32 %r3, %r1, 31;
 setp.eq.u32 %p1, %r3, 0;
 mov.u32 %r4, smem;
 add.u32 %r5, %r4, 8;
 add.u32 %r6, %r4, 16;
 setp.ne.u32 %p2, %r1, 0;
 @%p2 bra INITED;
 mbarrier.init.shared::cta.b64 [%r4], 1;
 mbarrier.init.shared::cta.b64 [%r5], __ARRIVALS__;
INITED:
 bar.sync 1, 64;
 mov.u32 %r10, 0;
 mov.u32 %r11, 0;
 setp.ne.u32 %p3, %r2, 0;
 @%p3 bra CONSUMER;
PRODUCER:
 and.b32 %r12, %r10, 1;
 xor.b32 %r12, %r12, 1;
PWAIT:
 mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r5], %r12;
 @!%p4 bra PWAIT;
 add.u32 %r13, %r10, 1;
 @%p1 st.shared.u32 [%r6], %r13;
 @%p1 mbarrier.arrive.shared::cta.b64 _, [%r4];
 add.u32 %r10, %r10, 1;
 setp.lt.u32 %p5, %r10, %r20;
 @%p5 bra PRODUCER;
 bra.uni DONE;
CONSUMER:
 and.b32 %r12, %r10, 1;
CWAIT:
 mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r4], %r12;
 @!%p4 bra CWAIT;
 ld.shared.u32 %r14, [%r6];
 add.u32 %r11, %r11, %r14;
 bar.warp.sync -1;
 @%p1 mbarrier.arrive.shared::cta.b64 _, [%r5], 32;
 add.u32 %r10, %r10, 1;
 setp.lt.u32 %p5, %r10, %r20;
 @%p5 bra CONSUMER;
 @!%p1 bra DONE;
 st.global.u32 [%rd1], %r11;
DONE:
 ret;
}
"""


def _record(tmp_path, arrivals=32):
    (tmp_path / "kernel.ptx").write_text(PTX.replace("__ARRIVALS__", str(arrivals)))
    (tmp_path / "launch.json").write_text(json.dumps({
        "format": "launch-record/1", "name": "ws_sync", "entry": "ws", "grid": [2, 1, 1], "block": [64, 1, 1],
        "buffers": {"out": {"dtype": "uint32", "shape": [1], "init": "zeros"}},
        "params": [{"ptr": "out"}, {"u32": ROUNDS}]}))
    return tmp_path


def test_functional_hand_off_is_exact(tmp_path):
    res = run_functional(load_record(_record(tmp_path)), want_trace=False)
    assert int(res.outputs["out"][0]) == ROUNDS * (ROUNDS + 1) // 2


def test_timing_replays_an_arrival_count(tmp_path):
    """Finishes (no deadlock) and the empty barrier completes one phase per round in the timing model too."""
    r = simulate(_record(tmp_path), "h200")
    st = r.stats
    phases = st[(st["component"] == "mbarrier") & (st["stat"] == "phases")]["value"]
    # 2 CTAs x 2 barriers x ROUNDS phases each, counted by the timing model's mbarrier unit
    assert len(phases) == 1 and int(phases.iloc[0]) == 2 * 2 * ROUNDS
    assert r.metrics["cycles"] > 0


def test_more_arrivals_than_expected_is_a_timing_error(tmp_path):
    """An arrival count above the init count stops the timing run with a clear error naming the count."""
    from warpgraph.core.errors import SimulationError
    with pytest.raises(SimulationError, match="more arrivals than the expected count 16"):
        simulate(_record(tmp_path, arrivals=16), "h200")


def test_triton_warp_specialized_gemm_over_several_parity_rounds(tmp_path):
    """The gallery's Triton warp-specialized GEMM (3 stages) at K = 384: 6 k-steps, so the producer waits on
    every stage's empty barrier twice (phases 0 and 1) -- the reduced-size record (K = 192) never waits past
    phase 0. Timing mode finishes and the product is right."""
    import shutil

    import warpgraph
    from warpgraph.workloads.memory import DeviceMemory

    src = Path(warpgraph.__file__).parent / "workloads" / "gallery" / "records" / "gemm_warp_spec_M256_N256_K192"
    d = tmp_path / "ws"
    d.mkdir()
    shutil.copy(src / "kernel.ptx", d / "kernel.ptx")
    rec = json.loads((src / "launch.json").read_text())
    k = 384
    rec["buffers"]["a"]["shape"][1] = rec["buffers"]["b"]["shape"][1] = k
    assert rec["params"][5] == {"u32": 192}
    rec["params"][5] = {"u32": k}
    rec["check"] = None
    (d / "launch.json").write_text(json.dumps(rec))
    r = simulate(d, "h200", want_outputs=True)
    mem = DeviceMemory.from_record(load_record(d), 0)
    a = mem.view("a").astype(np.float64)
    b = mem.view("b").astype(np.float64)
    np.testing.assert_allclose(r.outputs["c"].astype(np.float64), a @ b.T, rtol=2e-2, atol=2e-2)


DROP_PTX = r"""
.version 8.3
.target sm_90a
.address_size 64
.visible .entry wsd(.param .u64 out, .param .u32 rounds)
.reqntid 96
{
 .reg .b64 %rd<4>;
 .reg .b32 %r<24>;
 .reg .pred %p<8>;
 .shared .align 8 .b8 smem[64];
 ld.param.u64 %rd1, [out];
 ld.param.u32 %r20, [rounds];
 mov.u32 %r1, %tid.x;
 shr.u32 %r2, %r1, 5;
 and.b32 %r3, %r1, 31;
 setp.eq.u32 %p1, %r3, 0;
 mov.u32 %r4, smem;
 add.u32 %r5, %r4, 8;
 add.u32 %r6, %r4, 16;
 setp.ne.u32 %p2, %r1, 0;
 @%p2 bra INITED;
 mbarrier.init.shared::cta.b64 [%r4], 1;
 mbarrier.init.shared::cta.b64 [%r5], 2;
INITED:
 bar.sync 0;
 mov.u32 %r10, 0;
 mov.u32 %r11, 0;
 setp.ne.u32 %p3, %r2, 0;
 @%p3 bra CONSUMER;
PRODUCER:
 and.b32 %r12, %r10, 1;
 xor.b32 %r12, %r12, 1;
PWAIT:
 mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r5], %r12;
 @!%p4 bra PWAIT;
 add.u32 %r13, %r10, 1;
 @%p1 st.shared.u32 [%r6], %r13;
 @%p1 mbarrier.arrive.shared::cta.b64 _, [%r4];
 add.u32 %r10, %r10, 1;
 setp.lt.u32 %p5, %r10, %r20;
 @%p5 bra PRODUCER;
 bra.uni DONE;
CONSUMER:
 and.b32 %r12, %r10, 1;
CWAIT:
 mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r4], %r12;
 @!%p4 bra CWAIT;
 ld.shared.u32 %r14, [%r6];
 add.u32 %r11, %r11, %r14;
 bar.warp.sync -1;
 setp.eq.u32 %p6, %r2, 2;
 @%p6 bra LEAVE;
 @%p1 mbarrier.arrive.shared::cta.b64 _, [%r5];
 add.u32 %r10, %r10, 1;
 setp.lt.u32 %p5, %r10, %r20;
 @%p5 bra CONSUMER;
 @!%p1 bra DONE;
 st.global.u32 [%rd1], %r11;
 bra.uni DONE;
LEAVE:
 @%p1 mbarrier.arrive_drop.shared::cta.b64 _, [%r5];
DONE:
 ret;
}
"""


def test_arrive_drop_lowers_the_expected_count_in_timing(tmp_path):
    """Two consumer warps release the slot (empty barrier of 2 arrivals); one leaves after the first round with
    mbarrier.arrive_drop, so later phases complete with the other's arrival alone -- functionally and in the
    timing model's mbarrier unit (which used to ignore the drop and deadlock)."""
    (tmp_path / "kernel.ptx").write_text(DROP_PTX)
    (tmp_path / "launch.json").write_text(json.dumps({
        "format": "launch-record/1", "name": "wsd", "entry": "wsd", "grid": [1, 1, 1], "block": [96, 1, 1],
        "buffers": {"out": {"dtype": "uint32", "shape": [1], "init": "zeros"}},
        "params": [{"ptr": "out"}, {"u32": ROUNDS}]}))
    r = simulate(tmp_path, "h200", want_outputs=True)
    assert int(r.outputs["out"][0]) == ROUNDS * (ROUNDS + 1) // 2
    st = r.stats
    phases = st[(st["component"] == "mbarrier") & (st["stat"] == "phases")]["value"]
    assert int(phases.iloc[0]) == 2 * ROUNDS


ARRIVE_PTX = r"""
.version 8.3
.target sm_90a
.address_size 64
.visible .entry nb(.param .u64 out)
.reqntid 64
{
 .reg .b64 %rd<4>;
 .reg .b32 %r<12>;
 .reg .pred %p<4>;
 .shared .align 4 .b8 slot[8];
 ld.param.u64 %rd1, [out];
 mov.u32 %r1, %tid.x;
 shr.u32 %r2, %r1, 5;
 setp.ne.u32 %p1, %r2, 0;
 @%p1 bra CONSUMER;
 mov.u32 %r3, 7;
 st.shared.u32 [slot], %r3;
 bar.arrive 1, 64;
 mov.u32 %r3, 9;
 st.shared.u32 [slot+4], %r3;
 bar.arrive 2, 64;
 ret;
CONSUMER:
 bar.sync 2, 64;
 bar.sync 1, 64;
 ld.shared.u32 %r4, [slot];
 ld.shared.u32 %r5, [slot+4];
 add.u32 %r6, %r4, %r5;
 setp.ne.u32 %p2, %r1, 32;
 @%p2 bra DONE;
 st.global.u32 [%rd1], %r6;
DONE:
 ret;
}
"""


def test_named_barrier_arrive_does_not_wait(tmp_path):
    """A producer warp signals two named barriers with bar.arrive and leaves; the consumer waits on them in the
    opposite order. On the GPU bar.arrive never waits: when the timing model held the producer at its first
    arrive until the consumer reached barrier 1, the consumer waited at barrier 2 for it (deadlock)."""
    (tmp_path / "kernel.ptx").write_text(ARRIVE_PTX)
    (tmp_path / "launch.json").write_text(json.dumps({
        "format": "launch-record/1", "name": "nb", "entry": "nb", "grid": [2, 1, 1], "block": [64, 1, 1],
        "buffers": {"out": {"dtype": "uint32", "shape": [1], "init": "zeros"}}, "params": [{"ptr": "out"}]}))
    r = simulate(tmp_path, "h200", want_outputs=True)
    assert int(r.outputs["out"][0]) == 16
    assert r.metrics["cycles"] > 0

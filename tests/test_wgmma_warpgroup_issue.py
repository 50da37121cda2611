"""A wgmma is warpgroup-collective: the op starts when the *last* warp of the warpgroup issues it
(components/sm_core.py ``SMCore._wgmma``), also when the warps reach it at different times (a producer warp that
runs extra code first, as in workloads/records/h200_cluster). H200 evidence: in the cluster GEMM variants the
producer warp's MEMBAR time reappears one-for-one as the other three warps' gmma stall (docs/accuracy.md,
"Cluster GEMM"). Before, the first warp to issue started the op and the others shared its completion.
"""
from __future__ import annotations

import numpy as np
import pytest

import warpgraph as wg
from warpgraph.workloads.record import record_from_dict

_ACC = ", ".join(f"%f{i}" for i in range(64))
_ZERO = "\n".join(f" mov.f32 %f{i}, 0f00000000;" for i in range(64))


def _ptx(clock: bool) -> str:
    """One warpgroup: warp 0 first spins ``delay`` loop iterations; then all four warps issue one
    m64n128k16 (SS, 128-B swizzle) + commit + wait_group 0. ``clock``: each warp stores its %clock64 delta from
    before the spin to after the wait (clock readers are never bundled: one warp per bundle); else warps 1-3
    spin ``tail`` iterations after the wait (bundled: warp 0 alone, warps 1-3 one bundle)."""
    after = (""" mov.u64 %rd6, %clock64;
 sub.s64 %rd7, %rd6, %rd4;
 and.b32 %r6, %r1, 31;
 setp.ne.u32 %p3, %r6, 0;
 @%p3 bra DONE;
 mul.wide.u32 %rd8, %r2, 8;
 add.s64 %rd9, %rd1, %rd8;
 st.global.u64 [%rd9], %rd7;""" if clock else """ setp.eq.u32 %p3, %r2, 0;
 @%p3 bra DONE;
 mov.u32 %r7, 0;
TAIL:
 add.u32 %r7, %r7, 1;
 setp.lt.u32 %p2, %r7, %r10;
 @%p2 bra TAIL;""")
    start = " mov.u64 %rd4, %clock64;" if clock else ""
    return f""".version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_p0, .param .u32 k_p1, .param .u32 k_p2)
{{
 .reg .pred %p<4>;
 .reg .b32 %r<16>;
 .reg .b64 %rd<16>;
 .reg .f32 %f<64>;
 .shared .align 1024 .b8 sm[32768];
 ld.param.u64 %rd1, [k_p0];
 ld.param.u32 %r9, [k_p1];
 ld.param.u32 %r10, [k_p2];
 mov.u32 %r1, %tid.x;
 shr.u32 %r2, %r1, 5;
{_ZERO}
 mov.u32 %r3, sm;
 cvt.u64.u32 %rd2, %r3;
 shr.u64 %rd2, %rd2, 4;
 and.b64 %rd2, %rd2, 16383;
 or.b64 %rd3, %rd2, 4611686293305294848;
 add.s64 %rd5, %rd3, 512;
 bar.sync 0;
{start}
 setp.ne.u32 %p1, %r2, 0;
 @%p1 bra SKIP;
 mov.u32 %r5, 0;
LOOP:
 add.u32 %r5, %r5, 1;
 setp.lt.u32 %p2, %r5, %r9;
 @%p2 bra LOOP;
SKIP:
 wgmma.fence.sync.aligned;
 wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{{_ACC}}}, %rd3, %rd5, 1, 1, 1, 0, 0;
 wgmma.commit_group.sync.aligned;
 wgmma.wait_group.sync.aligned 0;
{after}
DONE:
 ret;
}}
"""


def _run(clock: bool, delay: int, tail: int = 0):
    d = {"format": "launch-record/1", "name": "wg_skew", "entry": "k", "grid": [1, 1, 1], "block": [128, 1, 1],
         "buffers": {"out": {"dtype": "uint64", "shape": [4], "init": "zeros"}},
         "params": [{"ptr": "out"}, {"u32": delay}, {"u32": tail}]}
    r = wg.simulate(record_from_dict(d, ptx_text=_ptx(clock)), "h200", want_outputs=True)
    return r.outputs["out"].astype(np.int64), r.metrics


def test_late_warp_delays_the_whole_warpgroups_wgmma_per_warp():
    early, _ = _run(True, 1)
    late, _ = _run(True, 60)
    spin = late[0] - early[0]            # warp 0's extra spin (its own delta grows by it)
    assert spin > 300
    # every warp sees the op complete at the same cycle: the others wait for warp 0's issue
    assert late.max() - late.min() <= 4, late
    assert np.all(late[1:] - early[1:] >= spin - 4), (early, late)


def test_late_warp_delays_the_whole_warpgroups_wgmma_bundled():
    # warps 1-3 spin 100 iterations after the wait: their end moves with warp 0's spin only if the op waits for it
    small, m0 = _run(False, 1, 100)
    big, m1 = _run(False, 60, 100)
    assert m0["bundles"] == 2 and m1["bundles"] == 2      # warp 0 alone, warps 1-3 as one bundle
    spin_small, _ = _run(True, 1)
    spin_big, _ = _run(True, 60)
    spin = spin_big[0] - spin_small[0]
    assert m1["cycles"] - m0["cycles"] == pytest.approx(spin, abs=8)


def _stalls(delay: int):
    d = {"format": "launch-record/1", "name": "wg_skew", "entry": "k", "grid": [1, 1, 1], "block": [128, 1, 1],
         "buffers": {"out": {"dtype": "uint64", "shape": [4], "init": "zeros"}},
         "params": [{"ptr": "out"}, {"u32": delay}, {"u32": 100}]}
    r = wg.simulate(record_from_dict(d, ptx_text=_ptx(False)), "h200")
    st = r.stats
    rows = st[st.component == "sm0.stalls"].set_index("stat").value
    return {k: int(rows.get(k, 0)) for k in ("gmma", "barrier")}


def test_waiting_for_the_late_warp_is_gmma_and_for_the_op_barrier():
    """Nsight Compute's per-SASS samples (microbench/results/h100_units_stores_stalls_2026-12-07): the warps that
    wait for the warpgroup's last warp show `warpgroup_arrive` (the WarpStateStats `gmma`), the wait for the op's
    completion shows at WARPGROUP.DEPBAR as `barrier`. Warp 0 spinning longer adds to warps 1-3's gmma only."""
    s0, s1 = _stalls(1), _stalls(60)
    spin = _run(True, 60)[0][0] - _run(True, 1)[0][0]
    assert s1["gmma"] - s0["gmma"] == pytest.approx(3 * spin, rel=0.05)
    assert s1["barrier"] == pytest.approx(s0["barrier"], rel=0.02) and s0["barrier"] > 0
    # the op's own latency after the last warp issued is every warp's barrier wait, none of it gmma
    assert s1["gmma"] - 3 * spin < 0.1 * s1["barrier"]

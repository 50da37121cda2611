"""Global-memory atomics: atom.cas semantics (d = old; [a] = old == b ? c : old), a spin lock of many CTAs
(atom.cas acquire loop, plain load/add/store, atom.exch release) that makes forward progress and loses no
update, and vector atomics (atom.add.v2.f32)."""
import json

import numpy as np

from warpgraph.workloads.functional import run_functional
from warpgraph.workloads.record import load_record

LOCK = r"""
.version 8.3
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 lock, .param .u64 count, .param .u64 olds)
{
 .reg .b64 %rd<8>;
 .reg .b32 %r<12>;
 .reg .pred %p<4>;
 ld.param.u64 %rd1, [lock];
 ld.param.u64 %rd2, [count];
 ld.param.u64 %rd3, [olds];
 mov.u32 %r1, %tid.x;
 setp.ne.u32 %p1, %r1, 0;
 @%p1 bra DONE;
 mov.u32 %r2, %ctaid.x;
 and.b32 %r3, %r2, 3;
 mul.wide.u32 %rd4, %r3, 4;
 add.u64 %rd5, %rd1, %rd4;
 add.u64 %rd6, %rd2, %rd4;
SPIN:
 atom.global.acquire.gpu.cas.b32 %r4, [%rd5], 0, 1;
 setp.ne.u32 %p2, %r4, 0;
 @%p2 bra SPIN;
 ld.global.u32 %r5, [%rd6];
 add.u32 %r5, %r5, 1;
 st.global.u32 [%rd6], %r5;
 atom.global.release.gpu.exch.b32 %r6, [%rd5], 0;
 mul.wide.u32 %rd7, %r2, 4;
 add.u64 %rd7, %rd3, %rd7;
 st.global.u32 [%rd7], %r6;
DONE:
 ret;
}
"""

VEC = r"""
.version 8.3
.target sm_90a
.address_size 64
.visible .entry v(.param .u64 acc, .param .u64 old)
{
 .reg .b64 %rd<6>;
 .reg .b32 %r<8>;
 .reg .f32 %f<6>;
 ld.param.u64 %rd1, [acc];
 ld.param.u64 %rd2, [old];
 mov.u32 %r1, %tid.x;
 cvt.rn.f32.u32 %f1, %r1;
 mov.f32 %f2, 0f3F800000;
 atom.global.gpu.acq_rel.add.v2.f32 {%f3, %f4}, [%rd1], {%f1, %f2};
 mov.u32 %r2, 0;
 atom.global.cas.b32 %r3, [%rd2], 7, 9;
 ret;
}
"""


def rec(tmp_path, ptx, entry, buffers, params, grid, block):
    (tmp_path / "kernel.ptx").write_text(ptx)
    (tmp_path / "launch.json").write_text(json.dumps({
        "format": "launch-record/1", "name": entry, "entry": entry, "grid": [grid], "block": [block],
        "buffers": buffers, "params": params}))
    return load_record(tmp_path)


def test_spin_lock_of_many_ctas_loses_no_update(tmp_path):
    r = rec(tmp_path, LOCK, "k", {"lock": {"dtype": "int32", "shape": [4], "init": "zeros"},
                                  "count": {"dtype": "int32", "shape": [4], "init": "zeros"},
                                  "olds": {"dtype": "int32", "shape": [256], "init": "poison"}},
            [{"ptr": "lock"}, {"ptr": "count"}, {"ptr": "olds"}], 256, 64)
    res = run_functional(r, max_steps=2_000_000)
    assert res.outputs["count"].tolist() == [64, 64, 64, 64]
    assert (res.outputs["lock"] == 0).all() and (res.outputs["olds"] == 1).all()  # exch returned the held lock


def test_cas_and_vector_atomics(tmp_path):
    r = rec(tmp_path, VEC, "v", {"acc": {"dtype": "float32", "shape": [2], "init": {"values": [0.5, 0.0]}},
                                 "old": {"dtype": "int32", "shape": [1], "init": {"values": [7]}}},
            [{"ptr": "acc"}, {"ptr": "old"}], 1, 32)
    res = run_functional(r)
    assert res.outputs["acc"].tolist() == [0.5 + sum(range(32)), 32.0]
    assert int(res.outputs["old"][0]) == 9        # the first lane swapped 7 -> 9; the others saw 9 and kept it


def test_spin_trace_stays_small(tmp_path):
    """Spinners retry once per round: the dynamic instruction count grows with the rounds (CTAs per lock),
    not with a fixed spin budget per round."""
    r = rec(tmp_path, LOCK, "k", {"lock": {"dtype": "int32", "shape": [4], "init": "zeros"},
                                  "count": {"dtype": "int32", "shape": [4], "init": "zeros"},
                                  "olds": {"dtype": "int32", "shape": [64], "init": "poison"}},
            [{"ptr": "lock"}, {"ptr": "count"}, {"ptr": "olds"}], 64, 32)
    res = run_functional(r)
    # 64 CTAs, 16 per lock: at most 16 attempts of the 3-instruction spin loop per CTA, plus straight code
    assert res.dynamic_warp_instructions < 64 * (16 * 3 + 30)

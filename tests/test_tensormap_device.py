"""Tensor maps built on the device: tensormap.replace.tile.* in shared memory (then tensormap.cp_fenceproxy to
global) or directly in global memory, read by cp.async.bulk.tensor; warpgraph's byte layout
(memory.DEVICE_TMAP_LAYOUT) round-trips; malformed descriptors and unmodelled forms name the PTX line."""
import json

import numpy as np
import pytest

from warpgraph.core.errors import PTXError, SimulationError
from warpgraph.workloads.functional import run_functional
from warpgraph.workloads.memory import DEVICE_TMAP_LAYOUT, decode_tensormap_fields, tensormap_field_slot
from warpgraph.workloads.record import load_record

HEAD = """.version 8.3
.target sm_90a
.address_size 64
.extern .shared .align 1024 .b8 smem[];
.visible .entry k(.param .u64 src, .param .u64 scratch, .param .u64 dst)
{
 .reg .b64 %rd<10>;
 .reg .b32 %r<20>;
 .reg .pred %p<4>;
 ld.param.u64 %rd1, [src];
 ld.param.u64 %rd2, [scratch];
 ld.param.u64 %rd3, [dst];
 mov.u32 %r1, %tid.x;
 mov.u32 %r2, smem;
 shl.b32 %r3, %r1, 2;
 add.u32 %r4, %r2, %r3;
 mov.b32 %r5, 0;
 st.shared.u32 [%r4], %r5;
 bar.sync 0;
 setp.eq.u32 %p1, %r1, 0;
 cvt.u64.u32 %rd4, %r2;
"""
FIELDS = """ @%p1 tensormap.replace.tile.global_address.SPACE.b1024.b64 [TM], %rd1;
 @%p1 tensormap.replace.tile.rank.SPACE.b1024.b32 [TM], 1;
 @%p1 tensormap.replace.tile.box_dim.SPACE.b1024.b32 [TM], 0, 16;
 @%p1 tensormap.replace.tile.box_dim.SPACE.b1024.b32 [TM], 1, 8;
 @%p1 tensormap.replace.tile.global_dim.SPACE.b1024.b32 [TM], 0, 32;
 @%p1 tensormap.replace.tile.global_dim.SPACE.b1024.b32 [TM], 1, 16;
 @%p1 tensormap.replace.tile.global_stride.SPACE.b1024.b64 [TM], 0, 128;
 @%p1 tensormap.replace.tile.element_stride.SPACE.b1024.b32 [TM], 0, 1;
 @%p1 tensormap.replace.tile.element_stride.SPACE.b1024.b32 [TM], 1, 1;
 @%p1 tensormap.replace.tile.elemtype.SPACE.b1024.b32 [TM], ELEMTYPE;
 @%p1 tensormap.replace.tile.interleave_layout.SPACE.b1024.b32 [TM], 0;
 @%p1 tensormap.replace.tile.swizzle_mode.SPACE.b1024.b32 [TM], 0;
 @%p1 tensormap.replace.tile.fill_mode.SPACE.b1024.b32 [TM], 0;
 bar.warp.sync -1;
"""
COPY = """ tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd2], [%rd4], 128;
"""
TAIL = """ fence.proxy.tensormap::generic.acquire.gpu [%rd2], 128;
 @!%p1 bra SYNC;
 add.u32 %r6, %r2, 128;
 mbarrier.init.shared::cta.b64 [%r6], 1;
 add.u32 %r7, %r2, 1024;
 mbarrier.arrive.expect_tx.shared::cta.b64 %rd5, [%r6], 512;
 mov.u32 %r8, 24;
 mov.u32 %r9, 10;
 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r7], [%rd2, {%r8, %r9}], [%r6];
WAIT:
 mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r6], 0;
 @!%p2 bra WAIT;
SYNC:
 bar.sync 0;
 mov.u32 %r10, smem;
 shl.b32 %r11, %r1, 4;
 add.u32 %r12, %r10, %r11;
 ld.shared.v4.f32 {%r13, %r14, %r15, %r16}, [%r12+1024];
 cvt.u64.u32 %rd6, %r11;
 add.u64 %rd7, %rd3, %rd6;
 st.global.v4.f32 [%rd7], {%r13, %r14, %r15, %r16};
 ret;
}
"""


def ptx(space="shared", elemtype=7, extra=""):
    if space == "shared":
        body = FIELDS.replace("SPACE", "shared::cta").replace("TM", "%rd4") + COPY
    else:
        body = FIELDS.replace("SPACE", "global").replace("TM", "%rd2")
    return HEAD + extra + body.replace("ELEMTYPE", str(elemtype)) + TAIL


def record(tmp_path, text):
    (tmp_path / "kernel.ptx").write_text(text)
    (tmp_path / "launch.json").write_text(json.dumps({
        "format": "launch-record/1", "name": "devtmap", "entry": "k", "grid": [1], "block": [32],
        "shared_bytes": 2048,
        "buffers": {"src": {"dtype": "float32", "shape": [16, 32], "init": {"values": list(range(512))}},
                    "scratch": {"dtype": "uint8", "shape": [256], "init": "zeros"},
                    "dst": {"dtype": "float32", "shape": [8, 16], "init": "poison"}},
        "params": [{"ptr": "src"}, {"ptr": "scratch"}, {"ptr": "dst"}]}))
    return load_record(tmp_path)


@pytest.mark.parametrize("space", ["shared", "global"])
def test_device_built_descriptor_loads_a_box(tmp_path, space):
    rec = record(tmp_path, ptx(space))
    res = run_functional(rec)
    src = np.arange(512, dtype=np.float32).reshape(16, 32)
    want = np.zeros((8, 16), np.float32)          # box at x=24, y=10: rows 10..17, cols 24..39 (OOB -> 0)
    want[:6, :8] = src[10:16, 24:32]
    assert (res.outputs["dst"] == want).all()
    blob = res.memory.raw("scratch")[:128].tobytes()
    f = decode_tensormap_fields(blob)
    assert f["rank"] == 2 and f["box_dim"][:2] == [16, 8] and f["global_dim"][:2] == [32, 16]
    assert f["global_stride"][0] == 128 and f["elemtype"] == 7 and f["global_address"] == res.memory.addr_of("src")


def test_layout_slots_do_not_overlap():
    spans = []
    for k, (off, t, n) in DEVICE_TMAP_LAYOUT.items():
        spans.append((off, off + np.dtype(t).itemsize * n, k))
    spans.sort()
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])) and spans[-1][1] <= 128
    assert tensormap_field_slot("box_dim", 3) == (78, np.dtype(np.uint16))
    with pytest.raises(ValueError):
        tensormap_field_slot("global_stride", 4)


def test_bad_descriptor_is_an_error_naming_the_line(tmp_path):
    rec = record(tmp_path, ptx("shared", elemtype=13))
    with pytest.raises(SimulationError) as e:
        run_functional(rec)
    assert "element type 13" in str(e.value) and "kernel.ptx:" in e.value.location


def test_unmodelled_tensormap_form_names_the_line(tmp_path):
    extra = " @%p1 tensormap.replace.tile.swizzle_atomicity.shared::cta.b1024.b32 [%rd4], 0;\n"
    rec = record(tmp_path, ptx("shared", extra=extra))
    with pytest.raises(PTXError) as e:
        run_functional(rec)
    assert "swizzle_atomicity" in str(e.value) and e.value.location.endswith(f":{HEAD.count(chr(10)) + 1}")

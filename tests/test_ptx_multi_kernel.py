"""A PTX module with several kernels (nvcc style): module-scope static shared variables of every kernel and
`.extern .shared` arrays (`buf`, `buf$1`) laid out per entry as ptxas does: only the variables an entry
references, its extern arrays at the aligned start of dynamic shared memory. Every entry runs."""
import json

import numpy as np

from warpgraph.workloads.functional import run_functional
from warpgraph.workloads.ptx import parse_ptx
from warpgraph.workloads.record import load_record

MODULE = r"""
.version 8.0
.target sm_90a
.address_size 64

.extern .shared .align 16 .b8 buf[];
.extern .shared .align 128 .b8 buf$1[];
.shared .align 4 .b8 _ZZ2k1vE4tile[4096];
.shared .align 8 .b64 _ZZ2k2vE3bar;

.visible .entry k1(.param .u64 k1_dst)
{
    .reg .b64 %rd<6>;
    .reg .b32 %r<10>;
    ld.param.u64 %rd1, [k1_dst];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, buf;
    add.u32 %r4, %r3, %r2;
    mov.u32 %r5, _ZZ2k1vE4tile;
    add.u32 %r6, %r5, %r2;
    st.shared.u32 [%r6], %r1;
    ld.shared.u32 %r7, [%r6];
    add.u32 %r7, %r7, 1000;
    st.shared.u32 [%r4], %r7;
    bar.sync 0;
    ld.shared.u32 %r8, [%r4];
    cvt.u64.u32 %rd2, %r2;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r8;
    ret;
}

.visible .entry k2(.param .u64 k2_src, .param .u64 k2_dst)
{
    .reg .b64 %rd<6>;
    .reg .b32 %r<8>;
    .reg .pred %p<3>;
    ld.param.u64 %rd1, [k2_src];
    ld.param.u64 %rd2, [k2_dst];
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    mov.u32 %r2, _ZZ2k2vE3bar;
    mbarrier.init.shared::cta.b64 [%r2], 1;
    mov.u32 %r3, buf$1;
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [%r2], 128;
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], 128, [%r2];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
    ld.shared.u32 %r4, [%r3+124];
    st.global.u32 [%rd2], %r4;
DONE:
    ret;
}
"""


def test_layout_per_entry():
    m = parse_ptx(MODULE, "mod.ptx")
    k1, k2 = m.entry("k1"), m.entry("k2")
    assert set(k1.shared_vars) == {"buf", "_ZZ2k1vE4tile"} and k1.static_shared_bytes == 4096
    assert k1.shared_vars["buf"].offset == 4096
    assert set(k2.shared_vars) == {"buf$1", "_ZZ2k2vE3bar"} and k2.static_shared_bytes == 8
    assert k2.shared_vars["buf$1"].offset == 128          # aligned to its .align 128, not after k1's tile
    assert m.entry("k1").shared_vars["buf"].offset == 4096  # entries do not share offsets


def _record(tmp_path, name, entry, buffers, params, block):
    d = tmp_path / name
    d.mkdir()
    (d / "kernel.ptx").write_text(MODULE)
    (d / "launch.json").write_text(json.dumps({
        "format": "launch-record/1", "name": name, "entry": entry, "grid": [1], "block": [block],
        "shared_bytes": 512, "buffers": buffers, "params": params}))
    return load_record(d)


def test_every_entry_runs(tmp_path):
    r1 = _record(tmp_path, "k1", "k1", {"dst": {"dtype": "uint32", "shape": [128], "init": "zeros"}},
                 [{"ptr": "dst"}], 128)
    r1.validate_against(r1.program())
    out = run_functional(r1).outputs["dst"]
    assert (out == np.arange(128) + 1000).all()
    r2 = _record(tmp_path, "k2", "k2", {"src": {"dtype": "uint32", "shape": [32], "init": {"values": list(range(32))}},
                                        "dst": {"dtype": "uint32", "shape": [1], "init": "zeros"}},
                 [{"ptr": "src"}, {"ptr": "dst"}], 32)
    r2.validate_against(r2.program())
    assert int(run_functional(r2).outputs["dst"][0]) == 31

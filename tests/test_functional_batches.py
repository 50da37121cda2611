"""The functional pass runs at most one resident wave of CTAs in lock step (runner/simulate.py ``_batch_lanes``): its
batches' order is the L2 residency model's time order (workloads/functional/l2model.py), so reuse between waves must
not become reuse within one lock-step step. On the card, a GEMM whose A does not stay in L2 from one wave to the next
re-reads it (cluster GEMM M4096: 339.5 MB from DRAM; batches of 4 waves gave 101 MB, of one wave 309 MB)."""
from __future__ import annotations

import numpy as np

from warpgraph.runner.simulate import MAX_BATCH_LANES, simulate
from warpgraph.workloads.record import record_from_dict

# every CTA (one warp) reads the same 16 KiB, one 128-B line per step
_PTX = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_src, .param .u64 k_out)
{
 .reg .pred %p<2>;
 .reg .b32 %r<8>;
 .reg .b64 %rd<8>;
 ld.param.u64 %rd1, [k_src];
 ld.param.u64 %rd2, [k_out];
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd3, %r1, 4;
 add.s64 %rd4, %rd1, %rd3;
 mov.u32 %r2, 0;
 mov.u32 %r3, 0;
LOOP:
 ld.global.cg.u32 %r4, [%rd4];
 add.s32 %r3, %r3, %r4;
 add.s64 %rd4, %rd4, 128;
 add.s32 %r2, %r2, 1;
 setp.lt.u32 %p1, %r2, 128;
 @%p1 bra LOOP;
 mov.u32 %r5, %ctaid.x;
 mad.lo.s32 %r6, %r5, 32, %r1;
 mul.wide.u32 %rd5, %r6, 4;
 add.s64 %rd6, %rd2, %rd5;
 st.global.u32 [%rd6], %r3;
 ret;
}
"""
REGION = 16 * 1024


def _rec(n_ctas):
    return record_from_dict({"format": "launch-record/1", "name": "waves", "entry": "k", "grid": [n_ctas, 1, 1],
                             "block": [32, 1, 1],
                             "buffers": {"src": {"dtype": "uint32", "shape": [REGION // 4], "init": "zeros"},
                                         "out": {"dtype": "uint32", "shape": [n_ctas * 32], "init": "zeros"}},
                             "params": [{"ptr": "src"}, {"ptr": "out"}]}, ptx_text=_PTX)


def test_each_wave_rereads_what_the_l2_could_not_keep_between_waves():
    # one SM x 32 one-warp CTAs = a wave of 32 CTAs; 64 CTAs = 2 waves, each reading 16 KiB through an L2 that keeps
    # 8 KiB for reuse: the second wave misses again (one batch of all 64 CTAs read the region from DRAM once)
    over = {"timing.n_sms": 1, "l2.reuse_capacity_bytes": 8 * 1024}
    r = simulate(_rec(64), "h200", overrides=over)
    assert r.metrics["dram_read_bytes"] == 2 * REGION
    # a region the L2 keeps is read once, however many waves
    r = simulate(_rec(64), "h200", overrides={**over, "l2.reuse_capacity_bytes": 1 << 20})
    assert r.metrics["dram_read_bytes"] == REGION
    assert 64 * 32 < MAX_BATCH_LANES     # (the whole grid would fit one batch of the default size)

"""Thread-block clusters, functionally (workloads/functional/cluster.py, memops shared::cluster): any cluster
shape, the cluster special registers, mapa + ld/st/atom/red on shared::cluster, barrier.cluster ordering, remote
mbarrier arrive, shared::cta -> shared::cluster bulk copies and TMA multicast -- outputs against numpy."""
from __future__ import annotations

import numpy as np
import pytest

from warpgraph.core.errors import RecordError, SimulationError, UserError
from warpgraph.workloads.functional import run_functional
from warpgraph.workloads.record import record_from_dict

HEAD = ".version 8.7\n.target sm_90a\n.address_size 64\n"
NT = 64   # threads per CTA

# every CTA: buf[tid] = lin*1000 + tid; cluster barrier; read word tid of rank (rank+1) % n through mapa;
# atom.add 1 and red.add tid into rank 0's counters; cluster barrier; write out[lin, :]
EXCHANGE = HEAD + """.visible .entry k(.param .u64 k_p0)
{
 .reg .pred %p<4>;
 .reg .b32 %r<64>;
 .reg .b64 %rd<8>;
 .shared .align 16 .b8 buf[512];
 ld.param.u64 %rd1, [k_p0];
 mov.u32 %r1, %tid.x;
 mov.u32 %r2, %cluster_ctarank;
 mov.u32 %r3, %cluster_nctarank;
 mov.u32 %r20, %ctaid.x;
 mov.u32 %r21, %ctaid.y;
 mov.u32 %r22, %ctaid.z;
 mov.u32 %r23, %nctaid.x;
 mov.u32 %r24, %nctaid.y;
 mad.lo.s32 %r25, %r22, %r24, %r21;
 mad.lo.s32 %r26, %r25, %r23, %r20;
 mov.u32 %r5, buf;
 shl.b32 %r6, %r1, 2;
 add.s32 %r7, %r5, %r6;
 mad.lo.s32 %r9, %r26, 1000, %r1;
 st.shared.u32 [%r7], %r9;
 setp.ne.u32 %p1, %r1, 0;
 @%p1 bra INIT_DONE;
 st.shared.u32 [buf+256], 0;
 st.shared.u32 [buf+260], 0;
INIT_DONE:
 barrier.cluster.arrive.aligned;
 barrier.cluster.wait.aligned;
 add.s32 %r10, %r2, 1;
 rem.u32 %r11, %r10, %r3;
 mapa.shared::cluster.u32 %r12, %r7, %r11;
 ld.shared::cluster.u32 %r13, [%r12];
 add.s32 %r14, %r5, 256;
 mapa.shared::cluster.u32 %r15, %r14, 0;
 atom.shared::cluster.add.u32 %r16, [%r15], 1;
 red.shared::cluster.add.u32 [%r15+4], %r1;
 barrier.cluster.arrive.release.aligned;
 barrier.cluster.wait.acquire.aligned;
 mul.lo.s32 %r30, %r26, 72;
 add.s32 %r31, %r30, %r1;
 mul.wide.u32 %rd2, %r31, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.u32 [%rd3], %r13;
 @%p1 bra DONE;
 ld.shared.u32 %r40, [buf+256];
 ld.shared.u32 %r41, [buf+260];
 mov.u32 %r42, %clusterid.x;
 mov.u32 %r43, %clusterid.y;
 mov.u32 %r44, %clusterid.z;
 mov.u32 %r45, %cluster_ctaid.y;
 mov.u32 %r46, %nclusterid.x;
 mul.wide.u32 %rd4, %r30, 4;
 add.s64 %rd5, %rd1, %rd4;
 st.global.u32 [%rd5+256], %r40;
 st.global.u32 [%rd5+260], %r41;
 st.global.u32 [%rd5+264], %r2;
 st.global.u32 [%rd5+268], %r42;
 st.global.u32 [%rd5+272], %r43;
 st.global.u32 [%rd5+276], %r44;
 st.global.u32 [%rd5+280], %r45;
 st.global.u32 [%rd5+284], %r46;
DONE:
 ret;
}
"""


def _rec(ptx, grid, cluster, out_shape, *, block=(NT, 1, 1), extra=None, params=None, buffers=None):
    d = {"format": "launch-record/1", "name": "t", "entry": "k", "grid": list(grid), "block": list(block),
         "cluster": list(cluster),
         "buffers": buffers or {"out": {"dtype": "uint32", "shape": list(out_shape), "init": "zeros"}},
         "params": params or [{"ptr": "out"}]}
    d.update(extra or {})
    return record_from_dict(d, ptx_text=ptx)


def _expected_exchange(grid, cluster):
    gx, gy, gz = grid
    cx, cy, cz = cluster
    n = cx * cy * cz
    out = np.zeros((gx * gy * gz, 72), np.int64)
    for z in range(gz):
        for y in range(gy):
            for x in range(gx):
                lin = x + gx * (y + gy * z)
                rank = (x % cx) + cx * ((y % cy) + cy * (z % cz))
                p = (rank + 1) % n
                px, py, pz = p % cx, (p // cx) % cy, p // (cx * cy)
                plin = (x - x % cx + px) + gx * ((y - y % cy + py) + gy * (z - z % cz + pz))
                out[lin, :NT] = plin * 1000 + np.arange(NT)
                out[lin, 64] = n * NT if rank == 0 else 0
                out[lin, 65] = n * (NT * (NT - 1) // 2) if rank == 0 else 0
                out[lin, 66] = rank
                out[lin, 67:70] = (x // cx, y // cy, z // cz)
                out[lin, 70] = y % cy
                out[lin, 71] = gx // cx
    return out


@pytest.mark.parametrize("grid,cluster", [((4, 1, 1), (2, 1, 1)), ((4, 2, 1), (2, 2, 1)), ((2, 1, 8), (1, 1, 4)),
                                          ((6, 2, 2), (3, 1, 2))])
@pytest.mark.parametrize("lanes", [1 << 16, 64])      # one batch, or one CTA's lanes (a batch is one cluster)
def test_cluster_shapes_match_numpy(grid, cluster, lanes):
    n_cta = int(np.prod(grid))
    rec = _rec(EXCHANGE, grid, cluster, (n_cta, 72))
    out = run_functional(rec, max_lanes=lanes).outputs["out"].astype(np.int64)
    np.testing.assert_array_equal(out, _expected_exchange(grid, cluster))


def test_reqnctapercluster_directive_sets_the_shape():
    ptx = EXCHANGE.replace(".entry k(.param .u64 k_p0)", ".entry k(.param .u64 k_p0)\n.reqnctapercluster 2, 2, 1")
    rec = _rec(ptx, (4, 2, 1), (1, 1, 1), (8, 72))
    out = run_functional(rec).outputs["out"].astype(np.int64)
    np.testing.assert_array_equal(out, _expected_exchange((4, 2, 1), (2, 2, 1)))
    with pytest.raises(RecordError, match="reqnctapercluster"):
        run_functional(_rec(ptx, (4, 2, 1), (4, 1, 1), (8, 72)))


def test_explicitcluster_without_shape_and_bad_shapes_are_errors():
    ptx = EXCHANGE.replace(".entry k(.param .u64 k_p0)", ".entry k(.param .u64 k_p0)\n.explicitcluster")
    with pytest.raises(RecordError, match="explicitcluster"):
        run_functional(_rec(ptx, (4, 1, 1), (1, 1, 1), (4, 72)))
    with pytest.raises(RecordError, match="whole number of clusters"):
        run_functional(_rec(EXCHANGE, (3, 1, 1), (2, 1, 1), (3, 72)))
    with pytest.raises(RecordError, match="non_portable"):
        run_functional(_rec(EXCHANGE, (16, 1, 1), (16, 1, 1), (16, 72)))
    # 16 with the non-portable attribute is fine (H100/H200)
    out = run_functional(_rec(EXCHANGE, (16, 1, 1), (16, 1, 1), (16, 72),
                              extra={"non_portable_cluster_size": True})).outputs["out"].astype(np.int64)
    np.testing.assert_array_equal(out, _expected_exchange((16, 1, 1), (16, 1, 1)))


def test_mapa_rank_outside_the_cluster_is_a_fault():
    ptx = EXCHANGE.replace("rem.u32 %r11, %r10, %r3;", "add.u32 %r11, %r3, 0;")
    with pytest.raises(SimulationError, match="outside the cluster"):
        run_functional(_rec(ptx, (4, 1, 1), (2, 1, 1), (4, 72)))


# barrier.cluster ordering: rank 0 stores into every other rank's buffer only after a long loop (the functional
# scheduler lets the other CTAs run ahead meanwhile); they read their own buffer after barrier.cluster.wait
ORDER = HEAD + """.visible .entry k(.param .u64 k_p0)
{
 .reg .pred %p<4>;
 .reg .b32 %r<32>;
 .reg .b64 %rd<8>;
 .shared .align 16 .b8 buf[256];
 ld.param.u64 %rd1, [k_p0];
 mov.u32 %r1, %tid.x;
 mov.u32 %r2, %cluster_ctarank;
 mov.u32 %r3, %cluster_nctarank;
 mov.u32 %r5, buf;
 shl.b32 %r6, %r1, 2;
 add.s32 %r7, %r5, %r6;
 st.shared.u32 [%r7], 7;
 barrier.cluster.arrive.relaxed.aligned;
 barrier.cluster.wait.aligned;
 setp.ne.u32 %p1, %r2, 0;
 @%p1 bra SKIP;
 mov.u32 %r10, 0;
LOOP:
 add.s32 %r10, %r10, 1;
 setp.lt.u32 %p2, %r10, 3000;
 @%p2 bra LOOP;
 mov.u32 %r11, 1;
PEERS:
 mapa.shared::cluster.u32 %r12, %r7, %r11;
 add.s32 %r13, %r1, %r10;
 st.shared::cluster.u32 [%r12], %r13;
 add.s32 %r11, %r11, 1;
 setp.lt.u32 %p3, %r11, %r3;
 @%p3 bra PEERS;
SKIP:
 barrier.cluster.arrive.aligned;
 barrier.cluster.wait.aligned;
 ld.shared.u32 %r20, [%r7];
 mov.u32 %r21, %ctaid.x;
 mad.lo.s32 %r22, %r21, 32, %r1;
 mul.wide.u32 %rd2, %r22, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.u32 [%rd3], %r20;
 ret;
}
"""


def test_barrier_cluster_orders_remote_stores_before_the_wait():
    rec = _rec(ORDER, (8, 1, 1), (4, 1, 1), (8, 32), block=(32, 1, 1))
    out = run_functional(rec, max_steps=200_000).outputs["out"].astype(np.int64)
    rank = np.arange(8) % 4
    exp = np.where(rank[:, None] == 0, 7, 3000 + np.arange(32)[None, :])
    np.testing.assert_array_equal(out, exp)


def test_barrier_cluster_deadlock_is_reported():
    # rank 1 exits... no: only rank 0 arrives, rank 1 waits without arriving first -> never completes
    ptx = ORDER.replace(" barrier.cluster.arrive.relaxed.aligned;\n", "")
    ptx = ptx.replace(" setp.ne.u32 %p1, %r2, 0;\n @%p1 bra SKIP;",
                      " setp.ne.u32 %p1, %r2, 0;\n @%p1 bra WAITONLY;\n barrier.cluster.arrive.aligned;\nWAITONLY:\n"
                      " @%p1 bra SKIP;")
    ptx = ptx.replace("SKIP:\n barrier.cluster.arrive.aligned;\n barrier.cluster.wait.aligned;",
                      "SKIP:\n barrier.cluster.wait.aligned;")
    with pytest.raises(SimulationError, match="barrier.cluster"):
        run_functional(_rec(ptx, (2, 1, 1), (2, 1, 1), (2, 32), block=(32, 1, 1)), max_steps=200_000)


# remote mbarrier arrive + shared::cta -> shared::cluster bulk copy: every rank copies its 256-B buffer into
# rank (r+1)%n's inbox and completes the tx on the destination's mbarrier; rank r also arrives remotely on
# rank (r+1)%n's barrier (count 2: the local thread's arrive.expect_tx + the remote arrive)
BULK = HEAD + """.visible .entry k(.param .u64 k_p0)
{
 .reg .pred %p<4>;
 .reg .b32 %r<40>;
 .reg .b64 %rd<8>;
 .shared .align 16 .b8 src[256];
 .shared .align 16 .b8 inbox[256];
 .shared .align 8 .b64 bar;
 ld.param.u64 %rd1, [k_p0];
 mov.u32 %r1, %tid.x;
 mov.u32 %r2, %cluster_ctarank;
 mov.u32 %r3, %cluster_nctarank;
 mov.u32 %r4, %ctaid.x;
 mov.u32 %r5, src;
 shl.b32 %r6, %r1, 2;
 add.s32 %r7, %r5, %r6;
 mad.lo.s32 %r8, %r4, 100, %r1;
 st.shared.u32 [%r7], %r8;
 setp.ne.u32 %p1, %r1, 0;
 @%p1 bra W1;
 mov.u32 %r9, bar;
 mbarrier.init.shared::cta.b64 [%r9], 2;
 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r9], 256;
W1:
 barrier.cluster.arrive.aligned;
 barrier.cluster.wait.aligned;
 @%p1 bra W2;
 add.s32 %r10, %r2, 1;
 rem.u32 %r11, %r10, %r3;
 mov.u32 %r12, inbox;
 mapa.shared::cluster.u32 %r13, %r12, %r11;
 mov.u32 %r14, bar;
 mapa.shared::cluster.u32 %r15, %r14, %r11;
 cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r13], [%r5], 256, [%r15];
 mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r15];
W2:
 mov.u32 %r16, bar;
WAIT:
 mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r16], 0;
 @!%p2 bra WAIT;
 mov.u32 %r17, inbox;
 add.s32 %r18, %r17, %r6;
 ld.shared.u32 %r19, [%r18];
 mad.lo.s32 %r20, %r4, 64, %r1;
 mul.wide.u32 %rd2, %r20, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.u32 [%rd3], %r19;
 barrier.cluster.arrive.aligned;
 barrier.cluster.wait.aligned;
 ret;
}
"""


@pytest.mark.parametrize("grid,cluster", [((4, 1, 1), (2, 1, 1)), ((4, 1, 1), (4, 1, 1))])
def test_bulk_copy_to_peer_and_remote_arrive(grid, cluster):
    rec = _rec(BULK, grid, cluster, (4, 64))
    res = run_functional(rec)
    out = res.outputs["out"].astype(np.int64)
    n = cluster[0]
    cta = np.arange(4)
    src = cta - cta % n + ((cta % n) - 1) % n               # who copied into my inbox
    np.testing.assert_array_equal(out, src[:, None] * 100 + np.arange(64)[None, :])
    # trace payloads: the copy carries the destination CTA's mbarrier key; the remote arrive's key names it too
    tr = res.trace
    prog = rec.program()
    pc_copy = next(i.index for i in prog.instructions if i.opcode == "cp.async.bulk")
    pc_arr = next(i.index for i in prog.instructions if i.opcode == "mbarrier.arrive" and "shared::cluster" in i.mods)
    for c in range(4):
        ws = tr.warp_stream(c * 1 + 0)       # warp 0 of CTA c (64 threads = 2 warps -> g = 2c)
        ws = tr.warp_stream(2 * c)
        k = list(ws.pc).index(pc_copy)
        dst = c - c % n + (c % n + 1) % n
        assert ws.a0[k] == 256 and ws.a1[k] >> 32 == dst
        k2 = list(ws.pc).index(pc_arr)
        assert ws.a1[k2] >> 32 == dst and ws.a2[k2] == 1


# TMA multicast: rank 0 of each cluster of 2 loads the box once with ctaMask 0b11; both CTAs' smem get it and
# both CTAs' mbarriers (same offset) see complete_tx
MCAST = HEAD + """.visible .entry k(.param .align 64 .b8 k_p0[128], .param .u64 k_p1)
{
 .reg .pred %p<4>;
 .reg .b32 %r<40>;
 .reg .b64 %rd<8>;
 .reg .b16 %rs<4>;
 .shared .align 128 .b8 tile[1024];
 .shared .align 8 .b64 bar;
 mov.u64 %rd1, k_p0;
 ld.param.u64 %rd2, [k_p1];
 mov.u32 %r1, %tid.x;
 mov.u32 %r2, %cluster_ctarank;
 mov.u32 %r4, %clusterid.x;
 mov.u32 %r9, bar;
 setp.ne.u32 %p1, %r1, 0;
 @%p1 bra W1;
 mbarrier.init.shared::cta.b64 [%r9], 1;
 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r9], 1024;
W1:
 barrier.cluster.arrive.aligned;
 barrier.cluster.wait.aligned;
 setp.ne.u32 %p3, %r2, 0;
 or.pred %p3, %p3, %p1;
 @%p3 bra W2;
 mov.u32 %r5, tile;
 shl.b32 %r6, %r4, 4;
 mov.u32 %r7, 0;
 mov.b16 %rs1, 3;
 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r5], [%rd1, {%r7, %r6}], [%r9], %rs1;
W2:
WAIT:
 mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r9], 0;
 @!%p2 bra WAIT;
 mov.u32 %r10, tile;
 shl.b32 %r11, %r1, 4;
 add.s32 %r12, %r10, %r11;
 ld.shared.v4.u32 {%r20, %r21, %r22, %r23}, [%r12];
 mov.u32 %r13, %ctaid.x;
 mad.lo.s32 %r14, %r13, 64, %r1;
 mul.wide.u32 %rd3, %r14, 16;
 add.s64 %rd4, %rd2, %rd3;
 st.global.v4.u32 [%rd4], {%r20, %r21, %r22, %r23};
 barrier.cluster.arrive.aligned;
 barrier.cluster.wait.aligned;
 ret;
}
"""


def test_tma_multicast_delivers_one_box_to_every_cta_of_the_mask():
    a = {"dtype": "float32", "shape": [32, 16], "init": {"uniform": [-1, 1]}}
    rec = _rec(MCAST, (4, 1, 1), (2, 1, 1), None,
               buffers={"a": a, "out": {"dtype": "float32", "shape": [4, 256], "init": "zeros"}},
               params=[{"tensormap": {"buffer": "a", "box": [16, 16], "swizzle_bytes": 0}}, {"ptr": "out"}])
    res = run_functional(rec)
    from warpgraph.workloads.memory import DeviceMemory
    av = DeviceMemory.from_record(rec, 0, init_values=True).outputs()["a"].reshape(32, 16)
    out = res.outputs["out"].reshape(4, 16, 16)
    for c in range(4):
        np.testing.assert_array_equal(out[c], av[16 * (c // 2):16 * (c // 2) + 16])
    # the issuing warp's payload: one box of bytes, the mask in a2 bits 40+
    prog = rec.program()
    pc = next(i.index for i in prog.instructions if i.opcode == "cp.async.bulk.tensor")
    ws = res.trace.warp_stream(0)
    k = list(ws.pc).index(pc)
    assert ws.a0[k] == 1024 and (ws.a2[k] >> 40) == 3 and (ws.a3[k] & 0xFFFFFFFF) == 1024
    assert pc not in list(res.trace.warp_stream(2).pc)      # rank 1 issued nothing


def test_cluster_limits_are_user_errors():
    with pytest.raises(UserError):
        run_functional(_rec(EXCHANGE, (4, 1, 1), (0, 1, 1), (4, 72)))


def test_cluster_barrier_releases_a_cluster_only_when_all_its_live_threads_arrived():
    from warpgraph.workloads.functional.cluster import ClusterBarrier

    lpc, size, n_cta = 64, 2, 4                    # 2 clusters of 2 CTAs, 64 lanes each
    live = np.ones(n_cta * lpc, bool)
    live[lpc - 8:lpc] = False                      # CTA 0's last 8 lanes exited
    cb = ClusterBarrier(n_cta, lpc, size)
    wait = np.zeros(n_cta * lpc, bool)
    wait[:lpc - 8] = True                          # CTA 0's live lanes arrive and wait
    cb.arrive(wait)
    assert not cb.release(wait, live).any()        # CTA 1 (same cluster) has not arrived
    c1 = np.zeros_like(wait)
    c1[lpc:2 * lpc - 1] = True                     # all of CTA 1 but one lane
    cb.arrive(c1)
    assert not cb.release(wait | c1, live).any()
    c1[2 * lpc - 1] = True
    cb.arrive(c1)
    c2 = np.zeros_like(wait)
    c2[2 * lpc:] = True                            # the other cluster waits without arriving
    go = cb.release(wait | c1 | c2, live)
    np.testing.assert_array_equal(go, wait | c1)   # cluster 0 only
    assert not cb.release(wait | c1, live).any()   # a new phase: nobody arrived yet


# cooperative_groups' map_shared_rank compiles to generic mapa + plain ld/st: the same exchange through generic
# addresses, plus getctarank on both address forms
GENERIC = HEAD + """.visible .entry k(.param .u64 k_p0)
{
 .reg .pred %p<4>;
 .reg .b32 %r<32>;
 .reg .b64 %rd<16>;
 .shared .align 16 .b8 buf[256];
 ld.param.u64 %rd1, [k_p0];
 mov.u32 %r1, %tid.x;
 mov.u32 %r2, %cluster_ctarank;
 mov.u32 %r3, %cluster_nctarank;
 mov.u32 %r4, %ctaid.x;
 mov.u32 %r5, buf;
 shl.b32 %r6, %r1, 2;
 add.s32 %r7, %r5, %r6;
 mad.lo.s32 %r8, %r4, 1000, %r1;
 st.shared.u32 [%r7], %r8;
 barrier.cluster.arrive.aligned;
 barrier.cluster.wait.aligned;
 cvt.u64.u32 %rd2, %r7;
 cvta.shared.u64 %rd3, %rd2;
 add.s32 %r9, %r2, 1;
 rem.u32 %r10, %r9, %r3;
 mapa.u64 %rd4, %rd3, %r10;
 ld.u32 %r11, [%rd4];
 getctarank.u64 %r12, %rd4;
 mapa.shared::cluster.u32 %r13, %r7, %r10;
 getctarank.shared::cluster.u32 %r14, %r13;
 getctarank.shared::cluster.u32 %r15, %r7;
 barrier.cluster.arrive.aligned;
 barrier.cluster.wait.aligned;
 mad.lo.s32 %r16, %r4, 32, %r1;
 mul.wide.u32 %rd5, %r16, 16;
 add.s64 %rd6, %rd1, %rd5;
 st.global.v4.u32 [%rd6], {%r11, %r12, %r14, %r15};
 ret;
}
"""


def test_generic_mapa_and_getctarank():
    rec = _rec(GENERIC, (4, 1, 1), (4, 1, 1), (4, 32, 4), block=(32, 1, 1))
    out = run_functional(rec).outputs["out"].astype(np.int64)
    rank = np.arange(4)
    peer = (rank + 1) % 4
    np.testing.assert_array_equal(out[:, :, 0], peer[:, None] * 1000 + np.arange(32)[None, :])
    np.testing.assert_array_equal(out[:, :, 1], np.repeat(peer[:, None], 32, 1))
    np.testing.assert_array_equal(out[:, :, 2], np.repeat(peer[:, None], 32, 1))
    np.testing.assert_array_equal(out[:, :, 3], np.repeat(rank[:, None], 32, 1))


def test_barrier_cluster_waits_at_different_pcs_are_one_barrier():
    # rank 0 and rank 1 wait at different barrier.cluster.wait instructions: one phase of the same barrier
    ptx = HEAD + """.visible .entry k(.param .u64 k_p0)
{
 .reg .pred %p<4>;
 .reg .b32 %r<16>;
 .reg .b64 %rd<8>;
 .shared .align 4 .b8 buf[128];
 ld.param.u64 %rd1, [k_p0];
 mov.u32 %r1, %tid.x;
 mov.u32 %r2, %cluster_ctarank;
 mov.u32 %r5, buf;
 shl.b32 %r6, %r1, 2;
 add.s32 %r7, %r5, %r6;
 xor.b32 %r3, %r2, 1;
 mapa.shared::cluster.u32 %r8, %r7, %r3;
 add.s32 %r9, %r1, 50;
 st.shared::cluster.u32 [%r8], %r9;
 setp.eq.u32 %p1, %r2, 0;
 @%p1 bra A;
 barrier.cluster.arrive.aligned;
 barrier.cluster.wait.aligned;
 bra.uni B;
A:
 barrier.cluster.arrive.aligned;
 barrier.cluster.wait.aligned;
B:
 ld.shared.u32 %r10, [%r7];
 mov.u32 %r11, %ctaid.x;
 mad.lo.s32 %r12, %r11, 32, %r1;
 mul.wide.u32 %rd2, %r12, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.u32 [%rd3], %r10;
 ret;
}
"""
    out = run_functional(_rec(ptx, (2, 1, 1), (2, 1, 1), (2, 32), block=(32, 1, 1))).outputs["out"]
    np.testing.assert_array_equal(out.astype(np.int64), np.tile(np.arange(32) + 50, (2, 1)))

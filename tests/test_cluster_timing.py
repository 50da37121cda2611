"""Clusters in the timing pass: whole clusters placed on distinct SMs of one GPC (components/cta_scheduler.py),
oversize clusters refused (exit 2), barrier.cluster releasing a cluster only after its last arrival."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import warpgraph as wg
from warpgraph.components.cta_scheduler import CtaScheduler
from warpgraph.components.structural import gpc_of_sms
from warpgraph.core.errors import RecordError
from warpgraph.runner.timing import run_timing
from warpgraph.workloads.functional import run_functional
from warpgraph.workloads.functional.cluster import cluster_members
from warpgraph.workloads.record import record_from_dict

from test_cluster_functional import BULK, EXCHANGE, HEAD, MCAST, _rec


def _placements(rec, spec):
    res = run_functional(rec)
    out = run_timing(res.trace, spec, record=rec)
    return out.core.placed, out


@pytest.mark.parametrize("grid,cluster", [((8, 1, 1), (2, 1, 1)), ((8, 4, 1), (2, 2, 1)), ((2, 1, 8), (1, 1, 4))])
def test_clusters_run_on_distinct_sms_of_one_gpc(grid, cluster):
    spec = wg.load_arch("h200")
    n = int(np.prod(grid))
    placed, out = _placements(_rec(EXCHANGE, grid, cluster, (n, 72)), spec)
    gpc = gpc_of_sms(spec.fabric, spec.sm.count)
    for m in cluster_members(grid, cluster):
        sms = [placed[c] for c in m]
        assert len(set(sms)) == len(sms)
        assert len({gpc[s] for s in sms}) == 1
    assert out.core.dsm_ops > 0 and out.core.dsm.bytes > 0     # the remote loads went over the fabric


def test_scheduler_launches_a_cluster_only_when_all_its_ctas_fit():
    # 2 GPCs of 3 SMs, one CTA slot per SM, clusters of 3
    s = CtaScheduler.standalone(9, 6, 1).set_clusters([[0, 1, 2], [3, 4, 5], [6, 7, 8]], [0, 0, 0, 1, 1, 1])
    first = s.initial()
    assert sorted(c for c, _ in first) == [0, 1, 2, 3, 4, 5]
    assert {sm for c, sm in first if c < 3} == {0, 1, 2}
    assert s.on_retire(0) is None and s.on_retire(1) is None      # one GPC has 2 free SMs: not enough
    third = s.on_retire(2)
    assert sorted(third) == [(6, 0), (7, 1), (8, 2)]


def test_oversize_cluster_is_refused():
    rec = _rec(EXCHANGE, (16, 1, 1), (16, 1, 1), (16, 72), extra={"non_portable_cluster_size": True})
    with pytest.raises(RecordError, match="maximum cluster size 8"):
        wg.simulate(rec, "h200", overrides={"fabric.max_cluster_size": 8})
    small = wg.load_arch("h200", overrides={"sm.count": 96, "fabric.sms_per_gpc": [12] * 8})
    with pytest.raises(RecordError, match="largest GPC has 12 SMs"):
        wg.simulate(rec, small)


def test_oversize_cluster_exits_2_on_the_cli(tmp_path):
    import json
    d = tmp_path / "rec"
    d.mkdir()
    (d / "kernel.ptx").write_text(EXCHANGE)
    (d / "launch.json").write_text(json.dumps({
        "format": "launch-record/1", "name": "big", "entry": "k", "grid": [16, 1, 1], "block": [64, 1, 1],
        "cluster": [16, 1, 1], "non_portable_cluster_size": True,
        "buffers": {"out": {"dtype": "uint32", "shape": [16, 72], "init": "zeros"}}, "params": [{"ptr": "out"}]}))
    p = subprocess.run([sys.executable, "-m", "warpgraph", "run", str(d), "--set", "fabric.max_cluster_size=8"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "cluster" in (p.stdout + p.stderr) and "Traceback" not in p.stderr


# barrier.cluster in time: cluster 0's rank 0 spins before it arrives; every CTA reads %clock before arriving and
# after the wait. Cluster 0's CTAs leave the wait only after that arrival (+ the barrier latency); cluster 1 does
# not wait for cluster 0.
CLOCKED = HEAD + """.visible .entry k(.param .u64 k_p0)
{
 .reg .pred %p<4>;
 .reg .b32 %r<32>;
 .reg .b64 %rd<16>;
 ld.param.u64 %rd1, [k_p0];
 mov.u32 %r1, %tid.x;
 mov.u32 %r2, %cluster_ctarank;
 mov.u32 %r3, %clusterid.x;
 or.b32 %r4, %r2, %r3;
 setp.ne.u32 %p1, %r4, 0;
 @%p1 bra SKIP;
 mov.u32 %r10, 0;
LOOP:
 add.s32 %r10, %r10, 1;
 setp.lt.u32 %p2, %r10, 400;
 @%p2 bra LOOP;
SKIP:
 mov.u64 %rd5, %clock64;
 barrier.cluster.arrive.aligned;
 barrier.cluster.wait.aligned;
 mov.u64 %rd6, %clock64;
 setp.ne.u32 %p3, %r1, 0;
 @%p3 bra DONE;
 mov.u32 %r20, %ctaid.x;
 mul.wide.u32 %rd2, %r20, 16;
 add.s64 %rd3, %rd1, %rd2;
 st.global.u64 [%rd3], %rd5;
 st.global.u64 [%rd3+8], %rd6;
DONE:
 ret;
}
"""


def test_barrier_cluster_releases_after_the_last_arrival_of_its_own_cluster():
    spec = wg.load_arch("h200")
    rec = record_from_dict({"format": "launch-record/1", "name": "clk", "entry": "k", "grid": [4, 1, 1],
                            "block": [64, 1, 1], "cluster": [2, 1, 1],
                            "buffers": {"out": {"dtype": "uint64", "shape": [4, 2], "init": "zeros"}},
                            "params": [{"ptr": "out"}]}, ptx_text=CLOCKED)
    out = wg.simulate(rec, spec, want_outputs=True).outputs["out"].astype(np.int64)
    before, after = out[:, 0], out[:, 1]
    lat = spec.fabric.cluster_barrier_latency_cycles
    spin = before[0] - before[1]            # rank 0 of cluster 0 arrived this much later than its peer
    assert spin > 400                       # 400 dependent loop iterations
    assert after[0] >= before[0] + lat and after[1] >= before[0] + lat
    assert after[1] - before[1] > spin      # the peer waited for the late arrival
    assert (after[2:] - before[2:] < spin).all()     # cluster 1 did not wait for cluster 0


def test_multicast_reads_l2_once_and_delivers_every_copy_over_the_fabric():
    spec = wg.load_arch("h200")
    a = {"dtype": "float32", "shape": [32, 16], "init": {"uniform": [-1, 1]}}
    rec = _rec(MCAST, (4, 1, 1), (2, 1, 1), None,
               buffers={"a": a, "out": {"dtype": "float32", "shape": [4, 256], "init": "zeros"}},
               params=[{"tensormap": {"buffer": "a", "box": [16, 16], "swizzle_bytes": 0}}, {"ptr": "out"}])
    _, out = _placements(rec, spec)
    tma, dsm = out.core.tma, out.core.dsm
    assert tma.n_loads == 2 and tma.bytes_loaded == 2 * 1024          # one box per cluster from L2
    assert dsm.multicast_bytes == 4 * 1024 and dsm.bytes == 2 * 1024   # 4 copies, 2 of them to the peer SM


def test_bulk_copy_to_peer_goes_over_the_fabric_and_one_plane_is_slower():
    rec = _rec(BULK, (4, 1, 1), (2, 1, 1), (4, 64))
    _, both = _placements(rec, wg.load_arch("h200"))
    _, one = _placements(rec, wg.load_arch("h200", overrides={"fabric.gx_planes_enabled": 1}))
    assert both.core.dsm.bytes == one.core.dsm.bytes >= 4 * 256        # 4 copies of 256 B + arrive messages
    assert one.core.dsm.stats()["busy_cycles"] == pytest.approx(2 * both.core.dsm.stats()["busy_cycles"])
    assert one.metrics["cycles"] >= both.metrics["cycles"]


def test_portable_limit_comes_from_the_architecture():
    rec = _rec(EXCHANGE, (8, 1, 1), (8, 1, 1), (8, 72))
    with pytest.raises(RecordError, match="maximum cluster size 4"):
        wg.simulate(rec, "h200", overrides={"fabric.max_portable_cluster_size": 4})

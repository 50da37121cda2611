"""DSM fabric parameters that the H200 DSM measurements fill in (fabric section of topologies/h100.yaml): latency vs
CTA distance (CPC crossing), multicast delivery through the receivers' or the sender's link share."""
from __future__ import annotations

import pytest

import warpgraph as wg
from warpgraph.components.dsm import DsmFabric


def test_cpc_layout_follows_the_gpc_major_sm_ids():
    s = wg.load_arch("h200")
    d = DsmFabric(s)
    per = s.fabric.sms_per_gpc
    assert d.cpc_of(0) == (0, 0) and d.cpc_of(s.fabric.sms_per_cpc) == (0, 1)
    assert d.cpc_of(per[0]) == (1, 0)                       # the first SM of GPC 1 starts its CPC 0
    assert d.cpc_of(sum(per) - 1) == (len(per) - 1, (per[-1] - 1) // s.fabric.sms_per_cpc)


def test_cross_cpc_latency_applies_only_across_cpcs():
    x = 40
    s = wg.load_arch("h200", overrides={"fabric.dsm_latency_cross_cpc_cycles": x})
    d = DsmFabric(s)
    base = s.fabric.dsm_latency_cycles
    near, far = 1, s.fabric.sms_per_cpc                      # SM 1 shares SM 0's CPC, SM 6 does not
    assert d.latency(0, near) == base and d.latency(0, far) == base + x
    assert d.transfer(0, 0, far, 64) - d.transfer(10_000, 0, near, 64) + 10_000 == x


@pytest.mark.parametrize("mode", ["receiver", "sender"])
def test_multicast_fanout_bandwidth_by_delivery_mode(mode):
    s = wg.load_arch("h200", overrides={"fabric.dsm_multicast_delivery": mode})
    d = DsmFabric(s)
    nbytes, fan = 8192, 4
    ends = [d.deliver(0, 0, dst, nbytes) for dst in range(1, 1 + fan)]
    one = nbytes / d.sm_cap + s.fabric.dsm_multicast_extra_latency_cycles
    if mode == "receiver":      # every copy through its own receiver's share: parallel
        assert max(ends) == pytest.approx(one, abs=1)
    else:                       # through the issuer's share, one after the other
        assert max(ends) == pytest.approx(fan * nbytes / d.sm_cap + s.fabric.dsm_multicast_extra_latency_cycles, abs=1)
    assert d.deliver(0, 0, 0, nbytes) == s.fabric.dsm_multicast_extra_latency_cycles   # the issuer's own copy

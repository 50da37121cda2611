"""Component graph (Contract 4): node/edge counts derived from the spec, names, attributes."""
import pytest

from warpgraph.components.base import Component
from warpgraph.core.errors import SpecError
from warpgraph.topologies import build_graph, graph_summary, load_arch
from warpgraph.topologies.builder import sm_layout, to_dot, to_graphml


@pytest.fixture(scope="module")
def h200_graph():
    return load_arch("h200"), build_graph(load_arch("h200"))


def test_h200_counts(h200_graph):
    spec, g = h200_graph
    s = graph_summary(g)
    r = s["roles"]
    assert r["sm"] == 132 and r["subpartition"] == 132 * 4
    for role in ("tma", "mbarrier", "tensor_core", "shared_memory", "l1"):
        assert r[role] == 132
    assert r["gpc"] == 8 and r["cpc"] == 24 and r["gx_plane"] == 2 and r["xbar"] == 1
    assert r["l2_slice"] == 188 and r["hbm_channel"] == 94
    assert s["nodes"] == 1 + 1 + 2 + 8 + 24 + 132 * (1 + 4 + 5) + 188 + 94
    rel = s["relations"]
    assert rel["contains"] == 24 + 132 * (1 + 4 + 5)
    assert rel["dispatch"] == 132
    assert rel["link"] == 2 * (24 * 2 + 132 * 2 + 188 * 2)


def test_contract_node_names_and_attrs(h200_graph):
    spec, g = h200_graph
    for n in ["gpc0", "gpc0.cpc0", "sm17", "sm17.sp2", "sm17.tma", "sm17.mbarrier", "sm17.tensor", "sm17.smem",
              "gx0", "xbar", "l2.s31", "hbm.c4"]:
        assert n in g, n
        d = g.nodes[n]
        assert {"role", "kind", "component"} <= set(d)
        assert isinstance(d["component"], Component) and d["component"].name == n
    assert g.nodes["sm17.tensor"]["kind"] == "wgmma"
    assert g.nodes["sm17.tma"]["component"].param("admission_depth") == spec.tma.admission_depth
    for a, b, d in g.edges(data=True):
        assert "latency_cycles" in d and "bandwidth_bytes_per_cycle" in d
    e = g.edges["xbar", "l2.s0"]
    assert (e["latency_cycles"] == spec.l2.near_latency_cycles
            and e["bandwidth_bytes_per_cycle"] == spec.l2.bytes_per_cycle_per_slice)


def test_sm_layout_follows_fabric():
    spec = load_arch("h200")
    lay = sm_layout(spec)
    assert len(lay) == 132
    per_gpc = [sum(1 for g, _ in lay if g == i) for i in range(8)]
    assert per_gpc == [16, 16, 16, 16, 16, 16, 18, 18]
    assert max(sum(1 for x in lay if x == (g, c)) for g in range(8) for c in range(3)) <= 6
    b200 = sm_layout(load_arch("b200"))
    assert len(b200) == 148 and len(set(b200)) <= 8 * 4


@pytest.mark.parametrize("name", ["h100", "b200", "rtx5090"])
def test_other_archs_build(name):
    spec = load_arch(name)
    s = graph_summary(build_graph(spec))
    assert s["roles"]["subpartition"] == spec.sm.count * spec.sm.subpartitions
    assert s["roles"]["l2_slice"] == spec.l2.slices


def test_overrides_change_the_graph():
    g = build_graph(load_arch("h200", ["sm.count=16", "fabric.sms_per_gpc=[2,2,2,2,2,2,2,2]", "l2.slices=8",
                                       "hbm.channels=4"]))
    s = graph_summary(g)
    assert s["roles"]["subpartition"] == 64 and s["roles"]["l2_slice"] == 8 and s["roles"]["hbm_channel"] == 4


def test_exports(h200_graph):
    _, g = h200_graph
    assert to_graphml(g).count("<node ") == g.number_of_nodes()
    dot = to_dot(g)
    assert dot.startswith('digraph "h200"') and '"sm17" -> "sm17.sp2"' in dot

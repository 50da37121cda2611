"""DSM timing over the GPC fabric (components/dsm.py through the SM core's cluster branch): the bundled DSM
microbenchmark records slow down by what the fabric model predicts when a GX plane is disabled in YAML, and a
kernel without clusters does not change at all."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import warpgraph as wg
from warpgraph.components.dsm import DsmFabric

MB = Path(wg.__file__).parent / "workloads" / "microbench"


def _bytes_per_cta(rec) -> int:
    """dsm_bw moves blockDim x 16 B x 4 x iters per CTA (microbench/src/k_dsm.cu)."""
    iters = int(rec.params[2].value)
    return int(rec.block[0]) * 16 * 4 * iters


def _run(name, overrides=None):
    return wg.simulate(MB / name, "h200", want_outputs=True, overrides=overrides or {})


@pytest.mark.parametrize("name", ["dsm_bw_remote_store", "dsm_bw_remote_load"])
def test_one_gx_plane_slows_dsm_bandwidth_as_the_fabric_predicts(name):
    rec = wg.load_record(MB / name)
    spec2 = wg.load_arch("h200")
    spec1 = wg.load_arch("h200", overrides={"fabric.gx_planes_enabled": 1})
    # the model's per-SM DSM rate (bytes/cycle) with both planes and with one
    cap2, cap1 = DsmFabric(spec2).sm_cap, DsmFabric(spec1).sm_cap
    assert cap1 < cap2
    # bytes through each SM's shaper: stores send their payload; the two CTAs of a load pair each serve the
    # peer's payload and send their own command flits (dsm_read_command_bytes per 128 B)
    traffic = _bytes_per_cta(rec)
    if "load" in name:
        traffic *= 1 + spec2.fabric.dsm_read_command_bytes / 128
    both, one = _run(name), _run(name, {"fabric.gx_planes_enabled": 1})
    # the timed region (out[0]: clock delta of CTA 0) is bandwidth bound: it scales by cap2 / cap1
    d2, d1 = int(both.outputs["out"][0]), int(one.outputs["out"][0])
    assert d1 > d2
    assert d1 / d2 == pytest.approx(cap2 / cap1, rel=0.10)
    # the whole launch grows by the extra transfer time of one CTA's traffic
    extra = one.metrics["cycles"] - both.metrics["cycles"]
    assert extra == pytest.approx(traffic / cap1 - traffic / cap2, rel=0.15)
    # the fabric statistics name the plane that was switched off
    st = one.stats
    en = st[(st["component"] == "fabric.gx1") & (st["stat"] == "enabled")]["value"]
    assert list(en) == [0]


def test_dsm_microbenchmark_replays_match_the_h200_measurements():
    """Bundled H200 measurements (microbench/results/h200_2026-12-02.json, one cluster of 2): remote store / load
    bandwidth per SM and the dependent remote-load latency, within 10 %."""
    res = json.loads((Path(wg.__file__).parent / "microbench" / "results" / "h200_2026-12-02.json").read_text())

    def meas(bench, **params):
        for r in res["results"]:
            if r["bench"] == bench and all(r["params"].get(k) == v for k, v in params.items()):
                return r["stats"]
        raise KeyError(bench)

    for op in ("remote_store", "remote_load"):
        rec = wg.load_record(MB / f"dsm_bw_{op}")
        out = _run(f"dsm_bw_{op}").outputs["out"]
        bpc = _bytes_per_cta(rec) / int(out[0])
        want = meas("dsm_bandwidth", cluster=2, ctas=2, op=op)["bytes_per_cycle_per_sm_median"]
        assert bpc == pytest.approx(want, rel=0.10), op
    rec = wg.load_record(MB / "dsm_remote_latency")
    out = _run("dsm_remote_latency").outputs["out"]
    lat = int(out[0]) / int(out[1])
    assert lat == pytest.approx(meas("dsm_latency", target="remote")["latency_cycles"], rel=0.10)


@pytest.mark.parametrize("name", ["tma_4tx_pipelined", "smem_bandwidth"])
def test_disabling_a_gx_plane_changes_nothing_without_clusters(name):
    both, one = _run(name), _run(name, {"fabric.gx_planes_enabled": 1})
    assert one.metrics["cycles"] == both.metrics["cycles"]
    for k in ("warp_instructions", "stall_ratios_per_issue", "l2_bytes", "dram_read_bytes"):
        assert one.metrics[k] == both.metrics[k]
    a, b = both.stats, one.stats

    def sim(st):   # every simulated statistic (not the GX-plane rows, not wall-clock seconds)
        keep = ~st["component"].str.startswith("fabric.") & ~st["stat"].str.contains("seconds")
        return st[keep][["component", "stat", "value"]].values.tolist()
    assert sim(a) == sim(b)
    assert len(sim(a)) > 100

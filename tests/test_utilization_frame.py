"""analysis.utilization: bucketed utilisation from recorded events, sums conserved, PNG plot."""
import math

import numpy as np
import pytest

from warpgraph.analysis.utilization import plot_utilization, spread_amounts, union_busy, utilization_frame
from warpgraph.core.tracing import TraceRecorder


def test_spread_amounts_conserves_and_splits():
    v = spread_amounts([0, 50, 250, 300], [100, 150, 250, 1000], [100, 10, 7, 70], 0, 100, 10)
    assert v.sum() == pytest.approx(187)
    assert v[0] == pytest.approx(100 + 5) and v[1] == pytest.approx(5)
    assert v[2] == pytest.approx(7)  # zero-length: all in the bucket holding t0
    assert v[3:].sum() == pytest.approx(70) and v[3] == pytest.approx(10)
    # parts outside the buckets are dropped
    assert spread_amounts([-100], [100], [200], 0, 100, 1)[0] == pytest.approx(100)


def test_union_busy_merges_overlaps_per_key():
    u = union_busy({0: [(0, 50), (25, 75), (90, 100)], 1: [(0, 100)]}, 0, 100, 1)
    assert u[0] == pytest.approx(75 + 10 + 100)


def _rec():
    rec = TraceRecorder()
    rec.begin_launch(name="u", n_ctas=2, warps_per_cta=4, n_sms=2, subpartitions=4)
    for sm in (0, 1):
        rec.warp_active(sm, sm * 4, 0, 1000)          # one issue slot of 4 busy for 1000 cycles
        rec.tma_transaction(sm, None, 0, 0, 500, 4096, False)
        rec.tma_transaction(sm, None, 100, 200, 600, 4096, False)  # overlaps the first: union 0..600
        rec.tensor_op(sm, "wgmma", (sm, 0), 1000, 2000, 4096 * 1000)
    rec.traffic("hbm", 0, 2000, 2_000_000)
    rec.traffic("l2", 0, 1000, 1_000_000)
    rec.finish(2000)
    return rec


def test_frame_columns_and_sums():
    df = utilization_frame(_rec(), bucket_cycles=500, tensor_flop_per_cycle_per_sm=4096,
                           hbm_bytes_per_cycle=2000.0, l2_bytes_per_cycle=4000.0)
    assert list(df.columns[:7]) == ["t_start", "t_end", "issue_pct", "tensor_pct", "tma_pct", "hbm_pct", "l2_pct"]
    assert len(df) == 4 and df["t_start"].tolist() == [0, 500, 1000, 1500]
    assert df["issue_cycles"].sum() == pytest.approx(2000)
    assert df["tensor_flops"].sum() == pytest.approx(2 * 4096 * 1000)
    assert df["tma_busy_cycles"].sum() == pytest.approx(2 * 600)
    assert df["hbm_bytes"].sum() == pytest.approx(2_000_000)
    assert df["issue_pct"].tolist() == pytest.approx([25, 25, 0, 0])
    assert df["tensor_pct"].tolist() == pytest.approx([0, 0, 100, 100])
    assert df["tma_pct"].tolist() == pytest.approx([100, 20, 0, 0])
    assert df["hbm_pct"].tolist() == pytest.approx([50] * 4)
    assert df["l2_pct"].tolist() == pytest.approx([25, 25, 0, 0])


def test_frame_without_peaks_uses_busy_time_and_nan():
    df = utilization_frame(_rec(), bucket_cycles=1000)
    assert df["tensor_pct"].tolist() == pytest.approx([0, 100])
    assert df["hbm_pct"].isna().all()


def test_frame_from_spec_and_run_totals():
    from warpgraph.topologies import load_arch

    spec = load_arch("h200")
    df = utilization_frame(_rec(), bucket_cycles=1000, spec=spec)
    assert df.attrs["n_sms"] == 2  # the launch's SMs, not the spec's 132
    assert df["tensor_pct"].iloc[1] == pytest.approx(100 * 4096 / spec.tensor_core.dense_fp16_flop_per_cycle_per_sm)
    one = utilization_frame({"cycles": 1000, "warp_instructions": 132 * 4 * 500, "dram_read_bytes": 0,
                             "dram_write_bytes": spec.hbm_bytes_per_cycle * 1000, "tensor_utilization_pct": 12.0},
                            spec=spec)
    assert len(one) == 1 and one["issue_pct"][0] == pytest.approx(50)
    assert one["hbm_pct"][0] == pytest.approx(100) and one["tensor_pct"][0] == 12.0 and math.isnan(one["tma_pct"][0])


def test_plot_png(tmp_path):
    df = utilization_frame(_rec(), bucket_cycles=250, tensor_flop_per_cycle_per_sm=4096)
    p = plot_utilization(df, tmp_path / "u.png", title="synthetic", clock_mhz=1000)
    data = (tmp_path / "u.png").read_bytes()
    assert p == tmp_path / "u.png" and data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000


def test_sampled_runs_scale_gpu_wide_traffic():
    # a sampled run records its sampled SMs' HBM / L2 bytes; meta['gpu_traffic_scale'] (n_sms / sampled SMs,
    # runner/simulate.py) makes hbm_pct / l2_pct the whole GPU's
    rec = _rec()
    base = utilization_frame(rec, bucket_cycles=500, hbm_bytes_per_cycle=2000.0, l2_bytes_per_cycle=4000.0)
    rec.meta["gpu_traffic_scale"] = 4.0
    df = utilization_frame(rec, bucket_cycles=500, hbm_bytes_per_cycle=2000.0, l2_bytes_per_cycle=4000.0)
    assert df["hbm_pct"].tolist() == pytest.approx([4 * x for x in base["hbm_pct"]])
    assert df["l2_pct"].tolist() == pytest.approx([4 * x for x in base["l2_pct"]])
    assert df["issue_pct"].tolist() == pytest.approx(base["issue_pct"].tolist())   # per-SM columns unchanged

"""The functional pass's L2 residency model against the H200 L2 microbenchmark
(microbench/results/h200_l2_2026-12-02.json: Nsight Compute dram__bytes_* of streaming kernels)."""
import json
from pathlib import Path

import numpy as np
import pytest

from warpgraph import load_arch
from warpgraph.workloads.functional.l2model import L2Residency

MIB = 1 << 20
RESULTS = Path(__file__).resolve().parents[1] / "microbench" / "results" / "h200_l2_2026-12-02.json"


def _stream(l2, r_mib, w_mib, steps=512):
    """out = f(in) in block order (like rmsnorm / swiglu): each step reads its share of the input(s) and
    writes its share of the output."""
    rs, ws = r_mib * MIB // 32, w_mib * MIB // 32
    rb = np.linspace(0, rs, steps + 1).astype(np.int64)
    wb = np.linspace(0, ws, steps + 1).astype(np.int64)
    for k in range(steps):
        if rb[k + 1] > rb[k]:
            l2[np.arange(rb[k], rb[k + 1])] = True
        if wb[k + 1] > wb[k]:
            o = rs + np.arange(wb[k], wb[k + 1])
            l2[o] = True
            l2.dirty_view[o] = True


def _measured_stream():
    data = json.loads(RESULTS.read_text())
    rows = {}
    for e in data["results"]:
        if e.get("experiment") == "writeback" and e.get("dram_write_bytes") is not None and e.get("R"):
            rows.setdefault((e["R"] // MIB, e["W"] // MIB), []).append(e["dram_write_bytes"] / MIB)
    return {k: float(np.median(v)) for k, v in rows.items()}


def test_h200_write_back_matches_stream_microbenchmark():
    cap = load_arch("h200").l2.reuse_capacity_bytes
    meas = _measured_stream()
    assert meas, "no stream experiments in the results file"
    for (r, w), hw in sorted(meas.items()):
        if r + w > 160:
            continue
        l2 = L2Residency((r + w) * MIB // 32 + 1, cap)
        _stream(l2, r, w)
        sim = l2.dram_write_bytes() / MIB
        assert abs(sim - hw) <= 3.5, (r, w, sim, hw)     # LRU keeps ~2 MiB fewer dirty lines than the H200


def test_small_footprint_stays_in_l2_and_capacity_none_is_write_through():
    l2 = L2Residency(1 << 16, 39321600)
    _stream(l2, 1, 1)
    assert l2.dram_write_bytes() == 0
    l2 = L2Residency(1 << 16, None)
    _stream(l2, 1, 1)
    assert l2.dram_write_bytes() == 1 * MIB


def test_reuse_after_capacity_is_a_miss():
    cap = 1 * MIB
    n = 4 * MIB // 32
    l2 = L2Residency(n, cap)
    a = np.arange(n // 8)            # 0.5 MiB: fits
    l2[a] = True
    assert l2[a].all()
    b = np.arange(n // 8, n)          # 3.5 MiB of new data evicts it
    l2[b] = True
    assert not l2[a].any()


def test_write_back_curve_places_the_write_backs_after_the_l2_fills():
    """A stream that reads and writes 4x the capacity (microbench/src/dirty_l2.cu ROW): nothing is written back while
    reads and writes fill the L2 (the first ~capacity / 2 of stored sectors), then about one sector per sector
    stored; the curve ends at the launch's write-back count and never decreases."""
    cap = 8 * MIB
    l2 = L2Residency(64 * MIB // 32 + 1, cap)
    _stream(l2, 16, 16, steps=256)
    stored, wb = l2.write_back_curve(points=64)
    assert stored == 16 * MIB // 32
    assert wb[-1] == l2.writeback_sectors > 0
    assert (np.diff(wb) >= 0).all()
    per = stored / 64
    half = int((cap / 2 / 32) / per)                 # reads and writes share the L2: it is full at half its size
    assert wb[half - 2] == 0
    assert np.diff(wb)[half + 2:].mean() == pytest.approx(per, rel=0.05)


def test_write_back_curve_is_none_without_stores_or_capacity():
    l2 = L2Residency(1 << 16, 39321600)
    l2[np.arange(100)] = True
    assert l2.write_back_curve() is None
    l2 = L2Residency(1 << 16, None)
    _stream(l2, 1, 1)
    assert l2.write_back_curve() is None

"""When the L2 writes dirty lines back (microbench/src/dirty_l2.cu section ROW through the real pipeline): records
workloads/microbench/dirty_row_* (microbench/make_dirty_l2_records.py). G CTAs of 128 threads walk the rows of an
8192 x 3000 fp32 matrix, load a row, sum it and write it to an output matrix (flags 0) or into two rows of their own
(flags 2); thread 0 clocks the start of each row. On the H100 (microbench/results/h100_dirty_l2_2026-12-07/, no
H200 was lent) a CTA's row takes ~3,300 cycles until ~50 MB have passed through the L2 (row 7-8), then ~4,500: from
there every stored sector evicts a dirty one, and reads and write-backs share the DRAM. The model charges each store
the write-backs the functional pass's L2 model puts at that point of the launch (``set_write_back_curve``); it used
to spread them evenly over every store."""
from __future__ import annotations

import numpy as np
import pytest

import warpgraph as wg
from _replay_helpers import MB, hardware_params, record_results

SMALL_L2 = ["l2.reuse_capacity_bytes=8388608"]


def per_row(d, arch="h200", overrides=()):
    """Median over the CTAs of each row's cycles (clock at the next row's start, or the end, minus its own)."""
    res = wg.simulate(d, arch, want_outputs=True, overrides=["clocks.sm_mhz=1980", *overrides])
    c = np.asarray(res.outputs["clocks"]).astype(np.int64).reshape(-1, 66)
    n = int(c[:, 65].min())
    m = min(n, 64)
    t = np.concatenate([c[:, :m], c[:, 64:65]], axis=1) if n <= 64 else c[:, :m]
    return np.median(np.diff(t, axis=1), axis=0), res


def test_write_backs_start_when_the_l2_is_full():
    """132 CTAs, 8 rows each (3.2 MB of reads and writes a row): with an 8 MiB L2 the rows after the L2 fills take
    longer than those before, and the launch writes back to DRAM; with the H200's L2 nothing is written back and
    the rows keep their time. Spread evenly (the old rule), the first rows would have paid for the write-backs too."""
    d = MB / "dirty_row_g132_r1056_f0"
    small, rs = per_row(d, overrides=SMALL_L2)
    full, rf = per_row(d)
    assert rs.metrics["dram_write_bytes"] > 4e6 and rf.metrics["dram_write_bytes"] == 0
    assert small[1:3] == pytest.approx(full[1:3], rel=0.01)        # before the spill: as if nothing spilled
    assert small[-3:].mean() > 1.1 * full[-3:].mean()             # after: the write-backs cost DRAM time
    assert abs(full[-3:].mean() - full[1:3].mean()) < 0.03 * full[1:3].mean()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dirty_row_g132_f0", "dirty_row_g264_f0"])
def test_row_stream_write_backs_start_where_the_h100s_do(name):
    """On h100.yaml (the launches the H100 ran, 1 and 2 CTAs an SM): the rows step up within 2 rows of where the
    card's do (rows 14 / 7: the L2 is full), and step up, not down. Not compared: the rows' cycles. h100.yaml's DRAM
    latency and efficiency are public figures (luo25), not this card's microbenchmarks, and its rows run 20-40 %
    short before and after the step; the quantitative replay waits for an H200 run (run_pending.sh)."""
    d = MB / name
    curve = [r for r in record_results(d) if r["params"] == hardware_params(d)][0]["curve"]
    sim, _ = per_row(d, "h100")
    k = _step(sim)
    assert abs(k - _step(curve)) <= 2
    assert sim[k:-4].mean() > 1.05 * sim[2:k].mean()


def _step(c) -> int:
    """Where the rows step up: the change point of a two-level fit (least squares) to rows 2 .. n-4 (rows 0-1 hold
    the launch, the last rows the tail)."""
    c = np.asarray(c, dtype=float)[2:-4]
    cost = [((c[:k] - c[:k].mean()) ** 2).sum() + ((c[k:] - c[k:].mean()) ** 2).sum() for k in range(2, len(c) - 2)]
    return 2 + 2 + int(np.argmin(cost))

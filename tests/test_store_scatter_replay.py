"""Partly written sectors on the SM's store path (microbench/src/store_scatter.cu through the real pipeline) against
an H100 run (microbench/results/h100_units_stores_stalls_2026-12-07/store_scatter; the same SM as the H200's, no
H200 was lent). Records workloads/microbench/sct_* (microbench/make_store_scatter_records.py, 16 rounds instead of
64). Compared: what a layout adds to one SM's cycles per warp store over coalesced 4-B stores of the same loop (the
loop's own address arithmetic, which the model issues ~2-3 cycles slower per store than the H100, cancels), within
20 %; and the unit rule itself (workloads/functional/memops.py ``partial_store_sectors``)."""
from __future__ import annotations

import numpy as np
import pytest

import warpgraph as wg
from _replay_helpers import results
from warpgraph.workloads.functional.memops import (GLOBAL_BASE, PARTIAL_LINES_SHIFT, PARTIAL_SECTORS_SHIFT,
                                                   partial_store_sectors)

RES = results("h100_units_stores_stalls_2026-12-07/store_scatter/store_scatter.json")


def _hw(warps, layout, width):
    for r in RES:
        p = r["params"]
        if (p["grid"], p["warps"], p["layout"], p["width"]) == (1, warps, layout, width):
            return r["stats"]["cyc_per_inst"]
    raise KeyError((warps, layout, width))


def _model(name, overrides=None):
    r = wg.simulate(f"workloads/microbench/{name}", "h200", want_outputs=True, overrides=overrides)
    out = np.asarray(r.outputs["out"]).reshape(-1, 2)
    warps = int(name.split("_")[2][1:])
    return float(np.median(out[:, 0])) / (16 * 8 * warps)


@pytest.mark.parametrize("name,layout", [("sct_g1_w4_l1_b4", 1), ("sct_g1_w4_l2_b4", 2), ("sct_g1_w4_l3_b4", 3)])
def test_partial_sector_layouts_add_what_the_h100_adds(name, layout):
    base = _model("sct_g1_w4_l0_b4")
    hw = _hw(4, layout, 4) - _hw(4, 0, 4)
    assert _model(name) - base == pytest.approx(hw, rel=0.2)


def test_without_the_rule_a_partial_sector_costs_a_full_sectors_time():
    off = ["l1.store_partial_line_cycles=0", "l1.store_partial_sector_cycles=0"]
    added = _model("sct_g1_w4_l1_b4", off) - _model("sct_g1_w4_l0_b4", off)
    assert added < 0.5 * (_hw(4, 1, 4) - _hw(4, 0, 4))   # 8 lines x 16 B at 8 sectors' time: far too fast


def _lanes(offsets):
    idx = np.arange(len(offsets), dtype=np.int64)
    return idx, GLOBAL_BASE + np.asarray(offsets, dtype=np.int64)


@pytest.mark.parametrize("offsets,width,lines,sectors", [
    ([4 * i for i in range(32)], 4, 0, 0),                                    # coalesced
    ([(i >> 3) * 4096 + 4 * (i & 7) for i in range(32)], 4, 0, 0),            # 4 rows x 32 B: full sectors
    ([(i >> 2) * 4096 + 4 * (i & 3) for i in range(32)], 4, 8, 8),            # mma-fragment rows: 8 x 16 B
    ([i * 4096 for i in range(32)], 16, 32, 32),                              # 32 rows x 16 B
    ([8 * i for i in range(32)], 4, 2, 8),                                    # 4 B of every 8 B
    ([0] * 32, 4, 1, 1),                                                      # one word from every lane
])
def test_partial_sectors_per_warp(offsets, width, lines, sectors):
    idx, addrs = _lanes(offsets)
    v = int(partial_store_sectors(1, idx, addrs, width)[0])
    assert (v >> PARTIAL_LINES_SHIFT) & 0xFF == lines and (v >> PARTIAL_SECTORS_SHIFT) & 0xFF == sectors


def test_only_the_warps_with_partial_sectors_count():
    """Two whole warps, one coalesced (skipped by the contiguous-run shortcut), one in mma-fragment rows."""
    lane = np.arange(32)
    idx = np.arange(64, dtype=np.int64)
    addrs = GLOBAL_BASE + np.concatenate([4 * lane, 65536 + (lane >> 2) * 4096 + 4 * (lane & 3)]).astype(np.int64)
    v = partial_store_sectors(2, idx, addrs, 4)
    assert int(v[0]) == 0
    assert (int(v[1]) >> PARTIAL_LINES_SHIFT) & 0xFF == 8 and (int(v[1]) >> PARTIAL_SECTORS_SHIFT) & 0xFF == 8


"""A launch-record buffer marked ``l2_resident`` (the host wrote it just before the launch: a cudaMemset, a copy or
a previous kernel) starts resident in the L2: its first touches are L2 hits, not DRAM misses
(workloads/functional/run.py). The membar_load / cluster_sync replays rely on it: their hosts memset the copy
source, so the H200 reads it from L2."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import warpgraph as wg
from warpgraph.core.errors import UserError

MB = Path(wg.__file__).parent / "workloads" / "microbench"


def _copy(tmp_path: Path, resident: bool) -> Path:
    d = tmp_path / ("res" if resident else "cold")
    shutil.copytree(MB / "mbl_g2_f2_b16k", d)
    lj = json.loads((d / "launch.json").read_text())
    lj["buffers"]["src"]["l2_resident"] = resident
    (d / "launch.json").write_text(json.dumps(lj))
    return d


def test_an_l2_resident_buffer_is_read_from_l2_not_dram(tmp_path):
    warm = wg.simulate(_copy(tmp_path, True), "h200", trace_cache=False).metrics
    cold = wg.simulate(_copy(tmp_path, False), "h200", trace_cache=False).metrics
    # 2 CTAs x 72 iterations x 16 KiB, each chunk read once per CTA: cold misses the first touch of every chunk
    assert warm["dram_read_bytes"] == 0
    assert cold["dram_read_bytes"] >= 64 * 16384
    assert cold["cycles"] > warm["cycles"]


def test_l2_resident_must_be_a_boolean(tmp_path):
    d = _copy(tmp_path, True)
    lj = json.loads((d / "launch.json").read_text())
    lj["buffers"]["src"]["l2_resident"] = "yes please"
    (d / "launch.json").write_text(json.dumps(lj))
    with pytest.raises(UserError, match="l2_resident"):
        wg.load_record(d)

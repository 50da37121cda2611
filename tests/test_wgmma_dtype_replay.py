"""wgmma throughput and latency by A/B type (microbench/src/wgmma_dtype.cu through the real pipeline) against the
H200 (microbench/results/h200_wgmma_dtype_2026-12-04.json; records workloads/microbench/wgdt_*, made by
microbench/make_wgmma_dtype_records.py, 64 / 32 iterations instead of 2,048 / 512). The tensor core serves each
wgmma at its type's rate (``tensor_core.dense_<fp16|fp8|tf32>_flop_per_cycle_per_sm``): the H200 takes the same
cycles per m64nN wgmma for f16 k16, e4m3 / e5m2 k32 and tf32 k8. Tolerance 5 % (issue 15)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import warpgraph as wg

ROOT = Path(wg.__file__).parent
MB = ROOT / "workloads" / "microbench"
RES = json.loads((ROOT / "microbench" / "results" / "h200_wgmma_dtype_2026-12-04.json").read_text())["results"]
CASES = sorted(p.name for p in MB.glob("wgdt_*"))


def _measured(d: Path) -> float:
    p = json.loads((d / "launch.json").read_text())["source"]["hardware"]["params"]
    return next(r["stats"]["cycles"] for r in RES if r["params"] == p)


def _simulated(d: Path, **kw) -> float:
    res = wg.simulate(d, "h200", want_outputs=True, **kw)
    return int(np.asarray(res.outputs["out"])[0]) / 100


@pytest.mark.parametrize("name", CASES)
def test_wgmma_dtype_replay_matches_the_h200(name):
    d = MB / name
    assert _simulated(d) == pytest.approx(_measured(d), rel=0.05)


def test_fp8_wgmma_runs_at_the_fp8_rate_not_the_f16_rate():
    """The e4m3 kernel follows ``dense_fp8_flop_per_cycle_per_sm`` (halving it doubles the cycles per wgmma)."""
    d = MB / "wgdt_tput_e4m3_n128_wg1"
    own = _simulated(d)
    half = _simulated(d, overrides={"tensor_core.dense_fp8_flop_per_cycle_per_sm": 4096})
    assert half == pytest.approx(2 * own, rel=0.03)

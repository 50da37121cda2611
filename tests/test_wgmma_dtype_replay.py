"""wgmma throughput and latency by A/B type (microbench/src/wgmma_dtype.cu through the real pipeline) against the
H200 (microbench/results/h200_wgmma_dtype_2026-12-04.json; records workloads/microbench/wgdt_*, made by
microbench/make_wgmma_dtype_records.py, 64 / 32 iterations instead of 2,048 / 512). The tensor core serves each
wgmma at its type's rate (``tensor_core.dense_<fp16|fp8|tf32>_flop_per_cycle_per_sm``): the H200 takes the same
cycles per m64nN wgmma for f16 k16, e4m3 / e5m2 k32 and tf32 k8. Tolerance 5 % (issue 15)."""
from __future__ import annotations

import pytest

from _replay_helpers import MB, measured, results, simulated

RES = results("h200_wgmma_dtype_2026-12-04.json")
CASES = sorted(p.name for p in MB.glob("wgdt_*"))


@pytest.mark.parametrize("name", CASES)
def test_wgmma_dtype_replay_matches_the_h200(name):
    d = MB / name
    assert simulated(d) == pytest.approx(measured(d, RES), rel=0.05)


def test_fp8_wgmma_runs_at_the_fp8_rate_not_the_f16_rate():
    """The e4m3 kernel follows ``dense_fp8_flop_per_cycle_per_sm`` (halving it doubles the cycles per wgmma)."""
    d = MB / "wgdt_tput_e4m3_n128_wg1"
    own = simulated(d)
    half = simulated(d, overrides={"tensor_core.dense_fp8_flop_per_cycle_per_sm": 4096})
    assert half == pytest.approx(2 * own, rel=0.03)

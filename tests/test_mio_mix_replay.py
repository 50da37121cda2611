"""SHFL and shared-memory loads on the MIO path (microbench/src/mio_mix.cu through the real pipeline) against the
H200 (microbench/results/h200_mio_mix_2026-12-05/mio_mix.json; records workloads/microbench/mix_*, made by
microbench/make_mio_mix_records.py). Compared: SM cycles per iteration per warp (``out[0] / 100``). Tolerance 10 %
(issue 15)."""
from __future__ import annotations

import pytest

from _replay_helpers import MB, measured, results, simulated

RES = results("h200_mio_mix_2026-12-05/mio_mix.json")

_LDS32 = pytest.mark.xfail(strict=True, reason=(
    "32 warps x 8 chains of conflict-free LDS.32: the H200 does one per 1.08 SM cycles (8.62 per iteration and "
    "warp), the model one per 1.57 (12.57), issue 15"))
_SHARED_SLOT = pytest.mark.xfail(strict=True, reason=(
    "SHFL and LDS add up on the H200 (SHFL + LDS.32 16.9 = 8.2 + 8.6; SHFL + LDS.128 40.9 = 8.2 + 32.5): one MIO "
    "path; the model overlaps them (14.1 / 32.6), issue 15"))
CASES = [
    "mix_shfl_w1",          # one warp: 8 SHFL chains (39.6; 34.8 before the loop's back edge cost its 10 cycles)
    "mix_shfl_w4",          # one warp per sub-partition (9.96)
    "mix_shfl_w32",         # one SHFL per SM cycle (8.20)
    pytest.param("mix_lds_w32", marks=_LDS32),
    "mix_lds128_w32",       # LDS.128, 4 wavefronts each (32.5)
    pytest.param("mix_shfl_lds_w32", marks=_SHARED_SLOT),
    pytest.param("mix_shfl_lds128_w32", marks=_SHARED_SLOT),
    "mix_shfl_ffma_w32",    # FFMA beside SHFL is free (7.96)
]


@pytest.mark.parametrize("name", CASES)
def test_mio_mix_replay_matches_the_h200(name):
    d = MB / name
    assert simulated(d) == pytest.approx(measured(d, RES), rel=0.10)

"""ldmatrix / shared-load latency and throughput (microbench/src/ldmatrix.cu through the real pipeline) against
the H200 (microbench/results/h200_ldmatrix_2026-12-04/ldmatrix.json; records workloads/microbench/ldsm_*, made by
microbench/make_ldmatrix_records.py, 64 throughput iterations instead of 256). Tolerance 10 % (issue 15)."""
from __future__ import annotations

import pytest

from _replay_helpers import MB, measured, results, simulated

RES = results("h200_ldmatrix_2026-12-04/ldmatrix.json")


_ONE_WARP = pytest.mark.xfail(strict=True, reason=(
    "one warp issuing 8 independent ldmatrix.x4 per iteration: the H200 takes 11.8 SM cycles per load, the model "
    "21.0 in ptxas's SASS order (50.9 in PTX order, before workloads/issue_order.py; 8 warps now 4.09 vs 4.0): a "
    "single warp's shared loads overlap more on the H200 than the model's per-warp MIO issue allows (issue 15)"))
CASES = [
    "ldsm_lat_lds32",            # ld.shared.b32 dependent chain (H200 35.8 cycles per link)
    "ldsm_lat_x2",               # ldmatrix.x2 chain (37.0)
    "ldsm_lat_x1",               # ldmatrix.x1 chain (29.8; 32.5 in the SASS order, 33.0 in PTX order)
    "ldsm_lat_x4",               # ldmatrix.x4 chain (44.6): shared_memory.ldmatrix_latency_cycles_per_extra_matrix 0
    "ldsm_tput_x4_w32",          # 32 warps: 4.0 SM cycles per ldmatrix.x4 (128 B per cycle)
    "ldsm_tput_lds128_w32",      # ld.shared.v4 the same (4.0)
    pytest.param("ldsm_tput_x4_w1", marks=_ONE_WARP),
    "ldsm_tput_x4_w8",           # 8 warps: 4.0 (4.09 in the SASS order; 6.4 in PTX order)
]


@pytest.mark.parametrize("name", CASES)
def test_ldmatrix_replay_matches_the_h200(name):
    d = MB / name
    sim, want = simulated(d), measured(d, RES)
    assert sim == pytest.approx(want, rel=0.10), (sim, want)


def test_ldmatrix_matrices_are_not_bank_conflict_ways():
    """With the bank-conflict step (2 cycles per extra way) on its matrices a dependent ldmatrix.x4 link takes 51
    cycles (H200 44.6); ``shared_memory.ldmatrix_latency_cycles_per_extra_matrix`` 0 gives 45."""
    d = MB / "ldsm_lat_x4"
    a = simulated(d, overrides={"shared_memory.ldmatrix_latency_cycles_per_extra_matrix": 2})
    b = simulated(d)
    assert a - b == pytest.approx(6, abs=0.5)

"""Replay of the stream_sizes microbenchmark (microbench/src/stream_sizes.cu, H200 2026-12-03, ncu cold L2):
elementwise read / copy / triad launches against their gpc__cycles_elapsed.max. Pins the L2 fill + store write
path (l2.fill_store_gb_per_s): a store that stays in L2 costs that path as much as a DRAM read."""
import json
from functools import lru_cache
from pathlib import Path

import pytest

from warpgraph import simulate

ROOT = Path(__file__).resolve().parent.parent
MB = ROOT / "workloads" / "microbench"
RES = ROOT / "microbench" / "results" / "h200_stream_sizes_2026-12-03" / "stream_sizes.json"


def _hw(kernel: str, mib: int) -> dict:
    rows = json.loads(RES.read_text())["launches"]
    return next(r for r in rows if r["kernel"] == kernel and r["size_mib"] == mib)


@lru_cache(maxsize=None)
def _sim(kernel: str, mib: int, fill: bool = True) -> int:
    hw = _hw(kernel, mib)
    ov = {"clocks.sm_mhz": hw["sm_hz"] / 1e6}
    if not fill:
        ov["l2.fill_store_gb_per_s"] = None
    return simulate(MB / f"{kernel}_{mib}MiB", "h200", overrides=ov).metrics["cycles"]


@pytest.mark.parametrize("kernel", ["ew_read", "ew_copy", "ew_triad"])
def test_streams_64mib_cycles(kernel):
    hw = _hw(kernel, 64)["elapsed_cycles"]
    assert _sim(kernel, 64) == pytest.approx(hw, rel=0.08)


def test_l2_resident_stores_cost_the_fill_path():
    """16 MiB copied stays in the 60 MiB L2 (ncu: 4.6 kB written to DRAM), yet the copy takes 1.54x the read on the
    H200: the stores use the write path the DRAM fills use. Without that path the model has them free."""
    hw = _hw("ew_copy", 16)["elapsed_cycles"] / _hw("ew_read", 16)["elapsed_cycles"]
    sim = _sim("ew_copy", 16) / _sim("ew_read", 16)
    off = _sim("ew_copy", 16, False) / _sim("ew_read", 16, False)
    assert hw > 1.4
    assert sim > 1.3 and off < 1.1


# The launches of one or two waves (4 / 8 MiB: 1,024 / 2,048 CTAs of 256 threads, 8 resident per SM) whose stores
# stay in L2. The card spends ~1,900 cycles more on the 4 MiB copy than on the 4 MiB read (the stores' L2 writes do
# not overlap the reads' ramp: active 4,927 vs 3,447 cycles); the model ~330, its CTAs retiring once their stores
# have left the SM while the L2's write path still holds them (docs/accuracy.md "Short streams that store").
_SHORT_STORES = pytest.mark.xfail(strict=True, reason=(
    "one- and two-wave streams whose stores stay in L2 run 10-19 % short (copy 4 / 8 MiB -19.0 / -15.1 %, triad "
    "4 / 8 MiB -18.6 / -9.6 %): the L2 write path's backlog does not hold the SM (holding a CTA until the L2 has "
    "written its stores: -12.3 / -8.9 / -13.6 / -6.0 %, but calibration 3.67 -> 3.79 %, not kept)"))


@pytest.mark.parametrize("kernel, mib", [
    ("ew_read", 4), ("ew_read", 8),
    pytest.param("ew_copy", 4, marks=_SHORT_STORES), pytest.param("ew_copy", 8, marks=_SHORT_STORES),
    pytest.param("ew_triad", 4, marks=_SHORT_STORES), pytest.param("ew_triad", 8, marks=_SHORT_STORES),
    pytest.param("ew_read", 32, marks=pytest.mark.slow), pytest.param("ew_copy", 32, marks=pytest.mark.slow),
    pytest.param("ew_triad", 32, marks=pytest.mark.slow)])
def test_short_streams_cycles(kernel, mib):
    """The stream_sizes sweep below and between the 16 / 64 MiB launches above, within the same 8 %."""
    hw = _hw(kernel, mib)["elapsed_cycles"]
    assert _sim(kernel, mib) == pytest.approx(hw, rel=0.08)

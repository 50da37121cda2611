"""Flat memory (issue 18): the lazy functional trace gives bit-identical detailed results while holding only the
batches of the CTAs being launched (workloads/functional/lazy.py)."""
from pathlib import Path

import pytest

from warpgraph import simulate
from warpgraph.core.errors import SimulationError
from warpgraph.workloads.functional.lazy import lazy_trace
from warpgraph.workloads.record import load_record
from warpgraph.workloads.scale import scale_record

ROOT = Path(__file__).resolve().parent.parent / "workloads"


def rec_ctas(rec) -> int:
    return rec.grid[0] * rec.grid[1] * rec.grid[2]


def ft_batch(rec) -> int:
    """CTAs per functional batch (run_functional's default 2^16 lanes)."""
    return (1 << 16) // (-(-(rec.block[0] * rec.block[1] * rec.block[2]) // 32) * 32)


def _stats(r):
    s = r.stats
    return s[~s.stat.astype(str).str.contains("wall")].reset_index(drop=True)


@pytest.mark.parametrize("make", [
    # several functional batches each (256-thread CTAs: 256 per batch; 128-thread: 512)
    lambda: scale_record(load_record(ROOT / "records/h200/rmsnorm_rows4096_cols4096"), rows=1024, cols=512),
    lambda: scale_record(load_record(ROOT / "records/h200/swiglu_n16777216"), n=1 << 21),
    lambda: scale_record(load_record(ROOT / "records/h200/gemm_tma_M4096_N4096_K4096"), M=2048, N=4096, K=64),
], ids=["rmsnorm", "swiglu", "gemm_tma"])
def test_lazy_detailed_is_bit_identical_to_eager(make):
    rec = make()
    eager = simulate(rec, "h200", lazy=False)
    lazy = simulate(rec, "h200", lazy=True)
    ft = lazy.metrics["functional_trace"]
    assert ft["lazy"] and ft["eager_reason"] is None and ft["peak_batches_alive"] <= 1
    # the first and the last batch hold the probed CTAs (served from the pre-pass); the lazy pass runs every batch
    # up to the last (the first too: the L2 model's state), unless the CTAs it serves are all in kept batches
    nb = -(-rec_ctas(rec) // ft_batch(rec))
    assert ft["batches_run"] == (nb - 1 if nb > 2 else 0)
    assert lazy.metrics["cycles"] == eager.metrics["cycles"]
    assert _stats(lazy).equals(_stats(eager))
    assert "functional_trace" not in eager.metrics


def test_lazy_trace_drops_batches_and_refuses_a_second_read():
    rec = scale_record(load_record(ROOT / "records/h200/rmsnorm_rows4096_cols4096"), rows=1024, cols=512)
    lt = lazy_trace(rec, compute_values=False)
    wpc = lt.warps_per_cta
    for c in range(1, 1023):            # launch order; CTAs 0 and 1023 come from the pre-pass's kept batches
        for w in range(wpc):
            lt.warp_stream(c * wpc + w)
        assert lt.peak_batches_alive <= 1
    assert lt.batches_run == 3          # batches 0-2 (256 CTAs each) ran lazily; batch 3 is the pre-pass's
    lt.warp_stream(0)
    lt.warp_stream(1023 * wpc)
    with pytest.raises(SimulationError, match="after its batch was dropped"):
        lt.warp_stream(300 * wpc)
    with pytest.raises(SimulationError, match="keeps no batches"):
        lt.batches


def test_lazy_falls_back_to_eager_with_a_reason():
    rec = scale_record(load_record(ROOT / "records/h200/rmsnorm_rows4096_cols4096"), rows=256, cols=256)
    r = simulate(rec, "h200", lazy=True, want_outputs=True)
    assert r.metrics["functional_trace"] == {"lazy": False, "eager_reason": "outputs are wanted (--check / outputs)"}
    assert r.outputs
    lock = load_record(ROOT / "gallery/records/layernorm_bwd_r32_c200_g4")     # an atom.cas spin lock
    r = simulate(lock, "h200", lazy=True)
    assert not r.metrics["functional_trace"]["lazy"] and "communicate" in r.metrics["functional_trace"]["eager_reason"]

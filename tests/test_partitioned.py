"""Partitioned timing of one launch (runner/partitioned.py, issue #18): the GPC views give the same statistics
for every number of processes, stay close to the single-engine model, and refuse what they do not model."""
from __future__ import annotations

import pytest

import warpgraph as wg
from warpgraph.components.memory import FluidServer
from warpgraph.core.engine import CycleLimitExceeded
from warpgraph.core.errors import UserError
from warpgraph.runner.partitioned import LoggedServer, partitions_of
from warpgraph.workloads.bundled import MICROBENCH_DIR

# a launch of 8 waves (one CTA per SM: CTAs are handed out at the barriers), a TMA + mbarrier GEMM, atomics
MULTI_WAVE = "microbench/cta_turnaround_t32"
TMA_GEMM = "gallery/gemm_persistent_tma_M256_N256_K128"
ATOMICS = "gallery/colsum_atomic_r100_c200"


def resolve_record(name: str):
    kind, leaf = name.split("/")
    root = MICROBENCH_DIR if kind == "microbench" else MICROBENCH_DIR.parent / "gallery" / "records"
    return wg.load_record(root / leaf)


def _frame(res):
    df = res.stats
    return df[df["component"] != "run"].reset_index(drop=True)   # run.*: wall-clock seconds


@pytest.mark.parametrize("name", [MULTI_WAVE, TMA_GEMM, ATOMICS])
def test_statistics_are_identical_for_every_number_of_processes(name):
    rec = resolve_record(name)
    runs = {j: wg.simulate(rec, "h200", jobs=j) for j in (1, 2, 3)}
    base = _frame(runs[1])
    assert runs[1].metrics["partitioned"]["views"] == len(partitions_of(wg.load_arch("h200")))
    for j in (2, 3):
        assert runs[j].metrics["partitioned"]["jobs"] == j
        assert runs[j].metrics["cycles"] == runs[1].metrics["cycles"]
        assert _frame(runs[j]).equals(base), f"jobs={j} differs from jobs=1"


@pytest.mark.parametrize("name", [MULTI_WAVE, TMA_GEMM])
def test_close_to_the_single_engine_model(name):
    """Cross-GPC contention is seen at most one window late: a few per cent at most on these launches."""
    rec = resolve_record(name)
    one = wg.simulate(rec, "h200").metrics
    part = wg.simulate(rec, "h200", jobs=1).metrics
    assert part["warp_instructions"] == one["warp_instructions"]
    assert abs(part["cycles"] - one["cycles"]) <= 0.03 * one["cycles"]
    assert part["dram_read_bytes"] == one["dram_read_bytes"]


def test_a_replayed_reservation_moves_the_pointer_not_the_statistics():
    log: list = []
    a = LoggedServer.wrap(FluidServer(4.0), log, 0)
    a.reserve(10.0, 40.0)
    assert log == [(10.0, 0, 40.0, -1.0)]
    b = LoggedServer.wrap(FluidServer(4.0), [], 0)
    b.advance(*log[0][:1], log[0][2], log[0][3])
    assert b.free == a.free == 20.0
    assert b.busy == 0.0 and b.amount == 0 and a.busy == 10.0


def test_window_beyond_the_launch_latency_is_refused():
    with pytest.raises(UserError, match="launch latency"):
        wg.simulate(resolve_record(MULTI_WAVE), "h200", jobs=1, overrides={"timing.partition_window": 5000})


def test_lookups_shared_across_gpcs_are_refused():
    with pytest.raises(UserError, match="coalesce_scope"):
        wg.simulate(resolve_record(TMA_GEMM), "h200", jobs=1, overrides={"l2.coalesce_scope": "gpu"})


def test_cycle_limit_names_the_stuck_warps():
    with pytest.raises(CycleLimitExceeded) as ei:
        wg.simulate(resolve_record(TMA_GEMM), "h200", jobs=2, max_cycles=2000)
    assert "unfinished warps" in ei.value.message and "sm " in ei.value.message


def test_sampled_mode_with_jobs_is_refused():
    with pytest.raises(UserError, match="jobs"):
        wg.simulate(resolve_record(TMA_GEMM), "h200", mode="sampled", jobs=2)


def test_cpc_views_are_identical_for_every_number_of_processes_too():
    rec = resolve_record(TMA_GEMM)
    ov = {"timing.partition": "cpc"}
    a = wg.simulate(rec, "h200", jobs=1, overrides=ov)
    b = wg.simulate(rec, "h200", jobs=3, overrides=ov)
    assert a.metrics["partitioned"]["views"] > len(partitions_of(wg.load_arch("h200")))
    assert _frame(a).equals(_frame(b))


def test_partition_knobs_without_jobs_are_an_error():
    with pytest.raises(UserError, match="without jobs"):
        wg.simulate(resolve_record(TMA_GEMM), "h200", overrides={"timing.partition": "cpc"})

"""The L2 fabric bytes (workloads/functional/addrmap.py): what one L2 partition looks up on behalf of the other,
which Nsight Compute's ``lts__t_bytes`` counts on top of the SMs' requests (H200 ncu on 55 launches,
microbench/results/h200_l2_counters_2026-12-04): half of single-read traffic, about the footprint for data both
partitions re-read, half of every write."""
import numpy as np
import pytest

import warpgraph as wg
from warpgraph.workloads.functional.addrmap import AddressCounts
from warpgraph.workloads.memory import GLOBAL_BASE

MEM = 64 << 20
SEC = 32


def _am():
    return AddressCounts(MEM, GLOBAL_BASE, slices=188, channels=94, n_sm=132, partitions=2)


def test_sectors_read_once_cross_the_fabric_for_half_of_them():
    am = _am()
    secs = np.arange(200_000)
    am.l2(secs, False, np.arange(len(secs)) // 64)          # 64 sectors per CTA, CTAs spread over both halves
    assert am.fabric_read == pytest.approx(0.5 * len(secs), rel=0.03)


def test_a_partition_fetches_a_far_line_once_then_reads_its_copy():
    am = _am()
    secs = np.arange(50_000)
    am.l2(secs, False, 0)                                    # CTA 0: SM 0, partition 0
    first = am.fabric_read
    for cta in (1, 2, 40, 65):                               # more CTAs of partition 0 re-read the same sectors
        am.l2(secs, False, cta)
    assert am.fabric_read == first
    am.l2(secs, False, 100)                                  # partition 1 fetches its own far half
    assert am.fabric_read == pytest.approx(len(secs), rel=0.03)
    am.dram(secs[:1000])                                     # missed to DRAM: the copies are gone
    before = am.fabric_read
    am.l2(secs[:1000], False, 0)
    assert 400 < am.fabric_read - before < 600


def test_writes_cross_for_the_other_partitions_share():
    am = _am()
    am.l2(np.arange(10_000), True)
    assert am.fabric_write == pytest.approx(5_000)
    assert am.result(type("R", (), {"writeback_sector_ids": lambda self: np.zeros(0, np.int64)})())[
        "l2_fabric_write_bytes"] == 5_000 * SEC


def test_a_read_must_name_its_ctas():
    with pytest.raises(ValueError, match="CTAs"):
        _am().l2(np.arange(4), False)


def test_simulate_reports_fabric_and_tag_bytes():
    """A streaming microbenchmark record: the fabric is about half of what the SMs request, and l2_tag_bytes is
    their sum (what lts__t_bytes counts)."""
    m = wg.simulate(wg.__path__[0] + "/workloads/microbench/ew_copy_16MiB", "h200").metrics
    assert m["l2_tag_bytes"] == m["l2_bytes"] + m["l2_fabric_bytes"]
    assert 0.4 < m["l2_fabric_bytes"] / m["l2_bytes"] < 0.6

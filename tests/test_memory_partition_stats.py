"""Statistics at the granularity the model has: L2 / HBM traffic per partition (the timing's servers; per-slice and
per-channel bytes come from the functional pass's addresses: tests/test_address_counts.py), stall counts per SM and
per sub-partition; and ``l2.hash`` values the model would ignore are errors."""
from pathlib import Path

import pytest

from warpgraph.core.errors import UserError
from warpgraph.runner.simulate import simulate
from warpgraph.topologies import load_arch

REC = Path(__file__).resolve().parent.parent / "workloads" / "microbench" / "l1_scatter_miss_s6000_w8"


@pytest.fixture(scope="module")
def res():
    return simulate(REC, "h200", trace_cache=False)


def _rows(res, pattern):
    df = res.stats
    return df[df.component.str.fullmatch(pattern)]


@pytest.mark.parametrize("value", ["ipoly", "modulo"])
def test_an_address_hash_is_an_error_not_ignored(value):
    with pytest.raises(UserError, match="not modelled"):
        load_arch("h200", {"l2.hash": value})
    assert load_arch("h200").l2.hash == "rotation"


def test_an_ignored_l2_mshr_count_is_not_accepted():
    with pytest.raises(UserError):
        load_arch("h200", {"l2.mshrs_per_slice": 96})


def test_l2_and_hbm_traffic_per_partition_sum_to_the_totals(res):
    m = res.metrics
    l2 = _rows(res, r"l2\.p\d+")
    hbm = _rows(res, r"hbm\.p\d+")
    assert set(l2.component) == {"l2.p0", "l2.p1"} and set(hbm.component) == {"hbm.p0", "hbm.p1"}
    assert l2[l2.stat.isin(["read_bytes", "write_bytes"])].value.sum() == pytest.approx(m["l2_bytes"])
    assert hbm[hbm.stat.isin(["read_bytes", "write_bytes"])].value.sum() == pytest.approx(
        m["dram_read_bytes"] + m["dram_write_bytes"])
    assert (l2[l2.stat == "read_bytes"].value > 0).all() and (l2[l2.stat == "busy_cycles"].value > 0).all()
    assert hbm[hbm.stat == "channels"].value.sum() == 94 and l2[l2.stat == "slices"].value.sum() == 188
    assert l2.unit.notna().all() and hbm.unit.notna().all()
    # per-slice / per-channel rows by address (functional pass) sum to the same reads: a plain ld.global
    # launch has no lookup coalescing (l2_merged_bytes 0)
    sl = _rows(res, r"l2\.s\d+")
    ch = _rows(res, r"hbm\.c\d+")
    assert sl.component.nunique() == 188 and ch.component.nunique() == 94
    assert sl[sl.stat == "read_bytes"].value.sum() == pytest.approx(l2[l2.stat == "read_bytes"].value.sum())
    assert ch[ch.stat == "read_bytes"].value.sum() == pytest.approx(m["dram_read_bytes"])
    assert sl.unit.eq("bytes").all() and ch.unit.eq("bytes").all() and sl.description.notna().all()


def test_subpartition_stalls_sum_to_the_sm_stalls(res):
    sm = _rows(res, r"sm\d+\.stalls")
    sp = _rows(res, r"sm\d+\.sp\d\.stalls")
    assert not sp.empty and set(sp.unit) == {"warp-cycles"} and sp.description.notna().all()
    a = sm.assign(sm=sm.component.str.extract(r"^sm(\d+)")[0]).groupby(["sm", "stat"]).value.sum()
    b = sp.assign(sm=sp.component.str.extract(r"^sm(\d+)")[0]).groupby(["sm", "stat"]).value.sum()
    assert a.to_dict() == b.to_dict()
    # the launch's 8 warps per CTA sit on all four sub-partitions of each SM that ran one
    assert sp.component.str.extract(r"\.sp(\d)\.")[0].nunique() == 4

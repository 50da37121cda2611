"""Bytes per L2 slice (``l2.s{i}``) and per HBM channel (``hbm.c{i}``) from the functional pass's line addresses
(workloads/functional/addrmap.py): the hashes spread strides and keep one line on one slice, the rows sum to the
functional totals, and the timing (partition-based) does not depend on them."""
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warpgraph.runner.simulate import simulate
from warpgraph.workloads.functional.addrmap import AddressCounts, xor_fold
from warpgraph.workloads.functional.l2model import L2Residency
from warpgraph.workloads.memory import GLOBAL_BASE
from warpgraph.workloads.record import load_record

MEM = 1 << 30     # bytes of device memory the hash tables cover in the unit tests
_AM = []


def _counts():
    """The spec's defaults (188 slices, 94 channels, shifts 7, 512-B chunks), counters zeroed (tables built once)."""
    if not _AM:
        _AM.append(AddressCounts(MEM, GLOBAL_BASE, slices=188, channels=94))
    am = _AM[0]
    for a in (am.l2_read, am.l2_write, am.dram_read):
        a[:] = 0
    return am


def test_xor_fold_is_the_shifted_xor():
    x = np.array([0, 1, 1 << 7, (1 << 7) | 1, 1 << 14], np.uint64)
    assert xor_fold(x, 7).tolist() == [0, 1, (1 << 7) | 1, 1 << 7, (1 << 14) | (1 << 7) | 1]


@pytest.mark.parametrize("stride_lines", [1, 2, 3, 4, 8, 32, 64, 256, 1024, 4096, 8192])
def test_a_strided_pattern_spreads_over_all_slices_and_channels(stride_lines):
    am = _counts()
    n = 4 * 188
    sectors = (np.arange(n) * stride_lines) % (MEM >> 7) * 4      # the first sector of each line
    am.l2(sectors, False)
    am.dram(sectors)
    assert am.l2_read.sum() == n and am.dram_read.sum() == n
    # a plain "line mod 188" would put power-of-two strides on 47 slices (188 = 4 x 47)
    assert (am.l2_read > 0).all() and am.l2_read.max() <= 3 * 4
    assert (am.dram_read > 0).all()


@settings(max_examples=60, deadline=None)
@given(line=st.integers(0, (MEM >> 7) - 1), n=st.integers(1, 200), sector=st.integers(0, 3),
       write=st.booleans())
def test_one_line_hits_one_slice_and_one_channel(line, n, sector, write):
    am = _counts()
    s = np.full(n, line * 4 + sector)
    am.l2(s, write)
    am.dram(s)
    acc = am.l2_write if write else am.l2_read
    assert (acc > 0).sum() == 1 and acc.sum() == n and not (am.l2_read if write else am.l2_write).any()
    assert (am.dram_read > 0).sum() == 1
    # the 512-B chunk of the line shares its channel; its 4 sectors share its slice
    chunk = (line // 4) * 4
    assert len({int(am.chan_of[chunk + k]) for k in range(4)}) == 1


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), cap=st.integers(1, 64))
def test_the_write_back_sectors_are_the_ones_the_l2_model_counts(seed, cap):
    rng = np.random.default_rng(seed)
    l2 = L2Residency(512, capacity_bytes=cap * 32)
    for _ in range(60):
        s = rng.integers(0, 512, size=int(rng.integers(1, 40)))
        l2[s] = True
        if rng.random() < 0.5:
            l2.dirty_view[s[: len(s) // 2 + 1]] = True
    ids = l2.writeback_sector_ids()
    assert len(ids) == l2.writeback_sectors and l2.dram_write_bytes() == 32 * len(ids)
    unbounded = L2Residency(512)
    unbounded[np.arange(10)] = True
    unbounded.dirty_view[np.arange(3)] = True
    assert sorted(unbounded.writeback_sector_ids().tolist()) == [0, 1, 2]


_PTX = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 px, .param .u64 pout, .param .u32 ps)
{
 .reg .b32 %r<8>;
 .reg .b64 %rd<8>;
 ld.param.u64 %rd1, [px];
 ld.param.u64 %rd2, [pout];
 ld.param.u32 %r2, [ps];
 mov.u32 %r1, %tid.x;
 mul.lo.u32 %r3, %r1, %r2;
 mul.wide.u32 %rd3, %r3, 4;
 add.s64 %rd4, %rd1, %rd3;
 ld.global.u32 %r4, [%rd4];
 mul.wide.u32 %rd5, %r1, 4;
 add.s64 %rd6, %rd2, %rd5;
 st.global.u32 [%rd6], %r4;
 ret;
}
"""


def _record(tmp_path, stride_words, grid=1):
    (tmp_path / "kernel.ptx").write_text(_PTX)
    (tmp_path / "launch.json").write_text(json.dumps({
        "format": "launch-record/1", "name": "stride", "entry": "k", "grid": [grid], "block": [256],
        "buffers": {"x": {"dtype": "int32", "shape": [256 * 64], "init": "zeros"},
                    "out": {"dtype": "int32", "shape": [256], "init": "zeros"}},
        "params": [{"ptr": "x"}, {"ptr": "out"}, {"u32": stride_words}]}))
    return load_record(tmp_path)


def _rows(res, pattern, stat):
    df = res.stats
    d = df[df.component.str.fullmatch(pattern) & (df.stat == stat)]
    return np.array([d[d.component == c].value.sum() for c in sorted(set(d.component),
                                                                    key=lambda c: int(c.rsplit("s", 1)[-1]
                                                                                      .rsplit("c", 1)[-1]))])


@pytest.mark.parametrize("stride_words, read_slices", [(32, None), (0, 1)])
def test_simulated_rows_sum_to_the_functional_bytes(tmp_path, stride_words, read_slices):
    res = simulate(_record(tmp_path, stride_words), "h200", trace_cache=False)
    reads = _rows(res, r"l2\.s\d+", "read_bytes")
    writes = _rows(res, r"l2\.s\d+", "write_bytes")
    assert len(reads) == 188 and len(_rows(res, r"hbm\.c\d+", "read_bytes")) == 94
    # 8 warps; stride 32 words: one 128-B line (one sector) per lane; stride 0: one sector, requested by the
    # lowest warp (the CTA's other warps hit it in the L1 model)
    assert reads.sum() == (256 * 32 if stride_words else 32)
    assert writes.sum() == 256 * 4                          # the contiguous 1 KiB output: 32 sectors
    if read_slices is None:
        assert (reads > 0).sum() >= 150                     # 256 lines over the 188 slices
    else:
        assert (reads > 0).sum() == read_slices
    # the timing's totals (no lookup coalescing for ld.global): the same bytes
    g = res.stats[res.stats.component == "l2"].set_index("stat").value
    assert reads.sum() == pytest.approx(g["read_bytes"]) and writes.sum() == pytest.approx(g["write_bytes"])
    dram = _rows(res, r"hbm\.c\d+", "read_bytes")
    assert dram.sum() == pytest.approx(res.metrics["dram_read_bytes"])


def test_the_hash_parameters_change_the_rows_not_the_cycles(tmp_path):
    rec = _record(tmp_path, 32)
    a = simulate(rec, "h200", trace_cache=False)
    b = simulate(rec, "h200", trace_cache=False, overrides={"l2.slice_hash_shift_bits": 11,
                                                            "hbm.channel_interleave_bytes": 4096})
    assert a.metrics["cycles"] == b.metrics["cycles"]
    ra, rb = _rows(a, r"l2\.s\d+", "read_bytes"), _rows(b, r"l2\.s\d+", "read_bytes")
    assert ra.sum() == rb.sum() and not np.array_equal(ra, rb)


def test_trace_cache_keeps_the_counts(tmp_path):
    from warpgraph.runner import trace_cache as tc
    from warpgraph.runner.simulate import _address_map
    from warpgraph.topologies import load_arch
    from warpgraph.workloads.functional import run_functional

    rec = _record(tmp_path, 32)
    t = run_functional(rec, compute_values=False, address_map=_address_map(load_arch("h200"))).trace
    assert t.address_counts and sum(t.address_counts["l2_read_bytes"]) == 256 * 32
    z = {k: v for k, v in tc._to_arrays(t).items()}
    assert tc._from_arrays(z, t.program).address_counts == t.address_counts
    assert run_functional(rec, compute_values=False).trace.address_counts is None


def test_the_lazy_trace_counts_the_same_bytes(tmp_path):
    rec = _record(tmp_path, 32)
    eager = simulate(rec, "h200", trace_cache=False)
    lazy = simulate(rec, "h200", trace_cache=False, lazy=True)
    assert lazy.metrics["functional_trace"]["lazy"]
    for pat in (r"l2\.s\d+", r"hbm\.c\d+"):
        for stat in ("read_bytes", "write_bytes"):
            assert np.array_equal(_rows(eager, pat, stat), _rows(lazy, pat, stat))


def test_ctas_on_one_sm_share_its_l1(tmp_path):
    """Every CTA reads the same 256 lines (x[tid * 32]). The functional L1 is one per SM (CTA c on SM c % 132):
    of 264 CTAs, the second one on each SM hits what the first fetched, so L2 sees 132 CTAs' reads (H200 ncu:
    rmsnorm's weight row, re-read by 4,096 CTAs, reaches L2 once per SM)."""
    res = simulate(_record(tmp_path, 32, grid=264), "h200", trace_cache=False)
    reads = _rows(res, r"l2\.s\d+", "read_bytes").sum()
    assert reads == 132 * 256 * 32

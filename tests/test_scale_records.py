"""scale_record / small_variant keep the PTX valid: divisibility by 16, no int param becomes 1, grid formula."""
from pathlib import Path

import pytest

import warpgraph
from warpgraph.core.errors import RecordError
from warpgraph.workloads.record import load_record
from warpgraph.workloads.scale import family_of, scale_record, small_variant

RECORDS = Path(warpgraph.__file__).parent / "workloads" / "records" / "h200"
NAMES = sorted(p.name for p in RECORDS.iterdir() if (p / "launch.json").is_file())


def _ints(rec):
    return [p.value for p in rec.params if p.kind in ("u32", "s32", "u64", "s64")]


@pytest.mark.parametrize("name", NAMES)
def test_small_variant_keeps_divisibility(name):
    r = load_record(RECORDS / name)
    s = small_variant(r)
    s.validate_against(None)
    assert s.ptx_text() == r.ptx_text() and s.entry == r.entry and s.measured is None
    assert s.source["scaled_from"] == r.name
    for old, new in zip(_ints(r), _ints(s)):
        assert (old % 16 == 0) <= (new % 16 == 0)
        assert (new == 1) == (old == 1)
    assert s.n_ctas <= 16 and s.block == r.block and s.shared_bytes == r.shared_bytes


def test_gemm_small_sizes_and_grid():
    r = load_record(RECORDS / "gemm_ptr_M512_N3000_K1536")
    s = small_variant(r)
    assert s.name == "gemm_ptr_M256_N200_K256" and s.grid == [4, 1, 1]  # cdiv(256,128)*cdiv(200,128)
    assert s.buffers["b"].shape == [256, 200] and _ints(s) == [256, 200, 256, 256, 200, 200]
    assert 200 % 16 != 0  # the unvectorised (N % 16 != 0) path is kept


def test_attention_and_tma():
    s = small_variant(load_record(RECORDS / "attn_B4_H16_S1024_D128_causal1"))
    assert s.name == "attn_B1_H2_S256_D128_causal1" and s.grid == [2, 2, 1] and s.buffers["q"].shape == [1, 2, 256, 128]
    t = scale_record(load_record(RECORDS / "gemm_tma_M4096_N4096_K4096"), M=384, N=256, K=128)
    assert t.grid == [6, 1, 1] and t.buffers["b"].shape == [256, 128]
    assert [p.value for p in t.params[1:5]] == [384, 128, 128, 1]
    assert t.params[0].value.box == [128, 64]


def test_factor():
    t = scale_record(load_record(RECORDS / "gemm_ptr_M2048_N2048_K2048"), factor=3)
    assert all(v % 16 == 0 for v in _ints(t)) and t.buffers["a"].shape == [688, 688]


@pytest.mark.parametrize("kw,frag", [(dict(M=100), "multiple of 16"), (dict(Q=4), "unknown size")])
def test_rejects_bad_sizes(kw, frag):
    with pytest.raises(RecordError) as ei:
        scale_record(load_record(RECORDS / "gemm_tma_M2048_N2048_K2048"), **kw)
    assert frag in str(ei.value)


def test_attention_sequence_must_be_whole_tiles():
    with pytest.raises(RecordError):
        scale_record(load_record(RECORDS / "attn_B4_H16_S1024_D64_causal0"), S=192)


def test_refuses_unknown_layout():
    r = load_record(RECORDS / "swiglu_n16777216")
    bad = r.derive(grid=[3, 1, 1])
    with pytest.raises(RecordError) as ei:
        scale_record(bad, n=4096)
    assert "layout" in ei.value.message
    assert family_of(r).sizes == ("n",)

"""DeviceMemory: layout/alignment, init, views, bounds, params, tensormaps."""
import json
from pathlib import Path

import numpy as np
import pytest

import warpgraph
from warpgraph.workloads.memory import GLOBAL_BASE, PARAM_BASE, TMAP_MAGIC, DeviceMemory, bf16_bits_to_f32, f32_to_bf16_bits
from warpgraph.workloads.record import load_record, record_from_dict
from warpgraph.workloads.scale import small_variant

RECORDS = Path(warpgraph.__file__).parent / "workloads" / "records" / "h200"


def _rec(name):
    return small_variant(load_record(RECORDS / name))


def test_layout_alignment_and_guard():
    r = _rec("gemm_tma_M2048_N2048_K2048")
    m = DeviceMemory.from_record(r, seed=0)
    addrs = [m.addr_of(n) for n in r.buffers]
    assert addrs[0] == GLOBAL_BASE
    assert all(a % 256 == 0 for a in addrs) and addrs == sorted(addrs)
    for n, a2 in zip(list(r.buffers)[:-1], addrs[1:]):
        assert a2 >= m.addr_of(n) + r.buffers[n].nbytes + 256  # guard gap
    assert m.view("a").shape == (256, 256) and m.view("a").dtype == np.float16


def test_init_seeded_normal_zero_poison():
    r = _rec("gemm_ptr_M2048_N2048_K2048")
    m1, m2, m3 = (DeviceMemory.from_record(r, seed=s) for s in (0, 0, 1))
    a = m1.view("a").astype(np.float32)
    assert np.array_equal(m1.view("a"), m2.view("a")) and not np.array_equal(m1.view("a"), m3.view("a"))
    assert abs(a.std() - 0.1) < 0.01 and abs(a.mean()) < 0.01
    assert np.isnan(m1.view("c")).all()
    assert not DeviceMemory.from_record(r, init_values=False).data.any()


def test_poison_and_normal_for_other_dtypes():
    d = {"format": "launch-record/1", "name": "t", "entry": "k", "grid": [1], "block": [32],
         "buffers": {"x": {"dtype": "bfloat16", "shape": [1000], "init": {"normal": 2.0}},
                     "y": {"dtype": "bfloat16", "shape": [4], "init": "poison"},
                     "i": {"dtype": "int32", "shape": [3], "init": "poison"},
                     "z": {"dtype": "float32", "shape": [3], "init": "zeros"}},
         "params": [{"ptr": "x"}, {"u32": 7}, {"f32": 0.5}, {"ptr": None}]}
    m = DeviceMemory.from_record(record_from_dict(d))
    x = bf16_bits_to_f32(m.view("x"))
    assert m.view("x").dtype == np.uint16 and 1.8 < x.std() < 2.2
    assert np.isnan(bf16_bits_to_f32(m.view("y"))).all()
    assert (m.view("i") == -1).all() and (m.view("z") == 0).all()
    pb = m.param_bytes()
    assert m.param_offsets == [0, 8, 12, 16] and len(pb) == 24
    assert np.frombuffer(pb[0:8], np.uint64)[0] == m.addr_of("x")
    assert np.frombuffer(pb[8:12], np.uint32)[0] == 7 and np.frombuffer(pb[12:16], np.float32)[0] == 0.5
    assert pb[16:24] == bytes(8)


def test_bf16_roundtrip():
    x = np.array([1.0, -2.5, 3.140625, 1e-3, np.inf, 0.0], dtype=np.float32)
    assert np.array_equal(bf16_bits_to_f32(f32_to_bf16_bits(x))[:3], x[:3])
    assert f32_to_bf16_bits(np.float32(1.00390625)) == 0x3F80  # tie -> even
    assert np.isnan(bf16_bits_to_f32(f32_to_bf16_bits(np.array([np.nan], np.float32))))[0]


def test_check_range_vectorised():
    r = _rec("swiglu_n16777216")
    m = DeviceMemory.from_record(r, init_values=False)
    a, n = m.addr_of("a"), r.buffers["a"].nbytes
    addrs = np.array([a, a + n - 4, a + n - 2, a + n, a - 4, 0, m.addr_of("c") + 4], dtype=np.int64)
    assert m.check_range(addrs, 4).tolist() == [True, True, False, False, False, False, True]
    assert m.buffer_index(addrs).tolist() == [0, 0, 0, -1, -1, -1, 2]
    assert "past the end of 'a'" in m.describe_addr(a + n + 8)
    with pytest.raises(IndexError):
        m.read(a + n - 1, 2)


def test_gather_scatter_read_write():
    r = _rec("swiglu_n16777216")
    m = DeviceMemory.from_record(r)
    a = m.addr_of("a")
    g = m.gather(np.array([a, a + 2]), 2).view(np.float16).reshape(-1)
    assert np.array_equal(g, m.view("a")[:2])
    m.scatter(np.array([m.addr_of("c"), m.addr_of("c") + 2]), np.array([1.5, -2.0], dtype=np.float16))
    assert m.view("c")[:2].tolist() == [1.5, -2.0]
    m.write(m.addr_of("c") + 4, np.float16(3.0).tobytes())
    assert m.read(m.addr_of("c") + 4, 2).view(np.float16)[0] == 3.0


def test_tensormaps_and_param_layout():
    r = _rec("gemm_tma_M2048_N2048_K2048")
    m = DeviceMemory.from_record(r, init_values=False)
    assert m.param_offsets[:6] == [0, 128, 132, 136, 144, 192] and m.param_offsets[-2:] == [552, 560]
    assert m.param_size == 568 and len(m.param_bytes()) == 568
    assert len(m.tensormaps) == 3
    t = m.tensormaps[2]
    assert (t.buffer, t.dims, t.box, t.strides_bytes, t.swizzle_bytes, t.elem_bytes) == ("c", (256, 256), (64, 128), (2, 512), 128, 2)
    assert t.base_addr == m.addr_of("c") and t.box_bytes == 64 * 128 * 2
    blob = m.param_bytes()[192:320]
    assert np.frombuffer(blob[:8], np.uint32).tolist() == [TMAP_MAGIC, 1]
    assert m.tensormap_from_param(blob).buffer == "b"
    assert m.tensormap_from_param(m.param_addr(10)) is t
    assert m.tensormap_from_param(0).buffer == "a"
    assert m.param_addr(0) == PARAM_BASE
    with pytest.raises(ValueError):
        m.tensormap_from_param(m.param_addr(1))
    assert t.inbounds_bytes((0, 0)) == t.box_bytes and t.inbounds_bytes((240, 0)) == 16 * 128 * 2


def test_full_size_allocation_is_fast():
    import time

    r = load_record(RECORDS / "gemm_tma_M4096_N4096_K4096")
    t0 = time.perf_counter()
    m = DeviceMemory.from_record(r, init_values=False)
    assert time.perf_counter() - t0 < 2.0 and m.size > 3 * 4096 * 4096 * 2

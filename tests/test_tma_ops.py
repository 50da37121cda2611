"""TMA semantics (warpgraph.workloads.functional.tma_ops) against naive per-element references written from
the PTX ISA text (§5.5 tensor maps, §5.5.6 swizzle modes, §9.7.9.25.5 cp.async.bulk.tensor)."""
from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from warpgraph.core.errors import SimulationError
from warpgraph.workloads.functional.tma_ops import (
    bulk_copy, swizzle_addr, tma_load, tma_store, unswizzle_offsets)

BASE = 0x7F00_0000_0000


def make_tmap(shape_outer_first, dtype, box_outer_first, swizzle=0, oob="zero", base=BASE, pad_elems=0):
    """A duck-typed TensorMap over a dense row-major tensor (optionally with padded rows)."""
    dt = np.dtype(dtype)
    dims = list(reversed(shape_outer_first))
    eb = dt.itemsize
    strides, acc = [], (dims[0] + pad_elems) * eb
    for d in dims[1:]:
        strides.append(acc)
        acc *= d
    return SimpleNamespace(dtype=dt, elem_bytes=eb, dims=dims, strides_bytes=strides,
                           box=list(reversed(box_outer_first)), swizzle_bytes=swizzle, oob_fill=oob,
                           base_addr=base)


def gmem_for(tm, rng):
    size = tm.strides_bytes[-1] * tm.dims[-1] if tm.strides_bytes else tm.dims[0] * tm.elem_bytes
    return rng.integers(0, 256, size=size + 64, dtype=np.uint8)


def naive_swizzle_image(dense: bytes, sw: int) -> bytearray:
    """PTX ISA §5.5.6 in words: 16-byte chunk j of each (sw)-byte group is moved to chunk j XOR (row % n),
    where row is the 128-byte row of the smem address and n = sw / 16 (128B: 8, 64B: 4, 32B: 2)."""
    if sw == 0:
        return bytearray(dense)
    out = bytearray(len(dense))
    nchunks = sw // 16
    for o in range(len(dense)):
        group = o // sw
        chunk = (o % sw) // 16
        row128 = o // 128
        newchunk = chunk ^ (row128 % nchunks)
        out[group * sw + newchunk * 16 + o % 16] = dense[o]
    return out


def naive_load(gmem, tm, coord):
    eb = tm.elem_bytes
    strides = [eb] + list(tm.strides_bytes)
    dense = bytearray()
    inb = 0
    sectors = set()
    nan = 0x7FF7 if eb == 2 else (1 << (8 * eb - 1)) - 1       # fp16 value observed on an H200
    fill = nan.to_bytes(eb, "little") if tm.oob_fill == "nan" else bytes(eb)
    for idx in itertools.product(*[range(b) for b in reversed(tm.box)]):
        idx = idx[::-1]                                   # innermost first
        c = [coord[d] + idx[d] for d in range(len(tm.dims))]
        if all(0 <= c[d] < tm.dims[d] for d in range(len(c))):
            a = tm.base_addr + sum(c[d] * strides[d] for d in range(len(c)))
            dense += bytes(gmem[a - BASE: a - BASE + eb])
            inb += eb
            sectors.add(a // 32)
        else:
            dense += fill
    return naive_swizzle_image(bytes(dense), tm.swizzle_bytes), inb, sorted(sectors)


# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("sw", [0, 32, 64, 128])
def test_swizzle_addr_matches_isa_chunk_xor_and_is_involution(sw):
    n = 4096
    a = np.arange(n, dtype=np.int64)
    s = swizzle_addr(a, sw)
    ref = naive_swizzle_image(bytes(range(256)) * (n // 256), sw)
    # byte at dense offset o lands at s[o]
    img = np.zeros(n, np.uint8)
    img[s] = np.frombuffer(bytes(range(256)) * (n // 256), np.uint8)
    assert bytes(img) == bytes(ref)
    assert np.array_equal(swizzle_addr(s, sw), a)
    assert sorted(s.tolist()) == list(range(n))
    assert swizzle_addr(int(s[1234]), sw) == 1234
    p = unswizzle_offsets(sw, 2048)
    assert np.array_equal(p, s[:2048])


def test_swizzle_128_concrete_pattern():
    # row r of a 128-byte-row tile: 16-byte chunk c is stored at chunk c ^ (r % 8)
    for r in range(16):
        for c in range(8):
            assert swizzle_addr(r * 128 + c * 16 + 5, 128) == r * 128 + ((c ^ (r % 8)) * 16) + 5
    # 64B swizzle on a 64-byte-row tile: rows (2m, 2m+1) share a 128-byte line, XOR with m % 4
    for r in range(16):
        for c in range(4):
            assert swizzle_addr(r * 64 + c * 16, 64) == r * 64 + (c ^ ((r // 2) % 4)) * 16


def _check_load(tm, coords, rng, smem_addrs=None):
    gmem = gmem_for(tm, rng)
    coords = np.asarray(coords, np.int64)
    img, inb, sec, ops = tma_load(gmem, BASE, tm, coords, with_op_index=True, smem_addrs=smem_addrs)
    for i, c in enumerate(coords):
        ref, rinb, rsec = naive_load(gmem, tm, list(c))
        assert bytes(img[i]) == bytes(ref), f"op {i} coord {c}"
        assert inb[i] == rinb
        assert sec[ops == i].tolist() == rsec
    return gmem, img


@pytest.mark.parametrize("sw,box,dtype", [(128, (16, 64), np.float16), (64, (8, 32), np.float16),
                                          (32, (8, 16), np.float16), (0, (4, 24), np.float16),
                                          (128, (8, 32), np.float32), (128, (8, 128), np.uint8),
                                          (64, (16, 16), np.float16)])
def test_tma_load_2d_vs_naive_incl_oob(sw, box, dtype):
    rng = np.random.default_rng(0)
    tm = make_tmap((40, 200), dtype, box, sw)
    coords = [(0, 0), (64, 8), (190, 35), (-8, -3), (200, 0), (-64, 40), (17 * 8, -15)]
    _check_load(tm, coords, rng)


def test_tma_load_3d_padded_strides_and_nan_fill():
    rng = np.random.default_rng(1)
    tm = make_tmap((3, 10, 70), np.float16, (2, 4, 64), 128, oob="nan", pad_elems=10)
    _, img = _check_load(tm, [(0, 0, 0), (16, 8, 2), (-8, -2, -1), (64, 9, 3)], rng)
    # a fully OOB box is all NaN: fp16 0x7FF7 as an H200 fills it
    full_oob = tma_load(gmem_for(tm, rng), BASE, tm, np.array([[100, 20, 5]]))[0]
    assert np.all(full_oob.view(np.uint16) == 0x7FF7)
    assert np.isnan(full_oob.view(np.float16)).all()


def test_tma_load_nan_fill_rejected_for_integers():
    tm = make_tmap((8, 16), np.int8, (8, 16), 0, oob="nan")
    with pytest.raises(SimulationError):
        tma_load(np.zeros(256, np.uint8), BASE, tm, np.array([[-16, 0]]))


def test_tma_load_smem_phase():
    """The swizzle is a function of the absolute smem address: a destination at 128 B past a 1024-B boundary
    sees the pattern shifted by one 128-B row."""
    rng = np.random.default_rng(2)
    tm = make_tmap((64, 64), np.float16, (8, 64), 128)
    gmem = gmem_for(tm, rng)
    img0 = tma_load(gmem, BASE, tm, np.array([[0, 0]]))[0][0]
    img1 = tma_load(gmem, BASE, tm, np.array([[0, 0]]), smem_addrs=np.array([128]))[0][0]
    big = np.zeros(128 + img1.size, np.uint8)
    big[128:] = img1
    dense = np.zeros_like(big)
    dense[swizzle_addr(np.arange(big.size), 128)] = big
    dense0 = np.zeros_like(img0)
    dense0[swizzle_addr(np.arange(img0.size), 128)] = img0
    assert np.array_equal(dense[128:], dense0)
    assert not np.array_equal(img0, img1)
    with pytest.raises(SimulationError, match="0x40"):
        tma_load(gmem, BASE, tm, np.array([[0, 0]]), smem_addrs=np.array([64]))


def test_tma_errors():
    tm = make_tmap((64, 64), np.float16, (8, 128), 128)           # 256-B inner box > 128-B span
    with pytest.raises(SimulationError, match="swizzle"):
        tma_load(np.zeros(64 * 128, np.uint8), BASE, tm, np.array([[0, 0]]))
    tm = make_tmap((64, 64), np.float16, (8, 64), 128)
    with pytest.raises(SimulationError, match="outside allocated"):
        tma_load(np.zeros(100, np.uint8), BASE, tm, np.array([[0, 0]]))
    tm = make_tmap((64, 64), np.float16, (8, 4), 0)               # 8-B inner box
    with pytest.raises(SimulationError, match="multiple of 16"):
        tma_load(np.zeros(64 * 128, np.uint8), BASE, tm, np.array([[0, 0]]))


@pytest.mark.parametrize("sw", [0, 32, 64, 128])
def test_tma_store_round_trip_and_oob_dropped(sw):
    rng = np.random.default_rng(3)
    inner = max(sw, 32) // 2
    tm = make_tmap((37, 3 * inner + 5), np.float16, (16, inner), sw)
    src = gmem_for(tm, rng)
    coords = np.array([[x, y] for y in range(-8, 40, 16) for x in range(-inner, 4 * inner, inner)], np.int64)
    imgs, inb, sec = tma_load(src, BASE, tm, coords)
    dst = np.zeros_like(src)
    sinb, ssec = tma_store(dst, BASE, tm, coords, imgs)
    assert np.array_equal(sinb, inb) and np.array_equal(ssec, sec)
    n = tm.strides_bytes[0] * tm.dims[1]
    assert np.array_equal(dst[:n], src[:n])           # the boxes tile the tensor: everything written back
    assert not dst[n:].any()                           # nothing written outside the tensor


def test_tma_store_writes_unswizzled_values():
    tm = make_tmap((8, 64), np.float16, (8, 64), 128)
    vals = np.arange(8 * 64, dtype=np.float16).reshape(8, 64)
    img = np.zeros(1024, np.uint8)
    dense = vals.view(np.uint8).reshape(-1)
    img[swizzle_addr(np.arange(1024), 128)] = dense
    dst = np.zeros(1024, np.uint8)
    tma_store(dst, BASE, tm, np.array([[0, 0]]), img[None])
    assert np.array_equal(dst.view(np.float16).reshape(8, 64), vals)


@settings(max_examples=40, deadline=None)
@given(sw=st.sampled_from([0, 32, 64, 128]), rows=st.integers(1, 12), ncols16=st.integers(1, 8),
       H=st.integers(1, 30), W=st.integers(1, 90), cx=st.integers(-80, 100), cy=st.integers(-20, 40),
       seed=st.integers(0, 2**16))
def test_tma_load_property(sw, rows, ncols16, H, W, cx, cy, seed):
    box_inner = 8 * ncols16 if sw == 0 else sw // 2
    rows = rows if sw == 0 else 8 * ((rows + 7) // 8)
    tm = make_tmap((H, W), np.float16, (rows, box_inner), sw)
    _check_load(tm, [(cx, cy)], np.random.default_rng(seed))


def test_bulk_copy_gmem_to_smem():
    rng = np.random.default_rng(4)
    g = rng.integers(0, 256, 4096, dtype=np.uint8)
    smem = np.zeros((2, 1024), np.uint8)
    bulk_copy(g, [16, 512], smem, [0, 256], 128, dst_rows=[1, 0])
    assert np.array_equal(smem[1, :128], g[16:144])
    assert np.array_equal(smem[0, 256:384], g[512:640])
    with pytest.raises(SimulationError, match="multiple of 16"):
        bulk_copy(g, [8], smem, [0], 128, dst_rows=[0])
    with pytest.raises(SimulationError, match="outside"):
        bulk_copy(g, [0], smem, [1024 - 64], 128, dst_rows=[0])

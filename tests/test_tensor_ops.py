"""ldmatrix / stmatrix / mma.sync semantics (warpgraph.workloads.functional.tensor_ops) against naive per-lane
references written from the PTX ISA text (§9.7.14.5.15-16 ldmatrix/stmatrix, §9.7.14.5.x mma fragments)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from warpgraph.core.errors import SimulationError
from warpgraph.workloads.functional import tensor_ops as T
from warpgraph.workloads.functional.tensor_ops import ldmatrix, mma_fragment, mma_sync, stmatrix


# ---------------------------------------------------------------- naive ldmatrix (PTX ISA §9.7.14.5.15)

def naive_ldmatrix(smem_row: np.ndarray, addrs, num, trans):
    """For matrix j, thread 8j+r gives the address of row r. Without .trans lane t receives row t/4,
    elements 2*(t%4) and 2*(t%4)+1; with .trans it receives the same positions of the transposed matrix."""
    u16 = lambda a: int(smem_row[a]) | (int(smem_row[a + 1]) << 8)   # noqa: E731
    out = np.zeros((32, num), np.uint32)
    for t in range(32):
        for j in range(num):
            vals = []
            for e in range(2):
                if not trans:
                    row, col = t // 4, 2 * (t % 4) + e
                else:   # element (r, c) of the transposed matrix is element (c, r) of the stored one
                    row, col = 2 * (t % 4) + e, t // 4
                vals.append(u16(int(addrs[8 * j + row]) + 2 * col))
            out[t, j] = vals[0] | (vals[1] << 16)
    return out


def _random_row_addrs(rng, nbytes, n=32):
    rows = rng.choice(nbytes // 16, size=n, replace=False)
    return (rows * 16).astype(np.uint32)


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_vs_naive(num, trans):
    rng = np.random.default_rng(num + 10 * trans)
    smem = rng.integers(0, 256, (3, 2048), dtype=np.uint8)
    nw = 5
    cta = np.array([0, 2, 1, 2, 0])
    addrs = np.stack([_random_row_addrs(rng, 2048) for _ in range(nw)])
    got = ldmatrix(smem, cta, addrs, num, trans)
    assert got.shape == (nw, 32, num) and got.dtype == np.uint32
    for w in range(nw):
        assert np.array_equal(got[w], naive_ldmatrix(smem[cta[w]], addrs[w], num, trans))


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_inverse_of_ldmatrix_and_vs_naive(num, trans):
    rng = np.random.default_rng(7 + num)
    smem = np.zeros((2, 1024), np.uint8)
    addrs = np.stack([_random_row_addrs(rng, 512), _random_row_addrs(rng, 512) + 512])
    vals = rng.integers(0, 2**32, (2, 32, num), dtype=np.uint64).astype(np.uint32)
    stmatrix(smem, np.array([1, 1]), addrs, vals, trans)
    assert not smem[0].any()
    assert np.array_equal(ldmatrix(smem, np.array([1, 1]), addrs, num, trans), vals)
    # naive: the bytes ldmatrix reads back are exactly where stmatrix put each lane's elements
    for w in range(2):
        assert np.array_equal(naive_ldmatrix(smem[1], addrs[w], num, trans), vals[w])


def test_ldmatrix_errors():
    smem = np.zeros((1, 256), np.uint8)
    addrs = np.arange(32, dtype=np.uint32)[None] * 16
    addrs[0, 3] += 8
    with pytest.raises(SimulationError, match="misaligned shared address 0x38"):
        ldmatrix(smem, [0], addrs, 1, False)
    addrs = (np.arange(32, dtype=np.uint32)[None] * 16)
    with pytest.raises(SimulationError, match="out of range"):
        ldmatrix(smem, [0], addrs, 4, False)                   # rows 16..31 beyond 256 B
    assert ldmatrix(smem, [0], addrs, 2, False).shape == (1, 32, 2)   # lanes 16..31 ignored for .x2


# ---------------------------------------------------------------- naive mma fragments (PTX ISA wording)

def naive_frag(shape, etype, operand):
    """List over lanes of [(row, col) of element i] transcribed from the PTX ISA fragment figures' formulas."""
    out = []
    for lane in range(32):
        groupID, tig = lane >> 2, lane % 4
        els = []
        if operand == "c":
            for i in range(4):
                els.append((groupID if i < 2 else groupID + 8, tig * 2 + (i & 1)))
        elif etype in ("f16", "bf16") and shape == "m16n8k16":
            if operand == "a":
                for i in range(8):
                    row = groupID if (i < 2 or 4 <= i < 6) else groupID + 8
                    col = tig * 2 + (i & 1) if i < 4 else tig * 2 + (i & 1) + 8
                    els.append((row, col))
            else:
                for i in range(4):
                    row = tig * 2 + (i & 1) if i < 2 else tig * 2 + (i & 1) + 8
                    els.append((row, groupID))
        elif etype in ("f16", "bf16") and shape == "m16n8k8":
            if operand == "a":
                for i in range(4):
                    els.append((groupID if i < 2 else groupID + 8, tig * 2 + (i & 1)))
            else:
                for i in range(2):
                    els.append((tig * 2 + i, groupID))
        elif etype == "tf32" and shape == "m16n8k8":
            if operand == "a":
                for i in range(4):
                    row = groupID if i in (0, 2) else groupID + 8
                    col = tig if i < 2 else tig + 4
                    els.append((row, col))
            else:
                for i in range(2):
                    els.append((tig if i == 0 else tig + 4, groupID))
        elif etype == "tf32" and shape == "m16n8k4":
            if operand == "a":
                els = [(groupID, tig), (groupID + 8, tig)]
            else:
                els = [(tig, groupID)]
        elif shape == "m16n8k16":           # 8-bit integer
            if operand == "a":
                for i in range(8):
                    els.append((groupID if i < 4 else groupID + 8, tig * 4 + (i & 3)))
            else:
                for i in range(4):
                    els.append((tig * 4 + i, groupID))
        elif shape == "m16n8k32":           # 8-bit integer / fp8
            if operand == "a":
                for i in range(16):
                    row = groupID if (i < 4 or 8 <= i < 12) else groupID + 8
                    col = tig * 4 + (i & 3) if i < 8 else tig * 4 + (i & 3) + 16
                    els.append((row, col))
            else:
                for i in range(8):
                    row = tig * 4 + (i & 3) if i < 4 else tig * 4 + (i & 3) + 16
                    els.append((row, groupID))
        out.append(els)
    return out


BITS = {"f16": 16, "bf16": 16, "tf32": 32, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8, "f32": 32, "s32": 32}


def random_elems(rng, etype, shape):
    """(bits uint32, exact float64/int64 values) of random elements of etype."""
    if etype == "f16":
        v = (rng.standard_normal(shape) * 2).astype(np.float16)
        return v.view(np.uint16).astype(np.uint32), v.astype(np.float64)
    if etype == "bf16":
        f = rng.standard_normal(shape).astype(np.float32)
        b = f.view(np.uint32) >> 16
        return b, (b << 16).view(np.float32).astype(np.float64)
    if etype == "tf32":
        f = rng.standard_normal(shape).astype(np.float32)
        b = f.view(np.uint32)                                   # low bits set: the MMA must ignore them
        return b, (b & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if etype in ("s8", "u8"):
        b = rng.integers(0, 256, shape).astype(np.uint32)
        v = b.astype(np.int64) - (256 * (b >= 128) if etype == "s8" else 0)
        return b, v
    # fp8: pick finite codes, decode from the format definition
    b = rng.integers(0, 256, shape).astype(np.uint32)
    if etype == "e4m3":
        b = np.where((b & 0x7F) == 0x7F, 0x3C, b)              # drop NaN codes
        s, e, m = b >> 7, (b >> 3) & 15, b & 7
        v = np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e.astype(float) - 7))
    else:
        b = np.where(((b >> 2) & 31) == 31, 0x3C, b)           # drop inf/NaN codes
        s, e, m = b >> 7, (b >> 2) & 31, b & 3
        v = np.where(e == 0, m / 4 * 2.0 ** -14, (1 + m / 4) * 2.0 ** (e.astype(float) - 15))
    return b.astype(np.uint32), np.where(s == 1, -v, v)


def pack_frag(bits_matrix, frag, bits):
    """Registers (32, nregs) from a matrix of element bits through a naive fragment (element i of lane t goes
    into register i // (32 / bits) at position i % (32 / bits))."""
    per = 32 // bits
    nregs = len(frag[0]) // per
    regs = np.zeros((32, nregs), np.uint64)
    for t in range(32):
        for i, (r, c) in enumerate(frag[t]):
            regs[t, i // per] |= np.uint64(int(bits_matrix[r, c])) << np.uint64(bits * (i % per))
    return regs.astype(np.uint32)


MMA_CASES = [("m16n8k16", "f16", "f32"), ("m16n8k16", "bf16", "f32"), ("m16n8k8", "f16", "f32"),
             ("m16n8k8", "bf16", "f32"), ("m16n8k8", "tf32", "f32"), ("m16n8k4", "tf32", "f32"),
             ("m16n8k16", "s8", "s32"), ("m16n8k16", "u8", "s32"), ("m16n8k32", "s8", "s32"),
             ("m16n8k32", "u8", "s32"), ("m16n8k32", "e4m3", "f32"), ("m16n8k32", "e5m2", "f32"),
             ("m16n8k16", "f16", "f16")]


@pytest.mark.parametrize("shape,atype,ctype", MMA_CASES)
def test_mma_sync_vs_matmul_from_naive_fragments(shape, atype, ctype):
    m, n, k = 16, 8, int(shape.split("k")[1])
    rng = np.random.default_rng(hash((shape, atype, ctype)) % 2**32)
    nw = 3
    fa, fb, fc = naive_frag(shape, atype, "a"), naive_frag(shape, atype, "b"), naive_frag(shape, ctype, "c")
    a_regs, b_regs, c_regs, ref = [], [], [], []
    for _ in range(nw):
        abits, A = random_elems(rng, atype, (m, k))
        bbits, B = random_elems(rng, atype, (k, n))
        if ctype == "s32":
            C = rng.integers(-1000, 1000, (m, n))
            cbits = C.astype(np.int32).view(np.uint32)
        elif ctype == "f16":
            C16 = rng.standard_normal((m, n)).astype(np.float16)
            C, cbits = C16.astype(np.float64), C16.view(np.uint16).astype(np.uint32)
        else:
            C32 = rng.standard_normal((m, n)).astype(np.float32)
            C, cbits = C32.astype(np.float64), C32.view(np.uint32)
        a_regs.append(pack_frag(abits, fa, BITS[atype]))
        b_regs.append(pack_frag(bbits, fb, BITS[atype]))
        c_regs.append(pack_frag(cbits, fc, BITS[ctype]))
        ref.append(A @ B + C)
    a_regs, b_regs, c_regs = map(np.stack, (a_regs, b_regs, c_regs))
    c_in = c_regs.view(np.float32) if ctype == "f32" else c_regs.view(np.int32) if ctype == "s32" else c_regs
    d = mma_sync(a_regs, b_regs, c_in, shape, atype, ctype)
    assert d.dtype == c_in.dtype and d.shape == c_in.shape
    dbits = d.view(np.uint32)
    per = 32 // BITS[ctype]
    for w in range(nw):
        for t in range(32):
            for i, (r, c) in enumerate(fc[t]):
                b = (int(dbits[w, t, i // per]) >> (BITS[ctype] * (i % per))) & ((1 << BITS[ctype]) - 1)
                if ctype == "s32":
                    assert np.int64(np.uint32(b).view(np.int32)) == ref[w][r, c]
                elif ctype == "f16":
                    assert np.uint16(b).view(np.float16) == np.float16(ref[w][r, c])
                else:
                    assert np.uint32(b).view(np.float32) == np.float32(ref[w][r, c]), (w, t, i)


@pytest.mark.parametrize("shape,atype,ctype", MMA_CASES)
def test_fragment_tables_match_naive_and_cover_matrix_once(shape, atype, ctype):
    for op, et in (("a", atype), ("b", atype), ("c", ctype)):
        rows, cols = mma_fragment(shape, et, op)
        naive = naive_frag(shape, et, op)
        got = [list(zip(rows[t].reshape(-1).tolist(), cols[t].reshape(-1).tolist())) for t in range(32)]
        assert got == naive
        pairs = {p for lane in got for p in lane}
        assert len(pairs) == sum(len(x) for x in got)          # a bijection onto the matrix


def test_mma_s32_wraps_and_int_inputs():
    # all-127 s8 A and B, k=32: 32*127*127 = 516128 plus c near 2^31 wraps
    a = np.full((1, 32, 4), 0x7F7F7F7F, np.uint32)
    b = np.full((1, 32, 2), 0x7F7F7F7F, np.uint32)
    c = np.full((1, 32, 4), 2**31 - 1, np.int32)
    d = mma_sync(a, b, c, "m16n8k32", "s8", "s32")
    assert np.all(d == np.int32(np.int64(2**31 - 1 + 516128) - 2**32))
    d = mma_sync(a, b, c, "m16n8k32", "s8", "s32", satfinite=True)
    assert np.all(d == 2**31 - 1)


def test_ldmatrix_feeds_mma_like_triton():
    """ldmatrix.x4 with lane l -> &A[l % 16][8 * (l // 16)] gives the m16n8k16 A fragment, and
    ldmatrix.x2.trans over a row-major K x N tile gives the B fragment (as Triton's sm_80 PTX does)."""
    rng = np.random.default_rng(5)
    A = rng.standard_normal((16, 16)).astype(np.float16)
    B = rng.standard_normal((16, 8)).astype(np.float16)
    smem = np.zeros((1, 1024), np.uint8)
    smem[0, :512] = A.view(np.uint8).reshape(-1)
    smem[0, 512:768] = B.view(np.uint8).reshape(-1)
    lane = np.arange(32)
    a_addr = (lane % 16) * 32 + (lane // 16) * 16
    b_addr = 512 + (lane % 16) * 16
    a = ldmatrix(smem, [0], a_addr[None], 4, False)
    b = ldmatrix(smem, [0], b_addr[None], 2, True)
    d = mma_sync(a, b, np.zeros((1, 32, 4), np.float32), "m16n8k16", "f16", "f32")
    rows, cols = mma_fragment("m16n8k16", "f32", "c")
    ref = A.astype(np.float64) @ B.astype(np.float64)
    assert np.array_equal(d[0], ref[rows[..., 0], cols[..., 0]].astype(np.float32))


def test_accumulation_model_hook():
    a = np.zeros((1, 32, 4), np.uint32)
    b = np.zeros((1, 32, 2), np.uint32)
    c = np.ones((1, 32, 4), np.float32)
    seen = {}

    def fake(A, B, C, **kw):
        seen.update(kw)
        return C * 3

    try:
        T.set_accumulation_model(fake, "fake")
        assert T.ACCUMULATE == "fake"
        assert np.all(mma_sync(a, b, c, "m16n8k16", "f16", "f32") == 3)
        assert seen["op"] == "mma" and seen["shape"] == "m16n8k16" and seen["ctype"] == "f32"
    finally:
        T.set_accumulation_model(None)
    assert T.ACCUMULATE == "fp32"
    assert np.all(mma_sync(a, b, c, "m16n8k16", "f16", "f32") == 1)


def test_mma_negative_zero_becomes_positive():
    c = np.full((1, 32, 4), -0.0, np.float32)
    d = mma_sync(np.zeros((1, 32, 4), np.uint32), np.zeros((1, 32, 2), np.uint32), c, "m16n8k16", "f16")
    assert np.all(d.view(np.uint32) == 0)


def test_mma_bad_shape():
    with pytest.raises(SimulationError, match="not supported"):
        mma_sync(np.zeros((1, 32, 4), np.uint32), np.zeros((1, 32, 2), np.uint32),
                 np.zeros((1, 32, 4), np.float32), "m16n8k32", "f16")


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), num=st.sampled_from([1, 2, 4]), trans=st.booleans())
def test_stmatrix_ldmatrix_roundtrip_property(seed, num, trans):
    rng = np.random.default_rng(seed)
    smem = rng.integers(0, 256, (1, 4096), dtype=np.uint8)
    addrs = _random_row_addrs(rng, 4096)[None]
    vals = rng.integers(0, 2**32, (1, 32, num), dtype=np.uint64).astype(np.uint32)
    stmatrix(smem, [0], addrs, vals, trans)
    assert np.array_equal(ldmatrix(smem, [0], addrs, num, trans), vals)

"""wgmma end to end: global tile -> tma_load (swizzled smem image) -> 64-bit matrix descriptors built exactly as
Triton 3.6's PTX builds them -> wgmma -> accumulator fragment, checked against numpy matmul of the tiles.

Descriptor constants come from workloads/records/h200/*/kernel.ptx:
* gemm_tma (SS, K-major A and B, 128B swizzle): ``or.b64 %rd6, %rd16, 4611686293305294848`` (0x4000004000000000:
  swizzle mode 1 = 128B, SBO = 64 * 16 = 1024 B, LBO = 0), k-steps ``add.s64 ..., 4611686293305294850/52/54``
  (+2/+4/+6 in 16-byte units = +32 B per k16 step); A start = ((A_stage >> 4) + (warp << 7 & 512)) & 16383,
  i.e. warpgroup 1 starts 64 rows (8 KiB) further; B start = bfe(B_stage, 4, 14).
* attn D128 (RS, f16 A in registers, N-major V with imm-trans-b = 1): ``or.b64 %rd75, %rd104,
  4611686293338849280`` (0x4000004002000000: 128B swizzle, LBO = 0x200 * 16 = 8192 B, SBO = 1024 B), k-steps
  ``add.s64 ..., 4611686293338849408/536/664`` (+0x80 = 2048 B = 16 rows of 128 B).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from warpgraph.core.errors import SimulationError
from warpgraph.workloads.functional import tensor_ops as T
from warpgraph.workloads.functional.tensor_ops import decode_smem_desc, wgmma
from warpgraph.workloads.functional.tma_ops import tma_load

BASE = 0x7F00_0000_0000
GEMM_TMA_FLAGS = 4611686293305294848
ATTN_V_FLAGS = 4611686293338849280


def make_tmap(shape_outer_first, dtype, box_outer_first, swizzle, base):
    dt = np.dtype(dtype)
    dims = list(reversed(shape_outer_first))
    strides, acc = [], dims[0] * dt.itemsize
    for d in dims[1:]:
        strides.append(acc)
        acc *= d
    return SimpleNamespace(dtype=dt, elem_bytes=dt.itemsize, dims=dims, strides_bytes=strides,
                           box=list(reversed(box_outer_first)), swizzle_bytes=swizzle, oob_fill="zero",
                           base_addr=base)


def make_desc(start, lbo, sbo, swizzle):
    """PTX ISA "Matrix Descriptor Format": start>>4 in bits 0-13, LBO>>4 in 16-29, SBO>>4 in 32-45,
    swizzle mode in 62-63 (1 = 128B, 2 = 64B, 3 = 32B)."""
    mode = {0: 0, 128: 1, 64: 2, 32: 3}[swizzle]
    return np.uint64(((start >> 4) & 0x3FFF) | (((lbo >> 4) & 0x3FFF) << 16) | (((sbo >> 4) & 0x3FFF) << 32)
                     | (mode << 62))


def naive_d_to_matrix(dregs, n, per=1):
    """PTX ISA wgmma D fragment: thread 32w + l holds, for i in 0..N/2-1, row 16w + l/4 + 8*((i/2)%2),
    column 8*(i/4) + 2*(l%4) + i%2 (f16 accumulators: two i per register, low half first)."""
    out = np.zeros((64, n), dtype=np.float64)
    for th in range(128):
        w, lane = divmod(th, 32)
        for i in range(n // 2):
            r = 16 * w + lane // 4 + 8 * ((i // 2) % 2)
            c = 8 * (i // 4) + 2 * (lane % 4) + i % 2
            v = dregs[th, i // per]
            if per == 2:
                v = np.uint16((int(v) >> (16 * (i % 2))) & 0xFFFF).view(np.float16)
            out[r, c] = v
    return out


def naive_a_regs(P):
    """A-in-registers (PTX ISA wgmma .m64nNk16 A fragment): warp w holds rows 16w.., lane l registers
    a0..a3 = (row g, cols 2t,2t+1), (g+8, 2t..), (g, 2t+8..), (g+8, 2t+8..), g = l/4, t = l%4."""
    bits = P.astype(np.float16).view(np.uint16).astype(np.uint32)
    regs = np.zeros((128, 4), np.uint32)
    for th in range(128):
        w, lane = divmod(th, 32)
        g, t = lane // 4, lane % 4
        for j, (dr, dc) in enumerate([(0, 0), (8, 0), (0, 8), (8, 8)]):
            r, c = 16 * w + g + dr, 2 * t + dc
            regs[th, j] = bits[r, c] | (bits[r, c + 1] << 16)
    return regs


# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("values", ["integers", "normal"])
def test_gemm_tma_chain_like_triton(values):
    rng = np.random.default_rng(0)
    M = N = 256
    K = 128
    if values == "integers":                       # every partial sum exact: demand bit equality
        A = rng.integers(-3, 4, (M, K)).astype(np.float16)
        B = rng.integers(-3, 4, (N, K)).astype(np.float16)
    else:
        A = (rng.standard_normal((M, K)) * 0.5).astype(np.float16)
        B = (rng.standard_normal((N, K)) * 0.5).astype(np.float16)
    a_base, b_base = BASE, BASE + A.nbytes
    gmem = np.concatenate([A.view(np.uint8).reshape(-1), B.view(np.uint8).reshape(-1)])
    tA = make_tmap((M, K), np.float16, (128, 64), 128, a_base)     # launch.json: box [128, 64], swizzle 128
    tB = make_tmap((N, K), np.float16, (128, 64), 128, b_base)
    tiles = [(0, 128), (128, 0)]                                   # two CTAs: (m0, n0)
    smem = np.zeros((2, 98328), np.uint8)
    d = np.zeros((4, 128, 64), np.float32)                         # 2 CTAs x 2 warpgroups, m64n128 f32
    cta = np.array([0, 0, 1, 1])
    wg = np.array([0, 1, 0, 1])
    for kt in range(K // 64):
        stage = kt % 3
        a_off, b_off = stage * 16384, 49152 + stage * 16384
        ia, _, _ = tma_load(gmem, BASE, tA, np.array([[64 * kt, m0] for m0, _ in tiles]))
        ib, _, _ = tma_load(gmem, BASE, tB, np.array([[64 * kt, n0] for _, n0 in tiles]))
        smem[:, a_off:a_off + 16384] = ia
        smem[:, b_off:b_off + 16384] = ib
        rd16 = (((wg * 4) << 7 & 512) + (a_off >> 4)) & 16383        # shl.b32 %r64, warp, 7; and 512; add; and
        rd17 = np.full(4, (b_off >> 4) & 0x3FFF)                    # bfe.u32 %r68, %r61, 4, 14
        for ks in range(4):
            add = GEMM_TMA_FLAGS + 2 * ks                            # or.b64 / add.s64 constants
            d = wgmma(d, smem=smem, cta=cta, a_desc=(rd16 + add).astype(np.uint64),
                      b_desc=(rd17 + add).astype(np.uint64), n=128, atype="f16", scale_d=np.ones(4, bool))
    for i, (c, w) in enumerate(zip(cta, wg)):
        m0, n0 = tiles[c]
        ref = A[m0 + 64 * w: m0 + 64 * w + 64].astype(np.float64) @ B[n0:n0 + 128].astype(np.float64).T
        got = naive_d_to_matrix(d[i], 128)
        if values == "integers":
            assert np.array_equal(got, ref)
        else:
            np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_attn_rs_wgmma_n_major_v_like_triton():
    rng = np.random.default_rng(1)
    keys, D = 64, 128
    P = rng.integers(-2, 3, (64, keys)).astype(np.float16)
    V = rng.integers(-3, 4, (keys, D)).astype(np.float16)        # row-major [key, d]: N (= d) contiguous
    gmem = V.view(np.uint8).reshape(-1).copy()
    tV = make_tmap((keys, D), np.float16, (64, 64), 128, BASE)    # 64 keys x 64 d (128 B rows)
    smem = np.zeros((1, 32768), np.uint8)
    v_base = 8192
    img, _, _ = tma_load(gmem, BASE, tV, np.array([[0, 0], [64, 0]]))
    smem[0, v_base:v_base + 8192] = img[0]                        # d 0..63
    smem[0, v_base + 8192:v_base + 16384] = img[1]                # d 64..127: LBO = 8192
    rd104 = (v_base >> 4) & 0x3FFF
    d = np.zeros((1, 128, 64), np.float32)
    for ks in range(4):
        desc = np.array([rd104 + ATTN_V_FLAGS + 0x80 * ks], np.uint64)
        a_regs = naive_a_regs(P[:, 16 * ks:16 * ks + 16])[None]
        d = wgmma(d, smem=smem, cta=np.array([0]), a_regs=a_regs, b_desc=desc, n=128, atype="f16",
                  scale_d=np.array([ks > 0]), tnsp_b=1)
    assert np.array_equal(naive_d_to_matrix(d[0], 128), P.astype(np.float64) @ V.astype(np.float64))
    f = decode_smem_desc(np.array([ATTN_V_FLAGS], np.uint64))
    assert (f["lbo"][0], f["sbo"][0], f["swizzle"][0]) == (8192, 1024, 128)


def place_operand(smem, mat, major, sw, base, eb_dtype):
    """Write logical operand ``mat`` [mn, k] into smem row 0 in the canonical layout for (major, swizzle) using
    TMA images only, and return (descriptor per k-step list). Layout parameters follow CUTLASS make_gmma_desc:
    K-major swizzled: atoms of (8 rows x S bytes), SBO = 8*S, extra K atoms at +R*S;
    K-major none: core matrices 8 x 16 B, SBO = 128 (next 8 rows), LBO = R*16 (next 8-element K chunk);
    MN-major swizzled: W = S/eb consecutive mn per row, k rows S bytes apart, SBO = 8*S, LBO = next W block;
    MN-major none: 8 mn x 8 k core matrices, LBO = 128 (next 8 k), SBO = next 8-mn block."""
    R, K = mat.shape
    dt = np.dtype(eb_dtype)
    eb = dt.itemsize
    kstep = 32 // eb
    gm = (mat if major == "K" else mat.T).astype(dt)
    gmem = np.ascontiguousarray(gm).view(np.uint8).reshape(-1)
    descs = []
    if major == "K" and sw:
        W = sw // eb
        tm = make_tmap(gm.shape, dt, (R, W), sw, BASE)
        imgs, _, _ = tma_load(gmem, BASE, tm, np.array([[W * j, 0] for j in range(K // W)]))
        for j in range(K // W):
            smem[0, base + j * R * sw: base + (j + 1) * R * sw] = imgs[j]
        for ks in range(K // kstep):
            off = ks * 32
            descs.append(make_desc(base + (off // sw) * R * sw + off % sw, 0, 8 * sw, sw))
    elif major == "K":
        tm = make_tmap(gm.shape, dt, (R, 16 // eb), 0, BASE)
        nch = K * eb // 16
        imgs, _, _ = tma_load(gmem, BASE, tm, np.array([[j * 16 // eb, 0] for j in range(nch)]))
        for j in range(nch):
            smem[0, base + j * R * 16: base + (j + 1) * R * 16] = imgs[j]
        for ks in range(K // kstep):
            descs.append(make_desc(base + 2 * ks * R * 16, R * 16, 128, 0))
    elif sw:
        W = sw // eb
        tm = make_tmap(gm.shape, dt, (K, W), sw, BASE)            # rows = k, inner = W consecutive mn
        imgs, _, _ = tma_load(gmem, BASE, tm, np.array([[W * j, 0] for j in range(R // W)]))
        for j in range(R // W):
            smem[0, base + j * K * sw: base + (j + 1) * K * sw] = imgs[j]
        for ks in range(K // kstep):
            descs.append(make_desc(base + ks * kstep * sw, K * sw, 8 * sw, sw))
    else:
        Tn = 16 // eb
        tm = make_tmap(gm.shape, dt, (K, Tn), 0, BASE)
        imgs, _, _ = tma_load(gmem, BASE, tm, np.array([[Tn * j, 0] for j in range(R // Tn)]))
        for j in range(R // Tn):
            smem[0, base + j * K * 16: base + (j + 1) * K * 16] = imgs[j]
        for ks in range(K // kstep):
            descs.append(make_desc(base + ks * 2 * 128, 128, K * 16, 0))
    return descs


@pytest.mark.parametrize("sw", [0, 32, 64, 128])
@pytest.mark.parametrize("amaj,bmaj", [("K", "K"), ("MN", "K"), ("K", "MN"), ("MN", "MN")])
def test_wgmma_all_layouts_f16(sw, amaj, bmaj):
    rng = np.random.default_rng(sw + 7 * len(amaj) + 3 * len(bmaj))
    n, K = 64, 64
    A = rng.integers(-3, 4, (64, K)).astype(np.float64)
    B = rng.integers(-3, 4, (n, K)).astype(np.float64)          # logical B^T rows (n, k)
    smem = np.zeros((1, 65536), np.uint8)
    da = place_operand(smem, A, amaj, sw, 0, np.float16)
    db = place_operand(smem, B, bmaj, sw, 32768, np.float16)
    d = np.zeros((1, 128, n // 2), np.float32)
    for ks in range(len(da)):
        d = wgmma(d, smem=smem, cta=[0], a_desc=np.array([da[ks]]), b_desc=np.array([db[ks]]), n=n,
                  atype="f16", scale_d=[True], tnsp_a=int(amaj == "MN"), tnsp_b=int(bmaj == "MN"))
    assert np.array_equal(naive_d_to_matrix(d[0], n), A @ B.T)


@pytest.mark.parametrize("atype,dt", [("bf16", None), ("tf32", np.float32), ("e4m3", None), ("s8", np.int8)])
def test_wgmma_other_types_k_major_128b(atype, dt):
    rng = np.random.default_rng(3)
    n = 32
    kstep = {"bf16": 16, "tf32": 8, "e4m3": 32, "s8": 32}[atype]
    K = 4 * kstep                                                  # one 128-byte swizzle row of K
    A = rng.integers(-3, 4, (64, K)).astype(np.float64)
    B = rng.integers(-3, 4, (n, K)).astype(np.float64)

    def enc(x):                                                    # exact small integers in each format
        if atype == "bf16":
            return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        if atype == "e4m3":
            lut = {0: 0x00, 1: 0x38, 2: 0x40, 3: 0x44}
            mag = np.vectorize(lambda v: lut[abs(int(v))])(x)
            return (mag | np.where(x < 0, 0x80, 0)).astype(np.uint8)
        return x.astype(dt)

    smem = np.zeros((1, 65536), np.uint8)
    ea, eb_ = enc(A), enc(B)
    da = place_operand(smem, ea.view(ea.dtype), "K", 128, 0, ea.dtype)
    db = place_operand(smem, eb_.view(eb_.dtype), "K", 128, 32768, eb_.dtype)
    acc = "s32" if atype == "s8" else "f32"
    d = np.zeros((1, 128, n // 2), np.int32 if acc == "s32" else np.float32)
    for ks in range(4):
        d = wgmma(d, smem=smem, cta=[0], a_desc=np.array([da[ks]]), b_desc=np.array([db[ks]]), n=n,
                  atype=atype, dtype=acc, scale_d=[ks > 0])
    assert np.array_equal(naive_d_to_matrix(d[0].astype(np.float64), n), A @ B.T)


def test_wgmma_f16_accumulator_and_scale_flags():
    rng = np.random.default_rng(4)
    n = 16
    A = rng.integers(-3, 4, (64, 64)).astype(np.float64)
    B = rng.integers(-3, 4, (n, 64)).astype(np.float64)
    smem = np.zeros((1, 65536), np.uint8)
    da = place_operand(smem, A, "K", 128, 0, np.float16)
    db = place_operand(smem, B, "K", 128, 32768, np.float16)
    init = np.full((64, n), 0.5)
    # pack init into f16 D registers using the naive fragment (two columns per register)
    d = np.zeros((1, 128, n // 4), np.uint32)
    for th in range(128):
        w, lane = divmod(th, 32)
        for i in range(n // 2):
            r = 16 * w + lane // 4 + 8 * ((i // 2) % 2)
            c = 8 * (i // 4) + 2 * (lane % 4) + i % 2
            d[0, th, i // 2] |= np.uint32(np.float16(init[r, c]).view(np.uint16)) << np.uint32(16 * (i % 2))
    out = wgmma(d, smem=smem, cta=[0], a_desc=np.array([da[0]]), b_desc=np.array([db[0]]), n=n, atype="f16",
                dtype="f16", scale_d=[True], imm_scale_a=-1)
    assert out.dtype == np.uint32
    assert np.array_equal(naive_d_to_matrix(out[0], n, per=2), init - A[:, :16] @ B[:, :16].T)
    out = wgmma(d, smem=smem, cta=[0], a_desc=np.array([da[0]]), b_desc=np.array([db[0]]), n=n, atype="f16",
                dtype="f16", scale_d=[False])
    assert np.array_equal(naive_d_to_matrix(out[0], n, per=2), A[:, :16] @ B[:, :16].T)


def test_wgmma_accumulation_hook_called_with_wgmma():
    seen = {}

    def model(a, b, c, **kw):
        seen.update(kw, ashape=a.shape, bshape=b.shape)
        return c + 1

    smem = np.zeros((1, 65536), np.uint8)
    desc = np.array([make_desc(0, 0, 1024, 128)])
    try:
        T.set_accumulation_model(model)
        d = wgmma(np.zeros((2, 128, 32), np.float32), smem=smem, cta=[0, 0], a_desc=np.repeat(desc, 2),
                  b_desc=np.repeat(desc, 2), n=64, scale_d=[True, True])
    finally:
        T.set_accumulation_model(None)
    assert np.all(d == 1)
    assert seen["op"] == "wgmma" and seen["shape"] == "m64n64k16"
    assert seen["ashape"] == (2, 64, 16) and seen["bshape"] == (2, 16, 64)


def test_wgmma_errors():
    smem = np.zeros((1, 4096), np.uint8)
    d = np.zeros((1, 128, 64), np.float32)
    with pytest.raises(SimulationError, match="out of range"):
        wgmma(d, smem=smem, cta=[0], a_desc=np.array([make_desc(0, 0, 1024, 128)]),
              b_desc=np.array([make_desc(0, 0, 1024, 128)]), n=128)
    bad = np.array([make_desc(0, 0, 1024, 128) | np.uint64(1 << 49)])
    with pytest.raises(SimulationError, match="base offset"):
        wgmma(np.zeros((1, 128, 4), np.float32), smem=smem, cta=[0], a_desc=bad, b_desc=bad, n=8)
    with pytest.raises(SimulationError, match="registers"):
        wgmma(np.zeros((1, 128, 8), np.float32), smem=np.zeros((1, 65536), np.uint8), cta=[0],
              a_desc=np.array([make_desc(0, 0, 1024, 128)]), b_desc=np.array([make_desc(0, 0, 1024, 128)]), n=8)

"""ldmatrix / stmatrix / mma.sync / wgmma against results captured on an NVIDIA H200 (sm_90a, CUDA 13).

Probe (run once with the device tool; source not kept in the repo). Inputs come from the deterministic
generator below (identical in the CUDA probe); outputs were hashed (sha256, first 16 hex digits):
* ldmatrix .x4, .x4.trans, .x2.trans over smem byte i = (7 i + 3) & 255 and stmatrix .x4 / .x4.trans of
  registers hsh(4 t + j, 11), lane t addressing row (5 t + 3) % 128 (16 B rows);
* mma.sync m16n8k16 f16 / bf16 (f32 acc), m16n8k8 tf32 (operands with random low 13 bits: the hardware ignores
  them), m16n8k32 s8 (s32 acc, full-range bytes), m16n8k32 e4m3 (f32 acc), raw register inputs;
* wgmma m64n128k16 f16: SS with 128B-swizzled K-major A (64x64) and B (128x64) loaded by TMA to smem 0x400 /
  0x4400 and Triton's descriptors (0x4000004000000000 | addr >> 4, +2 per k-step); RS with f16 A registers and
  N-major V (64 x 128) loaded as two 64x64 128B-swizzled TMA boxes to 0x400 / 0x2400, descriptor
  0x4000004002000000 | addr >> 4, +0x80 per k-step, imm-trans-b = 1 (attn PTX).
"""
from __future__ import annotations

import hashlib
from types import SimpleNamespace

import numpy as np

from warpgraph.workloads.functional import tensor_ops as T
from warpgraph.workloads.functional.tma_ops import tma_load

BASE = 0x7F00_0000_0000
H200 = {"ld": "303ddf833d023ad2", "st": "0ac95d43a08da542", "mma_D": "a185b3212344f019",
        "wg_ss_D": "229af0611c1058f5", "wg_rs_D": "b18ca22c8263b12b"}


def sha(a) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


def hsh(i, salt):
    i = np.asarray(i, dtype=np.uint64)
    return ((((i + 1) * 2654435761) & 0xFFFFFFFF) ^ ((salt * 40503 + 0x9E3779B9) & 0xFFFFFFFF)).astype(np.uint32)


def small(i, salt):
    return ((hsh(i, salt) >> 16) % 7).astype(np.int64) - 3


def f16bits(x):
    return np.asarray(x, dtype=np.float64).astype(np.float16).view(np.uint16).astype(np.uint32)


def f32bits(x):
    return np.asarray(x, dtype=np.float64).astype(np.float32).view(np.uint32)


E4M3_CODES = np.array([0x00, 0x38, 0xB8, 0x40, 0xC0, 0x30, 0xB0, 0x44], np.uint32)


def mma_regs(k, n, off, tf32_salt):
    i = np.arange(n)
    if k == 0:
        return f16bits(small(k * 1000 + off + 2 * i, 1)) | (f16bits(small(k * 1000 + off + 2 * i + 1, 1)) << 16)
    if k == 1:
        lo, hi = f32bits(small(k * 1000 + off + 2 * i, 1)) >> 16, f32bits(small(k * 1000 + off + 2 * i + 1, 1)) >> 16
        return lo | (hi << 16)
    if k == 2:
        x = small(k * 1000 + off + i, 1)
        return f32bits(x) | np.where(x != 0, hsh(i, tf32_salt) & 0x1FFF, 0).astype(np.uint32)
    if k == 3:
        return hsh(k * 1000 + off + i, 2)
    r = np.zeros(n, np.uint32)
    for h in range(4):
        r |= E4M3_CODES[hsh(k * 1000 + off + 4 * i + h, 3) % 8] << np.uint32(8 * h)
    return r


def test_ldmatrix_stmatrix_match_h200():
    smem = ((np.arange(2048) * 7 + 3) & 255).astype(np.uint8)[None]
    lane = np.arange(32)
    addrs = (((lane * 5 + 3) % 128) * 16).astype(np.uint32)[None]
    ld = np.concatenate([T.ldmatrix(smem, [0], addrs, 4, False).reshape(-1),
                         T.ldmatrix(smem, [0], addrs, 4, True).reshape(-1),
                         T.ldmatrix(smem, [0], addrs, 2, True).reshape(-1)])
    assert sha(ld) == H200["ld"]
    vals = hsh(np.arange(128), 11).reshape(1, 32, 4)
    st = []
    for trans in (False, True):
        s = np.zeros((1, 2048), np.uint8)
        T.stmatrix(s, [0], addrs, vals, trans)
        st.append(s[0])
    assert sha(np.concatenate(st)) == H200["st"]


def test_mma_sync_matches_h200():
    C = f32bits(small(np.arange(128), 9)).reshape(1, 32, 4)
    out = []
    for k, (shape, at, ct) in enumerate([("m16n8k16", "f16", "f32"), ("m16n8k16", "bf16", "f32"),
                                         ("m16n8k8", "tf32", "f32"), ("m16n8k32", "s8", "s32"),
                                         ("m16n8k32", "e4m3", "f32")]):
        a = mma_regs(k, 128, 0, 5).reshape(1, 32, 4)
        b = mma_regs(k, 64, 500, 6).reshape(1, 32, 2)
        c = C.view(np.float32) if ct == "f32" else C.view(np.int32)
        out.append(T.mma_sync(a, b, c, shape, at, ct).view(np.uint32)[0])
    assert sha(np.stack(out)) == H200["mma_D"]


def _tmap(dims, box, stride):
    return SimpleNamespace(dtype=np.dtype(np.float16), elem_bytes=2, dims=dims, strides_bytes=[stride], box=box,
                           swizzle_bytes=128, oob_fill="zero", base_addr=BASE)


def test_wgmma_ss_matches_h200():
    A = f16bits(small(np.arange(64 * 64), 21)).astype(np.uint16)
    B = f16bits(small(np.arange(128 * 64), 22)).astype(np.uint16)
    smem = np.zeros((1, 0x4400 + 16384), np.uint8)
    smem[0, 0x400:0x2400] = tma_load(A.view(np.uint8), BASE, _tmap([64, 64], [64, 64], 128), np.array([[0, 0]]))[0][0]
    smem[0, 0x4400:0x8400] = tma_load(B.view(np.uint8), BASE, _tmap([64, 128], [64, 128], 128),
                                      np.array([[0, 0]]))[0][0]
    d = np.zeros((1, 128, 64), np.float32)
    for ks in range(4):
        d = T.wgmma(d, smem=smem, cta=[0], a_desc=np.array([0x4000004000000000 | (0x400 >> 4)], np.uint64) + np.uint64(2 * ks),
                    b_desc=np.array([0x4000004000000000 | (0x4400 >> 4)], np.uint64) + np.uint64(2 * ks), n=128)
    assert sha(d[0]) == H200["wg_ss_D"]


def test_wgmma_rs_n_major_matches_h200():
    V = f16bits(small(np.arange(64 * 128), 23)).astype(np.uint16)
    i = np.arange(4 * 128 * 4)
    areg = (f16bits(small(2 * i, 24)) | (f16bits(small(2 * i + 1, 24)) << 16)).reshape(4, 128, 4)
    smem = np.zeros((1, 0x400 + 16384), np.uint8)
    img = tma_load(V.view(np.uint8), BASE, _tmap([128, 64], [64, 64], 256), np.array([[0, 0], [64, 0]]))[0]
    smem[0, 0x400:0x2400], smem[0, 0x2400:0x4400] = img[0], img[1]
    d = np.zeros((1, 128, 64), np.float32)
    for ks in range(4):
        d = T.wgmma(d, smem=smem, cta=[0], a_regs=areg[ks][None],
                    b_desc=np.array([0x4000004002000000 | (0x400 >> 4)], np.uint64) + np.uint64(0x80 * ks), n=128,
                    scale_d=[ks > 0], tnsp_b=1)
    assert sha(d[0]) == H200["wg_rs_D"]

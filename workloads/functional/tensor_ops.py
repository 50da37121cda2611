"""Exact warp-level tensor-core data movement and arithmetic as pure, vectorised numpy functions.

All functions are batched over the leading dimension (warps, or warpgroups for :func:`wgmma`). Shared memory
is ``smem: uint8 (n_ctas_in_batch, smem_bytes)`` and ``cta[i]`` is the row used by warp/warpgroup ``i``;
shared addresses are CTA-local byte offsets. Registers are uint32 bit patterns (``.b16`` pairs are packed
low half first, 8-bit quads low byte first), as PTX defines for ``.f16x2`` / ``.b32`` fragments.

Sources (PTX ISA 8.7 section numbers):
* ``ldmatrix`` §9.7.14.5.15, ``stmatrix`` §9.7.14.5.16 (.m8n8 .x1/.x2/.x4 [.trans] .b16);
* ``mma.sync`` fragments §9.7.14.5.x "Matrix Fragments for mma.m16n8k4 / k8 / k16 / k32" (floating point,
  tf32, integer and fp8 variants);
* ``wgmma.mma_async`` §9.7.15.5.1 "Register Fragments and Shared Memory Matrix Layouts" (D fragment
  §9.7.15.5.1.1, A-in-registers fragment, shared-memory core matrices §9.7.15.5.1.2) and the 64-bit
  "Matrix Descriptor Format" §9.7.15.5.1.2.2; canonical K-major / MN-major layouts as written in CUTLASS
  ``cute/atom/mma_traits_sm90_gmma.hpp`` (``make_gmma_desc``), with the swizzle of
  :func:`warpgraph.workloads.functional.tma_ops.swizzle_addr` applied to absolute shared addresses.

Arithmetic: the default accumulation model ``ACCUMULATE = "fp32"`` decodes every operand exactly, forms the
exact products and their sum with ``c`` in float64 (exact for fp16/bf16/fp8 products; the final sum carries
at most one float64 rounding) and rounds once to the destination format (round-to-nearest-even; -0 becomes
+0; TF32 inputs are truncated to 10 mantissa bits first, as the hardware does). The real tensor core uses a
truncated fused dot-product-add (MMA-Sim, arXiv 2511.10909: T-FDPA with F = 25 fraction bits and
round-toward-zero for FP32 output on Hopper, F = 13 for FP8 wgmma), which can differ in the last bit or two;
:func:`set_accumulation_model` is the place where that bit-exact algorithm plugs in.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable

import numpy as np

from warpgraph.core.errors import SimulationError
from warpgraph.workloads.functional.tma_ops import swizzle_addr

__all__ = [
    "ACCUMULATE",
    "set_accumulation_model",
    "ldmatrix",
    "stmatrix",
    "mma_sync",
    "mma_fragment",
    "wgmma",
    "wgmma_d_fragment",
    "decode_smem_desc",
    "smem_desc_addresses",
    "desc_addresses",
    "decode_elements",
    "encode_elements",
]

# --------------------------------------------------------------------------------------------------------------
# accumulation model hook
# --------------------------------------------------------------------------------------------------------------

#: name of the active accumulation model ("fp32" = exact products, float64 sum, one RN rounding)
ACCUMULATE = "fp32"
_ACC_FN: Callable | None = None


def set_accumulation_model(fn: Callable | None, name: str | None = None) -> None:
    """Install the arithmetic used by :func:`mma_sync` and :func:`wgmma` (``None`` restores ``"fp32"``).

    ``fn(a, b, c, *, atype, btype, ctype, op, shape) -> d`` receives exactly decoded operands
    ``a (batch, M, K)``, ``b (batch, K, N)`` (float64, or int64 for s8/u8) and ``c (batch, M, N)`` (float64 or
    int64; zeros when ``scale-d`` is false), ``op`` in {"mma", "wgmma"}, ``shape`` e.g. "m16n8k16", and returns
    ``d (batch, M, N)`` holding values representable in ``ctype`` ("f32", "f16", "s32"); the caller casts and
    packs them. This is where MMA-Sim's bit-exact T-FDPA algorithm (chunked, truncated alignment, RZ output;
    see ../shared/reference/hopper-blackwell-facts.md §4) plugs in."""
    global _ACC_FN, ACCUMULATE
    _ACC_FN = fn
    ACCUMULATE = "fp32" if fn is None else (name or getattr(fn, "__name__", "custom"))


def _default_accumulate(a, b, c, *, atype, btype, ctype, op, shape):
    if ctype == "s32":
        return a.astype(np.int64) @ b.astype(np.int64) + c.astype(np.int64)
    d = np.matmul(a.astype(np.float64), b.astype(np.float64)) + c.astype(np.float64)
    return d + 0.0            # -0.0 -> +0.0 (hardware never returns negative zero from the adder tree)


def _accumulate(a, b, c, **kw):
    fn = _ACC_FN or _default_accumulate
    return fn(a, b, c, **kw)


# --------------------------------------------------------------------------------------------------------------
# element encodings
# --------------------------------------------------------------------------------------------------------------

_ELEM_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8, "s32": 32}


@lru_cache(maxsize=None)
def _fp8_table(kind: str) -> np.ndarray:
    """float64 value of each of the 256 fp8 codes (OCP FP8: E4M3 'fn' without infinities, E5M2 IEEE-like)."""
    code = np.arange(256)
    s = np.where(code & 0x80, -1.0, 1.0)
    if kind == "e4m3":
        e, m = (code >> 3) & 0xF, code & 0x7
        v = np.where(e == 0, m / 8.0 * 2.0 ** -6, (1 + m / 8.0) * 2.0 ** (e - 7.0))
        v = np.where((e == 15) & (m == 7), np.nan, v)
    else:
        e, m = (code >> 2) & 0x1F, code & 0x3
        v = np.where(e == 0, m / 4.0 * 2.0 ** -14, (1 + m / 4.0) * 2.0 ** (e - 15.0))
        v = np.where(e == 31, np.where(m == 0, np.inf, np.nan), v)
    return s * v


def decode_elements(bits: np.ndarray, etype: str) -> np.ndarray:
    """Exact values (float64, or int64 for s8/u8/s32) of raw element bit patterns (unsigned ints)."""
    bits = np.asarray(bits)
    if etype == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    if etype == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if etype == "tf32":     # MMA-Sim: the low 13 bits of a tf32 operand are ignored (truncation)
        return (bits.astype(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if etype == "f32":
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    if etype == "s8":
        return bits.astype(np.uint8).view(np.int8).astype(np.int64)
    if etype == "u8":
        return bits.astype(np.uint8).astype(np.int64)
    if etype == "s32":
        return bits.astype(np.uint32).view(np.int32).astype(np.int64)
    if etype in ("e4m3", "e5m2"):
        return _fp8_table(etype)[bits.astype(np.uint8)]
    raise SimulationError(f"unsupported tensor-core element type .{etype}")


def encode_elements(values: np.ndarray, etype: str) -> np.ndarray:
    """Round values to ``etype`` (RN) and return the raw bits as uint32 ("f32", "f16", "s32" only)."""
    if etype == "f32":
        return np.asarray(values, dtype=np.float64).astype(np.float32).view(np.uint32)
    if etype == "f16":
        return np.asarray(values, dtype=np.float64).astype(np.float16).view(np.uint16).astype(np.uint32)
    if etype == "s32":
        return np.asarray(values).astype(np.int64).astype(np.int32).view(np.uint32)   # wraps mod 2^32
    raise SimulationError(f"unsupported accumulator type .{etype}")


def _unpack(regs: np.ndarray, bits: int) -> np.ndarray:
    """(..., nregs) uint32 -> (..., nregs, 32 // bits) element bits, low part first."""
    regs = np.asarray(regs).astype(np.uint32)
    per = 32 // bits
    sh = (np.arange(per, dtype=np.uint32) * bits)
    mask = np.uint32((1 << bits) - 1) if bits < 32 else np.uint32(0xFFFFFFFF)
    return (regs[..., None] >> sh) & mask


def _pack(elems: np.ndarray, bits: int) -> np.ndarray:
    """(..., nregs, 32 // bits) element bits -> (..., nregs) uint32."""
    per = 32 // bits
    sh = (np.arange(per, dtype=np.uint32) * bits)
    return np.bitwise_or.reduce(elems.astype(np.uint32) << sh, axis=-1).astype(np.uint32)


# --------------------------------------------------------------------------------------------------------------
# shared-memory access helpers
# --------------------------------------------------------------------------------------------------------------

def _check_smem(smem, addrs, nbytes: int, align: int, what: str):
    a = np.asarray(addrs, dtype=np.int64)
    bad = a[(a % align) != 0]
    if bad.size:
        raise SimulationError(f"{what}: misaligned shared address {int(bad.flat[0]):#x}",
                              hint=f"{align}-byte aligned")
    lim = smem.shape[-1]
    bad = a[(a < 0) | (a + nbytes > lim)]
    if bad.size:
        raise SimulationError(f"{what}: shared address {int(bad.flat[0]):#x} out of range",
                              hint=f"[0, {lim:#x}) for this CTA's shared memory")
    return a


def _cta_rows(cta, n):
    c = np.asarray(cta, dtype=np.int64).reshape(-1)
    if c.size == 1 and n != 1:
        c = np.repeat(c, n)
    return c


# --------------------------------------------------------------------------------------------------------------
# ldmatrix / stmatrix (PTX ISA §9.7.14.5.15 / §9.7.14.5.16)
# --------------------------------------------------------------------------------------------------------------

_T = np.arange(32)
_ROW = _T // 4                 # row of an 8x8 matrix a lane receives / supplies
_COL = 2 * (_T % 4)            # first of the two adjacent .b16 columns


def _check_num(num):
    if num not in (1, 2, 4):
        raise SimulationError(f"ldmatrix/stmatrix .x{num} is not a valid shape", hint=".x1, .x2 or .x4")


def ldmatrix(smem: np.ndarray, cta, addrs, num: int, trans: bool = False) -> np.ndarray:
    """``ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16`` for a batch of warps.

    Lanes 8j..8j+7 supply the 16-byte-aligned row addresses of matrix j (rows 0..7); other lanes' addresses are
    ignored. Lane t receives in register j the elements (row t//4, columns 2(t%4), 2(t%4)+1) of matrix j, low
    half first; with ``.trans`` the matrix is transposed first, i.e. elements (2(t%4), t//4) and
    (2(t%4)+1, t//4). Returns uint32 (n_warps, 32, num)."""
    _check_num(num)
    addrs = np.asarray(addrs).reshape(-1, 32)
    nw = addrs.shape[0]
    ra = _check_smem(smem, addrs[:, : 8 * num], 16, 16, "ldmatrix")
    c = _cta_rows(cta, nw)
    rows = smem[c[:, None, None], ra[:, :, None] + np.arange(16)]            # (nw, 8num, 16) bytes
    m = np.ascontiguousarray(rows).view(np.uint16).reshape(nw, num, 8, 8)   # [w, matrix, row, col]
    if trans:
        m = m.transpose(0, 1, 3, 2)
    lo = m[:, :, _ROW, _COL].astype(np.uint32)                               # (nw, num, 32)
    hi = m[:, :, _ROW, _COL + 1].astype(np.uint32)
    return (lo | (hi << 16)).transpose(0, 2, 1).copy()


def stmatrix(smem: np.ndarray, cta, addrs, values, trans: bool = False) -> None:
    """``stmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16``: the inverse of :func:`ldmatrix`.

    ``values`` uint32 (n_warps, 32, num): lane t's register j holds (row t//4, cols 2(t%4), +1) of matrix j
    (transposed with ``.trans``); lanes 8j..8j+7 give the row addresses of matrix j. Writes ``smem`` in place
    (warps in order; the result of two lanes storing the same bytes is the later warp's / row's)."""
    values = np.asarray(values).astype(np.uint32)
    nw, _, num = values.shape
    _check_num(num)
    addrs = np.asarray(addrs).reshape(nw, 32)
    ra = _check_smem(smem, addrs[:, : 8 * num], 16, 16, "stmatrix")
    c = _cta_rows(cta, nw)
    m = np.empty((nw, num, 8, 8), dtype=np.uint16)
    v = values.transpose(0, 2, 1)                                            # (nw, num, 32)
    m[:, :, _ROW, _COL] = (v & 0xFFFF).astype(np.uint16)
    m[:, :, _ROW, _COL + 1] = (v >> 16).astype(np.uint16)
    if trans:
        m = m.transpose(0, 1, 3, 2)
    rows = np.ascontiguousarray(m).view(np.uint8).reshape(nw, 8 * num, 16)
    smem[c[:, None, None], ra[:, :, None] + np.arange(16)] = rows


# --------------------------------------------------------------------------------------------------------------
# mma.sync fragments (PTX ISA §9.7.14.5.x "Matrix Fragments for mma.m16n8k*")
# --------------------------------------------------------------------------------------------------------------

_FP16ISH = ("f16", "bf16")
_BYTE_TYPES = ("s8", "u8", "e4m3", "e5m2")


def _parse_shape(shape: str):
    try:
        m, rest = shape[1:].split("n")
        n, k = rest.split("k")
        return int(m), int(n), int(k)
    except Exception:   # noqa: BLE001
        raise SimulationError(f"bad mma shape {shape!r}", hint="e.g. m16n8k16") from None


@lru_cache(maxsize=None)
def mma_fragment(shape: str, etype: str, operand: str):
    """(rows, cols) int64 arrays of shape (32, nregs, per_reg): the matrix element held by element e of
    register r of lane t, for operand "a" (M x K), "b" (K x N) or "c" (M x N, also D) of ``mma.sync``
    ``shape`` with element type ``etype`` (for "c": the accumulator type f32/f16/s32).

    Formulas from PTX ISA §9.7.14.5.x (groupID g = lane >> 2, threadID_in_group t = lane % 4; i = element
    index within the lane's fragment, i = r * per_reg + e)."""
    m, n, k = _parse_shape(shape)
    lane = np.arange(32)[:, None]
    g, t = lane // 4, lane % 4
    if operand == "c":
        if (m, n) != (16, 8):
            raise SimulationError(f"mma shape {shape} not supported", hint="m16n8k*")
        i = np.arange(4)[None, :]
        rows, cols = g + 8 * (i // 2), 2 * t + (i % 2)
        per = 2 if etype == "f16" else 1
    elif etype in _FP16ISH and (m, n, k) == (16, 8, 16):
        if operand == "a":
            i = np.arange(8)[None, :]
            rows, cols = g + 8 * ((i // 2) % 2), 2 * t + (i % 2) + 8 * (i // 4)
        else:
            i = np.arange(4)[None, :]
            rows, cols = 2 * t + (i % 2) + 8 * (i // 2), np.broadcast_to(g, (32, 4))
        per = 2
    elif etype in _FP16ISH and (m, n, k) == (16, 8, 8):
        if operand == "a":
            i = np.arange(4)[None, :]
            rows, cols = g + 8 * (i // 2), 2 * t + (i % 2)
        else:
            i = np.arange(2)[None, :]
            rows, cols = 2 * t + i, np.broadcast_to(g, (32, 2))
        per = 2
    elif etype == "tf32" and (m, n, k) == (16, 8, 8):
        if operand == "a":
            i = np.arange(4)[None, :]
            rows, cols = g + 8 * (i % 2), t + 4 * (i // 2)
        else:
            i = np.arange(2)[None, :]
            rows, cols = t + 4 * i, np.broadcast_to(g, (32, 2))
        per = 1
    elif etype == "tf32" and (m, n, k) == (16, 8, 4):
        if operand == "a":
            i = np.arange(2)[None, :]
            rows, cols = g + 8 * i, np.broadcast_to(t, (32, 2))
        else:
            rows, cols = np.broadcast_to(t, (32, 1)), np.broadcast_to(g, (32, 1))
        per = 1
    elif etype in ("s8", "u8") and (m, n, k) == (16, 8, 16):
        if operand == "a":
            i = np.arange(8)[None, :]
            rows, cols = g + 8 * (i // 4), 4 * t + (i % 4)
        else:
            i = np.arange(4)[None, :]
            rows, cols = 4 * t + i, np.broadcast_to(g, (32, 4))
        per = 4
    elif etype in _BYTE_TYPES and (m, n, k) == (16, 8, 32):
        if operand == "a":
            i = np.arange(16)[None, :]
            rows, cols = g + 8 * ((i // 4) % 2), 4 * t + (i % 4) + 16 * (i // 8)
        else:
            i = np.arange(8)[None, :]
            rows, cols = 4 * t + (i % 4) + 16 * (i // 4), np.broadcast_to(g, (32, 8))
        per = 4
    else:
        raise SimulationError(f"mma.sync shape .{shape} with .{etype} operands is not supported",
                              hint="m16n8k16/k8 f16|bf16, m16n8k8/k4 tf32, m16n8k16/k32 s8|u8, m16n8k32 e4m3|e5m2")
    rows, cols = np.broadcast_arrays(rows, cols)
    rows = rows.reshape(32, -1, per).astype(np.int64)
    cols = cols.reshape(32, -1, per).astype(np.int64)
    rows.setflags(write=False)
    cols.setflags(write=False)
    return rows, cols


def _assemble(regs, rows, cols, shape2, etype):
    """Registers (batch, threads, nregs) -> exact matrix (batch, R, C) through a fragment map."""
    bits = _ELEM_BITS[etype]
    regs = np.asarray(regs)
    regs = regs.reshape(regs.shape[0], rows.shape[0], -1)
    if regs.shape[2] != rows.shape[1]:
        raise SimulationError(f"fragment needs {rows.shape[1]} registers per lane, got {regs.shape[2]}")
    el = decode_elements(_unpack(regs, bits), etype)                          # (batch, 32, nregs, per)
    out = np.zeros((regs.shape[0],) + shape2, dtype=el.dtype)
    out[:, rows, cols] = el
    return out


def _c_bits_in(c, ctype):
    """Accumulator array -> uint32 register bits (float32 values are taken as f32 registers)."""
    c = np.asarray(c)
    if c.dtype == np.float32:
        if ctype != "f32":
            raise SimulationError(f"float32 accumulator array given for .{ctype} accumulators",
                                  hint="uint32 register bits")
        return c.view(np.uint32)
    if c.dtype.kind in "iu" and c.dtype.itemsize == 4:
        return c.view(np.uint32)
    raise SimulationError(f"accumulator registers must be float32 or 32-bit integers, got {c.dtype}")


def _bits_out(dbits, like):
    """uint32 result bits -> the dtype of the accumulator array the caller passed."""
    return dbits.view(like.dtype) if like.dtype.itemsize == 4 else dbits


def mma_sync(a, b, c, shape: str = "m16n8k16", atype: str = "f16", ctype: str = "f32", alayout: str = "row",
             blayout: str = "col", *, btype: str | None = None, dtype: str | None = None, satfinite: bool = False):
    """``mma.sync.aligned.{shape}.row.col.{dtype}.{atype}.{btype}.{ctype} d, a, b, c`` for a batch of warps.

    a, b: uint32 (n_warps, 32, na / nb) fragments; c: (n_warps, 32, nc) float32 values or uint32/int32 bits
    (f16 accumulators are packed f16x2). Returns d with the dtype of ``c`` (float32 in -> float32 out; integer
    bits in -> the same integer dtype). Only .row.col exists for m16n8k* (PTX ISA §9.7.14.5.14).
    ``dtype`` (the D type) defaults to ``ctype``."""
    if alayout != "row" or blayout != "col":
        raise SimulationError(f"mma.sync .{alayout}.{blayout} is not defined for {shape}", hint=".row.col")
    btype = btype or atype
    dtype = dtype or ctype
    if (atype in ("s8", "u8")) != (btype in ("s8", "u8")) or (atype in _FP16ISH and atype != btype):
        raise SimulationError(f"mma.sync .{atype}.{btype} operand types do not combine")
    m, n, k = _parse_shape(shape)
    a = np.asarray(a)
    nw = a.shape[0]
    ra, ca = mma_fragment(shape, atype, "a")
    rb, cb = mma_fragment(shape, btype, "b")
    A = _assemble(a, ra, ca, (m, k), atype)
    B = _assemble(np.asarray(b), rb, cb, (k, n), btype)
    c_in = np.asarray(c)
    cbits = _c_bits_in(c_in, ctype).reshape(nw, 32, -1)
    rc, cc = mma_fragment(shape, ctype, "c")
    C = _assemble(cbits, rc, cc, (m, n), ctype)
    D = _accumulate(A, B, C, atype=atype, btype=btype, ctype=dtype, op="mma", shape=shape)
    if satfinite and dtype == "s32":
        D = np.clip(D, -2**31, 2**31 - 1)
    rd, cd = mma_fragment(shape, dtype, "c")
    dbits = _pack(encode_elements(D[:, rd, cd], dtype), _ELEM_BITS[dtype])      # (nw, 32, nregs)
    return _bits_out(dbits, c_in)


# --------------------------------------------------------------------------------------------------------------
# wgmma (PTX ISA §9.7.15)
# --------------------------------------------------------------------------------------------------------------

#: descriptor swizzle-mode field (bits 62-63) -> swizzle span bytes
_DESC_SWIZZLE = {0: 0, 1: 128, 2: 64, 3: 32}


def decode_smem_desc(desc):
    """Fields of wgmma shared-memory matrix descriptors (PTX ISA §9.7.15.5.1.2.2 "Matrix Descriptor Format").

    Returns dict of int64 arrays: ``start`` (bits 0-13, << 4), ``lbo`` (leading-dimension byte offset,
    bits 16-29, << 4), ``sbo`` (stride-dimension byte offset, bits 32-45, << 4), ``base_offset`` (bits 49-51),
    ``swizzle`` (bits 62-63 -> 0 / 128 / 64 / 32 bytes)."""
    d = np.asarray(desc, dtype=np.uint64).astype(np.uint64)
    f = lambda sh, w: ((d >> np.uint64(sh)) & np.uint64((1 << w) - 1)).astype(np.int64)   # noqa: E731
    mode = f(62, 2)
    sw = np.choose(mode, [0, 128, 64, 32]).astype(np.int64)
    return {"start": f(0, 14) << 4, "lbo": f(16, 14) << 4, "sbo": f(32, 14) << 4,
            "base_offset": f(49, 3), "swizzle": sw}


def smem_desc_addresses(desc, mn: int, k: int, elem_bytes: int, mn_major: bool):
    """Absolute (swizzled) shared byte address of element (i, kk) of a wgmma operand tile of ``mn`` rows
    (M for A, N for B) by ``k`` columns described by ``desc``. Returns int64 (n_desc, mn, k).

    Canonical layouts (CUTLASS make_gmma_desc; T = 16 / elem_bytes elements per 16-byte core-matrix row,
    S = swizzle span, W = S / elem_bytes):
    K-major,  no swizzle:  start + (i%8)*16 + (i//8)*SBO + (kk%T)*eb + (kk//T)*LBO
    K-major,  swizzle S:   start + (i%8)*S  + (i//8)*SBO + kk*eb               (LBO unused)
    MN-major, no swizzle:  start + (i%T)*eb + (i//T)*SBO + (kk%8)*16 + (kk//8)*LBO
    MN-major, swizzle S:   start + (i%W)*eb + (i//W)*LBO + (kk%8)*S  + (kk//8)*SBO
    then ``swizzle_addr(addr, S)`` (a function of the absolute address, so swizzle atoms must be aligned to
    8 rows x S bytes, e.g. 1024 B for 128B)."""
    f = decode_smem_desc(desc)
    return _desc_addresses_nd(f, mn, k, elem_bytes, mn_major)


def desc_addresses(start: int, lbo: int, sbo: int, swizzle: int, mn: int, k: int, elem_bytes: int,
                   mn_major: bool) -> np.ndarray:
    """(mn, k) int64 swizzled shared addresses of an operand tile from already decoded descriptor fields
    (byte values; ``swizzle`` = span in bytes, 0 for none): the canonical layouts of
    :func:`smem_desc_addresses`, shared by wgmma and tcgen05 (whose descriptors encode the fields differently)."""
    f = {"start": np.array([start], np.int64), "lbo": np.array([lbo], np.int64),
         "sbo": np.array([sbo], np.int64), "swizzle": np.array([swizzle], np.int64),
         "base_offset": np.zeros(1, np.int64)}
    return _desc_addresses_nd(f, mn, k, elem_bytes, mn_major)[0]


def _desc_addresses_nd(f, mn, k, elem_bytes, mn_major):
    nd = f["start"].shape[0] if f["start"].ndim else 1
    start = f["start"].reshape(nd, 1, 1)
    lbo = f["lbo"].reshape(nd, 1, 1)
    sbo = f["sbo"].reshape(nd, 1, 1)
    sw = f["swizzle"].reshape(nd)
    bo = f["base_offset"].reshape(nd)
    if np.any(bo != 0):
        raise SimulationError(f"wgmma descriptor base offset {int(bo[bo != 0][0])} is not modelled",
                              hint="base_offset 0 (swizzle atoms aligned to their repeat boundary)")
    eb = int(elem_bytes)
    T = 16 // eb
    i = np.arange(mn, dtype=np.int64)[None, :, None]
    kk = np.arange(k, dtype=np.int64)[None, None, :]
    out = np.empty((nd, mn, k), dtype=np.int64)
    for s in np.unique(sw):
        sel = sw == s
        s = int(s)
        if not mn_major:
            if s == 0:
                a = start + (i % 8) * 16 + (i // 8) * sbo + (kk % T) * eb + (kk // T) * lbo
            else:
                a = start + (i % 8) * s + (i // 8) * sbo + kk * eb
        else:
            if s == 0:
                a = start + (i % T) * eb + (i // T) * sbo + (kk % 8) * 16 + (kk // 8) * lbo
            else:
                W = s // eb
                a = start + (i % W) * eb + (i // W) * lbo + (kk % 8) * s + (kk // 8) * sbo
        a = np.broadcast_to(a, (nd, mn, k))[sel]
        out[sel] = swizzle_addr(a, s)
    return out


def _read_smem_elems(smem, cta, addr, eb, what):
    """Gather element bits (uint32) at byte addresses addr (n, ...) from smem rows cta (n,)."""
    lim = smem.shape[-1]
    bad = addr[(addr < 0) | (addr + eb > lim)]
    if bad.size:
        raise SimulationError(f"{what}: shared address {int(bad.flat[0]):#x} out of range",
                              hint=f"[0, {lim:#x}) for this CTA's shared memory")
    idx = addr[..., None] + np.arange(eb, dtype=np.int64)
    c = cta.reshape((-1,) + (1,) * (idx.ndim - 1))
    by = smem[c, idx].astype(np.uint32)
    return np.bitwise_or.reduce(by << (np.arange(eb, dtype=np.uint32) * 8), axis=-1)


def wgmma_d_fragment(n: int, dtype: str = "f32"):
    """(rows, cols) int64 (128, nregs, per_reg) of the wgmma accumulator D fragment (PTX ISA §9.7.15.5.1.1,
    "Matrix fragments for wgmma .m64nNk*"): warp w = thread // 32 of the warpgroup holds rows 16w..16w+15;
    lane l (g = l // 4, t = l % 4) element i in 0..N/2-1 is row 16w + g + 8*((i >> 1) & 1),
    column 8*(i >> 2) + 2t + (i & 1). f32/s32: one element per register; f16: two (i = 2r, 2r + 1)."""
    return _wgmma_d_fragment(int(n), dtype)


@lru_cache(maxsize=None)
def _wgmma_d_fragment(n, dtype):
    th = np.arange(128)[:, None]
    w, lane = th // 32, th % 32
    g, t = lane // 4, lane % 4
    i = np.arange(n // 2)[None, :]
    rows = 16 * w + g + 8 * ((i >> 1) & 1)
    cols = 8 * (i >> 2) + 2 * t + (i & 1)
    per = 2 if dtype == "f16" else 1
    rows = np.broadcast_to(rows, (128, n // 2)).reshape(128, -1, per).astype(np.int64)
    cols = np.broadcast_to(cols, (128, n // 2)).reshape(128, -1, per).astype(np.int64)
    return rows, cols


@lru_cache(maxsize=None)
def _wgmma_a_fragment(etype):
    """A-from-registers fragment of wgmma .m64nNk* (PTX ISA §9.7.15.5.1.1): each warp w holds rows
    16w..16w+15 in the layout of the mma.m16n8k{16,8,32} A fragment for 16-bit / tf32 / 8-bit types."""
    shape = {"f16": "m16n8k16", "bf16": "m16n8k16", "tf32": "m16n8k8"}.get(etype, "m16n8k32")
    r, c = mma_fragment(shape, etype, "a")
    w = (np.arange(128) // 32)[:, None, None]
    return (np.tile(r, (4, 1, 1)) + 16 * w).astype(np.int64), np.tile(c, (4, 1, 1)).astype(np.int64)


_WGMMA_K = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32}


def wgmma(d, *, smem, cta, a_desc=None, a_regs=None, b_desc, m: int = 64, n: int, k: int | None = None,
          atype: str = "f16", btype: str | None = None, dtype: str = "f32", scale_d=True, imm_scale_a: int = 1,
          imm_scale_b: int = 1, tnsp_a: int = 0, tnsp_b: int = 0):
    """``wgmma.mma_async.sync.aligned.m64n{n}k{k}.{dtype}.{atype}.{btype} d, a-desc|{a-regs}, b-desc,
    scale-d, imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b`` for a batch of warpgroups.

    d: accumulators of the 128 threads in register order, float32 (n_wg, 128, n/2) (or uint32 bits; f16 D is
    packed f16x2, n/4 registers). A comes from shared memory through ``a_desc`` (uint64 (n_wg,)) or from
    registers ``a_regs`` (uint32 (n_wg, 128, 4)); B from ``b_desc``. ``tnsp_a/tnsp_b`` = 1 selects the
    M-/N-major layouts (16-bit types only); ``scale_d`` false means D = A*B; ``imm_scale_*`` = -1 negates.
    Computes D = A (M x K) * B (K x N) + D. Returns the same dtype/shape as ``d``."""
    btype = btype or atype
    if m != 64:
        raise SimulationError(f"wgmma .m{m} is not defined", hint=".m64")
    if atype not in _WGMMA_K:
        raise SimulationError(f"wgmma .{atype} operands are not supported")
    k = k or _WGMMA_K[atype]
    if k != _WGMMA_K[atype] or n % 8 or not 8 <= n <= 256:
        raise SimulationError(f"wgmma shape m64n{n}k{k} is not defined for .{atype}")
    if (tnsp_a or tnsp_b) and atype not in _FP16ISH:
        raise SimulationError("wgmma imm-trans is only defined for .f16/.bf16 operands")
    d_in = np.asarray(d)
    nwg = d_in.shape[0]
    c = _cta_rows(cta, nwg)
    eb = _ELEM_BITS[atype] // 8
    ebb = _ELEM_BITS[btype] // 8
    if (a_desc is None) == (a_regs is None):
        raise SimulationError("wgmma needs exactly one of a_desc / a_regs")
    if a_regs is not None:
        ra, ca = _wgmma_a_fragment(atype)
        A = _assemble(np.asarray(a_regs).reshape(nwg, 128, -1), ra, ca, (64, k), atype)
    else:
        addr = smem_desc_addresses(np.asarray(a_desc).reshape(nwg), 64, k, eb, bool(tnsp_a))
        A = decode_elements(_read_smem_elems(smem, c, addr, eb, "wgmma A"), atype)
    addr = smem_desc_addresses(np.asarray(b_desc).reshape(nwg), n, k, ebb, bool(tnsp_b))
    B = decode_elements(_read_smem_elems(smem, c, addr, ebb, "wgmma B"), btype).transpose(0, 2, 1)  # (K, N)
    if imm_scale_a == -1:
        A = -A
    if imm_scale_b == -1:
        B = -B
    rd, cd = _wgmma_d_fragment(int(n), dtype)
    dbits_in = _c_bits_in(d_in, dtype).reshape(nwg, 128, -1)
    if dbits_in.shape[2] != rd.shape[1]:
        raise SimulationError(f"wgmma m64n{n} .{dtype} needs {rd.shape[1]} accumulator registers, "
                              f"got {dbits_in.shape[2]}")
    C = np.zeros((nwg, 64, n), dtype=np.int64 if dtype == "s32" else np.float64)
    C[:, rd, cd] = decode_elements(_unpack(dbits_in, _ELEM_BITS[dtype]), dtype)
    sd = np.broadcast_to(np.asarray(scale_d, dtype=bool).reshape(-1), (nwg,))
    C[~sd] = 0
    D = _accumulate(A, B, C, atype=atype, btype=btype, ctype=dtype, op="wgmma", shape=f"m64n{n}k{k}")
    dbits = _pack(encode_elements(D[:, rd, cd], dtype), _ELEM_BITS[dtype])
    return _bits_out(dbits, d_in)

"""Functional tcgen05 (Blackwell sm_100a, 5th-generation tensor cores with tensor memory) for the SIMT executor.

Tensor memory (TMEM) is per-CTA state: 128 lanes x 512 columns of 32-bit cells (PTX ISA 8.7 §9.7.16.2
"Tensor Memory"), allocated in columns (a power of 2 from 32 to 512) by ``tcgen05.alloc``. A TMEM address is
``lane << 16 | column``. Functionally every tcgen05 operation completes at issue (as TMA data lands at issue,
docs/design.md "Execution model"): ``tcgen05.mma`` updates TMEM at once, ``tcgen05.commit`` arrives on its
mbarrier at once, ``tcgen05.wait::ld/st`` and the fences have nothing left to wait for. The timing pass
(components/tmem.py, the tcgen05 tensor core) decides *when*.

Decoded as the PTX ISA defines them (section numbers of PTX ISA 8.7):

* instruction descriptor of ``.kind::f16 / ::tf32 / ::f8f6f4 / ::i8`` (§9.7.16.4.2, table "Instruction
  descriptor format for .kind::f16, .kind::tf32, .kind::f8f6f4 and .kind::i8"): bits 0-1 sparsity selector,
  2 sparsity, 3 saturate, 4-5 D format (0 F16, 1 F32, 2 S32), 7-9 A format, 10-12 B format, 13/14 negate A/B,
  15/16 transpose (MN-major) A/B, 17-22 N >> 3, 24-28 M >> 4, 30-31 maximum shift (.ws only);
* shared-memory matrix descriptor (§9.7.16.4.1 "Shared memory descriptor"): bits 0-13 start >> 4, 16-29
  leading byte offset >> 4, 32-45 stride byte offset >> 4, 46-48 fixed 0b001, 49-51 base offset, 52 LBO mode,
  61-63 swizzle (0 none, 1 128 B with 32-B atom, 2 128 B, 4 64 B, 6 32 B); the canonical layouts are those of
  wgmma (:func:`warpgraph.workloads.functional.tensor_ops.desc_addresses`);
* data-path layouts of D / A-in-TMEM for ``.cta_group::1`` (§9.7.16.8.x): M = 128 is "layout D" (row i ->
  lane i), M = 64 is "layout F" (row i -> lane 32 (i // 16) + i % 16, plus 16 when the address selects the
  other half: Triton keeps two M = 64 tiles there); column j of a 32-bit D is column
  ``d + j``; A in TMEM packs 32 / bits elements per column, low bits first;
* ``tcgen05.ld/st .32x32b.xN``: thread t of a warp moves lane ``base + t``, register j = column ``col + j``;
  ``.16x32bx2.xN``: threads 0-15 lanes ``base + t`` at ``col + j``, threads 16-31 lanes ``base + t - 16`` at
  ``col + immHalfSplitoff + j`` (what Triton uses with M = 64 MMAs); warp w of the CTA reaches lanes
  32 (w % 4) .. 32 (w % 4) + 31 only.

What is not modelled raises a PTXError naming the PTX line: ``.cta_group::2`` (CTA pairs), ``.ws``, sparse
(``.sp``) and block-scaled MMA, ``disable-output-lane`` masks, ``scale-input-d``, ``.multicast`` commits,
ld/st shapes other than 32x32b and 16x32bx2, ``.pack::16b``/``.unpack::16b``, f6/f4 element types and a 16-bit D.
"""
from __future__ import annotations

import numpy as np

from ...core.errors import PTXError, SimulationError
from ..ptx.model import Addr, Imm, Reg, Vec
from . import tensor_ops
from .executor import SHARED_WINDOW, _get, decoder
from .memops import _addr_fn, _fault, _key, _mbar_addr_fn, _mbar_complete, _mbar_state, _scheck

__all__ = ["TMEM_LANES", "TMEM_COLUMNS", "decode_idesc", "decode_smem_desc", "smem_desc_addresses", "KIND_K"]

TMEM_LANES = 128
TMEM_COLUMNS = 512

#: K (elements) of one tcgen05.mma per kind (PTX ISA §9.7.16.4 "Matrix shape")
KIND_K = {"f16": 16, "tf32": 8, "f8f6f4": 32, "i8": 32}
#: A/B format field -> element type, per kind
_FORMATS = {"f16": {0: "f16", 1: "bf16"}, "tf32": {2: "tf32"},
            "f8f6f4": {0: "e4m3", 1: "e5m2", 3: "e2m3", 4: "e3m2", 5: "e2m1"}, "i8": {0: "u8", 1: "s8"}}
_DFMT = {0: "f16", 1: "f32", 2: "s32"}
_EBITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "u8": 8, "s8": 8}
#: dtype class code carried in the trace (a2 >> 16) for the tensor core's per-class rate
DCLASS = {"f16": 0, "bf16": 0, "tf32": 1, "e4m3": 2, "e5m2": 2, "u8": 3, "s8": 3}
DCLASS_NAMES = ("f16", "tf32", "e4m3", "s8")
#: descriptor swizzle field (bits 61-63) -> swizzle span in bytes (1 = 128 B with 32-B atoms: not modelled)
_SWZ = {0: 0, 2: 128, 4: 64, 6: 32}


# ---------------------------------------------------------------------------------------------- descriptors
def decode_idesc(idesc: int, kind: str) -> dict:
    """Fields of a tcgen05 instruction descriptor (32-bit) for ``kind`` (f16/tf32/f8f6f4/i8). Raises
    SimulationError for fields whose meaning is not modelled (sparsity, f6/f4 types, reserved formats)."""
    x = int(idesc) & 0xFFFFFFFF
    f = lambda sh, w: (x >> sh) & ((1 << w) - 1)   # noqa: E731
    if f(2, 1):
        raise SimulationError("tcgen05.mma instruction descriptor selects sparsity (bit 2): sparse MMA is not "
                              "modelled", hint="dense tcgen05.mma (instruction descriptor bit 2 = 0)")
    fm = _FORMATS[kind]
    a, bb = f(7, 3), f(10, 3)
    if a not in fm or bb not in fm:
        raise SimulationError(f"tcgen05.mma .kind::{kind}: A/B format codes {a}/{bb} are not defined",
                              hint="codes " + ", ".join(f"{k}={v}" for k, v in fm.items()))
    atype, btype = fm[a], fm[bb]
    for t in (atype, btype):
        if t not in _EBITS:
            raise SimulationError(f"tcgen05.mma .kind::{kind} element type {t} (f6/f4) is not modelled",
                                  hint="e4m3 or e5m2 operands")
    d = f(4, 2)
    if d not in _DFMT:
        raise SimulationError(f"tcgen05.mma D format code {d} is not defined", hint="0 F16, 1 F32, 2 S32")
    return {"dtype": _DFMT[d], "atype": atype, "btype": btype, "neg_a": f(13, 1), "neg_b": f(14, 1),
            "a_mn_major": f(15, 1), "b_mn_major": f(16, 1), "n": f(17, 6) << 3, "m": f(24, 5) << 4,
            "saturate": f(3, 1), "max_shift": f(30, 2)}


def decode_smem_desc(desc: int) -> dict:
    """Fields of a tcgen05 shared-memory matrix descriptor (64-bit). Raises SimulationError for the
    128B-with-32B-atom swizzle, a non-zero base offset, the absolute LBO mode and a wrong version field."""
    x = int(desc) & 0xFFFFFFFFFFFFFFFF
    f = lambda sh, w: (x >> sh) & ((1 << w) - 1)   # noqa: E731
    if f(46, 3) != 1:
        raise SimulationError(f"tcgen05 shared-memory descriptor {x:#018x}: bits 46-48 are {f(46, 3):#05b}, "
                              "not the fixed 0b001", hint="a descriptor built for sm_100 (version 1)")
    sw = f(61, 3)
    if sw not in _SWZ:
        what = "128-byte swizzle with 32-byte atoms" if sw == 1 else f"swizzle code {sw}"
        raise SimulationError(f"tcgen05 shared-memory descriptor: {what} is not modelled",
                              hint="swizzle 0 (none), 2 (128 B), 4 (64 B) or 6 (32 B)")
    if f(49, 3):
        raise SimulationError(f"tcgen05 shared-memory descriptor base offset {f(49, 3)} is not modelled",
                              hint="base offset 0 (swizzle atoms aligned to their repeat boundary)")
    if f(52, 1):
        raise SimulationError("tcgen05 shared-memory descriptor absolute LBO mode (bit 52) is not modelled")
    return {"start": f(0, 14) << 4, "lbo": f(16, 14) << 4, "sbo": f(32, 14) << 4, "swizzle": _SWZ[sw]}


_ADDR_CACHE: dict = {}


def smem_desc_addresses(desc: int, mn: int, k: int, elem_bytes: int, mn_major: bool) -> np.ndarray:
    """Swizzled shared byte address (mn, k) int64 of element (i, kk) of an operand tile of ``mn`` rows (M or N)
    by ``k`` described by the tcgen05 descriptor ``desc`` (canonical layouts as wgmma's)."""
    key = (int(desc), mn, k, elem_bytes, bool(mn_major))
    a = _ADDR_CACHE.get(key)
    if a is None:
        f = decode_smem_desc(desc)
        a = tensor_ops.desc_addresses(f["start"], f["lbo"], f["sbo"], f["swizzle"], mn, k, elem_bytes,
                                      bool(mn_major))
        if len(_ADDR_CACHE) > 4096:
            _ADDR_CACHE.clear()
        _ADDR_CACHE[key] = a
    return a


# ---------------------------------------------------------------------------------------------- TMEM state
def _tm(b):
    """(tmem (C, 128, 512) uint32, used columns (C, 512) bool, relinquished (C,) bool) of batch ``b``."""
    t = getattr(b, "tmem", None)
    if t is None:
        b.tmem = np.zeros((b.C, TMEM_LANES, TMEM_COLUMNS), np.uint32)
        b.tmem_used = np.zeros((b.C, TMEM_COLUMNS), bool)
        b.tmem_relinq = np.zeros(b.C, bool)
    return b.tmem, b.tmem_used, b.tmem_relinq


def _cta_group(b, inst):
    cg = [m for m in inst.mods if m.startswith("cta_group::")]
    if cg and cg[0] != "cta_group::1":
        raise PTXError(f"tcgen05 .{cg[0]} (a CTA pair sharing one MMA) is not supported: {inst.text.strip()}",
                       location=b.loc(inst), hint=".cta_group::1 (one CTA per tcgen05 operation)")


def _only_mods(b, inst, allowed):
    bad = [m for m in inst.mods if m not in allowed and not m.startswith("cta_group::")]
    if bad:
        raise PTXError(f"{inst.opcode} .{'.'.join(bad)} is not supported: {inst.text.strip()}",
                       location=b.loc(inst), hint="supported qualifiers: " + ", ".join(sorted(allowed)))


def _u32_at(b, op, inst, idx):
    """Operand (register, immediate or [reg+off] TMEM address) at lanes idx, as int64."""
    if isinstance(op, Addr):
        if isinstance(op.base, Reg):
            v = np.asarray(b.R[op.base.index])[idx].astype(np.int64) & 0xFFFFFFFF
        else:
            v = np.zeros(len(idx), np.int64)
        return (v + int(op.offset)) & 0xFFFFFFFF
    if isinstance(op, Imm):
        return np.full(len(idx), int(op.value), np.int64)
    v = np.asarray(_get(b.val(op, "b32", inst)))
    return (v[idx] if v.ndim else np.full(len(idx), int(v))).astype(np.int64) & 0xFFFFFFFF


def _warp_firsts(idx):
    """(warp index in batch, first active lane) of each warp with active lanes."""
    w = idx >> 5
    uw, first = np.unique(w, return_index=True)
    return uw, idx[first]


def _check_cols(b, inst, used, c, col, ncol, lane_first, what):
    if col < 0 or col + ncol > TMEM_COLUMNS or not used[c, col:col + ncol].all():
        raise _fault(b, inst, f"{what}: TMEM columns {col}..{col + ncol - 1} are not allocated to this CTA",
                     lanes=np.array([lane_first]), hint="columns inside a tcgen05.alloc'ed range")


def _pay(b):
    return np.zeros((b.W, 4), np.int64)


# ---------------------------------------------------------------------------------------------- alloc / dealloc
@decoder("tcgen05.alloc")
def _d_alloc(b, inst):
    _cta_group(b, inst)
    _only_mods(b, inst, {"sync", "aligned", "shared::cta", "b32"})
    ops = inst.operands
    af = _addr_fn(b, ops[0], inst)
    trace = b.ex.want_trace

    def h(act, full):
        idx = b.active_idx(act, full)
        pay = _pay(b)
        if len(idx):
            _, used, relinq = _tm(b)
            nc = _u32_at(b, ops[1], inst, idx)
            addrs = af(idx)
            addrs = np.where(addrs >= SHARED_WINDOW, addrs - SHARED_WINDOW, addrs)
            _scheck(b, inst, idx, addrs, 4)
            for w, ln in zip(*_warp_firsts(idx)):
                j = int(np.searchsorted(idx, ln))
                n, c = int(nc[j]), int(b.lane_cta[ln])
                if n < 32 or n > TMEM_COLUMNS or n & (n - 1):
                    raise _fault(b, inst, f"tcgen05.alloc of {n} columns", lanes=np.array([ln]),
                                 hint="a power of 2 from 32 to 512 columns")
                if relinq[c]:
                    raise _fault(b, inst, "tcgen05.alloc after tcgen05.relinquish_alloc_permit",
                                 lanes=np.array([ln]), hint="allocate before relinquishing the permit")
                base = next((s for s in range(0, TMEM_COLUMNS, n) if not used[c, s:s + n].any()), None)
                if base is None:
                    raise _fault(b, inst, f"tcgen05.alloc of {n} columns: only {int((~used[c]).sum())} of "
                                 f"{TMEM_COLUMNS} TMEM columns are free in this CTA (the CTA would wait forever)",
                                 lanes=np.array([ln]), hint="tcgen05.dealloc before allocating again")
                used[c, base:base + n] = True
                a = int(addrs[j]) + c * b.S
                b.smem[a:a + 4] = np.frombuffer(np.uint32(base).tobytes(), np.uint8)   # lane 0, column base
                pay[w, 0], pay[w, 1] = n, base
        if trace:
            b.pay = pay
    return h


@decoder("tcgen05.dealloc")
def _d_dealloc(b, inst):
    _cta_group(b, inst)
    _only_mods(b, inst, {"sync", "aligned", "b32"})
    ops = inst.operands
    trace = b.ex.want_trace

    def h(act, full):
        idx = b.active_idx(act, full)
        pay = _pay(b)
        if len(idx):
            _, used, _ = _tm(b)
            ta = _u32_at(b, ops[0], inst, idx)
            nc = _u32_at(b, ops[1], inst, idx)
            for w, ln in zip(*_warp_firsts(idx)):
                j = int(np.searchsorted(idx, ln))
                col, n, c = int(ta[j]) & 0xFFFF, int(nc[j]), int(b.lane_cta[ln])
                if n < 32 or n > TMEM_COLUMNS or n & (n - 1):
                    raise _fault(b, inst, f"tcgen05.dealloc of {n} columns", lanes=np.array([ln]),
                                 hint="a power of 2 from 32 to 512 columns, as allocated")
                _check_cols(b, inst, used, c, col, n, ln, "tcgen05.dealloc")
                used[c, col:col + n] = False
                pay[w, 0], pay[w, 1] = n, col
        if trace:
            b.pay = pay
    return h


@decoder("tcgen05.relinquish_alloc_permit")
def _d_relinquish(b, inst):
    _cta_group(b, inst)
    _only_mods(b, inst, {"sync", "aligned"})

    def h(act, full):
        idx = b.active_idx(act, full)
        if len(idx):
            _, _, relinq = _tm(b)
            relinq[np.unique(b.lane_cta[idx])] = True
        if b.ex.want_trace:
            b.pay = _pay(b)
    return h


@decoder("tcgen05.fence::before_thread_sync", "tcgen05.fence::after_thread_sync", "tcgen05.wait::ld",
         "tcgen05.wait::st")
def _d_order(b, inst):
    """Ordering only: functionally every tcgen05 operation has completed at issue."""
    _only_mods(b, inst, {"sync", "aligned"})

    def h(act, full):
        if b.ex.want_trace:
            b.pay = _pay(b)
    return h


# ---------------------------------------------------------------------------------------------- mma
def _lane_of_row(m: int) -> np.ndarray:
    """TMEM lane of each row of a cta_group::1 D / A tile: layout D (M = 128) or layout F (M = 64)."""
    i = np.arange(m)
    return i if m == 128 else 32 * (i // 16) + i % 16


@decoder("tcgen05.mma")
def _d_mma(b, inst):
    _cta_group(b, inst)
    kinds = [m[6:] for m in inst.mods if m.startswith("kind::")]
    kind = kinds[0] if kinds else None
    if kind not in KIND_K:
        raise PTXError(f"tcgen05.mma .kind::{kind} is not supported: {inst.text.strip()}", location=b.loc(inst),
                       hint=".kind::f16, .kind::tf32, .kind::f8f6f4 or .kind::i8")
    _only_mods(b, inst, {f"kind::{kind}"})
    ops = list(inst.operands)
    if len(ops) < 5:
        raise b.fault_decode(inst, "tcgen05.mma needs [d-tmem], a-desc|[a-tmem], b-desc, idesc, enable-input-d")
    if any(isinstance(o, Vec) for o in ops[4:]):
        raise PTXError(f"tcgen05.mma with a disable-output-lane mask is not supported: {inst.text.strip()}",
                       location=b.loc(inst), hint="the form without the {disable-output-lane} vector")
    if len(ops) > 5:
        raise PTXError(f"tcgen05.mma with scale-input-d is not supported: {inst.text.strip()}",
                       location=b.loc(inst), hint="[d], a, b, idesc, enable-input-d")
    d_op, a_op, b_op, i_op, e_op = ops
    if not isinstance(d_op, Addr):
        raise b.fault_decode(inst, "tcgen05.mma D must be a TMEM address [..]")
    a_tmem = isinstance(a_op, Addr)
    K = KIND_K[kind]
    trace = b.ex.want_trace
    compute = b.ex.compute_values

    def desc_at(op, idx):
        v = np.asarray(_get(b.val(op, "b64", inst)))
        return (v[idx] if v.ndim else np.full(len(idx), int(v))).astype(np.uint64)

    def h(act, full):
        idx = b.active_idx(act, full)
        pay = _pay(b)
        if not len(idx):
            if trace:
                b.pay = pay
            return
        tm, used, _ = _tm(b)
        dd = _u32_at(b, d_op, inst, idx)
        aa = _u32_at(b, a_op, inst, idx) if a_tmem else desc_at(a_op, idx)
        bd = desc_at(b_op, idx)
        idv = _u32_at(b, i_op, inst, idx)
        ev = np.asarray(_get(b.val(e_op, "pred", inst)))
        en = (ev[idx] if ev.ndim else np.full(len(idx), bool(ev))).astype(bool)
        for j, ln in enumerate(idx):
            c = int(b.lane_cta[ln])
            try:
                f = decode_idesc(int(idv[j]), kind)
            except SimulationError as e:
                raise _fault(b, inst, e.message, lanes=np.array([ln]), hint=e.hint) from None
            M, N = f["m"], f["n"]
            if M not in (64, 128) or N % (8 if M == 64 else 16) or not 8 <= N <= 256:
                raise _fault(b, inst, f"tcgen05.mma .cta_group::1 shape M={M} N={N} is not defined",
                             lanes=np.array([ln]), hint="M 64 (N 8..256 step 8) or M 128 (N 16..256 step 16)")
            if f["dtype"] == "f16" or (f["dtype"] == "s32") != (kind == "i8"):
                raise _fault(b, inst, f"tcgen05.mma .kind::{kind} with a .{f['dtype']} accumulator is not "
                             "modelled", lanes=np.array([ln]), hint="an F32 accumulator (S32 for .kind::i8)")
            atype, btype = f["atype"], f["btype"]
            ea, eb = _EBITS[atype] // 8, _EBITS[btype] // 8
            dl, dc = int(dd[j]) >> 16, int(dd[j]) & 0xFFFF
            if dl not in ((0, 16) if M == 64 else (0,)):
                raise _fault(b, inst, f"tcgen05.mma M={M} D at TMEM lane {dl}", lanes=np.array([ln]),
                             hint="lane 0 (M = 128), lane 0 or 16 (M = 64: either half of layout F's lanes)")
            _check_cols(b, inst, used, c, dc, N, ln, "tcgen05.mma D")
            if trace:   # per warp: FLOPs and shared operand bytes summed, N | dtype class << 16, A in TMEM
                w = ln >> 5
                smem_b = N * K * eb + (0 if a_tmem else M * K * ea)
                if pay[w, 0] == 0:
                    pay[w] = (2 * M * N * K, smem_b, N | (DCLASS[atype] << 16), int(a_tmem))
                else:
                    pay[w, 0] += 2 * M * N * K
                    pay[w, 1] += smem_b
            if not compute:
                continue
            rows = _lane_of_row(M) + dl
            try:
                if a_tmem:
                    al, ac = int(aa[j]) >> 16, int(aa[j]) & 0xFFFF
                    per = 32 // _EBITS[atype]
                    ncol = -(-K // per)
                    if al not in ((0, 16) if M == 64 else (0,)):
                        raise SimulationError(f"tcgen05.mma M={M} A at TMEM lane {al}",
                                              hint="lane 0 (M = 128), lane 0 or 16 (M = 64)")
                    _check_cols(b, inst, used, c, ac, ncol, ln, "tcgen05.mma A")
                    kk = np.arange(K)
                    cells = tm[c][(_lane_of_row(M) + al)[:, None], ac + kk[None, :] // per]
                    bits = (cells >> ((kk % per) * _EBITS[atype]).astype(np.uint32)) & \
                        np.uint32((1 << _EBITS[atype]) - 1)
                    A = tensor_ops.decode_elements(bits, atype)
                else:
                    ad = smem_desc_addresses(int(aa[j]), M, K, ea, bool(f["a_mn_major"]))
                    A = tensor_ops.decode_elements(
                        tensor_ops._read_smem_elems(b.smem[: b.C * b.S].reshape(b.C, b.S), np.array([c]),
                                                    ad[None], ea, "tcgen05.mma A")[0], atype)
                bdd = smem_desc_addresses(int(bd[j]), N, K, eb, bool(f["b_mn_major"]))
                B = tensor_ops.decode_elements(
                    tensor_ops._read_smem_elems(b.smem[: b.C * b.S].reshape(b.C, b.S), np.array([c]),
                                                bdd[None], eb, "tcgen05.mma B")[0], btype).T      # (K, N)
            except SimulationError as e:
                raise _fault(b, inst, e.message, lanes=np.array([ln]), hint=e.hint) from None
            if f["neg_a"]:
                A = -A
            if f["neg_b"]:
                B = -B
            dt = f["dtype"]
            cur = tm[c][rows[:, None], dc + np.arange(N)[None, :]]
            if en[j]:
                C = tensor_ops.decode_elements(cur, dt)
            else:
                C = np.zeros((M, N), np.int64 if dt == "s32" else np.float64)
            D = tensor_ops._accumulate(A[None], B[None], C[None], atype=atype, btype=btype, ctype=dt,
                                       op="tcgen05", shape=f"m{M}n{N}k{K}")[0]
            if dt == "s32" and f["saturate"]:
                D = np.clip(D, -2**31, 2**31 - 1)
            tm[c][rows[:, None], dc + np.arange(N)[None, :]] = tensor_ops.encode_elements(D, dt)
        if trace:
            b.pay = pay
    return h


# ---------------------------------------------------------------------------------------------- commit
@decoder("tcgen05.commit")
def _d_commit(b, inst):
    _cta_group(b, inst)
    if any(m.startswith("multicast") for m in inst.mods):
        raise PTXError(f"tcgen05.commit .multicast::cluster is not supported: {inst.text.strip()}",
                       location=b.loc(inst), hint="a commit to this CTA's own mbarrier")
    _only_mods(b, inst, {"mbarrier::arrive::one", "shared::cluster", "b64"})
    af = _mbar_addr_fn(b, inst.operands[0], inst)
    trace = b.ex.want_trace

    def h(act, full):
        idx = b.active_idx(act, full)
        pay = _pay(b)
        if len(idx):
            addrs = af(idx)
            _scheck(b, inst, idx, addrs, 8)
            slots = b.lane_cta[idx]
            for a in np.unique(addrs):
                sel = addrs == a
                st = _mbar_state(b, int(a))
                np.subtract.at(st["pend"], slots[sel], 1)     # arrive::one per issuing thread
                _mbar_complete(st, slots[sel])
            wi = idx >> 5
            pay[:, 1] = b.warp_first(idx, _key(b, idx, addrs))
            pay[:, 2] = np.bincount(wi, minlength=b.W)[:b.W]
        if trace:
            b.pay = pay
    return h


# ---------------------------------------------------------------------------------------------- ld / st
def _ldst_shape(b, inst):
    mods = inst.mods
    shape = next((m for m in mods if m in ("16x64b", "16x128b", "16x256b", "32x32b", "16x32bx2")), None)
    num = next((int(m[1:]) for m in mods if m[:1] == "x" and m[1:].isdigit()), None)
    if shape not in ("32x32b", "16x32bx2"):
        raise PTXError(f"{inst.opcode} .{shape} is not supported: {inst.text.strip()}", location=b.loc(inst),
                       hint=".32x32b or .16x32bx2 (one TMEM lane per thread)")
    if num is None or num & (num - 1) or num > 128:
        raise b.fault_decode(inst, f"{inst.opcode}: .x{num} is not a valid repeat", hint=".x1 .. .x128")
    _only_mods(b, inst, {"sync", "aligned", shape, f"x{num}", "b32"})
    return num, shape


def _split_of(b, inst, op, shape):
    """immHalfSplitoff of a .16x32bx2 ld/st (columns between the two 16-lane halves), 0 for .32x32b."""
    if shape != "16x32bx2":
        return 0
    if not isinstance(op, Imm):
        raise b.fault_decode(inst, f"{inst.opcode}.16x32bx2 needs an immediate immHalfSplitoff")
    return int(op.value)


def _ldst_lanes(b, inst, idx, taddr_op, num, what, shape="32x32b", split=0):
    """(cta slots, TMEM lane, first column) of every active thread of a ld/st (whole warps only). 32x32b: thread
    t moves lane base + t; 16x32bx2: threads t < 16 lane base + t at the taddr column, threads t >= 16 lane
    base + t - 16 at taddr column + immHalfSplitoff (PTX ISA 8.7 §9.7.16.8.x "Matrix fragments for
    tcgen05.ld/st .16x32bx2")."""
    if len(idx) % 32 or (idx.reshape(-1, 32)[:, 0] & 31).any():
        raise _fault(b, inst, f"{what} needs all 32 threads of the warp (.sync.aligned)", lanes=idx[:1])
    ta = _u32_at(b, taddr_op, inst, idx)
    lane0 = ta.reshape(-1, 32)[:, 0] >> 16
    col0 = ta.reshape(-1, 32)[:, 0] & 0xFFFF
    wic = (idx.reshape(-1, 32)[:, 0] % b.lpc) // 32          # warp index in the CTA
    q = wic % 4
    rows = 32 if shape == "32x32b" else 16
    bad = (lane0 < 32 * q) | (lane0 + rows > 32 * q + 32) | (col0 + split + num > TMEM_COLUMNS)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise _fault(b, inst, f"{what} at TMEM lane {int(lane0[k])} column {int(col0[k])}: warp {int(wic[k])} "
                     f"reaches lanes {32 * int(q[k])}..{32 * int(q[k]) + 31} only", lanes=idx[32 * k:32 * k + 1],
                     hint="lane base 32 x (warp id % 4); columns inside the 512")
    t = idx & 31
    if shape == "32x32b":
        return b.lane_cta[idx], np.repeat(lane0, 32) + t, np.repeat(col0, 32)
    return b.lane_cta[idx], np.repeat(lane0, 32) + (t & 15), np.repeat(col0, 32) + np.where(t >= 16, split, 0)


def _check_ldst_cols(b, inst, used, c, col, idx, num, what):
    """Every CTA's tcgen05.ld / st lanes stay inside the columns it allocated (``_check_cols`` per CTA)."""
    for cc in np.unique(c):
        sel = c == cc
        lo = int(col[sel].min())
        _check_cols(b, inst, used, int(cc), lo, int(col[sel].max()) + num - lo, int(idx[sel][0]), what)


@decoder("tcgen05.ld")
def _d_ld(b, inst):
    num, shape = _ldst_shape(b, inst)
    ops = inst.operands
    split = _split_of(b, inst, ops[2] if len(ops) > 2 else None, shape)
    if not isinstance(ops[0], Vec) or len(ops[0].items) != num or not all(isinstance(x, Reg) for x in ops[0].items):
        raise b.fault_decode(inst, f"tcgen05.ld .x{num} needs a vector of {num} registers")
    regs = [b.R[x.index] for x in ops[0].items]
    trace = b.ex.want_trace

    def h(act, full):
        idx = b.active_idx(act, full)
        pay = _pay(b)
        if len(idx):
            tm, used, _ = _tm(b)
            c, lane, col = _ldst_lanes(b, inst, idx, ops[1], num, "tcgen05.ld", shape, split)
            _check_ldst_cols(b, inst, used, c, col, idx, num, "tcgen05.ld")
            vals = tm[c[:, None], lane[:, None], col[:, None] + np.arange(num)[None, :]]
            for j, r in enumerate(regs):
                if r.dtype == np.uint32:
                    r[idx] = vals[:, j]
                else:
                    r[idx] = vals[:, j].astype(r.dtype)
            pay[np.unique(idx >> 5), 0] = 32 * num * 4
        if trace:
            b.pay = pay
    return h


@decoder("tcgen05.st")
def _d_st(b, inst):
    num, shape = _ldst_shape(b, inst)
    ops = list(inst.operands)
    split = _split_of(b, inst, ops[1] if len(ops) > 2 else None, shape)
    vec = ops[-1]
    if not isinstance(vec, Vec) or len(vec.items) != num:
        raise b.fault_decode(inst, f"tcgen05.st .x{num} needs a vector of {num} values")
    srcs = [b.val(x, "b32", inst) for x in vec.items]
    trace = b.ex.want_trace

    def h(act, full):
        idx = b.active_idx(act, full)
        pay = _pay(b)
        if len(idx):
            tm, used, _ = _tm(b)
            c, lane, col = _ldst_lanes(b, inst, idx, ops[0], num, "tcgen05.st", shape, split)
            _check_ldst_cols(b, inst, used, c, col, idx, num, "tcgen05.st")
            for j, s in enumerate(srcs):
                v = np.asarray(_get(s))
                v = v[idx] if v.ndim else np.full(len(idx), v)
                tm[c, lane, col + j] = v.astype(np.uint32)
            pay[np.unique(idx >> 5), 0] = 32 * num * 4
        if trace:
            b.pay = pay
    return h


# ---------------------------------------------------------------------------------------------- cp / shift
_CP_SHAPES = {"128x256b": 8, "128x128b": 4}


@decoder("tcgen05.cp")
def _d_cp(b, inst):
    """``tcgen05.cp.cta_group::1.{128x256b,128x128b} [taddr], s-desc``: 128 rows of 32 / 16 bytes from shared
    memory (rows and 16-byte chunks placed by the descriptor's canonical K-major layout) to TMEM lanes 0..127,
    columns taddr .. taddr + 7 / 3."""
    _cta_group(b, inst)
    shape = next((m for m in inst.mods if "x" in m and m[0].isdigit()), None)
    if shape not in _CP_SHAPES:
        raise PTXError(f"tcgen05.cp .{shape} is not supported: {inst.text.strip()}", location=b.loc(inst),
                       hint=".128x256b or .128x128b without multicast or decompression")
    _only_mods(b, inst, {shape})
    ncol = _CP_SHAPES[shape]
    ops = inst.operands
    trace = b.ex.want_trace

    def h(act, full):
        idx = b.active_idx(act, full)
        pay = _pay(b)
        if len(idx):
            tm, used, _ = _tm(b)
            ta = _u32_at(b, ops[0], inst, idx)
            dv = np.asarray(_get(b.val(ops[1], "b64", inst)))
            dv = (dv[idx] if dv.ndim else np.full(len(idx), int(dv))).astype(np.uint64)
            for j, ln in enumerate(idx):
                c = int(b.lane_cta[ln])
                lane, col = int(ta[j]) >> 16, int(ta[j]) & 0xFFFF
                if lane:
                    raise _fault(b, inst, f"tcgen05.cp to TMEM lane {lane}", lanes=np.array([ln]),
                                 hint="128-row copies start at lane 0")
                _check_cols(b, inst, used, c, col, ncol, ln, "tcgen05.cp")
                try:
                    ad = smem_desc_addresses(int(dv[j]), 128, ncol, 4, False)
                    bits = tensor_ops._read_smem_elems(b.smem[: b.C * b.S].reshape(b.C, b.S), np.array([c]),
                                                       ad[None], 4, "tcgen05.cp")[0]
                except SimulationError as e:
                    raise _fault(b, inst, e.message, lanes=np.array([ln]), hint=e.hint) from None
                tm[c, :, col:col + ncol] = bits
                pay[ln >> 5, 0] += 128 * ncol * 4
        if trace:
            b.pay = pay
    return h


@decoder("tcgen05.shift")
def _d_shift(b, inst):
    """``tcgen05.shift.cta_group::1.down [taddr]``: the 32-byte elements (8 columns from taddr's column) of
    lanes taddr.lane .. 126 move one lane down (lane 127's are overwritten)."""
    _cta_group(b, inst)
    _only_mods(b, inst, {"down"})
    ops = inst.operands
    trace = b.ex.want_trace

    def h(act, full):
        idx = b.active_idx(act, full)
        pay = _pay(b)
        if len(idx):
            tm, used, _ = _tm(b)
            ta = _u32_at(b, ops[0], inst, idx)
            for j, ln in enumerate(idx):
                c = int(b.lane_cta[ln])
                lane, col = int(ta[j]) >> 16, int(ta[j]) & 0xFFFF
                _check_cols(b, inst, used, c, col, 8, ln, "tcgen05.shift")
                tm[c, lane + 1:, col:col + 8] = tm[c, lane:TMEM_LANES - 1, col:col + 8].copy()
                pay[ln >> 5, 0] += (TMEM_LANES - 1 - lane) * 32
        if trace:
            b.pay = pay
    return h

"""Packed single-precision arithmetic ``add/sub/mul/fma{.rnd}{.ftz}{.sat}.f32x2`` (PTX ISA 8.6+, sm_100 and
later; Triton 3.6 emits it for sm_100a / sm_120 softmax updates). A ``.f32x2`` operand is a ``.b64`` register
holding two f32 values, element 0 in the low 32 bits; each element is computed as the scalar ``.f32``
instruction would (PTX ISA §9.7.3 "Floating point instructions", ``.f32x2`` variants). Rounding modes other
than ``.rn`` are refused with the PTX line (numpy rounds to nearest)."""
from __future__ import annotations

import numpy as np

from ...core.errors import PTXError
from ..ptx.model import Reg
from .executor import _DECODERS, _get

_OPS = ("add", "sub", "mul", "fma")


def _f32x2(b, inst):
    ops = inst.operands
    op = inst.opcode
    bad = [m for m in inst.mods if m not in ("f32x2", "rn", "ftz", "sat")]
    if bad:
        raise PTXError(f"{op}.f32x2 .{'.'.join(bad)} is not supported: {inst.text.strip()}", location=b.loc(inst),
                       hint=".rn (round to nearest even), optionally .ftz / .sat")
    if not isinstance(ops[0], Reg) or b.R[ops[0].index].dtype != np.uint64:
        raise b.fault_decode(inst, f"{op}.f32x2 writes a 64-bit register")
    dst = b.R[ops[0].index]
    srcs = [b.val(o, "b64", inst) for o in ops[1:]]
    ftz = "ftz" in inst.mods
    sat = "sat" in inst.mods
    exact = b.ex.exact_fma

    def pairs(v):
        a = np.asarray(_get(v), dtype=np.uint64)
        if a.ndim == 0:
            a = np.full(b.L, a, np.uint64)
        return a.view(np.float32).reshape(-1, 2)

    def h(act, full):
        xs = [pairs(s) for s in srcs]
        if ftz:
            tiny = np.float32(np.finfo(np.float32).tiny)
            xs = [np.where(np.abs(x) < tiny, np.float32(0) * np.sign(x), x) for x in xs]
        with np.errstate(all="ignore"):
            if op == "add":
                r = xs[0] + xs[1]
            elif op == "sub":
                r = xs[0] - xs[1]
            elif op == "mul":
                r = xs[0] * xs[1]
            elif exact:
                r = (xs[0].astype(np.float64) * xs[1] + xs[2]).astype(np.float32)
            else:
                r = xs[0] * xs[1] + xs[2]
        if sat:
            r = np.clip(np.nan_to_num(r, nan=0.0), 0.0, 1.0).astype(np.float32)
        bits = np.ascontiguousarray(r, dtype=np.float32).reshape(-1).view(np.uint64)
        if full:
            dst[...] = bits
        else:
            np.copyto(dst, bits, where=act)
    return h


def _wrap(orig):
    def dec(b, inst):
        if "f32x2" in inst.mods:
            return _f32x2(b, inst)
        return orig(b, inst)
    return dec


for _n in _OPS:
    _DECODERS[_n] = _wrap(_DECODERS[_n])

"""Grid-batched SIMT functional executor (docs/design.md "Execution model", Contract 2).

A batch of CTAs runs as one machine of ``L`` lanes (padded warps, CTA-major). Every PTX register is a numpy
array of shape ``(L,)`` (storage by declared size: pred -> bool, 16-bit -> uint16, 32 -> uint32, 64 -> uint64;
instructions view it with their own type). Instructions are decoded once per batch into closures that capture
the register views, so the hot loop does no string work. Thread groups ``(pc, lanes)`` are scheduled
min-PC-first and merged when they meet at the same PC.
"""
from __future__ import annotations

import numpy as np

from ...core.errors import PTXError, SimulationError
from ..ptx.isa import Kind
from ..ptx.model import Imm, Label, Pair, Reg, Sink, Sym, Vec
from .alu import (NP_TYPE, SIZE, TYPE_NAMES, bf16_to_f32, f32_to_bf16, float_to_int, is_float, round_float,
                  storage_dtype)

SHARED_WINDOW = 0x7D00_0000_0000      # generic address of CTA-local shared offset 0 (cvta.shared)
LOCAL_WINDOW = 0x7C00_0000_0000

_CMP = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu", "gtu", "geu",
        "num", "nan"}
_BOOLOP = {"and", "or", "xor"}


class _Fault(Exception):
    def __init__(self, msg, lane=None, addr=None, hint=None):
        super().__init__(msg)
        self.msg, self.lane, self.addr, self.hint = msg, lane, addr, hint


def _types(mods):
    return [m for m in mods if m in TYPE_NAMES]


class Batch:
    """One batch of CTAs executing one program."""

    def __init__(self, ex, ctas: np.ndarray):
        self.ex = ex
        prog = ex.program
        self.prog = prog
        self.ctas = ctas
        self.C = len(ctas)
        self.tpc = ex.tpc
        self.wpc = ex.wpc
        self.lpc = self.wpc * 32                      # lanes per CTA (padded)
        L = self.L = self.C * self.lpc
        self.W = self.C * self.wpc
        lane = np.arange(L, dtype=np.int64)
        self.lane_cta = lane // self.lpc              # CTA slot within batch
        t = lane % self.lpc
        self.live = t < self.tpc
        bx, by, bz = ex.block
        self.sp = {}
        self.sp["%tid.x"] = (t % bx).astype(np.uint32)
        self.sp["%tid.y"] = ((t // bx) % by).astype(np.uint32)
        self.sp["%tid.z"] = (t // (bx * by)).astype(np.uint32)
        gx, gy, gz = ex.grid
        cg = ctas[self.lane_cta]
        self.sp["%ctaid.x"] = (cg % gx).astype(np.uint32)
        self.sp["%ctaid.y"] = ((cg // gx) % gy).astype(np.uint32)
        self.sp["%ctaid.z"] = (cg // (gx * gy)).astype(np.uint32)
        for k, v in zip("xyz", ex.block):
            self.sp[f"%ntid.{k}"] = np.uint32(v)
        for k, v in zip("xyz", ex.grid):
            self.sp[f"%nctaid.{k}"] = np.uint32(v)
        self.sp["%laneid"] = (t % 32).astype(np.uint32)
        self.sp["%warpid"] = (t // 32).astype(np.uint32)
        self.sp["%nwarpid"] = np.uint32(self.wpc)
        smid = ex.sm_of_cta
        if smid is not None:
            self.sp["%smid"] = np.asarray([smid(int(c)) for c in ctas], dtype=np.uint32)[self.lane_cta]
        else:
            self.sp["%smid"] = np.zeros(L, dtype=np.uint32)
        self.sp["%nsmid"] = np.uint32(ex.n_sm or 132)   # the architecture's SM count (runner/simulate.py)
        self.sp["%gridid"] = np.uint64(0)
        self.sp["%dynamic_smem_size"] = np.uint32(ex.record.shared_bytes)
        self.sp["%total_smem_size"] = np.uint32(ex.smem_bytes)
        lid = t % 32
        self.sp["%lanemask_eq"] = (np.uint64(1) << lid.astype(np.uint64)).astype(np.uint32)
        self.sp["%lanemask_lt"] = ((np.uint64(1) << lid.astype(np.uint64)) - np.uint64(1)).astype(np.uint32)
        self.sp["%lanemask_le"] = ((np.uint64(2) << lid.astype(np.uint64)) - np.uint64(1)).astype(np.uint32)
        self.sp["%lanemask_gt"] = (~self.sp["%lanemask_le"]).astype(np.uint32)
        self.sp["%lanemask_ge"] = (~self.sp["%lanemask_lt"]).astype(np.uint32)
        # ---- clusters (workloads/functional/cluster.py): the batch holds whole clusters in rank order
        cx, cy, cz = ex.cluster
        self.csize = cx * cy * cz                     # CTAs per cluster (slot s's cluster starts at s - s % csize)
        for k, c in zip("xyz", (cx, cy, cz)):
            self.sp[f"%cluster_ctaid.{k}"] = (self.sp[f"%ctaid.{k}"] % np.uint32(c)).astype(np.uint32)
            self.sp[f"%cluster_nctaid.{k}"] = np.uint32(c)
            self.sp[f"%clusterid.{k}"] = (self.sp[f"%ctaid.{k}"] // np.uint32(c)).astype(np.uint32)
            self.sp[f"%nclusterid.{k}"] = np.uint32(int(self.sp[f"%nctaid.{k}"]) // c)
        self.sp["%cluster_ctarank"] = (self.sp["%cluster_ctaid.x"] + np.uint32(cx) * (
            self.sp["%cluster_ctaid.y"] + np.uint32(cy) * self.sp["%cluster_ctaid.z"])).astype(np.uint32)
        self.sp["%cluster_nctarank"] = np.uint32(self.csize)
        self.sp["%is_explicit_cluster"] = np.bool_(self.csize > 1 or getattr(prog, "explicitcluster", False))
        if self.csize > 1:
            rk = self.sp["%cluster_ctarank"][:: self.lpc].astype(np.int64)
            if not (rk == np.arange(self.C) % self.csize).all():
                raise SimulationError("internal: a batch's CTAs are not whole clusters in rank order",
                                      hint="run_functional batches CTAs in cluster order (cluster.py)")
        # registers
        self.R = [np.zeros(L, dtype=storage_dtype(t)) for t in prog.reg_types]
        # memories
        self.S = ex.smem_bytes
        self.smem = np.zeros(self.C * self.S + 16, dtype=np.uint8)
        self.local_bytes = ex.local_bytes
        self.lmem = np.zeros(L * self.local_bytes + 16, dtype=np.uint8) if self.local_bytes else None
        self.mbar: dict = {}          # smem addr -> dict of arrays over CTA slots
        self.clock_ord = np.zeros(self.W, dtype=np.int64)
        self.clock_counter = 0
        self.cur_act = None
        self.wait_failed = False
        self.brx_sel = None        # brx.idx: each lane's index into the target list (set by its handler)
        self.pay = None
        self.cp_groups = 0
        self.trace = ex.new_batch_trace(ctas)
        self.handlers = []
        errors = []
        for inst in prog.instructions:
            try:
                self.handlers.append(self.decode(inst))
            except (PTXError, SimulationError) as e:
                if isinstance(e, SimulationError) and not isinstance(e, PTXError):
                    raise
                errors.append((inst, e))
                self.handlers.append(None)
            except Exception as e:  # malformed operands the decoder did not anticipate: located, not a traceback
                errors.append((inst, PTXError(f"cannot decode {inst.text.strip()}: malformed or unsupported "
                                              f"operands ({type(e).__name__}: {e})", location=self.loc(inst),
                                              hint="operands as the PTX ISA defines them for this instruction")))
                self.handlers.append(None)
        if errors:
            inst, e = errors[0]
            if len(errors) > 1:
                more = "; ".join(f"line {i.line}: {i.opcode}{'.' + '.'.join(i.mods) if i.mods else ''}"
                                 for i, _ in errors[:20])
                raise PTXError(f"{len(errors)} unsupported instructions: {more}", location=e.location,
                               hint=e.hint)
            raise e

    # ------------------------------------------------------------------------------------------ operands
    def reg_view(self, idx, t):
        r = self.R[idx]
        dt = np.dtype(NP_TYPE[t])
        if r.dtype == dt:
            return r
        if r.dtype.itemsize == dt.itemsize:
            return r.view(dt)
        return None

    def val(self, op, t, inst):
        """A source operand as an array (register view) or numpy scalar, of PTX type ``t``."""
        dt = np.dtype(NP_TYPE.get(t, np.uint32))
        if isinstance(op, Reg):
            v = self.reg_view(op.index, t)
            if v is None:
                r = self.R[op.index]
                if t == "pred":
                    v = _Lazy(lambda r=r: r != 0)
                else:
                    v = _Lazy(lambda r=r, dt=dt: r.astype(dt))
            if op.neg:
                return _Lazy(lambda v=v: ~_get(v))
            return v
        if isinstance(op, Imm):
            return _imm(op, t, dt)
        if isinstance(op, Sym):
            if op.space == "special":
                name = op.name
                if name in ("%clock", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi"):
                    return _Lazy(lambda name=name, dt=dt: self.read_clock(name).astype(dt))
                if name not in self.sp:
                    raise PTXError(f"unsupported special register {name}", location=self.loc(inst))
                v = self.sp[name]
                return v.astype(dt) if isinstance(v, np.ndarray) and v.dtype != dt else dt.type(v)
            return dt.type(self.sym_addr(op, inst) & ((1 << (8 * dt.itemsize)) - 1))
        if isinstance(op, Vec):   # packing: {%h1, %h2} -> wider value
            parts = [self.val(x, _int_t(_elem_size(x, self), False) if not isinstance(x, Sink) else "b16", inst)
                     for x in op.items]
            sizes = [(_elem_size(x, self)) for x in op.items]

            def pack(parts=parts, sizes=sizes, dt=dt):
                acc = np.zeros(self.L, dtype=np.uint64)
                sh = 0
                for p, s in zip(parts, sizes):
                    acc |= (np.asarray(_get(p)).astype(np.uint64) & np.uint64((1 << (8 * s)) - 1)) << np.uint64(sh)
                    sh += 8 * s
                return acc.astype(np.dtype(NP_TYPE["b" + str(8 * dt.itemsize)])).view(dt)
            return _Lazy(pack)
        raise self.fault_decode(inst, f"unsupported operand {op!r}")

    def sym_addr(self, op, inst):
        p = self.prog
        if op.space == "param":
            return self.ex.param_addr[op.name]
        if op.space == "shared":
            return p.shared_vars[op.name].offset
        if op.space == "global":
            return self.ex.global_addr.get(op.name, 0)
        if op.space == "local":
            return self.ex.local_offsets[op.name]
        raise self.fault_decode(inst, f"symbol {op.name} cannot be used here")

    def writer(self, op, t, inst):
        """Returns ``w(res, act, full)`` writing a value of PTX type ``t`` into register ``op``."""
        if isinstance(op, Sink) or op is None:
            return lambda res, act, full: None
        if not isinstance(op, Reg):
            raise self.fault_decode(inst, "destination must be a register")
        r = self.R[op.index]
        dt = np.dtype(NP_TYPE.get(t, r.dtype))
        if r.dtype.itemsize == dt.itemsize and r.dtype.kind != "b" and dt.kind != "b":
            d = r.view(dt)
        elif r.dtype.kind == "b":
            d = r
        else:
            d = r      # size mismatch: numeric conversion into storage (zero/sign handled by astype)

            def w(res, act, full, d=d, dt=dt):
                res = np.asarray(res)
                if res.dtype != dt:
                    res = res.astype(dt)
                if res.dtype.kind == "f":
                    res = res.view(NP_TYPE["b" + str(8 * dt.itemsize)])
                if full:
                    d[...] = res
                else:
                    np.copyto(d, res.astype(d.dtype) if res.ndim else d.dtype.type(res), where=act, casting="unsafe")
            return w

        def w(res, act, full, d=d):
            if full:
                d[...] = res
            else:
                np.copyto(d, res, where=act, casting="unsafe")
        return w

    def loc(self, inst):
        return f"{self.prog.filename}:{inst.line}"

    def fault_decode(self, inst, msg, hint=None):
        return PTXError(f"{msg}: {inst.text}", location=self.loc(inst), hint=hint)

    def read_clock(self, name):
        # one value per warp: oracle(gwarp, ordinal) or a monotone counter
        W = self.W
        orc = self.ex.clock_oracle
        gw = self.ctas[np.arange(W) // self.wpc] * self.wpc + (np.arange(W) % self.wpc)
        if orc is not None:
            vals = np.array([int(orc(int(g), int(o))) for g, o in zip(gw, self.clock_ord)], dtype=np.uint64)
        else:
            self.clock_counter += 1
            # one tick per read: slower than any timed clock (>= 1 cycle per instruction), so a clock-bounded
            # spin loop runs at least as long as under the timing oracle (runner/simulate.py re-times it)
            vals = np.full(W, self.clock_counter, dtype=np.uint64)
        self._clock_pay = self.clock_ord.copy()
        act = self.cur_act
        if act is None:
            self.clock_ord += 1
        else:
            self.clock_ord += act.reshape(W, 32).any(axis=1)
        v = np.repeat(vals, 32)
        if name in ("%clock", "%globaltimer_lo"):
            v = v & np.uint64(0xFFFFFFFF)
        elif name == "%globaltimer_hi":
            v = v >> np.uint64(32)
        return v

    # ------------------------------------------------------------------------------------------ decode
    def decode(self, inst):
        op = inst.opcode
        fn = _DECODERS.get(op)
        if fn is None:
            raise PTXError(f"unsupported instruction {op}", location=self.loc(inst), hint=inst.text)
        if op == "bra" and not any(isinstance(o, Label) for o in inst.operands):
            raise PTXError(f"{op} without a target label: {inst.text.strip()}", location=self.loc(inst),
                           hint="bra LABEL")
        h = fn(self, inst)
        if inst.kind == Kind.CLOCK and h is not None and self.ex.want_trace:
            def hc(act, full, h=h):
                h(act, full)
                pay = np.zeros((self.W, 4), dtype=np.int64)
                pay[:, 0] = self._clock_pay
                self.pay = pay
            return hc
        return h

    # ------------------------------------------------------------------------------------------ helpers
    def active_idx(self, act, full):
        return np.flatnonzero(act) if not full else np.arange(self.L)

    def warp_first(self, idx, values):
        """Per warp of the batch: value at the first active lane (0 where none)."""
        out = np.zeros(self.W, dtype=np.int64)
        if len(idx):
            w = idx >> 5
            uw, first = np.unique(w, return_index=True)
            out[uw] = np.asarray(values)[first]
        return out

    def per_warp_count(self, idx):
        return np.bincount(idx >> 5, minlength=self.W).astype(np.int64)


class _Lazy:
    __slots__ = ("f",)

    def __init__(self, f):
        self.f = f


def _get(v):
    return v.f() if type(v) is _Lazy else v


def _imm(op, t, dt):
    if op.is_float_bits:
        if op.text[1] in "fF":
            bits = np.uint32(op.value)
            f = bits.view(np.float32)
        else:
            bits = np.uint64(op.value)
            f = bits.view(np.float64)
        if dt.kind == "f":
            return dt.type(f)
        return dt.type(op.value & ((1 << (8 * dt.itemsize)) - 1)) if dt.kind != "b" else np.bool_(op.value)
    if op.is_float:
        return dt.type(op.value) if dt.kind == "f" else dt.type(int(op.value))
    v = int(op.value)
    if dt.kind == "f":
        return dt.type(v)
    if dt.kind == "b":
        return np.bool_(v)
    bits = 8 * dt.itemsize
    v &= (1 << bits) - 1
    if dt.kind == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return dt.type(v)


def _elem_size(x, b):
    if isinstance(x, Reg):
        r = b.R[x.index]
        return 1 if r.dtype == np.bool_ else r.dtype.itemsize
    return 2


def _int_t(size, signed):
    return ("s" if signed else "b") + str(8 * size) if size > 1 else "b16"


# ================================================================================================ decoders
_DECODERS: dict = {}


def decoder(*names):
    def deco(f):
        for n in names:
            _DECODERS[n] = f
        return f
    return deco


def _main_type(inst):
    ts = _types(inst.mods)
    return ts[-1] if ts else "b32"


def _simple(b, inst, f, t=None, nsrc=None):
    """dst = f(src...) elementwise; f gets numpy arrays/scalars."""
    t = t or _main_type(inst)
    ops = inst.operands
    w = b.writer(ops[0], t, inst)
    srcs = [b.val(o, t, inst) for o in ops[1:]]
    if any(type(s) is _Lazy for s in srcs):
        def h(act, full):
            w(f(*[_get(s) for s in srcs]), act, full)
    elif len(srcs) == 1:
        a = srcs[0]

        def h(act, full):
            w(f(a), act, full)
    elif len(srcs) == 2:
        a, c = srcs

        def h(act, full):
            w(f(a, c), act, full)
    else:
        def h(act, full):
            w(f(*srcs), act, full)
    return h


def _sat(x):
    return np.clip(np.nan_to_num(x, nan=0.0), 0.0, 1.0).astype(x.dtype)


def _f16x2_op(f):
    def g(*xs):
        lo = [np.asarray(x, dtype=np.uint32) & np.uint32(0xFFFF) for x in xs]
        hi = [np.asarray(x, dtype=np.uint32) >> np.uint32(16) for x in xs]
        rl = f(*[v.astype(np.uint16).view(np.float16).astype(np.float32) for v in lo]).astype(np.float16)
        rh = f(*[v.astype(np.uint16).view(np.float16).astype(np.float32) for v in hi]).astype(np.float16)
        return rl.view(np.uint16).astype(np.uint32) | (rh.view(np.uint16).astype(np.uint32) << np.uint32(16))
    return g


def _bf16x2_op(f):
    def g(*xs):
        lo = [bf16_to_f32((np.asarray(x, dtype=np.uint32) & np.uint32(0xFFFF)).astype(np.uint16)) for x in xs]
        hi = [bf16_to_f32((np.asarray(x, dtype=np.uint32) >> np.uint32(16)).astype(np.uint16)) for x in xs]
        return (f32_to_bf16(f(*lo)).astype(np.uint32) | (f32_to_bf16(f(*hi)).astype(np.uint32) << np.uint32(16)))
    return g


def _h16_op(f):
    def g(*xs):
        return f(*[np.asarray(x).view(np.float16).astype(np.float32) if np.asarray(x).dtype == np.uint16 else x
                   for x in xs]).astype(np.float16)
    return g


def _bf16_op(f):
    def g(*xs):
        return f32_to_bf16(f(*[bf16_to_f32(np.asarray(x)) for x in xs]))
    return g


def _float_wrap(inst, f):
    """Wrap a float32 function for f16/bf16/x2 types and apply .sat."""
    t = _main_type(inst)
    if t == "f16x2":
        g = _f16x2_op(f)
        return g, "b32"
    if t == "bf16x2":
        return _bf16x2_op(f), "b32"
    if t == "f16":
        return (lambda *xs: f(*[np.asarray(x, dtype=np.float32) for x in xs]).astype(np.float16)), "f16"
    if t == "bf16":
        return _bf16_op(f), "bf16"
    if "sat" in inst.mods:
        return (lambda *xs: _sat(np.asarray(f(*xs)))), t
    return f, t


@decoder("add", "sub", "mul", "min", "max", "and", "or", "xor", "div", "rem", "mad", "fma", "neg", "abs", "not",
         "cnot", "copysign")
def _d_arith(b, inst):
    op = inst.opcode
    mods = inst.mods
    t = _main_type(inst)
    if t == "pred":
        f = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor, "not": np.logical_not}[op]
        return _simple(b, inst, f, "pred")
    flt = is_float(t)
    if flt:
        if op in ("add", "sub", "mul", "div", "fma", "mad", "min", "max", "neg", "abs", "copysign"):
            base = {
                "add": np.add, "sub": np.subtract, "mul": np.multiply, "neg": np.negative, "abs": np.abs,
                "min": np.fmin, "max": np.fmax, "copysign": lambda a, c: np.copysign(c, a),
            }.get(op)
            if op == "div":
                base = np.divide
            if op in ("fma", "mad"):
                if t == "f32" and b.ex.exact_fma:
                    def base(a, c, d):
                        return (np.asarray(a, np.float64) * np.asarray(c, np.float64) + d).astype(np.float32)
                else:
                    def base(a, c, d):
                        return a * c + d
            if "ftz" in mods and op in ("min", "max") and False:
                pass
            f, tt = _float_wrap(inst, base)
            if not b.ex.compute_values and op in ("fma", "mad", "mul", "add", "sub", "div") and t == "f32":
                return lambda act, full: None
            return _simple(b, inst, f, tt)
        raise b.fault_decode(inst, f"unsupported float op {op}")
    signed = t[0] == "s"
    bits = SIZE[t] * 8
    if op in ("add", "sub", "and", "or", "xor", "min", "max", "not", "neg", "abs"):
        if "sat" in mods and op in ("add", "sub"):
            f0 = np.add if op == "add" else np.subtract
            return _simple(b, inst, lambda a, c: np.clip(f0(np.asarray(a, np.int64), c), -2**31, 2**31 - 1), t)
        f = {"add": np.add, "sub": np.subtract, "and": np.bitwise_and, "or": np.bitwise_or,
             "xor": np.bitwise_xor, "min": np.minimum, "max": np.maximum, "not": np.invert, "neg": np.negative,
             "abs": np.abs}[op]
        if op in ("and", "or", "xor", "not"):
            t = "b" + str(bits)
        return _simple(b, inst, f, t)
    if op == "cnot":
        return _simple(b, inst, lambda a: (a == 0).astype(NP_TYPE[t]), t)
    if op == "mul" or op == "mad":
        wide = "wide" in mods
        hi = "hi" in mods
        ops = inst.operands
        dt = NP_TYPE[t]
        if wide:
            dt2 = np.int64 if signed else np.uint64
            t2 = ("s" if signed else "u") + str(bits * 2)

            def f(a, c, *d):
                r = np.asarray(a).astype(dt2) * np.asarray(c).astype(dt2)
                return r + d[0] if d else r
            w = b.writer(ops[0], t2, inst)
            srcs = [b.val(o, t, inst) for o in ops[1:3]] + ([b.val(ops[3], t2, inst)] if op == "mad" else [])

            def h(act, full):
                w(f(*[_get(s) for s in srcs]), act, full)
            return h
        if hi:
            if bits == 64:
                def f(a, c, *d):
                    r = _mulhi64(np.asarray(a), np.asarray(c), signed)
                    return r + d[0] if d else r
            else:
                dt2 = np.int64 if signed else np.uint64

                def f(a, c, *d):
                    r = ((np.asarray(a).astype(dt2) * np.asarray(c).astype(dt2)) >> bits).astype(dt)
                    return r + d[0] if d else r
            return _simple(b, inst, f, t)

        def f(a, c, *d):
            r = np.multiply(a, c)
            return r + d[0] if d else r
        return _simple(b, inst, f, t)
    if op in ("div", "rem"):
        dt = NP_TYPE[t]

        def f(a, c):
            a = np.asarray(a)
            c = np.asarray(c)
            cz = np.where(c == 0, 1, c).astype(dt)
            if signed:
                a64, c64 = a.astype(np.int64), cz.astype(np.int64)
                q = np.abs(a64) // np.abs(c64)
                q = np.where((a64 < 0) ^ (c64 < 0), -q, q)
                if op == "div":
                    r = np.where(c == 0, -1, q)
                else:
                    r = a64 - q * c64
                    r = np.where(c == 0, a64, r)
                return r.astype(dt)
            if op == "div":
                return np.where(c == 0, dt(np.iinfo(dt).max), a // cz).astype(dt)
            return np.where(c == 0, a, a % cz).astype(dt)
        return _simple(b, inst, f, t)
    raise b.fault_decode(inst, f"unsupported integer op {op}")


def _mulhi64(a, c, signed):
    a, c = np.broadcast_arrays(np.asarray(a), np.asarray(c))
    af = a.reshape(-1).astype(object)
    cf = c.reshape(-1).astype(object)
    r = [((int(x) * int(y)) >> 64) & (2**64 - 1) for x, y in zip(af, cf)]
    out = np.array(r, dtype=np.uint64).reshape(a.shape)
    return out.view(np.int64) if signed else out


@decoder("shl", "shr")
def _d_shift(b, inst):
    t = _main_type(inst)
    bits = SIZE[t] * 8
    dt = NP_TYPE[t]
    ops = inst.operands
    w = b.writer(ops[0], t, inst)
    a = b.val(ops[1], t, inst)
    sh = ops[2]
    left = inst.opcode == "shl"
    if isinstance(sh, Imm):
        n = int(sh.value)
        if n >= bits:
            if left or t[0] != "s":
                return lambda act, full: w(dt(0), act, full)
            n = bits - 1
        ns = dt(n)
        f = np.left_shift if left else np.right_shift

        def h(act, full):
            w(f(_get(a), ns), act, full)
        return h
    s = b.val(sh, "u32", inst)

    def h(act, full):
        x = np.asarray(_get(a))
        amt = np.asarray(_get(s)).astype(np.uint32)
        big = amt >= bits
        amt_c = np.minimum(amt, bits - 1).astype(dt)
        if left:
            r = np.left_shift(x, amt_c)
            r = np.where(big, dt(0), r)
        else:
            r = np.right_shift(x, amt_c)
            if t[0] != "s":
                r = np.where(big, dt(0), r)
        w(r, act, full)
    return h


@decoder("bfe")
def _d_bfe(b, inst):
    t = _main_type(inst)
    bits = SIZE[t] * 8
    signed = t[0] == "s"

    def f(a, pos, ln):
        a = np.asarray(a).astype(np.int64 if signed else np.uint64)
        pos = np.minimum(np.asarray(pos).astype(np.int64) & 0xFF, bits)
        ln = np.minimum(np.asarray(ln).astype(np.int64) & 0xFF, bits)
        ua = a.astype(np.uint64)
        sh = np.minimum(pos, 63).astype(np.uint64)
        mask = np.where(ln >= 64, np.uint64(2**64 - 1), (np.uint64(1) << np.minimum(ln, 63).astype(np.uint64)) - np.uint64(1))
        r = (ua >> sh) & mask
        r = np.where(pos >= bits, np.uint64(0), r)
        if signed:
            top = np.minimum(pos + ln - 1, bits - 1)
            sbit = (ua >> top.astype(np.uint64)) & np.uint64(1)
            sbit = np.where(ln == 0, np.uint64(0), sbit)
            ext = np.where((sbit == 1) & (ln < bits), ~mask, np.uint64(0))
            r = r | ext
        return r.astype(NP_TYPE["u" + str(bits)]).view(NP_TYPE[t])
    ops = inst.operands
    w = b.writer(ops[0], t, inst)
    a = b.val(ops[1], t, inst)
    p = b.val(ops[2], "u32", inst)
    l_ = b.val(ops[3], "u32", inst)
    return lambda act, full: w(f(_get(a), _get(p), _get(l_)), act, full)


@decoder("bfi")
def _d_bfi(b, inst):
    t = _main_type(inst)
    bits = SIZE[t] * 8
    ops = inst.operands
    w = b.writer(ops[0], t, inst)
    a, bb = b.val(ops[1], t, inst), b.val(ops[2], t, inst)
    p, l_ = b.val(ops[3], "u32", inst), b.val(ops[4], "u32", inst)

    def h(act, full):
        A = np.asarray(_get(a)).astype(np.uint64)
        B = np.asarray(_get(bb)).astype(np.uint64)
        pos = np.minimum(np.asarray(_get(p)).astype(np.uint64) & np.uint64(0xFF), np.uint64(bits))
        ln = np.minimum(np.asarray(_get(l_)).astype(np.uint64) & np.uint64(0xFF), np.uint64(bits))
        mask = ((np.uint64(1) << np.minimum(ln, 63)) - np.uint64(1)) << np.minimum(pos, 63)
        r = (B & ~mask) | ((A << np.minimum(pos, 63)) & mask)
        r = np.where(pos >= bits, B, r)
        w(r.astype(NP_TYPE["u" + str(bits)]), act, full)
    return h


@decoder("prmt")
def _d_prmt(b, inst):
    ops = inst.operands
    w = b.writer(ops[0], "b32", inst)
    a, c, s = (b.val(o, "b32", inst) for o in ops[1:4])
    mode = [m for m in inst.mods if m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")]
    if mode:
        raise b.fault_decode(inst, f"prmt mode .{mode[0]} not supported")

    def h(act, full):
        A = np.asarray(_get(a)).astype(np.uint64)
        C = np.asarray(_get(c)).astype(np.uint64)
        S = np.asarray(_get(s)).astype(np.uint64)
        src = A | (C << np.uint64(32))
        r = np.zeros(np.broadcast(A, C, S).shape, dtype=np.uint64)
        for k in range(4):
            sel = (S >> np.uint64(4 * k)) & np.uint64(0xF)
            byte = (src >> ((sel & np.uint64(7)) * np.uint64(8))) & np.uint64(0xFF)
            sign = (byte >> np.uint64(7)) & np.uint64(1)
            byte = np.where((sel & np.uint64(8)) != 0, sign * np.uint64(0xFF), byte)
            r |= byte << np.uint64(8 * k)
        w(r.astype(np.uint32), act, full)
    return h


@decoder("lop3")
def _d_lop3(b, inst):
    ops = inst.operands
    w = b.writer(ops[0], "b32", inst)
    a, c, d = (b.val(o, "b32", inst) for o in ops[1:4])
    lut = int(ops[4].value)

    def h(act, full):
        A, B, C = (np.asarray(_get(x), dtype=np.uint32) for x in (a, c, d))
        r = np.zeros(np.broadcast(A, B, C).shape, dtype=np.uint32)
        for i in range(8):
            if lut >> i & 1:
                r |= (A if i & 4 else ~A) & (B if i & 2 else ~B) & (C if i & 1 else ~C)
        w(r, act, full)
    return h


@decoder("popc", "clz", "brev")
def _d_bits(b, inst):
    t = _main_type(inst)
    bits = SIZE[t] * 8
    op = inst.opcode

    def f(a):
        a = np.asarray(a).astype(np.uint64)
        if op == "popc":
            return np.bitwise_count(a).astype(np.uint32)
        if op == "clz":
            r = np.full(a.shape, bits, dtype=np.uint32)
            x = a.copy()
            n = np.zeros(a.shape, dtype=np.uint32)
            for k in range(bits):
                bit = (x >> np.uint64(bits - 1 - k)) & np.uint64(1)
                hit = (bit == 1) & (r == bits)
                r = np.where(hit, np.uint32(k), r)
            return r
        r = np.zeros(a.shape, dtype=np.uint64)
        for k in range(bits):
            r |= ((a >> np.uint64(k)) & np.uint64(1)) << np.uint64(bits - 1 - k)
        return r.astype(NP_TYPE[t])
    ops = inst.operands
    w = b.writer(ops[0], "u32" if op != "brev" else t, inst)
    a = b.val(ops[1], t, inst)
    return lambda act, full: w(f(_get(a)), act, full)


@decoder("ex2", "lg2", "rcp", "sqrt", "rsqrt", "sin", "cos", "tanh")
def _d_sfu(b, inst):
    op = inst.opcode
    f = {"ex2": np.exp2, "lg2": np.log2, "rcp": lambda x: np.float32(1) / x if np.asarray(x).dtype == np.float32 else 1.0 / x,
         "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "sin": np.sin, "cos": np.cos, "tanh": np.tanh}[op]
    f2, tt = _float_wrap(inst, f)
    if not b.ex.compute_values and tt == "f32":
        return lambda act, full: None
    return _simple(b, inst, f2, tt)


@decoder("testp")
def _d_testp(b, inst):
    t = _main_type(inst)
    m = inst.mods[0]
    f = {"finite": np.isfinite, "infinite": np.isinf, "number": lambda x: ~np.isnan(x), "notanumber": np.isnan,
         "normal": lambda x: np.isfinite(x) & (np.abs(x) >= np.finfo(np.float32).tiny),
         "subnormal": lambda x: (np.abs(x) < np.finfo(np.float32).tiny) & (x != 0)}[m]
    ops = inst.operands
    w = b.writer(ops[0], "pred", inst)
    a = b.val(ops[1], t, inst)
    return lambda act, full: w(f(_get(a)), act, full)


def _cmp(c, a, x, flt):
    a = np.asarray(a)
    x = np.asarray(x)
    if c in ("eq",):
        return a == x
    if c == "ne":
        return (a != x) & ~(np.isnan(a) | np.isnan(x)) if flt else a != x
    if c in ("lt", "lo"):
        return a < x
    if c in ("le", "ls"):
        return a <= x
    if c in ("gt", "hi"):
        return a > x
    if c in ("ge", "hs"):
        return a >= x
    un = np.isnan(a) | np.isnan(x)
    if c == "num":
        return ~un
    if c == "nan":
        return un
    base = {"equ": a == x, "neu": a != x, "ltu": a < x, "leu": a <= x, "gtu": a > x, "geu": a >= x}[c]
    return base | un


def _cmp_type(t, c):
    if c in ("lo", "ls", "hi", "hs") and t[0] in "sb":
        return "u" + t[1:]
    if t[0] == "b" and c in ("lt", "le", "gt", "ge"):
        return "s" + t[1:]
    return t


@decoder("setp", "set")
def _d_setp(b, inst):
    mods = inst.mods
    c = next(m for m in mods if m in _CMP)
    bop = next((m for m in mods if m in _BOOLOP), None)
    ts = _types(mods)
    st = ts[-1]
    flt = is_float(st)
    ct = _cmp_type(st, c)
    ops = inst.operands
    if st in ("f16", "bf16"):
        conv = (lambda x: np.asarray(x).view(np.float16).astype(np.float32)) if st == "f16" else (lambda x: bf16_to_f32(np.asarray(x)))
        ct = "b16"
    else:
        conv = None
    a = b.val(ops[1], ct, inst)
    x = b.val(ops[2], ct, inst)
    pc_ = b.val(ops[3], "pred", inst) if len(ops) > 3 else None
    dst = ops[0]
    if inst.opcode == "setp":
        if isinstance(dst, Pair):
            w1 = b.writer(dst.first, "pred", inst)
            w2 = b.writer(dst.second, "pred", inst)
        else:
            w1, w2 = b.writer(dst, "pred", inst), None
    else:
        dt_ = ts[0]
        w1 = b.writer(dst, dt_, inst)
        w2 = None

    def combine(r, p):
        if bop == "and":
            return np.logical_and(r, p)
        if bop == "or":
            return np.logical_or(r, p)
        return np.logical_xor(r, p)

    def h(act, full):
        A, X = _get(a), _get(x)
        if conv is not None:
            A, X = conv(A), conv(X)
        r = _cmp(c, A, X, flt)
        if inst.opcode == "setp":
            if bop is not None:
                p = _get(pc_)
                w1(combine(r, p), act, full)
                if w2 is not None:
                    w2(combine(~r, p), act, full)
            else:
                w1(r, act, full)
                if w2 is not None:
                    w2(~r, act, full)
        else:
            if bop is not None:
                r = combine(r, _get(pc_))
            dt_ = ts[0]
            if dt_ == "f32":
                w1(np.where(r, np.float32(1.0), np.float32(0.0)), act, full)
            else:
                w1(np.where(r, NP_TYPE[dt_](-1) if dt_[0] == "s" else np.iinfo(NP_TYPE[dt_]).max, 0).astype(NP_TYPE[dt_]), act, full)
    return h


@decoder("selp", "slct")
def _d_selp(b, inst):
    t = _main_type(inst)
    ops = inst.operands
    w = b.writer(ops[0], t, inst)
    a, c = b.val(ops[1], t, inst), b.val(ops[2], t, inst)
    if inst.opcode == "selp":
        p = b.val(ops[3], "pred", inst)
        if type(a) is not _Lazy and type(c) is not _Lazy and type(p) is not _Lazy:
            return lambda act, full: w(np.where(p, a, c), act, full)
        return lambda act, full: w(np.where(_get(p), _get(a), _get(c)), act, full)
    ts = _types(inst.mods)
    p = b.val(ops[3], ts[-1], inst)
    return lambda act, full: w(np.where(np.asarray(_get(p)) >= 0, _get(a), _get(c)), act, full)


@decoder("mov")
def _d_mov(b, inst):
    t = _main_type(inst)
    ops = inst.operands
    dst, src = ops[0], ops[1]
    if isinstance(dst, Vec):        # unpack
        sizes = [_elem_size(x, b) for x in dst.items]
        v = b.val(src, "b" + str(SIZE[t] * 8), inst)
        ws = [b.writer(x, _int_t(s, False), inst) if not isinstance(x, Sink) else None
              for x, s in zip(dst.items, sizes)]
        ut = np.dtype(NP_TYPE["b" + str(SIZE[t] * 8)])

        def h(act, full):
            x = np.asarray(_get(v)).astype(np.uint64)
            sh = 0
            for wr, s in zip(ws, sizes):
                if wr is not None:
                    wr(((x >> np.uint64(sh)) & np.uint64((1 << (8 * s)) - 1)).astype(NP_TYPE[_int_t(s, False)]),
                       act, full)
                sh += 8 * s
        return h
    if t == "pred":
        return _simple(b, inst, lambda a: a, "pred")
    return _simple(b, inst, lambda a: a, t)


@decoder("cvta")
def _d_cvta(b, inst):
    t = _main_type(inst)
    to = "to" in inst.mods
    space = next((m for m in inst.mods if m in ("shared", "global", "param", "local", "const", "shared::cta",
                                                "shared::cluster")), "global")
    if space.startswith("shared"):
        off = -SHARED_WINDOW if to else SHARED_WINDOW
    elif space == "local":
        off = -LOCAL_WINDOW if to else LOCAL_WINDOW
    else:
        off = 0
    dt = NP_TYPE[t]
    o = dt(off & ((1 << (8 * SIZE[t])) - 1))
    return _simple(b, inst, lambda a: np.add(a, o, dtype=dt) if off else a, t)


@decoder("cvt")
def _d_cvt(b, inst):
    mods = inst.mods
    ts = _types(mods)
    dt_, st = ts[0], ts[-1]
    rnd = next((m for m in mods if m in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna", "rs")), None)
    sat = "sat" in mods or "satfinite" in mods
    relu = "relu" in mods
    ops = inst.operands
    if dt_ in ("f16x2", "bf16x2"):
        w = b.writer(ops[0], "b32", inst)
        a, c = b.val(ops[1], "f32", inst), b.val(ops[2], "f32", inst)

        def cv(x):
            x = np.asarray(x, dtype=np.float32)
            if relu:
                x = np.where(x < 0, np.float32(0), x)
            if dt_ == "f16x2":
                return x.astype(np.float16).view(np.uint16).astype(np.uint32)
            return f32_to_bf16(x, "rz" if rnd == "rz" else "rn").astype(np.uint32)
        if not b.ex.compute_values:
            return lambda act, full: None
        return lambda act, full: w((cv(_get(a)) << np.uint32(16)) | cv(_get(c)), act, full)
    if dt_ in ("e4m3x2", "e5m2x2"):
        w = b.writer(ops[0], "b16", inst)
        a, c = b.val(ops[1], "f32", inst), b.val(ops[2], "f32", inst)
        fmt = dt_[:4]
        return lambda act, full: w((_to_f8(_get(a), fmt).astype(np.uint16) << np.uint16(8))
                                   | _to_f8(_get(c), fmt).astype(np.uint16), act, full)
    srcf = is_float(st)
    dstf = is_float(dt_)
    w = b.writer(ops[0], dt_, inst)
    a = b.val(ops[1], st if st not in ("f16", "bf16") else "b16", inst)

    def read(x):
        x = np.asarray(x)
        if st == "f16":
            return x.astype(np.uint16).view(np.float16)
        if st == "bf16":
            return bf16_to_f32(x.astype(np.uint16))
        return x

    if srcf and dstf:
        def f(x):
            x = read(x)
            if rnd in ("rni", "rzi", "rmi", "rpi"):
                x = round_float(x, rnd)
            if dt_ == "f16":
                r = np.asarray(x, np.float32).astype(np.float16)
            elif dt_ == "bf16":
                return f32_to_bf16(np.asarray(x, np.float32), "rz" if rnd == "rz" else "rn")
            else:
                r = np.asarray(x).astype(NP_TYPE[dt_])
            if relu:
                r = np.where(r < 0, 0, r).astype(r.dtype)
            if sat and dt_ != "f16" and "sat" in mods:
                r = _sat(r)
            return r
    elif srcf and not dstf:
        def f(x):
            return float_to_int(read(x), dt_, rnd or "rzi")
    elif dstf:
        def f(x):
            x = np.asarray(x)
            if dt_ == "bf16":
                return f32_to_bf16(x.astype(np.float32))
            if dt_ == "f16":
                return x.astype(np.float32).astype(np.float16)
            return x.astype(NP_TYPE[dt_])
    else:
        sig_src = st[0] == "s"
        sz_d = SIZE[dt_]

        def f(x):
            x = np.asarray(x)
            if sat:
                lo, hi = _rng(dt_)
                return np.clip(x.astype(np.int64) if x.dtype != np.uint64 else x, lo, hi).astype(NP_TYPE[dt_])
            return x.astype(NP_TYPE[dt_])
    return lambda act, full: w(f(_get(a)), act, full)


def _rng(t):
    from .alu import _INT_RANGE
    return _INT_RANGE[t]


def _to_f8(x, fmt):
    from ..references import _FP8  # table of float values per byte
    tab = _FP8["float8_e4m3fn" if fmt == "e4m3" else "float8_e5m2"]
    finite = np.where(np.isfinite(tab), tab, np.inf)
    order = np.argsort(finite)
    srt = finite[order]
    x = np.asarray(x, np.float32)
    idx = np.clip(np.searchsorted(srt, x), 1, len(srt) - 1)
    pick = np.where(np.abs(srt[idx - 1] - x) <= np.abs(srt[idx] - x), idx - 1, idx)
    return order[pick].astype(np.uint8)


# ---- control / misc (the scheduler handles the control effect; handlers only trace) ----
@decoder("bra", "ret", "exit", "nop", "bar.warp.sync", "fence", "fence.proxy", "membar", "prefetch", "prefetchu",
         "griddepcontrol", "setmaxnreg", "pmevent", "cp.async.bulk.prefetch", "cp.async.bulk.prefetch.tensor",
         "brkpt")
def _d_nop(b, inst):
    return None


@decoder("brx")
def _d_brx(b, inst):
    """``brx.idx index, tlist``: the scheduler (run.py) sends each lane to ``tlist[index]``; the handler reads
    the active lanes' indices into ``b.brx_sel`` and stops on one outside the list (undefined in PTX)."""
    idx_op, tl = inst.operands
    n = len(tl.labels)
    v = b.val(idx_op, "u32", inst)

    def h(act, full):
        x = np.asarray(_get(v)).astype(np.int64)
        sel = np.broadcast_to(x, (b.L,)) if x.ndim == 0 else x
        bad = act & ((sel < 0) | (sel >= n))
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            raise SimulationError(
                f"brx.idx index {int(sel[lane])} outside the {n}-entry list {tl.name} "
                f"(thread {lane % b.lpc} of CTA {int(b.ctas[b.lane_cta[lane]])})", location=b.loc(inst),
                hint=f"an index in [0, {n})")
        b.brx_sel = sel
    return h


@decoder("trap")
def _d_trap(b, inst):
    """``trap`` aborts the kernel (the launch fails with an illegal-instruction error): stop, naming the lanes."""
    def h(act, full):
        idx = np.flatnonzero(act)
        if len(idx):
            lane = int(idx[0])
            cta = int(b.ctas[lane // b.lpc])
            t = lane % b.lpc
            raise SimulationError(f"trap executed by {len(idx)} thread(s), first CTA {cta} warp {t // 32} lane "
                                  f"{t % 32}: the kernel aborts", location=b.loc(inst),
                                  hint="a kernel that does not reach trap (it is an assertion failure / abort)")
    return h


@decoder("bar.sync", "barrier.sync", "bar.arrive", "barrier.arrive", "barrier.cluster.arrive",
         "barrier.cluster.wait")
def _d_bar(b, inst):
    ops = inst.operands
    bid = int(ops[0].value) if ops and isinstance(ops[0], Imm) else 0
    cnt = int(ops[1].value) if len(ops) > 1 and isinstance(ops[1], Imm) else b.tpc
    if inst.opcode in ("bar.sync", "barrier.sync", "bar.arrive", "barrier.arrive"):
        if not 0 <= bid <= 15:
            raise b.fault_decode(inst, f"barrier id {bid} out of range", hint="a named barrier 0..15")
        if len(ops) > 1 and isinstance(ops[1], Imm):
            if cnt <= 0 or cnt % 32:
                raise b.fault_decode(inst, f"barrier thread count {cnt} is not a positive multiple of 32",
                                     hint="a thread count that is a multiple of the warp size")
            if cnt > b.wpc * 32:
                raise SimulationError(f"barrier {bid} waits for {cnt} threads but the CTA has {b.tpc}: it can never "
                                      f"complete (deadlock): {inst.text}", location=b.loc(inst),
                                      hint=f"a thread count <= the CTA's {b.tpc} threads")
    pay = np.zeros((b.W, 4), dtype=np.int64)
    pay[:, 0] = bid
    pay[:, 1] = cnt

    def h(act, full):
        b.pay = pay
    return h


@decoder("bar.red", "barrier.red")
def _d_bar_red(b, inst):
    raise b.fault_decode(inst, "bar.red is not supported")


from . import memops  # noqa: E402  (registers the memory / sync / tensor decoders)
from . import tcgen05_ops, packed_f32  # noqa: E402,F401  (Blackwell: tcgen05 + TMEM, packed .f32x2 arithmetic)

"""Which kernels may execute only a subset of their CTAs functionally (sampled mode, wave sampling).

A CTA's functional trace depends on the other CTAs only through global memory. Plain loads and stores of
independent tiles (GEMM, attention, norms, element-wise kernels) do not let one CTA observe another within a
launch, so a subset of CTAs executes exactly as it would in the full grid (addresses, control flow and payloads;
only the L2 model's first touches see fewer accesses). A kernel whose CTAs *communicate* does not: a spin lock
(``atom.cas`` / ``atom.exch`` whose old value decides a loop), a ticket counter (``atom.add`` whose result picks
the work), a flag polled with ``ld.volatile`` / ``ld.acquire``. Without the other CTAs such a kernel would spin
forever or take other paths, so :func:`cta_communication` names the instruction and the runner executes every
CTA instead (runner/sampling.py records the reason). Atomics whose result is never read (``red``, Triton's
``atomic_add`` of a split-K reduction) only accumulate: they cannot change a trace.
"""
from __future__ import annotations

import numpy as np

__all__ = ["cta_communication", "first_touch_bytes_by_cta"]

_ORDERED = {"volatile", "acquire", "relaxed", "mmio"}


def cta_communication(program) -> str | None:
    """Why the CTAs of ``program`` may observe each other through global memory (the first such instruction and
    its PTX location), or None when every CTA's trace is independent of the others."""
    insts = program.instructions
    read: set[int] = set()
    for ins in insts:
        read.update(ins.srcs)
    for ins in insts:
        kind = getattr(ins.kind, "name", "")
        mods = set(ins.mods)
        if kind == "ATOM_GLOBAL" and ins.opcode == "atom":
            if any(d in read for d in ins.dsts):
                return (f"{ins.opcode}.{'.'.join(ins.mods)} at {program.location(ins.index)} returns a value the "
                        f"kernel reads (a shared counter or lock: CTAs communicate)")
        elif kind == "LD_GLOBAL" and mods & _ORDERED:
            return (f"{ins.opcode}.{'.'.join(ins.mods)} at {program.location(ins.index)} reads global memory other "
                    f"CTAs may write during the launch (a flag or a lock: CTAs communicate)")
    return None


# -- first touches (the L2 model's DRAM reads) of a subset trace ----------------------------------------------
_MASK32 = 0xFFFFFFFF


def _ft_cols(program):
    """Per pc: (payload column holding DRAM first touches, bytes per unit, CP_ASYNC low-32-bit flag) or None
    (Contract 2 payload table: a1 sectors of global loads / atomics / cp.async, a2 bytes of TMA loads)."""
    out = []
    for ins in program.instructions:
        k = getattr(ins.kind, "name", "")
        if k == "LD_LOCAL":
            out.append((1, 32, False))
        elif k in ("LD_GLOBAL", "CP_ASYNC", "ATOM_GLOBAL"):   # high 32 bits: line key / atom.cas lock-word bits
            out.append((1, 32, True))
        elif k == "TMA_LOAD":
            out.append((2, 1, False))
        else:
            out.append(None)
    return out


def _ft_pairs(bt, cols):
    """Distinct (payload id, column spec, step count) of a batch's steps that carry first touches."""
    if bt.pay is None or not len(bt.pay):
        return []
    cls = _cls_of(cols)
    has = bt.pay >= 0
    cid = cls[bt.pc[has]]
    ok = cid >= 0
    pays, cid = bt.pay[has][ok].astype(np.int64), cid[ok]
    if not len(pays):
        return []
    u, n = np.unique(pays * 8 + cid, return_counts=True)
    specs = _SPECS
    return [(int(k // 8), specs[int(k % 8)], int(c)) for k, c in zip(u.tolist(), n.tolist())]


_SPECS = [(1, 32, False), (1, 32, True), (2, 1, False)]


def _cls_of(cols) -> np.ndarray:
    return np.array([_SPECS.index(c) if c is not None else -1 for c in cols] or [-1], dtype=np.int64)


def first_touch_bytes_by_cta(trace) -> dict[int, int]:
    """DRAM first-touch bytes of every CTA of ``trace`` (sum over its warps' global loads, cp.async, TMA loads)."""
    cols = _ft_cols(trace.program)
    res: dict[int, int] = {}
    wpc = trace.warps_per_cta
    for bt in trace.batches:
        per_w = np.zeros(bt.W, dtype=np.int64)
        for p, (col, unit, low), n in _ft_pairs(bt, cols):
            v = bt.payload_arr[p, :, col]
            if low:
                v = v & _MASK32
            per_w += v * (unit * n)
        per_c = per_w.reshape(len(bt.ctas), wpc).sum(axis=1)
        for c, v in zip(bt.ctas.tolist(), per_c.tolist()):
            res[int(c)] = int(v)
    return res

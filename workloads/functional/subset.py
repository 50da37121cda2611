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

__all__ = ["cta_communication", "first_touch_bytes_by_cta", "thin_first_touches"]

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
        if k in ("LD_GLOBAL", "ATOM_GLOBAL", "LD_LOCAL"):
            out.append((1, 32, False))
        elif k == "CP_ASYNC":
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


def thin_first_touches(trace, ratio: float, seed: int = 0) -> None:
    """Scale every DRAM first touch of ``trace`` by ``ratio`` (unbiased stochastic rounding, seeded), in place:
    the first-touch payloads get their own copies, so payload rows shared with other instructions stay as they
    were. Used by sampled mode: a CTA of the sample is the first to touch lines that, on the full grid, an
    unsampled neighbour fetched before it (runner/sampling.py ``calibrate_first_touches``)."""
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, 0x5A4D])
    cols = _ft_cols(trace.program)
    for bt in trace.batches:
        pairs = _ft_pairs(bt, cols)
        if not pairs:
            continue
        base = len(bt.payload_arr)
        new_rows, remap = [], {}
        for p, (col, unit, low), _n in pairs:
            row = bt.payload_arr[p].copy()
            v = row[:, col]
            if low:
                hi, lo = v & ~np.int64(_MASK32), v & _MASK32
            else:
                hi, lo = 0, v
            scaled = np.floor(lo * ratio + rng.random(len(lo))).astype(np.int64)
            scaled = np.minimum(np.maximum(scaled, 0), lo if ratio <= 1 else scaled)
            if unit == 1:       # TMA first-touch bytes stay whole 32-B sectors
                scaled = np.floor(lo * ratio / 32.0 + rng.random(len(lo))).astype(np.int64) * 32
                scaled = np.minimum(scaled, lo) if ratio <= 1 else scaled
            row[:, col] = hi + scaled if low else scaled
            remap[(p, (col, unit, low))] = base + len(new_rows)
            new_rows.append(row)
        bt.payload_arr = np.concatenate([bt.payload_arr, np.stack(new_rows)])
        cls = _cls_of(cols)
        pay = bt.pay.astype(np.int64)
        has = pay >= 0
        cid = np.where(has, cls[bt.pc], -1)
        sel = np.flatnonzero(cid >= 0)
        keys = pay[sel] * 8 + cid[sel]
        lut = {p * 8 + _SPECS.index(c): v for (p, c), v in remap.items()}
        uk, inv = np.unique(keys, return_inverse=True)
        pay[sel] = np.array([lut[int(k)] for k in uk.tolist()], dtype=np.int64)[inv]
        bt.pay = pay.astype(np.int32)
        bt._warp_cache = {}

"""Synthetic kernels for timing tests: a tiny Program (Contract 1 fields) and a KernelTrace stand-in (Contract 2).

``kernel([...])`` builds a program from ``I(opcode, mods, kind, unit, dsts, srcs)`` entries; ``trace(prog, ...)``
makes every warp execute the listed instruction indices (straight line, or a per-warp ``stream`` function)
with payloads from ``payload(g, pos, inst) -> (a0, a1, a2, a3)``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from warpgraph.workloads.ptx import Kind, Unit

__all__ = ["I", "SynProgram", "SynTrace", "kernel", "trace", "Kind", "Unit"]


@dataclass
class SynInstruction:
    index: int
    opcode: str
    mods: tuple
    kind: Kind
    unit: Unit
    dsts: tuple
    srcs: tuple
    line: int = 0
    text: str = ""
    guard: tuple | None = None
    operands: tuple = ()
    width_bytes: int = 0


def I(opcode: str, mods=(), kind: Kind = Kind.ALU, unit: Unit = Unit.INT, dsts=(), srcs=(), text: str = ""):
    return SynInstruction(-1, opcode, tuple(mods), kind, unit, tuple(dsts), tuple(srcs), text=text or opcode)


@dataclass
class SynProgram:
    instructions: list
    reg_names: list
    name: str = "synthetic"
    params: list = field(default_factory=list)
    maxnreg: int | None = None
    reqntid: tuple | None = None
    maxntid: tuple | None = None
    static_shared_bytes: int = 0


def kernel(insts: list, nregs: int | None = None, name: str = "synthetic") -> SynProgram:
    for k, ins in enumerate(insts):
        ins.index = k
        ins.line = k + 1
    n = nregs
    if n is None:
        n = 1 + max([r for ins in insts for r in ins.dsts + ins.srcs] or [0])
    return SynProgram(list(insts), [f"%r{k}" for k in range(n)], name=name)


@dataclass
class SynStream:
    pc: np.ndarray
    a0: np.ndarray
    a1: np.ndarray
    a2: np.ndarray
    a3: np.ndarray
    active: np.ndarray

    def __len__(self):
        return len(self.pc)


class SynTrace:
    def __init__(self, program, n_ctas: int, warps_per_cta: int, stream=None, payload=None, active=None):
        self.program = program
        self.n_ctas = n_ctas
        self.warps_per_cta = warps_per_cta
        self.threads_per_cta = 32 * warps_per_cta
        self.n_warps = n_ctas * warps_per_cta
        self.grid = (n_ctas, 1, 1)
        self.block = (self.threads_per_cta, 1, 1)
        self._stream = stream or (lambda g: list(range(len(program.instructions))))
        self._payload = payload
        self._active = active
        self.dram_first_touch_bytes = 0
        self.write_back_ratio = 1.0   # (KernelTrace: the dirty-line write-back share; nothing written here)

    def cta_coords(self, cta):
        return (cta, 0, 0)

    def warp_stream(self, g: int) -> SynStream:
        pcs = list(self._stream(g))
        n = len(pcs)
        a = np.zeros((4, n), dtype=np.int64)
        if self._payload is not None:
            for k, pc in enumerate(pcs):
                v = self._payload(g, k, self.program.instructions[pc])
                if v:
                    a[:, k] = v
        act = np.full(n, 32, dtype=np.uint8)
        if self._active is not None:
            for k, pc in enumerate(pcs):
                act[k] = self._active(g, k, self.program.instructions[pc])
        return SynStream(np.asarray(pcs, dtype=np.int32), a[0], a[1], a[2], a[3], act)

    @property
    def dynamic_warp_instructions(self):
        return sum(len(self._stream(g)) for g in range(self.n_warps))


def trace(program, n_ctas=1, warps_per_cta=1, stream=None, payload=None, active=None) -> SynTrace:
    return SynTrace(program, n_ctas, warps_per_cta, stream, payload, active)

"""Decoded PTX data model (Contract 1)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .isa import Kind, Unit


# ---- operands -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Reg:
    index: int
    name: str
    neg: bool = False          # "!%p" as a source predicate


@dataclass(frozen=True)
class Imm:
    value: Any                 # int (also raw bits for 0f/0d literals) or float (decimal literal)
    text: str
    is_float_bits: bool = False  # 0fXXXXXXXX / 0dXXXX... literal: value holds the raw bits
    is_float: bool = False       # decimal float literal (1.5)


@dataclass(frozen=True)
class Sym:
    """A named variable (param, shared/global variable) used as a value (its address)."""
    name: str
    space: str                 # "param", "shared", "global", "const", "local"


@dataclass(frozen=True)
class Label:
    name: str
    target: int                # instruction index


@dataclass(frozen=True)
class Targets:
    """A ``.branchtargets`` list (``ts: .branchtargets L0, L1, L2;``), the table operand of ``brx.idx``:
    ``labels[i]`` is the target of index ``i``."""
    name: str
    labels: tuple              # of Label


@dataclass(frozen=True)
class Sink:
    pass


@dataclass(frozen=True)
class Vec:
    items: tuple


@dataclass(frozen=True)
class Pair:
    """``%r43|%p8`` (two destinations)."""
    first: Any
    second: Any


@dataclass(frozen=True)
class Addr:
    """``[base+offset]``; ``base`` is a Reg, a Sym, or None (absolute); ``coords`` for tensor addressing
    ``[%rd2, {%r1, %r2}]``."""
    base: Any
    offset: int = 0
    coords: tuple | None = None


Operand = Reg | Imm | Sym | Label | Targets | Sink | Vec | Pair | Addr


@dataclass
class Param:
    name: str
    type: str                  # "u32", "u64", "f32", "b8", ...
    size: int                  # bytes
    align: int
    offset: int = 0            # byte offset in the param block (natural alignment)
    array: int | None = None   # element count for ".b8 p[128]"
    is_ptr: bool = False


@dataclass
class SharedVar:
    name: str
    type: str
    size: int                  # bytes (0 for extern dynamic)
    align: int
    offset: int = 0            # byte offset in the CTA's shared window (extern: start of dynamic smem)
    extern: bool = False


@dataclass
class Instruction:
    index: int
    line: int
    text: str
    opcode: str
    mods: tuple
    guard: tuple | None
    operands: tuple
    kind: Kind = Kind.ALU
    unit: Unit = Unit.INT
    dsts: tuple = ()
    srcs: tuple = ()
    width_bytes: int = 0

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<{self.index} L{self.line}: {self.text}>"


@dataclass
class Program:
    name: str
    filename: str
    instructions: list
    reg_names: list
    reg_types: list                 # declared type per register index (".b32" -> "b32")
    params: list
    maxnreg: int | None = None
    reqntid: tuple | None = None
    maxntid: tuple | None = None
    reqnctapercluster: tuple | None = None   # clusters: .reqnctapercluster X, Y, Z (padded to 3 dimensions)
    explicitcluster: bool = False            # .explicitcluster: must be launched as a cluster
    maxclusterrank: int | None = None        # .maxclusterrank N
    static_shared_bytes: int = 0
    shared_vars: dict = field(default_factory=dict)   # name -> SharedVar
    dynamic_smem_offset: int = 0                       # where extern shared starts (after static)
    param_bytes: int = 0
    global_vars: dict = field(default_factory=dict)   # name -> (type, size, init bytes)
    labels: dict = field(default_factory=dict)        # label -> instruction index

    @property
    def n_regs(self) -> int:
        return len(self.reg_names)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def location(self, index: int) -> str:
        return f"{self.filename}:{self.instructions[index].line}"


@dataclass
class Module:
    filename: str
    version: str | None
    target: str | None
    address_size: int
    programs: dict          # entry name -> Program
    funcs: dict = field(default_factory=dict)

    def entry(self, name: str | None = None) -> Program:
        from ...core.errors import PTXError
        if name is None:
            if len(self.programs) == 1:
                return next(iter(self.programs.values()))
            raise PTXError("several entries in the module; name one", location=self.filename,
                           hint=", ".join(self.programs))
        try:
            return self.programs[name]
        except KeyError:
            raise PTXError(f"no .entry named {name!r}", location=self.filename,
                           hint="one of: " + (", ".join(self.programs) or "(none)")) from None

    @property
    def entries(self) -> list:
        return list(self.programs)

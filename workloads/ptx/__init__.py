"""warpgraph.workloads.ptx: PTX front end (Contract 1)."""
from .isa import Kind, Unit, classify
from .model import Addr, Imm, Instruction, Label, Module, Pair, Param, Program, Reg, SharedVar, Sink, Sym, Targets, Vec
from .parser import parse_ptx, split_opcode, tokenize

Operand = (Reg, Imm, Sym, Label, Targets, Sink, Vec, Pair, Addr)

__all__ = ["parse_ptx", "Module", "Program", "Instruction", "Param", "Kind", "Unit", "Reg", "Imm", "Sym",
           "Label", "Targets", "Sink", "Vec", "Pair", "Addr", "SharedVar", "classify", "split_opcode", "tokenize", "Operand"]

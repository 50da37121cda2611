"""The TMA boxes a compiled Triton kernel really copies through its host tensor descriptors, read from the TTGIR.

Triton's launcher builds each host descriptor's tensormap from ``metadata.tensordesc_meta[i]["block_size"]``, the
block type of the kernel's descriptor argument. Triton 3.6's warp-specialization data partitioning can split a
load fed by a host descriptor across the consumer warp groups (a ``128x64`` descriptor copied as two ``64x64``
halves, each with an 8 KB ``expect_tx``) without changing the argument's type, so the metadata box no longer
matches the copies in the PTX (newer Triton rejects this at compile time: triton-lang/triton#11587, #11596).
:func:`host_desc_copy_shapes` lists, per host descriptor argument, the shapes its ``ttng.async_tma_*`` copies
move, so capture can record the box the PTX expects (or refuse when the copies disagree).
"""
from __future__ import annotations

import re

_NAME = r"%[\w$.\-]+"
_FUNC_DESC = re.compile(r"(" + _NAME + r"): !tt\.tensordesc<tensor<([\dx]+?)x[a-zA-Z]\w*")
_ARG = re.compile(r"(" + _NAME + r"): ")
_WS = re.compile(r"ttg\.warp_specialize\(([^)]*)\)")
_PART = re.compile(r"^\s*partition\d+\(")
# copies whose destination / source is a dense box of the descriptor (gather / scatter move rows by index)
_COPY = re.compile(r"ttng\.async_tma_(copy_global_to_local|copy_local_to_global|reduce|prefetch)\b[^%]*"
                   r"(" + _NAME + r")\[")
_DESC_T = re.compile(r"!tt\.tensordesc<tensor<([\dx]+?)x[a-zA-Z]\w*")
_MEM_T = re.compile(r"!ttg\.memdesc<([\dx]+?)x([a-zA-Z]\w*)")


def _shape(s: str) -> tuple[int, ...]:
    return tuple(int(x) for x in s.split("x"))


def host_desc_copy_shapes(ttgir: str) -> list[tuple[tuple[int, ...], set[tuple[int, ...]]]]:
    """For each tensor-descriptor argument of the public function, in order (= ``tensordesc_meta`` order):
    (its block type's shape, the set of shapes its dense TMA copies move). A copy's shape is its shared-memory
    operand's (the barrier ``1xi64`` operand excluded); descriptor names are followed into
    ``ttg.warp_specialize`` partitions by position."""
    lines = ttgir.splitlines()
    head = next((ln for ln in lines if "tt.func public" in ln), "")
    descs = [(m.group(1), _shape(m.group(2))) for m in _FUNC_DESC.finditer(head)]
    root = {name: name for name, _ in descs}
    operands: list[str] = []
    for ln in lines:
        m = _WS.search(ln)
        if m:
            operands = [x.strip() for x in m.group(1).split(",") if x.strip()]
            continue
        if _PART.match(ln) and operands:
            for name, op in zip([a.group(1) for a in _ARG.finditer(ln)], operands):
                if op in root:
                    root[name] = root[op]
    copies: dict[str, set[tuple[int, ...]]] = {name: set() for name, _ in descs}
    for ln in lines:
        m = _COPY.search(ln)
        if not m or m.group(2) not in root:
            continue
        tail = ln[m.end():]
        if m.group(1) == "prefetch":
            continue
        if m.group(1) == "copy_global_to_local":
            mem = _MEM_T.search(tail[tail.find("->"):]) if "->" in tail else None
        else:
            mem = next((t for t in _MEM_T.finditer(tail[tail.find(" : "):]) if t.group(2) != "i64"), None)
        if mem is not None:
            copies[root[m.group(2)]].add(_shape(mem.group(1)))
    return [(shape, copies[name]) for name, shape in descs]

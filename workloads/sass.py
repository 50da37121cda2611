"""The SASS that ptxas makes of a record's PTX, attributed to PTX instructions (issue 15, SASS-guided counts).

The per-opcode rules of ``components/sass_cost.py`` miss what ptxas does around the TMA / wgmma path (the
``R2UR`` / ``UMOV`` / ``ELECT`` set-up of each ``UTMALDG``, ``SYNCS.*`` polls, ``WARPGROUP.*`` fences, uniform
address arithmetic, predicates it rebuilds) and the moves and address arithmetic it expands or folds anywhere.
This module asks ptxas itself, offline:

1. the record's PTX is rewritten so that every instruction carries ``.loc 1 <its own PTX line> 0`` (the
   kernel's own ``.file`` / ``.loc`` / debug sections are dropped), assembled with ``ptxas -lineinfo
   -arch=<isa>`` (line info does not change the code: the SASS equals that of a plain ``ptxas`` run) and
   disassembled with ``nvdisasm -g``: each SASS instruction names the PTX line it came from;
2. :func:`attribute` turns the static SASS into a per-PTX-instruction issue cost for the timing pass, by
   instruction semantics, never by a per-kernel factor:

   * SASS the entry cannot reach without a ``CALL`` (the slow paths of ``div.rn`` / ``sqrt.rn``, the trailing
     ``BRA`` self-loop and ``NOP`` padding) is never charged;
   * loops are natural loops (dominators) on both sides; a SASS instruction at the PTX instruction's own loop
     depth is charged where the PTX executes; one at a shallower depth was hoisted by ptxas and is charged once
     per entry of that loop (to its preheader); copies of a line's SASS at several depths (a peeled first
     iteration, the out-of-line retry path of an ``mbarrier.try_wait`` loop) are counted once (their common
     part);
   * a SASS instruction whose line's PTX instruction is of its class (``LDG`` for ``ld.global``, ``SYNCS.*`` for
     ``mbarrier``, ``HGMMA`` / ``WARPGROUP.*`` for ``wgmma``, ``BRA`` for ``bra``...) in the same block is that
     instruction's; the others of a class go to the block's instructions of that class (ptxas's line info is
     approximate inside a block), and the helper SASS (``R2UR``, ``UMOV``, ``IADD3`` address arithmetic,
     ``ELECT`` predicates) to the block's integer instructions that are SASS already (same execution count; a
     move ptxas folded stays free), so a load's memory pipe is not held for its address arithmetic;
   * a SASS loop ptxas unrolled U times (U: the most common number of copies per SASS iteration of the PTX
     loop's instructions with a class of their own) costs its body / U per PTX iteration; the iterations ptxas
     peels out of it (remainders, other versions of the loop) are not charged (:func:`_unrolling`); SASS ptxas
     recomputes inside a loop for a line before it (``S2R``, ``P2R`` under register pressure) is charged per
     iteration of that loop;
   * uniform-datapath SASS and SASS of another unit take issue slots but not the instruction's pipe
     (``SassAttribution.pipe``);
   * a PTX instruction with semantics of its own (memory, barrier, tensor, branch) costs at least 1 SASS.

The SASS listing is cached on disk per (PTX, ISA, tools) like ``workloads/compiled.py``; without ptxas or
nvdisasm the rules of ``components/sass_cost.py`` apply and the caller says so once.
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = ["SassInst", "tag_ptx", "parse_nvdisasm", "find_nvdisasm", "sass_listing", "attribute",
           "SassAttribution", "sass_category", "natural_loop_depth", "record_sass_costs", "guided_costs", "GUIDED_DEFAULT"]

_TIMEOUT_S = 120


@dataclass(frozen=True)
class SassInst:
    """One SASS instruction of the entry: address, opcode with modifiers, guard, PTX line, branch target."""

    addr: int
    op: str
    guard: str = ""
    line: int = 0
    target: int | None = None     # branch target address (BRA / BRX / JMP), None otherwise
    ctrl: int = -1                # control field: bits 41-63 of the encoding's high word (:func:`decode_control`);
                                  # -1 when the listing has no encodings
    arg: int | None = None        # ``WARPGROUP.DEPBAR.LE gsb0, N``: N (the wgmma ops it lets stay in flight)
    operands: str = ""            # the operand text after the opcode (``R52, R73``)


@dataclass(frozen=True)
class Control:
    """The scheduling control bits ptxas sets on every Volta-and-later SASS instruction (:func:`decode_control`)."""

    stall: int        # cycles before the warp may issue its next instruction (fixed-latency dependences)
    yield_: int       # yield bit
    wbar: int         # scoreboard barrier the instruction's result sets (7: none)
    rbar: int         # scoreboard barrier its source-operand reads release (7: none)
    wait: int         # mask of the barriers the instruction waits on before issuing
    reuse: int        # operand-reuse cache flags


def control_field(hi: int) -> int:
    """The control field of an instruction from the high 64-bit word of its 128-bit encoding: bits 41-63."""
    return (int(hi) >> 41) & 0x7FFFFF


def decode_control(ctrl: int) -> Control:
    """The fields of a control field (:func:`control_field`), sm_70 through sm_90 (the 128-bit encodings:
    high word bits 41-44 stall count, 45 yield, 46-48 write barrier, 49-51 read barrier, 52-57 wait mask,
    58-61 reuse; Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking", 2018, sec. 2;
    the same layout as maxas's / turingas's control codes). Checked on ptxas 12.x sm_90a listings: an ``S2UR UR7``
    with write barrier 3 is followed by the ``UISETP`` reading UR7 whose wait mask is ``0b001000``
    (tests/test_sass_control.py)."""
    c = int(ctrl)
    return Control(c & 0xF, (c >> 4) & 1, (c >> 5) & 7, (c >> 8) & 7, (c >> 11) & 0x3F, (c >> 17) & 0xF)


# ----------------------------------------------------------------------------------------------- PTX tagging
_INSTR_LINE = re.compile(r"^\s*(@!?%?\w+\s+)?[a-z][a-z0-9_]*(\.[\w:]+)*(\s|;)")


def tag_ptx(ptx_text: str) -> str:
    """``ptx_text`` with ``.loc 1 <line> 0`` before every instruction line (its own line number) and a single
    ``.file 1 "kernel.ptx"``; the original ``.file`` / ``.loc`` and the DWARF ``.section`` blocks are dropped."""
    out: list[str] = []
    in_section = False
    for i, raw in enumerate(ptx_text.splitlines(), start=1):
        s = raw.strip()
        if s.startswith(".section"):
            in_section = True
        if in_section:
            # a DWARF section block runs to its closing brace (at the module level)
            if s.startswith("}"):
                in_section = False
            out.append("")
            continue
        if s.startswith(".file") or s.startswith(".loc"):
            out.append("")
            continue
        if s.startswith(".address_size"):
            out.append(raw)
            out.append('.file 1 "kernel.ptx"')
            continue
        code = s.split("//", 1)[0].strip()
        if code and ";" in code and not code.startswith(".") and _INSTR_LINE.match(code):
            out.append(f".loc 1 {i} 0")
        out.append(raw)
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------------ nvdisasm output
_FUNC = re.compile(r"^\s*\.text\.(\S+?):\s*$")
_LINE = re.compile(r'//## File "[^"]*", line (\d+)')
_INSN = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?);")
_HI = re.compile(r"^\s*/\*\s*0x([0-9a-f]{16})\s*\*/\s*$")      # ``nvdisasm -hex``: the high word, own line
_LABEL = re.compile(r"^(\.L_x_\d+):")
_TARGET = re.compile(r"`\((\.L_x_\d+)\)")
_DEPBAR = re.compile(r"^WARPGROUP\.DEPBAR\.LE\s+gsb0\s*,\s*(0x[0-9a-f]+|\d+)")


def parse_nvdisasm(text: str, entry: str) -> list[SassInst]:
    """The SASS instructions of ``entry`` from ``nvdisasm -g`` output (each with its PTX line, 0 if none); with
    ``-hex`` also their control fields (the high word of each encoding follows its instruction on a line of its
    own)."""
    rows: list[list] = []
    labels: dict[str, int] = {}
    cur = None
    line = 0
    pending: list[str] = []
    for raw in text.splitlines():
        m = _FUNC.match(raw)
        if m:
            cur = m.group(1)
            line = 0
            continue
        if raw.startswith("//----"):
            cur = None
            continue
        if cur != entry:
            continue
        m = _LINE.search(raw)
        if m:
            line = int(m.group(1))
            continue
        m = _LABEL.match(raw)
        if m:
            pending.append(m.group(1))
            continue
        m = _INSN.match(raw)
        if not m:
            h = _HI.match(raw)
            if h and rows:
                rows[-1][5] = control_field(int(h.group(1), 16))
            continue
        addr = int(m.group(1), 16)
        for lb in pending:
            labels[lb] = addr
        pending = []
        body = m.group(2).strip()
        guard = ""
        if body.startswith("@"):
            guard, _, body = body.partition(" ")
            body = body.strip()
        op, _, operands = body.partition(" ") if body else ("", "", "")
        t = _TARGET.search(body)
        d = _DEPBAR.match(body)
        rows.append([addr, op, guard, line, t.group(1) if t else None, -1, int(d.group(1), 0) if d else None,
                     operands.strip()])
    end = (rows[-1][0] + 16) if rows else 0
    for lb in pending:
        labels[lb] = end
    return [SassInst(a, op, g, ln, labels.get(t) if t else None, c, x, o) for a, op, g, ln, t, c, x, o in rows]


# ------------------------------------------------------------------------------------------------- tools
def find_nvdisasm(ptxas_path: str) -> str | None:
    """nvdisasm next to ``ptxas_path`` (Triton wheel / CUDA toolkit bin), else on PATH."""
    p = Path(ptxas_path).with_name("nvdisasm")
    if p.is_file():
        return str(p)
    return shutil.which("nvdisasm")


def _cache_dir() -> Path | None:
    from warpgraph.workloads.compiled import _cache_dir as base

    return base("sass")


@lru_cache(maxsize=64)
def _disassemble(ptx_text: str, entry: str, isa: str, ptxas: str, nvdisasm: str, tool: str
                 ) -> tuple[tuple[SassInst, ...], str]:
    key = hashlib.sha256("\0".join(("sass/5", ptx_text, entry, isa, ptxas, nvdisasm, tool)).encode()
                         ).hexdigest()[:32]
    cdir = _cache_dir()
    cfile = cdir / f"{key}.json" if cdir else None
    if cfile is not None and cfile.is_file():
        try:
            d = json.loads(cfile.read_text())
            return tuple(SassInst(*r) for r in d["sass"]), d.get("error", "")
        except (OSError, ValueError, KeyError, TypeError):
            pass
    err = ""
    insts: list[SassInst] = []
    with tempfile.TemporaryDirectory(prefix="warpgraph-sass-") as td:
        src = Path(td) / "kernel.ptx"
        src.write_text(tag_ptx(ptx_text))
        cub = Path(td) / "k.cubin"
        try:
            p = subprocess.run([ptxas, "-lineinfo", f"-arch={isa}", str(src), "-o", str(cub)],
                               capture_output=True, text=True, timeout=_TIMEOUT_S)
            if p.returncode != 0:
                err = next((ln.strip() for ln in (p.stdout + p.stderr).splitlines() if "error" in ln.lower()),
                           f"ptxas exit code {p.returncode}").replace(str(src), "kernel.ptx")
                m = _UNSUPPORTED_VERSION.search(p.stdout + p.stderr)
                if m:
                    err = f"{_VERSION_ERR}{m.group(1)}"
            else:
                q = subprocess.run([nvdisasm, "-g", "-hex", "-c", str(cub)], capture_output=True, text=True,
                                   timeout=_TIMEOUT_S)
                if q.returncode != 0:
                    err = f"nvdisasm exit code {q.returncode}"
                else:
                    insts = parse_nvdisasm(q.stdout, entry)
                    if not insts:
                        err = f"nvdisasm listed no code for entry '{entry}'"
        except (OSError, subprocess.SubprocessError) as e:
            err = f"could not run ptxas / nvdisasm: {e}"
    if cfile is not None:
        try:
            from warpgraph.core.cache_dir import write_atomic

            rows = [[s.addr, s.op, s.guard, s.line, s.target, s.ctrl, s.arg, s.operands] for s in insts]
            write_atomic(cfile, json.dumps({"sass": rows, "error": err, "tool": tool}))
        except OSError:
            pass
    return tuple(insts), err


_UNSUPPORTED_VERSION = re.compile(r"Unsupported \.version [0-9.]+; current version is '([0-9]+\.[0-9]+)'")
_VERSION_ERR = "PTX ISA version newer than this ptxas: "
_VERSION_LINE = re.compile(r"^(\s*\.version\s+)([0-9]+\.[0-9]+)", re.M)


def sass_listing(ptx_text: str, entry: str, isa: str = "sm_90a", *, prefer: str = "triton"
                 ) -> tuple[tuple[SassInst, ...] | None, str]:
    """``(SASS of entry with PTX lines, tool)`` or ``(None, why not)``. PTX of a newer ISA version than the ptxas
    found (CUDA 13's nvcc writes ``.version 9.0``; Triton 3.6's ptxas 12.8 reads up to 8.7) is assembled again
    with the version it supports: the version gates features, and a PTX that uses a newer one still fails."""
    from warpgraph.workloads.compiled import find_ptxas

    found = find_ptxas(isa, prefer)
    if found is None:
        return None, "no ptxas found"
    ptxas, tool = found
    nvd = find_nvdisasm(ptxas)
    if nvd is None:
        # a toolkit without nvdisasm (a minimal CUDA install): the other tool chain's ptxas and nvdisasm
        other = find_ptxas(isa, "cuda" if prefer == "triton" else "triton")
        nvd = find_nvdisasm(other[0]) if other is not None else None
        if nvd is not None:
            ptxas, tool = other
    if nvd is None:
        return None, "no nvdisasm found next to ptxas or on PATH"
    insts, err = _disassemble(ptx_text, entry, isa, ptxas, nvd, tool)
    if err.startswith(_VERSION_ERR):
        lowered = _VERSION_LINE.sub(lambda m: m.group(1) + err[len(_VERSION_ERR):], ptx_text, count=1)
        insts, err = _disassemble(lowered, entry, isa, ptxas, nvd, tool)
    if err:
        return None, f"{tool}: {err}"
    return insts, tool


# ------------------------------------------------------------------------------------------- categories
_CAT_PREFIX = (
    ("mem", ("LDG", "STG", "LDS", "STS", "LDL", "STL", "LD", "ST", "ATOM", "ATOMG", "ATOMS", "RED", "REDG",
             "LDGSTS", "LDGDEPBAR", "DEPBAR", "LDSM", "STSM", "SYNCS", "UTMALDG", "UTMASTG", "UTMACMDFLUSH",
             "UTMAPF", "UTMAREDG", "UTMACCTL", "UBLKCP", "UBLKRED", "UBLKPF", "CCTL", "MEMBAR", "FENCE",
             "ERRBAR", "SUST", "SULD", "TEX", "TLD")),
    ("bar", ("BAR", "ARRIVES")),
    ("ctrl", ("BRA", "BRX", "JMP", "JMX", "EXIT", "RET", "CALL", "BSSY", "BSYNC", "BREAK", "WARPSYNC", "YIELD",
              "NANOSLEEP", "BPT", "KILL", "ACQBULK", "PREEXIT")),
    ("tensor", ("HGMMA", "HMMA", "IMMA", "QGMMA", "IGMMA", "BGMMA", "DMMA", "WARPGROUP")),
    ("sfu", ("MUFU",)),
    ("mio", ("SHFL", "VOTE", "VOTEU", "MATCH", "REDUX")),
)
_CAT = {root: cat for cat, roots in _CAT_PREFIX for root in roots}


def _uniform(op: str) -> bool:
    """An integer op of the uniform datapath (``UIADD3``, ``UMOV``, ``ULEA``, ``R2UR``...): one per warp, on
    the uniform pipe, not the vector integer / FP32 pipes."""
    root = op.split(".", 1)[0]
    return root in ("R2UR", "S2UR", "LDCU") or (root.startswith("U") and sass_category(op) == "alu")


def sass_category(op: str) -> str:
    """Issue class of a SASS opcode: mem, bar, ctrl, tensor, sfu, mio or alu (integer / float / uniform)."""
    return _CAT.get(op.split(".", 1)[0], "alu")


_KIND_CAT = {
    "BRANCH": "ctrl", "EXIT": "ctrl", "BAR_SYNC": "bar", "MMA_SYNC": "tensor", "WGMMA": "tensor",
    "WGMMA_FENCE": "tensor", "WGMMA_COMMIT": "tensor", "WGMMA_WAIT": "tensor", "SHFL": "mio", "VOTE": "mio",
}
_MEM_KINDS = ("LD_", "ST_", "ATOM_", "LDMATRIX", "STMATRIX", "CP_ASYNC", "TMA_", "BULK_", "MBAR_", "FENCE")


def ptx_category(ins) -> str:
    """Issue class of a decoded PTX instruction (the SASS class that *is* the instruction)."""
    kind = getattr(ins.kind, "name", str(ins.kind)).upper()
    if kind in _KIND_CAT:
        return _KIND_CAT[kind]
    if kind == "LD_PARAM":
        return "alu"
    if kind.startswith(_MEM_KINDS):
        return "mem"
    if getattr(ins.unit, "name", str(ins.unit)).upper() == "SFU":
        return "sfu"
    return "alu"


# ------------------------------------------------------------------------------------------------ graphs
def _dominators(n: int, succ: list[list[int]], entry: int = 0) -> list[set[int]]:
    preds: list[list[int]] = [[] for _ in range(n)]
    for u in range(n):
        for v in succ[u]:
            preds[v].append(u)
    order, seen, stack = [], {entry}, [entry]
    while stack:                      # reachable nodes (DFS preorder is fine for the iterative solver)
        u = stack.pop()
        order.append(u)
        for v in succ[u]:
            if v not in seen:
                seen.add(v)
                stack.append(v)
    allr = set(order)
    dom = [set(allr) for _ in range(n)]
    dom[entry] = {entry}
    changed = True
    while changed:
        changed = False
        for u in order:
            if u == entry:
                continue
            ps = [dom[p] for p in preds[u] if p in allr]
            new = set.intersection(*ps) if ps else set()
            new = new | {u}
            if new != dom[u]:
                dom[u], changed = new, True
    for u in range(n):
        if u not in allr:
            dom[u] = set()
    return dom


def natural_loop_depth(n: int, succ: list[list[int]], entry: int = 0
                       ) -> tuple[list[int], list[tuple[int, frozenset[int]]], set[int]]:
    """Loop depth per node, the natural loops ``(header, body)`` and the reachable nodes of a CFG."""
    dom = _dominators(n, succ, entry)
    preds: list[list[int]] = [[] for _ in range(n)]
    for u in range(n):
        for v in succ[u]:
            preds[v].append(u)
    bodies: dict[int, set[int]] = {}
    for u in range(n):
        if not dom[u]:
            continue
        for h in succ[u]:
            if h in dom[u]:           # back edge u -> h
                body = bodies.setdefault(h, {h})
                stack = [u]
                while stack:
                    x = stack.pop()
                    if x not in body:
                        body.add(x)
                        stack.extend(p for p in preds[x] if dom[p])
    depth = [0] * n
    for body in bodies.values():
        for x in body:
            depth[x] += 1
    reach = {u for u in range(n) if dom[u]}
    return depth, [(h, frozenset(b)) for h, b in bodies.items()], reach


def _sass_cfg(insts: tuple[SassInst, ...]):
    """Basic blocks (lists of instruction positions) and successors of the SASS; CALL targets are not
    followed (subroutines are reached only through CALL)."""
    pos = {s.addr: i for i, s in enumerate(insts)}
    starts = {0}
    for i, s in enumerate(insts):
        root = s.op.split(".", 1)[0]
        if s.target is not None and root in ("BRA", "JMP") and s.target in pos:
            starts.add(pos[s.target])
        if root in ("BRA", "BRX", "JMP", "JMX", "EXIT", "RET", "KILL") and i + 1 < len(insts):
            starts.add(i + 1)
    blocks, block_of = _blocks(starts, len(insts))
    succ: list[list[int]] = [[] for _ in blocks]
    for b, idxs in enumerate(blocks):
        last = insts[idxs[-1]]
        root = last.op.split(".", 1)[0]
        uncond = not last.guard or last.guard in ("@PT",)
        if root in ("BRA", "JMP") and last.target in pos:
            succ[b].append(block_of[pos[last.target]])
        if root in ("BRX", "JMX"):
            uncond = False             # indirect: unknown targets, fall through conservatively
        if (root in ("BRA", "JMP", "EXIT", "RET", "KILL") and uncond) or b + 1 >= len(blocks):
            continue
        succ[b].append(b + 1)
    return blocks, block_of, succ


def _blocks(starts, n: int):
    """Basic blocks (index lists) that begin at ``starts`` over ``n`` instructions, and the block of each index."""
    starts_l = sorted(starts)
    blocks = [list(range(a, b)) for a, b in zip(starts_l, starts_l[1:] + [n])]
    block_of = {i: k for k, idxs in enumerate(blocks) for i in idxs}
    return blocks, block_of


def _targets(ins) -> tuple[int, ...]:
    """The instruction indices a PTX branch may jump to."""
    from warpgraph.workloads.ptx.model import Label, Targets

    for op in ins.operands:
        if isinstance(op, Label):
            return (op.target,)
        if isinstance(op, Targets):      # brx.idx: every entry of its .branchtargets list
            return tuple(lb.target for lb in op.labels)
    return ()


def _ptx_cfg(program):
    """Basic blocks of the PTX (instruction index lists), their successors and the block of each index."""
    insts = program.instructions
    n = len(insts)
    starts = {0}
    for i, ins in enumerate(insts):
        kind = getattr(ins.kind, "name", "").upper()
        if kind in ("BRANCH", "EXIT"):
            for t in _targets(ins):
                if 0 <= t < n:
                    starts.add(t)
            if i + 1 < n:
                starts.add(i + 1)
    blocks, block_of = _blocks(starts, n)
    succ: list[list[int]] = [[] for _ in blocks]
    for b, idxs in enumerate(blocks):
        last = insts[idxs[-1]]
        kind = getattr(last.kind, "name", "").upper()
        if kind == "BRANCH":
            for t in _targets(last):
                if 0 <= t < n:
                    succ[b].append(block_of[t])
            if last.guard is None or b + 1 >= len(blocks):
                continue
        elif kind == "EXIT":
            if last.guard is None or b + 1 >= len(blocks):
                continue
        if b + 1 < len(blocks):
            succ[b].append(b + 1)
    return blocks, block_of, succ


# -------------------------------------------------------------------------------------------- attribution
@dataclass
class SassAttribution:
    """Per PTX instruction index: SASS issue cost; totals and what went where, for reports and tests."""

    cost: dict[int, int]
    pipe: dict[int, int]         # how many of those SASS run on the PTX instruction's own pipe (the rest: the
                                 # uniform datapath, or another class's unit)
    static_sass: int             # SASS instructions of the entry reachable without CALL
    unreachable: int             # CALL-only subroutines, padding
    retry: int                   # out-of-line retry paths of mbarrier poll loops (not charged)
    hoisted: int                 # SASS charged to a loop preheader
    unattributed: int            # SASS without a PTX line (prologue), charged to the first block
    region: int                  # SASS of a class its block lacks, given to an instruction of that class in the loop
    helpers: int                 # helper SASS charged to the integer instructions of their block
    floors: int                  # PTX instructions given 1 SASS although ptxas attributed none of their class
    tool: str = ""
    unrolled: int = 0            # SASS of iterations ptxas peeled out of an unrolled loop (remainder copies,
                                 # other loop versions): not charged, their PTX iterations pay the loop's rate
    unroll: dict | None = None   # PTX loop header block -> unroll factor of its SASS loop (> 1 only)
    sunk: int = 0                # SASS ptxas recomputes inside a loop for a PTX line before it (S2R, P2R under
                                 # register pressure): charged per iteration of that loop
    extra: dict | None = None    # per PTX instruction: the fixed-latency stall cycles of its SASS beyond one issue
                                 # cycle each (control-code stall counts, :func:`control_extra`); None without
                                 # encodings
    stall_sum: int = 0           # sum of max(stall, 1) - 1 over the charged SASS (static)
    stall_n: int = 0             # SASS instructions with a control field among the charged ones
    branches: dict | None = None # PTX branch index -> how many of its taken executions one taken SASS branch
                                 # stands for (:func:`branch_periods`): 0 where ptxas predicated it or unrolled
                                 # its loop fully, U for the back edge of a loop it unrolled U times


_POLL_SASS = ("SYNCS", "BRA", "NANOSLEEP", "YIELD")


def _poll_loops(loops, blocks, ops_of) -> set[int]:
    """Blocks of the loops that only poll an mbarrier (``SYNCS.PHASECHK`` / ``mbarrier.try_wait`` + branch)."""
    out: set[int] = set()
    for _h, body in loops:
        ops = [o for b in body for o in ops_of(b)]
        if ops and all(o in _POLL_SASS or o in ("MBAR_WAIT", "BRANCH") for o in ops) and \
                any(o in ("SYNCS", "MBAR_WAIT") for o in ops):
            out |= set(body)
    return out


def _innermost(loops, n: int) -> list:
    """Per node: the header of the innermost of ``loops`` ``(header, body)`` that holds it, or None."""
    out: list = [None] * n
    size = [0] * n
    for h, body in loops:
        for x in body:
            if out[x] is None or len(body) < size[x]:
                out[x], size[x] = h, len(body)
    return out


def _mode(values) -> int:
    """The most common value (the larger on a tie), 1 for none."""
    c = Counter(v for v in values if v > 0)
    return max(c.items(), key=lambda t: (t[1], t[0]))[0] if c else 1


@dataclass
class _Unroll:
    """How ptxas unrolled the PTX loops: per PTX loop header its unroll factor (SASS loop iterations carry that
    many PTX iterations), and the SASS that is not charged (remainder copies, loop versions)."""

    factor: dict            # PTX loop header -> unroll factor U > 1, or a loop with several SASS versions
    drop: set               # SASS instruction positions not charged (they run PTX iterations counted already)
    loop_of: dict           # SASS block -> the PTX loop header its innermost SASS loop runs


def _unrolling(insts, sblocks, sblock_of, sloops_np, sreach, retry, pblocks, pblock_of_line, cat_of_line,
               ploops_np) -> _Unroll:
    """Match each SASS loop to the PTX loop whose lines it holds and measure the unroll factor by instruction
    semantics: the number of SASS copies, in one SASS iteration, of each PTX instruction with a SASS class of its
    own (an ``LDG`` per ``ld.global``, a ``MUFU`` per SFU op, a ``SHFL`` per ``shfl``...), their most common
    value (the copies of every line when the loop has none). A PTX loop whose SASS loop is unrolled U times has
    its per-iteration costs divided by U (:func:`attribute`); the remainder iterations ptxas peels out of the
    loop (copies of the loop's SASS after it) and further SASS versions of the same loop are not charged: the
    PTX iterations they run are charged at the unrolled loop's rate per iteration. A loop ptxas unrolled fully
    has no SASS loop; its copies are charged once per entry of the loop (the hoisting rule)."""
    sin = _innermost(sloops_np, len(sblocks))
    pin = _innermost(ploops_np, len(pblocks))
    pbody = {h: body for h, body in ploops_np}
    sbody = {h: body for h, body in sloops_np}
    own: dict[int, list[int]] = {h: [] for h in sbody}           # SASS loop -> its own-level SASS positions
    for i, s in enumerate(insts):
        b = sblock_of[i]
        if b in sreach and b not in retry and sin[b] is not None:
            own[sin[b]].append(i)
    match: dict[int, int] = {}                                    # SASS loop header -> PTX loop header
    for h, idxs in own.items():
        votes = Counter(pin[pblock_of_line[insts[i].line]] for i in idxs if insts[i].line in pblock_of_line)
        votes.pop(None, None)
        if votes:
            match[h] = max(votes.items(), key=lambda t: (t[1], -t[0]))[0]
    factor_of: dict[int, int] = {}
    for h, L in match.items():
        lines = {ln for ln, pb in pblock_of_line.items() if pin[pb] == L}
        cnt = Counter((insts[i].line, sass_category(insts[i].op)) for i in own[h] if insts[i].line in lines)
        # a branch is no witness: the loop's back edge is one SASS branch per SASS iteration however unrolled
        sem = [cnt[(ln, cat_of_line[ln])] for ln in lines if cat_of_line[ln] not in ("alu", "ctrl")]
        u = _mode(sem) if any(sem) else _mode(Counter(insts[i].line for i in own[h]
                                                       if insts[i].line in lines).values())
        factor_of[h] = u
    by_ptx: dict[int, list[int]] = {}
    for h, L in match.items():
        by_ptx.setdefault(L, []).append(h)
    factor: dict[int, int] = {}
    drop: set[int] = set()
    for L, hs in by_ptx.items():
        main = max(hs, key=lambda h: (factor_of[h], len(own[h]), -h))
        if factor_of[main] <= 1 and len(hs) == 1:
            continue
        factor[L] = factor_of[main]
        in_l = {ln for ln, pb in pblock_of_line.items() if pb in pbody[L]}
        keys = {(insts[i].line, insts[i].op.split(".", 1)[0]) for i in own[main]}
        mbody = sbody[main]
        for i, s in enumerate(insts):
            b = sblock_of[i]
            if b in mbody or b not in sreach or b in retry or s.line not in in_l:
                continue
            if (sin[b] is not None and sin[b] in hs) or (s.line, s.op.split(".", 1)[0]) in keys:
                drop.add(i)
    loop_of = {b: match[sin[b]] for b in range(len(sblocks)) if sin[b] in match}
    return _Unroll(factor, drop, loop_of)


def _scale(items: list[int], cost: list[int], pipe: list[int], cat: list[str], u: int) -> None:
    """Divide the per-iteration costs of ``items`` (the instructions of a loop ptxas unrolled ``u`` times) by
    ``u``: the loop's total becomes round(total / u), spread in proportion (cumulative rounding, deterministic);
    an instruction with semantics of its own keeps at least one SASS."""
    total = sum(cost[i] for i in items)
    if u <= 1 or total == 0:
        return
    keep = [i for i in items if cost[i] > 0 and cat[i] != "alu"]
    target = max(len(keep), (2 * total + u) // (2 * u))
    base = {i: (1 if i in keep else 0) for i in items}
    rest_old = total - len(keep)
    rest_new = target - len(keep)
    acc = 0
    prev = 0
    for i in items:
        c = cost[i]
        if c == 0:
            continue
        acc += c - base[i]
        cur = (2 * acc * rest_new + rest_old) // (2 * rest_old) if rest_old else 0
        new = base[i] + cur - prev
        prev = cur
        pipe[i] = min(new, -(-pipe[i] * new // c))
        cost[i] = new


def attribute(program, insts: tuple[SassInst, ...], tool: str = "") -> SassAttribution:
    """Per-PTX-instruction SASS costs of ``program`` from its SASS listing (see the module docstring)."""
    pins = program.instructions
    block_of_line: dict[int, int] = {}
    pblocks, pblock_of, psucc = _ptx_cfg(program)
    for ins in pins:
        block_of_line.setdefault(int(getattr(ins, "line", 0) or 0), pblock_of[ins.index])
    kind = [getattr(i.kind, "name", "").upper() for i in pins]
    cat = [ptx_category(i) for i in pins]

    sblocks, sblock_of, ssucc = _sass_cfg(insts)
    _sd, sloops, sreach = natural_loop_depth(len(sblocks), ssucc)
    spoll = _poll_loops(sloops, sblocks, lambda b: [insts[i].op.split(".", 1)[0] for i in sblocks[b]])
    # the out-of-line retry path: the poll loop and the plain jumps back that only it reaches
    spreds: list[set[int]] = [set() for _ in sblocks]
    for u, vs in enumerate(ssucc):
        for v in vs:
            spreds[v].add(u)
    retry = set(spoll)
    grew = True
    while grew:
        grew = False
        for b in range(len(sblocks)):
            if b in retry or not spreds[b] or not spreds[b] <= retry:
                continue
            if all(insts[i].op.split(".", 1)[0] == "BRA" for i in sblocks[b]):
                retry.add(b)
                grew = True
    sloops_np = [(h, body) for h, body in sloops if not (body & spoll)]
    sdepth = [sum(1 for _h, body in sloops_np if b in body) for b in range(len(sblocks))]

    _pd, ploops, _pr = natural_loop_depth(len(pblocks), psucc)
    ppoll = _poll_loops(ploops, pblocks, lambda b: [kind[i] for i in pblocks[b]])
    ploops_np = [(h, body) for h, body in ploops if not (body & ppoll)]
    pdepth = [sum(1 for _h, body in ploops_np if b in body) for b in range(len(pblocks))]
    region = [frozenset(h for h, body in ploops_np if b in body) for b in range(len(pblocks))]
    ppreds: list[list[int]] = [[] for _ in pblocks]
    for u, vs in enumerate(psucc):
        for v in vs:
            ppreds[v].append(u)
    preheader: dict[int, int] = {}
    for h, body in ploops_np:
        outside = [p for p in ppreds[h] if p not in body]
        preheader[h] = outside[0] if len(outside) == 1 else max(0, h - 1)

    def hoist_target(block: int, to_depth: int) -> int:
        """The block that runs once per entry of the loop of depth ``to_depth + 1`` around ``block``."""
        enclosing = sorted(((len(body), h) for h, body in ploops_np if block in body), reverse=True)
        # outermost first: enclosing[k] has depth k + 1
        if 0 <= to_depth < len(enclosing):
            return preheader[enclosing[to_depth][1]]
        return block

    cat_of_line = {int(getattr(ins, "line", 0) or 0): cat[ins.index] for ins in reversed(pins)}
    unroll = _unrolling(insts, sblocks, sblock_of, sloops_np, sreach, retry, pblocks, block_of_line, cat_of_line,
                        ploops_np)

    # 1. every charged SASS instruction -> (PTX block, class)
    per_block: dict[int, Counter] = {}
    direct: list[tuple[int, str]] = []
    index_of_line: dict[int, int] = {}
    for ins in pins:
        index_of_line.setdefault(int(getattr(ins, "line", 0) or 0), ins.index)
    unreachable = n_retry = unattributed = hoisted = sunk = 0
    st_sum: dict = {}                # PTX block, (block, class) -> sum of (stall count - 1) of the SASS charged
    st_n: dict = {}                  # PTX block, (block, class) -> SASS with a control field charged
    pbody = {h: body for h, body in ploops_np}

    def sunk_target(i: int, loop: int) -> int:
        """The PTX block of ``loop`` that SASS position ``i`` (a value ptxas recomputes inside the SASS loop: a
        special-register read, a predicate rebuilt from ``P2R`` under register pressure) runs with: that of the
        nearest SASS of the same SASS loop whose line is in ``loop``, else the loop's header."""
        for j in list(range(i - 1, -1, -1)) + list(range(i + 1, len(insts))):
            if unroll.loop_of.get(sblock_of[j]) != loop:
                continue
            q = block_of_line.get(insts[j].line)
            if q is not None and q in pbody[loop]:
                return q
        return loop
    last_block = None
    for i, s in enumerate(insts):
        b = sblock_of[i]
        if b not in sreach:
            unreachable += 1
            continue
        if b in retry:
            n_retry += 1
            continue
        if i in unroll.drop:
            continue
        pb = block_of_line.get(s.line)
        if pb is None:
            if last_block is None:
                unattributed += 1
                pb = 0
            else:
                pb = last_block
        else:
            last_block = pb
        if sdepth[b] < pdepth[pb]:
            pb = hoist_target(pb, sdepth[b])
            hoisted += 1
        elif sdepth[b] > pdepth[pb] and b in unroll.loop_of and pb not in pbody[unroll.loop_of[b]]:
            pb = sunk_target(i, unroll.loop_of[b])
            sunk += 1
        c = sass_category(s.op)
        c0 = c
        if c == "alu" and _uniform(s.op):
            c = "ualu"
        # the PTX instruction of the SASS's own line takes it when it is of that class, in that block
        ix = index_of_line.get(s.line)
        if ix is not None and pblock_of[ix] == pb and cat[ix] == c0:
            direct.append((ix, c))
            own_key = ("i", ix)
        else:
            per_block.setdefault(pb, Counter())[c] += 1
            own_key = (pb, c0)
        if s.ctrl >= 0:
            for key in (pb, own_key):
                st_sum[key] = st_sum.get(key, 0) + max(s.ctrl & 0xF, 1) - 1
                st_n[key] = st_n.get(key, 0) + 1

    cost = [0] * len(pins)
    pipe = [0] * len(pins)
    for ix, c in direct:
        cost[ix] += 1
        pipe[ix] += 0 if c == "ualu" else 1

    def give(cands: list[int], n: int, own: bool = True) -> None:
        """n SASS onto the candidates, the cheapest first (fills the instructions ptxas gave none first);
        ``own``: they run on the candidates' pipe."""
        if not cands or n <= 0:
            return
        while n > 0:
            lo = min(cost[c] for c in cands)
            for c in cands:
                if cost[c] == lo and n > 0:
                    cost[c] += 1
                    pipe[c] += 1 if own else 0
                    n -= 1

    # 2. own class in the own block
    left: dict[int, Counter] = {}
    for pb, cnt in per_block.items():
        for c, n in sorted(cnt.items(), key=lambda t: t[0] in ("alu", "ualu")):  # integer / float SASS last
            if c == "alu":
                # an SFU-class PTX op that ptxas made without a MUFU (div by a common denominator: one
                # reciprocal, then an FMUL per division) is one of the block's float ops
                bare = [i for i in pblocks[pb] if cat[i] == "sfu" and cost[i] == 0][:n]
                for i in bare:
                    cost[i] = 1
                n -= len(bare)
            cands = [i for i in pblocks[pb] if cat[i] == ("alu" if c == "ualu" else c)]
            if c in ("alu", "ualu"):
                # integer helpers go to instructions that are real SASS already: one ptxas folded (a move, a
                # widening) stays free, with no latency on the dependence chains through it
                cands = [i for i in cands if cost[i] > 0] or cands
            if cands:
                give(cands, n, own=c != "ualu")
            else:
                left.setdefault(pb, Counter())[c] += n
    # 3. a class the block lacks: an instruction of that class in the same loop that ptxas gave nothing yet
    n_region = n_help = 0
    by_region: dict[frozenset, list[int]] = {}
    for b in range(len(pblocks)):
        by_region.setdefault(region[b], []).extend(pblocks[b])
    for pb, cnt in left.items():
        for c, n in cnt.items():
            need = [i for i in by_region[region[pb]] if cat[i] == c and cost[i] == 0]
            k = min(n, len(need))
            give(need[:k], k)
            n_region += k
            rest = n - k
            if rest:
                alu = [i for i in pblocks[pb] if cat[i] == "alu"]
                alu = [i for i in alu if cost[i] > 0] or alu or list(pblocks[pb])
                give(alu, rest, own=False)
                n_help += rest
    # 4. a loop ptxas unrolled U times: its instructions' per-iteration costs divided by U
    if unroll.factor:
        pin = _innermost(ploops_np, len(pblocks))
        for L, u in sorted(unroll.factor.items()):
            _scale([i for b in range(len(pblocks)) if pin[b] == L for i in pblocks[b]], cost, pipe, cat, u)
    # 5. instructions with semantics of their own cost at least one issue slot
    floors = 0
    for i in range(len(pins)):
        if cost[i] == 0 and cat[i] != "alu":
            cost[i] = pipe[i] = 1
            floors += 1
    reach_n = sum(1 for i in range(len(insts)) if sblock_of[i] in sreach)
    extra = control_extra(pblocks, cost, st_sum, st_n, cat) if st_n else None
    return SassAttribution({i: c for i, c in enumerate(cost)}, {i: c for i, c in enumerate(pipe)}, reach_n,
                           unreachable, n_retry, hoisted, unattributed, n_region, n_help, floors, tool,
                           len(unroll.drop), dict(unroll.factor), sunk, extra,
                           sum(v for k, v in st_sum.items() if isinstance(k, int)),
                           sum(v for k, v in st_n.items() if isinstance(k, int)),
                           branch_periods(pins, pblocks, ploops_np, unroll, insts))


def branch_periods(pins, pblocks, ploops_np, unroll: _Unroll, insts) -> dict[int, int]:
    """Per PTX branch that does not take a SASS branch on every taken execution: how many of its taken executions
    one taken SASS branch stands for. 0 for a branch ptxas turned into predication (no SASS branch, ``BRA`` /
    ``EXIT``..., of its line: an ``if`` around a clock read becomes ``@!P1 CS2R``) or laid out as a fall-through
    (and so for the back edge of a loop it unrolled fully); U for the back edge of a loop it unrolled U times
    (one SASS back edge per U PTX iterations). Branches not listed take one.
    The SM core charges the taken-branch hold accordingly (components/sm_core.py; microbench/src/branch_cost.cu).
    Loops that only poll an mbarrier are not unroll-matched (their retry path is out of line in SASS)."""
    kept = {s.line for s in insts if s.line and s.op.split(".", 1)[0] in _BRANCH_SASS}
    out: dict[int, int] = {}
    for ins in pins:
        if getattr(ins.kind, "name", "").upper() == "BRANCH" and int(getattr(ins, "line", 0) or 0) not in kept:
            out[ins.index] = 0
    for h, body in ploops_np:
        period = int(unroll.factor.get(h, 1))
        if period <= 1:
            continue
        for b in body:
            last = pins[pblocks[b][-1]] if pblocks[b] else None
            if last is not None and getattr(last.kind, "name", "").upper() == "BRANCH" and \
                    pblocks[h][0] in _targets(last):
                out[last.index] = min(period, out.get(last.index, period))
    return out


#: SASS that carry a PTX branch (a branch ptxas kept; ``EXIT`` / ``RET`` for a branch to the kernel's end)
_BRANCH_SASS = frozenset(("BRA", "BRX", "JMP", "JMX", "EXIT", "RET", "CALL", "BREAK"))


def control_extra(pblocks, cost, st_sum: dict, st_n: dict, cat=None) -> dict[int, int]:
    """Per PTX instruction the control-code stall cycles beyond issue (``sass.control_stalls``).

    ``st_sum`` / ``st_n``: the sum of ``max(stall, 1) - 1`` and the number of the SASS :func:`attribute` charged
    (hoisted, sunk, unrolled as for the costs) per key: ``("i", i)`` the SASS that went to instruction i directly
    (its own line, its class, its block), ``(b, class)`` the other SASS of a class in PTX block b (the pool),
    ``b`` all of the block's. ptxas's line info is approximate inside a block (see :func:`attribute`), so the
    pool is spread over the block's instructions of its class (``cat[i]``: mem, bar, ctrl, tensor, sfu, mio,
    alu); never over the whole block first, so that a block's arithmetic stalls do not delay its loads
    (gemm_ptr_M512_N3000's loop: 32 masked ``LDG`` with a mean stall of 1.44 against the block's 2.28).

    The class's stall total is conserved: with f = (the class's cost) / (its SASS charged) (below 1 where
    ptxas unrolled the loop), instruction i gets f x its own SASS's stalls plus the pool's mean for the rest of
    its cost (``cost[i] - f x own``); one without own SASS gets its cost at the pool's mean, one without a pool
    its cost at its own mean, and a block without classes its cost at the block's mean. (Valuing the pool SASS
    an instruction takes at its *own* mean lost the 13-cycle ``ISETP`` / ``FSETP`` stalls before softmax_r32_c3000's
    branches: 1.35 cycles per issue against the listing's 1.85, docs/accuracy.md.) Cumulatively rounded in
    program order per block (deterministic)."""
    out = {i: 0 for b in pblocks for i in b}
    for b, idxs in enumerate(pblocks):
        n = st_n.get(b, 0)
        if not n:
            continue
        frac: dict = {}          # class -> cost / SASS charged of the class (own + pool)
        if cat is not None:
            c_cost: dict = {}
            c_n: dict = {}
            for i in idxs:
                if cost[i] > 0:
                    c = cat[i]
                    c_cost[c] = c_cost.get(c, 0) + cost[i]
                    c_n[c] = c_n.get(c, 0) + st_n.get(("i", i), 0)
            for c, cc in c_cost.items():
                tot = c_n[c] + st_n.get((b, c), 0)
                frac[c] = cc / tot if tot else 0.0
        acc = 0.0
        prev = 0
        for i in idxs:
            if cost[i] <= 0:
                continue
            if cat is None:
                acc += cost[i] * st_sum.get(b, 0) / n
            else:
                own_n = st_n.get(("i", i), 0)
                pk = (b, cat[i])
                pool_n = st_n.get(pk, 0)
                if own_n and pool_n:
                    f = frac[cat[i]]
                    rest = cost[i] - f * own_n
                    acc += f * st_sum[("i", i)] + (rest if rest > 0 else 0.0) * st_sum[pk] / pool_n
                elif own_n:
                    acc += cost[i] * st_sum[("i", i)] / own_n
                elif pool_n:
                    acc += cost[i] * st_sum[pk] / pool_n
                else:
                    acc += cost[i] * st_sum.get(b, 0) / n
            cur = int(acc + 0.5 + 1e-9)
            out[i] = cur - prev
            prev = cur
    return out


def tools_available(isa: str = "sm_90a") -> bool:
    """Whether a ptxas for ``isa`` and an nvdisasm beside it (or on PATH) are found (the SASS listing's tools)."""
    from warpgraph.workloads.compiled import find_ptxas

    f = find_ptxas(isa)
    return f is not None and find_nvdisasm(f[0]) is not None


def record_listing(record, isa: str = "sm_90a") -> tuple[tuple[SassInst, ...] | None, str]:
    """:func:`sass_listing` of ``record``'s entry with the tool chain that built it: ``(insts, tool)`` or
    ``(None, why not)``."""
    from warpgraph.core.errors import UserError
    from warpgraph.workloads.compiled import _prefer

    try:
        text = record.ptx_text()
    except UserError as e:
        return None, e.message
    return sass_listing(text, record.entry, isa, prefer=_prefer(record))


def record_sass_costs(record, program, isa: str = "sm_90a") -> tuple[SassAttribution | None, str]:
    """SASS-guided costs of ``record``'s entry: ``(attribution, tool)`` or ``(None, why not)``."""
    insts, tool = record_listing(record, isa)
    if insts is None:
        return None, tool
    return attribute(program, insts, tool), tool


#: the SASS opcode root that stands for a PTX instruction kind in the issue order (``issue_positions``)
_OWN_SASS = {"LD_GLOBAL": ("LDG",), "LD_LOCAL": ("LDL",), "LD_SHARED": ("LDS",), "LDMATRIX": ("LDSM",),
             "ST_GLOBAL": ("STG",), "ST_LOCAL": ("STL",), "ST_SHARED": ("STS",), "STMATRIX": ("STSM",),
             "SHFL": ("SHFL",), "VOTE": ("VOTE",), "MMA_SYNC": ("HMMA", "IMMA", "DMMA"), "BAR_SYNC": ("BAR",)}


def issue_positions(program, insts: tuple[SassInst, ...]) -> list[int | None]:
    """Per PTX instruction index: the place in the SASS listing of the instruction that issues it -- the first SASS
    of its PTX line of its own class (the ``LDG`` of an ``ld.global``), else the line's first SASS -- or None when
    ptxas attributed no SASS to its line (folded). workloads/issue_order.py orders each block by these places."""
    by_line: dict[int, list[int]] = {}
    for k, si in enumerate(insts):
        if si.line:
            by_line.setdefault(si.line, []).append(k)
    out: list[int | None] = []
    for ins in program.instructions:
        ks = by_line.get(int(getattr(ins, "line", 0) or 0))
        if not ks:
            out.append(None)
            continue
        own = _OWN_SASS.get(getattr(ins.kind, "name", ""))
        hit = None
        if own:
            hit = next((k for k in ks if insts[k].op.split(".", 1)[0] in own), None)
        out.append(ks[0] if hit is None else hit)
    return out


def wgmma_serialized(insts: tuple[SassInst, ...]) -> bool:
    """Whether ptxas serialised the entry's wgmma pipeline: within a SASS basic block every ``HGMMA`` after the
    first waits (``WARPGROUP.DEPBAR.LE gsb0, 0x0`` since the previous one) until the one before it has completed.
    ptxas does this when non-wgmma instructions define a wgmma's accumulator registers inside the pipeline stage
    ("C7515: Potential Performance Loss: wgmma.mma_async instructions are serialized ..."; Triton 3.6's TMA GEMMs,
    gemm_tma_*, are built so); it then also turns a ``wgmma.wait_group 1`` into a wait for every op (``DEPBAR.LE
    gsb0, 0x0``). The PTX line attribution of these SASS is not reliable (ptxas gives an HGMMA the line of its
    descriptor arithmetic), so this is one fact for the entry, from the SASS alone."""
    blocks, _, _ = _sass_cfg(insts)
    seen = False
    for b in blocks:
        waited = None            # None: no HGMMA yet in this block; else: a DEPBAR 0 since the last one
        for k in b:
            si = insts[k]
            if si.op.startswith("HGMMA"):
                if waited is not None:
                    if not waited:
                        return False
                    seen = True
                waited = False
            elif si.op.startswith("WARPGROUP.DEPBAR") and si.arg == 0 and waited is not None:
                waited = True
    return seen


#: a fix-up this many SASS instructions or fewer after its MUFU.EX2 holds the warp for the MUFU's result: the
#: warp issues in order, and a MUFU.EX2 result takes 17 cycles (microbench/src/alu_latency.cu, h200.yaml
#: latencies.sfu) while a few instructions issue in as many cycles
EX2_FIXUP_NEAR = 4


def ex2_fixups_follow(insts: tuple[SassInst, ...]) -> bool | None:
    """Whether ptxas put the fix-ups of the entry's non-ftz ``ex2.approx.f32`` right behind their MUFU: it expands
    each as ``FSETP.GEU P, x, -126; @!P FMUL x, x, 0.5; MUFU.EX2 r, x; @!P FMUL r, r, r``, and when few predicates
    are free (row kernels whose column masks hold the others: the gallery's softmaxes use P5 for all 32) the next
    expansion's ``FSETP`` cannot be hoisted over this one's squaring, which must wait for the MUFU result; the
    ex2s then run one MUFU latency apart per warp. With predicates to spare (swiglu, silu epilogues: six) the fix-up
    sits 12-14 instructions later and the latency is hidden. True when the median distance is at most
    :data:`EX2_FIXUP_NEAR`; None without a non-ftz ex2 (no ``@!P FMUL r, r, r`` after a ``MUFU.EX2 r``)."""
    gaps = []
    for k, si in enumerate(insts):
        if si.op != "MUFU.EX2":
            continue
        r = si.operands.split(",", 1)[0].strip()
        for j in range(k + 1, min(k + 33, len(insts))):
            sj = insts[j]
            if sj.target is not None:
                break
            if sj.op == "FMUL" and sj.guard.startswith("@!P") and \
                    [x.strip() for x in sj.operands.split(",")] == [r, r, r]:
                gaps.append(j - k)
                break
    if not gaps:
        return None
    gaps.sort()
    return gaps[len(gaps) // 2] <= EX2_FIXUP_NEAR


def listing_places(ptx_text: str, entry: str, program, isa: str, prefer: str) -> dict | None:
    """The SASS facts a record stores (``compiled.<isa>``), from a fresh listing of ``ptx_text``'s entry:
    ``sass_places`` (:func:`issue_positions`), ``sass_tool``, ``sass_branches`` (:func:`branch_periods`) and
    ``sass_wgmma_serial`` (:func:`wgmma_serialized`); None without ptxas / nvdisasm."""
    insts, tool = sass_listing(ptx_text, entry, isa, prefer=prefer)
    if insts is None:
        return None
    return {"sass_places": encode_places(issue_positions(program, insts)), "sass_tool": tool,
            "sass_branches": encode_branches(attribute(program, insts, tool).branches or {}),
            "sass_wgmma_serial": wgmma_serialized(insts), "sass_ex2_serial": bool(ex2_fixups_follow(insts))}


def encode_branches(periods: dict) -> str:
    """:func:`branch_periods` as the record stores them (``compiled.<isa>.sass_branches``): ``index:period`` pairs,
    space-separated, by index."""
    return " ".join(f"{int(i)}:{int(p)}" for i, p in sorted(periods.items()))


def decode_branches(text: str, n: int) -> dict | None:
    """The periods :func:`encode_branches` wrote, or None if an entry is malformed or names no instruction."""
    out = {}
    for part in text.split():
        i, sep, p = part.partition(":")
        if not sep or not i.isdigit() or not p.isdigit() or int(i) >= n:
            return None
        out[int(i)] = int(p)
    return out


def record_branch_periods(record, program, isa: str = "sm_90a") -> tuple[dict | None, str]:
    """:func:`branch_periods` of ``record``'s entry: ``(periods, tool)`` or ``(None, why not)``; the periods the
    record carries (``compiled.<isa>.sass_branches``, written by ``warpgraph compile --write`` beside the places)
    when it has them."""
    def relist():
        att, tool = record_sass_costs(record, program, isa)
        return (None if att is None else dict(att.branches or {})), tool

    n = len(program.instructions)
    return _stored_or_listed(record, isa, "sass_branches", lambda text: decode_branches(text, n),
                             lambda text: "does not fit this PTX", relist, empty_is_absent=False)


def _record_bool_fact(record, isa: str, field: str, fact) -> tuple[bool | None, str]:
    """A boolean SASS fact of ``record``'s entry: ``compiled.<isa>.<field>`` when the record carries it (``warpgraph
    compile --write``), else ``bool(fact(listing))`` of a fresh listing; ``(value, tool)`` or ``(None, why not)``."""
    def relist():
        insts, tool = record_listing(record, isa)
        return (None if insts is None else bool(fact(insts))), tool

    return _stored_or_listed(record, isa, field, bool, lambda v: "is not a boolean", relist, empty_is_absent=False)


def record_wgmma_serialized(record, isa: str = "sm_90a") -> tuple[bool | None, str]:
    """:func:`wgmma_serialized` of ``record``'s entry: ``(serialized, tool)`` or ``(None, why not)``; the fact the
    record carries (``compiled.<isa>.sass_wgmma_serial``, written by ``warpgraph compile --write``) when it has it."""
    return _record_bool_fact(record, isa, "sass_wgmma_serial", wgmma_serialized)


def record_ex2_serial(record, isa: str = "sm_90a") -> tuple[bool | None, str]:
    """:func:`ex2_fixups_follow` of ``record``'s entry (False without a non-ftz ex2): ``(serial, tool)`` or ``(None,
    why not)``; the fact the record carries (``compiled.<isa>.sass_ex2_serial``, written by ``warpgraph compile
    --write``) when it has it."""
    return _record_bool_fact(record, isa, "sass_ex2_serial", ex2_fixups_follow)


def encode_places(places: list) -> str:
    """:func:`issue_positions` as the record stores them (``compiled.<isa>.sass_places``)."""
    return " ".join("-" if x is None else str(int(x)) for x in places)


def decode_places(text: str, n: int) -> list | None:
    """The places :func:`encode_places` wrote, or None if they are not ``n`` well-formed entries."""
    parts = text.split()
    if len(parts) != n:
        return None
    try:
        return [None if x == "-" else int(x) for x in parts]
    except ValueError:
        return None


def record_issue_positions(record, program, isa: str = "sm_90a") -> tuple[list | None, str]:
    """:func:`issue_positions` of ``record``'s entry: ``(positions, tool)`` or ``(None, why not)``; the places the
    record carries (``compiled.<isa>.sass_places``, written by ``warpgraph compile --write``) when it has them."""
    def relist():
        insts, tool = record_listing(record, isa)
        return (None if insts is None else issue_positions(program, insts)), tool

    n = len(program.instructions)
    return _stored_or_listed(record, isa, "sass_places", lambda text: decode_places(text, n),
                             lambda text: f"has {len(text.split())} entries for {n} PTX instructions", relist,
                             empty_is_absent=True)


def _stored_or_listed(record, isa: str, field: str, decode, misfit, relist, *, empty_is_absent: bool) -> tuple:
    """A SASS fact of ``record``: ``(value, tool)`` from ``compiled.<isa>.<field>`` when the record carries it
    (``warpgraph compile --write``) and ``decode`` accepts it, else ``relist()`` (a fresh listing) after a warning
    that says how it did not fit (``misfit(text)``); ``(None, "no record")`` without a record. ``empty_is_absent``:
    an empty text means not written (places), not an empty fact (branches: no periods)."""
    if record is None:
        return None, "no record"
    block = (getattr(record, "compiled", None) or {}).get(isa)
    text = getattr(block, field, None) if block is not None else None
    if text or (text is not None and not empty_is_absent):
        got = decode(text)
        if got is not None:
            return got, f"record ({getattr(block, 'sass_tool', '') or 'ptxas'}, {isa})"
        import warnings

        warnings.warn(f"{getattr(record, 'name', '?')}: compiled.{isa}.{field} {misfit(text)} (written for other "
                      f"PTX); listing the SASS again (`warpgraph compile RECORD --write` refreshes it)", stacklevel=5)
    return relist()


_WARNED: set = set()


#: SASS-guided costs are an option (``--set sass.guided=1``), off by default: they bring the warp-instruction
#: counts to the hardware's (TMA GEMMs 0.78 -> 1.00; 1.00-1.04 on the gallery but the spin-lock layer-norm
#: backward) and lower the calibration / held-out cycle error (5.40 -> 5.10 %, 6.02 -> 5.53 %), but the gallery's
#: goes 15.17 -> 15.48 % (timing, not counting: docs/accuracy.md, "SASS-guided instruction counts").
GUIDED_DEFAULT = False


def guided_costs(program, record, isa: str = "sm_90a", overrides: dict | None = None
                 ) -> tuple[SassAttribution | None, str]:
    """Per-instruction SASS costs for the timing pass: ``(attribution, tool)``, or ``(None, why)`` when the
    rules of components/sass_cost.py apply: no record, not asked for (``overrides["guided"]``, default
    :data:`GUIDED_DEFAULT`), or no ptxas / nvdisasm (then a one-line warning, once per record and reason)."""
    if record is None:
        return None, "no record"
    if not int((overrides or {}).get("guided", int(GUIDED_DEFAULT))):
        return None, "sass.guided=0"
    att, tool = record_sass_costs(record, program, isa)
    if att is None:
        key = (getattr(record, "name", "?"), tool)
        if key not in _WARNED:
            import warnings

            _WARNED.add(key)
            warnings.warn(f"{key[0]}: no SASS-guided instruction costs ({tool}); using the per-opcode rules "
                          f"(install the 'triton' extra or a CUDA toolkit's ptxas and nvdisasm)", stacklevel=3)
        return None, tool
    return att, tool

"""The order in which a warp issues a basic block: ptxas's, taken from the SASS it makes of the record's PTX.

The SM issues a warp's SASS in order, and ptxas, not the PTX, decides that order. NVVM (nvcc's front end) emits
PTX in source order, each load's consumers right after it; ptxas's list scheduler moves independent loads (and
the address arithmetic they need) ahead of the consumers of earlier loads, so that their latencies overlap -- but
not always: on the gallery's RMSNorm backward it leaves a row's second pair of loads after the first pair's
conversions and half of their reduction (register pressure). A simulator that issues the PTX in its own order
serialises such loads: on the H200 microbenchmark ``sm_store_rate`` one SM's 8 warps load 16-B pieces at 55
B/cycle; replayed in PTX order (8 loads per warp, each followed by its xors) the model gave 10.

The rule (``sass.issue_order``, on by default): within each *segment* of a basic block, instructions issue in
the order of their SASS (each PTX instruction's place is its first SASS instruction of its own class on its PTX
line: the ``LDG`` of an ``ld.global``, workloads/sass.py ``issue_positions``; one that ptxas folded keeps its
place after the instruction before it), as far as the dependences allow: registers (read after write, write
after read, write after write; guard predicates count as reads) and memory order (loads and stores of the
segment, atomics included, never pass each other). Segments end at labels and branches and at every instruction whose place
matters beyond its registers, which is never moved: barriers, fences, fencing (.acquire / .release /
.acq_rel) atomics, mbarrier / TMA / cp.async / wgmma / mma.sync / tcgen05 operations, clock reads, ordered
(volatile / acquire / relaxed) loads and cluster (shared::cluster) accesses. Relaxed global atomics move as
memory operations (ptxas issues a warp's independent ATOMGs back to back). The moved order is a permutation of each executed instance of a segment in the
warp's stream (:func:`permutation`): the same instructions, payloads and counts, in ptxas's order. Without a
SASS listing (no ptxas / nvdisasm, or PTX they cannot assemble) the PTX order stays, with a warning.

``sass.issue_order=2`` (``full``; not the default, docs/accuracy.md "ptxas's order of mma.sync") goes further, as
gemm80's SASS does: mma.sync moves by its registers (its first HMMA after 10 of the K iteration's 24 LDSMs, not
after all of them), a CTA barrier (``bar.sync`` / ``barrier.sync``) stays in its segment as a point that no memory
access crosses while register-only work does (the loop's second BAR.SYNC before its last 8 HMMAs), and loads pass
loads (the ldmatrix.trans B fragments ahead of later A fragments); stores, atomics and barriers still order every
memory access of the segment.
"""
from __future__ import annotations

import heapq

import numpy as np

__all__ = ["IssueOrder", "issue_order", "permutation"]

#: kinds that may move (by their registers): ALU work, loads / stores of global, local, shared memory, shuffles
_MOVABLE = frozenset(("ALU", "LD_GLOBAL", "ST_GLOBAL", "LD_SHARED", "ST_SHARED", "LDMATRIX", "STMATRIX", "LD_PARAM",
                      "LD_LOCAL", "ST_LOCAL", "SHFL", "VOTE", "NOP"))
#: memory kinds: keep their relative order (a CTA barrier among them: it orders the block's memory accesses,
#: never its registers)
_MEMORY = frozenset(("LD_GLOBAL", "ST_GLOBAL", "LD_SHARED", "ST_SHARED", "LDMATRIX", "STMATRIX", "LD_LOCAL",
                     "ST_LOCAL", "ATOM_GLOBAL", "BAR_SYNC"))
#: memory kinds that only read: they may pass each other (``full`` order)
_LOADS = frozenset(("LD_GLOBAL", "LD_SHARED", "LDMATRIX", "LD_LOCAL"))
#: CTA barriers that stay in a segment as a memory-order point (``full`` order): register-only work (address
#: arithmetic, mma.sync) moves across them as ptxas moves it (gemm80's SASS issues the loop's second BAR.SYNC before
#: the last 8 of its 64 HMMAs); arrive-only, reducing and cluster barriers end the segment
_CTA_BARRIERS = frozenset(("bar.sync", "barrier.sync"))
_ORDERED_MODS = frozenset(("volatile", "acquire", "relaxed", "release", "acq_rel", "sc", "mmio"))
#: global atomics move (as memory operations) unless they order other accesses: an .acquire / .release /
#: .acq_rel / .sc one is a fence in SASS (MEMBAR.ALL.GPU ... CCTL.IVALL, microbench atomics.cu)
_FENCING_MODS = frozenset(("acquire", "release", "acq_rel", "sc", "volatile", "mmio"))


class IssueOrder:
    """Per static instruction: ``seg`` (segment id, -1: never moved) and ``rank`` (its place in the segment's
    issue order). ``moves``: whether any segment's order differs from the PTX's."""

    __slots__ = ("seg", "rank", "moves")

    def __init__(self, seg: np.ndarray, rank: np.ndarray, moves: bool):
        self.seg, self.rank, self.moves = seg, rank, moves


def _movable(ins, full: bool = False) -> bool:
    """Whether ``ins`` may move within its segment; ``full`` (``sass.issue_order=2``): mma.sync and CTA barriers
    too."""
    kind = getattr(ins.kind, "name", str(ins.kind))
    mods = set(ins.mods)
    if any("cluster" in m for m in mods):
        return False
    if kind == "BAR_SYNC":
        return full and ins.opcode in _CTA_BARRIERS
    if kind == "MMA_SYNC":
        # register-only: ptxas interleaves a block's HMMAs with the LDSMs that feed them (gemm80: the first HMMA
        # after 10 of the iteration's 24 LDSMs, not after all of them as in the PTX)
        return full
    if kind == "ATOM_GLOBAL":
        # relaxed atom / red: ptxas issues a warp's independent ATOMGs back to back and their uses later (H200
        # atomics.cu TPUT: one warp's relaxed atom.add 152-200 cycles apart, not a 525-cycle round trip each)
        return not (mods & _FENCING_MODS)
    if kind not in _MOVABLE:
        return False
    return not (mods & _ORDERED_MODS)


def _segments(program, full: bool = False) -> list[list[int]]:
    """Runs of consecutive movable instructions that no label splits (a label starts a basic block)."""
    starts = set(program.labels.values())
    segs: list[list[int]] = []
    cur: list[int] = []
    for ins in program.instructions:
        i = ins.index
        if i in starts and cur:
            segs.append(cur)
            cur = []
        if _movable(ins, full):
            cur.append(i)
        else:
            if cur:
                segs.append(cur)
            cur = []
    if cur:
        segs.append(cur)
    return [s for s in segs if len(s) > 1]


def _schedule(insts, seg: list[int], pos, full: bool = False) -> list[int]:
    """The issue order of one segment (instruction indices): a topological order of its dependences that
    follows ``pos`` (SASS place per instruction index, None: folded, keeps its place after its predecessor).
    Memory accesses keep their order, except that with ``full`` loads may pass loads."""
    preds: list[set[int]] = [set() for _ in seg]
    last_w: dict[int, int] = {}
    readers: dict[int, list[int]] = {}
    last_mem = -1
    loads: list[int] = []
    for k, i in enumerate(seg):
        ins = insts[i]
        p = preds[k]
        for r in ins.srcs:
            w = last_w.get(r)
            if w is not None:
                p.add(w)                                  # read after write
        for r in ins.dsts:
            w = last_w.get(r)
            if w is not None:
                p.add(w)                                  # write after write
            p.update(x for x in readers.get(r, ()) if x != k)   # write after read
        kn = getattr(ins.kind, "name", "")
        if kn in _MEMORY:
            # with ``full`` loads pass loads (no hazard: ptxas hoists gemm80's ldmatrix.trans over the plain
            # ones); a store, atomic or barrier keeps its place against every memory access before and after it
            if last_mem >= 0:
                p.add(last_mem)
            if full and kn in _LOADS:
                loads.append(k)
            else:
                p.update(loads)
                loads = []
                last_mem = k
        for r in ins.srcs:
            readers.setdefault(r, []).append(k)
        for r in ins.dsts:
            last_w[r] = k
            readers[r] = []
    n = len(seg)
    succ: list[list[int]] = [[] for _ in range(n)]
    indeg = [len(p) for p in preds]
    for k, p in enumerate(preds):
        for y in p:
            succ[y].append(k)
    # a folded instruction (no SASS of its own: ptxas merged it into a consumer, e.g. two xors into one LOP3, an
    # address add into the load's offset) goes where its earliest dependent goes; one nothing depends on keeps its
    # place after the instruction before it
    place: list = [pos[i] for i in seg]
    for k in range(n - 1, -1, -1):
        if place[k] is None:
            later = [place[c] for c in succ[k] if place[c] is not None]
            if later:
                place[k] = min(later)
    key = []
    cur = -1
    for k in range(n):
        if place[k] is not None:
            cur = place[k]
        key.append((cur, k))
    ready = [key[k] for k in range(n) if indeg[k] == 0]
    heapq.heapify(ready)
    out: list[int] = []
    while ready:
        _, k = heapq.heappop(ready)
        out.append(seg[k])
        for s in succ[k]:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(ready, key[s])
    assert len(out) == n, "issue_order: dependence cycle"
    return out


def issue_order(program, pos, full: bool = False) -> IssueOrder:
    """The SASS issue order of every segment of ``program``; ``pos``: per instruction index its SASS place or
    None (workloads/sass.py ``issue_positions``); ``full``: mma.sync, CTA barriers and loads past loads too."""
    insts = program.instructions
    n = len(insts)
    seg = np.full(max(n, 1), -1, dtype=np.int64)
    rank = np.arange(max(n, 1), dtype=np.int64)
    moves = False
    for sid, s in enumerate(_segments(program, full)):
        order = _schedule(insts, s, pos, full)
        if order != s:
            moves = True
        for r, i in enumerate(order):
            seg[i] = sid
            rank[i] = s[0] + r
    return IssueOrder(seg, rank, moves)


def permutation(order: IssueOrder | None, pcs: np.ndarray) -> np.ndarray | None:
    """The positions of a warp's stream ``pcs`` (static indices in execution order) in issue order, or None if
    nothing moves. An executed instance of a segment is a run of positions in that segment with increasing pcs;
    each instance is reordered by ``rank``; never-moved instructions stay in place."""
    if order is None or not order.moves or len(pcs) < 2:
        return None
    pcs = np.asarray(pcs, dtype=np.int64)
    s = order.seg[pcs]
    mov = s >= 0
    if not mov.any():
        return None
    start = np.ones(len(pcs), dtype=bool)
    start[1:] = ~mov[1:] | ~mov[:-1] | (s[1:] != s[:-1]) | (pcs[1:] <= pcs[:-1])
    inst = np.cumsum(start)
    perm = np.lexsort((order.rank[pcs], inst))
    if (perm == np.arange(len(pcs))).all():
        return None
    return perm

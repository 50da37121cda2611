"""The timing pass: lower a Program to the SM core's static tables, build the units, replay the trace.

``run_timing(trace, spec, ...) -> TimingOutcome`` (metrics + Stats + clock issue cycles).
The units come from the component graph (runner/machine.py): every role's class is the registered model of
the kind the spec selects; tests may pass their own test doubles explicitly (``units=``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from warpgraph.components import stalls as S
from warpgraph.components.cta_scheduler import occupancy
from warpgraph.components.sass_cost import sass_per_ptx
from warpgraph.components.tensor_core import mma_key
from warpgraph.components.sm_core import (INF, OPS, P_ALU, P_CBU, P_FMA, P_FP16, P_FP64, P_LSU, P_MIO, P_SFU,
                                          P_TENSOR, P_UNIFORM, CoreConfig, Group, SMCore, StaticTables)
from warpgraph.components import sm_core as C
from warpgraph.core.engine import ClockDomain, Engine, CycleLimitExceeded
from warpgraph.core.errors import SimulationError, UserError
from warpgraph.core.stats import Stats
from warpgraph.topologies.schema import Tcgen05TensorCore
from warpgraph.workloads.functional.alu import is_float
from warpgraph.workloads.issue_order import permutation

__all__ = ["lower", "core_config", "build_units", "run_timing", "TimingOutcome", "registers_per_thread",
           "BundleBuilder"]


# Unit name -> (pipe, latencies-section key, stall reason of its results)
_UNIT = {
    "INT": (P_ALU, "int", S.WAIT), "FP32": (P_FMA, "fp32", S.WAIT), "FP16": (P_FP16, "fp16", S.WAIT),
    "FP64": (P_FP64, "fp64", S.WAIT), "SFU": (P_SFU, "sfu", S.SHORT_SCOREBOARD),
    "CVT": (P_ALU, "cvt", S.SHORT_SCOREBOARD), "CVT_PACKED": (P_FMA, "cvt_packed", S.WAIT),
    "BRANCH": (P_CBU, "branch", S.WAIT),
    "MIO": (P_MIO, "mio", S.SHORT_SCOREBOARD), "LSU": (P_LSU, "lsu", S.LONG_SCOREBOARD),
    "TENSOR": (P_TENSOR, "tensor", S.WAIT), "TMA": (P_UNIFORM, "misc", S.WAIT),
    "SYNC": (P_MIO, "sync", S.SHORT_SCOREBOARD), "MISC": (P_ALU, "misc", S.WAIT), "NONE": (P_ALU, "misc", S.WAIT),
}
_KIND_OP = {
    "ALU": C.OP_ALU, "BRANCH": C.OP_BRANCH, "EXIT": C.OP_EXIT, "LD_GLOBAL": C.OP_LDG, "ST_GLOBAL": C.OP_STG,
    "ATOM_GLOBAL": C.OP_LDG, "LD_SHARED": C.OP_LDS, "ST_SHARED": C.OP_STS, "ATOM_SHARED": C.OP_LDS,
    "LDMATRIX": C.OP_LDS, "STMATRIX": C.OP_STS, "LD_PARAM": C.OP_ALU, "LD_LOCAL": C.OP_LDG, "ST_LOCAL": C.OP_STG,
    "CP_ASYNC": C.OP_CP_ASYNC, "CP_ASYNC_COMMIT": C.OP_CPA_COMMIT, "CP_ASYNC_WAIT": C.OP_CPA_WAIT,
    "TMA_LOAD": C.OP_TMA_LD, "TMA_STORE": C.OP_TMA_ST, "BULK_COMMIT": C.OP_BULK_COMMIT,
    "BULK_WAIT": C.OP_BULK_WAIT, "MBAR_INIT": C.OP_MBAR_INIT, "MBAR_ARRIVE": C.OP_MBAR_ARRIVE,
    "MBAR_WAIT": C.OP_MBAR_WAIT, "MBAR_OTHER": C.OP_ALU, "BAR_SYNC": C.OP_BAR, "MMA_SYNC": C.OP_MMA,
    "WGMMA": C.OP_WGMMA, "WGMMA_FENCE": C.OP_ALU, "WGMMA_COMMIT": C.OP_WGMMA_COMMIT,
    "WGMMA_WAIT": C.OP_WGMMA_WAIT, "SHFL": C.OP_ALU, "VOTE": C.OP_ALU, "CLOCK": C.OP_CLOCK, "FENCE": C.OP_FENCE,
    "NOP": C.OP_ALU,
}
_KIND_OP.update({   # tcgen05 block (Blackwell): components/sm_core.py SMCore._tcgen05
    "TC05_MMA": C.OP_TC05_MMA, "TC05_COMMIT": C.OP_TC05_COMMIT, "TC05_LD": C.OP_TC05_LD, "TC05_ST": C.OP_TC05_ST,
    "TC05_WAIT_LD": C.OP_TC05_WAIT_LD, "TC05_WAIT_ST": C.OP_TC05_WAIT_ST, "TC05_ALLOC": C.OP_TC05_ALLOC,
    "TC05_DEALLOC": C.OP_TC05_DEALLOC, "TC05_CP": C.OP_TC05_CP, "TC05_SHIFT": C.OP_TC05_CP, "TC05_OTHER": C.OP_ALU,
})
_GLOBAL_OPN = {"LD_GLOBAL": "ld", "ATOM_GLOBAL": "atom", "LD_LOCAL": "ld", "ST_GLOBAL": "st", "ST_LOCAL": "st",
               "CP_ASYNC": "cp_async"}


_DEFAULT_SPEC = None


def _typed(spec):
    """``spec`` (an ArchSpec), or for None the schema's defaults (topologies/schema.py: one default per parameter,
    read from the typed sections, never re-stated here)."""
    global _DEFAULT_SPEC
    if spec is not None:
        return spec
    if _DEFAULT_SPEC is None:
        from warpgraph.topologies.schema import ArchSpec

        _DEFAULT_SPEC = ArchSpec(name="schema defaults")
    return _DEFAULT_SPEC


def _unit_timing(spec, key):
    u = getattr(spec.latencies, key)
    return int(u.latency_cycles), int(u.interval_cycles)


def _tcgen05(spec, kind: str):
    """The tensor-core section of a tcgen05 architecture (the only one with tcgen05's parameters and TMEM): a
    clear error naming the variant if the program needs it and the spec's variant is another."""
    tc = spec.tensor_core
    if not isinstance(tc, Tcgen05TensorCore):
        raise SimulationError(f"the program has {kind} instructions but tensor_core.kind={tc.kind!r} is not a "
                              f"tcgen05 tensor core", hint="an architecture whose tensor_core.kind is tcgen05 "
                              "(e.g. b200)")
    return tc


def _name(e) -> str:
    return getattr(e, "name", str(e)).upper()


def lower(program, spec=None, *, sass_overrides: dict | None = None, record=None) -> StaticTables:
    """Static per-instruction tables of ``program`` for the SM core.

    SASS costs: the per-opcode rules (components/sass_cost.py), or with ``sass_overrides`` ``{"guided": 1}``
    the SASS ptxas makes of ``record``'s PTX (workloads/sass.py; the rules and a warning without ptxas);
    ``{opcode: n}`` sets an opcode's cost."""
    from warpgraph.workloads.sass import guided_costs

    insts = program.instructions
    spec = _typed(spec)
    guided, guided_tool = guided_costs(program, record, str(spec.sm.isa), sass_overrides)
    xs = control_stalls(program, record, str(spec.sm.isa), sass_overrides, guided)
    nregs = len(program.reg_names)
    T = StaticTables(len(insts), nregs)
    mem_lat = int(spec.l2.near_latency_cycles) + spec.hbm.latency_at(spec.clocks.sm_mhz)
    ca_extra = int(spec.l1.cp_async_ca_extra_cycles)
    smem_lat = int(spec.shared_memory.latency_cycles)
    lat_s = spec.latencies
    ld_param = int(lat_s.ld_param_cycles)
    clock_lat = int(lat_s.clock_read_cycles)
    mb = spec.mbarrier
    try_wait = int(mb.try_wait_cycles)
    test_wait = int(mb.test_wait_cycles)
    arrive = int(mb.arrive_cycles)
    # registers some instruction reads: an atomic whose destinations none reads returns nothing (ptxas: RZ), and the
    # L2's atomic ALUs send no old values back (components/memory.py atomic_perform)
    read_regs = {r for ins in insts for r in ins.srcs}
    for ins in insts:
        i = ins.index
        kind = _name(ins.kind)
        unit = _name(ins.unit)
        pipe, ukey, rsn = _UNIT.get(unit, (P_ALU, "misc", S.WAIT))
        lat, ii = _unit_timing(spec, ukey)
        op = _KIND_OP.get(kind, C.OP_ALU)
        text = getattr(ins, "text", "") or ""
        cost, rule = sass_per_ptx(ins.opcode, tuple(ins.mods), text)
        if guided is not None:
            cost, rule = guided.cost[i], f"SASS ({guided_tool})"
        if sass_overrides and ins.opcode in sass_overrides:
            cost, rule = int(sass_overrides[ins.opcode]), "override"
        dsts = tuple(ins.dsts)
        srcs = tuple(ins.srcs)
        aux = None
        if kind in _GLOBAL_OPN:
            aux = _GLOBAL_OPN[kind]
            pipe, lat, rsn = P_LSU, mem_lat, S.LONG_SCOREBOARD
        elif kind in ("LD_SHARED", "ST_SHARED", "ATOM_SHARED", "LDMATRIX", "STMATRIX"):
            pipe, lat, rsn = P_MIO, smem_lat, S.SHORT_SCOREBOARD
            ii = 1
            if kind in ("LDMATRIX", "STMATRIX"):
                aux = "matrix"        # SMCore: shared_memory.access(..., matrix=True)
        elif kind == "LD_PARAM":
            lat, rsn = ld_param, S.WAIT
        elif kind == "SHFL":
            pipe, rsn = P_MIO, S.SHORT_SCOREBOARD
        elif kind == "MBAR_WAIT":
            pipe = P_MIO
            ms = set(ins.mods)
            aux = "test_wait" if ("test_wait" in ins.opcode or "test_wait" in ms) else "try_wait"
            lat = test_wait if aux == "test_wait" else try_wait
        elif kind in ("MBAR_ARRIVE", "MBAR_INIT", "MBAR_OTHER"):
            pipe, lat, rsn = P_MIO, arrive, S.SHORT_SCOREBOARD
            if ins.opcode == "mbarrier.arrive_drop":     # the arrivals also lower the expected count
                if "shared::cluster" in ins.mods:
                    raise SimulationError(f"mbarrier.arrive_drop on a shared::cluster barrier is not modelled in "
                                          f"timing mode: {ins.text}", location=program.location(i),
                                          hint="--mode functional, or a shared::cta barrier")
                aux = "drop"
        elif kind in ("TMA_LOAD", "TMA_STORE", "BULK_COMMIT", "BULK_WAIT"):
            pipe = P_UNIFORM
        elif kind == "MMA_SYNC":
            pipe = P_TENSOR
            ii = 1  # the per-shape issue gap comes from tc.mma_sync (Table III), not latencies.tensor's interval
            ms = [m for m in ins.mods if m.startswith("m") and "n" in m and "k" in m]
            types = [m for m in ins.mods if m in ("f16", "bf16", "tf32", "s8", "u8", "e4m3", "e5m2", "f64")]
            aux = f"{types[-1] if types else 'f16'}.{ms[0] if ms else 'm16n8k16'}"
        elif kind == "WGMMA":
            pipe, lat = P_TENSOR, 128
            ii = 1
            # A's type picks the tensor core's service rate (tensor_core.dense_<class>_flop_per_cycle_per_sm)
            aux = mma_key(ins.mods).split(".", 1)[0]
            # accumulators are ordered by wgmma.wait_group, not by the scoreboard
            srcs = tuple(r for r in srcs if r not in set(dsts))
            dsts = ()
        elif kind.startswith("TC05_"):   # tcgen05 block
            pipe, ii, rsn = (P_MIO if kind in ("TC05_LD", "TC05_ST") else P_UNIFORM), 1, S.SHORT_SCOREBOARD
            if kind == "TC05_MMA":
                tc05 = _tcgen05(spec, "tcgen05.mma")
                ii = int(tc05.mma_issue_interval_cycles)
                lat = int(tc05.min_latency_cycles)
            elif kind == "TC05_COMMIT":
                lat = arrive
            elif kind in ("TC05_LD", "TC05_ST", "TC05_CP", "TC05_SHIFT"):
                lat = int(_tcgen05(spec, "tcgen05.ld / st / cp").tmem.ld_latency_cycles)
            elif kind in ("TC05_ALLOC", "TC05_DEALLOC"):
                lat = int(_tcgen05(spec, "tcgen05.alloc").tmem.alloc_cycles)
            else:
                lat = 1
        elif kind == "CLOCK":
            lat = clock_lat
        elif kind == "BAR_SYNC":
            pipe = P_CBU
            if ins.opcode in ("bar.arrive", "barrier.arrive"):   # counts toward the barrier without waiting
                aux = "arrive"
        elif kind == "FENCE":
            lat = 8
            if _is_membar_gpu(ins) or _gpu_fence(ins):
                # MEMBAR.ALL.GPU: SMCore._membar (microbench/results/h200_cluster_sync_2026-12-03 and
                # h200_atomics_2026-12-03: 270-272 cycles idle, waits for the warp's acknowledgements)
                op = C.OP_MEMBAR
        if kind == "ATOM_GLOBAL":   # global atomics: SMCore._atomg (release fence, spin-lock exclusion)
            op = C.OP_ATOMG
            ms = set(ins.mods)
            aux = ("red" if ins.opcode == "red" else "atom", bool({"release", "acq_rel"} & ms),
                   bool({"acquire", "acq_rel"} & ms),
                   any(is_float(m) for m in ms),   # the L2's float read-modify-write
                   ins.opcode != "red" and any(d in read_regs for d in dsts))   # old values read: returned
        cl = _cluster_lowering(ins, kind)     # clusters: DSM / barrier.cluster op classes
        if cl is not None:
            op, aux = cl
        if cost == 0 and op == C.OP_ALU:
            op = C.OP_FREE
        if guided is not None and rule.startswith("SASS"):
            # of the instruction's SASS only guided.pipe[i] run on its pipe (the rest: uniform datapath, other
            # units), so the pipe is busy that many intervals, not cost x interval
            gp = guided.pipe[i]
            if cost > 0 and gp < cost:
                ii = -(-ii * gp // cost)
        elif pipe == P_SFU and cost > 1:
            # a multi-SASS expansion of an SFU op (non-ftz ex2, div.full, ...) holds ONE MUFU; its other SASS are
            # FP32 ops: the SFU pipe is busy one interval per PTX instruction, not cost x interval
            ii = -(-ii // cost)
        deps = tuple(dict.fromkeys(srcs + dsts))  # RAW + WAW, order kept, deduplicated
        if xs is not None and op == C.OP_ALU and unit in _FIXED_LATENCY and rsn == S.WAIT:
            # control-code stalls: ptxas's stall counts (T.xs) space the warp's issues for this result; the unit
            # latency would charge the same cycles again in PTX order (runner/timing.py, control_stalls)
            lat = 0
        T.op[i], T.cost[i], T.pipe[i], T.ii[i], T.lat[i] = op, cost, pipe, max(1, ii), max(0, lat)
        if kind == "CP_ASYNC" and "ca" in ins.mods:
            T.cax[i] = ca_extra               # LDGSTS through the L1 fill path (l1.cp_async_ca_extra_cycles)
        T.deps[i], T.dsts[i], T.rsn[i], T.aux[i] = deps, dsts, rsn, aux
        T.line[i], T.text[i], T.ptx_cost_rule[i] = getattr(ins, "line", 0), text, rule
    T.xs = xs
    T.order = sass_issue_order(program, record, str(spec.sm.isa), sass_overrides)
    T.bper = branch_periods(program, record, str(spec.sm.isa), sass_overrides, guided)
    if ex2_serial(program, record, str(spec.sm.isa), sass_overrides, T.ptx_cost_rule):
        tok = T.nregs            # one more register: every non-ftz ex2 reads and writes it (ptxas's fix-up order)
        T.nregs += 1
        for i, rule in enumerate(T.ptx_cost_rule):
            if rule == "ex2":
                T.deps[i] = T.deps[i] + (tok,)
                T.dsts[i] = tuple(T.dsts[i]) + (tok,)
    if wgmma_serial(program, record, str(spec.sm.isa), sass_overrides):
        T.wgtok = T.nregs        # one more register: every wgmma reads and writes it (SMCore: ptxas's DEPBAR)
        T.nregs += 1
        for i, o in enumerate(T.op):
            if o == C.OP_WGMMA:
                T.deps[i] = T.deps[i] + (T.wgtok,)
    return T


def branch_periods(program, record, isa: str, overrides: dict | None, guided=None) -> dict[int, int]:
    """Per PTX branch: how many of its taken executions one taken SASS branch stands for (workloads/sass.py
    ``branch_periods``: 0 where ptxas predicated the branch or unrolled its loop fully, U where it unrolled the
    loop U times); {} (every taken PTX branch holds its warp) without a SASS listing or with
    ``sass.branches=0``."""
    if not int((overrides or {}).get("branches", 1)) or record is None:
        return {}
    if guided is not None:
        return dict(guided.branches or {})
    from warpgraph.workloads.sass import record_branch_periods

    got, why = record_branch_periods(record, program, isa)
    if got is None:
        _warn_branches(getattr(record, "name", "?"), why)
        return {}
    return got


def _serial_fact(switch: str, lookup, record, isa: str, overrides: dict | None, what: str, otherwise: str) -> bool:
    """A boolean SASS fact of ``record`` (``lookup(record, isa)`` -> ``(value, tool)``), False when ``sass.<switch>=0``,
    without a record, or, with a one-line warning naming ``what`` and ``otherwise``, when no SASS listing says."""
    if not int((overrides or {}).get(switch, 1)) or record is None:
        return False
    got, why = lookup(record, isa)
    if got is None:
        _warn_once((switch, why),
                   f"{getattr(record, 'name', '?')}: no SASS listing says {what} ({why}); {otherwise} (install the "
                   f"'triton' extra or a CUDA toolkit's ptxas and nvdisasm)", stacklevel=5)
        return False
    return bool(got)


def ex2_serial(program, record, isa: str, overrides: dict | None, rules) -> bool:
    """Whether the entry's non-ftz ``ex2.approx.f32`` run one after the other, each waiting for the one before it
    (its token register: the MUFU result the fix-up squares), as ptxas built its SASS (workloads/sass.py
    ``ex2_fixups_follow``: every expansion's fix-up right behind its MUFU, on the one free predicate; the gallery's
    fp32 softmaxes; ``sass.ex2_serial=0`` ignores it). False for a program without a non-ftz ex2 (``rules``: the
    instructions' issue-slot rules, ``"ex2"`` for one), and with a one-line warning when no SASS listing says."""
    if "ex2" not in rules:
        return False
    from warpgraph.workloads.sass import record_ex2_serial

    return _serial_fact("ex2_serial", record_ex2_serial, record, isa, overrides,
                        "where ptxas put the fix-ups of the non-ftz ex2", "they are taken as independent")


def wgmma_serial(program, record, isa: str, overrides: dict | None) -> bool:
    """Whether each ``wgmma.mma_async`` of the entry waits for the warpgroup's earlier ones to complete, as ptxas
    built its SASS (workloads/sass.py ``wgmma_serialized``; ``sass.wgmma_serial=0`` ignores it). False for a
    program without wgmma, and with a one-line warning when no SASS listing says."""
    if not any(getattr(i.kind, "name", "") == "WGMMA" for i in program.instructions):
        return False
    from warpgraph.workloads.sass import record_wgmma_serialized

    return _serial_fact("wgmma_serial", record_wgmma_serialized, record, isa, overrides,
                        "whether ptxas serialised the wgmma pipeline", "every wgmma is taken as pipelined")


def _warn_branches(name: str, why: str) -> None:
    """Once per reason, as :func:`_warn_order`."""
    _warn_once(("branches", why),
               f"{name}: no SASS listing for the taken branches ({why}); every taken PTX branch holds its warp, also "
               f"those ptxas predicates or unrolls (install the 'triton' extra or a CUDA toolkit's ptxas and nvdisasm)",
               stacklevel=5)


#: ``sass.issue_order``: a warp issues each basic block in the order of ptxas's SASS (workloads/issue_order.py);
#: 0 issues the PTX order; 2 also moves mma.sync, CTA barriers and loads past loads as ptxas does (off by default:
#: docs/accuracy.md, "ptxas's order of mma.sync")
ISSUE_ORDER_DEFAULT = 1


def sass_issue_order(program, record, isa: str, overrides: dict | None):
    """The issue order of ``program`` from the SASS ptxas makes of ``record``'s PTX (workloads/issue_order.py), or
    None for the PTX order: switched off (``sass.issue_order=0``), nothing moves, or no SASS listing (a one-line
    warning, once per reason)."""
    level = int((overrides or {}).get("issue_order", int(ISSUE_ORDER_DEFAULT)))
    if not level or record is None:
        return None
    from warpgraph.workloads.issue_order import issue_order
    from warpgraph.workloads.sass import record_issue_positions

    pos, tool = record_issue_positions(record, program, isa)
    if pos is None:
        _warn_order(getattr(record, "name", "?"), tool)
        return None
    order = issue_order(program, pos, full=level >= 2)
    return order if order.moves else None


#: units whose results ptxas orders by stall counts, not scoreboard barriers (their SASS carry no write barrier:
#: IMAD / FFMA / FMUL / ISETP / SEL / F2FP ... on sm_90a listings); SFU (MUFU), CVT, shared / global memory,
#: LDC (ld.param), SHFL set a write barrier and keep their latencies (scoreboard stalls). mma.sync / wgmma keep the
#: tensor core's own timing (calibrated by microbench; HMMA's stall count overlaps it: no replacement there).
_FIXED_LATENCY = frozenset(("INT", "FP32", "FP16", "FP64", "MISC", "NONE"))

#: ``--set sass.control_stalls=1``: off by default (docs/accuracy.md, "Control-code stall counts")
CONTROL_STALLS_DEFAULT = False


def control_stalls(program, record, isa: str, overrides: dict | None, guided=None) -> list[int] | None:
    """Per-instruction control-code stall cycles (``sass.control_stalls``), or None (off, or no SASS listing).

    The rule (Volta and later: every SASS instruction carries a compiler-set stall count, the cycles the warp
    waits before it may issue its next instruction; Jia et al. 2018, "Dissecting the NVIDIA Volta GPU
    Architecture via Microbenchmarking", sec. 2.1; Nsight Compute's ``wait`` stall reason, "waiting on a fixed
    latency execution dependency", is that wait): a warp that issues PTX instruction i at ``tt`` with c SASS issue
    slots may issue its next instruction no earlier than ``tt + c + xs[i]``, where xs[i] is the sum of
    ``max(stall, 1) - 1`` over the SASS attributed to i (workloads/sass.py ``attribute`` / ``control_extra``: the
    mean of its PTX block, times its SASS count); those cycles are charged as ``wait`` before any scoreboard
    wait (the warp checks its wait mask after the stall count). The stall counts *replace* what would count the
    same cycles: the latency of fixed-latency results (``_FIXED_LATENCY``: the consumer is spaced by the counts)
    and the ``OWN_WAIT`` charge for the warp's own back-to-back use of a fixed-latency pipe (sm_core.py). They do
    not replace scoreboard latencies (memory, SFU, conversions, ``ld.param``), the pipe occupancy other warps
    see, the branch-resolution hold nor the tensor core's mma.sync / wgmma timing."""
    if not int((overrides or {}).get("control_stalls", int(CONTROL_STALLS_DEFAULT))):
        return None
    att = guided
    if att is None and record is not None:
        from warpgraph.workloads.sass import record_sass_costs

        att, why = record_sass_costs(record, program, isa)
        if att is None:
            _warn_cs(getattr(record, "name", "?"), why)
    if att is None or att.extra is None:
        return None
    return [int(att.extra.get(i, 0)) for i in range(len(program.instructions))]


def _warn_order(name: str, why: str) -> None:
    """Once per reason (not per record: every record of a machine without the tools shares it)."""
    _warn_once(("order", why), f"{name}: no SASS issue order ({why}); warps issue in PTX order (install the 'triton' "
                               f"extra or a CUDA toolkit's ptxas and nvdisasm)", stacklevel=5)


def _warn_cs(name: str, why: str) -> None:
    _warn_once(("cs", name, why), f"{name}: no control-code stall counts ({why}); sass.control_stalls has no effect",
               stacklevel=4)


def _gpu_fence(ins) -> bool:
    """A fence that orders global memory at .gpu / .sys scope (fence.sc / fence.acq_rel / membar.gl / .sys), from the
    atomics microbenchmark; with :func:`_is_membar_gpu` (the cluster_sync one) the lowering's MEMBAR.ALL.GPU set.
    fence.proxy.*, fence.mbarrier_init and .cta-scope fences are not (they keep the 8-cycle issue cost)."""
    ms = set(ins.mods)
    if ins.opcode == "membar":
        return bool({"gl", "sys"} & ms)
    if ins.opcode != "fence" or any(m.startswith("proxy") or m.startswith("mbarrier") for m in ms):
        return False
    return bool({"gpu", "sys"} & ms)


# ---- clusters: the op classes of shared::cluster accesses, remote-capable arrives, DSM copies, barrier.cluster
def _cluster_lowering(ins, kind: str):
    """(op, aux) for an instruction the SM core's cluster branch replays (components/sm_core.py ``_cluster_op``),
    else None. aux: ld / st / atom / red (OP_DSM), s2s / multicast (OP_DSM_COPY), release / relaxed (arrive)."""
    mods = tuple(ins.mods)
    opc = ins.opcode
    if kind in ("LD_SHARED", "ST_SHARED", "ATOM_SHARED") and "shared::cluster" in mods:
        return C.OP_DSM, ("ld" if kind == "LD_SHARED" else "st" if kind == "ST_SHARED" else
                          "red" if opc == "red" else "atom")
    if kind == "MBAR_ARRIVE" and "release" in mods and _WIDE_SCOPES.intersection(mods):
        return C.OP_DSM_ARRIVE, "membar"      # ptxas: MEMBAR.ALL.GPU before the SYNCS.ARRIVE (local or remote)
    if kind == "MBAR_ARRIVE" and "shared::cluster" in mods:
        return C.OP_DSM_ARRIVE, None
    if kind == "TMA_LOAD" and opc == "cp.async.bulk" and "shared::cta" in mods and "global" not in mods:
        return C.OP_DSM_COPY, "s2s"
    if kind == "TMA_LOAD" and "multicast::cluster" in mods:
        return C.OP_DSM_COPY, "multicast"
    if opc == "barrier.cluster.arrive":
        return C.OP_CBAR_ARRIVE, ("relaxed" if "relaxed" in mods else "release")
    if opc == "barrier.cluster.wait":
        return C.OP_CBAR_WAIT, None
    return None


_WIDE_SCOPES = frozenset(("cluster", "gpu", "sys"))


def _is_membar_gpu(ins) -> bool:
    """fence(.acq_rel).cluster/gpu/sys: one MEMBAR.ALL.GPU (microbench/results/h200_cluster_sync_2026-12-03);
    fence.sc and membar.gl come in through :func:`_gpu_fence`; fence.mbarrier_init keeps the plain fence latency."""
    mods = tuple(ins.mods)
    return (ins.opcode == "fence" and bool(_WIDE_SCOPES.intersection(mods)) and "sc" not in mods
            and "mbarrier_init" not in mods)


def core_config(spec, n_sms: int | None = None, policy: str | None = None) -> CoreConfig:
    """The SM core's configuration from the spec's typed sections (None: the schema's defaults)."""
    spec = _typed(spec)
    lat, cs = spec.latencies, spec.cta_scheduler
    return CoreConfig(
        n_sms=int(n_sms or spec.sm.count),
        subpartitions=int(spec.sm.subpartitions),
        policy=str(policy or spec.subpartition.scheduler.policy),
        max_warps_per_sm=int(spec.sm.max_warps),
        bar_latency=int(lat.bar_sync_release_cycles),
        bar_per_warp=int(lat.bar_sync_cycles_per_warp),
        membar_gpu=int(lat.membar_gpu_cycles),
        membar_drain=int(lat.membar_drain_cycles),
        membar_tma=int(lat.membar_after_tma_cycles),
        membar_sm=lat.membar_drains == "sm",
        branch_latency=int(lat.branch.latency_cycles) // 2,
        launch_latency=int(cs.launch_latency_cycles),
        initial_launch_latency=int(cs.kernel_launch_latency_cycles),
        dispatch_interval=int(cs.dispatch_cycles_per_cta),
        dispatch_per_warp=int(cs.dispatch_cycles_per_warp),
        dispatch_burst=int(cs.dispatch_burst_warps),
        poll_latency=int(spec.mbarrier.try_wait_cycles),
        l1_hit_latency=int(spec.l1.hit_latency_cycles),
        l1_tag_cycles_per_line=float(spec.l1.tag_cycles_per_line),
        store_cycles_per_byte=(1.0 / float(spec.l1.store_bytes_per_cycle) if spec.l1.store_bytes_per_cycle else 0.0),
        cpa_fill_cycles_per_byte=(1.0 / float(spec.l1.cp_async_fill_bytes_per_cycle)
                                  if spec.l1.cp_async_fill_bytes_per_cycle else 0.0),
        atom_request=float(spec.l1.atomic_request_cycles),
        atom_lane_red=float(spec.l1.atomic_same_word_lane_cycles),
        atom_lane_ret=float(spec.l1.atomic_same_word_return_cycles),
        store_queue_bytes=float(spec.l1.store_queue_bytes),
        store_partial_line=float(spec.l1.store_partial_line_cycles),
        store_partial_sector=float(spec.l1.store_partial_sector_cycles),
    )


def registers_per_thread(program, record=None, spec=None) -> tuple[int, str]:
    """Registers per thread the assembler allocates for ``record``'s entry on ``spec``'s ISA (``sm.isa``).

    The record alone decides (workloads/compiled.py): its ``compiled.<isa>`` block, else ptxas run now, else
    an estimate from the PTX register declarations, flagged in the returned source and as a warning. A
    hardware measurement (``measured.json``) is never read."""
    from warpgraph.workloads.compiled import compiled_facts

    isa = str(_typed(spec).sm.isa)
    facts, src = compiled_facts(record, isa)
    if facts is not None:
        return int(facts.registers_per_thread), f"ptxas: {src}"
    est = _estimate_registers(program)
    mx = getattr(program, "maxnreg", None)
    if mx:
        est = min(est, int(mx))
    _warn_estimate(getattr(record, "name", "?"), est, src)
    return est, f"estimate from PTX register declarations ({src})"


_WARNED: set = set()


def _warn_once(key: tuple, message: str, stacklevel: int) -> None:
    """``warnings.warn(message)`` the first time ``key`` is seen in this process (the timing pass's one-line
    warnings: a missing tool is said once, not once per launch). ``stacklevel`` counts this function's frame."""
    import warnings

    if key in _WARNED:
        return
    _WARNED.add(key)
    warnings.warn(message, stacklevel=stacklevel)


def _warn_estimate(name: str, est: int, why: str) -> None:
    _warn_once((name, why), f"{name}: {why}; registers per thread estimated as {est} from the PTX declarations "
                            f"(occupancy may be wrong). Install the 'triton' extra or a CUDA toolkit's ptxas (or set "
                            f"$WARPGRAPH_PTXAS), or record them with `warpgraph compile RECORD --write`.", stacklevel=4)


def _estimate_registers(program) -> int:
    """PTX virtual registers over-count: 32-bit count + 2 per 64-bit, halved, plus 16, capped at 255."""
    n32 = n64 = 0
    for name in getattr(program, "reg_names", []):
        if name.startswith("%rd") or name.startswith("%fd"):
            n64 += 1
        elif name.startswith("%p"):
            continue
        else:
            n32 += 1
    return min(255, max(16, (n32 + 2 * n64) // 2 + 16))


# how a bundle aggregates the payload of its warps, per op class (Contract 2 payload table)
_P_FIRST, _P_SUM, _P_ELECT, _P_WGMMA, _P_DSM = 0, 1, 2, 3, 4
_PAY = {C.OP_ATOMG: _P_SUM, C.OP_LDG: _P_SUM, C.OP_STG: _P_SUM, C.OP_CP_ASYNC: _P_SUM, C.OP_LDS: _P_SUM, C.OP_STS: _P_SUM,
        C.OP_MMA: _P_SUM, C.OP_WGMMA: _P_WGMMA, C.OP_TMA_LD: _P_ELECT, C.OP_TMA_ST: _P_ELECT,
        C.OP_MBAR_INIT: _P_ELECT, C.OP_MBAR_ARRIVE: _P_ELECT, C.OP_MBAR_WAIT: _P_ELECT,
        # clusters: shared::cluster accesses sum bytes (the destination CTA must agree), arrives / copies elect
        C.OP_DSM: _P_DSM, C.OP_DSM_ARRIVE: _P_ELECT, C.OP_DSM_COPY: _P_ELECT}
_PAY.update({C.OP_TC05_LD: _P_SUM, C.OP_TC05_ST: _P_SUM, C.OP_TC05_MMA: _P_ELECT, C.OP_TC05_COMMIT: _P_ELECT,
             C.OP_TC05_ALLOC: _P_ELECT, C.OP_TC05_DEALLOC: _P_ELECT, C.OP_TC05_CP: _P_ELECT})   # tcgen05 block


def _rows(wpc: int, rs: int) -> list:
    """The warps ``0..wpc-1`` grouped by row ``w // rs`` (in order)."""
    return [range(r, min(r + rs, wpc)) for r in range(0, wpc, rs)]


class BundleBuilder:
    """``groups_of(cta)`` for the SM core: the warps of a CTA with identical pc streams form one bundle.

    Payloads of a bundle (per dynamic instruction): memory / shared / mma payloads are summed over its warps
    (the units are bandwidth servers: one larger request is equivalent); wgmma FLOPs and smem bytes are summed
    (N and the A-from-registers flag are the first warp's); TMA and mbarrier payloads are the elected warp's
    (first warp with active threads) — when several warps are active on the same barrier / transaction their
    bytes / arrivals / tx counts are summed; if they use different barriers the bundle is split into single
    warps. Everything else (bar.sync ids, wait_group N) is the first warp's. ``act`` becomes the number of warps
    with active threads. Kernels that read ``%clock`` are never bundled (per-warp clock values).
    ``bundle=False`` gives the per-warp model (every warp its own group)."""

    def __init__(self, trace, tables: StaticTables, bundle: bool = True):
        self.trace = trace
        self.order = getattr(tables, "order", None)     # issue order (workloads/issue_order.py), None: PTX order
        self.wpc = trace.warps_per_cta
        self.bundle = bool(bundle) and C.OP_CLOCK not in tables.op
        self.cls = np.array([_PAY.get(o, _P_FIRST) for o in tables.op] or [0], dtype=np.int8)
        self.tmaop = np.array([o in (C.OP_TMA_LD, C.OP_TMA_ST) for o in tables.op] or [False])
        self.arrop = np.array([o in (C.OP_MBAR_ARRIVE, C.OP_DSM_ARRIVE, C.OP_TC05_COMMIT) for o in tables.op]
                              or [False])
        self.copyop = np.array([o == C.OP_DSM_COPY for o in tables.op] or [False])   # clusters: never merged
        self.atomop = np.array([o == C.OP_ATOMG for o in tables.op] or [False])    # lock-word bits in a1 >> 32
        self.nsp = 4
        # tensor-core kernels: at most one warp per sub-partition in a bundle (the warps of one row w // nsp, a
        # warpgroup). Co-resident warps of a sub-partition overlap each other's MMA / ldmatrix / MUFU work and
        # wgmma completes per warpgroup (FIFO on the SM's tensor cores); a bundle would replay them in lockstep
        # ("perfect interleave"), serialising pipes the hardware overlaps (gemm80 +26 %, attn D128 +28 % bundled
        # vs +7 % / -1 % per warp)
        self.row_split = any(o in (C.OP_MMA, C.OP_WGMMA) for o in tables.op)
        self.bundles = 0
        self.warps = 0

    def warp_stream(self, g: int):
        """Warp ``g``'s stream (Contract 2 WarpStream) in issue order."""
        st = self.trace.warp_stream(g)
        perm = permutation(self.order, st.pc) if self.order is not None else None
        if perm is None:
            return st
        return type(st)(st.pc[perm], st.a0[perm], st.a1[perm], st.a2[perm], st.a3[perm], st.active[perm])

    def _single(self, w, st) -> Group:
        return Group([w], st.pc.tolist(), st.a0.tolist(), st.a1.tolist(), st.a2.tolist(), st.a3.tolist(),
                     st.active.tolist())

    def ws_groups(self, cta: int):
        """The warp index lists of CTA ``cta``'s bundles (no payload work)."""
        fast = self._fast_classes(cta)
        if fast is not None:
            return [ws for ws, _ in fast[1]]
        return [ws for ws, _ in self._classes(cta)]

    def _fast_classes(self, cta: int):
        """``(batch, [(ws, (cols, sel))])``: :meth:`_classes` from the batch's participation table, without per-warp
        streams. Warps of one row with the same participation column take part in the same steps, so their pc
        streams are equal; a new column is compared by pc stream with the classes so far, in warp order, as
        :meth:`_classes` does -- the classes (and their order) are the same. None: the trace has no batch table."""
        if not self.bundle:
            return None
        cb = getattr(self.trace, "cta_batch", None)
        loc = cb(cta) if cb is not None else None
        if loc is None:
            return None
        b, base = loc
        wpc = self.wpc
        P = b.part[:, base:base + wpc]
        rs = self.nsp if self.row_split else 1 << 30
        if P.all():
            return b, [(list(ws), (np.arange(base, base + wpc)[list(ws)], None))
                       for ws in _rows(wpc, rs)]
        by_key: dict = {}
        classes: list = []       # [pc, ws, sel]
        for w in range(wpc):
            col = P[:, w]
            key = (w // rs, col.tobytes())
            c = by_key.get(key)
            if c is not None:
                c[1].append(w)
                continue
            sel = None if col.all() else col[b.mask]
            pc = b.pc if sel is None else b.pc[sel]
            for c in classes:
                rep = c[0]
                if c[1][0] // rs == w // rs and len(rep) == len(pc) and (rep is pc or np.array_equal(rep, pc)):
                    c[1].append(w)
                    break
            else:
                c = [pc, [w], sel]
                classes.append(c)
            by_key[key] = c
        return b, [(ws, (np.asarray(ws) + base, sel)) for _, ws, sel in classes]

    def _classes(self, cta: int):
        wpc = self.wpc
        streams = [self.warp_stream(cta * wpc + w) for w in range(wpc)]
        if not self.bundle:
            return [([w], [st]) for w, st in enumerate(streams)]
        classes: list = []
        rs = self.nsp if self.row_split else 1 << 30
        for w, st in enumerate(streams):
            pc = np.asarray(st.pc)
            for rep, ws, ss in classes:
                if ws[0] // rs == w // rs and len(rep) == len(pc) and (rep is pc or np.array_equal(rep, pc)):
                    ws.append(w)
                    ss.append(st)
                    break
            else:
                classes.append((pc, [w], [st]))
        return [(ws, ss) for _, ws, ss in classes]

    def __call__(self, cta: int) -> list:
        fast = self._fast_classes(cta)
        if fast is not None:
            return self._fast_groups(*fast)
        out = []
        for ws, ss in self._classes(cta):
            self.warps += len(ws)
            if len(ws) == 1:
                out.append(self._single(ws[0], ss[0]))
                self.bundles += 1
                continue
            g = self._merge(ws, ss)
            if g is None:
                out.extend(self._single(w, st) for w, st in zip(ws, ss))
                self.bundles += len(ws)
            else:
                out.append(g)
                self.bundles += 1
        return out

    def _fast_groups(self, b, classes) -> list:
        """:meth:`__call__` over :meth:`_fast_classes`: one gather per bundle (``BatchTrace.warps_block``)."""
        out = []
        for ws, (cols, sel) in classes:
            self.warps += len(ws)
            pcs, A, act = b.warps_block(cols, sel)
            if self.order is not None:
                perm = permutation(self.order, pcs)
                if perm is not None:
                    pcs, A, act = pcs[perm], A[:, :, perm], act[:, perm]
            pl = pcs.tolist()
            if len(ws) > 1:
                agg = self._aggregate(A, act, pcs)
                if agg is not None:
                    R, nact = agg
                    out.append(Group(list(ws), pl, R[0].tolist(), R[1].tolist(), R[2].tolist(), R[3].tolist(),
                                     nact.tolist()))
                    self.bundles += 1
                    continue
            for j, w in enumerate(ws):
                a = A[j]
                out.append(Group([w], pl, a[0].tolist(), a[1].tolist(), a[2].tolist(), a[3].tolist(),
                                 act[j].tolist()))
                self.bundles += 1
        return out

    def _merge(self, ws, ss) -> Group | None:
        pc = np.asarray(ss[0].pc)
        agg = self.aggregate(ss, pc, None)
        if agg is None:
            return None
        R, nact = agg
        return Group(list(ws), pc.tolist(), R[0].tolist(), R[1].tolist(), R[2].tolist(), R[3].tolist(),
                     nact.tolist())

    def aggregate(self, ss, pc, cols):
        """Bundle payloads ``(R (4, n), nact (n,))`` of the warp streams ``ss`` (identical pcs ``pc``) at the stream
        positions ``cols`` (None: all), by the rules of the class docstring; None if the bundle must be split."""
        sel = slice(None) if cols is None else cols
        A = np.stack([np.stack([np.asarray(s.a0)[sel], np.asarray(s.a1)[sel], np.asarray(s.a2)[sel],
                                np.asarray(s.a3)[sel]]) for s in ss]).astype(np.int64)     # (m, 4, n)
        act = np.stack([np.asarray(s.active)[sel] for s in ss])               # (m, n)
        return self._aggregate(A, act, pc[sel])

    def _aggregate(self, A, act, pcs):
        """:meth:`aggregate` of the stacked payloads ``A`` (m, 4, n) and active counts ``act`` (m, n)."""
        n = len(pcs)
        cls = self.cls[pcs] if n else np.zeros(0, dtype=np.int8)
        R = A[0].copy()
        sm_ = cls == _P_SUM
        if sm_.any():
            R[:, sm_] = A[:, :, sm_].sum(0)
            at = np.nonzero(sm_ & self.atomop[pcs])[0]
            if len(at):     # global atomics: a1's lock-word bits (components/atomics.py) are one warp's, never summed
                hi = A[:, 1, at] >> 32
                if ((hi != hi.max(0)[None, :]) & (hi != 0)).any():
                    return None
                R[1, at] = (A[:, 1, at] & 0xFFFFFFFF).sum(0) | (hi.max(0) << 32)
                # the serialising units' counts (memops._atom_serial_bits): lane-operations summed; the line is
                # the lowest of the warps' lines (its busiest word that warp's), and warps on d different lines
                # load each 1/d as much
                key = (A[:, 2, at] >> 40) & 0xFFFFFF
                d = np.array([max(1, len(set(c[c > 0].tolist()))) for c in key.T], dtype=np.int64)
                big = np.iinfo(np.int64).max
                lo = np.where(key > 0, key, big).argmin(0)
                kmin = key[lo, np.arange(len(at))]
                R[2, at] = (A[:, 2, at] & ((1 << 40) - 1)).sum(0) | (kmin << 40)
                hi3 = A[:, 3, at] >> 32
                ks = -(-(hi3 & 0x1FFF).sum(0) // d)
                ns = -(-((hi3 >> 13) & 0x1FFF).sum(0) // d)
                wo = (hi3[lo, np.arange(len(at))] >> 26) & 31
                hi3 = np.minimum(ks, 0x1FFF) | (np.minimum(ns, 0x1FFF) << 13) | (wo << 26)
                R[3, at] = (A[:, 3, at] & 0xFFFFFFFF).sum(0) | (hi3 << 32)
        wg = cls == _P_WGMMA
        if wg.any():
            R[0:2, wg] = A[:, 0:2, wg].sum(0)
        ac = act > 0
        nact = ac.sum(0)
        ds = cls == _P_DSM
        if ds.any():        # clusters: bytes summed, the destination CTA (row 1) must be the same for all warps
            cd = np.nonzero(ds)[0]
            R[0, cd], R[2, cd], R[3, cd] = A[:, 0, cd].sum(0), A[:, 2, cd].sum(0), A[:, 3, cd].sum(0)
            dst = A[:, 1, cd]
            R[1, cd] = dst.max(0)
            if ((dst != R[1, cd][None, :]) & (dst != 0)).any():
                return None
        el = cls == _P_ELECT
        if el.any():
            cols_e = np.nonzero(el)[0]
            idx = ac[:, cols_e].argmax(0)
            R[:, cols_e] = A[idx, :, cols_e].T
            multi = cols_e[nact[cols_e] > 1]
            if len(multi) and self.copyop[pcs[multi]].any():
                return None     # clusters: several warps issuing DSM copies / multicasts: replay them one by one
            if len(multi):
                keys = A[:, 1, multi]
                same = (keys == R[1, multi][None, :]) | ~ac[:, multi]
                if not same.all():
                    return None
                Am = (A[:, :, multi] * ac[:, None, multi]).sum(0)           # sums over the active warps
                tm = self.tmaop[pcs[multi]]
                am = self.arrop[pcs[multi]]
                for row in (0, 2, 3):
                    R[row, multi[tm]] = Am[row, tm]
                for row in (0, 2):
                    R[row, multi[am]] = Am[row, am]
        return R, nact

    def balanced(self, nsp: int, ctas) -> bool:
        """Whether every bundle of the given CTAs spans all ``nsp`` sub-partitions evenly."""
        if not self.bundle:
            return False
        for cta in ctas:
            for ws in self.ws_groups(cta):
                cnt = [0] * nsp
                for w in ws:
                    cnt[w % nsp] += 1
                if min(cnt) == 0 or min(cnt) != max(cnt):
                    return False
        return True


def build_units(spec, engine, units="auto"):
    """(mem, smem, tma, mbar, tc, names, machine): the Contract-6 units of ``spec``'s component graph
    (runner/machine.py), or the objects ``units`` gives: a dict ``{"memory": ..., "shared_memory": ..., "tma": ...,
    "mbarrier": ..., "tensor_core": ...}`` or a callable ``(spec, engine) -> dict`` (test doubles, chosen
    explicitly; machine is then None)."""
    from warpgraph.runner.machine import UNIT_ROLES, build_machine

    machine = None
    if isinstance(units, str):
        if units != "auto":
            raise UserError(f"unknown units {units!r}", hint="'auto' (the models the spec selects); stand-ins exist "
                            "only as test doubles under tests/")
        machine = build_machine(spec, engine)
        d = machine.units
    else:
        d = units(spec, engine) if callable(units) else dict(units)
        missing = [r for r in UNIT_ROLES if r not in d]
        if missing:
            raise UserError(f"units lack {', '.join(missing)}", hint=f"objects for {', '.join(UNIT_ROLES)}")
    names = {r: type(d[r]).__name__ for r in UNIT_ROLES}
    return d["memory"], d["shared_memory"], d["tma"], d["mbarrier"], d["tensor_core"], names, machine


@dataclass
class TimingOutcome:
    metrics: dict
    stats: Stats
    clock_issue: dict = field(default_factory=dict)
    occupancy: object = None
    core: object = None
    stall_profile: object = None     # pandas DataFrame (run_timing(stall_profile=True)) or None


def sm_occupancy(spec, program, record=None, *, threads_per_cta: int, registers: int | None = None,
                 shared_bytes: int | None = None):
    """Resident CTAs per SM for ``program`` launched as ``record`` on ``spec`` (registers from the record or the
    PTX, shared memory from the record/static declarations): components.cta_scheduler.occupancy."""
    if registers is not None:
        regs, regs_src = int(registers), "given"
    else:
        regs, regs_src = registers_per_thread(program, record, spec)
    if shared_bytes is None:
        shared_bytes = int(getattr(record, "shared_bytes", 0) or 0) if record is not None else 0
        shared_bytes = max(shared_bytes, int(getattr(program, "static_shared_bytes", 0) or 0))
    return occupancy(
        threads_per_cta=threads_per_cta, registers_per_thread=regs, registers_source=regs_src,
        smem_per_cta_bytes=shared_bytes,
        max_warps_per_sm=int(_typed(spec).sm.max_warps), max_threads_per_sm=int(_typed(spec).sm.max_threads),
        max_ctas_per_sm=int(_typed(spec).sm.max_ctas), registers_per_sm=int(_typed(spec).sm.registers),
        reg_alloc_unit=int(_typed(spec).sm.register_alloc_unit),
        max_registers_per_thread=int(_typed(spec).sm.max_registers_per_thread),
        smem_per_sm_bytes=int(_typed(spec).sm.shared_memory_bytes),
        max_smem_per_cta_bytes=int(_typed(spec).sm.max_shared_per_cta_bytes),
        reserved_smem_per_cta_bytes=int(_typed(spec).sm.shared_reserved_per_cta_bytes),
    )


def l1_bytes_per_cta(spec, occ) -> int:
    """L1 data capacity one resident CTA can count on: the unified L1/shared array minus the shared-memory
    carveout, split between the resident CTAs. The driver picks the smallest carveout of ``sm.shared_carveouts_kib``
    that holds the resident CTAs' shared memory (CUDA Hopper tuning guide, "Unified shared memory/L1/texture
    cache": 0, 8, 16, 32, 64, 100, 132, 164, 196, 228 KB); without the list the carveout is exactly what the CTAs use."""
    need = int(occ.ctas_per_sm) * int(occ.smem_per_cta_bytes) if occ.smem_per_cta_bytes > 0 else 0
    carve = need
    opts = _typed(spec).sm.shared_carveouts_kib
    if opts:
        fit = [int(k) * 1024 for k in opts if int(k) * 1024 >= need]
        if fit:
            carve = min(fit)
    free = int(_typed(spec).sm.unified_l1_shared_bytes) - carve
    return max(0, free // max(1, int(occ.ctas_per_sm)))


def l1_bytes_per_sm(spec, occ) -> int:
    """L1 data capacity of one SM, which its resident CTAs share: :func:`l1_bytes_per_cta` times them."""
    return l1_bytes_per_cta(spec, occ) * max(1, int(occ.ctas_per_sm))


def run_timing(trace, spec=None, *, record=None, max_cycles: int | None = None, units: str = "auto",
               policy: str | None = None, n_sms: int | None = None, shared_bytes: int | None = None,
               registers: int | None = None, sass_overrides: dict | None = None, bundle: bool = True,
               window: int | None = None, sample=None, recorder=None, on_progress=None,
               stall_profile: bool = False) -> TimingOutcome:
    """Replay ``trace`` (Contract 2) on ``spec`` (Contract 4). Raises SimulationError on a hang / cycle limit.

    ``bundle``: replay the identical-stream warps of a CTA as one bundle (fast, default) or every warp alone.
    ``window``: SM run-ahead window in cycles (CoreConfig.window). ``sample``: a
    :class:`warpgraph.runner.sampling.Sample` (sampled mode: only its SMs run, with their CTA assignment).
    ``recorder``: an event recorder (core/tracing.py ``TraceRecorder``) given to the core and every unit; a
    recorder with ``auto_sms = True`` keeps the first 4 SMs that run CTAs. ``on_progress(ctas_done, n_ctas, cycle)``
    is called as each CTA retires (the CLI's progress bar; it cannot change the simulation). ``stall_profile``:
    keep the per-instruction stall profile (runner/stall_profile.py) as ``TimingOutcome.stall_profile``."""
    t_wall = time.perf_counter()
    prog = trace.program
    tables = lower(prog, spec, sass_overrides=sass_overrides, record=record)
    cfg = core_config(spec, n_sms=n_sms, policy=policy)
    occ = sm_occupancy(spec, prog, record, threads_per_cta=trace.threads_per_cta, registers=registers,
                       shared_bytes=shared_bytes)
    if window is not None:
        cfg.window = int(window)
    eng = Engine(ClockDomain("sm", float(_typed(spec).clocks.sm_mhz)))
    mem, smem, tma, mbar, tc, unit_names, machine = build_units(spec, eng, units)
    if machine is not None and policy is None:
        cfg.policy = machine.policy
    elif policy is not None:
        from warpgraph.core.registry import get_component

        get_component("warp_scheduler", str(policy).lower(), location="timing.policy")
    from warpgraph.components.cta_scheduler import CtaScheduler

    cta_cls = machine.cta_scheduler_class if machine is not None else CtaScheduler
    core_cls = machine.sm_class if machine is not None else SMCore
    mem.write_back_ratio = float(trace.write_back_ratio)
    assignment = None
    n_ctas_run = trace.n_ctas
    if sample is not None:
        assignment = sample.assign(trace.n_ctas, cfg.n_sms, occ.ctas_per_sm)
        n_ctas_run = sum(len(v) for v in assignment.values())
        sample.scale_units(mem, cfg.n_sms)
    mem.set_write_back_curve(getattr(trace, "write_back_curve", None), trace.n_ctas / max(1, n_ctas_run))
    sched = cta_cls.standalone(trace.n_ctas, cfg.n_sms, occ.ctas_per_sm,
                                    launch_latency_cycles=cfg.launch_latency, assignment=assignment)
    if sample is not None and hasattr(sample, "scheduler"):
        sched = sample.scheduler(sched)   # sampled mode: the mini-GPU's dynamic scheduler (runner/sampling.py)
    groups = BundleBuilder(trace, tables, bundle)
    probe = [0, trace.n_ctas - 1] if trace.n_ctas > 1 else [0]
    merge = groups.balanced(cfg.subpartitions, probe)
    core = core_cls(eng, tables, cfg, n_ctas=n_ctas_run, warps_per_cta=trace.warps_per_cta,
                  threads_per_cta=trace.threads_per_cta, stream_of=groups.warp_stream, scheduler=sched,
                  mem=mem, smem=smem, tma=tma, mbar=mbar, tc=tc, max_cycles=max_cycles, groups_of=groups,
                  merge_subpartitions=merge)
    if on_progress is not None:
        core.on_cta = on_progress
    if stall_profile:
        from warpgraph.runner.stall_profile import new_profile

        core.stall_prof = new_profile(len(tables.op))
    ghost = None
    if sample is not None and getattr(sample, "ghost_fills", False) and getattr(sample, "ghosts", None):
        from warpgraph.runner.ghost_fills import GhostFills

        ghost = core.ghost = GhostFills(trace, tables, groups, sample.ghosts, sample.ctas, mem, tma, eng,
                                        tma_loads=sample.ghost_fills == "all")
    if recorder is not None and recorder.enabled:
        _attach_recorder(recorder, core, (mem, smem, tma, mbar, tc), cfg, spec, trace, assignment, occ)
    _attach_clusters(core, sched, trace, spec, machine, record)   # clusters: placement, DSM fabric
    eng.report = core.stuck_report
    core.start()
    eng.run(max_cycles=max_cycles)
    if recorder is not None and recorder.enabled:
        for u in (mem, smem, tma, mbar, tc):
            fn = getattr(u, "trace_finish", None)
            if fn is not None:
                fn(core.end_cycle)
        recorder.finish(core.end_cycle)
    if not core.finished():
        raise SimulationError("simulation deadlocked: no pending events but warps have not finished\n"
                              + core.stuck_report(),
                              hint="a bar.sync / mbarrier wait that can never complete (see the listed warps)")
    wall = time.perf_counter() - t_wall
    out = _outcome(core, eng, cfg, occ, tables, (mem, smem, tma, mbar, tc), unit_names, wall, spec)
    _component_stats(out.stats, core, machine, trace)
    if core.stall_prof is not None:
        from warpgraph.runner.stall_profile import profile_frame

        out.stall_profile = profile_frame(core.stall_prof, tables)
    m = out.metrics
    fabric_metrics(m, trace)
    m["bundles"] = groups.bundles
    m["bundled"] = groups.bundle
    m["warps_per_bundle"] = round(groups.warps / groups.bundles, 3) if groups.bundles else 0.0
    m["merged_subpartitions"] = merge
    m["sm_events"] = core.sm_events
    m["window_cycles"] = cfg.window
    if sample is not None:
        sample.finish(out, trace.n_ctas, n_ctas_run, cfg.n_sms,
                      exact={"dram_read_bytes": getattr(trace, "dram_first_touch_bytes", None)})
        if ghost is not None:
            m["sampling"]["ghost_fills"] = ghost.registered
    return out


def _attach_clusters(core, sched, trace, spec, machine, record) -> None:
    """Thread-block clusters of the launch: the CTA scheduler places whole clusters in one GPC (refusing what
    cannot fit), the SM core gets the membership and the DSM fabric (runner/machine.py parts['dsm'])."""
    from warpgraph.components.structural import gpc_of_sms
    from warpgraph.workloads.functional.cluster import cluster_members

    shape = tuple(getattr(trace, "cluster", None) or (1, 1, 1))
    dsm = machine.parts.get("dsm") if machine is not None else None
    if dsm is None and C.OP_DSM <= max(core.T.op or [0]) and spec is not None and getattr(spec, "fabric", None):
        from warpgraph.components.dsm import DsmFabric
        dsm = DsmFabric(spec)
    members = cluster_members(trace.grid, shape) if shape != (1, 1, 1) else []
    lat = int(_typed(spec).fabric.cluster_barrier_latency_cycles)
    core.attach_clusters(members, dsm, lat)
    place_clusters(sched, trace, spec, record, core.cfg.n_sms)


def place_clusters(sched, trace, spec, record, n_sms: int) -> None:
    """Give the CTA scheduler the launch's clusters (whole clusters in one GPC; refuses what cannot fit)."""
    from warpgraph.components.structural import gpc_of_sms
    from warpgraph.workloads.functional.cluster import cluster_members

    shape = tuple(getattr(trace, "cluster", None) or (1, 1, 1))
    members = cluster_members(trace.grid, shape) if shape != (1, 1, 1) else []
    if members and hasattr(sched, "set_clusters"):
        fab = getattr(spec, "fabric", None)
        gpc = gpc_of_sms(fab, n_sms) if fab is not None else [0] * n_sms
        npc = bool(getattr(record, "non_portable_cluster_size", False))
        fab_s = _typed(spec).fabric
        mx = int(fab_s.max_cluster_size if npc else fab_s.max_portable_cluster_size)
        sched.set_clusters(members, gpc, max_cluster_size=mx,
                           location=f"{getattr(record, 'name', 'record')} (cluster {list(shape)})")


def _attach_recorder(rec, core, units, cfg, spec, trace, assignment, occ) -> None:
    """Give the core and the units the recorder; describe the launch in its metadata."""
    if getattr(rec, "auto_sms", False):
        if assignment is not None:
            sms = sorted(s for s, v in assignment.items() if v)[:4]
        else:
            sms = list(range(min(4, cfg.n_sms)))
        rec.sms = frozenset(sms)
    rec.begin_launch(name=getattr(trace.program, "name", ""), n_ctas=trace.n_ctas,
                     warps_per_cta=trace.warps_per_cta, n_sms=cfg.n_sms, subpartitions=cfg.subpartitions,
                     clock_mhz=float(_typed(spec).clocks.sm_mhz), reason_names=S.STALL_NAMES,
                     ctas_per_sm=occ.ctas_per_sm)
    core.set_recorder(rec)
    mem, smem, tma, mbar, tc = units
    for u in units:
        if hasattr(u, "rec"):
            u.rec = rec
    if mbar is not None and hasattr(mbar, "sm_of_key"):
        cta_sm = core.cta_sm
        mbar.sm_of_key = lambda key: cta_sm.get(int(key) >> 32, -1)


def _address_stats(st: Stats, trace) -> None:
    """Bytes per L2 slice (``l2.s{i}``) and per HBM channel (``hbm.c{i}``) that the functional pass counted from
    the line addresses (workloads/functional/addrmap.py: statistics only, the timing is partition-based); none
    when the trace has no counts (a trace of ``run_functional`` without ``address_map``)."""
    ac = getattr(trace, "address_counts", None)
    if not ac:
        return
    for i, (r, w) in enumerate(zip(ac["l2_read_bytes"], ac["l2_write_bytes"])):
        g = st.group(f"l2.s{i}")
        g.set("read_bytes", r)
        g.set("write_bytes", w)
    for i, (r, w) in enumerate(zip(ac["dram_read_bytes"], ac["dram_write_bytes"])):
        g = st.group(f"hbm.c{i}")
        g.set("read_bytes", r)
        g.set("write_bytes", w)


def fabric_metrics(metrics: dict, trace) -> None:
    """``l2_fabric_bytes``: what the L2 partitions look up on each other's behalf (the functional pass's count,
    workloads/functional/addrmap.py), and ``l2_tag_bytes`` = ``l2_bytes`` + that: what Nsight Compute's
    ``lts__t_bytes`` counts (SM requests, ``srcunit_tex``, plus ``srcunit_ltcfabric``; H200
    microbench/results/h200_l2_counters_2026-12-04: the two make 97-100 % of it on 55 launches). Absent when the
    trace has no fabric count."""
    ac = getattr(trace, "address_counts", None) or {}
    if "l2_fabric_read_bytes" not in ac:
        return
    fb = int(ac["l2_fabric_read_bytes"]) + int(ac["l2_fabric_write_bytes"])
    metrics["l2_fabric_bytes"] = fb
    metrics["l2_tag_bytes"] = int(metrics["l2_bytes"]) + fb


def _component_stats(st: Stats, core, machine, trace=None) -> None:
    """Statistics per graph component (components/interfaces.py ROLE_STATS: units, descriptions): L1, crossbar,
    L2 (hit / miss; bytes and busy cycles per partition; bytes per slice from the functional pass's addresses),
    HBM per partition and per channel, GX planes, per-SM and per-sub-partition stall counts; annotates every
    known row."""
    from warpgraph.components.interfaces import stat_info

    if machine is not None:
        mem, parts = machine.units["memory"], machine.parts
        g = st.group("l1")
        for k, v in parts["l1"].stats(mem).items():
            g.set(k, v)
        g.set("hit_lines", core.l1_hit_lines)
        g.set("pending_hit_waits", core.l1_pending_waits)
        g.set("miss_sectors", core.global_sectors)
        g = st.group("xbar")
        for k, v in parts["xbar"].stats(mem).items():
            g.set(k, v)
        g = st.group("l2")
        miss = mem.dram_read_bytes / 32
        g.set("read_bytes", mem.l2_read_bytes)
        g.set("write_bytes", mem.l2_write_bytes)
        g.set("read_miss_sectors", miss)
        g.set("read_hit_sectors", max(0.0, mem.l2_read_bytes / 32 - miss))
        for sl, d in parts["l2_slice"].stats(mem).items():
            gs = st.group(f"l2.{sl}")
            for k, v in d.items():
                gs.set(k, v)
        for ch, d in parts["hbm_channel"].stats(mem).items():
            gs = st.group(f"hbm.{ch}")
            for k, v in d.items():
                gs.set(k, v)
        dsm = parts["dsm"].stats()
        for p in parts["dsm"].planes:
            gs = st.group(f"fabric.gx{p.plane}")
            gs.set("bytes", dsm.get(f"gx{p.plane}.bytes", 0))
            gs.set("enabled", int(p.enabled))
    if trace is not None:
        _address_stats(st, trace)
    sp_stall = getattr(core, "sp_stall", None)
    for sm, row in enumerate(core.sm_stall):
        if any(row):
            g = st.group(f"sm{sm}.stalls")
            for k, nme in enumerate(S.STALL_NAMES):
                if row[k] and k != S.SELECTED:
                    g.set(nme, row[k])
            for sp, srow in enumerate(sp_stall[sm] if sp_stall is not None else ()):
                if any(srow):
                    g = st.group(f"sm{sm}.sp{sp}.stalls")
                    for k, nme in enumerate(S.STALL_NAMES):
                        if srow[k] and k != S.SELECTED:
                            g.set(nme, srow[k])
    for c, s_, _ in st.rows():
        info = stat_info(c, s_)
        if info is not None:
            st.annotate(c, s_, *info)


def _unit_stats(u) -> dict:
    """A unit's ``stats()`` (declared by every role's interface); None: no such unit. A ``stats()`` that fails
    or returns something other than a dict is an error naming the unit, not an empty table."""
    if u is None:
        return {}
    try:
        d = u.stats()
    except Exception as e:  # noqa: BLE001 (a plugin's bug: reported with its class, not swallowed)
        raise SimulationError(f"{type(u).__name__}.stats() failed: {type(e).__name__}: {e}",
                              hint="a dict of counters from the unit's stats()") from e
    if not isinstance(d, dict):
        raise SimulationError(f"{type(u).__name__}.stats() returned {type(d).__name__}",
                              hint="a dict of counters from the unit's stats()")
    return d


def _outcome(core: SMCore, eng, cfg, occ, tables, units, unit_names, wall, spec) -> TimingOutcome:
    mem, smem, tma, mbar, tc = units
    cycles = core.end_cycle
    issued = core.issued
    st = Stats()
    stall = core.stall
    stall[S.SELECTED] = issued
    ratios = {n: (stall[k] / issued if issued else 0.0) for k, n in enumerate(S.STALL_NAMES)}
    sm_active = sum(core.sm_active_cycles)
    occ_pct = 100.0 * core.warp_resident_cycles / (sm_active * cfg.max_warps_per_sm) if sm_active else 0.0
    # the memory model's declared counters (components/interfaces.py MemoryModel)
    dram_r, dram_w = mem.dram_read_bytes, mem.dram_write_bytes
    l2b = mem.l2_read_bytes + mem.l2_write_bytes
    # the tensor variant's dense FP16 peak; the mma_sync-only variant (rtx5090) declares none: no utilisation (None)
    tcs = _typed(spec).tensor_core
    peak = tcs.dense_fp16_peak()
    tensor_util = None
    if peak:
        # busy cycles: mma.sync FLOPs at the FP16 peak, wgmma / tcgen05 FLOPs at their type's rate (an FP8 op of
        # the same FLOPs takes half the service; h200_wgmma_dtype_2026-12-04)
        busy = core.mma_flops / peak + sum(f / getattr(tcs, f"dense_{c}_flop_per_cycle_per_sm", peak)
                                           for c, f in zip(C.TC_RATE_CLASSES, core.async_flops_by_class) if f)
        tensor_util = round(100.0 * busy / (cfg.n_sms * cycles), 3) if cycles else 0.0
    metrics = {
        "cycles": int(cycles),
        "warp_instructions": int(issued),
        "ptx_warp_instructions": int(core.ptx_issued),
        "dram_read_bytes": int(dram_r),
        "dram_write_bytes": int(dram_w),
        "l2_bytes": int(l2b),
        "achieved_occupancy_pct": round(occ_pct, 3),
        "stall_ratios_per_issue": {k: round(v, 4) for k, v in ratios.items()},
        "tensor_utilization_pct": tensor_util,
        "timing_wall_seconds": wall,
        "ctas_per_sm": occ.ctas_per_sm,
        "occupancy_limiter": occ.limiter,
        "registers_per_thread": occ.registers_per_thread,
        "registers_source": occ.registers_source,
        "engine_events": eng.events_processed,
        "units": unit_names,
    }
    if tables.xs is not None:
        # sass.control_stalls: the stall-count cycles beyond issue that the issued SASS carry (dynamic-weighted
        # mean of max(stall, 1) - 1 per SASS issue) and those charged as wait (the rest overlapped a hold)
        metrics["control_stalls"] = {"scheduled_per_issue": round(core.cs_sched / issued, 4) if issued else 0.0,
                                     "charged_per_issue": round(core.cs_cycles / issued, 4) if issued else 0.0}
    # stats frame: hierarchical names
    g = st.group("gpu")
    g.set("cycles", cycles)
    g.set("warp_instructions", issued)
    g.set("ptx_warp_instructions", core.ptx_issued)
    g.set("engine_events", eng.events_processed)
    g.set("wgmma_flops", core.wgmma_flops)
    g.set("mma_flops", core.mma_flops)
    g.set("global_sectors", core.global_sectors)
    g.set("shared_wavefronts", core.shared_wavefronts)
    g.set("warp_resident_cycles", core.warp_resident_cycles)
    sc = st.group("gpu.stalls")
    for k, nme in enumerate(S.STALL_NAMES):
        sc.set(nme, stall[k])
    so = st.group("gpu.ops")
    for k, nme in enumerate(OPS):
        if core.op_counts[k]:
            so.set(nme.lower(), core.op_counts[k])
    co = st.group("cta_scheduler")
    co.set("ctas_per_sm", occ.ctas_per_sm)
    co.set("registers_per_thread", occ.registers_per_thread)
    co.set("smem_per_cta_bytes", occ.smem_per_cta_bytes)
    for k, v in occ.limits.items():
        co.set(f"limit.{k}", v)
    for sm in range(cfg.n_sms):
        if core.sm_active_cycles[sm] or core.sm_issued[sm]:
            s = st.group(f"sm{sm}")
            s.set("active_cycles", core.sm_active_cycles[sm])
            s.set("end_cycle", core.sm_end[sm])
            s.set("warp_instructions", core.sm_issued[sm])
            s.set("warp_resident_cycles", core.sm_warp_cycles[sm])
    for nme, u in zip(("memory", "shared_memory", "tma", "mbarrier", "tensor_core"), units):
        d = _unit_stats(u)
        if d:
            st.add_dict(nme, {k: v for k, v in d.items() if isinstance(v, (int, float, dict))})
    return TimingOutcome(metrics, st, dict(core.clock_issue), occ, core)

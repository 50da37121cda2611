"""Instruction classes: timing ``Kind`` and functional ``Unit`` (Contract 1), and the operand-role rules
(which operands an opcode writes)."""
from __future__ import annotations

from enum import IntEnum


class Unit(IntEnum):
    INT = 0
    FP32 = 1
    FP16 = 2
    FP64 = 3
    SFU = 4
    CVT = 5
    BRANCH = 6
    MIO = 7
    LSU = 8
    TENSOR = 9
    TMA = 10
    SYNC = 11
    MISC = 12
    NONE = 13
    CVT_PACKED = 14      # float <-> float conversions of 32 bits or less: F2FP.*.PACK_AB / HADD2.F32 (not the XU)


class Kind(IntEnum):
    ALU = 0
    BRANCH = 1
    EXIT = 2
    LD_GLOBAL = 3
    ST_GLOBAL = 4
    ATOM_GLOBAL = 5
    LD_SHARED = 6
    ST_SHARED = 7
    ATOM_SHARED = 8
    LDMATRIX = 9
    STMATRIX = 10
    LD_PARAM = 11
    LD_LOCAL = 12
    ST_LOCAL = 13
    CP_ASYNC = 14
    CP_ASYNC_COMMIT = 15
    CP_ASYNC_WAIT = 16
    TMA_LOAD = 17
    TMA_STORE = 18
    BULK_COMMIT = 19
    BULK_WAIT = 20
    MBAR_INIT = 21
    MBAR_ARRIVE = 22
    MBAR_WAIT = 23
    MBAR_OTHER = 24
    BAR_SYNC = 25
    MMA_SYNC = 26
    WGMMA = 27
    WGMMA_FENCE = 28
    WGMMA_COMMIT = 29
    WGMMA_WAIT = 30
    SHFL = 31
    VOTE = 32
    CLOCK = 33
    FENCE = 34
    NOP = 35
    # ---- tcgen05 (Blackwell sm_100a, tensor memory) kinds: numbered from 64 so other additions do not collide
    TC05_MMA = 64        # tcgen05.mma (asynchronous; accumulator in TMEM)
    TC05_COMMIT = 65     # tcgen05.commit: mbarrier arrive when the thread's prior tcgen05 ops complete
    TC05_LD = 66         # tcgen05.ld: TMEM -> registers (asynchronous until tcgen05.wait::ld)
    TC05_ST = 67         # tcgen05.st: registers -> TMEM (asynchronous until tcgen05.wait::st)
    TC05_WAIT_LD = 68
    TC05_WAIT_ST = 69
    TC05_ALLOC = 70      # tcgen05.alloc (columns of the SM's TMEM)
    TC05_DEALLOC = 71
    TC05_CP = 72         # tcgen05.cp: shared memory -> TMEM (asynchronous, ordered with tcgen05.mma)
    TC05_SHIFT = 73
    TC05_OTHER = 74      # relinquish_alloc_permit, fence::before/after_thread_sync
    # ---- end tcgen05 kinds


# Multi-component mnemonics (longest match wins); everything else: the first dot component is the opcode.
MULTI_OPCODES = sorted([
    "cp.async.bulk.tensor", "cp.async.bulk.commit_group", "cp.async.bulk.wait_group",
    "cp.async.bulk.prefetch.tensor", "cp.async.bulk.prefetch", "cp.async.bulk", "cp.async.commit_group",
    "cp.async.wait_group", "cp.async.wait_all", "cp.async.mbarrier.arrive", "cp.async", "cp.reduce.async.bulk",
    "wgmma.mma_async", "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group",
    "mbarrier.init", "mbarrier.arrive_drop", "mbarrier.arrive", "mbarrier.expect_tx", "mbarrier.complete_tx",
    "mbarrier.try_wait", "mbarrier.test_wait", "mbarrier.inval", "mbarrier.pending_count",
    "barrier.cluster.arrive", "barrier.cluster.wait", "barrier.sync", "barrier.arrive", "barrier.red",
    "bar.sync", "bar.arrive", "bar.red", "bar.warp.sync",
    "shfl.sync", "vote.sync", "elect.sync", "redux.sync", "match.sync", "fence.proxy",
], key=len, reverse=True)

# ---- tcgen05 (Blackwell) mnemonics: one opcode per sub-instruction (begin tcgen05 block)
TCGEN05_OPCODES = ("tcgen05.alloc", "tcgen05.dealloc", "tcgen05.relinquish_alloc_permit", "tcgen05.mma",
                   "tcgen05.commit", "tcgen05.ld", "tcgen05.st", "tcgen05.wait::ld", "tcgen05.wait::st",
                   "tcgen05.cp", "tcgen05.shift", "tcgen05.fence::before_thread_sync",
                   "tcgen05.fence::after_thread_sync")
MULTI_OPCODES = sorted(MULTI_OPCODES + list(TCGEN05_OPCODES), key=len, reverse=True)
# ---- end tcgen05 block

# opcodes whose first operand is NOT a destination
NO_DST = {
    "st", "red", "cp.async", "cp.async.bulk", "cp.async.bulk.tensor", "cp.async.commit_group",
    "cp.async.wait_group", "cp.async.wait_all", "cp.async.bulk.commit_group", "cp.async.bulk.wait_group",
    "cp.async.bulk.prefetch.tensor", "cp.async.bulk.prefetch", "cp.reduce.async.bulk", "cp.async.mbarrier.arrive",
    "mbarrier.init", "mbarrier.inval", "mbarrier.expect_tx", "mbarrier.complete_tx",
    "bar.sync", "bar.arrive", "bar.red", "bar.warp.sync", "barrier.sync", "barrier.arrive", "barrier.red",
    "barrier.cluster.arrive", "barrier.cluster.wait", "bra", "brx", "ret", "exit", "trap", "stmatrix",
    "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group", "fence", "fence.proxy", "membar", "prefetch",
    "prefetchu", "nop", "brkpt", "pmevent", "griddepcontrol", "setmaxnreg", "call",
}
NO_DST |= {o for o in TCGEN05_OPCODES if o != "tcgen05.ld"}   # tcgen05 block: only tcgen05.ld writes registers

_INT_TYPES = {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "b8", "b16", "b32", "b64", "pred"}


def classify(opcode: str, mods: tuple[str, ...]) -> tuple[Kind, Unit]:
    """Timing class of an instruction."""
    m = set(mods)
    if opcode.startswith("tcgen05."):   # tcgen05 block
        return _TC05_KIND.get(opcode, (Kind.TC05_OTHER, Unit.TENSOR))
    if "f32x2" in m and opcode in ("add", "sub", "mul", "fma"):   # packed f32 (sm_100+): the FMA pipe
        return Kind.ALU, Unit.FP32
    if opcode in ("ld", "ldu"):
        if "shared" in m or "shared::cta" in m or "shared::cluster" in m:
            return Kind.LD_SHARED, Unit.MIO
        if "param" in m:
            return Kind.LD_PARAM, Unit.LSU
        if "local" in m:
            return Kind.LD_LOCAL, Unit.LSU
        return Kind.LD_GLOBAL, Unit.LSU
    if opcode == "st":
        if "shared" in m or "shared::cta" in m or "shared::cluster" in m:
            return Kind.ST_SHARED, Unit.MIO
        if "local" in m:
            return Kind.ST_LOCAL, Unit.LSU
        return Kind.ST_GLOBAL, Unit.LSU
    if opcode in ("atom", "red"):
        if "shared" in m or "shared::cta" in m or "shared::cluster" in m:
            return Kind.ATOM_SHARED, Unit.MIO
        return Kind.ATOM_GLOBAL, Unit.LSU
    if opcode == "ldmatrix":
        return Kind.LDMATRIX, Unit.MIO
    if opcode == "stmatrix":
        return Kind.STMATRIX, Unit.MIO
    if opcode == "cp.async":
        return Kind.CP_ASYNC, Unit.LSU
    if opcode == "cp.async.commit_group":
        return Kind.CP_ASYNC_COMMIT, Unit.NONE
    if opcode in ("cp.async.wait_group", "cp.async.wait_all"):
        return Kind.CP_ASYNC_WAIT, Unit.SYNC
    if opcode in ("cp.async.bulk.tensor", "cp.async.bulk", "cp.reduce.async.bulk"):
        store = False
        if opcode == "cp.async.bulk.tensor":
            store = len(mods) > 1 and mods[1] == "global"
        elif opcode == "cp.async.bulk":
            store = len(mods) > 0 and mods[0] == "global"
        if opcode == "cp.reduce.async.bulk":
            store = True
        return (Kind.TMA_STORE if store else Kind.TMA_LOAD), Unit.TMA
    if opcode in ("cp.async.bulk.prefetch", "cp.async.bulk.prefetch.tensor"):
        return Kind.NOP, Unit.TMA
    if opcode == "cp.async.bulk.commit_group":
        return Kind.BULK_COMMIT, Unit.NONE
    if opcode == "cp.async.bulk.wait_group":
        return Kind.BULK_WAIT, Unit.SYNC
    if opcode == "mbarrier.init":
        return Kind.MBAR_INIT, Unit.SYNC
    if opcode in ("mbarrier.arrive", "mbarrier.arrive_drop", "cp.async.mbarrier.arrive"):
        return Kind.MBAR_ARRIVE, Unit.SYNC
    if opcode in ("mbarrier.try_wait", "mbarrier.test_wait"):
        return Kind.MBAR_WAIT, Unit.SYNC
    if opcode.startswith("mbarrier."):
        return Kind.MBAR_OTHER, Unit.SYNC
    if opcode in ("bar.sync", "barrier.sync", "bar.red", "barrier.red", "bar.arrive", "barrier.arrive",
                  "barrier.cluster.arrive", "barrier.cluster.wait"):
        return Kind.BAR_SYNC, Unit.SYNC
    if opcode == "bar.warp.sync":
        return Kind.NOP, Unit.NONE
    if opcode == "mma":
        return Kind.MMA_SYNC, Unit.TENSOR
    if opcode == "wgmma.mma_async":
        return Kind.WGMMA, Unit.TENSOR
    if opcode == "wgmma.fence":
        return Kind.WGMMA_FENCE, Unit.NONE
    if opcode == "wgmma.commit_group":
        return Kind.WGMMA_COMMIT, Unit.NONE
    if opcode == "wgmma.wait_group":
        return Kind.WGMMA_WAIT, Unit.SYNC
    if opcode in ("shfl.sync", "shfl"):
        return Kind.SHFL, Unit.MIO
    if opcode in ("vote.sync", "vote", "match.sync", "redux.sync", "elect.sync"):
        return Kind.VOTE, Unit.INT
    if opcode in ("bra", "brx", "call"):
        return Kind.BRANCH, Unit.BRANCH
    if opcode in ("ret", "exit", "trap"):
        return Kind.EXIT, Unit.BRANCH
    if opcode in ("fence", "fence.proxy", "membar"):
        return Kind.FENCE, Unit.SYNC
    if opcode == "tensormap":  # replace: one descriptor field write; cp_fenceproxy: copy + proxy fence
        if mods and mods[0] == "cp_fenceproxy":
            return Kind.FENCE, Unit.SYNC
        return Kind.ALU, Unit.INT
    if opcode == "mapa":
        return Kind.ALU, Unit.INT
    if opcode in ("nop", "prefetch", "prefetchu", "pmevent", "griddepcontrol", "setmaxnreg", "brkpt"):
        return Kind.NOP, Unit.NONE
    # ALU
    types = [x for x in mods if x in _FLOAT_T or x in _INT_TYPES or x in ("f16x2", "bf16x2", "e4m3x2", "e5m2x2")]
    if opcode in ("ex2", "lg2", "rcp", "sqrt", "rsqrt", "sin", "cos", "tanh"):
        if "f64" in types:
            return Kind.ALU, Unit.FP64
        return Kind.ALU, Unit.SFU
    if opcode == "div" and any(t in _FLOAT_T for t in types):
        return Kind.ALU, Unit.FP64 if "f64" in types else Unit.SFU
    if opcode == "cvt" or opcode == "cvta":
        if opcode == "cvt" and _packed_cvt(mods):
            return Kind.ALU, Unit.CVT_PACKED
        return Kind.ALU, (Unit.CVT if opcode == "cvt" else Unit.INT)
    if "f64" in types:
        return Kind.ALU, Unit.FP64
    if opcode in _F32_ON_ALU and types and all(t == "f32" for t in types):
        # FMNMX / FSETP run on the ALU pipe at half the FMA rate (microbench alu_latency: 0.51 SM cycles per
        # FMNMX at 32 warps against FADD's 0.26; an FSETP + SEL pair 1.01), with the 4-cycle latency of both
        return Kind.ALU, Unit.INT
    if any(t in ("f16", "bf16", "f16x2", "bf16x2") for t in types) and opcode not in ("mov", "ld", "st"):
        return Kind.ALU, Unit.FP16
    if "f32" in types and opcode not in ("mov",):
        return Kind.ALU, Unit.FP32
    return Kind.ALU, Unit.INT


# ---- tcgen05 block: timing class of each tcgen05 mnemonic
_TC05_KIND = {
    "tcgen05.mma": (Kind.TC05_MMA, Unit.TENSOR), "tcgen05.commit": (Kind.TC05_COMMIT, Unit.TENSOR),
    "tcgen05.ld": (Kind.TC05_LD, Unit.TENSOR), "tcgen05.st": (Kind.TC05_ST, Unit.TENSOR),
    "tcgen05.wait::ld": (Kind.TC05_WAIT_LD, Unit.SYNC), "tcgen05.wait::st": (Kind.TC05_WAIT_ST, Unit.SYNC),
    "tcgen05.alloc": (Kind.TC05_ALLOC, Unit.TENSOR), "tcgen05.dealloc": (Kind.TC05_DEALLOC, Unit.TENSOR),
    "tcgen05.cp": (Kind.TC05_CP, Unit.TENSOR), "tcgen05.shift": (Kind.TC05_SHIFT, Unit.TENSOR),
}
# ---- end tcgen05 block

_FLOAT_T = {"f16", "bf16", "f32", "f64", "tf32", "e4m3", "e5m2"}
#: float types of 32 bits or less that ptxas converts between on the FMA / ALU pipes (sm_90a: cvt.rn.f16x2.f32 and
#: cvt.rn.bf16x2.f32 -> F2FP.*.F32.PACK_AB, cvt.f32.f16 -> HADD2.F32, cvt.f32.bf16 -> a shift; the FP8 packs
#: likewise), fixed-latency instructions, unlike F2I / I2F / F2F.F64 on the conversion unit
_PACKED_CVT_T = {"f32", "f16", "bf16", "f16x2", "bf16x2", "e4m3x2", "e5m2x2", "e2m1x2", "e2m3x2", "e3m2x2"}
_CVT_INT_ROUNDING = {"rni", "rzi", "rmi", "rpi"}
#: f32 opcodes that ptxas issues on the ALU pipe (FMNMX, FSETP, FSET), not the FMA pipe
_F32_ON_ALU = frozenset({"max", "min", "setp", "set"})


def _packed_cvt(mods) -> bool:
    """A cvt between two float types of 32 bits or less, not rounding to an integral value (microbench
    alu_latency: an f32 -> f16 -> f32 pair takes 10.3 cycles on the H200, 5 per conversion)."""
    types = [m for m in mods if m in _PACKED_CVT_T or m in _FLOAT_T or m in _INT_TYPES]
    return (len(types) >= 2 and all(t in _PACKED_CVT_T for t in types)
            and not any(m in _CVT_INT_ROUNDING for m in mods))


# Every PTX base mnemonic (PTX ISA 8.7 instruction list); anything else is a parse error.
KNOWN_OPCODES = set(MULTI_OPCODES) | {
    "abs", "activemask", "add", "addc", "alloca", "and", "applypriority", "atom", "bar", "barrier", "bfe", "bfi",
    "bfind", "bmsk", "bra", "brev", "brkpt", "brx", "call", "clz", "cnot", "copysign", "cos", "cp", "createpolicy",
    "cvt", "cvta", "discard", "div", "dp2a", "dp4a", "elect", "ex2", "exit", "fence", "fma", "fns", "getctarank",
    "griddepcontrol", "isspacep", "istypeof", "ld", "ldmatrix", "ldu", "lg2", "lop3", "mad", "mad24", "madc",
    "mapa", "match", "max", "mbarrier", "membar", "min", "mma", "mov", "movmatrix", "mul", "mul24",
    "multimem", "nanosleep", "neg", "not", "or", "pmevent", "popc", "prefetch", "prefetchu", "prmt", "rcp", "red",
    "redux", "rem", "ret", "rsqrt", "sad", "selp", "set", "setmaxnreg", "setp", "shf", "shfl", "shl", "shr", "sin",
    "slct", "sqrt", "st", "stackrestore", "stacksave", "stmatrix", "sub", "subc", "suld", "suq", "sured", "sust",
    "szext", "tanh", "tcgen05", "tensormap", "testp", "tex", "tld4", "trap", "txq", "vabsdiff", "vabsdiff2",
    "vabsdiff4", "vadd", "vadd2", "vadd4", "vavrg2", "vavrg4", "vmad", "vmax", "vmax2", "vmax4", "vmin", "vmin2",
    "vmin4", "vote", "vset", "vset2", "vset4", "vshl", "vshr", "vsub", "vsub2", "vsub4", "wgmma", "wmma", "xor",
    "nop", "clusterlaunchcontrol", "st.async", "red.async", "cp.async.bulk.tensor", "ex2",
}

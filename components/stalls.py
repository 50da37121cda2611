"""Warp stall reasons, with Nsight Compute's names (``smsp__average_warp_latency_issue_stalled_<name>``).

Nsight Compute samples, per warp scheduler and cycle, the state of a resident warp: ``selected`` if it issues,
else one stall reason (Kernel Profiling Guide, "Warp Scheduler States" / "Statistical Sampler",
https://docs.nvidia.com/nsight-compute/ProfilingGuide/index.html; NVIDIA's G. Smith on what they mean:
https://stackoverflow.com/questions/66625537 (wait), https://stackoverflow.com/questions/66123750 (short / long
scoreboard), https://stackoverflow.com/questions/66233462 (MIO vs LG throttle, math pipe throttle); NVIDIA's answer on HGMMA
stalls, https://forums.developer.nvidia.com/t/318492: WARPGROUP.ARRIVE stalls are ``gmma``, WARPGROUP.DEPBAR
stalls ``barrier``):

====================  ==========================================================  ===================================
reason                Nsight Compute definition                                   the model charges it (sm_core.py)
====================  ==========================================================  ===================================
selected              the warp issued this cycle                                  each issue slot
not_selected          eligible, but the scheduler picked another warp             ready; the slot is taken by another
                                                                                  warp (other bundles, own bundle)
wait                  fixed-latency dependency: the compile-time stall count of   register from a fixed-latency op not
                      the previous instruction (~4-6 cycles for ALU/FMA ops;      ready; the warp's own occupancy of a
                      ptxas also adds it between back-to-back instructions on a   fixed-latency pipe (FMA, ALU, FP16,
                      pipe that takes a warp every other cycle)                   FP64, tensor) and mma.sync interval
math_pipe_throttle    the warp's next instruction's math pipe (FMA, ALU, FP16,    pipe held by *another* warp beyond
                      FP64, tensor) is busy -- input FIFO full -- not "any pipe   the issue slot; wgmma queue full
                      busy"; a warp's own back-to-back use is ``wait``
mio_throttle          the MIO instruction queue is full (shared memory,           MIO / SFU / uniform pipe held by
                      special math (MUFU), shuffles, dynamic branches)            another warp
lg_throttle           the local/global (L1TEX) instruction queue is full          LSU pipe held by another warp
short_scoreboard      scoreboard dependency on an MIO result (shared memory,      register from ld.shared, shfl, MUFU
                      MUFU, shuffles; stays inside the SM)                        cvt, mbarrier ops
long_scoreboard       scoreboard dependency on an L1TEX result (global, local,    register from ld.global / local;
                      surface, texture; leaves the SM)                            cp.async / bulk waits
barrier               waiting at a CTA barrier for its sibling warps; also       bar.sync / barrier.cluster;
                      WARPGROUP.DEPBAR, the wait for a warpgroup's HGMMAs to      wgmma.wait_group until the ops
                      complete (wgmma.wait_group, ptxas-serialised wgmma)         complete; serialised wgmma
membar                waiting on a memory barrier                                 MEMBAR.ALL.GPU (.gpu fences)
gmma                  WARPGROUP.ARRIVE: waiting for all warps of the warpgroup    wait_group parked until the
                      to be ready to issue the HGMMA                             warpgroup's last warp issues
branch_resolving      waiting for a branch target / predicate to be computed     taken branch
drain                 after EXIT, waiting for memory stores to drain              EXIT until stores acknowledged
no_instruction        no instruction fetched (i-cache miss, after a branch)       warp launch only
sleeping              nanosleep / suspended mbarrier.try_wait                     --
dispatch_stall        selected but the dispatcher held it back (conflicts)       not modelled: 0
imc_miss              immediate constant cache miss                               not modelled: 0
tex_throttle          texture queue full                                          not modelled: 0
misc                  anything else                                               cbu pipe, unknown waits
====================  ==========================================================  ===================================

The SM core keeps one integer counter per reason. A bundle of m warps (issuing c slots each, c*k per
sub-partition) is charged per warp: from the end of *its own* issue (c after the bundle's) to its next issue,
in the order hold reason -> register wait -> own-pipe wait -> pipe throttle -> not_selected. Ratios per issued
instruction are ``counter / issued`` (so ``selected`` = 1.0 and the ratios sum to resident warp-cycles / issues).
"""
from __future__ import annotations

__all__ = ["STALL_NAMES", "STALL_INDEX", "NREASONS"] + [
    "BARRIER", "BRANCH_RESOLVING", "DISPATCH_STALL", "DRAIN", "GMMA", "IMC_MISS", "LG_THROTTLE",
    "LONG_SCOREBOARD", "MATH_PIPE_THROTTLE", "MEMBAR", "MIO_THROTTLE", "MISC", "NO_INSTRUCTION", "NOT_SELECTED",
    "SELECTED", "SHORT_SCOREBOARD", "SLEEPING", "TEX_THROTTLE", "WAIT", "NONE",
]

#: order fixed (indices are used on the hot path); sorted by name like measured.json
STALL_NAMES: tuple[str, ...] = (
    "barrier",            # bar.sync: waiting for the other warps of the CTA
    "branch_resolving",   # after a branch, until its target is known
    "dispatch_stall",     # dispatcher could not dispatch (pipeline conflict) -- not modelled: 0
    "drain",              # after EXIT, waiting for outstanding stores to be acknowledged
    "gmma",               # wgmma.wait_group: waiting for warpgroup MMAs
    "imc_miss",           # immediate-constant cache miss -- not modelled: 0
    "lg_throttle",        # local/global (LSU) instruction queue full
    "long_scoreboard",    # waiting on an L1TEX result: global/local loads, cp.async / mbarrier (SYNCS) waits
    "math_pipe_throttle", # the math pipe of the instruction is held by another warp (initiation interval)
    "membar",             # memory barrier / fence waiting for outstanding memory operations
    "mio_throttle",       # MIO instruction queue (shared memory, shuffles, MUFU, special registers) full
    "misc",               # anything else
    "no_instruction",     # instruction fetch / cache miss -- charged at warp launch only
    "not_selected",       # ready, but another warp of the sub-partition issued
    "selected",           # issued (1 per issue slot)
    "short_scoreboard",   # waiting on an MIO result: shared memory, SFU (MUFU), shuffles
    "sleeping",           # mbarrier.try_wait with a suspend hint / nanosleep
    "tex_throttle",       # texture queue full -- not modelled: 0
    "wait",               # fixed-latency dependency / own pipe reuse (the SASS control-code stall count)
)
STALL_INDEX = {n: i for i, n in enumerate(STALL_NAMES)}
NREASONS = len(STALL_NAMES)

BARRIER = STALL_INDEX["barrier"]
BRANCH_RESOLVING = STALL_INDEX["branch_resolving"]
DISPATCH_STALL = STALL_INDEX["dispatch_stall"]
DRAIN = STALL_INDEX["drain"]
GMMA = STALL_INDEX["gmma"]
IMC_MISS = STALL_INDEX["imc_miss"]
LG_THROTTLE = STALL_INDEX["lg_throttle"]
LONG_SCOREBOARD = STALL_INDEX["long_scoreboard"]
MATH_PIPE_THROTTLE = STALL_INDEX["math_pipe_throttle"]
MEMBAR = STALL_INDEX["membar"]
MIO_THROTTLE = STALL_INDEX["mio_throttle"]
MISC = STALL_INDEX["misc"]
NO_INSTRUCTION = STALL_INDEX["no_instruction"]
NOT_SELECTED = STALL_INDEX["not_selected"]
SELECTED = STALL_INDEX["selected"]
SHORT_SCOREBOARD = STALL_INDEX["short_scoreboard"]
SLEEPING = STALL_INDEX["sleeping"]
TEX_THROTTLE = STALL_INDEX["tex_throttle"]
WAIT = STALL_INDEX["wait"]
#: "no reason" placeholder for a register that is ready (never charged: its interval is always empty)
NONE = WAIT

"""Warp stall reasons, with Nsight Compute's names (``smsp__average_warp_latency_issue_stalled_<name>``).

The SM core (components/sm_core.py) keeps one integer counter per reason: for every cycle a resident warp does
not issue, exactly one reason is charged (Accel-Sim / Nsight Compute style, design-anchors.md); for every
cycle it issues, ``selected``. Ratios per issued instruction are ``counter / issued`` (so ``selected`` = 1.0 and
the ratios sum to resident warp-cycles / issues).
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
    "math_pipe_throttle", # the math pipe of the instruction is busy (initiation interval)
    "membar",             # memory barrier / fence waiting for outstanding memory operations
    "mio_throttle",       # MIO instruction queue (shared memory, shuffles, special registers) full
    "misc",               # anything else
    "no_instruction",     # instruction fetch / cache miss -- charged at warp launch only
    "not_selected",       # ready, but another warp of the sub-partition issued
    "selected",           # issued (1 per issue slot)
    "short_scoreboard",   # waiting on an MIO result: shared memory, SFU (MUFU), shuffles
    "sleeping",           # mbarrier.try_wait with a suspend hint / nanosleep
    "tex_throttle",       # texture queue full -- not modelled: 0
    "wait",               # fixed-latency dependency (the SASS control-code stall count)
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

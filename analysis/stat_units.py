"""Units and descriptions of the statistics in ``RunResult.stats`` (rows ``component, stat, value``).

``describe(component, stat) -> (unit, description)``; ``annotate(frame)`` adds ``unit`` and ``description``
columns (``warpgraph run --out DIR`` writes them into ``stats.csv`` / ``stats.parquet``). Names are matched
exactly first (``memory/dram_read_bytes``), then by component family (``smN`` for ``sm17``), then by the stat's
suffix (``*_cycles`` -> cycles, ``*_bytes`` -> bytes): a stat nobody described still gets its unit.
"""
from __future__ import annotations

import re

__all__ = ["describe", "annotate", "STAT_DESCRIPTIONS"]

#: (component family, stat) -> (unit, description). Family: the component name with digits replaced by N.
STAT_DESCRIPTIONS: dict[tuple[str, str], tuple[str, str]] = {
    ("gpu", "cycles"): ("cycles", "kernel duration: launch to last CTA retired, in SM clock cycles"),
    ("gpu", "engine_events"): ("events", "events the shared clock processed (simulator work, not hardware)"),
    ("gpu", "global_sectors"): ("sectors", "32-byte global-memory sectors requested by the SMs"),
    ("gpu", "mma_flops"): ("FLOP", "floating-point operations of mma.sync instructions"),
    ("gpu", "wgmma_flops"): ("FLOP", "floating-point operations of wgmma (warpgroup MMA) instructions"),
    ("gpu", "ptx_warp_instructions"): ("warp instructions", "PTX instructions executed, counted per warp"),
    ("gpu", "warp_instructions"): ("warp instructions", "SASS-equivalent instructions issued, per warp"),
    ("gpu", "shared_wavefronts"): ("wavefronts", "shared-memory wavefronts (bank-conflict passes)"),
    ("gpu", "warp_resident_cycles"): ("warp-cycles", "sum over warps of the cycles each was resident on an SM"),
    ("cta_scheduler", "ctas_per_sm"): ("CTAs", "CTAs resident per SM at once (occupancy limit)"),
    ("cta_scheduler", "registers_per_thread"): ("registers", "registers per thread used for occupancy"),
    ("cta_scheduler", "smem_per_cta_bytes"): ("bytes", "shared memory per CTA used for occupancy"),
    ("mbarrier", "barriers"): ("count", "mbarrier objects initialised"),
    ("mbarrier", "phases"): ("count", "mbarrier phases completed"),
    ("mbarrier", "polls"): ("count", "mbarrier try_wait / test_wait polls"),
    ("mbarrier", "waits"): ("count", "mbarrier waits"),
    ("mbarrier", "wait_cycles"): ("cycles", "cycles warps spent waiting on mbarrier phases"),
    ("memory", "dram_read_bytes"): ("bytes", "bytes read from DRAM (HBM)"),
    ("memory", "dram_write_bytes"): ("bytes", "bytes written to DRAM (HBM)"),
    ("memory", "l2_bytes"): ("bytes", "bytes moved between the SMs and L2 (reads + writes)"),
    ("memory", "l2_read_bytes"): ("bytes", "bytes read from L2 by the SMs"),
    ("memory", "l2_write_bytes"): ("bytes", "bytes written to L2 by the SMs"),
    ("memory", "l2_merged_bytes"): ("bytes", "L2 read bytes served by a lookup another SM already made"),
    ("memory", "far_lines"): ("lines", "L2 lines served by the far L2 partition"),
    ("memory", "near_lines"): ("lines", "L2 lines served by the near L2 partition"),
    ("memory", "requests"): ("requests", "memory requests that reached the L2"),
    ("memory", "mshr_stall_cycles"): ("cycles", "cycles requests waited for a free miss-status register"),
    ("memory", "hbm.channels_per_partition"): ("channels", "HBM channels per L2 partition"),
    ("memory", "l2.slices_per_partition"): ("slices", "L2 slices per partition"),
    ("run", "wall_seconds"): ("s", "host wall time of the whole simulation"),
    ("run", "functional_wall_seconds"): ("s", "host wall time of the functional (trace) pass"),
    ("shared_memory", "accesses"): ("count", "shared-memory instructions"),
    ("shared_memory", "bytes"): ("bytes", "bytes moved to/from shared memory"),
    ("shared_memory", "queue_cycles"): ("cycles", "cycles shared-memory requests waited for the banks"),
    ("shared_memory", "wavefronts"): ("wavefronts", "shared-memory wavefronts (bank-conflict passes)"),
    ("smN", "active_cycles"): ("cycles", "cycles this SM had at least one resident CTA"),
    ("smN", "end_cycle"): ("cycles", "cycle the last CTA of this SM retired"),
    ("smN", "warp_instructions"): ("warp instructions", "instructions this SM issued, per warp"),
    ("smN", "warp_resident_cycles"): ("warp-cycles", "sum over this SM's warps of their resident cycles"),
    ("tensor_core", "async.count"): ("count", "asynchronous (wgmma) tensor operations"),
    ("tensor_core", "async.flops"): ("FLOP", "floating-point operations of asynchronous tensor operations"),
    ("tensor_core", "async.rf_bytes"): ("bytes", "register-file operand bytes read by wgmma"),
    ("tensor_core", "mma_sync.count"): ("count", "mma.sync operations"),
    ("tensor_core", "mma_sync.flops"): ("FLOP", "floating-point operations of mma.sync"),
    ("tma", "bytes_loaded"): ("bytes", "bytes the TMA units loaded (global -> shared)"),
    ("tma", "bytes_stored"): ("bytes", "bytes the TMA units stored (shared -> global)"),
    ("tma", "loads"): ("count", "TMA load operations"),
    ("tma", "stores"): ("count", "TMA store operations"),
    ("tma", "merged_bytes"): ("bytes", "TMA load bytes served by another SM's L2 lookup"),
    ("tma", "admission_stall_cycles"): ("cycles", "cycles TMA copies waited for an admission slot"),
    ("tma", "generator_busy_cycles"): ("cycles", "cycles the TMA request generators were busy"),
}

_FAMILY_DESC = {
    "gpu.ops": ("warp instructions", "dynamic warp instructions of operation class {stat}"),
    "gpu.stalls": ("warp-cycles", "warp-cycles charged to stall reason {stat} (Nsight Compute name; "
                                  "'selected' = issuing)"),
    "cta_scheduler": ("CTAs", "CTAs per SM allowed by the {stat} limit"),
}

_SUFFIX_UNITS = (("_seconds", "s"), ("_cycles", "cycles"), ("cycles", "cycles"), ("end_cycle", "cycles"),
                 ("_bytes", "bytes"), ("bytes", "bytes"), ("flops", "FLOP"), ("_pct", "%"), ("count", "count"),
                 ("_lines", "lines"), ("_sectors", "sectors"))

_DIGITS = re.compile(r"\d+")


def _family(component: str) -> str:
    return _DIGITS.sub("N", component)


def describe(component: str, stat: str) -> tuple[str, str]:
    """``(unit, description)`` of one stat row; unknown names get a unit from their suffix and an empty
    description."""
    fam = _family(component)
    for key in ((component, stat), (fam, stat), (fam, _DIGITS.sub("N", stat))):
        if key in STAT_DESCRIPTIONS:
            return STAT_DESCRIPTIONS[key]
    base = stat.rsplit(".", 1)
    acc = base[-1] if len(base) == 2 and base[-1] in ("count", "sum", "mean", "min", "max") else None
    if acc in ("count",):
        return "count", f"number of samples of {base[0]}"
    if fam in ("gpu.ops", "gpu.stalls"):
        unit, text = _FAMILY_DESC[fam]
        return unit, text.format(stat=stat)
    if fam == "cta_scheduler" and stat.startswith("limit."):
        unit, text = _FAMILY_DESC[fam]
        return unit, text.format(stat=stat.removeprefix("limit."))
    name = base[0] if acc else stat
    for suf, unit in _SUFFIX_UNITS:
        if name.endswith(suf):
            return unit, (f"{acc} of {base[0]}" if acc else "")
    return "", (f"{acc} of {base[0]}" if acc else "")


def annotate(frame):
    """A copy of a stats frame (``component, stat, value``) with ``unit`` and ``description`` columns."""
    out = frame.copy()
    pairs = [describe(c, s) for c, s in zip(out["component"], out["stat"])]
    out["unit"] = [u for u, _ in pairs]
    out["description"] = [d for _, d in pairs]
    return out

"""Units and descriptions of the statistics in ``RunResult.stats`` (rows ``component, stat, value``) and of the
metrics in ``RunResult.metrics``.

``describe(component, stat) -> (unit, description)``; ``annotate(frame)`` adds ``unit`` and ``description``
columns (``warpgraph run --out DIR`` writes them into ``stats.csv`` / ``stats.parquet``). Names are matched
exactly first (``memory/dram_read_bytes``), then by component family (``smN`` for ``sm17``), then by the stat's
suffix (``*_cycles`` -> cycles, ``*_bytes`` -> bytes): a stat nobody described still gets its unit.

Metric names (``metric_names()``, ``metric_unit(name)``, ``known_metric(name)``): the keys of a timing or sampled
``RunResult.metrics`` (dotted into ``stall_ratios_per_issue``, ``roofline``, ``sampling`` and ``units``) and
component statistics written ``stat:COMPONENT:STAT`` (``stat:tma:admission_stall_cycles``; a ``*`` in COMPONENT
sums over components: ``stat:sm*:active_cycles``). Exploration checks objective names against these before it
runs any trial.
"""
from __future__ import annotations

import re

__all__ = ["describe", "annotate", "STAT_DESCRIPTIONS", "METRICS", "metric_names", "metric_unit", "known_metric",
           "known_stat", "stat_value", "parse_stat_name"]

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
    ("memory", "atomic_line_queue_cycles"): ("cycles", "cycles atomics waited for their 128-B line's L2 atomic unit"),
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
    ("memory", "hbm.pN.busy_cycles"): ("cycles", "cycles HBM partition N was busy"),
    ("memory", "hbm.pN.channel_busy_cycles"): ("cycles", "sum over HBM partition N's channels of busy cycles"),
    ("memory", "l2.pN.busy_cycles"): ("cycles", "cycles L2 partition N was busy"),
    ("memory", "l2.pN.slice_busy_cycles"): ("cycles", "sum over L2 partition N's slices of busy cycles"),
    ("tensor_core", "async.busy_cycles"): ("cycles", "cycles the tensor cores were busy with wgmma"),
    ("tensor_core", "mma_sync.busy_cycles"): ("cycles", "cycles the tensor cores were busy with mma.sync"),
    ("tensor_core", "mma_sync.queue_cycles"): ("cycles", "cycles mma.sync operations waited for a tensor core"),
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
_PARTITION = re.compile(r"\.p\d+\.")


def _norm_stat(stat: str) -> str:
    """``l2.p1.busy_cycles`` -> ``l2.pN.busy_cycles`` (per-partition stats share one description)."""
    return _PARTITION.sub(".pN.", stat)


def _family(component: str) -> str:
    return _DIGITS.sub("N", component)


def _role_stat_info(component: str, stat: str):
    from warpgraph.components.interfaces import stat_info

    return stat_info(component, stat)


def describe(component: str, stat: str) -> tuple[str, str]:
    """``(unit, description)`` of one stat row; unknown names get a unit from their suffix and an empty
    description."""
    fam = _family(component)
    for key in ((component, stat), (fam, stat), (fam, _norm_stat(stat))):
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
    info = _role_stat_info(component, stat)     # the graph components' own tables (l2.p0, sm3.sp1.stalls...)
    if info is not None:
        return info
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


# --------------------------------------------------------------------------------------------- metrics
#: top-level keys of a timing / sampled ``RunResult.metrics`` -> (unit, description); "text"/"flag" are not
#: numbers (cannot be objectives); "group" holds named sub-values (``stall_ratios_per_issue.long_scoreboard``)
METRICS: dict[str, tuple[str, str]] = {
    "cycles": ("cycles", "kernel duration in SM clock cycles"),
    "warp_instructions": ("warp instructions", "SASS-equivalent instructions issued, per warp"),
    "ptx_warp_instructions": ("warp instructions", "PTX instructions executed, per warp"),
    "dram_read_bytes": ("bytes", "bytes read from DRAM"),
    "dram_write_bytes": ("bytes", "bytes written to DRAM"),
    "l2_bytes": ("bytes", "bytes between SMs and L2"),
    "l2_fabric_bytes": ("bytes", "bytes one L2 partition looks up on behalf of the other (ncu srcunit_ltcfabric)"),
    "l2_tag_bytes": ("bytes", "l2_bytes + l2_fabric_bytes: what ncu's lts__t_bytes counts"),
    "achieved_occupancy_pct": ("%", "average resident warps / maximum warps"),
    "stall_ratios_per_issue": ("group", "warp-cycles per issued instruction, by stall reason"),
    "tensor_utilization_pct": ("%", "tensor-core busy share of the peak"),
    "timing_wall_seconds": ("s", "host time of the timing pass"),
    "ctas_per_sm": ("CTAs", "CTAs resident per SM at once"),
    "occupancy_limiter": ("text", "the resource that limits CTAs per SM"),
    "registers_per_thread": ("registers", "registers per thread used for occupancy"),
    "registers_source": ("text", "where registers_per_thread came from"),
    "engine_events": ("events", "events the shared clock processed"),
    "units": ("group", "per-unit statistics (memory, shared_memory, mbarrier, tma, tensor_core)"),
    "bundles": ("count", "warp bundles replayed"),
    "bundled": ("flag", "warps of a CTA were bundled"),
    "warps_per_bundle": ("warps", "average warps per bundle"),
    "merged_subpartitions": ("flag", "sub-partitions were merged"),
    "sm_events": ("events", "SM-core events processed"),
    "window_cycles": ("cycles", "SM run-ahead window"),
    "wall_seconds": ("s", "host time of the whole simulation"),
    "functional_wall_seconds": ("s", "host time of the functional pass"),
    "trace_cache": ("text", "functional trace reused (hit), computed and stored (miss) or not cached (off)"),
    "timing_share_pct": ("%", "timing pass share of the wall time"),
    "simulated_cycles_per_second": ("cycles/s", "simulation speed"),
    "warp_instructions_per_second": ("warp instructions/s", "simulation speed"),
    "timing_warp_instructions_per_second": ("warp instructions/s", "timing-pass speed"),
    "roofline": ("group", "roofline bound of the launch (analysis/roofline.py)"),
    "sampling": ("group", "sampled mode: SMs in detail, seed, error estimate"),
    # added by explore for every design point (explore/metrics.py)
    "sram_bytes": ("bytes", "on-chip SRAM of the design point (cost proxy)"),
    "area_units": ("area units", "linear area proxy of the design point"),
}

_GROUP_UNITS = {"stall_ratios_per_issue": "warp-cycles per issue", "roofline": "", "sampling": "", "units": ""}
_ROOFLINE_UNITS = {"cycles": "cycles", "bytes": "bytes", "flops": "FLOP", "_us": "us", "_mhz": "MHz", "_pct": "%",
                   "flop_per_byte": "FLOP/byte", "intensity": "FLOP/byte"}


def _stall_names() -> tuple[str, ...]:
    from warpgraph.components.stalls import STALL_NAMES

    return STALL_NAMES


_STAT_RE = re.compile(r"^stat:([^:]+):(.+)$")


def parse_stat_name(name: str) -> tuple[str, str] | None:
    """``stat:COMPONENT:STAT`` -> ``(component pattern, stat)``; None for other names."""
    m = _STAT_RE.match(name)
    return (m.group(1), m.group(2)) if m else None


def known_stat(component: str, stat: str) -> bool:
    """Whether ``(component, stat)`` names a statistic the simulator writes (a ``*`` in ``component`` matches
    any digits / suffix: ``sm*``)."""
    fam = _family(component.replace("*", "0"))
    if (fam, stat) in STAT_DESCRIPTIONS or (fam, _norm_stat(stat)) in STAT_DESCRIPTIONS:
        return True
    if fam == "gpu.stalls":
        return stat in _stall_names()
    if fam == "gpu.ops":
        return bool(re.fullmatch(r"[a-z_0-9]+", stat))
    if fam == "cta_scheduler" and stat.startswith("limit."):
        return True
    # per-component statistics declared by the components themselves (components/interfaces.py ROLE_STATS)
    from warpgraph.components.interfaces import stat_info

    return stat_info(component.replace("*", "0"), stat) is not None


def stat_value(frame, component: str, stat: str) -> float | None:
    """The value of one statistic in a stats frame (sum over components matching a ``*`` pattern); None when
    no row matches."""
    from fnmatch import fnmatchcase

    if "*" in component:
        rows = frame[(frame["stat"] == stat) & frame["component"].map(lambda c: fnmatchcase(c, component))]
    else:
        rows = frame[(frame["stat"] == stat) & (frame["component"] == component)]
    if len(rows) == 0:
        return None
    return float(rows["value"].astype(float).sum())


def metric_names() -> list[str]:
    """Every numeric metric name an objective or constraint can use (``stat:`` names are open-ended: see
    :func:`known_metric`)."""
    out = [k for k, (u, _) in METRICS.items() if u not in ("group", "text", "flag")]
    out += [f"stall_ratios_per_issue.{s}" for s in _stall_names()]
    return out


def known_metric(name: str) -> bool:
    """Whether ``name`` is a numeric metric of a timing RunResult (or a component statistic ``stat:C:S``)."""
    st = parse_stat_name(name)
    if st is not None:
        return known_stat(*st)
    if name in METRICS:
        return METRICS[name][0] not in ("group", "text", "flag")
    head, _, rest = name.partition(".")
    if head == "stall_ratios_per_issue":
        return rest in _stall_names()
    if head in ("roofline", "sampling", "units"):
        return bool(rest)          # open-ended groups: their keys depend on the launch and the mode
    return False


def metric_unit(name: str) -> str:
    """Unit of a metric name ("" when unknown): ``cycles`` -> "cycles", ``stat:tma:bytes_loaded`` -> "bytes"."""
    st = parse_stat_name(name)
    if st is not None:
        return describe(st[0].replace("*", "0"), st[1])[0]
    if name in METRICS:
        u = METRICS[name][0]
        return "" if u in ("group", "text", "flag") else u
    head, _, rest = name.partition(".")
    if head == "stall_ratios_per_issue":
        return _GROUP_UNITS[head]
    for suf, unit in _ROOFLINE_UNITS.items():
        if rest.endswith(suf):
            return unit
    return ""

"""The interface of every role of the component graph, defined once (``typing.Protocol``) and checked when a
machine is built (runner/machine.py): a registered class that lacks part of its role's interface is a
SpecError naming role, kind, the class and what is missing — never a silent stand-in.

The timing roles are "timestamp servers" (Contract 6 of docs/design.md): a call carries the requester's cycle
``t`` and returns the cycle the work is done; they keep their mutable state in plain lists indexed by SM so that
one object models every graph node of its role (``sm17.tma`` ... are one :class:`TmaModel`), as the graph maps
them. Structural roles (``gpc``, ``cpc``) only group nodes; their interface is a description.
"""
from __future__ import annotations

import functools
from typing import Any, Protocol, runtime_checkable

from warpgraph.core.errors import SpecError

__all__ = ["ROLE_INTERFACES", "ROLE_SECTIONS", "check_interface", "interface_members", "ROLE_STATS"]


@runtime_checkable
class StructuralModel(Protocol):
    """A node that groups others (GPC, CPC): no timing of its own."""

    def describe(self) -> dict: ...


@runtime_checkable
class SmModel(Protocol):
    """The SM core: replays warp bundles through its sub-partitions and the units (components/sm_core.py)."""

    def start(self) -> None: ...
    def finished(self) -> bool: ...
    def stuck_report(self, limit: int = 20) -> str: ...


@runtime_checkable
class WarpSchedulerModel(Protocol):
    """Issue policy of a sub-partition's warp scheduler (``policy`` is the SM core's issue-order rule)."""

    policy: str


@runtime_checkable
class SubpartitionModel(Protocol):
    """One of an SM's sub-partitions: its warp scheduler and issue rate."""

    scheduler: Any
    issue_per_cycle: int


@runtime_checkable
class CtaSchedulerModel(Protocol):
    def setup(self, n_ctas: int, n_sms: int, ctas_per_sm: int, **kw): ...
    def initial(self) -> list: ...
    def on_retire(self, sm: int): ...


@runtime_checkable
class SharedMemoryModel(Protocol):
    #: ``matrix``: an ldmatrix / stmatrix, whose wavefronts are its 8x8 matrices, not bank-conflict replays
    def access(self, t: int, sm: int, wavefronts: int, nbytes: int, matrix: bool = False) -> int: ...
    def stats(self) -> dict: ...


@runtime_checkable
class MbarrierModel(Protocol):
    def init(self, key: int, count: int, t: int) -> None: ...
    def arrive(self, key: int, t: int, arrivals: int = 1, tx_bytes: int = 0) -> None: ...
    def complete_tx(self, key: int, nbytes: int, t: int) -> None: ...
    def wait(self, key: int, phase: int, t: int, op: str = "try_wait", hint=None, wake=None): ...
    def stats(self) -> dict: ...


@runtime_checkable
class TmaModel(Protocol):
    """The TMA unit of every SM (components/tma.py): front end, admission, request generator, box-load lookups."""

    #: cycles from admission to the first request of the stream (``tma.issue_latency_cycles``); the SM core's
    #: SMEM-to-SMEM bulk copy and runner/ghost_fills.py add it to the issue cycle (0: none modelled)
    lat: int
    #: per SM, the cycle its request generator is free (list indexed by SM); runner/ghost_fills.py's backlog
    gen_free: list
    #: per SM, the completion cycles of its active (admitted) transactions (list of lists indexed by SM): MEMBAR.GPU
    #: waits for the last of them (components/sm_core.py); empty lists where a kind tracks none
    active: list
    #: completion cycle of the last transaction ``issue`` booked (the SM core's multicast delivers after it)
    last_done: int
    #: whether box loads share lookups / merge into fills at all (False: runner/ghost_fills.py registers nothing)
    merge: bool
    #: whether out-of-bounds box bytes are requested from L2 (``tma.oob_reads_reach_l2``; False: in-bounds only)
    oob_l2: bool
    #: outstanding box lookups / fills (``note_fill``): key -> [window end, done, mergeable bytes, stream end,
    #: requests]; read by runner/ghost_fills.py, replayed by runner/partitioned.py
    fills: dict
    #: called ``(key, count index, t)`` when a box load shares a lookup (runner/partitioned.py sets it), or None
    on_share: Any

    def issue(self, t: int, sm: int, warp: int, nbytes: int, inb_bytes: int, dram_bytes: int, mbar_key: int,
              store: bool) -> int: ...
    #: cp.async.bulk.commit_group of ``warp`` of ``sm``: close the warp's open bulk-store group
    def bulk_commit(self, sm: int, warp: int) -> None: ...
    #: cp.async.bulk.wait_group N: the cycle at most N committed groups are pending, or None (nothing to wait for)
    def bulk_group_done(self, sm: int, warp: int, n_pending_allowed: int): ...
    #: end of a box load's request stream of ``traffic`` bytes (``dram_bytes`` missing) started at ``g0``
    def stream_end(self, g0: float, traffic: int, dram_bytes: int) -> float: ...
    #: register an outstanding lookup / fill of ``key`` in ``fills`` (stream ``g0``..``g1``, data back at ``done``)
    def note_fill(self, key: int, g0: float, g1: float, done: int, dram_bytes: int, window_end=None) -> None: ...
    def stats(self) -> dict: ...


@runtime_checkable
class TensorCoreModel(Protocol):
    def mma_sync(self, t: int, sm: int, sp: int, shape_key: str, flops: int = 0): ...
    def mma_sync_bundle(self, t: int, sm: int, sps: list, shape_key: str, flops: int = 0) -> tuple[int, int]: ...
    def wgmma(self, t, sm, wg_key, flops, smem_bytes, n, a_from_regs, dtype="f16"): ...
    def stats(self) -> dict: ...


@runtime_checkable
class MemoryModel(Protocol):
    """The global-memory path (L1 -> crossbar -> L2 slices -> HBM channels), composed of the four parts below."""

    #: cycle the last ``global_access`` is acknowledged (what MEMBAR.GPU and release atomics wait for)
    last_ack: int
    #: cycles an atomic adds to its L2 round trip, and an acquire atomic on top (0: none modelled)
    atom_extra: float
    atom_acquire: float
    #: the L2 part of a ``.gpu`` fence after the warp's last acknowledgement (0: none modelled)
    fence_gpu: float
    #: the spin-lock table (lock words held by CTAs), or None without a lock model
    locks: Any
    #: when the L2 takes an atomic request that left its SM at ``t`` (its line ``key``, busiest ``word`` in it,
    #: ``ops`` lane-operations on the line and ``same`` on the word; ``lines`` the request's lines, ``elems`` its
    #: element operations, ``returns`` whether old values are read back; components/memory.py); ``t`` when not
    #: modelled
    def atomic_perform(self, t: float, key: int, word: int, ops: int, same: int, is_float: bool,
                       ordered: bool = False, lines: int = 1, elems: int = 0, returns: bool = False) -> float: ...
    #: mean L2-hit round trip in SM cycles (components/memory.py: mean of ``l2.near_latency_cycles`` and
    #: ``l2.far_latency_cycles``) and the DRAM round trip (that + ``hbm.latency_cycles``): the TMA unit's
    #: Little's-law rate caps and its fill windows (components/tma.py)
    l2_rt: float
    dram_rt: float
    #: the TMA engine's own L2 round trip (``tma.l2_latency_cycles``), or None: TMA requests see ``l2_rt``
    tma_l2_lat: int | None
    #: lookup coalescing (``l2.coalesce_scope``): reads of the same lines share one L2 lookup (scopes gpc / gpu);
    #: reads merge into another SM's outstanding DRAM fill (every scope but none); at most ``lookup_cap`` reads
    #: per lookup (``l2.requests_per_lookup_max``; 0: no limit). Read by components/tma.py and runner/ghost_fills.py
    share_lookups: bool
    merge_fills: bool
    lookup_cap: int
    #: SMs the model serves (``sm.count``); runner/ghost_fills.py maps a CTA to its first-wave SM modulo it
    n_sm: int
    #: lookup-sharing group of each SM (list indexed by SM): its GPC under scope gpc, 0 for every SM otherwise
    gpc_of: list
    #: outstanding lookups / DRAM fills (components/memory.py ``note_fill``): key -> [window end (cycle), done
    #: (cycle), mergeable bytes, requests]; read by runner/ghost_fills.py, replayed by runner/partitioned.py
    fills: dict
    #: read bytes served by another request's lookup or fill (no slice traffic); the TMA unit adds its merged boxes
    merged_bytes: float
    #: called ``(key, count index, t)`` when a read shares a lookup (runner/partitioned.py), or None
    on_share: Any
    #: DRAM write-back bytes per stored byte (the runner sets it from the functional pass's L2 model; 1.0: all)
    write_back_ratio: float
    #: bytes read from / written to L2 by the SMs, read from DRAM and written back to it so far (runner/timing.py's
    #: l2_bytes / dram_read_bytes / dram_write_bytes metrics)
    l2_read_bytes: float
    l2_write_bytes: float
    dram_read_bytes: float
    dram_write_bytes: float

    def global_access(self, t: int, sm: int, op: str, sectors: int, dram_sectors: int, lines: int,
                      nbytes: int, warps: int = 1) -> int: ...
    def bulk(self, t: int, sm: int, l2_bytes: int, dram_bytes: int, write: bool, t_end=None) -> int: ...
    def stats(self) -> dict: ...
    #: charge stores the write-backs of their stretch of the launch's curve ``(stored sectors, write-backs at each of
    #: len - 1 equal steps)`` instead of ``write_back_ratio`` (workloads/functional/l2model.py ``write_back_curve``;
    #: ``scale``: the launch's stores per store this memory sees; ``None``: the uniform ratio)
    def set_write_back_curve(self, curve, scale: float = 1.0) -> None: ...
    #: the cycle a read of ``nbytes`` (``dram_bytes`` missing to DRAM, ``lines`` 128-B lines) requested at cycle
    #: ``t`` (streamed until ``t_end``; ``lat_all``: the TMA L2 round trip) would be back, reserving nothing
    #: (runner/ghost_fills.py)
    def fill_estimate(self, t: float, nbytes: float, dram_bytes: float, lines: int, t_end=None,
                      lat_all: int | None = None) -> float: ...
    #: register an outstanding lookup / fill of ``key`` in ``fills`` (cycles; bytes mergeable into it)
    def note_fill(self, key: int, t: float, done: float, dram_bytes: int, window_end=None) -> None: ...
    #: the GPU-wide bandwidth servers per partition, {"l2" | "fill" | "hbm": [FluidServer]} (the lists themselves:
    #: runner/sampling.py and runner/partitioned.py wrap their elements in place)
    def bandwidth_servers(self) -> dict: ...
    #: ``busy`` cycles of HBM partition ``p`` reserved at cycle ``t`` elsewhere join its load estimate
    #: (runner/partitioned.py replays other views' reservations)
    def note_hbm_load(self, p: int, t: float, busy: float) -> None: ...


@runtime_checkable
class L1Model(Protocol):
    """Per-SM L1/LSU data port and its miss-status registers."""

    bytes_per_cycle: float
    mshrs: int
    def stats(self, mem) -> dict: ...


@runtime_checkable
class CrossbarModel(Protocol):
    """Per-SM crossbar response port: ``response`` returns when the last byte of a response has passed it."""

    def response(self, sm: int, t: float, arrive: float, nbytes: int) -> float: ...
    def stats(self, mem) -> dict: ...


@runtime_checkable
class L2SliceModel(Protocol):
    """The L2 slices (near / far partitions, address hash): bandwidth servers per partition."""

    servers: list
    near_latency: int
    far_latency: int
    def split(self, sm: int, lines: int) -> tuple: ...
    def stats(self, mem) -> dict: ...


@runtime_checkable
class HbmChannelModel(Protocol):
    """The HBM channels behind the L2 partitions."""

    servers: list
    latency: int
    def stats(self, mem) -> dict: ...


@runtime_checkable
class FabricModel(Protocol):
    """SM-to-SM (distributed shared memory) traffic over the CPCs' links to the GX planes."""

    def transfer(self, t: int, src_sm: int, dst_sm: int, nbytes: int, op: str = "store") -> int: ...
    def stats(self) -> dict: ...


@runtime_checkable
class GxPlaneModel(Protocol):
    """One GX switch plane: its link capacity per CPC (0 when disabled)."""

    enabled: bool
    link_bytes_per_cycle: float


@runtime_checkable
class TmemModel(Protocol):
    """Blackwell tensor memory of each SM: column allocation and the lane-quadrant ld/st ports."""

    def alloc(self, t: int, sm: int, ncols: int, wake=None): ...
    def dealloc(self, t: int, sm: int, ncols: int) -> int: ...
    def ld(self, t: int, sm: int, quadrants, nbytes: int) -> int: ...
    def st(self, t: int, sm: int, quadrants, nbytes: int) -> int: ...
    def stats(self) -> dict: ...


ROLE_INTERFACES: dict[str, type] = {
    "gpc": StructuralModel, "cpc": StructuralModel, "sm": SmModel, "subpartition": SubpartitionModel,
    "warp_scheduler": WarpSchedulerModel, "cta_scheduler": CtaSchedulerModel, "shared_memory": SharedMemoryModel,
    "mbarrier": MbarrierModel, "tma": TmaModel, "tensor_core": TensorCoreModel, "memory": MemoryModel,
    "l1": L1Model, "xbar": CrossbarModel, "l2_slice": L2SliceModel, "hbm_channel": HbmChannelModel,
    "dsm": FabricModel, "gx_plane": GxPlaneModel, "tmem": TmemModel,
}

#: role -> the ArchSpec section holding its parameters (``kind`` selects the class)
ROLE_SECTIONS: dict[str, str] = {
    "gpc": "fabric", "cpc": "fabric", "sm": "sm", "subpartition": "subpartition",
    "warp_scheduler": "subpartition.scheduler", "cta_scheduler": "cta_scheduler", "shared_memory": "shared_memory",
    "mbarrier": "mbarrier", "tma": "tma", "tensor_core": "tensor_core", "memory": "l1, fabric, l2, hbm", "l1": "l1",
    "xbar": "fabric", "l2_slice": "l2", "hbm_channel": "hbm", "dsm": "fabric", "gx_plane": "fabric",
    "tmem": "tensor_core.tmem",
}

#: role -> statistics its model emits in ``RunResult.stats`` (group name pattern, stat -> unit, description);
#: ``{i}`` stands for an index (SM, slice, channel, plane)
ROLE_STATS: dict[str, dict[str, dict[str, tuple[str, str]]]] = {
    "sm": {"sm{i}": {"active_cycles": ("cycles", "cycles the SM had a resident CTA"),
                     "end_cycle": ("cycle", "cycle its last CTA retired"),
                     "warp_instructions": ("instructions", "SASS warp-instructions issued"),
                     "warp_resident_cycles": ("warp-cycles", "sum over cycles of resident warps")},
           "sm{i}.stalls": {"<reason>": ("warp-cycles", "cycles a warp of this SM was held for the reason "
                                         "(components/stalls.py; Nsight smsp__pcsamp reasons)")},
           "gpu.stalls": {"<reason>": ("warp-cycles", "the SMs' stall counts summed")}},
    "subpartition": {"sm{i}.sp{i}.stalls": {"<reason>": ("warp-cycles", "cycles a warp of this sub-partition (warp "
                                                         "w of a CTA sits on sub-partition w % 4) was held for "
                                                         "the reason; the sub-partitions of an SM sum to "
                                                         "sm{i}.stalls")}},
    "l1": {"l1": {"requests": ("requests", "global ld/st/atom/cp.async requests sent on to L2"),
                  "hit_lines": ("lines", "128-B lines of ld.global served by L1 (the trace's per-CTA L1 model)"),
                  "pending_hit_waits": ("requests", "ld.global L1 hits that waited for the outstanding miss of "
                                                    "another load of the same lines on the SM"),
                  "miss_sectors": ("sectors", "32-B sectors requested from L2 (L1 misses, stores, cp.async)"),
                  "mshr_stall_cycles": ("cycles", "request cycles spent waiting for a free miss-status register")}},
    "xbar": {"xbar": {"request_bytes": ("bytes", "bytes from the SMs to the L2 slices (ld/st/atom, TMA)"),
                      "response_bytes": ("bytes", "ld/atom/cp.async data through the SMs' response ports")}},
    "l2_slice": {"l2": {"read_hit_sectors": ("sectors", "read sectors served by L2"),
                        "read_miss_sectors": ("sectors", "read sectors that missed to HBM"),
                        "read_bytes": ("bytes", "bytes read at the slices (lts__t reads)"),
                        "write_bytes": ("bytes", "bytes written at the slices")},
                 "l2.p{i}": {"read_bytes": ("bytes", "bytes read at this partition's slices (ld, cp.async, "
                                            "atomics, TMA loads; the timing splits lines between partitions by "
                                            "its rotation, not by address: per-slice bytes by address are "
                                            "l2.s{i})"),
                             "write_bytes": ("bytes", "bytes written at this partition's slices (st, TMA stores)"),
                             "busy_cycles": ("cycles", "busy cycles of the partition's slice server"),
                             "slices": ("slices", "slices the partition's server aggregates")},
                 "l2.s{i}": {"read_bytes": ("bytes", "32-B sectors x 32 that the functional pass's loads, "
                                            "cp.async, atomics (once) and TMA / bulk loads request from this "
                                            "slice (line address -> slice: XOR-fold hash, l2.slice_hash_shift_bits, "
                                            "a stand-in for the unpublished hash; statistics only, the timing is "
                                            "per partition; before lookup coalescing)"),
                             "write_bytes": ("bytes", "32-B sectors x 32 that stores, TMA and bulk stores write "
                                             "at this slice (same hash)")}},
    "hbm_channel": {"hbm.p{i}": {"read_bytes": ("bytes", "DRAM bytes read through this partition's channels"),
                                 "write_bytes": ("bytes", "DRAM bytes written through this partition's channels"),
                                 "busy_cycles": ("cycles", "busy cycles of the partition's channel server"),
                                 "channels": ("channels", "enabled channels of the partition (one server per "
                                              "partition; per-channel bytes by address are hbm.c{i})")},
                    "hbm.c{i}": {"read_bytes": ("bytes", "DRAM bytes read through this channel: the sectors the "
                                                "functional L2 model (LRU, l2.reuse_capacity_bytes) misses, by "
                                                "address (hbm.channel_interleave_bytes chunks, XOR-fold hash: a "
                                                "stand-in; statistics only)"),
                                 "write_bytes": ("bytes", "DRAM bytes written through this channel: the dirty "
                                                 "sectors that model writes back (evicted while dirty), by "
                                                 "address (same hash)")}},
    "gx_plane": {"fabric.gx{i}": {"bytes": ("bytes", "DSM bytes carried by this GX plane"),
                                  "enabled": ("flag", "1 if the plane is enabled")}},
    "tma": {"tma": {"loads": ("transactions", "bulk tensor loads"), "stores": ("transactions", "bulk stores"),
                    "bytes_loaded": ("bytes", "box bytes loaded"), "bytes_stored": ("bytes", "box bytes stored"),
                    "admission_stall_cycles": ("cycles", "cycles transactions waited for admission"),
                    "generator_busy_cycles": ("cycles", "request-generator busy cycles"),
                    "merged_bytes": ("bytes", "bytes merged into another SM's outstanding L2 fill")}},
    "shared_memory": {"shared_memory": {"accesses": ("accesses", "shared-memory warp accesses"),
                                        "wavefronts": ("wavefronts", "bank wavefronts"),
                                        "bytes": ("bytes", "bytes moved"),
                                        "queue_cycles": ("cycles", "cycles accesses waited for the pipe")}},
    "mbarrier": {"mbarrier": {"waits": ("waits", "test_wait / try_wait calls"), "polls": ("polls", "re-polls"),
                              "phases": ("phases", "completed barrier phases"),
                              "wait_cycles": ("cycles", "cycles waiters were blocked"),
                              "barriers": ("barriers", "barriers initialised")}},
    "tensor_core": {"tensor_core": {"mma_sync.count": ("instructions", "mma.sync issued"),
                                    "mma_sync.flops": ("flop", "mma.sync FLOPs"),
                                    "mma_sync.busy_cycles": ("cycles", "mma.sync pipe busy cycles"),
                                    "async.count": ("instructions", "wgmma / tcgen05.mma issued"),
                                    "async.flops": ("flop", "asynchronous MMA FLOPs"),
                                    "async.busy_cycles": ("cycles", "asynchronous MMA service cycles"),
                                    # Blackwell: the TMEM behind the tensor core (role tmem, components/tmem.py)
                                    "tmem.ld.count": ("instructions", "tcgen05.ld served"),
                                    "tmem.ld.bytes": ("bytes", "bytes read from TMEM into registers"),
                                    "tmem.st.count": ("instructions", "tcgen05.st / cp / shift served"),
                                    "tmem.st.bytes": ("bytes", "bytes written to TMEM"),
                                    "tmem.allocs": ("allocations", "tcgen05.alloc calls"),
                                    "tmem.alloc_wait_cycles": ("cycles", "cycles allocations waited for free columns"),
                                    "tmem.peak_columns": ("columns", "most TMEM columns allocated at once on "
                                                          "one SM")}},
}


_GROUP_STATS: dict = {}   # group name -> its stats table (memo)


@functools.lru_cache(maxsize=None)
def _group_matcher():
    """One alternation of every ROLE_STATS group pattern (named alternatives in ROLE_STATS order: the first that
    matches wins) and the stats table of each alternative: one fullmatch per new group name instead of one per
    pattern (~1000 group names per launch: sm{i}, sm{i}.sp{i}.stalls, l2 slices...)."""
    import re

    pats = [(pat, st) for groups in ROLE_STATS.values() for pat, st in groups.items()]
    alts = [(f"g{k}", re.escape(pat).replace(r"\{i\}", r"\d+"), st) for k, (pat, st) in enumerate(pats)]
    return re.compile("|".join(f"(?P<{n}>{rx})" for n, rx, _ in alts)), {n: st for n, _, st in alts}


def stat_info(group: str, stat: str) -> tuple[str, str] | None:
    """(unit, description) of statistic ``stat`` of group ``group`` (``l2.p1``, ``sm3.stalls``), or None."""
    stats = _GROUP_STATS.get(group, False)
    if stats is False:
        rx, tables = _group_matcher()
        m = rx.fullmatch(group)
        stats = tables[m.lastgroup] if m is not None else None
        _GROUP_STATS[group] = stats
    if stats is None:
        return None
    return stats.get(stat) or stats.get("<reason>")


def interface_members(role: str) -> list[str]:
    """Attribute and method names of ``role``'s interface."""
    proto = ROLE_INTERFACES.get(role)
    if proto is None:
        return []
    names = set(getattr(proto, "__annotations__", {}))
    names |= {k for k, v in vars(proto).items() if callable(v) and not k.startswith("_")}
    return sorted(names)


def check_interface(role: str, kind: str, obj, *, location: str | None = None) -> None:
    """SpecError if ``obj`` (a class or an instance) lacks part of ``role``'s interface."""
    proto = ROLE_INTERFACES.get(role)
    if proto is None:
        from warpgraph.core.registry import known_roles

        raise SpecError(f"role {role!r} has no interface", location=location,
                        hint=f"one of: {', '.join(sorted(ROLE_INTERFACES))} (known roles: {', '.join(known_roles())})")
    members = interface_members(role)
    if isinstance(obj, type):   # a class: its methods (data members are set by the constructor)
        members = [m for m in members if callable(getattr(proto, m, None))]
    missing = [m for m in members if not hasattr(obj, m)]
    if missing:
        cls = obj if isinstance(obj, type) else type(obj)
        from warpgraph.core.registry import known_kinds

        raise SpecError(f"{role} kind {kind!r} ({cls.__module__}.{cls.__qualname__}) lacks {', '.join(missing)} "
                        f"of the {role} interface ({proto.__name__})", location=location,
                        hint=f"a complete {role} model; registered kinds: {', '.join(known_kinds(role))}")

"""The SM core: sub-partition issue, warp scheduling, register scoreboard, sync points (timestamp model).

This is the hot path of the timing pass (design.md "Execution model" step 3, performance-notes.md). It replays
each CTA's *bundles* (runner/timing.py ``BundleBuilder``: the warps of a CTA with identical pc streams, replayed
as one entity of multiplicity m; warp w sits on sub-partition w % 4; ``bundle=False`` gives one warp per
bundle, the per-warp model):

* An instruction of SASS cost c issues at the max over the bundle's sub-partitions' next-free slots and occupies
  each for ``c × (bundle warps on it)`` cycles (perfect interleave of those warps); stalls, issued instructions
  and resident cycles count per warp (× m); payloads arrive pre-aggregated (sums for memory/tensor, the elected
  warp for TMA/mbarrier); ``bar.sync`` counts m arrivals; ``wgmma`` calls the tensor unit once per warpgroup.
* **One engine event per SM and run-ahead window**: ``_run_sm`` issues from the SM's bundles in exact
  (ready time, priority) order — within an SM the order is the same as a global heap's — while the next issue
  lies within ``CoreConfig.window`` (32) cycles of the engine's next event; then it sleeps until its earliest
  bundle is ready. Across SMs, calls into the shared L2/HBM servers may therefore be out of time order by at
  most ``window`` cycles (far below the ~260-cycle minimum L2 latency); the next-free servers absorb this
  (a request is served after the reservations already made). Deterministic: the order depends only on times,
  priorities and SM ids. Unit events (TMA completion, mbarrier wake-ups, retire) stay engine events.
* Sub-partition issue port and pipes are "next-free" counters (``spst[0]`` issue slot, ``spst[p]`` pipe p);
  an instruction with SASS cost c occupies c issue slots and ``c * ii`` cycles of its pipe. While the SM's
  tensor cores serve a wgmma, its accumulator register traffic takes the share u (``tc.rf_share``) of each
  sub-partition's register-file bandwidth, and a non-tensor instruction's pipe occupancy is ``c * ii / (1-u)``
  (fractions carried per sub-partition). A warp issues mma.sync no faster than ``tc.warp_issue_gap``.
* Per-warp register scoreboard on PTX register indices: ``rr[r]`` = cycle the value is ready, ``rk[r]`` =
  the stall reason a reader charges while waiting for it (wait / long_scoreboard / short_scoreboard ...).
* Sync points: ``bar.sync`` (CTA barrier with counts), mbarrier waits (the unit says when the phase completes,
  or wakes the warp later), ``wgmma``/``cp.async``/bulk groups, all as "hold" times or pending registers.
  Pending (unknown) times are ``INF``; a warp whose next instruction needs an INF value parks until woken.
* Stall accounting (Nsight Compute definitions, components/stalls.py): when a bundle issues at ``tt``, each
  of its warps is charged from the end of its own previous issue (``c`` after the bundle's, which took
  ``c * kmax`` slots) to ``tt``, in the order hold reason (barrier, gmma, branch...) -> register wait (its
  scoreboard reason) -> ``wait`` for the warp's own use of the same fixed-latency pipe (``OWN_WAIT``: ptxas's
  stall count) -> pipe throttle for a pipe another warp holds beyond the issue slot -> not_selected.
* Control-code stalls (``StaticTables.xs``, ``--set sass.control_stalls=1``; the rule and its source:
  runner/timing.py ``control_stalls``): a warp that issued instruction i at ``tt`` with c slots issues its next
  instruction no earlier than ``tt + c + xs[i]`` (ptxas's stall counts beyond one cycle per SASS), charged as
  ``wait`` right after the hold reason and before the register wait; ``OWN_WAIT`` is then not charged (the stall
  count covers the warp's own pipe reuse) and fixed-latency results carry no latency of their own.

The core knows nothing about PTX: the runner lowers each static instruction to the integer tables of
:class:`StaticTables` (op class, SASS cost, pipe, initiation interval, latency, dependence registers...).
"""
from __future__ import annotations

from heapq import heappush
from math import ceil

from warpgraph.components.atomics import ACQUIRE, KEY_MASK, WRITE
from warpgraph.components import stalls as S
from warpgraph.components.tensor_core import DTYPE_CLASS as _TC_DTYPE_CLASS
from warpgraph.core.errors import SimulationError
from warpgraph.core.registry import register_component
from warpgraph.core.tracing import NULL_RECORDER

__all__ = ["StaticTables", "CoreConfig", "SMCore", "Group", "INF", "OPS", "PIPES", "PIPE_THROTTLE", "OWN_WAIT"]

INF = 1 << 62
_LOW40 = (1 << 40) - 1     # a global access payload's a2 below the atomics' line key (memops._atom_serial_bits)
_KEY24 = (1 << 24) - 1     # ... and that key (24 bits: a2 >> 40 is negative when its top bit is set)

# op classes (what the core switches on); the runner maps PTX Kinds to these
OPS = ("ALU", "FREE", "BRANCH", "EXIT", "LDG", "STG", "LDS", "STS", "CP_ASYNC", "CPA_COMMIT", "CPA_WAIT",
       "MBAR_INIT", "MBAR_ARRIVE", "MBAR_WAIT", "BAR", "MMA", "WGMMA", "WGMMA_COMMIT", "WGMMA_WAIT", "CLOCK",
       "FENCE", "TMA_LD", "TMA_ST", "BULK_COMMIT", "BULK_WAIT")
(OP_ALU, OP_FREE, OP_BRANCH, OP_EXIT, OP_LDG, OP_STG, OP_LDS, OP_STS, OP_CP_ASYNC, OP_CPA_COMMIT, OP_CPA_WAIT,
 OP_MBAR_INIT, OP_MBAR_ARRIVE, OP_MBAR_WAIT, OP_BAR, OP_MMA, OP_WGMMA, OP_WGMMA_COMMIT, OP_WGMMA_WAIT, OP_CLOCK,
 OP_FENCE, OP_TMA_LD, OP_TMA_ST, OP_BULK_COMMIT, OP_BULK_WAIT) = range(25)
# ---- clusters (the ops >= OP_DSM: SMCore._cluster_op): shared::cluster ld/st/atom/red, remote-capable mbarrier
# arrive, shared::cta -> shared::cluster bulk copy and TMA multicast, barrier.cluster.arrive / wait
OPS = OPS + ("DSM", "DSM_ARRIVE", "DSM_COPY", "CBAR_ARRIVE", "CBAR_WAIT")
(OP_DSM, OP_DSM_ARRIVE, OP_DSM_COPY, OP_CBAR_ARRIVE, OP_CBAR_WAIT) = range(25, len(OPS))

# ---- tcgen05 (Blackwell) op classes, appended after the others (begin tcgen05 block) ----
TC05_OPS = ("TC05_MMA", "TC05_COMMIT", "TC05_LD", "TC05_ST", "TC05_WAIT_LD", "TC05_WAIT_ST", "TC05_ALLOC",
            "TC05_DEALLOC", "TC05_CP")
OP_TC05_MMA = len(OPS)
OPS = OPS + TC05_OPS
(_, OP_TC05_COMMIT, OP_TC05_LD, OP_TC05_ST, OP_TC05_WAIT_LD, OP_TC05_WAIT_ST, OP_TC05_ALLOC, OP_TC05_DEALLOC,
 OP_TC05_CP) = range(OP_TC05_MMA, len(OPS))
# ---- global atomics (SMCore._atomg): atom / red on global memory ----
OPS = OPS + ("ATOMG",)
OP_ATOMG = len(OPS) - 1
#: operand class of a tcgen05.mma in its trace payload (a2 >> 16, workloads/functional/tcgen05_ops.DCLASS)
TC05_DTYPES = ("f16", "tf32", "e4m3", "s8")
#: the tensor core's rate classes (``tensor_core.dense_<class>_flop_per_cycle_per_sm``) and the A/B types of each
#: (components/tensor_core.py ``dtype_class``; an unlisted type is served at the FP16 rate there too)
TC_RATE_CLASSES = ("fp16", "tf32", "fp8", "int8")
_RATE_CLASS_OF = {dt: TC_RATE_CLASSES.index(c) for dt, c in _TC_DTYPE_CLASS.items() if c in TC_RATE_CLASSES}
# ---- end tcgen05 block ----
# ---- MEMBAR.ALL.GPU (fence.acq_rel at cluster/gpu/sys scope; the runner folds the implicit fence of a
# .release.cluster mbarrier.arrive and of barrier.cluster.arrive.release into those ops): SMCore._membar
OP_MEMBAR = len(OPS)
OPS = OPS + ("MEMBAR",)

#: bytes of a sector, the unit of the trace's global access sizes (workloads/functional/memops.py)
SECTOR_BYTES = 32

# pipes of a sub-partition (index 0 is the issue slot)
PIPES = ("issue", "fma", "alu", "fp16", "fp64", "sfu", "mio", "lsu", "tensor", "cbu", "uniform")
(P_ISSUE, P_FMA, P_ALU, P_FP16, P_FP64, P_SFU, P_MIO, P_LSU, P_TENSOR, P_CBU, P_UNIFORM) = range(len(PIPES))
_RFD = len(PIPES)  # index of the register-file debt slot in a sub-partition state list
#: stall reason of a warp whose next instruction's pipe is held by another warp (stalls.py: math_pipe_throttle
#: for the sub-partition's own math pipes; the SFU / XU, shared memory and uniform ops queue for the MIO)
PIPE_THROTTLE = (S.NOT_SELECTED, S.MATH_PIPE_THROTTLE, S.MATH_PIPE_THROTTLE, S.MATH_PIPE_THROTTLE,
                 S.MATH_PIPE_THROTTLE, S.MIO_THROTTLE, S.MIO_THROTTLE, S.LG_THROTTLE,
                 S.MATH_PIPE_THROTTLE, S.MISC, S.MIO_THROTTLE)
_WAIT, _NOT_SELECTED = S.WAIT, S.NOT_SELECTED    # module constants the hot loop reads (one global load each)
_SELECTED = S.SELECTED
_GMMA, _BARRIER = S.GMMA, S.BARRIER
#: fixed-latency pipes: ptxas covers a warp's own back-to-back use of them with the stall count (``wait``)
OWN_WAIT = tuple(p in (P_FMA, P_ALU, P_FP16, P_FP64, P_TENSOR) for p in range(len(PIPES)))


def _retire_groups(grp: list, nallow: int) -> int:
    """commit/wait groups (wgmma, cp.async): drop all but the newest ``nallow`` groups from ``grp`` and return
    the completion cycle the waiting warp must hold until (0 if nothing has to be waited for)."""
    if len(grp) <= nallow:
        return 0
    cut = len(grp) - nallow
    h = max(grp[:cut])
    del grp[:cut]
    return h


class StaticTables:
    """Per static instruction (index = PTX instruction index) integer tables used by the hot loop."""

    __slots__ = ("op", "cost", "pipe", "ii", "lat", "deps", "dsts", "rsn", "aux", "line", "text", "nregs",
                 "ptx_cost_rule", "xs", "order", "cax", "bper", "wgtok")

    def __init__(self, n: int, nregs: int):
        self.op = [OP_ALU] * n
        self.cost = [1] * n
        self.pipe = [P_ALU] * n
        self.ii = [1] * n
        self.lat = [4] * n
        self.deps: list[tuple[int, ...]] = [()] * n
        self.dsts: list[tuple[int, ...]] = [()] * n
        self.rsn = [S.WAIT] * n
        self.aux: list = [None] * n
        self.line = [0] * n
        self.text = [""] * n
        self.ptx_cost_rule = [""] * n
        self.nregs = nregs
        #: control-code stalls (``sass.control_stalls``, runner/timing.py): per instruction the cycles a warp waits
        #: beyond its own issue slots before its next instruction (ptxas's stall counts); None: not modelled
        self.xs: list[int] | None = None
        #: the order a warp issues each basic block in (workloads/issue_order.py: ptxas hoists global loads); None:
        #: PTX order. The runner's bundles apply it to every warp stream.
        self.order = None
        #: cycles a non-bulk cp.async adds to its completion (``l1.cp_async_ca_extra_cycles`` for .ca, else 0)
        self.cax = [0] * n
        #: per PTX branch index: how many of its taken executions one taken SASS branch stands for (runner/timing.py
        #: ``branch_periods``: U for the back edge of a loop ptxas unrolled U times; 0: no SASS branch, predicated
        #: or a fall-through); branches not listed hold their warp on every taken execution
        self.bper: dict[int, int] = {}
        #: >= 0 when ptxas serialised the wgmma pipeline (runner/timing.py ``wgmma_serial``): every wgmma reads and
        #: writes this token register, so it issues only once the warpgroup's earlier ones have completed
        #: (``WARPGROUP.DEPBAR.LE gsb0, 0x0`` before every HGMMA), and a ``wgmma.wait_group`` waits for all of them
        self.wgtok = -1


class CoreConfig:
    """Knobs of the SM core (the runner fills them from the arch spec, with documented defaults)."""

    def __init__(self, **kw):
        self.n_sms = 132
        self.subpartitions = 4
        self.policy = "gto"
        self.max_warps_per_sm = 64
        self.bar_latency = 20           # bar.sync release after the last arrival (cycles)
        self.bar_per_warp = 0           # the barrier takes one warp's arrival per this many cycles
        self.branch_latency = 2         # taken-branch resolution (branch_resolving)
        self.warp_start_latency = 4     # first instruction fetch of a new warp (no_instruction)
        self.launch_latency = 200       # CTA launch after a retire (cycles)
        self.initial_launch_latency = 0
        self.dispatch_interval = 0      # an SM starts its CTAs at least this far apart (cta_scheduler.dispatch_cycles_per_cta)
        self.dispatch_per_warp = 0      # ... or takes warps at this many cycles each (cta_scheduler.dispatch_cycles_per_warp)
        self.dispatch_burst = 0         # ... after a burst of this many (cta_scheduler.dispatch_burst_warps)
        self.poll_latency = 42          # mbarrier poll result latency when the unit gives none (paper Tab. II)
        self.fence_latency = 8
        self.membar_gpu = 0             # MEMBAR.ALL.GPU with nothing outstanding (latencies.membar_gpu_cycles)
        self.membar_drain = 0           # ... after the last outstanding TMA copy / store (latencies.membar_drain_cycles)
        self.membar_tma = 0             # ... at least, after the warp's TMA work since its last fence (latencies.membar_after_tma_cycles)
        self.membar_sm = False          # ... and after every global request of the SM (latencies.membar_drains sm)
        self.clock_latency = 2
        self.mbar_wait_reason = S.LONG_SCOREBOARD     # no-hint try_wait: SYNCS.PHASECHK result (L1TEX path)
        self.mbar_sleep_reason = S.SLEEPING           # try_wait with a suspend hint
        self.tma_throttle_reason = S.MIO_THROTTLE
        self.smem_ii = 1                # MIO cycles per shared wavefront
        self.lsu_ii_per_line = 1        # LSU cycles per 128-B line of a global access
        self.l1_hit_latency = 33        # ld.global whose lines all hit the L1 (trace a3 >> 32 = hit lines)
        self.l1_tag_cycles_per_line = 0.0  # L1TEX stage cycles per 128-B line looked up (l1.tag_cycles_per_line)
        self.store_cycles_per_byte = 0.0   # the SM's store data path (1 / l1.store_bytes_per_cycle; 0: none)
        self.cpa_fill_cycles_per_byte = 0.0  # the SM's cp.async intake (1 / l1.cp_async_fill_bytes_per_cycle; 0: none)
        self.store_queue_bytes = 0.0       # store data held ahead of that path before the LSU stalls
        self.store_partial_line = 0.0      # ... cycles a line with a partly written sector takes at least
        self.store_partial_sector = 0.0    # ... cycles per partly written sector (l1.store_partial_*_cycles)
        self.atom_request = 0.0          # the SM's atomic unit per warp request (l1.atomic_request_cycles; 0: none)
        self.atom_lane_red = 0.0         # ... per lane on the busiest word of a red / an atom (l1.atomic_same_word_*)
        self.atom_lane_ret = 0.0
        self.window = 32                # run-ahead window of an SM beyond the engine's next event (cycles)
        self.runahead_own = False       # run ahead of the SM's own event time instead (runner/partitioned.py)
        for k, v in kw.items():
            if not hasattr(self, k):
                raise TypeError(f"unknown CoreConfig field {k!r}")
            setattr(self, k, v)


class Group:
    """One replay entity handed to the core by the runner: the warps ``ws`` (indices within the CTA) of one CTA
    whose pc streams are identical, and their *bundle* stream: ``pcs`` (list of static indices) and payload
    lists ``a0..a3``/``act`` already aggregated over the warps (sums for memory / tensor payloads, the elected
    warp's for TMA / mbarrier, ``act`` = number of warps with active threads). A group of one warp is the
    per-warp model."""

    __slots__ = ("ws", "pcs", "a0", "a1", "a2", "a3", "act")

    def __init__(self, ws, pcs, a0, a1, a2, a3, act):
        self.ws, self.pcs, self.a0, self.a1, self.a2, self.a3, self.act = ws, pcs, a0, a1, a2, a3, act


class _Warp:
    """A bundle of ``m`` warps of one CTA replayed as one entity (``m == 1``: a plain warp)."""

    __slots__ = ("g", "gs", "cta", "w", "ws", "m", "sm", "sp", "sps", "spl", "spk", "kmax", "wgp", "pcs",
                 "n", "pos", "a0", "a1", "a2", "a3", "act", "rr", "rk", "t", "tlast", "hold_t", "hold_r", "prio",
                 "age", "issued", "ptx", "launch", "cpa_open", "cpa_groups", "wg_open", "wg_groups", "wg_ord",
                 "st_ack", "tma_next", "mma_next", "parked", "wait_dsts", "done", "exit_t", "nclock", "st",
                 "wake", "gack", "stall", "hot", "pi", "cs_t", "bk", "hsplit", "tx_sync")


class _WgSplit:
    """wgmma state of a bundle that holds only part of a warpgroup (its other warps run other code, e.g. an
    ``if (tid == 0)`` producer): its ops complete only after the warpgroup's last warp issued them (``_wgmma``).
    ``pend``: op ordinal -> [warpgroups not yet issued by all their warps, latest completion known];
    ``done``: resolved pending ops -> completion; ``open_p`` / ``gp``: latest pending ordinal of the open group /
    of each committed group (parallel to ``_Warp.wg_groups``, -1: none); ``wait``: (ordinal, finite hold) of a
    ``wgmma.wait_group`` parked on a pending op."""

    __slots__ = ("pend", "done", "open_p", "gp", "wait")

    def __init__(self):
        self.pend: dict[int, list] = {}
        self.done: dict[int, int] = {}
        self.open_p = -1
        self.gp: list[int] = []
        self.wait = None


def _split_groups(stream_of, cta: int, wpc: int):
    """Per-warp groups of a CTA (the ``bundle=False`` model and the fallback when no ``groups_of`` is given)."""
    out = []
    for w in range(wpc):
        st = stream_of(cta * wpc + w)
        tl = (lambda a: a.tolist()) if hasattr(st.pc, "tolist") else list
        out.append(Group([w], tl(st.pc), tl(st.a0), tl(st.a1), tl(st.a2), tl(st.a3), tl(st.active)))
    return out


@register_component(role="sm", kind="default")
class SMCore:
    """Replays warp bundles through sub-partitions and timing units. See module docstring.

    ``groups_of(cta)`` returns the CTA's :class:`Group` list (bundles); without it every warp is its own group,
    read through ``stream_of(g)`` (an object with ``pc``, ``a0..a3``, ``active`` arrays: Contract 2 WarpStream).
    Units follow Contract 6; any of them may be None (fixed-latency fallbacks from ``lat``).
    ``sms``: the SMs that run CTAs (sampled mode); all by default.
    """

    def __init__(self, engine, tables: StaticTables, cfg: CoreConfig, *, n_ctas: int, warps_per_cta: int,
                 threads_per_cta: int, stream_of, scheduler, mem=None, smem=None, tma=None, mbar=None, tc=None,
                 max_cycles: int | None = None, groups_of=None, merge_subpartitions: bool = False):
        self.eng = engine
        self.T = tables
        self.cfg = cfg
        self.n_ctas = n_ctas
        self.wpc = warps_per_cta
        self.tpc = threads_per_cta
        self.stream_of = stream_of
        self.groups_of = groups_of
        self.merge_sps = merge_subpartitions
        self.sched = scheduler
        self.mem, self.smem, self.tma, self.mbar, self.tc = mem, smem, tma, mbar, tc
        self.max_cycles = max_cycles
        self.lrr = cfg.policy.lower() == "lrr"
        # per opcode: 1 waits for the warp's TMA issue gap (bulk copies, clock reads), 2 for its mma.sync gap
        self.gap_op = [1 if (OP_TMA_LD <= o <= OP_TMA_ST or o == OP_CLOCK) else 2 if o == OP_MMA else 0
                       for o in range(len(OPS))]
        if cfg.policy.lower() not in ("gto", "lrr"):
            raise SimulationError(f"unknown warp scheduler policy {cfg.policy!r}", hint="gto or lrr")
        nsp = cfg.subpartitions
        # per sub-partition: next-free cycle of the issue slot and each pipe, plus (last slot) the fractional
        # register-file debt of the wgmma accumulator-traffic slowdown (see ``_run_sm``)
        self.spst = [[[0] * len(PIPES) + [0.0] for _ in range(nsp)] for _ in range(cfg.n_sms)]
        self.window = int(cfg.window)
        self.sm_stall = [[0] * S.NREASONS for _ in range(cfg.n_sms)]   # per SM, per stall reason (warp-cycles)
        # per SM, per sub-partition, per stall reason: a bundle's counts (``_Warp.stall``, charged by ``_run_sm``)
        # are split over its warps' sub-partitions when it exits (``_fold_stalls``)
        self.sp_stall = [[[0] * S.NREASONS for _ in range(nsp)] for _ in range(cfg.n_sms)]
        self.issued = 0
        self.ptx_issued = 0
        self.warps: dict[int, _Warp] = {}
        self.cta_live = {}
        self.cta_end = {}
        self.cta_sm = {}
        self.disp_free = [0] * cfg.n_sms    # per-SM CTA dispatcher: free from this cycle
        # per-SM warp-dispatch token bucket (cta_scheduler.dispatch_cycles_per_warp): [warps available, at cycle]
        self.disp_tok = [[float(cfg.dispatch_burst), 0] for _ in range(cfg.n_sms)]
        self.placed = {}                  # cta -> SM it ran on (kept after retire: %smid of the clock-oracle rerun)
        self.cta_warps = {}
        self.bars: dict[int, dict] = {}
        self.smb = [[] for _ in range(cfg.n_sms)]        # live bundles per SM
        self.sm_evt = [INF] * cfg.n_sms                   # time of the SM's pending engine event (INF: none)
        self.sm_running = -1
        self.sm_events = 0
        self.wg_cache: dict = {}
        self.wg_st: dict[int, _WgSplit] = {}   # bundle -> its split-warpgroup wgmma state (see _WgSplit)
        self.sm_res_ctas = [0] * cfg.n_sms
        self.sm_active_since = [0] * cfg.n_sms
        self.sm_active_cycles = [0] * cfg.n_sms
        self.sm_end = [0] * cfg.n_sms
        self.sm_issued = [0] * cfg.n_sms
        self.warp_resident_cycles = 0
        self.sm_warp_cycles = [0] * cfg.n_sms
        self.clock_issue: dict[tuple[int, int], int] = {}
        self.wgmma_flops = 0
        #: asynchronous tensor FLOPs (wgmma, tcgen05) by rate class, in ``TC_RATE_CLASSES`` order: the utilisation
        #: is their service time at each class's rate (an FP8 op takes half the time of an FP16 one of equal FLOPs)
        self.async_flops_by_class = [0] * len(TC_RATE_CLASSES)
        self.mma_flops = 0
        self.global_sectors = 0
        self.l1_hit_lines = 0                 # 128-B lines of ld.global served by L1 (the trace's per-CTA L1 model)
        self.shared_wavefronts = 0
        self.l1_stage = [0.0] * cfg.n_sms     # per-SM L1TEX data/tag stage: free from this cycle
        self.cpa_fill = [0.0] * cfg.n_sms     # per-SM cp.async intake (l1.cp_async_fill_bytes_per_cycle): free from
        #: per SM, line key (payload a1 >> 32, memops._line_key) -> cycle the latest ld.global of those lines that
        #: missed the L1 has its data: a later load that the trace's L1 model calls a hit cannot have the lines
        #: before they arrive (the L1's miss-under-miss; the functional pass knows the order, not the time)
        self.l1_pending: list[dict] = [{} for _ in range(cfg.n_sms)]
        self.l1_pending_waits = 0             # L1-hit loads that waited for another load's outstanding fill
        self._pending_cap = [4096] * cfg.n_sms   # prune a table once it outgrows this (amortised, as memory.fills)
        self.atom_unit = [0.0] * cfg.n_sms    # per-SM atomic unit (l1.atomic_*_cycles): free from this cycle
        self.st_path = [0.0] * cfg.n_sms      # per-SM store data path to L2 (l1.store_bytes_per_cycle): free from
        self.ctas_done = 0
        self.on_cta = None                    # progress hook: on_cta(ctas_done, n_ctas, cycle) as each CTA retires
        self.age = 0
        self.end_cycle = 0
        self.bundles = 0
        self.op_counts = [0] * len(OPS)
        self.tc05: dict = {}                  # tcgen05 block: per bundle [async completion, ld done, st done]
        self.tc05_flops = 0
        self.tmem = getattr(tc, "tmem", None)
        self.rf_bpc = float(getattr(tc, "rf_bpc", 512) or 512)
        # wgmma accumulator register traffic vs the other instructions (tensor_core.py: busy period, share)
        self.tc_free = self.tc_busy_from = self.tc_rf_share = None
        if tc is not None and getattr(tc, "rf_on", False) and getattr(tc, "rf_sp_bpc", 0) > 0:
            self.tc_free, self.tc_busy_from, self.tc_rf_share = tc.free, tc.busy_from, tc.rf_share
        T = tables
        # the per-core constants ``_run_sm`` reads once per event, as one tuple (tables, policy, per-opcode gaps,
        # counters, wgmma register-file slowdown state)
        self._hot = (T.op, T.cost, T.pipe, T.ii, T.lat, T.deps, T.dsts, T.rsn, self.lrr, self.gap_op,
                     self.op_counts, self.tc_free, self.tc_busy_from, self.tc_rf_share)
        # the same per static instruction, one tuple each (one subscript and unpack per instruction in the hot loop)
        # (op, pipe, cost, deps, ii, lat, dsts, reason, the op's issue gap kind, the pipe's OWN_WAIT, the pipe is
        # stretched by the wgmma register-file share: 0 < pipe < P_TENSOR)
        self._ins = [(o, p, c, d, ii, la, ds, r, self.gap_op[o], OWN_WAIT[p], 0 < p < P_TENSOR)
                     for o, p, c, d, ii, la, ds, r in zip(T.op, T.pipe, T.cost, T.deps, T.ii, T.lat, T.dsts, T.rsn)]
        self._xs = getattr(T, "xs", None)    # control-code stalls per instruction (sass.control_stalls) or None
        self.cs_cycles = 0                    # control-code stall cycles charged (sass.control_stalls), per warp
        self.cs_sched = 0                     # control-code stall cycles the issued instructions carry, per warp
        # per-warp mma.sync issue interval (a warp's operand collector; tensor_core.mma_sync_warp_issue_gap_cycles)
        self.mma_warp_gap = int(getattr(tc, "warp_issue_gap", 0) or 0)
        # event recording (core/tracing.py): the hot loop tests the local bool ``rec_on`` only
        self.rec = NULL_RECORDER
        self.rec_on = False
        #: per-instruction stall profile (runner/stall_profile.py; ``simulate(..., stall_profile=True)``): one row of
        #: warp-cycles per stall reason for each static instruction (the last row: a warp's end, i = -1), the
        #: ``selected`` column holding its issue cycles; None (the default): not kept, one test per stalled issue
        self.stall_prof: list[list[int]] | None = None
        self._mwait: dict[int, tuple[int, int]] = {}     # bundle -> (mbarrier key, wait start) while parked
        self.tx_bars: set[int] = set()   # mbarriers that TMA copies complete (a wait on one marks the warp: _membar)
        # ``ghost(W, k, t, late)``: called before and after a cp.async / TMA load issues (sampled mode's fills of the CTAs a
        # sampled CTA stands for: runner/ghost_fills.py); None in detailed mode
        self.ghost = None
        # clusters (attach_clusters): the DSM fabric, cluster membership, barrier.cluster state
        self.dsm = None
        self.cl_of: dict[int, int] = {}          # cta -> cluster index
        self.cl_members: list[list[int]] = []    # cluster index -> CTAs by rank
        self.cbar_latency = 0
        self._cb: dict = {}                      # (cluster, phase) -> [warps arrived, last arrival, waiters, done]
        self._cb_arr: dict[int, int] = {}        # bundle -> barrier.cluster arrivals so far (its next phase)
        self._cb_wait: dict[int, int] = {}       # bundle -> barrier.cluster waits so far
        self._cb_open: dict[int, set] = {}       # cluster -> phases not complete yet
        self.dsm_ops = 0

    @property
    def stall(self) -> list:
        """GPU-wide warp-cycles per stall reason (the per-SM counts ``sm_stall`` summed)."""
        return [sum(col) for col in zip(*self.sm_stall)] if self.sm_stall else [0] * S.NREASONS

    def set_recorder(self, rec) -> None:
        """Record events into ``rec`` (core/tracing.py). Bundles are recorded on one track each, keyed by their
        first global warp id and labelled with the warps they stand for (``meta['warp_labels']``); an issue run
        of a bundle occupies each of its sub-partitions (``meta['issue_weight']`` of them) for its length."""
        self.rec = rec if rec is not None else NULL_RECORDER
        self.rec_on = bool(self.rec.enabled)
        if self.rec_on:
            meta = getattr(self.rec, "meta", None)
            if isinstance(meta, dict):
                meta.setdefault("warp_labels", {})
                meta.setdefault("issue_weight", {})

    # -- CTA life cycle ---------------------------------------------------------------------------------
    def start(self) -> None:
        t0 = self.cfg.initial_launch_latency
        for cta, sm in self.sched.initial():
            self._launch_cta(cta, sm, t0)

    def _launch_cta(self, cta: int, sm: int, t: int) -> None:
        cfg = self.cfg
        di = cfg.dispatch_interval
        if di:
            # the SM's CTA dispatcher takes one CTA at a time (ncu empty kernels: ~140 cycles per CTA per SM)
            f = self.disp_free[sm]
            if t < f:
                t = f
            self.disp_free[sm] = t + di
        dw = cfg.dispatch_per_warp
        if dw:
            # warps at dw cycles each once an idle SM's burst is spent (H100 per-warp probes: the first 32 warps
            # of an SM start within ~50 cycles, then ~18-20 cycles per warp: microbench/results/
            # h100_warp_probes_2026-12-07); a CTA starts when the bucket holds all of its warps
            tok = self.disp_tok[sm]
            lvl, tl = tok
            if t < tl:
                t = tl
            w = self.wpc
            lvl = min(lvl + (t - tl) / dw, max(cfg.dispatch_burst, w))   # a CTA larger than the burst still fits
            if lvl < w:
                wait = ceil((w - lvl) * dw)
                t += wait
                lvl += wait / dw
            tok[0] = lvl - w
            tok[1] = t
        nsp = cfg.subpartitions
        nregs = self.T.nregs
        wpc = self.wpc
        if self.sm_res_ctas[sm] == 0:
            self.sm_active_since[sm] = t
        self.sm_res_ctas[sm] += 1
        self.cta_live[cta] = wpc
        self.cta_end[cta] = t
        self.cta_sm[cta] = sm
        self.placed[cta] = sm
        groups = self.groups_of(cta) if self.groups_of is not None else _split_groups(self.stream_of, cta, wpc)
        ws_list = []
        spst_sm = self.spst[sm]
        for G in groups:
            W = _Warp()
            ws = list(G.ws)
            m = len(ws)
            W.ws, W.m = ws, m
            W.g, W.cta, W.w, W.sm = cta * wpc + ws[0], cta, ws[0], sm
            W.gs = [cta * wpc + w for w in ws]
            W.sps = [w % nsp for w in ws]
            W.sp = W.sps[0]
            cnt: dict[int, int] = {}
            for s in W.sps:
                cnt[s] = cnt.get(s, 0) + 1
            if self.merge_sps:
                # every bundle of the launch covers all sub-partitions evenly (the runner checks): their states
                # stay identical, so one shared state per SM stands for all of them; a bundle that is not even
                # (not expected) conservatively occupies it for its most loaded sub-partition
                W.spk = [(spst_sm[0], max(cnt.values()))]
            else:
                W.spk = [(spst_sm[s], k) for s, k in sorted(cnt.items())]
            W.spl = [s for s, _ in W.spk]
            W.kmax = max(k for _, k in W.spk)
            wg: dict[int, int] = {}
            for w in ws:
                wg[w >> 2] = wg.get(w >> 2, 0) + 1
            W.wgp = [(x, k, min(4, wpc - 4 * x)) for x, k in sorted(wg.items())]
            if any(k < size for _, k, size in W.wgp):
                self.wg_st[W.g] = _WgSplit()
            W.pcs = G.pcs
            W.n = len(W.pcs)
            W.pos = 0
            W.a0, W.a1, W.a2, W.a3, W.act = G.a0, G.a1, G.a2, G.a3, G.act
            W.rr = [0] * nregs
            W.rk = [S.WAIT] * nregs
            # what SMCore._run_sm reads when it switches to the bundle (constant while the bundle lives)
            W.stall = [0] * S.NREASONS     # the bundle's stall counts, folded into its SM's by _fold_stalls
            W.hot = (W.stall, W.spl, W.spk, W.spl[0] if len(W.spl) == 1 else None, W.spk[0][1], W.kmax,
                     m, W.pcs, W.rr, W.rk, W.n)
            W.launch = t
            W.t = t
            W.tlast = t - 1
            W.hold_t = t + cfg.warp_start_latency
            W.hold_r = S.NO_INSTRUCTION
            W.hsplit = 0     # a hold's part before this cycle is gmma (a split warpgroup's wgmma wait: _wg_resolve)
            W.cs_t = 0
            W.bk = {}        # taken executions per unrolled-loop back edge (T.bper)
            self.age += 1
            W.age = self.age
            W.prio = self.age
            W.issued = 0
            W.ptx = 0        # set at exit (the stream positions passed: each folded or issued once)
            W.pi = -1        # the bundle's last issued (not folded) instruction
            W.cpa_open = 0
            W.cpa_groups = []
            W.wg_open = 0
            W.wg_groups = []
            W.wg_ord = 0
            W.st_ack = 0
            W.tx_sync = False   # the warp issued a TMA copy or waited on a barrier TMA copies complete (SMCore._membar)
            W.gack = 0       # the warp's global stores / atomics acknowledged by L2 (gpu-scope fences wait)
            W.tma_next = 0
            W.mma_next = 0
            W.parked = None
            W.wait_dsts = ()
            W.done = False
            W.exit_t = 0
            W.nclock = 0
            W.st = t
            W.wake = None
            self.warps[W.g] = W
            if self.rec_on:
                self._trace_label(W)
            ws_list.append(W)
            self.smb[sm].append(W)
            self.bundles += 1
        self.cta_warps[cta] = ws_list
        self._kick(sm, t)

    def _trace_label(self, W: _Warp) -> None:
        meta = getattr(self.rec, "meta", None)
        if not isinstance(meta, dict):
            return
        ws = W.ws
        if len(ws) == 1:
            lab = f"warp {ws[0]} (CTA {W.cta})"
        else:
            if ws == list(range(ws[0], ws[0] + len(ws))):
                wl = f"{ws[0]}-{ws[-1]}"
            else:
                wl = ",".join(str(w) for w in ws[:8]) + (f",+{len(ws) - 8}" if len(ws) > 8 else "")
            lab = f"warps {wl} (CTA {W.cta}, bundle of {len(ws)})"
        meta.setdefault("warp_labels", {})[W.g] = lab
        meta.setdefault("issue_weight", {})[W.g] = len(set(W.sps))

    def _trace_stalls(self, W: _Warp, c0: int, tt: int, ht: int, td: int, rd: int, ow: int, tp: int, ts: int,
                      p: int) -> None:
        """The stall slices of ``[c0, tt)`` (the bundle's lane: from the end of its issue slots), split at the
        same boundaries as the stall counters in ``_run_sm`` (which count each warp from its own issue)."""
        rec, sm, g = self.rec, W.sm, W.g
        if tt <= c0:
            return
        if ht > c0:
            x = ht if ht < tt else tt
            y = W.hsplit
            if y > c0:
                if y > x:
                    y = x
                rec.warp_stall(sm, g, c0, y, S.GMMA)
                c0 = y
            rec.warp_stall(sm, g, c0, x, W.hold_r)
            c0 = x
        cw = W.cs_t if self._xs is not None else 0
        if cw > c0:
            x = cw if cw < tt else tt
            rec.warp_stall(sm, g, c0, x, S.WAIT)
            c0 = x
        if td > c0:
            x = td if td < tt else tt
            rec.warp_stall(sm, g, c0, x, rd)
            c0 = x
        if ow > c0:
            x = ow if ow < tt else tt
            rec.warp_stall(sm, g, c0, x, S.WAIT)
            c0 = x
        if tp > c0 and tp > ts:
            x = tp if tp < tt else tt
            rec.warp_stall(sm, g, c0, x, PIPE_THROTTLE[p])
            c0 = x
        if tt > c0:
            rec.warp_stall(sm, g, c0, tt, S.NOT_SELECTED)

    def _kick(self, sm: int, t: int) -> None:
        """Make sure SM ``sm`` runs no later than ``t`` (one pending engine event per SM)."""
        if sm == self.sm_running:
            return
        if t < self.sm_evt[sm]:
            now = self.eng.now
            if t < now:
                t = now
            self.sm_evt[sm] = t
            self.eng.schedule(t, self._run_sm, sm, prio=1 + sm)

    def _fold_stalls(self, W: _Warp) -> None:
        """Add the exiting bundle's stall counts to its SM's and to its warps' sub-partitions': every count
        ``_run_sm`` charges is per warp of the bundle (cycles x m, or the turn-taking ``c x m x (kmax-1)``), so a
        sub-partition holding k of the m warps gets k/m of it (the remainder of an uneven split goes to the
        first sub-partition: the per-SM sum is exact)."""
        row = W.stall
        sm_row = self.sm_stall[W.sm]
        sp_rows = self.sp_stall[W.sm]
        m = W.m
        cnt: dict[int, int] = {}
        for s in W.sps:
            cnt[s] = cnt.get(s, 0) + 1
        first = W.sps[0]
        for r, v in enumerate(row):
            if v:
                sm_row[r] += v
                if m == 1:
                    sp_rows[first][r] += v
                    continue
                rest = v
                for s, k in cnt.items():
                    x = v * k // m
                    sp_rows[s][r] += x
                    rest -= x
                sp_rows[first][r] += rest

    def _warp_exit(self, W: _Warp, t_exit: int) -> None:
        W.done = True
        W.exit_t = t_exit
        W.parked = None
        W.st = INF
        m = W.m
        cycles = (t_exit - W.launch) * m
        self.warp_resident_cycles += cycles
        self.sm_warp_cycles[W.sm] += cycles
        self.issued += W.issued * m
        self.ptx_issued += W.ptx * m
        self.sm_issued[W.sm] += W.issued * m
        self._fold_stalls(W)
        self.smb[W.sm].remove(W)
        cta = W.cta
        if t_exit > self.cta_end[cta]:
            self.cta_end[cta] = t_exit
        self.cta_live[cta] -= m
        if self._cb_open:  # clusters: exited warps no longer count for barrier.cluster
            self._cbar_check_cluster(self.cl_of.get(cta, -1 - cta), t_exit)
        # free the stream arrays
        W.pcs = W.rr = W.rk = W.hot = None
        W.a0 = W.a1 = W.a2 = W.a3 = W.act = None
        if self.cta_live[cta] == 0:
            self.eng.schedule(max(self.cta_end[cta], self.eng.now), self._cta_retire, cta, prio=0)
        else:
            # a barrier may now be complete (exited warps no longer count)
            bars = self.bars.get(cta)
            if bars:
                for bid in list(bars):
                    self._bar_try_release(cta, bid, t_exit)

    def _cta_retire(self, cta: int) -> None:
        t = self.eng.now
        sm = self.cta_sm.pop(cta)
        self.ctas_done += 1
        if self.on_cta is not None:
            self.on_cta(self.ctas_done, self.n_ctas, t)
        self.bars.pop(cta, None)
        lk = self.mem.locks if self.mem is not None else None
        if lk is not None:
            lk.release_all(cta, t)   # a lock word unlocked by a plain store: free at the CTA's exit
        if self.rec_on:
            cw = self.cta_warps.get(cta)
            self.rec.cta(sm, cta, cw[0].launch if cw else t, t)
        for W in self.cta_warps.pop(cta):
            if self.wg_st:
                self.wg_st.pop(W.g, None)
            self.warps.pop(W.g, None)
        self.cta_live.pop(cta, None)
        self.cta_end.pop(cta, None)
        if t > self.sm_end[sm]:
            self.sm_end[sm] = t
        if t > self.end_cycle:
            self.end_cycle = t
        self.sm_res_ctas[sm] -= 1
        if self.sm_res_ctas[sm] == 0:
            self.sm_active_cycles[sm] += t - self.sm_active_since[sm]
        nxt = self.sched.on_retire(sm)
        if isinstance(nxt, list):      # clusters: the freed room launched whole clusters (cta_scheduler.py)
            for c, s in nxt:
                self._launch_cta(c, s, t + self.cfg.launch_latency)
        elif nxt is not None:
            self._launch_cta(nxt, sm, t + self.cfg.launch_latency)

    # -- bar.sync ----------------------------------------------------------------------------------------
    def _bar_count(self, W: _Warp, bid: int, nthreads: int, t: int) -> list:
        """Count bundle W's warps toward barrier ``bid`` of its CTA at ``t``; the barrier record
        ``[warps arrived, last arrival processed, waiting bundles, warps expected]``. The barrier takes one warp's
        arrival per ``bar_per_warp`` cycles (H200 microbench alu_latency: back-to-back bar.sync of W warps take
        12.7 + 2.0 x W cycles), so the last arrival is processed at least that long after the previous one."""
        bars = self.bars.get(W.cta)
        if bars is None:
            bars = self.bars[W.cta] = {}
        b = bars.get(bid)
        if b is None:
            nw = -(-nthreads // 32) if nthreads > 0 else self.wpc
            b = bars[bid] = [0, 0, [], nw]
        b[0] += W.m
        if t > b[1]:
            b[1] = t
        if self.cfg.bar_per_warp:
            b[1] += W.m * self.cfg.bar_per_warp
        return b

    def _bar_arrive(self, W: _Warp, bid: int, nthreads: int, t: int) -> bool:
        """Returns True if this arrival completes the barrier (the caller continues with hold set)."""
        self._bar_count(W, bid, nthreads, t)[2].append(W)
        return self._bar_try_release(W.cta, bid, t, W)

    def _bar_arrive_only(self, W: _Warp, bid: int, nthreads: int, t: int) -> None:
        """bar.arrive / barrier.arrive: the warp's threads count toward barrier ``bid`` (it may complete it and
        release the waiting warps) but the warp does not wait (PTX ISA, bar.arrive: producer/consumer hand-off)."""
        self._bar_count(W, bid, nthreads, t)
        self._bar_try_release(W.cta, bid, t)

    def _bar_try_release(self, cta: int, bid: int, t: int, cur: _Warp | None = None) -> bool:
        bars = self.bars[cta]
        b = bars[bid]
        need = min(b[3], self.cta_live[cta])
        if b[0] < need:
            return False
        T = max(b[1], t) + self.cfg.bar_latency
        del bars[bid]
        now = self.eng.now
        for X in b[2]:
            X.hold_t = T
            X.hold_r = S.BARRIER
            if X is not cur:
                X.parked = None
                X.st = T if T > now else now
                self._kick(X.sm, X.st)
        return True

    def _mbar_arrive_drop(self, W: _Warp, k: int, tt: int) -> None:
        """mbarrier.arrive_drop: the warp's arrivals, and the barrier expects that many fewer from now on."""
        fn = getattr(self.mbar, "arrive_drop", None)
        if fn is None:
            raise SimulationError(f"the mbarrier unit {type(self.mbar).__name__} does not model mbarrier.arrive_drop",
                                  hint="an mbarrier unit with arrive_drop(key, t, arrivals, tx_bytes)")
        fn(W.a1[k], tt, W.a2[k], W.a0[k])

    # -- wake-ups from units ------------------------------------------------------------------------------
    def _wake(self, W: _Warp, c: int, reason: int) -> None:
        if W.done:
            return
        if self.rec_on:
            mw = self._mwait.pop(W.g, None)
            if mw is not None:
                self.rec.mbarrier_wait(W.sm, W.g, mw[0], mw[1], c)
        rr, rk = W.rr, W.rk
        for d in W.wait_dsts:
            if rr[d] >= INF:
                rr[d] = c
                rk[d] = reason
        if W.hold_t >= INF:
            W.hold_t = c
        if W.parked is not None:
            W.parked = None
            st = W.t
            now = self.eng.now
            if now > st:
                st = now
            if c > st:
                st = c
            W.st = st
            self._kick(W.sm, st)

    # -- the SM loop: one engine event per SM and run-ahead window ---------------------------------------------
    def _run_sm(self, sm: int) -> None:  # noqa: C901 (one function: locals are fast)
        """Issue from the SM's bundles in (ready time, priority) order while the next issue lies within
        ``window`` cycles of the engine's next event; then sleep until the earliest bundle's ready time.

        The hot loop (issue of the picked bundle) is inlined here rather than a method called per pick: about
        40 % of the picks issue nothing (the bundle's ready time was stale: another bundle took the shared
        issue slot), and the call, the per-core tables' unpacking and the policy lookups were paid per pick
        (gemm_tma_M2048: 1.2 M picks for 1.1 M issues). ``break`` leaves the bundle and picks again."""
        eng = self.eng
        if self.sm_evt[sm] != eng.now:
            return  # superseded by an earlier event of this SM
        self.sm_evt[sm] = INF
        self.sm_running = sm
        self.sm_events += 1
        bl = self.smb[sm]
        q = eng._q
        win = self.window
        rown = self.cfg.runahead_own
        mc = self.max_cycles if self.max_cycles is not None else INF
        T = self.T
        OP, COST, PIPE, II, LAT, DEPS, DSTS, RSN, lrr, gap, opc, tcf, tcb, tcu = self._hot
        INS = self._ins
        XS = self._xs
        bper = T.bper
        wgtok = T.wgtok
        rec_on = self.rec_on
        prof = self.stall_prof
        while True:
            best = None
            bt = INF
            ot = INF
            if lrr:
                bp = 0
                op_ = 0
                for X in bl:
                    x = X.st
                    if x < bt or (x == bt and X.prio < bp):
                        ot, op_ = bt, bp
                        best, bt, bp = X, x, X.prio
                    elif x < ot or (x == ot and X.prio < op_):
                        ot, op_ = x, X.prio
            else:
                # GTO: a bundle's priority is its age and ``bl`` is in age order (appended at launch), so a tie on
                # the ready time goes to the earlier entry: the (time, priority) minimum and runner-up without
                # reading priorities
                sec = None
                for X in bl:
                    x = X.st
                    if x < bt:
                        ot = bt
                        sec = best
                        best = X
                        bt = x
                    elif x < ot:
                        ot = x
                        sec = X
                op_ = sec.prio if sec is not None else 0
            if bt >= INF:
                break
            # run ahead of the engine's next event (a GPU's dense queue), or (``runahead_own``: partitioned views,
            # whose queues are sparse) of the SM's own event time only: issue times far ahead of the others' reserve
            # the FIFO memory servers before their earlier requests (gemm80 as GPC views: +46 % cycles)
            lim = (eng.now if rown else (q[0][0] if q else bt)) + win
            if lim > mc:
                lim = mc  # never run past the cycle limit (the engine reports it with the stuck warps)
            if bt > lim:
                # sleep until ``bt``: _kick inlined (its checks hold here: this SM's pending event time is INF
                # while it runs), the engine's queue entry as Engine.schedule makes it
                self.sm_running = -1
                if bt < eng.now:
                    bt = eng.now
                self.sm_evt[sm] = bt
                heappush(q, (bt, 1 + sm, next(eng._seq), self._run_sm, (sm,)))
                return
            # ---- the hot loop: issue from ``best`` while it stays ahead of the SM's other bundles (next
            # ready ``ot``, priority ``op_``) and within ``lim``; then leave its next ready time in ``W.st``
            # and pick again (``break``) ----
            W = best
            stall, spl, spk, sq, k1, kmax, m, pcs, rr, rk, n = W.hot
            pos = pos0 = W.pos
            t = W.t
            tlast = W.tlast
            pi = W.pi
            issued = 0
            while True:
                if pos >= n:
                    i = -1
                    op = OP_EXIT
                    c = 0
                    td = t
                    rd = _WAIT
                    tp = ts = t
                    ht = W.hold_t
                    tt = max(t, ht)
                    p = 0
                    g = gap[OP_EXIT]
                    own = OWN_WAIT[0]
                    rfp = False
                else:
                    i = pcs[pos]
                    op, p, c, deps, ii, lat, dsts, rsn, g, own, rfp = INS[i]
                    # scoreboard
                    td = t
                    rd = _WAIT
                    for r in deps:
                        x = rr[r]
                        if x > td:
                            td = x
                            rd = rk[r]
                    if op == OP_FREE:
                        # folded by ptxas (cost 0): the destination aliases the sources
                        for d in dsts:
                            rr[d] = td if td > t else 0
                            rk[d] = rd
                        pos += 1
                        continue
                    if sq is not None:
                        tp = sq[p]
                        ts = sq[0]
                    else:
                        tp = ts = 0
                        for s in spl:
                            x = s[p]
                            if x > tp:
                                tp = x
                            x = s[0]
                            if x > ts:
                                ts = x
                    ht = W.hold_t
                    if g:
                        if g == 1:
                            if W.tma_next > tp:
                                # the next bulk copy waits for the TMA front end's issue gap; so does a clock read
                                # (CS2R is ordered after the warp's outstanding bulk issue: paper III-A T(N) = 1 + 44 N
                                # brackets the last issue's gap); independent ALU work overlaps the gap
                                tp = W.tma_next
                        elif W.mma_next > tp:
                            # one warp cannot issue mma.sync faster than its own per-warp interval (single-warp gap)
                            tp = W.mma_next
                    tt = td
                    if ht > tt:
                        tt = ht
                    if tp > tt:
                        tt = tp
                    if ts > tt:
                        tt = ts
                    if XS is not None:
                        # the stall count of the warp's previous instruction(s): no issue before W.cs_t
                        cw = W.cs_t
                        if cw > tt:
                            tt = cw
                if tt >= ot or tt > lim:   # (ot <= INF: a wait on an unknown time is tested in here)
                    if tt >= INF:
                        # waits on something unknown (barrier partners, an mbarrier phase): park until woken
                        W.pos, W.t, W.tlast, W.pi = pos, t, tlast, pi
                        W.issued += issued
                        W.parked = (op, i)
                        W.st = INF
                        break
                    # GTO greedy run-ahead: a warp issuing back to back (no stall: tt == t) a warp-local
                    # instruction (ALU/branch: no unit, no other warp involved) keeps the sub-partition, as GTO
                    # does; anything else is issued in time order within the SM (units see non-decreasing times
                    # up to the window).
                    if lrr or tt != t or op > OP_BRANCH:
                        mp = tlast + 2 if lrr else W.prio
                        if tt > ot or tt > lim or op_ < mp:
                            if pos != pos0:   # (t, tlast, pi, issued change only with pos)
                                W.pos, W.t, W.tlast, W.pi = pos, t, tlast, pi
                                W.issued += issued
                            W.prio = mp
                            W.st = tt
                            break
                # ---- issue at tt: charge each warp's stall cycles since its own previous issue (stalls.py) ----
                c0 = tlast + 1
                ow = 0
                if kmax > 1 or (tp > c0 and own):
                    # the warp's previous issue: the last instruction before pos that ptxas did not fold. Of a
                    # bundle's c*kmax slots each warp issued c, so its stall began c after the bundle's issue; its
                    # own occupancy of the same pipe is covered by the compiler's stall count (ow: wait)
                    # (``pi``: kept as the bundle issues, -1 before its first)
                    if pi >= 0:
                        x = COST[pi]
                        if x:
                            c0 -= x * (kmax - 1)
                            if own and PIPE[pi] == p and XS is None:
                                ow = c0 + x * (II[pi] - 1)
                    if g == 2 and W.mma_next > ow:
                        ow = W.mma_next     # the warp's own mma.sync issue interval
                    if c0 < t and i >= 0:
                        # the register wait as the warp sees it (td above starts at the bundle's slot end t)
                        td = c0
                        rd = _WAIT
                        for r in deps:
                            x = rr[r]
                            if x > td:
                                td = x
                                rd = rk[r]
                if tt > c0:
                    if prof is not None:
                        s0 = stall[:]   # the charges below, by reason, go to instruction i's row (after them)
                    if rec_on:
                        self._trace_stalls(W, tlast + 1, tt, ht, td, rd, ow, tp, ts, p)
                    if ht > c0:
                        x = ht if ht < tt else tt
                        r = W.hold_r
                        if r == _BARRIER and W.hsplit:
                            # a parked wgmma.wait_group: gmma until the warpgroup's last warp issued (_wg_resolve)
                            y = W.hsplit
                            W.hsplit = 0
                            if y > c0:
                                if y > x:
                                    y = x
                                stall[_GMMA] += (y - c0) * m
                                c0 = y
                        stall[r] += (x - c0) * m
                        c0 = x
                    if XS is not None and W.cs_t > c0:
                        # control-code stall count (before the scoreboard: the warp checks its wait mask after it)
                        cw = W.cs_t
                        x = cw if cw < tt else tt
                        stall[_WAIT] += (x - c0) * m
                        self.cs_cycles += (x - c0) * m
                        c0 = x
                    if td > c0:
                        x = td if td < tt else tt
                        stall[rd] += (x - c0) * m
                        c0 = x
                    if ow > c0:
                        x = ow if ow < tt else tt
                        stall[_WAIT] += (x - c0) * m
                        c0 = x
                    if tp > c0 and tp > ts:
                        # the pipe binds beyond the issue slot: throttle (else another warp holds the slot)
                        x = tp if tp < tt else tt
                        stall[PIPE_THROTTLE[p]] += (x - c0) * m
                        c0 = x
                    if tt > c0:
                        stall[_NOT_SELECTED] += (tt - c0) * m
                    if prof is not None:
                        row = prof[i]
                        for k, x in enumerate(stall):
                            if x != s0[k]:
                                row[k] += x - s0[k]
                if c:
                    if tcf is not None and rfp and tcf[sm] > tt >= tcb[sm]:
                        # wgmma accumulator traffic in flight on this SM takes the share u of the sub-partition's
                        # register-file bandwidth: this instruction's operand traffic (its pipe occupancy) is
                        # stretched by 1/(1-u); the fractional cycles carry over per sub-partition (deterministic)
                        u = tcu[sm]
                        fr = u / (1.0 - u)
                        if sq is not None:
                            o = c * k1 * ii
                            d = sq[_RFD] + o * fr
                            e = int(d)
                            sq[_RFD] = d - e
                            sq[0] = tt + c * k1
                            sq[p] = tt + o + e
                        else:
                            for s, k in spk:
                                o = c * k * ii
                                d = s[_RFD] + o * fr
                                e = int(d)
                                s[_RFD] = d - e
                                s[0] = tt + c * k
                                s[p] = tt + o + e
                    elif sq is not None:
                        sq[0] = tt + c * k1
                        if p:
                            sq[p] = tt + c * k1 * ii
                    else:
                        for s, k in spk:
                            s[0] = tt + c * k
                            if p:
                                s[p] = tt + c * k * ii
                    t = tt + c * kmax
                    tlast = t - 1
                    if rec_on:
                        self.rec.warp_issue(sm, W.g, tt, c * kmax)
                else:
                    tlast = tt - 1 if tt - 1 > tlast else tlast
                    t = tt
                issued += c
                opc[op] += m
                if prof is not None:
                    prof[i][_SELECTED] += c * m
                pi = i
                if XS is not None and c:
                    x = XS[i]
                    W.cs_t = tt + c + x
                    self.cs_sched += x * m
                if op == OP_ALU:
                    rt = tt + lat
                    for d in dsts:
                        rr[d] = rt
                        rk[d] = rsn
                    pos += 1
                    continue
                if op == OP_BRANCH:
                    pos += 1
                    if pos < n and pcs[pos] != i + 1:
                        bpi = bper.get(i, -1)    # -1: not listed, holds on every taken execution
                        if bpi >= 0:
                            if not bpi:
                                continue      # no SASS branch: ptxas predicated it or made it a fall-through
                            # a back edge of a loop ptxas unrolled: one SASS back edge per bpi iterations
                            k = W.bk.get(i, 0) + 1
                            W.bk[i] = k
                            if k % bpi:
                                continue
                        W.hold_t = tt + self.cfg.branch_latency
                        W.hold_r = S.BRANCH_RESOLVING
                    continue
                # ---------------- less frequent ops ----------------
                pos += 1
                if op == OP_EXIT:
                    if pos < n:
                        # an EXIT of some lanes (SASS ``@P EXIT``; the functional pass runs a diverged path to its
                        # end before the rest of the warp): they retire, the warp's other lanes go on
                        continue
                    te = t if t > W.st_ack else W.st_ack
                    if c and kmax > 1:
                        # each warp's EXIT took c of the bundle's c*kmax slots: it waits out the rest
                        stall[S.DRAIN if te > t else S.NOT_SELECTED] += c * (kmax - 1) * m
                        if prof is not None:
                            prof[i][S.DRAIN if te > t else S.NOT_SELECTED] += c * (kmax - 1) * m
                    if te > t:
                        stall[S.DRAIN] += (te - t) * m
                        if prof is not None:
                            prof[i][S.DRAIN] += (te - t) * m
                    if rec_on:
                        if te > t:
                            self.rec.warp_stall(sm, W.g, t, te, S.DRAIN)
                        self.rec.warp_exit(sm, W.g, te)
                    W.pos, W.t, W.tlast = pos, t, tlast
                    W.issued += issued
                    W.ptx = pos     # every position of the stream (and the EXIT) was folded or issued once
                    self._warp_exit(W, te)
                    break
                k = pos - 1
                if op == OP_MMA:   # (first: the most frequent unit op of mma.sync kernels)
                    flops = W.a0[k]
                    self.mma_flops += flops
                    if self.mma_warp_gap:
                        W.mma_next = tt + self.mma_warp_gap
                    tc = self.tc
                    if tc is not None:
                        # every warp of the bundle issues its MMA on its sub-partition's pipe
                        done = tt
                        per = flops // m
                        aux = T.aux[i]
                        if self.merge_sps or len(spk) == 1:
                            # one issue state for the bundle: the latest next-issue time of its warps' pipes
                            # (a pipe's next-issue times only grow, so this is the max over each pipe's last)
                            nxt, d = tc.mma_sync_bundle(tt, sm, W.sps, aux, per)
                            if d > done:
                                done = d
                            for s, _k in spk:
                                if nxt > s[P_TENSOR]:
                                    s[P_TENSOR] = nxt
                        else:
                            nxt_sp: dict = {}
                            for sp in W.sps:
                                nxt, d = tc.mma_sync(tt, sm, sp, aux, per)
                                nxt_sp[sp] = nxt
                                if d > done:
                                    done = d
                            spst_sm = self.spst[sm]
                            for sp, nxt in nxt_sp.items():
                                s = spst_sm[sp]
                                if nxt > s[P_TENSOR]:
                                    s[P_TENSOR] = nxt
                    else:
                        done = tt + LAT[i]
                    rs = RSN[i]
                    for d in DSTS[i]:
                        rr[d] = done
                        rk[d] = rs
                elif op == OP_LDG or op == OP_STG or op == OP_CP_ASYNC:
                    sectors = W.a0[k]
                    a3 = W.a3[k]
                    lines = a3 & 0xFFFFFFFF          # lines that miss the L1 (all lines if no L1 model applies)
                    hl = a3 >> 32                    # lines that hit the per-CTA L1 (plain ld.global)
                    if hl:
                        self.l1_hit_lines += hl
                    a2 = W.a2[k]
                    wf = a2 >> 40                    # L1TEX data-stage wavefronts (ld/st; 0 for cp.async)
                    if wf:
                        # the SM's L1TEX stage (shared by the sub-partitions): max(bank wavefronts, tag lookups)
                        # per warp (microbench l1_scatter); no data returns before the stage has processed it
                        c1 = (lines + hl) * self.cfg.l1_tag_cycles_per_line
                        if c1 < wf:
                            c1 = wf
                        l1s = self.l1_stage
                        s1 = l1s[sm]
                        if s1 < tt:
                            s1 = tt
                        e1 = s1 + c1
                        l1s[sm] = e1
                        if op == OP_STG and sectors and self.cfg.store_cycles_per_byte:
                            e1 = self._store_path(sm, tt, e1, sectors, a2)
                        te = int(e1) + (e1 > int(e1))
                        if sectors:
                            self.global_sectors += sectors
                            mem = self.mem
                            # the misses leave for L2 once the stage has looked them up (te): their latency is
                            # the stage delay plus the memory system's, whose FIFO servers are still fed at issue
                            # time (engine order; a future reservation would block every other SM's requests)
                            a1 = W.a1[k]
                            if mem is not None:
                                # (a store's a2 bits 24-39 are its partial sectors, not warm lines)
                                done = mem.global_access(tt, sm, T.aux[i], sectors, a1, lines,
                                                         a2 & (0xFFFFFF if op == OP_STG else 0xFFFFFFFFFF),
                                                         m) + (te - tt)
                            else:
                                done = te + LAT[i]
                            if op == OP_LDG and a1 >> 32:
                                pend = self.l1_pending[sm]
                                lk = a1 >> 32
                                pd = pend.get(lk)
                                if hl and pd is not None and pd > done:
                                    done = pd
                                    self.l1_pending_waits += 1
                                if pd is None or done > pd:
                                    if pd is None and len(pend) > self._pending_cap[sm]:
                                        self._prune_pending(pend, tt)
                                        self._pending_cap[sm] = max(4096, 2 * len(pend))
                                    pend[lk] = done
                        elif hl:
                            done = te + self.cfg.l1_hit_latency
                            if op == OP_LDG:
                                pd = self.l1_pending[sm].get(W.a1[k] >> 32)
                                if pd is not None and pd > done:
                                    # the lines are still on their way from another load's L1 miss
                                    done = pd
                                    self.l1_pending_waits += 1
                        else:
                            done = tt + (LAT[i] if op == OP_LDG else 1)
                    else:
                        # cp.async and atomics (no L1TEX stage payload, hence no L1 hits): the sub-partition's LSU
                        # takes one cycle per line
                        if sectors:
                            if lines > 1:
                                li = self.cfg.lsu_ii_per_line
                                for s, kk in spk:
                                    x = tt + (lines * kk * li) // m
                                    if x > s[p]:
                                        s[p] = x
                            self.global_sectors += sectors
                            mem = self.mem
                            gh = self.ghost if op == OP_CP_ASYNC else None
                            if gh is not None:
                                gh(W, k, tt, False)
                            if mem is not None:
                                done = mem.global_access(tt, sm, T.aux[i], sectors, W.a1[k], lines, a2, m)
                            else:
                                done = tt + LAT[i]
                            if op == OP_CP_ASYNC:
                                done += T.cax[i]          # .ca: through the L1 fill path (microbench ldgsts_rate)
                                cf = self.cfg.cpa_fill_cycles_per_byte
                                if cf:
                                    # the SM takes cp.async data at l1.cp_async_fill_bytes_per_cycle (H100
                                    # smem_fill: 116 B/cycle, L2-resident): this copy is accepted after the ones
                                    # before it; the warp waits for that (long_scoreboard: per-SASS samples of
                                    # gemm80, the IMAD.MOV rewriting an LDGSTS address register) and so does its data
                                    fq = self.cpa_fill
                                    a0 = fq[sm]
                                    if a0 > tt:
                                        done += a0 - tt
                                        if a0 > W.hold_t:
                                            W.hold_t = a0
                                            W.hold_r = S.LONG_SCOREBOARD
                                    else:
                                        a0 = tt
                                    fq[sm] = a0 + sectors * SECTOR_BYTES * cf
                            if gh is not None:
                                gh(W, k, tt, True)
                        else:
                            done = tt + (LAT[i] if op == OP_LDG else 1)
                    if op == OP_LDG:
                        rs = RSN[i]
                        for d in DSTS[i]:
                            rr[d] = done
                            rk[d] = rs
                    elif op == OP_STG:
                        # a store holds the warp at EXIT (drain) until its data has left the SM -- through the
                        # L1TEX stage when modelled (te) -- not until L2 acknowledges it (cta_turnaround: 400 cycles
                        # from the last clock of a CTA that stored 4 words to the next CTA's first clock)
                        # a MEMBAR.GPU / release waits for the store's acknowledgement: from the near L2 partition
                        # whatever the home (memory.py global_access last_ack; H200 cluster_sync own_store)
                        mem = self.mem
                        if not sectors or mem is None:
                            ack = done
                        else:
                            ack = mem.last_ack + (te - tt) if wf else mem.last_ack
                            if wf and te > tt and ack > mem.sm_outstanding[sm]:
                                mem.sm_outstanding[sm] = ack      # acknowledged after its data left the SM
                        if ack > W.gack:
                            W.gack = ack
                        if wf:
                            done = te + 1
                        if done > W.st_ack:
                            W.st_ack = done
                    else:
                        if done > W.cpa_open:
                            W.cpa_open = done
                elif op == OP_LDS or op == OP_STS:
                    wf = W.a0[k]
                    if wf:
                        self.shared_wavefronts += wf
                        if wf > 1:
                            si = self.cfg.smem_ii
                            for s, kk in spk:
                                x = tt + (wf * kk * si) // m
                                if x > s[p]:
                                    s[p] = x
                        smem = self.smem
                        done = (smem.access(tt, sm, wf, W.a2[k], T.aux[i] == "matrix") if smem is not None
                                else tt + LAT[i])
                    else:
                        done = tt + LAT[i]
                    if op == OP_LDS:
                        rs = RSN[i]
                        for d in DSTS[i]:
                            rr[d] = done
                            rk[d] = rs
                elif op == OP_BAR and T.aux[i] == "arrive":   # bar.arrive: the warp counts and goes on
                    self._bar_arrive_only(W, W.a0[k], W.a1[k], tt)
                elif op == OP_BAR:
                    W.hold_t = INF
                    W.hold_r = S.BARRIER
                    W.pos, W.t, W.tlast, W.pi = pos, t, tlast, pi
                    W.issued += issued
                    if not self._bar_arrive(W, W.a0[k], W.a1[k], tt):
                        W.parked = (op, i)
                        W.st = INF
                    else:
                        W.st = t  # the release woke other bundles of this SM: let the SM loop re-pick
                    break
                elif op == OP_MBAR_WAIT:
                    if W.act[k]:
                        hint = W.a2[k]
                        reason = self.cfg.mbar_sleep_reason if hint >= 0 else self.cfg.mbar_wait_reason
                        if not W.a3[k]:
                            # functionally failed poll: a fixed-latency probe
                            done = tt + LAT[i]
                        elif self.mbar is None:
                            done = tt + LAT[i]
                        else:
                            if W.a1[k] in self.tx_bars:
                                W.tx_sync = True
                            W.wait_dsts = DSTS[i]
                            wk = W.wake
                            if wk is None or wk[0] != reason:
                                wk = W.wake = (reason, lambda cyc, W=W, reason=reason: self._wake(W, cyc, reason))
                            done = self.mbar.wait(W.a1[k], W.a0[k], tt, T.aux[i], hint, wk[1])
                            if done is None:
                                done = INF
                                if rec_on:
                                    self._mwait[W.g] = (W.a1[k], tt)
                            elif rec_on:
                                self.rec.mbarrier_wait(sm, W.g, W.a1[k], tt, done)
                        for d in DSTS[i]:
                            rr[d] = done
                            rk[d] = reason
                    else:
                        for d in DSTS[i]:
                            rr[d] = tt + LAT[i]
                            rk[d] = S.WAIT
                elif op == OP_MBAR_ARRIVE:
                    if W.act[k] and self.mbar is not None:
                        if T.aux[i] == "drop":
                            self._mbar_arrive_drop(W, k, tt)
                        else:
                            self.mbar.arrive(W.a1[k], tt, W.a2[k], W.a0[k])
                    for d in DSTS[i]:
                        rr[d] = tt + LAT[i]
                        rk[d] = S.SHORT_SCOREBOARD
                elif op == OP_MBAR_INIT:
                    if W.act[k] and self.mbar is not None:
                        self.mbar.init(W.a1[k], W.a0[k], tt)
                elif op == OP_TMA_LD or op == OP_TMA_ST:
                    if W.act[k]:
                        nbytes = W.a0[k]
                        store = op == OP_TMA_ST
                        gh = None if store else self.ghost
                        if gh is not None:
                            gh(W, k, tt, False)
                        W.tx_sync = True
                        if W.a1[k] >= 0:
                            self.tx_bars.add(W.a1[k])
                        if self.tma is not None:
                            nxt = self.tma.issue(tt, sm, W.g, nbytes, W.a3[k], 0 if store else W.a2[k], W.a1[k],
                                                 store)
                        else:
                            nxt = tt + LAT[i]
                        if gh is not None:
                            gh(W, k, tt, True)
                        W.tma_next = nxt
                elif op == OP_WGMMA:
                    flops = W.a0[k]
                    self.wgmma_flops += flops
                    self.async_flops_by_class[_RATE_CLASS_OF.get(T.aux[i], 0)] += flops
                    tc = self.tc
                    if tc is not None:
                        done, rel, rfb = self._wgmma(W, tt, flops, W.a1[k], W.a2[k], W.a3[k], T.aux[i])
                        if rel > tt + 1:  # accumulator queue full: the warp waits for the oldest op
                            W.hold_t = rel
                            W.hold_r = S.MATH_PIPE_THROTTLE
                        if rfb and tcf is None:
                            # (legacy, no register-file bandwidth given) each warp's quarter of the accumulator
                            # traffic through its own operand collector
                            q4 = 4 * self.rf_bpc
                            for s, kk in spk:
                                x = tt + int(rfb * kk / q4)
                                if x > s[P_TENSOR]:
                                    s[P_TENSOR] = x
                    else:
                        done = tt + LAT[i]
                    if done > W.wg_open:
                        W.wg_open = done
                    if wgtok >= 0 and done > rr[wgtok]:
                        # serialised by ptxas: the warpgroup's next wgmma waits on this one (its token register)
                        rr[wgtok] = done
                        rk[wgtok] = S.BARRIER    # WARPGROUP.DEPBAR: a barrier stall, as for wait_group
                elif op == OP_WGMMA_COMMIT:
                    W.wg_groups.append(W.wg_open)
                    W.wg_open = 0
                    if self.wg_st and W.g in self.wg_st:
                        st = self.wg_st[W.g]
                        st.gp.append(st.open_p)
                        st.open_p = -1
                elif op == OP_WGMMA_WAIT:
                    nallow = 0 if wgtok >= 0 else W.a0[k]   # serialised: ptxas waits for every op
                    if self.wg_st and W.g in self.wg_st:
                        h = self._wg_wait_split(W, nallow)   # INF: parked until the warpgroup's last warp issues
                    else:
                        grp = W.wg_groups
                        if W.wg_open:  # wgmmas not committed yet count as a group (conservative)
                            grp.append(W.wg_open)
                            W.wg_open = 0
                        h = _retire_groups(grp, nallow)
                    if h > tt + 1:
                        # waiting for the ops to complete is WARPGROUP.DEPBAR's barrier stall; waiting for the other
                        # warps of the warpgroup to issue (INF: parked) is WARPGROUP.ARRIVE's gmma stall
                        W.hold_t = h
                        W.hold_r = S.GMMA if h >= INF else S.BARRIER
                elif op == OP_CPA_COMMIT:
                    W.cpa_groups.append(W.cpa_open)
                    W.cpa_open = 0
                elif op == OP_CPA_WAIT:
                    nallow = W.a0[k]
                    grp = W.cpa_groups
                    h = _retire_groups(grp, nallow)
                    if h > tt + 1:
                        W.hold_t = h
                        W.hold_r = S.LONG_SCOREBOARD
                elif op == OP_BULK_COMMIT:
                    if self.tma is not None:
                        self.tma.bulk_commit(sm, W.g)
                elif op == OP_BULK_WAIT:
                    if self.tma is not None:
                        h = self.tma.bulk_group_done(sm, W.g, W.a0[k])
                        if h is not None and h > tt + 1:
                            W.hold_t = h
                            W.hold_r = S.LONG_SCOREBOARD
                elif op == OP_CLOCK:
                    for g in W.gs:
                        self.clock_issue[(g, W.a0[k])] = tt
                    for d in DSTS[i]:
                        rr[d] = tt + LAT[i]
                        rk[d] = S.WAIT
                elif op == OP_FENCE:
                    h = max(W.st_ack, tt + LAT[i])
                    if h > tt + 1:
                        W.hold_t = h
                        W.hold_r = S.MEMBAR
                elif OP_TC05_MMA <= op <= OP_TC05_CP:   # tcgen05 block: Blackwell tensor core + TMEM (_tcgen05)
                    self._tcgen05(W, op, i, k, tt)
                elif OP_DSM <= op <= OP_CBAR_WAIT:   # clusters: DSM fabric and barrier.cluster (one call, see _cluster_op)
                    self._cluster_op(W, op, i, k, tt)
                elif op == OP_MEMBAR:                # fence.acq_rel.cluster/gpu, membar.gl: MEMBAR.ALL.GPU
                    self._membar(W, tt)
                elif op == OP_ATOMG:
                    self._atomg(W, i, k, tt, p)
                else:  # any other op with destinations: fixed latency
                    rt = tt + LAT[i]
                    rs = RSN[i]
                    for d in DSTS[i]:
                        rr[d] = rt
                        rk[d] = rs
        self.sm_running = -1


    # -- global atomics ---------------------------------------------------------------------------------------
    def _atomg(self, W: _Warp, i: int, k: int, tt: int, p: int) -> None:
        """atom / red on global memory (H200 microbench src/atomics.cu, components/atomics.py). The LSU takes one
        cycle per line. A .release / .acq_rel atomic first waits as a .gpu fence does (MEMBAR.ALL.GPU: the warp's
        stores and reductions acknowledged, then ``l2.fence_gpu_cycles``), holding the warp (stall reason
        membar). The round trip is an L2 access plus ``l2.atomic_extra_latency_cycles`` (a red is acknowledged
        as a store); an .acquire / .acq_rel result is ready ``l2.atomic_acquire_cycles`` later. A lock-taking
        atom.cas (payload flags) is performed no earlier than the holder's release."""
        T = self.T
        sectors = W.a0[k]
        mem = self.mem
        dsts = T.dsts[i]
        if not sectors or mem is None:
            done = tt + T.lat[i]
        else:
            lines = W.a3[k] & 0x7FFFF             # bits 19-31: element operations (memops._atom_serial_bits)
            if lines > 1:
                li = self.cfg.lsu_ii_per_line
                m = W.m
                for s, kk in W.spk:
                    x = tt + (lines * kk * li) // m
                    if x > s[p]:
                        s[p] = x
            self.global_sectors += sectors
            name, release, acquire, is_float, returns = T.aux[i]
            t0 = tt
            if release:
                g = self._l2_ack_fence(W, tt)
                if g is not None:
                    t0 = g
                    if t0 > W.hold_t:
                        W.hold_t = t0
                        W.hold_r = S.MEMBAR
            a1 = W.a1[k]
            a2 = W.a2[k]
            a3h = W.a3[k] >> 32
            same = a3h & 0x1FFF                   # lane-operations on the busiest word and line (memops)
            ops = (a3h >> 13) & 0x1FFF
            cfg = self.cfg
            if cfg.atom_request or cfg.atom_lane_red or cfg.atom_lane_ret:
                # the SM's atomic unit, one request at a time (H200 atomics.cu TPUT, one SM, 32 warps: 5.4-5.7
                # cycles per request on distinct words; the lanes on one word 1.0 cycle each for red, 2.0 for atom)
                u = self.atom_unit
                x = u[W.sm]
                if x > t0:
                    t0 = x
                occ = W.m * cfg.atom_request
                x = same * (cfg.atom_lane_red if name == "red" else cfg.atom_lane_ret)
                u[W.sm] = t0 + (x if x > occ else occ)
            # the servers are reserved at issue (engine order: a reservation at t0 would queue every other SM's
            # requests behind it); the access leaves after the fence (and the SM's atomic unit) with the queue
            # it saw
            done = mem.global_access(tt, W.sm, "atom", sectors, a1 & 0xFFFFFFFF, lines, a2 & _LOW40, W.m) + (t0 - tt)
            if name != "red":
                done = int(done + mem.atom_extra)
            # performed at the slice halfway through the round trip, once its line's and word's atomic units have
            # room (components/atomics.py AtomicUnits: busy calendars kept in departure time, which reaches them
            # out of order after the fences; the way to the slice is the same for all)
            back = (done - t0) * 0.5
            ordered = release or acquire
            late = mem.atomic_perform(t0, (a2 >> 40) & _KEY24, (a3h >> 26) & 31, ops, same, is_float, ordered,
                                      lines, (W.a3[k] >> 19) & 0x1FFF, returns) - t0
            perf = t0 + back + late
            if late:
                done = int(done + late)
            if name == "red":                     # acknowledged as a store is (microbench red_fence ~ st_fence:
                ack = mem.last_ack + (t0 - tt) + late   # 614.7 vs 596.2 on one word), from the near partition
                if ack > W.gack:
                    W.gack = ack
            elif done > W.gack:                   # a later MEMBAR waits for it (microbench atomics_rz: acq_rel
                W.gack = done                     # atomics to RZ back to back 814 cycles = fence + round trip)
            hi = a1 >> 32
            locks = mem.locks
            if acquire:
                done = int(done + mem.atom_acquire)
            if hi and locks is not None:
                key = hi & KEY_MASK
                if hi & ACQUIRE:
                    late = done - perf            # perform -> result in registers
                    spin = None
                    if mem.lock_spin:         # the waiter keeps retrying on its line's atomic units
                        spin = (mem.atom_units, *mem.atomic_unit_keys((a2 >> 40) & _KEY24, (a3h >> 26) & 31),
                                back, *mem.atomic_occupancy(ops, same, is_float, ordered))
                    g = locks.acquire(key, W.cta, perf, lambda c, W=W, b=late: self._lock_grant(W, c + b), spin)
                    if g is None:             # another CTA holds it: the result (and the warp) waits
                        W.wait_dsts = dsts
                        done = INF
                    else:
                        done = int(g + late)
                elif hi & WRITE:
                    locks.release(key, W.cta, perf, t0)
        rr, rk = W.rr, W.rk
        for d in dsts:
            rr[d] = done
            rk[d] = S.LONG_SCOREBOARD

    @staticmethod
    def _prune_pending(pend: dict, t: int) -> None:
        """Drop the L1 fills of ``pend`` that are back by cycle ``t`` (a later hit waits for none of them)."""
        for lk in [lk for lk, d in pend.items() if d <= t]:
            del pend[lk]

    def _store_path(self, sm: int, tt: int, e1: float, sectors: int, a2: int) -> float:
        """A store's data leaves SM ``sm`` for L2 through its store path after the L1TEX stage (``e1``): one
        ``l1.store_bytes_per_cycle`` server per SM (H200 microbench sm_store_rate, 2026-12-05: 32.0 B/cycle for
        1-66 SMs, 2-32 warps, 4-16 B per lane, st.global and st.global.cg alike; loads of the same pattern reach
        106). Once more than ``l1.store_queue_bytes`` wait for it, the SM's LSU pipes are held (lg_throttle) until
        the excess has left (bursts of 16 / 32 / 128 KiB: 484 / 1,001 / 4,162 cycles, ~0.8 KiB queued). Partly
        written sectors (trace a2 bits 24-31: their lines, 32-39: the sectors; workloads/functional/memops.py
        ``partial_store_sectors``) take max(lines x ``l1.store_partial_line_cycles``, sectors x
        ``l1.store_partial_sector_cycles``) instead of a full sector's time each (microbench store_scatter, H100
        2026-12-07: one SM's warp store of 8 lines x 16 B 15.7 cycles, 32 lines x 4-16 B 62.7, 2 lines x 8 half sectors
        9.8, 4 full sectors 4.2-5.2). Returns when this store's data has left."""
        cfg = self.cfg
        sp = self.st_path
        s0 = sp[sm]
        if s0 < e1:
            s0 = e1
        pl = (a2 >> 24) & 0xFF
        if pl and (cfg.store_partial_line or cfg.store_partial_sector):
            ps = (a2 >> 32) & 0xFF
            x = pl * cfg.store_partial_line
            y = ps * cfg.store_partial_sector
            s1 = s0 + (sectors - ps) * SECTOR_BYTES * cfg.store_cycles_per_byte + (x if x > y else y)
        else:
            s1 = s0 + sectors * SECTOR_BYTES * cfg.store_cycles_per_byte
        sp[sm] = s1
        hold = s1 - cfg.store_queue_bytes * cfg.store_cycles_per_byte
        if hold > tt:
            h = int(hold) + (hold > int(hold))
            for st in self.spst[sm]:
                if h > st[P_LSU]:
                    st[P_LSU] = h
        return s1

    def _l2_ack_fence(self, W: _Warp, tt: int) -> int | None:
        """End of a .gpu fence issued at ``tt`` (MEMBAR.ALL.GPU, also the release side of an atomic) by its L2
        part: ``l2.fence_gpu_cycles`` after the last L2 acknowledgement of the warp's global stores / atomics
        (microbench h200_atomics_2026-12-03), and with ``latencies.membar_drains: sm`` no earlier than
        ``membar_drain_cycles`` after the SM's outstanding global requests (any warp's) complete; None when
        neither applies or there is no memory unit."""
        mem = self.mem
        if mem is None:
            return None
        g = None
        fg = mem.fence_gpu
        if fg:
            g = int((W.gack if W.gack > tt else tt) + fg)
        if self.cfg.membar_sm:
            so = mem.sm_outstanding[W.sm]
            if so > tt and (g is None or so + self.cfg.membar_drain > g):
                g = so + self.cfg.membar_drain
        return g

    def _lock_grant(self, W: _Warp, c: float) -> None:
        """The lock an atom.cas of ``W`` waits for is taken at the L2: its result is back at ``c``."""
        self._wake(W, int(c) + (c > int(c)), S.LONG_SCOREBOARD)

    # -- clusters: DSM over the GPC fabric (components/dsm.py) and barrier.cluster ----------------------------------
    def attach_clusters(self, members: list[list[int]], dsm, barrier_latency: int = 0) -> None:
        """Cluster membership (CTAs by rank) of the launch and the DSM fabric the cluster ops use."""
        self.cl_members = [list(m) for m in members]
        self.cl_of = {c: ci for ci, m in enumerate(self.cl_members) for c in m}
        self.dsm = dsm
        self.cbar_latency = int(barrier_latency)

    def _membar(self, W: _Warp, tt: int) -> int:
        """MEMBAR.ALL.GPU issued at ``tt``: the warp holds (membar stall) until the cycle returned. H200
        (microbench/results/h200_cluster_sync_2026-12-03): ``membar_gpu`` with nothing outstanding, else
        ``membar_drain`` after the last of the SM's outstanding bulk (TMA) copies and the warp's stores."""
        h = tt + self.cfg.membar_gpu
        if W.tx_sync:
            # the warp issued a TMA copy, or waited on / tested a barrier TMA copies complete, since its last fence:
            # the fence takes membar_after_tma_cycles even with every copy landed (H100 in situ, the cluster GEMM's k
            # loop: 629-705 cycles, microbench/results/h100_cluster_gemm_timing_2026-12-08; behind an own bulk copy
            # 647-700, cluster_sync / membar_load); a fence right after a fence, or after waits on barriers no copy
            # completes, costs membar_gpu_cycles (H200: the plain kernel's second release ~260 cycles, the remote-arrive
            # ping-pong 272 a fence)
            W.tx_sync = False
            if tt + self.cfg.membar_tma > h:
                h = tt + self.cfg.membar_tma
        out = W.st_ack
        if self.tma is not None:
            a = self.tma.active[W.sm]
            if a:
                m = max(a)
                if m > out:
                    out = m
        if out > tt and out + self.cfg.membar_drain > h:
            h = out + self.cfg.membar_drain
        g = self._l2_ack_fence(W, tt)    # and for the L2 acknowledgements of the warp's stores and atomics
        if g is not None and g > h:
            h = g
        if h > tt + 1 and h > W.hold_t:
            W.hold_t = h
            W.hold_r = S.MEMBAR
        return h

    def _sm_of(self, cta: int, W: _Warp, i: int) -> int:
        sm = self.cta_sm.get(cta)
        if sm is None:
            raise SimulationError(f"CTA {W.cta} reaches the shared memory of CTA {cta}, which is not resident "
                                  f"(kernel.ptx:{self.T.line[i]}: {self.T.text[i].strip()[:60]})",
                                  hint="the CTAs of a cluster run together: keep them alive (barrier.cluster) while "
                                       "peers access their shared memory")
        return sm

    def _cluster_op(self, W: _Warp, op: int, i: int, k: int, tt: int) -> None:
        """One cluster instruction of bundle W issued at ``tt`` (payloads: docs/design.md, Contract 2)."""
        T = self.T
        self.dsm_ops += 1
        dsm = self.dsm
        if op == OP_DSM:                     # ld/st/atom/red.shared::cluster: a0 wf, a1 dst CTA + 1, a2 B, a3 remote B
            a1 = W.a1[k]
            kind = T.aux[i]
            if a1 and dsm is not None:
                dst_sm = self._sm_of(a1 - 1, W, i)
                rb = W.a3[k]
                if kind in ("ld", "atom"):   # data (or the old value) comes back from the owner's SM
                    done = dsm.transfer(tt, dst_sm, W.sm, rb, "load")
                else:
                    done = dsm.transfer(tt, W.sm, dst_sm, rb, "store")
                    h = dsm.accept(W.sm, tt)         # back-pressure: the injection queue is full until h
                    if h > tt + 1 and h > W.hold_t:
                        W.hold_t = h
                        W.hold_r = S.MIO_THROTTLE
                lb = W.a2[k] - rb
                if lb > 0 and self.smem is not None:
                    d2 = self.smem.access(tt, W.sm, 1, lb)
                    if d2 > done:
                        done = d2
            else:
                wf = W.a0[k]
                if wf:
                    self.shared_wavefronts += wf
                done = (self.smem.access(tt, W.sm, wf, W.a2[k]) if wf and self.smem is not None
                        else tt + T.lat[i])
            if kind in ("ld", "atom"):
                rs = T.rsn[i]
                for d in T.dsts[i]:
                    W.rr[d] = done
                    W.rk[d] = rs
            elif done > W.st_ack:
                W.st_ack = done              # stores drain before exit / a releasing cluster arrive
        elif op == OP_DSM_ARRIVE:            # mbarrier.arrive on a shared::cluster address: a1 key (owner CTA)
            if T.aux[i] == "membar":         # .release.cluster/gpu: MEMBAR.ALL.GPU first (local or remote)
                tt = self._membar(W, tt)
            if W.act[k] and self.mbar is not None:
                key = W.a1[k]
                dst = key >> 32
                if dst == W.cta or dsm is None:
                    if tt > self.eng.now and T.aux[i] == "membar":
                        self.eng.schedule(tt, self.mbar.arrive, key, tt, W.a2[k], W.a0[k])
                    else:
                        self.mbar.arrive(key, tt, W.a2[k], W.a0[k])
                else:
                    ta = dsm.transfer(tt, W.sm, self._sm_of(dst, W, i), 8, "mbarrier")
                    ta = max(ta, self.eng.now)
                    self.eng.schedule(ta, self.mbar.arrive, key, ta, W.a2[k], W.a0[k])
            for d in T.dsts[i]:
                W.rr[d] = tt + T.lat[i]
                W.rk[d] = S.SHORT_SCOREBOARD
        elif op == OP_DSM_COPY:
            if not W.act[k]:
                return
            nbytes = W.a0[k]
            key = W.a1[k]
            if T.aux[i] == "s2s":            # cp.async.bulk.shared::cluster.shared::cta: through the fabric
                dst = key >> 32
                t0 = tt + (self.tma.lat if self.tma is not None else 0)   # the bulk-copy front end takes the command
                ta = (dsm.transfer(t0, W.sm, self._sm_of(dst, W, i), nbytes, "tma") if dsm is not None and dst != W.cta
                      else t0 + T.lat[i])
                if self.mbar is not None and key >= 0:
                    ta = max(ta, self.eng.now)
                    self.eng.schedule(ta, self.mbar.complete_tx, key, nbytes, ta)
            else:                            # TMA .multicast::cluster: one L2 read, then one copy per CTA of the mask
                a2 = W.a2[k]
                mask = a2 >> 40
                if self.tma is not None:
                    W.tma_next = self.tma.issue(tt, W.sm, W.g, nbytes, W.a3[k], a2 & ((1 << 40) - 1), -1, False)
                    t_done = self.tma.last_done
                else:
                    t_done = tt + T.lat[i]
                mem = self.cl_members[self.cl_of[W.cta]] if self.cl_of else [W.cta]
                targets = [mem[r] for r in range(len(mem)) if mask >> r & 1]
                W.tx_sync = True
                for c in targets:
                    self.tx_bars.add((c << 32) | (key & 0xFFFFFFFF))
                self.eng.schedule(max(t_done, self.eng.now), self._mcast_deliver, W, i, targets, nbytes,
                                  key & 0xFFFFFFFF)
        elif op == OP_CBAR_ARRIVE:           # barrier.cluster.arrive (.release waits for the warp's stores)
            t = tt
            if T.aux[i] != "relaxed":        # .release: MEMBAR.ALL.GPU before UCGABAR_ARV (ptxas)
                t = self._membar(W, tt)
            ci = self.cl_of.get(W.cta, -1 - W.cta)
            ph = self._cb_arr.get(W.g, 0)
            self._cb_arr[W.g] = ph + 1
            st = self._cb.get((ci, ph))
            if st is None:
                st = self._cb[(ci, ph)] = [0, 0, [], None]
                self._cb_open.setdefault(ci, set()).add(ph)
            st[0] += W.m
            if t > st[1]:
                st[1] = t
            self._cbar_try(ci, ph, tt)
        elif op == OP_CBAR_WAIT:             # barrier.cluster.wait: hold until the phase completes
            ci = self.cl_of.get(W.cta, -1 - W.cta)
            ph = self._cb_wait.get(W.g, 0)
            self._cb_wait[W.g] = ph + 1
            st = self._cb.get((ci, ph))
            if st is None:
                st = self._cb[(ci, ph)] = [0, 0, [], None]
                self._cb_open.setdefault(ci, set()).add(ph)
            if st[3] is not None:
                if st[3] > tt + 1:
                    W.hold_t = st[3]
                    W.hold_r = S.BARRIER
            else:
                W.hold_t = INF               # parks at the next issue; _cbar_try wakes it
                W.hold_r = S.BARRIER
                st[2].append(W)

    def _mcast_deliver(self, W: _Warp, i: int, targets: list, nbytes: int, off: int) -> None:
        """At the multicast's L2 completion: one copy into every CTA of the mask, complete_tx on its mbarrier."""
        t = self.eng.now
        for cta in targets:
            dsm_sm = self._sm_of(cta, W, i)
            ta = self.dsm.deliver(t, W.sm, dsm_sm, nbytes) if self.dsm is not None else t
            if self.mbar is not None:
                self.eng.schedule(ta, self.mbar.complete_tx, (cta << 32) | off, nbytes, ta)

    def _cbar_need(self, ci: int) -> int:
        mem = self.cl_members[ci] if ci >= 0 else [-1 - ci]
        return sum(self.cta_live.get(c, 0) for c in mem)

    def _cbar_try(self, ci: int, ph: int, t: int) -> None:
        st = self._cb.get((ci, ph))
        if st is None or st[3] is not None or st[0] == 0 or st[0] < self._cbar_need(ci):
            return
        st[3] = T = st[1] + self.cbar_latency
        self._cb_open.get(ci, set()).discard(ph)
        now = self.eng.now
        for X in st[2]:                      # release the waiting bundles (their hold, not their registers)
            if X.done:
                continue
            if X.hold_t >= INF:
                X.hold_t = T
            if X.parked is not None:
                X.parked = None
                x = max(X.t, now, T)
                X.st = x
                self._kick(X.sm, x)
        st[2] = []

    def _cbar_check_cluster(self, ci, t: int) -> None:
        if ci is None:
            return
        for ph in sorted(self._cb_open.get(ci, ())):
            self._cbar_try(ci, ph, t)

    def _wgmma(self, W: _Warp, tt: int, flops: int, smem_bytes: int, n: int, a_regs: int, dtype: str):
        """One ``wgmma`` of the bundle: the tensor unit is called once per warpgroup (its 4 warps together).
        A warpgroup split over several bundles (warps on different code paths, or the per-warp model): the op is
        warpgroup-collective (PTX ISA wgmma.mma_async: every thread of the warpgroup executes it, the
        accumulator is spread over all 128 threads' registers), so it starts when the *last* of its warps
        issues it; the earlier bundles go on issuing (the op is asynchronous) and learn its completion then
        (``_wg_resolve``; a ``wgmma.wait_group`` on it parks until then). H200 cluster GEMM variants
        (docs/accuracy.md "Cluster GEMM"): the producer warp's fence time reappears one-for-one as the other
        three warps' gmma stall, not as barrier stall.
        Returns (completion known now, release cycle, accumulator register bytes of one warpgroup op)."""
        tc = self.tc
        m = W.m
        pf = flops // m      # per-warp quarter of the warpgroup's FLOPs
        ps = smem_bytes // m
        ordn = W.wg_ord
        W.wg_ord = ordn + 1
        done = rel = 0
        rfb = 0
        pend = 0
        cache = self.wg_cache
        for x, k, size in W.wgp:
            if k < size:
                key = (W.cta, x, ordn)
                ent = cache.get(key)
                if ent is None:
                    ent = cache[key] = [size, tt, []]   # [warps still to issue, latest issue, early bundles]
                ent[0] -= k
                if tt > ent[1]:
                    ent[1] = tt
                if ent[0] > 0:
                    ent[2].append(W)
                    pend += 1
                    continue
                del cache[key]
                d = tc.wgmma(ent[1], W.sm, (W.cta, x), pf * size, ps * size, n, bool(a_regs), dtype)
                for X in ent[2]:
                    self._wg_resolve(X, ordn, d, ent[1])
            else:
                d = tc.wgmma(tt, W.sm, (W.cta, x), pf * size, ps * size, n, bool(a_regs), dtype)
            r = getattr(tc, "last_release", 0)
            b = getattr(tc, "last_rf_bytes", 0)
            if d > done:
                done = d
            if r > rel:
                rel = r
            if b > rfb:
                rfb = b
        if pend:
            st = self.wg_st[W.g]
            pd = st.pend.get(ordn)
            if pd is None:
                pd = st.pend[ordn] = [0, 0, 0]
            pd[0] += pend
            if done > pd[1]:
                pd[1] = done
            st.open_p = ordn
            if not rfb:
                rfb = tc.wgmma_rf_traffic(n)[0]
        return done, rel, rfb

    def _wg_resolve(self, X: _Warp, ordn: int, d: int, start: int = 0) -> None:
        """Op ``ordn`` of early bundle ``X``'s warpgroup completes at ``d`` (its last warp issued it at ``start``).
        A ``wgmma.wait_group`` parked on it waits as ``gmma`` until ``start`` (Nsight Compute's warpgroup_arrive:
        the warpgroup's other warps have not arrived) and as ``barrier`` from then to ``d`` (WARPGROUP.DEPBAR; per-SASS
        warp-state samples of the cluster GEMM, microbench/results/h100_units_stores_stalls_2026-12-07)."""
        st = self.wg_st.get(X.g)
        if st is None or X.done:
            return
        pd = st.pend[ordn]
        pd[0] -= 1
        if d > pd[1]:
            pd[1] = d
        if start > pd[2]:
            pd[2] = start
        if pd[0]:
            return
        del st.pend[ordn]
        w = st.wait
        if w is not None and w[0] == ordn:
            st.wait = None
            for q in [q for q in st.done if q < ordn]:
                del st.done[q]
            c = pd[1] if pd[1] > w[1] else w[1]
            if X.hold_t >= INF and X.hold_r == S.GMMA:
                X.hsplit = pd[2]
                X.hold_r = S.BARRIER
            self._wake(X, c, S.BARRIER)
        else:
            st.done[ordn] = pd[1]

    def _wg_wait_split(self, W: _Warp, nallow: int) -> int:
        """``wgmma.wait_group nallow`` of a bundle with a split warpgroup: the hold cycle, or INF when a retired
        group holds an op not yet issued by the rest of its warpgroup (``_wg_resolve`` wakes the bundle)."""
        st = self.wg_st[W.g]
        grp, gp = W.wg_groups, st.gp
        if W.wg_open or st.open_p >= 0:  # wgmmas not committed yet count as a group (conservative)
            grp.append(W.wg_open)
            gp.append(st.open_p)
            W.wg_open = 0
            st.open_p = -1
        if len(grp) <= nallow:
            return 0
        cut = len(grp) - nallow
        h = max(grp[:cut])
        p = max(gp[:cut])
        del grp[:cut]
        del gp[:cut]
        if p < 0:
            return h
        if p in st.pend:
            st.wait = (p, h)
            return INF
        d = st.done[p]   # resolved before the wait: ops resolve in issue order, so p is the latest retired
        for q in [q for q in st.done if q <= p]:
            del st.done[q]
        return d if d > h else h

    # -- tcgen05 (begin tcgen05 block) ----------------------------------------------------------------------
    def _tcgen05(self, W: _Warp, op: int, i: int, k: int, tt: int) -> None:
        """A tcgen05 instruction issued at ``tt`` by bundle ``W`` (trace payloads: workloads tcgen05_ops).

        * ``tcgen05.mma``: queued on the SM's tensor cores (``tc.tcgen05``: per-SM FIFO at the tcgen05 rate,
          completion tail); the issuing warp goes on at once. ``tcgen05.cp`` / ``shift`` write TMEM through its
          store ports. Both are asynchronous and tracked per warp (``tc05[g][0]``: latest completion);
        * ``tcgen05.commit``: its mbarrier arrival is an engine event at max(issue + latency, that completion);
        * ``tcgen05.ld`` / ``st``: the warp's lane quadrant port of the TMEM (``tmem.ld/st``); the loaded
          registers are ready when the data is, ``tcgen05.wait::ld`` / ``wait::st`` hold the warp until its
          outstanding loads / stores are done;
        * ``tcgen05.alloc``: takes TMEM columns of the SM; a warp whose columns are not free waits (parked) until
          a ``dealloc`` on that SM frees them."""
        st = self.tc05.get(W.g)
        if st is None:
            st = self.tc05[W.g] = [0, 0, 0]          # async (mma/cp) completion, ld done, st done
        T = self.T
        tc, tm = self.tc, self.tmem
        act = W.act[k]
        if op == OP_TC05_MMA:
            flops = W.a0[k]
            if act and flops:
                self.tc05_flops += flops
                self.wgmma_flops += flops   # asynchronous tensor FLOPs (tensor_utilization_pct counts them)
                dt = TC05_DTYPES[(W.a2[k] >> 16) & 3]
                self.async_flops_by_class[_RATE_CLASS_OF.get(dt, 0)] += flops
                if tc is None:
                    done = tt + T.lat[i]
                else:
                    fn = getattr(tc, "tcgen05", None)
                    if fn is None:
                        raise SimulationError(f"tcgen05.mma on a tensor core of kind {getattr(tc, 'kind', '?')!r} "
                                              f"(kernel.ptx:{T.line[i]})",
                                              hint="an architecture whose tensor_core.kind is tcgen05 (b200)")
                    done = fn(tt, W.sm, flops, dt, (W.cta, W.w))
                if done > st[0]:
                    st[0] = done
        elif op == OP_TC05_COMMIT:
            if act and self.mbar is not None:
                when = tt + T.lat[i]
                if st[0] > when:
                    when = st[0]
                now = self.eng.now
                self.eng.schedule(when if when > now else now, self.mbar.arrive, W.a1[k], when, W.a2[k], 0)
        elif op == OP_TC05_LD or op == OP_TC05_ST or op == OP_TC05_CP:
            nbytes = W.a0[k]
            if not act or not nbytes:
                return
            if tm is None:
                if tc is not None and not hasattr(tc, "tcgen05"):
                    raise SimulationError(f"{OPS[op].lower()} needs tensor memory (kernel.ptx:{T.line[i]})",
                                          hint="an architecture whose tensor_core.kind is tcgen05 (b200)")
                done = tt + T.lat[i]
            elif op == OP_TC05_LD:
                done = tm.ld(tt, W.sm, [w % 4 for w in W.ws], nbytes)
            else:
                done = tm.st(tt, W.sm, None if op == OP_TC05_CP else [w % 4 for w in W.ws], nbytes)
            if op == OP_TC05_LD:
                rr, rk = W.rr, W.rk
                for d in T.dsts[i]:
                    rr[d] = done
                    rk[d] = S.SHORT_SCOREBOARD
                if done > st[1]:
                    st[1] = done
            elif op == OP_TC05_ST:
                if done > st[2]:
                    st[2] = done
            elif done > st[0]:
                st[0] = done
        elif op == OP_TC05_WAIT_LD or op == OP_TC05_WAIT_ST:
            h = st[1] if op == OP_TC05_WAIT_LD else st[2]
            if h > tt + 1 and h > W.hold_t:
                W.hold_t = h
                W.hold_r = S.SHORT_SCOREBOARD
        elif op == OP_TC05_ALLOC:
            ncols = W.a0[k]
            if act and ncols and tm is not None:
                W.wait_dsts = ()
                c = tm.alloc(tt, W.sm, ncols, lambda cyc, W=W: self._wake(W, cyc, S.MISC))
                W.hold_t = INF if c is None else c
                W.hold_r = S.MISC
        elif op == OP_TC05_DEALLOC:
            ncols = W.a0[k]
            if act and ncols and tm is not None:
                tm.dealloc(tt, W.sm, ncols)

    # ---- end tcgen05 block ----

    # -- diagnostics ------------------------------------------------------------------------------------
    def stuck_report(self, limit: int = 20) -> str:
        """The unfinished warps: SM, CTA, warp, PC, PTX line and what they wait on."""
        T = self.T
        lines = []
        live = [W for W in self.warps.values() if not W.done]
        for W in live[:limit]:
            if W.pcs is not None and W.pos < W.n:
                i = W.pcs[W.pos]
                loc = f"pc {i} (kernel.ptx:{T.line[i]}: {T.text[i].strip()[:60]})"
            else:
                i, loc = -1, "end of stream"
            if W.parked is not None:
                pop, pi = W.parked
                what = OPS[pop].lower()
                if any(W in st[2] for st in self._cb.values()):
                    what = "barrier.cluster.wait (warps of the cluster have not arrived)"
                elif W.hold_t >= INF and W.hold_r == S.BARRIER:
                    what = "bar.sync (other warps of the CTA have not arrived)"
                elif W.hold_t >= INF and W.hold_r == S.GMMA:
                    what = "wgmma.wait_group (the other warps of the warpgroup have not issued its wgmma)"
                elif pop == OP_MBAR_WAIT or any(W.rr[r] >= INF for r in T.deps[i] if i >= 0):
                    what = f"mbarrier phase (try_wait at kernel.ptx:{T.line[pi]})"
            else:
                what = f"ready at cycle {W.t} (hold until {W.hold_t}: {S.STALL_NAMES[W.hold_r]})"
            lines.append(f"  sm {W.sm} cta {W.cta} warp {W.w}: {loc}; waits on {what}")
        more = len(live) - len(lines)
        head = f"{len(live)} unfinished warps, {self.n_ctas - self.ctas_done} CTAs not retired"
        return head + ("\n" + "\n".join(lines) if lines else "") + (f"\n  ... and {more} more" if more > 0 else "")

    def finished(self) -> bool:
        return self.ctas_done == self.n_ctas

"""run_functional: batches of CTAs through the SIMT machine, scheduler (min-PC-first thread groups), trace."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.errors import PTXError, RecordError, SimulationError, UserError
from ..ptx.isa import Kind
from ..memory import GLOBAL_BASE
from ..ptx.model import Imm, Label
from .cluster import ClusterBarrier, cluster_order, cluster_shape
from .executor import Batch
from .l1model import L1Caches
from .l2model import L2Residency
from .trace import BatchTrace, KernelTrace


#: default budgets of one functional pass (raise them with ``--max-steps`` / ``--max-wall-seconds`` or the
#: ``max_steps`` / ``max_wall_seconds`` arguments). A step is one static instruction run by one thread group of
#: a batch of CTAs; the bundled records and microbenchmarks need at most ~42,000 steps.
DEFAULT_MAX_STEPS = 5_000_000
DEFAULT_MAX_WALL_SECONDS = 900.0
#: bytes of recorded trace (payload rows + participation masks) before the pass stops
DEFAULT_MAX_TRACE_BYTES = 2 << 30
_CHECK_EVERY = 64  # steps between wall-clock / trace-size checks


@dataclass
class FunctionalResult:
    outputs: dict
    trace: KernelTrace | None
    dynamic_warp_instructions: int
    steps: int = 0
    wall_seconds: float = 0.0
    memory: object = None
    #: CTAs executed (the whole grid, or the ``ctas`` subset of sampled mode)
    ctas_executed: int = 0


class _Exec:
    """Launch-wide state shared by all batches."""

    def __init__(self, record, program, mem, *, want_trace, compute_values, clock_oracle, sm_of_cta, max_steps,
                 exact_fma=True, fast_tma=True, exact_tensor=False, l2_capacity_bytes=None,
                 l1_capacity_bytes=None, max_wall_seconds=None, max_trace_bytes=None, t_start=None,
                 address_map=None, l1_sms=None, n_sm=None):
        import time

        self.max_wall_seconds = max_wall_seconds
        self.max_trace_bytes = max_trace_bytes
        self.trace_bytes_done = 0   # trace bytes of the finished batches
        self.t_start = t_start if t_start is not None else time.perf_counter()
        self.fast_tma = fast_tma
        self.exact_tensor = exact_tensor
        self.yield_after = 1024
        self.record = record
        self.program = program
        self.mem = mem
        self.want_trace = want_trace
        self.compute_values = compute_values
        self.clock_oracle = clock_oracle
        self.sm_of_cta = sm_of_cta
        self.n_sm = n_sm              # %nsmid (None: 132, the H100 / H200 SXM count)
        self.max_steps = max_steps
        self.exact_fma = exact_fma
        self.grid = tuple(record.grid)
        self.block = tuple(record.block)
        self.tpc = int(np.prod(self.block))
        # ---- clusters (cluster.py): shape from the record / .reqnctapercluster; batches hold whole clusters
        self.cluster = cluster_shape(record, program)
        self.csize = self.cluster[0] * self.cluster[1] * self.cluster[2]
        self.wpc = (self.tpc + 31) // 32
        smem = program.dynamic_smem_offset + int(record.shared_bytes or 0)
        smem = max(smem, program.static_shared_bytes)
        self.smem_bytes = max(16, (smem + 127) // 128 * 128)
        lv = getattr(program, "local_vars", {}) or {}
        self.local_offsets = {}
        off = 0
        for name, v in lv.items():
            off = (off + v.align - 1) // v.align * v.align
            self.local_offsets[name] = off
            off += v.size
        self.local_bytes = (off + 15) // 16 * 16
        self.param_bytes = mem.param_bytes()
        self.param_offset = {}
        self.param_addr = {}
        if len(program.params) != len(record.params):
            raise RecordError(f"record has {len(record.params)} params, the PTX entry {program.name} has "
                              f"{len(program.params)}", location=str(getattr(record, "name", "record")),
                              hint="one params entry per .param of the entry")
        for i, p in enumerate(program.params):
            self.param_offset[p.name] = mem.param_offsets[i]
            self.param_addr[p.name] = mem.param_addr(i)
        self.global_addr = {}
        # L2 residency (LRU, write-back) decides which sectors miss to DRAM and which dirty ones are written back
        self.touched = L2Residency(mem.size // 32 + 1, l2_capacity_bytes) if want_trace else None
        if self.touched is not None:
            for name, b in record.buffers.items():
                if b.l2_resident and b.nbytes:
                    # written by the host right before the launch: resident in the L2, so no DRAM first touch
                    lo = (mem.addr_of(name) - GLOBAL_BASE) >> 5
                    self.touched[np.arange(lo, lo + (b.nbytes + 31) // 32, dtype=np.int64)] = True
        n_ctas_total = int(np.prod(self.grid))
        # the L1 of each CTA's first-wave SM (l1_sms: CTA c uses SM c % l1_sms's cache, shared with the SM's other
        # CTAs; or an array: CTA c uses cache l1_sms[c]), or one per CTA (l1_sms None)
        self.l1_map = None
        if l1_sms is not None and not isinstance(l1_sms, (int, np.integer)):
            self.l1_map = np.asarray(l1_sms, dtype=np.int64)
            if self.l1_map.shape != (n_ctas_total,) or (self.l1_map < 0).any():
                raise ValueError(f"l1_sms: one cache index >= 0 per CTA ({n_ctas_total}) expected")
            l1_sms = int(self.l1_map.max()) + 1 if n_ctas_total else 1
        self.l1_sms = int(l1_sms) if l1_sms else None
        self.l1 = (L1Caches(self.l1_sms or n_ctas_total, l1_capacity_bytes)
                   if want_trace and l1_capacity_bytes else None)
        self.stamp = np.zeros(mem.size // 32 + 1, dtype=np.int32) if want_trace else None
        # per 128-B line: 1 + the last CTA that read it from L2 (memops._warm_lines: its re-reads are near hits)
        self.line_reader = np.zeros(mem.size // 128 + 1, dtype=np.int32) if want_trace else None
        self.written = self.touched.dirty_view if want_trace else None
        self.dram_read_sectors = 0
        # bytes per L2 slice / HBM channel from the line addresses (statistics only: addrmap.py)
        self.addr = None
        if want_trace and address_map:
            from .addrmap import AddressCounts

            self.addr = AddressCounts(mem.size, GLOBAL_BASE, **address_map)
        self.batches = []
        # True: keep every batch's trace; a set of CTAs: only the batches holding one (lazy.py's pre-pass)
        self.keep_batches = True

    def new_batch_trace(self, ctas):
        if not self.want_trace:
            return None
        bt = BatchTrace(ctas, self.wpc)
        if self.keep_batches is True or (self.keep_batches and not self.keep_batches.isdisjoint(ctas.tolist())):
            self.batches.append(bt)
        return bt


def _budget(value, default, name):
    """None -> the default; 0 -> no limit; else a positive number (a negative one is an error)."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0:
        raise UserError(f"{name} must be a positive number (0 = no limit), got {value!r}",
                        location=f"--{name.replace('_', '-')}", hint=f"a positive {name}, or 0 for no limit")
    return value if value > 0 else None


def run_functional(record, program=None, *, want_trace=True, compute_values=True, clock_oracle=None,
                   max_steps=None, sm_of_cta=None, memory=None, seed=0, max_lanes=1 << 16,
                   exact_fma=True, fast_tma=True, exact_tensor=False,
                   l2_capacity_bytes=None, l1_capacity_bytes=None, max_wall_seconds=None,
                   max_trace_bytes=None, ctas=None, address_map=None, l1_sms=None, n_sm=None) -> FunctionalResult:
    """Execute ``program`` (default ``record.program()``) for the whole grid of ``record``, or only the CTAs
    ``ctas`` (global indices, whole clusters; sampled mode: the others are neither executed nor traced, their
    outputs stay as initialised, and the L2 model sees only these CTAs' accesses, in launch order).

    ``memory``: a prepared :class:`~warpgraph.workloads.memory.DeviceMemory` (default: built from the record
    with ``seed``). Returns outputs (every buffer), the trace and the dynamic warp-instruction count.

    Budgets: ``max_steps`` (default :data:`DEFAULT_MAX_STEPS`), ``max_wall_seconds``
    (:data:`DEFAULT_MAX_WALL_SECONDS`) and ``max_trace_bytes`` (:data:`DEFAULT_MAX_TRACE_BYTES`); 0 means no
    limit. Past one, a :class:`SimulationError` names the stuck warps, their PCs and PTX lines.

    ``address_map`` (a dict of :class:`~warpgraph.workloads.functional.addrmap.AddressCounts` parameters:
    ``slices``, ``channels``, ``slice_shift_bits``, ``channel_shift_bits``, ``interleave_bytes``): count the
    launch's bytes per L2 slice and HBM channel from the line addresses into ``trace.address_counts``
    (statistics only; None: not counted). ``l1_capacity_bytes``: the L1 data cache of one CTA, or with
    ``l1_sms`` of one SM, which CTA ``c`` shares with the CTAs of SM ``c % l1_sms`` (workloads/functional/l1model.py;
    None: no L1 model); ``l1_sms`` may also be an array of one cache index per CTA (sampled mode's subset: the
    sampled SMs the CTAs stand on)."""
    import time

    t0 = time.perf_counter()
    ex, mem = start_exec(record, program, want_trace=want_trace, compute_values=compute_values,
                         clock_oracle=clock_oracle, max_steps=max_steps, sm_of_cta=sm_of_cta, memory=memory, seed=seed,
                         exact_fma=exact_fma, fast_tma=fast_tma, exact_tensor=exact_tensor,
                         l2_capacity_bytes=l2_capacity_bytes, l1_capacity_bytes=l1_capacity_bytes,
                         max_wall_seconds=max_wall_seconds, max_trace_bytes=max_trace_bytes, t_start=t0,
                         address_map=address_map, l1_sms=l1_sms, n_sm=n_sm)
    program = ex.program
    order = cta_order(ex, ctas)
    total_wi = 0
    steps = 0
    for b in iter_batches(ex, order, max_lanes):
        total_wi += b.wi
        steps = b.steps_done
    trace = None
    if want_trace:
        trace = KernelTrace(program, ex.grid, ex.block, ex.batches, ex.dram_read_sectors * 32,
                            dram_write_bytes=ex.touched.dram_write_bytes())
        trace.write_back_ratio = ex.touched.write_back_ratio()
        trace.write_back_curve = ex.touched.write_back_curve()
        trace.l2_stats = l2_stats(ex.touched)
        trace.address_counts = ex.addr.result(ex.touched) if ex.addr is not None else None
        trace.cluster = ex.cluster          # clusters: the timing pass places and connects whole clusters
    # without computed values the buffers are not results: no copy of them (it doubled the buffers' memory of
    # every timing run)
    return FunctionalResult(mem.outputs(copy=bool(compute_values)), trace, total_wi, steps, time.perf_counter() - t0,
                            mem, ctas_executed=len(order))


def start_exec(record, program=None, *, want_trace=True, compute_values=True, clock_oracle=None, max_steps=None,
               sm_of_cta=None, memory=None, seed=0, exact_fma=True, fast_tma=True, exact_tensor=False,
               l2_capacity_bytes=None, l1_capacity_bytes=None, max_wall_seconds=None, max_trace_bytes=None,
               t_start=None, address_map=None, l1_sms=None, n_sm=None):
    """The launch-wide state of a functional pass (budgets resolved, memory built): ``(ex, mem)``, for
    :func:`run_functional` and the lazy trace (workloads/functional/lazy.py)."""
    from ..memory import DeviceMemory

    max_steps = _budget(max_steps, DEFAULT_MAX_STEPS, "max_steps")
    max_wall_seconds = _budget(max_wall_seconds, DEFAULT_MAX_WALL_SECONDS, "max_wall_seconds")
    max_trace_bytes = _budget(max_trace_bytes, DEFAULT_MAX_TRACE_BYTES, "max_trace_bytes")
    if program is None:
        program = record.program()
    mem = memory if memory is not None else DeviceMemory.from_record(record, seed, init_values=True)
    ex = _Exec(record, program, mem, want_trace=want_trace, compute_values=compute_values,
               clock_oracle=clock_oracle, sm_of_cta=sm_of_cta, max_steps=max_steps, exact_fma=exact_fma,
               fast_tma=fast_tma, exact_tensor=exact_tensor, l2_capacity_bytes=l2_capacity_bytes,
               l1_capacity_bytes=l1_capacity_bytes, max_wall_seconds=max_wall_seconds,
               max_trace_bytes=max_trace_bytes, t_start=t_start, address_map=address_map, l1_sms=l1_sms,
               n_sm=n_sm)
    return ex, mem


def l2_stats(l2) -> dict:
    """The functional L2 model's launch totals (sectors): misses inserted, sectors dirtied, dirty sectors written
    back, capacity (None: unbounded). Wave sampling extrapolates the write-back ratio from them (runner/waves.py)."""
    return {"inserted": int(l2.clock), "dirtied": int(l2.dirtied_sectors), "writeback": int(l2.writeback_sectors),
            "capacity": l2.C}


def cta_order(ex, ctas=None) -> np.ndarray:
    """The CTAs to execute, in launch order (cluster after cluster, CTAs by rank: cluster.py ``cluster_order``):
    all of the grid, or ``ctas`` (checked: in range, whole clusters)."""
    n_ctas = int(np.prod(ex.grid))
    full = np.asarray(cluster_order(ex.grid, ex.cluster), dtype=np.int64)
    if ctas is None:
        return full
    order = np.unique(np.asarray(list(ctas), dtype=np.int64))
    if len(order) and (order[0] < 0 or order[-1] >= n_ctas):
        raise UserError(f"CTA subset out of range: {int(order[0])}..{int(order[-1])} of a {n_ctas}-CTA grid",
                        hint=f"CTA indices 0..{n_ctas - 1}")
    pos = np.empty(n_ctas, dtype=np.int64)
    pos[full] = np.arange(n_ctas, dtype=np.int64)
    order = order[np.argsort(pos[order], kind="stable")]
    cs = ex.csize
    if cs > 1 and len(order):
        need = np.unique(pos[order] // cs)
        if len(order) != len(need) * cs:
            raise UserError(f"CTA subset splits a cluster of {cs} CTAs", hint="whole clusters only")
    return order


class _Done:
    """A finished batch of :func:`iter_batches`: its trace (or None), warp instructions, steps so far."""
    __slots__ = ("trace", "ctas", "wi", "steps_done")

    def __init__(self, trace, ctas, wi, steps_done):
        self.trace, self.ctas, self.wi, self.steps_done = trace, ctas, wi, steps_done


def iter_batches(ex, order: np.ndarray, max_lanes: int = 1 << 16):
    """Execute the CTAs ``order`` (launch order) batch by batch (at most ``max_lanes`` threads, whole clusters),
    yielding each finished batch (:class:`_Done`). The batches are the same however the caller consumes them, so
    a lazy consumer (workloads/functional/lazy.py) sees exactly the eager pass."""
    lpc = ex.wpc * 32
    cs = ex.csize
    per = max(cs, (max(1, int(max_lanes) // lpc) // cs) * cs)     # whole clusters per batch
    steps = 0
    for s in range(0, len(order), per):
        ctas = order[s:s + per]
        with np.errstate(all="ignore"):
            b = Batch(ex, ctas)
            wi, st = _run_batch(ex, b, steps)
        steps += st
        bt = b.trace
        if bt is not None:
            ex.trace_bytes_done += _batch_trace_bytes(bt)
            bt.finish()
        # the batch's instruction handlers close over it (a reference cycle), so its registers and shared memory
        # (hundreds of MB for a 2^16-lane batch) would live until the next cyclic collection: peak memory then
        # grew with the number of batches (rmsnorm_rows4096: 8 batches' registers alive at the end). Drop them now.
        vars(b).clear()
        del b
        yield _Done(bt, ctas, wi, steps)


def _run_batch(ex, b: Batch, steps0: int):
    prog = ex.program
    insts = prog.instructions
    n_inst = len(insts)
    handlers = b.handlers
    kinds = [int(i.kind) for i in insts]
    guards = [i.guard for i in insts]
    targets = [next((o.target for o in i.operands if isinstance(o, Label)), None) for i in insts]
    # brx.idx: pc -> its .branchtargets instruction indices (the handler leaves each lane's index in b.brx_sel)
    brx_tab = {i: [lb.target for lb in ins.operands[1].labels] for i, ins in enumerate(insts) if ins.opcode == "brx"}
    R = b.R
    W = b.W
    L = b.L
    tr = b.trace
    K_BRANCH, K_EXIT, K_BAR, K_WAIT = int(Kind.BRANCH), int(Kind.EXIT), int(Kind.BAR_SYNC), int(Kind.MBAR_WAIT)
    # an mbarrier wait is a poll loop when the next instruction branches back to (or before) it
    poll = [k == K_WAIT and i + 1 < n_inst and kinds[i + 1] == K_BRANCH and targets[i + 1] is not None
            and targets[i + 1] <= i for i, k in enumerate(kinds)]
    is_ctl = [k in (K_BRANCH, K_EXIT, K_BAR) or poll[i] for i, k in enumerate(kinds)]
    max_steps = ex.max_steps
    yield_after = ex.yield_after
    # a loop around a global atomic (an atom.cas spin lock) hands over at its first back edge when other
    # threads wait, so the lock holder runs and spinners retry once per round (forward progress, and the trace
    # holds a few failed attempts instead of yield_after of them per round)
    K_ATOM = int(Kind.ATOM_GLOBAL)
    atom_pcs = np.flatnonzero(np.asarray(kinds) == K_ATOM)
    loop_yield = {}
    for i, t in enumerate(targets):
        if kinds[i] == K_BRANCH and t is not None and t <= i:
            has_atom = bool(((atom_pcs >= t) & (atom_pcs <= i)).any())
            loop_yield[i] = 0 if has_atom else yield_after
    live = b.live.copy()
    groups: dict = {}
    blocked: dict = {}
    spinning: dict = {}
    if live.any():
        groups[0] = live.copy()
    n_wi = 0
    steps = 0
    progress = 0
    cnt_full = W

    def group_info(act):
        part = act.reshape(W, 32).any(axis=1)
        return part, int(part.sum())

    deferred: dict = {}
    # Named barriers (bar.sync ID, COUNT / barrier.sync ID between warp groups, as warp-specialized kernels
    # use): per CTA and barrier ID, waiting lanes move on once COUNT threads (default: the CTA's live threads,
    # whole warps) arrived. Programs with only `bar.sync 0` keep the simpler rule: when nothing else can run,
    # every waiting lane moves on.
    bar_id, bar_cnt = {}, {}
    for i, ins in enumerate(insts):
        if kinds[i] == K_BAR and not ins.opcode.startswith("barrier.cluster"):
            ops = ins.operands
            bar_id[i] = int(ops[0].value) if ops and isinstance(ops[0], Imm) else (None if ops else 0)
            bar_cnt[i] = int(ops[1].value) if len(ops) > 1 and isinstance(ops[1], Imm) else None
    named = any(v != 0 for v in bar_id.values()) or any(v is not None for v in bar_cnt.values())
    if named and any(v is None for v in bar_id.values()):
        pc_ = next(i for i, v in bar_id.items() if v is None)
        raise SimulationError("a barrier ID in a register is not modelled next to named barriers",
                              location=prog.location(pc_), hint="immediate barrier IDs")
    lpc = b.lpc
    n_cta = L // lpc
    arrivals: dict = {}      # (barrier id) -> (n_cta,) threads that arrived without waiting (bar.arrive)
    cbar = ClusterBarrier(n_cta, lpc, ex.csize)   # barrier.cluster.arrive / wait (cluster.py)
    cblocked: dict = {}      # pc of a barrier.cluster.wait -> lanes waiting there

    def warp_threads(m):
        """(n_cta,) threads of whole warps with a lane in mask m."""
        return m.reshape(n_cta, lpc // 32, 32).any(axis=2).sum(axis=1) * 32

    def release_named():
        """Move lanes past every named barrier that completed; True if any lane moved."""
        moved = False
        live_thr = warp_threads(live)
        for bid in sorted({bar_id[pc_] for pc_ in blocked}):
            pcs = [pc_ for pc_ in blocked if bar_id[pc_] == bid]
            waiting = np.zeros(L, dtype=bool)
            for pc_ in pcs:
                waiting |= blocked[pc_]
            cnts = {bar_cnt[pc_] for pc_ in pcs}
            need = np.full(n_cta, max(c for c in cnts if c is not None), np.int64) if cnts != {None} else live_thr
            got = warp_threads(waiting) + arrivals.get(bid, np.zeros(n_cta, np.int64))
            done = (got >= need) & (warp_threads(waiting) > 0)
            if not done.any():
                continue
            lanes = np.repeat(done, lpc)
            for pc_ in pcs:
                go = blocked[pc_] & lanes
                if go.any():
                    groups[pc_ + 1] = groups[pc_ + 1] | go if pc_ + 1 in groups else go
                    rest = blocked[pc_] & ~lanes
                    if rest.any():
                        blocked[pc_] = rest
                    else:
                        del blocked[pc_]
            if bid in arrivals:
                arrivals[bid] = np.where(done, 0, arrivals[bid])
            moved = True
        return moved

    while True:
        if not groups and deferred:
            # groups that kept looping while others waited get their turn again (after the others ran)
            groups = deferred
            deferred = {}
            if blocked:
                if named:
                    release_named()
                else:
                    for pc_, m in blocked.items():
                        groups[pc_ + 1] = groups[pc_ + 1] | m if pc_ + 1 in groups else m
                    blocked = {}
            continue
        if not groups:
            if cblocked:      # clusters whose every live thread arrived move past barrier.cluster.wait
                waiting = np.zeros(L, dtype=bool)
                for m_ in cblocked.values():
                    waiting |= m_
                go_all = cbar.release(waiting, live)       # one phase of the cluster barrier, whatever the wait pc
                moved = bool(go_all.any())
                for pc_ in sorted(cblocked) if moved else ():
                    go = cblocked[pc_] & go_all
                    if go.any():
                        groups[pc_ + 1] = groups[pc_ + 1] | go if pc_ + 1 in groups else go
                        rest = cblocked[pc_] & ~go
                        if rest.any():
                            cblocked[pc_] = rest
                        else:
                            del cblocked[pc_]
                if moved:
                    progress = 1
                    continue
            if spinning and progress:
                for pc_, m in spinning.items():
                    groups[pc_] = groups[pc_] | m if pc_ in groups else m
                spinning = {}
                progress = 0
                continue
            if blocked and named:
                if release_named():
                    progress = 1
                    continue
                if not spinning:
                    pcs = sorted(blocked)
                    raise SimulationError(
                        f"deadlock: {int(sum(m.sum() for m in blocked.values()))} threads wait at named barriers "
                        f"that never complete (pc {pcs[0]}: {insts[pcs[0]].text})", location=prog.location(pcs[0]),
                        hint="every bar.sync ID, COUNT needs COUNT arriving threads")
            elif blocked:
                _check_aligned_barriers(ex, b, blocked, live)
                for pc_, m in blocked.items():
                    groups[pc_ + 1] = groups[pc_ + 1] | m if pc_ + 1 in groups else m
                blocked = {}
                progress = 1
                continue
            if spinning:
                pcs = sorted(spinning)
                inst = insts[pcs[0]]
                raise SimulationError(
                    f"deadlock: {int(sum(m.sum() for m in spinning.values()))} threads poll an mbarrier whose "
                    f"phase never completes (pc {pcs[0]}: {inst.text})", location=prog.location(pcs[0]),
                    hint="every awaited phase needs its arrivals and transaction bytes")
            if cblocked:
                pcs = sorted(cblocked)
                raise SimulationError(
                    f"deadlock: {int(sum(m.sum() for m in cblocked.values()))} threads wait at barrier.cluster.wait "
                    f"for threads of their cluster that never arrive (pc {pcs[0]}: {insts[pcs[0]].text})",
                    location=prog.location(pcs[0]),
                    hint="every non-exited thread of every CTA of the cluster executes barrier.cluster.arrive")
            break
        pc = min(groups)
        act = groups.pop(pc)
        back_taken = 0
        full = bool(act.all())
        part, npart = (None, W) if full else group_info(act)
        mid_plain = 0 if full else (tr.mask_id(part, act.reshape(W, 32).sum(axis=1)) if tr is not None else 0)
        while True:
            if pc >= n_inst:
                raise SimulationError("execution ran past the last instruction (missing ret/exit)",
                                      location=prog.location(n_inst - 1), hint="a ret or exit at the end")
            if groups and pc in groups:
                act = act | groups.pop(pc)
                full = bool(act.all())
                part, npart = (None, W) if full else group_info(act)
                mid_plain = 0 if full else (tr.mask_id(part, act.reshape(W, 32).sum(axis=1)) if tr is not None else 0)
            g = guards[pc]
            if g is not None:
                p = R[g[0]]
                eff = (act & ~p) if g[1] else (act & p)
                efull = False
                if tr is not None:
                    cnt = eff.reshape(W, 32).sum(axis=1)
                    mid = tr.mask_id(part if part is not None else np.ones(W, bool), cnt)
            else:
                eff = act
                efull = full
                mid = mid_plain
            h = handlers[pc]
            b.pay = None
            b.wait_failed = False
            b.cur_act = eff
            if h is not None:
                try:
                    h(eff, efull)
                except SimulationError:
                    raise
                except PTXError:
                    raise
                except Exception as e:   # an internal failure: report it with the PTX location
                    inst = insts[pc]
                    raise SimulationError(f"internal error executing pc {pc} ({inst.text}): "
                                          f"{type(e).__name__}: {e}", location=prog.location(pc)) from e
            if tr is not None:
                tr.add(pc, mid, b.pay)
            n_wi += npart
            steps += 1
            progress += 1
            if max_steps is not None and steps0 + steps > max_steps:
                raise _stuck_error(ex, b, f"functional step limit {max_steps:,} exceeded", pc, act,
                                   groups, blocked, spinning, deferred,
                                   hint="a kernel that ends; or raise the budget: --max-steps N "
                                        "(simulate(max_steps=N); 0 = no limit)")
            if not steps % _CHECK_EVERY:
                _check_budgets(ex, b, pc, act, groups, blocked, spinning, deferred)
            if not is_ctl[pc]:
                pc += 1
                continue
            k = kinds[pc]
            if k == K_BRANCH and brx_tab and pc in brx_tab:
                # indexed branch: lanes go to their entry of the list (a warp may diverge), guard-false lanes
                # fall through; a back edge while others wait yields like a bra loop
                tl = brx_tab[pc]
                sel = b.brx_sel
                waiting = bool(groups or spinning or blocked)
                for j in np.unique(sel[eff]).tolist() if eff.any() else ():
                    m = eff & (sel == j)
                    tgt = tl[j]
                    pool = deferred if (tgt <= pc and waiting) else groups
                    pool[tgt] = pool[tgt] | m if tgt in pool else m
                nt = act & ~eff
                if nt.any():
                    groups[pc + 1] = groups[pc + 1] | nt if pc + 1 in groups else nt
                break
            if k == K_BRANCH:
                tgt = targets[pc]
                if g is None or bool(eff.all() if efull else (eff == act).all()):
                    if tgt <= pc and (groups or spinning or blocked):
                        back_taken += 1
                        if back_taken > loop_yield[pc]:
                            # a loop that spins while other threads wait (e.g. on a flag they will set):
                            # let the others run first (structured reconvergence is kept for short loops)
                            deferred[tgt] = deferred[tgt] | act if tgt in deferred else act
                            break
                    pc = tgt
                else:
                    nt = act & ~eff
                    if not eff.any():
                        pc += 1
                        continue
                    # split: both halves go back to the pool, lowest PC runs first
                    for q, m in ((tgt, eff), (pc + 1, nt)):
                        groups[q] = groups[q] | m if q in groups else m
                    break
                if groups and min(groups) < pc:
                    groups[pc] = groups[pc] | act if pc in groups else act
                    break
                continue
            if k == K_EXIT:
                if g is None:
                    live &= ~act
                    break
                live &= ~eff
                act = act & ~eff
                if not act.any():
                    break
                full = False
                part, npart = group_info(act)
                mid_plain = tr.mask_id(part, act.reshape(W, 32).sum(axis=1)) if tr is not None else 0
                pc += 1
                continue
            if k == K_BAR:
                op = insts[pc].opcode
                if op == "barrier.cluster.arrive":
                    cbar.arrive(eff)
                    pc += 1
                    continue
                if op == "barrier.cluster.wait":
                    cblocked[pc] = cblocked[pc] | act if pc in cblocked else act
                    break
                if op in ("bar.arrive", "barrier.arrive"):
                    if named:
                        bid = bar_id[pc]
                        arrivals[bid] = arrivals.get(bid, np.zeros(n_cta, np.int64)) + warp_threads(eff)
                    pc += 1
                    continue
                blocked[pc] = blocked[pc] | act if pc in blocked else act
                break
            if poll[pc]:
                if b.wait_failed:
                    b.wait_failed = False
                    # lanes whose poll failed spin: park them (they re-poll once others made progress)
                    dst = insts[pc].operands[0]
                    okm = R[dst.index]
                    failed = eff & ~okm
                    # progress counts the steps since the oldest parked spinner parked: the first one to park
                    # starts the count; a later one keeps it (the steps its group ran before this failed
                    # poll, e.g. the consumer's arrive that completes the phase the producer awaits, are
                    # progress for the earlier spinners) less its own failed poll
                    progress = progress - 1 if spinning else 0
                    spinning[pc] = spinning[pc] | failed if pc in spinning else failed
                    act = act & ~failed
                    if not act.any():
                        break
                    full = False
                    part, npart = group_info(act)
                    mid_plain = tr.mask_id(part, act.reshape(W, 32).sum(axis=1)) if tr is not None else 0
                pc += 1
                continue
    return n_wi, steps


def _batch_trace_bytes(bt) -> int:
    """Bytes a batch's trace holds while it is recorded (payload rows, masks, per-step ids)."""
    if bt is None or bt.payloads is None:
        return 0
    return len(bt.payloads) * bt.W * 32 + len(bt.mask_part) * bt.W * 2 + len(bt._pc or ()) * 24


def _trace_bytes(ex, b=None) -> int:
    return ex.trace_bytes_done + (_batch_trace_bytes(b.trace) if b is not None else 0)


def _check_budgets(ex, b, pc, act, *pools):
    import time

    if ex.max_wall_seconds is not None:
        el = time.perf_counter() - ex.t_start
        if el > ex.max_wall_seconds:
            raise _stuck_error(ex, b, f"functional pass ran past its wall budget of {ex.max_wall_seconds:g} s",
                               pc, act, *pools, hint="a kernel that ends; or raise the budget: --max-wall-seconds S "
                                                     "(simulate(max_wall_seconds=S); 0 = no limit)")
    if ex.max_trace_bytes is not None and ex.want_trace:
        n = _trace_bytes(ex, b)
        if n > ex.max_trace_bytes:
            raise _stuck_error(ex, b, f"functional trace grew past {ex.max_trace_bytes:,} bytes ({n:,})", pc, act,
                               *pools, hint="a kernel that ends; or raise the budget: "
                                            "run_functional(max_trace_bytes=N) (0 = no limit)")


def _stuck_error(ex, b, what, pc, act, groups, blocked, spinning, deferred, *, hint):
    """A SimulationError listing where the warps of the batch are: PC, PTX line, instruction, CTA/warp ids."""
    prog = ex.program
    where: dict = {}
    for label, pool in (("running", {pc: act}), ("ready", groups), ("deferred", deferred),
                        ("at a barrier", blocked), ("polling an mbarrier", spinning)):
        for q, m in pool.items():
            if m is None or not m.any():
                continue
            warps = np.flatnonzero(m.reshape(b.W, 32).any(axis=1))
            key = (q, label)
            where[key] = np.union1d(where[key], warps) if key in where else warps
    lines = []
    for (q, label), warps in sorted(where.items(), key=lambda kv: (-len(kv[1]), kv[0][0]))[:8]:
        inst = prog.instructions[min(q, len(prog.instructions) - 1)]
        ids = ", ".join(f"CTA {int(b.ctas[w // b.wpc])} warp {int(w % b.wpc)}" for w in warps[:4])
        more = f" (+{len(warps) - 4} more)" if len(warps) > 4 else ""
        lines.append(f"  {len(warps)} warp(s) {label} at pc {q} ({prog.location(q)}: {inst.text.strip()}): "
                     f"{ids}{more}")
    msg = f"{what}; stuck warps:\n" + "\n".join(lines) if lines else what
    return SimulationError(msg, location=prog.location(pc), hint=hint)


def _check_aligned_barriers(ex, b, blocked, live):
    """``bar.sync`` (= ``barrier.sync.aligned``) must be executed by all non-exited threads of a warp at the same
    instruction (PTX ISA, bar.sync): a warp whose threads wait at different barriers (or some wait while others
    are elsewhere) is divergent, which hangs or corrupts on hardware."""
    insts = ex.program.instructions
    W = b.W
    for pc, m in blocked.items():
        inst = insts[pc]
        if not (inst.opcode == "bar.sync" or "aligned" in inst.mods):
            continue
        m2 = m.reshape(W, 32)
        at = m2.any(axis=1)
        bad = at & (live.reshape(W, 32) & ~m2).any(axis=1)
        if bad.any():
            w = int(np.flatnonzero(bad)[0])
            n_at, n_live = int(m2[w].sum()), int(live.reshape(W, 32)[w].sum())
            others = [q for q, mm in blocked.items() if q != pc and mm.reshape(W, 32)[w].any()]
            where = (f"the others wait at pc {others[0]} ({ex.program.location(others[0])})" if others
                     else "the others are not at a barrier")
            raise SimulationError(f"divergent {inst.opcode}: only {n_at} of the {n_live} threads of CTA "
                                  f"{int(b.ctas[w // b.wpc])} warp {w % b.wpc} reach it; {where}",
                                  location=ex.program.location(pc),
                                  hint="bar.sync executed by every non-exited thread of a warp (uniform control "
                                       "flow), or barrier.sync without .aligned")

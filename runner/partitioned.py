"""Parallel detailed timing of one launch: the GPCs of the graph as partitions, run in several processes.

Issue #18 (components-and-parallelism.md: SST's conservative synchronisation of ranks by link latency). The
model is defined by its partitions, never by the number of processes, so its statistics are **bit-identical for
every ``jobs``** (``jobs=1`` runs the same partitions in one process):

* **Views.** Every GPC of the component graph (``fabric.sms_per_gpc``: its SMs, their L1 / crossbar ports,
  TMA units, mbarriers, shared memory, tensor cores and the DSM fabric of the GPC) is one *view*: an engine, an
  SM core that runs only the CTAs placed on its SMs, and its own replica of the memory system. What an SM shares
  only inside its GPC -- GPC-scope L2 lookup coalescing (``l2.coalesce_scope: gpc``), DSM traffic -- is exact.
* **Windows.** Views advance through windows of ``W`` cycles (``timing.partition_window``, default 256, at
  most half the CTA launch latency). Inside a window a view sees its own requests to the GPU-wide L2
  partitions, L2 fill / store path and HBM at once, and the other views' requests two windows late: what window
  ``k`` produced is replayed into every other view's replica at the start of window ``k + 2`` (the next-free
  pointers, the HBM load estimate and the outstanding DRAM fills that hit-on-miss reads wait for), in a total
  order ``(cycle, view, sequence)`` that does not depend on the processes. Cross-GPC contention is therefore
  seen at most ``2 W`` cycles late (the lookahead of the synchronisation, as an SST link latency), and a worker
  always has its next window queued while the others finish theirs.
* **CTA scheduling** is GPU-wide: CTAs that retire in window ``k`` are handed their successors in ``(retire
  cycle, SM, sequence)`` order, launched ``launch_latency`` cycles after the retire at the start of window
  ``k + 2`` at the earliest (hence ``2 W`` <= the launch latency: the launch never lies in the past).
* **Statistics** are each view's own (a replayed reservation moves a server's next-free pointer, never its
  busy time or byte counts) and are summed over the views; cycles are the latest view's.

Transport: ``multiprocessing`` (fork: the functional trace is inherited, never pickled) with one pipe per
worker; a worker owns a fixed set of views. Not supported here (a clear error names it): sampled mode, event
recording, test-double units, ``l2.coalesce_scope`` fill / gpu (lookups shared across GPCs).
"""
from __future__ import annotations

import multiprocessing as mp
import pickle
import time

from warpgraph.components.memory import SECTOR, FluidServer
from warpgraph.core.engine import ClockDomain, CycleLimitExceeded, Engine
from warpgraph.core.errors import SimulationError, UserError

__all__ = ["run_timing_partitioned", "LoggedServer", "partitions_of"]

_L2, _FILL, _HBM, _DRAMFILL, _LOOKUP, _SHARE, _TLOOKUP, _TSHARE = range(8)


class LoggedServer(FluidServer):
    """A GPU-wide fluid server of one view: reserves as usual and logs ``(t, sid, amount, t_end)`` so the other
    views can replay the reservation (``advance``) at the barrier."""

    __slots__ = ("log", "sid")

    @classmethod
    def wrap(cls, srv: FluidServer, log: list, sid: int) -> "LoggedServer":
        s = cls(srv.rate)
        s.free, s.busy, s.amount, s.hist = srv.free, srv.busy, srv.amount, srv.hist
        s.log, s.sid = log, sid
        return s

    def reserve(self, t: float, amount: float) -> float:
        self.log.append((t, self.sid, amount, -1.0))
        return FluidServer.reserve(self, t, amount)

    def reserve_stream(self, t0: float, t1: float, amount: float) -> float:
        self.log.append((t0, self.sid, amount, t1))
        end = FluidServer.reserve(self, t0, amount)
        tail = t1 + self.inv * (SECTOR if amount >= SECTOR else amount)
        if tail > end:
            self.free = tail
            end = tail
        return end

    def advance(self, t: float, amount: float, t1: float) -> None:
        """Another view's reservation: the next-free pointer moves as :meth:`reserve` would move it; busy time,
        bytes and histogram stay this view's own."""
        f = self.free
        end = (f if f > t else t) + amount * self.inv
        if t1 >= 0.0:
            tail = t1 + self.inv * (SECTOR if amount >= SECTOR else amount)
            if tail > end:
                end = tail
        self.free = end


def partitions_of(spec, granularity: str = "gpc") -> list[list[int]]:
    """The SMs of every view: one per GPC (``gpc``), per CPC (``cpc``) or one for the whole GPU (``gpu``: the
    single-engine model with CTAs handed out at the barriers, a reference) of the graph's SM layout
    (topologies.builder.sm_layout: SM ids are GPC-major, spread evenly over a GPC's CPCs)."""
    from warpgraph.topologies.builder import sm_layout

    if granularity not in ("gpc", "cpc", "gpu"):
        raise UserError(f"timing.partition={granularity!r}", location="timing.partition", hint="gpc, cpc or gpu")
    lay = sm_layout(spec)
    out: dict = {}
    for sm, (g, c) in enumerate(lay[: int(spec.sm.count)]):
        out.setdefault(0 if granularity == "gpu" else g if granularity == "gpc" else (g, c), []).append(sm)
    return [out[k] for k in sorted(out)]


class _ViewScheduler:
    """The CTA scheduler as one view sees it: the first wave of its SMs; retires are kept for the barrier."""

    def __init__(self, first, engine):
        self.first = first
        self.eng = engine
        self.retires: list = []

    def initial(self):
        return list(self.first)

    def on_retire(self, sm: int):
        self.retires.append((self.eng.now, sm, len(self.retires)))
        return None


class _Ctx:
    """What every view is built from (made once before the workers fork)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


class _View:
    def __init__(self, vid: int, ctx: _Ctx):
        from warpgraph.runner.timing import BundleBuilder, build_units

        self.vid = vid
        self.sms = set(ctx.views[vid])
        spec = ctx.spec
        eng = self.eng = Engine(ClockDomain("sm", ctx.sm_mhz))
        mem, smem, tma, mbar, tc, names, machine = build_units(spec, eng, "auto")
        self.units = (mem, smem, tma, mbar, tc)
        self.machine = machine
        self.log: list = []
        self._instrument(mem, tma, ctx.granularity != "gpc")
        mem.write_back_ratio = ctx.write_back_ratio
        # a view stores about its SMs' share of the launch's sectors: its count, scaled, walks the launch's curve
        mem.set_write_back_curve(ctx.write_back_curve, sum(len(v) for v in ctx.views) / max(1, len(self.sms)))
        self.sched = _ViewScheduler([(c, s) for c, s in ctx.first_wave if s in self.sms], eng)
        self.groups = BundleBuilder(ctx.trace, ctx.tables, ctx.bundle)
        trace = ctx.trace
        self.core = ctx.core_cls(eng, ctx.tables, ctx.cfg, n_ctas=trace.n_ctas, warps_per_cta=trace.warps_per_cta,
                                 threads_per_cta=trace.threads_per_cta, stream_of=self.groups.warp_stream,
                                 scheduler=self.sched, mem=mem, smem=smem, tma=tma, mbar=mbar, tc=tc,
                                 max_cycles=ctx.max_cycles, groups_of=self.groups, merge_subpartitions=ctx.merge)
        from warpgraph.runner.timing import _attach_clusters

        _attach_clusters(self.core, self.sched, trace, spec, machine, ctx.record)   # the view's DSM fabric
        eng.report = self.core.stuck_report
        self.core.start()

    def _instrument(self, mem, tma, share_lookups: bool) -> None:
        """Log what the other views must replay: GPU-wide server reservations and outstanding DRAM fills; with
        views smaller than a GPC (``share_lookups``) also the GPC-scope lookups of memory and TMA and their
        shares."""
        log = self.log
        sv = mem.bandwidth_servers()
        self.srv = {_L2: sv["l2"], _FILL: sv["fill"], _HBM: sv["hbm"]}   # the memory's lists, wrapped in place
        for kind, lst in self.srv.items():
            for p, s in enumerate(lst):
                lst[p] = LoggedServer.wrap(s, log, kind * 64 + p)
        self.mem, self.tma = mem, tma
        orig = mem.note_fill

        def note_fill(key, t, done, dram_bytes, window_end=None, _orig=orig, _fills=mem.fills, _log=log,
                      _all=share_lookups):
            _orig(key, t, done, dram_bytes, window_end)
            if key & 255 == 255:   # an outstanding DRAM fill: hit-on-miss reads of every GPC wait for it
                _log.append((t, _DRAMFILL * 64, key, tuple(_fills[key])))
            elif _all:
                _log.append((t, _LOOKUP * 64, key, tuple(_fills[key])))

        mem.note_fill = note_fill
        if share_lookups:
            mem.on_share = lambda key, idx, t, _log=log: _log.append((t, _SHARE * 64 + idx, key, None))
            if tma is not None:   # a checked TMA model (components/interfaces.py TmaModel: fills, note_fill, on_share)
                torig = tma.note_fill

                def tnote_fill(key, g0, g1, done, dram_bytes, window_end=None, _orig=torig, _fills=tma.fills,
                               _log=log):
                    _orig(key, g0, g1, done, dram_bytes, window_end)
                    if key & 255 != 255:
                        _log.append((g0, _TLOOKUP * 64, key, tuple(_fills[key])))

                tma.note_fill = tnote_fill
                tma.on_share = lambda key, idx, t, _log=log: _log.append((t, _TSHARE * 64 + idx, key, None))

    # -- barrier side ---------------------------------------------------------------------------------
    def apply_foreign(self, entries) -> None:
        """Replay the other views' logged reservations of the last window (sorted, this view's own skipped)."""
        mem = self.mem
        srv = self.srv
        me = self.vid
        fills = mem.fills
        for t, v, _i, sid, amount, t1 in entries:
            if v == me:
                continue
            kind, p = divmod(sid, 64)
            if kind >= _DRAMFILL:
                # lookup tables: ``amount`` is the key; an entry replaces an older one (earlier completion)
                tab = fills if kind <= _SHARE else self.tma.fills
                if kind == _SHARE or kind == _TSHARE:
                    ent = tab.get(amount)
                    if ent is not None:
                        ent[p] += 1
                else:
                    cur = tab.get(amount)
                    if cur is None or cur[1] < t1[1]:
                        tab[amount] = list(t1)
                continue
            s = srv[kind][p]
            s.advance(t, amount, t1)
            if kind == _HBM:
                # the HBM load estimate of the partition (components/memory.py ``note_hbm_load``: an EWMA of
                # occupancy that replaying late neither inflates nor loses)
                mem.note_hbm_load(p, t, amount * s.inv)

    def launch(self, launches) -> None:
        core = self.core
        for cta, sm, t in launches:
            core._launch_cta(cta, sm, t)

    def run(self, t_end: int, max_cycles) -> tuple:
        """Run the window up to ``t_end`` (exclusive); return (log, retires, next event, done CTAs)."""
        eng = self.eng
        until = t_end - 1
        if max_cycles is not None and until > max_cycles:
            until = max_cycles
        eng.run(until=until)
        log, self.log[:] = list(self.log), []
        ret, self.sched.retires[:] = list(self.sched.retires), []
        return log, ret, eng.next_time(), self.core.ctas_done

    def report(self) -> str:
        return self.core.stuck_report()

    def snapshot(self) -> dict:
        """The counters of this view (numbers and lists of numbers; see :func:`_snap`)."""
        return _snap_all(self.core, self.units, self.machine, self.eng)


# -- counters: snapshot and merge -------------------------------------------------------------------------
_SKIP = {"T", "cfg", "eng", "engine", "sched", "mem", "smem", "tma", "mbar", "tc", "stream_of", "groups_of",
         "rec", "spec", "params", "warps", "log", "ghost", "on_cta", "tc_free", "tc_busy_from", "tc_rf_share",
         "l1", "xbar", "l2", "hbm", "planes", "wake", "report"}


def _snap(x, depth: int = 0):
    """Numbers, and lists / value objects (FluidServer) of numbers, of ``x``'s attributes; None for the rest."""
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return x
    if depth > 4:
        return None
    if isinstance(x, list):
        return [_snap(e, depth + 1) for e in x]
    if isinstance(x, FluidServer):
        return {"free": x.free, "busy": x.busy, "amount": x.amount, "hist": list(x.hist)}
    if depth == 0:
        names = list(getattr(x, "__dict__", {}) or {})
        for c in type(x).__mro__:
            names += [s for s in getattr(c, "__slots__", ()) if s not in names]
        out = {}
        for k in names:
            if k in _SKIP or k.startswith("__"):
                continue
            try:
                v = getattr(x, k)
            except AttributeError:
                continue
            s = _snap(v, depth + 1)
            if s is not None:
                out[k] = s
        return out
    return None


def _objects(core, units, machine) -> dict:
    mem = units[0]
    objs = {"core": core, "memory": mem, "shared_memory": units[1], "tma": units[2], "mbarrier": units[3],
            "tensor_core": units[4]}
    for k in ("l1", "xbar", "l2", "hbm"):
        o = getattr(mem, k, None)
        if o is not None:
            objs[f"mem.{k}"] = o
    if machine is not None:
        for k, o in machine.parts.items():   # the fabric and any part with counters of its own (tmem, ...)
            if k not in ("l1", "xbar", "l2_slice", "hbm_channel") and o is not None:
                objs[k] = o
    return objs


def _snap_all(core, units, machine, eng) -> dict:
    out = {k: _snap(o) for k, o in _objects(core, units, machine).items()}
    out["_events"] = eng.events_processed
    out["_clock_issue"] = dict(core.clock_issue)
    out["_placed"] = dict(core.placed)
    out["_end_cycle"] = core.end_cycle
    out["_mbarriers"] = len(getattr(units[3], "bars", ()) or ())
    out["_bundles"] = (core.groups_of.bundles, core.groups_of.warps) if hasattr(core.groups_of, "bundles") else (0, 0)
    return out


def _add(base, fresh, val):
    """``base += val - fresh`` elementwise (lists may have grown: histograms)."""
    if val is None:
        return base
    if isinstance(val, (int, float)):
        if not isinstance(base, (int, float)):
            base = _zero(val)
        if not isinstance(fresh, (int, float)):
            fresh = _zero(val)
        return base + (val - fresh)
    if isinstance(val, list):
        base = base if isinstance(base, list) else []
        fresh = fresh if isinstance(fresh, list) else []
        out = []
        for i in range(max(len(base), len(val))):
            v = val[i] if i < len(val) else None
            b = base[i] if i < len(base) else None
            f = fresh[i] if i < len(fresh) else None
            out.append(b if v is None else _add(b if b is not None else _zero(v), f if f is not None else _zero(v), v))
        return out
    if isinstance(val, dict):
        base = base if isinstance(base, dict) else {}
        fresh = fresh if isinstance(fresh, dict) else {}
        keys = list(base) + [k for k in val if k not in base]
        return {k: _add(base.get(k), fresh.get(k), val.get(k)) if k in val else base.get(k) for k in keys}
    return base


def _zero(x):
    if isinstance(x, (int, float)):
        return type(x)(0)
    if isinstance(x, list):
        return [_zero(e) for e in x]
    if isinstance(x, dict):
        return {k: _zero(v) for k, v in x.items()}
    return x


def _restore(obj, snap: dict, seen: set) -> None:
    """Write the merged counters back into ``obj`` (each underlying list / server once: parts share lists)."""
    for k, v in snap.items():
        cur = getattr(obj, k, None)
        if isinstance(cur, (int, float)) and not isinstance(cur, bool):
            setattr(obj, k, v)
        elif isinstance(cur, list):
            _restore_list(cur, v, seen)
        elif isinstance(cur, FluidServer):
            _restore_srv(cur, v, seen)


def _restore_list(cur: list, v: list, seen: set) -> None:
    if id(cur) in seen:
        return
    seen.add(id(cur))
    for i, e in enumerate(v):
        if e is None:
            continue
        if i >= len(cur):
            if isinstance(e, (int, float)):
                cur.append(e)
            continue
        c = cur[i]
        if isinstance(c, (int, float)) and not isinstance(c, bool) and isinstance(e, (int, float)):
            cur[i] = e
        elif isinstance(c, list) and isinstance(e, list):
            _restore_list(c, e, seen)
        elif isinstance(c, FluidServer) and isinstance(e, dict):
            _restore_srv(c, e, seen)


def _restore_srv(s: FluidServer, v: dict, seen: set) -> None:
    if id(s) in seen:
        return
    seen.add(id(s))
    s.busy, s.amount, s.hist = v["busy"], v["amount"], list(v["hist"])


# -- the run ----------------------------------------------------------------------------------------------
class _Local:
    """The views of one process: ``jobs=1`` calls it directly, a worker (:func:`_worker`) through its pipe."""

    def __init__(self, ctx, vids):
        t0 = time.perf_counter()
        self.views = [_View(v, ctx) for v in vids]
        self.ctx = ctx
        self.init_s = time.perf_counter() - t0
        self.busy = 0.0

    def step(self, t_end, entries, launches):
        t0 = time.perf_counter()
        out = []
        for V in self.views:
            V.apply_foreign(entries)
            V.launch(launches.get(V.vid, ()))
            out.append(V.run(t_end, self.ctx.max_cycles))
        self.busy += time.perf_counter() - t0
        return out

    def reports(self):
        return [V.report() for V in self.views]

    def finish(self):
        return [V.snapshot() for V in self.views], self.busy


def _worker(conn, ctx: _Ctx, vids: list[int]) -> None:
    try:
        loc = _Local(ctx, vids)
        conn.send(("ok", loc.init_s))
        while True:
            msg = conn.recv()
            if msg[0] == "step":
                conn.send(("ok", loc.step(*msg[1:])))
            elif msg[0] == "report":
                conn.send(("ok", loc.reports()))
            elif msg[0] == "finish":
                conn.send(("ok", loc.finish()))
                return
    except BaseException as exc:  # the coordinator re-raises it with the worker's text
        import traceback

        try:
            conn.send(("error", f"{type(exc).__name__}: {exc}", traceback.format_exc()))
        except Exception:
            pass


class _Remote:
    def __init__(self, ctx, vids, mpc):
        self.vids = vids
        a, b = mpc.Pipe()
        self.conn = a
        self.proc = mpc.Process(target=_worker, args=(b, ctx, vids), daemon=True)
        self.proc.start()
        b.close()

    def _get(self):
        try:
            r = self.conn.recv()
        except EOFError:
            raise SimulationError(f"a timing worker (views {self.vids}) died (exit code {self.proc.exitcode})",
                                  hint="memory exhausted? run with fewer jobs") from None
        if r[0] == "error":
            raise SimulationError(f"timing worker (views {self.vids}) failed: {r[1]}\n{r[2]}")
        return r[1]

    def reports(self):
        self.conn.send(("report",))
        return self._get()

    def finish(self):
        self.conn.send(("finish",))
        out = self._get()
        self.proc.join(timeout=30)
        return out

    def close(self):
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(timeout=5)


#: cycles a view advances per window unless ``timing.partition_window`` is set (capped at half the CTA launch
#: latency: a retired CTA's successor must not start inside the window that retired it)
DEFAULT_WINDOW = 256


def default_window(cfg, spec=None) -> int:
    return max(1, min(DEFAULT_WINDOW, int(cfg.launch_latency) // 2))


def run_timing_partitioned(trace, spec, *, record=None, jobs: int = 1, max_cycles: int | None = None,
                           policy: str | None = None, n_sms: int | None = None, shared_bytes: int | None = None,
                           registers: int | None = None, sass_overrides: dict | None = None, bundle: bool = True,
                           window: int | None = None, partition_window: int | None = None, partition: str | None = None,
                           on_progress=None):
    """Replay ``trace`` on ``spec`` as the GPC views of the module docstring, in ``jobs`` processes."""
    from warpgraph.components.cta_scheduler import CtaScheduler
    from warpgraph.runner.machine import build_machine
    from warpgraph.runner.timing import (BundleBuilder, _component_stats, _outcome, fabric_metrics, build_units, core_config, lower,
                                         place_clusters, sm_occupancy)

    t_wall = time.perf_counter()
    jobs = int(jobs)
    if jobs < 1:
        raise UserError(f"jobs={jobs}", hint="one or more processes")
    scope = str(spec.l2.coalesce_scope)
    if scope not in ("gpc", "none"):
        raise UserError(f"l2.coalesce_scope {scope} shares L2 lookups between GPCs; the partitioned timing "
                        f"(jobs for one launch) needs gpc or none", hint="l2.coalesce_scope: gpc, or no jobs")
    prog = trace.program
    tables = lower(prog, spec, sass_overrides=sass_overrides, record=record)
    cfg = core_config(spec, n_sms=n_sms, policy=policy)
    if cfg.n_sms != int(spec.sm.count):
        raise UserError("n_sms differs from sm.count", hint="the partitioned timing runs the spec's SMs")
    occ = sm_occupancy(spec, prog, record, threads_per_cta=trace.threads_per_cta, registers=registers,
                       shared_bytes=shared_bytes)
    if window is not None:
        cfg.window = int(window)
    cfg.runahead_own = True   # a view's queue is sparse: run ahead of the SM's own time (components/sm_core.py)
    probe_eng = Engine(ClockDomain("sm", float(spec.clocks.sm_mhz)))
    machine = build_machine(spec, probe_eng)
    if policy is None:
        cfg.policy = machine.policy
    W = int(partition_window) if partition_window else default_window(cfg, spec)
    if 2 * W > cfg.launch_latency:
        raise UserError(f"partition window {W} exceeds half the CTA launch latency {cfg.launch_latency}",
                        hint="timing.partition_window <= cta_scheduler.launch_latency_cycles / 2 (a retired "
                             "CTA's successor is launched two windows later)")
    granularity = partition or "gpc"
    views = partitions_of(spec, granularity)
    view_of = {sm: v for v, sms in enumerate(views) for sm in sms}
    cta_cls = machine.cta_scheduler_class
    sched = cta_cls.standalone(trace.n_ctas, cfg.n_sms, occ.ctas_per_sm, launch_latency_cycles=cfg.launch_latency)
    shape = tuple(getattr(trace, "cluster", None) or (1, 1, 1))
    if shape != (1, 1, 1) and granularity == "cpc":
        raise UserError(f"a launch of clusters {list(shape)} cannot be timed as CPC views (a cluster's DSM traffic "
                        "crosses them)", location="timing.partition", hint="timing.partition=gpc")
    place_clusters(sched, trace, spec, record, cfg.n_sms)
    first = list(sched.initial())
    groups = BundleBuilder(trace, tables, bundle)
    probe = [0, trace.n_ctas - 1] if trace.n_ctas > 1 else [0]
    merge = groups.balanced(cfg.subpartitions, probe)
    ctx = _Ctx(spec=spec, views=views, granularity=granularity, record=record, trace=trace, tables=tables, cfg=cfg, bundle=bundle, merge=merge,
               first_wave=first, core_cls=machine.sm_class, max_cycles=max_cycles,
               sm_mhz=float(spec.clocks.sm_mhz),
               write_back_ratio=float(trace.write_back_ratio),
               write_back_curve=getattr(trace, "write_back_curve", None))
    busy = sorted(range(len(views)), key=lambda v: (-len(views[v]), v))
    n_workers = min(jobs, len(views))
    owned = [[] for _ in range(n_workers)]
    for i, v in enumerate(busy):   # the largest GPCs first, round robin (views are never split)
        owned[i % n_workers].append(v)
    if n_workers > 1 and "fork" not in mp.get_all_start_methods():
        raise UserError("parallel timing needs the fork start method (Linux)", hint="jobs=1 on this system")
    parts = []
    try:
        if n_workers == 1:
            parts = [_Local(ctx, owned[0])]
            init_s = [parts[0].init_s]
        else:
            mpc = mp.get_context("fork")
            parts = [_Remote(ctx, vids, mpc) for vids in owned]
            init_s = [p._get() for p in parts]
        ll = cfg.launch_latency
        n_ctas = trace.n_ctas
        barriers = foreign = 0
        inflight = []
        local_q: list = []

        def send(t_end, entries, launches):
            # step messages are pickled once for every worker
            if n_workers == 1:
                local_q.append(parts[0].step(t_end, entries, launches))
            else:
                blob = pickle.dumps(("step", t_end, entries, launches), protocol=pickle.HIGHEST_PROTOCOL)
                for p in parts:
                    p.conn.send_bytes(blob)
            inflight.append(t_end)

        def gather():
            inflight.pop(0)
            if n_workers == 1:
                return local_q.pop(0), owned[0]
            results, vids = [], []
            for p, o in zip(parts, owned):
                results += p._get()
                vids += o
            return results, vids

        def reports():
            while inflight:
                gather()
            return "\n".join(r for p in parts for r in p.reports() if not r.startswith("0 unfinished"))

        # window k covers [k W, (k+1) W); what it produces (the others' reservations, the CTAs retired in it) is
        # applied at the start of window k + 2, so every worker always has its next window queued
        send(W, [], {})
        send(2 * W, [], {})
        k = 0
        prev_launches = False
        while True:
            results, vids = gather()
            barriers += 1
            merged = []
            rets = []
            nxt = None
            done = 0
            for v, (log, ret, nt, cd) in zip(vids, results):
                merged += [(e[0], v, i, e[1], e[2], e[3]) for i, e in enumerate(log)]
                rets += ret
                done += cd
                if nt is not None and (nxt is None or nt < nxt):
                    nxt = nt
            merged.sort(key=lambda e: (e[0], e[1], e[2]))
            foreign += len(merged)
            rets.sort()
            launches: dict = {}
            for t, sm, _k in rets:
                c = sched.on_retire(sm)
                if c is None:
                    continue
                # one CTA for this SM, or (clusters) the (cta, sm) pairs of the clusters that now fit
                for cta, s_ in ([(c, sm)] if isinstance(c, int) else c):
                    launches.setdefault(view_of[s_], []).append((cta, s_, t + ll))
            if on_progress is not None and rets:
                on_progress(done, n_ctas, (k + 1) * W)
            quiet = nxt is None and not launches and not prev_launches
            if quiet and done >= n_ctas:
                break
            if quiet:
                raise SimulationError("simulation deadlocked: no pending events but warps have not finished\n"
                                      + reports(),
                                      hint="a bar.sync / mbarrier wait that can never complete (see the listed warps)")
            if max_cycles is not None and (k + 1) * W > max_cycles:
                raise CycleLimitExceeded(f"simulation exceeded max_cycles={max_cycles} (window ending at cycle "
                                         f"{(k + 1) * W})\n" + reports(),
                                         hint="a larger max_cycles, or find what the listed warps wait on")
            send((k + 3) * W, merged, launches)
            prev_launches = bool(launches)
            k += 1
        while inflight:
            gather()
        fin = [p.finish() for p in parts]
        snaps_v = [s for f in fin for s in f[0]]
        busy_s = [f[1] for f in fin]
        snap_vids = [v for o in owned for v in o]
    finally:
        for p in parts:
            if isinstance(p, _Remote):
                p.close()
    # merge the views' counters into one fresh set of objects and build the outcome as run_timing does
    eng0 = Engine(ClockDomain("sm", ctx.sm_mhz))
    mem0, smem0, tma0, mbar0, tc0, unit_names, machine0 = build_units(spec, eng0, "auto")
    core0 = machine0.sm_class(eng0, tables, cfg, n_ctas=trace.n_ctas, warps_per_cta=trace.warps_per_cta,
                              threads_per_cta=trace.threads_per_cta, stream_of=trace.warp_stream,
                              scheduler=sched, mem=mem0, smem=smem0, tma=tma0, mbar=mbar0, tc=tc0,
                              max_cycles=max_cycles, groups_of=None, merge_subpartitions=merge)
    units0 = (mem0, smem0, tma0, mbar0, tc0)
    objs = _objects(core0, units0, machine0)
    fresh = {k: _snap(o) for k, o in objs.items()}
    acc = {k: fresh[k] for k in objs}
    events = 0
    nb = nw = 0
    snaps_v = [s for _v, s in sorted(zip(snap_vids, snaps_v), key=lambda x: x[0])]   # float sums: one order
    for s in snaps_v:
        for k in objs:
            acc[k] = _add(acc[k], fresh[k], s[k])
        events += s["_events"]
        core0.clock_issue.update(s["_clock_issue"])
        core0.placed.update(s["_placed"])
        nb += s["_bundles"][0]
        nw += s["_bundles"][1]
    seen: set = set()
    for k, o in objs.items():
        _restore(o, acc[k], seen)
    core0.end_cycle = max(s["_end_cycle"] for s in snaps_v)
    if hasattr(mbar0, "bars"):   # its statistics count the mbarriers it has seen
        mbar0.bars = dict.fromkeys(range(sum(s["_mbarriers"] for s in snaps_v)))
    core0.ctas_done = trace.n_ctas
    eng0.events_processed = events
    wall = time.perf_counter() - t_wall
    out = _outcome(core0, eng0, cfg, occ, tables, units0, unit_names, wall, spec)
    _component_stats(out.stats, core0, machine0, trace)
    m = out.metrics
    fabric_metrics(m, trace)
    m["bundles"] = nb
    m["bundled"] = groups.bundle
    m["warps_per_bundle"] = round(nw / nb, 3) if nb else 0.0
    m["merged_subpartitions"] = merge
    m["sm_events"] = core0.sm_events
    m["window_cycles"] = cfg.window
    m["partitioned"] = {"views": len(views), "granularity": granularity, "jobs": n_workers, "jobs_asked": jobs, "window_cycles": W,
                        "barriers": barriers, "replayed_reservations": foreign,
                        "views_of_workers": owned, "order": snap_vids,
                        "worker_init_seconds": [round(x, 3) for x in init_s],
                        "worker_busy_seconds": [round(x, 3) for x in busy_s]}
    g = out.stats.group("partitioned")
    g.set("views", len(views))
    g.set("window_cycles", W)
    g.set("barriers", barriers)
    return out

"""A functional trace produced while the timing pass runs, batch by batch, and dropped as CTAs launch.

``lazy_trace(record, program, **run_functional kwargs) -> LazyTrace`` (the :class:`KernelTrace` interface the
timing pass reads: ``warp_stream(g)``, ``n_ctas``, ``warps_per_cta``, ``threads_per_cta``, ``program``,
``write_back_ratio``, ``dram_first_touch_bytes``). The CTA scheduler launches CTAs in increasing index order
and the SM core reads each warp's stream once, at its CTA's launch (runner/timing.py ``BundleBuilder``), so the
functional batches (workloads/functional/run.py ``iter_batches``: launch order, at most ``max_lanes`` threads)
can run when the first of their CTAs launches and be dropped when the last of their warps has been read: peak
memory holds the batches of the CTAs being launched, not the grid's trace.

Bit-identical to the eager pass: the batches are the same ones, executed in the same order on memory built the
same way. Two launch-wide facts are needed before the first CTA launches, so a **pre-pass** runs the whole
functional pass first without keeping its traces (time: one more functional pass): the L2 write-back ratio of the
launch (components/memory.py charges every store with it) and the first-touch / write-back totals; it keeps the
batches that hold the CTAs the timing pass probes before launching anything (``probe``: the first and the last
CTA, ``BundleBuilder.balanced``) and serves those CTAs from them (the same traces: same batches, same order).
A warp read a second time after its batch was dropped is an error, never a silent re-execution.
"""
from __future__ import annotations

import time

import numpy as np

from ...core.errors import SimulationError
from .run import iter_batches, start_exec
from .trace import KernelTrace

__all__ = ["LazyTrace", "lazy_trace", "lazy_unsupported"]


def lazy_unsupported(program, *, sampled: bool = False, clock_oracle: bool = False) -> str | None:
    """Why the lazy trace cannot stand for the eager one here (the runner then runs eagerly and records it)."""
    from .subset import cta_communication

    if sampled:
        return "sampled mode reads the ghosts' streams out of launch order"
    if clock_oracle:
        return "the kernel reads %clock and its outputs are wanted: the clock oracle re-runs the functional pass"
    why = cta_communication(program)
    if why:
        return f"CTAs communicate ({why}); a CTA's trace may depend on when the others ran"
    return None


class LazyTrace:
    def __init__(self, ex, mem, order, max_lanes, pre: KernelTrace, pre_stats: dict):
        self.program = ex.program
        self.grid, self.block = tuple(ex.grid), tuple(ex.block)
        self.n_ctas = int(np.prod(self.grid))
        self.threads_per_cta = int(np.prod(self.block))
        self.warps_per_cta = (self.threads_per_cta + 31) // 32
        self.n_warps = self.n_ctas * self.warps_per_cta
        self.dram_first_touch_bytes = pre.dram_first_touch_bytes
        self.dram_write_bytes = pre.dram_write_bytes
        self.write_back_ratio = pre.write_back_ratio
        self.write_back_curve = pre.write_back_curve
        self.cluster = tuple(ex.cluster)        # clusters: the timing pass places and connects whole clusters
        self.l2_stats = pre_stats
        self.address_counts = getattr(pre, "address_counts", None)   # of the pre-pass (the whole grid)
        self._ex, self.memory = ex, mem
        self._it = iter_batches(ex, order, max_lanes)
        self._kept = pre                       # the probed CTAs' batches of the pre-pass (never dropped)
        self._where: dict[int, tuple] = {}     # cta -> (BatchTrace, slot) of the lazy batches alive
        self._left: dict[int, int] = {}        # id(BatchTrace) -> warp reads still to come
        self._done = set()                     # CTAs whose lazy batch was dropped
        self._exhausted = False
        self.batches_run = 0
        self.peak_batches_alive = 0
        self.functional_seconds = 0.0

    @property
    def batches(self):
        raise SimulationError("the lazy trace keeps no batches (they are dropped as CTAs launch)",
                              hint="an eager trace (simulate(lazy=False)) for whole-trace analyses")

    def cta_coords(self, cta: int) -> tuple:
        gx, gy, _ = self.grid
        return (cta % gx, (cta // gx) % gy, cta // (gx * gy))

    def _advance(self) -> None:
        t = time.perf_counter()
        try:
            d = next(self._it)
        except StopIteration:
            self._exhausted = True
            return
        finally:
            self.functional_seconds += time.perf_counter() - t
        bt = d.trace
        self.batches_run += 1
        live = [int(c) for c in d.ctas.tolist() if int(c) not in self._kept._where]
        if live:
            for k, c in enumerate(d.ctas.tolist()):
                if int(c) in self._kept._where:
                    continue
                self._where[int(c)] = (bt, k)
            self._left[id(bt)] = len(live) * self.warps_per_cta
        self.peak_batches_alive = max(self.peak_batches_alive, len(self._left))

    def warp_stream(self, g: int):
        if not 0 <= g < self.n_warps:
            raise IndexError(f"warp {g} out of range (n_warps={self.n_warps})")
        cta, w = divmod(int(g), self.warps_per_cta)
        if cta in self._kept._where:
            return self._kept.warp_stream(g)
        loc = self._where.get(cta)
        while loc is None:
            if cta in self._done or self._exhausted:
                raise SimulationError(f"lazy trace: warp {g} (CTA {cta}) was read after its batch was dropped",
                                      hint="simulate(lazy=False): this reader does not read each warp once, at "
                                           "its CTA's launch")
            self._advance()
            loc = self._where.get(cta)
        bt, k = loc
        st = bt.warp_stream(k * self.warps_per_cta + w)
        key = id(bt)
        self._left[key] -= 1
        if self._left[key] == 0:
            del self._left[key]
            for c in bt.ctas.tolist():
                if self._where.pop(int(c), None) is not None:
                    self._done.add(int(c))
        return st


def lazy_trace(record, program=None, *, probe=None, max_lanes: int = 1 << 16, **kw) -> LazyTrace:
    """The pre-pass (whole grid, traces dropped except the batches holding ``probe`` CTAs; default the first and
    the last) and a :class:`LazyTrace` over a second, lazily run pass with the same arguments (``run_functional``'s
    keyword arguments; ``want_trace`` is implied)."""
    t0 = time.perf_counter()
    kw.pop("want_trace", None)
    ex0, _mem0 = start_exec(record, program, want_trace=True, t_start=t0, **kw)
    n = int(np.prod(ex0.grid))
    probe = {0, n - 1} if probe is None else {int(c) for c in probe}
    ex0.keep_batches = probe
    order = np.arange(n, dtype=np.int64)
    for _d in iter_batches(ex0, order, max_lanes):
        pass
    pre = KernelTrace(ex0.program, ex0.grid, ex0.block, ex0.batches, ex0.dram_read_sectors * 32,
                      dram_write_bytes=ex0.touched.dram_write_bytes())
    pre.write_back_ratio = ex0.touched.write_back_ratio()
    pre.write_back_curve = ex0.touched.write_back_curve()
    pre.address_counts = ex0.addr.result(ex0.touched) if ex0.addr is not None else None
    from .run import l2_stats

    stats = l2_stats(ex0.touched)
    del ex0, _mem0
    pre_s = time.perf_counter() - t0
    ex, mem = start_exec(record, program, want_trace=True, t_start=time.perf_counter(), **kw)
    ex.keep_batches = False
    lt = LazyTrace(ex, mem, order, max_lanes, pre, stats)
    lt.prepass_seconds = pre_s
    return lt

"""Tensor cores (paper III-C). Variants registered by ``kind`` (role ``tensor_core``):

* ``mma_sync`` — warp-synchronous ``mma.sync`` only (RTX 5090 / sm_120, Ampere-style). One tensor pipe per
  sub-partition: an MMA starts at max(t, pipe free), the pipe accepts the next MMA ``issue_gap_cycles`` later
  and the result is ready ``latency_cycles`` after the start (``tensor_core.mma_sync["dtype.shape"]``, paper
  Table III for RTX 5090; H100 gap 6 for m16n8k16 f16 ⇒ 4096/6 FLOP/cycle/SP ≈ 66 % of the 4096 FLOP/SM/cycle
  peak, paper III-C).
* ``wgmma`` — Hopper: mma.sync plus asynchronous ``wgmma``. All tensor ops of an SM share one per-SM service
  rate (``dense_*_flop_per_cycle_per_sm``: 4096 FP16, TF32 half, FP8/INT8 double). Sharing is **FIFO** in
  arrival order (the aggregate throughput equals processor sharing; FIFO keeps O(1) cost and a deterministic
  order). An op starts no earlier than ``t + issue_latency_{ss,rs}_cycles``; it completes after its service
  time plus ``completion_latency_cycles`` (pipeline tail overlapping later ops) and no earlier than
  ``t + min_latency_cycles``. At most ``accumulator_queue_depth`` ops are in flight per SM (a further op
  waits for the oldest; ``last_release`` tells the SM core when the issuing warp may continue). Each op emits
  accumulator-sized register traffic (64·N·4 B per warpgroup; ``wgmma_rf_traffic``). While the SM's tensor
  cores serve wgmma (``busy_from[sm] <= t < free[sm]``) that traffic takes the share ``rf_share[sm]`` of each
  sub-partition's register-file bandwidth (``register_file_bytes_per_cycle_per_subpartition``; a quarter of the
  accumulator bytes per sub-partition over the op's service time: 128 B/cycle of 512 = 0.25 for FP16 at 4096
  FLOP/cycle, any N), and the SM core stretches the pipe occupancy of the *other* instructions issued then by
  1 / (1 - share) (paper III-C: softmax slows under background wgmma; H200 MUFU 1.33x, FFMA 1.26x).
* ``tcgen05`` — Blackwell: same service model at the B200 rates, ``mma_issue_interval_cycles`` between issues,
  ``completion_tail_latency_cycles`` tail, accumulators in TMEM (no register traffic).
* ``ideal_queue`` — what-if of paper V-G (FA-2-async): an unbounded queue between issue and the mma.sync pipe,
  so ``mma_sync`` never stalls issue (next issue = t + 1); the pipe itself still serialises MMAs.
  Based on the ``wgmma`` model (also selectable by ``tensor_core.ideal_issue_queue: true``).

``warp_issue_gap`` (``tensor_core.mma_sync_warp_issue_gap_cycles``, 0 = none): the cycles one warp needs between
its own mma.sync issues, whatever the pipe could accept (the SM core applies it per warp).

``mma_sync(t, sm, sp, shape_key, flops) -> (next_issue_cycle, result_cycle)``: next_issue_cycle is the earliest
cycle this sub-partition may issue another MMA (for other instructions the issue slot is free at t + 1).
"""
from __future__ import annotations

from heapq import heappop, heappush

from warpgraph.core.errors import SimulationError
from warpgraph.core.registry import register_component
from warpgraph.core.tracing import NULL_RECORDER

__all__ = ["TensorCoreUnit", "MmaSyncTensorCoreUnit", "WgmmaTensorCoreUnit", "Tcgen05TensorCoreUnit",
           "IdealQueueTensorCoreUnit", "mma_key", "dtype_class", "DTYPE_CLASS"]

_DT = {"f16": "fp16", "bf16": "fp16", "tf32": "tf32", "e4m3": "fp8", "e5m2": "fp8", "s8": "int8", "u8": "int8",
       "f64": "fp64", "s4": "int8", "u4": "int8"}


#: A/B type -> the tensor core's rate class (``dense_<class>_flop_per_cycle_per_sm``); unlisted types: fp16
DTYPE_CLASS = _DT


def dtype_class(dtype: str) -> str:
    return _DT.get(dtype, "fp16")


def mma_key(mods) -> str:
    """``"dtype.shape"`` key of an mma.sync/wgmma from its PTX modifiers, e.g.
    ``("sync","aligned","m16n8k16","row","col","f32","f16","f16","f32") -> "f16.m16n8k16"`` (A's type)."""
    shape = ""
    types = []
    for m in mods:
        if m.startswith("m") and "n" in m and "k" in m and m[1:2].isdigit():
            shape = m
        elif m in _DT or m in ("f32", "s32"):
            types.append(m)
    a = types[1] if len(types) >= 2 else (types[0] if types else "f16")
    if a in ("u8",):
        a = "s8"
    if a == "e5m2":
        a = "e4m3"
    return f"{a}.{shape}"


class TensorCoreUnit:
    """Base: the mma.sync pipes of every sub-partition (per-SM wgmma service is added by subclasses)."""

    role = "tensor_core"
    kind = "mma_sync"
    ideal_queue = False

    def __init__(self, spec, engine=None):
        self.engine = engine
        tc = spec.tensor_core          # the typed section (topologies/schema.py: TensorCoreBase and its variants)
        self.tc = tc
        self.n_sm = int(spec.sm.count)
        self.n_sp = int(spec.sm.subpartitions)
        d = tc.mma_sync_default
        self.default = (int(d.issue_gap_cycles), int(d.latency_cycles))
        # one warp's own mma.sync issue interval (0: none): a single warp cannot reach the k8 shapes' 3-cycle
        # pipe gap (H200 single-warp gap 4.375); the SM core spaces a warp's MMAs by it
        self.warp_issue_gap = int(tc.mma_sync_warp_issue_gap_cycles)
        self.table = {k: (int(v.issue_gap_cycles), int(v.latency_cycles)) for k, v in sorted(tc.mma_sync.items())}
        # mma_sync looks the table up inline (one call fewer per MMA); a subclass overriding mma_timing is called
        self._own_timing = type(self).mma_timing is not TensorCoreUnit.mma_timing
        self._own_mma = self._own_timing or type(self).mma_sync is not TensorCoreUnit.mma_sync
        self.pipe = [0] * (self.n_sm * self.n_sp)
        self.rec = NULL_RECORDER  # event recorder (core/tracing.py); the runner swaps in a real one
        self._mruns: dict[int, list] = {}  # pipe -> open run of back-to-back mma.sync [sm, sp, t0, t1, flops]
        if tc.ideal_issue_queue:
            self.ideal_queue = True
        self.mma_count = 0
        self.mma_flops = 0
        self.mma_busy = 0
        self.mma_queue_cycles = 0

    def mma_timing(self, shape_key: str) -> tuple[int, int]:
        """(issue_gap, latency) for a ``dtype.shape`` key (f16/bf16/tf32/s8/e4m3 . m16n8k16 ...)."""
        r = self.table.get(shape_key)
        return r if r is not None else self.default

    def mma_sync(self, t: int, sm: int, sp: int, shape_key: str, flops: int = 0):
        if self._own_timing:
            gap, lat = self.mma_timing(shape_key)
        else:   # mma_timing inlined
            r = self.table.get(shape_key)
            gap, lat = r if r is not None else self.default
        i = sm * self.n_sp + sp
        s = self.pipe[i]
        if s < t:
            s = t
        else:
            self.mma_queue_cycles += s - t
        self.pipe[i] = s + gap
        if self.rec.enabled:
            self._trace_mma(i, sm, sp, s, s + gap, flops)
        self.mma_count += 1
        self.mma_flops += flops
        self.mma_busy += gap
        if self.ideal_queue:
            return t + 1, s + lat
        return s + gap, s + lat

    def mma_sync_bundle(self, t: int, sm: int, sps: list, shape_key: str, flops: int = 0) -> tuple[int, int]:
        """One mma.sync of each warp of a bundle (warp k on sub-partition ``sps[k]``), in that order, at ``t``:
        ``(latest next-issue time, latest completion)`` over the warps; the same as :meth:`mma_sync` per warp (a
        subclass overriding ``mma_sync`` or ``mma_timing`` is called per warp), one call per bundle instead of
        one per warp (gemm80: 4.2 M warp MMAs)."""
        if self._own_mma:
            nxt = done = -1
            for sp in sps:
                x, d = self.mma_sync(t, sm, sp, shape_key, flops)
                if x > nxt:
                    nxt = x
                if d > done:
                    done = d
            return nxt, done
        r = self.table.get(shape_key)
        gap, lat = r if r is not None else self.default
        pipe = self.pipe
        base = sm * self.n_sp
        trace = self.rec.enabled
        nxt = done = -1
        q = 0
        for sp in sps:
            i = base + sp
            s = pipe[i]
            if s < t:
                s = t
            else:
                q += s - t
            pipe[i] = s + gap
            if trace:
                self._trace_mma(i, sm, sp, s, s + gap, flops)
            x = s + gap
            if x > nxt:
                nxt = x
            x = s + lat
            if x > done:
                done = x
        n = len(sps)
        self.mma_queue_cycles += q
        self.mma_count += n
        self.mma_flops += flops * n
        self.mma_busy += gap * n
        if self.ideal_queue:
            nxt = t + 1
        return nxt, done

    def _trace_mma(self, i, sm, sp, s, e, flops) -> None:
        """mma.sync pipe occupancy: back-to-back MMAs of one pipe merge into one ``tensor`` event."""
        r = self._mruns.get(i)
        if r is not None and s <= r[3]:
            r[3] = e
            r[4] += flops
            return
        if r is not None:
            self.rec.tensor_op(r[0], "mma_sync", f"sp{r[1]}", r[2], r[3], r[4])
        self._mruns[i] = [sm, sp, s, e, flops]

    def trace_finish(self, t_end=None) -> None:
        """Flush the open mma.sync runs into the recorder (the runner calls this after the run)."""
        for i in sorted(self._mruns):
            r = self._mruns[i]
            self.rec.tensor_op(r[0], "mma_sync", f"sp{r[1]}", r[2], r[3], r[4])
        self._mruns.clear()

    def wgmma(self, t, sm, wg_key, flops, smem_bytes, n, a_from_regs, dtype="f16"):
        raise SimulationError(f"tensor core kind {self.kind!r} has no wgmma",
                              hint="an architecture whose tensor_core.kind is wgmma or tcgen05")

    def wgmma_rf_traffic(self, n: int, accum_bytes: int = 4) -> tuple[int, float]:
        return 0, 0.0

    def stats(self) -> dict:
        return {"mma_sync.count": self.mma_count, "mma_sync.flops": self.mma_flops,
                "mma_sync.busy_cycles": self.mma_busy, "mma_sync.queue_cycles": self.mma_queue_cycles}


@register_component(role="tensor_core", kind="mma_sync")
class MmaSyncTensorCoreUnit(TensorCoreUnit):
    kind = "mma_sync"


@register_component(role="tensor_core", kind="wgmma")
class WgmmaTensorCoreUnit(TensorCoreUnit):
    kind = "wgmma"
    rf_on = True

    def __init__(self, spec, engine=None):
        super().__init__(spec, engine)
        tc = self.tc
        self.rates = {
            "fp16": float(tc.dense_fp16_flop_per_cycle_per_sm),
            "tf32": float(tc.dense_tf32_flop_per_cycle_per_sm),
            "fp8": float(tc.dense_fp8_flop_per_cycle_per_sm),
            "int8": float(tc.dense_int8_flop_per_cycle_per_sm),
        }
        self.rates["fp64"] = self.rates["fp16"] / 16
        self._init_async(tc)
        self.free = [0.0] * self.n_sm
        self.busy_from = [0.0] * self.n_sm   # start of the SM's current tensor service period (up to free[sm])
        # share of each sub-partition's register-file bandwidth the accumulator traffic of the op in service takes
        # (64·N·4 B per warpgroup over its service time, a quarter per sub-partition, vs the register file's
        # ``register_file_bytes_per_cycle_per_subpartition``, read by _init_async); the SM core slows other
        # instructions by it
        self.rf_share = [0.0] * self.n_sm
        self.inflight = [[] for _ in range(self.n_sm)]
        self.last_release = 0
        self.last_rf_bytes = 0
        self.wg_count = 0
        self.wg_flops = 0
        self.wg_busy = 0.0
        self.rf_bytes = 0

    def _init_async(self, tc):
        self.lat_ss = int(tc.issue_latency_ss_cycles)
        self.lat_rs = int(tc.issue_latency_rs_cycles)
        self.tail = int(tc.completion_latency_cycles)
        self.min_lat = int(tc.min_latency_cycles)
        self.qdepth = int(tc.accumulator_queue_depth)
        self.rf_bpc = float(tc.rf_traffic_bytes_per_cycle)
        self.rf_sp_bpc = float(tc.register_file_bytes_per_cycle_per_subpartition)

    def wgmma_rf_traffic(self, n: int, accum_bytes: int = 4) -> tuple[int, float]:
        """Accumulator register traffic of one warpgroup op: (bytes, cycles at rf_traffic_bytes_per_cycle)."""
        if not self.rf_on:
            return 0, 0.0
        b = 64 * int(n) * accum_bytes
        return b, b / self.rf_bpc

    def wgmma(self, t: int, sm: int, wg_key, flops: int, smem_bytes: int, n: int, a_from_regs: bool,
              dtype: str = "f16") -> int:
        """Queue ``flops`` of tensor work on the SM; returns its completion cycle."""
        start = t + (self.lat_rs if a_from_regs else self.lat_ss)
        q = self.inflight[sm]
        while q and q[0] <= t:
            heappop(q)
        rel = t + 1
        if self.qdepth and len(q) >= self.qdepth:
            c = heappop(q)
            if c > rel:
                rel = c
            if c > start:
                start = c
        self.last_release = rel
        f = self.free[sm]
        if f < start:
            f = start
            self.busy_from[sm] = start
        svc = flops / self.rates.get(dtype_class(dtype), self.rates["fp16"])
        end = f + svc
        self.free[sm] = end
        if self.rf_on and self.rf_sp_bpc > 0 and svc > 0:
            u = 64 * int(n) * 4 / self.n_sp / svc / self.rf_sp_bpc
            self.rf_share[sm] = u if u < 0.9 else 0.9
        if self.rec.enabled:  # the op's service interval on the SM's tensor cores
            self.rec.tensor_op(sm, "wgmma" if self.kind != "tcgen05" else "tcgen05",
                               wg_key if wg_key is not None else self.kind, f, end, flops)
        done = end + self.tail
        i = int(done)
        if i < done:
            i += 1
        if i < t + self.min_lat:
            i = t + self.min_lat
        heappush(q, i)
        self.wg_count += 1
        self.wg_flops += flops
        self.wg_busy += svc
        b, _ = self.wgmma_rf_traffic(n)
        self.last_rf_bytes = b
        self.rf_bytes += b
        return i

    def stats(self) -> dict:
        d = super().stats()
        d.update({"async.count": self.wg_count, "async.flops": self.wg_flops, "async.busy_cycles": self.wg_busy,
                  "async.rf_bytes": self.rf_bytes})
        return d


@register_component(role="tensor_core", kind="tcgen05")
class Tcgen05TensorCoreUnit(WgmmaTensorCoreUnit):
    kind = "tcgen05"
    rf_on = False

    def _init_async(self, tc):
        self.lat_ss = self.lat_rs = int(tc.mma_issue_interval_cycles)
        self.tail = int(tc.completion_tail_latency_cycles)
        self.min_lat = int(tc.min_latency_cycles)
        self.qdepth = int(tc.async_queue_depth)
        self.rf_bpc = 1.0       # accumulators in TMEM: no register traffic (rf_on False), so no
        self.rf_sp_bpc = 0.0    # register-file parameters in the tcgen05 section

    tmem = None   # the SMs' TMEM (components/tmem.py), attached by runner/machine.py from the graph

    def tcgen05(self, t, sm, flops, dtype="f16", key=None):
        """One tcgen05.mma (``flops`` = 2·M·N·K) on SM ``sm``'s tensor cores: the same per-SM FIFO service as
        wgmma at the tcgen05 rates; issue-to-start ``mma_issue_interval_cycles``, completion after the service
        plus ``completion_tail_latency_cycles``, no earlier than ``min_latency_cycles``. Returns the cycle the
        accumulator in TMEM is complete (what tcgen05.commit's mbarrier arrival waits for)."""
        return self.wgmma(t, sm, key, flops, 0, 0, False, dtype)

    def stats(self) -> dict:
        d = super().stats()
        if self.tmem is not None:
            d.update({f"tmem.{k}": v for k, v in self.tmem.stats().items()})
        return d


@register_component(role="tensor_core", kind="ideal_queue")
class IdealQueueTensorCoreUnit(WgmmaTensorCoreUnit):
    kind = "ideal_queue"
    ideal_queue = True

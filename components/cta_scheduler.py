"""CTA scheduler: occupancy limits and CTA placement over SMs (waves).

``occupancy(...)`` computes CTAs per SM from registers, shared memory, warps, threads and the CTA slot
limit (CUDA occupancy-calculator rules: registers allocated per warp in units of ``reg_alloc_unit`` after
rounding registers/thread up to ``reg_granularity``; shared memory per CTA rounded up to the allocation
granularity plus ``reserved_smem_per_cta_bytes``, 1 KiB on Hopper).

``CtaScheduler`` places CTAs round-robin over SMs in launch order (CTA i of the first wave on SM
``sm_order[i % n_sms]``, then the next slot...), and launches the next pending CTA on an SM as soon as one of
its CTAs retires (after ``launch_latency_cycles``).

Thread-block clusters (:meth:`CtaScheduler.set_clusters`; CUDA programming guide "Thread Block Clusters": the CTAs
of a cluster are co-scheduled on one GPC): clusters launch in order, a cluster only when each of its CTAs gets a
free slot on a distinct SM of one GPC (the GPC with the most free SMs, lowest id on ties; inside it the least
loaded SMs). A retire that frees room may launch several CTAs at once (``on_retire`` then returns a list of
``(cta, sm)``). A cluster larger than the SMs of every GPC, or than ``fabric.max_cluster_size``, is refused with
a RecordError (exit 2), as the driver refuses the launch.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from warpgraph.components.base import Component
from warpgraph.core.errors import RecordError
from warpgraph.core.registry import register_component

__all__ = ["Occupancy", "occupancy", "CtaScheduler", "round_up"]


def round_up(x: int, unit: int) -> int:
    return -(-int(x) // unit) * unit if unit > 1 else int(x)


@dataclass
class Occupancy:
    ctas_per_sm: int
    limiter: str
    warps_per_cta: int
    registers_per_thread: int
    registers_source: str
    smem_per_cta_bytes: int
    limits: dict = field(default_factory=dict)

    @property
    def warps_per_sm(self) -> int:
        return self.ctas_per_sm * self.warps_per_cta


def occupancy(*, threads_per_cta: int, registers_per_thread: int, smem_per_cta_bytes: int,
              registers_source: str = "given",
              max_warps_per_sm: int = 64, max_threads_per_sm: int = 2048, max_ctas_per_sm: int = 32,
              registers_per_sm: int = 65536, reg_alloc_unit: int = 256, reg_granularity: int = 8,
              max_registers_per_thread: int = 255, smem_per_sm_bytes: int = 233472,
              max_smem_per_cta_bytes: int = 232448, reserved_smem_per_cta_bytes: int = 1024,
              smem_alloc_unit_bytes: int = 128, location: str | None = None) -> Occupancy:
    """CTAs per SM and the binding limit (H200 defaults: hopper-blackwell-facts.md, CUDA occupancy rules)."""
    warps = -(-threads_per_cta // 32)
    regs = min(max_registers_per_thread, max(1, round_up(registers_per_thread, reg_granularity)))
    regs_per_warp = round_up(regs * 32, reg_alloc_unit)
    smem = round_up(smem_per_cta_bytes, smem_alloc_unit_bytes) + reserved_smem_per_cta_bytes
    if threads_per_cta > 1024 or threads_per_cta <= 0:
        raise RecordError(f"block of {threads_per_cta} threads", location=location, hint="1..1024 threads per CTA")
    if smem_per_cta_bytes > max_smem_per_cta_bytes:
        raise RecordError(f"shared memory per CTA {smem_per_cta_bytes} B exceeds the SM limit "
                          f"{max_smem_per_cta_bytes} B", location=location,
                          hint=f"<= {max_smem_per_cta_bytes} bytes of shared memory per CTA")
    limits = {
        "warps": max_warps_per_sm // warps,
        "threads": max_threads_per_sm // threads_per_cta,
        "ctas": max_ctas_per_sm,
        "registers": registers_per_sm // (regs_per_warp * warps),
        "shared_memory": smem_per_sm_bytes // smem if smem > 0 else max_ctas_per_sm,
    }
    limiter = min(limits, key=lambda k: (limits[k], k))
    n = limits[limiter]
    if n < 1:
        raise RecordError(f"a CTA does not fit on an SM (limited by {limiter}: {limits})", location=location,
                          hint="fewer registers/threads/shared memory per CTA")
    return Occupancy(n, limiter, warps, regs, registers_source, smem, limits)


@register_component(role="cta_scheduler", kind="round_robin")
class CtaScheduler(Component):
    """Round-robin CTA placement with waves. Use :meth:`setup` before :meth:`initial`/:meth:`on_retire`."""

    def setup(self, n_ctas: int, n_sms: int, ctas_per_sm: int, *, launch_latency_cycles: int = 0,
              sm_order: list[int] | None = None, cluster_size: int = 1, sms_per_gpc: int | None = None,
              assignment: dict | None = None):
        """``assignment`` (sampled mode): a fixed ``{sm: [cta, ...]}`` in launch order; only those SMs run,
        each launching its list in order (``ctas_per_sm`` at a time)."""
        self.n_ctas = n_ctas
        self.n_sms = n_sms
        self.ctas_per_sm = ctas_per_sm
        self.launch_latency = launch_latency_cycles
        self.sm_order = list(sm_order) if sm_order is not None else list(range(n_sms))
        self.cluster_size = cluster_size
        self.sms_per_gpc = sms_per_gpc
        self.next_cta = 0
        self.resident = [0] * n_sms
        self.assignment = {int(k): list(v) for k, v in assignment.items()} if assignment is not None else None
        self._apos = {k: 0 for k in self.assignment} if self.assignment is not None else None
        return self

    @classmethod
    def standalone(cls, n_ctas, n_sms, ctas_per_sm, **kw) -> "CtaScheduler":
        return cls("cta_scheduler", None, None).setup(n_ctas, n_sms, ctas_per_sm, **kw)

    def initial(self) -> list[tuple[int, int]]:
        """(cta, sm) of the first wave, in launch order (slot-major round robin over ``sm_order``)."""
        out = []
        if self.assignment is not None:
            for slot in range(self.ctas_per_sm):
                for sm, lst in self.assignment.items():
                    if slot < len(lst):
                        out.append((lst[slot], sm))
                        self.resident[sm] += 1
                        self._apos[sm] = slot + 1
            return out
        if getattr(self, "clusters", None):
            return self._place_clusters()
        if self.cluster_size > 1:
            return self.place_cluster_wave()
        for slot in range(self.ctas_per_sm):
            for sm in self.sm_order:
                if self.next_cta >= self.n_ctas:
                    return out
                out.append((self.next_cta, sm))
                self.resident[sm] += 1
                self.next_cta += 1
        return out

    def on_retire(self, sm: int) -> int | None:
        """A CTA on ``sm`` retired: the next pending CTA to launch there (or None)."""
        self.resident[sm] -= 1
        if self.assignment is not None:
            lst = self.assignment.get(sm, ())
            k = self._apos.get(sm, 0)
            if k >= len(lst):
                return None
            self._apos[sm] = k + 1
            self.resident[sm] += 1
            return lst[k]
        if getattr(self, "clusters", None):
            out = self._place_clusters()
            return out or None
        if self.next_cta >= self.n_ctas:
            return None
        cta = self.next_cta
        self.next_cta += 1
        self.resident[sm] += 1
        return cta

    def place_cluster_wave(self) -> list[tuple[int, int]]:
        """GPC hook for clusters: consecutive CTAs of a cluster go to consecutive SMs of one GPC (``sm_order``
        is GPC-major). Minimal version: clusters never straddle a GPC boundary when ``sms_per_gpc`` is known."""
        out = []
        cs = self.cluster_size
        per = self.sms_per_gpc or self.n_sms
        usable = [sm for i, sm in enumerate(self.sm_order) if (i % per) < (per // cs) * cs]
        for slot in range(self.ctas_per_sm):
            for sm in usable:
                if self.next_cta >= self.n_ctas:
                    return out
                out.append((self.next_cta, sm))
                self.resident[sm] += 1
                self.next_cta += 1
        return out

    # ---- thread-block clusters (module docstring) -------------------------------------------------------------
    def set_clusters(self, members: list[list[int]], gpc_of: list[int], *, max_cluster_size: int | None = None,
                     location: str | None = None) -> "CtaScheduler":
        """Launch whole clusters: ``members`` the CTAs of each cluster (by rank, in launch order), ``gpc_of`` the GPC
        of every SM. Refuses (RecordError) a cluster that no GPC can ever hold."""
        size = len(members[0]) if members else 1
        if size <= 1 or self.assignment is not None:
            return self
        per: dict[int, list[int]] = {}
        for sm in self.sm_order:
            per.setdefault(int(gpc_of[sm]), []).append(sm)
        biggest = max(len(v) for v in per.values())
        if max_cluster_size is not None and size > max_cluster_size:
            raise RecordError(f"cluster of {size} CTAs exceeds this GPU's maximum cluster size {max_cluster_size}",
                              location=location, hint=f"at most {max_cluster_size} CTAs per cluster "
                                                      "(fabric.max_cluster_size)")
        if size > biggest:
            raise RecordError(f"cluster of {size} CTAs cannot be placed: its CTAs must run on distinct SMs of one "
                              f"GPC and the largest GPC has {biggest} SMs", location=location,
                              hint=f"clusters of at most {biggest} CTAs on this GPU (fabric.sms_per_gpc)")
        self.clusters = [list(m) for m in members]
        self.gpc_sms = [per[g] for g in sorted(per)]
        self.next_cluster = 0
        return self

    def _place_clusters(self) -> list[tuple[int, int]]:
        """Launch the pending clusters, in order, while the next one fits (module docstring)."""
        out = []
        cap = self.ctas_per_sm
        res = self.resident
        while self.next_cluster < len(self.clusters):
            cl = self.clusters[self.next_cluster]
            best = None
            for sms in self.gpc_sms:
                free = [sm for sm in sms if res[sm] < cap]
                if len(free) >= len(cl) and (best is None or len(free) > len(best)):
                    best = free
            if best is None:
                break
            chosen = sorted(best, key=lambda sm: (res[sm], sm))[:len(cl)]
            for cta, sm in zip(cl, sorted(chosen)):
                out.append((cta, sm))
                res[sm] += 1
            self.next_cluster += 1
            self.next_cta += len(cl)
        return out

"""Shared memory (MIO / shared pipe) timing, one server per SM (Contract 6).

``banks × bank_bytes`` bytes (32 × 4 = 128 B) are served per cycle: one wavefront (a bank-conflict-free pass,
counted by the functional pass as trace payload a0) occupies the SM's shared pipe for
``banks·bank_bytes / bytes_per_cycle`` cycles (1 on Hopper). An access queues behind earlier wavefronts of the
same SM (next-free server) and its data is ready ``latency_cycles`` (29 on Hopper) after its first wavefront
starts plus ``conflict_latency_cycles_per_extra_way`` (default one pass) per further wavefront, so an n-way bank
conflict costs n wavefronts of pipe time.
"""
from __future__ import annotations

from warpgraph.core.registry import register_component

__all__ = ["SharedMemoryUnit"]


@register_component(role="shared_memory", kind="default")
class SharedMemoryUnit:
    role = "shared_memory"
    kind = "default"

    def __init__(self, spec, engine=None):
        p = self.params = spec.shared_memory   # the validated section (topologies/schema.py SharedMemorySpec)
        self.lat = int(p.latency_cycles)
        width = int(p.banks) * int(p.bank_bytes)
        self.wf = max(1, -(-width // int(p.bytes_per_cycle)))  # cycles per wavefront
        # latency of each extra conflict wavefront (H200: 2 cycles per way on a dependent chain while the pipe
        # takes 0.99 cycles per way: microbench smem_bank); default: the wavefront time
        x = p.conflict_latency_cycles_per_extra_way
        self.extra_lat = float(x) if x is not None else float(self.wf)
        # ldmatrix / stmatrix: one wavefront per 8x8 matrix (H200 microbench/results/h200_ldmatrix_2026-12-04:
        # dependent x1 / x2 / x4 chains 29.8 / 37.0 / 44.6 cycles)
        y = p.ldmatrix_latency_cycles_per_extra_matrix
        self.mat_lat = float(y) if y is not None else self.extra_lat
        n = int(spec.sm.count)
        self.free = [0] * n
        self.wavefronts = 0
        self.accesses = 0
        self.bytes = 0
        self.queue_cycles = 0
        self.last_start = 0

    def access(self, t: int, sm: int, wavefronts: int, nbytes: int, matrix: bool = False) -> int:
        """Returns the cycle the data is ready (loads) / written (stores). ``matrix``: an ldmatrix / stmatrix (its
        extra wavefronts are matrices: ``ldmatrix_latency_cycles_per_extra_matrix``)."""
        if wavefronts <= 0:
            return t + 1
        s = self.free[sm]
        if s < t:
            s = t
        else:
            self.queue_cycles += s - t
        busy = wavefronts * self.wf
        self.free[sm] = s + busy
        self.last_start = s
        self.wavefronts += wavefronts
        self.accesses += 1
        self.bytes += nbytes
        return s + int(round((wavefronts - 1) * (self.mat_lat if matrix else self.extra_lat))) + self.lat

    def stats(self) -> dict:
        return {"accesses": self.accesses, "wavefronts": self.wavefronts, "bytes": self.bytes,
                "queue_cycles": self.queue_cycles}

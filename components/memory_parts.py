"""The four parts of the global-memory path, each a registered component with its own spec section and state,
joined by the graph's links (topologies/builder.py: ``sm*.l1 -> xbar -> l2.s* -> hbm.c*``) into one
:class:`~warpgraph.components.memory.MemorySystem` (the path's timing, components/memory.py docstring).

One object models every graph node of its role: ``L1Port`` the 132 ``sm*.l1`` ports, ``Crossbar`` the
per-SM response ports of ``xbar``, ``L2Slices`` the ``l2.s*`` slices, ``HbmChannels`` the ``hbm.c*`` channels.
The memory system binds their state lists once, so the hot path makes no extra calls.

Granularity of the statistics: the functional trace carries no per-request line addresses (a request is its
sector / line / first-touch counts: workloads/functional/memops.py ``gmem_payload``), so the timing hashes no
address to a slice or a channel. A partition's slices are one bandwidth server and its channels another, and a
request's lines are split between the partitions by a deterministic rotation (:meth:`L2Slices.split`). The timing
statistics here are therefore per partition (``l2.p{i}``, ``hbm.p{i}``: what the model simulates). Bytes per
slice (``l2.s{i}``) and per channel (``hbm.c{i}``) are counted by the functional pass, which sees the addresses,
through documented stand-in hashes (workloads/functional/addrmap.py; runner/timing.py ``_address_stats``): they
feed no timing, and a slice's index does not say which partition the rotation sent its lines to.
"""
from __future__ import annotations

from warpgraph.components.memory import FluidServer
from warpgraph.core.registry import register_component

__all__ = ["L1Port", "Crossbar", "L2Slices", "HbmChannels"]


@register_component(role="l1", kind="default")
class L1Port:
    """L1/LSU data port of every SM (``l1.bytes_per_cycle``, at least a cycle per 128-B line) and its MSHR window
    (``l1.mshrs`` lines in flight)."""

    def __init__(self, params, n_sm: int):
        self.params = params
        self.bytes_per_cycle = float(params.bytes_per_cycle)
        self.mshrs = int(params.mshrs)
        self.free = [0.0] * n_sm                   # next-free cycle of each SM's port
        self.inflight = [[] for _ in range(n_sm)]  # heap of (done, lines) per SM
        self.inflight_lines = [0] * n_sm

    def stats(self, mem) -> dict:
        return {"requests": mem.requests, "mshr_stall_cycles": mem.mshr_stall_cycles}


@register_component(role="xbar", kind="default")
class Crossbar:
    """Per-SM crossbar response port (``fabric.xbar_bytes_per_cycle_per_sm``) as a time-binned server:
    responses arrive out of issue order (an L2 hit issued after a DRAM miss returns first), so each reserves
    port bytes in the bin of its arrival, spilling to later bins only when the port is full; a FIFO next-free
    pointer would put every later response behind the slowest earlier one (head-of-line blocking that no
    crossbar has)."""

    def __init__(self, params, n_sm: int):
        self.params = params
        self.bpc = float(params.xbar_bytes_per_cycle_per_sm)
        self.bin = 32                          # cycles per bin (= the SM run-ahead window)
        self.cap = self.bpc * self.bin         # bytes per bin
        self.bins = [dict() for _ in range(n_sm)]
        self.response_bytes = 0

    def response(self, sm: int, t: float, arrive: float, nbytes: int) -> float:
        """Reserve ``nbytes`` of SM ``sm``'s response port for data arriving from L2 at ``arrive`` (issued at
        ``t``); returns when its last byte has passed the port."""
        W = self.bin
        cap = self.cap
        bins = self.bins[sm]
        self.response_bytes += nbytes
        if len(bins) > 4096:  # drop bins before the issue time: no later request can arrive there
            lo = int(t) // W
            for k in [k for k in bins if k < lo]:
                del bins[k]
        b = int(arrive) // W
        rem = float(nbytes)
        while True:
            u = bins.get(b, 0.0)
            room = cap - u
            if room > 0.0:
                take = room if room < rem else rem
                u += take
                bins[b] = u
                rem -= take
                if rem <= 0.0:
                    end = b * W + u / self.bpc
                    return end if end > arrive else arrive
            b += 1

    def stats(self, mem) -> dict:
        return {"response_bytes": self.response_bytes,
                "request_bytes": mem.l2_read_bytes + mem.l2_write_bytes + mem.merged_bytes}


@register_component(role="l2_slice", kind="default")
class L2Slices:
    """``l2.slices`` slices in ``l2.partitions`` partitions; a partition's slices are one aggregate fluid server of
    ``slices_per_partition × bytes_per_cycle_per_slice`` (L2 clock converted to SM cycles). The timing hashes no
    line to a slice (the trace has no per-request addresses; ``l2.hash`` has the one value ``rotation``; per-slice
    bytes by address are the functional pass's, workloads/functional/addrmap.py): a request of
    up to ``small_lines`` lines is split line by line between the partitions by a multiplicative hash of a per-SM
    counter, a larger one evenly. An SM's near partition is ``sm * partitions // sm.count``; far lines pay
    ``far_latency_cycles``."""

    small_lines = 8  # requests with at most this many lines hash line by line

    def __init__(self, params, n_sm: int, sm_mhz: float, l2_mhz: float):
        self.params = params
        self.parts = P = int(params.partitions)
        self.slices = int(params.slices)
        self.slices_per_part = self.slices // P
        self.near_latency = int(params.near_latency_cycles)
        self.far_latency = int(params.far_latency_cycles)
        self.slice_bpc = float(params.bytes_per_cycle_per_slice) * l2_mhz / sm_mhz   # per SM cycle
        self.servers = [FluidServer(self.slice_bpc * self.slices_per_part) for _ in range(P)]
        self.near_part = [min(P - 1, s * P // max(1, n_sm)) for s in range(n_sm)]
        self.ctr = [s * 0x9E37 for s in range(n_sm)]

    def split(self, sm: int, lines: int):
        """Lines of a request that fall in the near partition, and whether any fall in the far one."""
        P = self.parts
        if P == 1:
            return lines, False
        c = self.ctr[sm]
        if lines <= self.small_lines:
            if P == 2:  # one multiplicative hash gives a near/far bit per line
                self.ctr[sm] = c + 1
                h = ((c * 2654435761) & 0xFFFFFFFF) >> 11
                near = (h & ((1 << lines) - 1)).bit_count()
                if self.near_part[sm]:
                    near = lines - near
                return near, near < lines
            near = 0
            me = self.near_part[sm]
            for i in range(lines):
                h = ((c + i) * 2654435761) & 0xFFFFFFFF
                if (h >> 20) % P == me:
                    near += 1
            self.ctr[sm] = c + lines
            return near, near < lines
        self.ctr[sm] = c + lines
        near = lines // P
        return near, True

    def stats(self, mem) -> dict:
        """Per partition ``p{i}``: bytes read / written at its slices and its server's busy cycles (the
        granularity the model has: module docstring)."""
        return {f"p{p}": {"read_bytes": mem.l2_part_read[p], "write_bytes": mem.l2_part_write[p],
                          "busy_cycles": srv.busy, "slices": self.slices_per_part}
                for p, srv in enumerate(self.servers)}


@register_component(role="hbm_channel", kind="default")
class HbmChannels:
    """``hbm.channels`` channels split evenly between the L2 partitions; a partition's channels are one server of
    their share of ``bandwidth_gb_per_s × efficiency`` (bytes per SM cycle). ``channels_enabled`` fewer than
    ``channels`` (a what-if: channels fused off) scales the bandwidth by enabled / channels. DRAM latency under load
    and the spread of line latencies: components/memory.py."""

    def __init__(self, params, n_parts: int, sm_mhz: float):
        self.params = params
        self.channels = int(params.channels)
        en = params.channels_enabled
        self.enabled = self.channels if en is None else int(en)
        self.latency = params.latency_at(sm_mhz)   # DRAM time is memory-clock time (hbm.latency_clock_mhz)
        self.peak_bpc = float(params.bandwidth_gb_per_s) * 1e3 / sm_mhz * self.enabled / self.channels
        self.bpc = self.peak_bpc * float(params.efficiency)
        self.servers = [FluidServer(self.bpc / n_parts) for _ in range(n_parts)]

    def stats(self, mem) -> dict:
        """Per partition ``p{i}``: DRAM bytes read / written through its channels, its server's busy cycles and
        the enabled channels it has (per-channel bytes by address: ``hbm.c{i}``, module docstring)."""
        P = len(self.servers)
        n = self.enabled
        return {f"p{p}": {"read_bytes": mem.hbm_part_read[p], "write_bytes": mem.hbm_part_write[p],
                          "busy_cycles": srv.busy, "channels": (p + 1) * n // P - p * n // P}
                for p, srv in enumerate(self.servers)}

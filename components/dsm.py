"""Distributed shared memory fabric (paper III-D, Fig. 6): SM-to-SM traffic inside a GPC.

Each CPC connects its SMs to the GX switch planes through ``dsm_links_per_cpc`` links of
``dsm_link_bytes_per_cycle`` (4 × 32 B). The links are shared by the CPC's ``sms_per_cpc`` SMs through a
non-work-conserving shaper: every SM is capped at ``links × link_bytes / sms_per_cpc`` (4·32/6 = 21.3 B/cycle,
measured 20–21 on H200; an idle neighbour does not donate its share). The GX0/GX1 planes are parallel; with
``gx_planes_enabled`` < ``gx_planes`` (firmware-disabled plane) the link capacity — and so the per-SM cap —
scales by enabled/total. Remote loads also send a ``read_command_bytes`` command flit per 128 B of payload
through the requester's shaper (seanzw: 21.3 × 128/160 = 17.1 B/cycle predicted, 15.4 measured two-way).
Remote stores, TMA puts and remote mbarrier messages are one-way payload; a sender whose backlog in its shaper
exceeds ``dsm_sm_queue_bytes`` waits (``accept``: stores return no data, so this back-pressure is what paces
them). Latency ``dsm_latency_cycles`` (180 H100 / 193 H200) is added after the last byte leaves the shaper,
plus ``dsm_latency_cross_cpc_cycles`` when source and destination SMs sit in different CPCs of the GPC (latency vs
CTA distance; 0 until measured). DSM traffic never touches L2.

TMA multicast (``deliver``): the L2 response of one read is replicated to every SM of the ctaMask; each copy
enters its destination SM through that SM's share of its CPC links (``dsm_multicast_delivery: receiver``, so the
fan-out does not divide the issuer's share) or, with ``sender``, leaves through the issuer's share one copy after
the other; it lands ``dsm_multicast_extra_latency_cycles`` after the unicast completion.
The timing pass calls these from the SM core's cluster branch (components/sm_core.py ``_cluster_op``).
"""
from __future__ import annotations

from warpgraph.components.memory import FluidServer
from warpgraph.core.registry import register_component

__all__ = ["DsmFabric", "GxPlane"]


@register_component(role="gx_plane", kind="default")
class GxPlane:
    """One GX switch plane: each CPC reaches it through ``dsm_links_per_cpc / gx_planes`` of its link capacity
    (``link_bytes_per_cycle`` per CPC); a disabled plane (``gx_planes_enabled`` < ``gx_planes``) carries nothing."""

    def __init__(self, params, plane: int):
        self.plane = plane
        planes = int(params.gx_planes)
        en = params.gx_planes_enabled
        self.enabled = plane < (planes if en is None else int(en))
        self.link_bytes_per_cycle = (int(params.dsm_links_per_cpc) * float(params.dsm_link_bytes_per_cycle) / planes
                                     if self.enabled else 0.0)


@register_component(role="dsm", kind="default")
class DsmFabric:
    role = "dsm"
    kind = "default"

    def __init__(self, spec, engine=None, planes_enabled: int | None = None, planes: list | None = None):
        """``planes``: the GX-plane components (the graph's ``gx*`` nodes); built from ``fabric`` when not given,
        with ``planes_enabled`` overriding ``fabric.gx_planes_enabled``."""
        f = spec.fabric
        self.n_sm = n = int(spec.sm.count)
        self.sms_per_cpc = int(f.sms_per_cpc)
        if planes is None:
            fp = f if planes_enabled is None else f.model_copy(update={"gx_planes_enabled": int(planes_enabled)})
            planes = [GxPlane(fp, p) for p in range(int(f.gx_planes))]
        self.planes = planes
        self.link_bpc = sum(p.link_bytes_per_cycle for p in planes)
        self.sm_cap = self.link_bpc / self.sms_per_cpc
        self.lat = int(f.dsm_latency_cycles)
        self.lat_xcpc = int(getattr(f, "dsm_latency_cross_cpc_cycles", 0) or 0)
        self.mc_lat = int(getattr(f, "dsm_multicast_extra_latency_cycles", 0) or 0)
        self.mc_receiver = str(getattr(f, "dsm_multicast_delivery", "receiver")) == "receiver"
        self.cmd = int(f.dsm_read_command_bytes)  # per 128 B of remote-load payload
        # an SM's injection queue: a sender whose backlog exceeds it stalls (back-pressure on remote stores)
        self.queue_cycles = float(getattr(f, "dsm_sm_queue_bytes", 0) or 0) / self.sm_cap if self.sm_cap else 0.0
        self.shaper = [FluidServer(self.sm_cap) for _ in range(n)]
        self.bytes = 0
        self.messages = 0
        self.multicast_bytes = 0
        # CPC of every SM: SM ids are GPC-major (topologies.builder.sm_layout), CPCs fill a GPC in order
        from warpgraph.components.structural import gpc_of_sms

        gpc = gpc_of_sms(f, n)
        first = {}
        for i, g in enumerate(gpc):
            first.setdefault(g, i)
        self._cpc = [(g, (i - first[g]) // self.sms_per_cpc) for i, g in enumerate(gpc)]

    def cpc_of(self, sm: int) -> tuple[int, int]:
        """(GPC, CPC within the GPC) of ``sm``."""
        return self._cpc[sm]

    def latency(self, src_sm: int, dst_sm: int) -> int:
        """Unloaded SM-to-SM latency: ``dsm_latency_cycles`` (+ ``dsm_latency_cross_cpc_cycles`` across CPCs)."""
        return self.lat + (self.lat_xcpc if self._cpc[src_sm] != self._cpc[dst_sm] else 0)

    def transfer(self, t: int, src_sm: int, dst_sm: int, nbytes: int, op: str = "store") -> int:
        """Move ``nbytes`` from ``src_sm`` to ``dst_sm`` (op: store / tma / mbarrier / load; for ``load`` the
        requester is ``dst_sm``). Returns the cycle the last byte (or the load data) arrives."""
        self.messages += 1
        self.bytes += nbytes
        if op == "load":
            c = self.shaper[dst_sm].reserve(t, self.cmd * ((nbytes + 127) // 128))
            end = self.shaper[src_sm].reserve(t, nbytes)
            if c > end:
                end = c
        else:
            end = self.shaper[src_sm].reserve(t, nbytes if nbytes > 0 else 8)
        e = end + (self.lat if self.lat_xcpc == 0 else self.latency(src_sm, dst_sm))
        i = int(e)
        return i if i >= e else i + 1

    def accept(self, sm: int, t: int) -> int:
        """The cycle ``sm``'s injection queue (``dsm_sm_queue_bytes``) has room again after the messages sent so
        far: the sender of a one-way message (store, put) may issue its next instruction then."""
        h = self.shaper[sm].free - self.queue_cycles
        i = int(h)
        i = i if i >= h else i + 1
        return i if i > t else t

    def deliver(self, t: int, src_sm: int, dst_sm: int, nbytes: int) -> int:
        """One copy of a TMA multicast that completed its L2 read at ``t`` (module docstring): the cycle it lands
        in ``dst_sm``'s shared memory."""
        self.multicast_bytes += nbytes
        if dst_sm == src_sm:
            return t + self.mc_lat
        self.messages += 1
        self.bytes += nbytes
        end = self.shaper[dst_sm if self.mc_receiver else src_sm].reserve(t, nbytes)
        e = end + self.mc_lat
        i = int(e)
        return i if i >= e else i + 1

    def stats(self) -> dict:
        d = {"bytes": self.bytes, "messages": self.messages, "busy_cycles": sum(s.busy for s in self.shaper),
             "multicast_bytes": self.multicast_bytes}
        on = [p for p in self.planes if p.enabled]
        for p in self.planes:   # the planes are parallel: traffic spreads over the enabled ones by capacity
            d[f"gx{p.plane}.bytes"] = self.bytes * p.link_bytes_per_cycle / self.link_bpc if on else 0
        return d

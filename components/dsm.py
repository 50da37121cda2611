"""Distributed shared memory fabric (paper III-D, Fig. 6): SM-to-SM traffic inside a GPC.

Each CPC connects its SMs to the GX switch planes through ``dsm_links_per_cpc`` links of
``dsm_link_bytes_per_cycle`` (4 × 32 B). The links are shared by the CPC's ``sms_per_cpc`` SMs through a
non-work-conserving shaper: every SM is capped at ``links × link_bytes / sms_per_cpc`` (4·32/6 = 21.3 B/cycle,
measured 20–21 on H200; an idle neighbour does not donate its share). The GX0/GX1 planes are parallel; with
``gx_planes_enabled`` < ``gx_planes`` (firmware-disabled plane) the link capacity — and so the per-SM cap —
scales by enabled/total. Remote loads also send a ``read_command_bytes`` command flit per 128 B of payload
through the requester's shaper (seanzw: 21.3 × 128/160 = 17.1 B/cycle predicted, 15.4 measured two-way).
Remote stores, TMA puts and remote mbarrier messages are one-way payload. Latency ``dsm_latency_cycles``
(180 H100 / 193 H200) is added after the last byte leaves the shaper. DSM traffic never touches L2.
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
        self.cmd = int(f.dsm_read_command_bytes)  # per 128 B of remote-load payload
        self.shaper = [FluidServer(self.sm_cap) for _ in range(n)]
        self.bytes = 0
        self.messages = 0

    def cpc_of(self, sm: int) -> int:
        return sm // self.sms_per_cpc

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
        e = end + self.lat
        i = int(e)
        return i if i >= e else i + 1

    def stats(self) -> dict:
        d = {"bytes": self.bytes, "messages": self.messages, "busy_cycles": sum(s.busy for s in self.shaper)}
        on = [p for p in self.planes if p.enabled]
        for p in self.planes:   # the planes are parallel: traffic spreads over the enabled ones by capacity
            d[f"gx{p.plane}.bytes"] = self.bytes * p.link_bytes_per_cycle / self.link_bpc if on else 0
        return d

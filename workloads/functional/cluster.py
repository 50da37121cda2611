"""Thread-block clusters (PTX ISA §5.2.1 "Cluster of cooperative thread arrays", CUDA programming guide
"Thread Block Clusters"): the cluster shape of a launch, the CTAs of each cluster in rank order, and the
functional ``barrier.cluster`` rule.

Shape: the launch record's ``cluster`` (cudaLaunchAttributeClusterDimension), else the entry's
``.reqnctapercluster X, Y, Z`` directive (compile-time shape); both given must agree. ``.explicitcluster``
without a shape in either place is an error (the kernel must be launched as a cluster). Every grid dimension
must be a multiple of the cluster's; at most 8 CTAs (portable) or 16 with the record's
``non_portable_cluster_size`` (cudaFuncAttributeNonPortableClusterSizeAllowed, H100/H200; ``fabric.max_cluster_size``
of the architecture bounds it in the timing pass).

Ranks: ``%cluster_ctarank = x + y·cx + z·cx·cy`` of ``%cluster_ctaid``. The functional pass runs the CTAs of a
batch in *cluster order* (cluster after cluster, each in rank order, :func:`cluster_order`), so the rank-r CTA of
the cluster that holds batch slot s sits at slot ``s - s % size + r`` (memops ``_shared_flat``).
"""
from __future__ import annotations

import numpy as np

from ...core.errors import RecordError

__all__ = ["cluster_shape", "cluster_order", "cluster_members", "PORTABLE_CLUSTER_SIZE", "MAX_CLUSTER_SIZE"]

#: CUDA: a portable cluster has at most 8 CTAs; H100/H200 allow 16 with the non-portable attribute
PORTABLE_CLUSTER_SIZE = 8
MAX_CLUSTER_SIZE = 16


def cluster_shape(record, program=None) -> tuple[int, int, int]:
    """The cluster shape (cx, cy, cz) of ``record`` launching ``program`` (module docstring); a RecordError
    names what does not fit."""
    loc = str(getattr(record, "name", "record"))
    rec_c = tuple(int(c) for c in (getattr(record, "cluster", None) or (1, 1, 1)))
    req = getattr(program, "reqnctapercluster", None) if program is not None else None
    explicit = bool(getattr(program, "explicitcluster", False)) if program is not None else False
    shape = rec_c
    if req:
        req = tuple(int(v) for v in req) + (1,) * (3 - len(req))
        if rec_c != (1, 1, 1) and rec_c != req:
            raise RecordError(f"the record launches clusters of {list(rec_c)} but the PTX entry requires "
                              f".reqnctapercluster {', '.join(map(str, req))}", location=f"{loc} (cluster)",
                              hint="the record's cluster equal to the entry's .reqnctapercluster (or [1, 1, 1])")
        shape = req
    if explicit and shape == (1, 1, 1) and not req:
        raise RecordError("the PTX entry is declared .explicitcluster but the record gives no cluster shape",
                          location=f"{loc} (cluster)", hint="a cluster shape in the record, e.g. \"cluster\": [2, 1, 1]")
    if min(shape) < 1:
        raise RecordError(f"cluster {list(shape)} has a dimension < 1", location=f"{loc} (cluster)",
                          hint="positive cluster dimensions")
    grid = tuple(int(g) for g in record.grid)
    bad = [k for k, g, c in zip("xyz", grid, shape) if g % c]
    if bad:
        raise RecordError(f"grid {list(grid)} is not a whole number of clusters {list(shape)} (dimension "
                          f"{', '.join(bad)})", location=f"{loc} (cluster)",
                          hint="every grid dimension a multiple of the cluster dimension")
    size = shape[0] * shape[1] * shape[2]
    mx = getattr(program, "maxclusterrank", None) if program is not None else None
    if mx and size > mx:
        raise RecordError(f"cluster {list(shape)} has {size} CTAs but the PTX entry declares .maxclusterrank {mx}",
                          location=f"{loc} (cluster)", hint=f"at most {mx} CTAs per cluster")
    limit = MAX_CLUSTER_SIZE if getattr(record, "non_portable_cluster_size", False) else PORTABLE_CLUSTER_SIZE
    if size > limit:
        extra = ("" if limit == MAX_CLUSTER_SIZE else
                 f"; up to {MAX_CLUSTER_SIZE} with \"non_portable_cluster_size\": true (H100/H200)")
        raise RecordError(f"cluster {list(shape)} has {size} CTAs, more than the {limit} allowed{extra}",
                          location=f"{loc} (cluster)", hint=f"at most {limit} CTAs per cluster")
    return shape


def cluster_order(grid, shape) -> np.ndarray:
    """Global CTA indices (x fastest) in cluster order: clusters in their own x-fastest order, each cluster's
    CTAs by rank. The identity when the cluster is (1, 1, 1) or spans whole rows in x only."""
    gx, gy, gz = (int(v) for v in grid)
    cx, cy, cz = (int(v) for v in shape)
    n = gx * gy * gz
    if cx * cy * cz == 1:
        return np.arange(n, dtype=np.int64)
    # cluster index (kx, ky, kz), rank coordinates (rx, ry, rz): x = kx*cx + rx ...
    kz, ky, kx, rz, ry, rx = np.meshgrid(np.arange(gz // cz), np.arange(gy // cy), np.arange(gx // cx),
                                         np.arange(cz), np.arange(cy), np.arange(cx), indexing="ij")
    x, y, z = kx * cx + rx, ky * cy + ry, kz * cz + rz
    return (x + gx * (y + gy * z)).reshape(-1).astype(np.int64)


def cluster_members(grid, shape) -> list[list[int]]:
    """The CTAs (global indices) of every cluster, each list by rank, clusters in launch order."""
    size = int(np.prod(shape))
    order = cluster_order(grid, shape)
    return [order[i:i + size].tolist() for i in range(0, len(order), size)]


class ClusterBarrier:
    """Functional ``barrier.cluster.arrive`` / ``.wait`` of one batch (whole clusters of ``size`` CTA slots):
    a thread arrives once per phase; waiting threads of a cluster move on when every live thread of its CTAs
    has arrived (PTX ISA §9.7.13.3: wait for all non-exited threads of the cluster). ``.aligned`` / ``.relaxed``
    change nothing functionally (release/acquire ordering holds trivially: data moves at issue)."""

    def __init__(self, n_cta: int, lpc: int, size: int):
        self.n_cta, self.lpc, self.size = n_cta, lpc, size
        self.arrived = np.zeros(n_cta * lpc, dtype=bool)     # lanes that arrived in the current phase

    def arrive(self, lanes: np.ndarray) -> None:
        self.arrived |= lanes

    def release(self, waiting: np.ndarray, live: np.ndarray) -> np.ndarray:
        """Lanes of ``waiting`` whose cluster completed its phase (every live lane arrived); those clusters
        start a new phase."""
        nc = self.n_cta // self.size
        per = self.size * self.lpc
        arr = self.arrived.reshape(nc, per)
        lv = live.reshape(nc, per)
        done = ~(lv & ~arr).any(axis=1) & waiting.reshape(nc, per).any(axis=1)
        if not done.any():
            return np.zeros_like(waiting)
        lanes = np.repeat(done, per)
        self.arrived &= ~lanes
        return waiting & lanes

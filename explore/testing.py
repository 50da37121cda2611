"""A toy architecture loader and an analytic evaluator: cheap stand-ins for ``warpgraph.load_arch`` and
``warpgraph.simulate`` that exercise the exploration machinery (samplers, storages, workers, resume,
reports) in milliseconds. Used by the tests; handy to try a study file before spending simulator time::

    evaluator: python:warpgraph.explore.testing:analytic
    arch_loader: python:warpgraph.explore.testing:toy_arch

Set ``WARPGRAPH_TOY_SLEEP_S`` to make each evaluation sleep (to test killing workers mid-trial).
"""
from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

import warpgraph


class _S(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ToySM(_S):
    count: int = 132
    register_file_bytes: int = 256 * 1024


class ToyCap(_S):
    capacity_bytes: int


class ToyTensor(_S):
    kind: Literal["wgmma", "mma_sync", "ideal_queue"] = "wgmma"
    fp16_flop_per_cycle: int = 4096


class ToyTma(_S):
    admission_depth: int = 16
    bytes_per_cycle: int = 32


class ToyArch(_S):
    name: str = "toy"
    sm: ToySM = ToySM()
    shared_memory: ToyCap = ToyCap(capacity_bytes=228 * 1024)
    l1: ToyCap = ToyCap(capacity_bytes=256 * 1024)
    l2: ToyCap = ToyCap(capacity_bytes=50 * 2 ** 20)
    tensor_core: ToyTensor = ToyTensor()
    tma: ToyTma = ToyTma()

    def cost_inputs(self) -> dict:
        """The cost-proxy inputs (explore/metrics.py ``cost_inputs``) as typed reads of this toy spec."""
        return {"n_sms": self.sm.count, "n_sms_path": "sm.count",
                "smem_bytes_per_sm": self.shared_memory.capacity_bytes, "smem_path": "shared_memory.capacity_bytes",
                "l1_bytes_per_sm": self.l1.capacity_bytes, "l1_path": "l1.capacity_bytes",
                "l2_bytes": self.l2.capacity_bytes, "l2_path": "l2.capacity_bytes",
                "register_file_bytes_per_sm": self.sm.register_file_bytes,
                "register_file_path": "sm.register_file_bytes",
                "tensor_flop_per_cycle_per_sm": self.tensor_core.fp16_flop_per_cycle,
                "tensor_path": "tensor_core.fp16_flop_per_cycle",
                "tma_admission_depth": self.tma.admission_depth, "tma_depth_path": "tma.admission_depth"}


def toy_arch(base: str = "toy", overrides: dict | None = None) -> ToyArch:
    arch = ToyArch()
    for path, value in (overrides or {}).items():
        node, parts = arch, path.split(".")
        for p in parts[:-1]:
            if not isinstance(node, BaseModel) or p not in type(node).model_fields:
                raise warpgraph.UserError(f"unknown architecture path {path!r}", location=f"overrides ({path})",
                                          hint="a dotted path of the toy arch")
            node = getattr(node, p)
        if not isinstance(node, BaseModel) or parts[-1] not in type(node).model_fields:
            raise warpgraph.UserError(f"unknown architecture path {path!r}", location=f"overrides ({path})",
                                      hint="a dotted path of the toy arch")
        try:
            setattr(node, parts[-1], value)
        except ValidationError as e:
            raise warpgraph.UserError(f"bad value {value!r} for {path}: {e.errors()[0]['msg']}",
                                      location=f"overrides ({path})") from None
    return arch


def _work(w) -> tuple[float, float]:
    """(bytes, flops) of a workload from its launch record (GEMM-like estimate from buffer sizes)."""
    try:
        rec = json.loads((Path(w.path) / "launch.json").read_text())
        sizes = [math.prod(b["shape"]) for b in rec["buffers"].values()]
    except Exception:
        sizes = [2048 * 2048] * 3
    s = (w.scale or 1.0)
    nbytes = 2.0 * sum(sizes) * s
    n = max(sizes) ** 0.5
    return nbytes, 2.0 * n ** 3 * s ** 1.5


def analytic(arch, workloads, **_) -> dict:
    """Roofline-ish cycles: TMA streaming limited by min(bandwidth, depth·bytes-per-slot) per SM, plus
    tensor time (mma_sync pays a 1.5× issue tax, ideal_queue none), plus a fixed launch cost."""
    sleep = float(os.environ.get("WARPGRAPH_TOY_SLEEP_S", "0") or 0)
    if sleep:
        time.sleep(sleep)
    if arch.tma.admission_depth <= 0:
        raise warpgraph.UserError(f"deadlock: tma.admission_depth = {arch.tma.admission_depth} admits nothing")
    n_sm = arch.sm.count
    tma_rate = min(arch.tma.bytes_per_cycle, arch.tma.admission_depth * 3.0)  # B/cycle/SM
    tax = {"wgmma": 1.0, "mma_sync": 1.5, "ideal_queue": 1.0}[arch.tensor_core.kind]
    per = {}
    for w in workloads:
        nbytes, flops = _work(w)
        t_mem = nbytes / (tma_rate * n_sm)
        t_mma = tax * flops / (arch.tensor_core.fp16_flop_per_cycle * n_sm)
        cycles = max(t_mem, t_mma) + 0.25 * min(t_mem, t_mma) + 2000
        per[w.name] = {"cycles": cycles, "dram_read_bytes": nbytes, "dram_write_bytes": nbytes / 3,
                       "l2_bytes": 3 * nbytes, "warp_instructions": flops / 4096,
                       "tensor_utilization_pct": 100.0 * t_mma / tax / cycles,
                       "achieved_occupancy_pct": 50.0, "wall_seconds": sleep}
    from .metrics import aggregate

    out = aggregate(per)
    out["workloads"] = per
    return out


#: the names :func:`analytic` returns (``warpgraph explore --check`` rejects other objectives before any trial)
analytic.metric_names = ["cycles", "dram_read_bytes", "dram_write_bytes", "l2_bytes", "warp_instructions",
                         "tensor_utilization_pct", "achieved_occupancy_pct", "wall_seconds"]

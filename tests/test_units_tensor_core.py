"""Tensor cores (paper III-C): mma.sync gap/latency (Table III), wgmma shared service rate, ideal queue."""
from __future__ import annotations

import functools

import pytest

import warpgraph as wg
from warpgraph.components.tensor_core import (IdealQueueTensorCoreUnit, MmaSyncTensorCoreUnit,
                                              Tcgen05TensorCoreUnit, WgmmaTensorCoreUnit, mma_key)
from warpgraph.core.registry import get_component


@functools.lru_cache(maxsize=None)
def spec(arch):
    return wg.load_arch(arch)


TABLE_III = {  # RTX 5090: saturated issue gap per warp, dependent latency (cycles)
    "f16.m16n8k16": (33.4, 34.5), "f16.m16n8k8": (32.8, 34.5), "bf16.m16n8k8": (32.8, 34.4),
    "tf32.m16n8k8": (33.4, 34.4), "tf32.m16n8k4": (32.8, 34.5), "s8.m16n8k32": (19.6, 27.0),
    "s8.m16n8k16": (19.0, 27.0),
}


def _slope(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def _chains(tc, key, k, n):
    """k independent dependent-chains of length n in one warp (sub-partition 0); returns total cycles."""
    t = 0
    ready = [0] * k
    for _ in range(n):
        for c in range(k):
            t = max(t, ready[c])
            nxt, res = tc.mma_sync(t, 0, 0, key, 4096)
            ready[c] = res
            t = max(t + 1, nxt)
    return max(ready)


@pytest.mark.parametrize("key", sorted(TABLE_III))
def test_mma_sync_table_iii_rtx5090(key):
    gap_ref, lat_ref = TABLE_III[key]
    ns = [8, 16, 32, 64]
    gap = _slope(ns, [_chains(MmaSyncTensorCoreUnit(spec("rtx5090")), key, 8, n) for n in ns]) / 8
    lat = _slope(ns, [_chains(MmaSyncTensorCoreUnit(spec("rtx5090")), key, 1, n) for n in ns])
    assert abs(gap - gap_ref) / gap_ref < 0.05
    assert abs(lat - lat_ref) / lat_ref < 0.05


def test_mma_sync_saturates_at_two_thirds_of_peak_on_h100():
    s = spec("h100")
    tc = WgmmaTensorCoreUnit(s)
    n = 200
    ends = []
    for sp in range(4):
        t = 0
        for _ in range(n):
            t, res = tc.mma_sync(t, 0, sp, "f16.m16n8k16", 4096)
        ends.append(res)
    frac = 4 * n * 4096 / max(ends) / s.tensor_core.dense_fp16_flop_per_cycle_per_sm
    assert abs(frac - 0.66) / 0.66 < 0.05


@pytest.mark.parametrize("groups", [1, 2])
def test_wgmma_throughput_4096_per_sm(groups):
    s = spec("h200")
    tc = WgmmaTensorCoreUnit(s)
    flops = 2 * 64 * 256 * 16  # m64n256k16 per warpgroup
    n = 200
    t = [0] * groups
    last = 0
    for i in range(n):
        for g in range(groups):
            last = max(last, tc.wgmma(t[g], 0, g, flops, 0, 256, False))
            t[g] = tc.last_release + 1
    rate = groups * n * flops / last
    assert abs(rate - s.tensor_core.dense_fp16_flop_per_cycle_per_sm) / 4096 < 0.01


def test_wgmma_shares_rate_between_groups_and_dtypes():
    s = spec("h100")
    tc = WgmmaTensorCoreUnit(s)
    f = 2 * 64 * 128 * 16
    a = tc.wgmma(0, 0, 0, f, 0, 128, False)
    b = tc.wgmma(0, 0, 1, f, 0, 128, False)  # second group queues behind the first (FIFO)
    assert b - a == f // 4096
    c = tc.wgmma(0, 1, 0, f, 0, 128, False, dtype="tf32")  # another SM, tf32 at half rate
    assert c - s.tensor_core.issue_latency_ss_cycles - s.tensor_core.completion_latency_cycles == f // 2048
    assert tc.wgmma_rf_traffic(128) == (32768, 32768 / s.tensor_core.rf_traffic_bytes_per_cycle)


def test_tcgen05_rate_and_no_register_traffic():
    s = spec("b200")
    tc = get_component("tensor_core", s.tensor_core.kind)(s)
    assert isinstance(tc, Tcgen05TensorCoreUnit)
    f = 2 * 128 * 256 * 16
    end = 0
    for _ in range(100):
        end = tc.wgmma(0, 0, 0, f, 0, 256, False)
    assert abs(100 * f / (end - s.tensor_core.completion_tail_latency_cycles - 1) - 8192) / 8192 < 0.01
    assert tc.last_rf_bytes == 0


def test_ideal_queue_never_stalls_issue():
    s = spec("h100")
    base, ideal = WgmmaTensorCoreUnit(s), IdealQueueTensorCoreUnit(s)
    t_b = t_i = 0
    for _ in range(10):
        t_b, rb = base.mma_sync(t_b, 0, 0, "f16.m16n8k16", 4096)
        t_i, ri = ideal.mma_sync(t_i, 0, 0, "f16.m16n8k16", 4096)
    assert t_i == 10 and t_b == 10 * 6
    assert ri == rb  # the pipe still serialises the MMAs


def test_mma_key_from_ptx_mods():
    assert mma_key(("sync", "aligned", "m16n8k16", "row", "col", "f32", "f16", "f16", "f32")) == "f16.m16n8k16"
    assert mma_key(("sync", "aligned", "m16n8k32", "row", "col", "s32", "s8", "s8", "s32")) == "s8.m16n8k32"


@pytest.mark.parametrize("cls", [MmaSyncTensorCoreUnit, WgmmaTensorCoreUnit, IdealQueueTensorCoreUnit])
def test_mma_sync_bundle_is_mma_sync_per_warp(cls):
    """The SM core issues a bundle's mma.sync in one call: it must equal one mma_sync per warp, in order (next-issue
    and completion maxima, pipe state, counters), also with two warps of the bundle on one sub-partition."""
    a, b = cls(spec("h200")), cls(spec("h200"))
    bundles = [(0, 3, [0, 1, 2, 3], "f16.m16n8k16"), (2, 3, [0, 1, 2, 3], "f16.m16n8k16"),
               (5, 3, [1, 3, 1, 3], "tf32.m16n8k8"), (5, 7, [2], "bf16.m16n8k8"), (40, 3, [0, 0], "s8.m16n8k32"),
               (41, 3, [0, 1, 2, 3, 0, 1, 2, 3], "f16.m16n8k8"), (41, 3, [3], "no.such_shape")]
    for t, sm, sps, key in bundles:
        got = a.mma_sync_bundle(t, sm, sps, key, 1024)
        each = [b.mma_sync(t, sm, sp, key, 1024) for sp in sps]
        assert got == (max(x for x, _ in each), max(d for _, d in each))
    assert a.pipe == b.pipe and a.stats() == b.stats()


def test_mma_sync_bundle_calls_an_overriding_subclass_per_warp():
    class Doubled(MmaSyncTensorCoreUnit):
        def mma_sync(self, t, sm, sp, shape_key, flops=0):
            x, d = super().mma_sync(t, sm, sp, shape_key, flops)
            return 2 * x, 2 * d

    u = Doubled(spec("h200"))
    ref = MmaSyncTensorCoreUnit(spec("h200"))
    each = [ref.mma_sync(10, 0, sp, "f16.m16n8k16", 0) for sp in (0, 1)]
    assert u.mma_sync_bundle(10, 0, [0, 1], "f16.m16n8k16", 0) == (2 * max(x for x, _ in each),
                                                                    2 * max(d for _, d in each))

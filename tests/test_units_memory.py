"""Memory system (L2 partitions, HBM bandwidth) and shared memory banks."""
from __future__ import annotations

import functools
from heapq import heappop, heappush

import pytest

import warpgraph as wg
from warpgraph.components.mbarrier import MbarrierUnit
from warpgraph.components.memory import MemorySystem
from warpgraph.components.shared_memory import SharedMemoryUnit
from warpgraph.components.tma import TmaUnit
from warpgraph.core.engine import ClockDomain, Engine


@functools.lru_cache(maxsize=None)
def spec(arch):
    return wg.load_arch(arch)


def test_l2_hit_latency_near_far():
    s = spec("h100")
    mem = MemorySystem(s)
    lats = {mem.global_access(1000 * i, 0, "ld", 1, 0, 1, 4) - 1000 * i for i in range(64)}
    lo, hi = s.l2.near_latency_cycles, s.l2.far_latency_cycles
    assert {round(x) - 1 for x in lats} <= {lo, hi} and len(lats) == 2  # both partitions, hashed
    d = mem.global_access(10**6, 0, "ld", 1, 1, 1, 4) - 10**6
    assert d - 1 in (lo + s.hbm.latency_cycles, hi + s.hbm.latency_cycles)
    assert mem.dram_read_bytes == 32 and mem.l2_read_bytes == 65 * 32


def test_store_acknowledged_by_the_near_partition_whatever_its_home():
    """A store's (and a red's) acknowledgement, what a MEMBAR.GPU waits for, comes near_latency after its bytes
    went through the slices, near or far home alike (H200 cluster_sync own_store: fence after one st.global 567.9
    = 271.9 + ~296; grid 132: no far mode); ``done`` keeps the home partition's latency; a load's ack is done."""
    s = spec("h200")
    mem = MemorySystem(s)
    lo, hi = s.l2.near_latency_cycles, s.l2.far_latency_cycles
    dones, acks = set(), set()
    for i in range(64):
        t = 1000 * i
        dones.add(mem.global_access(t, 0, "st", 1, 0, 1, 4) - t)
        acks.add(mem.last_ack - t)
    assert len(dones) == 2 and max(dones) - min(dones) == hi - lo      # home partitions hashed, write-back
    assert {a - 1 for a in acks} == {lo}
    d = mem.global_access(10**6, 0, "ld", 1, 0, 1, 4)
    assert mem.last_ack == d


@pytest.mark.parametrize("arch", ["h200", "h100"])
def test_hbm_bandwidth_many_sms_tma(arch):
    s = spec(arch)
    eng = Engine(ClockDomain("sm", s.clocks.sm_mhz))
    mem = MemorySystem(s, eng)
    tma = TmaUnit(s, eng, mem, None)
    nb, per_sm = 16384, 48
    q = [(0, sm) for sm in range(s.sm.count)]
    left = [per_sm] * s.sm.count
    last = 0
    while q:
        t, sm = heappop(q)
        r = tma.issue(t, sm, 0, nb, nb, nb, -1, False)
        last = max(last, tma.last_done)
        left[sm] -= 1
        if left[sm]:
            heappush(q, (r, sm))
    total = s.sm.count * per_sm * nb
    bw = total / (last - mem.dram_rt)
    expect = s.hbm.bandwidth_gb_per_s * 1e3 / s.clocks.sm_mhz * s.hbm.efficiency
    assert abs(bw - expect) / expect < 0.03
    assert mem.dram_read_bytes == total


def test_hbm_bandwidth_global_loads():
    s = spec("h200")
    mem = MemorySystem(s)
    q = [(0, sm) for sm in range(s.sm.count)]
    per_sm, last = 300, 0
    left = [per_sm] * s.sm.count
    while q:
        t, sm = heappop(q)
        d = mem.global_access(t, sm, "ld", 16, 16, 4, 512)  # a coalesced 16-B/lane load, all cold
        last = max(last, d)
        left[sm] -= 1
        if left[sm]:
            heappush(q, (t + 2, sm))
    expect = s.hbm.bandwidth_gb_per_s * 1e3 / s.clocks.sm_mhz * s.hbm.efficiency
    # the last request's latency: the unloaded DRAM round trip plus the loaded-latency term at its cap
    u = mem.hbm_umax
    bw = mem.dram_read_bytes / (last - mem.dram_rt - mem.hbm_qa * u / (1 - u))
    assert abs(bw - expect) / expect < 0.03


def test_mshr_window_limits_inflight_lines():
    s = spec("h100")
    mem = MemorySystem(s)
    ds = [mem.global_access(0, 0, "ld", 4, 4, 1, 128) for _ in range(s.l1.mshrs + 1)]
    assert mem.mshr_stall_cycles >= min(ds[:-1])  # the 257th line waited for a completion


def test_utilisation_histogram():
    s = spec("h100")
    mem = MemorySystem(s)
    for i in range(100):
        mem.bulk(i * 50, 0, 16384, 16384, False, i * 50 + 512)
    u = mem.utilisation()
    assert set(u) == {"l2.p0", "l2.p1", "hbm.p0", "hbm.p1"}
    assert all(0 <= x <= 1.0 + 1e-9 for v in u.values() for x in v)
    st = mem.stats()
    assert st["dram_read_bytes"] == 100 * 16384 and st["l2_bytes"] == 100 * 16384


@pytest.mark.parametrize("n", [1, 2, 4, 8, 32])
def test_smem_n_way_conflict_costs_n_wavefronts(n):
    s = spec("h100")
    sm = SharedMemoryUnit(s)
    assert sm.access(100, 0, n, 128) == 100 + (n - 1) + s.shared_memory.latency_cycles
    # back-to-back accesses queue behind the n wavefronts
    assert sm.access(100, 0, 1, 128) == 100 + n + s.shared_memory.latency_cycles


def test_smem_bandwidth_128_bytes_per_cycle():
    s = spec("h100")
    sm = SharedMemoryUnit(s)
    last = 0
    for i in range(1000):
        last = sm.access(0, 3, 1, 128)
    assert abs(1000 * 128 / (last - s.shared_memory.latency_cycles + 1) - s.shared_memory.bytes_per_cycle) < 1e-9


def test_cp_async_merges_into_outstanding_dram_fill():
    """cp.async of the same lines (payload a1 high bits: memops._line_key) from a second SM while the first
    SM's DRAM fill is outstanding merges into it: one L2 pass, one DRAM read, not done before the fill
    (``l2.coalesce_scope: fill``; SMs 0 and 7 are also in one GPC, so the default ``gpc`` scope shares too)."""
    for scope in ("fill", "gpc"):
        _fill_merge_case(wg.load_arch("h200", overrides={"l2.coalesce_scope": scope}))


def _fill_merge_case(s):
    mem = MemorySystem(s)
    key = 12345 << 32
    d0 = mem.global_access(0, 0, "cp_async", 16, key | 16, 4, 512)
    d1 = mem.global_access(10, 7, "cp_async", 16, key, 4, 512)
    assert mem.l2_read_bytes == 512 and mem.merged_bytes == 512 and mem.dram_read_bytes == 512
    assert d1 >= d0
    # other lines, or the same lines after the fill has completed, take their own L2 pass
    mem.global_access(20, 8, "cp_async", 16, (999 << 32), 4, 512)
    mem.global_access(d0 + 2000, 9, "cp_async", 16, key, 4, 512)
    assert mem.l2_read_bytes == 3 * 512 and mem.merged_bytes == 512


def test_requests_without_key_never_merge():
    s = spec("h200")
    mem = MemorySystem(s)
    mem.global_access(0, 0, "cp_async", 16, 16, 4, 512)
    mem.global_access(10, 7, "cp_async", 16, 0, 4, 512)
    assert mem.l2_read_bytes == 1024 and mem.merged_bytes == 0


def test_cp_async_line_key_identifies_lines():
    """memops._line_key: warps copying the same lines get the same key (whatever their lane order), other
    lines another key, a warp with no active lane 0."""
    from types import SimpleNamespace

    import numpy as np

    from warpgraph.workloads.functional.memops import GLOBAL_BASE, _line_key

    b = SimpleNamespace(W=3)
    lanes = np.arange(64)
    src = GLOBAL_BASE + 4096 + 16 * np.concatenate([np.arange(32), np.arange(32)[::-1]])
    k = _line_key(b, lanes, src)
    assert k[0] == k[1] != 0 and k[2] == 0
    k2 = _line_key(b, lanes, src + 512)
    assert k2[0] != k[0] and 0 < k[0] < 2**24


def test_coalesced_l2_hits_and_the_lookup_cap():
    """l2.coalesce_scope gpc (default): reads of the same lines from SMs of one GPC while an L2 hit's lookup is
    outstanding share it; l2.requests_per_lookup_max caps the sharing (microbench l2_coalesce_pairs: at most 4
    reads per lookup; tests/test_l2_lookup_coalescing.py replays the whole measurement)."""
    s = wg.load_arch("h200")
    assert s.l2.coalesce_scope == "gpc" and s.l2.requests_per_lookup_max == 4
    mem = MemorySystem(s)
    key = 777 << 32
    d0 = mem.global_access(0, 0, "cp_async", 16, key, 4, 512)               # an L2 hit
    for i in range(1, 4):                                                    # three more SMs: share it
        assert mem.global_access(10 * i, i, "cp_async", 16, key, 4, 512) >= d0
    assert mem.merged_bytes == 3 * 512 and mem.l2_read_bytes == 512
    d4 = mem.global_access(40, 5, "cp_async", 16, key, 4, 512)               # the 5th: its own lookup
    assert mem.merged_bytes == 3 * 512 and mem.l2_read_bytes == 2 * 512
    mem.global_access(41, 40, "cp_async", 16, key, 4, 512)                   # SM 40 (GPC 2): its own
    assert mem.merged_bytes == 3 * 512 and mem.l2_read_bytes == 3 * 512
    mem.global_access(d4 + 10, 6, "cp_async", 16, key, 4, 512)               # after the data is back: its own
    assert mem.l2_read_bytes == 4 * 512
    off = MemorySystem(wg.load_arch("h200", overrides={"l2.coalesce_scope": "fill"}))   # fill: hits never merge
    for i in range(3):
        off.global_access(10 * i, i, "cp_async", 16, key, 4, 512)
    assert off.merged_bytes == 0


def test_coalesced_tma_box_hits():
    s = wg.load_arch("h200")
    eng = Engine(ClockDomain("sm", 1755.0))
    mem = MemorySystem(s, eng)
    tma = TmaUnit(s, eng, mem, None)
    box = (5 << 32) | 4096
    for sm in range(6):
        tma.issue(sm, sm, 0, 4096, box, 0, -1, False)                          # six SMs, an L2-hot box
    # SM 0 looks up, SMs 1-3 share it (4 per lookup), SM 4 looks up again and SM 5 shares that
    assert tma.merged_bytes == 4 * 4096 and mem.l2_read_bytes == 2 * 4096


def test_dram_latency_is_memory_clock_time():
    """hbm.latency_clock_mhz: h200.yaml's DRAM latency (293 SM cycles) was measured at 1973.8 MHz, so at another SM
    clock a miss waits that many ns (latency_cycles x sm_mhz / 1973.8 SM cycles); the L2 part stays in cycles.
    h100.yaml (the paper's values) gives no clock: its cycles hold at every SM clock."""
    h200 = spec("h200")
    assert h200.hbm.latency_clock_mhz == pytest.approx(1973.8)
    assert h200.hbm.latency_at(1973.8) == h200.hbm.latency_cycles
    for mhz in (1539.0, 1775.0, 1980.0):
        s = wg.load_arch("h200", overrides={"clocks.sm_mhz": mhz})
        mem = MemorySystem(s)
        want = round(h200.hbm.latency_cycles * mhz / 1973.8)
        assert mem.dram_lat == want
        lo, hi = s.l2.near_latency_cycles, s.l2.far_latency_cycles
        d = mem.global_access(10**6, 0, "ld", 1, 1, 1, 4) - 10**6
        assert d - 1 in (lo + want, hi + want)
    h100 = spec("h100")
    assert h100.hbm.latency_clock_mhz is None
    slow = MemorySystem(wg.load_arch("h100", overrides={"clocks.sm_mhz": 1000.0}))
    assert slow.dram_lat == h100.hbm.latency_cycles


def test_write_back_curve_charges_the_write_backs_where_the_l2_spills():
    """``set_write_back_curve``: stores while the L2 absorbs them cause no HBM writes, stores after it is full one
    write-back sector per sector, the total is the curve's end; with no curve every store pays the launch's
    uniform ratio; ``scale`` (a partition's or a sample's share) walks the curve as fast as the whole launch."""
    s = spec("h200")
    wb = [0.0] * 5 + [25.0, 50.0, 75.0, 100.0]        # 200 stored sectors in 8 steps: the L2 spills at 100
    mem = MemorySystem(s)
    mem.set_write_back_curve((200, wb))
    for i in range(100):                              # 100 one-sector stores
        mem.global_access(1000 * i, 0, "st", 1, 0, 1, 32)
    assert mem.dram_write_bytes == 0
    for i in range(100, 200):
        mem.global_access(1000 * i, 0, "st", 1, 0, 1, 32)
    assert mem.dram_write_bytes == pytest.approx(100 * 32)
    mem.global_access(10**6, 0, "st", 4, 0, 1, 128)    # past the end of the launch's stores: nothing more
    assert mem.dram_write_bytes == pytest.approx(100 * 32)
    half = MemorySystem(s)
    half.set_write_back_curve((200, wb), scale=2.0)   # sees every other store of the launch
    for i in range(100):
        half.global_access(1000 * i, 0, "st", 1, 0, 1, 32)
    assert half.dram_write_bytes == pytest.approx(50 * 32)
    flat = MemorySystem(s)
    flat.write_back_ratio = 0.5
    for i in range(100):
        flat.global_access(1000 * i, 0, "st", 1, 0, 1, 32)
    assert flat.dram_write_bytes == pytest.approx(50 * 32)


def test_a_store_does_not_hold_up_fills_whose_data_comes_after_it():
    """The L2 fill + store write path (l2.fill_store_gb_per_s) books a DRAM fill when its read reaches the L2,
    hbm.latency_cycles before the data is written; a store is written on arrival, so it books in that frame too. A
    store written just before a miss's data returns from DRAM is done by then: the miss is not delayed. (Booked at
    its own arrival, the store sat in front of fills whose data came ~700 cycles after it.)"""
    s = wg.load_arch("h200")
    dl = s.hbm.latency_cycles * s.hbm.dram_scale(s.clocks.sm_mhz)
    t0 = 10_000

    def miss_done(store_sectors):
        mem = MemorySystem(s)
        mem.write_back_ratio = 0.0          # the stored lines stay in L2 (no DRAM write-back in the way)
        if store_sectors:
            mem.global_access(t0, 1, "st", store_sectors, 0, store_sectors // 4, store_sectors * 32)
        return mem.global_access(t0 + 1, 0, "ld", 4, 4, 1, 128) - (t0 + 1)

    alone = miss_done(0)
    # a store the path writes in well under the DRAM latency: its bytes are in before the miss's data comes
    n = int(0.4 * dl * s.l2.fill_store_gb_per_s * 1e3 / s.clocks.sm_mhz) // 32 // 4 * 4
    assert n >= 64
    assert miss_done(n) < alone + 0.25 * dl      # (the slices' own queue only; booked at arrival: + 0.4 dl)
    # one that keeps the path busy past the data's arrival does hold it up
    assert miss_done(16 * n) > alone + 100

"""Test doubles for the Contract-6 timing units: the SM-core tests pass them explicitly
(``run_timing(..., units=standin_units.units)``) so that they pin the core's behaviour, not the units'. Each is a
handful of "next-free" servers with fixed latencies read from the arch spec. Never used by a production run
(runner/machine.py builds the registered models). ``import standin_units`` (tests/conftest.py puts tests/ on the
path)."""
from __future__ import annotations

from math import ceil

__all__ = ["StandinMemory", "StandinSharedMemory", "StandinTma", "StandinMbarrier", "StandinTensorCore",
           "sget", "units"]


def sget(spec, path: str, default):
    """``spec.a.b`` (attributes or dict keys) or ``default``: the doubles read partial specs (dicts, test specs).
    The simulator itself reads the typed spec sections (runner/timing.py ``_typed``; one default per parameter)."""
    cur = spec
    for part in path.split("."):
        if cur is None:
            return default
        if isinstance(cur, dict):
            cur = cur.get(part)
        else:
            cur = getattr(cur, part, None)
    return default if cur is None else cur


def units(spec, engine) -> dict:
    """The five stand-ins, as ``run_timing(units=...)`` takes them."""
    mem = StandinMemory(spec, engine)
    mbar = StandinMbarrier(spec, engine)
    return {"memory": mem, "shared_memory": StandinSharedMemory(spec, engine), "mbarrier": mbar,
            "tma": StandinTma(spec, engine, mem, mbar), "tensor_core": StandinTensorCore(spec, engine)}




class StandinMemory:
    def __init__(self, spec, engine=None):
        n_sms = int(sget(spec, "sm.count", 132))
        mhz = float(sget(spec, "clocks.sm_mhz", 1755.0))
        self.l2_lat = (int(sget(spec, "l2.near_latency_cycles", 258)) + int(sget(spec, "l2.far_latency_cycles", 414))) // 2
        self.dram_lat = int(sget(spec, "hbm.latency_cycles", 298))
        gbps = float(sget(spec, "hbm.bandwidth_gb_per_s", 4800)) * float(sget(spec, "hbm.efficiency", 0.9))
        self.dram_bpc = gbps * 1e9 / (mhz * 1e6)
        self.l2_bpc = int(sget(spec, "l2.slices", 160)) * int(sget(spec, "l2.bytes_per_cycle_per_slice", 32)) * 0.75
        self.sm_bpc = float(sget(spec, "fabric.xbar_bytes_per_cycle_per_sm", 64))
        self.sm_free = [0.0] * n_sms
        self.l2_free = 0.0
        self.dram_free = 0.0
        self.c = {"l2_bytes": 0, "dram_read_bytes": 0, "dram_write_bytes": 0, "requests": 0}
        # the rest of the memory interface (components/interfaces.py MemoryModel): acknowledged when done, no
        # atomic / fence costs, no lock model
        self.last_ack = 0
        self.atom_extra = self.atom_acquire = self.fence_gpu = 0.0
        self.locks = None
        # the L2 / DRAM round trips of the fixed latencies above; no TMA-specific L2 path (tma_l2_lat None), no
        # lookup coalescing or fill merging (no fill model), no lookup cap
        self.l2_rt = float(self.l2_lat)
        self.dram_rt = float(self.l2_lat + self.dram_lat)
        self.tma_l2_lat = None
        self.share_lookups = self.merge_fills = False
        self.lookup_cap = 0
        # one lookup group (no GPC-scope sharing); a fill table that ``note_fill`` records into but no request
        # merges into (merge_fills False: merged_bytes stays 0); no partitioned-timing hook
        self.n_sm = n_sms
        self.gpc_of = [0] * n_sms
        self.fills = {}
        self.merged_bytes = 0
        self.on_share = None
        # DRAM write-back bytes per stored byte (the runner sets it): counted, stores take no DRAM time here
        self.write_back_ratio = 1.0
        self.l2_read_bytes = self.l2_write_bytes = 0

    def atomic_perform(self, t, key, word, ops, same, is_float):
        return t        # no atomic units: performed on arrival

    def set_write_back_curve(self, curve, scale=1.0):
        # stores take no DRAM time here: when the write-backs happen does not matter; counted at the launch's ratio
        self.write_back_curve = curve

    def _go(self, t, sm, l2_bytes, dram_bytes, write):
        start = max(float(t), self.sm_free[sm])
        self.sm_free[sm] = start + l2_bytes / self.sm_bpc
        s2 = max(start, self.l2_free)
        self.l2_free = s2 + l2_bytes / self.l2_bpc
        done = s2 + l2_bytes / self.sm_bpc + self.l2_lat
        if dram_bytes and not write:
            d = max(s2, self.dram_free)
            self.dram_free = d + dram_bytes / self.dram_bpc
            done = max(done + self.dram_lat, self.dram_free + self.l2_lat)
        self.c["l2_bytes"] += l2_bytes
        if write:
            self.l2_write_bytes += l2_bytes
            self.c["dram_write_bytes"] += l2_bytes * self.write_back_ratio
        else:
            self.l2_read_bytes += l2_bytes
            self.c["dram_read_bytes"] += dram_bytes
        self.c["requests"] += 1
        self.last_ack = int(ceil(done))
        return self.last_ack

    def global_access(self, t, sm, op, sectors, dram_sectors, lines, nbytes, warps=1):
        # a1 bits 32+ carry a cp.async line identity (components/memory.py in-flight fills): not used here
        return self._go(t, sm, sectors * 32, (dram_sectors & 0xFFFFFFFF) * 32, op == "st")

    def bulk(self, t, sm, l2_bytes, dram_bytes, write):
        return self._go(t, sm, l2_bytes, dram_bytes, write)

    @property
    def dram_read_bytes(self):
        return self.c["dram_read_bytes"]

    @property
    def dram_write_bytes(self):
        return self.c["dram_write_bytes"]

    def fill_estimate(self, t, nbytes, dram_bytes, lines, t_end=None, lat_all=None):
        """As :meth:`_go` would complete a read at ``t`` (without an SM port, reserving nothing)."""
        lat = self.l2_lat if lat_all is None else lat_all
        s2 = max(float(t), self.l2_free)
        done = max(s2 + nbytes / self.sm_bpc, float(t_end) if t_end is not None else 0.0) + lat
        if dram_bytes:
            d = max(s2, self.dram_free)
            done = max(done + self.dram_lat, d + dram_bytes / self.dram_bpc + lat)
        return done

    def note_fill(self, key, t, done, dram_bytes, window_end=None):
        self.fills[key] = [done - self.l2_rt if window_end is None else window_end, done, dram_bytes, 1]

    def bandwidth_servers(self):
        raise NotImplementedError("StandinMemory has no per-partition fluid servers: sampled mode and partitioned "
                                  "timing need components/memory.py")

    def note_hbm_load(self, p, t, busy):
        pass   # no loaded-latency model: the double's DRAM latency does not depend on load

    def stats(self):
        return dict(self.c)


class StandinSharedMemory:
    def __init__(self, spec, engine=None):
        self.lat = int(sget(spec, "shared_memory.latency_cycles", 29))
        self.free = {}
        self.c = {"accesses": 0, "wavefronts": 0}

    def access(self, t, sm, wavefronts, nbytes, matrix=False):
        s = max(t, self.free.get(sm, 0))
        self.free[sm] = s + wavefronts
        self.c["accesses"] += 1
        self.c["wavefronts"] += wavefronts
        return s + wavefronts + self.lat

    def stats(self):
        return dict(self.c)


class StandinMbarrier:
    def __init__(self, spec, engine):
        self.eng = engine
        self.poll = int(sget(spec, "mbarrier.try_wait_cycles", 42))
        self.st = {}  # key -> [count, pending, tx, completed, times, waiters]
        self.c = {"phases": 0, "waits": 0, "blocked_waits": 0}

    def init(self, key, count, t):
        self.st[key] = [count, count, 0, 0, [], []]

    def _s(self, key):
        s = self.st.get(key)
        if s is None:
            s = self.st[key] = [1, 1, 0, 0, [], []]
        return s

    def arrive(self, key, t, arrivals, tx_bytes):
        s = self._s(key)
        s[2] += tx_bytes
        s[1] -= max(1, arrivals) if arrivals else 1
        self._check(s, t)

    def complete_tx(self, key, nbytes, t):
        s = self._s(key)
        s[2] -= nbytes
        self._check(s, t)

    def _check(self, s, t):
        if s[1] <= 0 and s[2] <= 0:
            s[3] += 1
            s[4].append(t)
            s[1] += s[0]
            s[2] = 0
            self.c["phases"] += 1
            keep = []
            for ph, wake in s[5]:
                if s[3] > ph:
                    wake(t + self.poll)
                else:
                    keep.append((ph, wake))
            s[5] = keep

    def wait(self, key, phase, t, op, hint, wake):
        s = self._s(key)
        self.c["waits"] += 1
        if s[3] > phase:
            return max(t, s[4][phase]) + self.poll
        self.c["blocked_waits"] += 1
        s[5].append((phase, wake))
        return None

    def stats(self):
        return dict(self.c)


class StandinTma:
    def __init__(self, spec, engine, mem, mbar):
        self.eng, self.mem, self.mbar = engine, mem, mbar
        self.gap = int(sget(spec, "tma.issue_gap_cycles", 44))
        self.bpc = float(sget(spec, "tma.request_bytes_per_cycle", 32))
        self.depth = int(sget(spec, "tma.admission_depth", 16))
        n_sms = int(sget(spec, "sm.count", 132))
        self.inflight = {}
        self.stores = {}
        self.c = {"loads": 0, "stores": 0, "bytes": 0}
        # the rest of the TMA interface (components/interfaces.py TmaModel): no issue latency (the stream starts at
        # t + 1), the generator's free cycle per SM, no active-transaction tracking for MEMBAR.GPU (its admission
        # list is ``inflight``: MEMBAR.GPU does not wait for the double's copies), in-bounds bytes only, no box
        # lookup sharing or fill merging (merge False: ghost fills register nothing; fills stays empty unless
        # ``note_fill`` is called), no partitioned-timing hook
        self.lat = 0
        self.gen_free = [0] * n_sms
        self.active = [[] for _ in range(n_sms)]
        self.last_done = 0
        self.merge = False
        self.oob_l2 = False
        self.fills = {}
        self.on_share = None

    def issue(self, t, sm, warp, nbytes, inb_bytes, dram_bytes, mbar_key, store):
        inb_bytes &= 0xFFFFFFFF  # bits 32+: the box identity (components/tma.py in-flight fills), not used here
        fl = self.inflight.setdefault(sm, [])
        start = max(t + 1, self.gen_free[sm])
        fl[:] = [x for x in fl if x > start]
        if len(fl) >= self.depth:
            fl.sort()
            start = fl[len(fl) - self.depth]
        gen = int(ceil(max(nbytes, inb_bytes) / self.bpc))
        self.gen_free[sm] = start + gen
        done = max(self.mem.bulk(start, sm, inb_bytes, dram_bytes, store), start + gen)
        fl.append(done)
        self.last_done = done
        self.c["bytes"] += nbytes
        if store:
            self.c["stores"] += 1
            self.stores.setdefault(warp, []).append(done)
        else:
            self.c["loads"] += 1
            if self.mbar is not None and mbar_key is not None and mbar_key >= 0:
                self.eng.schedule(done, self.mbar.complete_tx, mbar_key, nbytes, done, prio=0)
        return t + self.gap

    def bulk_commit(self, sm, warp):
        pass   # each store is its own group here (bulk_group_done counts stores): a commit closes nothing

    def bulk_group_done(self, sm, warp, n_pending_allowed):
        lst = self.stores.get(warp)
        if not lst or len(lst) <= n_pending_allowed:
            return None
        cut = len(lst) - n_pending_allowed
        h = max(lst[:cut])
        del lst[:cut]
        return h

    def stream_end(self, g0, traffic, dram_bytes):
        return g0 + traffic / self.bpc   # one rate whatever hits or misses (no Little's-law caps)

    def note_fill(self, key, g0, g1, done, dram_bytes, window_end=None):
        we = done - self.mem.l2_rt - (g1 - g0) if window_end is None else window_end
        self.fills[key] = [we, done, dram_bytes, g1, 1]

    def stats(self):
        return dict(self.c)


class StandinTensorCore:
    def __init__(self, spec, engine=None):
        self.rate = float(sget(spec, "tensor_core.dense_fp16_flop_per_cycle_per_sm", 4096))
        self.tail = int(sget(spec, "tensor_core.completion_latency_cycles", 46))
        self.issue = int(sget(spec, "tensor_core.issue_latency_ss_cycles", 4))
        self.gap = int(sget(spec, "tensor_core.mma_sync_default.issue_gap_cycles", 6))
        self.lat = int(sget(spec, "tensor_core.mma_sync_default.latency_cycles", 24))
        self.free = {}
        self.c = {"wgmma": 0, "mma_sync": 0, "flops": 0, "busy_cycles": 0.0}

    def wgmma(self, t, sm, wg_key, flops, smem_bytes, n, a_from_regs, dtype="f16"):
        s = max(float(t + self.issue), self.free.get(sm, 0.0))
        d = flops / self.rate
        self.free[sm] = s + d
        self.c["wgmma"] += 1
        self.c["flops"] += flops
        self.c["busy_cycles"] += d
        return int(ceil(s + d)) + self.tail

    def mma_sync(self, t, sm, sp, shape_key, flops):
        k = (sm, sp)
        s = max(t, self.free.get(k, 0))
        self.free[k] = s + self.gap
        self.c["mma_sync"] += 1
        self.c["flops"] += flops
        return s + self.gap, s + self.lat

    def mma_sync_bundle(self, t, sm, sps, shape_key, flops):
        nd = [self.mma_sync(t, sm, sp, shape_key, flops) for sp in sps]
        return max(x for x, _ in nd), max(d for _, d in nd)

    def stats(self):
        return dict(self.c)

"""L2 lookup coalescing (components/memory.py, ``l2.coalesce_scope``) against the H200 microbenchmark
``l2_coalesce_pairs`` (microbench/results/h200_l2_pairs_2026-12-03/l2_pairs.json, 2026-12-03): sets of SMs read
the same 1 MiB in lock step; the model replays each set as one cp.async per SM of the same (L2-hot) lines."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import warpgraph as wg
from warpgraph.components.memory import MemorySystem
from warpgraph.components.structural import gpc_of_sms

DATA = Path(__file__).resolve().parents[1] / "microbench" / "results" / "h200_l2_pairs_2026-12-03" / "l2_pairs.json"


@pytest.fixture(scope="module")
def pairs():
    return json.loads(DATA.read_text())


def _reads_per_lookup(spec, model_sms, key=4242 << 32) -> float:
    mem = MemorySystem(spec)
    for sm in model_sms:
        mem.global_access(0, sm, "cp_async", 16, key, 4, 512)
    return len(model_sms) * 512 / mem.l2_read_bytes


def test_first_wave_order_is_gpc_major(pairs):
    """The hardware scheduler fills the first wave GPC by GPC: the SMs that share lookups with SM 0 are exactly the
    first 16 CTAs' SMs, which ``fabric.sms_per_gpc`` (16 x 6 + 18 x 2) makes model GPC 0."""
    order = pairs["first_wave_smid"]
    spec = wg.load_arch("h200")
    gpc = gpc_of_sms(spec.fabric, spec.sm.count)
    partners = {s["sms"][1] for s in pairs["sets"]
                if len(s["sms"]) == 2 and s["sms"][0] == 0 and s["reads_per_lookup"] > 1.5}
    assert {gpc[order.index(p)] for p in partners} == {gpc[order.index(0)]} == {0}
    assert len(partners) == spec.fabric.sms_per_gpc[0] - 1


def test_sm_pairs_share_a_lookup_exactly_within_a_gpc(pairs):
    spec = wg.load_arch("h200")
    order = pairs["first_wave_smid"]
    n = 0
    for s in pairs["sets"]:
        if len(s["sms"]) != 2:
            continue
        model = _reads_per_lookup(spec, [order.index(x) for x in s["sms"]])
        assert model == pytest.approx(s["reads_per_lookup"], abs=0.02), s["sms"]
        n += 1
    assert n >= 390


@pytest.mark.parametrize("min_n", [4])
def test_sm_sets_reads_per_lookup(pairs, min_n):
    """Quads, every 2nd / 4th / 8th / 16th SM and all 132: within 3 % of the measured reads per lookup (the GPC
    scope with at most ``l2.requests_per_lookup_max`` = 4 reads per lookup)."""
    spec = wg.load_arch("h200")
    order = pairs["first_wave_smid"]
    sets = [s for s in pairs["sets"] if len(s["sms"]) >= min_n]
    assert len(sets) >= 35
    for s in sets:
        model = _reads_per_lookup(spec, [order.index(x) for x in s["sms"]])
        assert model == pytest.approx(s["reads_per_lookup"], rel=0.03), (s["sms"][:6], model)


def test_other_scopes_miss_the_measurement(pairs):
    """The test above can fail: any-SM sharing (``gpu``) and fill-only merging (``fill``) on L2-hot lines both
    disagree with the measured pairs."""
    order = pairs["first_wave_smid"]
    across = next(s for s in pairs["sets"] if s["sms"] == [0, 2])
    assert across["reads_per_lookup"] == pytest.approx(1.0, abs=0.02)
    gpu = wg.load_arch("h200", overrides={"l2.coalesce_scope": "gpu"})
    assert _reads_per_lookup(gpu, [order.index(0), order.index(2)]) == pytest.approx(2.0)
    within = next(s for s in pairs["sets"] if s["sms"] == [0, 1])
    fill = wg.load_arch("h200", overrides={"l2.coalesce_scope": "fill"})
    assert _reads_per_lookup(fill, [order.index(0), order.index(1)]) == pytest.approx(1.0)
    assert within["reads_per_lookup"] == pytest.approx(2.0, abs=0.02)


def test_hit_on_miss_costs_a_lookup_and_waits_for_the_fill():
    """A read from another GPC of lines whose DRAM fill is outstanding: its own lookup (lts__t traffic, the shared
    cold test reads DRAM once but looks up once per GPC group), data not before the fill."""
    spec = wg.load_arch("h200", overrides={"l2.coalesce_scope": "gpc"})
    mem = MemorySystem(spec)
    key = 99 << 32
    d0 = mem.global_access(0, 0, "cp_async", 16, key | 16, 4, 512)          # GPC 0: DRAM fill
    d1 = mem.global_access(5, 20, "cp_async", 16, key, 4, 512)              # GPC 1: hit-on-miss
    assert mem.l2_read_bytes == 1024 and mem.merged_bytes == 0 and mem.dram_read_bytes == 512
    assert d1 >= d0
    d2 = mem.global_access(6, 1, "cp_async", 16, key, 4, 512)               # GPC 0 again: shares the fill
    assert mem.l2_read_bytes == 1024 and mem.merged_bytes == 512 and d2 >= d0
    mem.global_access(d0 + 10, 2, "cp_async", 16, key, 4, 512)              # after the data is back: own lookup
    assert mem.l2_read_bytes == 1536

"""Microbenchmark PTX (workloads/microbench, nvcc -ptx of microbench/src) through the real pipeline.

``simulate(record, arch, want_outputs=True)`` runs functional -> timing -> functional again with the timing
pass's clock values (clock oracle), so ``outputs["out"]`` holds *simulated* %clock64 deltas; each test reads
them exactly as the CUDA host code (microbench/src/bench.cu) does. Targets come from the paper (h100 / rtx5090
parameters) or from the H200 run (microbench/results/h200_2026-12-02.json and the calibrated YAML), never from
the simulator's own output. Tolerances are stated per test with the reason.
"""
import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
REC = ROOT / "workloads" / "microbench"
RES = json.loads((ROOT / "microbench" / "results" / "h200_2026-12-02.json").read_text())["results"]
CAL = yaml.safe_load((ROOT / "microbench" / "results" / "h200_calibrated_params.yaml").read_text())["params"]


def cal(key):
    return float(CAL[key]["value"])


def measured(bench, stat, **params):
    for r in RES:
        if r["bench"] == bench and all(r["params"].get(k) == v for k, v in params.items()):
            return float(r["stats"][stat])
    raise KeyError((bench, params, stat))


@lru_cache(maxsize=None)
def _load(name):
    from warpgraph.workloads.record import load_record

    return load_record(REC / name)


@lru_cache(maxsize=None)
def run(name, arch, params=None, shared_bytes=None, warps=None):
    """Simulated ``out`` buffer (int64) of a record; ``params``: ((index, value), ...) replacing u32 params;
    ``warps``: launch that many warps per CTA (out buffer grown to 2 entries per warp), as the host does."""
    import warpgraph

    rec = _load(name)
    if params or shared_bytes or warps:
        rec = rec.model_copy(deep=True)
        for i, v in params or ():
            rec.params[i].value = v
        if shared_bytes:
            rec.shared_bytes = shared_bytes
        if warps:
            rec.block = [32 * warps, 1, 1]
            rec.buffers["out"].shape = [2 * warps]
            if "sink" in rec.buffers:
                rec.buffers["sink"].shape = [32 * warps]
    # 16 warps: the PTX-based register estimate (virtual registers) would not fit 512 threads; ptxas allocates
    # well under 128 registers for these 8-chain loops (32 accumulators + 6 operands + loop state)
    ov = {"timing.registers": 64} if warps else None
    res = warpgraph.simulate(rec, arch, want_outputs=True, overrides=ov)
    return res.outputs["out"].astype(np.int64), res.metrics


def rel(a, b):
    return abs(a - b) / abs(b)


# ---------------------------------------------------------------------------------------------- TMA issue
# k_tma.cu tma_issue_n<N>: out[3r] = issue span T(N) of N back-to-back 1 KiB cp.async.bulk, out[3r+1] = issue ->
# completion seen by try_wait; rep 0 cold, reps 1-3 L2-hot (the host takes the hot reps).
def hot(out, k):
    return [int(out[3 * r + k]) for r in (1, 2, 3)]


@pytest.mark.parametrize("n", range(1, 25))
def test_tma_issue_span_h100_paper(n):
    # paper III-A: T(N) = 1 + 44 N exactly, N = 1..24. The model adds the dependent address IADD between the
    # first clock read and the first issue (+4..5 cycles: nvcc emits add.s32 %r27 inside the timed region).
    out, _ = run(f"tma_issue_n{n:02d}", "h100")
    for t in hot(out, 0):
        assert abs(t - (1 + 44 * n)) <= 6, (n, t, 1 + 44 * n)


_NO_INTERCEPT = pytest.mark.xfail(strict=True, reason="the model has no T(N) intercept (H200 fit: 39.7 cycles); "
                                  "with the 46-cycle gap it runs 41-42 cycles short at N=8 and N=24")


@pytest.mark.parametrize("n", [1, 2, 4, pytest.param(8, marks=_NO_INTERCEPT), 16, 17,
                               pytest.param(24, marks=_NO_INTERCEPT)])
def test_tma_issue_span_h200_measured(n):
    # H200 median issue span per N. The model's per-issue gap is the measured least-squares slope (46); the
    # measured T(N) is not linear (57-cycle steps up to N=4, ~48 later; fit intercept 39.7 cycles, not modelled),
    # so the per-N tolerance is that intercept: 40 cycles (<= 4 % at N=24).
    out, _ = run(f"tma_issue_n{n:02d}", "h200")
    target = measured("tma_issue", "issue_span_median", n=n, bytes=1024, level="l2")
    for t in hot(out, 0):
        assert abs(t - target) <= 40, (n, t, target)


def test_tma_issue_gap_slope_h200_measured():
    # least-squares slope of T(N), N = 1..24 (as calibrate.py fits it): tma.issue_gap_cycles 45.8, 3 %
    ns = np.arange(1, 25)
    t = [hot(run(f"tma_issue_n{n:02d}", "h200")[0], 0)[0] for n in ns]
    slope = np.polyfit(ns, t, 1)[0]
    assert rel(slope, cal("tma.issue_gap_cycles")) <= 0.03, slope


def test_tma_17th_transaction_backpressures_h100():
    # paper III-A / Fig. 5a: the front end admits 16 active transactions; the 17th issue waits for the first to
    # complete. 16 KiB copies (dst_window 16 KiB, like the H200 tma_admission bench) last 512 cycles each at
    # 32 B/cycle, longer than 16 x 44, so T(17) - T(16) >> 44 while every earlier step is ~44.
    def span(n):
        out, _ = run(f"tma_issue_n{n:02d}", "h100", params=((2, 16384), (5, 16384)), shared_bytes=16384 + 128)
        return hot(out, 0)[0]

    t15, t16, t17 = span(15), span(16), span(17)
    assert abs((t16 - t15) - 44) <= 2
    assert (t17 - t16) > 44 + 100, (t15, t16, t17)


def test_tma_no_backpressure_1k_h200():
    # H200 (tma.admission_max_issue_step_cycles_dram): no jump up to 32 outstanding 1 KiB copies; largest
    # T(N) - T(N-1) step is 70 cycles.
    spans = [hot(run(f"tma_issue_n{n:02d}", "h200")[0], 0)[0] for n in (15, 16, 17, 18)]
    assert max(np.diff(spans)) <= cal("tma.admission_max_issue_step_cycles_dram")


# ------------------------------------------------------------------------------------- TMA completion
# tma_size_<B> (= tma_issue_n1 with bytes B): out[3r+1] = issue -> completion of one copy.
def completion(name, arch):
    return float(np.median(hot(run(name, arch)[0], 1)))


def test_tma_single_tx_staircase_h100_paper():
    # paper Fig. 5b: +49 cycles per 48 sectors (1536 B / 49 cy = 32 B/cycle); 1 KiB -> 16 KiB is 10 steps = 490.
    # 10 %: the staircase is quantised by the 42-cycle poll, so a single difference can be one poll off.
    d = completion("tma_size_16384", "h100") - completion("tma_size_1024", "h100")
    assert rel(d, 49 * 15360 / 1536) <= 0.10, d


def test_tma_single_tx_fill_rate_h200_measured():
    # H200: completion grows 1 cycle per 103.5 B (tma.single_tx_fill_bytes_per_cycle, 2..16 KiB); the model
    # streams at 96 B/cycle (h200.yaml, the sustained rate): 15 % + one poll of slack.
    d = completion("tma_size_16384", "h200") - completion("tma_size_1024", "h200")
    target = measured("tma_size", "completion_median", bytes=16384, level="l2") - \
        measured("tma_size", "completion_median", bytes=1024, level="l2")
    assert abs(d - target) <= 0.15 * target + 40, (d, target)


_TMA_LAT_XFAIL = ("the paper's pair is not reproducible by one per-transaction path: with its own T(N) = 1 + 44 N, "
                  "4 pipelined transactions finish no earlier than one serial transaction + 3 x 44 cycles, i.e. "
                  ">= 1669 / 4 + 132 = 549 > 410 cycles, unless each serial iteration carries ~140 cycles of work "
                  "the paper does not describe. Our H200 measurement obeys the bound (serial 1286 -> 321.5 per "
                  "transaction, pipelined 510 >= 453.5) and the model reproduces it "
                  "(test_tma_serial_vs_pipelined_h200_measured); h100 model 2161 / 667 with ld.global L2 latencies")


@pytest.mark.xfail(strict=True, reason=_TMA_LAT_XFAIL)
def test_tma_serial_vs_pipelined_h100_paper():
    # paper III-A: 4 transactions serial (issue, wait) x4 = 1669 cycles, pipelined (4 issues, 1 wait) = 410.
    serial = float(np.median([run("tma_4tx_serial", "h100")[0][2 * r] for r in (1, 2, 3)]))
    piped = completion("tma_4tx_pipelined", "h100")
    assert rel(serial, 1669) <= 0.10 and rel(piped, 410) <= 0.10, (serial, piped)


def test_tma_serial_vs_pipelined_h200_measured():
    # tma.issue_latency_cycles 47 (requests leave after the descriptor is taken) + tma.l2_latency_cycles 218
    serial = float(np.median([run("tma_4tx_serial", "h200")[0][2 * r] for r in (1, 2, 3)]))
    piped = completion("tma_4tx_pipelined", "h200")
    assert rel(serial, cal("tma.four_tx_serial_completion_cycles")) <= 0.10, serial
    assert rel(piped, cal("tma.four_tx_pipelined_completion_cycles")) <= 0.10, piped


def test_tma_pipelined_bound_holds_on_model_and_h200():
    # the bound of _TMA_LAT_XFAIL: pipelined(4) >= serial(4) / 4 + 3 x issue gap - one poll (42), which the H200
    # measurement obeys (serial 1286, pipelined 510, gap 45.8: 510 >= 418) and the paper's pair does not
    for arch in ("h100", "h200"):
        serial = float(np.median([run("tma_4tx_serial", arch)[0][2 * r] for r in (1, 2, 3)]))
        piped = completion("tma_4tx_pipelined", arch)
        gap = 44 if arch == "h100" else cal("tma.issue_gap_cycles")
        assert piped >= serial / 4 + 3 * gap - 42, (arch, serial, piped)


def test_tma_serial_slower_than_pipelined_h100():
    # the direction and the >3x overlap gain hold even with the long L2 round trip (paper 1669 / 410 = 4.1)
    serial = float(np.median([run("tma_4tx_serial", "h100")[0][2 * r] for r in (1, 2, 3)]))
    piped = completion("tma_4tx_pipelined", "h100")
    assert serial / piped > 3.0


def test_tma_parallel_issue_span():
    # paper III-A: 4 sub-partitions issuing at once span 58 cycles (H200 measured 63). out[8r+2w] / [8r+2w+1]:
    # absolute clocks before / after each warp's issue; span = max(after) - min(before). 10 cycles: the model's
    # front-end accept step (4 cy) and the per-warp start skew.
    for arch, target in (("h100", 58), ("h200", cal("tma.four_tx_parallel_issue_span_cycles"))):
        out, _ = run("tma_4tx_parallel", arch)
        spans = [out[8 * r + 1: 8 * r + 8: 2].max() - out[8 * r: 8 * r + 8: 2].min() for r in (1, 2, 3)]
        assert abs(float(np.median(spans)) - target) <= 10, (arch, spans, target)


# ----------------------------------------------------------------------------------------------- mbarrier
# k_mbar.cu: out[0] = cycles for a dependent chain of 256 links (wait + SEL + IADD); the calibration subtracts the
# H200-measured SEL+IADD cost of a link (9.7 cycles, microbench/README "mbarrier latency").
LINK_ALU = 9.7


def per_link(name, arch):
    out, _ = run(name, arch)
    return out[0] / out[1]


@pytest.mark.parametrize("name,target", [("mbarrier_test_wait", 42), ("mbarrier_try_wait", 42),
                                         ("mbarrier_try_wait_hint", 150)])
def test_mbarrier_poll_h100_paper(name, target):
    # paper Tab. II: test_wait / try_wait 42 cycles, try_wait + hint on a complete barrier 150. 12 %: the model's
    # SEL+IADD link costs ~14 cycles (int latency 4 x 2 + issue interval) vs the 9.7 measured.
    v = per_link(name, "h100") - LINK_ALU
    assert rel(v, target) <= 0.12, v


def test_mbarrier_hint_minus_nohint_h100_paper():
    # the link's ALU part cancels: 150 - 42 = 108 (Tab. II)
    d = per_link("mbarrier_try_wait_hint", "h100") - per_link("mbarrier_try_wait", "h100")
    assert rel(d, 108) <= 0.05, d


@pytest.mark.parametrize("name,key", [("mbarrier_test_wait", "mbarrier.test_wait_cycles"),
                                      ("mbarrier_try_wait", "mbarrier.try_wait_cycles"),
                                      ("mbarrier_try_wait_hint", "mbarrier.try_wait_hint_complete_cycles"),
                                      ("mbarrier_test_wait_incomplete", "mbarrier.test_wait_incomplete_cycles")])
def test_mbarrier_poll_h200_measured(name, key):
    # 12 % (try_wait_hint: 8 %): same link-ALU excess as on h100 (~4 cycles on a ~40-cycle poll)
    v = per_link(name, "h200") - LINK_ALU
    assert abs(v - cal(key)) <= max(0.12 * cal(key), 5), v


# ------------------------------------------------------------------------------------------------ mma.sync
# k_mma.cu: 64 iterations x C chains per warp, out[2w] = cycles. Gap = cycles / (64 C) with 8 chains;
# latency = cycles / 64 with one dependent chain.
TABLE_III = {  # paper Tab. III (RTX 5090): Gap_warp, latency
    "f16_m16n8k16": (33.4, 34.5), "bf16_m16n8k8": (32.8, 34.4), "tf32_m16n8k8": (33.4, 34.4),
    "s8_m16n8k32": (19.6, 27.0)}


@pytest.mark.parametrize("dtype,shape", [("f16", "m16n8k16"), ("bf16", "m16n8k8"), ("tf32", "m16n8k8"),
                                         ("s8", "m16n8k32")])
def test_mma_sync_single_warp_gap_h200_measured(dtype, shape):
    # 1 warp x 8 chains (the c8_w1 record): tensor_core.mma_sync.*.single_warp_issue_gap_cycles (6.56 / 4.38);
    # 10 %: the loop's compare/branch between MMA groups is charged as plain ALU issue. The k8 shapes' pipe
    # accepts an MMA every 3 cycles, but one warp issues no faster than its own per-warp interval
    # (tensor_core.mma_sync_warp_issue_gap_cycles)
    gap = run(f"mma_{dtype}_{shape}_c8_w1", "h200")[0][0] / (64 * 8)
    assert rel(gap, cal(f"tensor_core.mma_sync.{dtype}.{shape}.single_warp_issue_gap_cycles")) <= 0.10, gap


@pytest.mark.parametrize("shape", sorted(TABLE_III))
def test_mma_sync_rtx5090_table3(shape):
    gap_t, lat_t = TABLE_III[shape]
    gap = run(f"mma_{shape}_c8_w1", "rtx5090")[0][0] / (64 * 8)
    lat = run(f"mma_{shape}_c1_w1", "rtx5090")[0][0] / 64
    assert rel(gap, gap_t) <= 0.05 and rel(lat, lat_t) <= 0.05, (gap, lat)


_GTO_TAIL = pytest.mark.xfail(strict=True, reason=(
    "16 warps x 8 chains of m16n8k8 (issue gap 3): the card's slowest warp takes 3.004 cycles per MMA per "
    "sub-partition, the model's 3.178 (3.105 with the former 2-cycle branch hold): greedy-then-oldest issue finishes "
    "a sub-partition's 4 warps staggered (1.62 / 1.66 / 2.98 / 3.18) and the last runs alone at its own 4-cycle "
    "gap plus its back edges; loose round-robin (timing.policy=lrr) finishes them together within 3.00-3.05, as "
    "the card does (issue 15)"))


@pytest.mark.parametrize("dtype,shape", [("f16", "m16n8k16"), pytest.param("bf16", "m16n8k8", marks=_GTO_TAIL),
                                         ("tf32", "m16n8k8"), ("s8", "m16n8k32")])
def test_mma_sync_h200_measured(dtype, shape):
    # H200: saturated per-sub-partition gap, measured with 16 warps x 8 chains (4 warps per sub-partition, which
    # hides the loop overhead), and the 1-chain latency; 5 % (m16n8k8 latency 16.875 is 17 in h200.yaml)
    out = run(f"mma_{dtype}_{shape}_c8_w4", "h200", warps=16)[0]
    gap = float(np.max(out[0:32:2])) / (4 * 64 * 8)
    lat = run(f"mma_{dtype}_{shape}_c1_w1", "h200")[0][0] / 64
    k = f"tensor_core.mma_sync.{dtype}.{shape}"
    assert rel(gap, cal(k + ".issue_gap_cycles")) <= 0.05, gap
    assert rel(lat, cal(k + ".latency_cycles")) <= 0.05, lat


# --------------------------------------------------------------------------------------------------- wgmma
# k_wgmma.cu wgmma_tput: 16 iterations x 4 m64n128k16 wgmma per warpgroup; out[2 wg] = cycles.
@pytest.mark.parametrize("arch", ["h100", "h200"])
@pytest.mark.parametrize("wg", [1, 2])
def test_wgmma_throughput(arch, wg):
    # paper III-C / H200 measured: 4096 FLOP/SM/cycle (tensor_core.wgmma.f16_flop_per_cycle_per_sm); 5 %: the
    # timed region includes the pipeline fill and the last wait_group 0 of 64 wgmma
    out = run(f"wgmma_tput_ss_m64n128k16_wg{wg}", arch)[0]
    flops = wg * 16 * 4 * 2 * 64 * 128 * 16
    rate = flops / float(np.max(out[0:2 * wg:2]))
    assert rel(rate, cal("tensor_core.wgmma.f16_flop_per_cycle_per_sm")) <= 0.05, rate


def test_wgmma_latency_h200_measured():
    # fence + wgmma + commit + wait_group 0 per iteration (16 iterations): H200 117.6 cycles; 10 %
    out = run("wgmma_lat_ss_m64n128k16_wg1", "h200")[0]
    assert rel(out[0] / 16, cal("tensor_core.wgmma.f16.m64n128k16.latency_cycles_ss")) <= 0.10, out[0] / 16


# ------------------------------------------------------------------------------- non-tensor under a wgmma
# k_wgmma.cu nontensor_bg: warps 4-7 run 64 x 64 FFMA / MUFU.RSQ (8 chains); out[2(w-4)] = cycles. The kernel
# spins `while (clock() - t < 2000)` first (clock-dependent control flow: simulate() re-times to a fixed point).
# Model: while a wgmma is in service its accumulator traffic takes 128 of the sub-partition's 512 B/cycle of
# register-file bandwidth, stretching the other pipes' occupancy by 1/(1-0.25) = 1.33 (MUFU measured 1.33; FFMA
# measured 1.26 because there the FFMA stream also slowed the wgmma to 41 %, which the model does not do).
@pytest.mark.slow
@pytest.mark.parametrize("op,key", [("ffma", "core.ffma_slowdown_under_wgmma"),
                                    ("mufu", "core.mufu_slowdown_under_wgmma")])
def test_nontensor_slowdown_under_wgmma(op, key):
    def cyc(bg):
        out = run(f"nontensor_{op}_bg{bg}", "h200")[0]
        return float(np.mean(out[0:8:2]))

    base, loaded = cyc(0), cyc(1)
    assert base > 0 and loaded > 0
    s = loaded / base
    # direction (a background wgmma slows FFMA/MUFU issue) and rough size: within 0.15 of the measured ratio
    assert s > 1.0 and abs(s - cal(key)) <= 0.15, s


# ------------------------------------------------------------------------------------- shared memory banks
# k_mem.cu smem_bank_lat: one warp, dependent chain of 256 ld.shared at lane*stride words; out[0] = cycles.
WAYS = [1, 2, 4, 8, 16, 32]


def smem_link(ways, arch):
    return run(f"smem_bank_{ways:02d}way", arch)[0][0] / 256


@pytest.mark.parametrize("ways", WAYS[1:])
def test_smem_bank_conflicts_h100_wavefronts(ways):
    # n-way conflict = n wavefronts of one cycle each at 128 B/cycle (32 banks x 4 B): +(n-1) cycles per load
    d = smem_link(ways, "h100") - smem_link(1, "h100")
    assert abs(d - (ways - 1)) <= 0.5, d


def test_smem_bank_latency_h200_measured():
    # H200: shared_memory.latency_cycles 25.3 (ld.shared + add chain minus the 2.8-cycle add) for 1-way;
    # 2 cycles per extra way (shared_memory.bank_conflict_latency_cycles_per_extra_way) for a dependent chain.
    base = smem_link(1, "h200")
    assert abs(base - (cal("shared_memory.latency_cycles") + 2.8)) <= 3, base


def test_smem_bank_conflict_latency_per_way_h200_measured():
    base = smem_link(1, "h200")
    per_way = (smem_link(32, "h200") - base) / 31
    assert abs(per_way - cal("shared_memory.bank_conflict_latency_cycles_per_extra_way")) <= 0.25, per_way


# --------------------------------------------------------------------------------------------------- HBM
@pytest.mark.slow
@pytest.mark.parametrize("arch,target", [("h100", 3350 * 0.9), ("h200", None)])
def test_hbm_stream_read_bandwidth(arch, target):
    # Steady-state bandwidth of the grid-stride 16-B load stream (grid 528 x 256): the extra bytes over the extra
    # cycles of a 64 MiB vs a 32 MiB run, so the first wave's ramp-up and the tail (~2.5k cycles at 32 MiB) cancel,
    # as they do in the H200 measurement over 1 GiB. Targets: h100 spec x efficiency, h200 the measured 4373.6
    # GB/s (hbm.bandwidth_gb_per_s). Occupancy needs the kernel's real register count: `ptxas -arch=sm_90a -v` on
    # this kernel.ptx says "Used 32 registers"; the PTX-declaration estimate (134) would allow 1 CTA/SM instead
    # of 4 and make the stream latency-bound (~2100 GB/s).
    import warpgraph

    from warpgraph.topologies import load_arch

    target = target or cal("hbm.bandwidth_gb_per_s")
    cyc = {}
    for mib in (32, 64):
        rec = _load("hbm_stream_read_32MiB").model_copy(deep=True)
        rec.source["registers_per_thread"] = 32
        rec.buffers["src"].shape = [mib * 2**20 // 4]
        rec.params[1] = type(rec.params[1])(u64=mib * 2**20 // 16)
        cyc[mib] = warpgraph.simulate(rec, arch).metrics["cycles"]
    mhz = float(load_arch(arch).clocks.sm_mhz)
    gbs = 32 * 2**20 / (cyc[64] - cyc[32]) * mhz * 1e6 / 1e9
    assert rel(gbs, target) <= 0.10, (gbs, cyc)


# ------------------------------------------------------------------------- L1 loads touching many lines
# k_l1.cu l1_scatter (microbench/results/h200_l1_2026-12-02.json): W warps x 32 ld.global.b16 per iteration, lane
# i at i*stride + 8j; the SM's L1TEX stage costs max(bank wavefronts, tag lookups) per warp-load. Measured SM
# cycles per warp-load: stride 16 -> 4 lines / 4-way banks: 4.1; 64 -> 16: 16.1; 256 -> 32: 32.1; 6000 (32 lines,
# 4-way banks, the Triton N = 3000 pattern): 14.2; with fresh lines every iteration (misses to L2): 16.1.
L1RES = json.loads((ROOT / "microbench" / "results" / "h200_l1_2026-12-02.json").read_text())["results"]


def l1_measured(stride, kind, warps):
    for r in L1RES:
        p = r["params"]
        if r["bench"] == "l1_scatter" and (p["lane_stride"], p["kind"], p["warps_per_sm"]) == (stride, kind, warps):
            return float(r["stats"]["sm_cycles_per_warp_load"])
    raise KeyError((stride, kind, warps))


def l1_sim(stride, kind, warps):
    rec = _load(f"l1_scatter_{kind}_s{stride}_w{warps}")
    out, _ = run(rec.name, "h200")
    iters = int(rec.params[7].value)
    blocks = int(rec.grid[0])
    cyc = out[0: 2 * blocks * warps: 2]
    # as the host: the slowest warp's cycles over all warp-loads of its SM
    return float(cyc.max()) / (iters * 32 * warps)


@pytest.mark.parametrize("stride,kind,warps,tol", [
    (16, "hit", 8, 0.15), (64, "hit", 8, 0.15), (256, "hit", 8, 0.15),   # bank-wavefront bound
    (6000, "hit", 8, 0.15),                                                 # tag-lookup bound
])
def test_l1_scatter_sm_throughput_h200_measured(stride, kind, warps, tol):
    sim, hw = l1_sim(stride, kind, warps), l1_measured(stride, kind, warps)
    assert rel(sim, hw) <= tol, (sim, hw)


def test_l1_scatter_misses_never_beat_hits_h200():
    # the H200 ran the miss case with a warm L2 (16.1 vs 14.2 hit); the replay starts from a cold L2 (every miss
    # goes to DRAM), so only the ordering is comparable here
    assert l1_sim(6000, "miss", 8) >= l1_sim(6000, "hit", 8)


def test_l1_scatter_single_warp_is_latency_not_stage_bound_h200():
    # one warp alone cannot fill the stage: it is slower per warp-load than 8 warps sharing the SM (hw 15.5 vs 14.2)
    assert l1_sim(6000, "hit", 1) > l1_sim(6000, "hit", 8)


# ------------------------------------------------------------------------------------------ CTA turnaround
# k_launch.cu cta_turnaround (microbench/results/h200_launch_2026-12-02.json): one CTA per SM, start of a CTA minus
# the last clock of the previous CTA on the same SM; H200 median 400-409 cycles (cta_scheduler.launch_latency_cycles).
def test_cta_turnaround_h200_measured():
    out, _ = run("cta_turnaround_t32", "h200")
    rows = out[: 4 * 264].reshape(264, 4)
    gaps = []
    for sm in np.unique(rows[:, 0]):
        r = rows[rows[:, 0] == sm]
        r = r[np.argsort(r[:, 1])]
        gaps += [int(b[1] - a[2]) for a, b in zip(r[:-1], r[1:]) if b[1] >= a[2]]
    assert len(gaps) >= 100
    hw = json.loads((ROOT / "microbench" / "results" / "h200_launch_2026-12-02.json").read_text())["results"]
    target = next(float(x["stats"]["gap_median"]) for x in hw
                  if x["bench"] == "cta_turnaround" and x["params"]["threads"] == 32 and x["params"]["spin_cycles"] == 2000)
    # the measured gap also holds the previous CTA's 4 stores + exit and the next one's first clock read
    assert rel(float(np.median(gaps)), target) <= 0.10, (np.median(gaps), target)

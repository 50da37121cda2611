"""Arithmetic, SFU, conversion, shuffle and bar.sync timing (microbench/src/alu_latency.cu through the real
pipeline) against the H200 (microbench/results/h200_alu_latency_2026-12-04.json; records workloads/microbench/alu_*,
made by microbench/make_alu_latency_records.py with the hardware run's iteration counts). The unit classes'
latencies and intervals (h200.yaml ``latencies``) come from this run; tolerance 5 % (issue 15)."""
from __future__ import annotations

import pytest

from _replay_helpers import MB, measured, results, simulated
from warpgraph.workloads.ptx.isa import Unit, classify

RES = results("h200_alu_latency_2026-12-04.json")

_CVT_TPUT = pytest.mark.xfail(strict=True, reason=(
    "32 warps x 8 independent f32 -> f16 -> f32 chains: the H200 issues a conversion pair per 0.50 SM cycles, the "
    "model per 0.57 (both conversions on the FMA pipe at one per cycle per sub-partition); the latency (10.3 per "
    "pair) agrees (issue 15)"))
_LOOP = pytest.mark.xfail(strict=True, reason=(
    "one warp's dependent FADD / FFMA chain, 64 links per unrolled iteration: 4.28 SM cycles per link on the H200 "
    "(274 per iteration: 256 + 18), 4.06 in the model (4.02 before the taken back edge held the warp 10 cycles, "
    "microbench branch_cost): the H200's loop costs ~11 cycles more than branch_cost's loops of 8-64 FFMAs (its "
    "``if (i == 1)`` clock read, predicated in SASS, and the counter's compare are not on the model's path); "
    "FMNMX / IMAD 4.08 pass the 5 % (issue 15)"))
_LOOP_BOUND = {"alu_lat_fadd", "alu_lat_ffma"}
CASES = [pytest.param(p.name, marks=_CVT_TPUT) if p.name == "alu_tput_cvt_f16_f32_pair_w32"
         else pytest.param(p.name, marks=_LOOP) if p.name in _LOOP_BOUND else p.name
         for p in sorted(MB.glob("alu_*"))]


@pytest.mark.parametrize("name", CASES)
def test_alu_latency_replay_matches_the_h200(name):
    d = MB / name
    assert simulated(d) == pytest.approx(measured(d, RES), rel=0.05)


def test_bar_sync_takes_each_warps_arrival():
    """32 warps' back-to-back bar.sync: 76.8 cycles on the H200 (12.7 + 2.0 per warp); without the per-warp
    arrival cost the model released them in 28 (the 20-cycle release after the last arrival)."""
    d = MB / "alu_bar_w32"
    assert simulated(d, overrides={"latencies.bar_sync_cycles_per_warp": 0}) < 0.5 * measured(d, RES)


@pytest.mark.parametrize("text, packed", [
    ("cvt.rn.f16x2.f32", True), ("cvt.rn.bf16x2.f32", True), ("cvt.f32.f16", True), ("cvt.f32.bf16", True),
    ("cvt.rn.f16.f32", True), ("cvt.rn.satfinite.e4m3x2.f32", True),
    ("cvt.rzi.s32.f32", False), ("cvt.rn.f32.s32", False), ("cvt.f64.f32", False), ("cvt.rn.f32.f64", False),
    ("cvt.rzi.f32.f32", False), ("cvt.rna.tf32.f32", False), ("cvt.u32.u64", False)])
def test_float_packing_conversions_are_their_own_class(text, packed):
    """F2FP / HADD2.F32 conversions (5 cycles on the H200) are not the conversion unit's F2I / I2F / F2F.F64."""
    op, *mods = text.split(".")
    _, unit = classify(op, tuple(mods))
    assert (unit == Unit.CVT_PACKED) is packed, unit


@pytest.mark.parametrize("text, unit", [
    ("max.f32", Unit.INT), ("min.f32", Unit.INT), ("setp.lt.f32", Unit.INT), ("setp.gt.ftz.f32", Unit.INT),
    ("add.f32", Unit.FP32), ("fma.rn.f32", Unit.FP32), ("max.f16x2", Unit.FP16), ("max.f64", Unit.FP64)])
def test_f32_min_max_and_compares_issue_on_the_alu_pipe(text, unit):
    """FMNMX and FSETP take the ALU pipe at half the FMA rate (H200: 0.51 SM cycles per FMNMX at 32 warps, FADD
    0.26; FSETP + SEL 1.01 per pair), so they are the int class (4 cycles, interval 2), not fp32 (interval 1)."""
    op, *mods = text.split(".")
    assert classify(op, tuple(mods))[1] == unit

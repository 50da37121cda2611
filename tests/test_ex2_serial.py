"""Non-ftz ex2 expansions whose fix-up follows at once (issue 15): ptxas expands ``ex2.approx.f32`` as
``FSETP.GEU P, x, -126; @!P FMUL x, x, 0.5; MUFU.EX2 r, x; @!P FMUL r, r, r``. In the gallery's fp32 softmaxes every
expansion uses the one free predicate and squares right behind its MUFU, so a warp's exponentials run one MUFU
latency apart (H100 per-warp probes: 1,327 cycles a row for softmax_r32_c3000's exponentials, the model 494 when it
took them as independent); swiglu and the silu epilogues spread them over six predicates with the fix-up 12-14
instructions later. The model reads the fact from the SASS (workloads/sass.py ``ex2_fixups_follow``; records carry
it as ``compiled.<isa>.sass_ex2_serial``) and makes each ex2 wait for the one before it (runner/timing.py)."""
import json
import shutil
from pathlib import Path

import pytest

import warpgraph as wg
from warpgraph.workloads import sass as SS
from warpgraph.workloads.record import load_record
from _sass_listing import listing as _listing

ROOT = Path(wg.__file__).parent
RECORDS = ROOT / "workloads" / "records"
needs_tools = pytest.mark.skipif(not SS.tools_available(), reason="no ptxas / nvdisasm (install the 'triton' extra)")



def _expansion(k: int, pred: str, filler: int) -> list[str]:
    x, r = f"R{10 + k}", f"R{40 + k}"
    return ([f"FSETP.GEU.AND {pred}, PT, {x}, -126, PT", f"@!{pred} FMUL {x}, {x}, 0.5", f"MUFU.EX2 {r}, {x}"]
            + [f"FADD R{70 + k}, R{70 + k}, 1" for _ in range(filler)] + [f"@!{pred} FMUL {r}, {r}, {r}"])


def test_operands_are_parsed():
    s = _listing("MUFU.EX2 R52, R73", "@!P5 FMUL R52, R52, R52")
    assert s[0].operands == "R52, R73" and s[1].guard == "@!P5" and s[1].operands == "R52, R52, R52"


@pytest.mark.parametrize("gap, serial", [(0, True), (2, True), (3, True), (8, False), (13, False)])
def test_serial_when_the_fix_up_follows_its_mufu(gap, serial):
    ops = [op for k in range(6) for op in _expansion(k, "P5", gap)] + ["EXIT"]
    assert SS.ex2_fixups_follow(_listing(*ops)) is serial


def test_none_without_a_non_ftz_ex2():
    assert SS.ex2_fixups_follow(_listing("MUFU.EX2 R4, R4", "FADD R5, R4, R4", "EXIT")) is None   # ftz: no fix-up
    assert SS.ex2_fixups_follow(_listing("S2R R0, SR_TID.X", "EXIT")) is None


@needs_tools
@pytest.mark.parametrize("rel, serial", [("h200_gallery/softmax_r32_c3000_full", True),
                                         ("h200_gallery/softmax_r64_c300_full", True),
                                         ("h200/swiglu_n16777216", False),
                                         ("h200_gallery/gemm_bf16_M128_N192_K128_silu_full", False)])
def test_records_carry_what_ptxas_does(rel, serial):
    """The stored fact is the fresh listing's."""
    rec = load_record(RECORDS / rel)
    insts, _ = SS.record_listing(rec, "sm_90a")
    assert bool(SS.ex2_fixups_follow(insts)) is serial
    assert rec.compiled["sm_90a"].sass_ex2_serial is serial


def _copy(src: Path, dst: Path, serial: bool) -> Path:
    shutil.copytree(src, dst)
    f = dst / "launch.json"
    d = json.loads(f.read_text())
    d["compiled"]["sm_90a"]["sass_ex2_serial"] = serial
    f.write_text(json.dumps(d))
    return dst


def test_serial_ex2s_take_longer_and_the_switch_turns_it_off(tmp_path):
    """softmax_r64_c300 (4 exponentials a row per thread) with the fact set and unset, and with ``sass.ex2_serial=0``:
    serial is longer; the switch gives the independent timing."""
    src = RECORDS / "h200_gallery" / "softmax_r64_c300_full"
    on, off = _copy(src, tmp_path / "on", True), _copy(src, tmp_path / "off", False)
    mhz = ["clocks.sm_mhz=1967"]
    c_on = wg.simulate(on, "h200", overrides=mhz).metrics["cycles"]
    c_off = wg.simulate(off, "h200", overrides=mhz).metrics["cycles"]
    c_sw = wg.simulate(on, "h200", overrides=mhz + ["sass.ex2_serial=0"]).metrics["cycles"]
    assert c_on > 1.01 * c_off
    assert c_sw == c_off


def test_without_a_listing_the_ex2s_are_independent_with_a_warning(monkeypatch):
    """A record without the fact and no ptxas / nvdisasm: independent ex2s, said once in a warning."""
    from warpgraph.runner import timing
    from warpgraph.workloads import sass

    monkeypatch.setattr(sass, "record_ex2_serial", lambda rec, isa: (None, "no ptxas"))
    monkeypatch.setattr(timing, "_WARNED", set())
    rec = load_record(RECORDS / "h200_gallery" / "softmax_r64_c300_full")
    with pytest.warns(UserWarning, match="fix-ups of the non-ftz ex2 .no ptxas.; they are taken as independent"):
        assert timing.ex2_serial(rec.program(), rec, "sm_90a", None, ("ex2",)) is False
    assert timing.ex2_serial(rec.program(), rec, "sm_90a", None, ("add",)) is False    # no non-ftz ex2: not asked
    assert timing.ex2_serial(rec.program(), rec, "sm_90a", {"ex2_serial": 0}, ("ex2",)) is False

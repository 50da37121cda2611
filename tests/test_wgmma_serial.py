"""ptxas-serialised wgmma pipelines (issue 15): when non-wgmma instructions define a wgmma's accumulator registers
inside the pipeline stage, ptxas puts ``WARPGROUP.DEPBAR.LE gsb0, 0x0`` before every HGMMA ("C7515: wgmma.mma_async
instructions are serialized ..."), and Triton 3.6's TMA GEMMs are built so. The model reads that fact from the SASS
(workloads/sass.py ``wgmma_serialized``; records carry it as ``compiled.<isa>.sass_wgmma_serial``) and makes each
wgmma wait for the one before it (components/sm_core.py, the token register of runner/timing.py)."""
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import warpgraph as wg
from warpgraph.workloads import sass as SS
from warpgraph.workloads.record import load_record
from _sass_listing import listing as _listing

ROOT = Path(wg.__file__).parent
RECORDS = ROOT / "workloads" / "records"
MB = ROOT / "workloads" / "microbench"
needs_tools = pytest.mark.skipif(not SS.tools_available(), reason="no ptxas / nvdisasm (install the 'triton' extra)")



def test_depbar_count_is_parsed():
    s = _listing("WARPGROUP.DEPBAR.LE gsb0, 0x1", "WARPGROUP.ARRIVE", "HGMMA.64x128x16.F32 R24, gdesc[UR24], R24, gsb0")
    assert [x.arg for x in s] == [1, None, None]


@pytest.mark.parametrize("ops, serial", [
    # each HGMMA after the first waits for the one before it: serialised
    (("WARPGROUP.ARRIVE", "HGMMA.64x128x16.F32 R24, gdesc[UR24], R24, gsb0", "UIADD3 UR26, UR26, 0x2, URZ",
      "WARPGROUP.DEPBAR.LE gsb0, 0x0", "WARPGROUP.ARRIVE", "HGMMA.64x128x16.F32 R24, gdesc[UR28], R24, gsb0",
      "WARPGROUP.DEPBAR.LE gsb0, 0x0", "EXIT"), True),
    # back-to-back HGMMAs, one wait after the group (wait_group 0): pipelined
    (("WARPGROUP.ARRIVE", "HGMMA.64x128x16.F32 R24, gdesc[UR24], R24", "HGMMA.64x128x16.F32 R24, gdesc[UR28], R24, gsb0",
      "WARPGROUP.DEPBAR.LE gsb0, 0x0", "EXIT"), False),
    # a wait that lets one op stay in flight does not serialise
    (("HGMMA.64x128x16.F32 R24, gdesc[UR24], R24, gsb0", "WARPGROUP.DEPBAR.LE gsb0, 0x1",
      "HGMMA.64x128x16.F32 R24, gdesc[UR28], R24, gsb0", "EXIT"), False),
    # one HGMMA per block (a wait only between loop iterations) says nothing: not serialised
    (("HGMMA.64x128x16.F32 R24, gdesc[UR24], R24, gsb0", "WARPGROUP.DEPBAR.LE gsb0, 0x0", "EXIT"), False),
    (("S2R R0, SR_TID.X", "EXIT"), False),
])
def test_serialised_means_every_later_hgmma_of_a_block_waited(ops, serial):
    assert SS.wgmma_serialized(_listing(*ops)) is serial


@needs_tools
@pytest.mark.parametrize("rel, serial", [("h200_heldout/gemm_tma_M1024_N1024_K4096", True),
                                         ("h200/gemm_tma_M2048_N2048_K2048", True),
                                         ("h200/gemm_ptr_M2048_N2048_K2048", False),
                                         ("h200/attn_B4_H16_S1024_D64_causal0", False)])
def test_records_carry_what_ptxas_does(rel, serial):
    """The stored fact is the fresh listing's (ptxas reports C7515 for exactly the serialised ones)."""
    rec = load_record(RECORDS / rel)
    insts, tool = SS.record_listing(rec, "sm_90a")
    assert SS.wgmma_serialized(insts) is serial
    assert rec.compiled["sm_90a"].sass_wgmma_serial is serial


def _serial_copy(src: Path, dst: Path, serial: bool) -> Path:
    shutil.copytree(src, dst)
    f = dst / "launch.json"
    d = json.loads(f.read_text())
    d.setdefault("compiled", {}).setdefault("sm_90a", {"registers_per_thread": 128})["sass_wgmma_serial"] = serial
    f.write_text(json.dumps(d))
    return dst


def _timed(d: Path, **kw) -> float:
    """k_wgmma.cu's timed region (out[0], cycles) of warpgroup 0."""
    return float(np.asarray(wg.simulate(d, "h200", want_outputs=True, **kw).outputs["out"])[0])


def test_a_serialised_pipeline_runs_at_the_wgmma_latency(tmp_path):
    """One warpgroup issuing 4 wgmma + commit + wait_group 1 per iteration (microbench wgmma_tput, 16 iterations):
    pipelined, the tensor core's rate bounds it (64 cycles per m64n128k16); serialised, every wgmma waits for the
    one before, so each costs a dependent wgmma's latency -- what the wgmma_lat record (1 wgmma + wait_group 0 per
    iteration, H200 117.6 cycles) times."""
    src = MB / "wgmma_tput_ss_m64n128k16_wg1"
    piped = _timed(_serial_copy(src, tmp_path / "p", False)) / 64
    serial = _timed(_serial_copy(src, tmp_path / "s", True)) / 64
    lat = _timed(MB / "wgmma_lat_ss_m64n128k16_wg1") / 16
    assert piped == pytest.approx(64, rel=0.1)
    assert serial == pytest.approx(lat, rel=0.15)


def test_the_switch_turns_it_off(tmp_path):
    d = _serial_copy(MB / "wgmma_tput_ss_m64n128k16_wg1", tmp_path / "s", True)
    piped = _timed(_serial_copy(MB / "wgmma_tput_ss_m64n128k16_wg1", tmp_path / "p", False))
    assert _timed(d, overrides={"sass.wgmma_serial": 0}) == piped
    assert _timed(d) > 1.3 * piped

"""The record alone decides (issue 15): registers per thread come from ptxas (the record's ``compiled`` block or
ptxas at load), never from ``measured.json``; without either, an estimate with a warning."""
import json
import shutil
import warnings
from pathlib import Path

import pytest

from warpgraph.analysis.validate import validate_records
from warpgraph.runner.timing import registers_per_thread
from warpgraph.topologies import load_arch
from warpgraph.workloads.compiled import CompiledFacts, find_ptxas, parse_ptxas_log, ptxas_facts
from warpgraph.workloads.record import load_record, save_record
from warpgraph.workloads.scale import scale_record

ROOT = Path(__file__).resolve().parent.parent / "workloads"
H200 = ROOT / "records" / "h200"
HELDOUT = ROOT / "records" / "h200_heldout"

LOG = """ptxas info    : 11 bytes gmem
ptxas info    : Compiling entry function 'attn_fwd' for 'sm_90a'
ptxas info    : Function properties for attn_fwd
    8 bytes stack frame, 12 bytes spill stores, 16 bytes spill loads
ptxas info    : Used 198 registers, used 1 barriers, 1024 bytes smem, 392 bytes cmem[0]
ptxas info    : Compiling entry function 'other' for 'sm_90a'
ptxas info    : Function properties for other
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 14 registers
"""


def test_parse_ptxas_log_per_entry():
    e = parse_ptxas_log(LOG)
    assert e["attn_fwd"] == {"isa": "sm_90a", "stack_frame_bytes": 8, "spill_store_bytes": 12,
                             "spill_load_bytes": 16, "registers_per_thread": 198, "barriers": 1,
                             "static_shared_bytes": 1024}
    assert e["other"]["registers_per_thread"] == 14 and e["other"]["barriers"] == 0


@pytest.mark.parametrize("folder", sorted(p for p in H200.iterdir() if p.is_dir())
                         + sorted(p for p in HELDOUT.iterdir() if p.is_dir()), ids=lambda p: p.name)
def test_bundled_records_carry_ptxas_registers_equal_to_ncu(folder):
    """Every bundled H200 launch records ptxas's registers (Triton 3.6's ptxas 12.8, which built the cubins
    that ran); they equal Nsight Compute's launch__registers_per_thread on all 25 launches."""
    rec = load_record(folder)
    block = rec.compiled["sm_90a"]
    meas = json.loads((folder / "measured.json").read_text())
    assert block.registers_per_thread == int(meas["registers_per_thread"])
    regs, src = registers_per_thread(rec.program(), rec, load_arch("h200"))
    assert regs == block.registers_per_thread and src.startswith("ptxas: record")


def test_estimate_only_without_ptxas_and_block(monkeypatch, tmp_path):
    rec = load_record(H200 / "rmsnorm_rows4096_cols4096")
    bare = save_record(rec.derive(compiled={}), tmp_path / "r")
    monkeypatch.setenv("WARPGRAPH_PTXAS", "")          # no ptxas anywhere
    with pytest.warns(UserWarning, match="estimated"):
        regs, src = registers_per_thread(bare.program(), bare, load_arch("h200"))
    assert src.startswith("estimate") and regs != 32     # the PTX estimate over-counts this kernel


@pytest.mark.skipif(find_ptxas("sm_90a") is None, reason="needs ptxas (CUDA toolkit or the triton extra)")
def test_ptxas_at_load_equals_the_recorded_block(tmp_path, monkeypatch):
    monkeypatch.setenv("WARPGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    rec = load_record(ROOT / "microbench" / "tma_stream_16k")   # built by nvcc 13.0 -> the toolkit's ptxas
    bare = save_record(rec.derive(compiled={}), tmp_path / "r")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        regs, src = registers_per_thread(bare.program(), bare, load_arch("h200"))
    assert "at load" in src
    f, why = ptxas_facts(rec.ptx_text(), rec.entry, "sm_90a", prefer="cuda")
    assert why == "" and f.registers_per_thread == regs
    if "13.0" in f.tool:   # same tool chain as the recorded block
        assert regs == rec.compiled["sm_90a"].registers_per_thread
    assert list((tmp_path / "cache" / "ptxas").glob("*.json"))       # cached for the next process


def test_garbage_registers_in_measured_json_do_not_change_cycles(tmp_path):
    """validate on the same record with measured.json registers 255 / 1 / true gives identical cycles, while the
    record's own compiled registers do change them (so the launch is sensitive to registers at all)."""
    base = scale_record(load_record(H200 / "rmsnorm_rows4096_cols4096"), rows=1056)
    meas = json.loads((H200 / "rmsnorm_rows4096_cols4096" / "measured.json").read_text())
    dirs = []
    for i, regs in enumerate((meas["registers_per_thread"], 255, 1)):
        d = tmp_path / f"m{i}"
        save_record(base, d, measured={**meas, "registers_per_thread": regs})
        dirs.append(d)
    heavy = tmp_path / "heavy"
    blk = base.compiled["sm_90a"].model_dump()
    save_record(base.derive(compiled={"sm_90a": {**blk, "registers_per_thread": 255}}), heavy,
                measured=meas)
    rows = validate_records(dirs + [heavy], "h200", jobs=1)
    cycles = [r["sim_cycles"] for r in rows]
    assert cycles[0] == cycles[1] == cycles[2], cycles
    assert cycles[3] != cycles[0], cycles


def test_compiled_facts_roundtrip():
    f = CompiledFacts(registers_per_thread=90, tool="ptxas 12.8.93 (triton 3.6.0)", isa="sm_90a")
    assert CompiledFacts.from_json(f.to_json()) == f

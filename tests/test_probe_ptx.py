"""microbench/probe/probe_ptx.py: clock64 probes go where the TMA pipeline's events are, and leave the kernel
as ptxas builds it (same registers), so a probed launch times the unprobed kernel's pipeline."""
import importlib.util
from pathlib import Path

import pytest

from warpgraph.workloads.compiled import find_ptxas, ptxas_facts

ROOT = Path(__file__).resolve().parents[1]
REC = ROOT / "workloads" / "records" / "h200_heldout" / "gemm_tma_M1024_N1024_K4096"
_spec = importlib.util.spec_from_file_location("probe_ptx", ROOT / "microbench" / "probe" / "probe_ptx.py")
P = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(P)


def test_probes_sit_at_each_wait_issue_and_exit():
    ptx = (REC / "kernel.ptx").read_text()
    text, size, counts = P.instrument(ptx, grid_ctas=64, max_probes=256)
    assert size == 64 * 256 * P.SLOT_BYTES
    # one try_wait loop, 2 x 2 prologue + 2 loop TMA loads, two wgmma.wait_group, one exit (its `ret;`)
    assert counts == {"start": 1, "wait": ptx.count("mbarrier.try_wait"), "tma": 6, "wgwait": 2, "end": 1}
    assert f".global .align 16 .b8 wg_probe[{size}];" in text
    # a probe follows the end of the try_wait block, never inside it
    wait_block = text.split("mbarrier.try_wait", 1)[1].split("// end inline asm", 1)
    assert "wg_probe" not in wait_block[0] and wait_block[1].lstrip().startswith("// wg_probe wait")


def test_rejects_ptx_without_an_entry():
    with pytest.raises(ValueError, match="no .entry"):
        P.instrument(".version 8.7\n.target sm_90a\n.address_size 64\n", 1)


@pytest.mark.skipif(find_ptxas("sm_90a") is None, reason="no ptxas (install the 'triton' extra)")
def test_probed_kernel_assembles_with_the_same_registers():
    ptx = (REC / "kernel.ptx").read_text()
    text, _, _ = P.instrument(ptx, grid_ctas=64)
    plain, _ = ptxas_facts(ptx, "gemm_tma", "sm_90a")
    probed, why = ptxas_facts(text, "gemm_tma", "sm_90a")
    assert probed is not None, why
    assert probed.registers_per_thread == plain.registers_per_thread
    assert probed.spill_store_bytes == 0


RMS = ROOT / "workloads" / "records" / "h200" / "rmsnorm_rows4096_cols4096"


def test_per_warp_mode_probes_every_barrier_in_its_own_slots():
    ptx = (RMS / "kernel.ptx").read_text()
    text, size, counts = P.instrument(ptx, grid_ctas=4096, max_probes=16, warps=8)
    assert size == 4096 * 8 * 16 * P.SLOT_BYTES
    n_bar = sum(1 for l in ptx.splitlines() if l.strip().startswith(("bar.sync", "barrier.sync")))
    assert n_bar == 2 and counts["arrive"] == counts["bar"] == n_bar and counts["start"] == counts["end"] == 1
    # lane 0 of each warp records, its slots after the CTA's earlier warps'
    assert "and.b32 \t%wgq0, %wgq4, 31;" in text and "mad.lo.u32 \t%wgq1, %wgq1, 8, %wgq4;" in text
    # an arrive probe right before each bar.sync, a bar probe right after it
    lines = [l.strip() for l in text.splitlines()]
    for i, l in enumerate(lines):
        if l.startswith("bar.sync"):
            assert lines[i - 8] == "// wg_probe arrive" and lines[i + 1] == "// wg_probe bar"
    # thread-0 mode places no barrier probes
    assert "arrive" not in P.instrument(ptx, grid_ctas=4096)[2]


@pytest.mark.skipif(find_ptxas("sm_90a") is None, reason="no ptxas (install the 'triton' extra)")
def test_per_warp_probed_kernel_assembles_with_the_same_registers():
    ptx = (RMS / "kernel.ptx").read_text()
    text, _, _ = P.instrument(ptx, grid_ctas=4096, max_probes=16, warps=8)
    plain, _ = ptxas_facts(ptx, "rmsnorm", "sm_90a")
    probed, why = ptxas_facts(text, "rmsnorm", "sm_90a")
    assert probed is not None, why
    assert probed.registers_per_thread == plain.registers_per_thread

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

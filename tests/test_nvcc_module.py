"""A real nvcc PTX module (workloads/records/nvcc_module/module.cu, nvcc 13.0 -ptx -arch=sm_90a) with three
entries whose extern shared arrays (``buf``, ``raw``) each start at the dynamic shared-memory base: every entry
runs from the one module, functionally (golden outputs, exact) and in timing mode (issue 17)."""
from pathlib import Path

import pytest

from warpgraph import simulate

MOD = Path(__file__).resolve().parent.parent / "workloads" / "records" / "nvcc_module"


@pytest.mark.parametrize("entry", ["scale2", "add1", "neg16"])
def test_every_entry_of_an_nvcc_module_runs(entry):
    ptx = (MOD / entry / "kernel.ptx").read_text()
    assert ptx.count(".entry") == 3 and ".extern .shared .align 16 .b8 raw[]" in ptx
    fn = simulate(MOD / entry, "h200", mode="functional", check=True)
    assert fn.check is not None and fn.check.ok, fn.check
    t = simulate(MOD / entry, "h200")
    assert t.metrics["cycles"] > 0 and t.metrics["warp_instructions"] > 0

"""%smid in the timing trace (runner/simulate.py ``_reads_special``): a kernel that picks its data by SM gets the
addresses of the SM each CTA runs on, not SM 0's. microbench/src/tma_stream.cu streams, on the CTAs whose %smid is
in a set, the region of 8 TMA boxes (16 KiB each) at smid * 8: 33 SMs read 33 distinct regions from DRAM once."""
from pathlib import Path

import numpy as np

from warpgraph.runner.simulate import simulate

REC = Path(__file__).resolve().parents[1] / "workloads" / "microbench" / "tst_sm33_own_st4"


def test_ctas_that_choose_their_data_by_smid_read_their_own_regions():
    r = simulate(REC, "h200", want_outputs=True)
    out = np.asarray(r.outputs["out"]).reshape(132, 5)
    streamed = out[:, 4] == 1
    assert streamed.sum() == 33 and (out[streamed, 3] % 4 == 0).all()
    # first touches: 33 regions of 8 boxes of 16 KiB (the old first pass gave every CTA %smid 0: one region)
    assert r.metrics["dram_read_bytes"] == 33 * 8 * 16384
    assert r.metrics["smid_placement"]["rounds"] <= 1


def test_a_kernel_without_smid_has_no_placement_pass():
    r = simulate(Path(__file__).resolve().parents[1] / "workloads" / "microbench" / "alu_bar_w1", "h200")
    assert "smid_placement" not in r.metrics


_NSMID = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_p0)
{
 .reg .b32 %r<4>;
 .reg .b64 %rd<4>;
 ld.param.u64 %rd1, [k_p0];
 mov.u32 %r1, %nsmid;
 mov.u32 %r2, %ctaid.x;
 mul.wide.u32 %rd2, %r2, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.u32 [%rd3], %r1;
 ret;
}
"""


def test_nsmid_is_the_architectures_sm_count():
    from warpgraph.workloads.record import record_from_dict

    rec = record_from_dict({"format": "launch-record/1", "name": "nsmid", "entry": "k", "grid": [4, 1, 1],
                            "block": [32, 1, 1], "buffers": {"out": {"dtype": "uint32", "shape": [4],
                                                                     "init": "zeros"}},
                            "params": [{"ptr": "out"}]}, ptx_text=_NSMID)
    for arch, n in (("h200", 132), ("b200", 148)):
        r = simulate(rec, arch, want_outputs=True)
        assert (np.asarray(r.outputs["out"]) == n).all(), arch     # was a constant 132
    r = simulate(rec, "h200", want_outputs=True, overrides={"timing.n_sms": 66})   # a GPU of 66 SMs
    assert (np.asarray(r.outputs["out"]) == 66).all()

"""RTX 5090 (sm_120): Triton 3.6 mma.sync records run functionally against numpy and complete in timing mode on
rtx5090.yaml; the packed .f32x2 arithmetic Triton emits for sm_100+/sm_120 matches its scalar definition."""
from pathlib import Path

import numpy as np
import pytest

from warpgraph import simulate
from warpgraph.core.errors import PTXError
from warpgraph.workloads.functional import run_functional
from warpgraph.workloads.record import load_record, record_from_dict

RECORDS = Path(__file__).resolve().parents[1] / "workloads" / "records" / "rtx5090"


@pytest.mark.parametrize("name", ["gemm_s_M256_N256_K256", "attn_s_BH2_S256_D64"])
def test_sm120_records_functional_and_timing_on_rtx5090(name):
    rec = load_record(RECORDS / name)
    assert rec.source.get("target") == "sm_120"
    assert "mma.sync" in rec.ptx_text() and "tcgen05" not in rec.ptx_text() and "wgmma" not in rec.ptx_text()
    r = simulate(rec, "rtx5090", check=True)
    assert r.check.ok, r.check
    df = r.stats
    tc = {s: v for c, s, v in zip(df["component"], df["stat"], df["value"]) if c == "tensor_core"}
    assert tc["mma_sync.count"] > 0 and tc.get("async.count", 0) == 0
    assert r.metrics["cycles"] > 0
    # the mma_sync-only variant declares no dense tensor peak: no utilisation (not a share of Hopper's 4096)
    assert r.metrics["tensor_utilization_pct"] is None


def test_dense_tensor_peak_is_typed_per_variant():
    from warpgraph.topologies import load_arch

    assert load_arch("rtx5090").tensor_core.dense_fp16_peak() is None
    assert load_arch("h200").tensor_core.dense_fp16_peak() == load_arch("h200").tensor_core.dense_fp16_flop_per_cycle_per_sm
    assert load_arch("b200").tensor_core.dense_fp16_peak() == 8192


def test_realistic_sm120_records_are_bundled():
    for name in ("gemm_M2048_N2048_K2048", "attn_BH16_S1024_D64"):
        rec = load_record(RECORDS / name)
        assert rec.check is not None and rec.source.get("target") == "sm_120"


_PTX = """
.version 8.7
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pout)
{
 .reg .b32 %r<8>;
 .reg .b64 %rd<16>;
 ld.param.u64 %rd1, [pin];
 ld.param.u64 %rd2, [pout];
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd3, %r1, 24;
 add.s64 %rd4, %rd1, %rd3;
 ld.global.b64 %rd5, [%rd4];
 ld.global.b64 %rd6, [%rd4+8];
 ld.global.b64 %rd7, [%rd4+16];
 mul.wide.u32 %rd8, %r1, 32;
 add.s64 %rd9, %rd2, %rd8;
 add.f32x2 %rd10, %rd5, %rd6;
 st.global.b64 [%rd9], %rd10;
 sub.f32x2 %rd11, %rd5, %rd6;
 st.global.b64 [%rd9+8], %rd11;
 mul.f32x2 %rd12, %rd5, %rd6;
 st.global.b64 [%rd9+16], %rd12;
 fma.rn.f32x2 %rd13, %rd5, %rd6, %rd7;
 st.global.b64 [%rd9+24], %rd13;
 ret;
}
"""


def _rec(ptx, x):
    return record_from_dict({"format": "launch-record/1", "name": "f32x2", "entry": "k", "grid": [1, 1, 1],
                             "block": [32, 1, 1], "shared_bytes": 0,
                             "buffers": {"x": {"dtype": "float32", "shape": [32, 6],
                                               "init": {"values": x.reshape(-1).tolist()}},
                                         "out": {"dtype": "float32", "shape": [32, 8], "init": "zeros"}},
                             "params": [{"ptr": "x"}, {"ptr": "out"}]}, ptx_text=ptx)


def test_packed_f32x2_arithmetic():
    x = np.random.default_rng(1).normal(size=(32, 6)).astype(np.float32)
    out = run_functional(_rec(_PTX, x), want_trace=False).outputs["out"]
    a, b, c = x[:, 0:2], x[:, 2:4], x[:, 4:6]          # element 0 in the low 32 bits of each .b64
    assert np.array_equal(out[:, 0:2], a + b) and np.array_equal(out[:, 2:4], a - b)
    assert np.array_equal(out[:, 4:6], a * b)
    exact = (a.astype(np.float64) * b + c).astype(np.float32)
    assert np.allclose(out[:, 6:8], exact, rtol=2e-7, atol=1e-7)


def test_packed_f32x2_rounding_mode_not_modelled_is_an_error():
    bad = _PTX.replace("fma.rn.f32x2", "fma.rz.f32x2")
    with pytest.raises(PTXError, match="rz"):
        run_functional(_rec(bad, np.zeros((32, 6), np.float32)), want_trace=False)

"""references: the five reference functions vs straightforward numpy; check() metric and failure modes."""
from pathlib import Path

import numpy as np
import pytest

import warpgraph
from warpgraph.core.errors import RecordError
from warpgraph.workloads import references as R
from warpgraph.workloads.memory import DeviceMemory
from warpgraph.workloads.record import load_record
from warpgraph.workloads.references import check
from warpgraph.workloads.scale import small_variant

RECORDS = Path(warpgraph.__file__).parent / "workloads" / "records" / "h200"
rng = np.random.default_rng(0)


def test_gemm_and_gemm_nt():
    a, b = rng.standard_normal((5, 7)), rng.standard_normal((7, 3))
    assert np.allclose(R.gemm(a, b), a @ b)
    assert np.allclose(R.gemm_nt(a, b.T), a @ b)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_matches_loop(causal):
    q, k, v = (rng.standard_normal((1, 2, 6, 4)) for _ in range(3))
    out = R.attention(q, k, v, 0.5, causal)
    for h in range(2):
        for i in range(6):
            n = i + 1 if causal else 6
            s = np.array([q[0, h, i] @ k[0, h, j] * 0.5 for j in range(n)])
            p = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
            assert np.allclose(out[0, h, i], p @ v[0, h, :n])


def test_rmsnorm_swiglu():
    x, w = rng.standard_normal((3, 8)), rng.standard_normal(8)
    ref = np.stack([r / np.sqrt(np.mean(r ** 2) + 1e-6) * w for r in x])
    assert np.allclose(R.rmsnorm(x, w, 1e-6), ref)
    a, b = rng.standard_normal(10), rng.standard_normal(10)
    assert np.allclose(R.swiglu(a, b), a * (1 / (1 + np.exp(-a))) * b)


def _filled(name):
    r = small_variant(load_record(RECORDS / name))
    m = DeviceMemory.from_record(r, seed=3)
    return r, m


@pytest.mark.parametrize("name", ["gemm_tma_M2048_N2048_K2048", "gemm_ptr_M512_N3000_K1536",
                                  "attn_B4_H16_S1024_D128_causal1", "rmsnorm_rows4096_cols4096", "swiglu_n16777216"])
def test_check_accepts_fp16_rounded_reference_rejects_poison(name):
    r, m = _filled(name)
    out = m.outputs()
    res = check(r, out)
    assert not res.ok and res.nan_count == out[r.check.output].size and "NaN" in res.message
    ins = [R.to_float64(out[n], r.buffers[n].dtype) for n in r.check.inputs]
    out[r.check.output] = R.REFERENCES[r.check.reference](*ins, **r.check.args).astype(np.float16)
    res = check(r, out)
    assert res.ok and res.rel_err < 1e-3 and res.max_rel_err == 0.01 and "OK" in res.message
    out[r.check.output] = (out[r.check.output] * 1.05).astype(np.float16)
    res = check(r, out)
    assert not res.ok and 0.04 < res.rel_err < 0.06


def test_check_errors():
    r, m = _filled("swiglu_n16777216")
    out = m.outputs()
    del out["a"]
    with pytest.raises(RecordError):
        check(r, out)


def test_bf16_decode():
    bits = np.array([0x3F80, 0xC000], dtype=np.uint16)
    assert R.to_float64(bits, "bfloat16").tolist() == [1.0, -2.0]
    assert R.to_float64(np.array([0x38], np.uint8), "float8_e4m3fn")[0] == 1.0

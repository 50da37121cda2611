"""Offline Triton capture reproduces the calibration PTX (code identical apart from .file / DWARF paths)."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import warpgraph
from warpgraph.workloads.record import load_record

triton = pytest.importorskip("triton")
from warpgraph.workloads.triton_capture import Buf, capture, tensor_descriptor  # noqa: E402

ROOT = Path(warpgraph.__file__).parent / "workloads" / "records"
RECORDS = ROOT / "h200"
CX = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8)


@pytest.fixture(scope="module")
def K():
    spec = importlib.util.spec_from_file_location("wg_measure_kernels", ROOT / "measure_src" / "kernels.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def code(ptx: str) -> list[str]:
    """PTX without `.file` lines and the DWARF sections (which embed the compiling machine's paths)."""
    i = ptx.find(".section\t.debug")
    return [l for l in ptx[: i if i >= 0 else None].splitlines() if not l.strip().startswith(".file")]


@pytest.mark.parametrize("case,target", [("gemm_ptr_M512_N3000_K1536", "sm_90a"), ("gemm80_M2048_N2048_K2048", "sm_80")])
def test_gemm_ptr_identical(K, case, target, tmp_path):
    ref = load_record(RECORDS / case)
    M, Kd = ref.buffers["a"].shape
    N = ref.buffers["b"].shape[1]
    a, b = Buf("float16", [M, Kd], {"normal": 0.1}), Buf("float16", [Kd, N], {"normal": 0.1})
    c = Buf("float16", [M, N], "poison")
    rec = capture(K.gemm_ptr, ref.grid, [a, b, c, M, N, Kd, Kd, 1, N, 1, N, 1], target=target, num_warps=8,
                  num_stages=3, name=ref.name, check=ref.check.model_dump(), out_dir=tmp_path / "r", **CX)
    assert code(rec.ptx_text()) == code(ref.ptx_text())
    assert {**rec.to_json_dict(), "source": ref.source} == ref.to_json_dict()
    assert rec.source["constexprs"] == ref.source["constexprs"]
    assert load_record(tmp_path / "r").name == ref.name


def test_gemm_tma_identical(K):
    ref = load_record(RECORDS / "gemm_tma_M2048_N2048_K2048")
    M = N = Kd = 2048
    a = np.zeros((M, Kd), np.float16)  # numpy arrays work as bases too
    b, c = Buf("float16", [N, Kd], {"normal": 0.1}), Buf("float16", [M, N], "poison")
    rec = capture(K.gemm_tma, ref.grid, [tensor_descriptor(a, [128, 64]), tensor_descriptor(b, [128, 64]),
                                         tensor_descriptor(c, [128, 128]), M, N, Kd],
                  num_warps=8, num_stages=3, name=ref.name, check=ref.check.model_dump(),
                  inits={"a": {"normal": 0.1}}, **CX)
    assert code(rec.ptx_text()) == code(ref.ptx_text())
    assert {**rec.to_json_dict(), "source": ref.source} == ref.to_json_dict()  # boxes from tensordesc_meta


def test_cli_capture(tmp_path):
    from warpgraph.cli.capture_cmd import run_capture

    args = ["a_ptr=float16[256,64]:normal=0.1", "b_ptr=float16[64,128]", "c_ptr=float16[256,128]:poison",
            "M=256", "N=128", "K=64", "stride_am=64", "stride_ak=1", "stride_bk=128", "stride_bn=1",
            "stride_cm=128", "stride_cn=1", "BLOCK_M=128", "BLOCK_N=128", "BLOCK_K=64", "GROUP_M=8"]
    rec = run_capture(str(ROOT / "measure_src" / "kernels.py") + ":gemm_ptr", "2", args, "sm_90a", 8, 3,
                      str(tmp_path / "g"), None)
    assert rec.name == "g" and rec.grid == [2, 1, 1] and rec.buffers["a"].init.normal == 0.1
    assert [p.value for p in rec.params[3:9]] == [256, 128, 64, 64, 128, 128]
    rec.validate_against(None)

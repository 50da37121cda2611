"""`capture` on kernels of every argument style (workloads/gallery/kernels.py): launch-option name clashes,
string / tuple / dtype constexprs and defaults, device-side descriptors (global scratch), warp
specialization (.reqntid block), pointer tables. Its PTX equals a direct ``triton.compile`` of the same
specialization (minus .file lines and DWARF sections)."""
import pytest

triton = pytest.importorskip("triton")
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from warpgraph.workloads.gallery import kernels as K  # noqa: E402
from warpgraph.workloads.triton_capture import Buf, CaptureError, capture, tensor_descriptor  # noqa: E402

D16 = [["tt.divisibility", 16]]


def code(ptx: str) -> list[str]:
    i = ptx.find(".section\t.debug")
    return [l for l in ptx[: i if i >= 0 else None].splitlines() if not l.strip().startswith(".file")]


def direct(fn, signature, constexprs, div16, num_warps=4, num_stages=3):
    """triton.compile with an explicit signature (what a GPU launch would specialize to)."""
    names = [p.name for p in fn.params]
    sig = {n: signature.get(n, "constexpr") for n in names}
    cx = {(names.index(k),): v for k, v in constexprs.items()}
    attrs = {(names.index(k),): D16 for k in div16}
    ck = triton.compile(ASTSource(fn, sig, cx, attrs), target=GPUTarget("cuda", 90, 32),
                        options={"num_warps": num_warps, "num_stages": num_stages})
    return ck


def test_param_named_num_stages_sets_the_option():
    args = dict(out_ptr=Buf("float32", [64, 300], "poison"), in_ptr=Buf("float32", [64, 300]), n_rows=64,
                n_cols=300, row_stride=300, BLOCK=512, num_stages=2)
    rec = capture(K.softmax_rows, [8], kwargs=args)
    assert rec.source["num_stages"] == 2 and rec.source["constexprs"]["num_stages"] == 2
    ck = direct(K.softmax_rows, {"out_ptr": "*fp32", "in_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32",
                                 "row_stride": "i32"}, {"BLOCK": 512, "num_stages": 2},
                ["out_ptr", "in_ptr", "n_rows"], num_stages=2)
    assert code(rec.ptx_text()) == code(ck.asm["ptx"])
    assert rec.shared_bytes == ck.metadata.shared
    # the option given alone feeds the parameter too; conflicting values are an error
    args.pop("num_stages")
    assert capture(K.softmax_rows, [8], kwargs=args, num_stages=2).ptx_text() == rec.ptx_text()
    with pytest.raises(CaptureError, match="differ"):
        capture(K.softmax_rows, [8], kwargs={**args, "num_stages": 2}, num_stages=3)


def test_string_constexpr_and_defaults():
    x, y, o = Buf("bfloat16", [2500]), Buf("bfloat16", [2500]), Buf("bfloat16", [2500], "poison")
    rec = capture(K.axpby, [3], [x, y, o, 2500, 1.5, -0.5], ACT="leaky_relu")  # BLOCK from its default
    assert rec.source["constexprs"] == {"ACT": "leaky_relu", "BLOCK": 1024}
    ck = direct(K.axpby, {"x_ptr": "*bf16", "y_ptr": "*bf16", "out_ptr": "*bf16", "n": "i32", "alpha": "fp32",
                          "beta": "fp32"}, {"ACT": "leaky_relu", "BLOCK": 1024}, ["x_ptr", "y_ptr", "out_ptr"])
    assert code(rec.ptx_text()) == code(ck.asm["ptx"])
    plain = capture(K.axpby, [3], [x, y, o, 2500, 1.5, -0.5])       # ACT="none" default
    assert plain.source["constexprs"]["ACT"] == "none" and plain.ptx_text() != rec.ptx_text()


def test_dtype_constexpr_and_bf16_after_fp16():
    """A bf16 kernel captured right after an fp16 one keeps its own pointer types (no stale dtype ids)."""
    for dt, tdt in (("float16", tl.float16), ("bfloat16", tl.bfloat16)):
        b = [Buf(dt, [2, 64, 64]) for _ in range(4)]
        rec = capture(K.attn_rowblock, [1, 2], b + [64, 0.125], D=64, BM=64, BN=32, CAUSAL=False, DTYPE=tdt)
        assert ("bf16" in rec.ptx_text()) == (dt == "bfloat16")


def test_device_descriptors_get_global_scratch():
    a, b, c = Buf("float16", [128, 128]), Buf("float16", [256, 128]), Buf("float16", [128, 256], "poison")
    rec = capture(K.gemm_device_desc, [1, 2], [a, b, c, 128, 256, 128], num_warps=8, BM=128, BN=128, BK=64)
    ck = direct(K.gemm_device_desc, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32",
                                     "K": "i32"}, {"BM": 128, "BN": 128, "BK": 64},
                ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K"], num_warps=8)
    assert code(rec.ptx_text()) == code(ck.asm["ptx"])
    size = ck.metadata.global_scratch_size
    assert size >= 3 * 128
    assert rec.buffers["global_scratch"].shape == [2 * size] and rec.buffers["global_scratch"].init == "zeros"
    assert rec.params[-2].value == "global_scratch" and rec.params[-1].value is None
    assert "tensormap.replace.tile.global_address" in rec.ptx_text()


def test_warp_specialized_block_from_reqntid():
    a, b, c = Buf("float16", [256, 192]), Buf("float16", [256, 192]), Buf("float16", [256, 256], "poison")
    rec = capture(K.gemm_warp_spec, [2, 2], [a, b, c, 256, 256, 192], BM=128, BN=128, BK=64, STAGES=3)
    assert rec.source["num_warps"] == 4
    assert rec.block == [384, 1, 1] and ".reqntid 384" in rec.ptx_text()


def test_pointer_tables_and_extra_buffers():
    bufs = {f"{t}{j}": Buf("float16", [64, 64], "poison" if t == "c" else {"normal": 0.1}) for t in "abc"
            for j in range(2)}
    tabs = [Buf("uint64", [2], {"addresses": [f"{t}0", f"{t}1"]}) for t in "abc"]
    dims = Buf("int32", [6], {"values": [64, 64, 64, 64, 64, 64]})
    rec = capture(K.grouped_gemm, [2], tabs + [dims, 2], BM=64, BN=64, BK=32, extra_buffers=bufs)
    assert list(rec.buffers)[:4] == ["a_tab", "b_tab", "c_tab", "dims"] and "c1" in rec.buffers
    assert rec.buffers["a_tab"].init.addresses == ["a0", "a1"]


def test_capture_errors():
    x = Buf("float32", [16])
    with pytest.raises(CaptureError, match="missing arguments: n"):
        capture(K.axpby, [1], [x, x, x])
    with pytest.raises(CaptureError, match="unknown argument"):
        capture(K.axpby, [1], [x, x, x, 16, 1.0, 1.0], kwargs={"nope": 1})
    with pytest.raises(CaptureError, match="given twice"):
        capture(K.axpby, [1], [x, x, x, 16, 1.0, 1.0], kwargs={"n": 16})
    with pytest.raises(CaptureError, match="unknown launch option"):
        capture(K.axpby, [1], [x, x, x, 16, 1.0, 1.0], options={"num_wraps": 4})


def test_cli_string_tuple_and_tables(tmp_path):
    from warpgraph.cli.capture_cmd import parse_value, run_capture

    assert parse_value('"leaky_relu"', "-a") == "leaky_relu" and parse_value("silu", "-a") == "silu"
    assert parse_value("(64, (1, 'x'))", "-a") == (64, (1, "x")) and parse_value("tl.bfloat16", "-a") is tl.bfloat16
    v = parse_value("uint64[2]:addresses=a0,a1", "-a")
    assert v.init == {"addresses": ["a0", "a1"]}
    assert parse_value("int32[3]:values=1,2,3", "-a").init == {"values": [1, 2, 3]}
    assert parse_value("float32[4]:uniform=-1,1", "-a").init == {"uniform": [-1.0, 1.0]}
    src = K.__file__
    rec = run_capture(src + ":axpby", "3", ["n=2500", "x_ptr=bfloat16[2500]", "y_ptr=bfloat16[2500]",
                                            "out_ptr=bfloat16[2500]:poison", "alpha=1.5", "beta=-0.5",
                                            'ACT="leaky_relu"'], "sm_90a", None, None, str(tmp_path / "ax"), None)
    assert rec.source["constexprs"]["ACT"] == "leaky_relu" and rec.block == [128, 1, 1]
    rec = run_capture(src + ":softmax_rows", "8", ["out_ptr=float32[64,300]:poison", "in_ptr=float32[64,300]",
                                                   "n_rows=64", "n_cols=300", "row_stride=300", "BLOCK=512",
                                                   "num_stages=2"], "sm_90a", None, None, str(tmp_path / "sm"), None)
    assert rec.source["num_stages"] == 2
    args = ["a_tab=uint64[1]:addresses=a0", "b_tab=uint64[1]:addresses=b0", "c_tab=uint64[1]:addresses=c0",
            "dims_ptr=int32[3]:values=64,64,64", "n_groups=1", "BM=64", "BN=64", "BK=32"]
    rec = run_capture(src + ":grouped_gemm", "1", args, "sm_90a", None, None, str(tmp_path / "gg"), None,
                      buffers=["a0=float16[64,64]", "b0=float16[64,64]", "c0=float16[64,64]:poison"])
    assert set(rec.buffers) >= {"a0", "b0", "c0", "a_tab", "dims"}


@pytest.mark.parametrize("dt,tname", [("float16", "fp16"), ("float8_e4m3fn", "fp8e4nv")])
def test_host_descriptors_match_direct_compile(dt, tname):
    """Host TensorDescriptor args (5 params each) and the subtiled persistent epilogue / fp8 operands."""
    if dt == "float16":
        a, b, c = Buf(dt, [256, 128]), Buf(dt, [256, 128]), Buf(dt, [256, 256], "poison")
        rec = capture(K.gemm_persistent_tma, [3], [tensor_descriptor(a, [128, 64]), tensor_descriptor(b, [128, 64]),
                                                   tensor_descriptor(c, [128, 64]), 256, 256, 128],
                      num_warps=8, BM=128, BN=128, BK=64, GROUP=8, SUBTILE=True)
        sig = {"a_desc": f"tensordesc<{tname}[128,64]>", "b_desc": f"tensordesc<{tname}[128,64]>",
               "c_desc": f"tensordesc<{tname}[128,64]>", "M": "i32", "N": "i32", "K": "i32"}
        ck = direct(K.gemm_persistent_tma, sig, dict(BM=128, BN=128, BK=64, GROUP=8, SUBTILE=True),
                    ["M", "N", "K"], num_warps=8)
    else:
        a, b, c = Buf(dt, [128, 128]), Buf(dt, [256, 128]), Buf("bfloat16", [128, 256], "poison")
        rec = capture(K.gemm_fp8, [1, 2], [tensor_descriptor(a, [128, 64]), tensor_descriptor(b, [128, 64]), c,
                                           128, 256, 128, 0.25], num_warps=8, BM=128, BN=128, BK=64)
        sig = {"a_desc": f"tensordesc<{tname}[128,64]>", "b_desc": f"tensordesc<{tname}[128,64]>", "c_ptr": "*bf16",
               "M": "i32", "N": "i32", "K": "i32", "scale": "fp32"}
        ck = direct(K.gemm_fp8, sig, dict(BM=128, BN=128, BK=64), ["c_ptr", "M", "N", "K"], num_warps=8)
    assert code(rec.ptx_text()) == code(ck.asm["ptx"])
    tms = [p.value for p in rec.params if p.kind == "tensormap"]
    assert [t.box for t in tms] == [m["block_size"] for m in ck.metadata.tensordesc_meta]
    assert all(t.swizzle_bytes == {0: 0, 1: 32, 2: 64, 3: 128}[m["swizzle"]]
               for t, m in zip(tms, ck.metadata.tensordesc_meta))

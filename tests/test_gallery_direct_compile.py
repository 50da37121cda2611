"""Every gallery record's PTX (what ``capture`` wrote: tests/test_gallery_capture.py re-captures each one
identically) equals a direct ``triton.compile`` of the kernel with the signature a GPU launch of the case's
arguments specializes to, written out here from Triton's documented rules (minus .file lines and DWARF
sections, up to the barrier offsets Triton 3.6 permutes between fresh warp-specialized compiles:
tests/_ptx_compare.py; issue 17: "its PTX equals triton.compile's"): a pointer is ``*<dtype>`` with 16-byte
divisibility, an int is ``i32`` (``i64`` past 32 bits) with divisibility when a multiple of 16 and a constexpr
when it is 1, a float is ``fp32``, a host descriptor is ``tensordesc<dtype[block]>``, constexprs (and defaults)
are values."""
import json
from pathlib import Path

import pytest

triton = pytest.importorskip("triton")
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from _ptx_compare import same_code  # noqa: E402
from warpgraph.workloads.gallery import kernels as K  # noqa: E402
from warpgraph.workloads.gallery.cases import CASES, BufSpec, DescSpec  # noqa: E402

REC = Path(__file__).resolve().parent.parent / "workloads" / "gallery" / "records"
TL = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64", "int8": "i8", "int16": "i16",
      "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
      "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5"}
D16 = [["tt.divisibility", 16]]


def _launch_signature(fn, args):
    sig, cx, attrs = {}, {}, {}
    for i, p in enumerate(fn.params):
        if p.name not in args:
            assert p.has_default, p.name
            sig[p.name] = "constexpr"
            cx[(i,)] = p.default
            continue
        v = args[p.name]
        if p.is_constexpr:
            sig[p.name], cx[(i,)] = "constexpr", v
        elif isinstance(v, DescSpec):
            sig[p.name] = f"tensordesc<{TL[v.buf.dtype]}[{','.join(str(int(b)) for b in v.block)}]>"
        elif isinstance(v, BufSpec):
            sig[p.name], attrs[(i,)] = "*" + TL[v.dtype], D16
        elif isinstance(v, bool):
            sig[p.name] = "u1"
        elif isinstance(v, int):
            if v == 1:
                sig[p.name], cx[(i,)] = "constexpr", 1
            else:
                sig[p.name] = "i32" if -2**31 <= v < 2**31 else "i64"
                if v % 16 == 0:
                    attrs[(i,)] = D16
        elif isinstance(v, float):
            sig[p.name] = "fp32"
        else:
            raise AssertionError(f"{p.name}: no launch rule for {type(v).__name__}")
    return sig, cx, attrs


@pytest.mark.parametrize("name", sorted(CASES))
def test_gallery_ptx_equals_a_direct_compile(name):
    c = CASES[name]("small")
    fn = getattr(K, c.kernel)
    sig, cx, attrs = _launch_signature(fn, c.args)
    opts = {"num_warps": c.num_warps}
    if c.num_stages is not None:
        opts["num_stages"] = c.num_stages
    ck = triton.compile(ASTSource(fn, sig, cx, attrs), target=GPUTarget("cuda", 90, 32), options=opts)
    assert same_code((REC / name / "kernel.ptx").read_text(), ck.asm["ptx"])
    launch = json.loads((REC / name / "launch.json").read_text())
    assert launch["shared_bytes"] == ck.metadata.shared

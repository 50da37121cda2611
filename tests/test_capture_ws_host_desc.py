"""Host tensor descriptors in a warp-specialized loop (a GEMM and an attention of our own, beside the same
attention over device-built descriptors): Triton 3.6 splits the A tile (128x64) across the two
consumer warp groups into 64x64 TMA copies (8 KB ``expect_tx`` each) but its metadata keeps the 128x64 box
(triton-lang/triton#11587). capture records the box the PTX copies, so the record runs and computes A @ B^T
(with the metadata box the functional pass deadlocked on the over-filled barrier)."""
import re

import numpy as np
import pytest

triton = pytest.importorskip("triton")
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from _ptx_compare import same_code  # noqa: E402
from warpgraph.workloads.triton_capture import Buf, CaptureError, _copied_box, capture, tensor_descriptor  # noqa
from warpgraph.workloads.triton_tma_boxes import host_desc_copy_shapes  # noqa: E402


@triton.jit
def ws_host_desc_gemm(a_desc, b_desc, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                      STAGES: tl.constexpr):
    """C [M, N] fp16 = A [M, K] @ B [N, K]^T over host descriptors, the K loop warp-specialized."""
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BK), num_stages=STAGES, warp_specialize=True):
        acc = tl.dot(a_desc.load([pm * BM, k * BK]), b_desc.load([pn * BN, k * BK]).T, acc)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def ws_attn(q_desc, k_desc, v_desc, o_ptr, seq, scale, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                 DEVICE: tl.constexpr):
    """Attention over descriptors of [B*H*seq, D] rows, the K/V loop warp-specialized; with DEVICE the
    descriptors are built on the device from the three pointers (global scratch + tensormap.replace). The body
    is written out here: moved into a @triton.jit helper, Triton 3.6 adds the second consumer's 64-row offset
    twice to the epilogue's store addresses, and the functional pass stops at the first store past ``o``."""
    if DEVICE:
        q_desc = tl.make_tensor_descriptor(q_desc, shape=[seq * tl.num_programs(1), D], strides=[D, 1],
                                           block_shape=[BM, D])
        k_desc = tl.make_tensor_descriptor(k_desc, shape=[seq * tl.num_programs(1), D], strides=[D, 1],
                                           block_shape=[BN, D])
        v_desc = tl.make_tensor_descriptor(v_desc, shape=[seq * tl.num_programs(1), D], strides=[D, 1],
                                           block_shape=[BN, D])
    pm = tl.program_id(0)
    bh = tl.program_id(1)
    q = q_desc.load([bh * seq + pm * BM, 0])
    m_i = tl.full((BM,), float("-inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for n in tl.range(0, seq, BN, warp_specialize=True):
        s = tl.dot(q, k_desc.load([bh * seq + n, 0]).T) * scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v_desc.load([bh * seq + n, 0]))
        m_i = m_new
    rm = pm * BM + tl.arange(0, BM)
    tl.store(o_ptr + (bh * seq + rm)[:, None] * D + tl.arange(0, D)[None, :], (acc / l_i[:, None]).to(tl.float16))

def test_ws_host_descriptor_box_follows_the_split_copies_and_runs():
    from warpgraph.workloads.functional import run_functional
    from warpgraph.workloads.references import to_float64

    m, n, k = 256, 256, 192
    a, b = Buf("float16", [m, k], {"normal": 0.1}), Buf("float16", [n, k], {"normal": 0.1})
    c = Buf("float16", [m, n], "poison")
    with pytest.warns(UserWarning, match=r"a_desc: .*128x64 box .* copies 64x64 tiles .*triton#11587"):
        rec = capture(ws_host_desc_gemm, [2, 2], [tensor_descriptor(a, [128, 64]), tensor_descriptor(b, [128, 64]),
                                                  c, m, n, k], BM=128, BN=128, BK=64, STAGES=3)
    # the same PTX as a direct compile, whose metadata box for A is the unsplit 128x64
    sig = {"a_desc": "tensordesc<fp16[128,64]>", "b_desc": "tensordesc<fp16[128,64]>", "c_ptr": "*fp16",
           "M": "i32", "N": "i32", "K": "i32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr",
           "STAGES": "constexpr"}
    ck = triton.compile(ASTSource(ws_host_desc_gemm, sig, {(6,): 128, (7,): 128, (8,): 64, (9,): 3},
                                  {(2,): [["tt.divisibility", 16]], (3,): [["tt.divisibility", 16]],
                                   (4,): [["tt.divisibility", 16]], (5,): [["tt.divisibility", 16]]}),
                        target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_stages": 3})
    assert same_code(rec.ptx_text(), ck.asm["ptx"])     # up to Triton's barrier-offset nondeterminism
    assert [t["block_size"] for t in ck.metadata.tensordesc_meta] == [[128, 64], [128, 64]]
    tms = [p.value for p in rec.params if p.kind == "tensormap"]
    assert [t.box for t in tms] == [[64, 64], [128, 64]] and rec.block == [384, 1, 1]
    assert re.search(r"expect_tx\.shared\.b64 _, \[%r\d+\], 8192;", rec.ptx_text())  # an A half: 64 x 64 x 2 B

    out = run_functional(rec, want_trace=False).outputs
    av, bv = to_float64(out["a"], "float16"), to_float64(out["b"], "float16")
    ref = av @ bv.T
    got = to_float64(out["c"], "float16")
    assert np.isfinite(got).all()
    assert np.abs(got - ref).max() <= 1e-2 * np.abs(ref).max()
    from warpgraph.runner.simulate import simulate

    assert simulate(rec, "h200").metrics["cycles"] > 1000      # the timing pass's barriers complete too


def test_copy_shapes_follow_descriptors_into_partitions():
    """A descriptor captured by a ``ttg.warp_specialize`` partition is followed by operand position; device
    descriptors (not function arguments) and the barrier operand are not counted."""
    ttgir = "\n".join([
        "tt.func public @k(%x_desc: !tt.tensordesc<tensor<128x64xf16, #shared>> loc(\"x_desc\"(#loc)), "
        "%x_desc_0: i32, %y_desc: !tt.tensordesc<tensor<64x32xbf16, #shared>> loc(\"y\"), %p: !tt.ptr<f16>) {",
        "  %d = tt.make_tensor_descriptor %p : !tt.tensordesc<tensor<32x32xf16, #shared>>",
        "  ttg.warp_specialize(%y_desc, %x_desc, %3) attributes {requestedRegisters = array<i32: 232>}",
        "  default {",
        "    ttng.async_tma_copy_global_to_local %d[%a] %5, %6, %true : !tt.tensordesc<tensor<32x32xf16, #shared>>,"
        " !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<16x32xf16, #shared, #smem, mutable>",
        "  partition0(%arg5: !tt.tensordesc<tensor<64x32xbf16, #shared>> loc(\"f.py\":5:0), "
        "%arg6: !tt.tensordesc<tensor<128x64xf16, #shared>> loc(\"f.py\":5:0), %arg7: i32) num_warps(1) {",
        "    ttng.async_tma_copy_global_to_local %arg6[%a, %b] %5, %6, %true : !tt.tensordesc<tensor<128x64xf16, "
        "#shared>>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem>",
        "    ttng.async_tma_copy_local_to_global %arg5[%a, %b] %7 : !tt.tensordesc<tensor<64x32xbf16, #shared>>, "
        "!ttg.memdesc<64x32xbf16, #shared, #smem>",
    ])
    assert host_desc_copy_shapes(ttgir) == [((128, 64), {(64, 64)}), ((64, 32), {(64, 32)})]


def test_copies_of_several_sizes_through_one_host_descriptor_are_refused():
    # a 128x128 store tile copied through a 128x64 swizzle-span box (two copies, as Triton's TMA lowering
    # splits it) is the metadata's own case; a split warp-specialized tile of 128x128 clamps the same way
    assert _copied_box("c_desc", [128, 64], (128, 128), {(128, 128)}) == [128, 64]
    assert _copied_box("a_desc", [128, 64], (128, 64), set()) == [128, 64]
    with pytest.warns(UserWarning, match="the record uses the 64x64 box"):
        assert _copied_box("c_desc", [128, 64], (128, 128), {(64, 128)}) == [64, 64]
    with pytest.raises(CaptureError, match=r"a_desc: .*64x64 and 128x64 boxes.*triton#11587") as e:
        _copied_box("a_desc", [128, 64], (128, 64), {(64, 64), (128, 64)})
    assert "tl.make_tensor_descriptor" in e.value.hint


@pytest.mark.parametrize("where", ["host", "device"])
def test_ws_attention_with_host_or_device_descriptors_runs(where):
    """Warp-specialized attention (1 producer + 2 consumer warp groups): with host descriptors Triton splits the
    128-row Q tile (its box follows the copies, as above); with device descriptors the kernel builds the boxes.
    Both records compute softmax(Q K^T / 8) V."""
    import warnings

    from warpgraph.workloads.functional import run_functional
    from warpgraph.workloads.references import to_float64

    bh, seq, d = 2, 256, 64
    q, k, v = (Buf("float16", [bh * seq, d], {"normal": 0.5}) for _ in range(3))
    o = Buf("float16", [bh * seq, d], "poison")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        if where == "host":
            rec = capture(ws_attn, [seq // 128, bh], [tensor_descriptor(q, [128, d]),
                          tensor_descriptor(k, [64, d]), tensor_descriptor(v, [64, d]), o, seq, 0.125],
                          D=d, BM=128, BN=64, DEVICE=False,
                          buffer_names={"q_desc": "q", "k_desc": "k", "v_desc": "v"})
            assert [p.value.box for p in rec.params if p.kind == "tensormap"] == [[64, 64], [64, 64], [64, 64]]
            assert any("q_desc" in str(x.message) for x in w)
        else:
            rec = capture(ws_attn, [seq // 128, bh], [q, k, v, o, seq, 0.125], D=d, BM=128, BN=64, DEVICE=True,
                          buffer_names={"q_desc": "q", "k_desc": "k", "v_desc": "v"})
            assert "global_scratch" in rec.buffers and "tensormap.replace" in rec.ptx_text()
    assert rec.block == [384, 1, 1]
    out = run_functional(rec, want_trace=False).outputs
    qv, kv, vv = (to_float64(out[n], "float16").reshape(bh, seq, d) for n in "qkv")
    s = qv @ kv.transpose(0, 2, 1) * 0.125
    p = np.exp(s - s.max(-1, keepdims=True))
    ref = (p / p.sum(-1, keepdims=True)) @ vv
    got = to_float64(out["o"], "float16").reshape(bh, seq, d)
    assert np.abs(got - ref).max() <= 1e-2 * np.abs(ref).max()

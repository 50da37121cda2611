"""Functional tcgen05 + TMEM (sm_100a): hand-written kernels per MMA kind against numpy, the descriptor decoders,
Triton 3.6 records against their numpy references, and clear errors for the variants that are not modelled."""
import shutil
from pathlib import Path

import numpy as np
import pytest

from warpgraph.core.errors import PTXError, SimulationError, UserError
from warpgraph.workloads.functional import run_functional
from warpgraph.workloads.functional.tcgen05_ops import decode_idesc, decode_smem_desc
from warpgraph.workloads.record import load_record, record_from_dict

RECORDS = Path(__file__).resolve().parents[1] / "workloads" / "records"

# one MMA: M = 128, N = 16, K = 32 bytes of each row (16 f16 / 8 tf32 / 32 fp8 or s8 elements)
M, N = 128, 16
_KIND = {"f16": ("f16", 16, 0), "bf16": ("f16", 16, 1), "tf32": ("tf32", 8, 2), "e4m3": ("f8f6f4", 32, 0),
         "e5m2": ("f8f6f4", 32, 1), "s8": ("i8", 32, 1)}


def _kmajor_image(bits: np.ndarray, eb: int) -> np.ndarray:
    """Shared-memory bytes of a K-major, non-swizzled canonical tile (rows x 32 bytes): 8-row x 16-byte core
    matrices, LBO = 128 between the two along K, SBO = 256 between 8-row groups (written out independently of
    the simulator's address code)."""
    rows, k = bits.shape
    T = 16 // eb
    img = np.zeros(rows // 8 * 256, np.uint8)
    for i in range(rows):
        for kk in range(k):
            a = (i % 8) * 16 + (i // 8) * 256 + (kk % T) * eb + (kk // T) * 128
            img[a:a + eb] = np.frombuffer(int(bits[i, kk]).to_bytes(eb, "little"), np.uint8)
    return img


def _desc(start: int) -> int:
    return (start >> 4) | (128 >> 4) << 16 | (256 >> 4) << 32 | 1 << 46


def _idesc(dfmt: int, afmt: int, neg_a=0) -> int:
    return dfmt << 4 | afmt << 7 | afmt << 10 | neg_a << 13 | (N >> 3) << 17 | (M >> 4) << 24


def _operands(etype, rng):
    """(A bits (M, K), B bits (N, K), A values, B values, element bytes) drawn exactly representable."""
    _, K, _ = _KIND[etype]
    if etype in ("f16", "bf16", "tf32"):
        a = rng.normal(size=(M, K)).astype(np.float32)
        b = rng.normal(size=(N, K)).astype(np.float32)
        if etype == "f16":
            a, b = a.astype(np.float16), b.astype(np.float16)
            return a.view(np.uint16), b.view(np.uint16), a.astype(np.float64), b.astype(np.float64), 2
        keep = np.uint32(0xFFFF0000) if etype == "bf16" else np.uint32(0xFFFFE000)
        a, b = (a.view(np.uint32) & keep).view(np.float32), (b.view(np.uint32) & keep).view(np.float32)
        if etype == "bf16":
            return (a.view(np.uint32) >> 16), (b.view(np.uint32) >> 16), a.astype(np.float64), b.astype(np.float64), 2
        return a.view(np.uint32), b.view(np.uint32), a.astype(np.float64), b.astype(np.float64), 4
    if etype == "s8":
        a = rng.integers(-128, 128, size=(M, K)).astype(np.int8)
        b = rng.integers(-128, 128, size=(N, K)).astype(np.int8)
        return a.view(np.uint8), b.view(np.uint8), a.astype(np.float64), b.astype(np.float64), 1
    # fp8: sign, exponent and mantissa drawn in the normal range, value from the format's definition
    eb_, mb, bias = (4, 3, 7) if etype == "e4m3" else (5, 2, 15)

    def draw(shape):
        s = rng.integers(0, 2, size=shape)
        e = rng.integers(bias - 3, bias + 3, size=shape)
        m = rng.integers(0, 1 << mb, size=shape)
        return (s << 7 | e << mb | m).astype(np.uint8), (1 - 2 * s) * (1 + m / (1 << mb)) * 2.0 ** (e - bias)
    ab, av = draw((M, K))
    bb, bv = draw((N, K))
    return ab, bb, av, bv, 1


def _kernel(kind: str, idesc: int, mods: str = "") -> str:
    """128 threads: copy the A / B images into shared memory, warp 0 allocates 64 TMEM columns, thread 0 issues
    D = A B^T then D += A B^T and commits to an mbarrier, every warp loads its 32 lanes (x16 columns) and
    stores them, warp 0 frees the columns."""
    return f"""
.version 8.7
.target sm_100a
.address_size 64
.extern .shared .align 1024 .b8 smem[];
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pout)
{{
 .reg .pred %p<8>;
 .reg .b32 %r<140>;
 .reg .b64 %rd<32>;
 ld.param.u64 %rd1, [pa];
 ld.param.u64 %rd2, [pb];
 ld.param.u64 %rd3, [pout];
 mov.u32 %r1, %tid.x;
 mov.u32 %r6, smem;
 shl.b32 %r3, %r1, 4;
 setp.ge.u32 %p1, %r3, 4096;
 @%p1 bra SKIPA;
 cvt.u64.u32 %rd4, %r3;
 add.s64 %rd5, %rd1, %rd4;
 ld.global.v4.b32 {{%r10, %r11, %r12, %r13}}, [%rd5];
 add.u32 %r5, %r6, %r3;
 st.shared.v4.b32 [%r5+1024], {{%r10, %r11, %r12, %r13}};
 add.u32 %r4, %r3, 2048;
 cvt.u64.u32 %rd4, %r4;
 add.s64 %rd5, %rd1, %rd4;
 ld.global.v4.b32 {{%r10, %r11, %r12, %r13}}, [%rd5];
 st.shared.v4.b32 [%r5+3072], {{%r10, %r11, %r12, %r13}};
SKIPA:
 setp.ge.u32 %p1, %r3, 512;
 @%p1 bra SKIPB;
 cvt.u64.u32 %rd4, %r3;
 add.s64 %rd5, %rd2, %rd4;
 ld.global.v4.b32 {{%r10, %r11, %r12, %r13}}, [%rd5];
 add.u32 %r5, %r6, %r3;
 st.shared.v4.b32 [%r5+5120], {{%r10, %r11, %r12, %r13}};
SKIPB:
 setp.lt.u32 %p2, %r1, 32;
 @%p2 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r6], 64;
 setp.eq.u32 %p3, %r1, 0;
 add.u32 %r9, %r6, 8;
 @%p3 mbarrier.init.shared::cta.b64 [%r9], 1;
 fence.proxy.async.shared::cta;
 bar.sync 0;
 ld.shared.b32 %r7, [smem];
 @%p2 tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
 tcgen05.fence::after_thread_sync;
 mov.b64 %rd6, {_desc(1024)};
 mov.b64 %rd7, {_desc(5120)};
 mov.b32 %r8, {idesc};
 setp.ne.u32 %p5, %r1, %r1;
 setp.eq.u32 %p6, %r1, %r1;
 @%p3 tcgen05.mma.cta_group::1.kind::{kind}{mods} [%r7], %rd6, %rd7, %r8, %p5;
 @%p3 tcgen05.mma.cta_group::1.kind::{kind}{mods} [%r7], %rd6, %rd7, %r8, %p6;
 cvt.u64.u32 %rd8, %r9;
 @%p3 tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%rd8];
WAIT:
 mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r9], 0;
 @!%p4 bra WAIT;
 tcgen05.fence::after_thread_sync;
 shr.u32 %r20, %r1, 5;
 shl.b32 %r21, %r20, 21;
 add.u32 %r22, %r7, %r21;
 tcgen05.ld.sync.aligned.32x32b.x16.b32 {{%r100, %r101, %r102, %r103, %r104, %r105, %r106, %r107, %r108, %r109, %r110, %r111, %r112, %r113, %r114, %r115}}, [%r22];
 tcgen05.wait::ld.sync.aligned;
 mul.wide.u32 %rd9, %r1, 64;
 add.s64 %rd10, %rd3, %rd9;
 st.global.v4.b32 [%rd10], {{%r100, %r101, %r102, %r103}};
 st.global.v4.b32 [%rd10+16], {{%r104, %r105, %r106, %r107}};
 st.global.v4.b32 [%rd10+32], {{%r108, %r109, %r110, %r111}};
 st.global.v4.b32 [%rd10+48], {{%r112, %r113, %r114, %r115}};
 tcgen05.fence::before_thread_sync;
 bar.sync 0;
 @%p2 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r7, 64;
 ret;
}}
"""


def _record(ptx, a_img, b_img):
    bufs = {"a": {"dtype": "uint8", "shape": [a_img.size], "init": {"values": a_img.tolist()}},
            "b": {"dtype": "uint8", "shape": [b_img.size], "init": {"values": b_img.tolist()}},
            "out": {"dtype": "uint32", "shape": [M, N], "init": "zeros"}}
    return record_from_dict({"format": "launch-record/1", "name": "tc05", "entry": "k", "grid": [1, 1, 1],
                             "block": [128, 1, 1], "shared_bytes": 8192, "buffers": bufs,
                             "params": [{"ptr": "a"}, {"ptr": "b"}, {"ptr": "out"}]}, ptx_text=ptx)


def _case(etype, seed=0, neg_a=0):
    kind, K, afmt = _KIND[etype]
    ab, bb, av, bv, eb = _operands(etype, np.random.default_rng(seed))
    dfmt = 2 if kind == "i8" else 1
    return _record(_kernel(kind, _idesc(dfmt, afmt, neg_a)), _kmajor_image(ab, eb), _kmajor_image(bb, eb)), av, bv


@pytest.mark.parametrize("etype", ["f16", "bf16", "tf32", "e4m3", "e5m2", "s8"])
def test_tcgen05_mma_kinds_match_numpy(etype):
    rec, av, bv = _case(etype)
    res = run_functional(rec, want_trace=False)
    out = res.outputs["out"]
    ref = 2 * (av @ bv.T)               # D = A B^T (enable-input-d false), then D += A B^T
    if etype == "s8":
        assert np.array_equal(out.view(np.int32).astype(np.int64), ref.astype(np.int64))
    else:
        got = out.view(np.float32).astype(np.float64)
        assert np.abs(got - ref).max() <= 1e-5 * max(1.0, np.abs(ref).max())
        assert np.abs(ref).max() > 1.0          # a real product, not zeros


def test_tcgen05_negate_a_from_descriptor():
    rec, av, bv = _case("f16", seed=3, neg_a=1)
    got = run_functional(rec, want_trace=False).outputs["out"].view(np.float32)
    assert np.allclose(got, -2 * (av @ bv.T), rtol=1e-5, atol=1e-5)


def test_descriptor_decoders_triton_values():
    # values Triton 3.6 emits for a 128x128x16 f16 -> f32 MMA with 128-byte swizzled K-major operands
    f = decode_idesc(136314896, "f16")
    assert (f["m"], f["n"], f["dtype"], f["atype"], f["btype"]) == (128, 128, "f32", "f16", "f16")
    assert f["a_mn_major"] == f["b_mn_major"] == 0
    d = decode_smem_desc(4611756662049472512)
    assert d == {"start": 0, "lbo": 0, "sbo": 1024, "swizzle": 128}
    with pytest.raises(SimulationError, match="sparsity"):
        decode_idesc(136314896 | 4, "f16")
    with pytest.raises(SimulationError, match="32-byte atoms"):
        decode_smem_desc((1 << 46) | (1 << 61))


def test_trace_payload_of_tcgen05():
    rec, _, _ = _case("f16")
    res = run_functional(rec)
    tr = res.trace
    prog = tr.program
    ws = tr.warp_stream(0)
    kinds = [prog.instructions[p].kind.name for p in ws.pc]
    mma = [i for i, k in enumerate(kinds) if k == "TC05_MMA"]
    assert len(mma) == 2 and all(ws.a0[i] == 2 * M * N * 16 for i in mma)
    ld = kinds.index("TC05_LD")
    assert ws.a0[ld] == 32 * 16 * 4                                  # one warp's 32 lanes x 16 columns
    al = kinds.index("TC05_ALLOC")
    assert ws.a0[al] == 64


def _variant(ptx, old, new):
    assert old in ptx
    return ptx.replace(old, new)


@pytest.mark.parametrize("old,new,what", [
    ("tcgen05.mma.cta_group::1.kind::f16 [%r7], %rd6, %rd7, %r8, %p5", "tcgen05.mma.cta_group::2.kind::f16 [%r7], "
     "%rd6, %rd7, %r8, %p5", "cta_group::2"),
    ("tcgen05.ld.sync.aligned.32x32b.x16.b32", "tcgen05.ld.sync.aligned.16x64b.x16.b32", "16x64b"),
    ("tcgen05.ld.sync.aligned.32x32b.x16.b32", "tcgen05.ld.sync.aligned.32x32b.x16.pack::16b.b32", "pack::16b"),
    ("tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%rd8]",
     "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%rd8], %r9",
     "multicast"),
    ("kind::f16 [%r7], %rd6, %rd7, %r8, %p5", "kind::f16.ws [%r7], %rd6, %rd7, %r8, %p5", "ws"),
])
def test_unsupported_tcgen05_variant_names_the_ptx_line(old, new, what):
    rec, _, _ = _case("f16")
    ptx = _variant(rec.ptx_text(), old, new)
    line = next(i + 1 for i, t in enumerate(ptx.split("\n")) if new.split(" [")[0] in t)
    bad = _record(ptx, np.zeros(4096, np.uint8), np.zeros(512, np.uint8))
    with pytest.raises(UserError) as ei:
        run_functional(bad, want_trace=False)
    msg = str(ei.value) + str(getattr(ei.value, "location", ""))
    assert what in msg and f":{line}" in msg


def test_tmem_columns_not_allocated_is_a_fault():
    rec, _, _ = _case("f16")
    ptx = rec.ptx_text().replace("[%r7], %rd6, %rd7, %r8, %p5", "[%r7+64], %rd6, %rd7, %r8, %p5")
    with pytest.raises(SimulationError, match="not allocated"):
        run_functional(_record(ptx, np.zeros(4096, np.uint8), np.zeros(512, np.uint8)), want_trace=False)


@pytest.mark.parametrize("name", ["gemm_tma_s_M256_N256_K256", "attn_tma_s_BH2_S256_D64",
                                  "gemm_tma_s_bm64_M256_N256_K256", "attn_tma_s_bm64_BH2_S256_D64_causal",
                                  "gemm_tma_s_tf32_M256_N256_K256", "gemm_tma_s_fp8_M256_N256_K256"])
def test_triton_sm100a_records_match_reference(name):
    from warpgraph.workloads.references import check

    rec = load_record(RECORDS / "b200" / name)
    kind = {"tf32": "kind::tf32", "fp8": "kind::f8f6f4"}.get(name.split("_")[3], "kind::f16")
    assert f"tcgen05.mma.cta_group::1.{kind}" in rec.ptx_text() and rec.source.get("target") == "sm_100a"
    res = run_functional(rec, want_trace=False)
    r = check(rec, res.outputs)
    assert r.ok, r


def test_triton_fa_uses_a_from_tmem():
    # the P @ V product of the FA record reads P from TMEM ([a-tmem] operand): that path is what it checks
    ptx = (RECORDS / "b200" / "attn_tma_s_BH2_S256_D64" / "kernel.ptx").read_text()
    assert any("tcgen05.mma" in ln and ln.count("[") == 2 for ln in ptx.split("\n"))


def test_record_copy_roundtrip(tmp_path):
    # a copied record (user clone) runs the same: nothing read outside the folder
    dst = tmp_path / "r"
    shutil.copytree(RECORDS / "b200" / "gemm_tma_s_M256_N256_K256", dst)
    rec = load_record(dst)
    out = run_functional(rec, want_trace=False).outputs["c"]
    assert not np.isnan(out.astype(np.float32)).any()


_CP_KERNEL = """
.version 8.7
.target sm_100a
.address_size 64
.extern .shared .align 1024 .b8 smem[];
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pout)
{
 .reg .pred %p<8>;
 .reg .b32 %r<140>;
 .reg .b64 %rd<32>;
 ld.param.u64 %rd1, [pa];
 ld.param.u64 %rd3, [pout];
 mov.u32 %r1, %tid.x;
 mov.u32 %r6, smem;
 shl.b32 %r3, %r1, 4;
 cvt.u64.u32 %rd4, %r3;
 add.s64 %rd5, %rd1, %rd4;
 ld.global.v4.b32 {%r10, %r11, %r12, %r13}, [%rd5];
 add.u32 %r5, %r6, %r3;
 st.shared.v4.b32 [%r5+1024], {%r10, %r11, %r12, %r13};
 ld.global.v4.b32 {%r10, %r11, %r12, %r13}, [%rd5+2048];
 st.shared.v4.b32 [%r5+3072], {%r10, %r11, %r12, %r13};
 setp.lt.u32 %p2, %r1, 32;
 @%p2 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r6], 32;
 setp.eq.u32 %p3, %r1, 0;
 add.u32 %r9, %r6, 8;
 @%p3 mbarrier.init.shared::cta.b64 [%r9], 1;
 fence.proxy.async.shared::cta;
 bar.sync 0;
 ld.shared.b32 %r7, [smem];
 mov.b64 %rd6, DESC;
 cvt.u64.u32 %rd8, %r9;
 @%p3 tcgen05.cp.cta_group::1.128x256b [%r7], %rd6;
 @%p3 tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%rd8];
W0:
 mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r9], 0;
 @!%p4 bra W0;
 shr.u32 %r20, %r1, 5;
 shl.b32 %r21, %r20, 21;
 add.u32 %r22, %r7, %r21;
 tcgen05.ld.sync.aligned.32x32b.x8.b32 {%r100, %r101, %r102, %r103, %r104, %r105, %r106, %r107}, [%r22];
 tcgen05.wait::ld.sync.aligned;
 mul.wide.u32 %rd9, %r1, 64;
 add.s64 %rd10, %rd3, %rd9;
 st.global.v4.b32 [%rd10], {%r100, %r101, %r102, %r103};
 st.global.v4.b32 [%rd10+16], {%r104, %r105, %r106, %r107};
 tcgen05.fence::before_thread_sync;
 bar.sync 0;
 @%p3 tcgen05.shift.cta_group::1.down [%r7];
 @%p3 tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%rd8];
W1:
 mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r9], 1;
 @!%p4 bra W1;
 tcgen05.ld.sync.aligned.32x32b.x8.b32 {%r100, %r101, %r102, %r103, %r104, %r105, %r106, %r107}, [%r22];
 tcgen05.wait::ld.sync.aligned;
 st.global.v4.b32 [%rd10+32], {%r100, %r101, %r102, %r103};
 st.global.v4.b32 [%rd10+48], {%r104, %r105, %r106, %r107};
 bar.sync 0;
 @%p2 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r7, 32;
 ret;
}
"""


def test_tcgen05_cp_and_shift():
    """tcgen05.cp.128x256b puts row r's 8 words (canonical K-major layout in shared memory) in TMEM lane r;
    tcgen05.shift.down moves lanes 0..126 one lane down."""
    words = np.random.default_rng(5).integers(0, 2**32, size=(128, 8), dtype=np.uint64).astype(np.uint32)
    rec = _record(_CP_KERNEL.replace("DESC", str(_desc(1024))), _kmajor_image(words, 4), np.zeros(512, np.uint8))
    out = run_functional(rec, want_trace=False).outputs["out"]
    assert np.array_equal(out[:, :8], words)
    assert np.array_equal(out[1:, 8:16], words[:-1])

"""Functional executor on small hand-written kernels: ALU semantics, divergence, collectives, memory, faults."""
import numpy as np
import pytest

from warpgraph.core.errors import PTXError, SimulationError
from warpgraph.workloads.functional import run_functional
from warpgraph.workloads.record import record_from_dict

HEAD = ".version 8.7\n.target sm_90a\n.address_size 64\n"


def run(body, *, regs="", params=("out",), grid=(1, 1, 1), block=(64, 1, 1), out_shape=(64, 16),
        out_dtype="uint32", extra_buffers=None, extra_params=(), shared=0, **kw):
    plist = ",\n".join([f".param .u64 k_p{i}" for i in range(len(params))]
                       + [f".param .u32 k_q{i}" for i in range(len(extra_params))])
    ptx = HEAD + ".extern .shared .align 16 .b8 smem[];\n" + f".visible .entry k({plist})\n{{\n" + \
        " .reg .pred %p<8>;\n .reg .b16 %h<8>;\n .reg .b32 %r<64>;\n .reg .b64 %rd<16>;\n .reg .f32 %f<32>;\n" + regs + \
        " ld.param.u64 %rd1, [k_p0];\n mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %ntid.x;\n" + \
        " mad.lo.s32 %r4, %r2, %r3, %r1;\n mul.wide.u32 %rd2, %r4, 64;\n add.s64 %rd3, %rd1, %rd2;\n" + body + \
        "\n ret;\n}\n"
    bufs = {"out": {"dtype": out_dtype, "shape": list(out_shape), "init": "zeros"}}
    bufs.update(extra_buffers or {})
    rec = record_from_dict({"format": "launch-record/1", "name": "t", "entry": "k", "grid": list(grid),
                            "block": list(block), "shared_bytes": shared, "buffers": bufs,
                            "params": [{"ptr": p} for p in params] + [{"u32": v} for v in extra_params]},
                           ptx_text=ptx)
    return run_functional(rec, **kw)


def st(k, reg):
    return f" st.global.b32 [%rd3+{4 * k}], {reg};\n"


def test_integer_ops():
    body = (" sub.s32 %r5, 10, %r1;\n" + st(0, "%r5") +
            " mul.lo.s32 %r6, %r5, -3;\n" + st(1, "%r6") +
            " div.s32 %r7, %r6, 4;\n" + st(2, "%r7") +
            " rem.s32 %r8, %r6, 4;\n" + st(3, "%r8") +
            " shr.s32 %r9, %r6, 2;\n" + st(4, "%r9") +
            " shl.b32 %r10, %r1, 27;\n" + st(5, "%r10") +
            " bfe.u32 %r11, %r1, 2, 3;\n" + st(6, "%r11") +
            " bfe.s32 %r12, %r6, 1, 4;\n" + st(7, "%r12") +
            " mul.hi.u32 %r13, %r10, 1000000;\n" + st(8, "%r13") +
            " min.s32 %r14, %r6, -20;\n" + st(9, "%r14") +
            " xor.b32 %r15, %r1, 0xF0;\n" + st(10, "%r15") +
            " prmt.b32 %r16, %r10, %r1, 0x3210;\n" + st(11, "%r16") +
            " popc.b32 %r17, %r1;\n" + st(12, "%r17") +
            " selp.b32 %r18, 7, 9, %p1;\n setp.lt.u32 %p1, %r1, 5;\n selp.b32 %r18, 7, 9, %p1;\n" + st(13, "%r18") +
            " shr.u32 %r19, %r1, 40;\n" + st(14, "%r19") +
            " and.b32 %r20, %r1, 3;\n setp.eq.s32 %p2, %r20, 0;\n not.pred %p3, %p2;\n selp.b32 %r21, 1, 0, %p3;\n" +
            st(15, "%r21"))
    out = run(body).outputs["out"].astype(np.int64)
    t = np.arange(64, dtype=np.int64)
    w = lambda x: np.asarray(x, np.int64) & 0xFFFFFFFF  # noqa: E731
    r5 = 10 - t
    r6 = r5 * -3
    assert (out[:, 0] == w(r5)).all() and (out[:, 1] == w(r6)).all()
    assert (out[:, 2] == w(np.trunc(r6 / 4))).all()
    assert (out[:, 3] == w(r6 - np.trunc(r6 / 4) * 4)).all()
    assert (out[:, 4] == w(r6 >> 2)).all()
    r10 = (t << 27) & 0xFFFFFFFF
    assert (out[:, 5] == r10).all()
    assert (out[:, 6] == (t >> 2) & 7).all()
    f = (w(r6) >> 1) & 0xF
    assert (out[:, 7] == w(np.where(f & 8, f - 16, f))).all()
    assert (out[:, 8] == (r10 * 1000000) >> 32).all()
    assert (out[:, 9] == w(np.minimum(r6, -20))).all()
    assert (out[:, 10] == t ^ 0xF0).all()
    assert (out[:, 11] == r10).all()
    assert (out[:, 12] == [bin(x).count("1") for x in t]).all()
    assert (out[:, 13] == np.where(t < 5, 7, 9)).all()
    assert (out[:, 14] == 0).all()
    assert (out[:, 15] == (t % 4 != 0)).all()


def test_float_ops_and_conversions():
    body = (" cvt.rn.f32.s32 %f1, %r1;\n"
            " mul.f32 %f2, %f1, 0f3E800000;\n" + st(0, "%f2") +             # t * 0.25
            " fma.rn.f32 %f3, %f2, %f2, 0fBF800000;\n" + st(1, "%f3") +      # x^2 - 1
            " ex2.approx.ftz.f32 %f4, %f2;\n" + st(2, "%f4") +
            " sqrt.approx.f32 %f5, %f1;\n" + st(3, "%f5") +
            " div.full.f32 %f6, %f1, 0f40400000;\n" + st(4, "%f6") +
            " cvt.rni.s32.f32 %r5, %f6;\n" + st(5, "%r5") +
            " cvt.rzi.s32.f32 %r6, %f6;\n" + st(6, "%r6") +
            " cvt.rn.f16x2.f32 %r7, %f2, %f1;\n" + st(7, "%r7") +
            " mov.b32 {%h1, %h2}, %r7;\n cvt.f32.f16 %f7, %h2;\n" + st(8, "%f7") +
            " max.f32 %f8, %f3, 0f00000000;\n" + st(9, "%f8") +
            " neg.f32 %f9, %f2;\n" + st(10, "%f9") +
            " cvt.sat.f32.f32 %f10, %f2;\n" + st(11, "%f10") +
            " setp.gt.f32 %p1, %f2, 0f40000000;\n selp.f32 %f11, 0f3F800000, 0f00000000, %p1;\n" + st(12, "%f11") +
            " cvt.rn.bf16x2.f32 %r8, %f1, %f2;\n" + st(13, "%r8") +
            " rcp.approx.f32 %f12, %f1;\n" + st(14, "%f12") +
            " mov.b32 %r9, {%h2, %h1};\n" + st(15, "%r9"))
    out = run(body).outputs["out"]
    o = out.view(np.float32)
    t = np.arange(64, dtype=np.float32)
    x = t * np.float32(0.25)
    np.testing.assert_array_equal(o[:, 0], x)
    np.testing.assert_allclose(o[:, 1], x * x - 1, rtol=1e-6)
    np.testing.assert_allclose(o[:, 2], np.exp2(x), rtol=1e-6)
    np.testing.assert_allclose(o[:, 3], np.sqrt(t), rtol=1e-6)
    np.testing.assert_allclose(o[:, 4], t / 3, rtol=1e-6)
    assert (out[:, 5].view(np.int32) == np.rint(t / 3)).all()
    assert (out[:, 6].view(np.int32) == np.trunc(t / 3)).all()
    hi = (out[:, 7] >> 16).astype(np.uint16).view(np.float16)
    lo = (out[:, 7] & 0xFFFF).astype(np.uint16).view(np.float16)
    assert (hi == x.astype(np.float16)).all() and (lo == t.astype(np.float16)).all()   # a -> upper half
    np.testing.assert_array_equal(o[:, 8], x.astype(np.float16).astype(np.float32))
    np.testing.assert_array_equal(o[:, 9], np.maximum(x * x - 1, 0))
    np.testing.assert_array_equal(o[:, 10], -x)
    np.testing.assert_array_equal(o[:, 11], np.clip(x, 0, 1))
    np.testing.assert_array_equal(o[:, 12], (x > 2).astype(np.float32))
    bhi = (out[:, 13] >> 16) << 16
    assert (bhi.view(np.float32) == t).all()                            # small ints exact in bf16
    np.testing.assert_allclose(o[1:, 14], 1 / t[1:], rtol=1e-6)
    assert (out[:, 15] == ((out[:, 7] & 0xFFFF) << 16 | (out[:, 7] >> 16))).all()


def test_divergence_loops_and_reconvergence():
    body = """ and.b32 %r5, %r1, 3;
 mov.b32 %r6, 0;
 mov.b32 %r7, 0;
 setp.eq.s32 %p1, %r5, 0;
 @%p1 bra SKIP;
LOOP:
 add.s32 %r6, %r6, %r1;
 add.s32 %r7, %r7, 1;
 setp.lt.s32 %p2, %r7, %r5;
 @%p2 bra LOOP;
 bra.uni JOIN;
SKIP:
 mov.b32 %r6, 1000;
JOIN:
 bar.sync 0;
""" + st(0, "%r6") + st(1, "%r7")
    res = run(body, block=(96, 1, 1), out_shape=(96, 16))
    out = res.outputs["out"].astype(np.int64)
    t = np.arange(96)
    k = t % 4
    assert (out[:, 0] == np.where(k == 0, 1000, t * k)).all()
    assert (out[:, 1] == k).all()
    tr = res.trace
    assert tr.n_warps == 3 and tr.warps_per_cta == 3
    total = sum(len(tr.warp_stream(g)) for g in range(tr.n_warps))
    assert total == res.dynamic_warp_instructions
    ws = tr.warp_stream(0)
    bar_pc = [i.index for i in res.trace.program.instructions if i.opcode == "bar.sync"][0]
    assert (ws.pc == bar_pc).sum() == 1                  # the warp reconverged before the barrier
    assert ws.active[ws.pc == bar_pc][0] == 32


def test_shfl_vote_elect_redux():
    body = """ shfl.sync.bfly.b32 %r5, %r1, 1, 31, -1;
 shfl.sync.idx.b32 %r6, %r1, 3, 31, -1;
 shfl.sync.down.b32 %r7, %r1, 4, 31, -1;
 shfl.sync.up.b32 %r8, %r1, 2, 0, -1;
 and.b32 %r9, %r1, 1;
 setp.eq.s32 %p1, %r9, 1;
 vote.sync.ballot.b32 %r10, %p1, -1;
 vote.sync.any.pred %p2, %p1, -1;
 selp.b32 %r11, 1, 0, %p2;
 elect.sync %r12|%p3, -1;
 selp.b32 %r13, 1, 0, %p3;
 redux.sync.add.u32 %r14, %r1, -1;
""" + "".join(st(i, f"%r{r}") for i, r in enumerate([5, 6, 7, 8, 10, 11, 12, 13, 14]))
    out = run(body).outputs["out"].astype(np.int64)
    t = np.arange(64)
    lane = t % 32
    base = t - lane
    assert (out[:, 0] == t ^ 1).all()
    assert (out[:, 1] == base + 3).all()
    assert (out[:, 2] == np.where(lane + 4 <= 31, t + 4, t)).all()
    assert (out[:, 3] == np.where(lane >= 2, t - 2, t)).all()
    assert (out[:, 4] == 0xAAAAAAAA).all() and (out[:, 5] == 1).all()
    assert (out[:, 6] == 0).all() and (out[:, 7] == (lane == 0)).all()
    assert (out[:, 8] == np.repeat([sum(range(32)), sum(range(32, 64))], 32)).all()


def test_atomics_and_shared_memory():
    body = """ ld.param.u64 %rd4, [k_p1];
 atom.global.add.u32 %r5, [%rd4], 1;
 red.global.add.u32 [%rd4+4], %r1;
 atom.global.max.s32 %r6, [%rd4+8], %r1;
 shl.b32 %r7, %r1, 2;
 mov.u32 %r8, smem;
 add.s32 %r9, %r8, %r7;
 st.shared.u32 [%r9], %r1;
 bar.sync 0;
 sub.s32 %r10, 252, %r7;
 add.s32 %r11, %r8, %r10;
 ld.shared.u32 %r12, [%r11];
 atom.shared.add.u32 %r13, [%r8+256], 2;
 bar.sync 0;
 ld.shared.u32 %r14, [%r8+256];
""" + st(0, "%r5") + st(1, "%r12") + st(2, "%r14") + st(3, "%r13")
    res = run(body, params=("out", "cnt"), shared=512,
              extra_buffers={"cnt": {"dtype": "uint32", "shape": [4], "init": "zeros"}})
    out = res.outputs["out"].astype(np.int64)
    cnt = res.outputs["cnt"]
    t = np.arange(64)
    assert sorted(out[:, 0]) == list(range(64))          # every lane saw a distinct old value
    assert cnt[0] == 64 and cnt[1] == sum(range(64)) and cnt[2] == 63
    assert (out[:, 1] == 63 - t).all()
    assert (out[:, 2] == 128).all() and sorted(out[:, 3]) == list(range(0, 128, 2))
    tr = res.trace
    ws = tr.warp_stream(0)
    prog = tr.program
    kinds = [prog.instructions[p].kind.name for p in ws.pc]
    i = kinds.index("ST_SHARED")
    assert ws.a0[i] == 1 and ws.a2[i] == 128            # 32 lanes x 4 B, conflict-free: one wavefront


def test_shared_bank_conflicts_counted():
    # lane i stores to word 32*i: all lanes in bank 0 -> 32 wavefronts
    body = """ shl.b32 %r7, %r1, 7;
 mov.u32 %r8, smem;
 add.s32 %r9, %r8, %r7;
 st.shared.u32 [%r9], %r1;
 and.b32 %r10, %r1, 7;
 shl.b32 %r10, %r10, 4;
 add.s32 %r11, %r8, %r10;
 ld.shared.v4.u32 {%r12, %r13, %r14, %r15}, [%r11];
"""
    res = run(body, block=(32, 1, 1), out_shape=(32, 16), shared=8192)
    ws = res.trace.warp_stream(0)
    prog = res.trace.program
    k = [prog.instructions[p].kind.name for p in ws.pc]
    assert ws.a0[k.index("ST_SHARED")] == 32
    assert ws.a0[k.index("LD_SHARED")] == 4              # 16-B accesses: 4 phases, broadcast within a phase


def test_global_sector_payload_and_first_touch():
    body = " ld.global.b32 %r5, [%rd3];\n ld.global.b32 %r6, [%rd3];\n"
    res = run(body, block=(32, 1, 1), out_shape=(32, 16))
    ws = res.trace.warp_stream(0)
    prog = res.trace.program
    lds = [j for j, p in enumerate(ws.pc) if prog.instructions[p].kind.name == "LD_GLOBAL"]
    a, b = lds
    assert ws.a0[a] == 32 and ws.a1[a] & 0xFFFFFFFF == 32 and ws.a3[a] == 16             # 64-B stride
    # a1 bits 32+: the lines' identity (L2 lookup sharing, components/memory.py), the same for the same lines
    assert ws.a1[a] >> 32 and ws.a1[a] >> 32 == ws.a1[b] >> 32
    # a2: bytes, and (bits 40+) the L1TEX data-stage wavefronts: lanes 64 B apart -> words in 2 banks -> 16-way
    assert ws.a2[a] & ((1 << 40) - 1) == 128 and ws.a2[a] >> 40 == 16
    assert ws.a0[b] == 32 and ws.a1[b] & 0xFFFFFFFF == 0                          # second touch: warm


def test_out_of_bounds_is_simulation_error():
    body = " add.s64 %rd5, %rd3, 1000000;\n ld.global.b32 %r5, [%rd5];\n"
    with pytest.raises(SimulationError) as ei:
        run(body)
    e = ei.value
    assert e.location == "kernel.ptx:20" and "warp 0 lane 0" in e.message and "0x" in e.message


def test_misaligned_is_simulation_error():
    body = " add.s64 %rd5, %rd3, 2;\n ld.global.b32 %r5, [%rd5];\n"
    with pytest.raises(SimulationError, match="misaligned"):
        run(body)


def test_unsupported_instructions_listed_at_decode():
    body = " bar.red.popc.u32 %r5, 0, %p1;\n mbarrier.pending_count.b64 %r6, %rd1;\n"
    with pytest.raises(PTXError) as ei:
        run(body)
    assert "2 unsupported" in ei.value.message


def test_mbarrier_parity_wait_and_deadlock():
    body = """ mov.u32 %r8, smem;
 setp.eq.s32 %p1, %r1, 0;
 @%p1 mbarrier.init.shared::cta.b64 [%r8], 64;
 bar.sync 0;
 mbarrier.arrive.shared.b64 %rd6, [%r8];
 mov.b32 %r9, 0;
W:
 mbarrier.try_wait.parity.shared.b64 %p2, [%r8], %r9;
 @!%p2 bra.uni W;
 mbarrier.test_wait.parity.shared.b64 %p3, [%r8], 1;
 selp.b32 %r10, 1, 0, %p3;
""" + st(0, "%r10")
    res = run(body, shared=64)
    assert (res.outputs["out"][:, 0] == 0).all()       # phase 1 not completed
    ws = res.trace.warp_stream(1)
    prog = res.trace.program
    w = [j for j, p in enumerate(ws.pc) if prog.instructions[p].kind.name == "MBAR_WAIT"]
    assert ws.a3[w[0]] == 1 and ws.a0[w[0]] == 0
    arr = [j for j, p in enumerate(ws.pc) if prog.instructions[p].kind.name == "MBAR_ARRIVE"][0]
    assert ws.a2[arr] == 32
    # 128 expected arrivals but only 64 threads: the wait can never succeed
    with pytest.raises(SimulationError, match="deadlock"):
        run(body.replace("], 64;", "], 128;"), shared=64)


def test_clock_oracle_and_payload():
    body = " mov.u64 %rd6, %clock64;\n mov.u64 %rd7, %clock64;\n sub.s64 %rd8, %rd7, %rd6;\n" \
           " st.global.b64 [%rd3], %rd8;\n"
    res = run(body, clock_oracle=lambda g, k: 1000 * g + 7 * k * (g + 1))
    d = res.outputs["out"].view(np.uint64)[:, 0]
    assert (d == np.repeat([7, 14], 32)).all()
    ws = res.trace.warp_stream(1)
    prog = res.trace.program
    c = [j for j, p in enumerate(ws.pc) if prog.instructions[p].kind.name == "CLOCK"]
    assert list(ws.a0[c]) == [0, 1]


def test_generic_addressing_shared_and_param():
    body = """ mov.u32 %r8, smem;
 cvta.shared.u64 %rd6, %rd0;
 cvt.u64.u32 %rd7, %r8;
 cvta.shared.u64 %rd8, %rd7;
 mul.wide.u32 %rd9, %r1, 4;
 add.s64 %rd10, %rd8, %rd9;
 st.u32 [%rd10], %r1;
 bar.sync 0;
 ld.u32 %r9, [%rd10];
 mov.b64 %rd11, k_q0;
 cvta.param.u64 %rd12, %rd11;
 ld.u32 %r10, [%rd12];
 cvta.to.shared.u64 %rd13, %rd10;
 cvt.u32.u64 %r11, %rd13;
 ld.shared.u32 %r12, [%r11];
""" + st(0, "%r9") + st(1, "%r10") + st(2, "%r12")
    res = run(body.replace("cvta.shared.u64 %rd6, %rd0;\n", ""), shared=256, extra_params=(12345,))
    out = res.outputs["out"].astype(np.int64)
    t = np.arange(64)
    assert (out[:, 0] == t).all() and (out[:, 1] == 12345).all() and (out[:, 2] == t).all()


def test_clock_ordinals_count_only_participating_warps():
    body = """ setp.lt.u32 %p1, %r1, 32;
 @!%p1 bra SKIP;
 mov.u64 %rd6, %clock64;
SKIP:
 mov.u64 %rd7, %clock64;
"""
    res = run(body)
    prog = res.trace.program
    for g, n in ((0, [0, 1]), (1, [0])):
        ws = res.trace.warp_stream(g)
        c = [j for j, p in enumerate(ws.pc) if prog.instructions[p].kind.name == "CLOCK"]
        assert list(ws.a0[c]) == n


def test_partial_warp_block_early_exit_and_barrier():
    # 48 threads (2 warps, the second half empty); threads >= 40 exit before the barrier
    body = """ setp.ge.u32 %p1, %r1, 40;
 @%p1 bra DONE;
 mov.u32 %r8, smem;
 shl.b32 %r9, %r1, 2;
 add.s32 %r10, %r8, %r9;
 st.shared.u32 [%r10], %r1;
 bar.sync 0;
 sub.s32 %r11, 156, %r9;
 add.s32 %r12, %r8, %r11;
 ld.shared.u32 %r13, [%r12];
""" + st(0, "%r13") + """ mov.u32 %r14, %smid;
""" + st(1, "%r14") + "DONE:\n"
    res = run(body, block=(48, 1, 1), grid=(2, 1, 1), out_shape=(96, 16), shared=256,
              sm_of_cta=lambda c: 10 + c)
    out = res.outputs["out"].astype(np.int64).reshape(2, 48, 16)
    t = np.arange(40)
    assert (out[:, :40, 0] == 39 - t).all() and (out[:, 40:, 0] == 0).all()
    assert (out[0, :40, 1] == 10).all() and (out[1, :40, 1] == 11).all()
    tr = res.trace
    assert tr.warps_per_cta == 2 and tr.n_warps == 4 and tr.threads_per_cta == 48
    ws = tr.warp_stream(1)
    assert ws.active.max() == 16                       # only 16 real threads in warp 1
    assert tr.cta_coords(1) == (1, 0, 0)


def test_want_trace_false_same_outputs():
    body = " ld.global.b32 %r5, [%rd3];\n add.s32 %r6, %r5, %r1;\n" + st(1, "%r6")
    a = run(body)
    b = run(body, want_trace=False)
    assert b.trace is None
    np.testing.assert_array_equal(a.outputs["out"], b.outputs["out"])
    assert a.dynamic_warp_instructions == b.dynamic_warp_instructions == a.trace.dynamic_warp_instructions


def test_max_steps_limit():
    body = "SPIN:\n bra.uni SPIN;\n"
    with pytest.raises(SimulationError, match="step limit"):
        run(body, max_steps=1000)


def test_cluster_dsm_mapa_and_remote_store():
    ptx = HEAD + """.visible .entry k(.param .u64 k_p0)
{
 .reg .pred %p<4>;
 .reg .b32 %r<16>;
 .reg .b64 %rd<8>;
 .shared .align 4 .b8 buf[256];
 ld.param.u64 %rd1, [k_p0];
 mov.u32 %r1, %tid.x;
 mov.u32 %r2, %cluster_ctarank;
 mov.u32 %r3, %ctaid.x;
 xor.b32 %r4, %r2, 1;
 mov.u32 %r5, buf;
 shl.b32 %r6, %r1, 2;
 add.s32 %r7, %r5, %r6;
 mapa.shared::cluster.u32 %r8, %r7, %r4;
 mad.lo.s32 %r9, %r3, 100, %r1;
 st.shared::cluster.u32 [%r8], %r9;
 barrier.cluster.arrive.release.aligned;
 barrier.cluster.wait.acquire.aligned;
 ld.shared.u32 %r10, [%r7];
 mov.u32 %r11, %ntid.x;
 mad.lo.s32 %r12, %r3, %r11, %r1;
 mul.wide.u32 %rd2, %r12, 4;
 add.s64 %rd3, %rd1, %rd2;
 st.global.u32 [%rd3], %r10;
 ret;
}
"""
    rec = record_from_dict({"format": "launch-record/1", "name": "t", "entry": "k", "grid": [4, 1, 1],
                            "block": [32, 1, 1], "cluster": [2, 1, 1],
                            "buffers": {"out": {"dtype": "uint32", "shape": [4, 32], "init": "zeros"}},
                            "params": [{"ptr": "out"}]}, ptx_text=ptx)
    for lanes in (1 << 16, 64):                          # one batch, or one cluster per batch
        out = run_functional(rec, max_lanes=lanes).outputs["out"].astype(np.int64)
        partner = np.array([1, 0, 3, 2])
        assert (out == partner[:, None] * 100 + np.arange(32)[None, :]).all()

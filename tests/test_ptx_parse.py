"""PTX front end: the 12 calibration kernels and nvcc-style constructs decode per Contract 1."""
from pathlib import Path

import pytest

from warpgraph.workloads.ptx import (Addr, Imm, Kind, Label, Pair, Reg, Sink, Sym, Unit, Vec, parse_ptx)

REC = Path(__file__).resolve().parent.parent / "workloads" / "records" / "h200"
CASES = sorted(p.name for p in REC.iterdir() if (p / "kernel.ptx").is_file())
ENTRY = {"attn": "attn_fwd", "gemm_ptr": "gemm_ptr", "gemm80": "gemm_ptr", "gemm_tma": "gemm_tma",
         "rmsnorm": "rmsnorm", "swiglu": "swiglu"}


def _entry(case):
    for k, v in ENTRY.items():
        if case.startswith(k):
            return v


def test_twelve_cases_present():
    assert len(CASES) == 12


@pytest.mark.parametrize("case", CASES)
def test_calibration_ptx_parses(case):
    f = REC / case / "kernel.ptx"
    prog = parse_ptx(f.read_text(), filename=str(f)).entry(_entry(case))
    assert len(prog.instructions) > 50
    assert prog.reqntid is not None and prog.reqntid[0] in (128, 256)
    for i, inst in enumerate(prog.instructions):
        assert inst.index == i and inst.line >= 1
        for r in inst.dsts + inst.srcs:
            assert 0 <= r < prog.n_regs
        for o in inst.operands:
            if isinstance(o, Label):
                assert 0 <= o.target < len(prog.instructions)
    assert prog.instructions[-1].kind == Kind.EXIT
    # the text of each instruction is its source line
    txt = f.read_text().split("\n")
    assert all(inst.text == txt[inst.line - 1].strip() for inst in prog.instructions)


def _gemm_tma():
    f = REC / "gemm_tma_M2048_N2048_K2048" / "kernel.ptx"
    return parse_ptx(f.read_text(), filename="kernel.ptx").entry("gemm_tma")


def test_gemm_tma_params_and_shared():
    p = _gemm_tma()
    assert len(p.params) == 20
    assert (p.params[0].type, p.params[0].size, p.params[0].align, p.params[0].array) == ("b8", 128, 64, 128)
    assert p.params[0].offset == 0 and p.params[1].offset == 128 and p.params[3].offset == 136
    assert p.params[5].offset == 192                 # realigned to 64
    assert p.params[18].is_ptr
    assert p.reqntid == (256,)
    assert "global_smem" in p.shared_vars and p.shared_vars["global_smem"].extern
    assert p.static_shared_bytes == 0 and p.dynamic_smem_offset == 0


def test_scoped_block_registers_and_labels_are_unique():
    p = _gemm_tma()
    waits = [i for i in p.instructions if i.opcode == "mbarrier.try_wait"]
    assert len(waits) == 1
    w = waits[0]
    assert w.mods == ("parity", "shared", "b64")
    pred = w.operands[0]
    assert isinstance(pred, Reg) and pred.name.startswith("complete$")
    br = p.instructions[w.index + 1]
    assert br.opcode == "bra" and br.mods == ("uni",) and br.guard == (pred.index, True)
    assert br.operands[0].target == w.index           # waitLoop: resolves to the try_wait
    assert br.kind == Kind.BRANCH and w.kind == Kind.MBAR_WAIT


def test_two_scoped_blocks_get_distinct_names():
    src = """
.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p)
{
 .reg .b32 %r<3>;
 { .reg .pred c; L: setp.eq.s32 c, %r1, 0; @!c bra.uni L; }
 { .reg .pred c; L: setp.eq.s32 c, %r2, 0; @!c bra.uni L; }
 ret;
}
"""
    p = parse_ptx(src).entry("k")
    s1, b1, s2, b2, _ = p.instructions
    assert s1.dsts != s2.dsts
    assert b1.operands[0].target == 0 and b2.operands[0].target == 2
    assert p.reg_names[s1.dsts[0]] != p.reg_names[s2.dsts[0]]


def test_operand_forms():
    p = _gemm_tma()
    el = next(i for i in p.instructions if i.opcode == "elect.sync")
    assert isinstance(el.operands[0], Pair) and len(el.dsts) == 2
    assert isinstance(el.operands[1], Imm) and el.operands[1].value == -1
    tma = next(i for i in p.instructions if i.kind == Kind.TMA_LOAD)
    a = tma.operands[1]
    assert isinstance(a, Addr) and len(a.coords) == 2 and isinstance(a.base, Reg)
    assert tma.unit == Unit.TMA and tma.guard is not None
    st = next(i for i in p.instructions if i.kind == Kind.TMA_STORE)
    assert st.mods[:2] == ("2d", "global")
    arr = next(i for i in p.instructions if i.opcode == "mbarrier.arrive")
    assert isinstance(arr.operands[0], Sink) and arr.mods[0] == "expect_tx" and arr.kind == Kind.MBAR_ARRIVE
    wg = next(i for i in p.instructions if i.opcode == "wgmma.mma_async")
    acc = wg.operands[0]
    assert isinstance(acc, Vec) and len(acc.items) == 64
    assert set(r.index for r in acc.items) <= set(wg.srcs) and set(wg.dsts) == set(r.index for r in acc.items)
    stm = next(i for i in p.instructions if i.opcode == "stmatrix" and i.operands[0].offset == 16384)
    assert stm.dsts == () and stm.kind == Kind.STMATRIX and stm.width_bytes == 16
    mv = next(i for i in p.instructions if i.opcode == "mov" and isinstance(i.operands[1], Sym)
              and i.operands[1].space == "param")
    assert mv.operands[1].name == "gemm_tma_param_0"
    f0 = next(i for i in p.instructions if i.opcode == "mov" and isinstance(i.operands[1], Imm)
              and i.operands[1].is_float_bits)
    assert f0.operands[1].value == 0


def test_memory_widths_and_kinds():
    f = REC / "rmsnorm_rows4096_cols4096" / "kernel.ptx"
    p = parse_ptx(f.read_text()).entry("rmsnorm")
    ld = [i for i in p.instructions if i.kind == Kind.LD_GLOBAL]
    assert ld and all(i.width_bytes == 16 for i in ld)
    assert all(len(i.dsts) == 4 for i in ld)
    lp = [i for i in p.instructions if i.kind == Kind.LD_PARAM]
    assert lp and isinstance(lp[0].operands[1].base, Sym)
    sh = [i for i in p.instructions if i.kind == Kind.SHFL]
    assert sh and sh[0].unit == Unit.MIO
    unpack = next(i for i in p.instructions if i.opcode == "mov" and isinstance(i.operands[0], Vec))
    assert len(unpack.dsts) == 2


NVCC = r"""
//
// Generated by NVIDIA NVVM Compiler
.version 8.0
.target sm_80
.address_size 64

.func  (.param .b32 func_retval0) helper(.param .b32 helper_param_0)
{
	.reg .b32 	%r<3>;
	ld.param.u32 	%r1, [helper_param_0];
	add.s32 	%r2, %r1, 1;
	st.param.b32 	[func_retval0+0], %r2;
	ret;
}

.visible .entry vadd(
	.param .u64 vadd_param_0,
	.param .u64 vadd_param_1,
	.param .u32 vadd_param_2
)
.maxntid 128, 1, 1
.maxnreg 64
{
	.local .align 4 .b8 	__local_depot0[16];
	.shared .align 4 .b8 tile[512];
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<8>;
	.loc	1 7 0

	ld.param.u64 	%rd1, [vadd_param_0];
	ld.param.u64 	%rd2, [vadd_param_1];
	ld.param.u32 	%r2, [vadd_param_2];
	cvta.to.global.u64 	%rd3, %rd1;
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	mul.wide.s32 	%rd4, %r1, 4;
	add.s64 	%rd5, %rd3, %rd4;
	ld.global.f32 	%f1, [%rd5];
	add.f32 	%f2, %f1, 0f3F800000;
	mul.f32 	%f3, %f2, 0d4000000000000000;
	st.shared.f32 	[tile+4], %f3;
	st.global.f32 	[%rd5], %f3;
$L__BB0_2:
	ret;
}
"""


def test_nvcc_style_module():
    m = parse_ptx(NVCC, "vadd.ptx")
    assert m.target == "sm_80" and m.version == "8.0"
    assert "helper" in m.funcs and m.entries == ["vadd"]
    p = m.entry("vadd")
    assert p.maxntid == (128, 1, 1) and p.maxnreg == 64
    assert p.shared_vars["tile"].size == 512 and p.static_shared_bytes == 512
    assert p.dynamic_smem_offset == 0 or p.dynamic_smem_offset >= 512
    add = next(i for i in p.instructions if i.opcode == "add" and "f32" in i.mods)
    assert add.operands[2].value == 0x3F800000 and add.operands[2].is_float_bits
    st = next(i for i in p.instructions if i.kind == Kind.ST_SHARED)
    assert st.operands[0].base == Sym("tile", "shared") and st.operands[0].offset == 4
    bra = next(i for i in p.instructions if i.opcode == "bra")
    assert p.instructions[bra.operands[0].target].opcode == "ret"
    assert p.reg_types[p.reg_names.index("%f1")] == "f32"
    assert p.instructions[0].kind == Kind.LD_PARAM and p.instructions[0].dsts == (p.reg_names.index("%rd1"),)


def test_immediates():
    src = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k()
{ .reg .b32 %r<5>; .reg .b64 %rd<2>;
 mov.b32 %r1, 0xFF;
 mov.b32 %r2, -7;
 mov.b64 %rd1, 0d3FF0000000000000;
 add.s32 %r3, %r1, 010;
 mov.b32 %r4, 1.5;
 ret; }"""
    p = parse_ptx(src).entry()
    ops = [i.operands[-1] for i in p.instructions[:5]]
    assert ops[0].value == 255 and ops[1].value == -7 and ops[2].value == 0x3FF0000000000000
    assert ops[3].value == 8 and ops[4].is_float and ops[4].value == 1.5

"""SASS-guided instruction costs (workloads/sass.py, issue 15): the SASS ptxas makes of a record's PTX, attributed
to the PTX instructions by line info, class and loop depth."""
import warnings
from pathlib import Path

import pytest

from warpgraph.components.sass_cost import sass_per_ptx
from warpgraph.runner.timing import lower
from warpgraph.workloads import sass as SS
from warpgraph.workloads.ptx import parse_ptx
from warpgraph.workloads.record import load_record

ROOT = Path(__file__).resolve().parent.parent / "workloads" / "records"
H200 = ROOT / "h200"


needs_tools = pytest.mark.skipif(not SS.tools_available(), reason="no ptxas / nvdisasm (install the 'triton' extra)")


def test_tag_ptx_marks_instructions_only():
    ptx = "\n".join([
        ".version 8.7", ".target sm_90a", ".address_size 64", '.file 1 "k.py"',
        ".visible .entry k(", "\t.param .u64 k_param_0", ")", "{", "\t.reg .b32 %r<4>;",
        "\t.loc 1 3 0", "\tmov.u32 %r1, %tid.x;", "$L__BB0_1:", "\t@%p1 bra $L__BB0_1;", "\tret;", "}",
        "\t.section .debug_info", "\t{", ".b8 1", "\t}"])
    out = SS.tag_ptx(ptx).splitlines()
    assert out.count('.file 1 "kernel.ptx"') == 1 and not any("k.py" in ln for ln in out)
    locs = [ln for ln in out if ln.startswith(".loc")]
    # the three instructions, each with its own line in the original text (11, 13, 14)
    assert locs == [".loc 1 11 0", ".loc 1 13 0", ".loc 1 14 0"]
    assert not any("debug_info" in ln or ".b8 1" in ln for ln in out)


LISTING = """
//--------------------- .text.k                  --------------------------
\t.section\t.text.k,"ax",@progbits
k:
.text.k:
\t//## File "kernel.ptx", line 11
        /*0000*/                   S2R R0, SR_TID.X ;
.L_x_0:
\t//## File "kernel.ptx", line 13
        /*0010*/              @!P0 BRA `(.L_x_0) ;
        /*0020*/                   EXIT ;
.L_x_1:
        /*0030*/                   BRA `(.L_x_1);
        /*0040*/                   NOP;
//--------------------- .nv.info                 --------------------------
"""


def test_parse_nvdisasm_lines_labels_guards():
    s = SS.parse_nvdisasm(LISTING, "k")
    assert [x.op for x in s] == ["S2R", "BRA", "EXIT", "BRA", "NOP"]
    assert [x.line for x in s] == [11, 13, 13, 13, 13]
    assert s[1].guard == "@!P0" and s[1].target == 0x10 and s[3].target == 0x30
    assert SS.parse_nvdisasm(LISTING, "other") == []


def test_sass_cfg_skips_padding_after_exit():
    s = tuple(SS.parse_nvdisasm(LISTING, "k"))
    blocks, block_of, succ = SS._sass_cfg(s)
    depth, loops, reach = SS.natural_loop_depth(len(blocks), succ)
    # the self-loop after EXIT and the NOP are unreachable; the @!P0 BRA self-loop is a loop
    assert block_of[3] not in reach and block_of[4] not in reach
    assert depth[block_of[1]] == 1 and depth[block_of[0]] == 0


def test_sass_categories():
    assert SS.sass_category("UTMALDG.2D") == "mem" and SS.sass_category("SYNCS.PHASECHK.TRANS64.TRYWAIT") == "mem"
    assert SS.sass_category("HGMMA.64x128x16.F32") == "tensor" and SS.sass_category("WARPGROUP.ARRIVE") == "tensor"
    assert SS.sass_category("R2UR") == "alu" and SS.sass_category("BAR.SYNC.DEFER_BLOCKING") == "bar"
    assert SS.sass_category("MUFU.EX2") == "sfu" and SS.sass_category("BRA") == "ctrl"


LOOP_PTX = """
.version 8.7
.target sm_90a
.address_size 64
.visible .entry loop(.param .u64 p_out, .param .u32 p_n, .param .u32 p_k)
{
\t.reg .pred %p<3>;
\t.reg .b32 %r<12>;
\t.reg .b64 %rd<6>;
\t.reg .f32 %f<4>;
\tld.param.u64 %rd1, [p_out];
\tld.param.u32 %r1, [p_n];
\tld.param.u32 %r2, [p_k];
\tmov.u32 %r3, %tid.x;
\tmov.u32 %r4, 0;
\tmov.f32 %f1, 0f00000000;
$L__BB0_1:
\tmul.lo.s32 %r5, %r2, %r2;
\tmul.lo.s32 %r6, %r5, 7;
\tadd.s32 %r7, %r6, %r4;
\tcvt.rn.f32.s32 %f2, %r7;
\tadd.f32 %f1, %f1, %f2;
\tadd.s32 %r4, %r4, 1;
\tsetp.lt.s32 %p1, %r4, %r1;
\t@%p1 bra $L__BB0_1;
\tmul.wide.u32 %rd2, %r3, 4;
\tadd.s64 %rd3, %rd1, %rd2;
\tdiv.rn.f32 %f3, %f1, 3.0;
\tst.global.f32 [%rd3], %f3;
\tret;
}
"""


@needs_tools
def test_attribution_conserves_sass_and_hoists_invariants():
    prog = parse_ptx(LOOP_PTX).entry("loop")
    insts, tool = SS.sass_listing(LOOP_PTX, "loop")
    assert insts, tool
    att = SS.attribute(prog, insts, tool)
    assert all(0 <= att.pipe[i] <= att.cost[i] for i in att.cost)
    assert att.unreachable > 0
    # ptxas unrolls the loop 4 times (4 I2FP + 4 FADD per SASS iteration) and peels the remainder: the loop body
    # costs a quarter of what its SASS loop issues per iteration (the loop-invariant k*k*7 hoisted out of it)
    by = {ins.line: ins for ins in prog.instructions}
    loop_lines = [ln for ln, ins in by.items() if ins.text.startswith(("mul.lo", "add.s32", "cvt.rn", "add.f32",
                                                                        "setp", "@%p1 bra"))]
    per_iter = sum(att.cost[by[ln].index] for ln in loop_lines)
    bras = [s for s in insts if s.op == "BRA" and s.target is not None and s.target < s.addr and s.guard]
    assert bras, "expected a backward branch in the SASS loop"
    body = [s for s in insts if bras[0].target <= s.addr <= bras[0].addr]
    assert list(att.unroll.values()) == [4]
    assert sum(1 for s in body if s.op.startswith("I2FP")) == 4
    assert per_iter == (2 * len(body) + 4) // 8
    # every reachable SASS is charged once but the peeled remainder's and the unrolled copies; floors add one each
    # (the div.rn slow path is not reachable)
    assert sum(att.cost.values()) == att.static_sass - att.retry + att.floors - att.unrolled - (len(body) - per_iter)
    # the back edge: one SASS BRA per 4 PTX iterations
    back = by[max(ln for ln in loop_lines if by[ln].text.startswith("@%p1 bra"))].index
    assert att.branches == {back: 4}


@needs_tools
def test_tma_gemm_main_loop_matches_the_sass_loop():
    """The TMA GEMM's main loop: the PTX costs per iteration equal the SASS instructions of ptxas's loop
    (92 on the record, where the rules give ~70), with the mbarrier poll's out-of-line retry path uncharged."""
    rec = load_record(H200 / "gemm_tma_M2048_N2048_K2048")
    prog = rec.program()
    att, tool = SS.record_sass_costs(rec, prog)
    assert att is not None, tool
    assert att.retry > 0
    insts, _ = SS.sass_listing(rec.ptx_text(), rec.entry)
    blocks, block_of, succ = SS._ptx_cfg(prog)
    depth, loops, _ = SS.natural_loop_depth(len(blocks), succ)
    outer = max(loops, key=lambda hb: len(hb[1]))[1]          # the K loop (holds the poll loop)
    per_iter = sum(att.cost[i] for b in outer for i in blocks[b])
    rules = sum(sass_per_ptx(prog.instructions[i].opcode, tuple(prog.instructions[i].mods),
                             prog.instructions[i].text)[0] for b in outer for i in blocks[b])
    back = [s for s in insts if s.op == "BRA" and s.guard and s.target is not None and s.target < s.addr
            and s.addr - s.target > 0x100]
    body = [s for s in insts if back[-1].target <= s.addr <= back[-1].addr]
    assert per_iter == len(body)
    assert per_iter > rules


@needs_tools
def test_calibration_records_conserve_sass():
    for d in sorted(p for p in H200.iterdir() if (p / "launch.json").is_file()):
        rec = load_record(d)
        att, tool = SS.record_sass_costs(rec, rec.program())
        assert att is not None, (d.name, tool)
        assert not att.unroll and att.unrolled == 0, d.name          # ptxas unrolls none of these loops
        assert sum(att.cost.values()) == att.static_sass - att.retry + att.floors, d.name
        assert att.floors <= len(rec.program().instructions) // 10, d.name


def test_without_ptxas_the_rules_apply_with_one_warning(monkeypatch):
    monkeypatch.setenv("WARPGRAPH_PTXAS", "")
    rec = load_record(H200 / "swiglu_n16777216")
    prog = rec.program()
    SS._WARNED.clear()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        T = lower(prog, None, record=rec, sass_overrides={"guided": 1})
        lower(prog, None, record=rec, sass_overrides={"guided": 1})
    msgs = [str(x.message) for x in w if "SASS-guided" in str(x.message)]
    assert len(msgs) == 1 and "no ptxas" in msgs[0]
    assert T.cost == [sass_per_ptx(i.opcode, tuple(i.mods), i.text)[0] for i in prog.instructions]


@needs_tools
def test_guided_is_an_option_and_off_keeps_the_rules():
    rec = load_record(H200 / "gemm_tma_M2048_N2048_K2048")
    prog = rec.program()
    on = lower(prog, None, record=rec, sass_overrides={"guided": 1})
    off = lower(prog, None, record=rec, sass_overrides={"guided": 0})
    default = lower(prog, None, record=rec)
    rules = [sass_per_ptx(i.opcode, tuple(i.mods), i.text)[0] for i in prog.instructions]
    assert off.cost == rules
    assert default.cost == (on.cost if SS.GUIDED_DEFAULT else rules)
    assert on.cost != off.cost and all(r.startswith("SASS") for r in on.ptx_cost_rule)
    # uniform-datapath SASS (the K loop's UIADD3 / ULEA / R2UR) hold issue slots, not the integer pipe
    assert any(on.ii[i] < off.ii[i] for i in range(len(prog.instructions)) if on.cost[i] > 1)


def _unroll_ptx(bound: str) -> str:
    """A loop of one 4-byte load and one FFMA per iteration, stepping 128; ``bound``: its limit (a constant, or
    ``%r1`` from a parameter). ptxas unrolls it (62 times with the constant, 4 times plus peeled remainders with
    the parameter)."""
    return "\n".join([
        ".version 8.7", ".target sm_90a", ".address_size 64",
        ".visible .entry unr(.param .u64 p_x, .param .u64 p_out, .param .u32 p_n)", "{",
        "\t.reg .pred %p<3>;", "\t.reg .b32 %r<12>;", "\t.reg .b64 %rd<8>;", "\t.reg .f32 %f<6>;",
        "\tld.param.u64 %rd1, [p_x];", "\tld.param.u64 %rd2, [p_out];", "\tld.param.u32 %r1, [p_n];",
        "\tmov.u32 %r3, %tid.x;", "\tmov.u32 %r4, 0;", "\tmov.f32 %f1, 0f00000000;",
        "$L__BB0_1:",
        "\tadd.s32 %r5, %r4, %r3;", "\tmul.wide.s32 %rd3, %r5, 4;", "\tadd.s64 %rd4, %rd1, %rd3;",
        "\tld.global.f32 %f2, [%rd4];", "\tfma.rn.f32 %f1, %f2, %f2, %f1;", "\tadd.s32 %r4, %r4, 128;",
        f"\tsetp.lt.s32 %p1, %r4, {bound};", "\t@%p1 bra $L__BB0_1;",
        "\tmul.wide.u32 %rd5, %r3, 4;", "\tadd.s64 %rd6, %rd2, %rd5;", "\tst.global.f32 [%rd6], %f1;", "\tret;",
        "}", ""])


def _unrolled(bound: str):
    ptx = _unroll_ptx(bound)
    prog = parse_ptx(ptx).entry("unr")
    insts, tool = SS.sass_listing(ptx, "unr")
    assert insts, tool
    blocks, block_of, succ = SS._sass_cfg(insts)
    depth, loops, reach = SS.natural_loop_depth(len(blocks), succ)
    assert len(loops) == 1, "expected one SASS loop"
    sloop = [i for b in loops[0][1] for i in blocks[b]]
    pblocks, _pbo, psucc = SS._ptx_cfg(prog)
    _d, ploops, _r = SS.natural_loop_depth(len(pblocks), psucc)
    ploop = [i for b in ploops[0][1] for i in pblocks[b]]
    return prog, insts, SS.attribute(prog, insts, tool), blocks, block_of, reach, sloop, ploop


@needs_tools
def test_unrolled_loop_with_constant_trip_count_charges_the_dynamic_sass():
    """1000 iterations: ptxas peels 8 and unrolls the rest 62 times (16 SASS iterations). The charged count over
    the launch (PTX executions x costs) equals the SASS's dynamic count (SASS outside the loop once, the loop body
    once per SASS iteration) up to the rounding of the per-iteration cost to whole issue slots (< 1/2 each);
    charging the unrolled body per PTX iteration, as before, gave 62 times the loop's SASS."""
    trips = 1000
    prog, insts, att, blocks, block_of, reach, sloop, ploop = _unrolled("128000")
    u = next(iter(att.unroll.values()))
    in_loop = set(sloop)
    ldg_loop = sum(1 for i in sloop if insts[i].op.startswith("LDG"))
    ldg_out = sum(1 for i, s in enumerate(insts) if s.op.startswith("LDG") and i not in in_loop
                  and block_of[i] in reach)
    assert ldg_loop == u and ldg_out > 0                  # one LDG per PTX iteration: peeled copies outside
    sass_trips, rem = divmod(trips - ldg_out, ldg_loop)
    assert rem == 0
    outside = sum(1 for i in range(len(insts)) if block_of[i] in reach and i not in in_loop)
    dynamic = outside + sass_trips * len(sloop)
    per_iter = sum(att.cost[i] for i in ploop)
    charged = sum(att.cost[i] for i in att.cost if i not in set(ploop)) + trips * per_iter
    assert per_iter == round(len(sloop) / u)
    assert abs(charged - dynamic) <= trips * abs(per_iter - len(sloop) / u) + 4, (charged, dynamic)
    assert abs(charged - dynamic) / dynamic < 0.02


@needs_tools
def test_unrolled_loop_with_remainder_costs_the_body_over_the_factor():
    """A runtime trip count: ptxas unrolls 4 times and peels the 2- and 1-iteration remainders. A PTX iteration
    costs the SASS loop body / 4 (rounded); the remainder copies are not charged (their iterations pay that rate);
    every other reachable SASS is charged once."""
    prog, insts, att, blocks, block_of, reach, sloop, ploop = _unrolled("%r1")
    assert list(att.unroll.values()) == [4]
    assert sum(att.cost[i] for i in ploop) == round(len(sloop) / 4)
    assert att.unrolled > 0
    reachable = sum(1 for i in range(len(insts)) if block_of[i] in reach)
    outside = sum(att.cost[i] for i in att.cost if i not in set(ploop))
    assert outside == reachable - len(sloop) - att.unrolled - att.retry + att.floors

"""The issue order of a basic block (workloads/issue_order.py): each segment follows the SASS ptxas makes of the
record's PTX, as far as its dependences allow; what orders memory or synchronises never moves."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import warpgraph as wg
from warpgraph.workloads import sass as SS
from warpgraph.workloads.issue_order import _LOADS, _MEMORY, _movable, _schedule, _segments, issue_order, permutation
from warpgraph.workloads.ptx import parse_ptx
from warpgraph.workloads.record import load_record

ROOT = Path(wg.__file__).parent


def _with_compiled(src: Path, tmp_path: Path, field: str, value: str) -> Path:
    """A copy of record ``src`` (once, under tmp_path/bad) with ``compiled.sm_90a.<field>`` set to ``value``."""
    import json
    import shutil

    bad = tmp_path / "bad"
    if not bad.exists():
        shutil.copytree(src, bad)
    d = json.loads((bad / "launch.json").read_text())
    d["compiled"]["sm_90a"][field] = value
    (bad / "launch.json").write_text(json.dumps(d))
    return bad


needs_tools = pytest.mark.skipif(not SS.tools_available(), reason="no ptxas / nvdisasm (install the 'triton' extra)")

_PTX = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p, .param .u64 q)
{
  .reg .b32 %r<20>;
  .reg .b64 %rd<20>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [p];
  ld.param.u64 %rd2, [q];
  ld.global.u32 %r1, [%rd1];
  add.s32 %r2, %r1, 1;
  mul.lo.s32 %r3, %r2, 3;
  add.s64 %rd3, %rd1, 128;
  ld.global.u32 %r4, [%rd3];
  add.s32 %r5, %r4, %r3;
  st.global.u32 [%rd2], %r5;
  add.s64 %rd4, %rd1, 256;
  ld.global.u32 %r6, [%rd4];
  add.s32 %r7, %r6, %r5;
  st.global.u32 [%rd2+4], %r7;
  bar.sync 0;
  ld.global.u32 %r8, [%rd1];
  add.s32 %r9, %r8, 1;
  ld.volatile.global.u32 %r10, [%rd1];
  add.s32 %r11, %r10, %r9;
  st.global.u32 [%rd2+8], %r11;
  ret;
}
"""


def _prog():
    return parse_ptx(_PTX).entry("k")


def _index(prog, text):
    return next(i.index for i in prog.instructions if i.text.strip() == text)


def test_a_segment_follows_the_sass_places_within_its_dependences():
    prog = _prog()
    seg = _segments(prog)[0]
    ld2 = _index(prog, "ld.global.u32 %r4, [%rd3];")
    use1 = _index(prog, "add.s32 %r2, %r1, 1;")
    addr2 = _index(prog, "add.s64 %rd3, %rd1, 128;")
    ld3 = _index(prog, "ld.global.u32 %r6, [%rd4];")
    st1 = _index(prog, "st.global.u32 [%rd2], %r5;")
    # SASS places: PTX order, except the second load (and its address) before the first load's consumer and the
    # third load before the first store; the address add is folded (no SASS: it goes where its load goes)
    pos = {i: 10 * i for i in seg}
    pos[ld2] = 10 * use1 - 5
    pos[addr2] = None
    pos[ld3] = 10 * st1 - 5
    order = _schedule(prog.instructions, seg, [pos.get(i) for i in range(len(prog.instructions))])
    at = {i: k for k, i in enumerate(order)}
    assert at[addr2] < at[ld2] < at[use1]
    assert at[st1] < at[ld3]          # memory order: a load never passes a store of its segment
    # no SASS places at all: the PTX order
    assert _schedule(prog.instructions, seg, [None] * len(prog.instructions)) == seg


def test_ordered_loads_are_never_moved_nor_crossed_and_a_cta_barrier_orders_memory_only():
    prog = _prog()
    bar = _index(prog, "bar.sync 0;")
    for full in (False, True):
        for seg in _segments(prog, full):
            for i in seg:
                ins = prog.instructions[i]
                assert _movable(ins, full)
                assert "volatile" not in ins.text
                assert full or "bar.sync" not in ins.text     # the default order never moves a barrier
            assert seg == list(range(seg[0], seg[-1] + 1))      # consecutive: nothing unmovable inside
    # sass.issue_order=2: a CTA barrier stays in its segment as a memory-order point
    seg = next(s for s in _segments(prog, True) if bar in s)
    st2 = _index(prog, "st.global.u32 [%rd2+4], %r7;")
    ld4 = _index(prog, "ld.global.u32 %r8, [%rd1];")
    use4 = _index(prog, "add.s32 %r9, %r8, 1;")
    # SASS places that put what follows the barrier first
    pos = {i: 10 * i for i in seg}
    pos[ld4] = pos[use4] = 0
    order = _schedule(prog.instructions, seg, [pos.get(i) for i in range(len(prog.instructions))], True)
    at = {i: k for k, i in enumerate(order)}
    assert at[st2] < at[bar] < at[ld4] < at[use4]     # memory accesses never cross the barrier (nor what needs them)


def _mma_ptx():
    """Two ldmatrix feeding one mma.sync each, then a barrier and an independent mma.sync (gemm80's loop shape)."""
    return parse_ptx("""
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k()
{
  .reg .b32 %r<40>;
  .reg .f32 %f<20>;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r30];
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r5, %r6, %r7, %r8}, [%r31];
  ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r9, %r10, %r11, %r12}, [%r32];
  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r9, %r10}, {%f1, %f2, %f3, %f4};
  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f5, %f6, %f7, %f8}, {%r5, %r6, %r7, %r8}, {%r9, %r10}, {%f5, %f6, %f7, %f8};
  bar.sync 0;
  st.shared.u32 [%r33], %r34;
  ret;
}
""").entry("k")


def test_loads_pass_loads_and_mma_sync_interleaves_with_the_loads_that_feed_it():
    prog = _mma_ptx()
    assert not any(set(s) & {i.index for i in prog.instructions if i.kind.name == "MMA_SYNC"}
                   for s in _segments(prog))              # the default order leaves mma.sync in place
    seg = _segments(prog, True)[0]
    idx = {i.text.split()[0] + str(k): i.index for k, i in enumerate(prog.instructions)}
    ld_a, ld_a2, ld_b, mma1, mma2, bar, st = (idx[k] for k in (
        "ldmatrix.sync.aligned.m8n8.x4.shared.b160", "ldmatrix.sync.aligned.m8n8.x4.shared.b161",
        "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b162", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f323",
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f324", "bar.sync5", "st.shared.u326"))
    assert set(seg) >= {ld_a, ld_a2, ld_b, mma1, mma2, bar, st}
    # ptxas's order (gemm80): A fragment, B fragment, the first HMMA, the second A fragment, the barrier, then the
    # second HMMA (register-only: it may follow the barrier)
    sass = {ld_a: 0, ld_b: 1, mma1: 2, ld_a2: 3, bar: 4, mma2: 5, st: 6}
    order = _schedule(prog.instructions, seg, [sass.get(i) for i in range(len(prog.instructions))], True)
    assert [i for i in order if i in sass] == [ld_a, ld_b, mma1, ld_a2, bar, mma2, st]
    # the store may not pass the barrier, nor the barrier the loads: asked to, the schedule keeps them in place
    bad = {ld_a: 5, ld_b: 6, mma1: 7, ld_a2: 8, bar: 1, mma2: 2, st: 0}
    order = _schedule(prog.instructions, seg, [bad.get(i) for i in range(len(prog.instructions))], True)
    at = {i: k for k, i in enumerate(order)}
    assert max(at[ld_a], at[ld_a2], at[ld_b]) < at[bar] < at[st]


def _respects_dependences(prog, seg, order, full=False) -> bool:
    at = {i: k for k, i in enumerate(order)}
    insts = prog.instructions
    for a_pos, a in enumerate(seg):
        for b in seg[a_pos + 1:]:
            A, B = insts[a], insts[b]
            dep = (set(A.dsts) & set(B.srcs) or set(A.srcs) & set(B.dsts) or set(A.dsts) & set(B.dsts)
                   or (A.kind.name in _MEMORY and B.kind.name in _MEMORY
                       and not (full and A.kind.name in _LOADS and B.kind.name in _LOADS)))
            if dep and at[a] > at[b]:
                return False
    return True


_RECORDS = sorted(str(p.parent.relative_to(ROOT)) for p in (ROOT / "workloads" / "records").glob("h200*/*/launch.json"))


@needs_tools
@pytest.mark.parametrize("rec", _RECORDS + ["workloads/microbench/ssr_g1_w8_b16_ld"])
def test_the_sass_order_of_every_bundled_h200_kernel_keeps_every_dependence(rec):
    r = load_record(ROOT / rec)
    prog = r.program()
    pos, tool = SS.record_issue_positions(r, prog)
    assert pos is not None, tool
    for full in (False, True):          # sass.issue_order = 1 (the default) and 2
        o = issue_order(prog, pos, full)
        for seg in _segments(prog, full):
            order = [i for i in sorted(seg, key=lambda i: o.rank[i])]
            assert sorted(order) == sorted(seg)
            assert _respects_dependences(prog, seg, order, full), rec


def test_the_permutation_reorders_each_executed_instance_of_a_segment():
    prog = _prog()
    n = len(prog.instructions)
    seg0 = _segments(prog)[0]
    pos = list(range(0, 10 * n, 10))
    ld2 = _index(prog, "ld.global.u32 %r4, [%rd3];")
    pos[ld2] = 10 * _index(prog, "add.s32 %r2, %r1, 1;") - 5
    pos[_index(prog, "add.s64 %rd3, %rd1, 128;")] = None     # folded into the load's address
    o = issue_order(prog, pos)
    assert o.moves
    want = _schedule(prog.instructions, seg0, pos)
    pcs = np.array(list(range(n)) * 2, dtype=np.int64)       # the block twice (a loop), then nothing else
    perm = permutation(o, pcs)
    assert perm is not None and sorted(perm.tolist()) == list(range(2 * n))
    moved = pcs[perm]
    fixed = [i for i in range(n) if o.seg[i] < 0]
    for rep in range(2):
        part = moved[rep * n:(rep + 1) * n]
        assert sorted(part.tolist()) == list(range(n))       # nothing crosses from one instance into the other
        where = {int(pc): k for k, pc in enumerate(part)}
        assert sorted(seg0, key=lambda i: where[i]) == want
        assert all(part[i] == i for i in fixed)              # never-moved instructions stay in place
    assert permutation(o, np.array(fixed)) is None
    assert permutation(None, np.arange(5)) is None


@needs_tools
def test_the_sass_order_overlaps_a_warps_independent_loads_as_the_h200_does():
    """sm_store_rate (H200, 2026-12-05): 8 warps of one SM load 16-B pieces at 55 B/cycle; nvcc's PTX puts each
    load's xors right after it (the SASS has the 8 LDGs first), which the PTX order serialised (10 B/cycle). The
    replay's own check is tests/test_sm_store_rate_replay.py; here: the SASS order makes the same launch several
    times shorter, and ``sass.issue_order=0`` restores the PTX order."""
    rec = ROOT / "workloads" / "microbench" / "ssr_g1_w8_b16_ld"
    on = wg.simulate(rec, "h200").metrics["cycles"]
    off = wg.simulate(rec, "h200", overrides={"sass.issue_order": 0}).metrics["cycles"]
    assert off > 3 * on


@needs_tools
def test_ptx_of_a_newer_isa_version_is_assembled_at_the_version_ptxas_reads():
    """CUDA 13's nvcc writes .version 9.0; Triton 3.6's ptxas reads up to 8.7: the listing comes from the same PTX
    with the version lowered (the version gates features; none of 9.0's is used here)."""
    r = load_record(ROOT / "workloads" / "microbench" / "ssr_g1_w8_b16_ld")
    assert ".version 9.0" in r.ptx_text()
    insts, tool = SS.sass_listing(r.ptx_text(), r.entry)
    assert insts is not None, tool
    assert sum(1 for s in insts if s.op.startswith("LDG")) >= 8


def test_a_records_sass_places_are_checked(tmp_path):
    """``compiled.<isa>.sass_places``: a malformed entry is a record error naming the field; places written for other
    PTX (another count) are not used: a warning, and the order comes from a fresh listing."""
    from warpgraph.core.errors import UserError

    src = ROOT / "workloads" / "records" / "h200" / "gemm_ptr_M1024_N1024_K1024"
    bad = _with_compiled(src, tmp_path, "sass_places", "1 2 x")
    with pytest.raises(UserError, match="sass_places"):
        load_record(bad)
    if not SS.tools_available():
        return
    r = load_record(_with_compiled(src, tmp_path, "sass_places", "1 2 3"))
    with pytest.warns(UserWarning, match="3 entries for"):
        pos, _tool = SS.record_issue_positions(r, r.program())
    want, _ = SS.record_issue_positions(load_record(src), load_record(src).program())
    assert pos == want


def test_a_records_sass_branches_are_checked_and_used_without_tools(tmp_path, monkeypatch):
    """``compiled.<isa>.sass_branches`` (the taken-branch periods, workloads/sass.py branch_periods): a malformed
    entry is a record error naming the field; the stored periods are what the timing uses, with no ptxas / nvdisasm
    at all; periods naming an instruction the PTX lacks are not used: a warning, and a fresh listing."""
    import json

    from warpgraph.core.errors import UserError
    from warpgraph.runner.timing import lower

    src = ROOT / "workloads" / "microbench" / "ldsm_lat_lds32"
    stored = json.loads((src / "launch.json").read_text())["compiled"]["sm_90a"]["sass_branches"]
    assert stored and SS.decode_branches(stored, 10**6)
    bad = _with_compiled(src, tmp_path, "sass_branches", "37:0 50")
    with pytest.raises(UserError, match="sass_branches"):
        load_record(bad)
    with monkeypatch.context() as m:
        m.setenv("WARPGRAPH_PTXAS", "")
        r = load_record(src)
        assert lower(r.program(), None, record=r).bper == SS.decode_branches(stored, 10**6)
    if not SS.tools_available():
        return
    r = load_record(_with_compiled(src, tmp_path, "sass_branches", "999999:4"))
    with pytest.warns(UserWarning, match="sass_branches does not fit"):
        got, _tool = SS.record_branch_periods(r, r.program())
    assert got == SS.decode_branches(stored, 10**6)


def test_the_switch_level_two_moves_gemm80s_mma_sync_and_the_default_does_not():
    from warpgraph.runner.timing import sass_issue_order

    r = load_record(ROOT / "workloads/records/h200/gemm80_M2048_N2048_K2048")
    prog = r.program()
    mma = [i.index for i in prog.instructions if i.kind.name == "MMA_SYNC"]
    default = sass_issue_order(prog, r, "sm_90a", None)
    full = sass_issue_order(prog, r, "sm_90a", {"issue_order": 2})
    assert (default.seg[mma] == -1).all()
    assert (full.seg[mma] >= 0).all()
    # the K loop's first mma.sync (PTX: after all 24 ldmatrix) issues after 10 of them, as in the SASS
    loop = full.seg[mma[0]]
    body = sorted((i for i in range(len(prog.instructions)) if full.seg[i] == loop), key=lambda i: full.rank[i])
    first = body.index(mma[0]) if mma[0] in body else min(body.index(m) for m in mma if m in body)
    assert sum(prog.instructions[i].kind.name == "LDMATRIX" for i in body[:first]) == 10

"""``.branchtargets`` lists and ``brx.idx`` (the indexed branch NVPTX emits for a switch, as Triton's
warp-specialized partitions dispatch on sm_100a: ``$L_brx_0: .branchtargets $L__BB0_5, ...; brx.idx %r13,
$L_brx_0;``): parsing, per-lane dispatch in the functional pass (a warp may diverge), a branch in the timing
pass, and clear errors for bad lists and indices."""
import json

import numpy as np
import pytest

from warpgraph.core.errors import PTXError, SimulationError
from warpgraph.runner.simulate import simulate
from warpgraph.workloads.functional import run_functional
from warpgraph.workloads.ptx import Label, Targets, parse_ptx
from warpgraph.workloads.record import load_record

# warp w takes partition w % 3 (uniform per warp, like Triton's dispatch on the warp id); lanes of the last
# partition then diverge on lane % 2 through a second list. Every thread writes a code.
PTX = r"""
.version 8.7
.target sm_100a
.address_size 64
.visible .entry disp(.param .u64 out)
{
 .reg .b64 %rd<4>;
 .reg .b32 %r<12>;
 ld.param.u64 %rd1, [out];
 mov.u32 %r1, %tid.x;
 shr.u32 %r2, %r1, 5;
 rem.u32 %r3, %r2, 3;
 mul.wide.u32 %rd2, %r1, 4;
 add.u64 %rd3, %rd1, %rd2;
$L_brx_0: .branchtargets
	$L__BB0_1,
	$L__BB0_2,
	$L__BB0_3;
 brx.idx.uni %r3, $L_brx_0;
$L__BB0_1:
 mov.u32 %r5, 100;
 bra.uni $L__END;
$L__BB0_2:
 mov.u32 %r5, 200;
 bra.uni $L__END;
$L__BB0_3:
 and.b32 %r6, %r1, 1;
$L_brx_1: .branchtargets $L__BB0_4, $L__BB0_5;
 brx.idx %r6, $L_brx_1;
$L__BB0_4:
 mov.u32 %r5, 300;
 bra.uni $L__END;
$L__BB0_5:
 mov.u32 %r5, 301;
$L__END:
 add.u32 %r7, %r5, %r1;
 st.global.u32 [%rd3], %r7;
 ret;
}
"""

N_THREADS = 192


def _expected():
    t = np.arange(N_THREADS)
    part = (t >> 5) % 3
    code = np.where(part == 0, 100, np.where(part == 1, 200, np.where(t % 2 == 0, 300, 301)))
    return (code + t).astype(np.uint32)


def _record(tmp_path, ptx=PTX):
    (tmp_path / "kernel.ptx").write_text(ptx)
    (tmp_path / "launch.json").write_text(json.dumps({
        "format": "launch-record/1", "name": "disp", "entry": "disp", "grid": [2, 1, 1],
        "block": [N_THREADS, 1, 1],
        "buffers": {"out": {"dtype": "uint32", "shape": [N_THREADS], "init": "poison"}},
        "params": [{"ptr": "out"}]}))
    return tmp_path


def test_parse_branchtargets():
    prog = parse_ptx(PTX).entry()
    brx = [i for i in prog.instructions if i.opcode == "brx"]
    assert len(brx) == 2
    t0, t1 = brx[0].operands[1], brx[1].operands[1]
    assert isinstance(t0, Targets) and [lb.name for lb in t0.labels] == ["$L__BB0_1", "$L__BB0_2", "$L__BB0_3"]
    assert all(isinstance(lb, Label) for lb in t0.labels)
    assert [prog.labels[lb.name] for lb in t1.labels] == [lb.target for lb in t1.labels]
    assert brx[0].dsts == () and brx[0].srcs == (brx[0].operands[0].index,)   # the index is read, not written


def test_functional_dispatch_per_lane(tmp_path):
    res = run_functional(load_record(_record(tmp_path)), want_trace=False)
    np.testing.assert_array_equal(res.outputs["out"], _expected())


def test_timing_runs_the_indexed_branch(tmp_path):
    r = simulate(_record(tmp_path), "h200", check=False, want_outputs=True)
    assert r.metrics["cycles"] > 0
    np.testing.assert_array_equal(r.outputs["out"], _expected())


def test_index_outside_the_list_is_an_error(tmp_path):
    bad = PTX.replace("rem.u32 %r3, %r2, 3;", "mov.u32 %r3, %r2;")   # warps 3..5 index past 3 entries
    with pytest.raises(SimulationError, match=r"brx.idx index 3 outside the 3-entry list \$L_brx_0") as e:
        run_functional(load_record(_record(tmp_path, bad)), want_trace=False)
    assert "kernel.ptx:" in str(e.value)


@pytest.mark.parametrize("src, msg", [
    (" .branchtargets A, B;\nA: ret;\nB: ret;", r"\.branchtargets needs a label"),
    ("ts: .branchtargets A, NOPE;\n brx.idx %r1, ts;\nA: ret;", "undefined label or symbol NOPE"),
    ("ts: .branchtargets A;\n bra ts;\nA: ret;", r"used by bra \(only brx.idx takes one\)"),
    ("ts: .branchtargets A;\n brx %r1, ts;\nA: ret;", "brx needs .idx"),
    ("ts: .branchtargets A;\n brx.idx %r1, A;\nA: ret;", "takes an index and a .branchtargets list"),
    ("ts: .calltargets f;\n ret;", r"\.calltargets .* not supported"),
    ("ts: .branchtargets A;\nts: ret;\nA: ret;", "defined twice"),
    (" brx.idx %r1, ts;\nts: .branchtargets A;\nA: ret;", "used before it is declared"),   # ptxas refuses it too
])
def test_bad_lists_are_clear_parse_errors(src, msg):
    ptx = (".version 8.7\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{\n .reg .b32 %r<4>;\n"
           " mov.u32 %r1, 0;\n" + src + "\n}\n")
    with pytest.raises(PTXError, match=msg) as e:
        parse_ptx(ptx, "k.ptx").entry()
    assert "k.ptx:" in str(e.value)


def test_triton_sm100a_warp_specialized_record():
    """Triton's own sm_100a warp-specialized GEMM (workloads/records/b200/gemm_warp_spec_s_*) dispatches its
    partitions with brx.idx: it runs functionally and in timing on the B200 model and passes its golden check."""
    from pathlib import Path

    import warpgraph
    from warpgraph.workloads.references import check

    d = Path(warpgraph.__file__).parent / "workloads" / "records" / "b200" / "gemm_warp_spec_s_M256_N256_K192"
    rec = load_record(d)
    assert ".branchtargets" in rec.ptx_text() and "brx.idx" in rec.ptx_text()
    c = check(rec, run_functional(rec, want_trace=False).outputs)
    assert c.ok, c.message
    r = simulate(d, "b200", check=True)
    assert r.check.ok, r.check.message
    assert r.metrics["cycles"] > 1000

"""Broken PTX gives PTXError (a UserError) naming kernel.ptx:LINE and the token."""
from pathlib import Path

import pytest

from warpgraph.core.errors import PTXError, UserError
from warpgraph.workloads.ptx import parse_ptx

HEAD = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p0)
{
 .reg .b32 %r<4>;
 .reg .pred %p<2>;
"""


def _err(body):
    with pytest.raises(PTXError) as ei:
        parse_ptx(HEAD + body + "\n}\n", "kernel.ptx").entry("k")
    e = ei.value
    assert isinstance(e, UserError)
    return e


def test_bad_token_names_line():
    e = _err(" mov.b32 %r1, 5;\n add.s32 %r2, %r1, #3;\n ret;")
    assert e.location == "kernel.ptx:9" and "'#'" in e.message


def test_unknown_opcode_lists_all():
    e = _err(" frobnicate.b32 %r1, %r2;\n mov.b32 %r1, 1;\n wibble %r1;\n ret;")
    assert e.location == "kernel.ptx:8"
    assert "frobnicate.b32" in e.message and "wibble" in e.message and "line 10" in e.message


def test_undefined_label():
    e = _err(" mov.b32 %r1, 1;\n @%p1 bra $L__nowhere;\n ret;")
    assert e.location == "kernel.ptx:9" and "$L__nowhere" in e.message


def test_undefined_register():
    e = _err(" mov.b32 %r1, 1;\n add.s32 %r2, %r1, %r99;\n ret;")
    assert e.location == "kernel.ptx:9" and "%r99" in e.message


def test_undefined_guard_register():
    e = _err(" @%q3 ret;")
    assert e.location == "kernel.ptx:8" and "%q3" in e.message


def test_missing_comma_and_semicolon():
    e = _err(" add.s32 %r2 %r1, 1;\n ret;")
    assert e.location == "kernel.ptx:8" and "expected" in e.message
    e = _err(" mov.b32 %r1, 1\n ret;")
    assert e.location == "kernel.ptx:9"


def test_scoped_register_not_visible_outside():
    e = _err(" { .reg .pred c; setp.eq.s32 c, %r1, 0; }\n @c ret;\n ret;")
    assert e.location == "kernel.ptx:9" and "c" in e.message


def test_unterminated_body():
    with pytest.raises(PTXError) as ei:
        parse_ptx(HEAD + " ret;\n", "kernel.ptx")
    assert "unterminated" in ei.value.message


def test_duplicate_register_and_label():
    e = _err(" .reg .b32 %r1;\n ret;")
    assert "declared twice" in e.message
    e = _err("L1: mov.b32 %r1, 1;\nL1: ret;")
    assert "defined twice" in e.message and e.location == "kernel.ptx:9"


def test_missing_entry():
    m = parse_ptx(HEAD + " ret;\n}\n", "kernel.ptx")
    with pytest.raises(PTXError) as ei:
        m.entry("nope")
    assert "k" in ei.value.hint


def test_unknown_type_modifier_is_a_ptx_error_with_line(tmp_path):
    """A mistyped type (.q32) must not be silently accepted with a default type."""
    from warpgraph.core.errors import PTXError
    from warpgraph.workloads.ptx import parse_ptx

    src = (Path(__file__).resolve().parents[1] / "workloads" / "records" / "h200" / "rmsnorm_rows4096_cols4096"
           / "kernel.ptx").read_text()
    lines = src.splitlines()
    k = next(i for i, l in enumerate(lines) if l.strip().startswith("add.s32"))
    lines[k] = lines[k].replace("add.s32", "add.q32", 1)
    with pytest.raises(PTXError) as ei:
        parse_ptx("\n".join(lines), "kernel.ptx")
    assert f"kernel.ptx:{k + 1}" in ei.value.location and ".q32" in str(ei.value)

"""launch-record/1: every bundled record loads, validates against its PTX, round-trips; broken records fail
with a RecordError naming the JSON path."""
import copy
import json
from pathlib import Path

import pytest

import warpgraph
from warpgraph.core.errors import RecordError, UserError
from warpgraph.workloads.record import LaunchRecord, entry_params, load_record, record_from_dict, save_record

RECORDS = Path(warpgraph.__file__).parent / "workloads" / "records" / "h200"
NAMES = sorted(p.name for p in RECORDS.iterdir() if (p / "launch.json").is_file())
TMA = RECORDS / "gemm_tma_M2048_N2048_K2048"


def test_twelve_records_bundled():
    assert len(NAMES) == 12


@pytest.mark.parametrize("name", NAMES)
def test_record_loads_and_validates_light(name):
    rec = load_record(RECORDS / name)
    assert rec.dir == RECORDS / name and rec.ptx_path.is_file()
    assert rec.measured["cycles"] > 0
    rec.validate_against(None)  # light-weight .param scan
    # unchanged round trip
    assert rec.to_json_dict() == json.loads((RECORDS / name / "launch.json").read_text())


@pytest.mark.parametrize("name", NAMES)
def test_record_validates_against_parsed_program(name):
    pytest.importorskip("warpgraph.workloads.ptx.parser")
    rec = load_record(RECORDS / name / "launch.json")
    prog = rec.program()
    assert rec.program() is prog  # cached
    rec.validate_against(prog)


def _load_dict(d, tmp_path):
    (tmp_path / "launch.json").write_text(json.dumps(d))
    (tmp_path / "kernel.ptx").write_text((TMA / "kernel.ptx").read_text())
    return load_record(tmp_path)


def _tma():
    return json.loads((TMA / "launch.json").read_text())


def _err(d, tmp_path, *, validate=True) -> RecordError:
    with pytest.raises(RecordError) as ei:
        r = _load_dict(d, tmp_path)
        if validate:
            r.validate_against(None)
    assert isinstance(ei.value, UserError)
    return ei.value


def test_wrong_param_count(tmp_path):
    d = _tma()
    d["params"].pop(3)
    e = _err(d, tmp_path)
    assert "(params)" in e.location and "19 params" in e.message and "declares 20" in e.message
    assert "gemm_tma_param_0" in e.hint


def test_wrong_param_type(tmp_path):
    d = _tma()
    d["params"][1] = {"f32": 1.0}
    e = _err(d, tmp_path)
    assert "(params[1])" in e.location and ".u32" in e.message


def test_tensormap_for_scalar_param(tmp_path):
    d = _tma()
    d["params"][1], d["params"][0] = d["params"][0], {"u32": 5}
    e = _err(d, tmp_path)
    assert "(params[0])" in e.location and "tensormap" in e.hint


def test_missing_buffer(tmp_path):
    d = _tma()
    d["params"][5]["tensormap"]["buffer"] = "nope"
    e = _err(d, tmp_path, validate=False)
    assert "(params[5].tensormap.buffer)" in e.location and "nope" in e.message


def test_ptr_to_missing_buffer(tmp_path):
    d = json.loads((RECORDS / "swiglu_n16777216" / "launch.json").read_text())
    d["params"][2] = {"ptr": "zz"}
    e = _err(d, tmp_path, validate=False)
    assert "(params[2].ptr)" in e.location


@pytest.mark.parametrize("box,frag", [([128], "rank 1"), ([300, 64], "1..256"), ([128, 4], "multiple of 16"),
                                      ([128, 128], "swizzle span")])
def test_bad_tensormap_box(tmp_path, box, frag):
    d = _tma()
    d["params"][0]["tensormap"]["box"] = box
    e = _err(d, tmp_path, validate=False)
    assert "(params[0].tensormap.box)" in e.location and frag in (e.message + str(e.hint))


def test_bad_swizzle_value(tmp_path):
    d = _tma()
    d["params"][0]["tensormap"]["swizzle_bytes"] = 96
    e = _err(d, tmp_path, validate=False)
    assert "params[0].tensormap.swizzle_bytes" in e.location


def test_unknown_dtype(tmp_path):
    d = _tma()
    d["buffers"]["a"]["dtype"] = "float17"
    e = _err(d, tmp_path, validate=False)
    assert "(buffers.a.dtype)" in e.location and "bfloat16" in e.hint


def test_unknown_key_and_bad_param_shape(tmp_path):
    d = _tma()
    d["gird"] = [1, 1, 1]
    e = _err(d, tmp_path, validate=False)
    assert "gird" in e.message and "source" in e.hint
    d = _tma()
    d["params"][2] = {"u32": 1, "u64": 2}
    e = _err(d, tmp_path, validate=False)
    assert "params[2]" in e.location and "one-key" in e.message
    d = _tma()
    d["params"][2] = {"u32": -1}
    e = _err(d, tmp_path, validate=False)
    assert "params[2]" in e.location and "range" in e.message


def test_source_is_free_form_and_check_optional(tmp_path):
    d = _tma()
    d["source"]["anything"] = {"nested": [1, 2]}
    del d["check"]
    r = _load_dict(d, tmp_path)
    assert r.check is None and r.source["anything"] == {"nested": [1, 2]}


def test_bad_check_reference_and_format(tmp_path):
    d = _tma()
    d["check"]["reference"] = "fft"
    assert "(check.reference)" in _err(d, tmp_path, validate=False).location
    d = _tma()
    d["format"] = "launch-record/2"
    assert "(format)" in _err(d, tmp_path, validate=False).location


def test_invalid_json_and_missing_path(tmp_path):
    (tmp_path / "launch.json").write_text("{\n  \"format\": ,\n}")
    with pytest.raises(RecordError) as ei:
        load_record(tmp_path)
    assert ei.value.location.endswith("launch.json:2")
    with pytest.raises(RecordError):
        load_record(tmp_path / "nothing_here")


def test_entry_missing_in_ptx(tmp_path):
    d = _tma()
    d["entry"] = "gemm_nope"
    e = _err(d, tmp_path)
    assert "gemm_tma" in e.hint


def test_save_and_reload(tmp_path):
    rec = load_record(TMA)
    out = save_record(rec, tmp_path / "copy")
    assert out.to_json_dict() == rec.to_json_dict()
    assert out.ptx_text() == rec.ptx_text()
    assert out.measured is None


def test_entry_params_scan_alignment():
    ps = entry_params((TMA / "kernel.ptx").read_text(), "gemm_tma")
    assert len(ps) == 20
    assert ps[0]["size"] == 128 and ps[0]["align"] == 64 and ps[0]["array"]
    assert ps[-1]["type"] == "u64" and ps[-1]["align"] == 8  # `.ptr .global .align 1` is the pointee's


def test_in_memory_record_needs_ptx():
    d = _tma()
    r = record_from_dict(d)
    with pytest.raises(RecordError):
        r.ptx_text()
    r2 = record_from_dict(d, ptx_text=(TMA / "kernel.ptx").read_text())
    r2.validate_against(None)
    assert isinstance(r2, LaunchRecord) and r2.dir is None and r2.measured is None


def test_public_api_load_record():
    assert warpgraph.load_record(TMA).name == "gemm_tma_M2048_N2048_K2048"

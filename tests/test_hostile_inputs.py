"""Hostile input files (issue 21): launch records, PTX files and architecture YAMLs that must be refused with a
located UserError before anything large is allocated or read, never a traceback, hang or silent acceptance."""
import json
import os
import time

import pytest

from warpgraph.core.errors import RecordError, SpecError
from warpgraph.topologies import load_arch
from warpgraph.workloads import record as R
from warpgraph.workloads.record import load_record

import _hostile_helpers as _H  # noqa: E402  (tests/conftest.py puts tests/ on the path)
kernel, write_record, cli = _H.kernel, _H.write_record, _H.cli



BASE = {"format": "launch-record/1", "name": "h", "entry": "k", "grid": [1, 1, 1], "block": [64, 1, 1],
        "buffers": {"out": {"dtype": "uint32", "shape": [4096], "init": "zeros"}}, "params": [{"ptr": "out"}]}
BODY = " st.global.b32 [%rd3], %r1;\n"


def rec_dir(tmp_path, name="r", with_ptx=True, **changes):
    d = tmp_path / name
    d.mkdir(parents=True, exist_ok=True)
    data = json.loads(json.dumps(BASE))
    data.update(changes)
    (d / "launch.json").write_text(json.dumps(data))
    if with_ptx:
        (d / "kernel.ptx").write_text(kernel(BODY))
    return d


# ------------------------------------------------------------------------------------------ sizes
@pytest.mark.parametrize("changes, what", [
    ({"buffers": {"out": {"dtype": "float16", "shape": [2**37]}}}, "limit"),
    ({"buffers": {"out": {"dtype": "uint32", "shape": [2**32, 2**32]}}}, "limit"),     # int64 overflow
    ({"buffers": {"out": {"dtype": "uint32", "shape": [2**62, 4]}}}, "limit"),
    ({"buffers": {"a": {"dtype": "uint8", "shape": [5 << 30]}, "out": {"dtype": "uint8", "shape": [5 << 30]}}},
     "total"),
    ({"buffers": {"out": {"dtype": "float64", "shape": [1 << 30, 2]}}}, "limit"),
    ({"grid": [2**31 - 1, 1, 1]}, "CTAs"),
    ({"grid": [1, 70000, 1]}, "CUDA limits"),
    ({"block": [2048, 1, 1]}, "CUDA limits"),
    ({"cluster": [32, 1, 1]}, "at most 16"),
    ({"shared_bytes": 1 << 40}, "less than or equal"),
    ({"buffers": {"out": {"dtype": "uint32", "shape": [True]}}}, "boolean"),
])
def test_size_limits_before_allocation(tmp_path, changes, what):
    d = rec_dir(tmp_path, **changes)
    t = time.perf_counter()
    with pytest.raises(RecordError) as ei:
        load_record(d)
    assert time.perf_counter() - t < 5
    assert what in str(ei.value) and "launch.json" in ei.value.location


def test_buffer_size_uses_python_integers():
    b = R.Buffer(dtype="uint8", shape=[2**16, 2**16])
    assert b.numel == 2**32 and b.nbytes == 2**32


# ------------------------------------------------------------------------------------------ paths
@pytest.mark.parametrize("ptx", ["/dev/zero", "../../etc/passwd", "/etc/passwd", "sub/../../x.ptx", "", "..",
                                 "C:/x.ptx"])
def test_ptx_path_must_stay_inside_the_record_folder(tmp_path, ptx):
    d = rec_dir(tmp_path, with_ptx=False, **{"ptx": ptx})
    with pytest.raises(RecordError) as ei:
        load_record(d).ptx_text()
    assert "root:" not in str(ei.value)       # never echoes /etc/passwd
    assert "inside" in str(ei.value)


def test_ptx_outside_the_folder_is_never_read(tmp_path):
    (tmp_path / "secret.txt").write_text("root:x:0:0:secret\n")
    d = rec_dir(tmp_path / "a", with_ptx=False, ptx="../../secret.txt")
    with pytest.raises(RecordError) as ei:
        load_record(d).ptx_text()
    assert "root:x" not in str(ei.value) and "0:0:secret" not in str(ei.value)
    assert "inside" in str(ei.value)


def test_ptx_symlink_outside_is_refused(tmp_path):
    d = rec_dir(tmp_path, with_ptx=False)
    (tmp_path / "outside.ptx").write_text(kernel(BODY))
    os.symlink(tmp_path / "outside.ptx", d / "kernel.ptx")
    with pytest.raises(RecordError, match="outside the record folder"):
        load_record(d).ptx_text()


@pytest.mark.timeout(30)
def test_ptx_fifo_and_folder_are_refused_without_blocking(tmp_path):
    d = rec_dir(tmp_path, with_ptx=False)
    os.mkfifo(d / "kernel.ptx")
    with pytest.raises(RecordError, match="FIFO"):
        load_record(d).ptx_text()
    d2 = rec_dir(tmp_path, "r2", with_ptx=False)
    (d2 / "kernel.ptx").mkdir()
    with pytest.raises(RecordError, match="folder"):
        load_record(d2).ptx_text()


def test_ptx_size_cap(tmp_path, monkeypatch):
    d = rec_dir(tmp_path)
    monkeypatch.setattr(R, "MAX_PTX_BYTES", 100)
    with pytest.raises(RecordError, match="over the limit"):
        load_record(d).ptx_text()


def test_non_utf8_ptx_and_json_report_byte_offset(tmp_path):
    d = rec_dir(tmp_path)
    raw = kernel(BODY).encode()
    (d / "kernel.ptx").write_bytes(raw[:50] + b"\xff\xfe" + raw[50:])
    with pytest.raises(RecordError) as ei:
        load_record(d).ptx_text()
    assert "byte offset 50" in str(ei.value) and "UTF-8" in str(ei.value)
    d2 = rec_dir(tmp_path, "r2")
    (d2 / "launch.json").write_bytes(b'{"format": "launch-record/1", "name": "\xc3\x28"}')
    with pytest.raises(RecordError, match="byte offset 39"):
        load_record(d2)


def test_json_nesting_and_garbage(tmp_path):
    d = rec_dir(tmp_path)
    (d / "launch.json").write_text('{"source": ' + "[" * 100000 + "]" * 100000 + "}")
    with pytest.raises(RecordError, match="nested deeper"):
        load_record(d)
    (d / "launch.json").write_text("")
    with pytest.raises(RecordError, match="not valid JSON"):
        load_record(d)
    (d / "launch.json").write_text("[1, 2]")
    with pytest.raises(RecordError, match="JSON object"):
        load_record(d)


@pytest.mark.parametrize("name", ["../../escaped", "/tmp/abs", "a/b", "..", "", "x\x00y", "-rf"])
def test_buffer_names_cannot_escape_save_outputs(tmp_path, name):
    d = rec_dir(tmp_path, buffers={name: {"dtype": "uint32", "shape": [4096]}}, params=[{"ptr": name}])
    with pytest.raises(RecordError, match="plain name"):
        load_record(d)


def test_save_outputs_stays_in_its_folder(tmp_path):
    d = write_record(tmp_path / "rec", BODY)
    out = tmp_path / "a" / "b" / "outs"
    code, _, err = cli(["run", str(d), "--mode", "functional", "--save-outputs", str(out)])
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["out.npy"]
    assert not any(p.suffix == ".npy" for p in (tmp_path / "a").iterdir())


# ------------------------------------------------------------------------------------------ YAML
def write(tmp_path, text, name="a.yaml", mode="w"):
    p = tmp_path / name
    (p.write_bytes if isinstance(text, bytes) else p.write_text)(text)
    return p


@pytest.mark.timeout(30)
def test_yaml_alias_bomb_refused_fast(tmp_path):
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, cur in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    p = write(tmp_path, "\n".join(lines) + "\n")
    assert p.stat().st_size < 500
    t = time.perf_counter()
    with pytest.raises(SpecError, match="aliases"):
        load_arch(p)
    assert time.perf_counter() - t < 10


def test_yaml_nesting_depth(tmp_path):
    with pytest.raises(SpecError, match="nested"):
        load_arch(write(tmp_path, "a: " + "[" * 300 + "]" * 300 + "\n"))
    deep = "name: x\nsources:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(40)) + "  " * 41 + "v: 1\n"
    with pytest.raises(SpecError, match="nested"):
        load_arch(write(tmp_path, deep, "b.yaml"))


def test_yaml_empty_and_non_utf8(tmp_path):
    with pytest.raises(SpecError, match="empty"):
        load_arch(write(tmp_path, ""))
    with pytest.raises(SpecError, match="empty"):
        load_arch(write(tmp_path, "# only a comment\n", "c.yaml"))
    with pytest.raises(SpecError) as ei:
        load_arch(write(tmp_path, b"extends: h200\nname: \xff\n", "d.yaml"))
    assert "byte offset 20" in str(ei.value) and ei.value.location.endswith(":2")


@pytest.mark.timeout(30)
def test_yaml_fifo_is_refused(tmp_path):
    p = tmp_path / "f.yaml"
    os.mkfifo(p)
    with pytest.raises(SpecError, match="not a regular file"):
        load_arch(str(p))


@pytest.mark.parametrize("override, what", [
    ("l2.partitions=true", "boolean"), ("sm.count=false", "boolean"), ("sm.count=1000000000", "out of range"),
    ("clocks.sm_mhz=.inf", "finite"), ("hbm.bandwidth_gb_per_s=.inf", "finite"), ("clocks.l2_mhz=.nan", "finite"),
    ("sm.shared_carveouts_kib=[-8, 16]", "out of range"), ("fabric.gx_planes_enabled=3", "gx_planes"),
    ("latencies.fp32.latency_cycles=1000000000000", "out of range"), ("hbm.efficiency=2", "out of range"),
    ("cta_scheduler.launch_latency_cycles=10000000", "out of range"),
    ("tma.admission_depth=1e300", "integer"), ("fabric.gx_planes_enabled=99", "out of range"),
])
def test_spec_strict_types_and_physical_ranges(override, what):
    with pytest.raises(SpecError) as ei:
        load_arch("h200", [override])
    assert what in str(ei.value)
    assert ei.value.location


def test_valid_edge_values_still_accepted():
    s = load_arch("h200", ["fabric.gx_planes_enabled=1", "sm.shared_carveouts_kib=[0, 8, 16]"])
    assert s.fabric.gx_planes_enabled == 1
    for name in ("h100", "h200", "b200", "rtx5090"):
        load_arch(name)

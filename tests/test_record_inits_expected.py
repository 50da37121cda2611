"""launch-record/1 buffer inits {"values"}, {"uniform"}, {"addresses"}; check.expected golden outputs with a
per-output tolerance; user references only from a file (load_user_references / run --references)."""
import json

import numpy as np
import pytest

from warpgraph.core.errors import RecordError
from warpgraph.workloads import references as R
from warpgraph.workloads.memory import DeviceMemory
from warpgraph.workloads.record import load_record, record_from_dict

PTX = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p0)
{
 ret;
}
"""


def rec_dict(buffers, check=None):
    d = {"format": "launch-record/1", "name": "t", "entry": "k", "grid": [1], "block": [32],
         "buffers": buffers, "params": [{"ptr": next(iter(buffers))}]}
    if check is not None:
        d["check"] = check
    return d


def make(buffers, check=None, tmp_path=None):
    d = rec_dict(buffers, check)
    if tmp_path is None:
        return record_from_dict(d, ptx_text=PTX)
    (tmp_path / "launch.json").write_text(json.dumps(d))
    (tmp_path / "kernel.ptx").write_text(PTX)
    return load_record(tmp_path)


def test_values_uniform_addresses_inits():
    r = make({"tab": {"dtype": "uint64", "shape": [3], "init": {"addresses": ["x", "y", "x+4"]}},
              "x": {"dtype": "bfloat16", "shape": [2, 2], "init": {"values": [1.0, -2.5, 3.0, 0.0]}},
              "y": {"dtype": "int32", "shape": [1000], "init": {"uniform": [-3, 3]}},
              "z": {"dtype": "float32", "shape": [1000], "init": {"uniform": [2.0, 4.0]}},
              "w": {"dtype": "float8_e4m3fn", "shape": [2], "init": {"values": [0.5, -448]}}})
    m = DeviceMemory.from_record(r, 0)
    assert list(m.view("tab")) == [m.addr_of("x"), m.addr_of("y"), m.addr_of("x") + 4]
    assert m.values("x").tolist() == [[1.0, -2.5], [3.0, 0.0]]
    y = m.view("y")
    assert y.min() == -3 and y.max() == 3 and len(np.unique(y)) == 7
    z = m.view("z")
    assert 2.0 <= z.min() and z.max() < 4.0 and abs(z.mean() - 3.0) < 0.1
    assert m.values("w").tolist() == [0.5, -448.0]
    # deterministic per seed, independent of other buffers
    assert (DeviceMemory.from_record(r, 0).view("z") == z).all() and not (DeviceMemory.from_record(r, 1).view("z") == z).all()
    assert r.to_json_dict()["buffers"]["tab"]["init"] == {"addresses": ["x", "y", "x+4"]}


@pytest.mark.parametrize("buf,where", [
    ({"dtype": "float32", "shape": [3], "init": {"values": [1, 2]}}, "buffers.b.init.values"),
    ({"dtype": "int32", "shape": [2], "init": {"values": [1, 2.5]}}, "buffers.b.init.values"),
    ({"dtype": "int32", "shape": [1], "init": {"addresses": ["b"]}}, "buffers.b.dtype"),
    ({"dtype": "uint64", "shape": [1], "init": {"addresses": ["nope"]}}, "buffers.b.init.addresses[0]"),
    ({"dtype": "uint64", "shape": [1], "init": {"addresses": ["b+99"]}}, "buffers.b.init.addresses[0]"),
    ({"dtype": "uint64", "shape": [1], "init": {"addresses": ["b+x"]}}, "buffers.b.init.addresses[0]"),
    ({"dtype": "float32", "shape": [1], "init": {"uniform": [2, 1]}}, "buffers.b.init"),
])
def test_bad_inits_name_the_json_path(buf, where):
    with pytest.raises(RecordError) as e:
        make({"b": buf})
    assert f"({where}" in e.value.location


def test_expected_golden_outputs(tmp_path):
    bufs = {"o": {"dtype": "float16", "shape": [4, 8], "init": "poison"},
            "s": {"dtype": "int32", "shape": [4], "init": "zeros"}}
    chk = {"expected": {"o": {"file": "expected_o.npy", "max_rel_err": 1e-3},
                        "s": {"file": "gold/s.npy", "max_abs_err": 0}}}
    r = make(bufs, chk, tmp_path)
    gold = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
    np.save(tmp_path / "expected_o.npy", gold)
    (tmp_path / "gold").mkdir()
    np.save(tmp_path / "gold" / "s.npy", np.arange(4))
    out = {"o": gold.astype(np.float16), "s": np.arange(4, dtype=np.int32)}
    c = R.check(r, out)
    assert c.ok, c.message
    assert not R.check(r, {**out, "s": np.array([0, 1, 2, 4], np.int32)}).ok          # abs tolerance 0
    assert not R.check(r, {**out, "o": (gold * 1.01).astype(np.float16)}).ok          # 1e-2 > 1e-3
    bad = gold.astype(np.float16).copy()
    bad[0, 0] = np.nan
    res = R.check(r, {**out, "o": bad})
    assert not res.ok and res.nan_count == 1
    np.save(tmp_path / "expected_o.npy", gold[:2])
    with pytest.raises(RecordError, match="holds 16 values"):
        R.check(r, out)
    (tmp_path / "gold" / "s.npy").unlink()
    np.save(tmp_path / "expected_o.npy", gold)
    with pytest.raises(RecordError, match="no golden output file"):
        R.check(r, out)
    assert r.to_json_dict()["check"] == chk


@pytest.mark.parametrize("chk,msg", [
    ({"expected": {"o": {"file": "o.npy"}}}, "tolerance"),
    ({"expected": {"o": {"file": "/abs/o.npy", "max_rel_err": 1}}}, "inside the record folder"),
    ({"expected": {"o": {"file": "../o.npy", "max_rel_err": 1}}}, "inside the record folder"),
    ({"expected": {"nope": {"file": "o.npy", "max_rel_err": 1}}}, "unknown buffer"),
    ({}, "needs a named"),
    ({"reference": "gemm", "inputs": []}, "needs \"output\""),
    ({"output": "o", "max_rel_err": 1, "expected": {"o": {"file": "o.npy", "max_rel_err": 1}}}, "belong to a named"),
])
def test_bad_check_blocks(chk, msg):
    with pytest.raises(RecordError, match=msg):
        make({"o": {"dtype": "float32", "shape": [2]}}, chk)


def test_user_references_only_from_a_file(tmp_path, monkeypatch):
    monkeypatch.setattr(R, "USER_REFERENCES", {})
    bufs = {"o": {"dtype": "float32", "shape": [3], "init": "poison"},
            "x": {"dtype": "float32", "shape": [3], "init": {"values": [1, 2, 3]}}}
    chk = {"output": "o", "reference": "my_double", "inputs": ["x"], "max_rel_err": 1e-6, "args": {"k": 2.0}}
    with pytest.raises(RecordError, match="--references"):
        make(bufs, chk)
    f = tmp_path / "my_refs.py"
    f.write_text("import numpy as np\n\ndef my_double(x, k):\n    return k * x\n\ndef _helper():\n    pass\n")
    assert R.load_user_references(f) == ["my_double"]
    r = make(bufs, chk)
    assert R.check(r, {"o": np.array([2, 4, 6], np.float32), "x": np.array([1, 2, 3], np.float32)}).ok
    assert not R.check(r, {"o": np.array([2, 4, 7], np.float32), "x": np.array([1, 2, 3], np.float32)}).ok
    g = tmp_path / "clash.py"
    g.write_text("def gemm(a, b):\n    return a\n")
    with pytest.raises(RecordError, match="built in"):
        R.load_user_references(g)
    h = tmp_path / "empty.py"
    h.write_text("X = 1\n")
    with pytest.raises(RecordError, match="no functions"):
        R.load_user_references(h)
    with pytest.raises(RecordError, match="no reference file"):
        R.load_user_references(tmp_path / "missing.py")


def test_cli_run_check_with_user_references(tmp_path, monkeypatch):
    """`warpgraph run REC --check --references refs.py`: the record names the function, the file supplies it."""
    from typer.testing import CliRunner

    from warpgraph.cli.main import app

    monkeypatch.setattr(R, "USER_REFERENCES", {})
    ptx = (pathlib_root() / "workloads/gallery/records/axpby_f32_n3001/kernel.ptx").read_text()
    d = json.loads((pathlib_root() / "workloads/gallery/records/axpby_f32_n3001/launch.json").read_text())
    d["check"] = {"output": "out", "reference": "my_axpby", "inputs": ["x", "y"], "max_rel_err": 1e-5,
                  "args": {"alpha": 1.5, "beta": -0.5}}
    rd = tmp_path / "rec"
    rd.mkdir()
    (rd / "launch.json").write_text(json.dumps(d))
    (rd / "kernel.ptx").write_text(ptx)
    refs = tmp_path / "my_refs.py"
    refs.write_text("def my_axpby(x, y, alpha, beta):\n    return alpha * x + beta * y\n")
    r = CliRunner().invoke(app, ["run", str(rd), "--mode", "functional", "--check", "--references", str(refs)])
    assert r.exit_code == 0, r.output
    assert "ok" in r.output.lower()
    refs.write_text("def my_axpby(x, y, alpha, beta):\n    return alpha * x - beta * y\n")
    monkeypatch.setattr(R, "USER_REFERENCES", {})
    r = CliRunner().invoke(app, ["run", str(rd), "--mode", "functional", "--check", "--references", str(refs)])
    assert r.exit_code == 1, r.output


def pathlib_root():
    from pathlib import Path

    import warpgraph

    return Path(warpgraph.__file__).parent

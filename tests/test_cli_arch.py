"""``warpgraph arch ...`` and error handling of ``main()`` (exit 2, no traceback)."""
import json
import subprocess
import sys

import pytest

from warpgraph.cli.main import main


def run(capsys, *argv):
    with pytest.raises(SystemExit) as ei:
        main(list(argv))
    out = capsys.readouterr()
    return ei.value.code, out.out, out.err


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == "warpgraph 0.1.0"


def test_show_with_set(capsys):
    code, out, _ = run(capsys, "arch", "show", "h200", "--set", "l2.size_bytes=1234")
    assert code == 0 and "size_bytes: 1234" in out
    code, out, _ = run(capsys, "arch", "show", "h200", "--json", "--set", "tma.admission_depth=8")
    assert code == 0 and json.loads(out)["tma"]["admission_depth"] == 8


def test_list_diff_schema_graph(capsys, tmp_path):
    code, out, _ = run(capsys, "arch", "list")
    assert code == 0 and all(n in out for n in ("h100", "h200", "b200", "rtx5090"))
    code, out, _ = run(capsys, "arch", "diff", "h100", "h200")
    assert code == 0 and "l2.size_bytes" in out and "62914560" in out
    code, out, _ = run(capsys, "arch", "schema")
    assert code == 0 and "tensor_core" in json.loads(out)["properties"]
    code, out, _ = run(capsys, "arch", "graph", "h200", "--format", "summary")
    assert code == 0 and "subpartition" in out and "528" in out
    f = tmp_path / "g.graphml"
    code, _, _ = run(capsys, "arch", "graph", "h200", "--format", "graphml", "-o", str(f))
    assert code == 0 and f.read_text().count("<node ") > 1000


@pytest.mark.parametrize("argv,words", [
    (["arch", "show", "h200", "--set", "tma.bogus=1"], ["tma.bogus", "admission_depth"]),
    (["arch", "show", "nope"], ["not found", "h200"]),
    (["arch", "graph", "h200", "--format", "png"], ["png", "graphml"]),
])
def test_user_errors_exit_2_without_traceback(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 2
    # our UserErrors print "error: ..."; a value outside a choice (--format png) is a usage error of the parser
    assert err.startswith(("error:", "Usage:")) and "Traceback" not in err
    for w in words:
        assert w in err


def test_bad_yaml_file_via_subprocess(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("name: bad\nextends: h200\nl2:\n  size_bytes: -1\n")
    r = subprocess.run([sys.executable, "-m", "warpgraph.cli.main", "arch", "show", str(p)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert "bad.yaml:4 (l2.size_bytes)" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "warpgraph.cli.main", "arch", "show", "h200", "--set",
                        "l2.size_bytes=1234"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "size_bytes: 1234" in r.stdout

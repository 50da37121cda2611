"""``warpgraph trace validate|roofline``."""
import json

import pytest

from warpgraph.cli.main import main
from warpgraph.core.tracing import TraceRecorder
from warpgraph.analysis.perfetto import write_chrome_trace


def run(capsys, *argv):
    with pytest.raises(SystemExit) as ei:
        main(list(argv))
    out = capsys.readouterr()
    return ei.value.code, out.out, out.err


def test_validate(capsys, tmp_path):
    rec = TraceRecorder()
    rec.warp_issue(0, 0, 0, 3)
    rec.tma_transaction(0, None, 1, 5, 90, 1024, False)
    rec.finish()
    p = tmp_path / "t.json.gz"
    write_chrome_trace(rec, p, clock_mhz=1755.0)
    code, out, _ = run(capsys, "trace", "validate", str(p))
    assert code == 0 and json.loads(out)["async_pairs"] == 2
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "ts": 0, "name": "a"}]}))
    code, _, err = run(capsys, "trace", "validate", str(bad))
    assert code == 1 and "dur" in err
    code, _, err = run(capsys, "trace", "validate", str(tmp_path / "missing.json"))
    assert code == 2 and "error:" in err


def test_roofline(capsys):
    import warpgraph
    from pathlib import Path

    rec = Path(warpgraph.__file__).parent / "workloads" / "records" / "h200" / "swiglu_n16777216"
    code, out, _ = run(capsys, "trace", "roofline", str(rec), "--measured")
    assert code == 0 and "memory-bound" in out and "measured" in out
    code, out, _ = run(capsys, "trace", "roofline", str(rec), "--json")
    assert code == 0 and json.loads(out)["bound_by"] == "memory"
